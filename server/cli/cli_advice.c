/*
 * cli_advice.c - the text report's "advice" section, drawn from the result's "advice"
 * (server/planner/RESULT.md#advice): why advice is given, each change planned for real with
 * the peak it gives and what it costs, then the smallest set that fits as "apply these N",
 * with the what-if overrides that make each.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "planner/layout.h"

static uint64_t u64(json_object *o, const char *key)
{
    return (uint64_t)json_object_get_int64(cli_json_get(o, key));
}

/* An offload's cost in words (the plan page's advice.js says the same): the bytes copied to
 * and from host memory a step, and the time at the cited host link, or why not. */
static void host_text(json_object *cost, char *buf, size_t cap)
{
    json_object *secs = cli_json_get(cost, "host_seconds_per_step");
    const char *note = json_object_is_type(cli_json_get(cost, "note"), json_type_string)
                           ? cli_json_str(cost, "note")
                           : "copied out and back a step";
    char b[32];

    if (!json_object_is_type(cli_json_get(cost, "host_bytes_per_step"), json_type_int))
        snprintf(buf, cap, "host memory traffic (%s)", note);
    else if (json_object_is_type(secs, json_type_double) ||
             json_object_is_type(secs, json_type_int))
        snprintf(buf, cap, "copy %s to and from host memory a step (%.3f ms at %.0f GB/s: %s)",
                 layout_format_bytes(u64(cost, "host_bytes_per_step"), b, sizeof(b)),
                 json_object_get_double(secs) * 1e3,
                 json_object_get_double(cli_json_get(cost, "host_link_bytes_per_s")) / 1e9,
                 cli_json_str(cost, "host_link_source"));
    else
        snprintf(buf, cap, "copy %s to and from host memory a step (%s)",
                 layout_format_bytes(u64(cost, "host_bytes_per_step"), b, sizeof(b)), note);
}

/* The recompute FLOPs a change adds, in words after its cost (the plan page's advice.js says
 * the same): "; 985.20 TFLOPs recomputed a step (31.2 % of the step's)"; "" when not known or
 * none. */
static void flops_text(json_object *cost, char *buf, size_t cap)
{
    json_object *fl = cli_json_get(cost, "recompute_flops"),
                *fr = cli_json_get(cost, "recompute_flops_fraction");

    buf[0] = '\0';
    if (!json_object_is_type(fl, json_type_int) || json_object_get_int64(fl) <= 0)
        return;
    snprintf(buf, cap, "; %.2f TFLOPs recomputed a step", (double)json_object_get_int64(fl) / 1e12);
    if (json_object_is_type(fr, json_type_double))
        snprintf(buf + strlen(buf), cap - strlen(buf), " (%.1f %% of the step's)",
                 json_object_get_double(fr) * 100);
}

/* What a change costs in words: "recompute 800.00M of activations in the backward", ... */
static void cost_text(json_object *cost, char *buf, size_t cap)
{
    const char *kind = cli_json_str(cost, "kind");
    char b[32], f[96];

    if (strcmp(kind, "recompute") == 0 &&
        json_object_is_type(cli_json_get(cost, "recompute_bytes"), json_type_int))
        snprintf(buf, cap, "recompute %s of activations in the backward",
                 layout_format_bytes(u64(cost, "recompute_bytes"), b, sizeof(b)));
    else if (strcmp(kind, "recompute") == 0)
        snprintf(buf, cap, "recompute in the backward");
    else if (strcmp(kind, "host") == 0)
        host_text(cost, buf, cap);
    else if (strcmp(kind, "reshape") == 0)
        snprintf(buf, cap, "the program stores the tensor reshaped");
    else if (strcmp(kind, "steps") == 0)
        snprintf(buf, cap, "more passes a step, fewer examples each");
    else if (strcmp(kind, "communication") == 0)
        snprintf(buf, cap, "all-gather and reduce-scatter %s a step per device",
                 layout_format_bytes(u64(cost, "comm_bytes_per_step"), b, sizeof(b)));
    else if (strcmp(kind, "precision") == 0)
        snprintf(buf, cap, "lower precision (numerics)");
    else if (strcmp(kind, "chips") == 0)
        snprintf(buf, cap, "another chip, or more of them");
    else
        snprintf(buf, cap, "none");
    flops_text(cost, f, sizeof(f));
    snprintf(buf + strlen(buf), cap - strlen(buf), "%s", f);
}

static void print_item(json_object *it, size_t k)
{
    char peak[32], saves[32], cost[320];
    int64_t sv = json_object_get_int64(cli_json_get(it, "saves_bytes"));

    layout_format_bytes(u64(it, "peak_after"), peak, sizeof(peak));
    layout_format_bytes((uint64_t)(sv < 0 ? -sv : sv), saves, sizeof(saves));
    cost_text(cli_json_get(it, "cost"), cost, sizeof(cost));
    printf("  %zu. %s\n     %s %s, peak %s, %s; cost: %s\n     what-if %s\n", k + 1,
           cli_json_str(it, "change"), sv < 0 ? "adds" : "saves", saves, peak,
           json_object_get_boolean(cli_json_get(it, "fits_after"))
               ? (json_object_get_boolean(cli_json_get(it, "within_budget_after"))
                      ? "fits"
                      : "fits, over budget")
               : "does not fit",
           cost,
           json_object_to_json_string_ext(cli_json_get(it, "overrides"), JSON_C_TO_STRING_PLAIN));
}

void cli_print_advice(json_object *r)
{
    json_object *a = cli_json_get(r, "advice"), *items, *combo;
    size_t n;

    if (a == NULL || json_object_is_type(a, json_type_null))
        return;
    items = cli_json_get(a, "items");
    n = json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
    printf("\nadvice (%s: each change planned, %llu plans with strategies %s)\n",
           cli_json_str(a, "reason"), (unsigned long long)u64(a, "replans"),
           cli_json_str(a, "strategies"));
    if (!json_object_is_type(cli_json_get(a, "unavailable"), json_type_null)) {
        printf("  none: %s\n", cli_json_str(a, "unavailable"));
        return;
    }
    if (n == 0)
        printf("  no change found to plan\n");
    for (size_t k = 0; k < n; k++)
        print_item(json_object_array_get_idx(items, k), k);
    combo = cli_json_get(a, "combination");
    if (combo != NULL && !json_object_is_type(combo, json_type_null)) {
        json_object *idx = cli_json_get(combo, "items");
        size_t m = json_object_array_length(idx);
        char peak[32];
        printf("  apply these %zu:", m);
        for (size_t q = 0; q < m; q++)
            printf("%s %lld", q > 0 ? "," : "",
                   (long long)json_object_get_int64(json_object_array_get_idx(idx, q)) + 1);
        printf(" -> peak %s, %s\n     what-if %s\n",
               layout_format_bytes(u64(combo, "peak_after"), peak, sizeof(peak)),
               json_object_get_boolean(cli_json_get(combo, "fits_after")) ? "fits"
                                                                          : "still does not fit",
               json_object_to_json_string_ext(cli_json_get(combo, "overrides"),
                                              JSON_C_TO_STRING_PLAIN));
    }
    if (json_object_get_boolean(cli_json_get(a, "out_of_replans")))
        printf("  (stopped at %llu plans)\n", (unsigned long long)u64(a, "max_replans"));
}
