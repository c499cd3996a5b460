/*
 * cli_fit.c - `tpuplan fit RECIPE --maximize FIELD`: the largest value of a recipe field
 * that fits (planner/frontier.h), optionally for each value of a second field.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/frontier.h"
#include "planner/layout.h"
#include "planner/plan.h"
#include "planner/plan_options.h"

static const char usage_head[] =
    "usage: tpuplan fit RECIPE --maximize FIELD [--min N] [--max N] [--step N]\n"
    "                          [--sweep PATH=V1,V2,...] [--format text|json] [--OPTION VALUE]...\n"
    "The largest FIELD that fits the chip (and the budget), each candidate planned in full:\n"
    "FIELD is batch, seq, microbatches, context, sequences or a recipe path (train.batch).\n"
    "--min/--max bound the search (default 1 to 1048576), --step tries only multiples of N\n"
    "(a batch that must divide over the data-parallel devices). --sweep repeats the search\n"
    "for each value of a second recipe field (train.remat=nothing_saveable,dots_saveable).\n"
    "options (as `tpuplan plan`'s):\n";

static void print_usage(FILE *f)
{
    fputs(usage_head, f);
    cli_print_opts(f, PLAN_OPT_PLAN);
    fputs("exit status: 0 something fits, 1 nothing fits, 2 bad input\n", f);
}

/* The command line, and the sweep's values cut out of its own copy. */
struct fit_args {
    const char *path, *format;
    struct frontier_query q;
    struct plan_opts o;
    char *sweep; /* malloc'd copy of --sweep's PATH=V1,... (the values point into it) */
    const char *values[FRONTIER_MAX_SWEEP];
};

static int int_arg(const char *flag, const char *val, int64_t *out)
{
    char *end;
    long long v;

    errno = 0;
    v = strtoll(val, &end, 10);
    if (errno != 0 || end == val || *end != '\0' || v < 1) {
        fprintf(stderr, "tpuplan fit: %s: a positive whole number, not \"%s\"\n", flag, val);
        return 2;
    }
    *out = v;
    return 0;
}

