/*
 * bench_program.c - a real-sized XLA program planned as a user plans it: the default
 * strategies ("best") and the default search time, end to end through plan_run. The program
 * is a generated training step of LAYERS layers in HLO text, as JAX lowers one (no '%',
 * metadata with op_name, source file and line on every instruction): each forward layer
 * keeps some activations for its backward pass (live from the forward step to the backward
 * one, the long lifetimes that make a step's planning slow) and drops the rest at the next
 * op; the backward pass reads them in reverse and writes one gradient per weight. About
 * 4 MB and 20,000 buffers by default, the size of the real modules that took 9-13 s before
 * the search strategies got a budget by problem size (target: < 1 s).
 *
 *   bench_program [LAYERS]     (default 100)
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "bench.h"
#include "planner/plan.h"

#define FWD_OPS 100 /* instructions per forward layer (as many backward) */
#define KEEP    4   /* every KEEP-th forward op's result is kept for the backward pass */

struct gen {
    char *buf;
    size_t pos, cap;
};

static void put(struct gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct gen *g, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (g->buf == NULL)
        return;
    va_start(ap, fmt);
    n = vsnprintf(g->buf + g->pos, g->cap - g->pos, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= g->cap - g->pos) {
        free(g->buf);
        g->buf = NULL;
        return;
    }
    g->pos += (size_t)n;
}

static const char *const SHAPES[] = {"bf16[8,2048,4096]", "f32[8,2048,4096]", "bf16[8,2048,1024]",
                                     "bf16[8,16,2048,128]", "f32[8,2048]"};

/* One instruction: NAME = SHAPE custom-call(A, B) with a JAX-style metadata. */
static void instr(struct gen *g, const char *pass, long layer, long k, const char *a, const char *b)
{
    put(g,
        "  %s.%ld.%ld = %s custom-call(%s, %s), custom_call_target=\"op\", "
        "metadata={op_name=\"jit(train_step)/jvp(transformer)/layers_%ld/%s/dot_general\" "
        "source_file=\"/home/user/src/model/transformer.py\" source_line=%ld}\n",
        pass, layer, k, SHAPES[(layer + k) % 5], a, b, layer, pass, 100 + k);
}

static char *generate(long layers, size_t *len)
{
    struct gen g = {NULL, 0, (size_t)layers * FWD_OPS * 2 * 320 + 65536};
    char a[64], b[64];

    g.buf = malloc(g.cap);
    put(&g, "HloModule jit_train_step, entry_computation_layout={(bf16[8,2048,4096]{2,1,0}, "
            "f32[4096,4096]{1,0})->f32[4096,4096]{1,0}}\n\nENTRY main.1 {\n");
    put(&g, "  x = bf16[8,2048,4096]{2,1,0} parameter(0)\n  w = f32[4096,4096]{1,0} "
            "parameter(1)\n");
    snprintf(a, sizeof(a), "x");
    for (long l = 0; l < layers; l++)
        for (long k = 0; k < FWD_OPS; k++) {
            instr(&g, "fwd", l, k, a, k % KEEP == 0 ? "w" : a);
            snprintf(a, sizeof(a), "fwd.%ld.%ld", l, k);
        }
    for (long l = layers - 1; l >= 0; l--)
        for (long k = FWD_OPS - 1; k >= 0; k--) {
            /* the saved activation of this op's group, kept since the forward pass */
            snprintf(b, sizeof(b), "fwd.%ld.%ld", l, k / KEEP * KEEP);
            instr(&g, "bwd", l, k, a, b);
            snprintf(a, sizeof(a), "bwd.%ld.%ld", l, k);
        }
    put(&g, "  ROOT g = f32[4096,4096]{1,0} add(w, w)\n}\n");
    *len = g.pos;
    return g.buf;
}

int main(int argc, char **argv)
{
    long layers = argc > 1 ? atol(argv[1]) : 100;
    struct plan_limits l;
    struct plan_summary s;
    struct err e;
    size_t len = 0, out_len = 0;
    char *out = NULL, *text;
    double t0, t1, c0, c1;
    json_object *doc, *strategies;

    text = generate(layers < 1 ? 1 : layers, &len);
    if (text == NULL) {
        fprintf(stderr, "bench_program: out of memory\n");
        return 1;
    }
    plan_limits_default(&l);
    t0 = bench_wall();
    c0 = bench_cpu();
    if (plan_run(text, len, NULL, &l, &out, &out_len, NULL, &s, &e) != ERR_OK) {
        fprintf(stderr, "bench_program: plan: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    doc = json_tokener_parse(out);
    printf("bench_program: a training step of %ld layers in HLO text, %.1f MB, %zu buffers\n",
           layers, (double)len / 1e6, (size_t)s.tensors);
    printf("  plan end to end (best, default time): %.3f s wall, %.3f s cpu  (target < 1 s)\n",
           t1 - t0, c1 - c0);
    printf("  peak %.1f MB, lower bound %.1f MB, peak RSS %ld MB\n", (double)s.peak_bytes / 1e6,
           (double)s.lower_bound_bytes / 1e6, bench_peak_rss_kib() / 1024);
    if (doc != NULL && json_object_object_get_ex(doc, "packing", &strategies) &&
        json_object_object_get_ex(strategies, "strategies", &strategies))
        for (size_t k = 0; k < json_object_array_length(strategies); k++) {
            json_object *r = json_object_array_get_idx(strategies, k), *v;
            printf("    %-16s",
                   json_object_object_get_ex(r, "name", &v) ? json_object_get_string(v) : "?");
            if (json_object_object_get_ex(r, "seconds", &v))
                printf(" %8.3f s", json_object_get_double(v));
            if (json_object_object_get_ex(r, "peak_bytes", &v))
                printf(" %10.1f MB", (double)json_object_get_int64(v) / 1e6);
            printf("\n");
        }
    json_object_put(doc);
    free(out);
    free(text);
    return 0;
}
