/*
 * plan_portfolio.c - the strategy portfolio (plan_int.h): every strategy the plan asked
 * for runs on the same packing problem and the lowest peak wins.
 *
 * What a strategy is (a single greedy pass, the better of two picks, a search) comes from
 * its traits in pack.h, never from its name. The greedy passes run ahead, shared between
 * two threads; a pick is taken from the two passes it picks from when they already ran;
 * under "best" the searches are dropped once a packing reaches the lower bound.
 */
#include "planner/plan/plan_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLAN_AHEAD_MIN 256 /* greedy strategies share two threads from this many buffers */

void plan_portfolio_free(struct plan_packing *pk, size_t nruns)
{
    for (size_t k = 0; k < nruns; k++)
        pack_result_free(&pk->runs[k].r);
    if (pk->have_metrics)
        pack_metrics_free(&pk->mt);
}

/* The class of a strategy in the plan's list (plan.c took every name there from pack.h). */
static enum pack_strategy_class class_of(const char *name)
{
    return pack_strategy_find(name)->cls;
}

/* The run of strategy name so far (with its packing), or NULL. */
static const struct plan_strat_run *run_of(const struct plan_ctx *c, const struct plan_packing *pk,
                                           size_t nruns, const char *name)
{
    for (size_t k = 0; k < nruns; k++)
        if (strcmp(c->strategies[k], name) == 0 && pk->runs[k].rc == ERR_OK)
            return &pk->runs[k];
    return NULL;
}

/*
 * A PACK_CLASS_PICK strategy (xla-default) keeps the better of its two picks (pack_pick).
 * When both already ran in this plan (they come first in the list), it is taken from them
 * rather than packed twice more: one greedy pass less each, a third of "best"'s greedy time
 * on a 1,000-tensor model. Its time is theirs added, what running it costs. false: pack it.
 */
static bool pick_from_runs(const struct plan_ctx *c, const struct plan_packing *pk,
                           struct plan_strat_run *sr, const struct pack_strategy *ps)
{
    size_t nruns = (size_t)(sr - pk->runs);
    const struct plan_strat_run *r0 = run_of(c, pk, nruns, ps->picks[0]);
    const struct plan_strat_run *r1 = run_of(c, pk, nruns, ps->picks[1]);
    const struct plan_strat_run *pick = NULL;

    if (r0 == NULL || r1 == NULL)
        return false;
    pick = pack_pick(r0->r.peak, r1->r.peak) == 1 ? r1 : r0;
    sr->r = pick->r;
    sr->r.offsets = malloc(pk->p.n * sizeof(*sr->r.offsets));
    if (sr->r.offsets == NULL) {
        memset(&sr->r, 0, sizeof(sr->r));
        return false;
    }
    memcpy(sr->r.offsets, pick->r.offsets, pk->p.n * sizeof(*sr->r.offsets));
    snprintf(sr->r.strategy, sizeof(sr->r.strategy), "%s", ps->name);
    sr->r.seconds = r0->r.seconds + r1->r.seconds;
    sr->r.solved_seconds = sr->r.solved ? sr->r.seconds : -1;
    return true;
}

/* Runs strategy k into pk->runs[k]. */
static void run_one(const struct plan_ctx *c, struct plan_packing *pk, size_t k,
                    const struct pack_opts *po)
{
    struct plan_strat_run *sr = &pk->runs[k];
    struct err pe;

    err_clear(&pe);
    sr->rc = pack_run(&pk->p, c->strategies[k], po, &sr->r, &pe);
    if (sr->rc != ERR_OK) {
        snprintf(sr->error, sizeof(sr->error), "%s", pe.msg);
        snprintf(sr->r.strategy, sizeof(sr->r.strategy), "%s", c->strategies[k]);
    }
    sr->ran = true;
}

/* The single greedy passes, which run ahead of the main loop (a pick is left to it: it is
 * usually taken from two of them). */
static bool runs_ahead(const struct plan_ctx *c, size_t k)
{
    return class_of(c->strategies[k]) == PACK_CLASS_GREEDY;
}

struct ahead {
    const struct plan_ctx *c;
    struct plan_packing *pk;
    const struct pack_opts *po;
    unsigned part; /* this thread takes every second greedy strategy from this one */
};

/* A plan_side stage; never fails: run_one keeps each run's error in its run. */
static int ahead_main(void *arg, struct err *e)
{
    struct ahead *a = arg;

    (void)e;
    for (size_t k = 0, i = 0; k < a->c->nstrategies; k++)
        if (runs_ahead(a->c, k) && i++ % 2 == a->part)
            run_one(a->c, a->pk, k, a->po);
    return ERR_OK;
}

/*
 * The greedy strategies are independent single passes; with more than one core they are
 * shared between two threads: "best" on the 1,000-tensor bench model spends most of its
 * time in them (5 passes with ~750 buffers live at once), and the service's submit-to-done
 * latency is mostly that. Results do not depend on it. Below PLAN_AHEAD_MIN buffers a pass
 * costs less than starting a thread.
 */
