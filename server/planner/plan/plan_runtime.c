/*
 * plan_runtime.c - the runtime side of a plan (plan_int.h): the plan's buffers replayed,
 * in program order, through the model of XLA's BFC allocator (bfc.h), and what the result
 * says about it (server/planner/RESULT.md#the-runtime-replay).
 *
 * This is the behaviour of the GPU-style runtime allocator, not of the TPU compiler: the
 * strategies assign offsets at compile time, as XLA:TPU does. The runtime section carries
 * the figures of a strategies row (name "bfc-runtime", peak against the lower bound) for
 * the comparison the CLI and the dashboard show, but lives outside packing.strategies: it
 * is not a packing, is never chosen, and every figure of it is labelled so.
 */
#include "planner/plan/plan_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/clock.h"
#include "planner/jsonw.h"

void plan_runtime_free(struct plan_runtime *rt)
{
    bfc_replay_free(&rt->r);
    memset(rt, 0, sizeof(*rt));
}

int plan_runtime_run(const struct plan_ctx *c, struct plan_packing *pk, struct err *e)
{
    struct plan_runtime *rt = &pk->rt;
    /* JAX's allocator_memory = total_memory * memory_fraction, truncated
     * (xla/pjrt/gpu/gpu_helpers.cc CreateBFCAllocator). */
    double limit = (double)c->capacity * c->mem_fraction;
    struct pack_buffer *req;
    double t0;
    int rc;

    memset(rt, 0, sizeof(*rt));
    if (!c->runtime_bfc || c->capacity == 0 || c->nbufs == 0 || limit < 1 ||
        limit > (double)BFC_MAX_LIMIT)
        return ERR_OK;
    if ((req = malloc(c->nbufs * sizeof(*req))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu buffers", c->nbufs);
    /* The runtime asks for the buffer's own bytes; BFC rounds them to 256 itself, where
     * the static plan rounds them to the packing's alignment. */
    for (size_t k = 0; k < c->nbufs; k++) {
        req[k] = c->bufs[k];
        req[k].size = c->m.tensors[c->buf_tensor[k]].padded_bytes;
    }
    /* CreateBFCAllocator: opts.allow_growth = !preallocate; garbage collection and the
     * fragmentation fraction keep BFCAllocator::Options' defaults (false, 0). */
    rt->o = (struct bfc_opts){(uint64_t)limit, !c->preallocate, false, 0};
    t0 = clock_now();
    rc = bfc_replay_run(req, c->nbufs, &rt->o, &rt->r, e);
    rt->seconds = clock_now() - t0;
    free(req);
    rt->ran = rc == ERR_OK;
    return rc;
}

static void write_failure(struct jsonw *w, const char *key, const struct plan_ctx *c, bool have,
                          const struct bfc_failure *f)
{
    uint32_t t;

    if (!have) {
        jsonw_null(w, key);
        return;
    }
    t = c->buf_tensor[f->buffer];
    jsonw_obj_begin(w, key);
    jsonw_i64(w, "step", f->step);
    jsonw_u64(w, "tensor", t);
    jsonw_str(w, "name", c->m.tensors[t].name);
    jsonw_u64(w, "requested_bytes", f->requested);
    jsonw_u64(w, "rounded_bytes", f->rounded);
    jsonw_u64(w, "in_use_bytes", f->in_use);
    jsonw_u64(w, "reserved_bytes", f->reserved);
    jsonw_u64(w, "free_bytes", f->free_bytes);
    jsonw_u64(w, "largest_free_bytes", f->largest_free);
    jsonw_bool(w, "with_free_memory", f->with_free_memory);
    jsonw_obj_end(w);
}

/* What the figures rest on, one sentence each (packing.runtime.assumptions,
 * server/planner/RESULT.md#fields). */
static void write_assumptions(struct jsonw *w, const struct plan_ctx *c)
{
    char line[ERR_MSG_MAX];

    jsonw_arr_begin(w, "assumptions");
    jsonw_str(w, NULL,
              "GPU-only: XLA's BFC allocator is JAX's device allocator on GPU "
              "(xla/pjrt/gpu/gpu_helpers.cc); TPU HBM is managed by the TPU runtime, whose "
              "allocator is not public, and XLA:TPU assigns buffer offsets at compile time");
    snprintf(line, sizeof(line),
             "the plan's capacity (%llu bytes) stands for the device's total memory, of which "
             "the allocator may hold %g",
             (unsigned long long)c->capacity, c->mem_fraction);
    jsonw_str(w, NULL, line);
    if (c->runtime_defaults)
        jsonw_str(w, NULL,
                  "memory_fraction 0.75 with preallocation are JAX's GPU defaults "
                  "(XLA_PYTHON_CLIENT_MEM_FRACTION, XLA_PYTHON_CLIENT_PREALLOCATE), not "
                  "TPU settings");
    jsonw_str(w, NULL,
              "every buffer is its own allocation, made when its lifetime starts and freed "
              "when it ends (frees first at each step), as in op-by-op execution; a compiled "
              "XLA:GPU program takes its temporaries as one block from the same allocator");
    jsonw_str(w, NULL,
              "requests are the buffers' padded sizes, rounded by BFC to 256 bytes (not to "
              "the packing's alignment); the device is assumed to have the limit free");
    jsonw_arr_end(w);
}

static void write_runtime_timeline(struct jsonw *w, const struct bfc_replay *r)
{
    size_t n = r->nsteps; /* the same segments as packing.timeline's */

    jsonw_obj_begin(w, "timeline");
    plan_write_steps(w, r->steps, n);
    plan_write_series(w, "in_use_bytes", r->in_use, n);
    plan_write_series(w, "reserved_bytes", r->reserved, n);
    plan_write_series(w, "heap_bytes", r->heap_top, n);
    plan_write_series(w, "largest_free_bytes", r->largest_free, n);
    plan_write_series_double(w, "fragmentation", r->fragmentation, n);
    jsonw_obj_end(w);
}

void plan_runtime_write(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct plan_runtime *rt = &pk->rt;
    const struct pack_result *best = plan_chosen(pk);
    const struct bfc_replay *r = &rt->r;

    if (!rt->ran) {
        jsonw_null(w, "runtime");
        return;
    }
    jsonw_obj_begin(w, "runtime");
    /* The figures of a strategies row, for the comparison (never a packing, never chosen) */
    jsonw_str(w, "name", "bfc-runtime");
    plan_write_peak_figures(w, r->peak_heap, pk->lb);
    jsonw_bool(w, "fits", r->failed == 0);
    jsonw_str(w, "allocator", "bfc");
    jsonw_str(w, "label",
              "runtime behaviour of the GPU-style allocator (XLA's BFC), not what the TPU "
              "compiler does");
    jsonw_u64(w, "device_bytes", c->capacity);
    jsonw_double(w, "memory_fraction", c->mem_fraction);
    jsonw_bool(w, "preallocate", c->preallocate);
    jsonw_bool(w, "jax_gpu_defaults", c->runtime_defaults);
    jsonw_u64(w, "memory_limit_bytes", rt->o.memory_limit);
    jsonw_u64(w, "allocations", c->nbufs);
    jsonw_u64(w, "failed_allocations", r->failed);
    jsonw_u64(w, "peak_in_use_bytes", r->peak_in_use);
    jsonw_u64(w, "peak_reserved_bytes", r->peak_reserved);
    jsonw_u64(w, "static_peak_bytes", best != NULL ? best->peak : 0);
    jsonw_u64(w, "regions", r->regions);
    jsonw_arr_begin(w, "region_bytes");
    for (size_t k = 0; k < r->regions && k < BFC_REGIONS_LISTED; k++)
        jsonw_u64(w, NULL, r->region_bytes[k]);
    jsonw_arr_end(w);
    write_failure(w, "first_failure", c, r->have_failure, &r->first_failure);
    write_failure(w, "first_oom_with_free_memory", c, r->have_free_failure, &r->first_free_failure);
    write_assumptions(w, c);
    write_runtime_timeline(w, r);
    jsonw_double(w, "seconds", rt->seconds);
    jsonw_obj_end(w);
}
