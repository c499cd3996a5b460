/*
 * bfc.h - a model of XLA's runtime BFC ("best-fit with coalescing") allocator, and a
 * replay of a program's buffers through it.
 *
 * The static plan (pack.h) is what a compiler assigns before the program runs. A GPU-style
 * runtime instead asks an allocator for each buffer when it is needed and gives it back
 * when it dies; XLA's allocator for that is tsl::BFCAllocator (openxla/xla
 * xla/tsl/framework/bfc_allocator.{h,cc}, earlier tensorflow
 * core/common_runtime/bfc_allocator.cc; server/planner/SOURCES.md#bfc), which JAX uses on
 * GPU (xla/pjrt/gpu/gpu_helpers.cc CreateBFCAllocator; server/planner/SOURCES.md#jax-on-gpu).
 * It is
 * documented as GPU-only: this is not what the TPU compiler or runtime does.
 *
 * What is modelled, each rule citing the function it comes from in bfc.c:
 *   - requests rounded up to 256 bytes (RoundedBytes, kMinAllocationSize);
 *   - 21 bins of free chunks by size class, 256 << b (BinNumForSize), each ordered by
 *     size then address; a request takes the first chunk of size >= the rounded request,
 *     scanning from its own bin upwards (FindChunkPtr / FindTaggedChunkPtr): best fit,
 *     lowest address on ties;
 *   - the split rule: the chosen chunk is split when it is at least twice the rounded
 *     request or would waste at least 128 MiB (ShouldSplitChunk,
 *     max_internal_fragmentation_bytes_); otherwise the whole chunk is handed out and its
 *     excess is internal fragmentation counted in use;
 *   - a free chunk is merged with free neighbours at once (TryToCoalesce, MergeChunks);
 *   - memory from regions: one region of the whole limit (allow_growth = false, JAX's
 *     preallocation), or regions that grow from 2 MiB by doubling (Extend,
 *     curr_region_allocation_bytes_); regions never merge with each other (the GPU
 *     sub-allocator, DeviceMemAllocator, does not support coalescing);
 *   - optionally, garbage collection of wholly free regions before giving up
 *     (DeallocateFreeRegions; off in XLA's GPU client, whose Options leave it false);
 *   - statistics as AllocatorStats: bytes in use (chunk sizes), bytes reserved (pool
 *     bytes), the largest free chunk and GetFragmentation's
 *     (pool - in use - largest free) / (pool - in use).
 * Not modelled, because a sequential replay never reaches them: the retry that sleeps up to
 * 10 s for another thread to free memory (AllocateRawInternalWithRetry), timestamped
 * chunks (no timing counter is set), spatial partitioning and HoleSplitPolicy::kExact (not
 * enabled by the GPU client), and a sub-allocator that fails (the device is assumed to have
 * the limit free, so Extend never backs off).
 *
 * Addresses are offsets in a virtual space where regions are laid end to end in the order
 * they were created (the real ones come from cudaMalloc, anywhere); they only order chunks
 * of equal size and give the heap height.
 *
 * Pure computation: no I/O, no global state; all memory is bounded by the number of
 * chunks (at most twice the live allocations plus the regions).
 */
#ifndef TPUPLAN_BFC_H
#define TPUPLAN_BFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/pack.h"

#define BFC_MIN_ALLOCATION   256u                  /* kMinAllocationSize (bfc_allocator.h) */
#define BFC_NUM_BINS         21                    /* kNumBins */
#define BFC_GROWTH_FIRST     ((uint64_t)2 << 20)   /* the first region with allow_growth */
#define BFC_MAX_INTERNAL     ((uint64_t)128 << 20) /* split threshold, fraction 0 */
#define BFC_MAX_LIMIT        ((uint64_t)1 << 62)   /* bound on memory_limit: doublings fit */
#define BFC_DEFAULT_FRACTION 0.75 /* JAX's XLA_PYTHON_CLIENT_MEM_FRACTION default */
#define BFC_NOADDR           UINT64_MAX

struct bfc_opts {
    uint64_t memory_limit;         /* total_memory: bytes the allocator may hold, > 0 */
    bool allow_growth;             /* false: one region of the whole limit */
    bool garbage_collection;       /* Options::garbage_collection */
    double fragmentation_fraction; /* Options::fragmentation_fraction; 0: 128 MiB */
};

