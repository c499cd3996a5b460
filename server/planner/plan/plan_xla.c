/*
 * plan_xla.c - XLA's own buffer assignment beside the plan (plan_int.h; packing.xla in
 * server/planner/RESULT.md#fields): a `*.buffer-assignment.txt` dump (xla_assign.h) planned on its
 * own (the importer, import/xla_assign_model.c, hands it over with the model it made of it), or
 * matched by name against the plan's model, and its `*.memory-usage-report.txt` totals.
 *
 * XLA's offsets make the comparison row "xla-actual" next to the strategies: like the
 * runtime allocator's row (plan_runtime.c) it lives outside packing.strategies, because it
 * is not a packing of ours, is never chosen and is never checked (values of one HloBuffer
 * share their slot while their live ranges overlap, which no packing of ours allows).
 *
 * Matching follows the naming contract of the importers (xla_assign.h): value `<7 fusion.3>`
 * is tensor "fusion.3", `<9 while.2{1}>` is "while.2{1}". A value that names no tensor but
 * is listed in a tensor's in_place (the HLO importer wrote it into that tensor's buffer: an
 * elementwise result into a dying operand, a while's loop state, a done into its start) is
 * counted apart, "in place": it has memory in the plan, only under another name. What
 * matches neither way is counted and listed, never an error: a hand-written model names
 * only what it knows.
 */
#include "planner/plan/plan_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/names.h"
#include "planner/jsonw.h"
#include "planner/model/model_build.h"

#define XLA_NAMES_LISTED  20   /* unmatched names listed in the result */
#define XLA_ALLOCS_LISTED 1000 /* allocations listed in the result */

void plan_xla_free(struct plan_xla *x)
{
    xla_assign_free(&x->a);
    free(x->tensor_value);
    free(x->in_place);
    memset(x, 0, sizeof(*x));
}

/* Parses the attached assignment (when the input is not one) and the report. */
static int attach_inputs(struct plan_ctx *c, const struct plan_opts *o, size_t max_values,
                         struct err *e)
{
    struct plan_xla *x = &c->xla;

    if (o->xla_assignment != NULL && x->standalone)
        return err_set(e, ERR_INVALID, "xla_assignment",
                       "xla_assignment: the input is a buffer assignment already; attach one "
                       "to an HLO module or a model description");
    if (o->xla_assignment != NULL) {
        if (xla_assign_parse(o->xla_assignment, o->xla_assignment_len, max_values, &x->a, e) !=
            ERR_OK)
            return err_prefix(e, "xla_assignment", "xla_assignment: ");
        x->have = true;
    }
    if (o->xla_report != NULL && plan_report_takes(o->xla_report, o->xla_report_len))
        return ERR_OK; /* XLA's own report: plan_report.c */
    if (o->xla_report != NULL && !x->have)
        return err_set(e, ERR_INVALID, "xla_report",
                       "xla_report: a memory-usage report comes with its buffer assignment "
                       "(xla_assignment, or a buffer assignment as the input)");
    if (o->xla_report != NULL) {
        if (xla_report_parse(o->xla_report, o->xla_report_len, &x->r, e) != ERR_OK)
            return err_prefix(e, "xla_report", "xla_report: ");
        x->have_report = true;
    }
    return ERR_OK;
}

/* A value's HLO name (its key without the {INDEX}). */
static struct names_key value_name(const void *ctx, uint32_t v)
{
    const struct xla_assign *a = ctx;

    return (struct names_key){a->values[v].key, a->values[v].name_len, 0};
}

/* Marks the values that matched no tensor by name but are named in a tensor's in_place
 * (comma-separated HLO names: model.h), through a table of those values by name. */
