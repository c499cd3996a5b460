/*
 * test_bfc.c - the BFC allocator model (bfc.h) against sequences traced by hand from the
 * rules of openxla/xla bfc_allocator.cc (each step's chunk offsets and sizes are worked
 * out in the comments), its invariants on a random workload, and the program-order replay.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/bfc.h"
#include "planner/otree.h"
#include "planner/pack.h"
#include "rng.h"

#define KiB ((uint64_t)1 << 10)
#define MiB ((uint64_t)1 << 20)

static struct bfc *make(uint64_t limit, bool growth, bool gc)
{
    struct bfc_opts o = {limit, growth, gc, 0};
    struct bfc *a = NULL;
    struct err e;

    assert_int_equal(bfc_new(&o, &a, &e), ERR_OK);
    return a;
}

/* Allocates n bytes; checks the chunk's address and size. */
static uint32_t take(struct bfc *a, uint64_t n, uint64_t addr, uint64_t size)
{
    struct bfc_block b;
    struct err e;

    assert_int_equal(bfc_alloc(a, n, &b, &e), ERR_OK);
    assert_int_equal(b.addr, addr);
    assert_int_equal(b.size, size);
    return b.handle;
}

/* The chunks, as a string "addr+size[u]" per chunk ("u": in use), regions split by "|". */
static const char *layout(const struct bfc *a)
{
    static char buf[1024];
    struct bfc_chunk_info c[32];
    size_t n = bfc_chunks(a, c, 32), len = 0;

    assert_true(n <= 32);
    buf[0] = '\0';
    for (size_t k = 0; k < n; k++)
        len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%llu+%llu%s",
                                k == 0 ? "" : (c[k].region != c[k - 1].region ? " | " : " "),
                                (unsigned long long)c[k].addr, (unsigned long long)c[k].size,
                                c[k].in_use ? "u" : "");
    return buf;
}

static void test_bad_options_and_requests_are_refused(void **state)
{
    struct bfc_opts o = {0, false, false, 0};
    struct bfc *a = NULL;
    struct bfc_block b;
    struct err e;

    (void)state;
    assert_int_equal(bfc_new(&o, &a, &e), ERR_INVALID);
    assert_string_equal(e.where, "memory_limit");
    o.memory_limit = BFC_MAX_LIMIT + 1;
    assert_int_equal(bfc_new(&o, &a, &e), ERR_INVALID);
    o.memory_limit = MiB;
    o.fragmentation_fraction = 1.5;
    assert_int_equal(bfc_new(&o, &a, &e), ERR_INVALID);
    assert_string_equal(e.where, "fragmentation_fraction");
    assert_null(a);
    a = make(MiB, false, false);
    assert_int_equal(bfc_alloc(a, 0, &b, &e), ERR_INVALID);
    /* A request that overflows the 256-byte rounding fails like any request over the
     * limit: an out-of-memory, not a crash. */
    assert_int_equal(bfc_alloc(a, UINT64_MAX, &b, &e), ERR_INFEASIBLE);
    assert_int_equal(bfc_alloc(a, MiB + 1, &b, &e), ERR_INFEASIBLE);
    bfc_destroy(a);
}

/*
 * Split and coalesce, 1 MiB preallocated (allow_growth false).
 * The first request finds no region: Extend reserves min(RoundedBytes(1048576),
 * 1048576 rounded down to 256) = 1048576 bytes at 0, one free chunk in bin
 * log2(1048576 >> 8) = 12. 1000 rounds to 1024; the chunk is >= 2 x 1024, so it splits:
 * A = 0+1024, free 1024+1047552.
 */
