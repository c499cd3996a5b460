/*
 * bench_fit.c - the frontier search (frontier.h) on a 70B-class recipe: Llama 3.1 70B
 * trained on 4 pipeline stages of 16 v5p chips each (tests/data/recipes/
 * llama-3.1-70b-pipeline.json), the largest global batch in multiples of 8 for each of four
 * remat policies: one search per policy, every candidate a full plan. The bar (issue 24): a
 * sweep of 20 or more plans in under 2 s.
 *
 *   bench_fit
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "planner/frontier.h"

static const char RECIPE[] =
    "{\"name\": \"llama-3.1-70b-pp4\", \"chip\": \"v5p\", \"model\": {\"preset\": "
    "\"llama-3.1-70b\"}, \"train\": {\"batch\": 64, \"seq\": 4096, \"remat\": "
    "\"nothing_saveable\"}, \"mesh\": {\"fsdp\": 16, \"pipeline\": 4}, \"parallelism\": "
    "{\"pipeline\": {\"microbatches\": 8, \"schedule\": \"1f1b\"}}}";

int main(void)
{
    static const char *const remat[] = {"nothing_saveable", "dots_with_no_batch_dims_saveable",
                                        "dots_saveable", "everything_saveable"};
    struct frontier_query q = {.maximize = "batch",
                               .step = 8,
                               .hi = 4096,
                               .sweep = "train.remat",
                               .sweep_values = remat,
                               .n_sweep = 4};
    struct frontier_result r;
    struct err e;
    double t0 = bench_wall(), c0 = bench_cpu(), t1, c1;

    if (frontier_search(RECIPE, strlen(RECIPE), NULL, NULL, &q, &r, &e) != ERR_OK) {
        fprintf(stderr, "bench_fit: %s\n", e.msg);
        return 1;
    }
    t1 = bench_wall();
    c1 = bench_cpu();
    printf("bench_fit: largest batch of Llama 3.1 70B, 4 pipeline stages x 16 v5p, per remat\n");
    printf("  %-34s %9s %7s %8s\n", "", "max batch", "wall s", "cpu s");
    for (size_t k = 0; k < r.n_lines; k++)
        printf("  %-34s %9lld\n", r.lines[k].value, (long long)r.lines[k].max_fit);
    printf("  %-34s %9zu %7.3f %8.3f%s\n", "plans, all four searches", r.plans, t1 - t0, c1 - c0,
           c1 - c0 < 2.0 ? "" : "  (over the 2 s bar, CPU)");
    frontier_free(&r);
    return 0;
}
