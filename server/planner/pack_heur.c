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
 * Orders are LSD radix sorts and the k chunks are radix-sorted by offset when k is large,
 * so a pass costs O(n (k + log n)) with small constants and no allocation per buffer.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack_int.h"

/*
 * Sorting. Every order is a lexicographic sequence of up to four 64-bit keys ending with
 * the buffer index, so an LSD radix sort of (key, index) pairs, one stable pass per byte
 * from the least significant key to the most significant, gives it in O(n) per varying
 * byte. Bytes that are equal in every key are skipped: model sizes and lifetimes vary in
 * only a few of them.
 */
struct rkey {
    uint64_t k;
    uint32_t idx;
};

/* Maps a signed step to an unsigned key with the same order. */
static uint64_t okey(int64_t v)
{
    return (uint64_t)v ^ ((uint64_t)1 << 63);
}

/* The j-th key (0 = most significant) of buffer i under ord; descending keys are stored
 * complemented. nkeys tells how many keys ord uses. */
static uint64_t order_key(const struct pack_problem *p, enum pack_order ord, size_t i, int j,
                          int64_t tmin, int64_t tmax)
{
    const struct pack_buffer *b = &p->bufs[i];
    uint64_t dur = (uint64_t)(b->upper - b->lower); /* validated: no overflow */
    unsigned __int128 area;
    bool whole;

    switch (ord) {
    case PACK_ORDER_SPATIAL:
        return j == 0 ? ~b->size : ~dur;
    case PACK_ORDER_TEMPORAL:
        return j == 0 ? ~dur : ~b->size;
    case PACK_ORDER_AREA:
        area = ~((unsigned __int128)b->size * dur);
        return j == 0 ? (uint64_t)(area >> 64) : (uint64_t)area;
    case PACK_ORDER_PROGRAM:
        return okey(b->lower);
    case PACK_ORDER_TFLITE:
        /* ArenaPlanner::CreateTensorAllocationVector: buffers live for the whole run
         * first (by index), then size desc, then allocation node. */
        whole = b->lower == tmin && b->upper == tmax;
        if (j == 0)
            return whole ? 0 : 1;
        if (whole)
            return 0;
        return j == 1 ? ~b->size : okey(b->lower);
    }
    return 0;
}

static int order_nkeys(enum pack_order ord)
{
    return ord == PACK_ORDER_PROGRAM ? 1 : ord == PACK_ORDER_TFLITE ? 3 : 2;
}

/* Stable LSD radix sort of a[n] by k (tmp holds n entries); returns the sorted array. */
static struct rkey *radix_sort(struct rkey *a, struct rkey *tmp, size_t n)
{
    uint64_t diff = 0;
    size_t cnt[256];

    for (size_t i = 1; i < n; i++)
        diff |= a[i].k ^ a[0].k;
    for (unsigned sh = 0; sh < 64; sh += 8) {
        if (((diff >> sh) & 0xff) == 0)
            continue;
        memset(cnt, 0, sizeof(cnt));
        for (size_t i = 0; i < n; i++)
            cnt[(a[i].k >> sh) & 0xff]++;
        for (size_t d = 0, sum = 0; d < 256; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[cnt[(a[i].k >> sh) & 0xff]++] = a[i];
        struct rkey *x = a;
        a = tmp;
        tmp = x;
    }
    return a;
}

int pack_sort_order(const struct pack_problem *p, enum pack_order ord, uint32_t *order,
                    struct err *e)
{
    struct rkey *keys, *a;
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;