static int match_in_place(struct plan_ctx *c, struct err *e)
{
    struct plan_xla *x = &c->xla;
    struct names tab = {0};
    bool any = false;
    bool *taken = NULL;
    int rc = ERR_OK;

    for (size_t i = 0; i < c->m.n && !any; i++)
        any = c->m.tensors[i].in_place != NULL;
    if (!any || x->a.nvalues == 0 || x->matched >= x->a.nvalues)
        return ERR_OK;
    taken = calloc(x->a.nvalues, sizeof(*taken));
    x->in_place = calloc(x->a.nvalues, sizeof(*x->in_place));
    if (taken == NULL || x->in_place == NULL ||
        (rc = names_init(&tab, x->a.nvalues - x->matched, value_name, &x->a)) != ERR_OK) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu values", x->a.nvalues);
        goto out;
    }
    for (size_t i = 0; i < c->m.n; i++)
        if (x->tensor_value[i] >= 0)
            taken[x->tensor_value[i]] = true;
    /* a second value of the same name comes after the first */
    for (size_t v = 0; v < x->a.nvalues && rc == ERR_OK; v++)
        if (!taken[v])
            rc = names_add_dup(&tab, (uint32_t)v);
    if (rc != ERR_OK) {
        rc = err_set(e, rc, "", "more values than the %zu not matched", x->a.nvalues - x->matched);
        goto out;
    }
    for (size_t i = 0; i < c->m.n; i++) {
        for (const char *p = c->m.tensors[i].in_place; p != NULL && *p != '\0';) {
            struct names_key k = {p, strcspn(p, ","), 0};
            size_t at = names_start(&tab, k);
            uint32_t v;
            while ((v = names_next(&tab, k, &at)) != NAMES_NONE && x->in_place[v])
                ;
            if (v != NAMES_NONE) {
                x->in_place[v] = true;
                x->nin_place++;
            }
            p += k.n + (p[k.n] == ',');
        }
    }
out:
    names_free(&tab);
    free(taken);
    return rc;
}

