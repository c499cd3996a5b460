/*
 * pack_heur.c - greedy placement (XLA's and TFLite's heuristics, a naive first fit).
 *
 * Each buffer in sort order goes into the free gaps left by the already-placed buffers that
 * overlap it in time (../shared/docs/allocators.md sections 1.7, 2 and 7):
 *   best fit   the smallest (gap size, gap start) that fits, else the top of the overlapping
 *              buffers (XLA ChunkPlacement::kBestFit, TFLite SimpleMemoryArena::Allocate);
 *   lowest     the first gap from offset 0 that fits (XLA ChunkPlacement::kLowestOffset).
 * The placed buffers that overlap a lifetime are found with a static augmented tree: the
 * leaves are the buffers sorted by lower, each internal node keeps the largest upper of the
 * placed leaves below it, so a query reports the k overlapping buffers in O((k+1) log n).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack_int.h"

struct sort_key {
    unsigned __int128 k1;
    uint64_t k2;
    uint64_t k3;
    uint32_t idx;
};

static bool sort_key_less(const struct sort_key *x, const struct sort_key *y)
{
    if (x->k1 != y->k1)
        return x->k1 < y->k1;
    if (x->k2 != y->k2)
        return x->k2 < y->k2;
    if (x->k3 != y->k3)
        return x->k3 < y->k3;
    return x->idx < y->idx;
}

/* Bottom-up merge sort (keys are unique by idx, so stability does not matter); tmp holds n
 * keys. Inlined comparisons make it several times faster than qsort on these keys. */
static void sort_keys(struct sort_key *a, struct sort_key *tmp, size_t n)
{
    struct sort_key *src = a, *dst = tmp;

    for (size_t i = 0; i + 1 < n; i += 2)
        if (sort_key_less(&a[i + 1], &a[i])) {
            struct sort_key x = a[i];
            a[i] = a[i + 1];
            a[i + 1] = x;
        }
    for (size_t w = 2; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = sort_key_less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        struct sort_key *x = src;
        src = dst;
        dst = x;
    }
    if (src != a)
        memcpy(a, src, n * sizeof(*a));
}

/* Maps a signed step to an unsigned key with the same order. */
static uint64_t okey(int64_t v)
{
    return (uint64_t)v ^ ((uint64_t)1 << 63);
}

struct lkey {
    int64_t lower;
    uint32_t idx;
};

static bool lkey_less(const struct lkey *x, const struct lkey *y)
{
    return x->lower != y->lower ? x->lower < y->lower : x->idx < y->idx;
}

/* Program order (lower, index) with 16-byte keys: the index build sorts this once per
 * greedy pass, so it gets its own bottom-up merge sort. */
