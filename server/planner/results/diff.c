/*
 * diff.c - two plan results compared (diff.h): each side read into columns (from its
 * tensors array or its layout view), the tensors matched by name through two sorted
 * indexes, and the answer written with jsonw.
 */
#include "planner/diff.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/jsonw.h"
#include "planner/layout_view.h"
#include "planner/model.h"
#include "planner/base/jsonr.h"

#define DIFF_MAX_DEPTH 32
#define NONE           UINT32_MAX

/* One side: the summary figures and the tensors as columns. Strings point into root or
 * into lv; the arrays are malloc'd. */
struct side {
    char tag; /* 'a' or 'b', for error locations */
    json_object *root;
    json_object *result; /* root, or root.result for a service plan document */
    struct layout_view lv;
    const char *title, *chip;
    const char *verdict; /* summary.verdict.headline; NULL in a result from before it */
    uint64_t peak, lb, padded, logical, frag_bytes, capacity;
    bool has_capacity, fits;
    double frag;
    json_object *by_kind;
    size_t n;
    const char **name, **kind, **shape;
    uint64_t *tpadded, *tlogical, *offset;
    int64_t *start, *end;
};

static void side_free(struct side *s)
{
    free(s->name);
    free(s->kind);
    free(s->shape);
    if (s->lv.root == NULL) { /* these are the view's own otherwise */
        free(s->tpadded);
        free(s->tlogical);
        free(s->offset);
        free(s->start);
        free(s->end);
    }
    layout_view_free(&s->lv);
    json_object_put(s->root);
}

