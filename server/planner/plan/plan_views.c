/*
 * plan_views.c - the two small views of a result (plan.h, server/planner/RESULT.md#views):
 * the summary (the result document without its tensors array, plan_result_write) and the
 * layout (the tensors as columns, written here).
 *
 * The layout view holds one array per field in tensor order, for the dashboard's chart,
 * tooltips, search and tables (~7 MB for 100,000 tensors, against a 37 MB result). It is
 * written here, from the same data as the result, so storing a plan costs no work in the
 * database.
 */
#include "planner/plan/plan_int.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/jsonw.h"
#include "planner/layout.h"

void plan_views_free(struct plan_views *v)
{
    if (v == NULL)
        return;
    free(v->summary);
    free(v->layout);
    memset(v, 0, sizeof(*v));
}

struct dict_ent {
    const char *s; /* NULL: the field is absent (sorts last, written as null) */
    uint32_t i;    /* tensor */
};

static bool same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int dict_cmp(const void *x, const void *y)
{
    const struct dict_ent *a = x, *b = y;
    int r;

    if (a->s == NULL || b->s == NULL)
        r = (a->s == NULL) - (b->s == NULL);
    else
        r = strcmp(a->s, b->s);
    return r != 0 ? r : (a->i > b->i) - (a->i < b->i);
}

/* A column whose values repeat (a model has few distinct kinds, shapes, layout rules):
 * {"values": [the distinct values, sorted, null last], "index": [per tensor]}. Sorts
 * ents (n entries) and uses rank (n entries) as scratch. */
