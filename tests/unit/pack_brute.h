/*
 * pack_brute.h - the packing optimum by brute force, written independently of the solvers,
 * for the tests that check them (test_pack_exact.c, test_pack_skyline.c): every order of
 * the buffers, each at the lowest offset where it fits among the ones before it. Some order
 * reproduces an optimal packing (sort any packing by offset; lowest-fit never places a
 * buffer above its offset there), so the minimum over orders is the optimum. Header-only;
 * n! orders, so at most PACK_BRUTE_MAX buffers.
 */
#ifndef TPUPLAN_TESTS_PACK_BRUTE_H
#define TPUPLAN_TESTS_PACK_BRUTE_H

#include <stddef.h>
#include <stdint.h>

#include "planner/pack.h"

#define PACK_BRUTE_MAX 8

struct pack_brute {
    const struct pack_buffer *b;
    size_t n;
    int used[PACK_BRUTE_MAX];
    uint64_t off[PACK_BRUTE_MAX];
    size_t ord[PACK_BRUTE_MAX];
    uint64_t best;
};

static inline void pack_brute_place(struct pack_brute *s, size_t d)
{
    const struct pack_buffer *b = s->b;

    if (d == s->n) {
        uint64_t pk = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->off[i] + b[i].size > pk)
                pk = s->off[i] + b[i].size;
        if (pk < s->best)
            s->best = pk;
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        uint64_t y = 0;
        int moved = 1;
        if (s->used[i])
            continue;
        while (moved) {
            moved = 0;
            for (size_t k = 0; k < d; k++) {
                size_t j = s->ord[k];
                if (b[j].lower < b[i].upper && b[i].lower < b[j].upper &&
                    s->off[j] < y + b[i].size && y < s->off[j] + b[j].size) {
                    y = s->off[j] + b[j].size;
                    moved = 1;
                }
            }
        }
        s->off[i] = y;
        s->used[i] = 1;
        s->ord[d] = i;
        pack_brute_place(s, d + 1);
        s->used[i] = 0;
    }
}

/* The least peak of any packing of b[0..n), n <= PACK_BRUTE_MAX (UINT64_MAX above it). */
static inline uint64_t pack_brute_force(const struct pack_buffer *b, size_t n)
{
    struct pack_brute s = {.b = b, .n = n, .best = UINT64_MAX};

    if (n <= PACK_BRUTE_MAX)
        pack_brute_place(&s, 0);
    return s.best;
}

#endif
