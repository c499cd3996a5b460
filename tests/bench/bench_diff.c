/*
 * bench_diff.c - the plan diff (diff.h) of two 100,000-tensor plans: B is A with one tensor
 * in 10 in f32 instead of bf16 and one in 100 renamed (so removed and added). Both are
 * planned first (not timed); then the diff is timed from the views (what the service and
 * `tpuplan diff` on model files read) and from the whole results (stored result files).
 * The bar: under 1 s.
 *
 * Cost: O(n log n): both documents parsed with json-c, two name sorts, one merge, one sort
 * of the changed tensors by |delta|, the answer written with jsonw.
 *
 *   bench_diff [N]    (default 100000)
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/diff.h"
#include "planner/plan.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* A model of n tensors; variant 1 changes one dtype in 10 and one name in 100. */
static char *model(size_t n, int variant, size_t *len)
{
    static const char *kinds[] = {"activation", "activation", "temp", "param", "grad"};
    size_t cap = n * 160 + 64, pos = 0;
    char *buf = malloc(cap);
    uint64_t s = rng;

    if (buf == NULL)
        return NULL;
    pos += (size_t)snprintf(buf, cap, "{\"name\":\"diff-bench-%d\",\"chip\":\"v5p\",\"tensors\":[",
                            variant);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_xorshift64(&s);
        size_t start = i / 4;
        bool f32 = variant == 1 && i % 10 == 3, renamed = variant == 1 && i % 100 == 7;
        pos += (size_t)snprintf(buf + pos, cap - pos,
                                "%s{\"name\":\"t%zu%s\",\"dtype\":\"%s\",\"shape\":[%u,%u],"
                                "\"kind\":\"%s\",\"live\":[%zu,%zu]}",
                                i ? "," : "", i, renamed ? "-renamed" : "", f32 ? "f32" : "bf16",
                                (unsigned)(1 + r % 256), (unsigned)(1 + (r >> 8) % 2048),
                                kinds[(r >> 24) % 5], start, start + 1 + (size_t)((r >> 32) % 64));
    }
    pos += (size_t)snprintf(buf + pos, cap - pos, "]}");
    *len = pos;
    return buf;
}

struct planned {
    char *json;
    size_t json_len;
    struct plan_views v;
};

static int plan(size_t n, int variant, struct planned *p)
{
    struct plan_opts o = {.strategies = "xla-spatial"};
    struct plan_limits l;
    struct err e;
    size_t len = 0;
    char *text = model(n, variant, &len);
    int rc;

    if (text == NULL)
        return 1;
    plan_limits_default(&l);
    l.max_input_bytes = len + 1;
    rc = plan_run(text, len, &o, &l, &p->json, &p->json_len, &p->v, NULL, &e);
    if (rc != ERR_OK)
        fprintf(stderr, "bench_diff: plan: %s\n", e.msg);
    free(text);
    return rc != ERR_OK;
}

static int bench(const char *what, const struct diff_input *a, const struct diff_input *b, size_t n)
{
    char *out = NULL;
    size_t len = 0;
    struct err e;
    double t0 = bench_wall(), c0 = bench_cpu(), t1, c1;

    if (diff_run(a, b, 0, &out, &len, &e) != ERR_OK) {
        fprintf(stderr, "bench_diff: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    printf("  diff from %-8s %9zu tensors %7.3f %8.3f %8.1f MB in, %.1f MB diff%s\n", what, n,
           t1 - t0, c1 - c0,
           (double)(a->result_len + a->layout_len + b->result_len + b->layout_len) / 1e6,
           (double)len / 1e6, c1 - c0 < 1.0 ? "" : "  (over the 1 s bar, CPU)");
    free(out);
    return 0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)atol(argv[1]) : 100000;
    struct planned pa = {0}, pb = {0};
    int rc = 1;

    printf("bench_diff: two plans compared (B: 1 in 10 tensors f32 not bf16, 1 in 100 renamed)\n");
    printf("  %-18s %17s %7s %8s\n", "", "", "wall s", "cpu s");
    if (plan(n, 0, &pa) == 0 && plan(n, 1, &pb) == 0) {
        struct diff_input va = {pa.v.summary, pa.v.summary_len, pa.v.layout, pa.v.layout_len};
        struct diff_input vb = {pb.v.summary, pb.v.summary_len, pb.v.layout, pb.v.layout_len};
        struct diff_input wa = {pa.json, pa.json_len, NULL, 0};
        struct diff_input wb = {pb.json, pb.json_len, NULL, 0};
        rc = bench("views", &va, &vb, n) || bench("results", &wa, &wb, n);
    }
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) < 0)
        load[0] = -1;
    printf("  peak RSS %ld MB, load average %.2f (the bar is on CPU seconds: the wall clock of a\n"
           "  loaded machine counts other processes)\n",
           bench_peak_rss_kib() / 1024, load[0]);
    free(pa.json);
    free(pb.json);
    plan_views_free(&pa.v);
    plan_views_free(&pb.v);
    return rc;
}
