/*
 * perfect.h - perfect-packing instances: a rectangle of capacity x horizon cut into n
 * buffers by guillotine cuts, so a packing of peak = capacity exists (the pieces where they
 * were cut) and every step is fully live: the lower bound equals the capacity and the
 * optimum is known. The instances MiniMalloc's paper calls hard when n is in the hundreds.
 * Header-only, for the unit tests (tests/unit/test_pack_exact.c) and bench_pack.c.
 *
 * The seed set below is what `make bench-pack` runs (400-500 buffers each); the unit tests
 * use smaller ones. The same (seed, n, capacity, horizon) always gives the same instance.
 */
#ifndef TPUPLAN_TESTS_PERFECT_H
#define TPUPLAN_TESTS_PERFECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "planner/pack.h"
#include "../unit/rng.h"

struct perfect_seed {
    uint64_t seed;
    size_t n;
};

/* The kept seed set: `make bench-pack` tries each within 30 s. */
static const struct perfect_seed perfect_seeds[] = {
    {1, 400}, {2, 420}, {3, 440}, {4, 460}, {5, 480}, {6, 500}, {7, 450}, {8, 500},
};
#define PERFECT_NSEEDS (sizeof(perfect_seeds) / sizeof(perfect_seeds[0]))

/* The sweep beyond the kept set (`bench_pack --sweep A-B`,
 * tests/bench/RESULTS.md#perfect-packing-the-skyline-searchs-tail): seed s has
 * 400 + 7s mod 101 buffers, 400-500. */
static inline size_t perfect_sweep_n(uint64_t seed)
{
    return 400 + (size_t)((seed * 7) % 101);
}
#define PERFECT_CAPACITY ((uint64_t)1 << 20) /* as MiniMalloc's challenging suite */
#define PERFECT_HORIZON  1000

/*
 * Cuts [0, horizon) x [0, capacity) into n pieces: b[i] gets the piece's lifetime and
 * height, off[i] (may be NULL) its offset, a packing of peak capacity. Each cut takes the
 * largest of three pieces drawn at random and splits it across time or memory at a random
 * point (memory cuts on multiples of 1024 bytes, as the challenging suite's sizes are).
 * 0, or -1 when the rectangle cannot be cut that often (too small) or out of memory.
 */
static int perfect_instance(uint64_t seed, size_t n, uint64_t capacity, int64_t horizon,
                            struct pack_buffer *b, uint64_t *off)
{
    const uint64_t q = 1024;
    uint64_t s = seed, *y = malloc((n ? n : 1) * sizeof(*y));
    size_t k = 1;

    if (n == 0) {
        free(y);
        return 0;
    }
    if (y == NULL)
        return -1;
    b[0] = (struct pack_buffer){0, horizon, capacity};
    y[0] = 0;
    for (unsigned tries = 0; k < n && tries < 1000000; tries++) {
        size_t i = rng_splitmix64(&s) % k;
        for (int d = 0; d < 2; d++) { /* the largest of three draws */
            size_t j = rng_splitmix64(&s) % k;
            if ((uint64_t)(b[j].upper - b[j].lower) * b[j].size >
                (uint64_t)(b[i].upper - b[i].lower) * b[i].size)
                i = j;
        }
        struct pack_buffer *p = &b[i];
        int64_t w = p->upper - p->lower;
        uint64_t hq = p->size / q;
        bool time_cut = rng_splitmix64(&s) & 1;
        if (time_cut && w < 2)
            time_cut = false;
        if (!time_cut && hq < 2)
            time_cut = w >= 2;
        if (time_cut && w >= 2) {
            int64_t at = p->lower + 1 + (int64_t)(rng_splitmix64(&s) % (uint64_t)(w - 1));
            b[k] = (struct pack_buffer){at, p->upper, p->size};
            y[k] = y[i];
            p->upper = at;
        } else if (!time_cut && hq >= 2) {
            uint64_t at = q * (1 + rng_splitmix64(&s) % (hq - 1));
            b[k] = (struct pack_buffer){p->lower, p->upper, p->size - at};
            y[k] = y[i] + at;
            p->size = at;
        } else {
            continue;
        }
        k++;
    }
    if (off != NULL)
        for (size_t i = 0; i < k; i++)
            off[i] = y[i];
    free(y);
    return k == n ? 0 : -1;
}

#endif
