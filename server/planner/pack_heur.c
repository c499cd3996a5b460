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
 * At a million buffers a pass is bound by memory latency, not by comparisons (the order
 * visits the lifetimes at random), so the index is kept small and is prefetched: steps
 * become 32-bit ranks, sizes and offsets count in the largest power-of-two unit dividing
 * them (32-bit chunks when they fit), and each buffer's query range is precomputed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "planner/arith.h"
#include "planner/pack_int.h"

#define HUGE_PAGE ((size_t)2 << 20)

/*
 * malloc for the large per-pass arrays. A fresh 4 KiB page costs ~17 us on the virtual
 * machines we measure on (64 MiB: 0.27 s, as much as a whole greedy pass), a 2 MiB one
 * about 0.2 ms: arrays of several huge pages are aligned to them and advised as such.
 * The advice is only a hint; free() releases the block either way.
 */
static void *heur_alloc(size_t bytes)
{
    void *a;

    if (bytes < 2 * HUGE_PAGE)
        return malloc(bytes);
    bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    a = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
    if (a != NULL)
        (void)madvise(a, bytes, MADV_HUGEPAGE);
#endif
    return a;
}

static void *heur_zalloc(size_t bytes)
{
    void *a = heur_alloc(bytes);

    if (a != NULL)
        memset(a, 0, bytes);
    return a;
}

/*
 * Sorting. Every order is a lexicographic sequence of up to three 64-bit keys ending with
 * the buffer index. Only the bits that differ between buffers matter, so each key is cut
 * down to its varying bits and the cut keys are concatenated into one long key, which an
 * LSD radix sort then orders 32 bits at a time (least significant group first), on 8-byte
 * (group << 32 | index) words. Model sizes and lifetimes vary in few bits, so one group of
 * 32 usually holds the whole key: a pass is then a sequential fill and a few byte passes.
 */
#define ORDER_MAX_KEYS 3

/* An internal order for the placed-buffer index: upper asc, index asc. */
#define ORDER_UPPER ((enum pack_order)(PACK_ORDER_TFLITE + 1))

/* Maps a signed step to an unsigned key with the same order. */
static uint64_t okey(int64_t v)
{
    return (uint64_t)v ^ ((uint64_t)1 << 63);
}

/* The j-th key (0 = most significant) of buffer i under ord; descending keys are stored
 * complemented. */
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
    default: /* ORDER_UPPER */
        return okey(b->upper);
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
    return ord == PACK_ORDER_PROGRAM || ord == ORDER_UPPER ? 1 : ord == PACK_ORDER_TFLITE ? 3 : 2;
}

/* The varying bits of one key: (key >> low) & mask, placed at bit pos of the long key. */
struct field {
    unsigned low, width, pos;
};

/* Bits [32 g, 32 g + 32) of buffer i's long key. */
static uint64_t long_key_group(const struct pack_problem *p, enum pack_order ord,
                               const struct field *f, int nk, size_t i, unsigned g, int64_t tmin,
                               int64_t tmax)
{
    unsigned lo = 32 * g;
    uint64_t v = 0;

    for (int j = 0; j < nk; j++) {
        uint64_t c;
        if (f[j].width == 0 || f[j].pos >= lo + 32 || f[j].pos + f[j].width <= lo)
            continue;
        c = order_key(p, ord, i, j, tmin, tmax) >> f[j].low;
        if (f[j].width < 64)
            c &= ((uint64_t)1 << f[j].width) - 1;
        v |= f[j].pos >= lo ? c << (f[j].pos - lo) : c >> (lo - f[j].pos);
    }
    return v & 0xffffffffu;
}

/* Stable LSD radix sort of a[n] by the high 32 bits (tmp holds n words); returns the
 * sorted array. */
