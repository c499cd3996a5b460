/*
 * bench_pack.c - `make bench-pack`: every packing strategy on the MiniMalloc challenging
 * suite (capacity 1048576), each answer verified by pack_check, plus two scale rows: the
 * greedy strategies on a generated 1,000,000-buffer instance (time and peak RSS), then
 * xla-default on the same with one buffer in twenty a weight, live over the whole program.
 *
 * usage: bench_pack [--data DIR] [--algo a,b,...] [--time-limit S] [--only A,B,...]
 *                   [--threads N] [--goal min|fit] [--no-scale] [--scale-n N]
 *                   [--scale-life L] [--scale-weights W] [--scale-algo a,b,...] [--no-perfect]
 * [--sweep A-B] Perfect packings (perfect.h): the kept seed set, 400-500 buffers cut from a
 * rectangle whose height is the capacity and the lower bound, each given to "exact" with goal min
 * for 30 s (or --time-limit): found at the lower bound or not, time and search nodes.
 * --sweep A-B does the same for the seeds A to B with perfect_sweep_n(seed) buffers.
 * "nodes" counts the search nodes of the exact solver, the skyline search and the search
 * heuristic's probes (all threads; 0 for the greedy ones); "stage" is the stage whose
 * packing is the answer (greedy, skyline, search, exact: pack.h's pack_result.stage).
 * Time limits: 1 s for tpuplan-search and 30 s for exact unless --time-limit is given.
 * "time_s" is the whole run; "solved_s" is when a packing within the capacity was first
 * found (exact keeps minimising after that, until it proves the optimum or time runs out).
 * DIR defaults to $TPUPLAN_MINIMALLOC_DIR, else ../shared/data/minimalloc/challenging.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "perfect.h"
#include "planner/mmcsv.h"
#include "planner/pack.h"

#define CAPACITY 1048576 /* scripts/run-challenging.sh in google/minimalloc */

static const char *default_algos =
    "xla-spatial,xla-temporal,xla-area,xla-default,first-fit,tflite,tpuplan-search,exact";

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long sz;

    if (f == NULL)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) >= 0 && sz < (64l << 20) &&
        fseek(f, 0, SEEK_SET) == 0) {
        buf = malloc((size_t)sz + 1);
        if (buf != NULL && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
            free(buf);
            buf = NULL;
        }
        if (buf != NULL) {
            buf[sz] = '\0';
            *len = (size_t)sz;
        }
    }
    fclose(f);
    return buf;
}

/* The columns of run_row. */
static void row_header(void)
{
    printf("%-6s %8s %9s %-15s %9s %7s %-6s %-6s %8s %8s %11s %-8s\n", "inst", "buffers", "LB",
           "strategy", "peak", "peak/LB", "solved", "proven", "time_s", "solved_s", "nodes",
           "stage");
}

/* Runs one strategy, checks the answer, prints a row; returns 0 when it passed the checker. */
static int run_row(const char *inst, const struct pack_problem *p, const char *algo,
                   const struct pack_opts *o, int *solved, double *secs, double *solved_at)
{
    struct pack_result r;
    struct err e;
    int rc;

    err_clear(&e);
    rc = pack_run(p, algo, o, &r, &e);
    if (rc != ERR_OK) {
        printf("%-6s %8zu %-15s error: %s\n", inst, p->n, algo, e.msg);
        return -1;
    }
    {
        struct pack_problem q = *p;
        q.capacity = r.solved ? p->capacity : 0;
        rc = pack_check(&q, r.offsets, r.peak, &e);
    }
    printf("%-6s %8zu %9llu %-15s %9llu %7.4f %-6s %-6s %8.3f %8.3f %11llu %-8s%s%s\n", inst, p->n,
           (unsigned long long)r.lower_bound, algo, (unsigned long long)r.peak,
           r.lower_bound ? (double)r.peak / (double)r.lower_bound : 0.0, r.solved ? "yes" : "no",
           r.proven_optimal ? "yes" : "no", r.seconds, r.solved_seconds,
           (unsigned long long)r.nodes, r.stage, rc ? "  CHECK FAILED: " : "", rc ? e.msg : "");
    fflush(stdout);
    *solved = r.solved;
    *secs = r.seconds;
    *solved_at = r.solved_seconds;
    pack_result_free(&r);
    return rc;
}

