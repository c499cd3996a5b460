/*
 * cli_diff.c - `tpuplan diff A B`: what changed from plan A to plan B (diff.h).
 *
 * A and B are each a model input (planned here with the same options, as `tpuplan plan`
 * would) or a stored plan result: a file `tpuplan plan` wrote, a downloaded result, or a
 * service plan document (GET /api/v1/plans/{id}). A result is told from a model by its
 * "schema_version" key near the top (a model description has no such key). The text
 * report is drawn from the diff's JSON, like `tpuplan plan`'s. Exit status: 0 the diff was
 * written, 2 bad input or usage.
 */
#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/diff.h"
#include "planner/layout.h"
#include "planner/plan.h"
#include "planner/plan_options.h"

#define DIFF_MAX_FILE ((size_t)1 << 30) /* a stored 1,000,000-tensor result is ~400 MB */
#define DIFF_TOP      20                /* tensors in the text report */

static const char usage_head[] =
    "usage: tpuplan diff A B [--format text|json] [--OPTION VALUE]...\n"
    "A and B are model inputs (planned with the options given) or stored plan results\n"
    "(`tpuplan plan` output, a downloaded result, GET /api/v1/plans/{id}). Prints what\n"
    "changed from A to B: peak, padded and logical bytes, fragmentation and fit, per kind,\n"
    "and every tensor matched by name whose bytes, layout or kind changed.\n"
    "options (as `tpuplan plan`'s, applied to both model inputs):\n";

static void print_usage(FILE *f)
{
    fputs(usage_head, f);
    cli_print_opts(f, PLAN_OPT_DIFF);
    fputs("exit status: 0 diff written, 2 bad input\n", f);
}

/* One side read and, when it is a model, planned; the texts diff_run reads. */
struct side {
    char *file;
    size_t file_len;
    char *result; /* plan_run's, when planned */
    size_t result_len;
    struct plan_views views;
    struct diff_input in;
};

static void side_free(struct side *s)
{
    free(s->file);
    free(s->result);
    plan_views_free(&s->views);
}

static bool is_result(const char *text, size_t len)
{
    char head[4097];
    size_t n = len < 4096 ? len : 4096;

    memcpy(head, text, n);
    head[n] = '\0';
    return strstr(head, "\"schema_version\"") != NULL;
}

/* 0, or 2 after saying why on stderr. */
static int side_load(struct side *s, const char *path, const struct plan_opts *o)
{
    struct plan_limits l;
    struct err e;

    if (cli_read_file(path, DIFF_MAX_FILE, &s->file, &s->file_len) != 0)
        return 2;
    if (is_result(s->file, s->file_len)) {
        s->in.result = s->file;
        s->in.result_len = s->file_len;
        return 0;
    }
    plan_limits_default(&l);
    if (plan_run(s->file, s->file_len, o, &l, &s->result, &s->result_len, &s->views, NULL, &e) !=
        ERR_OK) {
        fprintf(stderr, "tpuplan: %s: %s\n", path, e.msg);
        return 2;
    }
    /* the views: the summary and the columns are all a diff reads, and parse faster */
    s->in.result = s->views.summary;
    s->in.result_len = s->views.summary_len;
    s->in.layout = s->views.layout;
    s->in.layout_len = s->views.layout_len;
    return 0;
}

/* A signed byte delta as XLA's formatter writes sizes, with its sign: "+1.50G", "-512B". */
static const char *fmt_delta(int64_t d, char *buf, size_t cap)
{
    char b[32];
    uint64_t m = d < 0 ? -(uint64_t)d : (uint64_t)d;

    snprintf(buf, cap, "%s%s",
             d < 0   ? "-"
             : d > 0 ? "+"
                     : "",
             layout_format_bytes(m, b, sizeof(b)));
    return buf;
}

static const char *fmt_u(json_object *o, const char *key, char *buf, size_t cap)
{
    json_object *v = cli_json_get(o, key);
    if (v == NULL || json_object_is_type(v, json_type_null))
        return "-";
    return layout_format_bytes((uint64_t)json_object_get_int64(v), buf, cap);
}

