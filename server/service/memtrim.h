/*
 * memtrim.h - when freed memory goes back to the kernel.
 *
 * Jobs and requests are small as a rule: a few MB parsed, planned and freed. Giving that
 * back after each one and faulting it in again costs more than the work (main.c measured
 * it), so the allocator keeps freed memory (memtrim_init). A large one (a 1,000,000-tensor
 * plan: about 1 KB a tensor in its model, packing and result; a diff of two such plans,
 * 2 GB) would then stay resident: glibc gives a thread arena's free top back only when a
 * large free finds it above M_TRIM_THRESHOLD, and malloc_trim leaves thread arenas' tops
 * alone. With 64 MiB kept per arena, two 1,000,000-tensor jobs left 244 MB, a few large
 * reads 150 MB (on an 8 MB idle server).
 *
 * The bound: any arena's free top above MEMTRIM_THRESHOLD goes back when it frees a large
 * block, and a thread that did large work (memtrim_release) keeps at most MEMTRIM_KEEP. So
 * RSS after large work is within the live data (the plan cache, --cache-bytes) plus a few
 * MiB a thread and the buffers of each database connection below STORE_SHED_BYTES
 * (store.h) of its idle level. tests/integration/heavy.sh checks it.
 */
#ifndef TPUPLAN_MEMTRIM_H
#define TPUPLAN_MEMTRIM_H

/* Freed memory kept for the next job: blocks below MEMTRIM_MMAP_THRESHOLD come from the
 * arenas (larger ones are mmap'd, and unmapped when freed), and an arena's free top above
 * MEMTRIM_THRESHOLD is given back (a 1,000-tensor job uses about 1 MB). */
#define MEMTRIM_MMAP_THRESHOLD (32u << 20)
#define MEMTRIM_THRESHOLD      (8u << 20)

/* What an arena keeps free after memtrim_release: its top below this. */
#define MEMTRIM_KEEP (1u << 20)

/* Work from this size on is large: memtrim_release after it (a body, a job's input). */
#define MEMTRIM_LARGE (1u << 20)

/* Sets the thresholds above; once, before any thread starts. */
void memtrim_init(void);

/* Gives back the free memory of the calling thread's arena (its free heaps, its top above
 * MEMTRIM_KEEP) and the free pages inside every arena (malloc_trim). For a thread that has
 * just freed the memory of a large job or request; a few ms. Any thread; serialised. */
void memtrim_release(void);

#endif
