/*
 * cli_pack.c - `tpuplan pack FILE`: static buffer assignment of a MiniMalloc CSV (or of a
 * model description, through plan_buffers), with one or every strategy.
 *
 * Prints a summary table (strategy, peak, LB, capacity, solved, proven, time) and writes
 * the best packing as MiniMalloc's solution CSV (the input columns plus offset) to --out.
 * Exit status: 0 a packing within the capacity was found (or no capacity was given),
 * 1 infeasible or out of time, 2 bad input or usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/mmcsv.h"
#include "planner/pack.h"
#include "planner/plan.h"

#define PACK_INPUT_MAX   ((size_t)64 << 20) /* bytes of input read */
#define PACK_THREADS_MAX 64

static const char usage[] =
    "usage: tpuplan pack FILE [--capacity N] [--algo NAME|all|exact|best] [--time-limit SECONDS]\n"
    "                         [--out FILE.csv] [--seed N] [--threads N]\n"
    "FILE is a MiniMalloc CSV (id,lower,upper,size; \"-\" reads stdin) or a model description.\n"
    "--algo: one of %s,\n"
    "        all (every strategy, listed) or best (heuristics, then exact; the default)\n"
    "--out F writes the best packing as CSV with an offset column (\"-\": stdout).\n"
    "exit status: 0 packed within the capacity, 1 infeasible or out of time, 2 bad input\n";

