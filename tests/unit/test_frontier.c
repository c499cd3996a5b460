/*
 * test_frontier.c - the most that fits (planner/frontier.h). Every answer is checked by
 * planning the recipe again, separately, at the answer and at the next value: the largest
 * value reported fits, the next one does not, with the peaks the search reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/frontier.h"
#include "planner/plan.h"
#include "planner/recipe.h"
#include "rng.h"

static const char LLAMA_8B[] =
    "{\"name\": \"l8\", \"chip\": \"v5e\", \"model\": {\"preset\": \"llama-3.1-8b\"},"
    " \"train\": {\"batch\": 16, \"seq\": 4096, \"remat\": \"nothing_saveable\"},"
    " \"mesh\": {\"fsdp\": 16}}";

/* The recipe with path = x, planned on its own: its summary. */
static struct plan_summary plan_at(const char *recipe, const char *path, int64_t x)
{
    struct plan_summary s;
    struct recipe_edit ed = {path, NULL};
    char v[24], *text = NULL, *json = NULL;
    size_t len = 0, json_len = 0;
    struct err e;

    snprintf(v, sizeof(v), "%lld", (long long)x);
    ed.value = v;
    if (recipe_compose(recipe, strlen(recipe), &ed, 1, &text, &len, &e) != ERR_OK ||
        plan_run(text, len, NULL, NULL, &json, &json_len, NULL, &s, &e) != ERR_OK)
        fail_msg("%s = %lld: %s", path, (long long)x, e.msg);
    free(text);
    free(json);
    return s;
}

/* The line's answer, checked by separate plans. */
static void assert_line_checks_out(const char *recipe, const struct frontier_result *r,
                                   const struct frontier_line *ln)
{
    if (ln->max_fit > 0) {
        struct plan_summary s = plan_at(recipe, r->path, ln->max_fit);
        assert_int_equal(s.verdict, PLAN_FIT_FITS);
        assert_int_equal(s.peak_bytes, ln->max_fit_peak);
        assert_int_equal(s.capacity_bytes, ln->capacity_bytes);
    }
    if (ln->next > 0) {
        struct plan_summary s = plan_at(recipe, r->path, ln->next);
        assert_int_not_equal(s.verdict, PLAN_FIT_FITS);
        assert_int_equal(s.peak_bytes, ln->next_peak);
        assert_int_equal(ln->next, ln->max_fit > 0 ? ln->max_fit + r->step : r->lo);
        assert_true(ln->next_over_bytes > 0);
        assert_int_equal(ln->next_over_bytes, s.peak_bytes - s.capacity_bytes);
    }
    for (size_t i = 1; i < ln->n_probes; i++)
        assert_true(ln->probes[i - 1].x < ln->probes[i].x);
}

/* Llama 3.1 8B with FSDP over 16 v5e chips: a global batch of 32 is 2 sequences per chip
 * and fits (14.54G of 15.75G); 33 is 3 on some chip and does not. */
static void test_largest_batch_fits_and_the_next_does_not(void **state)
{
    struct frontier_query q = {.maximize = "batch"};
    struct frontier_result r;
    struct err e;

    (void)state;
    assert_int_equal(frontier_search(LLAMA_8B, strlen(LLAMA_8B), NULL, NULL, &q, &r, &e), ERR_OK);
    assert_string_equal(r.path, "train.batch");
    assert_int_equal(r.n_lines, 1);
    assert_int_equal(r.lines[0].max_fit, 32);
    assert_int_equal(r.lines[0].next, 33);
    /* 1, 2, 4, ..., 64 doubling (64 does not fit), then 48, 40, 36, 34, 33 */
    assert_int_equal(r.plans, 12);
    assert_int_equal(r.lines[0].n_probes, 12);
    assert_line_checks_out(LLAMA_8B, &r, &r.lines[0]);
    frontier_free(&r);

    /* in multiples of the 16 FSDP chips: 32 fits, 48 does not */
    q.step = 16;
    assert_int_equal(frontier_search(LLAMA_8B, strlen(LLAMA_8B), NULL, NULL, &q, &r, &e), ERR_OK);
    assert_int_equal(r.lines[0].max_fit, 32);
    assert_int_equal(r.lines[0].next, 48);
    assert_line_checks_out(LLAMA_8B, &r, &r.lines[0]);
    frontier_free(&r);
}

/* A sweep: one search per value, and a value the recipe refuses is that line's error. */
static void test_a_sweep_searches_each_value(void **state)
{
    static const char *const remat[] = {"nothing_saveable", "dots_saveable", "nonsense"};
    struct frontier_query q = {.maximize = "train.batch",
                               .step = 16,
                               .sweep = "train.remat",
                               .sweep_values = remat,
                               .n_sweep = 3};
    struct frontier_result r;
    struct err e;
    char *json = NULL;
    size_t len = 0;

    (void)state;
    assert_int_equal(frontier_search(LLAMA_8B, strlen(LLAMA_8B), NULL, NULL, &q, &r, &e), ERR_OK);
    assert_int_equal(r.n_lines, 3);
    assert_string_equal(r.lines[0].value, "nothing_saveable");
    assert_line_checks_out(LLAMA_8B, &r, &r.lines[0]);
    /* saving the dots keeps more per layer: never more fits than with full remat */
    assert_true(r.lines[1].max_fit <= r.lines[0].max_fit);
    assert_non_null(strstr(r.lines[2].error, "train.remat: unknown policy \"nonsense\""));
    assert_int_equal(frontier_json(&r, &json, &len, &e), ERR_OK);
    json_object *doc = json_tokener_parse(json), *f, *lines;
    assert_true(json_object_object_get_ex(doc, "frontier", &f));
    assert_true(json_object_object_get_ex(f, "lines", &lines));
    assert_int_equal(json_object_array_length(lines), 3);
    assert_string_equal(json_object_get_string(
                            json_object_object_get(json_object_array_get_idx(lines, 0), "value")),
                        "nothing_saveable");
    assert_int_equal(json_object_get_int64(
                         json_object_object_get(json_object_array_get_idx(lines, 0), "max_fit")),
                     r.lines[0].max_fit);
    json_object_put(doc);
    free(json);
    frontier_free(&r);
}

