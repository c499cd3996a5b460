/*
 * bfc.c - the BFC allocator model and its replay (bfc.h). Each rule names the function of
 * openxla/xla xla/tsl/framework/bfc_allocator.cc (or .h) it reproduces; the code is our
 * own. Chunks live in one array addressed by handle, as BFCAllocator::chunks_ does, with
 * a free list of unused handles (AllocateChunk / DeallocateChunk); a free chunk sits in
 * the ordered set of its bin (otree.h), keyed by (size, address) as Bin::ChunkComparator
 * orders it, so finding the best fit is one search per bin instead of XLA's scan.
 */
#include "planner/bfc.h"

#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/otree.h"

struct chunk {
    uint64_t addr, size;
    uint32_t prev, next; /* neighbours in the region (OTREE_NONE at its ends); next also
                          * links unused handles */
    uint32_t region;
    int8_t bin; /* -1: not in a bin (in use, or being split) */
    bool in_use;
};

struct region {
    uint64_t base, size;
    uint32_t first; /* the chunk at base: splits and merges keep the lower handle */
    size_t live;    /* chunks in use */
    bool held;      /* false once garbage-collected */
};

struct bfc {
    struct bfc_opts o;
    uint64_t max_internal;      /* max_internal_fragmentation_bytes_ */
    uint64_t curr_region_bytes; /* curr_region_allocation_bytes_ */
    struct chunk *ch;
    struct otree_node *nodes; /* bin membership, parallel to ch */
    uint32_t nch, chcap, unused;
    uint32_t bins[BFC_NUM_BINS];
    struct region *reg;
    size_t nreg, regcap;
    struct bfc_stats st;
};

/* RoundedBytes: up to a multiple of kMinAllocationSize. UINT64_MAX when that overflows
 * (such a request exceeds any limit and fails). */
static uint64_t rounded_bytes(uint64_t n)
{
    uint64_t r;

    return arith_round_up(n, BFC_MIN_ALLOCATION, &r) ? UINT64_MAX : r;
}

/* BinNumForSize (bfc_allocator.h): min(kNumBins - 1, floor(log2(max(bytes, 256) >> 8))),
 * so bin b holds sizes [256 << b, 256 << (b + 1)) and bin 20 everything from 256 MiB. */
static int bin_for_size(uint64_t bytes)
{
    uint64_t v = (bytes > BFC_MIN_ALLOCATION ? bytes : BFC_MIN_ALLOCATION) >> 8;
    int b = 63 - __builtin_clzll(v);

    return b < BFC_NUM_BINS - 1 ? b : BFC_NUM_BINS - 1;
}