static void run_ahead(const struct plan_ctx *c, struct plan_packing *pk, const struct pack_opts *po)
{
    struct ahead a[2] = {{c, pk, po, 0}, {c, pk, po, 1}};
    struct plan_side side = {0};
    size_t n = 0;

    for (size_t k = 0; k < c->nstrategies; k++)
        n += runs_ahead(c, k);
    plan_side_start(&side, ahead_main, &a[1], n >= 2 && plan_side_worth(c));
    (void)ahead_main(&a[0], NULL);
    (void)!plan_side_join(&side, NULL);
}

int plan_portfolio_run(struct plan_ctx *c, struct plan_packing *pk, struct err *e)
{
    struct pack_opts po = {
        .time_limit_s = c->time_limit_s, .seed = 1, .threads = c->threads, .goal = c->goal};
    int rc;

    memset(pk, 0, sizeof(*pk));
    pk->chosen = -1;
    /* capacity 0: minimise the peak; the fit against the chip is judged here, so a plan
     * that does not fit still gets offsets to look at. */
    pk->p = (struct pack_problem){c->nbufs, c->bufs, 0, c->alignment};
    if (c->nbufs == 0)
        return ERR_OK;
    if ((rc = pack_lower_bound(&pk->p, &pk->lb, e)) != ERR_OK)
        return rc;
    run_ahead(c, pk, &po);
    for (size_t k = 0; k < c->nstrategies;) {
        struct plan_strat_run *sr = &pk->runs[k];
        /* Under "best", a packing at the lower bound is proven optimal: the search
         * strategies could only spend their time limit to find it again. Drop them from
         * the list (and say so) rather than report runs that did not happen. */
        if (c->best_only && pk->chosen >= 0 && pk->runs[pk->chosen].r.peak == pk->lb &&
            class_of(c->strategies[k]) == PACK_CLASS_SEARCH) {
            model_warn(&c->m, "%s skipped: %s already reached the lower bound (optimal)",
                       c->strategies[k], pk->runs[pk->chosen].r.strategy);
            memmove(c->strategies[k], c->strategies[k + 1],
                    (c->nstrategies - k - 1) * sizeof(c->strategies[0]));
            /* Runs of later strategies may exist already (run ahead): they move too. */
            memmove(&pk->runs[k], &pk->runs[k + 1], (c->nstrategies - k - 1) * sizeof(*pk->runs));
            memset(&pk->runs[c->nstrategies - 1], 0, sizeof(*pk->runs));
            c->nstrategies--;
            continue;
        }
        if (sr->ran)
            ; /* a greedy pass, run ahead */
        else if (class_of(c->strategies[k]) == PACK_CLASS_PICK &&
                 pick_from_runs(c, pk, sr, pack_strategy_find(c->strategies[k])))
            sr->rc = ERR_OK;
        else
            run_one(c, pk, k, &po);
        if (sr->rc == ERR_OK && (pk->chosen < 0 || sr->r.peak < pk->runs[pk->chosen].r.peak))
            pk->chosen = (int)k;
        k++;
    }
    if (pk->chosen < 0)
        return err_set(e, pk->runs[0].rc, "strategies", "no packing strategy succeeded: %s: %s",
                       c->strategies[0], pk->runs[0].error);
    return ERR_OK;
}

int plan_portfolio_check(struct plan_packing *pk, struct err *e)
{
    const struct pack_result *best = plan_chosen(pk);
    struct err ce;

    err_clear(&ce);
    if (best != NULL && pack_check(&pk->p, best->offsets, best->peak, &ce) != ERR_OK)
        return err_set(e, ERR_INTERNAL, "",
                       "internal error: the %s packing fails the "
                       "independent check: %s",
                       best->strategy, ce.msg);
    return ERR_OK;
}

int plan_portfolio_metrics(struct plan_packing *pk, struct err *e)
{
    const struct pack_result *best = plan_chosen(pk);
    int rc;

    if (best == NULL)
        return ERR_OK;
    if ((rc = pack_metrics_compute(&pk->p, best->offsets, &pk->mt, e)) != ERR_OK)
        return rc;
    pk->have_metrics = true;
    return ERR_OK;
}

bool plan_side_worth(const struct plan_ctx *c)
{
    return c->threads != 1 && c->nbufs >= PLAN_AHEAD_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1;
}

static void *side_main(void *arg)
{
    struct plan_side *s = arg;

    err_clear(&s->e);
    s->rc = s->fn(s->arg, &s->e);
    return NULL;
}

void plan_side_start(struct plan_side *s, int (*fn)(void *arg, struct err *e), void *arg,
                     bool threaded)
{
    s->fn = fn;
    s->arg = arg;
    s->rc = ERR_OK;
    s->started = threaded && pthread_create(&s->tid, NULL, side_main, s) == 0;
}

int plan_side_join(struct plan_side *s, struct err *e)
{
    if (s->fn == NULL)
        return ERR_OK;
    if (s->started)
        pthread_join(s->tid, NULL);
    else
        side_main(s);
    s->fn = NULL;
    if (s->rc != ERR_OK && e != NULL)
        *e = s->e;
    return s->rc;
}
