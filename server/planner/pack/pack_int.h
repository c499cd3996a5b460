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

/* Sorts the n time points in v and drops repeats, in place: the distinct points in
 * ascending order, their count returned. The solvers cut the timeline into sections or
 * columns at these points. In pack_problem.c. */
size_t pack_time_points(int64_t *v, size_t n);

/* The index of the first of the n ascending points in v that is >= x (n when none). */
size_t pack_time_index(const int64_t *v, size_t n, int64_t x);

/* ---- what the solvers share ---------------------------------------------------------- */

/*
 * The best packing a solver knows: it starts from it and hands it back. All of it is the
 * caller's, offsets included (n entries of the problem the solver is given). offsets and
 * peak always describe one valid packing, within the capacity or not: a solver replaces
 * them together, pack_search and pack_exact only by a lower peak. A solver that runs
 * threads gives each its own incumbent and merges them.
 */
struct pack_incumbent {
    uint64_t *offsets; /* n entries, borrowed */
    uint64_t peak;     /* max(offset + size) of offsets */
    bool proven;       /* peak is proven minimal: a solver sets it and never clears it */
    double solved_at;  /* clock_now() time a packing within the capacity was first known;
                        * -1: not yet. Set once, by the first to know (pack_note_fit) */
    uint64_t nodes;    /* search nodes spent on it so far: pack_exact and the probes add theirs */
    const char *stage; /* the stage that found offsets (static): "greedy", "skyline", "search",
                        * "exact"; NULL before the first */
};

/*
 * When a solver may stop short of a proof: at the deadline, or once its peak is at most
 * enough (the goal of its caller: a component of a reduced problem need not go below what
 * another component already needs, a capacity question is answered at the capacity).
 * The caller's, read only; a solver that hands a share of it on builds a new one.
 */
struct pack_budget {
    double deadline; /* absolute clock_now() time */
    uint64_t enough; /* 0: only a proof or the lower bound stops it early */
};

/* Sets inc->solved_at to now if it is unset and a packing of height peak is within p's
 * capacity (p has one). In pack_problem.c. */
void pack_note_fit(const struct pack_problem *p, uint64_t peak, struct pack_incumbent *inc);

/* ---- threads (pack_threads.c) ------------------------------------------------------- */

#define PACK_MAX_THREADS 16 /* threads one solver runs at once, at most (pack_fan_out) */

/* The threads pack_opts.threads asks for (0: one per online CPU), at most max. */
unsigned pack_threads(unsigned threads, unsigned max);

/*
 * Runs fn on each of n records of size bytes from base, and returns when all are done: the
 * first on the caller's thread, the others on threads of their own, or on the caller's after
 * the first where no thread can be started (or past PACK_MAX_THREADS). The solvers that run
 * threads give the same answer on any number of them, so the fallback changes only the time.
 */
void pack_fan_out(void *(*fn)(void *), void *base, size_t size, unsigned n);

/* ---- the solvers ---------------------------------------------------------------------- */

/* Greedy sort orders (pack_heur.c). */
enum pack_order {
    PACK_ORDER_SPATIAL,  /* size desc, duration desc, index asc (XLA kSpatial) */
    PACK_ORDER_TEMPORAL, /* duration desc, size desc, index asc (XLA kTemporal) */
    PACK_ORDER_AREA,     /* size x duration desc, index asc (XLA kSpatialTemporal) */
    PACK_ORDER_PROGRAM,  /* lower asc, index asc (a runtime allocator's order) */
    PACK_ORDER_TFLITE,   /* whole-run buffers by index, then size desc, lower asc, index */
    PACK_ORDER_UPPER,    /* upper asc, index asc (when buffers end: the sweeps' frees) */
};

enum pack_fit {
    PACK_FIT_BEST,   /* smallest (gap size, start), else the top (XLA kBestFit, TFLite) */
    PACK_FIT_LOWEST, /* first fitting gap from offset 0 (XLA kLowestOffset) */
};

/*
 * One greedy pass: places the buffers in the given order (order[i] = buffer index, n
 * entries; NULL = build it from ord) into the free gaps left by time-overlapping buffers.
 * Writes offsets (n entries) and the peak. O(n (s + k log r)) with k the number of placed
 * buffers overlapping the one being placed, s >= k the placed chunks its query reads and r
 * the offset-sorted runs they come in (pack_heur.c).
 */
ERR_MUST_CHECK int pack_greedy(const struct pack_problem *p, enum pack_order ord, enum pack_fit fit,
                               const uint32_t *order, uint64_t *offsets, uint64_t *peak,
                               struct err *e);

/* Fills order[n] with the buffer indices sorted by ord. */
ERR_MUST_CHECK int pack_sort_order(const struct pack_problem *p, enum pack_order ord,
                                   uint32_t *order, struct err *e);

/* Fills order[n] with 0..n-1 sorted by (key[i], i) ascending (n <= PACK_MAX_BUFFERS):
 * the same radix sort, on the bits where the keys differ. The sweeps rank offsets by it. */
ERR_MUST_CHECK int pack_sort_keys(const uint64_t *key, size_t n, uint32_t *order, struct err *e);

/* The orders a sweep of a packing over time needs (pack_check, pack_metrics_compute): the
 * buffers by lower and by upper (each in index order at ties), and each buffer's rank in
 * (offset, index) order with its inverse. pack_sweep_init allocates and fills them (no
 * partial state on failure: ERR_NOMEM, or the sorts' errors); pack_sweep_free frees them. */
struct pack_sweep {
    uint32_t *by_lower, *by_upper; /* buffer indices by lower, by upper */
    uint32_t *byrank, *rank;       /* rank -> buffer, buffer -> rank */
};