static void write_dict(struct jsonw *w, const char *key, struct dict_ent *ents, uint32_t *rank,
                       size_t n)
{
    uint32_t r = 0;

    qsort(ents, n, sizeof(*ents), dict_cmp);
    jsonw_obj_begin(w, key);
    jsonw_arr_begin(w, "values");
    for (size_t k = 0; k < n; k++) {
        if (k > 0 && !same_str(ents[k - 1].s, ents[k].s))
            r++;
        if (k == 0 || !same_str(ents[k - 1].s, ents[k].s))
            jsonw_str(w, NULL, ents[k].s);
        rank[ents[k].i] = r;
    }
    jsonw_arr_end(w);
    jsonw_arr_begin(w, "index");
    for (size_t i = 0; i < n; i++)
        jsonw_u64(w, NULL, rank[i]);
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

enum { COL_KIND, COL_SHAPE, COL_LAYOUT_SOURCE, COL_CONFIDENCE, COL_OP_NAME, NCOLS };

/* The dictionary columns' value of tensor i; shape text comes from shapes. */
static const char *col_value(const struct plan_ctx *c, int col, size_t i, const char *shapes,
                             const size_t *shape_at)
{
    const struct model_tensor *t = &c->m.tensors[i];

    switch (col) {
    case COL_KIND:
        return tensor_kind_name(t->kind);
    case COL_SHAPE:
        return t->raw ? NULL : shapes + shape_at[i];
    case COL_LAYOUT_SOURCE:
        return t->raw ? NULL : t->layout_rule;
    case COL_OP_NAME:
        return t->op_name;
    default:
        return t->raw ? NULL : layout_confidence_name(t->confidence);
    }
}

/* Every tensor's printed shape ("" for raw buffers), back to back in one allocation grown
 * by doubling: tensor i's at *shapes + shape_at[i]. *shapes is malloc'd (caller frees). */
static int print_shapes(const struct plan_ctx *c, char **shapes, size_t *shape_at, struct err *e)
{
    char text[SHAPE_MAX_TEXT];
    size_t cap = 0, used = 0;

    *shapes = NULL;
    for (size_t i = 0; i < c->m.n; i++) {
        struct shape sh;
        int len = 0;
        if (!c->m.tensors[i].raw) {
            model_tensor_shape(&c->m.tensors[i], &sh);
            len = shape_print(&sh, text, sizeof(text));
        }
        size_t need = used + (size_t)(len > 0 ? len : 0) + 1;
        if (need > cap) {
            size_t ncap = cap ? cap : 4096;
            while (ncap < need)
                ncap *= 2;
            char *grown = realloc(*shapes, ncap);
            if (grown == NULL)
                return err_set(e, ERR_NOMEM, "", "out of memory writing the layout view");
            *shapes = grown;
            cap = ncap;
        }
        shape_at[i] = used;
        memcpy(*shapes + used, len > 0 ? text : "", (size_t)(len > 0 ? len : 0));
        used += (size_t)(len > 0 ? len : 0);
        (*shapes)[used++] = '\0';
    }
    return ERR_OK;
}

/* The column of one 64-bit number field of every tensor: off is the field's offsetof in struct
 * model_tensor, an int64_t when sign, a uint64_t otherwise. */
static void field_column(struct jsonw *w, const char *key, const struct model *m, size_t off,
                         bool sign)
{
    jsonw_arr_begin(w, key);
    for (size_t i = 0; i < m->n; i++) {
        const char *f = (const char *)&m->tensors[i] + off;
        uint64_t v;
        memcpy(&v, f, sizeof(v));
        if (sign)
            jsonw_i64(w, NULL, (int64_t)v);
        else
            jsonw_u64(w, NULL, v);
    }
    jsonw_arr_end(w);
}

#define TENSOR_FIELD(f) offsetof(struct model_tensor, f)

/* The columns of plain numbers and names, one value per tensor. */
static void write_columns(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct pack_result *best = plan_chosen(pk);
    const uint64_t *offsets = best != NULL ? best->offsets : NULL;
    size_t n = c->m.n;

    jsonw_arr_begin(w, "name");
    for (size_t i = 0; i < n; i++)
        jsonw_str(w, NULL, c->m.tensors[i].name);
    jsonw_arr_end(w);
    field_column(w, "start", &c->m, TENSOR_FIELD(live_start), true);
    field_column(w, "end", &c->m, TENSOR_FIELD(live_end), true);
    jsonw_arr_begin(w, "offset");
    for (size_t i = 0, b = 0; i < n; i++)
        jsonw_u64(w, NULL, plan_tensor_offset(c, offsets, i, &b));
    jsonw_arr_end(w);
    if (c->xla.have) { /* XLA's own layout (packing.xla), null where no value matched */
        jsonw_arr_begin(w, "xla_offset");
        for (size_t i = 0; i < n; i++) {
            uint64_t off;
            if (plan_xla_offset(c, i, &off))
                jsonw_u64(w, NULL, off);
            else
                jsonw_null(w, NULL);
        }
        jsonw_arr_end(w);
    }
    field_column(w, "padded_bytes", &c->m, TENSOR_FIELD(padded_bytes), false);
    field_column(w, "logical_bytes", &c->m, TENSOR_FIELD(logical_bytes), false);
}

/* Few tensors have tags: only theirs, keyed by tensor id. */
static void write_tags(struct jsonw *w, const struct plan_ctx *c)
{
    jsonw_obj_begin(w, "tags");
    for (size_t i = 0; i < c->m.n; i++) {
        const struct model_tensor *t = &c->m.tensors[i];
        char key[24];
        if (t->ntags == 0)
            continue;
        snprintf(key, sizeof(key), "%zu", i);
        jsonw_arr_begin(w, key);
        for (unsigned k = 0; k < t->ntags; k++)
            jsonw_str(w, NULL, t->tags[k]);
        jsonw_arr_end(w);
    }
    jsonw_obj_end(w);
}

static int write_layout(const struct plan_ctx *c, const struct plan_packing *pk, size_t max_bytes,
                        char **out, size_t *out_len, struct err *e)
{
    static const char *const names[NCOLS] = {"kind", "shape", "layout_source", "confidence",
                                             "op_name"};
    size_t n = c->m.n;
    struct dict_ent *ents = malloc((n ? n : 1) * sizeof(*ents));
    uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));
    /* calloc: print_shapes sets every entry, but clang-analyzer cannot see that */
    size_t *shape_at = calloc(n ? n : 1, sizeof(*shape_at));
    char *shapes = NULL;
    struct jsonw w;
    int rc = ERR_OK;

    jsonw_init(&w, max_bytes);
    if (ents == NULL || rank == NULL || shape_at == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory writing the layout view");
        goto out;
    }
    if ((rc = print_shapes(c, &shapes, shape_at, e)) != ERR_OK)
        goto out;
    jsonw_obj_begin(&w, NULL);
    jsonw_u64(&w, "tensors", n);
    write_columns(&w, c, pk);
    for (int col = 0; col < NCOLS; col++) {
        for (size_t i = 0; i < n; i++)
            ents[i] = (struct dict_ent){col_value(c, col, i, shapes, shape_at), (uint32_t)i};
        write_dict(&w, names[col], ents, rank, n);
    }
    write_tags(&w, c);
    jsonw_obj_end(&w);
    if ((rc = jsonw_finish(&w, out, out_len)) != ERR_OK)
        rc = err_set(e, rc, "",
                     rc == ERR_LIMIT ? "the layout view is larger than %zu bytes"
                                     : "out of memory writing the layout view (%zu)",
                     max_bytes);
out:
    jsonw_discard(&w); /* nothing left to free after jsonw_finish */
    free(ents);
    free(rank);
    free(shape_at);
    free(shapes);
    return rc;
}

int plan_views_write(const struct plan_ctx *c, const struct plan_packing *pk,
                     const struct suggest_fix *sg, size_t nsg, bool summary_only, size_t max_bytes,
                     struct plan_views *v, struct err *e)
{
    int rc;

    memset(v, 0, sizeof(*v));
    if ((rc = plan_result_write(c, pk, sg, nsg, false, NULL, max_bytes, &v->summary,
                                &v->summary_len, e)) != ERR_OK ||
        (!summary_only &&
         (rc = write_layout(c, pk, max_bytes, &v->layout, &v->layout_len, e)) != ERR_OK))
        plan_views_free(v);
    return rc;
}
