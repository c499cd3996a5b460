/*
 * pack.c - static buffer assignment: the strategy table and pack_run, which runs one
 * strategy and guards its answer.
 *
 * The greedy strategies are passes of pack_heur.c (xla-default: two of them, picked by
 * pack_pick); the search strategies are pack_solve.c's pipeline (reductions, the greedy
 * seeds, pack_search.c's heuristic, pack_exact.c's exact solver). pack_problem.c validates
 * problems and computes the lower bound. pack_check.c verifies every packing independently
 * before pack_run returns it, so a solver bug surfaces as ERR_INTERNAL, never as a wrong
 * answer.
 */
#include "planner/pack.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack/pack_int.h"

#define PACK_SELF_CHECK_MAX 100000
/* xla-default runs its two passes on two threads from this many buffers (below, a pass
 * takes well under the cost of starting a thread). */
#define PACK_DEFAULT_THREAD_MIN 50000

/* exact's and best's budget when pack_opts.time_limit_s is 0 (tpuplan-search's:
 * PACK_SEARCH_DEFAULT_S). */
#define PACK_EXACT_DEFAULT_S 10.0

/* How pack_run runs a strategy (its public class is coarser). */
enum run_kind { RUN_GREEDY, RUN_DEFAULT, RUN_SEARCH, RUN_EXACT, RUN_BEST };

static const struct strategy {
    struct pack_strategy pub;
    enum run_kind kind;
    enum pack_order ord;
    enum pack_fit fit;
} strategies[] = {
    {{"xla-spatial", PACK_CLASS_GREEDY, {NULL, NULL}, false},
     RUN_GREEDY,
     PACK_ORDER_SPATIAL,
     PACK_FIT_BEST},
    {{"xla-temporal", PACK_CLASS_GREEDY, {NULL, NULL}, false},
     RUN_GREEDY,
     PACK_ORDER_TEMPORAL,
     PACK_FIT_BEST},
    {{"xla-area", PACK_CLASS_GREEDY, {NULL, NULL}, false},
     RUN_GREEDY,
     PACK_ORDER_AREA,
     PACK_FIT_BEST},
    {{"xla-default", PACK_CLASS_PICK, {"xla-spatial", "xla-temporal"}, false},
     RUN_DEFAULT,
     PACK_ORDER_SPATIAL,
     PACK_FIT_BEST},
    {{"first-fit", PACK_CLASS_GREEDY, {NULL, NULL}, false},
     RUN_GREEDY,
     PACK_ORDER_PROGRAM,
     PACK_FIT_LOWEST},
    {{"tflite", PACK_CLASS_GREEDY, {NULL, NULL}, false},
     RUN_GREEDY,
     PACK_ORDER_TFLITE,
     PACK_FIT_BEST},
    {{"tpuplan-search", PACK_CLASS_SEARCH, {NULL, NULL}, false},
     RUN_SEARCH,
     PACK_ORDER_SPATIAL,
     PACK_FIT_BEST},
    {{"exact", PACK_CLASS_SEARCH, {NULL, NULL}, true},
     RUN_EXACT,
     PACK_ORDER_SPATIAL,
     PACK_FIT_BEST},
    {{"best", PACK_CLASS_SEARCH, {NULL, NULL}, true}, RUN_BEST, PACK_ORDER_SPATIAL, PACK_FIT_BEST},
};
#define NSTRATEGIES (sizeof(strategies) / sizeof(strategies[0]))
#define NSINGLE     (NSTRATEGIES - 1) /* all but "best" */

void pack_result_free(struct pack_result *r)
{
    if (r == NULL)
        return;
    free(r->offsets);
    r->offsets = NULL;
}

const char *pack_strategy_names(void)
{
    return "xla-spatial,xla-temporal,xla-area,xla-default,first-fit,tflite,tpuplan-search,exact";
}

static const struct strategy *strategy_find(const char *name)
{
    for (size_t i = 0; i < NSTRATEGIES; i++)
        if (strcmp(strategies[i].pub.name, name) == 0)
            return &strategies[i];
    return NULL;
}

size_t pack_strategy_count(void)
{
    return NSINGLE;
}

const struct pack_strategy *pack_strategy_at(size_t i)
{
    return i < NSINGLE ? &strategies[i].pub : NULL;
}

const struct pack_strategy *pack_strategy_find(const char *name)
{
    const struct strategy *s = name != NULL ? strategy_find(name) : NULL;

    return s != NULL ? &s->pub : NULL;
}

/* The temporal pass of xla-default, on a thread of its own. */
struct default_pass {
    const struct pack_problem *p;
    uint64_t *offsets, peak;
    struct err err;
    int rc;
};

static void *default_temporal(void *arg)
{
    struct default_pass *d = arg;

    d->rc =
        pack_greedy(d->p, PACK_ORDER_TEMPORAL, PACK_FIT_BEST, NULL, d->offsets, &d->peak, &d->err);
    return NULL;
}

/*
 * xla-default: both passes, the first of the minimum heap sizes wins (XLA's
 * ChooseBestHeapAlgorithm). The passes are independent, so on large problems with a
 * second thread allowed they run side by side: 1,000,000 buffers take one pass's wall
 * time (about 1 s) instead of two. The answer does not depend on it.
 */