int bfc_new(const struct bfc_opts *o, struct bfc **out, struct err *e)
{
    struct bfc *a;

    *out = NULL;
    if (o->memory_limit == 0 || o->memory_limit > BFC_MAX_LIMIT)
        return err_set(e, ERR_INVALID, "memory_limit",
                       "memory_limit: must be from 1 to 2^62 bytes, got %llu",
                       (unsigned long long)o->memory_limit);
    if (!(o->fragmentation_fraction >= 0 && o->fragmentation_fraction <= 1))
        return err_set(e, ERR_INVALID, "fragmentation_fraction",
                       "fragmentation_fraction: must be from 0 to 1");
    if ((a = calloc(1, sizeof(*a))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    a->o = *o;
    /* The constructor: "If the user did not set a fraction, default to 128MB". */
    a->max_internal = o->fragmentation_fraction > 0
                          ? (uint64_t)(o->fragmentation_fraction * (double)o->memory_limit)
                          : BFC_MAX_INTERNAL;
    /* The constructor: with allow_growth the first region is RoundedBytes(min(total,
     * 2 MiB)); without, RoundedBytes(total). Nothing is reserved until the first Extend. */
    a->curr_region_bytes = rounded_bytes(
        o->allow_growth && o->memory_limit > BFC_GROWTH_FIRST ? BFC_GROWTH_FIRST : o->memory_limit);
    a->unused = OTREE_NONE;
    for (int b = 0; b < BFC_NUM_BINS; b++)
        a->bins[b] = OTREE_NONE;
    *out = a;
    return ERR_OK;
}

void bfc_destroy(struct bfc *a)
{
    if (a == NULL)
        return;
    free(a->ch);
    free(a->nodes);
    free(a->reg);
    free(a);
}

/* AllocateChunk: an unused handle, else a new one (the arrays grow by doubling). */
static int chunk_new(struct bfc *a, uint32_t *h)
{
    if (a->unused != OTREE_NONE) {
        *h = a->unused;
        a->unused = a->ch[*h].next;
        return ERR_OK;
    }
    if (a->nch == a->chcap) {
        uint32_t cap = a->chcap ? a->chcap * 2 : 64;
        struct chunk *c;
        struct otree_node *nd;
        if (a->chcap >= UINT32_MAX / 4)
            return ERR_LIMIT;
        if ((c = realloc(a->ch, cap * sizeof(*c))) == NULL)
            return ERR_NOMEM;
        a->ch = c;
        if ((nd = realloc(a->nodes, cap * sizeof(*nd))) == NULL)
            return ERR_NOMEM;
        a->nodes = nd;
        a->chcap = cap;
    }
    *h = a->nch++;
    return ERR_OK;
}

/* DeleteChunk / DeallocateChunk: the handle goes back to the unused list. */
static void chunk_delete(struct bfc *a, uint32_t h)
{
    a->ch[h].next = a->unused;
    a->unused = h;
}

/* InsertFreeChunk: into the bin of its size, ordered by (size, address). */
static void bin_insert(struct bfc *a, uint32_t h)
{
    struct chunk *c = &a->ch[h];

    c->bin = (int8_t)bin_for_size(c->size);
    a->nodes[h].k1 = c->size;
    a->nodes[h].k2 = c->addr;
    otree_insert(a->nodes, &a->bins[c->bin], h);
}

/* RemoveFreeChunkFromBin. */
static void bin_remove(struct bfc *a, uint32_t h)
{
    otree_erase(a->nodes, &a->bins[a->ch[h].bin], h);
    a->ch[h].bin = -1;
}

/* SplitChunk: h keeps its first n bytes; the rest becomes a new free chunk after it. */
static int split_chunk(struct bfc *a, uint32_t h, uint64_t n)
{
    uint32_t nh, nb;
    int rc = chunk_new(a, &nh);

    if (rc != ERR_OK)
        return rc;
    nb = a->ch[h].next;
    a->ch[nh] =
        (struct chunk){a->ch[h].addr + n, a->ch[h].size - n, h, nb, a->ch[h].region, -1, false};
    a->ch[h].size = n;
    a->ch[h].next = nh;
    if (nb != OTREE_NONE)
        a->ch[nb].prev = nh;
    bin_insert(a, nh);
    return ERR_OK;
}

/* MergeChunks: h2 (the next chunk after h1, both free and out of their bins) into h1. */
static void merge_chunks(struct bfc *a, uint32_t h1, uint32_t h2)
{
    uint32_t h3 = a->ch[h2].next;

    a->ch[h1].next = h3;
    if (h3 != OTREE_NONE)
        a->ch[h3].prev = h1;
    a->ch[h1].size += a->ch[h2].size;
    chunk_delete(a, h2);
}

/* TryToCoalesce: merge a free next neighbour into h, then h into a free previous one.
 * Returns the surviving chunk (not yet in a bin). */
static uint32_t coalesce(struct bfc *a, uint32_t h)
{
    uint32_t n = a->ch[h].next, p = a->ch[h].prev;

    if (n != OTREE_NONE && !a->ch[n].in_use) {
        bin_remove(a, n);
        merge_chunks(a, h, n);
    }
    if (p != OTREE_NONE && !a->ch[p].in_use) {
        bin_remove(a, p);
        merge_chunks(a, p, h);
        h = p;
    }
    return h;
}

/* ShouldSplitChunk (non-partitioned, no alignment prefix): split when the chunk is at
 * least twice the rounded request, or keeping it whole would waste at least
 * max_internal_fragmentation_bytes_. */
static bool should_split(const struct bfc *a, uint64_t size, uint64_t rounded)
{
    return size >= 2 * rounded || size - rounded >= a->max_internal;
}

/* FindChunkPtr / FindTaggedChunkPtr with allocation_end kLower: from the request's bin
 * upwards, the first chunk (in (size, address) order) of size >= rounded, then
 * AllocateChunkFromLowEnd and FinishChunkAllocation. Every address is a multiple of 256,
 * so the alignment padding LowEndAlignmentPadding would split off is always 0.
 * ERR_INFEASIBLE when no chunk fits. */
static int find_chunk(struct bfc *a, uint64_t rounded, struct bfc_block *blk)
{
    for (int b = bin_for_size(rounded); b < BFC_NUM_BINS; b++) {
        uint32_t h = otree_ceil(a->nodes, a->bins[b], rounded, 0);
        struct chunk *c;
        int rc;
        if (h == OTREE_NONE)
            continue;
        bin_remove(a, h);
        if (should_split(a, a->ch[h].size, rounded) &&
            (rc = split_chunk(a, h, rounded)) != ERR_OK) {
            bin_insert(a, h);
            return rc;
        }
        c = &a->ch[h];
        c->in_use = true;
        a->reg[c->region].live++;
        a->st.num_allocs++;
        a->st.in_use += c->size; /* bytes_in_use counts the whole chunk */
        if (a->st.in_use > a->st.peak_in_use)
            a->st.peak_in_use = a->st.in_use;
        *blk = (struct bfc_block){h, c->addr, c->size};
        return ERR_OK;
    }
    return ERR_INFEASIBLE;
}

/* The end of the highest region still held: where a new one is placed. */
static uint64_t next_base(const struct bfc *a)
{
    uint64_t top = 0;

    for (size_t r = 0; r < a->nreg; r++)
        if (a->reg[r].held && a->reg[r].base + a->reg[r].size > top)
            top = a->reg[r].base + a->reg[r].size;
    return top;
}

/* Adds a region of bytes and its one free chunk (AddAllocationRegion: the GPU
 * sub-allocator does not coalesce, so a region never extends another). */
static int add_region(struct bfc *a, uint64_t bytes)
{
    uint32_t h;
    int rc;

    if (a->nreg == a->regcap) {
        size_t cap = a->regcap ? a->regcap * 2 : 8;
        struct region *r = realloc(a->reg, cap * sizeof(*r));
        if (r == NULL)
            return ERR_NOMEM;
        a->reg = r;
        a->regcap = cap;
    }
    if ((rc = chunk_new(a, &h)) != ERR_OK)
        return rc;
    a->reg[a->nreg] = (struct region){next_base(a), bytes, h, 0, true};
    a->ch[h] = (struct chunk){a->reg[a->nreg].base, bytes, OTREE_NONE, OTREE_NONE,
                              (uint32_t)a->nreg,    -1,    false};
    a->nreg++;
    bin_insert(a, h); /* TryToCoalesce finds no neighbour in a new region */
    a->st.reserved += bytes;
    if (a->st.reserved > a->st.peak_reserved)
        a->st.peak_reserved = a->st.reserved;
    a->st.regions++;
    a->st.extends++;
    return ERR_OK;
}

/*
 * Extend: fail when the rounded request exceeds what the limit leaves (rounded down to
 * 256); double curr_region_allocation_bytes_ until it covers the request; take
 * min(that, what is left); and when no doubling was needed, double it for next time.
 * The sub-allocator is assumed to succeed, so the 0.9 back-off never runs.
 * ERR_INFEASIBLE when it cannot grow.
 */
static int extend(struct bfc *a, uint64_t rounded)
{
    uint64_t avail = (a->o.memory_limit - a->st.reserved) / BFC_MIN_ALLOCATION * BFC_MIN_ALLOCATION;
    bool increased = false;
    uint64_t bytes;
    int rc;

    if (rounded > avail)
        return ERR_INFEASIBLE;
    while (rounded > a->curr_region_bytes) {
        a->curr_region_bytes *= 2; /* rounded <= 2^62: no overflow */
        increased = true;
    }
    bytes = a->curr_region_bytes < avail ? a->curr_region_bytes : avail;
    if ((rc = add_region(a, bytes)) != ERR_OK)
        return rc;
    if (!increased && a->curr_region_bytes <= UINT64_MAX / 2)
        a->curr_region_bytes *= 2;
    return ERR_OK;
}

/* DeallocateFreeRegions: with garbage collection on, give back every region with no
 * chunk in use, when that plus the unreserved bytes could hold the request. */
static bool collect_regions(struct bfc *a, uint64_t rounded)
{
    uint64_t free_regions = 0;

    if (!a->o.garbage_collection)
        return false;
    for (size_t r = 0; r < a->nreg; r++)
        if (a->reg[r].held && a->reg[r].live == 0)
            free_regions += a->reg[r].size;
    if (free_regions == 0 || rounded > a->o.memory_limit - a->st.reserved + free_regions)
        return false;
    for (size_t r = 0; r < a->nreg; r++) {
        struct region *g = &a->reg[r];
        if (!g->held || g->live != 0)
            continue;
        /* Free neighbours are always merged: the region is one free chunk. */
        bin_remove(a, g->first);
        chunk_delete(a, g->first);
        a->st.reserved -= g->size;
        a->st.regions--;
        g->held = false;
    }
    return true;
}

int bfc_alloc(struct bfc *a, uint64_t num_bytes, struct bfc_block *blk, struct err *e)
{
    uint64_t rounded = rounded_bytes(num_bytes);
    int rc;

    if (num_bytes == 0)
        return err_set(e, ERR_INVALID, "", "bfc_alloc: 0 bytes (AllocateRaw returns null)");
    /* AllocateRawInternal: find a chunk; else Extend and find again; else collect free
     * regions, Extend and find again; else out of memory. */
    rc = find_chunk(a, rounded, blk);
    if (rc == ERR_INFEASIBLE && (rc = extend(a, rounded)) == ERR_OK)
        rc = find_chunk(a, rounded, blk);
    if (rc == ERR_INFEASIBLE && collect_regions(a, rounded) && (rc = extend(a, rounded)) == ERR_OK)
        rc = find_chunk(a, rounded, blk);
    if (rc == ERR_NOMEM || rc == ERR_LIMIT)
        return err_set(e, rc, "", "out of memory for the allocator model's %u chunks", a->nch);
    return rc;
}

void bfc_dealloc(struct bfc *a, uint32_t handle)
{
    struct chunk *c = &a->ch[handle];

    /* DeallocateRawInternal: MarkFree, then InsertFreeChunk(TryToCoalesce(h)). */
    c->in_use = false;
    a->st.in_use -= c->size;
    a->reg[c->region].live--;
    bin_insert(a, coalesce(a, handle));
}

/* LargestFreeChunk: the largest chunk of the highest non-empty bin. */
static uint64_t largest_free(const struct bfc *a)
{
    for (int b = BFC_NUM_BINS - 1; b >= 0; b--)
        if (a->bins[b] != OTREE_NONE)
            return a->ch[otree_max(a->nodes, a->bins[b])].size;
    return 0;
}

void bfc_get_stats(const struct bfc *a, struct bfc_stats *s)
{
    uint64_t avail = a->st.reserved - a->st.in_use;

    *s = a->st;
    s->largest_free = largest_free(a);
    /* GetFragmentation: (bytes_available - largest_free_chunk) / bytes_available with
     * bytes_available = pool_bytes - bytes_in_use; XLA divides 0 by 0 when nothing is
     * free, we say 0 (no free memory, none of it fragmented). */
    s->fragmentation = avail == 0 ? 0 : (double)(avail - s->largest_free) / (double)avail;
}

size_t bfc_chunks(const struct bfc *a, struct bfc_chunk_info *out, size_t cap)
{
    size_t k = 0;

    for (size_t r = 0; r < a->nreg; r++) {
        if (!a->reg[r].held)
            continue;
        for (uint32_t h = a->reg[r].first; h != OTREE_NONE; h = a->ch[h].next, k++)
            if (k < cap)
                out[k] = (struct bfc_chunk_info){a->ch[h].addr, a->ch[h].size, r, a->ch[h].in_use};
    }
    return k;
}

size_t bfc_region_sizes(const struct bfc *a, uint64_t *out, size_t cap)
{
    for (size_t r = 0; r < a->nreg && r < cap; r++)
        out[r] = a->reg[r].size;
    return a->nreg;
}
