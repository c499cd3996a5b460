/*
 * bench_xla.c - XLA's buffer-assignment dump (xla_assign.h): parse rate on a large
 * generated file in the printer's exact form (allocations with their values, "Used values"
 * blocks, the HloLiveRange part), then the same file planned end to end (plan_run, one
 * strategy: the assignment alone, with its xla-actual row). Prints one table row each, with
 * wall and CPU seconds and the rate on CPU time, and the load average.
 *
 * Cost: the parse is O(bytes) plus a hash table of the values, O(n).
 *
 *   bench_xla [N_VALUES]    (default 200000)
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/plan.h"
#include "planner/xla_assign.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

struct gen {
    char *buf;
    size_t len, cap;
};

static void put(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct gen *g, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
    va_end(ap);
    if (n > 0)
        g->len += (size_t)n < g->cap - g->len ? (size_t)n : g->cap - g->len - 1;
}

/* n values of a long program: one allocation per 64 values (a temp block reused at a few
 * offsets), each value a fusion live 1 to 32 steps, with its HloValue block and live range. */
static char *dump(size_t n, size_t *len)
{
    struct gen g = {NULL, 0, n * 420 + 4096};
    uint64_t *size = calloc(n ? n : 1, sizeof(*size)), total = 0;
    size_t nalloc = (n + 63) / 64;

    g.buf = malloc(g.cap);
    if (g.buf == NULL || size == NULL) {
        free(g.buf);
        free(size);
        return NULL;
    }
    put(&g, "BufferAssignment:\n");
    for (size_t a = 0; a < nalloc; a++) {
        size_t first = a * 64, last = first + 64 < n ? first + 64 : n;
        uint64_t asize = 0;
        for (size_t i = first; i < last; i++) {
            size[i] = (uint64_t)4 << (rng_xorshift64(&rng) % 18);
            asize = size[i] * 8 > asize ? size[i] * 8 : asize;
        }
        total += asize;
        put(&g, "allocation %zu: size %llu, preallocated-temp:\n", a, (unsigned long long)asize);
        for (size_t i = first; i < last; i++)
            put(&g, " value: <%zu fusion.%zu @0> (size=%llu,offset=%llu): f32[%llu]{0}\n", i, i,
                (unsigned long long)size[i], (unsigned long long)size[i] * (i % 8),
                (unsigned long long)size[i] / 4);
    }
    put(&g, "\nTotal bytes used: %llu (%.2fMiB)\n\nUsed values:\n", (unsigned long long)total,
        (double)total / 1048576);
    for (size_t i = 0; i < n; i++)
        put(&g,
            "<%zu fusion.%zu @0>\n positions:\n  fusion.%zu\n uses:\n  fusion.%zu, operand 0\n "
            "from instruction: %%fusion.%zu = f32[%llu]{0} fusion(%%fusion.%zu), kind=kLoop, "
            "calls=%%fused_computation.%zu\n",
            i, i, i, i + 1, i, (unsigned long long)size[i] / 4, i ? i - 1 : 0, i);
    put(&g, "\n\nHloLiveRange (max %zu):\n  InstructionSequence:\n", n + 32);
    for (size_t i = 0; i < n; i++)
        put(&g, "    %zu:fusion.%zu\n", i, i);
    put(&g, "  BufferLiveRange:\n");
    for (size_t i = 0; i < n; i++)
        put(&g, "    fusion.%zu{}:%zu-%zu\n", i, i, i + (size_t)(rng_xorshift64(&rng) % 32));
    free(size);
    *len = g.len;
    return g.buf;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 200000, len = 0, json_len = 0;
    char *text = dump(n, &len), *json = NULL;
    struct xla_assign a;
    struct plan_opts o = {.strategies = "xla-spatial"};
    struct plan_limits l;
    struct err e;
    double t0, c0, t1, c1, load[3] = {0, 0, 0};

    if (text == NULL)
        return 1;
    printf("bench_xla: XLA buffer-assignment dumps (load average %.2f)\n",
           getloadavg(load, 3) > 0 ? load[0] : -1.0);
    printf("  %-18s %17s %8s %8s %13s\n", "", "", "wall s", "cpu s", "rate (cpu)");
    t0 = bench_wall();
    c0 = bench_cpu();
    if (xla_assign_parse(text, len, n, &a, &e) != ERR_OK) {
        fprintf(stderr, "bench_xla: parse: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    printf("  parse              %9zu values  %7.3f %8.3f %10.1f MB/s  %.1f MB, %zu allocations, "
           "%llu bytes\n",
           a.nvalues, t1 - t0, c1 - c0, (double)len / 1e6 / (c1 - c0), (double)len / 1e6, a.nallocs,
           (unsigned long long)a.total_bytes);
    xla_assign_free(&a);
    plan_limits_default(&l);
    l.max_input_bytes = len + 1;
    t0 = bench_wall();
    c0 = bench_cpu();
    if (plan_run(text, len, &o, &l, &json, &json_len, NULL, NULL, &e) != ERR_OK) {
        fprintf(stderr, "bench_xla: plan: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    printf("  plan (xla-spatial) %9zu buffers %7.3f %8.3f %10.1f MB/s  %.1f MB result\n", n,
           t1 - t0, c1 - c0, (double)len / 1e6 / (c1 - c0), (double)json_len / 1e6);
    printf("  peak RSS %ld MB\n", bench_peak_rss_kib() / 1024);
    free(json);
    free(text);
    return 0;
}