ERR_MUST_CHECK int pack_sweep_init(const struct pack_problem *p, const uint64_t *offsets,
                                   struct pack_sweep *s, struct err *e);
void pack_sweep_free(struct pack_sweep *s);

/* tpuplan-search's budget when pack_opts.time_limit_s is 0, and the most the exact mode
 * of pack_solve gives the search heuristic before the exact solver. */
#define PACK_SEARCH_DEFAULT_S 1.0

enum pack_solve_mode {
    PACK_SOLVE_SEARCH, /* "tpuplan-search": the greedy seeds, then the search heuristic */
    PACK_SOLVE_EXACT,  /* "exact", "best": then the exact solver */
};

/*
 * The search strategies' pipeline (pack_solve.c): pack_reduce's reductions, then on each
 * part that does not reduce the greedy seeds, pack_search and (PACK_SOLVE_EXACT)
 * pack_exact, all within b. On entry inc->offsets is room for n offsets (what it and
 * inc->peak hold is ignored: the pipeline makes its own first packing), inc->proven is
 * false and inc->solved_at -1; on return inc holds the best packing found.
 */
ERR_MUST_CHECK int pack_solve(const struct pack_problem *p, enum pack_solve_mode mode,
                              const struct pack_opts *o, const struct pack_budget *b,
                              struct pack_incumbent *inc, struct err *e);

/*
 * Our strongest heuristic ("tpuplan-search", pack_search.c): bounded probes of the exact
 * search, then the exact solver, within the budget. inc holds a packing on entry and the
 * best found on return; inc->solved_at is set as its exact phase sets it (the probes
 * leave it alone). inc->proven is left alone too: the answer is a heuristic's, even where
 * its exact phase proves it.
 */
ERR_MUST_CHECK int pack_search(const struct pack_problem *p, const struct pack_opts *o,
                               const struct pack_budget *b, struct pack_incumbent *inc,
                               struct err *e);

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
 * The exact solver (pack_exact.c). inc holds a packing on entry (the incumbent, from the
 * heuristics) and the best found on return; inc->proven is set when its peak is proven
 * minimal, and inc->solved_at when this search first finds a packing within the capacity.
 * lb is pack_lower_bound's value. A peak at most b->enough stops it, unproven; so does a
 * search whose stacks outgrow their bound, derived from the problem's size (pack_exact.c,
 * Memory): it returns ERR_OK with the best packing it has.
 */
ERR_MUST_CHECK int pack_exact(const struct pack_problem *p, const struct pack_opts *o,
                              const struct pack_budget *b, uint64_t lb, struct pack_incumbent *inc,
                              struct err *e);

/*
 * The skyline search (pack_skyline.c): "is there a packing of peak <= height?", by filling
 * the strip from its lowest cell; complete, so an exhausted search is a proof. variant
 * 0-7 (bits: candidates largest first, time backwards, flush candidates first) only
 * changes the order of the search. *result: 1
 * found (offsets, n entries, written), 0 proven none, -1 node limit, deadline, a path
 * deeper than its bound (pack_skyline.c, sky_bounds), or the stage does not apply
 * (pack_skyline_unit is 0). Adds its nodes to *nodes. Deterministic for
 * (p, height, node_limit) unless the deadline cuts it short.
 */
ERR_MUST_CHECK int pack_skyline(const struct pack_problem *p, uint64_t height, unsigned variant,
                                uint64_t node_limit, double deadline, uint64_t *offsets,
                                int *result, uint64_t *nodes, struct err *e);

/*
 * The skyline stage: pack_skyline with restarts: every variant in turn, first in its own
 * order, then as randomised dives (fixed streams) with node limits on the Luby sequence,
 * until one answers (found, or proven none: every run is complete) or the deadline. Same
 * results as pack_skyline. The runs are spread over threads (0: the online CPUs; at most
 * 4), started and joined here; the answer (result and offsets) is the same for any thread
 * count and deterministic but for the deadline; *nodes, which adds every thread's, is
 * deterministic on one thread only.
 */
ERR_MUST_CHECK int pack_skyline_solve(const struct pack_problem *p, uint64_t height,
                                      unsigned threads, double deadline, uint64_t *offsets,
                                      int *result, uint64_t *nodes, struct err *e);

/* The skyline's unit of height (the gcd of the sizes); 0 when the stage does not apply:
 * no buffers, too many, or the gcd is not a multiple of the alignment. */
uint64_t pack_skyline_unit(const struct pack_problem *p);

/*
 * Bounded probes of the exact solver's search, for the search heuristic: "is there a
 * packing of height <= height, searching with preorder heur of the portfolio, within
 * node_limit nodes and by b->deadline?". pack_probe_new sets *out to NULL (and returns
 * ERR_OK) when the problem is too large to probe; the probe borrows p until
 * pack_probe_free. *result: 1 found (inc's offsets and peak replaced by it; proven and
 * solved_at are the caller's to judge), 0 proven infeasible, -1 node limit or deadline.
 * ERR_LIMIT (*result -1) when the search's stacks outgrow their bound (pack_exact.c,
 * Memory), naming the stack: deeper probes of the problem would too, so callers stop
 * probing and keep what they have.
 */
struct pack_probe;
ERR_MUST_CHECK int pack_probe_new(const struct pack_problem *p, struct pack_probe **out,
                                  struct err *e);
void pack_probe_free(struct pack_probe *pr);
ERR_MUST_CHECK int pack_probe_run(struct pack_probe *pr, uint64_t height, unsigned heur,
                                  uint64_t node_limit, const struct pack_budget *b,
                                  struct pack_incumbent *inc, int *result, struct err *e);
uint64_t pack_probe_unit(const struct pack_probe *pr); /* heights step by this */

#endif