/* A model-like instance: two buffers born per step, lifetimes of 1-maxlife steps (default 32)
 * with one in a thousand living up to 2000 steps (about maxlife buffers live at a time;
 * --scale-life 1000 gives about a thousand), sizes 1 KiB .. 16 MiB log-uniform. With
 * weights > 0, one buffer in n / weights lives from the first step to the last instead (the
 * greedy passes keep those apart: pack_heur.c). */
static int scale_row(size_t n, unsigned maxlife, size_t weights, const char *algos,
                     unsigned threads)
{
    struct pack_buffer *b = malloc(n * sizeof(*b));
    size_t every = weights > 0 ? n / weights : 0; /* one buffer in every is a weight */
    uint64_t s = 42;
    char list[512];
    int bad = 0;

    if (b == NULL)
        return 1;
    for (size_t i = 0; i < n; i++) {
        int64_t step = (int64_t)(i / 2);
        uint64_t r = rng_splitmix64(&s);
        int64_t life = (r % 1000) == 0 ? (int64_t)(rng_splitmix64(&s) % 2000) + 1
                                       : (int64_t)(rng_splitmix64(&s) % maxlife) + 1;
        b[i].lower = step;
        b[i].upper = step + life;
        b[i].size = (uint64_t)1024 << (rng_splitmix64(&s) % 15);
    }
    for (size_t i = 0; every > 0 && i < n; i += every) {
        b[i].lower = 0;
        b[i].upper = (int64_t)(n / 2) + 2000;
    }
    struct pack_problem p = {.n = n, .bufs = b, .capacity = 0, .alignment = 0};
    struct pack_opts o = {.threads = threads};
    printf("\nscale: generated instance, %zu buffers (model-like lifetimes of 1-%u steps)", n,
           maxlife);
    if (every > 0)
        printf(", %zu of them weights live throughout", (n + every - 1) / every);
    printf("\n");
    printf("%-15s %14s %9s %8s %8s %12s\n", "strategy", "peak", "peak/LB", "time_s", "cpu_s",
           "peak_rss_MiB");
    snprintf(list, sizeof(list), "%s", algos);
    for (char *save = NULL, *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
        struct pack_result r;
        struct err e;
        double t0 = bench_wall(), c0 = bench_cpu(), t, c;
        err_clear(&e);
        if (pack_run(&p, a, &o, &r, &e) != ERR_OK) {
            printf("%-15s error: %s\n", a, e.msg);
            bad = 1;
            continue;
        }
        t = bench_wall() - t0;
        c = bench_cpu() - c0;
        if (pack_check(&p, r.offsets, r.peak, &e) != ERR_OK) {
            printf("%-15s CHECK FAILED: %s\n", a, e.msg);
            bad = 1;
        }
        printf("%-15s %14llu %9.4f %8.3f %8.3f %12.1f\n", a, (unsigned long long)r.peak,
               (double)r.peak / (double)r.lower_bound, t, c, (double)bench_peak_rss_kib() / 1024.0);
        pack_result_free(&r);
    }
    free(b);
    return bad;
}

/* The perfect-packing seed set (perfect.h), or the seeds from..to of the sweep when to > 0,
 * through "exact"; 0 when every answer passed the checker. */
