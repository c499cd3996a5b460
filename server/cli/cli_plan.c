/*
 * cli_plan.c - `tpuplan plan FILE`: plan a model description, safetensors file or header,
 * or MiniMalloc CSV, and print the result JSON (pretty) or a text report.
 *
 * The text report is drawn from the result JSON, the same document the service stores
 * and the dashboard reads, so the two never disagree. Exit status: 0 fits, 1 does not
 * fit, 2 bad input or usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/layout.h"
#include "planner/plan.h"
#include "planner/plan_options.h"
#include "planner/recipe.h"
#include "planner/safetensors.h"
#include "planner/trace.h"

static const char usage_head[] =
    "usage: tpuplan plan FILE [--format json|text|trace] [--OPTION VALUE]...\n"
    "FILE is a model description (JSON), a recipe (a model config and a training or serving\n"
    "step, or a bare Hugging Face config.json with the recipe flags below), a safetensors\n"
    "file or header, a MiniMalloc CSV, an XLA buffer assignment (*.buffer-assignment.txt), an\n"
    "XLA HLO module as text (jax .as_text(dialect=\"hlo\"), *.after_optimizations.txt) or\n"
    "StableHLO text (jax .as_text()); \"-\" reads stdin. --format: json (the result), text\n"
    "(a report) or trace (the memory timeline as Chrome/Perfetto trace JSON).\n"
    "recipe flags (server/planner/INPUT.md#from-a-model-config-recipes), each KEY=VALUE[,...]:\n"
    "  --train K=V,...          the training step: batch=8,seq=4096,remat=dots_saveable\n"
    "  --serve K=V,...          the serving step: sequences=64,context=8192,weights=int8\n"
    "  --mesh AXIS=N,...        data, fsdp, tensor, sequence, expert, pipeline: fsdp=16\n"
    "  --parallelism K=V,...    pipeline.microbatches=8,pipeline.schedule=gpipe\n"
    "  --recipe PATH=VALUE      any field (repeatable): train.precision.master=none,\n"
    "                           parallelism.rules.embed=[\"fsdp\"] (a VALUE that is JSON is\n"
    "                           read as JSON)\n"
    "options:\n";

static const char usage_tail[] =
    "BYTES: 17179869184, 16G, 15.75GiB (K, M, G, T: powers of 1024, optionally followed by i\n"
    "and B; a whole number of bytes). SECONDS: 2, 2s, 500ms, 1.5m. F: 0.75, .5, 1.\n"
    "exit status: 0 fits (and within the budget), 1 does not fit or is over the budget,\n"
    "2 bad input\n";

static void print_usage(FILE *f)
{
    fputs(usage_head, f);
    cli_print_opts(f, PLAN_OPT_PLAN);
    fputs(usage_tail, f);
}

/*
 * Reads the input. A safetensors file is read only up to the end of its header: the
 * tensor data can be many gigabytes and is never needed.
 */
static int read_input(const char *path, size_t max, char **buf, size_t *len)
{
    unsigned char head[9];
    FILE *f;
    size_t got;

    if (strcmp(path, "-") == 0)
        return cli_read_file(path, max, buf, len);
    if ((f = fopen(path, "rb")) == NULL) {
        fprintf(stderr, "tpuplan: %s: %s\n", path, strerror(errno));
        return -1;
    }
    got = fread(head, 1, sizeof(head), f);
    if (got == sizeof(head) && safetensors_detect((const char *)head, got)) {
        uint64_t n = safetensors_header_length((const char *)head);
        if (n + 8 > max) {
            fclose(f);
            fprintf(stderr,
                    "tpuplan: %s: safetensors header of %llu bytes is larger than the "
                    "limit of %zu\n",
                    path, (unsigned long long)n, max);
            return -1;
        }
        char *data = malloc((size_t)n + 9);
        if (data == NULL) {
            fclose(f);
            fprintf(stderr, "tpuplan: %s: out of memory\n", path);
            return -1;
        }
        memcpy(data, head, sizeof(head));
        got += fread(data + sizeof(head), 1, (size_t)n - 1, f);
        fclose(f);
        data[got] = '\0';
        *buf = data;
        *len = got; /* a short read leaves a truncated header for the planner to report */
        return 0;
    }
    fclose(f);
    return cli_read_file(path, max, buf, len);
}

static const char *fmt_bytes(json_object *v, char *buf, size_t cap)
{
    if (v == NULL || json_object_is_type(v, json_type_null))
        return "-";
    return layout_format_bytes((uint64_t)json_object_get_int64(v), buf, cap);
}

static int64_t tensor_padding(json_object *tensors, size_t i)
{
    return json_object_get_int64(
        cli_json_get(json_object_array_get_idx(tensors, i), "padding_bytes"));
}

