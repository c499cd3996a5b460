/*
 * pack_heur.c - greedy placement (XLA's and TFLite's heuristics, a naive first fit).
 *
 * Each buffer in sort order goes into the free gaps left by the already-placed buffers that
 * overlap it in time (server/planner/SOURCES.md#heap-simulator,
 * server/planner/SOURCES.md#tflite-arena, server/planner/SOURCES.md#greedy-baselines):
 *   best fit   the smallest (gap size, gap start) that fits, else the top of the overlapping
 *              buffers (XLA ChunkPlacement::kBestFit, TFLite SimpleMemoryArena::Allocate);
 *   lowest     the first gap from offset 0 that fits (XLA ChunkPlacement::kLowestOffset).
 * The placed buffers are indexed twice (ptree below): by start, in blocks of consecutive
 * positions (the buffers sorted by lower), for the ones starting inside a buffer's
 * lifetime; and in an interval tree over the steps, for the ones live at its first step.
 * Every block keeps its placed chunks sorted by offset; a query keeps the overlapping
 * chunks of each block it reads (a run already in offset order) and merges the runs, so
 * the gap scan reads the chunks in offset order without sorting them: a pass costs
 * O(n (s + k log r)) for s chunks read, k kept and r runs per buffer, where s is k plus at
 * most a block per tree level and two position blocks, with no allocation per buffer. Buffers live
 * over the whole program are kept apart as the union of their chunks (see iset below). Orders are
 * LSD radix sorts; steps become 32-bit ranks and sizes and offsets count in the largest
 * power-of-two unit dividing them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "planner/arith.h"
#include "planner/pack/pack_int.h"

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
    case PACK_ORDER_UPPER:
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
    return ord == PACK_ORDER_PROGRAM || ord == PACK_ORDER_UPPER ? 1
           : ord == PACK_ORDER_TFLITE                           ? 3
                                                                : 2;
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

int pack_sort_keys(const uint64_t *key, size_t n, uint32_t *order, struct err *e)
{
    uint64_t *scratch, diff = 0;
    unsigned lo, width;

    if (n == 0)
        return ERR_OK;
    scratch = heur_alloc(2 * n * sizeof(*scratch));
    if (scratch == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu keys", n);
    for (size_t i = 0; i < n; i++) {
        order[i] = (uint32_t)i; /* the tie-break: index ascending */
        diff |= key[i] ^ key[0];
    }
    lo = diff ? (unsigned)__builtin_ctzll(diff) : 0;
    width = diff ? 64 - (unsigned)__builtin_clzll(diff) - lo : 0;
    for (unsigned sh = lo; sh < lo + width; sh += 32) { /* least significant group first */
        uint64_t *a;
        for (size_t i = 0; i < n; i++)
            scratch[i] = (key[order[i]] >> sh & 0xffffffffu) << 32 | order[i];
        a = radix_sort(scratch, scratch + n, n);
        for (size_t i = 0; i < n; i++)
            order[i] = (uint32_t)a[i];
    }
    free(scratch);
    return ERR_OK;
}

struct chunk {
    uint64_t off, end;
};