static void test_requests_split_chunks_and_frees_coalesce(void **state)
{
    struct bfc *a = make(MiB, false, false);
    struct bfc_stats s;
    uint32_t A, B, C;

    (void)state;
    A = take(a, 1000, 0, 1024);
    B = take(a, 3000, 1024, 3072); /* 3000 -> 3072, from the tail: 4096+1044480 left */
    C = take(a, 1, 4096, 256);     /* 1 -> 256 (kMinAllocationSize) */
    assert_string_equal(layout(a), "0+1024u 1024+3072u 4096+256u 4352+1044224");
    bfc_get_stats(a, &s);
    /* in use 1024 + 3072 + 256 = 4352; one free chunk: fragmentation 0 */
    assert_int_equal(s.in_use, 4352);
    assert_int_equal(s.reserved, MiB);
    assert_int_equal(s.largest_free, MiB - 4352);
    assert_true(s.fragmentation == 0);
    assert_int_equal(s.regions, 1);

    /* B's neighbours are in use: it stays a free chunk of its own. Free 1047296 bytes,
     * largest 1044224: fragmentation (1047296 - 1044224) / 1047296 = 3072 / 1047296. */
    bfc_dealloc(a, B);
    assert_string_equal(layout(a), "0+1024u 1024+3072 4096+256u 4352+1044224");
    bfc_get_stats(a, &s);
    assert_true(s.fragmentation == 3072.0 / 1047296.0);
    /* A merges its free next neighbour B: 0+4096. */
    bfc_dealloc(a, A);
    assert_string_equal(layout(a), "0+4096 4096+256u 4352+1044224");
    /* C merges its next (the tail) and then into its previous: one chunk again. */
    bfc_dealloc(a, C);
    assert_string_equal(layout(a), "0+1048576");
    bfc_get_stats(a, &s);
    assert_int_equal(s.in_use, 0);
    assert_int_equal(s.largest_free, MiB);
    assert_int_equal(s.peak_in_use, 4352);
    assert_int_equal(s.num_allocs, 3);
    bfc_destroy(a);
}

/*
 * Best fit and the split rule, 1 MiB preallocated. After A 0+4096, B 4096+256, C 4352+8192,
 * D 12544+256 and freeing A and C, the free chunks are 0+4096 (bin 4), 4352+8192 (bin 5)
 * and the tail 12800+1035776 (bin 11).
 *  - 3000 -> 3072 scans from bin log2(3072 >> 8) = 3: bin 4 holds 4096 >= 3072, the best
 *    fit. 4096 < 2 x 3072 and 4096 - 3072 = 1024 < 128 MiB: not split; the chunk goes out
 *    whole (1024 bytes of internal fragmentation, counted in use).
 *  - 4096 scans from bin 4 (now empty): bin 5's 8192 = 2 x 4096 splits: 4352+4096, and
 *    8448+4096 goes back free.
 */
static void test_best_fit_splits_chunks_of_twice_the_request(void **state)
{
    struct bfc *a = make(MiB, false, false);
    struct bfc_stats s;
    uint32_t A, C;

    (void)state;
    A = take(a, 4096, 0, 4096);
    take(a, 256, 4096, 256);
    C = take(a, 8192, 4352, 8192);
    take(a, 256, 12544, 256);
    bfc_dealloc(a, A);
    bfc_dealloc(a, C);
    assert_string_equal(layout(a), "0+4096 4096+256u 4352+8192 12544+256u 12800+1035776");
    take(a, 3000, 0, 4096);
    take(a, 4096, 4352, 4096);
    assert_string_equal(layout(a),
                        "0+4096u 4096+256u 4352+4096u 8448+4096 12544+256u 12800+1035776");
    bfc_get_stats(a, &s);
    assert_int_equal(s.in_use, 4096 + 256 + 4096 + 256);
    /* an exact fit in bin 4 (8448+4096) before the tail */
    take(a, 4096, 8448, 4096);
    bfc_destroy(a);
}

/*
 * The 128 MiB rule, 1 GiB preallocated. 600 MiB (629145600) from the 1 GiB chunk: not
 * twice, but 1073741824 - 629145600 = 444596224 >= 134217728, so it splits. Then 300 MiB
 * (314572800) from the 444596224 left: 444596224 - 314572800 = 130023424 < 128 MiB and not
 * twice: the whole chunk goes out. With fragmentation_fraction 0.1 the threshold is
 * 0.1 x 2^30 = 107374182 bytes, below 130023424: it splits.
 */
