/*
 * pack.c - static buffer assignment: strategy dispatch.
 *
 * The strategies live in pack_heur.c (the greedy orders), pack_search.c (our search
 * heuristic) and pack_exact.c (the exact solver), after pack_reduce.c's reductions;
 * pack_problem.c validates problems and computes the lower bound. pack_check.c verifies
 * every packing independently before pack_run returns it, so a solver bug surfaces as
 * ERR_INTERNAL, never as a wrong answer.
 */
#include "planner/pack.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack_int.h"

#define PACK_SELF_CHECK_MAX 100000
/* xla-default runs its two passes on two threads from this many buffers (below, a pass
 * takes well under the cost of starting a thread). */
#define PACK_DEFAULT_THREAD_MIN 50000

/* Default budgets when pack_opts.time_limit_s is 0. */
#define PACK_SEARCH_DEFAULT_S 1.0
#define PACK_EXACT_DEFAULT_S  10.0

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

/* Runs the single greedy strategies that seed the search strategies; keeps the best. */
static int run_greedy_best(const struct pack_problem *p, uint64_t *offsets, uint64_t *peak,
                           uint64_t *tmp, struct err *e)
{
    static const enum pack_order ords[] = {PACK_ORDER_SPATIAL, PACK_ORDER_TFLITE,
                                           PACK_ORDER_TEMPORAL};
    int rc;

    *peak = UINT64_MAX;
    for (size_t i = 0; i < sizeof(ords) / sizeof(ords[0]); i++) {
        for (int fit = 0; fit < 2; fit++) {
            uint64_t pk;
            rc = pack_greedy(p, ords[i], (enum pack_fit)fit, NULL, tmp, &pk, e);
            if (rc != ERR_OK)
                return rc;
            if (pk < *peak) {
                *peak = pk;
                memcpy(offsets, tmp, p->n * sizeof(*tmp));
            }
        }
    }
    return ERR_OK;
}

#define PACK_REDUCE_DEPTH 8 /* components inside components: each level holds O(n) */

/* An incumbent's peak before it holds a packing: the pipeline then starts from the greedy
 * seeds. */
#define NO_PACKING UINT64_MAX

static int solve(const struct pack_problem *p, enum run_kind kind, const struct pack_opts *o,
                 const struct pack_budget *b, unsigned depth, struct pack_incumbent *inc,
                 struct err *e);

/* The search kinds' pipeline on a problem that does not reduce: the greedy seeds (unless
 * inc already holds their best, as a reduced problem's components do), then the search
 * heuristic, then (exact, best) the exact solver. */
static int solve_whole(const struct pack_problem *p, enum run_kind kind, const struct pack_opts *o,
                       const struct pack_budget *b, struct pack_incumbent *inc, struct err *e)
{
    uint64_t *tmp = NULL, lb;
    double t0 = clock_now(), slice;
    int rc;

    if ((rc = pack_lower_bound(p, &lb, e)) != ERR_OK)
        goto out;
    if (inc->peak == NO_PACKING) {
        if ((tmp = malloc((p->n ? p->n : 1) * sizeof(*tmp))) == NULL) {
            rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
            goto out;
        }
        if ((rc = run_greedy_best(p, inc->offsets, &inc->peak, tmp, e)) != ERR_OK)
            goto out;
    }
    pack_note_fit(p, inc->peak, inc);
    if (kind == RUN_SEARCH) {
        rc = pack_search(p, o, b, inc, e);
        goto out;
    }
    /* A slice of the budget (up to the search's own default) goes to the search heuristic
     * first: a lower incumbent shortens the exact solver's descent, and the exact answer
     * is then never worse than the heuristics'. */
    if (inc->peak > lb && inc->peak > b->enough) {
        slice = (b->deadline - t0) * 0.1;
        if (slice > PACK_SEARCH_DEFAULT_S)
            slice = PACK_SEARCH_DEFAULT_S;
        struct pack_budget first = {t0 + slice, b->enough};
        rc = pack_search(p, o, &first, inc, e);
        if (rc != ERR_OK)
            goto out;
        pack_note_fit(p, inc->peak, inc);
    }
    if (inc->peak > b->enough)
        rc = pack_exact(p, o, b, lb, inc, e);
out:
    free(tmp);
    return rc;
}

