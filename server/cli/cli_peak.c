/*
 * cli_peak.c - the text report's "peak" section, drawn from the result's "peak"
 * (server/planner/RESULT.md#the-peak): the step and the op there, what it allocates, and
 * the bytes live there by kind, tag, layer and op_name scope. Names are printed whole: each
 * table's name column is as wide as its longest name.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/layout.h"

static uint64_t u64(json_object *o, const char *key)
{
    return (uint64_t)json_object_get_int64(cli_json_get(o, key));
}

static const char *fmt(uint64_t v, char *buf, size_t cap)
{
    return layout_format_bytes(v, buf, cap);
}

/* One row of a breakdown: name, bytes, share of the live bytes, tensors. */
static void row(int width, const char *name, uint64_t bytes, uint64_t live, uint64_t tensors)
{
    char b[32];

    printf("    %-*s %10s %6.1f%% %8llu\n", width, name, fmt(bytes, b, sizeof(b)),
           live ? 100.0 * (double)bytes / (double)live : 0.0, (unsigned long long)tensors);
}

/* The breakdown by kind (an array of {name, bytes, tensors}). */
static void print_kinds(json_object *arr, uint64_t live)
{
    int width = (int)strlen("by kind");

    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        int n = (int)strlen(cli_json_str(json_object_array_get_idx(arr, i), "name"));
        width = n > width ? n : width;
    }
    printf("  %-*s   %10s %7s %8s\n", width, "by kind", "bytes", "share", "tensors");
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *g = json_object_array_get_idx(arr, i);
        row(width, cli_json_str(g, "name"), u64(g, "bytes"), live, u64(g, "tensors"));
    }
}

/* One grouping ({top, groups, rest, none}) under its title; nothing when no tensor has a
 * group under it. */
static void print_groups(const char *title, const char *none, json_object *g, uint64_t live)
{
    json_object *top = cli_json_get(g, "top"), *rest = cli_json_get(g, "rest");
    char more[64];
    int width = (int)strlen(title);

    if (top == NULL || json_object_array_length(top) == 0)
        return;
    snprintf(more, sizeof(more), "(%llu more)", (unsigned long long)u64(rest, "groups"));
    for (size_t i = 0; i < json_object_array_length(top); i++) {
        int n = (int)strlen(cli_json_str(json_object_array_get_idx(top, i), "name"));
        width = n > width ? n : width;
    }
    width = (int)strlen(more) > width ? (int)strlen(more) : width;
    width = (int)strlen(none) > width ? (int)strlen(none) : width;
    printf("  %-*s   %10s %7s %8s\n", width, title, "bytes", "share", "tensors");
    for (size_t i = 0; i < json_object_array_length(top); i++) {
        json_object *t = json_object_array_get_idx(top, i);
        row(width, cli_json_str(t, "name"), u64(t, "bytes"), live, u64(t, "tensors"));
    }
    if (u64(rest, "groups") > 0)
        row(width, more, u64(rest, "bytes"), live, u64(rest, "tensors"));
    if (u64(cli_json_get(g, "none"), "tensors") > 0)
        row(width, none, u64(cli_json_get(g, "none"), "bytes"), live,
            u64(cli_json_get(g, "none"), "tensors"));
}

/* "op xent" or "instruction fusion.4 (jit(f)/add)", or nothing known. */
static void print_op(json_object *op)
{
    json_object *op_name = cli_json_get(op, "op_name");

    if (op == NULL || json_object_is_type(op, json_type_null))
        return;
    printf(", %s %s", strcmp(cli_json_str(op, "source"), "ops") == 0 ? "op" : "instruction",
           cli_json_str(op, "name"));
    if (op_name != NULL && !json_object_is_type(op_name, json_type_null))
        printf(" (%s)", json_object_get_string(op_name));
}

/* The tensors the peak step allocates, largest first. */
static void print_begins(json_object *r, json_object *b)
{
    json_object *ids = cli_json_get(b, "ids"), *ts = cli_json_get(r, "tensors");
    char a[32];

    if (u64(b, "tensors") == 0)
        return;
    printf("  allocated there: %llu tensor%s, %s:", (unsigned long long)u64(b, "tensors"),
           u64(b, "tensors") == 1 ? "" : "s", fmt(u64(b, "bytes"), a, sizeof(a)));
    for (size_t i = 0; ids != NULL && i < json_object_array_length(ids); i++) {
        size_t id = (size_t)json_object_get_int64(json_object_array_get_idx(ids, i));
        json_object *t = ts != NULL ? json_object_array_get_idx(ts, id) : NULL;
        printf("%s %s (%s)", i ? "," : "", cli_json_str(t, "name"),
               fmt(u64(t, "padded_bytes"), a, sizeof(a)));
    }
    if (ids != NULL && u64(b, "tensors") > json_object_array_length(ids))
        printf(", ...");
    printf("\n");
}

void cli_print_peak(json_object *r)
{
    json_object *p = cli_json_get(r, "peak");
    uint64_t live;
    char a[32], b[32], c[32];

    if (p == NULL || json_object_is_type(p, json_type_null))
        return;
    live = u64(p, "live_bytes");
    printf("\npeak %s at step %lld", fmt(u64(p, "bytes"), a, sizeof(a)),
           (long long)json_object_get_int64(cli_json_get(p, "step")));
    print_op(cli_json_get(p, "op"));
    printf(": %s live in %llu tensors, %s free below the top\n", fmt(live, b, sizeof(b)),
           (unsigned long long)u64(p, "tensors"), fmt(u64(p, "gap_bytes"), c, sizeof(c)));
    print_begins(r, cli_json_get(p, "begins"));
    print_kinds(cli_json_get(p, "by_kind"), live);
    print_groups("by tag", "(untagged)", cli_json_get(p, "by_tag"), live);
    print_groups("by layer", "(no layer)", cli_json_get(p, "by_layer"), live);
    print_groups("by scope", "(no op_name)", cli_json_get(p, "by_scope"), live);
}
