/*
 * layout_view.c - a plan's layout view read back into its columns (layout_view.h).
 */
#include "planner/layout_view.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/jsonr.h"
#include "planner/pack.h"

#define LAYOUT_MAX_DEPTH 8

void layout_view_free(struct layout_view *v)
{
    free(v->name);
    free(v->start);
    free(v->end);
    free(v->offset);
    free(v->padded);
    free(v->logical);
    free(v->kind);
    free(v->shape);
    free(v->kinds);
    free(v->shapes);
    json_object_put(v->root);
    memset(v, 0, sizeof(*v));
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
        if (jsonr_int(json_object_array_get_idx(a, i), &out[i]) != 0 || out[i] < min)
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
        if (jsonr_int(json_object_array_get_idx(v, i), &x) != 0 || x < 0 || (uint64_t)x >= *nvalues)
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
static int alloc_cols(json_object *root, struct layout_view *v, struct err *e)
{
    json_object *t = NULL;
    int64_t x;
    size_t m;

    if (!json_object_is_type(root, json_type_object) ||
        !json_object_object_get_ex(root, "tensors", &t) || jsonr_int(t, &x) != 0 || x < 0 ||
        x > PACK_MAX_BUFFERS)
        return bad(e, "tensors", SIZE_MAX, "must be a tensor count from 0 to 10000000");
    v->n = (size_t)x;
    m = v->n ? v->n : 1;
    v->name = malloc(m * sizeof(*v->name));
    v->start = malloc(m * sizeof(*v->start));
    v->end = malloc(m * sizeof(*v->end));
    v->offset = malloc(m * sizeof(*v->offset));
    v->padded = malloc(m * sizeof(*v->padded));
    v->logical = malloc(m * sizeof(*v->logical));
    v->kind = malloc(m * sizeof(*v->kind));
    v->shape = malloc(m * sizeof(*v->shape));
    if (v->name == NULL || v->start == NULL || v->end == NULL || v->offset == NULL ||
        v->padded == NULL || v->logical == NULL || v->kind == NULL || v->shape == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu tensors", v->n);
    return ERR_OK;
}

int layout_view_read(const char *text, size_t len, struct layout_view *v, struct err *e)
{
    json_object *root = NULL;
    size_t n;
    int rc;

    memset(v, 0, sizeof(*v));
    if ((rc = jsonr_load(text, len, LAYOUT_MAX_DEPTH, "layout", &root, e)) != ERR_OK)
        return rc;
    v->root = root;
    if ((rc = alloc_cols(root, v, e)) != ERR_OK)
        return rc;
    n = v->n;
    if ((rc = names(root, n, v->name, e)) != ERR_OK ||
        (rc = ints(root, "start", n, INT64_MIN, v->start, e)) != ERR_OK ||
        (rc = ints(root, "end", n, INT64_MIN, v->end, e)) != ERR_OK ||
        (rc = ints(root, "offset", n, 0, (int64_t *)v->offset, e)) != ERR_OK ||
        (rc = ints(root, "padded_bytes", n, 0, (int64_t *)v->padded, e)) != ERR_OK ||
        (rc = dict(root, "kind", n, false, v->kind, &v->kinds, &v->nkinds, e)) != ERR_OK ||
        (rc = dict(root, "shape", n, true, v->shape, &v->shapes, &v->nshapes, e)) != ERR_OK)
        return rc;
    /* logical_bytes came later than the other columns: read it when present */
    if (json_object_object_get_ex(root, "logical_bytes", NULL) &&
        (rc = ints(root, "logical_bytes", n, 0, (int64_t *)v->logical, e)) != ERR_OK)
        return rc;
    v->has_logical = json_object_object_get_ex(root, "logical_bytes", NULL);
    return ERR_OK;
}
