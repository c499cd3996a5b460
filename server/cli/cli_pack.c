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
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/mmcsv.h"
#include "planner/pack.h"
#include "planner/plan.h"
#include "planner/plan_options.h"

#define PACK_INPUT_MAX ((size_t)64 << 20) /* bytes of input read */

static const char usage_head[] =
    "usage: tpuplan pack FILE [--algo NAME|all|exact|best] [--out FILE.csv] [--seed N]\n"
    "                         [--OPTION VALUE]...\n"
    "FILE is a MiniMalloc CSV (id,lower,upper,size; \"-\" reads stdin) or a model description.\n"
    "--algo: one of %s,\n"
    "        all (every strategy, listed) or best (heuristics, then exact; the default)\n"
    "--out F writes the best packing as CSV with an offset column (\"-\": stdout).\n"
    "--seed N seeds the search strategies (default 1).\n"
    "options (as `tpuplan plan`'s):\n";

static void print_usage(FILE *f)
{
    fprintf(f, usage_head, pack_strategy_names());
    cli_print_opts(f, PLAN_OPT_PACK);
    fputs("exit status: 0 packed within the capacity, 1 infeasible or out of time, 2 bad input\n",
          f);
}

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

/* What the command line asks for: the table's options in po (plan_options.h). */
struct pack_args {
    const char *path, *algo, *outpath;
    uint64_t seed;
    struct plan_opts po;
};

/* One of pack's own flags with its value into *a; 0, 1 when it is none, 2 after saying why. */
static int pack_flag(const char *o, const char *v, struct pack_args *a)
{
    if (strcmp(o, "--algo") == 0)
        a->algo = v;
    else if (strcmp(o, "--out") == 0)
        a->outpath = v;
    else if (strcmp(o, "--seed") != 0)
        return 1;
    else if (parse_u64(v, &a->seed) != 0) {
        fprintf(stderr, "tpuplan pack: --seed needs a non-negative integer, got '%s'\n", v);
        return 2;
    }
    return 0;
}

/* Parses the options; returns -1 to go on, else the exit status (0 after --help, 2 for
 * bad usage, already reported). */
static int parse_args(int argc, char **argv, struct pack_args *a)
{
    *a = (struct pack_args){.algo = "best", .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc;
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            print_usage(stdout);
            return 0;
        }
        if (o[0] != '-' || o[1] == '\0') {
            if (a->path != NULL) {
                fprintf(stderr, "tpuplan: pack: one FILE only ('%s')\n", o);
                return 2;
            }
            a->path = o;
            continue;
        }
        if (v == NULL) {
            fprintf(stderr, "tpuplan pack: %s needs a value\n", o);
            print_usage(stderr);
            return 2;
        }
        i++;
        if ((rc = pack_flag(o, v, a)) == 1 &&
            (rc = cli_plan_opt("pack", PLAN_OPT_PACK, o, v, &a->po)) == 1) {
            fprintf(stderr, "tpuplan pack: unknown option %s\n", o);
            print_usage(stderr);
        }
        if (rc != 0)
            return 2;
    }
    if (a->path == NULL) {
        print_usage(stderr);
        return 2;
    }
    return -1;
}

/* The problem read from the input: a MiniMalloc CSV (m) or a model description (pb); p
 * borrows the buffers of whichever it is. */
struct pack_input {
    char *text;
    size_t len;
    struct mmcsv m;
    struct plan_buffers pb;
    struct pack_problem p;
};

static void input_free(struct pack_input *in)
{
    mmcsv_free(&in->m);
    plan_buffers_free(&in->pb);
    free(in->text);
}

/* Reads and validates the problem; 0, or -1 after reporting why not. */
static int input_load(const struct pack_args *a, struct pack_input *in, struct err *e)
{
    uint64_t capacity = a->po.capacity;

    if (cli_read_file(a->path, PACK_INPUT_MAX, &in->text, &in->len) != 0)
        return -1;
    if (mmcsv_detect(in->text, in->len)) {
        if (mmcsv_parse(in->text, in->len, PACK_MAX_BUFFERS, &in->m, e) != ERR_OK) {
            fprintf(stderr, "tpuplan: %s: %s\n", a->path, e->msg);
            return -1;
        }
        if (in->m.ignored[0] != '\0')
            fprintf(stderr, "tpuplan: note: %s: columns %s are ignored\n", a->path, in->m.ignored);
        in->p.n = in->m.n;
        in->p.bufs = in->m.bufs;
    } else {
        struct plan_opts po = {0};
        struct plan_limits pl;
        plan_limits_default(&pl);
        if (plan_buffers(in->text, in->len, &po, &pl, &in->pb, e) != ERR_OK) {
            if (e->code == ERR_INTERNAL)
                fprintf(stderr,
                        "tpuplan: %s: not a MiniMalloc CSV (header id,lower,upper,size), and "
                        "model input is not available: %s\n",
                        a->path, e->msg);
            else
                fprintf(stderr, "tpuplan: %s: %s\n", a->path, e->msg);
            return -1;
        }
        in->p.n = in->pb.n;
        in->p.bufs = in->pb.bufs;
        in->p.alignment = in->pb.alignment;
        if (capacity == 0)
            capacity = in->pb.capacity;
    }
    in->p.capacity = capacity;
    if (pack_validate(&in->p, e) != ERR_OK) {
        print_problem_error(a->path, e, in->m.n ? in->m.ids : in->pb.names,
                            in->m.n ? in->m.lines : NULL, in->p.n);
        return -1;
    }
    return 0;
}

