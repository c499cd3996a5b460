/*
 * pack.h - static buffer assignment (the dynamic storage allocation problem).
 *
 * Buffers have a size and a half-open lifetime [lower, upper) in program steps. A packing
 * gives each buffer an offset so that no two buffers whose lifetimes overlap overlap in
 * memory. The peak (heap height) is max(offset + size); the lower bound LB is the maximum
 * over time of the sum of live sizes; fragmentation is peak - LB (XLA's
 * HeapSimulator::Finish definition, server/planner/SOURCES.md#heap-simulator).
 *
 * Strategies (names are stable; they appear in results, the CLI and the API):
 *   "xla-spatial"      best fit, size desc then duration desc (XLA kSpatial)
 *   "xla-temporal"     best fit, duration desc then size desc (XLA kTemporal)
 *   "xla-area"         best fit, size x duration desc (XLA kSpatialTemporal)
 *   "xla-default"      the better of xla-spatial and xla-temporal (ChooseBestHeapAlgorithm);
 *                      on large problems the two passes run on two threads unless
 *                      pack_opts.threads is 1
 *   "first-fit"        lowest fitting offset in program order (a naive runtime allocator)
 *   "tflite"           TFLite ArenaPlanner: size desc, best gap
 *   "tpuplan-search"   our strongest heuristic (pack_search.c): two probe threads (at most
 *                      pack_opts.threads) run bounded probes of the exact search with a
 *                      binary search on the height from different preorders, stopping when
 *                      one reaches the LB; the exact solver, seeded with their best, gets the
 *                      second half of the budget (default 1 s). With a capacity above the
 *                      greedy peak, the exact solver first aims at the capacity (in the
 *                      probes' half), and the probes minimise from there
 *   "exact"            the exact solver (pack_exact.c): the greedy and search answers as
 *                      incumbent, then feasibility at the capacity and minimisation of the
 *                      peak; optimal (proven_optimal) or the best found by the deadline
 *                      (default 10 s); threads: pack_opts.threads
 * The search strategies ("tpuplan-search", "exact", "best") first take out what needs no
 * search (pack_reduce.c): buffers live across every other buffer's lifetime are stacked at
 * the bottom, and time-disjoint components are packed separately. On a perfect packing
 * problem (every step fully live at the lower bound, so a packing there leaves no byte
 * empty) the skyline search (pack_skyline.c) then gets 90% of the time left to find a
 * packing at the lower bound, before the search heuristic and the exact solver; its
 * restarts run on pack_opts.threads threads (at most 4), with the same answer on any number.
 * pack_run also accepts "best" (the same pipeline as "exact"; the name callers use for
 * "give me the lowest peak you can"). "all" is the caller's loop over
 * pack_strategy_names().
 *
 * All functions are pure computation on caller memory plus their own bounded allocations;
 * the exact solver and the skyline search may start threads of their own (at most
 * pack_opts.threads), joined before they return.
 */
#ifndef TPUPLAN_PACK_H
#define TPUPLAN_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

#define PACK_MAX_BUFFERS    10000000 /* bound on n, checked by every entry point */
#define PACK_TIME_LIMIT_MAX 86400    /* seconds; pack_opts.time_limit_s must lie in [0, this] */

struct pack_buffer {
    int64_t lower; /* first step live */
    int64_t upper; /* first step dead; lower < upper */
    uint64_t size; /* bytes (already padded and aligned by the caller) */
};

struct pack_problem {
    size_t n;
    const struct pack_buffer *bufs; /* borrowed, n entries */
    uint64_t capacity;              /* 0 = unbounded (minimise the peak only) */
    uint64_t alignment;             /* offsets are multiples of this; 0 or 1 = none */
};

/*
 * What the search strategies are asked. The greedy ones make one pass either way.
 *   min  minimise the peak (the default): until a proof, the lower bound or the time limit;
 *        with a capacity they first aim at it, then go on below it
 *   fit  MiniMalloc's decision problem, "does it fit?": stop at the first packing within
 *        the capacity (without one, at the first packing); the answer is then solved but
 *        not minimised, and proven_optimal only when it happens to sit on the lower bound
 */
enum pack_goal { PACK_GOAL_MIN = 0, PACK_GOAL_FIT };

/* "min", "fit"; pack_goal_parse returns -1 when unknown. */
const char *pack_goal_name(enum pack_goal g);
int pack_goal_parse(const char *s, enum pack_goal *g);

struct pack_opts {
    double time_limit_s; /* wall-clock budget for search strategies; 0 = their default */
    uint64_t seed;       /* search strategies are deterministic for a seed */
    unsigned threads;    /* solver threads; 0 = number of online CPUs */
    enum pack_goal goal;
};

