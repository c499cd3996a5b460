/*
 * bench_layout.c - throughput of the layout core: default layout + padded size for
 * 1,000,000 random shapes, and parse + print of 1,000,000 shape strings. Prints a small
 * table with shapes/s, parse MB/s and peak RSS. Target: >= 2M shapes/s for layouts.
 *
 *   bench_layout [N]     (default N = 1000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/layout.h"

#define POOL       65536 /* distinct strings for the parse benchmark, cycled */
#define SHAPE_POOL 8192  /* distinct random shapes for the layout benchmark, cycled */

static uint64_t rng = 0x2545f4914f6cdd1dull;

/* Wall and CPU clocks: the machine is shared, so rates are computed on this process's CPU
 * time (best of REPS runs) and the wall time is shown next to it. */
#define REPS 3

struct timing {
    double wall, cpu;
};

static struct timing now(void)
{
    return (struct timing){bench_wall(), bench_cpu()};
}

static void keep_best(struct timing *best, struct timing t0)
{
    struct timing t1 = now();
    double cpu = t1.cpu - t0.cpu, wall = t1.wall - t0.wall;

    if (best->cpu == 0 || cpu < best->cpu)
        *best = (struct timing){wall, cpu};
}

static const enum dtype types[] = {DT_F32, DT_BF16, DT_S32, DT_U8,  DT_PRED,
                                   DT_S8,  DT_F16,  DT_S4,  DT_F64, DT_F8E4M3FN};

/* A random shape like the ones models have: rank 0-5, dims up to 2^16, no layout. */
static void random_shape(struct shape *sh)
{
    sh->dtype = types[rng_xorshift64(&rng) % (sizeof(types) / sizeof(types[0]))];
    sh->rank = (uint8_t)(rng_xorshift64(&rng) % 6);
    sh->has_layout = false;
    sh->ntiles = 0;
    sh->element_size_bits = 0;
    sh->memory_space = 0;
    sh->memory_space_given = false;
    sh->tail_align = 0;
    for (unsigned i = 0; i < sh->rank; i++)
        sh->dims[i] = (int64_t)(1 + rng_xorshift64(&rng) % (i + 1u == sh->rank ? 65536 : 512));
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct shape sh, res, *shapes;
    struct layout_info li;
    struct err e;
    uint64_t sum = 0, bytes = 0;
    struct timing t0, t_layout = {0, 0}, t_parse = {0, 0};
    char *pool;
    size_t *off;
    int failures = 0;

    if (n <= 0)
        n = 1000000;
    /* 1. default layout + size over N shapes: random shapes are drawn up front into a pool
     * of SHAPE_POOL (so the timing is the layout code, not the random generator) and the
     * N calls cycle through it, each on the next chip of the table. */
    shapes = malloc(sizeof(*shapes) * SHAPE_POOL);
    if (shapes == NULL) {
        fputs("bench_layout: out of memory\n", stderr);
        return 1;
    }
    for (int i = 0; i < SHAPE_POOL; i++)
        random_shape(&shapes[i]);
    for (int rep = 0; rep < REPS; rep++) {
        sum = 0;
        t0 = now();
        for (long i = 0; i < n; i++) {
            if (layout_resolve(&shapes[i % SHAPE_POOL], chip_at((size_t)i % chip_count()), &res,
                               &li, &e) != 0)
                failures++;
            sum += li.padded_bytes;
        }
        keep_best(&t_layout, t0);
    }
    free(shapes);

    /* 2. parse + print: POOL resolved shapes printed once, then parsed and re-printed. */
    pool = malloc((size_t)POOL * SHAPE_MAX_TEXT / 8);
    off = malloc(sizeof(*off) * (POOL + 1));
    if (pool == NULL || off == NULL) {
        fputs("bench_layout: out of memory\n", stderr);
        free(pool);
        free(off);
        return 1;
    }
    off[0] = 0;
    for (int i = 0; i < POOL; i++) {
        int len;
        do {
            random_shape(&sh);
            len = layout_resolve(&sh, chip_at((size_t)i % chip_count()), &res, &li, &e) == ERR_OK
                      ? shape_print(&res, pool + off[i], SHAPE_MAX_TEXT / 8)
                      : 0;
        } while (len <= 0);
        off[i + 1] = off[i] + (size_t)len;
    }
    for (int rep = 0; rep < REPS; rep++) {
        bytes = 0;
        t0 = now();
        for (long i = 0; i < n; i++) {
            const char *s = pool + off[i % POOL];
            size_t len = off[i % POOL + 1] - off[i % POOL];
            char out[SHAPE_MAX_TEXT];
            if (shape_parse(s, len, &sh, &e) != 0 ||
                shape_print(&sh, out, sizeof(out)) != (int)len || memcmp(out, s, len) != 0)
                failures++;
            bytes += len;
        }
        keep_best(&t_parse, t0);
    }

    printf("bench_layout: %ld shapes, best of %d runs, rates on CPU time (checksum %llu)\n", n,
           REPS, (unsigned long long)sum);
    printf("  %-34s %9s %9s %14s\n", "benchmark", "cpu (s)", "wall (s)", "rate");
    printf("  %-34s %9.3f %9.3f %7.2f M shapes/s\n", "layout_resolve (default + size)",
           t_layout.cpu, t_layout.wall, (double)n / t_layout.cpu / 1e6);
    printf("  %-34s %9.3f %9.3f %7.2f M shapes/s\n", "shape_parse + shape_print", t_parse.cpu,
           t_parse.wall, (double)n / t_parse.cpu / 1e6);
    printf("  %-34s %9s %9s %7.1f MB/s (%.1f B/shape)\n", "parse + print throughput", "", "",
           (double)bytes / t_parse.cpu / 1e6, (double)bytes / (double)n);
    printf("  %-34s %9s %9s %7ld KiB\n", "peak RSS", "", "", bench_peak_rss_kib());
    printf("  target >= 2M shapes/s for layouts: %s\n",
           (double)n / t_layout.cpu >= 2e6 ? "met" : "NOT met");
    free(pool);
    free(off);
    if (failures != 0) {
        fprintf(stderr, "bench_layout: %d failures\n", failures);
        return 1;
    }
    return 0;
}