/* What the search refuses, each naming what is wrong. */
static void test_bad_queries_name_the_field(void **state)
{
    static const struct {
        struct frontier_query q;
        int rc;
        const char *msg;
    } cases[] = {
        {{.maximize = "batchsize"}, ERR_INVALID, "maximize: \"batchsize\" is not a field"},
        {{.maximize = "batch", .lo = 3, .step = 2},
         ERR_INVALID,
         "min: must be a positive multiple"},
        {{.maximize = "batch", .lo = 8, .hi = 4}, ERR_INVALID, "max: must be from min (8)"},
        {{.maximize = "train.nonsense"}, ERR_INVALID, "train.nonsense"},
        {{.maximize = "batch", .max_plans = 3}, ERR_LIMIT, "more than 3 plans"},
    };
    struct frontier_result r;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = frontier_search(LLAMA_8B, strlen(LLAMA_8B), NULL, NULL, &cases[i].q, &r, &e);
        if (rc != cases[i].rc || strstr(e.msg, cases[i].msg) == NULL)
            fail_msg("case %zu: rc %d, \"%s\"; wanted %d, \"%s\"", i, rc, e.msg, cases[i].rc,
                     cases[i].msg);
        assert_null(r.lines);
    }
}

/* The query alone, before any recipe: the field resolved, the defaults filled in, hi rounded
 * down to a multiple of step; errors as the search's, nothing allocated. */
static void test_check_resolves_the_query_alone(void **state)
{
    const char *vals[1] = {"full"};
    struct frontier_query q = {.maximize = "batch", .hi = 100, .step = 8};
    struct frontier_result r;
    struct err e;

    (void)state;
    assert_int_equal(frontier_check(&q, &r, &e), ERR_OK);
    assert_string_equal(r.path, "train.batch");
    assert_true(r.lo == 8 && r.hi == 96 && r.step == 8);
    assert_string_equal(r.sweep, "");
    assert_null(r.lines);
    q = (struct frontier_query){
        .maximize = "serve.context", .sweep = "train.remat", .sweep_values = vals, .n_sweep = 1};
    assert_int_equal(frontier_check(&q, &r, &e), ERR_OK);
    assert_string_equal(r.path, "serve.context");
    assert_true(r.lo == 1 && r.hi == 1048576 && r.step == 1);
    assert_string_equal(r.sweep, "train.remat");
    q = (struct frontier_query){.maximize = "batch", .lo = 6, .step = 4};
    assert_int_equal(frontier_check(&q, &r, &e), ERR_INVALID);
    assert_string_equal(e.where, "min");
    q = (struct frontier_query){.maximize = "size"};
    assert_int_equal(frontier_check(&q, &r, &e), ERR_INVALID);
    assert_string_equal(e.where, "maximize");
    q = (struct frontier_query){.maximize = "batch", .sweep = "train.remat"};
    assert_int_equal(frontier_check(&q, &r, &e), ERR_INVALID);
    assert_string_equal(e.where, "sweep");
}

/* The property, over 50 random recipes (small models, random sequence, remat, mesh and
 * chip): whatever the search reports, separate plans agree with it. */
static void test_random_recipes_agree_with_separate_plans(void **state)
{
    static const char *const presets[] = {"llama-3.2-1b", "gemma-2b", "llama-3.2-3b"};
    static const char *const remats[] = {"nothing_saveable", "dots_saveable",
                                         "everything_saveable"};
    static const char *const chips[] = {"v5e", "v4", "v6e"};
    uint64_t seed = 20261205;

    (void)state;
    for (int k = 0; k < 50; k++) {
        char recipe[512];
        struct frontier_query q = {.maximize = "batch", .hi = 512};
        struct frontier_result r;
        struct err e;
        int fsdp = 1 << (rng_splitmix64(&seed) % 4);
        snprintf(recipe, sizeof(recipe),
                 "{\"chip\": \"%s\", \"model\": {\"preset\": \"%s\"}, \"train\": {\"batch\": "
                 "%d, \"seq\": %d, \"remat\": \"%s\"}, \"mesh\": {\"fsdp\": %d}}",
                 chips[rng_splitmix64(&seed) % 3], presets[rng_splitmix64(&seed) % 3], fsdp,
                 512 << (rng_splitmix64(&seed) % 4), remats[rng_splitmix64(&seed) % 3], fsdp);
        q.step = fsdp;
        if (frontier_search(recipe, strlen(recipe), NULL, NULL, &q, &r, &e) != ERR_OK)
            fail_msg("%s: %s", recipe, e.msg);
        assert_line_checks_out(recipe, &r, &r.lines[0]);
        frontier_free(&r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_largest_batch_fits_and_the_next_does_not),
        cmocka_unit_test(test_a_sweep_searches_each_value),
        cmocka_unit_test(test_bad_queries_name_the_field),
        cmocka_unit_test(test_check_resolves_the_query_alone),
        cmocka_unit_test(test_random_recipes_agree_with_separate_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
