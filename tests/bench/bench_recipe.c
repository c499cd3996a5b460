/*
 * bench_recipe.c - a recipe made into its model and planned, end to end through plan_run:
 * a Llama-3.1-405B-sized training step (126 layers; the sizes of the published config, which
 * no preset copies) on a 256-chip mesh (fsdp 64 x tensor 4), scanned and unrolled, and the
 * same on a 4-stage pipeline (each stage made and measured, the worst planned). Target:
 * generated and planned in under 1 s (issue 23), the "best" strategies included: scanned
 * layers (the default) are a few hundred tensors; unrolled, 12,629, where the search
 * strategies run to their time limit (2 s) unless a greedy packing reaches the lower bound,
 * so a greedy-only row is shown beside it.
 *
 *   bench_recipe [ROUNDS]     (default 5: the best and the median of ROUNDS are printed)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/plan.h"

#define L405B                                                                                      \
    "\"model\": {\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 16384, "              \
    "\"intermediate_size\": 53248, \"num_attention_heads\": 128, \"num_hidden_layers\": 126, "     \
    "\"num_key_value_heads\": 8, \"vocab_size\": 128256, \"tie_word_embeddings\": false}, "        \
    "\"chip\": \"v5p\""

static const struct {
    const char *name;
    const char *strategies; /* NULL: best */
    const char *recipe;
} cases[] = {
    {"405B scan, fsdp 64 x tensor 4", NULL,
     "{" L405B ", \"train\": {\"batch\": 64, \"seq\": 8192}, \"mesh\": {\"fsdp\": 64, "
     "\"tensor\": 4}}"},
    {"405B unrolled, fsdp 64 x tensor 4", NULL,
     "{" L405B ", \"train\": {\"batch\": 64, \"seq\": 8192, \"scan\": false}, \"mesh\": "
     "{\"fsdp\": 64, \"tensor\": 4}}"},
    {"405B unrolled, greedy strategies only", "xla-spatial,xla-temporal,xla-area,tflite",
     "{" L405B ", \"train\": {\"batch\": 64, \"seq\": 8192, \"scan\": false}, \"mesh\": "
     "{\"fsdp\": 64, \"tensor\": 4}}"},
    {"405B scan, 4 stages x fsdp 16 x tensor 4, 1F1B", NULL,
     "{" L405B ", \"train\": {\"batch\": 64, \"seq\": 8192}, \"mesh\": {\"pipeline\": 4, "
     "\"fsdp\": 16, \"tensor\": 4}, \"parallelism\": {\"pipeline\": {\"microbatches\": 8}}}"},
};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;

    if (rounds < 1 || rounds > 100)
        rounds = 5;
    printf("bench_recipe: a recipe made into its model and planned (plan_run, strategies best),\n"
           "  target under 1 s; wall s best / median of %d, cpu s of the median run\n",
           rounds);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        double wall[100], cpu[100];
        struct plan_opts o = {.strategies = cases[k].strategies};
        struct plan_summary s;
        for (int i = 0; i < rounds; i++) {
            char *out = NULL;
            size_t out_len = 0;
            struct err e;
            double t0 = bench_wall(), c0 = bench_cpu();
            if (plan_run(cases[k].recipe, strlen(cases[k].recipe), &o, NULL, &out, &out_len, NULL,
                         &s, &e) != ERR_OK) {
                fprintf(stderr, "bench_recipe: %s: %s\n", cases[k].name, e.msg);
                return 1;
            }
            wall[i] = bench_wall() - t0;
            cpu[i] = bench_cpu() - c0;
            free(out);
        }
        qsort(wall, (size_t)rounds, sizeof(double), cmp);
        qsort(cpu, (size_t)rounds, sizeof(double), cmp);
        printf("  %-48s %6zu tensors  %.3f / %.3f s wall  %.3f s cpu  peak %.2f GB of %.2f  %s\n",
               cases[k].name, s.tensors, wall[0], wall[rounds / 2], cpu[rounds / 2],
               (double)s.peak_bytes / 1e9, (double)s.capacity_bytes / 1e9,
               wall[rounds / 2] < 1.0 ? "under 1 s" : "OVER 1 s");
    }
    printf("  peak RSS %ld MB\n", bench_peak_rss_kib() / 1024);
    return 0;
}
