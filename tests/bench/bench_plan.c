/*
 * bench_plan.c - the whole planner on a synthetic 1,000,000-tensor model description:
 * generate the JSON in memory, validate it (parse + layouts + lifetimes), then plan it
 * with the greedy xla-spatial strategy (exact search is pointless at this size). Prints
 * input MB, parse+validate MB/s, total plan time, result size and peak RSS. Target: the
 * plan is bounded by JSON parsing (a small multiple of the validate time).
 *
 *   bench_plan [N]                 (default N = 1000000)
 *   bench_plan --write FILE [N]    writes the model to FILE instead (bench_million.sh)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/plan.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* A model like a long training step: mixed dtypes and kinds, short-lived activations. */
static char *generate(long n, size_t *len)
{
    static const char *dtypes[] = {"bf16", "f32", "s8", "s32", "f16", "pred"};
    static const char *kinds[] = {"activation", "activation", "temp", "param", "grad"};
    size_t cap = (size_t)n * 160 + 64, pos = 0;
    char *buf = malloc(cap);

    if (buf == NULL)
        return NULL;
    pos += (size_t)snprintf(buf, cap, "{\"name\":\"synthetic\",\"chip\":\"v5p\",\"tensors\":[");
    for (long i = 0; i < n; i++) {
        uint64_t r = rng_xorshift64(&rng);
        long start = i / 4, dur = 1 + (long)(r % 64);
        int rank = 1 + (int)(r >> 8) % 3;
        pos += (size_t)snprintf(buf + pos, cap - pos,
                                "%s{\"name\":\"t%ld\",\"dtype\":\"%s\",\"shape\":[", i ? "," : "",
                                i, dtypes[(r >> 16) % 6]);
        for (int d = 0; d < rank; d++)
            pos += (size_t)snprintf(
                buf + pos, cap - pos, "%s%u", d ? "," : "",
                (unsigned)(1 + (rng_xorshift64(&rng) % (d + 1 == rank ? 4096 : 256))));
        pos += (size_t)snprintf(buf + pos, cap - pos, "],\"kind\":\"%s\",\"live\":[%ld,%ld]}",
                                kinds[(r >> 24) % 5], start, start + dur);
    }
    pos += (size_t)snprintf(buf + pos, cap - pos, "]}");
    *len = pos;
    return buf;
}

/* The generated model into path, for the CLI-against-Python comparison. */
static int write_model(const char *path, long n)
{
    size_t len = 0;
    char *text = generate(n, &len);
    FILE *f = fopen(path, "wb");
    int rc = text != NULL && f != NULL && fwrite(text, 1, len, f) == len ? 0 : 1;

    if (f != NULL && fclose(f) != 0)
        rc = 1;
    if (rc != 0)
        fprintf(stderr, "bench_plan: cannot write %s\n", path);
    free(text);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "--write") == 0)
        return write_model(argv[2], argc > 3 ? atol(argv[3]) : 1000000);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    struct plan_limits l;
    struct plan_opts o = {.strategies = "xla-spatial"};
    struct plan_summary s;
    struct err e;
    size_t len = 0, out_len = 0;
    char *out = NULL;
    double t0, t1, t2, c0, c1, c2;

    char *text = generate(n, &len);
    if (text == NULL) {
        fprintf(stderr, "bench_plan: out of memory\n");
        return 1;
    }
    plan_limits_default(&l);
    l.max_input_bytes = len + 1;
    l.max_tensors = (size_t)n;
    t0 = bench_wall();
    c0 = bench_cpu();
    if (plan_validate(text, len, &o, &l, &s, &e) != ERR_OK) {
        fprintf(stderr, "bench_plan: validate: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    if (plan_run(text, len, &o, &l, &out, &out_len, NULL, &s, &e) != ERR_OK) {
        fprintf(stderr, "bench_plan: plan: %s\n", e.msg);
        return 1;
    }
    t2 = bench_wall();
    c2 = bench_cpu();
    printf("bench_plan: %ld tensors, input %.1f MB\n", n, (double)len / 1e6);
    printf("                  %10s %10s %12s\n", "wall s", "cpu s", "MB/s (cpu)");
    printf("  parse+validate  %10.3f %10.3f %12.1f\n", t1 - t0, c1 - c0,
           (double)len / 1e6 / (c1 - c0));
    printf("  plan (total)    %10.3f %10.3f %12.1f  (%.2fx validate)\n", t2 - t1, c2 - c1,
           (double)len / 1e6 / (c2 - c1), (c2 - c1) / (c1 - c0));
    printf("  result JSON     %8.1f MB\n", (double)out_len / 1e6);
    printf("  peak %.3f GB, lower bound %.3f GB, padded %.3f GB\n", (double)s.peak_bytes / 1e9,
           (double)s.lower_bound_bytes / 1e9, (double)s.padded_bytes / 1e9);
    printf("  peak RSS        %8ld MB\n", bench_peak_rss_kib() / 1024);
    free(out);
    free(text);
    return 0;
}