/* AllocatorStats, plus what a replay reports per step. */
struct bfc_stats {
    uint64_t in_use;       /* bytes_in_use: sizes of the chunks handed out */
    uint64_t reserved;     /* pool_bytes: sizes of the regions held */
    uint64_t largest_free; /* LargestFreeChunk */
    double fragmentation;  /* GetFragmentation; 0 when nothing is free (XLA: 0/0) */
    uint64_t peak_in_use, peak_reserved;
    size_t regions; /* regions held now */
    size_t extends; /* regions ever added */
    size_t num_allocs;
};

/* One allocation handed out: the chunk's handle (for bfc_dealloc), address and size. */
struct bfc_block {
    uint32_t handle;
    uint64_t addr;
    uint64_t size; /* the chunk's size: the rounded request, or more when not split */
};

/* One chunk, for inspection (bfc_chunks): in address order within each region. */
struct bfc_chunk_info {
    uint64_t addr, size;
    size_t region;
    bool in_use;
};

struct bfc; /* the allocator: bfc.c */

/* A new, empty allocator (no region yet: the first allocation reserves one, as Extend
 * does). *out is owned by the caller until bfc_destroy. ERR_INVALID names the bad option. */
ERR_MUST_CHECK int bfc_new(const struct bfc_opts *o, struct bfc **out, struct err *e);
void bfc_destroy(struct bfc *a);

/*
 * AllocateRaw(num_bytes > 0). ERR_OK with *blk filled; ERR_INFEASIBLE when the allocator
 * cannot serve it (an out-of-memory at run time: *blk untouched, the allocator unchanged
 * apart from garbage collection); ERR_NOMEM when the host runs out of memory for the
 * model's own bookkeeping.
 */
ERR_MUST_CHECK int bfc_alloc(struct bfc *a, uint64_t num_bytes, struct bfc_block *blk,
                             struct err *e);

/* DeallocateRaw of a block bfc_alloc handed out and not yet given back. */
void bfc_dealloc(struct bfc *a, uint32_t handle);

void bfc_get_stats(const struct bfc *a, struct bfc_stats *s);

/* Up to cap chunks, regions in creation order; returns how many chunks there are. */
size_t bfc_chunks(const struct bfc *a, struct bfc_chunk_info *out, size_t cap);

/* The sizes of the first cap regions ever added (garbage-collected ones included), in
 * order; returns how many were added. */
size_t bfc_region_sizes(const struct bfc *a, uint64_t *out, size_t cap);

/* ---- replay (bfc_replay.c) ---------------------------------------------------------- */

/* The first allocation that failed (or the first that failed with enough free bytes). */
struct bfc_failure {
    size_t buffer; /* index into the replayed buffers */
    int64_t step;
    uint64_t requested, rounded;
    uint64_t in_use, reserved, largest_free;
    uint64_t free_bytes;   /* memory_limit - in_use: held free or not yet reserved */
    bool with_free_memory; /* rounded <= free_bytes: fragmentation, not a lack of bytes */
};

#define BFC_REGIONS_LISTED 64

struct bfc_replay {
    /* per segment: the state after every free and allocation at steps[k] */
    size_t nsteps;
    int64_t *steps;
    uint64_t *in_use, *reserved, *largest_free;
    uint64_t *heap_top; /* highest address + size of a chunk in use */
    double *fragmentation;
    /* per buffer: where it went (BFC_NOADDR when its allocation failed) */
    uint64_t *addr, *chunk_bytes;
    /* totals */
    uint64_t peak_in_use, peak_reserved, peak_heap;
    size_t regions;                            /* regions added */
    uint64_t region_bytes[BFC_REGIONS_LISTED]; /* the first ones' sizes */
    size_t failed;
    bool have_failure, have_free_failure;
    struct bfc_failure first_failure, first_free_failure;
};

/*
 * Replays bufs (sizes are what the program asks for, before BFC's rounding) in program
 * order: at each step, first every buffer whose lifetime ends there is freed, then every
 * buffer whose lifetime starts there is allocated, each group in index order (lifetimes
 * are half-open, so a buffer ending at step s and one starting at s may share memory, as in
 * the static plan). A failed allocation is recorded and the replay goes on without that
 * buffer (its free is skipped): what follows the first failure is indicative only.
 * O(n log n) time (sorting, and a bin operation per event), O(n) memory. *out is owned by
 * the caller until bfc_replay_free, on success only.
 */
ERR_MUST_CHECK int bfc_replay_run(const struct pack_buffer *bufs, size_t n,
                                  const struct bfc_opts *o, struct bfc_replay *out, struct err *e);
void bfc_replay_free(struct bfc_replay *r);

#endif