static void test_chunk_splits_when_its_rest_reaches_128_mib(void **state)
{
    struct bfc_opts o = {(uint64_t)1 << 30, false, false, 0.1};
    struct bfc *a = make((uint64_t)1 << 30, false, false);
    struct bfc_stats s;
    struct err e;

    (void)state;
    take(a, 600 * MiB, 0, 629145600);
    take(a, 300 * MiB, 629145600, 444596224);
    bfc_get_stats(a, &s);
    assert_int_equal(s.in_use, (uint64_t)1 << 30);
    assert_int_equal(s.largest_free, 0);
    assert_true(s.fragmentation == 0); /* nothing free: 0, where XLA divides 0 by 0 */
    bfc_destroy(a);

    assert_int_equal(bfc_new(&o, &a, &e), ERR_OK);
    take(a, 600 * MiB, 0, 629145600);
    take(a, 300 * MiB, 629145600, 314572800);
    assert_string_equal(layout(a), "0+629145600u 629145600+314572800u 943718400+130023424");
    bfc_destroy(a);
}

/*
 * Growth, and an out-of-memory with free bytes, 16 MiB with allow_growth. The first region
 * is RoundedBytes(min(16 MiB, 2 MiB)) = 2 MiB; each Extend that needed no doubling doubles
 * curr_region_allocation_bytes_ for the next one.
 *  - 1 MiB: Extend adds region 0 = 2 MiB at 0 (next: 4 MiB); split: A 0+1 MiB.
 *  - 1.5 MiB: the free 1 MiB is too small; region 1 = 4 MiB at 2 MiB (next: 8 MiB);
 *    B 2 MiB+1.5 MiB, free 3.5 MiB+2.5 MiB.
 *  - 9 MiB: 9 > 8 MiB doubles to 16 MiB; min(16, 16 - 6 left) = region 2 = 10 MiB at 6 MiB;
 *    10 < 18 and 1 MiB < 128 MiB: not split, C takes all 10 MiB.
 *  - 2 MiB: best fit is the 2.5 MiB chunk, not split (2.5 < 4, 0.5 MiB wasted): D.
 *  - 512 KiB: the 1 MiB chunk, split (1 MiB >= 2 x 512 KiB): E 1 MiB+512 KiB.
 *  - free A: 0+1 MiB has E in use after it: no merge. Free: 1 MiB + 0.5 MiB; in use
 *    16 - 1.5 = 14.5 MiB, reserved 16 MiB = the limit.
 *  - 1.5 MiB: no chunk fits, Extend has 0 bytes left: out of memory although
 *    limit - in use = 1.5 MiB is free. Fragmentation (1.5 - 1) / 1.5 = 1/3.
 */
static void test_regions_double_until_oom_with_bytes_free(void **state)
{
    struct bfc *a = make(16 * MiB, true, false);
    struct bfc_stats s;
    struct bfc_block b;
    struct err e;
    uint64_t regions[4];
    uint32_t A;

    (void)state;
    A = take(a, MiB, 0, MiB);
    take(a, 3 * MiB / 2, 2 * MiB, 3 * MiB / 2);
    take(a, 9 * MiB, 6 * MiB, 10 * MiB);
    take(a, 2 * MiB, 7 * MiB / 2, 5 * MiB / 2);
    take(a, 512 * KiB, MiB, 512 * KiB);
    assert_int_equal(bfc_region_sizes(a, regions, 4), 3);
    assert_int_equal(regions[0], 2 * MiB);
    assert_int_equal(regions[1], 4 * MiB);
    assert_int_equal(regions[2], 10 * MiB);
    bfc_dealloc(a, A);
    assert_string_equal(layout(a), "0+1048576 1048576+524288u 1572864+524288 | "
                                   "2097152+1572864u 3670016+2621440u | 6291456+10485760u");
    assert_int_equal(bfc_alloc(a, 3 * MiB / 2, &b, &e), ERR_INFEASIBLE);
    bfc_get_stats(a, &s);
    assert_int_equal(s.in_use, 29 * MiB / 2);
    assert_int_equal(s.reserved, 16 * MiB);
    assert_int_equal(s.peak_reserved, 16 * MiB);
    assert_int_equal(s.largest_free, MiB);
    assert_true(s.fragmentation == (1.5 - 1.0) / 1.5);
    assert_int_equal(s.regions, 3);
    bfc_destroy(a);
}

