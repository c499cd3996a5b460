/*
 * frontier.h - the most that fits: the largest value of one recipe field (the batch, the
 * sequence, the serving context or concurrent sequences, the microbatches) whose plan fits
 * its chip and its budget, found by exact re-plans (plan.h), never by an estimate; and, when
 * asked, the same search for each value of a second field (a sweep: remat policies, meshes,
 * chips, optimizer dtypes), one line of the chart per value
 * (server/planner/RESULT.md#the-frontier).
 *
 * The search assumes what holds for a step's memory: a larger value never needs less. It
 * plans lo, then doubles until a value does not fit (or passes hi), then halves the gap:
 * about 2 log2(answer) plans per line. Each probe's peak is kept: the chart's points.
 *
 * Pure: no I/O, no global state; the work is bounded by max_plans.
 */
#ifndef TPUPLAN_FRONTIER_H
#define TPUPLAN_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/plan.h"

#define FRONTIER_MAX_SWEEP  16 /* values of the swept field */
#define FRONTIER_MAX_PLANS  2048
#define FRONTIER_MAX_PROBES 64 /* per line: 2 x 31 doublings and halvings of an int32 range */

/* What to search. Strings are borrowed for the call. */
struct frontier_query {
    const char *maximize; /* a recipe path ("train.batch") or an alias: batch, seq,
                           * context, sequences, microbatches (frontier_field) */
    int64_t lo;           /* the smallest value tried; 0: 1 */
    int64_t hi;           /* the largest; 0: 2^20 */
    int64_t step;         /* values are multiples of step (a batch that must divide over the
                           * data-parallel devices); 0: 1 */
    const char *sweep;    /* NULL, or the recipe path of a second field */
    const char *const *sweep_values; /* n_sweep values, as recipe_set reads them */
    size_t n_sweep;
    size_t max_plans; /* 0: FRONTIER_MAX_PLANS */
};

/* One plan of the search. */
struct frontier_probe {
    int64_t x;
    uint64_t peak_bytes;
    bool fits; /* the plan's verdict is "fits": HBM, kernels' VMEM and the budget */
};

/* One line: the search for one value of the swept field (or the only line). */
struct frontier_line {
    char value[64];        /* the swept field's value; "" without a sweep */
    int64_t max_fit;       /* the largest value that fits; 0: not even lo */
    uint64_t max_fit_peak; /* its peak */
    int64_t next;          /* the next value tried above it (max_fit + step), 0 when
                            * max_fit is hi */
    uint64_t next_peak;    /* its peak, and by how much it is over (the capacity, or the
                            * budget when that is what it fails) */
    uint64_t next_over_bytes;
    uint64_t capacity_bytes; /* the line's own chip's usable HBM and budget: a chip sweep */
    bool has_budget;         /* has one per line, and next_over_bytes is against them */
    uint64_t budget_bytes;
    struct frontier_probe probes[FRONTIER_MAX_PROBES]; /* in x order */
    size_t n_probes;
    char error[ERR_MSG_MAX]; /* non-empty: this value of the sweep could not be planned (why) */
};

struct frontier_result {
    char path[64]; /* the field searched, as a recipe path */
    int64_t lo, hi, step;
    char sweep[64];          /* "" without a sweep */
    uint64_t capacity_bytes; /* the last line's (each line has its own: a chip sweep) */
    bool has_budget;
    uint64_t budget_bytes;
    struct frontier_line *lines; /* n_lines (1 without a sweep); owned, frontier_free() */
    size_t n_lines;
    size_t plans; /* plans run in all */
};

/* The recipe path an alias names ("batch" -> "train.batch"), or the name itself when it
 * is a path (it has a '.'); NULL for anything else. */
const char *frontier_field(const char *name);

/*
 * The query alone, before any recipe is read: the field resolved to its path, the range's
 * defaults filled in and checked (hi rounded down to a multiple of step), the sweep's shape
 * checked, into r's path, lo, hi, step and sweep (nothing allocated: r needs no
 * frontier_free). Errors name maximize, step, min (lo), max (hi) or sweep, as
 * frontier_search's do; it is the check frontier_search starts with.
 */
ERR_MUST_CHECK int frontier_check(const struct frontier_query *q, struct frontier_result *r,
                                  struct err *e);

/*
 * Runs the search over the recipe (len bytes, a recipe or a bare config.json as
 * recipe_compose reads them) planned with o and l (as plan_run). Errors: the recipe or a
 * field that is no recipe field (named), lo that does not fit the recipe's own checks, no
 * capacity to fit against, more than max_plans plans needed (ERR_LIMIT). A sweep value the
 * recipe refuses is that line's error, not the call's. *out is the caller's
 * (frontier_free) on success, empty on failure.
 */
ERR_MUST_CHECK int frontier_search(const char *recipe, size_t len, const struct plan_opts *o,
                                   const struct plan_limits *l, const struct frontier_query *q,
                                   struct frontier_result *out, struct err *e);

/* The result as JSON (server/planner/RESULT.md#the-frontier): malloc'd, NUL-terminated,
 * the caller frees. */
ERR_MUST_CHECK int frontier_json(const struct frontier_result *r, char **json, size_t *len,
                                 struct err *e);

void frontier_free(struct frontier_result *r);

#endif