/* Strict unsigned decimal; 0 on success. */
static int parse_u64(const char *s, uint64_t *v)
{
    char *end;

    if (s == NULL || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return (errno != 0 || *end != '\0') ? -1 : 0;
}

/* Rewrites "buffer 17 ..." messages from the planner with the buffer's id and line. */
static void print_problem_error(const char *path, const struct err *e, char **ids,
                                const size_t *lines, size_t n)
{
    size_t idx;
    char prefix[48];
    int used = 0;

    if (ids != NULL && sscanf(e->where, "buffers[%zu]%n", &idx, &used) == 1 && used > 0 &&
        idx < n) {
        snprintf(prefix, sizeof(prefix), "buffer %zu", idx);
        if (strncmp(e->msg, prefix, strlen(prefix)) == 0) {
            fprintf(stderr, "tpuplan: %s: buffer %s%s", path, ids[idx], e->msg + strlen(prefix));
            if (lines != NULL)
                fprintf(stderr, " (line %zu)", lines[idx]);
            fputc('\n', stderr);
            return;
        }
    }
    fprintf(stderr, "tpuplan: %s: %s\n", path, e->msg);
}

static void print_row(const struct pack_result *r, uint64_t capacity)
{
    char cap[24];

    if (capacity > 0)
        snprintf(cap, sizeof(cap), "%" PRIu64, capacity);
    else
        snprintf(cap, sizeof(cap), "-");
    printf("%-15s %14" PRIu64 " %14" PRIu64 " %8.4f %14s %-6s %-6s %9.3f\n", r->strategy, r->peak,
           r->lower_bound, r->lower_bound ? (double)r->peak / (double)r->lower_bound : 1.0, cap,
           r->solved ? "yes" : "no", r->proven_optimal ? "yes" : "no", r->seconds);
}

static int write_out(const char *out, const struct mmcsv *m, const uint64_t *offsets)
{
    char *text = NULL;
    size_t len = 0;
    struct err e;
    FILE *f;
    int rc = 0;

    err_clear(&e);
    if (mmcsv_format(m, offsets, &text, &len, &e) != ERR_OK) {
        fprintf(stderr, "tpuplan: %s\n", e.msg);
        return -1;
    }
    f = strcmp(out, "-") == 0 ? stdout : fopen(out, "w");
    if (f == NULL) {
        fprintf(stderr, "tpuplan: %s: %s\n", out, strerror(errno));
        free(text);
        return -1;
    }
    if (fwrite(text, 1, len, f) != len)
        rc = -1;
    if (f != stdout && fclose(f) != 0)
        rc = -1;
    if (rc != 0)
        fprintf(stderr, "tpuplan: %s: write error\n", out);
    free(text);
    return rc;
}

int cli_pack(int argc, char **argv)
{
    const char *path = NULL, *algo = "best", *outpath = NULL;
    uint64_t capacity = 0, seed = 1, threads = 0;
    double limit = 0;
    char *input = NULL;
    size_t len = 0;
    struct mmcsv m = {0};
    struct plan_buffers pb = {0};
    struct pack_problem p = {0};
    struct pack_opts o = {0};
    struct pack_result best = {0};
    const char *names[16];
    size_t nnames = 0;
    char list[256];
    struct err e;
    int status = 2, have_best = 0, have_cap = 0;

    err_clear(&e);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a == NULL)
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            printf(usage, pack_strategy_names());
            return 0;
        } else if (strcmp(a, "--capacity") == 0) {
            if (parse_u64(v, &capacity) != 0 || capacity == 0) {
                fprintf(stderr, "tpuplan: --capacity needs a positive integer (bytes), got '%s'\n",
                        v ? v : "");
                return 2;
            }
            have_cap = 1;
            i++;
        } else if (strcmp(a, "--algo") == 0 && v != NULL) {
            algo = v;
            i++;
        } else if (strcmp(a, "--time-limit") == 0) {
            char *end = NULL;
            limit = v ? strtod(v, &end) : -1;
            if (v == NULL || end == v || *end != '\0' || !isfinite(limit) || limit <= 0 ||
                limit > PACK_TIME_LIMIT_MAX) {
                fprintf(stderr, "tpuplan: --time-limit must be in (0, %d] seconds, got '%s'\n",
                        PACK_TIME_LIMIT_MAX, v ? v : "");
                return 2;
            }
            i++;
        } else if (strcmp(a, "--out") == 0 && v != NULL) {
            outpath = v;
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            if (parse_u64(v, &seed) != 0) {
                fprintf(stderr, "tpuplan: --seed needs a non-negative integer, got '%s'\n",
                        v ? v : "");
                return 2;
            }
            i++;
        } else if (strcmp(a, "--threads") == 0) {
            if (parse_u64(v, &threads) != 0 || threads < 1 || threads > PACK_THREADS_MAX) {
                fprintf(stderr, "tpuplan: --threads must be in [1, %d], got '%s'\n",
                        PACK_THREADS_MAX, v ? v : "");
                return 2;
            }
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "tpuplan: pack: unknown or incomplete option '%s'\n", a);
            fprintf(stderr, usage, pack_strategy_names());
            return 2;
        } else if (path == NULL) {
            path = a;
        } else {
            fprintf(stderr, "tpuplan: pack: one FILE only ('%s')\n", a);
            return 2;
        }
    }
    if (path == NULL) {
        fprintf(stderr, usage, pack_strategy_names());
        return 2;
    }
    /* The strategy list: one name, "all" or "best". */
    if (strcmp(algo, "all") == 0) {
        snprintf(list, sizeof(list), "%s", pack_strategy_names());
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t && nnames < 16;
             t = strtok_r(NULL, ",", &save))
            names[nnames++] = t;
    } else {
        names[nnames++] = algo;
    }
    if (cli_read_file(path, PACK_INPUT_MAX, &input, &len) != 0)
        return 2;

    if (mmcsv_detect(input, len)) {
        if (mmcsv_parse(input, len, PACK_MAX_BUFFERS, &m, &e) != ERR_OK) {
            fprintf(stderr, "tpuplan: %s: %s\n", path, e.msg);
            goto out;
        }
        if (m.ignored[0] != '\0')
            fprintf(stderr, "tpuplan: note: %s: columns %s are ignored\n", path, m.ignored);
        p.n = m.n;
        p.bufs = m.bufs;
    } else {
        struct plan_opts po = {0};
        struct plan_limits pl;
        plan_limits_default(&pl);
        if (plan_buffers(input, len, &po, &pl, &pb, &e) != ERR_OK) {
            if (e.code == ERR_INTERNAL)
                fprintf(stderr,
                        "tpuplan: %s: not a MiniMalloc CSV (header id,lower,upper,size), and "
                        "model input is not available: %s\n",
                        path, e.msg);
            else
                fprintf(stderr, "tpuplan: %s: %s\n", path, e.msg);
            goto out;
        }
        p.n = pb.n;
        p.bufs = pb.bufs;
        p.alignment = pb.alignment;
        if (!have_cap)
            capacity = pb.capacity;
    }
    p.capacity = capacity;
    if (pack_validate(&p, &e) != ERR_OK) {
        print_problem_error(path, &e, m.n ? m.ids : pb.names, m.n ? m.lines : NULL, p.n);
        goto out;
    }
    o.time_limit_s = limit;
    o.seed = seed;
    o.threads = (unsigned)threads;

    FILE *tab = outpath != NULL && strcmp(outpath, "-") == 0 ? stderr : stdout;
    fflush(stdout);
    if (tab == stderr) {
        /* The table goes to stderr when the CSV takes stdout. */
        fprintf(stderr, "%s: %zu buffers\n", path, p.n);
    } else {
        printf("%s: %zu buffers\n", path, p.n);
    }
    if (tab == stdout)
        printf("%-15s %14s %14s %8s %14s %-6s %-6s %9s\n", "strategy", "peak", "LB", "peak/LB",
               "capacity", "solved", "proven", "time_s");
    for (size_t k = 0; k < nnames; k++) {
        struct pack_result r;
        err_clear(&e);
        if (pack_run(&p, names[k], &o, &r, &e) != ERR_OK) {
            if (e.code == ERR_NOTFOUND || e.code == ERR_INVALID || e.code == ERR_LIMIT) {
                fprintf(stderr, "tpuplan: %s\n", e.msg);
                goto out;
            }
            fprintf(stderr, "tpuplan: %s: %s\n", names[k], e.msg);
            status = 1;
            continue;
        }
        if (tab == stdout) {
            print_row(&r, capacity);
        } else {
            fprintf(stderr, "%s: peak %" PRIu64 ", LB %" PRIu64 ", solved %s, proven %s, %.3f s\n",
                    r.strategy, r.peak, r.lower_bound, r.solved ? "yes" : "no",
                    r.proven_optimal ? "yes" : "no", r.seconds);
        }
        if (!have_best || r.peak < best.peak ||
            (r.peak == best.peak && r.proven_optimal && !best.proven_optimal)) {
            pack_result_free(&best);
            best = r;
            have_best = 1;
        } else {
            pack_result_free(&r);
        }
    }
    fflush(stdout);
    if (!have_best) {
        status = 1;
        goto out;
    }
    if (nnames > 1 && tab == stdout)
        printf("best: %s, peak %" PRIu64 " (%.4f x LB)%s\n", best.strategy, best.peak,
               best.lower_bound ? (double)best.peak / (double)best.lower_bound : 1.0,
               best.proven_optimal ? ", proven optimal" : "");
    if (capacity > 0 && !best.solved)
        fprintf(stderr,
                "tpuplan: %s: no packing within the capacity %" PRIu64 " found (best peak %" PRIu64
                "%s)\n",
                path, capacity, best.peak,
                best.proven_optimal ? ", proven minimal: infeasible" : "");
    status = best.solved ? 0 : 1;
    if (outpath != NULL) {
        if (m.n > 0 || p.n == 0) {
            if (write_out(outpath, &m, best.offsets) != 0)
                status = 2;
        } else {
            /* A model input: same columns, ids are tensor names. */
            struct mmcsv mm = {.n = pb.n, .bufs = pb.bufs, .ids = pb.names};
            if (write_out(outpath, &mm, best.offsets) != 0)
                status = 2;
        }
    }
out:
    pack_result_free(&best);
    mmcsv_free(&m);
    plan_buffers_free(&pb);
    free(input);
    return status;
}