/*
 * Out of memory with free bytes in one preallocated region: 4096 bytes, four 1024-byte
 * requests. 4096 splits (>= 2048): 0+1024; 3072 splits: 1024+1024; 2048 splits (= 2 x
 * 1024): 2048+1024; the last 1024 is taken whole: 3072+1024. Freeing the first and the
 * third leaves 2048 bytes free in two 1024-byte holes: 2048 bytes cannot be allocated.
 */
static void test_preallocated_region_fails_between_free_holes(void **state)
{
    struct bfc *a = make(4096, false, false);
    struct bfc_stats s;
    struct bfc_block b;
    struct err e;
    uint32_t h[4];

    (void)state;
    for (int k = 0; k < 4; k++)
        h[k] = take(a, 1024, 1024 * (uint64_t)k, 1024);
    assert_int_equal(bfc_alloc(a, 1, &b, &e), ERR_INFEASIBLE); /* full: no free bytes */
    bfc_dealloc(a, h[0]);
    bfc_dealloc(a, h[2]);
    assert_int_equal(bfc_alloc(a, 2048, &b, &e), ERR_INFEASIBLE);
    bfc_get_stats(a, &s);
    assert_int_equal(s.reserved - s.in_use, 2048);
    assert_int_equal(s.largest_free, 1024);
    assert_true(s.fragmentation == 0.5);
    /* two free chunks of 1024: equal sizes go by address, so 0 before 2048 */
    bfc_dealloc(a, take(a, 1024, 0, 1024));
    assert_int_equal(s.extends, 1); /* a preallocated allocator never grows */
    /* freeing the second merges all three: 0+3072 */
    bfc_dealloc(a, h[1]);
    assert_string_equal(layout(a), "0+3072 3072+1024u");
    take(a, 2048, 0, 3072); /* 3072 < 2 x 2048: whole */
    bfc_destroy(a);
}

/*
 * Garbage collection (DeallocateFreeRegions), 8 MiB with growth: region 0 = 2 MiB holds A
 * whole (2 MiB < 2 x 2 MiB); B needs region 1 = 4 MiB at 2 MiB (next 8 MiB), split
 * 2 MiB+2 MiB. Free A: region 0 is wholly free. 3 MiB fits no chunk and Extend has only
 * 8 - 6 = 2 MiB left. Without garbage collection that is an out-of-memory; with it, region 0
 * goes back (reserved 4 MiB, 4 MiB left) and Extend adds min(8, 4) = 4 MiB at 6 MiB (the
 * end of the highest region held), taken whole (4 < 6).
 */
static void test_garbage_collection_frees_regions_for_extend(void **state)
{
    struct bfc *a;
    struct bfc_stats s;
    struct bfc_block b;
    struct err e;

    (void)state;
    for (int gc = 0; gc < 2; gc++) {
        a = make(8 * MiB, true, gc);
        uint32_t A = take(a, 2 * MiB, 0, 2 * MiB);
        take(a, 2 * MiB, 2 * MiB, 2 * MiB);
        bfc_dealloc(a, A);
        if (!gc) {
            assert_int_equal(bfc_alloc(a, 3 * MiB, &b, &e), ERR_INFEASIBLE);
            bfc_destroy(a);
            continue;
        }
        take(a, 3 * MiB, 6 * MiB, 4 * MiB);
        bfc_get_stats(a, &s);
        assert_int_equal(s.reserved, 8 * MiB);
        assert_int_equal(s.regions, 2);
        assert_int_equal(s.extends, 3);
        assert_int_equal(s.peak_reserved, 8 * MiB);
        assert_string_equal(layout(a), "2097152+2097152u 4194304+2097152 | 6291456+4194304u");
        bfc_destroy(a);
    }
}