/* The planner's verdict (summary.verdict), in its words: the headline, then each check. */
static void print_verdict(json_object *v)
{
    json_object *checks = cli_json_get(v, "checks");
    char head[64];
    size_t i;

    snprintf(head, sizeof(head), "%s", cli_json_str(v, "headline"));
    for (i = 0; head[i] != '\0'; i++)
        head[i] = (char)(head[i] >= 'a' && head[i] <= 'z' ? head[i] - 'a' + 'A' : head[i]);
    printf("fit        %s\n", head);
    for (i = 0; checks != NULL && i < json_object_array_length(checks); i++) {
        json_object *k = json_object_array_get_idx(checks, i), *ok = cli_json_get(k, "ok");
        printf("  %-8s %s: %s\n", cli_json_str(k, "name"),
               ok == NULL                    ? "unchecked"
               : json_object_get_boolean(ok) ? "ok"
                                             : "FAILS",
               cli_json_str(k, "text"));
    }
}

/* The buffers in memory spaces other than HBM (host, VMEM), never added to HBM. */
static void print_spaces(json_object *spaces)
{
    char a[32], b[32];

    for (size_t i = 0; spaces != NULL && i < json_object_array_length(spaces); i++) {
        json_object *sp = json_object_array_get_idx(spaces, i);
        printf("%-10s %lld buffers, %s, peak %s: apart from HBM, never added to it\n",
               cli_json_str(sp, "space"),
               (long long)json_object_get_int64(cli_json_get(sp, "buffers")),
               fmt_bytes(cli_json_get(sp, "bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(sp, "peak_bytes"), b, sizeof(b)));
    }
}

/* An XLA program's stage and partitioning with their evidence, and its buffers in other
 * memory spaces; for another input, its tensors in host memory (memory_spaces) alone. */
static void print_program(json_object *r)
{
    json_object *p = cli_json_get(r, "program");
    bool part;

    if (p == NULL) {
        print_spaces(cli_json_get(r, "memory_spaces"));
        return;
    }
    part = json_object_get_boolean(cli_json_get(p, "partitioned"));
    printf("program    %s, %s\n", cli_json_str(p, "stage"),
           part ? "partitioned (shapes per device, never divided again)"
                : "not partitioned (shapes global: each sharding divides them)");
    for (int k = 0; k < 2; k++) {
        json_object *ev = cli_json_get(p, k == 0 ? "stage_evidence" : "partition_evidence");
        for (size_t i = 0; ev != NULL && i < json_object_array_length(ev); i++)
            printf("  - %s\n", json_object_get_string(json_object_array_get_idx(ev, i)));
    }
    print_spaces(cli_json_get(p, "memory_spaces"));
}

/* The headline: model, chip, byte totals, peak and the fit. */
static void print_overview(json_object *r)
{
    json_object *model = cli_json_get(r, "model"), *chip = cli_json_get(r, "chip"),
                *sum = cli_json_get(r, "summary");
    char a[32], b[32], c[32];

    printf("model      %s (%s, %lld tensors", cli_json_str(model, "name"),
           cli_json_str(model, "source_format"),
           (long long)json_object_get_int64(cli_json_get(sum, "tensors")));
    if (json_object_get_int64(cli_json_get(model, "devices")) > 1)
        printf(", %lld devices; every figure is per device",
               (long long)json_object_get_int64(cli_json_get(model, "devices")));
    printf(")\n");
    print_program(r);
    if (chip != NULL && !json_object_is_type(chip, json_type_null))
        printf("chip       %s (%s), usable HBM %s\n", cli_json_str(chip, "name"),
               cli_json_str(chip, "device_kind"),
               fmt_bytes(cli_json_get(chip, "usable_hbm_bytes"), a, sizeof(a)));
    printf("bytes      logical %s, padded %s, padding %s (%.2fx)\n",
           fmt_bytes(cli_json_get(sum, "logical_bytes"), a, sizeof(a)),
           fmt_bytes(cli_json_get(sum, "padded_bytes"), b, sizeof(b)),
           fmt_bytes(cli_json_get(sum, "padding_bytes"), c, sizeof(c)),
           json_object_get_double(cli_json_get(sum, "expansion")));
    printf("peak       %s (lower bound %s, fragmentation %s = %.1f%%), strategy %s\n",
           fmt_bytes(cli_json_get(sum, "peak_bytes"), a, sizeof(a)),
           fmt_bytes(cli_json_get(sum, "lower_bound_bytes"), b, sizeof(b)),
           fmt_bytes(cli_json_get(sum, "fragmentation_bytes"), c, sizeof(c)),
           100.0 * json_object_get_double(cli_json_get(sum, "fragmentation")),
           cli_json_str(sum, "strategy"));
    print_verdict(cli_json_get(sum, "verdict"));
}

/* A before-optimization program's two readings (server/planner/RESULT.md#the-compile-estimate). */
static void print_reading(const char *label, json_object *r, const char *tail)
{
    char a[32];

    printf("  %-9s peak %s, %lld buffers, %lld steps%s\n", label,
           fmt_bytes(cli_json_get(r, "peak_bytes"), a, sizeof(a)),
           (long long)json_object_get_int64(cli_json_get(r, "buffers")),
           (long long)json_object_get_int64(cli_json_get(r, "steps")), tail);
}

static void print_compile(json_object *r)
{
    json_object *cp = cli_json_get(r, "compile"), *f, *as;
    char tail[160];

    if (cp == NULL)
        return;
    f = cli_json_get(cp, "fused");
    as = cli_json_get(cp, "assumptions");
    printf("\nprogram    before optimization, planned %s (--reading)\n",
           strcmp(cli_json_str(cp, "chosen"), "written") == 0 ? "as written"
                                                              : "as XLA will compile it");
    snprintf(tail, sizeof(tail),
             " (%lld values fused away: %lld loop, %lld input, %lld output; "
             "order %s)",
             (long long)json_object_get_int64(cli_json_get(f, "total")),
             (long long)json_object_get_int64(cli_json_get(f, "loop")),
             (long long)json_object_get_int64(cli_json_get(f, "input")),
             (long long)json_object_get_int64(cli_json_get(f, "output")),
             cli_json_str(cli_json_get(cp, "schedule"), "chosen"));
    print_reading("compiler", cli_json_get(cp, "compiler"), tail);
    print_reading("written", cli_json_get(cp, "written"),
                  " (an upper bound: every value a buffer, the text order, the written layouts)");
    for (size_t i = 0; as != NULL && i < json_object_array_length(as); i++)
        printf("  assumes   %s\n", json_object_get_string(json_object_array_get_idx(as, i)));
}

static void print_kinds(json_object *sum)
{
    json_object *kinds = cli_json_get(sum, "by_kind");
    struct json_object_iterator it = json_object_iter_begin(kinds);
    struct json_object_iterator end = json_object_iter_end(kinds);
    char a[32], b[32];

    printf("\nby kind      %8s %12s %12s\n", "count", "logical", "padded");
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        json_object *kv = json_object_iter_peek_value(&it);
        printf("  %-10s %8lld %12s %12s\n", json_object_iter_peek_name(&it),
               (long long)json_object_get_int64(cli_json_get(kv, "count")),
               fmt_bytes(cli_json_get(kv, "logical_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(kv, "padded_bytes"), b, sizeof(b)));
    }
}

/* A recipe's plan: the model and step planned, bytes by category, the pipeline's stages. */
static void print_recipe(json_object *r)
{
    json_object *rec = cli_json_get(r, "recipe"), *m, *step, *v;
    char a[32], b[32];
    struct json_object_iterator it, end;

    if (rec == NULL || json_object_is_type(rec, json_type_null))
        return;
    m = cli_json_get(rec, "model");
    printf("\nrecipe     %s (%s), %.2fB parameters", cli_json_str(m, "architecture"),
           cli_json_str(m, "family"),
           (double)json_object_get_int64(cli_json_get(m, "parameters")) / 1e9);
    if ((v = cli_json_get(m, "published_parameters")) != NULL &&
        !json_object_is_type(v, json_type_null))
        printf(" (preset %s, published %.2fB)", cli_json_str(m, "preset"),
               (double)json_object_get_int64(v) / 1e9);
    if ((step = cli_json_get(rec, "train")) != NULL)
        printf("\n           train: batch %lld x seq %lld, remat %s, %s attention, %s logits\n",
               (long long)json_object_get_int64(cli_json_get(step, "batch")),
               (long long)json_object_get_int64(cli_json_get(step, "seq")),
               cli_json_str(step, "remat"), cli_json_str(step, "attention"),
               cli_json_str(step, "logits"));
    else if ((step = cli_json_get(rec, "serve")) != NULL)
        printf("\n           serve: %lld sequences x %lld context, %s weights, %s KV cache\n",
               (long long)json_object_get_int64(cli_json_get(step, "sequences")),
               (long long)json_object_get_int64(cli_json_get(step, "context")),
               cli_json_str(step, "weights"), cli_json_str(step, "kv_dtype"));
    printf("\nby category       %8s %12s %12s\n", "count", "logical", "padded");
    v = cli_json_get(rec, "bytes");
    it = json_object_iter_begin(v);
    end = json_object_iter_end(v);
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        json_object *c = json_object_iter_peek_value(&it);
        printf("  %-17s %6lld %12s %12s\n", json_object_iter_peek_name(&it),
               (long long)json_object_get_int64(cli_json_get(c, "count")),
               fmt_bytes(cli_json_get(c, "logical_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(c, "padded_bytes"), b, sizeof(b)));
    }
    if (json_object_get_int64(cli_json_get(rec, "host_offloaded_bytes")) > 0)
        printf("  %-17s %6s %12s %12s  (host memory, not in the plan)\n", "host_offloaded", "-",
               fmt_bytes(cli_json_get(rec, "host_offloaded_bytes"), a, sizeof(a)), "-");
    v = cli_json_get(cli_json_get(rec, "pipeline"), "stages");
    for (size_t i = 0; v != NULL && i < json_object_array_length(v); i++) {
        json_object *s = json_object_array_get_idx(v, i), *l = cli_json_get(s, "layers");
        if (i == 0)
            printf("\npipeline   stage  layers      in flight  live peak\n");
        printf("           %5lld  %4lld-%-5lld %9lld  %s%s\n",
               (long long)json_object_get_int64(cli_json_get(s, "stage")),
               (long long)json_object_get_int64(json_object_array_get_idx(l, 0)),
               (long long)json_object_get_int64(json_object_array_get_idx(l, 1)) - 1,
               (long long)json_object_get_int64(cli_json_get(s, "in_flight_microbatches")),
               fmt_bytes(cli_json_get(s, "live_peak_bytes"), a, sizeof(a)),
               json_object_get_int64(cli_json_get(s, "stage")) ==
                       json_object_get_int64(
                           cli_json_get(cli_json_get(rec, "pipeline"), "planned_stage"))
                   ? "  <- planned"
                   : "");
    }
}

/* The five tensors with the most padding (insertion into a sorted top five). */
static void print_most_padding(json_object *ts)
{
    size_t top[5], ntop = 0;
    int width = 10;
    char a[32], b[32];

    for (size_t i = 0; ts != NULL && i < json_object_array_length(ts); i++) {
        int64_t pad = tensor_padding(ts, i);
        if (pad <= 0 || (ntop == 5 && pad <= tensor_padding(ts, top[4])))
            continue;
        size_t k = ntop < 5 ? ntop++ : 4;
        while (k > 0 && tensor_padding(ts, top[k - 1]) < pad) {
            top[k] = top[k - 1];
            k--;
        }
        top[k] = i;
    }
    if (ntop == 0)
        return;
    for (size_t k = 0; k < ntop; k++) {
        int n = (int)strlen(cli_json_str(json_object_array_get_idx(ts, top[k]), "name"));
        width = n > width ? n : width;
    }
    printf("\n%-*s %10s %10s %7s  shape\n", width + 2, "most padding", "padded", "padding", "x");
    for (size_t k = 0; k < ntop; k++) {
        json_object *t = json_object_array_get_idx(ts, top[k]);
        printf("  %-*s %10s %10s %6.1fx  %s\n", width, cli_json_str(t, "name"),
               fmt_bytes(cli_json_get(t, "padded_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(t, "padding_bytes"), b, sizeof(b)),
               json_object_get_double(cli_json_get(t, "expansion")), cli_json_str(t, "shape"));
    }
}

static void print_suggestions(json_object *r)
{
    json_object *v = cli_json_get(r, "suggestions");

    if (v == NULL || json_object_array_length(v) == 0)
        return;
    printf("\npadding fixes (most bytes first)\n");
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *s = json_object_array_get_idx(v, i);
        json_object *t = json_object_array_get_idx(
            cli_json_get(r, "tensors"), (size_t)json_object_get_int64(cli_json_get(s, "tensor")));
        printf("  %zu. %s %s: %s\n", i + 1, cli_json_str(s, "name"), cli_json_str(t, "shape"),
               cli_json_str(s, "text"));
    }
}

static void print_strategies(json_object *pk)
{
    json_object *v = cli_json_get(pk, "strategies");
    char a[32], d[32];

    if (v == NULL || json_object_array_length(v) == 0)
        return;
    printf("\nstrategy           %12s %12s %8s %9s\n", "peak", "frag", "optimal", "seconds");
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *s = json_object_array_get_idx(v, i);
        if (!json_object_get_boolean(cli_json_get(s, "solved"))) {
            printf("  %-16s failed: %s\n", cli_json_str(s, "name"), cli_json_str(s, "error"));
            continue;
        }
        printf("  %-16s %12s %12s %8s %9.4f%s\n", cli_json_str(s, "name"),
               fmt_bytes(cli_json_get(s, "peak_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(s, "fragmentation_bytes"), d, sizeof(d)),
               json_object_get_boolean(cli_json_get(s, "proven_optimal")) ? "yes" : "no",
               json_object_get_double(cli_json_get(s, "seconds")),
               strcmp(cli_json_str(s, "name"), cli_json_str(pk, "chosen")) == 0 ? "  <- chosen"
                                                                                : "");
    }
    /* The runtime allocator's row (packing.runtime, asked for): compared, never chosen, and
     * worded so that its failures cannot be read as the TPU's. */
    v = cli_json_get(pk, "runtime");
    if (v != NULL && !json_object_is_type(v, json_type_null)) {
        long long failed = json_object_get_int64(cli_json_get(v, "failed_allocations"));
        printf("  %-16s %12s %12s %8s %9.4f  (GPU runtime model, not the TPU; ",
               cli_json_str(v, "name"), fmt_bytes(cli_json_get(v, "peak_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(v, "fragmentation_bytes"), d, sizeof(d)), "-",
               json_object_get_double(cli_json_get(v, "seconds")));
        if (failed == 0)
            printf("every allocation succeeds)\n");
        else
            printf("%lld allocation%s would fail on a GPU)\n", failed, failed == 1 ? "" : "s");
    }
    /* XLA's own assignment (packing.xla): compared, never chosen. */
    v = cli_json_get(pk, "xla");
    if (v != NULL && !json_object_is_type(v, json_type_null)) {
        long long in_place = json_object_get_int64(cli_json_get(v, "in_place_values"));
        char held[48] = "";
        if (in_place > 0)
            snprintf(held, sizeof(held), ", %lld in place", in_place);
        printf("  %-16s %12s %12s %8s %9s  (XLA's own assignment; %lld of %lld values "
               "matched%s)\n",
               cli_json_str(v, "name"), fmt_bytes(cli_json_get(v, "peak_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(v, "fragmentation_bytes"), d, sizeof(d)), "-", "-",
               (long long)json_object_get_int64(cli_json_get(v, "matched_values")),
               (long long)json_object_get_int64(cli_json_get(v, "values")), held);
    }
}

static void print_failure(const char *what, json_object *f)
{
    char a[32], b[32], c[32], d[32];

    if (f == NULL || json_object_is_type(f, json_type_null))
        return;
    printf("  %s at step %lld: %s (%s) needs %s; %s free, largest free chunk %s\n", what,
           (long long)json_object_get_int64(cli_json_get(f, "step")), cli_json_str(f, "name"),
           fmt_bytes(cli_json_get(f, "requested_bytes"), a, sizeof(a)),
           fmt_bytes(cli_json_get(f, "rounded_bytes"), b, sizeof(b)),
           fmt_bytes(cli_json_get(f, "free_bytes"), c, sizeof(c)),
           fmt_bytes(cli_json_get(f, "largest_free_bytes"), d, sizeof(d)));
}

/* The simulated GPU-style runtime allocator (packing.runtime), when it ran. */
static void print_runtime(json_object *pk)
{
    json_object *rt = cli_json_get(pk, "runtime");
    char a[32], b[32], c[32], d[32];

    if (rt == NULL || json_object_is_type(rt, json_type_null))
        return;
    printf("\nruntime    GPU runtime model (asked for with --runtime bfc): %s\n",
           cli_json_str(rt, "label"));
    printf("  BFC limit %s (%.2f of %s, %s); reserved peak %s, in use peak %s\n",
           fmt_bytes(cli_json_get(rt, "memory_limit_bytes"), a, sizeof(a)),
           json_object_get_double(cli_json_get(rt, "memory_fraction")),
           fmt_bytes(cli_json_get(rt, "device_bytes"), b, sizeof(b)),
           json_object_get_boolean(cli_json_get(rt, "preallocate")) ? "preallocated" : "growing",
           fmt_bytes(cli_json_get(rt, "peak_reserved_bytes"), c, sizeof(c)),
           fmt_bytes(cli_json_get(rt, "peak_in_use_bytes"), d, sizeof(d)));
    printf("  heap height %s against the static plan's peak %s; ",
           fmt_bytes(cli_json_get(rt, "peak_bytes"), a, sizeof(a)),
           fmt_bytes(cli_json_get(rt, "static_peak_bytes"), b, sizeof(b)));
    if (json_object_get_int64(cli_json_get(rt, "failed_allocations")) == 0)
        printf("on a GPU every allocation would succeed\n");
    else
        printf("on a GPU %lld of %lld allocations would fail in this allocator (a GPU "
               "replay, not a TPU out-of-memory)\n",
               (long long)json_object_get_int64(cli_json_get(rt, "failed_allocations")),
               (long long)json_object_get_int64(cli_json_get(rt, "allocations")));
    print_failure("first failed GPU allocation", cli_json_get(rt, "first_failure"));
    print_failure("first failed GPU allocation with free memory",
                  cli_json_get(rt, "first_oom_with_free_memory"));
}

/* "(512, 512)" into buf. */
static const char *dims_text(json_object *a, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (size_t d = 0; a != NULL && d < json_object_array_length(a) && n + 1 < cap; d++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "",
                              (long long)json_object_get_int64(json_object_array_get_idx(a, d)));
    if (n + 1 < cap)
        snprintf(buf + n, cap - n, ")");
    return buf;
}

static void print_kernel_operands(json_object *k)
{
    json_object *ops = cli_json_get(k, "operands");
    char a[32], b[32], c[32], d[96], e[96];
    int width = cli_name_width(ops, "name", 12);

    printf("    %-*s %-7s %-5s %-16s %-16s %3s %10s %10s %10s\n", width, "operand", "role", "dtype",
           "block", "in VMEM", "buf", "vmem", "waste", "hbm");
    for (size_t j = 0; ops != NULL && j < json_object_array_length(ops); j++) {
        json_object *o = json_object_array_get_idx(ops, j);
        printf("    %-*s %-7s %-5s %-16s %-16s %3lld %10s %10s %10s%s\n", width,
               cli_json_str(o, "name"), cli_json_str(o, "role"), cli_json_str(o, "dtype"),
               dims_text(cli_json_get(o, "block"), d, sizeof(d)),
               dims_text(cli_json_get(o, "padded_block"), e, sizeof(e)),
               (long long)json_object_get_int64(cli_json_get(o, "buffers")),
               fmt_bytes(cli_json_get(o, "vmem_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(o, "waste_bytes"), b, sizeof(b)),
               fmt_bytes(cli_json_get(o, "hbm_bytes"), c, sizeof(c)),
               strcmp(cli_json_str(o, "memory_space"), "vmem") != 0 ? "  (not in VMEM)" : "");
    }
}

/* The kernels section: each kernel's VMEM against its limit, its operands, traffic and
 * roofline, suggestions and the compiler error it would hit. */
static void print_kernels(json_object *r)
{
    json_object *ks = cli_json_get(r, "kernels");
    char a[32], b[32], c[32], d[32], f[32];

    if (ks == NULL || json_object_array_length(ks) == 0)
        return;
    printf("\nkernels (VMEM per TensorCore)\n");
    for (size_t i = 0; i < json_object_array_length(ks); i++) {
        json_object *k = json_object_array_get_idx(ks, i), *rf = cli_json_get(k, "roofline");
        json_object *sg = cli_json_get(k, "suggestions"), *v;
        printf("  %s: vmem %s + margin %s against limit %s (%s; physical %s): %s %s\n",
               cli_json_str(k, "name"), fmt_bytes(cli_json_get(k, "vmem_bytes"), a, sizeof(a)),
               fmt_bytes(cli_json_get(k, "margin_bytes"), b, sizeof(b)),
               fmt_bytes(cli_json_get(k, "vmem_limit_bytes"), c, sizeof(c)),
               cli_json_str(k, "limit_source"),
               fmt_bytes(cli_json_get(k, "physical_vmem_bytes"), d, sizeof(d)),
               json_object_get_boolean(cli_json_get(k, "fits")) ? "FITS, headroom"
                                                                : "DOES NOT FIT, over by",
               fmt_bytes(cli_json_get(k, json_object_get_boolean(cli_json_get(k, "fits"))
                                             ? "headroom_bytes"
                                             : "overflow_bytes"),
                         f, sizeof(f)));
        print_kernel_operands(k);
        printf("    traffic %s in %lld steps",
               fmt_bytes(cli_json_get(cli_json_get(k, "traffic"), "total_bytes"), a, sizeof(a)),
               (long long)json_object_get_int64(cli_json_get(cli_json_get(k, "traffic"), "steps")));
        if ((v = cli_json_get(rf, "binding")) != NULL && !json_object_is_type(v, json_type_null))
            printf("; intensity %.1f flop/B, %s-bound, at least %.3g s",
                   json_object_get_double(cli_json_get(k, "intensity")), json_object_get_string(v),
                   json_object_get_double(cli_json_get(rf, "bound_seconds")));
        else
            printf("; at least %.3g s moving it",
                   json_object_get_double(cli_json_get(rf, "memory_seconds")));
        printf("\n");
        for (size_t s = 0; sg != NULL && s < json_object_array_length(sg); s++)
            printf("    %zu. %s\n", s + 1, cli_json_str(json_object_array_get_idx(sg, s), "text"));
        v = cli_json_get(k, "warnings");
        for (size_t s = 0; v != NULL && s < json_object_array_length(v); s++)
            printf("    ! %s\n", json_object_get_string(json_object_array_get_idx(v, s)));
        if ((v = cli_json_get(k, "error")) != NULL && !json_object_is_type(v, json_type_null))
            printf("    %s\n", json_object_get_string(v));
    }
}

/* XLA's error for every kernel that does not fit, on stderr, as the compiler would print
 * it (the exit status is then 1). */
static void report_kernel_errors(json_object *r)
{
    json_object *ks = cli_json_get(r, "kernels");

    for (size_t i = 0; ks != NULL && i < json_object_array_length(ks); i++) {
        json_object *v = cli_json_get(json_object_array_get_idx(ks, i), "error");
        if (v != NULL && !json_object_is_type(v, json_type_null))
            fprintf(stderr, "tpuplan: %s\n", json_object_get_string(v));
    }
}

/* A titled list of strings (the chip's assumptions, the warnings), when not empty. */
static void print_list(const char *title, json_object *v)
{
    if (v == NULL || json_object_array_length(v) == 0)
        return;
    printf("\n%s\n", title);
    for (size_t i = 0; i < json_object_array_length(v); i++)
        printf("  - %s\n", json_object_get_string(json_object_array_get_idx(v, i)));
}

static void print_text(json_object *r)
{
    json_object *chip = cli_json_get(r, "chip");

    print_overview(r);
    print_compile(r);
    cli_print_peak(r);
    cli_print_advice(r);
    print_kinds(cli_json_get(r, "summary"));
    print_recipe(r);
    print_most_padding(cli_json_get(r, "tensors"));
    print_suggestions(r);
    print_kernels(r);
    print_strategies(cli_json_get(r, "packing"));
    print_runtime(cli_json_get(r, "packing"));
    cli_print_xla_report(cli_json_get(r, "packing"));
    print_list("assumptions", chip != NULL ? cli_json_get(chip, "assumptions") : NULL);
    print_list("warnings", cli_json_get(r, "warnings"));
}

/* The plan's layout view as trace JSON on stdout (trace.h); 0, or -1 with *e set. */
static int print_trace(const struct plan_views *v, const char *title, struct err *e)
{
    char *out = NULL;
    size_t len = 0;
    int ok;

    if (trace_from_layout(v->layout, v->layout_len, title, &out, &len, NULL, e) != ERR_OK)
        return -1;
    ok = fwrite(out, 1, len, stdout) == len && putchar('\n') != EOF;
    free(out);
    if (!ok) {
        err_set(e, ERR_INVALID, "", "cannot write the trace to stdout");
        return -1;
    }
    return 0;
}

/* The recipe flags' edits (recipe_compose), their text kept in one buffer. */
#define MAX_EDITS 64
struct edits {
    struct recipe_edit e[MAX_EDITS];
    size_t n;
    char text[8192]; /* "path\0value\0" pairs */
    size_t used;
};

/* "KEY=VALUE[,KEY=VALUE]..." (or one PATH=VALUE with --recipe) as edits under prefix; 0, or
 * 2 after saying why. Commas split pairs only outside brackets, so a JSON list stays whole. */
static int add_edits(struct edits *ed, const char *flag, const char *prefix, const char *val)
{
    const char *p = val;

    while (*p != '\0') {
        size_t n = 0, eq;
        int depth = 0;
        while (p[n] != '\0' && (prefix[0] == '\0' || p[n] != ',' || depth > 0)) {
            depth += (p[n] == '[' || p[n] == '{') - (p[n] == ']' || p[n] == '}');
            n++;
        }
        eq = strcspn(p, "=");
        if (eq == 0 || eq >= n || ed->n == MAX_EDITS ||
            ed->used + strlen(prefix) + n + 2 > sizeof(ed->text)) {
            fprintf(stderr, "tpuplan plan: %s: \"%.*s\" must be KEY=VALUE%s\n", flag, (int)n, p,
                    ed->n == MAX_EDITS ? " (at most 64 in all)" : "");
            return 2;
        }
        ed->e[ed->n].path = ed->text + ed->used;
        ed->used += (size_t)sprintf(ed->text + ed->used, "%s%.*s", prefix, (int)eq, p) + 1;
        ed->e[ed->n].value = ed->text + ed->used;
        ed->used += (size_t)sprintf(ed->text + ed->used, "%.*s", (int)(n - eq - 1), p + eq + 1) + 1;
        ed->n++;
        p += n + (p[n] == ',');
    }
    return 0;
}

/* A recipe flag: 0 taken, 1 not one, 2 bad (said why). */
static int recipe_flag(const char *a, const char *val, struct edits *ed)
{
    static const struct {
        const char *flag, *prefix;
    } flags[] = {{"--train", "train."},
                 {"--serve", "serve."},
                 {"--mesh", "mesh."},
                 {"--parallelism", "parallelism."},
                 {"--recipe", ""}};

    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strcmp(a, flags[i].flag) == 0)
            return add_edits(ed, a, flags[i].prefix, val);
    return 1;
}

/* One "--name value" option into *o, *format or the recipe's edits; 0, or 2 after saying why
 * on stderr. */
static int parse_opt(const char *a, const char *val, struct plan_opts *o, const char **format,
                     struct edits *ed)
{
    int rc;

    if (strcmp(a, "--format") == 0) {
        *format = val;
        return 0;
    }
    if ((rc = recipe_flag(a, val, ed)) != 1)
        return rc;
    /* the table's (planner/plan_options.h); --xla-assignment and --xla-report take paths
     * here, read by read_attached */
    if ((rc = cli_plan_opt("plan", PLAN_OPT_PLAN, a, val, o)) == 1) {
        fprintf(stderr, "tpuplan plan: unknown option %s\n", a);
        print_usage(stderr);
    }
    return rc == 0 ? 0 : 2;
}

/* Replaces the paths of XLA's dumps in *o (--xla-assignment, --xla-report) with their
 * bytes, read into bufs[0] and bufs[1] (caller frees). 0, or -1 after saying why. */
static int read_attached(struct plan_opts *o, size_t max, char *bufs[2])
{
    const char **paths[2] = {&o->xla_assignment, &o->xla_report};
    size_t *lens[2] = {&o->xla_assignment_len, &o->xla_report_len};

    for (int k = 0; k < 2; k++) {
        if (*paths[k] == NULL)
            continue;
        if (cli_read_file(*paths[k], max, &bufs[k], lens[k]) != 0)
            return -1;
        *paths[k] = bufs[k];
    }
    return 0;
}

/* The command line into *o, *format, *path and the recipe's edits; -1 to go on, else the
 * exit status. */
static int parse_args(int argc, char **argv, struct plan_opts *o, const char **format,
                      const char **path, struct edits *ed)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int rc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_usage(stdout);
            return 0;
        }
        if (a[0] == '-' && a[1] == '-') {
            if (val == NULL) {
                fprintf(stderr, "tpuplan plan: %s needs a value\n", a);
                print_usage(stderr);
                return 2;
            }
            i++;
            if ((rc = parse_opt(a, val, o, format, ed)) != 0)
                return rc > 0 ? rc : 2;
        } else if (*path == NULL) {
            *path = a;
        } else {
            fprintf(stderr, "tpuplan plan: more than one FILE\n");
            print_usage(stderr);
            return 2;
        }
    }
    if (*path == NULL) {
        print_usage(stderr);
        return 2;
    }
    if (strcmp(*format, "json") != 0 && strcmp(*format, "text") != 0 &&
        strcmp(*format, "trace") != 0) {
        fprintf(stderr, "tpuplan plan: --format must be json, text or trace\n");
        return 2;
    }
    return -1;
}

static int write_stdout(void *ctx, const char *buf, size_t n)
{
    (void)ctx;
    return fwrite(buf, 1, n, stdout) == n ? ERR_OK : ERR_LIMIT;
}

/*
 * The result JSON, pretty, streamed to stdout as the planner writes it: a million-tensor
 * result is hundreds of megabytes and is never held whole. The layout is json-c's pretty
 * printer's (jsonw.h), as it was when the result was re-read and printed. Exit status as
 * cli_plan's; on an error after output began, what was printed is an incomplete document.
 */
static int print_json(const char *input, size_t len, const struct plan_opts *o,
                      const struct plan_limits *l, const char *path, struct plan_summary *s)
{
    struct plan_sink sink = {write_stdout, NULL, true, true}; /* the summary view alone */
    struct plan_views views = {0};
    json_object *summary;
    struct err e;

    /* The summary view (the result without its tensors) carries the kernels' errors. */
    if (plan_run_stream(input, len, o, l, &sink, &views, s, &e) != ERR_OK) {
        fprintf(stderr, "tpuplan: %s: %s%s\n", path, e.msg, e.code == ERR_LIMIT ? " (stdout)" : "");
        return 2;
    }
    summary = views.summary != NULL ? json_tokener_parse(views.summary) : NULL;
    plan_views_free(&views);
    if (summary != NULL)
        report_kernel_errors(summary);
    json_object_put(summary);
    if (putchar('\n') == EOF || fflush(stdout) != 0) {
        fprintf(stderr, "tpuplan: %s: writing the result to stdout failed\n", path);
        return 2;
    }
    return s->fits && s->within_budget ? 0 : 1;
}

int cli_plan(int argc, char **argv)
{
    struct plan_opts o = {0};
    struct plan_limits l;
    struct plan_summary s;
    struct err e;
    const char *path = NULL, *format = "json";
    char *input = NULL, *json = NULL;
    size_t len = 0, json_len = 0;
    json_object *doc = NULL;
    struct plan_views views = {0};
    char *xla[2] = {NULL, NULL};
    static struct edits ed;
    bool trace;
    int status;

    ed.n = ed.used = 0;
    if ((status = parse_args(argc, argv, &o, &format, &path, &ed)) >= 0)
        return status;
    trace = strcmp(format, "trace") == 0;
    status = 2;
    plan_limits_default(&l);
    if (read_input(path, l.max_input_bytes, &input, &len) != 0 ||
        read_attached(&o, l.max_input_bytes, xla) != 0)
        goto out;
    if (ed.n > 0) {
        /* the quick case: a config.json (or a recipe) and the flags' edits, one recipe */
        char *text = NULL;
        size_t text_len = 0;
        if (recipe_compose(input, len, ed.e, ed.n, &text, &text_len, &e) != ERR_OK) {
            fprintf(stderr, "tpuplan: %s: %s\n", path, e.msg);
            goto out;
        }
        free(input);
        input = text;
        len = text_len;
    }
    if (strcmp(format, "json") == 0) {
        status = print_json(input, len, &o, &l, path, &s);
        goto out;
    }
    if (plan_run(input, len, &o, &l, &json, &json_len, trace ? &views : NULL, &s, &e) != ERR_OK) {
        fprintf(stderr, "tpuplan: %s: %s\n", path, e.msg);
        goto out;
    }
    if (trace) {
        if (print_trace(&views, s.name, &e) != 0) {
            fprintf(stderr, "tpuplan: %s: %s\n", path, e.msg);
            goto out;
        }
        status = s.fits && s.within_budget ? 0 : 1;
        goto out;
    }
    /* Re-read our own document: pretty printing and the text report both come from it. */
    struct json_tokener *tok = json_tokener_new_ex(64);
    if (tok == NULL)
        goto out;
    doc = json_tokener_parse_ex(tok, json, (int)json_len);
    json_tokener_free(tok);
    if (doc == NULL) {
        fprintf(stderr, "tpuplan: internal error: the result is not valid JSON\n");
        goto out;
    }
    report_kernel_errors(doc);
    print_text(doc);
    status = s.fits && s.within_budget ? 0 : 1;
out:
    plan_views_free(&views);
    json_object_put(doc);
    free(json);
    free(input);
    free(xla[0]);
    free(xla[1]);
    return status;
}
