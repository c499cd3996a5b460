/*
 * bench_runtime.c - the runtime side of a plan: the BFC allocator replay (bfc.h) of
 * 1,000,000 allocations, preallocated and growing, and the Chrome/Perfetto trace export
 * (trace.h) of a 100,000-buffer plan from its layout view. Prints one table row each with
 * wall and CPU seconds, the rate, and what was produced.
 *
 * Costs: the replay is O(n log n) (two sorts, then per event a search in at most 21 bins
 * and an ordered-set update, each O(log n)); the export is O(n log n) (the layout view
 * parsed with json-c, two sorts, an ordered-set operation per event).
 *
 *   bench_runtime [N_REPLAY [N_TRACE]]    (default 1000000 and 100000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/bfc.h"
#include "planner/plan.h"
#include "planner/trace.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* A long training step: four buffers start per step and live 1 to 64 steps (1 in 100 live
 * to the end, like parameters); sizes from 256 B to 16 MiB, log-uniform, not multiples of
 * 256. */
static struct pack_buffer *replay_input(size_t n)
{
    struct pack_buffer *b = malloc(n * sizeof(*b));
    int64_t end = (int64_t)(n / 4) + 65;

    if (b == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_xorshift64(&rng);
        b[i].lower = (int64_t)(i / 4);
        b[i].upper = r % 100 == 0 ? end : b[i].lower + 1 + (int64_t)(r % 64);
        b[i].size = ((uint64_t)1 << (8 + (r >> 8) % 17)) + (r >> 32) % 4093;
    }
    return b;
}

static int bench_replay(size_t n, bool growth)
{
    struct pack_buffer *b = replay_input(n);
    /* 0.75 x 1 TiB may be held: above the ~25 GB live at once, so nothing fails and the cost
     * is the allocator's own */
    struct bfc_opts o = {(uint64_t)3 << 38, growth, false, 0};
    struct bfc_replay r;
    struct err e;
    double t0, c0, t1, c1;

    if (b == NULL)
        return 1;
    t0 = bench_wall();
    c0 = bench_cpu();
    if (bfc_replay_run(b, n, &o, &r, &e) != ERR_OK) {
        fprintf(stderr, "bench_runtime: replay: %s\n", e.msg);
        free(b);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    printf("  bfc replay %-9s %9zu allocs %8.3f %8.3f %10.2f M/s  steps %zu, in use %.2f GB, "
           "reserved %.2f GB, %zu regions, %zu failed\n",
           growth ? "growth" : "prealloc", n, t1 - t0, c1 - c0, (double)n / (c1 - c0) / 1e6,
           r.nsteps, (double)r.peak_in_use / 1e9, (double)r.peak_reserved / 1e9, r.regions,
           r.failed);
    bfc_replay_free(&r);
    free(b);
    return 0;
}

/* A model of n tensors: mixed kinds and dtypes, short-lived activations. */
static char *model(size_t n, size_t *len)
{
    static const char *kinds[] = {"activation", "activation", "temp", "param", "grad"};
    size_t cap = n * 128 + 64, pos = 0;
    char *buf = malloc(cap);

    if (buf == NULL)
        return NULL;
    pos += (size_t)snprintf(buf, cap, "{\"name\":\"trace-bench\",\"chip\":\"v5p\",\"tensors\":[");
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_xorshift64(&rng);
        size_t start = i / 4;
        pos += (size_t)snprintf(buf + pos, cap - pos,
                                "%s{\"name\":\"t%zu\",\"dtype\":\"bf16\",\"shape\":[%u,%u],"
                                "\"kind\":\"%s\",\"live\":[%zu,%zu]}",
                                i ? "," : "", i, (unsigned)(1 + r % 256),
                                (unsigned)(1 + (r >> 8) % 2048), kinds[(r >> 24) % 5], start,
                                start + 1 + (size_t)((r >> 32) % 64));
    }
    pos += (size_t)snprintf(buf + pos, cap - pos, "]}");
    *len = pos;
    return buf;
}

static int bench_trace(size_t n)
{
    struct plan_opts o = {.strategies = "xla-spatial"};
    struct plan_limits l;
    struct plan_views v;
    struct trace_counts k;
    struct err e;
    size_t len = 0, json_len = 0, out_len = 0;
    char *text = model(n, &len), *json = NULL, *out = NULL;
    double t0, c0, t1, c1;

    if (text == NULL)
        return 1;
    plan_limits_default(&l);
    l.max_input_bytes = len + 1;
    if (plan_run(text, len, &o, &l, &json, &json_len, &v, NULL, &e) != ERR_OK) {
        fprintf(stderr, "bench_runtime: plan: %s\n", e.msg);
        free(text);
        return 1;
    }
    t0 = bench_wall();
    c0 = bench_cpu();
    if (trace_from_layout(v.layout, v.layout_len, "trace-bench", &out, &out_len, &k, &e) !=
        ERR_OK) {
        fprintf(stderr, "bench_runtime: trace: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    printf("  trace export       %9zu buffers %7.3f %8.3f %10.2f MB/s  %.1f MB trace from a "
           "%.1f MB layout view; %zu slices, %zu counters, %zu tracks\n",
           n, t1 - t0, c1 - c0, (double)out_len / 1e6 / (c1 - c0), (double)out_len / 1e6,
           (double)v.layout_len / 1e6, k.slices, k.counters, k.tracks);
    free(out);
    free(json);
    free(text);
    plan_views_free(&v);
    return 0;
}

int main(int argc, char **argv)
{
    size_t nr = argc > 1 ? (size_t)atol(argv[1]) : 1000000;
    size_t nt = argc > 2 ? (size_t)atol(argv[2]) : 100000;

    printf("bench_runtime: the runtime allocator replay and the trace export\n");
    printf("  %-18s %17s %8s %8s %13s\n", "", "", "wall s", "cpu s", "rate (cpu)");
    if (bench_replay(nr, false) != 0 || bench_replay(nr, true) != 0 || bench_trace(nt) != 0)
        return 1;
    printf("  peak RSS %ld MB\n", bench_peak_rss_kib() / 1024);
    return 0;
}
