/*
 * plan_peak.c - the chosen packing's peak explained (peak.h) and written as the result's
 * "peak" section (server/planner/RESULT.md#the-peak).
 */
#include "planner/plan/plan_int.h"

#include <stdlib.h>
#include <string.h>

#include "planner/jsonw.h"

int plan_peak_run(const struct plan_ctx *c, struct plan_packing *pk, struct err *e)
{
    const struct pack_metrics *mt = &pk->mt;
    const struct pack_result *best = plan_chosen(pk);
    struct peak_live *live;
    size_t seg = mt->peak_segment;
    int64_t end;
    int rc;

    pk->have_peak = false;
    if (best == NULL || !pk->have_metrics || mt->nsteps == 0)
        return ERR_OK;
    live = malloc((mt->npeak_buffers ? mt->npeak_buffers : 1) * sizeof(*live));
    if (live == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu buffers at the peak",
                       mt->npeak_buffers);
    for (size_t k = 0; k < mt->npeak_buffers; k++) {
        size_t b = mt->peak_buffers[k];
        live[k] = (struct peak_live){c->buf_tensor[b], pk->p.bufs[b].size};
    }
    end = seg + 1 < mt->nsteps ? mt->steps[seg + 1] : c->m.nsteps;
    rc = peak_explain(&c->m, c->program, mt->steps[seg], end, best->peak, live, mt->npeak_buffers,
                      &pk->peak, e);
    free(live);
    pk->have_peak = rc == ERR_OK;
    return rc;
}

static void write_group(struct jsonw *w, const char *name, size_t len, uint64_t bytes,
                        size_t tensors)
{
    jsonw_obj_begin(w, NULL);
    jsonw_strn(w, "name", name, len);
    jsonw_u64(w, "bytes", bytes);
    jsonw_u64(w, "tensors", tensors);
    jsonw_obj_end(w);
}

/* "by_kind": the kinds present, most bytes first (then in kind order). */
static void write_kinds(struct jsonw *w, const struct peak_explain *p)
{
    bool done[TENSOR_KIND_COUNT] = {false};

    jsonw_arr_begin(w, "by_kind");
    for (;;) {
        int k = -1;
        for (int q = 0; q < TENSOR_KIND_COUNT; q++)
            if (!done[q] && p->kind_tensors[q] > 0 &&
                (k < 0 || p->kind_bytes[q] > p->kind_bytes[k]))
                k = q;
        if (k < 0)
            break;
        done[k] = true;
        const char *name = tensor_kind_name((enum tensor_kind)k);
        write_group(w, name, strlen(name), p->kind_bytes[k], p->kind_tensors[k]);
    }
    jsonw_arr_end(w);
}

static void write_groups(struct jsonw *w, const char *key, const struct peak_groups *g)
{
    jsonw_obj_begin(w, key);
    jsonw_arr_begin(w, "top");
    for (size_t k = 0; k < g->ntop; k++)
        write_group(w, g->top[k].name, g->top[k].len, g->top[k].bytes, g->top[k].tensors);
    jsonw_arr_end(w);
    jsonw_u64(w, "groups", g->groups);
    jsonw_obj_begin(w, "rest");
    jsonw_u64(w, "groups", g->groups - g->ntop);
    jsonw_u64(w, "bytes", g->rest_bytes);
    jsonw_u64(w, "tensors", g->rest_tensors);
    jsonw_obj_end(w);
    jsonw_obj_begin(w, "none");
    jsonw_u64(w, "bytes", g->none_bytes);
    jsonw_u64(w, "tensors", g->none_tensors);
    jsonw_obj_end(w);
    jsonw_obj_end(w);
}

void plan_peak_write(struct jsonw *w, const struct plan_packing *pk)
{
    const struct peak_explain *p = &pk->peak;
    static const char *const keys[PEAK_GROUPINGS] = {"by_tag", "by_layer", "by_scope"};

    if (!pk->have_peak) {
        jsonw_null(w, "peak");
        return;
    }
    jsonw_obj_begin(w, "peak");
    jsonw_i64(w, "step", p->step);
    jsonw_i64(w, "end", p->end);
    jsonw_u64(w, "bytes", p->bytes);
    jsonw_u64(w, "live_bytes", p->live_bytes);
    jsonw_u64(w, "gap_bytes", p->gap_bytes);
    jsonw_u64(w, "tensors", p->tensors);
    if (p->op_source == PEAK_OP_NONE) {
        jsonw_null(w, "op");
    } else {
        jsonw_obj_begin(w, "op");
        jsonw_strn(w, "name", p->op, p->op_len);
        jsonw_str(w, "source", peak_op_source_name(p->op_source));
        jsonw_str(w, "op_name", p->op_name);
        jsonw_obj_end(w);
    }
    jsonw_obj_begin(w, "begins");
    jsonw_u64(w, "tensors", p->begin_tensors);
    jsonw_u64(w, "bytes", p->begin_bytes);
    jsonw_arr_begin(w, "ids");
    for (size_t k = 0; k < p->nbegin; k++)
        jsonw_u64(w, NULL, p->begin[k]);
    jsonw_arr_end(w);
    jsonw_obj_end(w);
    write_kinds(w, p);
    for (size_t g = 0; g < PEAK_GROUPINGS; g++)
        write_groups(w, keys[g], peak_grouping(p, g));
    jsonw_obj_end(w);
}