/*
 * The placed-buffer index (see the file comment). Steps are replaced by their ranks among the
 * distinct lower and upper values: a buffer covers the rank points [klow, kup - 1]. Positions
 * are the buffers ordered by (lower, index). Buffers are short or long (more than LONG_RANKS
 * points), and each kind has its own index:
 *
 * Short buffers: positions grouped in blocks of PTREE_BLOCK, each keeping the chunks placed
 * at its positions sorted by offset, and a tree over the blocks keeping the largest upper
 * placed in each, so a query skips the blocks that cannot overlap; a buffer's hi (the
 * positions whose lower is below its upper) bounds it on the right. Short lifetimes keep
 * the blocks a query reaches near it.
 *
 * Long buffers (a training step's activations, live from the forward pass to the backward
 * one) would defeat that tree: one in a block makes every later query read the block. A
 * placed long q overlaps buffer b exactly when q holds b's first point (klow(q) <= klow(b) <
 * kup(q): a stabbing query) or q starts inside b (klow(b) < klow(q) < kup(b)); the two are
 * disjoint and each has an index that reads (almost) only what it reports:
 * - starts: the long buffers' own positions in blocks of PTREE_BLOCK; those starting inside
 *   b are a range of them, whole blocks plus two edge blocks filtered;
 * - stabbing: an interval tree over the rank points (in-order numbered nodes 1 .. 2^L - 1, a
 *   node's level the trailing zeros of its number). A buffer lives at the highest node inside
 *   its points, which every point of it descends from, so the buffers holding point p all
 *   live at p's L ancestors. At an ancestor x above p (p < x) they are the ones with
 *   klow <= p, to its right (p > x) the ones with kup > p: each node keeps its buffers twice,
 *   ordered by klow ascending and by kup descending, so either set is a prefix, cut in blocks
 *   of ITREE_BLOCK that keep their placed chunks sorted by offset.
 * (20,000 buffers of a training step, 2,500 of them long: a greedy pass 0.15 s to 0.05 s.)
 *
 * Every block read gives a run already in offset order; the runs are merged.
 */
#define PTREE_BLOCK    128  /* positions per block (measured: 64 to 256 within 5%) */
#define ITREE_BLOCK    512  /* entries per block of a node's lists (measured: 64 to 4096) */
#define LONG_RANKS     1024 /* a buffer over more rank points than this is long */
#define PREFETCH_LINES 4    /* cache lines prefetched at the head of a block a query reads */

struct binfo {
    uint32_t pos;     /* position: positions are ordered by (lower, index); for a long
                       * buffer (is_long) its position among the long ones */
    uint32_t hi;      /* positions [0, hi) have lower < this buffer's upper */
    uint32_t klow;    /* rank(lower) + 1: its first point */
    uint32_t kup;     /* rank(upper) + 1: its last point + 1 */
    uint32_t lhi;     /* long positions [0, lhi) have lower < this buffer's upper */
    uint32_t llo_end; /* long positions [0, llo_end) have lower <= this buffer's lower */
    uint64_t size;    /* in units (the placement loop never reads the caller's array) */
};

/* Where a long buffer goes in the interval tree (by its long position). */
struct linfo {
    uint32_t node;   /* its interval-tree node */
    uint32_t pa, pe; /* its place in the node's klow-ascending and kup-descending lists */
};

/* A placed chunk in a block's list: the chunk in units and its lifetime's ranks. */
struct slot {
    uint64_t off, end;
    uint32_t klow, kup;
};

/* The long buffers' index: their starts (blocks of long positions) and the interval tree.
 * A node's two lists are [start[x], start[x + 1]) of the key and slot arrays, in blocks from
 * bstart[x] of the fill arrays. */
struct itree {
    size_t n;                 /* long buffers */
    uint32_t *fill;           /* long-position block -> its placed chunks */
    struct slot *slots;       /* long-position block b's chunks by offset */
    unsigned levels;          /* nodes 1 .. 2^levels - 1 */
    uint32_t *start, *bstart; /* 2^levels + 1 entries each */
    uint32_t *akey, *ekey;    /* per entry: klow ascending, kup descending, by node */
    uint32_t *afill, *efill;  /* per block: its placed chunks */
    struct slot *aslots, *eslots;
};

struct ptree {
    size_t n, blocks, leaves; /* leaves: power of two >= blocks */
    uint32_t kend;            /* the largest kup: a buffer with klow 1 and kup kend is global */
    struct binfo *info;       /* buffer -> its position and keys */
    struct linfo *linfo;      /* long position -> its place in the tree */
    uint32_t *maxup;          /* 2*leaves nodes: max kup of the placed chunks below, 0 if none */
    uint32_t *fill;           /* block -> how many of its positions are placed */
    struct slot *slots;       /* block b's chunks by offset: slots[b*PTREE_BLOCK ..][fill[b]] */
    struct itree it;
    uint64_t unit; /* chunks and sizes count in units of this many bytes */
};