static int sweep_arg(struct fit_args *a, const char *val)
{
    char *eq, *tok, *save = NULL;

    free(a->sweep);
    if ((a->sweep = strdup(val)) == NULL || (eq = strchr(a->sweep, '=')) == NULL ||
        eq == a->sweep || eq[1] == '\0') {
        fprintf(stderr, "tpuplan fit: --sweep: PATH=V1,V2,... (train.remat=a,b), not \"%s\"\n",
                val);
        return 2;
    }
    *eq = '\0';
    a->q.sweep = a->sweep;
    a->q.n_sweep = 0;
    for (tok = strtok_r(eq + 1, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (a->q.n_sweep == FRONTIER_MAX_SWEEP) {
            fprintf(stderr, "tpuplan fit: --sweep: at most %d values\n", FRONTIER_MAX_SWEEP);
            return 2;
        }
        a->values[a->q.n_sweep++] = tok;
    }
    a->q.sweep_values = a->values;
    return 0;
}

/* One "--flag value" into *a; 0, or 2 after saying why. */
static int fit_opt(struct fit_args *a, const char *flag, const char *val)
{
    int rc;

    if (strcmp(flag, "--maximize") == 0) {
        a->q.maximize = val;
        return 0;
    }
    if (strcmp(flag, "--format") == 0) {
        a->format = val;
        return strcmp(val, "text") == 0 || strcmp(val, "json") == 0
                   ? 0
                   : (fprintf(stderr, "tpuplan fit: --format must be text or json\n"), 2);
    }
    if (strcmp(flag, "--min") == 0)
        return int_arg(flag, val, &a->q.lo);
    if (strcmp(flag, "--max") == 0)
        return int_arg(flag, val, &a->q.hi);
    if (strcmp(flag, "--step") == 0)
        return int_arg(flag, val, &a->q.step);
    if (strcmp(flag, "--sweep") == 0)
        return sweep_arg(a, val);
    if ((rc = cli_plan_opt("fit", PLAN_OPT_PLAN, flag, val, &a->o)) == 1) {
        fprintf(stderr, "tpuplan fit: unknown option %s\n", flag);
        print_usage(stderr);
    }
    return rc == 0 ? 0 : 2;
}

/* -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct fit_args *a)
{
    for (int i = 1; i < argc; i++) {
        int rc;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            print_usage(stdout);
            return 0;
        }
        if (strncmp(argv[i], "--", 2) != 0) {
            if (a->path != NULL) {
                fprintf(stderr, "tpuplan fit: more than one RECIPE\n");
                return 2;
            }
            a->path = argv[i];
            continue;
        }
        if (i + 1 == argc) {
            fprintf(stderr, "tpuplan fit: %s needs a value\n", argv[i]);
            return 2;
        }
        if ((rc = fit_opt(a, argv[i], argv[i + 1])) != 0)
            return rc;
        i++;
    }
    if (a->path == NULL || a->q.maximize == NULL) {
        print_usage(stderr);
        return 2;
    }
    return -1;
}

/* Whether the lines were planned against different capacities or budgets (a chip sweep):
 * then each row says its own. */
static bool limits_differ(const struct frontier_result *r)
{
    const struct frontier_line *first = NULL;

    for (size_t k = 0; k < r->n_lines; k++) {
        const struct frontier_line *ln = &r->lines[k];
        if (ln->error[0] != '\0')
            continue;
        if (first == NULL)
            first = ln;
        else if (ln->capacity_bytes != first->capacity_bytes ||
                 ln->has_budget != first->has_budget || ln->budget_bytes != first->budget_bytes)
            return true;
    }
    return false;
}

/* The line's capacity (and budget), at the end of its row: only when the lines differ. */
static void print_limits(const struct frontier_line *ln)
{
    char a[32];

    printf("  capacity %s", layout_format_bytes(ln->capacity_bytes, a, sizeof(a)));
    if (ln->has_budget)
        printf(", budget %s", layout_format_bytes(ln->budget_bytes, a, sizeof(a)));
}

static void print_text(const struct frontier_result *r)
{
    char a[32], b[32], c[32];
    bool own = limits_differ(r);

    printf("maximize   %s, multiples of %lld from %lld to %lld; %zu plans\n", r->path,
           (long long)r->step, (long long)r->lo, (long long)r->hi, r->plans);
    if (own) {
        printf("capacity   each line its own (its chip's)");
    } else {
        printf("capacity   %s", layout_format_bytes(r->capacity_bytes, a, sizeof(a)));
        if (r->has_budget)
            printf(", budget %s", layout_format_bytes(r->budget_bytes, a, sizeof(a)));
    }
    printf("\n\n%-24s %12s %10s %12s %10s %10s\n", r->sweep[0] != '\0' ? r->sweep : "", "most fits",
           "peak", "next", "peak", "over by");
    for (size_t k = 0; k < r->n_lines; k++) {
        const struct frontier_line *ln = &r->lines[k];
        const char *name = r->sweep[0] != '\0' ? ln->value : "(recipe)";
        if (ln->error[0] != '\0') {
            printf("%-24s %s\n", name, ln->error);
            continue;
        }
        if (ln->max_fit > 0)
            printf("%-24s %12lld %10s", name, (long long)ln->max_fit,
                   layout_format_bytes(ln->max_fit_peak, a, sizeof(a)));
        else
            printf("%-24s %12s %10s", name, "none", "-");
        if (ln->next > 0)
            printf(" %12lld %10s %10s", (long long)ln->next,
                   layout_format_bytes(ln->next_peak, b, sizeof(b)),
                   layout_format_bytes(ln->next_over_bytes, c, sizeof(c)));
        else
            printf(" %12s %10s %10s", "-", "-", "-");
        if (own)
            print_limits(ln);
        printf("\n");
    }
}

int cli_fit(int argc, char **argv)
{
    struct fit_args a = {.format = "text"};
    struct frontier_result r;
    struct plan_limits l;
    struct err e;
    char *input = NULL, *json = NULL;
    size_t len = 0, json_len = 0;
    int status;

    if ((status = parse_args(argc, argv, &a)) >= 0)
        goto out;
    status = 2;
    plan_limits_default(&l);
    if (cli_read_file(a.path, l.max_input_bytes, &input, &len) != 0)
        goto out;
    if (frontier_search(input, len, &a.o, &l, &a.q, &r, &e) != ERR_OK) {
        fprintf(stderr, "tpuplan: %s: %s\n", a.path, e.msg);
        goto out;
    }
    status = 1;
    for (size_t k = 0; k < r.n_lines; k++)
        if (r.lines[k].max_fit > 0)
            status = 0;
    if (strcmp(a.format, "json") == 0) {
        if (frontier_json(&r, &json, &json_len, &e) != ERR_OK) {
            fprintf(stderr, "tpuplan: %s: %s\n", a.path, e.msg);
            status = 2;
        } else {
            printf("%s\n", json);
        }
    } else {
        print_text(&r);
    }
    frontier_free(&r);
out:
    free(json);
    free(input);
    free(a.sweep);
    return status;
}