struct comp_key {
    uint64_t lb;
    uint32_t c;
};

static int comp_key_cmp(const void *a, const void *b)
{
    const struct comp_key *x = a, *y = b;

    if (x->lb != y->lb)
        return x->lb > y->lb ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

/*
 * A reduced problem (pack_reduce.c): the universal buffers stacked at the bottom, each
 * component packed on its own above them. Every component first gets the greedy seeds;
 * those whose peak still sets the answer above the lower bound are then solved in turn,
 * highest lower bound first, each with an equal share of the time left and allowed to stop
 * at what the components before it already need.
 */
static int solve_reduced(const struct pack_problem *p, enum run_kind kind,
                         const struct pack_opts *o, const struct pack_budget *b, unsigned depth,
                         const struct pack_reduction *red, struct pack_incumbent *inc,
                         struct err *e)
{
    size_t n = p->n, nc = red->ncomp, nwork = 0;
    struct pack_buffer *sub = malloc((n ? n : 1) * sizeof(*sub));
    uint64_t *suboff = malloc((n ? n : 1) * sizeof(*suboff));
    uint64_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
    uint64_t *cpeak = calloc(nc ? nc : 1, sizeof(*cpeak));
    uint64_t *ccap = calloc(nc ? nc : 1, sizeof(*ccap));
    bool *cproven = calloc(nc ? nc : 1, sizeof(*cproven));
    struct comp_key *work = malloc((nc ? nc : 1) * sizeof(*work));
    uint64_t at = 0, lb = red->base, top, goal;
    int rc = ERR_OK;

    if (sub == NULL || suboff == NULL || tmp == NULL || cpeak == NULL || ccap == NULL ||
        cproven == NULL || work == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", n);
        goto out;
    }
    for (size_t u = 0; u < red->nuniv; u++) {
        inc->offsets[red->univ[u]] = at;
        at += p->bufs[red->univ[u]].size;
    }
    /* Pass 1: the components' greedy seeds and lower bounds. */
    for (size_t c = 0; c < nc; c++) {
        uint32_t lo = red->comp_off[c], hi = red->comp_off[c + 1];
        uint64_t maxsize = 0, clb;
        for (uint32_t j = lo; j < hi; j++) {
            sub[j] = p->bufs[red->comp_mem[j]];
            if (sub[j].size > maxsize)
                maxsize = sub[j].size;
        }
        /* The capacity left above the stack, when every buffer still fits under it;
         * otherwise the component is only minimised (and the answer is over capacity). */
        if (p->capacity > red->base && p->capacity - red->base >= maxsize)
            ccap[c] = p->capacity - red->base;
        struct pack_problem q = {hi - lo, sub + lo, ccap[c], p->alignment};
        if ((rc = pack_lower_bound(&q, &clb, e)) != ERR_OK)
            goto out;
        if ((rc = run_greedy_best(&q, suboff + lo, &cpeak[c], tmp, e)) != ERR_OK)
            goto out;
        cproven[c] = cpeak[c] == clb;
        if (red->base + clb > lb)
            lb = red->base + clb;
        work[nwork++] = (struct comp_key){clb, (uint32_t)c};
    }
    goal = lb > b->enough ? lb : b->enough;
    top = red->nuniv > 0 ? red->base : 0;
    for (size_t c = 0; c < nc; c++)
        if (red->base + cpeak[c] > top)
            top = red->base + cpeak[c];
    pack_note_fit(p, top, inc);
    /* Pass 2: the components above the goal, highest lower bound first, each with an
     * equal share of the time left (the count only falls as the goal rises). The whole
     * problem is within the capacity when its last component over it comes under. */
    qsort(work, nwork, sizeof(*work), comp_key_cmp);
    size_t left = 0, over = 0; /* over: components still above the capacity */
    for (size_t k = 0; k < nwork; k++) {
        left += red->base + cpeak[work[k].c] > goal;
        over += p->capacity > 0 && red->base + cpeak[work[k].c] > p->capacity;
    }
    for (size_t k = 0; k < nwork; k++) {
        uint32_t c = work[k].c, lo = red->comp_off[c], hi = red->comp_off[c + 1];
        struct pack_problem q = {hi - lo, sub + lo, ccap[c], p->alignment};
        double now = clock_now();
        if (red->base + cpeak[c] <= goal)
            continue;
        bool was_over = p->capacity > 0 && red->base + cpeak[c] > p->capacity;
        struct pack_budget cb = {now + (b->deadline - now) / (double)(left > 1 ? left : 1),
                                 goal - red->base};
        struct pack_incumbent ci = {suboff + lo, cpeak[c], false, -1};
        left -= left > 0;
        rc = solve(&q, kind, o, &cb, depth + 1, &ci, e);
        if (rc != ERR_OK)
            goto out;
        cpeak[c] = ci.peak;
        cproven[c] = ci.proven;
        /* What this component needs, the later ones need not go below. */
        if (red->base + cpeak[c] > goal)
            goal = red->base + cpeak[c];
        /* The last component to come within the capacity makes the whole problem fit
         * (the stack fits: each buffer of it is under the capacity left above it). */
        if (was_over && red->base + cpeak[c] <= p->capacity && --over == 0 && inc->solved_at < 0)
            inc->solved_at = ci.solved_at >= 0 ? ci.solved_at : clock_now();
    }
    top = red->nuniv > 0 ? red->base : 0;
    for (size_t c = 0; c < nc; c++) {
        for (uint32_t j = red->comp_off[c]; j < red->comp_off[c + 1]; j++)
            inc->offsets[red->comp_mem[j]] = red->base + suboff[j];
        if (red->base + cpeak[c] > top)
            top = red->base + cpeak[c];
    }
    inc->peak = top;
    /* Optimal when it meets the lower bound, or when a component that sets it is proven
     * optimal on its own. */
    inc->proven = top == lb;
    for (size_t c = 0; c < nc; c++)
        inc->proven |= cproven[c] && red->base + cpeak[c] == top;
    pack_note_fit(p, top, inc);
out:
    free(sub);
    free(suboff);
    free(tmp);
    free(cpeak);
    free(ccap);
    free(cproven);
    free(work);
    return rc;
}

static int solve(const struct pack_problem *p, enum run_kind kind, const struct pack_opts *o,
                 const struct pack_budget *b, unsigned depth, struct pack_incumbent *inc,
                 struct err *e)
{
    struct pack_reduction red;
    int rc;

    if (depth >= PACK_REDUCE_DEPTH)
        return solve_whole(p, kind, o, b, inc, e);
    if ((rc = pack_reduce(p, &red, e)) != ERR_OK)
        return rc;
    if (red.nuniv == 0 && red.ncomp <= 1)
        rc = solve_whole(p, kind, o, b, inc, e);
    else
        rc = solve_reduced(p, kind, o, b, depth, &red, inc, e);
    pack_reduction_free(&red);
    return rc;
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

int pack_run(const struct pack_problem *p, const char *strategy, const struct pack_opts *o,
             struct pack_result *out, struct err *e)
{
    const struct strategy *s;
    struct pack_opts defopts = {0};
    struct pack_incumbent inc = {NULL, NO_PACKING, false, -1};
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
        rc = solve(p, s->kind, o, &(struct pack_budget){t0 + limit, 0}, 0, &inc, e);
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
    out->seconds = clock_now() - t0;
    out->solved_seconds = out->solved ? out->seconds : -1;
    if (out->solved && inc.solved_at >= t0)
        out->solved_seconds = inc.solved_at - t0;
out:
    free(inc.offsets);
    free(tmp);
    return rc;
}