static void ptree_free(struct ptree *t)
{
    free(t->info);
    free(t->linfo);
    free(t->maxup);
    free(t->fill);
    free(t->slots);
    free(t->it.fill);
    free(t->it.slots);
    free(t->it.start);
    free(t->it.bstart);
    free(t->it.akey);
    free(t->it.ekey);
    free(t->it.afill);
    free(t->it.efill);
    free(t->it.aslots);
    free(t->it.eslots);
    memset(t, 0, sizeof(*t));
}

/* Longer than LONG_RANKS points, and not global (those are kept apart: iset below). */
static bool is_long(const struct ptree *t, const struct binfo *bi)
{
    return bi->kup - bi->klow > LONG_RANKS && !(bi->klow == 1 && bi->kup == t->kend);
}

/* The node of points [a, e]: the number in it with the most trailing zeros. */
static uint32_t itree_node(uint32_t a, uint32_t e)
{
    unsigned d;

    if (a == e)
        return a;
    d = 31 - (unsigned)__builtin_clz(a ^ e);
    return e & ~((UINT32_C(1) << d) - 1);
}

/* The long buffers' index: their positions and places (by_lower: every buffer by position;
 * by_upper: by (upper, index); lcount: the long buffers among positions [0, i), n + 1
 * entries). */
static int itree_init(struct ptree *t, const uint32_t *by_lower, const uint32_t *by_upper,
                      const uint32_t *lcount, struct err *e)
{
    struct itree *it = &t->it;
    size_t n = t->n, nl = lcount[n], nodes, blocks, lblocks = (nl + PTREE_BLOCK - 1) / PTREE_BLOCK;
    uint32_t *fillpos;

    it->n = nl;
    it->levels = 1;
    while (it->levels < 30 && (UINT32_C(1) << it->levels) - 1 < t->kend)
        it->levels++;
    for (size_t b = 0; b < n; b++)
        t->info[b].lhi = lcount[t->info[b].hi];
    if (nl == 0)
        return ERR_OK; /* no long buffer: no tree (queries and inserts never reach it) */
    nodes = (size_t)1 << it->levels;
    /* blocks: ceil(count / ITREE_BLOCK) per node, at most nl / ITREE_BLOCK + nodes in all */
    blocks = nl / ITREE_BLOCK + nodes;
    t->linfo = heur_zalloc(nl * sizeof(*t->linfo)); /* each set below; zeroed for the analyzer */
    it->fill = heur_zalloc((lblocks ? lblocks : 1) * sizeof(*it->fill));
    it->slots = heur_alloc((nl ? nl : 1) * sizeof(*it->slots)); /* read only below fill */
    it->start = heur_zalloc((nodes + 1) * sizeof(*it->start));
    it->bstart = heur_zalloc((nodes + 1) * sizeof(*it->bstart));
    it->akey = heur_alloc((nl ? nl : 1) * sizeof(*it->akey));
    it->ekey = heur_alloc((nl ? nl : 1) * sizeof(*it->ekey));
    it->aslots = heur_alloc((nl ? nl : 1) * sizeof(*it->aslots));
    it->eslots = heur_alloc((nl ? nl : 1) * sizeof(*it->eslots));
    it->afill = heur_zalloc(blocks * sizeof(*it->afill));
    it->efill = heur_zalloc(blocks * sizeof(*it->efill));
    fillpos = calloc(nodes, sizeof(*fillpos));
    if (t->linfo == NULL || it->fill == NULL || it->slots == NULL || it->start == NULL ||
        it->bstart == NULL || it->akey == NULL || it->ekey == NULL || it->aslots == NULL ||
        it->eslots == NULL || it->afill == NULL || it->efill == NULL || fillpos == NULL) {
        free(fillpos);
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", n);
    }
    if ((UINT32_C(1) << it->levels) - 1 < t->kend) { /* 2^30 steps: past any pack problem */
        free(fillpos);
        return err_set(e, ERR_LIMIT, NULL, "%zu buffers have too many distinct steps", n);
    }
    for (size_t b = 0; b < n; b++) {
        const struct binfo *bi = &t->info[b];
        if (!is_long(t, bi))
            continue;
        t->linfo[bi->pos].node = itree_node(bi->klow, bi->kup - 1);
        it->start[t->linfo[bi->pos].node + 1]++;
    }
    blocks = 0;
    for (size_t x = 0; x < nodes; x++) {
        uint32_t cnt = it->start[x + 1];
        it->bstart[x] = (uint32_t)blocks;
        blocks += (cnt + ITREE_BLOCK - 1) / ITREE_BLOCK;
        it->start[x + 1] = it->start[x] + cnt;
    }
    for (size_t i = 0; i < n; i++) { /* klow ascending */
        const struct binfo *bi = &t->info[by_lower[i]];
        if (is_long(t, bi)) {
            struct linfo *li = &t->linfo[bi->pos];
            li->pa = fillpos[li->node]++;
            it->akey[it->start[li->node] + li->pa] = bi->klow;
        }
    }
    memset(fillpos, 0, nodes * sizeof(*fillpos));
    for (size_t i = n; i-- > 0;) { /* kup descending */
        const struct binfo *bi = &t->info[by_upper[i]];
        if (is_long(t, bi)) {
            struct linfo *li = &t->linfo[bi->pos];
            li->pe = fillpos[li->node]++;
            it->ekey[it->start[li->node] + li->pe] = bi->kup;
        }
    }
    free(fillpos);
    return ERR_OK;
}