static int perfect_rows(const struct pack_opts *o, uint64_t from, uint64_t to)
{
    struct pack_opts oa = *o;
    int bad = 0, at_lb = 0;
    double total = 0, worst = 0;
    size_t count = to > 0 ? (size_t)(to - from + 1) : PERFECT_NSEEDS;

    if (oa.time_limit_s == 0)
        oa.time_limit_s = 30;
    printf("\nperfect packings (perfect.h): capacity = lower bound = %llu, exact, goal %s, "
           "%.0f s each\n",
           (unsigned long long)PERFECT_CAPACITY, pack_goal_name(oa.goal), oa.time_limit_s);
    row_header();
    for (size_t k = 0; k < count; k++) {
        struct perfect_seed ps =
            to > 0 ? (struct perfect_seed){from + k, perfect_sweep_n(from + k)} : perfect_seeds[k];
        size_t n = ps.n;
        struct pack_buffer *b = malloc(n * sizeof(*b));
        char inst[16];
        int solved = 0;
        double secs = 0, solved_at = 0;
        if (b == NULL ||
            perfect_instance(ps.seed, n, PERFECT_CAPACITY, PERFECT_HORIZON, b, NULL) != 0) {
            printf("seed %llu: cannot generate\n", (unsigned long long)ps.seed);
            free(b);
            bad = 1;
            continue;
        }
        struct pack_problem p = {.n = n, .bufs = b, .capacity = PERFECT_CAPACITY};
        snprintf(inst, sizeof(inst), "%s%llu", to > 0 ? "S" : "P", (unsigned long long)ps.seed);
        if (run_row(inst, &p, "exact", &oa, &solved, &secs, &solved_at) != 0)
            bad = 1;
        at_lb += solved; /* capacity = LB: within the capacity is at the lower bound */
        total += secs;
        worst = secs > worst ? secs : worst;
        free(b);
    }
    printf("perfect: %d of %zu at the lower bound within %.0f s each (%.1f s in all, slowest "
           "%.2f s)\n",
           at_lb, count, oa.time_limit_s, total, worst);
    return bad;
}

/* The command line. */
struct bench_args {
    const char *dir, *algos, *only, *scale_algos;
    struct pack_opts o;
    int noscale, noperfect;
    unsigned long long sweep_from, sweep_to;
    size_t scale_n;
    unsigned scale_life;
    size_t scale_weights; /* SIZE_MAX: n / 20; 0: no row with weights */
};

/* 0, or 2 after the usage line when an argument is not understood. */
static int parse_args(int argc, char **argv, struct bench_args *a)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            a->dir = argv[++i];
        else if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc)
            a->algos = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            a->only = argv[++i];
        else if (strcmp(argv[i], "--time-limit") == 0 && i + 1 < argc)
            a->o.time_limit_s = atof(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            a->o.threads = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--scale-n") == 0 && i + 1 < argc)
            a->scale_n = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--scale-life") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0)
            a->scale_life = (unsigned)atoi(argv[++i]);
        else if (strcmp(argv[i], "--scale-algo") == 0 && i + 1 < argc)
            a->scale_algos = argv[++i];
        else if (strcmp(argv[i], "--scale-weights") == 0 && i + 1 < argc)
            a->scale_weights = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--no-scale") == 0)
            a->noscale = 1;
        else if (strcmp(argv[i], "--no-perfect") == 0)
            a->noperfect = 1;
        else if (strcmp(argv[i], "--sweep") == 0 && i + 1 < argc &&
                 sscanf(argv[i + 1], "%llu-%llu", &a->sweep_from, &a->sweep_to) == 2 &&
                 a->sweep_from <= a->sweep_to && a->sweep_to - a->sweep_from < 100000)
            i++;
        else if (strcmp(argv[i], "--goal") == 0 && i + 1 < argc &&
                 pack_goal_parse(argv[i + 1], &a->o.goal) == 0)
            i++;
        else {
            fprintf(stderr, "usage: bench_pack [--data DIR] [--algo a,b] [--only A,B] "
                            "[--time-limit S] [--threads N] [--goal min|fit] [--no-scale] "
                            "[--scale-n N] [--scale-life L] [--scale-weights W] [--scale-algo a,b] "
                            "[--no-perfect] "
                            "[--sweep A-B]\n");
            return 2;
        }
    }
    return 0;
}

/* The MiniMalloc challenging suite: every instance found under a->dir, each strategy of
 * a->algos on it. Nonzero when a row failed. */
