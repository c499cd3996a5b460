/*
 * pack_metrics.c - per-step metrics of a packing: live bytes, heap top, free bytes and the
 * largest free gap inside the heap, and the buffers live at the peak.
 *
 * A sweep over time keeps the live buffers in a tree over their ranks in (offset, index)
 * order; each node summarises its live leaves (lowest offset, highest end, largest gap
 * between consecutive buffers), so every step costs O(log n) and the whole pass
 * O(n log n) whatever the number of live buffers.
 */
#include <stdlib.h>
#include <string.h>

#include "planner/pack/pack_int.h"

struct mnode {
    uint64_t first;  /* lowest offset of a live leaf */
    uint64_t maxend; /* highest offset + size of a live leaf */
    uint64_t gap;    /* largest gap between consecutive live leaves */
    uint32_t cnt;    /* live leaves below */
};

static void mnode_pull(struct mnode *t, size_t node)
{
    const struct mnode *l = &t[2 * node], *r = &t[2 * node + 1];
    struct mnode *m = &t[node];

    m->cnt = l->cnt + r->cnt;
    if (l->cnt == 0 || r->cnt == 0) {
        const struct mnode *c = l->cnt ? l : r;
        m->first = c->first;
        m->maxend = c->maxend;
        m->gap = c->gap;
        return;
    }
    m->first = l->first;
    m->maxend = l->maxend > r->maxend ? l->maxend : r->maxend;
    m->gap = l->gap > r->gap ? l->gap : r->gap;
    if (r->first > l->maxend && r->first - l->maxend > m->gap)
        m->gap = r->first - l->maxend;
}

/* Buffer b allocated (alloc) or freed: its leaf and the summaries above it, and the live
 * byte count. */
static void metrics_set(struct mnode *t, size_t leaves, const struct pack_problem *p,
                        const uint64_t *offsets, const uint32_t *rank, size_t b, bool alloc,
                        uint64_t *live)
{
    size_t node = leaves + rank[b];

    if (alloc) {
        t[node] = (struct mnode){offsets[b], offsets[b] + p->bufs[b].size, 0, 1};
        *live += p->bufs[b].size;
    } else {
        t[node].cnt = 0;
        *live -= p->bufs[b].size;
    }
    for (node /= 2; node >= 1; node /= 2)
        mnode_pull(t, node);
}

void pack_metrics_free(struct pack_metrics *m)
{
    if (m == NULL)
        return;
    free(m->steps);
    free(m->live_bytes);
    free(m->heap_top);
    free(m->free_bytes);
    free(m->largest_gap);
    free(m->peak_buffers);
    memset(m, 0, sizeof(*m));
}

/* The buffers live at the start of the peak segment. */
static int metrics_peak_buffers(const struct pack_problem *p, struct pack_metrics *m, struct err *e)
{
    int64_t at = m->steps[m->peak_segment];
    size_t k = 0;

    for (size_t i = 0; i < p->n; i++)
        if (p->bufs[i].lower <= at && at < p->bufs[i].upper)
            k++;
    m->peak_buffers = malloc((k ? k : 1) * sizeof(*m->peak_buffers));
    if (m->peak_buffers == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
    for (size_t i = 0; i < p->n; i++)
        if (p->bufs[i].lower <= at && at < p->bufs[i].upper)
            m->peak_buffers[m->npeak_buffers++] = i;
    return ERR_OK;
}

int pack_metrics_compute(const struct pack_problem *p, const uint64_t *offsets,
                         struct pack_metrics *out, struct err *e)
{
    struct pack_sweep sw = {0};
    size_t leaves = 1, ns = 0;
    struct mnode *t = NULL;
    uint64_t live = 0;
    int rc;

    if (out == NULL)
        return err_set(e, ERR_INVALID, NULL, "pack_metrics_compute: no result given");
    memset(out, 0, sizeof(*out));
    rc = pack_validate(p, e);
    if (rc != ERR_OK)
        return rc;
    if (p->n > 0 && offsets == NULL)
        return err_set(e, ERR_INVALID, "offsets", "no offsets given");
    if (p->n == 0)
        return ERR_OK;
    while (leaves < p->n)
        leaves *= 2;
    t = calloc(2 * leaves, sizeof(*t));
    out->steps = malloc(2 * p->n * sizeof(*out->steps));
    out->live_bytes = malloc(2 * p->n * sizeof(*out->live_bytes));
    out->heap_top = malloc(2 * p->n * sizeof(*out->heap_top));
    out->free_bytes = malloc(2 * p->n * sizeof(*out->free_bytes));
    out->largest_gap = malloc(2 * p->n * sizeof(*out->largest_gap));
    if (t == NULL || out->steps == NULL || out->live_bytes == NULL || out->heap_top == NULL ||
        out->free_bytes == NULL || out->largest_gap == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    for (size_t i = 0; i < p->n; i++)
        if (offsets[i] > UINT64_MAX - p->bufs[i].size) {
            rc = err_set(e, ERR_INVALID, "offsets", "buffer %zu: offset %llu overflows", i,
                         (unsigned long long)offsets[i]);
            goto out;
        }
    /* Ranks in (offset, index) order; the sweep takes every free and allocation at a step
     * (in any order: only the state after the step is recorded), then records it. */
    if ((rc = pack_sweep_init(p, offsets, &sw, e)) != ERR_OK)
        goto out;
    for (size_t i = 0, j = 0; j < p->n;) {
        int64_t now = i < p->n && p->bufs[sw.by_lower[i]].lower < p->bufs[sw.by_upper[j]].upper
                          ? p->bufs[sw.by_lower[i]].lower
                          : p->bufs[sw.by_upper[j]].upper;

        for (; j < p->n && p->bufs[sw.by_upper[j]].upper == now; j++)
            metrics_set(t, leaves, p, offsets, sw.rank, sw.by_upper[j], false, &live);
        for (; i < p->n && p->bufs[sw.by_lower[i]].lower == now; i++)
            metrics_set(t, leaves, p, offsets, sw.rank, sw.by_lower[i], true, &live);
        out->steps[ns] = now;
        out->live_bytes[ns] = live;
        out->heap_top[ns] = t[1].cnt ? t[1].maxend : 0;
        /* Free space inside the heap; negative only for an overlapping (invalid) packing. */
        out->free_bytes[ns] = out->heap_top[ns] > live ? out->heap_top[ns] - live : 0;
        out->largest_gap[ns] = 0;
        if (t[1].cnt)
            out->largest_gap[ns] = t[1].first > t[1].gap ? t[1].first : t[1].gap;
        /* Among the segments at the heap's top, the one where the program holds the most
         * live bytes: a long-lived buffer placed high makes the top flat, and "the peak
         * step" should then point at the program's own high-water mark. */
        if (out->heap_top[ns] > out->heap_top[out->peak_segment] ||
            (out->heap_top[ns] == out->heap_top[out->peak_segment] &&
             live > out->live_bytes[out->peak_segment]))
            out->peak_segment = ns;
        ns++;
    }
    out->nsteps = ns;
    rc = metrics_peak_buffers(p, out, e);
out:
    if (rc != ERR_OK)
        pack_metrics_free(out);
    pack_sweep_free(&sw);
    free(t);
    return rc;
}