    if (p->n == 0)
        return ERR_OK;
    keys = malloc(2 * p->n * sizeof(*keys));
    if (keys == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
    for (size_t i = 0; i < p->n; i++) {
        if (p->bufs[i].lower < tmin)
            tmin = p->bufs[i].lower;
        if (p->bufs[i].upper > tmax)
            tmax = p->bufs[i].upper;
    }
    for (size_t i = 0; i < p->n; i++)
        order[i] = (uint32_t)i; /* the final tie-break: index ascending */
    a = keys;
    for (int j = order_nkeys(ord) - 1; j >= 0; j--) {
        for (size_t i = 0; i < p->n; i++)
            a[i] = (struct rkey){order_key(p, ord, order[i], j, tmin, tmax), order[i]};
        a = radix_sort(a, a == keys ? keys + p->n : keys, p->n);
        for (size_t i = 0; i < p->n; i++)
            order[i] = a[i].idx;
    }
    free(keys);
    return ERR_OK;
}

struct chunk {
    uint64_t off, end;
};

/*
 * The placed-buffer index (see the file comment). Leaves are grouped in buckets of
 * PTREE_BUCKET consecutive positions; the tree keeps one max-upper per bucket and a query
 * scans the buckets it reaches linearly, over arrays laid out by position, which keeps
 * the memory traffic sequential on million-buffer inputs. blow (the first lower of each
 * bucket, small enough to stay cached) bounds the query on the right, so it needs no
 * binary search over the positions.
 */
#define PTREE_BUCKET 16

struct slot {
    int64_t lower;
    struct chunk ch; /* once placed */
};

struct ptree {
    size_t n, leaves; /* leaves: power of two >= number of buckets */
    uint32_t *pos;    /* buffer -> position (positions are ordered by (lower, index)) */
    int64_t *blow;    /* bucket -> lower of its first position */
    uint64_t *maxup;  /* 2*leaves nodes: okey(max upper) of placed buffers below, 0 if none */
    uint64_t *up;     /* position: okey(upper) once placed, 0 before */
    struct slot *sl;  /* position: lower and the placed chunk */
};

static void ptree_free(struct ptree *t)
{
    free(t->pos);
    free(t->blow);
    free(t->maxup);
    free(t->up);
    free(t->sl);
    memset(t, 0, sizeof(*t));
}

/* Builds the index; on failure the caller still calls ptree_free. */
static int ptree_init(struct ptree *t, const struct pack_problem *p, struct err *e)
{
    size_t nb = (p->n + PTREE_BUCKET - 1) / PTREE_BUCKET;
    uint32_t *by_lower = NULL;
    int rc;

    memset(t, 0, sizeof(*t));
    t->n = p->n;
    t->leaves = 1;
    while (t->leaves < nb)
        t->leaves *= 2;
    by_lower = malloc(p->n * sizeof(*by_lower));
    t->pos = malloc(p->n * sizeof(*t->pos));
    t->blow = calloc(t->leaves, sizeof(*t->blow));
    t->maxup = calloc(2 * t->leaves, sizeof(*t->maxup));
    t->up = calloc(p->n, sizeof(*t->up));
    t->sl = calloc(p->n, sizeof(*t->sl));
    if (by_lower == NULL || t->pos == NULL || t->blow == NULL || t->maxup == NULL ||
        t->up == NULL || t->sl == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    rc = pack_sort_order(p, PACK_ORDER_PROGRAM, by_lower, e);
    if (rc != ERR_OK)
        goto out;
    for (size_t i = 0; i < p->n; i++) {
        t->pos[by_lower[i]] = (uint32_t)i;
        t->sl[i].lower = p->bufs[by_lower[i]].lower;
    }
    for (size_t b = 0; b < t->leaves; b++)
        t->blow[b] = b < nb ? t->sl[b * PTREE_BUCKET].lower : INT64_MAX;
out:
    free(by_lower);
    return rc;
}

static void ptree_insert(struct ptree *t, uint32_t buf, int64_t upper, uint64_t off, uint64_t end)
{
    size_t q = t->pos[buf], node = t->leaves + q / PTREE_BUCKET;
    uint64_t key = okey(upper);

    t->up[q] = key;
    t->sl[q].ch = (struct chunk){off, end};
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
    size_t cnt = 0, sp = 0;
    size_t stack[3 * 80];
    uint64_t klow = okey(lower);

    /* Depth-first over the nodes whose buckets may hold a placed buffer overlapping
     * [lower, upper); the stack holds (node, first bucket, bucket count) triples. */
    stack[sp++] = 1;
    stack[sp++] = 0;
    stack[sp++] = t->leaves;
    while (sp > 0) {
        size_t span = stack[--sp], first = stack[--sp], node = stack[--sp];

        if (t->maxup[node] <= klow || t->blow[first] >= upper)
            continue;
        if (span == 1) {
            size_t a = first * PTREE_BUCKET, b = a + PTREE_BUCKET < t->n ? a + PTREE_BUCKET : t->n;
            for (size_t q = a; q < b; q++)
                if (t->up[q] > klow && t->sl[q].lower < upper)
                    out[cnt++] = t->sl[q].ch;
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

/* Sorts chunks by offset: insertion sort for the usual handful, an LSD radix sort on the
 * offset beyond (tmp holds k chunks; many buffers live at once make k large). */
static void chunks_sort(struct chunk *c, struct chunk *tmp, size_t k)
{
    uint64_t diff = 0;
    size_t cnt[256];
    struct chunk *a = c;

    if (k <= 48) {
        for (size_t i = 1; i < k; i++) {
            struct chunk x = c[i];
            size_t j = i;
            for (; j > 0 && c[j - 1].off > x.off; j--)
                c[j] = c[j - 1];
            c[j] = x;
        }
        return;
    }
    for (size_t i = 1; i < k; i++)
        diff |= c[i].off ^ c[0].off;
    for (unsigned sh = 0; sh < 64; sh += 8) {
        if (((diff >> sh) & 0xff) == 0)
            continue;
        memset(cnt, 0, sizeof(cnt));
        for (size_t i = 0; i < k; i++)
            cnt[(a[i].off >> sh) & 0xff]++;
        for (size_t d = 0, sum = 0; d < 256; d++) {
            size_t x = cnt[d];
            cnt[d] = sum;
            sum += x;
        }
        for (size_t i = 0; i < k; i++)
            tmp[cnt[(a[i].off >> sh) & 0xff]++] = a[i];
        struct chunk *x = a;
        a = tmp;
        tmp = x;
    }
    if (a != c)
        memcpy(c, a, k * sizeof(*c));
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
    chunks = malloc(2 * p->n * sizeof(*chunks));
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
        size_t k;

        if (i + 8 < p->n) { /* the order jumps around in time: fetch ahead */
            __builtin_prefetch(&p->bufs[order[i + 8]]);
            __builtin_prefetch(&t.pos[order[i + 8]]);
        }
        k = ptree_query(&t, pb->lower, pb->upper, chunks);
        chunks_sort(chunks, chunks + p->n, k);
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
