/*
 * bfc_replay.c - a program's buffers replayed through the BFC model in program order
 * (bfc.h bfc_replay_run): frees before allocations at each step, each in index order, and
 * the allocator's state recorded after every step where something happens (the same
 * segments as pack_metrics_compute's, so the two timelines line up entry for entry).
 *
 * Cost: two radix sorts of n events (pack_sort_order), then per event one allocator
 * operation (a search in at most 21 bins, O(log n) each) and an insert or erase in the
 * ordered set of the chunks in use by end address (the heap height is its maximum);
 * O(n log n) in all, O(n) memory.
 */
#include <stdlib.h>
#include <string.h>

#include "planner/bfc.h"
#include "planner/otree.h"
#include "planner/pack/pack_int.h"

enum { ST_PENDING, ST_LIVE, ST_DONE, ST_FAILED };

struct ev {
    int64_t t;
    uint32_t idx;
};

void bfc_replay_free(struct bfc_replay *r)
{
    if (r == NULL)
        return;
    free(r->steps);
    free(r->in_use);
    free(r->reserved);
    free(r->largest_free);
    free(r->heap_top);
    free(r->fragmentation);
    free(r->addr);
    free(r->chunk_bytes);
    memset(r, 0, sizeof(*r));
}

/* The distinct times of the two sorted event lists. */
static size_t count_segments(const struct ev *fr, const struct ev *al, size_t n)
{
    size_t i = 0, j = 0, k = 0;

    while (i < n || j < n) {
        int64_t t = (j >= n || (i < n && fr[i].t <= al[j].t)) ? fr[i].t : al[j].t;
        while (i < n && fr[i].t == t)
            i++;
        while (j < n && al[j].t == t)
            j++;
        k++;
    }
    return k;
}

/* Scratch of one replay. */
struct sweep {
    const struct pack_buffer *bufs;
    size_t n;
    struct ev *fr, *al;
    uint32_t *handle;
    uint8_t *state;
    struct otree_node *ends; /* the chunks in use by (end address, buffer) */
    uint32_t live;           /* root of that set */
    struct bfc *a;
    uint64_t limit;
};

static void note_failure(struct bfc_replay *out, const struct sweep *s, size_t b, int64_t t)
{
    struct bfc_stats st;
    struct bfc_failure f;

    bfc_get_stats(s->a, &st);
    f = (struct bfc_failure){b,         t,           s->bufs[b].size, 0,
                             st.in_use, st.reserved, st.largest_free, s->limit - st.in_use,
                             false};
    f.rounded = (f.requested + BFC_MIN_ALLOCATION - 1) / BFC_MIN_ALLOCATION * BFC_MIN_ALLOCATION;
    if (f.requested > UINT64_MAX - BFC_MIN_ALLOCATION)
        f.rounded = UINT64_MAX;
    f.with_free_memory = f.rounded <= f.free_bytes;
    out->failed++;
    if (!out->have_failure) {
        out->have_failure = true;
        out->first_failure = f;
    }
    if (f.with_free_memory && !out->have_free_failure) {
        out->have_free_failure = true;
        out->first_free_failure = f;
    }
}

/* The frees, then the allocations, at step t; *i and *j advance past them. */
static int replay_step(struct bfc_replay *out, struct sweep *s, int64_t t, size_t *i, size_t *j,
                       struct err *e)
{
    for (; *i < s->n && s->fr[*i].t == t; (*i)++) {
        uint32_t b = s->fr[*i].idx;
        if (s->state[b] != ST_LIVE)
            continue; /* its allocation failed */
        bfc_dealloc(s->a, s->handle[b]);
        otree_erase(s->ends, &s->live, b);
        s->state[b] = ST_DONE;
    }
    for (; *j < s->n && s->al[*j].t == t; (*j)++) {
        uint32_t b = s->al[*j].idx;
        struct bfc_block blk;
        int rc = bfc_alloc(s->a, s->bufs[b].size, &blk, e);
        if (rc == ERR_INFEASIBLE) {
            s->state[b] = ST_FAILED;
            note_failure(out, s, b, t);
            continue;
        }
        if (rc != ERR_OK)
            return rc;
        s->state[b] = ST_LIVE;
        s->handle[b] = blk.handle;
        out->addr[b] = blk.addr;
        out->chunk_bytes[b] = blk.size;
        s->ends[b].k1 = blk.addr + blk.size;
        s->ends[b].k2 = b;
        otree_insert(s->ends, &s->live, b);
    }
    return ERR_OK;
}