struct pack_result {
    char strategy[32];
    uint64_t *offsets; /* n entries, malloc'd; owned by the result (pack_result_free) */
    uint64_t peak;
    uint64_t lower_bound;
    bool solved;           /* a packing within the capacity was found (or no capacity) */
    bool proven_optimal;   /* peak is proven minimal */
    double seconds;        /* wall-clock time of this strategy */
    double solved_seconds; /* when a packing within the capacity was first found (seconds
                            * from the start); -1: never. Exact keeps minimising after it
                            * (goal min). */
    uint64_t nodes;        /* search nodes spent (the exact solver's, the skyline search's
                            * and the search heuristic's probes, all threads; 0 for the
                            * greedy ones) */
    char stage[16];        /* the stage whose packing this is: "greedy" (a greedy pass, or
                            * the search strategies' greedy seeds), "skyline", "search" (the
                            * heuristic's probes) or "exact" (the exact solver) */
};

void pack_result_free(struct pack_result *r);

/* LB = max over time of the sum of live sizes. O(n log n). */
ERR_MUST_CHECK int pack_lower_bound(const struct pack_problem *p, uint64_t *lb, struct err *e);

/* Validates a problem: bounds, lower < upper, size > 0, no single buffer over capacity
 * ("buffer 17 alone needs N bytes, capacity is M"). Every entry point calls it. */
ERR_MUST_CHECK int pack_validate(const struct pack_problem *p, struct err *e);

/* Runs one strategy by name (see the list above; not "all"/"best"). */
ERR_MUST_CHECK int pack_run(const struct pack_problem *p, const char *strategy,
                            const struct pack_opts *o, struct pack_result *out, struct err *e);

/* Comma-separated names of the single strategies, for help and error messages. */
const char *pack_strategy_names(void);

/* What a caller needs to know of a strategy without running it (plan_portfolio.c). */
enum pack_strategy_class {
    PACK_CLASS_GREEDY, /* one deterministic pass: cheap, no time limit */
    PACK_CLASS_PICK,   /* the better of two greedy strategies (xla-default): picks[] */
    PACK_CLASS_SEARCH, /* searches until a proof or its time limit */
};

struct pack_strategy {
    const char *name;
    enum pack_strategy_class cls;
    const char *picks[2]; /* PACK_CLASS_PICK: the greedy strategies it chooses between */
    bool exhaustive;      /* enumerates to prove optimality: exponential in the worst case */
};

/* The single strategies in pack_strategy_names() order ("best" is not one of them). */
size_t pack_strategy_count(void);
const struct pack_strategy *pack_strategy_at(size_t i);

/* The strategy called name, "best" included; NULL when unknown. Static storage. */
const struct pack_strategy *pack_strategy_find(const char *name);

/* xla-default's rule (XLA's ChooseBestHeapAlgorithm): given the peaks of picks[0]'s and
 * picks[1]'s packings, the index of the one it keeps, the first of the lowest. */
static inline unsigned pack_pick(uint64_t peak0, uint64_t peak1)
{
    return peak1 < peak0;
}

/*
 * The independent checker: a separate code path from every solver. Verifies that each
 * buffer has an offset, offsets honour the alignment, offset + size <= capacity (when
 * capacity > 0), the reported peak equals max(offset + size), and no two buffers overlap
 * in time x space. O(n log n) sweep. Returns ERR_OK or ERR_INVALID naming the first pair.
 */
ERR_MUST_CHECK int pack_check(const struct pack_problem *p, const uint64_t *offsets, uint64_t peak,
                              struct err *e);

/* Per-step metrics of a packing, for the plan JSON and the dashboard. */
struct pack_metrics {
    size_t nsteps;         /* number of distinct step boundaries used below */
    int64_t *steps;        /* nsteps ascending step values (segment starts) */
    uint64_t *live_bytes;  /* sum of live sizes on [steps[i], steps[i+1]) */
    uint64_t *heap_top;    /* max(offset+size) of live buffers on that segment */
    uint64_t *free_bytes;  /* heap_top - live_bytes: gaps inside the heap */
    uint64_t *largest_gap; /* largest free gap below heap_top on that segment */
    size_t peak_segment;   /* segment where heap_top is maximal; ties: most live bytes */
    size_t *peak_buffers;  /* ids of buffers live at the peak segment */
    size_t npeak_buffers;
};

ERR_MUST_CHECK int pack_metrics_compute(const struct pack_problem *p, const uint64_t *offsets,
                                        struct pack_metrics *out, struct err *e);
void pack_metrics_free(struct pack_metrics *m);

#endif
