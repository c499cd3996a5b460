/*
 * bench_kernels.c - VMEM planning of 10,000 Pallas kernels (kernel.h) with suggestions:
 * the planner alone (kernel_plan + kernel_suggest over a parsed kernel set), then end to
 * end through plan_run on a JSON model of kernels only (json-c parse, every kernel
 * planned, then planned again with its suggestions while the result is written). The
 * kernels are blocked matmuls (grid of 3 axes, 3 pipelined operands and an accumulator)
 * with tiles of 128 to 4096 and mixed dtypes, on v5e: about half are over the 16 MiB
 * scoped limit, so the block search runs for them.
 *
 *   bench_kernels [N]    (default 10000)
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/chip.h"
#include "planner/kernel.h"
#include "planner/model_json.h"
#include "planner/plan.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;

static const char *const dts[] = {"f32", "bf16", "s8", "bf16"};

/* One matmul kernel's JSON into buf; returns its length. */
static int kernel_json(char *buf, size_t cap, size_t i)
{
    int64_t t[3], m = 8192;
    const char *dt = dts[rng_xorshift64(&rng) % 4];

    for (int a = 0; a < 3; a++)
        t[a] = (int64_t)128 << (rng_xorshift64(&rng) % 6); /* 128 .. 4096 */
    return snprintf(buf, cap,
                    "%s{\"name\":\"mm%zu\",\"grid\":[%lld,%lld,%lld],\"flops\":%lld,"
                    "\"inputs\":[{\"name\":\"x\",\"block\":[%lld,%lld],\"array\":[8192,8192],"
                    "\"dtype\":\"%s\",\"index_map\":[0,2]},{\"name\":\"y\",\"block\":[%lld,%lld],"
                    "\"array\":[8192,8192],\"dtype\":\"%s\",\"index_map\":[2,1]}],"
                    "\"outputs\":[{\"name\":\"o\",\"block\":[%lld,%lld],\"array\":[8192,8192],"
                    "\"dtype\":\"f32\",\"index_map\":[0,1]}],\"scratch\":[{\"name\":\"acc\","
                    "\"shape\":[%lld,%lld],\"dtype\":\"f32\"}]}",
                    i ? "," : "", i, (long long)(m / t[0]), (long long)(m / t[1]),
                    (long long)(m / t[2]), (long long)2 * t[0] * t[1] * t[2], (long long)t[0],
                    (long long)t[2], dt, (long long)t[2], (long long)t[1], dt, (long long)t[0],
                    (long long)t[1], (long long)t[0], (long long)t[1]);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 10000, len = 0, cap;
    char *in, *out = NULL;
    size_t out_len = 0, over = 0, nsug = 0;
    struct plan_limits l;
    struct plan_summary s;
    struct err e;
    double t0, c0;

    cap = 64 + n * 1024;
    if (n == 0 || (in = malloc(cap)) == NULL)
        return 1;
    len = (size_t)snprintf(in, cap,
                           "{\"name\":\"kernels\",\"chip\":\"v5e\",\"tensors\":[],\"kernels\":[");
    for (size_t i = 0; i < n; i++)
        len += (size_t)kernel_json(in + len, cap - len, i);
    len += (size_t)snprintf(in + len, cap - len, "]}");

    {
        struct plan_opts o = {0};
        plan_limits_default(&l);
        o.strategies = "first-fit";
        t0 = bench_wall();
        c0 = bench_cpu();
        if (plan_run(in, len, &o, &l, &out, &out_len, NULL, &s, &e) != ERR_OK) {
            fprintf(stderr, "bench_kernels: %s\n", e.msg);
            free(in);
            return 1;
        }
        double wall = bench_wall() - t0, cpu = bench_cpu() - c0;
        for (const char *p = out; (p = strstr(p, "\"kind\":\"blocks\"")) != NULL; p++)
            nsug++;
        for (const char *p = out; (p = strstr(p, "\"error\":\"E1001")) != NULL; p++)
            over++;
        printf("%-34s %10s %9s %9s %12s %s\n", "benchmark", "kernels", "wall s", "cpu s",
               "kernels/s", "notes");
        printf("%-34s %10zu %9.3f %9.3f %12.0f %zu over the limit, %zu block suggestions, "
               "input %.1f MB, result %.1f MB, peak RSS %ld MiB\n",
               "plan_run: parse+plan+suggest+JSON", n, wall, cpu, (double)n / cpu, over, nsug,
               (double)len / 1e6, (double)out_len / 1e6, bench_peak_rss_kib() / 1024);
        free(out);
    }
    /* the planner alone, on the kernels parsed once */
    {
        json_object *root = json_tokener_parse(in), *arr = NULL;
        const struct chip *chip = chip_find("v5e");
        struct kernel_operand_plan rows[KERNEL_MAX_OPERANDS];
        struct kernel_set ks;
        struct kernel_plan p;
        size_t sug = 0;
        if (root == NULL || !json_object_object_get_ex(root, "kernels", &arr) ||
            kernel_set_parse(arr, n, &ks, &e) != ERR_OK) {
            fprintf(stderr, "bench_kernels: cannot parse the kernels\n");
            json_object_put(root);
            free(in);
            return 1;
        }
        t0 = bench_wall();
        c0 = bench_cpu();
        for (size_t i = 0; i < ks.n; i++) {
            if (kernel_plan(&ks.k[i], i, chip, rows, &p, &e) != ERR_OK)
                break;
            kernel_suggest(&ks.k[i], &p);
            sug += p.nsug;
        }
        double wall = bench_wall() - t0, cpu = bench_cpu() - c0;
        printf("%-34s %10zu %9.3f %9.3f %12.0f %zu suggestions of every kind\n",
               "kernel_plan + kernel_suggest", ks.n, wall, cpu, (double)ks.n / cpu, sug);
        kernel_set_free(&ks);
        json_object_put(root);
    }
    free(in);
    return 0;
}