/* Walks the chunks and checks what must always hold: regions are covered without gaps,
 * no two free chunks are neighbours (coalescing), in use <= reserved, and the stats agree
 * with the chunks. */
static void check_invariants(const struct bfc *a)
{
    static struct bfc_chunk_info c[4096];
    struct bfc_stats s;
    size_t n = bfc_chunks(a, c, 4096);
    uint64_t used = 0, all = 0, big = 0;

    assert_true(n <= 4096);
    bfc_get_stats(a, &s);
    for (size_t k = 0; k < n; k++) {
        bool same = k > 0 && c[k].region == c[k - 1].region;
        if (same) {
            assert_int_equal(c[k].addr, c[k - 1].addr + c[k - 1].size);
            assert_false(!c[k].in_use && !c[k - 1].in_use);
        }
        assert_int_equal(c[k].addr % BFC_MIN_ALLOCATION, 0);
        assert_int_equal(c[k].size % BFC_MIN_ALLOCATION, 0);
        all += c[k].size;
        if (c[k].in_use)
            used += c[k].size;
        else if (c[k].size > big)
            big = c[k].size;
    }
    assert_int_equal(used, s.in_use);
    assert_int_equal(all, s.reserved);
    assert_int_equal(big, s.largest_free);
    assert_true(s.in_use <= s.reserved);
    assert_true(s.reserved <= 64 * MiB);
    assert_true(s.fragmentation >= 0 && s.fragmentation <= 1);
}

/* Random allocations and frees under both region policies: the invariants after every
 * operation, and no two blocks in use overlap. */
static void test_random_requests_keep_invariants_and_blocks_apart(void **state)
{
    (void)state;
    for (int growth = 0; growth < 2; growth++) {
        struct bfc *a = make(64 * MiB, growth, growth);
        struct bfc_block live[512];
        size_t nlive = 0, fails = 0;
        uint64_t x = 12345 + (uint64_t)growth;
        struct err e;

        for (int op = 0; op < 20000; op++) {
            if (nlive > 0 && (nlive == 512 || rng_lcg64(&x) % 2 == 0)) {
                size_t k = rng_lcg64(&x) % nlive;
                bfc_dealloc(a, live[k].handle);
                live[k] = live[--nlive];
            } else {
                uint64_t n = 1 + rng_lcg64(&x) % (rng_lcg64(&x) % 8 == 0 ? 4 * MiB : 64 * KiB);
                int rc = bfc_alloc(a, n, &live[nlive], &e);
                assert_true(rc == ERR_OK || rc == ERR_INFEASIBLE);
                if (rc == ERR_OK) {
                    assert_true(live[nlive].size >= n);
                    nlive++;
                } else {
                    fails++;
                }
            }
            if (op % 97 == 0) {
                check_invariants(a);
                for (size_t i = 0; i < nlive; i++)
                    for (size_t j = i + 1; j < nlive; j++)
                        assert_true(live[i].addr + live[i].size <= live[j].addr ||
                                    live[j].addr + live[j].size <= live[i].addr);
            }
        }
        assert_true(fails > 0); /* the workload does reach the limit */
        while (nlive > 0)
            bfc_dealloc(a, live[--nlive].handle);
        check_invariants(a);
        bfc_destroy(a);
    }
}

/*
 * The replay: frees before allocations at a step. x [0,2) and y [2,4) are 1000 bytes
 * (1024 rounded); y reuses x's chunk at 0 because x is freed first at step 2. z [1,3)
 * of 256 goes to 1024. Segments: steps 0, 1, 2, 3, 4 (every distinct bound).
 *   step 0: x 0+1024                      in use 1024, heap 1024
 *   step 1: z 1024+256                    in use 1280, heap 1280
 *   step 2: x freed (0+1024 free), y 0+1024  in use 1280, heap 1280
 *   step 3: z freed, merges the tail      in use 1024, heap 1024
 *   step 4: y freed                       in use 0
 */
