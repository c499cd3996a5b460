/*
 * pack_search.c - "tpuplan-search", our strongest heuristic.
 *
 * The greedy orders waste 28-41 % on adversarial instances because one early choice is
 * never revisited. This heuristic instead asks the exact solver's search bounded
 * questions: "is there a packing of height <= H within L nodes?", binary-searching H
 * between the lower bound and the best peak found. A probe that runs out of nodes only
 * raises the soft lower end; once the window closes, the next preorder of the portfolio
 * is tried and the node limit doubles every full cycle. A probe that exhausts its tree is
 * a proof, and raises the hard lower end. Two threads probe at once, walking the cycle of
 * preorders from different starts. Half the budget goes to the probes; the exact solver
 * (pack_exact), seeded with their best packing, gets the rest. With a capacity the best
 * peak is above, the exact solver first gets the probes' half to reach the capacity (what
 * it aims at first), and the probes minimise from there. Probes and solver depend on
 * node counts, not time, so the answer is deterministic for a seed (the deadline only cuts
 * it short).
 *
 * Problems too large to probe get randomised greedy orders instead: the spatial order
 * with sizes perturbed by a seeded factor, best fit, until the deadline. A probe whose
 * stacks outgrow their bound (pack_exact.c, Memory) ends its thread's probing: any other
 * probe of the problem would go as deep; the best packing found stands.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack/pack_int.h"

#define SEARCH_BASE_NODES  2000
#define SEARCH_PREORDERS   6
#define SEARCH_PROBE_SHARE 0.5 /* of the budget, for the probes; the exact solver gets the rest */
#define SEARCH_MAX_THREADS 2   /* the probes of one instance are short: two suffice */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

struct pkey {
    double k;
    uint32_t idx;
};

static int pkey_cmp(const void *a, const void *b)
{
    const struct pkey *x = a, *y = b;

    if (x->k != y->k)
        return x->k > y->k ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Randomised greedy restarts for large problems. */
static int search_greedy(const struct pack_problem *p, const struct pack_opts *o,
                         const struct pack_budget *b, struct pack_incumbent *inc, struct err *e)
{
    struct pkey *keys = malloc(p->n * sizeof(*keys));
    uint32_t *order = malloc(p->n * sizeof(*order));
    uint64_t *tmp = malloc(p->n * sizeof(*tmp));
    uint64_t rng = o->seed ^ 0x5eed;
    int rc = ERR_OK;

    if (keys == NULL || order == NULL || tmp == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "search: out of memory for %zu buffers", p->n);
        goto out;
    }
    while (clock_now() < b->deadline && inc->peak > b->enough) {
        uint64_t pk;
        for (size_t i = 0; i < p->n; i++) {
            double noise = 0.75 + 0.5 * (double)(rng_next(&rng) >> 11) / 9007199254740992.0;
            keys[i] = (struct pkey){(double)p->bufs[i].size * noise, (uint32_t)i};
        }
        qsort(keys, p->n, sizeof(*keys), pkey_cmp);
        for (size_t i = 0; i < p->n; i++)
            order[i] = keys[i].idx;
        rc = pack_greedy(p, PACK_ORDER_SPATIAL, PACK_FIT_BEST, order, tmp, &pk, e);
        if (rc != ERR_OK)
            goto out;
        if (pk < inc->peak) {
            inc->peak = pk;
            memcpy(inc->offsets, tmp, p->n * sizeof(*tmp));
        }
    }
out:
    free(keys);
    free(order);
    free(tmp);
    return rc;
}

/* One probing thread: its own probe object and binary search over the whole cycle of
 * preorders, starting at first. */
struct prober {
    const struct pack_problem *p;
    struct pack_budget b; /* the probes' share */
    uint64_t lb;
    unsigned first;
    atomic_bool *done; /* set by the thread that reaches the lower bound: nothing is lower */
    struct pack_incumbent inc; /* this thread's best; offsets: the caller's (thread 0) or its own */
    struct err err;
    int rc;
};

static void prober_run(struct prober *w)
{
    struct pack_probe *pr = NULL;
    uint64_t g, lo, soft, limit = SEARCH_BASE_NODES;
    unsigned heur = w->first;
    bool tried_lo = false;
    int rc;

    rc = pack_probe_new(w->p, &pr, &w->err);
    if (rc != ERR_OK || pr == NULL)
        goto out;
    g = pack_probe_unit(pr);
    lo = (w->lb + g - 1) / g * g; /* proven: nothing lower fits */
    soft = lo;                    /* heights below this failed within the current limit */
    while (clock_now() < w->b.deadline && lo < w->inc.peak && w->inc.peak > w->b.enough &&
           !atomic_load(w->done)) {
        uint64_t hi = w->inc.peak - g, h;
        int res;
        if (soft > hi) {
            /* Window closed at this limit: next preorder; a full cycle doubles it. */
            soft = lo;
            tried_lo = false;
            heur = (heur + 1) % SEARCH_PREORDERS;
            if (heur == w->first)
                limit *= 2;
            continue;
        }
        /* Each window opens with the proven bound itself: tight heights prune best, and
         * on instances whose optimum is the lower bound that probe is the quickest. */
        h = soft == lo && !tried_lo ? lo : soft + (hi - soft) / g / 2 * g;
        tried_lo = true;
        rc = pack_probe_run(pr, h, heur, limit, &w->b, &w->inc, &res, &w->err);
        if (rc == ERR_LIMIT) { /* the search outgrew its stacks: keep the best, probe no more */
            rc = ERR_OK;
            break;
        }
        if (rc != ERR_OK)
            goto out;
        if (res == 1) {
            if (w->inc.peak <= lo || w->inc.peak <= w->b.enough)
                atomic_store(w->done, true);
        } else if (res == 0) {
            lo = h + g;
            if (soft < lo)
                soft = lo;
        } else {
            soft = h + g;
        }
    }
out:
    pack_probe_free(pr);
    w->rc = rc;
}

