/*
 * cli_report.c - the text report's "XLA's report" section, drawn from the result's
 * packing.xla_report (server/planner/RESULT.md#fields): an out-of-memory report's header and
 * each listed allocation with XLA's size beside ours, or XLA's memory figures beside our
 * peak.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/layout.h"

/* A {bytes, text} size as the report printed it; "-" when absent. */
static const char *size_text(json_object *o, const char *key)
{
    json_object *s = cli_json_get(o, key);

    return s != NULL && !json_object_is_type(s, json_type_null) ? cli_json_str(s, "text") : "-";
}

static const char *bytes_text(json_object *o, const char *key, char *buf, size_t cap)
{
    json_object *v = cli_json_get(o, key);

    if (v == NULL || json_object_is_type(v, json_type_null))
        return "-";
    return layout_format_bytes((uint64_t)json_object_get_int64(v), buf, cap);
}

/* "yes", "NO" or "-" (not checked) for a match flag. */
static const char *verdict(json_object *a, const char *key)
{
    json_object *v = cli_json_get(a, key);

    if (v == NULL || json_object_is_type(v, json_type_null))
        return "-";
    return json_object_get_boolean(v) ? "yes" : "NO";
}

static void print_allocations(json_object *x)
{
    json_object *list = cli_json_get(x, "allocations");
    int w = cli_name_width(list, "name", 12);
    char a[32], b[32];

    if (list == NULL || json_object_array_length(list) == 0)
        return;
    printf("  %-4s %-*s %10s %10s %10s %10s  %-5s %s\n", "#", w, "allocation", "xla size", "ours",
           "unpadded", "ours", "size", "unpadded");
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *al = json_object_array_get_idx(list, i), *ours = cli_json_get(al, "ours");
        printf("  %-4lld %-*s %10s %10s %10s %10s  %-5s %s%s\n",
               (long long)json_object_get_int64(cli_json_get(al, "rank")), w,
               cli_json_str(al, "name"), size_text(al, "size"),
               bytes_text(ours, "padded_bytes", a, sizeof(a)), size_text(al, "unpadded"),
               bytes_text(ours, "logical_bytes", b, sizeof(b)), verdict(al, "size_matches"),
               verdict(al, "unpadded_matches"),
               json_object_get_boolean(cli_json_get(al, "cut")) ? "  (cut off)" : "");
    }
}

void cli_print_xla_report(json_object *pk)
{
    json_object *x = cli_json_get(pk, "xla_report");
    char a[32], b[32];

    if (x == NULL || json_object_is_type(x, json_type_null))
        return;
    printf("\nXLA's report (%s, %s)\n", cli_json_str(x, "form"), cli_json_str(x, "source"));
    if (cli_json_get(x, "figures") != NULL) {
        json_object_object_foreach(cli_json_get(x, "figures"), k, v)
        {
            printf("  %-36s %12s\n", k,
                   layout_format_bytes((uint64_t)json_object_get_int64(v), a, sizeof(a)));
        }
        printf("  XLA's total %s, our peak %s\n", bytes_text(x, "xla_total_bytes", a, sizeof(a)),
               bytes_text(cli_json_get(x, "ours"), "peak_bytes", b, sizeof(b)));
        return;
    }
    if (strcmp(size_text(x, "used"), "-") != 0)
        printf("  memory space %s: used %s of %s, exceeded by %s; our peak %s\n",
               cli_json_str(x, "memory_space"), size_text(x, "used"), size_text(x, "capacity"),
               size_text(x, "exceeded"),
               bytes_text(cli_json_get(x, "ours"), "peak_bytes", a, sizeof(a)));
    else
        printf("  memory space %s (the paste has no header line); our peak %s\n",
               cli_json_str(x, "memory_space"),
               bytes_text(cli_json_get(x, "ours"), "peak_bytes", a, sizeof(a)));
    print_allocations(x);
    printf("  %lld of %lld allocations matched a tensor, %lld not the size our rules give\n",
           (long long)json_object_get_int64(cli_json_get(x, "allocations_matched")),
           (long long)json_object_get_int64(cli_json_get(x, "allocations_listed")),
           (long long)json_object_get_int64(cli_json_get(x, "mismatches")));
}