/* "<key>_before -> <key>_after (delta)" on one line. */
static void print_triple(json_object *s, const char *label, const char *key)
{
    char kb[64], ka[64], kd[64], a[32], b[32], d[40];

    snprintf(kb, sizeof(kb), "%s_before", key);
    snprintf(ka, sizeof(ka), "%s_after", key);
    snprintf(kd, sizeof(kd), "%s_delta", key);
    printf("%-14s %10s -> %-10s (%s)\n", label, fmt_u(s, kb, a, sizeof(a)),
           fmt_u(s, ka, b, sizeof(b)),
           fmt_delta(json_object_get_int64(cli_json_get(s, kd)), d, sizeof(d)));
}

/* A side's verdict in the planner's words (summary.verdict.headline), or its fits flag for a
 * result from before the verdict. */
static const char *verdict(json_object *s, const char *key, const char *fits_key)
{
    json_object *v = cli_json_get(s, key);

    if (v != NULL && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return json_object_get_boolean(cli_json_get(s, fits_key)) ? "fits" : "does not fit";
}

/* The peak first (what the change did to memory), the verdicts, then the rest; the sums of
 * buffer sizes last, labelled as such: buffers live at different steps, so a sum is no
 * memory figure. */
static void print_summary(json_object *r)
{
    json_object *s = cli_json_get(r, "summary"), *a = cli_json_get(r, "a"),
                *b = cli_json_get(r, "b");

    printf("diff           %s (%s) -> %s (%s)\n", cli_json_str(a, "name"), cli_json_str(a, "chip"),
           cli_json_str(b, "name"), cli_json_str(b, "chip"));
    print_triple(s, "peak", "peak_bytes");
    printf("%-14s %10s -> %s\n", "verdict", verdict(s, "verdict_before", "fits_before"),
           verdict(s, "verdict_after", "fits_after"));
    print_triple(s, "lower bound", "lower_bound_bytes");
    printf("%-14s %9.1f%% -> %.1f%% (%+.1f points)\n", "fragmentation",
           100 * json_object_get_double(cli_json_get(s, "fragmentation_before")),
           100 * json_object_get_double(cli_json_get(s, "fragmentation_after")),
           100 * json_object_get_double(cli_json_get(s, "fragmentation_delta")));
    printf("%-14s %10lld -> %lld: %lld added, %lld removed, %lld changed, %lld unchanged\n",
           "tensors", (long long)json_object_get_int64(cli_json_get(s, "tensors_before")),
           (long long)json_object_get_int64(cli_json_get(s, "tensors_after")),
           (long long)json_object_get_int64(cli_json_get(s, "added")),
           (long long)json_object_get_int64(cli_json_get(s, "removed")),
           (long long)json_object_get_int64(cli_json_get(s, "changed")),
           (long long)json_object_get_int64(cli_json_get(s, "unchanged")));
    printf("\nbuffer sizes, summed (not memory: buffers live at different steps)\n");
    print_triple(s, "  padded", "padded_bytes");
    print_triple(s, "  logical", "logical_bytes");
}

static void print_kinds(json_object *r)
{
    json_object *kinds = cli_json_get(r, "by_kind");
    struct json_object_iterator it = json_object_iter_begin(kinds);
    struct json_object_iterator end = json_object_iter_end(kinds);
    char a[32], b[32], d[40];

    printf("\n%-14s %-16s %-24s %s\n", "by kind", "count", "padded, summed", "delta");
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        json_object *k = json_object_iter_peek_value(&it);
        printf(
            "  %-12s %6lld -> %-6lld %10s -> %-10s %s\n", json_object_iter_peek_name(&it),
            (long long)json_object_get_int64(cli_json_get(k, "count_before")),
            (long long)json_object_get_int64(cli_json_get(k, "count_after")),
            fmt_u(k, "padded_bytes_before", a, sizeof(a)),
            fmt_u(k, "padded_bytes_after", b, sizeof(b)),
            fmt_delta(json_object_get_int64(cli_json_get(k, "padded_bytes_delta")), d, sizeof(d)));
    }
}

/* The changed tensors, largest first: the groups (the added remat copies) as one row each,
 * then the tensors in no group. Names are printed whole. */