static void test_replay_frees_before_allocating_at_a_step(void **state)
{
    const struct pack_buffer b[3] = {{0, 2, 1000}, {2, 4, 1000}, {1, 3, 256}};
    const int64_t steps[5] = {0, 1, 2, 3, 4};
    const uint64_t in_use[5] = {1024, 1280, 1280, 1024, 0};
    const uint64_t heap[5] = {1024, 1280, 1280, 1024, 0};
    struct bfc_opts o = {MiB, false, false, 0};
    struct pack_problem p = {3, b, 0, 0};
    struct bfc_replay r;
    struct pack_metrics mt;
    uint64_t offsets[3] = {0, 0, 1024};
    struct err e;

    (void)state;
    assert_int_equal(bfc_replay_run(b, 3, &o, &r, &e), ERR_OK);
    assert_int_equal(r.nsteps, 5);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(r.steps[k], steps[k]);
        assert_int_equal(r.in_use[k], in_use[k]);
        assert_int_equal(r.heap_top[k], heap[k]);
        assert_int_equal(r.reserved[k], MiB);
    }
    assert_int_equal(r.addr[0], 0);
    assert_int_equal(r.addr[1], 0);
    assert_int_equal(r.addr[2], 1024);
    assert_int_equal(r.chunk_bytes[2], 256);
    assert_int_equal(r.peak_in_use, 1280);
    assert_int_equal(r.peak_heap, 1280);
    assert_int_equal(r.peak_reserved, MiB);
    assert_int_equal(r.regions, 1);
    assert_int_equal(r.region_bytes[0], MiB);
    assert_int_equal(r.failed, 0);
    assert_false(r.have_failure);
    /* the static metrics have the same segments, entry for entry */
    assert_int_equal(pack_metrics_compute(&p, offsets, &mt, &e), ERR_OK);
    assert_int_equal(mt.nsteps, r.nsteps);
    for (size_t k = 0; k < mt.nsteps; k++)
        assert_int_equal(mt.steps[k], r.steps[k]);
    pack_metrics_free(&mt);
    bfc_replay_free(&r);
}

/*
 * Failures in a replay over 4096 preallocated bytes: four 1024-byte buffers, the first
 * and third dying at step 1, then a 2048-byte one at step 1 (two 1024 holes: fails with
 * 2048 free) and a 5000-byte one at step 2 (fails, only 2048 free). The first failure is
 * also the first with free memory; both are counted.
 */
static void test_replay_counts_failures_and_those_with_bytes_free(void **state)
{
    const struct pack_buffer b[6] = {{0, 1, 1024}, {0, 5, 1024}, {0, 1, 1024},
                                     {0, 5, 1024}, {1, 5, 2048}, {2, 5, 5000}};
    struct bfc_opts o = {4096, false, false, 0};
    struct bfc_replay r;
    struct err e;

    (void)state;
    assert_int_equal(bfc_replay_run(b, 6, &o, &r, &e), ERR_OK);
    assert_int_equal(r.failed, 2);
    assert_true(r.have_failure && r.have_free_failure);
    assert_int_equal(r.first_failure.buffer, 4);
    assert_int_equal(r.first_failure.step, 1);
    assert_int_equal(r.first_failure.rounded, 2048);
    assert_int_equal(r.first_failure.in_use, 2048);
    assert_int_equal(r.first_failure.free_bytes, 2048);
    assert_int_equal(r.first_failure.largest_free, 1024);
    assert_true(r.first_failure.with_free_memory);
    assert_int_equal(r.first_free_failure.buffer, 4);
    assert_int_equal(r.addr[4], BFC_NOADDR);
    assert_int_equal(r.addr[5], BFC_NOADDR);
    /* segments 0, 1, 2, 5; at 5 the failed buffers' frees are skipped */
    assert_int_equal(r.nsteps, 4);
    assert_int_equal(r.in_use[3], 0);
    bfc_replay_free(&r);

    /* A plain out-of-memory first: 5000 bytes at step 0 never fit in 4096. */
    const struct pack_buffer c[2] = {{0, 2, 5000}, {1, 2, 1024}};
    assert_int_equal(bfc_replay_run(c, 2, &o, &r, &e), ERR_OK);
    assert_true(r.have_failure);
    assert_false(r.first_failure.with_free_memory);
    assert_int_equal(r.first_failure.free_bytes, 4096);
    assert_false(r.have_free_failure);
    assert_int_equal(r.failed, 1);
    bfc_replay_free(&r);

    /* invalid input is the packing problem's error */
    const struct pack_buffer d[1] = {{3, 3, 1}};
    assert_int_equal(bfc_replay_run(d, 1, &o, &r, &e), ERR_INVALID);
    assert_null(r.steps);
    o.memory_limit = 0;
    assert_int_equal(bfc_replay_run(c, 2, &o, &r, &e), ERR_INVALID);
    assert_int_equal(bfc_replay_run(c, 0, &o, &r, &e), ERR_INVALID);
    o.memory_limit = 4096;
    assert_int_equal(bfc_replay_run(c, 0, &o, &r, &e), ERR_OK);
    assert_int_equal(r.nsteps, 0);
    bfc_replay_free(&r);
}