static int run_default(const struct pack_problem *p, const struct pack_opts *o, uint64_t *offsets,
                       uint64_t *peak, uint64_t *tmp, struct err *e)
{
    struct default_pass d = {.p = p, .offsets = tmp};
    pthread_t tid;
    bool threaded = p->n >= PACK_DEFAULT_THREAD_MIN && o->threads != 1 &&
                    pthread_create(&tid, NULL, default_temporal, &d) == 0;
    int rc = pack_greedy(p, PACK_ORDER_SPATIAL, PACK_FIT_BEST, NULL, offsets, peak, e);

    if (threaded)
        pthread_join(tid, NULL);
    else if (rc == ERR_OK)
        default_temporal(&d);
    if (rc != ERR_OK)
        return rc;
    if (d.rc != ERR_OK) {
        if (e != NULL)
            *e = d.err;
        return d.rc;
    }
    if (pack_pick(*peak, d.peak) == 1) {
        *peak = d.peak;
        memcpy(offsets, tmp, p->n * sizeof(*tmp));
    }
    return ERR_OK;
}

const char *pack_goal_name(enum pack_goal g)
{
    return g == PACK_GOAL_FIT ? "fit" : "min";
}

int pack_goal_parse(const char *s, enum pack_goal *g)
{
    if (s != NULL && strcmp(s, "min") == 0)
        *g = PACK_GOAL_MIN;
    else if (s != NULL && strcmp(s, "fit") == 0)
        *g = PACK_GOAL_FIT;
    else
        return -1;
    return 0;
}

/* The budget's enough for a goal: fit stops within the capacity (any packing without
 * one); min only at a proof or the lower bound. */
static uint64_t goal_enough(const struct pack_problem *p, enum pack_goal g)
{
    if (g != PACK_GOAL_FIT)
        return 0;
    return p->capacity > 0 ? p->capacity : UINT64_MAX;
}

int pack_run(const struct pack_problem *p, const char *strategy, const struct pack_opts *o,
             struct pack_result *out, struct err *e)
{
    const struct strategy *s;
    struct pack_opts defopts = {0};
    struct pack_incumbent inc = {NULL, 0, false, -1, 0, NULL};
    uint64_t *tmp = NULL, lb = 0;
    double t0 = clock_now(), limit;
    int rc;

    if (out == NULL)
        return err_set(e, ERR_INVALID, NULL, "pack_run: no result given");
    memset(out, 0, sizeof(*out));
    if (o == NULL)
        o = &defopts;
    if (strategy == NULL || (s = strategy_find(strategy)) == NULL)
        return err_set(e, ERR_NOTFOUND, "strategy",
                       "unknown packing strategy \"%s\" (one of %s, best)",
                       strategy == NULL ? "" : strategy, pack_strategy_names());
    if (!(o->time_limit_s >= 0 && o->time_limit_s <= PACK_TIME_LIMIT_MAX))
        return err_set(e, ERR_INVALID, "time_limit", "time limit %g s is out of range [0, %d]",
                       o->time_limit_s, PACK_TIME_LIMIT_MAX);
    rc = pack_lower_bound(p, &lb, e); /* validates */
    if (rc != ERR_OK)
        return rc;
    inc.offsets = malloc((p->n ? p->n : 1) * sizeof(*inc.offsets));
    tmp = malloc((p->n ? p->n : 1) * sizeof(*tmp));
    if (inc.offsets == NULL || tmp == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    switch (s->kind) {
    case RUN_GREEDY:
        rc = pack_greedy(p, s->ord, s->fit, NULL, inc.offsets, &inc.peak, e);
        break;
    case RUN_DEFAULT:
        rc = run_default(p, o, inc.offsets, &inc.peak, tmp, e);
        break;
    case RUN_SEARCH:
    case RUN_EXACT:
    case RUN_BEST:
        limit = o->time_limit_s > 0     ? o->time_limit_s
                : s->kind == RUN_SEARCH ? PACK_SEARCH_DEFAULT_S
                                        : PACK_EXACT_DEFAULT_S;
        rc = pack_solve(p, s->kind == RUN_SEARCH ? PACK_SOLVE_SEARCH : PACK_SOLVE_EXACT, o,
                        &(struct pack_budget){t0 + limit, goal_enough(p, o->goal)}, &inc, e);
        break;
    }
    if (rc != ERR_OK)
        goto out;
    if (inc.peak != pack_peak(p, inc.offsets)) {
        rc = err_set(e, ERR_INTERNAL, NULL, "%s: reported peak %llu is not the packing's peak",
                     s->pub.name, (unsigned long long)inc.peak);
        goto out;
    }
    /* The independent checker guards every answer (capacity excluded: an over-capacity
     * packing is a valid answer with solved = false). Above PACK_SELF_CHECK_MAX buffers
     * the caller's own pack_check (plan_run, the benchmark) is the guard, so the greedy
     * strategies stay within their time budget at a million buffers. */
    if (p->n <= PACK_SELF_CHECK_MAX) {
        struct pack_problem q = *p;
        q.capacity = 0;
        rc = pack_check(&q, inc.offsets, inc.peak, e);
        if (rc != ERR_OK) {
            err_prefix(e, NULL, "internal error, packing failed the checker: ");
            rc = e != NULL ? (e->code = ERR_INTERNAL) : ERR_INTERNAL;
            goto out;
        }
    }
    snprintf(out->strategy, sizeof(out->strategy), "%s", s->pub.name);
    out->offsets = inc.offsets;
    inc.offsets = NULL;
    out->peak = inc.peak;
    out->lower_bound = lb;
    out->solved = p->capacity == 0 || inc.peak <= p->capacity;
    out->proven_optimal = inc.proven || inc.peak == lb;
    out->nodes = inc.nodes;
    snprintf(out->stage, sizeof(out->stage), "%s", inc.stage != NULL ? inc.stage : "greedy");
    out->seconds = clock_now() - t0;
    out->solved_seconds = out->solved ? out->seconds : -1;
    if (out->solved && inc.solved_at >= t0)
        out->solved_seconds = inc.solved_at - t0;
out:
    free(inc.offsets);
    free(tmp);
    return rc;
}
