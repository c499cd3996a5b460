/*
 * rng.h - the pseudo-random numbers of the tests and the benchmarks: small, seeded, the
 * same sequence on every platform and compiler, so a failure reproduces from its seed.
 * Header-only; the state is the caller's (one uint64_t), so tests keep their own streams.
 *
 * Three generators, each written once here. Tests and benchmarks draw their inputs from a
 * fixed seed, and some pin values worked out for those inputs (node counts, the perfect
 * instances, the benchmarks' published figures), so each keeps the generator it was
 * written against:
 *   rng_splitmix64  the packing tests, perfect.h's instances, bench_pack, test_plan,
 *                   test_kernel
 *   rng_xorshift64  the benchmarks' inputs, test_jsonw, test_layout, test_model, test_shape
 *   rng_lcg64       test_bfc, test_trace, test_hlo
 */
#ifndef TPUPLAN_TESTS_RNG_H
#define TPUPLAN_TESTS_RNG_H

#include <stdint.h>

/* splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014): any seed, 0 included. */
static inline uint64_t rng_splitmix64(uint64_t *s)
{
    uint64_t x = *s += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* xorshift64 with shifts 13, 7, 17 (Marsaglia, "Xorshift RNGs", JSS 2003): returns the
 * new state. *s must not be 0 (it would stay 0). */
static inline uint64_t rng_xorshift64(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Knuth's MMIX linear congruential generator: the high 31 bits of the new state (its low
 * bits have short periods). */
static inline uint64_t rng_lcg64(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}

#endif