/*
 * Runs each strategy of the list ("all": every one), printing a row each (tab: the table
 * on stdout, or the short form on stderr), and keeps the best answer in *best. A strategy
 * that fails sets *status to 1; one that refuses the input stops the run: -1, else 0.
 */
static int run_all(const struct pack_args *a, const struct pack_problem *p, bool tab,
                   struct pack_result *best, bool *have_best, int *status, struct err *e)
{
    struct pack_opts o = {a->po.time_limit_s, a->seed, a->po.threads, a->po.goal};
    const char *names[16];
    size_t nnames = 0;
    char list[256];

    if (strcmp(a->algo, "all") == 0) {
        snprintf(list, sizeof(list), "%s", pack_strategy_names());
        for (char *save = NULL, *t = strtok_r(list, ",", &save); t && nnames < 16;
             t = strtok_r(NULL, ",", &save))
            names[nnames++] = t;
    } else {
        names[nnames++] = a->algo;
    }
    for (size_t k = 0; k < nnames; k++) {
        struct pack_result r;
        err_clear(e);
        if (pack_run(p, names[k], &o, &r, e) != ERR_OK) {
            if (e->code == ERR_NOTFOUND || e->code == ERR_INVALID || e->code == ERR_LIMIT) {
                fprintf(stderr, "tpuplan: %s\n", e->msg);
                return -1;
            }
            fprintf(stderr, "tpuplan: %s: %s\n", names[k], e->msg);
            *status = 1;
            continue;
        }
        if (tab) {
            print_row(&r, p->capacity);
        } else {
            fprintf(stderr, "%s: peak %" PRIu64 ", LB %" PRIu64 ", solved %s, proven %s, %.3f s\n",
                    r.strategy, r.peak, r.lower_bound, r.solved ? "yes" : "no",
                    r.proven_optimal ? "yes" : "no", r.seconds);
        }
        if (!*have_best || r.peak < best->peak ||
            (r.peak == best->peak && r.proven_optimal && !best->proven_optimal)) {
            pack_result_free(best);
            *best = r;
            *have_best = true;
        } else {
            pack_result_free(&r);
        }
    }
    return 0;
}

/* Prints the best answer (after the table of "all"), reports one over the capacity and
 * writes the best packing to --out; returns the exit status. */
static int finish(const struct pack_args *a, const struct pack_input *in, bool tab,
                  const struct pack_result *best)
{
    int status = best->solved ? 0 : 1;

    if (strcmp(a->algo, "all") == 0 && tab)
        printf("best: %s, peak %" PRIu64 " (%.4f x LB)%s\n", best->strategy, best->peak,
               best->lower_bound ? (double)best->peak / (double)best->lower_bound : 1.0,
               best->proven_optimal ? ", proven optimal" : "");
    if (in->p.capacity > 0 && !best->solved)
        fprintf(stderr,
                "tpuplan: %s: no packing within the capacity %" PRIu64 " found (best peak %" PRIu64
                "%s)\n",
                a->path, in->p.capacity, best->peak,
                best->proven_optimal ? ", proven minimal: infeasible" : "");
    if (a->outpath != NULL) {
        if (in->m.n > 0 || in->p.n == 0) {
            if (write_out(a->outpath, &in->m, best->offsets) != 0)
                status = 2;
        } else {
            /* A model input: same columns, ids are tensor names. */
            struct mmcsv mm = {.n = in->pb.n, .bufs = in->pb.bufs, .ids = in->pb.names};
            if (write_out(a->outpath, &mm, best->offsets) != 0)
                status = 2;
        }
    }
    return status;
}

int cli_pack(int argc, char **argv)
{
    struct pack_args a;
    struct pack_input in = {0};
    struct pack_result best = {0};
    bool have_best = false, tab;
    struct err e;
    int status = parse_args(argc, argv, &a);

    if (status >= 0)
        return status;
    status = 2;
    err_clear(&e);
    if (input_load(&a, &in, &e) != 0)
        goto out;
    /* The table goes to stderr when the CSV takes stdout. */
    tab = a.outpath == NULL || strcmp(a.outpath, "-") != 0;
    fflush(stdout);
    fprintf(tab ? stdout : stderr, "%s: %zu buffers\n", a.path, in.p.n);
    if (tab)
        printf("%-15s %14s %14s %8s %14s %-6s %-6s %9s\n", "strategy", "peak", "LB", "peak/LB",
               "capacity", "solved", "proven", "time_s");
    if (run_all(&a, &in.p, tab, &best, &have_best, &status, &e) != 0)
        goto out;
    fflush(stdout);
    status = have_best ? finish(&a, &in, tab, &best) : 1;
out:
    pack_result_free(&best);
    input_free(&in);
    return status;
}
