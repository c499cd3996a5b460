/*
 * pack_search.c - "tpuplan-search", our strongest heuristic.
 *
 * The greedy orders waste 28-41 % on adversarial instances because one early choice is
 * never revisited. This heuristic instead asks the exact solver's search bounded
 * questions: "is there a packing of height <= H within L nodes?", binary-searching H
 * between the lower bound and the best peak found. A probe that runs out of nodes only
 * raises the soft lower end; once the window closes, the next preorder of the portfolio
 * is tried and the node limit doubles every full cycle. A probe that exhausts its tree is
 * a proof, and raises the hard lower end. Everything depends on node counts, not time, so
 * the answer is deterministic for a seed (the deadline only cuts it short).
 *
 * Problems too large to probe get randomised greedy orders instead: the spatial order
 * with sizes perturbed by a seeded factor, best fit, until the deadline.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack_int.h"

#define SEARCH_BASE_NODES 2000
#define SEARCH_PREORDERS  6

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
static int search_greedy(const struct pack_problem *p, const struct pack_opts *o, double deadline,
                         uint64_t *offsets, uint64_t *peak, struct err *e)
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
    while (pack_now() < deadline) {
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
        if (pk < *peak) {
            *peak = pk;
            memcpy(offsets, tmp, p->n * sizeof(*tmp));
        }
    }
out:
    free(keys);
    free(order);
    free(tmp);
    return rc;
}

int pack_search(const struct pack_problem *p, const struct pack_opts *o, double deadline,
                uint64_t *offsets, uint64_t *peak, struct err *e)
{
    struct pack_probe *pr = NULL;
    uint64_t *tmp = NULL, lb, g, lo, soft, limit = SEARCH_BASE_NODES;
    unsigned heur = 0;
    bool tried_lo = false;
    int rc;

    if (p->n == 0)
        return ERR_OK;
    rc = pack_lower_bound(p, &lb, e);
    if (rc != ERR_OK || *peak <= lb)
        return rc;
    rc = pack_probe_new(p, &pr, e);
    if (rc != ERR_OK)
        return rc;
    if (pr == NULL)
        return search_greedy(p, o, deadline, offsets, peak, e);
    tmp = malloc(p->n * sizeof(*tmp));
    if (tmp == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "search: out of memory for %zu buffers", p->n);
        goto out;
    }
    g = pack_probe_unit(pr);
    lo = (lb + g - 1) / g * g; /* proven: nothing lower fits */
    soft = lo;                 /* heights below this failed within the current limit */
    while (pack_now() < deadline && lo < *peak) {
        uint64_t hi = *peak - g, h, pk = 0;
        int res;
        if (soft > hi) {
            /* Window closed at this limit: next preorder; a full cycle doubles it. */
            soft = lo;
            tried_lo = false;
            heur = (heur + 1) % SEARCH_PREORDERS;
            if (heur == 0)
                limit *= 2;
            continue;
        }
        /* Each window opens with the proven bound itself: tight heights prune best, and
         * on instances whose optimum is the lower bound that probe is the quickest. */
        h = soft == lo && !tried_lo ? lo : soft + (hi - soft) / g / 2 * g;
        tried_lo = true;
        rc = pack_probe_run(pr, h, limit, heur, o->seed, deadline, tmp, &pk, &res, e);
        if (rc != ERR_OK)
            goto out;
        if (res == 1) {
            memcpy(offsets, tmp, p->n * sizeof(*tmp));
            *peak = pk;
        } else if (res == 0) {
            lo = h + g;
            if (soft < lo)
                soft = lo;
        } else {
            soft = h + g;
        }
    }
out:
    free(tmp);
    pack_probe_free(pr);
    return rc;
}