static int sort_program(const struct pack_problem *p, uint32_t *order, struct err *e)
{
    struct lkey *a = malloc(2 * p->n * sizeof(*a)), *src, *dst;

    if (a == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
    for (size_t i = 0; i < p->n; i++)
        a[i] = (struct lkey){p->bufs[i].lower, (uint32_t)i};
    src = a;
    dst = a + p->n;
    for (size_t w = 1; w < p->n; w *= 2) {
        for (size_t lo = 0; lo < p->n; lo += 2 * w) {
            size_t mid = lo + w < p->n ? lo + w : p->n, hi = lo + 2 * w < p->n ? lo + 2 * w : p->n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                dst[k++] = lkey_less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        struct lkey *x = src;
        src = dst;
        dst = x;
    }
    for (size_t i = 0; i < p->n; i++)
        order[i] = src[i].idx;
    free(a);
    return ERR_OK;
}

int pack_sort_order(const struct pack_problem *p, enum pack_order ord, uint32_t *order,
                    struct err *e)
{
    struct sort_key *keys;
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;

    if (p->n == 0)
        return ERR_OK;
    if (ord == PACK_ORDER_PROGRAM)
        return sort_program(p, order, e);
    keys = malloc(2 * p->n * sizeof(*keys));
    if (keys == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
    for (size_t i = 0; i < p->n; i++) {
        if (p->bufs[i].lower < tmin)
            tmin = p->bufs[i].lower;
        if (p->bufs[i].upper > tmax)
            tmax = p->bufs[i].upper;
    }
    for (size_t i = 0; i < p->n; i++) {
        const struct pack_buffer *b = &p->bufs[i];
        uint64_t dur = (uint64_t)(b->upper - b->lower); /* validated: no overflow */
        struct sort_key *k = &keys[i];

        k->idx = (uint32_t)i;
        k->k2 = k->k3 = 0;
        switch (ord) {
        case PACK_ORDER_SPATIAL: /* descending keys are stored complemented */
            k->k1 = ~b->size;
            k->k2 = ~dur;
            break;
        case PACK_ORDER_TEMPORAL:
            k->k1 = ~dur;
            k->k2 = ~b->size;
            break;
        case PACK_ORDER_AREA:
            k->k1 = ~((unsigned __int128)b->size * dur);
            break;
        case PACK_ORDER_PROGRAM:
            k->k1 = okey(b->lower);
            break;
        case PACK_ORDER_TFLITE:
            /* ArenaPlanner::CreateTensorAllocationVector: buffers live for the whole run
             * first (by index), then size desc, then allocation node. */
            k->k1 = (b->lower == tmin && b->upper == tmax) ? 0 : 1;
            if (k->k1 == 1) {
                k->k2 = ~b->size;
                k->k3 = okey(b->lower);
            }
            break;
        }
    }
    sort_keys(keys, keys + p->n, p->n);
    for (size_t i = 0; i < p->n; i++)
        order[i] = keys[i].idx;
    free(keys);
    return ERR_OK;
}

struct chunk {
    uint64_t off, end;
};

static int chunk_cmp(const void *a, const void *b)
{
    const struct chunk *x = a, *y = b;

    return (x->off > y->off) - (x->off < y->off);
}

/*
 * The placed-buffer index (see the file comment). Leaves are grouped in buckets of
 * PTREE_BUCKET consecutive positions; the tree keeps one max-upper per bucket and a query
 * scans the buckets it reaches linearly, over arrays laid out by position, which keeps
 * the memory traffic sequential on million-buffer inputs.
 */
#define PTREE_BUCKET 16

struct ptree {
    size_t n, leaves;   /* leaves: power of two >= number of buckets */
    uint32_t *by_lower; /* position -> buffer */
    uint32_t *pos;      /* buffer -> position */
    int64_t *lowers;    /* lower of each position, ascending */
    uint64_t *maxup;    /* 2*leaves nodes: okey(max upper) of placed buffers below, 0 if none */
    uint64_t *up;       /* position: okey(upper) once placed, 0 before */
    struct chunk *ch;   /* position: the placed chunk */
};

static void ptree_free(struct ptree *t)
{
    free(t->by_lower);
    free(t->pos);
    free(t->lowers);
    free(t->maxup);
    free(t->up);
    free(t->ch);
    memset(t, 0, sizeof(*t));
}

/* Builds the index; on failure the caller still calls ptree_free. */
static int ptree_init(struct ptree *t, const struct pack_problem *p, struct err *e)
{
    size_t nb = (p->n + PTREE_BUCKET - 1) / PTREE_BUCKET;
    int rc;

    memset(t, 0, sizeof(*t));
    t->n = p->n;
    t->leaves = 1;
    while (t->leaves < nb)
        t->leaves *= 2;
    t->by_lower = calloc(p->n, sizeof(*t->by_lower));
    t->pos = calloc(p->n, sizeof(*t->pos));
    t->lowers = calloc(p->n, sizeof(*t->lowers));
    t->maxup = calloc(2 * t->leaves, sizeof(*t->maxup));
    t->up = calloc(p->n, sizeof(*t->up));
    t->ch = calloc(p->n, sizeof(*t->ch));
    if (t->by_lower == NULL || t->pos == NULL || t->lowers == NULL || t->maxup == NULL ||
        t->up == NULL || t->ch == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
    rc = pack_sort_order(p, PACK_ORDER_PROGRAM, t->by_lower, e);
    if (rc != ERR_OK)
        return rc;
    for (size_t i = 0; i < p->n; i++) {
        t->pos[t->by_lower[i]] = (uint32_t)i;
        t->lowers[i] = p->bufs[t->by_lower[i]].lower;
    }
    return ERR_OK;
}

static void ptree_insert(struct ptree *t, uint32_t buf, int64_t upper, uint64_t off, uint64_t end)
{
    size_t q = t->pos[buf], node = t->leaves + q / PTREE_BUCKET;
    uint64_t key = okey(upper);

    t->up[q] = key;
    t->ch[q] = (struct chunk){off, end};
    while (node >= 1 && t->maxup[node] < key) {
        t->maxup[node] = key;
        node /= 2;
    }
}

/*
 * Appends the chunks of the placed buffers with lower < upper and upper' > lower to out;
 * returns how many.
 */
static size_t ptree_query(const struct ptree *t, int64_t lower, int64_t upper, struct chunk *out)
{
    size_t lo = 0, hi = t->n, cnt = 0, sp = 0, span0 = t->leaves;
    size_t stack[3 * 80];
    uint64_t klow = okey(lower);

    /* Positions [0, lo) are those with lower < upper. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->lowers[mid] < upper)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    /* Depth-first over the nodes whose buckets start below lo; the stack holds
     * (node, first bucket, bucket count) triples. */
    stack[sp++] = 1;
    stack[sp++] = 0;
    stack[sp++] = span0;
    while (sp > 0) {
        size_t span = stack[--sp], first = stack[--sp], node = stack[--sp];

        if (t->maxup[node] <= klow || first * PTREE_BUCKET >= lo)
            continue;
        if (span == 1) {
            size_t a = first * PTREE_BUCKET, b = a + PTREE_BUCKET < lo ? a + PTREE_BUCKET : lo;
            for (size_t q = a; q < b; q++)
                if (t->up[q] > klow)
                    out[cnt++] = t->ch[q];
            continue;
        }
        span /= 2;
        stack[sp++] = 2 * node + 1;
        stack[sp++] = first + span;
        stack[sp++] = span;
        stack[sp++] = 2 * node;
        stack[sp++] = first;
        stack[sp++] = span;
    }
    return cnt;
}

/* Sorts chunks by offset: insertion sort for the usual handful, qsort beyond. */
static void chunks_sort(struct chunk *c, size_t k)
{
    if (k > 64) {
        qsort(c, k, sizeof(*c), chunk_cmp);
        return;
    }
    for (size_t i = 1; i < k; i++) {
        struct chunk x = c[i];
        size_t j = i;
        for (; j > 0 && c[j - 1].off > x.off; j--)
            c[j] = c[j - 1];
        c[j] = x;
    }
}

/* Chooses an offset for size among the sorted chunks (see the file comment). */
static uint64_t choose_offset(const struct chunk *c, size_t k, uint64_t size, uint64_t align,
                              enum pack_fit fit)
{
    uint64_t cur = 0, best = UINT64_MAX, best_gap = UINT64_MAX;

    for (size_t i = 0; i < k; i++) {
        if (c[i].off > cur) {
            uint64_t start = pack_align_up(cur, align), gap = c[i].off - cur;
            if (start + size <= c[i].off) {
                if (fit == PACK_FIT_LOWEST)
                    return start;
                if (gap < best_gap) {
                    best_gap = gap;
                    best = start;
                }
            }
        }
        if (c[i].end > cur)
            cur = c[i].end;
    }
    return best != UINT64_MAX ? best : pack_align_up(cur, align);
}

int pack_greedy(const struct pack_problem *p, enum pack_order ord, enum pack_fit fit,
                const uint32_t *order, uint64_t *offsets, uint64_t *peak, struct err *e)
{
    struct ptree t = {0};
    uint32_t *own = NULL;
    struct chunk *chunks = NULL;
    int rc;

    *peak = 0;
    if (p->n == 0)
        return ERR_OK;
    rc = ptree_init(&t, p, e); /* on failure, t is freed at out */
    if (rc != ERR_OK)
        goto out;
    chunks = malloc(p->n * sizeof(*chunks));
    if (order == NULL)
        own = calloc(p->n, sizeof(*own));
    if (chunks == NULL || (order == NULL && own == NULL)) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    if (order == NULL) {
        rc = pack_sort_order(p, ord, own, e);
        if (rc != ERR_OK)
            goto out;
        order = own;
    }
    for (size_t i = 0; i < p->n; i++) {
        uint32_t b = order[i];
        const struct pack_buffer *pb = &p->bufs[b];
        size_t k = ptree_query(&t, pb->lower, pb->upper, chunks);

        chunks_sort(chunks, k);
        offsets[b] = choose_offset(chunks, k, pb->size, p->alignment, fit);
        if (offsets[b] + pb->size > *peak)
            *peak = offsets[b] + pb->size;
        ptree_insert(&t, b, pb->upper, offsets[b], offsets[b] + pb->size);
    }
out:
    ptree_free(&t);
    free(own);
    free(chunks);
    return rc;
}