/* Sets e->where to "<tag>.<field>" and the message to "<tag>.<field>: what". */
static int bad(const struct side *s, struct err *e, const char *field, const char *what)
{
    char where[ERR_WHERE_MAX];

    snprintf(where, sizeof(where), "%c.%s", s->tag, field);
    return err_set(e, ERR_INVALID, where, "%s: %s", where, what);
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;

    return o != NULL && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A non-negative integer member of o into *out; false when it is not one. */
static bool get_u64(json_object *o, const char *key, uint64_t *out)
{
    int64_t x;

    if (jsonr_int(member(o, key), &x) != 0 || x < 0)
        return false;
    *out = (uint64_t)x;
    return true;
}

static int read_summary(struct side *s, struct err *e)
{
    json_object *sum = member(s->result, "summary"), *v;

    if (!json_object_is_type(sum, json_type_object))
        return bad(s, e, "summary", "must be an object (is this a tpuplan plan result?)");
    if (!get_u64(sum, "peak_bytes", &s->peak) || !get_u64(sum, "lower_bound_bytes", &s->lb) ||
        !get_u64(sum, "padded_bytes", &s->padded) || !get_u64(sum, "logical_bytes", &s->logical) ||
        !get_u64(sum, "fragmentation_bytes", &s->frag_bytes))
        return bad(s, e, "summary",
                   "peak_bytes, lower_bound_bytes, padded_bytes, logical_bytes and "
                   "fragmentation_bytes must be byte counts");
    v = member(sum, "fragmentation");
    if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
        return bad(s, e, "summary.fragmentation", "must be a number");
    s->frag = json_object_get_double(v);
    if (!json_object_is_type(member(sum, "fits"), json_type_boolean))
        return bad(s, e, "summary.fits", "must be a boolean");
    s->fits = json_object_get_boolean(member(sum, "fits"));
    s->has_capacity = get_u64(sum, "capacity_bytes", &s->capacity);
    v = member(member(sum, "verdict"), "headline");
    s->verdict = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    s->by_kind = member(sum, "by_kind");
    if (!json_object_is_type(s->by_kind, json_type_object))
        return bad(s, e, "summary.by_kind", "must be an object");
    v = member(member(s->result, "model"), "name");
    s->title = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    v = member(member(s->result, "chip"), "name");
    s->chip = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    return ERR_OK;
}

static int alloc_strings(struct side *s, struct err *e)
{
    size_t m = s->n ? s->n : 1;

    s->name = calloc(m, sizeof(*s->name));
    s->kind = calloc(m, sizeof(*s->kind));
    s->shape = calloc(m, sizeof(*s->shape));
    if (s->name == NULL || s->kind == NULL || s->shape == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu tensors", s->n);
    return ERR_OK;
}

/* The tensors from the layout view's columns. */
static int read_view(struct side *s, const char *text, size_t len, struct err *e)
{
    char where[8], msg[8];
    int rc;

    if (layout_view_read(text, len, &s->lv, e) != ERR_OK) {
        snprintf(where, sizeof(where), "%c", s->tag);
        snprintf(msg, sizeof(msg), "%c.", s->tag);
        return err_prefix(e, where, msg);
    }
    if (!s->lv.has_logical)
        return bad(s, e, "layout.logical_bytes", "must be an array");
    s->n = s->lv.n;
    if ((rc = alloc_strings(s, e)) != ERR_OK)
        return rc;
    for (size_t i = 0; i < s->n; i++) {
        s->name[i] = s->lv.name[i];
        s->kind[i] = s->lv.kinds[s->lv.kind[i]];
        s->shape[i] = s->lv.shapes[s->lv.shape[i]];
    }
    s->tpadded = s->lv.padded;
    s->tlogical = s->lv.logical;
    s->offset = s->lv.offset;
    s->start = s->lv.start;
    s->end = s->lv.end;
    return ERR_OK;
}

/* Tensor i of a result's tensors array into the columns. */
static int read_tensor(struct side *s, json_object *t, size_t i, struct err *e)
{
    json_object *live = member(t, "live"), *v;
    char field[48];

    snprintf(field, sizeof(field), "tensors[%zu]", i);
    v = member(t, "name");
    if (!json_object_is_type(v, json_type_string))
        return bad(s, e, field, "name must be a string");
    s->name[i] = json_object_get_string(v);
    v = member(t, "kind");
    s->kind[i] = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "temp";
    v = member(t, "shape");
    s->shape[i] = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    if (!get_u64(t, "padded_bytes", &s->tpadded[i]) ||
        !get_u64(t, "logical_bytes", &s->tlogical[i]) || !get_u64(t, "offset", &s->offset[i]) ||
        !json_object_is_type(live, json_type_array) || json_object_array_length(live) != 2 ||
        jsonr_int(json_object_array_get_idx(live, 0), &s->start[i]) != 0 ||
        jsonr_int(json_object_array_get_idx(live, 1), &s->end[i]) != 0)
        return bad(s, e, field, "padded_bytes, logical_bytes, offset and live must be integers");
    return ERR_OK;
}

/* The tensors from the result's tensors array. */
static int read_tensors(struct side *s, struct err *e)
{
    json_object *ts = member(s->result, "tensors");
    size_t m;
    int rc;

    if (!json_object_is_type(ts, json_type_array))
        return bad(s, e, "tensors",
                   "must be an array (a summary view needs its layout view beside it)");
    s->n = json_object_array_length(ts);
    m = s->n ? s->n : 1;
    if ((rc = alloc_strings(s, e)) != ERR_OK)
        return rc;
    s->tpadded = malloc(m * sizeof(*s->tpadded));
    s->tlogical = malloc(m * sizeof(*s->tlogical));
    s->offset = malloc(m * sizeof(*s->offset));
    s->start = malloc(m * sizeof(*s->start));
    s->end = malloc(m * sizeof(*s->end));
    if (s->tpadded == NULL || s->tlogical == NULL || s->offset == NULL || s->start == NULL ||
        s->end == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu tensors", s->n);
    for (size_t i = 0; i < s->n; i++)
        if ((rc = read_tensor(s, json_object_array_get_idx(ts, i), i, e)) != ERR_OK)
            return rc;
    return ERR_OK;
}

static int side_read(struct side *s, const struct diff_input *in, struct err *e)
{
    char what[2] = {s->tag, '\0'};
    json_object *r;
    int rc;

    if (in == NULL || in->result == NULL)
        return bad(s, e, "result", "missing");
    if ((rc = jsonr_load(in->result, in->result_len, DIFF_MAX_DEPTH, what, &s->root, e)) != ERR_OK)
        return rc;
    r = member(s->root, "result"); /* a service plan document */
    s->result = json_object_is_type(r, json_type_object) ? r : s->root;
    if ((rc = read_summary(s, e)) != ERR_OK)
        return rc;
    return in->layout != NULL ? read_view(s, in->layout, in->layout_len, e) : read_tensors(s, e);
}

/* ---- matching ---- */

struct ref {
    const char *name;
    uint32_t i;
};

static int ref_cmp(const void *x, const void *y)
{
    const struct ref *p = x, *q = y;
    int c = strcmp(p->name, q->name);

    return c != 0 ? c : (p->i > q->i) - (p->i < q->i);
}

/* A side's tensors sorted by name (malloc'd into *out). */
static int sort_names(const struct side *s, struct ref **out, struct err *e)
{
    struct ref *r = malloc((s->n ? s->n : 1) * sizeof(*r));

    if (r == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu tensors", s->n);
    for (size_t i = 0; i < s->n; i++) {
        r[i].name = s->name[i];
        r[i].i = (uint32_t)i;
    }
    qsort(r, s->n, sizeof(*r), ref_cmp);
    *out = r;
    return ERR_OK;
}

enum row_status { ROW_CHANGED, ROW_ADDED, ROW_REMOVED };

static const char *const status_names[] = {"changed", "added", "removed"};

/* A listed tensor: its index on each side (NONE when absent) and its padded delta; remat:
 * an added remat copy (MODEL_REMAT_SUFFIX), listed in the "remat copies" group. */
struct row {
    uint32_t ia, ib;
    int64_t dpad;
    const char *name;
    enum row_status status;
    bool remat;
};

#define DIFF_REMAT_GROUP "remat copies"

/* Whether name ends in the remat copies' suffix. */
static bool is_remat_copy(const char *name)
{
    size_t n = strlen(name), k = strlen(MODEL_REMAT_SUFFIX);

    return n > k && strcmp(name + n - k, MODEL_REMAT_SUFFIX) == 0;
}

struct counts {
    size_t added, removed, changed, unchanged;
};

static bool same_str(const char *x, const char *y)
{
    return x == y || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

/* after - before as a signed delta; true when it does not fit in 64 bits. */
static bool delta(uint64_t before, uint64_t after, int64_t *d)
{
    return __builtin_sub_overflow(after, before, d);
}

static uint64_t mag(int64_t d)
{
    return d < 0 ? -(uint64_t)d : (uint64_t)d;
}

static int row_cmp(const void *x, const void *y)
{
    const struct row *p = x, *q = y;
    uint64_t mp = mag(p->dpad), mq = mag(q->dpad);

    if (mp != mq)
        return mp < mq ? 1 : -1;
    return strcmp(p->name, q->name);
}

/* Adds the row (ia, ib) when the tensor differs; counts it either way. */
static int add_row(const struct side *a, const struct side *b, uint32_t ia, uint32_t ib,
                   struct row *rows, size_t *nrows, struct counts *k, struct err *e)
{
    struct row r = {ia, ib, 0, ia != NONE ? a->name[ia] : b->name[ib], ROW_CHANGED, false};
    uint64_t pa = ia != NONE ? a->tpadded[ia] : 0, pb = ib != NONE ? b->tpadded[ib] : 0;

    if (delta(pa, pb, &r.dpad))
        return err_set(e, ERR_OVERFLOW, "", "tensor \"%.200s\": the padded delta passes 2^63",
                       r.name);
    if (ia == NONE) {
        r.status = ROW_ADDED;
        r.remat = is_remat_copy(r.name);
        k->added++;
    } else if (ib == NONE) {
        r.status = ROW_REMOVED;
        k->removed++;
    } else if (pa == pb && a->tlogical[ia] == b->tlogical[ib] &&
               same_str(a->shape[ia], b->shape[ib]) && same_str(a->kind[ia], b->kind[ib])) {
        k->unchanged++;
        return ERR_OK;
    } else {
        k->changed++;
    }
    rows[(*nrows)++] = r;
    return ERR_OK;
}

/* Matches the two sides by name into rows (malloc'd), sorted by |padded delta|. Names
 * repeated on a side are matched in order. */
static int match(const struct side *a, const struct side *b, struct row **out, size_t *nrows,
                 struct counts *k, struct err *e)
{
    struct ref *ra = NULL, *rb = NULL;
    struct row *rows = NULL;
    size_t i = 0, j = 0;
    int rc;

    *nrows = 0;
    if ((rc = sort_names(a, &ra, e)) != ERR_OK || (rc = sort_names(b, &rb, e)) != ERR_OK)
        goto out;
    if (ra == NULL || rb == NULL) { /* sort_names sets both on success */
        rc = err_set(e, ERR_INTERNAL, "", "no name index");
        goto out;
    }
    if ((rows = malloc((a->n + b->n + 1) * sizeof(*rows))) == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu tensors", a->n + b->n);
        goto out;
    }
    while (rc == ERR_OK && (i < a->n || j < b->n)) {
        int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(ra[i].name, rb[j].name);
        uint32_t ia = c <= 0 ? ra[i++].i : NONE, ib = c >= 0 ? rb[j++].i : NONE;
        rc = add_row(a, b, ia, ib, rows, nrows, k, e);
    }
    if (rc == ERR_OK)
        qsort(rows, *nrows, sizeof(*rows), row_cmp);
out:
    free(ra);
    free(rb);
    if (rc != ERR_OK) {
        free(rows);
        rows = NULL;
    }
    *out = rows;
    return rc;
}

/* ---- the answer ---- */

/* "<key>_before", "<key>_after" and "<key>_delta"; true when the delta does not fit. */
static bool write_triple(struct jsonw *w, const char *key, uint64_t before, uint64_t after)
{
    char k[64];
    int64_t d = 0;
    bool ovf = delta(before, after, &d);

    snprintf(k, sizeof(k), "%s_before", key);
    jsonw_u64(w, k, before);
    snprintf(k, sizeof(k), "%s_after", key);
    jsonw_u64(w, k, after);
    snprintf(k, sizeof(k), "%s_delta", key);
    jsonw_i64(w, k, d);
    return ovf;
}

static void write_side(struct jsonw *w, const char *key, const struct side *s)
{
    jsonw_obj_begin(w, key);
    jsonw_str(w, "name", s->title);
    jsonw_str(w, "chip", s->chip);
    jsonw_u64(w, "tensors", s->n);
    jsonw_obj_end(w);
}

static void write_capacity(struct jsonw *w, const char *key, const struct side *s)
{
    if (s->has_capacity)
        jsonw_u64(w, key, s->capacity);
    else
        jsonw_null(w, key);
}

static bool write_summary(struct jsonw *w, const struct side *a, const struct side *b,
                          const struct counts *k)
{
    bool ovf = false;

    jsonw_obj_begin(w, "summary");
    ovf |= write_triple(w, "peak_bytes", a->peak, b->peak);
    ovf |= write_triple(w, "padded_bytes", a->padded, b->padded);
    ovf |= write_triple(w, "logical_bytes", a->logical, b->logical);
    ovf |= write_triple(w, "lower_bound_bytes", a->lb, b->lb);
    ovf |= write_triple(w, "fragmentation_bytes", a->frag_bytes, b->frag_bytes);
    jsonw_double(w, "fragmentation_before", a->frag);
    jsonw_double(w, "fragmentation_after", b->frag);
    jsonw_double(w, "fragmentation_delta", b->frag - a->frag);
    write_capacity(w, "capacity_bytes_before", a);
    write_capacity(w, "capacity_bytes_after", b);
    jsonw_bool(w, "fits_before", a->fits);
    jsonw_bool(w, "fits_after", b->fits);
    jsonw_str(w, "verdict_before", a->verdict);
    jsonw_str(w, "verdict_after", b->verdict);
    jsonw_u64(w, "tensors_before", a->n);
    jsonw_u64(w, "tensors_after", b->n);
    jsonw_u64(w, "added", k->added);
    jsonw_u64(w, "removed", k->removed);
    jsonw_u64(w, "changed", k->changed);
    jsonw_u64(w, "unchanged", k->unchanged);
    jsonw_obj_end(w);
    return ovf;
}

/* A side's by_kind entry for kind (all 0 when the kind is absent). */
static void kind_figures(const struct side *s, const char *kind, uint64_t *count, uint64_t *padded,
                         uint64_t *logical)
{
    json_object *o = member(s->by_kind, kind);

    *count = *padded = *logical = 0;
    if (o != NULL && (!get_u64(o, "count", count) || !get_u64(o, "padded_bytes", padded) ||
                      !get_u64(o, "logical_bytes", logical)))
        *count = *padded = *logical = 0;
}

/* Per kind present on either side, in the kinds' order (model.h). */
static bool write_by_kind(struct jsonw *w, const struct side *a, const struct side *b)
{
    bool ovf = false;

    jsonw_obj_begin(w, "by_kind");
    for (int kind = 0; kind < TENSOR_KIND_COUNT; kind++) {
        const char *name = tensor_kind_name((enum tensor_kind)kind);
        uint64_t ca, pa, la, cb, pb, lb;
        kind_figures(a, name, &ca, &pa, &la);
        kind_figures(b, name, &cb, &pb, &lb);
        if (ca == 0 && cb == 0)
            continue;
        jsonw_obj_begin(w, name);
        jsonw_u64(w, "count_before", ca);
        jsonw_u64(w, "count_after", cb);
        ovf |= write_triple(w, "padded_bytes", pa, pb);
        ovf |= write_triple(w, "logical_bytes", la, lb);
        jsonw_obj_end(w);
    }
    jsonw_obj_end(w);
    return ovf;
}

/* One side of a listed tensor: its layout, bytes, offset and lifetime (null when absent). */
static void write_place(struct jsonw *w, const char *suffix, const struct side *s, uint32_t i)
{
    char k[32];

    snprintf(k, sizeof(k), "layout_%s", suffix);
    jsonw_str(w, k, i != NONE ? s->shape[i] : NULL);
    snprintf(k, sizeof(k), "padded_bytes_%s", suffix);
    if (i != NONE)
        jsonw_u64(w, k, s->tpadded[i]);
    else
        jsonw_null(w, k);
    snprintf(k, sizeof(k), "offset_%s", suffix);
    if (i != NONE)
        jsonw_u64(w, k, s->offset[i]);
    else
        jsonw_null(w, k);
    snprintf(k, sizeof(k), "live_%s", suffix);
    if (i == NONE) {
        jsonw_null(w, k);
        return;
    }
    jsonw_arr_begin(w, k);
    jsonw_i64(w, NULL, s->start[i]);
    jsonw_i64(w, NULL, s->end[i]);
    jsonw_arr_end(w);
}

static bool write_tensors(struct jsonw *w, const struct side *a, const struct side *b,
                          const struct row *rows, size_t nrows)
{
    bool ovf = false;

    jsonw_arr_begin(w, "tensors");
    for (size_t r = 0; r < nrows; r++) {
        const struct row *x = &rows[r];
        int64_t dl = 0;
        ovf |= delta(x->ia != NONE ? a->tlogical[x->ia] : 0, x->ib != NONE ? b->tlogical[x->ib] : 0,
                     &dl);
        jsonw_obj_begin(w, NULL);
        jsonw_str(w, "name", x->name);
        jsonw_str(w, "status", status_names[x->status]);
        jsonw_str(w, "kind", x->ib != NONE ? b->kind[x->ib] : a->kind[x->ia]);
        jsonw_i64(w, "padded_bytes_delta", x->dpad);
        jsonw_i64(w, "logical_bytes_delta", dl);
        if (x->remat)
            jsonw_str(w, "group", DIFF_REMAT_GROUP);
        write_place(w, "before", a, x->ia);
        write_place(w, "after", b, x->ib);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    return ovf;
}

/* "groups": the added remat copies as one entry (none when there are none): how many, and
 * their bytes summed. A sum of buffer sizes, not memory: the copies live at different steps. */
static bool write_groups(struct jsonw *w, const struct side *b, const struct row *rows,
                         size_t nrows)
{
    size_t n = 0;
    int64_t dpad = 0, dl = 0;
    bool ovf = false;

    for (size_t r = 0; r < nrows; r++) {
        if (!rows[r].remat)
            continue;
        n++;
        ovf |= __builtin_add_overflow(dpad, rows[r].dpad, &dpad);
        ovf |= __builtin_add_overflow(dl, b->tlogical[rows[r].ib], &dl);
    }
    jsonw_arr_begin(w, "groups");
    if (n > 0) {
        jsonw_obj_begin(w, NULL);
        jsonw_str(w, "name", DIFF_REMAT_GROUP);
        jsonw_str(w, "match", "*" MODEL_REMAT_SUFFIX);
        jsonw_str(w, "status", status_names[ROW_ADDED]);
        jsonw_u64(w, "tensors", n);
        jsonw_i64(w, "padded_bytes_delta", dpad);
        jsonw_i64(w, "logical_bytes_delta", dl);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    return ovf;
}

static int write_diff(const struct side *a, const struct side *b, const struct row *rows,
                      size_t nrows, const struct counts *k, size_t max_bytes, char **json,
                      size_t *json_len, struct err *e)
{
    struct jsonw w;
    bool ovf = false;
    int rc;

    jsonw_init(&w, max_bytes);
    jsonw_obj_begin(&w, NULL);
    jsonw_i64(&w, "schema_version", 1);
    write_side(&w, "a", a);
    write_side(&w, "b", b);
    ovf |= write_summary(&w, a, b, k);
    ovf |= write_by_kind(&w, a, b);
    ovf |= write_groups(&w, b, rows, nrows);
    ovf |= write_tensors(&w, a, b, rows, nrows);
    jsonw_obj_end(&w);
    if (ovf) {
        jsonw_discard(&w);
        return err_set(e, ERR_OVERFLOW, "", "a byte delta passes 2^63");
    }
    if ((rc = jsonw_finish(&w, json, json_len)) != ERR_OK)
        return err_set(e, rc, "",
                       rc == ERR_LIMIT ? "the diff is larger than %zu bytes"
                                       : "out of memory writing the diff (%zu)",
                       max_bytes);
    return ERR_OK;
}

int diff_run(const struct diff_input *a, const struct diff_input *b, size_t max_bytes, char **json,
             size_t *json_len, struct err *e)
{
    struct side sa = {.tag = 'a'}, sb = {.tag = 'b'};
    struct row *rows = NULL;
    struct counts k = {0};
    size_t nrows = 0;
    int rc;

    *json = NULL;
    *json_len = 0;
    err_clear(e);
    if ((rc = side_read(&sa, a, e)) != ERR_OK || (rc = side_read(&sb, b, e)) != ERR_OK ||
        (rc = match(&sa, &sb, &rows, &nrows, &k, e)) != ERR_OK)
        goto out;
    rc = write_diff(&sa, &sb, rows, nrows, &k, max_bytes ? max_bytes : (size_t)1 << 30, json,
                    json_len, e);
out:
    free(rows);
    side_free(&sa);
    side_free(&sb);
    return rc;
}
