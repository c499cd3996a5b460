/*
 * pack_int.h - internals shared by the pack*.c modules (not part of the public contract).
 */
#ifndef TPUPLAN_PACK_INT_H
#define TPUPLAN_PACK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/clock.h"
#include "planner/err.h"
#include "planner/pack.h"

/* ---- the problem (pack_problem.c, with pack.h's pack_validate and pack_lower_bound) ---- */

#define PACK_WHERE_MAX 48 /* bytes of pack_where's buf */

/* Formats "buffers[i]" into buf (PACK_WHERE_MAX bytes) for struct err's where; returns buf. */
const char *pack_where(char *buf, size_t i);

/* max(offset + size) over the buffers: the peak of a packing (0 for no buffers). */
uint64_t pack_peak(const struct pack_problem *p, const uint64_t *offsets);

/* Greedy sort orders (pack_heur.c). */
enum pack_order {
    PACK_ORDER_SPATIAL,  /* size desc, duration desc, index asc (XLA kSpatial) */
    PACK_ORDER_TEMPORAL, /* duration desc, size desc, index asc (XLA kTemporal) */
    PACK_ORDER_AREA,     /* size x duration desc, index asc (XLA kSpatialTemporal) */
    PACK_ORDER_PROGRAM,  /* lower asc, index asc (a runtime allocator's order) */
    PACK_ORDER_TFLITE,   /* whole-run buffers by index, then size desc, lower asc, index */
};

enum pack_fit {
    PACK_FIT_BEST,   /* smallest (gap size, start), else the top (XLA kBestFit, TFLite) */
    PACK_FIT_LOWEST, /* first fitting gap from offset 0 (XLA kLowestOffset) */
};

/*
 * One greedy pass: places the buffers in the given order (order[i] = buffer index, n
 * entries; NULL = build it from ord) into the free gaps left by time-overlapping buffers.
 * Writes offsets (n entries) and the peak. O(n (k log n + k log k)) with k the number of
 * placed buffers overlapping the one being placed.
 */
ERR_MUST_CHECK int pack_greedy(const struct pack_problem *p, enum pack_order ord, enum pack_fit fit,
                               const uint32_t *order, uint64_t *offsets, uint64_t *peak,
                               struct err *e);

/* Fills order[n] with the buffer indices sorted by ord. */
ERR_MUST_CHECK int pack_sort_order(const struct pack_problem *p, enum pack_order ord,
                                   uint32_t *order, struct err *e);

/*
 * Our strongest heuristic ("tpuplan-search"): bounded probes of the exact search, then the
 * exact solver, under the deadline (absolute clock_now() time). On entry offsets/peak hold
 * a valid packing; on return the best packing found. It stops early once the peak is at
 * most enough (0: only the lower bound stops it): a component of a reduced problem need
 * not go below what another component already needs. *solved_at as for pack_exact.
 */
ERR_MUST_CHECK int pack_search(const struct pack_problem *p, const struct pack_opts *o,
                               double deadline, uint64_t enough, uint64_t *offsets, uint64_t *peak,
                               double *solved_at, struct err *e);

/*
 * Exact reductions (pack_reduce.c): the universal buffers (lifetime overlapping every
 * other buffer's), stacked at the bottom in index order, and the components of the rest
 * (no buffer live across the step between two components). All arrays malloc'd, owned by
 * the reduction (pack_reduction_free). Universal buffers are only taken out when every
 * size is a multiple of the alignment, so the stack stays aligned.
 */
struct pack_reduction {
    size_t nuniv;
    uint32_t *univ; /* nuniv buffer indices, ascending */
    uint64_t base;  /* sum of their sizes: where the components start */
    size_t ncomp;
    uint32_t *comp_off; /* ncomp + 1 offsets into comp_mem */
    uint32_t *comp_mem; /* the other buffers, component by component, by lower ascending */
};
ERR_MUST_CHECK int pack_reduce(const struct pack_problem *p, struct pack_reduction *r,
                               struct err *e);
void pack_reduction_free(struct pack_reduction *r);

/*
 * The exact solver. On entry offsets/peak hold a valid packing (the incumbent, from the
 * heuristics); on return they hold the best packing found. *proven is set when the
 * returned peak is proven minimal. lb is pack_lower_bound's value; the search stops once
 * the peak is at most enough (0: only a proof or the deadline stop it), without a proof.
 * *solved_at is set to the clock_now() time a packing within the capacity was first found,
 * when that happens here (it is left alone otherwise).
 */
ERR_MUST_CHECK int pack_exact(const struct pack_problem *p, const struct pack_opts *o,
                              double deadline, uint64_t lb, uint64_t enough, uint64_t *offsets,
                              uint64_t *peak, bool *proven, double *solved_at, struct err *e);

/*
 * Bounded probes of the exact solver's search, for the search heuristic: "is there a
 * packing of height <= H within this many nodes?". pack_probe_new sets *out to NULL (and
 * returns ERR_OK) when the problem is too large to probe. result: 1 found (offsets and
 * peak filled), 0 proven infeasible, -1 node limit or deadline.
 */
struct pack_probe;
ERR_MUST_CHECK int pack_probe_new(const struct pack_problem *p, struct pack_probe **out,
                                  struct err *e);
void pack_probe_free(struct pack_probe *pr);
ERR_MUST_CHECK int pack_probe_run(struct pack_probe *pr, uint64_t height, uint64_t node_limit,
                                  unsigned heur, double deadline, uint64_t *offsets, uint64_t *peak,
                                  int *result, struct err *e);
uint64_t pack_probe_unit(const struct pack_probe *pr); /* heights step by this */

#endif