/* The ordered set against a sorted array: ceil, floor and max after random inserts and
 * erases. */
static void test_otree_agrees_with_a_sorted_array(void **state)
{
    struct otree_node nd[300];
    bool in[300] = {false};
    uint32_t root = OTREE_NONE;
    uint64_t x = 7;

    (void)state;
    for (uint32_t i = 0; i < 300; i++) {
        nd[i].k1 = rng_lcg64(&x) % 50;
        nd[i].k2 = i;
    }
    for (int op = 0; op < 5000; op++) {
        uint32_t i = (uint32_t)(rng_lcg64(&x) % 300);
        uint64_t q = rng_lcg64(&x) % 52;
        uint32_t want_ceil = OTREE_NONE, want_floor = OTREE_NONE, want_max = OTREE_NONE;
        if (in[i])
            otree_erase(nd, &root, i);
        else
            otree_insert(nd, &root, i);
        in[i] = !in[i];
        for (uint32_t k = 0; k < 300; k++) {
            if (!in[k])
                continue;
#define KLESS(a, b) (nd[a].k1 != nd[b].k1 ? nd[a].k1 < nd[b].k1 : nd[a].k2 < nd[b].k2)
            if (nd[k].k1 >= q && (want_ceil == OTREE_NONE || KLESS(k, want_ceil)))
                want_ceil = k;
            if (nd[k].k1 <= q && (want_floor == OTREE_NONE || KLESS(want_floor, k)))
                want_floor = k;
            if (want_max == OTREE_NONE || KLESS(want_max, k))
                want_max = k;
#undef KLESS
        }
        assert_int_equal(otree_ceil(nd, root, q, 0), want_ceil);
        assert_int_equal(otree_floor(nd, root, q, UINT64_MAX), want_floor);
        assert_int_equal(otree_max(nd, root), want_max);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_options_and_requests_are_refused),
        cmocka_unit_test(test_requests_split_chunks_and_frees_coalesce),
        cmocka_unit_test(test_best_fit_splits_chunks_of_twice_the_request),
        cmocka_unit_test(test_chunk_splits_when_its_rest_reaches_128_mib),
        cmocka_unit_test(test_regions_double_until_oom_with_bytes_free),
        cmocka_unit_test(test_preallocated_region_fails_between_free_holes),
        cmocka_unit_test(test_garbage_collection_frees_regions_for_extend),
        cmocka_unit_test(test_random_requests_keep_invariants_and_blocks_apart),
        cmocka_unit_test(test_replay_frees_before_allocating_at_a_step),
        cmocka_unit_test(test_replay_counts_failures_and_those_with_bytes_free),
        cmocka_unit_test(test_otree_agrees_with_a_sorted_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
