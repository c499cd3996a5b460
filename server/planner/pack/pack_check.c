/*
 * pack_check.c - the independent checker for packings.
 *
 * A separate code path from every solver: it sweeps time (frees before allocations at the
 * same step, lifetimes are half-open) and keeps the live buffers in an ordered set keyed by
 * (offset, index). Inserting a buffer checks only its neighbours in that set: if the live
 * buffers are pairwise disjoint in memory, a new one overlaps some live buffer exactly when
 * it overlaps its predecessor or its successor. The set is a counting tree over the
 * buffers' ranks in (offset, index) order, so every operation is O(log n). The ranks and
 * the sweep's order come from the radix sorts of pack_heur.c (tested against comparison
 * sorts in test_pack.c); only the placement is the solvers' alone.
 */
#include <stdlib.h>

#include "planner/pack/pack_int.h"

/* Counting tree over ranks: cnt[node] = live leaves below node. */
struct rank_set {
    size_t leaves;
    uint32_t *cnt;
};

static void rank_set_add(struct rank_set *s, size_t r, int d)
{
    for (size_t node = s->leaves + r; node >= 1; node /= 2)
        s->cnt[node] = (uint32_t)((int64_t)s->cnt[node] + d);
}

/* Largest live rank < r, or SIZE_MAX. */
static size_t rank_set_pred(const struct rank_set *s, size_t r)
{
    size_t node = s->leaves + r;

    while (node > 1) {
        if ((node & 1) && s->cnt[node - 1] > 0) {
            node--;
            while (node < s->leaves)
                node = s->cnt[2 * node + 1] > 0 ? 2 * node + 1 : 2 * node;
            return node - s->leaves;
        }
        node /= 2;
    }
    return SIZE_MAX;
}

/* Smallest live rank > r, or SIZE_MAX. */
static size_t rank_set_succ(const struct rank_set *s, size_t r)
{
    size_t node = s->leaves + r;

    while (node > 1) {
        if (!(node & 1) && s->cnt[node + 1] > 0) {
            node++;
            while (node < s->leaves)
                node = s->cnt[2 * node] > 0 ? 2 * node : 2 * node + 1;
            return node - s->leaves;
        }
        node /= 2;
    }
    return SIZE_MAX;
}

static int overlap_err(struct err *e, const struct pack_problem *p, const uint64_t *offsets,
                       size_t a, size_t b)
{
    char where[PACK_WHERE_MAX];

    return err_set(e, ERR_INVALID, pack_where(where, a),
                   "buffer %zu [%lld, %lld) at offset %llu (size %llu) overlaps buffer %zu "
                   "[%lld, %lld) at offset %llu (size %llu)",
                   a, (long long)p->bufs[a].lower, (long long)p->bufs[a].upper,
                   (unsigned long long)offsets[a], (unsigned long long)p->bufs[a].size, b,
                   (long long)p->bufs[b].lower, (long long)p->bufs[b].upper,
                   (unsigned long long)offsets[b], (unsigned long long)p->bufs[b].size);
}

int pack_check(const struct pack_problem *p, const uint64_t *offsets, uint64_t peak, struct err *e)
{
    struct pack_sweep sw = {0};
    struct rank_set set = {0};
    uint64_t top = 0;
    char where[PACK_WHERE_MAX];
    int rc = pack_validate(p, e);

    if (rc != ERR_OK)
        return rc;
    if (p->n > 0 && offsets == NULL)
        return err_set(e, ERR_INVALID, "offsets", "no offsets given");
    for (size_t i = 0; i < p->n; i++) {
        uint64_t end;
        if (__builtin_add_overflow(offsets[i], p->bufs[i].size, &end))
            return err_set(e, ERR_INVALID, pack_where(where, i),
                           "buffer %zu: offset %llu overflows", i, (unsigned long long)offsets[i]);
        if (p->alignment > 1 && offsets[i] % p->alignment != 0)
            return err_set(e, ERR_INVALID, pack_where(where, i),
                           "buffer %zu: offset %llu is not a multiple of %llu", i,
                           (unsigned long long)offsets[i], (unsigned long long)p->alignment);
        if (p->capacity > 0 && end > p->capacity)
            return err_set(e, ERR_INVALID, pack_where(where, i),
                           "buffer %zu: ends at %llu, above the capacity %llu", i,
                           (unsigned long long)end, (unsigned long long)p->capacity);
        if (end > top)
            top = end;
    }
    if (top != peak)
        return err_set(e, ERR_INVALID, "peak", "reported peak %llu, the packing's peak is %llu",
                       (unsigned long long)peak, (unsigned long long)top);
    if (p->n == 0)
        return ERR_OK;

    set.leaves = 1;
    while (set.leaves < p->n)
        set.leaves *= 2;
    set.cnt = calloc(2 * set.leaves, sizeof(*set.cnt));
    if (set.cnt == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    /* Ranks in (offset, index) order; the sweep: at each step the frees, then the
     * allocations, each in index order. */
    if ((rc = pack_sweep_init(p, offsets, &sw, e)) != ERR_OK)
        goto out;
    for (size_t i = 0, j = 0; i < p->n;) {
        size_t b, r, q;

        if (p->bufs[sw.by_upper[j]].upper <= p->bufs[sw.by_lower[i]].lower) {
            rank_set_add(&set, sw.rank[sw.by_upper[j++]], -1);
            continue;
        }
        b = sw.by_lower[i++];
        r = sw.rank[b];
        q = rank_set_pred(&set, r);
        if (q != SIZE_MAX && offsets[sw.byrank[q]] + p->bufs[sw.byrank[q]].size > offsets[b]) {
            rc = overlap_err(e, p, offsets, b, sw.byrank[q]);
            goto out;
        }
        q = rank_set_succ(&set, r);
        if (q != SIZE_MAX && offsets[b] + p->bufs[b].size > offsets[sw.byrank[q]]) {
            rc = overlap_err(e, p, offsets, b, sw.byrank[q]);
            goto out;
        }
        rank_set_add(&set, r, 1);
    }
out:
    pack_sweep_free(&sw);
    free(set.cnt);
    return rc;
}