/* Which buffers are long, and their positions among the long ones: lcount[i] counts the
 * long ones among positions [0, i) (n + 1 entries); each buffer's llo_end. */
static void long_positions(struct ptree *t, const uint32_t *by_lower, uint32_t *lcount)
{
    size_t n = t->n;

    lcount[0] = 0;
    for (size_t i = 0; i < n; i++) {
        struct binfo *bi = &t->info[by_lower[i]];
        bool lng = is_long(t, bi);
        if (lng)
            bi->pos = lcount[i];
        lcount[i + 1] = lcount[i] + lng;
    }
    for (size_t i = n; i-- > 0;) { /* the end of each run of equal lowers, in long positions */
        struct binfo *bi = &t->info[by_lower[i]];
        bi->llo_end = i + 1 < n && t->info[by_lower[i + 1]].klow == bi->klow
                          ? t->info[by_lower[i + 1]].llo_end
                          : lcount[i + 1];
    }
}

/* Builds the index; scratch holds 4n words. On failure the caller still calls
 * ptree_free. */
static int ptree_init(struct ptree *t, const struct pack_problem *p, uint64_t *scratch,
                      struct err *e)
{
    size_t n = p->n;
    uint32_t *by_lower = (uint32_t *)(scratch + 2 * n), *by_upper = by_lower + n;
    uint32_t rank = 0;
    int64_t prev = 0;
    uint64_t orbits = 0;