static uint64_t *radix_sort(uint64_t *a, uint64_t *tmp, size_t n)
{
    uint64_t diff = 0;
    size_t cnt[256];

    for (size_t i = 1; i < n; i++)
        diff |= a[i] ^ a[0];
    for (unsigned sh = 32; sh < 64; sh += 8) {
        if (((diff >> sh) & 0xff) == 0)
            continue;
        memset(cnt, 0, sizeof(cnt));
        for (size_t i = 0; i < n; i++)
            cnt[(a[i] >> sh) & 0xff]++;
        for (size_t d = 0, sum = 0; d < 256; d++) {
            size_t c = cnt[d];
            cnt[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[cnt[(a[i] >> sh) & 0xff]++] = a[i];
        uint64_t *x = a;
        a = tmp;
        tmp = x;
    }
    return a;
}

/* pack_sort_order on caller scratch (2n words). */
static void sort_order(const struct pack_problem *p, enum pack_order ord, uint32_t *order,
                       uint64_t *scratch)
{
    struct field f[ORDER_MAX_KEYS];
    int64_t tmin = INT64_MAX, tmax = INT64_MIN;
    int nk = order_nkeys(ord);
    unsigned total = 0;
    size_t run = 1;

    /* Programs usually list their buffers in step order: then there is nothing to sort. */
    while (nk == 1 && run < p->n &&
           order_key(p, ord, run - 1, 0, 0, 0) <= order_key(p, ord, run, 0, 0, 0))
        run++;
    if (nk == 1 && run >= p->n) {
        for (size_t i = 0; i < p->n; i++)
            order[i] = (uint32_t)i;
        return;
    }
    for (size_t i = 0; i < p->n; i++) {
        if (p->bufs[i].lower < tmin)
            tmin = p->bufs[i].lower;
        if (p->bufs[i].upper > tmax)
            tmax = p->bufs[i].upper;
    }
    for (int j = nk - 1; j >= 0; j--) {
        uint64_t diff = 0, k0 = order_key(p, ord, 0, j, tmin, tmax);
        for (size_t i = 1; i < p->n; i++)
            diff |= order_key(p, ord, i, j, tmin, tmax) ^ k0;
        f[j].low = diff ? (unsigned)__builtin_ctzll(diff) : 0;
        f[j].width = diff ? 64 - (unsigned)__builtin_clzll(diff) - f[j].low : 0;
        f[j].pos = total;
        total += f[j].width;
    }
    for (size_t i = 0; i < p->n; i++)
        order[i] = (uint32_t)i; /* the final tie-break: index ascending */
    for (unsigned g = 0; g == 0 || 32 * g < total; g++) {
        uint64_t *a;
        for (size_t i = 0; i < p->n; i++)
            scratch[i] = long_key_group(p, ord, f, nk, order[i], g, tmin, tmax) << 32 | order[i];
        a = radix_sort(scratch, scratch + p->n, p->n);
        for (size_t i = 0; i < p->n; i++)
            order[i] = (uint32_t)a[i];
    }
}

int pack_sort_order(const struct pack_problem *p, enum pack_order ord, uint32_t *order,
                    struct err *e)
{
    uint64_t *scratch;

    if (p->n == 0)
        return ERR_OK;
    scratch = heur_alloc(2 * p->n * sizeof(*scratch));
    if (scratch == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
    sort_order(p, ord, order, scratch);
    free(scratch);
    return ERR_OK;
}

struct chunk {
    uint64_t off, end;
};

struct chunk32 {
    uint32_t off, end;
};

/*
 * The placed-buffer index (see the file comment). Steps are replaced by their ranks among
 * the distinct lower and upper values, so the arrays a query scans hold 32-bit words.
 * Leaves are grouped in buckets of PTREE_BUCKET consecutive positions (one cache line of
 * up[]); the tree keeps one max-upper per bucket and a query scans the buckets it reaches
 * linearly. A buffer's hi (the positions whose lower is below its upper) bounds the query on
 * the right, so the scan never reads a lower.
 */
#define PTREE_BUCKET    16
#define PREFETCH_CHUNKS 4  /* wide chunks a cache line holds (narrow: twice as many) */
#define PREFETCH_SPAN   64 /* positions prefetched ahead of a query */

struct binfo {
    uint32_t pos;  /* position: positions are ordered by (lower, index) */
    uint32_t hi;   /* positions [0, hi) have lower < this buffer's upper */
    uint32_t klow; /* rank(lower) + 1: a placed q overlaps when up[q] > klow */
    uint32_t kup;  /* rank(upper) + 1: what up[pos] holds once placed */
    uint64_t size; /* in units (the placement loop never reads the caller's array) */
};

struct ptree {
    size_t n, leaves;       /* leaves: power of two >= number of buckets */
    struct binfo *info;     /* buffer -> its position and keys */
    uint32_t *maxup;        /* 2*leaves nodes: max up[] of the placed buffers below, 0 if none */
    uint32_t *up;           /* position: rank(upper) + 1 once placed, 0 before */
    uint64_t unit;          /* chunks and sizes count in units of this many bytes */
    struct chunk *wide;     /* position: the placed chunk, in units; or, when every end */
    struct chunk32 *narrow; /* fits 32 bits (the usual case), this half-size array */
};

static void ptree_free(struct ptree *t)
{
    free(t->info);
    free(t->maxup);
    free(t->up);
    free(t->wide);
    free(t->narrow);
    memset(t, 0, sizeof(*t));
}

/* Builds the index; scratch holds 4n words. On failure the caller still calls
 * ptree_free. */
static int ptree_init(struct ptree *t, const struct pack_problem *p, uint64_t *scratch,
                      struct err *e)
{
    size_t n = p->n, nb = (n + PTREE_BUCKET - 1) / PTREE_BUCKET;
    uint32_t *by_lower = (uint32_t *)(scratch + 2 * n), *by_upper = by_lower + n;
    uint32_t rank = 0;
    int64_t prev = 0;
    uint64_t orbits = 0, total = 0;

    memset(t, 0, sizeof(*t));
    t->n = n;
    t->unit = 1;
    t->leaves = 1;
    while (t->leaves < nb)
        t->leaves *= 2;
    t->info = heur_zalloc(n * sizeof(*t->info)); /* the merge sets all; zeroed for the analyzer */
    t->maxup = heur_zalloc(2 * t->leaves * sizeof(*t->maxup));
    t->up = heur_zalloc(n * sizeof(*t->up));
    if (t->info == NULL || t->maxup == NULL || t->up == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", n);
    sort_order(p, PACK_ORDER_PROGRAM, by_lower, scratch);
    sort_order(p, ORDER_UPPER, by_upper, scratch);
    /* Merge the two sorted lists: equal steps share a rank, and at equal steps uppers come
     * first, so an upper's hi counts only the lowers strictly below it. */
    for (size_t i = 0, j = 0; i < n || j < n;) {
        bool upper = j < n && (i == n || p->bufs[by_upper[j]].upper <= p->bufs[by_lower[i]].lower);
        int64_t v = upper ? p->bufs[by_upper[j]].upper : p->bufs[by_lower[i]].lower;

        rank += i + j > 0 && v != prev;
        prev = v;
        if (upper) {
            t->info[by_upper[j]].hi = (uint32_t)i;
            t->info[by_upper[j++]].kup = rank + 1;
        } else {
            t->info[by_lower[i]].pos = (uint32_t)i;
            t->info[by_lower[i]].size = p->bufs[by_lower[i]].size;
            t->info[by_lower[i++]].klow = rank + 1;
        }
    }
    /* The unit: the largest power of two dividing every size and the alignment, so every
     * offset is a whole number of units. Offsets stay below the sum of the aligned sizes
     * (pack_validate), ends below twice that: in units, usually 32 bits. */
    for (size_t b = 0; b < n; b++) {
        orbits |= p->bufs[b].size;
        total += p->bufs[b].size + (p->alignment > 1 ? p->alignment : 0); /* validated */
    }
    if (p->alignment > 1)
        orbits |= p->alignment;
    t->unit = orbits & (0 - orbits); /* sizes are validated positive */
    for (size_t b = 0; b < n; b++)
        t->info[b].size /= t->unit;
    if (total / t->unit < ((uint64_t)1 << 31))
        t->narrow = heur_zalloc(n * sizeof(*t->narrow));
    else
        t->wide = heur_zalloc(n * sizeof(*t->wide));
    if (t->narrow == NULL && t->wide == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", n);
    return ERR_OK;
}

static void ptree_insert(struct ptree *t, const struct binfo *bi, uint64_t off, uint64_t end)
{
    size_t q = bi->pos, node = t->leaves + q / PTREE_BUCKET;
    uint32_t key = bi->kup;

    t->up[q] = key;
    if (t->narrow != NULL)
        t->narrow[q] = (struct chunk32){(uint32_t)off, (uint32_t)end};
    else
        t->wide[q] = (struct chunk){off, end};
    while (node >= 1 && t->maxup[node] < key) {
        t->maxup[node] = key;
        node /= 2;
    }
}

/* The last bucket before bucket b whose max-upper exceeds klow; SIZE_MAX if none. Climbs
 * to the first left sibling that qualifies and descends its right edge, so the neighbouring
 * buckets a query usually wants cost a level or two. */
static size_t ptree_prev(const struct ptree *t, size_t b, uint32_t klow)
{
    size_t node = t->leaves + b;

    if (b > 0 && t->maxup[node - 1] > klow) /* the usual case: the bucket just before */
        return b - 1;
    while (node > 1 && !((node & 1) && t->maxup[node - 1] > klow))
        node /= 2;
    if (node <= 1)
        return SIZE_MAX;
    node--;
    while (node < t->leaves)
        node = t->maxup[2 * node + 1] > klow ? 2 * node + 1 : 2 * node;
    return node - t->leaves;
}

/* Appends the chunks of the placed buffers overlapping bi's lifetime to out; returns how
 * many. The candidates are the positions below hi whose up exceeds klow: the buckets from
 * hi's down, skipping those the tree rules out. */
static size_t ptree_query(const struct ptree *t, const struct binfo *bi, struct chunk *out)
{
    size_t cnt = 0, hi = bi->hi, b;
    uint32_t klow = bi->klow;

    if (hi == 0)
        return 0;
    b = (hi - 1) / PTREE_BUCKET;
    if (t->maxup[t->leaves + b] <= klow)
        b = ptree_prev(t, b, klow);
    for (; b != SIZE_MAX; b = ptree_prev(t, b, klow)) {
        size_t q0 = b * PTREE_BUCKET, q1 = q0 + PTREE_BUCKET < hi ? q0 + PTREE_BUCKET : hi;
        for (size_t q = q0; q < q1; q++) { /* branch-free: about half are placed */
            out[cnt] =
                t->narrow != NULL ? (struct chunk){t->narrow[q].off, t->narrow[q].end} : t->wide[q];
            cnt += t->up[q] > klow;
        }
    }
    return cnt;
}

#define CHUNK_ISORT_MAX 28 /* insertion sort up to this many chunks (measured crossover) */

/* Sorts chunks by offset: insertion sort for the usual handful, an LSD radix sort on the
 * offset beyond (tmp holds k chunks; many buffers live at once make k large). The radix
 * passes cover only the bits that differ, in as few passes as 8-bit digits need, with the
 * digits split evenly: 18 varying bits take three passes over 64 counters, not 256. */
static void chunks_sort(struct chunk *c, struct chunk *tmp, size_t k)
{
    uint64_t diff = 0;
    uint32_t cnt[256];
    struct chunk *a = c;
    unsigned lo, width, passes, bits;

    if (k <= CHUNK_ISORT_MAX) {
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
    if (diff == 0)
        return;
    lo = (unsigned)__builtin_ctzll(diff);
    width = 64 - (unsigned)__builtin_clzll(diff) - lo;
    passes = (width + 7) / 8;
    bits = (width + passes - 1) / passes;
    for (unsigned pass = 0, sh = lo; pass < passes; pass++, sh += bits) {
        uint64_t mask = ((uint64_t)1 << bits) - 1;
        memset(cnt, 0, ((size_t)1 << bits) * sizeof(cnt[0]));
        for (size_t i = 0; i < k; i++)
            cnt[(a[i].off >> sh) & mask]++;
        for (size_t d = 0, sum = 0; d <= mask; d++) {
            uint32_t x = cnt[d];
            cnt[d] = (uint32_t)sum;
            sum += x;
        }
        for (size_t i = 0; i < k; i++)
            tmp[cnt[(a[i].off >> sh) & mask]++] = a[i];
        struct chunk *x = a;
        a = tmp;
        tmp = x;
    }
    if (a != c)
        memcpy(c, a, k * sizeof(*c));
}

/* pack_validate keeps every aligned total below 2^62, so this cannot overflow here. */
static uint64_t align_up(uint64_t v, uint64_t align)
{
    uint64_t r;

    (void)arith_round_up(v, align, &r);
    return r;
}

/* Chooses an offset for size among the sorted chunks (see the file comment). */
static uint64_t choose_offset(const struct chunk *c, size_t k, uint64_t size, uint64_t align,
                              enum pack_fit fit)
{
    uint64_t cur = 0, best = UINT64_MAX, best_gap = UINT64_MAX;

    for (size_t i = 0; i < k; i++) {
        if (c[i].off > cur) {
            uint64_t start = align_up(cur, align), gap = c[i].off - cur;
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
    return best != UINT64_MAX ? best : align_up(cur, align);
}

int pack_greedy(const struct pack_problem *p, enum pack_order ord, enum pack_fit fit,
                const uint32_t *order, uint64_t *offsets, uint64_t *peak, struct err *e)
{
    struct ptree t = {0};
    uint32_t *own = NULL;
    uint64_t *scratch = NULL;
    struct chunk *chunks;
    uint64_t top = 0, align;
    int rc = ERR_OK;

    *peak = 0;
    if (p->n == 0)
        return ERR_OK;
    /* One scratch area serves the sorts (4n words) and then the overlapping chunks (2n):
     * on a million buffers fresh pages cost as much as the placement itself. */
    scratch = heur_alloc(4 * p->n * sizeof(*scratch)); /* 2n chunks */
    if (order == NULL)
        own = heur_alloc(p->n * sizeof(*own));
    if (scratch == NULL || (order == NULL && own == NULL)) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    rc = ptree_init(&t, p, scratch, e); /* on failure, t is freed at out */
    if (rc != ERR_OK)
        goto out;
    if (order == NULL) {
        sort_order(p, ord, own, scratch);
        order = own;
    }
    chunks = (struct chunk *)scratch;
    align = p->alignment > 1 ? p->alignment / t.unit : p->alignment;
    for (size_t i = 0; i < p->n; i++) {
        const struct binfo *bi = &t.info[order[i]];
        uint64_t off;
        size_t k;

        /* The order jumps around in time: fetch the buffers ahead, then the index lines
         * their queries will scan (the bucket before theirs up to their hi). */
        if (i + 16 < p->n)
            __builtin_prefetch(&t.info[order[i + 16]]);
        if (i + 8 < p->n) {
            const struct binfo *ahead = &t.info[order[i + 8]];
            size_t q = ahead->pos / PTREE_BUCKET * PTREE_BUCKET, end = ahead->hi;
            size_t step = t.narrow != NULL ? 2 * PREFETCH_CHUNKS : PREFETCH_CHUNKS;
            q = q >= PTREE_BUCKET ? q - PTREE_BUCKET : 0;
            if (end > q + PREFETCH_SPAN)
                end = q + PREFETCH_SPAN;
            __builtin_prefetch(&t.maxup[t.leaves + ahead->pos / PTREE_BUCKET]);
            for (; q < end; q += step) {
                __builtin_prefetch(t.narrow != NULL ? (const void *)&t.narrow[q]
                                                    : (const void *)&t.wide[q]);
                if (q % PTREE_BUCKET == 0)
                    __builtin_prefetch(&t.up[q]);
            }
        }
        k = ptree_query(&t, bi, chunks);
        chunks_sort(chunks, chunks + p->n, k);
        off = choose_offset(chunks, k, bi->size, align, fit);
        if (off + bi->size > top)
            top = off + bi->size;
        ptree_insert(&t, bi, off, off + bi->size);
    }
    /* The offsets are the placed chunks by position: written here in buffer order rather
     * than at random inside the loop. */
    for (size_t b = 0; b < p->n; b++) {
        size_t q = t.info[b].pos;
        offsets[b] = (t.narrow != NULL ? t.narrow[q].off : t.wide[q].off) * t.unit;
    }
    *peak = top * t.unit;
out:
    ptree_free(&t);
    free(own);
    free(scratch);
    return rc;
}