static void *prober_main(void *arg)
{
    prober_run(arg);
    return NULL;
}

/* The probing threads (at most SEARCH_MAX_THREADS, at most o->threads), within b; inc
 * gets the best of their packings. */
static int search_probes(const struct pack_problem *p, const struct pack_opts *o,
                         const struct pack_budget *b, uint64_t lb, struct pack_incumbent *inc,
                         struct err *e)
{
    struct prober w[SEARCH_MAX_THREADS];
    unsigned nthreads = pack_threads(o->threads, SEARCH_MAX_THREADS);
    atomic_bool done = false;
    int rc = ERR_OK;

    memset(w, 0, sizeof(w));
    for (unsigned t = 0; t < nthreads; t++) {
        w[t] = (struct prober){.p = p,
                               .b = *b,
                               .lb = lb,
                               .first = (unsigned)(t * SEARCH_PREORDERS / nthreads),
                               .done = &done,
                               .inc = {.peak = inc->peak}};
        w[t].inc.offsets = t == 0 ? inc->offsets : malloc(p->n * sizeof(*inc->offsets));
        if (w[t].inc.offsets == NULL) {
            rc = err_set(e, ERR_NOMEM, NULL, "search: out of memory for %zu buffers", p->n);
            goto out;
        }
        if (t > 0)
            memcpy(w[t].inc.offsets, inc->offsets, p->n * sizeof(*inc->offsets));
    }
    /* The threads walk the same cycle of preorders from different starts, so one of them
     * reaches the preorder that suits the instance early. Each thread's probes depend on
     * node counts only and the best peak wins (ties: the lowest thread), so the answer is
     * deterministic, except that the deadline cuts it short and, when both reach the
     * lower bound, which one got there first. */
    pack_fan_out(prober_main, w, sizeof(*w), nthreads);
    for (unsigned t = 0; t < nthreads; t++)
        if (w[t].rc != ERR_OK) {
            rc = w[t].rc;
            if (e != NULL)
                *e = w[t].err;
            goto out;
        }
    if (w[0].inc.peak < inc->peak)
        inc->stage = "search";
    inc->peak = w[0].inc.peak;
    for (unsigned t = 0; t < nthreads; t++)
        inc->nodes += w[t].inc.nodes;
    for (unsigned t = 1; t < nthreads; t++)
        if (w[t].inc.peak < inc->peak) {
            inc->peak = w[t].inc.peak;
            inc->stage = "search";
            memcpy(inc->offsets, w[t].inc.offsets, p->n * sizeof(*inc->offsets));
        }
out:
    for (unsigned t = 1; t < nthreads; t++)
        free(w[t].inc.offsets);
    return rc;
}

/* The exact solver within b, on a copy of inc that shares its offsets: what it proves,
 * the heuristic does not claim (pack_int.h), but the caller may ask (proven, or NULL). */
static int search_exact(const struct pack_problem *p, const struct pack_opts *o,
                        const struct pack_budget *b, uint64_t lb, struct pack_incumbent *inc,
                        bool *proven, struct err *e)
{
    struct pack_incumbent x = {inc->offsets, inc->peak, false, inc->solved_at, 0, inc->stage};
    int rc = pack_exact(p, o, b, lb, &x, e);

    inc->peak = x.peak;
    inc->stage = x.stage;
    inc->nodes += x.nodes;
    inc->solved_at = x.solved_at;
    if (proven != NULL)
        *proven = x.proven;
    return rc;
}

int pack_search(const struct pack_problem *p, const struct pack_opts *o,
                const struct pack_budget *b, struct pack_incumbent *inc, struct err *e)
{
    struct pack_probe *pr = NULL;
    uint64_t lb;
    double t0 = clock_now();
    struct pack_budget probes = {t0 + SEARCH_PROBE_SHARE * (b->deadline - t0), b->enough};
    int rc;

    if (p->n == 0)
        return ERR_OK;
    rc = pack_lower_bound(p, &lb, e);
    if (rc != ERR_OK || inc->peak <= lb || inc->peak <= b->enough)
        return rc;
    rc = pack_probe_new(p, &pr, e); /* only asks whether the problem can be probed */
    if (rc != ERR_OK)
        return rc;
    if (pr == NULL)
        return search_greedy(p, o, b, inc, e);
    pack_probe_free(pr);
    /* Asked whether a capacity suffices: the exact solver answers that first (it aims at
     * the capacity; the probes only bisect down from the best peak), stopping there. On the
     * challenging suite it reaches the capacity in 0.001-0.2 s where the probes took up to
     * 0.6 s. The probes then minimise below it. */
    if (p->capacity > 0 && inc->peak > p->capacity && inc->peak > b->enough) {
        struct pack_budget cap = {probes.deadline,
                                  b->enough > p->capacity ? b->enough : p->capacity};
        bool proven = false;
        rc = search_exact(p, o, &cap, lb, inc, &proven, e);
        if (rc != ERR_OK || proven || inc->peak <= b->enough || inc->peak <= lb)
            return rc;
    }
    rc = search_probes(p, o, &probes, lb, inc, e);
    /* The rest of the budget goes to the exact solver, seeded with the probes' best: its
     * portfolio aims at the capacity first and solves I and K of the challenging suite in
     * a few tenths of a second, where the probes stall above 1.10 x LB. */
    if (rc == ERR_OK && inc->peak > lb && inc->peak > b->enough && clock_now() < b->deadline)
        rc = search_exact(p, o, b, lb, inc, NULL, e);
    return rc;
}
