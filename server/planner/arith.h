/*
 * arith.h - checked 64-bit size arithmetic shared by the planner's modules.
 *
 * One overflow convention, GCC's __builtin_*_overflow one: the function returns true
 * when the exact result does not fit in 64 bits (then *out is unspecified), false when
 * *out holds it. Callers turn true into ERR_OVERFLOW naming their field. arith_gcd cannot
 * overflow and returns its result.
 */
#ifndef TPUPLAN_ARITH_H
#define TPUPLAN_ARITH_H

#include <stdbool.h>
#include <stdint.h>

/* a x b. */
static inline bool arith_mul(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* a + b. */
static inline bool arith_add(uint64_t a, uint64_t b, uint64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* v rounded up to a multiple of m; m 0 or 1 leaves v as it is. */
static inline bool arith_round_up(uint64_t v, uint64_t m, uint64_t *out)
{
    if (m <= 1) {
        *out = v;
        return false;
    }
    return __builtin_mul_overflow(v / m + (v % m != 0), m, out);
}

/* The greatest common divisor of a and b (Euclid); gcd(a, 0) = a, so 0 starts a fold. */
static inline uint64_t arith_gcd(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

#endif