    memset(t, 0, sizeof(*t));
    t->n = n;
    t->unit = 1;
    t->blocks = (n + PTREE_BLOCK - 1) / PTREE_BLOCK;
    t->leaves = 1;
    while (t->leaves < t->blocks)
        t->leaves *= 2;
    t->info = heur_zalloc(n * sizeof(*t->info)); /* the merge sets all; zeroed for the analyzer */
    t->maxup = heur_zalloc(2 * t->leaves * sizeof(*t->maxup));
    t->fill = heur_zalloc(t->blocks * sizeof(*t->fill));
    t->slots = heur_alloc(n * sizeof(*t->slots)); /* read only below fill */
    if (t->info == NULL || t->maxup == NULL || t->fill == NULL || t->slots == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", n);
    sort_order(p, PACK_ORDER_PROGRAM, by_lower, scratch);
    sort_order(p, PACK_ORDER_UPPER, by_upper, scratch);
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
    t->kend = rank + 1;
    /* The unit: the largest power of two dividing every size and the alignment, so every
     * offset is a whole number of units. */
    for (size_t b = 0; b < n; b++)
        orbits |= p->bufs[b].size;
    if (p->alignment > 1)
        orbits |= p->alignment;
    t->unit = orbits & (0 - orbits); /* sizes are validated positive */
    for (size_t b = 0; b < n; b++)
        t->info[b].size /= t->unit;
    /* the sorts are done: scratch[0, n) holds the long counts (n + 1 uint32) */
    long_positions(t, by_lower, (uint32_t *)scratch);
    return itree_init(t, by_lower, by_upper, (const uint32_t *)scratch, e);
}

/* Adds the chunk to the block list s[0..*fill), in offset order. */
static void block_insert(struct slot *s, uint32_t *fill, const struct binfo *bi, uint64_t off,
                         uint64_t end)
{
    size_t lo = 0, hi = *fill;

    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(s + lo + 1, s + lo, (*fill - lo) * sizeof(*s));
    s[lo] = (struct slot){off, end, bi->klow, bi->kup};
    (*fill)++;
}

/* Adds buffer b's chunk: a short one to its position's block and the tree, a long one to
 * its long position's block and its node's two lists. */
static void ptree_insert(struct ptree *t, uint32_t b, uint64_t off, uint64_t end)
{
    const struct binfo *bi = &t->info[b];
    struct itree *it = &t->it;

    if (!is_long(t, bi)) {
        size_t pb = bi->pos / PTREE_BLOCK, node = t->leaves + pb;
        block_insert(t->slots + pb * PTREE_BLOCK, &t->fill[pb], bi, off, end);
        while (node >= 1 && t->maxup[node] < bi->kup) {
            t->maxup[node] = bi->kup;
            node /= 2;
        }
        return;
    }
    const struct linfo *li = &t->linfo[bi->pos];
    size_t lb = bi->pos / PTREE_BLOCK, ab = li->pa / ITREE_BLOCK, eb = li->pe / ITREE_BLOCK;
    uint32_t s0 = it->start[li->node], b0 = it->bstart[li->node];
    block_insert(it->slots + lb * PTREE_BLOCK, &it->fill[lb], bi, off, end);
    block_insert(it->aslots + s0 + ab * ITREE_BLOCK, &it->afill[b0 + ab], bi, off, end);
    block_insert(it->eslots + s0 + eb * ITREE_BLOCK, &it->efill[b0 + eb], bi, off, end);
}

/* The last block before block b whose max-upper exceeds klow; SIZE_MAX if none. Climbs
 * to the first left sibling that qualifies and descends its right edge, so the neighbouring
 * blocks a query usually wants cost a level or two. */
static size_t ptree_prev(const struct ptree *t, size_t b, uint32_t klow)
{
    size_t node = t->leaves + b;

    if (b > 0 && t->maxup[node - 1] > klow) /* the usual case: the block just before */
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

/* Appends the chunks of s[0..f) with klow(q) in [lo, hi) and kup(q) > above to out at
 * *cnt, branch-free; a run when any. */
static void keep(const struct slot *s, size_t f, uint32_t lo, uint32_t hi, uint32_t above,
                 struct chunk *out, size_t *cnt, uint32_t *runs, size_t *nruns)
{
    size_t start = *cnt, c = *cnt;

    for (size_t q = 0; q < f; q++) {
        out[c] = (struct chunk){s[q].off, s[q].end};
        c += (s[q].klow >= lo) & (s[q].klow < hi) & (s[q].kup > above);
    }
    *cnt = c;
    if (c > start)
        runs[++*nruns] = (uint32_t)c;
}

/* How many of the n keys k[0..n) (ascending when asc, else descending) come before the
 * first that fails: k <= p ascending, k > p descending. */
static uint32_t prefix_count(const uint32_t *k, uint32_t n, uint32_t p, bool asc)
{
    uint32_t lo = 0, hi = n;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (asc ? k[mid] <= p : k[mid] > p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The placed long chunks overlapping bi: those holding its first point, from the point's
 * ancestors' lists, then those starting inside it, from the long positions' blocks. */
static void itree_query(const struct itree *it, const struct binfo *bi, struct chunk *out,
                        size_t *cnt, uint32_t *runs, size_t *nruns)
{
    uint32_t p = bi->klow;

    for (unsigned lev = 0; lev < it->levels; lev++) {
        uint32_t x = (p >> (lev + 1) << (lev + 1)) | (UINT32_C(1) << lev);
        uint32_t s0 = it->start[x], n = it->start[x + 1] - s0, k;
        bool right = p > x; /* p right of x: the kup-descending list */
        if (n == 0)
            continue;
        k = p == x ? n : prefix_count((right ? it->ekey : it->akey) + s0, n, p, !right);
        const uint32_t *fill = (right ? it->efill : it->afill) + it->bstart[x];
        const struct slot *slots = (right ? it->eslots : it->aslots) + s0;
        for (uint32_t b = 0; b * ITREE_BLOCK < k; b++)
            keep(slots + (size_t)b * ITREE_BLOCK, fill[b], 0, p + 1, p, out, cnt, runs, nruns);
    }
    if (bi->lhi <= bi->llo_end)
        return;
    for (size_t b = bi->llo_end / PTREE_BLOCK; b <= (bi->lhi - 1) / PTREE_BLOCK; b++)
        keep(it->slots + b * PTREE_BLOCK, it->fill[b], p + 1, bi->kup, 0, out, cnt, runs, nruns);
}

/* Appends the chunks of the placed buffers overlapping bi's lifetime to out, in runs in
 * offset order; run r is out[runs[r], runs[r + 1]). Returns the number of runs. */
static size_t ptree_query(const struct ptree *t, const struct binfo *bi, struct chunk *out,
                          uint32_t *runs)
{
    size_t cnt = 0, nruns = 0, b;
    uint32_t klow = bi->klow, kup = bi->kup;

    runs[0] = 0;
    if (t->it.n > 0)
        itree_query(&t->it, bi, out, &cnt, runs, &nruns);
    if (bi->hi == 0)
        return nruns;
    b = (bi->hi - 1) / PTREE_BLOCK;
    if (t->maxup[t->leaves + b] <= klow)
        b = ptree_prev(t, b, klow);
    for (; b != SIZE_MAX; b = ptree_prev(t, b, klow))
        keep(t->slots + b * PTREE_BLOCK, t->fill[b], 0, kup, klow, out, &cnt, runs, &nruns);
    return nruns;
}

/* Merges a[na] and b[nb], both in offset order, into out (branch-free: offsets are in no
 * order the predictor could learn). Equal offsets may come in either order: the gap scan
 * gives the same answer. */
static void merge2(const struct chunk *a, size_t na, const struct chunk *b, size_t nb,
                   struct chunk *out)
{
    size_t i = 0, j = 0, o = 0;

    while (i < na && j < nb) {
        bool takeb = b[j].off < a[i].off;
        /* a pointer select compiles to a conditional move (a struct select branches) */
        out[o++] = *(takeb ? &b[j] : &a[i]);
        j += takeb;
        i += !takeb;
    }
    memcpy(out + o, a + i, (na - i) * sizeof(*out));
    memcpy(out + o + (na - i), b + j, (nb - j) * sizeof(*out));
}

/* Merges the nruns runs of c (see ptree_query) pairwise until one is left; returns where
 * the merged chunks are: c or tmp (k chunks, like c). */
static struct chunk *runs_merge(struct chunk *c, struct chunk *tmp, uint32_t *runs, size_t nruns)
{
    while (nruns > 1) {
        size_t r = 0, w = 0;
        for (; r + 1 < nruns; r += 2) {
            merge2(c + runs[r], runs[r + 1] - runs[r], c + runs[r + 1], runs[r + 2] - runs[r + 1],
                   tmp + runs[r]);
            runs[++w] = runs[r + 2];
        }
        if (r < nruns) { /* an odd run out: copied as it is */
            memcpy(tmp + runs[r], c + runs[r], (runs[r + 1] - runs[r]) * sizeof(*c));
            runs[++w] = runs[r + 1];
        }
        nruns = w;
        struct chunk *x = c;
        c = tmp;
        tmp = x;
    }
    return c;
}

/*
 * Global buffers: those live from the first step to the last (weights, optimizer state,
 * constants) overlap every other buffer, so the index's queries would read every one of them
 * for every buffer placed: with w of them among n buffers a pass reads n w chunks (200,000
 * buffers of which 20,000 global: 412 s). The gap scan (choose_offset) sees only the union
 * of the chunks it reads, so the placed globals are kept apart instead, as the union of their
 * chunks (sorted, disjoint intervals, touching ones joined; packed globals mostly touch),
 * which a query merges as one more run. A global buffer overlaps everything placed, so its
 * query is the union of all placed chunks, kept the same way while it stays short (over the
 * whole program the placed chunks cover [0, top) but for the gaps no buffer ever uses); past
 * ISET_ALL_MAX intervals it is dropped and a global's query reads the index and the globals'
 * union as before. Either way the gap scan sees the same union, so the packing is the same.
 */
#define ISET_ALL_MAX 256

struct iset {
    struct chunk *c; /* c[n]: sorted by offset, disjoint and not touching */
    size_t n, cap;
};

/* Adds [off, end) to s, joining the intervals it overlaps or touches. Returns false, leaving
 * s as it was, when that needs an interval past cap. */
static bool iset_add(struct iset *s, uint64_t off, uint64_t end)
{
    size_t lo = 0, hi = s->n, last;

    while (lo < hi) { /* the first interval ending at or after off */
        size_t mid = (lo + hi) / 2;
        if (s->c[mid].end < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (last = lo; last < s->n && s->c[last].off <= end; last++)
        ;
    if (last == lo) {
        if (s->n == s->cap)
            return false;
        memmove(s->c + lo + 1, s->c + lo, (s->n - lo) * sizeof(*s->c));
        s->c[lo] = (struct chunk){off, end};
        s->n++;
        return true;
    }
    s->c[lo].off = s->c[lo].off < off ? s->c[lo].off : off;
    s->c[lo].end = s->c[last - 1].end > end ? s->c[last - 1].end : end;
    memmove(s->c + lo + 1, s->c + last, (s->n - last) * sizeof(*s->c));
    s->n -= last - lo - 1;
    return true;
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

/* Whether bi is live over the whole program (see ISET_ALL_MAX). */
static bool is_global(const struct ptree *t, const struct binfo *bi)
{
    return bi->klow == 1 && bi->kup == t->kend;
}

/* The globals' union, room for every one of them, and every placed chunk's union, room for
 * ISET_ALL_MAX intervals; neither when there is no global buffer. */
static int unions_alloc(const struct ptree *t, struct iset *globals, struct iset *all,
                        struct err *e)
{
    size_t nglobal = 0;

    for (size_t b = 0; b < t->n; b++)
        nglobal += is_global(t, &t->info[b]);
    if (nglobal == 0)
        return ERR_OK;
    globals->cap = nglobal;
    all->cap = ISET_ALL_MAX;
    globals->c = malloc(nglobal * sizeof(*globals->c));
    all->c = malloc(ISET_ALL_MAX * sizeof(*all->c));
    if (globals->c == NULL || all->c == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", t->n);
    return ERR_OK;
}

/* The order jumps around in time: fetch the buffer 16 places ahead, then the heads of the
 * index blocks the query 8 places ahead will read (its hi's block and the one before). */
static void prefetch_ahead(const struct ptree *t, const uint32_t *order, size_t i)
{
    if (i + 16 < t->n)
        __builtin_prefetch(&t->info[order[i + 16]]);
    if (i + 8 < t->n && t->info[order[i + 8]].hi > 0) {
        size_t b = (t->info[order[i + 8]].hi - 1) / PTREE_BLOCK;
        for (size_t j = 0; j < 2 && j <= b; j++) {
            const char *head = (const char *)(t->slots + (b - j) * PTREE_BLOCK);
            __builtin_prefetch(&t->fill[b - j]);
            for (size_t l = 0; l < PREFETCH_LINES; l++)
                __builtin_prefetch(head + 64 * l);
        }
    }
}

/* The placed chunks overlapping bi, sorted by offset, *k of them: for a global the union of
 * every placed chunk while it is kept, else the index's query with the globals' union as one
 * more run, merged in chunks[0, 2n). */
static const struct chunk *overlapping(const struct ptree *t, const struct binfo *bi,
                                       const struct iset *globals, const struct iset *all,
                                       struct chunk *chunks, uint32_t *runs, size_t *k)
{
    const struct chunk *sorted;
    size_t nruns;

    if (is_global(t, bi) && all->c != NULL) {
        *k = all->n;
        return all->c;
    }
    /* The index holds the non-global chunks (<= n - globals.n of them), so the globals' run
     * fits in chunks[0, n) after them. */
    nruns = ptree_query(t, bi, chunks, runs);
    if (globals->n > 0) {
        memcpy(chunks + runs[nruns], globals->c, globals->n * sizeof(*chunks));
        runs[nruns + 1] = runs[nruns] + (uint32_t)globals->n;
        nruns++;
    }
    sorted = runs_merge(chunks, chunks + t->n, runs, nruns);
    *k = runs[nruns];
    return sorted;
}

/* Records buffer b at [off, off + size): in the globals' union or the index, and in the union of
 * every placed chunk while that stays short. */
static void place(struct ptree *t, uint32_t b, uint64_t off, struct iset *globals, struct iset *all)
{
    const struct binfo *bi = &t->info[b];

    if (is_global(t, bi))
        (void)iset_add(globals, off, off + bi->size); /* cap: every global */
    else
        ptree_insert(t, b, off, off + bi->size);
    if (all->c != NULL && !iset_add(all, off, off + bi->size)) {
        free(all->c); /* too fragmented to be worth keeping: see ISET_ALL_MAX */
        all->c = NULL;
    }
}

int pack_greedy(const struct pack_problem *p, enum pack_order ord, enum pack_fit fit,
                const uint32_t *order, uint64_t *offsets, uint64_t *peak, struct err *e)
{
    struct ptree t = {0};
    struct iset globals = {0}, all = {0};
    uint32_t *own = NULL, *runs = NULL;
    uint64_t *scratch = NULL;
    uint64_t top = 0, align;
    int rc = ERR_OK;

    *peak = 0;
    if (p->n == 0)
        return ERR_OK;
    /* One scratch area serves the sorts (4n words) and then the overlapping chunks and
     * their merge (2n): on a million buffers fresh pages cost as much as the placement. */
    scratch = heur_alloc(4 * p->n * sizeof(*scratch)); /* 2n chunks */
    if (order == NULL)
        own = heur_alloc(p->n * sizeof(*own));
    /* the runs: short and long position blocks, node blocks (at most n / ITREE_BLOCK + 1 per
     * level), the globals' */
    runs = malloc((2 * (p->n / PTREE_BLOCK) + p->n / ITREE_BLOCK + 2 * 34 + 5) * sizeof(*runs));
    if (scratch == NULL || (order == NULL && own == NULL) || runs == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    /* on failure, t is freed at out */
    if ((rc = ptree_init(&t, p, scratch, e)) != ERR_OK ||
        (rc = unions_alloc(&t, &globals, &all, e)) != ERR_OK)
        goto out;
    if (order == NULL) {
        sort_order(p, ord, own, scratch);
        order = own;
    }
    align = p->alignment > 1 ? p->alignment / t.unit : p->alignment;
    for (size_t i = 0; i < p->n; i++) {
        const struct binfo *bi = &t.info[order[i]];
        const struct chunk *sorted;
        uint64_t off;
        size_t k;

        prefetch_ahead(&t, order, i);
        sorted = overlapping(&t, bi, &globals, &all, (struct chunk *)scratch, runs, &k);
        off = choose_offset(sorted, k, bi->size, align, fit);
        if (off + bi->size > top)
            top = off + bi->size;
        place(&t, order[i], off, &globals, &all);
        offsets[order[i]] = off * t.unit;
    }
    *peak = top * t.unit;
out:
    ptree_free(&t);
    free(globals.c);
    free(all.c);
    free(runs);
    free(own);
    free(scratch);
    return rc;
}
