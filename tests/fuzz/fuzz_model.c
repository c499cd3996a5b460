/*
 * fuzz_model.c - libFuzzer target: a native JSON model through the whole plan_run pipeline
 * (parse, layouts, lifetimes, packing with the fast greedy strategy, the result document
 * and its views, the runtime replay).
 *
 * For any byte string plan_run must fail with an error naming a place, or succeed with a
 * result and two views that are each well-formed JSON, without a crash, a leak or a
 * sanitizer report. fuzz_plan covers format detection and validation; this target forces
 * the JSON importer and goes on past validation.
 */
#include <stdint.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "planner/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless text[0..len) is exactly one JSON value. */
static void must_be_json(const char *text, size_t len)
{
    struct json_tokener *tok = json_tokener_new_ex(64);
    json_object *j;

    if (tok == NULL)
        abort();
    j = json_tokener_parse_ex(tok, text, (int)len);
    if (j == NULL || json_tokener_get_error(tok) != json_tokener_success ||
        json_tokener_get_parse_end(tok) != len)
        abort();
    json_object_put(j);
    json_tokener_free(tok);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct plan_limits lim;
    struct plan_opts opts = {0};
    struct plan_views views = {0};
    struct plan_summary s;
    struct err e;
    char *json = NULL;
    size_t json_len = 0;

    plan_limits_default(&lim);
    lim.max_input_bytes = 1u << 16;
    lim.max_tensors = 200;
    lim.max_ops = 200;
    opts.format = "json";
    opts.strategies = "xla-default"; /* greedy: microseconds, so the fuzzer keeps its pace */
    if (plan_run((const char *)data, size, &opts, &lim, &json, &json_len, &views, &s, &e) == 0) {
        must_be_json(json, json_len);
        must_be_json(views.summary, views.summary_len);
        must_be_json(views.layout, views.layout_len);
    } else if (json != NULL) {
        abort();
    }
    free(json);
    plan_views_free(&views);
    return 0;
}