/* The allocator's state after the events of segment k, at step t. */
static void record(struct bfc_replay *out, struct sweep *s, size_t k, int64_t t)
{
    struct bfc_stats st;
    uint32_t top = otree_max(s->ends, s->live);

    bfc_get_stats(s->a, &st);
    out->steps[k] = t;
    out->in_use[k] = st.in_use;
    out->reserved[k] = st.reserved;
    out->largest_free[k] = st.largest_free;
    out->fragmentation[k] = st.fragmentation;
    out->heap_top[k] = top != OTREE_NONE ? s->ends[top].k1 : 0;
    if (out->heap_top[k] > out->peak_heap)
        out->peak_heap = out->heap_top[k];
}

static int sweep_all(struct bfc_replay *out, struct sweep *s, struct err *e)
{
    size_t i = 0, j = 0, k = 0;
    struct bfc_stats st;
    int rc;

    while (i < s->n || j < s->n) {
        int64_t t = (j >= s->n || (i < s->n && s->fr[i].t <= s->al[j].t)) ? s->fr[i].t : s->al[j].t;
        if ((rc = replay_step(out, s, t, &i, &j, e)) != ERR_OK)
            return rc;
        record(out, s, k++, t);
    }
    bfc_get_stats(s->a, &st);
    out->peak_in_use = st.peak_in_use;
    out->peak_reserved = st.peak_reserved;
    out->regions = bfc_region_sizes(s->a, out->region_bytes, BFC_REGIONS_LISTED);
    return ERR_OK;
}

int bfc_replay_run(const struct pack_buffer *bufs, size_t n, const struct bfc_opts *o,
                   struct bfc_replay *out, struct err *e)
{
    struct pack_problem p = {n, bufs, 0, 0};
    struct sweep s = {bufs, n, NULL, NULL, NULL, NULL, NULL, OTREE_NONE, NULL, o->memory_limit};
    size_t m = n ? n : 1, ns;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = pack_validate(&p, e)) != ERR_OK || (rc = bfc_new(o, &s.a, e)) != ERR_OK)
        return rc;
    /* calloc: the sorts below fill every entry, but clang-analyzer cannot see that */
    s.fr = calloc(m, sizeof(*s.fr));
    s.al = calloc(m, sizeof(*s.al));
    s.handle = malloc(m * sizeof(*s.handle));
    s.state = calloc(m, sizeof(*s.state));
    /* calloc: an entry is set before it joins the set, but clang-analyzer cannot see that */
    s.ends = calloc(m, sizeof(*s.ends));
    out->addr = malloc(m * sizeof(*out->addr));
    out->chunk_bytes = malloc(m * sizeof(*out->chunk_bytes));
    if (s.fr == NULL || s.al == NULL || s.handle == NULL || s.state == NULL || s.ends == NULL ||
        out->addr == NULL || out->chunk_bytes == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu buffers", n);
        goto out;
    }
    for (size_t b = 0; b < n; b++) {
        out->addr[b] = BFC_NOADDR;
        out->chunk_bytes[b] = 0;
    }
    /* The events in (step, index) order; the buffer orders go through s.handle, which the
     * sweep sets before it reads. */
    if ((rc = pack_sort_order(&p, PACK_ORDER_UPPER, s.handle, e)) != ERR_OK)
        goto out;
    for (size_t k = 0; k < n; k++)
        s.fr[k] = (struct ev){bufs[s.handle[k]].upper, s.handle[k]};
    if ((rc = pack_sort_order(&p, PACK_ORDER_PROGRAM, s.handle, e)) != ERR_OK)
        goto out;
    for (size_t k = 0; k < n; k++)
        s.al[k] = (struct ev){bufs[s.handle[k]].lower, s.handle[k]};
    ns = count_segments(s.fr, s.al, n);
    m = ns ? ns : 1;
    out->steps = malloc(m * sizeof(*out->steps));
    out->in_use = malloc(m * sizeof(*out->in_use));
    out->reserved = malloc(m * sizeof(*out->reserved));
    out->largest_free = malloc(m * sizeof(*out->largest_free));
    out->heap_top = malloc(m * sizeof(*out->heap_top));
    out->fragmentation = malloc(m * sizeof(*out->fragmentation));
    if (out->steps == NULL || out->in_use == NULL || out->reserved == NULL ||
        out->largest_free == NULL || out->heap_top == NULL || out->fragmentation == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu steps", ns);
        goto out;
    }
    out->nsteps = ns;
    rc = sweep_all(out, &s, e);
out:
    if (rc != ERR_OK)
        bfc_replay_free(out);
    bfc_destroy(s.a);
    free(s.fr);
    free(s.al);
    free(s.handle);
    free(s.state);
    free(s.ends);
    return rc;
}
