/*
 * bench_hlo.c - XLA HLO text in: a generated after-optimizations-style module of N
 * instructions (scheduled, '%' names, operand shapes, TPU layouts, loop fusions and
 * metadata, as XLA dumps print them). Prints the parse rate (hlo_parse alone, MB/s of CPU
 * time; target >= 50 MB/s), the import (parse + buffer rules), the whole plan end to end
 * with XLA's default heuristic (target < 1 s for 100,000 instructions) and peak RSS.
 *
 *   bench_hlo [N]     (default N = 100000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/hlo.h"
#include "planner/hlo_model.h"
#include "planner/plan.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static char *generate(long n, size_t *len)
{
    static const char *shapes[] = {"f32[8,128]{1,0:T(8,128)}", "bf16[64,1024]{1,0:T(8,128)(2,1)}",
                                   "f32[256,512]{1,0:T(8,128)}", "s32[1024]{0:T(1024)}"};
    size_t cap = (size_t)n * 400 + 4096, pos = 0;
    char *buf = malloc(cap);

    if (buf == NULL)
        return NULL;
    pos += (size_t)snprintf(buf, cap, "HloModule jit_train, is_scheduled=true\n\n");
    for (int s = 0; s < 4; s++)
        pos += (size_t)snprintf(buf + pos, cap - pos,
                                "%%fused_%d (param_0: %s, param_1: %s) -> %s {\n"
                                "  %%param_0 = %s parameter(0)\n  %%param_1 = %s parameter(1)\n"
                                "  ROOT %%add = %s add(%s %%param_0, %s %%param_1)\n}\n\n",
                                s, shapes[s], shapes[s], shapes[s], shapes[s], shapes[s], shapes[s],
                                shapes[s], shapes[s]);
    pos +=
        (size_t)snprintf(buf + pos, cap - pos, "ENTRY %%main (p0: f32[8,128]) -> f32[8,128] {\n");
    for (int s = 0; s < 4; s++)
        pos +=
            (size_t)snprintf(buf + pos, cap - pos, "  %%p%d = %s parameter(%d)\n", s, shapes[s], s);
    for (long i = 4; i < n; i++) {
        int s = (int)(i % 4);
        /* operands: the same shape class, one recent and one further back */
        long a = i - 4, b = i - 4 * (1 + (long)(rng_xorshift64(&rng) % 16));
        if (b < s)
            b = s;
        pos += (size_t)snprintf(
            buf + pos, cap - pos,
            "  %s%%fusion.%ld = %s fusion(%s %%%s%ld, %s %%%s%ld), kind=kLoop, calls=%%fused_%d, "
            "metadata={op_name=\"jit(train)/layer_%ld/add\" source_file=\"model.py\" "
            "source_line=%ld}\n",
            i == n - 1 ? "ROOT " : "", i, shapes[s], shapes[s], a < 4 ? "p" : "fusion.", a,
            shapes[s], b < 4 ? "p" : "fusion.", b, s, i / 100, i);
    }
    pos += (size_t)snprintf(buf + pos, cap - pos, "}\n");
    *len = pos;
    return buf;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    struct plan_limits l;
    struct plan_opts o = {.strategies = "xla-default"};
    struct plan_summary s;
    struct model_limits ml;
    struct hlo_module h;
    struct model m;
    struct err e;
    size_t len = 0, out_len = 0;
    char *out = NULL;
    double t0, t1, t2, t3, c0, c1, c2, c3;

    char *text = generate(n < 8 ? 8 : n, &len);
    if (text == NULL) {
        fprintf(stderr, "bench_hlo: out of memory\n");
        return 1;
    }
    plan_limits_default(&l);
    l.max_input_bytes = len + 1;
    ml = (struct model_limits){l.max_input_bytes, l.max_json_depth, l.max_tensors, l.max_ops, 0};
    t0 = bench_wall();
    c0 = bench_cpu();
    if (hlo_parse(text, len, ml.max_tensors, &h, &e) != ERR_OK) {
        fprintf(stderr, "bench_hlo: parse: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    if (hlo_model_build(&h, NULL, &ml, &m, &e) != ERR_OK) {
        fprintf(stderr, "bench_hlo: buffers: %s\n", e.msg);
        return 1;
    }
    t2 = bench_wall();
    c2 = bench_cpu();
    size_t nbuf = m.n;
    model_free(&m);
    hlo_free(&h);
    if (plan_run(text, len, &o, &l, &out, &out_len, NULL, &s, &e) != ERR_OK) {
        fprintf(stderr, "bench_hlo: plan: %s\n", e.msg);
        return 1;
    }
    t3 = bench_wall();
    c3 = bench_cpu();
    printf("bench_hlo: %ld instructions, %zu buffers, input %.1f MB\n", n, nbuf, (double)len / 1e6);
    printf("                    %10s %10s %12s\n", "wall s", "cpu s", "MB/s (cpu)");
    printf("  hlo_parse         %10.3f %10.3f %12.1f  (target >= 50)\n", t1 - t0, c1 - c0,
           (double)len / 1e6 / (c1 - c0));
    printf("  buffer rules      %10.3f %10.3f\n", t2 - t1, c2 - c1);
    printf("  plan end to end   %10.3f %10.3f %12.1f  (xla-default; target < 1 s)\n", t3 - t2,
           c3 - c2, (double)len / 1e6 / (c3 - c2));
    printf("  peak %.3f MB, lower bound %.3f MB, result %.1f MB\n", (double)s.peak_bytes / 1e6,
           (double)s.lower_bound_bytes / 1e6, (double)out_len / 1e6);
    printf("  peak RSS          %8ld MB\n", bench_peak_rss_kib() / 1024);
    free(out);
    free(text);
    return 0;
}