int plan_xla_attach(struct plan_ctx *c, const struct plan_opts *o, size_t max_values, struct err *e)
{
    struct plan_xla *x = &c->xla;
    struct model_index ix = {0};
    int rc;

    /* XLA's own reports first (plan_report.c): an out-of-memory report or the memory figures
     * attached, checked against the resolved model */
    if ((rc = plan_report_attach(c, o, max_values, e)) != ERR_OK)
        return rc;
    plan_report_check(c);
    if ((rc = attach_inputs(c, o, max_values, e)) != ERR_OK || !x->have)
        return rc;
    x->tensor_value = malloc((c->m.n ? c->m.n : 1) * sizeof(*x->tensor_value));
    if (x->tensor_value == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu tensors", c->m.n);
    for (size_t i = 0; i < c->m.n; i++)
        x->tensor_value[i] = -1;
    if ((rc = model_index_build(&c->m, &ix, e)) != ERR_OK)
        return rc;
    for (size_t v = 0; v < x->a.nvalues; v++) {
        const struct xla_value *xv = &x->a.values[v];
        int64_t t = model_index_find(&ix, xv->key, xv->name_len);
        if (t >= 0 && x->tensor_value[t] < 0) {
            x->tensor_value[t] = (int64_t)v;
            x->matched++;
        }
    }
    model_index_free(&ix);
    return match_in_place(c, e);
}

/* Tensor i's offset in XLA's layout (its allocation's base plus the value's offset), or
 * false when no value matched it. */
bool plan_xla_offset(const struct plan_ctx *c, size_t i, uint64_t *off)
{
    const struct plan_xla *x = &c->xla;
    const struct xla_value *v;

    if (!x->have || x->tensor_value[i] < 0)
        return false;
    v = &x->a.values[x->tensor_value[i]];
    *off = x->a.allocs[v->alloc].base + v->offset; /* <= total_bytes, checked when parsed */
    return true;
}

static void write_unmatched(struct jsonw *w, const struct plan_ctx *c)
{
    const struct plan_xla *x = &c->xla;
    size_t listed = 0;
    bool *seen = calloc(x->a.nvalues ? x->a.nvalues : 1, sizeof(*seen));

    /* Values no tensor took: those the tensors' links do not reach, nor their in_place. */
    for (size_t i = 0; seen != NULL && i < c->m.n; i++)
        if (x->tensor_value[i] >= 0)
            seen[x->tensor_value[i]] = true;
    for (size_t v = 0; seen != NULL && x->in_place != NULL && v < x->a.nvalues; v++)
        seen[v] |= x->in_place[v];
    jsonw_u64(w, "in_place_values", x->nin_place);
    jsonw_u64(w, "unmatched_values", x->a.nvalues - x->matched - x->nin_place);
    jsonw_arr_begin(w, "unmatched_value_names");
    for (size_t v = 0; seen != NULL && v < x->a.nvalues && listed < XLA_NAMES_LISTED; v++)
        if (!seen[v]) {
            jsonw_strn(w, NULL, x->a.values[v].key, x->a.values[v].name_len);
            listed++;
        }
    jsonw_arr_end(w);
    free(seen);
    jsonw_u64(w, "unmatched_tensors", c->m.n - x->matched);
    jsonw_arr_begin(w, "unmatched_tensor_names");
    listed = 0;
    for (size_t i = 0; i < c->m.n && listed < XLA_NAMES_LISTED; i++)
        if (x->tensor_value[i] < 0) {
            jsonw_str(w, NULL, c->m.tensors[i].name);
            listed++;
        }
    jsonw_arr_end(w);
}

static void write_allocations(struct jsonw *w, const struct xla_assign *a)
{
    static const struct {
        unsigned flag;
        const char *name;
    } kinds[] = {{XLA_ALLOC_PARAMETER, "parameter"},     {XLA_ALLOC_OUTPUT, "output"},
                 {XLA_ALLOC_CONSTANT, "constant"},       {XLA_ALLOC_THREAD_LOCAL, "thread-local"},
                 {XLA_ALLOC_LIVE_OUT, "maybe-live-out"}, {XLA_ALLOC_TEMP, "preallocated-temp"}};

    jsonw_arr_begin(w, "allocation_list");
    for (size_t k = 0; k < a->nallocs && k < XLA_ALLOCS_LISTED; k++) {
        const struct xla_alloc *al = &a->allocs[k];
        jsonw_obj_begin(w, NULL);
        jsonw_i64(w, "index", al->index);
        jsonw_u64(w, "size", al->size);
        jsonw_u64(w, "base", al->base);
        jsonw_i64(w, "color", al->color);
        if (al->parameter >= 0)
            jsonw_i64(w, "parameter", al->parameter);
        else
            jsonw_null(w, "parameter");
        jsonw_arr_begin(w, "kinds");
        for (size_t q = 0; q < sizeof(kinds) / sizeof(kinds[0]); q++)
            if (al->flags & kinds[q].flag)
                jsonw_str(w, NULL, kinds[q].name);
        jsonw_arr_end(w);
        jsonw_u64(w, "values", al->count);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
}

static void write_report(struct jsonw *w, const struct plan_xla *x)
{
    if (!x->have_report) {
        jsonw_null(w, "report");
        return;
    }
    jsonw_obj_begin(w, "report");
    jsonw_str(w, "form", x->r.proto ? "proto" : "text");
    jsonw_u64(w, "total_bytes", x->r.total_bytes);
    jsonw_arr_begin(w, "memory_spaces");
    for (size_t k = 0; k < x->r.nspaces; k++) {
        jsonw_obj_begin(w, NULL);
        jsonw_i64(w, "color", x->r.spaces[k].color);
        jsonw_u64(w, "total_bytes", x->r.spaces[k].total_bytes);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

static void write_assumptions(struct jsonw *w, const struct plan_ctx *c)
{
    const struct plan_xla *x = &c->xla;

    jsonw_arr_begin(w, "assumptions");
    jsonw_str(w, NULL,
              "XLA's allocations are separate blocks of device memory; they are drawn end to "
              "end in index order (base), so the row's height is their total, \"Total bytes "
              "used\"");
    if (!x->standalone)
        jsonw_str(w, NULL,
                  "tensors are matched to XLA's values by name; XLA's sizes are its own, the "
                  "plan's are padded and aligned, so the two layouts may differ in byte counts");
    if (!x->a.have_live_ranges)
        jsonw_str(w, NULL,
                  "the file has no HloLiveRange section: XLA's live ranges are unknown here");
    jsonw_arr_end(w);
}

void plan_xla_write(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct plan_xla *x = &c->xla;

    if (!x->have) {
        jsonw_null(w, "xla");
        return;
    }
    jsonw_obj_begin(w, "xla");
    /* The figures of a strategies row, for the comparison (never a packing, never chosen) */
    jsonw_str(w, "name", "xla-actual");
    plan_write_peak_figures(w, x->a.total_bytes, pk->lb);
    jsonw_bool(w, "fits", c->capacity == 0 || x->a.total_bytes <= c->capacity);
    jsonw_str(w, "label", "XLA's own buffer assignment, read from its dump: what XLA did");
    jsonw_str(w, "source", x->standalone ? "standalone" : "with-model");
    jsonw_u64(w, "total_bytes", x->a.total_bytes);
    jsonw_u64(w, "allocations", x->a.nallocs);
    jsonw_u64(w, "values", x->a.nvalues);
    jsonw_u64(w, "matched_values", x->matched);
    write_unmatched(w, c);
    jsonw_bool(w, "live_ranges", x->a.have_live_ranges);
    jsonw_i64(w, "schedule_end", x->a.schedule_end);
    write_allocations(w, &x->a);
    write_report(w, x);
    write_assumptions(w, c);
    jsonw_obj_end(w);
}
