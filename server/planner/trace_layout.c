/*
 * trace_layout.c - trace_from_layout (trace.h): a plan's layout view (RESULT.md "Views",
 * written by plan_views.c) read back into columns for trace_write. The CLI and the service
 * both export from this view, so a stored plan and a fresh one give the same trace. Every
 * field is checked; an error names it as "layout.<column>[i]".
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/model_int.h"
#include "planner/pack.h"
#include "planner/trace.h"

#define LAYOUT_MAX_DEPTH 8

/* Owned copies of the columns. */
struct cols {
    const char **name;
    int64_t *start, *end;
    uint64_t *offset, *bytes;
    uint32_t *kind, *shape;
    const char **kinds, **shapes; /* point into the json-c document */
};

static void cols_free(struct cols *k)
{
    free(k->name);
    free(k->start);
    free(k->end);
    free(k->offset);
    free(k->bytes);
    free(k->kind);
    free(k->shape);
    free(k->kinds);
    free(k->shapes);
}

static int bad(struct err *e, const char *col, size_t i, const char *what)
{
    char where[64];

    if (i == SIZE_MAX)
        snprintf(where, sizeof(where), "layout.%s", col);
    else
        snprintf(where, sizeof(where), "layout.%s[%zu]", col, i);
    return err_set(e, ERR_INVALID, where, "%s: %s", where, what);
}

/* The array member key of o with n entries, or NULL after setting *e. */
static json_object *column(json_object *o, const char *key, size_t n, struct err *e)
{
    json_object *a = NULL;

    if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array)) {
        bad(e, key, SIZE_MAX, "must be an array");
        return NULL;
    }
    if (json_object_array_length(a) != n) {
        bad(e, key, SIZE_MAX, "must have one entry per tensor");
        return NULL;
    }
    return a;
}

/* An integer column; min is the lowest value allowed. */
static int ints(json_object *o, const char *key, size_t n, int64_t min, int64_t *out, struct err *e)
{
    json_object *a = column(o, key, n, e);

    if (a == NULL)
        return ERR_INVALID;
    for (size_t i = 0; i < n; i++)
        if (model_json_int(json_object_array_get_idx(a, i), &out[i]) != 0 || out[i] < min)
            return bad(e, key, i, "must be an integer in range");
    return ERR_OK;
}

/* A dictionary column {"values": [...], "index": [...]} (strings; null allowed when
 * nullable). *values is malloc'd. */
static int dict(json_object *o, const char *key, size_t n, bool nullable, uint32_t *index,
                const char ***values, size_t *nvalues, struct err *e)
{
    json_object *d = NULL, *v = NULL;
    int64_t x;

    if (!json_object_object_get_ex(o, key, &d) || !json_object_is_type(d, json_type_object) ||
        !json_object_object_get_ex(d, "values", &v) || !json_object_is_type(v, json_type_array))
        return bad(e, key, SIZE_MAX, "must be an object with a values array");
    *nvalues = json_object_array_length(v);
    if ((*values = malloc((*nvalues ? *nvalues : 1) * sizeof(**values))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    for (size_t k = 0; k < *nvalues; k++) {
        json_object *s = json_object_array_get_idx(v, k);
        if (s == NULL && nullable) {
            (*values)[k] = NULL;
            continue;
        }
        if (!json_object_is_type(s, json_type_string))
            return bad(e, key, SIZE_MAX, "values must be strings");
        (*values)[k] = json_object_get_string(s);
    }
    if ((v = column(d, "index", n, e)) == NULL)
        return ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        if (model_json_int(json_object_array_get_idx(v, i), &x) != 0 || x < 0 ||
            (uint64_t)x >= *nvalues)
            return bad(e, key, i, "index must point into values");
        index[i] = (uint32_t)x;
    }
    return ERR_OK;
}

static int names(json_object *o, size_t n, const char **out, struct err *e)
{
    json_object *a = column(o, "name", n, e);

    if (a == NULL)
        return ERR_INVALID;
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(a, i);
        if (!json_object_is_type(s, json_type_string))
            return bad(e, "name", i, "must be a string");
        out[i] = json_object_get_string(s);
    }
    return ERR_OK;
}

/* The number of tensors and room for every column. */
static int alloc_cols(json_object *root, size_t *n, struct cols *k, struct err *e)
{
    json_object *v = NULL;
    int64_t x;
    size_t m;

    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "tensors", &v) || model_json_int(v, &x) != 0 || x < 0 ||
        x > PACK_MAX_BUFFERS)
        return bad(e, "tensors", SIZE_MAX, "must be a tensor count from 0 to 10000000");
    *n = (size_t)x;
    m = *n ? *n : 1;
    k->name = malloc(m * sizeof(*k->name));
    k->start = malloc(m * sizeof(*k->start));
    k->end = malloc(m * sizeof(*k->end));
    k->offset = malloc(m * sizeof(*k->offset));
    k->bytes = malloc(m * sizeof(*k->bytes));
    k->kind = malloc(m * sizeof(*k->kind));
    k->shape = malloc(m * sizeof(*k->shape));
    if (k->name == NULL || k->start == NULL || k->end == NULL || k->offset == NULL ||
        k->bytes == NULL || k->kind == NULL || k->shape == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu tensors", *n);
    return ERR_OK;
}

int trace_from_layout(const char *layout, size_t len, const char *title, char **out,
                      size_t *out_len, struct trace_counts *counts, struct err *e)
{
    struct cols k = {0};
    struct trace_cols c = {0};
    json_object *root = NULL;
    size_t n = 0;
    int rc;

    *out = NULL;
    *out_len = 0;
    if ((rc = model_json_load(layout, len, LAYOUT_MAX_DEPTH, "layout", &root, e)) != ERR_OK ||
        (rc = alloc_cols(root, &n, &k, e)) != ERR_OK ||
        (rc = names(root, n, k.name, e)) != ERR_OK ||
        (rc = ints(root, "start", n, INT64_MIN, k.start, e)) != ERR_OK ||
        (rc = ints(root, "end", n, INT64_MIN, k.end, e)) != ERR_OK ||
        (rc = ints(root, "offset", n, 0, (int64_t *)k.offset, e)) != ERR_OK ||
        (rc = ints(root, "padded_bytes", n, 0, (int64_t *)k.bytes, e)) != ERR_OK ||
        (rc = dict(root, "kind", n, false, k.kind, &k.kinds, &c.nkinds, e)) != ERR_OK ||
        (rc = dict(root, "shape", n, true, k.shape, &k.shapes, &c.nshapes, e)) != ERR_OK)
        goto out;
    c.n = n;
    c.name = k.name;
    c.start = k.start;
    c.end = k.end;
    c.offset = k.offset;
    c.bytes = k.bytes;
    c.kind = k.kind;
    c.kinds = k.kinds;
    c.shape = k.shape;
    c.shapes = k.shapes;
    rc = trace_write(&c, title, ((size_t)1 << 20) + 16 * len + 1024 * n, out, out_len, counts, e);
out:
    cols_free(&k);
    json_object_put(root);
    return rc;
}