static int suite_rows(const struct bench_args *a)
{
    const char names[] = "ABCDEFGHIJK";
    int found = 0, bad = 0, solved_exact = 0;
    double total_exact = 0, total_solved = 0;

    printf("MiniMalloc challenging suite, capacity %d, data %s\n", CAPACITY, a->dir);
    row_header();
    for (const char *c = names; *c; c++) {
        char path[4096], inst[2] = {*c, 0};
        char *text;
        size_t len = 0;
        struct mmcsv m;
        struct err e;

        if (a->only != NULL && strchr(a->only, *c) == NULL)
            continue;
        snprintf(path, sizeof(path), "%s/%c.%d.csv", a->dir, *c, CAPACITY);
        text = read_all(path, &len);
        if (text == NULL) {
            printf("%-6s skipped: cannot read %s\n", inst, path);
            continue;
        }
        found++;
        err_clear(&e);
        if (mmcsv_parse(text, len, PACK_MAX_BUFFERS, &m, &e) != ERR_OK) {
            printf("%-6s parse error: %s\n", inst, e.msg);
            free(text);
            bad = 1;
            continue;
        }
        struct pack_problem p = {.n = m.n, .bufs = m.bufs, .capacity = CAPACITY};
        char list[512];
        snprintf(list, sizeof(list), "%s", a->algos);
        for (char *save = NULL, *al = strtok_r(list, ",", &save); al;
             al = strtok_r(NULL, ",", &save)) {
            int solved = 0;
            double secs = 0, solved_at = 0;
            struct pack_opts oa = a->o;
            /* Defaults: the heuristic's 1 s budget; exact gets 30 s to minimise and prove. */
            if (oa.time_limit_s == 0)
                oa.time_limit_s = strcmp(al, "exact") == 0 ? 30 : 1;
            if (run_row(inst, &p, al, &oa, &solved, &secs, &solved_at) != 0)
                bad = 1;
            if (strcmp(al, "exact") == 0) {
                total_exact += secs;
                total_solved += solved ? solved_at : secs;
                solved_exact += solved;
            }
        }
        mmcsv_free(&m);
        free(text);
    }
    if (found == 0)
        printf("no instance found under %s (set TPUPLAN_MINIMALLOC_DIR or --data): skipped\n",
               a->dir);
    else if (strstr(a->algos, "exact") != NULL)
        printf("exact: %d of %d solved within capacity; time to the first packing within capacity "
               "%.2f s in total (unsolved instances count their whole run), %.2f s with "
               "minimisation\n",
               solved_exact, found, total_solved, total_exact);
    return bad;
}

int main(int argc, char **argv)
{
    struct bench_args a = {
        .dir = getenv("TPUPLAN_MINIMALLOC_DIR"),
        .algos = default_algos,
        .scale_algos = "xla-spatial,xla-temporal,xla-area,xla-default,first-fit,tflite",
        .o = {.time_limit_s = 0, .seed = 1, .threads = 0},
        .scale_n = 1000000,
        .scale_life = 32,
        .scale_weights = SIZE_MAX,
    };
    int bad;

    if (a.dir == NULL)
        a.dir = "../shared/data/minimalloc/challenging";
    if (parse_args(argc, argv, &a) != 0)
        return 2;
    bad = suite_rows(&a);
    if (!a.noperfect)
        bad |= perfect_rows(&a.o, 0, 0);
    if (a.sweep_to > 0)
        bad |= perfect_rows(&a.o, a.sweep_from, a.sweep_to);
    if (!a.noscale)
        bad |= scale_row(a.scale_n, a.scale_life, 0, a.scale_algos, a.o.threads);
    if (a.scale_weights == SIZE_MAX)
        a.scale_weights = a.scale_n / 20;
    if (!a.noscale && a.scale_weights > 0 && a.scale_weights <= a.scale_n)
        bad |= scale_row(a.scale_n, a.scale_life, a.scale_weights, "xla-default", a.o.threads);
    return bad;
}