static void print_tensors(json_object *r)
{
    json_object *ts = cli_json_get(r, "tensors"), *gs = cli_json_get(r, "groups");
    size_t n = json_object_array_length(ts), ng = gs ? json_object_array_length(gs) : 0;
    size_t listed = 0, grouped = 0;
    int width = 24;
    char d[40];

    if (n == 0) {
        printf("\nno tensor changed\n");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(ts, i);
        size_t len = strlen(cli_json_str(t, "name"));
        grouped += cli_json_get(t, "group") != NULL;
        if (cli_json_get(t, "group") == NULL && i < DIFF_TOP + grouped && len > (size_t)width)
            width = len > 200 ? 200 : (int)len;
    }
    printf("\nlargest changes (%zu of %zu listed", n - grouped < DIFF_TOP ? n - grouped : DIFF_TOP,
           n - grouped);
    if (grouped > 0)
        printf("; %zu more in %zu group%s", grouped, ng, ng == 1 ? "" : "s");
    printf(")\n");
    for (size_t g = 0; g < ng; g++) {
        json_object *x = json_object_array_get_idx(gs, g);
        printf(
            "  %10s  %-8s %lld %s (%s), summed\n",
            fmt_delta(json_object_get_int64(cli_json_get(x, "padded_bytes_delta")), d, sizeof(d)),
            cli_json_str(x, "status"), (long long)json_object_get_int64(cli_json_get(x, "tensors")),
            cli_json_str(x, "name"), cli_json_str(x, "match"));
    }
    for (size_t i = 0; i < n && listed < DIFF_TOP; i++) {
        json_object *t = json_object_array_get_idx(ts, i);
        if (cli_json_get(t, "group") != NULL)
            continue;
        listed++;
        printf(
            "  %10s  %-8s %-*s %s -> %s\n",
            fmt_delta(json_object_get_int64(cli_json_get(t, "padded_bytes_delta")), d, sizeof(d)),
            cli_json_str(t, "status"), width, cli_json_str(t, "name"),
            cli_json_str(t, "layout_before"), cli_json_str(t, "layout_after"));
    }
}

/* The command line into *o, *format and the two paths; -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct plan_opts *o, const char **format,
                      const char *path[2])
{
    size_t npaths = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_usage(stdout);
            return 0;
        }
        if (a[0] != '-' || a[1] != '-' || strcmp(a, "-") == 0) {
            if (npaths == 2) {
                fprintf(stderr, "tpuplan diff: more than two inputs\n");
                print_usage(stderr);
                return 2;
            }
            path[npaths++] = a;
            continue;
        }
        if (val == NULL) {
            fprintf(stderr, "tpuplan diff: %s needs a value\n", a);
            print_usage(stderr);
            return 2;
        }
        i++;
        if (strcmp(a, "--format") == 0) {
            *format = val;
            continue;
        }
        int rc = cli_plan_opt("diff", PLAN_OPT_DIFF, a, val, o); /* plan_options.h */
        if (rc == 1) {
            fprintf(stderr, "tpuplan diff: unknown option %s\n", a);
            print_usage(stderr);
        }
        if (rc != 0)
            return 2;
    }
    if (npaths != 2) {
        print_usage(stderr);
        return 2;
    }
    if (strcmp(*format, "json") != 0 && strcmp(*format, "text") != 0) {
        fprintf(stderr, "tpuplan diff: --format must be text or json\n");
        return 2;
    }
    return -1;
}

int cli_diff(int argc, char **argv)
{
    struct plan_opts o = {0};
    struct side s[2];
    const char *path[2] = {NULL, NULL}, *format = "text";
    char *json = NULL;
    size_t len = 0;
    json_object *doc = NULL;
    struct err e;
    int status;

    memset(s, 0, sizeof(s));
    if ((status = parse_args(argc, argv, &o, &format, path)) >= 0)
        return status;
    status = 2;
    if (side_load(&s[0], path[0], &o) != 0 || side_load(&s[1], path[1], &o) != 0)
        goto out;
    if (diff_run(&s[0].in, &s[1].in, 0, &json, &len, &e) != ERR_OK) {
        fprintf(stderr, "tpuplan diff: %s\n", e.msg);
        goto out;
    }
    if (strcmp(format, "json") == 0) {
        status = fwrite(json, 1, len, stdout) == len && putchar('\n') != EOF ? 0 : 2;
        goto out;
    }
    if ((doc = json_tokener_parse(json)) == NULL) {
        fprintf(stderr, "tpuplan: internal error: the diff is not valid JSON\n");
        goto out;
    }
    print_summary(doc);
    print_kinds(doc);
    print_tensors(doc);
    status = 0;
out:
    json_object_put(doc);
    free(json);
    side_free(&s[0]);
    side_free(&s[1]);
    return status;
}
