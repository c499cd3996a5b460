/*
 * test_whatif.c - what-if overrides on a model (whatif.h), each planned for real with the
 * exact peak worked out by hand, and the errors naming the override.
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

#include "planner/plan.h"
#include "planner/whatif.h"

/*
 * x (input) lives all along [0, 4); f: x -> h, f2: h -> y, mid: y -> g, bwd: g, h -> (): h
 * lives [0, 4), y [1, 3), g [2, 4). Each f32[8,128] is 4096 bytes (T(8,128), 512-aligned).
 * At step 2 all four are live: peak 16384.
 */
static const char model[] =
    "{\"name\":\"remat\",\"chip\":\"v5e\",\"tensors\":["
    "{\"name\":\"x\",\"shape\":[8,128],\"dtype\":\"f32\",\"kind\":\"input\"},"
    "{\"name\":\"h\",\"shape\":[8,128],\"dtype\":\"f32\",\"kind\":\"activation\"},"
    "{\"name\":\"y\",\"shape\":[8,128],\"dtype\":\"f32\",\"kind\":\"temp\"},"
    "{\"name\":\"g\",\"xla_shape\":\"f32[8,128]{1,0:T(8,128)}\",\"kind\":\"temp\"}],"
    "\"ops\":[{\"name\":\"f\",\"inputs\":[\"x\"],\"outputs\":[\"h\"]},"
    "{\"name\":\"f2\",\"inputs\":[\"h\"],\"outputs\":[\"y\"]},"
    "{\"name\":\"mid\",\"inputs\":[\"y\"],\"outputs\":[\"g\"]},"
    "{\"name\":\"bwd\",\"inputs\":[\"g\",\"h\"],\"outputs\":[]}]}";

/* Applies overrides to the model and plans the result; returns its summary.peak_bytes. */
static json_object *whatif_plan(const char *overrides, struct whatif_result *wr)
{
    struct plan_opts o = {.strategies = "xla-spatial"};
    struct err e;
    char *json = NULL;
    size_t len = 0;
    json_object *r;

    if (whatif_apply(model, sizeof(model) - 1, overrides, strlen(overrides), NULL, wr, &e) !=
        ERR_OK)
        fail_msg("whatif_apply: %s", e.msg);
    if (wr->budget[0] != '\0')
        o.budget = wr->budget;
    if (plan_run(wr->model, wr->model_len, &o, NULL, &json, &len, NULL, NULL, &e) != ERR_OK)
        fail_msg("plan_run: %s", e.msg);
    r = json_tokener_parse(json);
    free(json);
    assert_non_null(r);
    return r;
}

static int64_t num(json_object *o, const char *a, const char *b)
{
    json_object *x = NULL, *y = NULL;

    assert_true(json_object_object_get_ex(o, a, &x));
    assert_true(json_object_object_get_ex(x, b, &y));
    return json_object_get_int64(y);
}

/* Overrides without a chip, planned: the peak, and what whatif_apply reports. */
static void test_overrides_replan_the_model(void **state)
{
    static const struct {
        const char *overrides;
        int64_t peak;
        int64_t tensors;       /* summary.tensors; 0: not asked */
        size_t matched;        /* tensors the overrides matched */
        const char *name;      /* the what-if's name; NULL: not asked */
        const char *model_has; /* text the overridden model holds once; NULL: nothing asked */
    } cases[] = {
        /* none: the model as is, named as a what-if of it */
        {"{}", 16384, 0, 0, "remat (what-if)", NULL},
        /* Activations (h) and the glob "g" to bf16: 2048 bytes each (T(8,128)(2,1)); g's
         * xla_shape keeps its dims and drops its f32 layout. Peak 4096 + 2048 + 4096 + 2048 =
         * 12288. */
        {"{\"dtype\":{\"activation\":\"bf16\",\"g\":\"bf16\"},\"name\":\"half\"}", 12288, 0, 2,
         "half", "\"xla_shape\":\"bf16[8,128]\""},
        /* the same in the names NumPy, JAX and PyTorch give them, written as XLA's */
        {"{\"dtype\":{\"activation\":\"jnp.bfloat16\",\"g\":\"torch.bfloat16\"}}", 12288, 0, 2,
         NULL, "\"xla_shape\":\"bf16[8,128]\""},
        {"{\"dtype\":{\"activation\":\"bfloat16\",\"g\":\"bfloat16\"}}", 12288, 0, 2, NULL,
         "\"dtype\":\"bf16\""},
        /* h rematerialised: live [0, 1) and, as h/remat, [3, 4). Step 2 holds x, y, g (12288);
         * step 3 x, g, h/remat (12288): peak 12288, one tensor more. */
        {"{\"remat\":\"h\"}", 12288, 5, 1, NULL, "\"name\":\"h/remat\""},
        /* h selected three times (by name, by kind, by glob) is still split once */
        {"{\"remat\":[\"h\",\"activation\",\"*\"]}", 12288, 5, 1, NULL, "\"name\":\"h/remat\""},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct whatif_result wr;
        json_object *r = whatif_plan(cases[i].overrides, &wr);
        const char *has = cases[i].model_has;
        assert_int_equal(num(r, "summary", "peak_bytes"), cases[i].peak);
        if (cases[i].tensors != 0)
            assert_int_equal(num(r, "summary", "tensors"), cases[i].tensors);
        assert_int_equal(wr.matched, cases[i].matched);
        assert_false(wr.chip_set);
        if (cases[i].name != NULL)
            assert_string_equal(wr.name, cases[i].name);
        if (has != NULL &&
            (strstr(wr.model, has) == NULL || strstr(strstr(wr.model, has) + 1, has)))
            fail_msg("%s: the model holds %s not once", cases[i].overrides, has);
        json_object_put(r);
        free(wr.model);
    }
}

/* Mesh data=2 and x sharded on its rows (x is f32[4,128] per device), chip v6e, strategies
 * and a budget: each reaches the plan. */
static void test_mesh_chip_strategies_and_budget_reach_the_plan(void **state)
{
    struct whatif_result wr;
    json_object *r = whatif_plan("{\"mesh\":{\"data\":2},\"sharding\":{\"x\":[\"data\",null]},"
                                 "\"chip\":\"v6e\",\"strategies\":\"first-fit\","
                                 "\"budget\":\"16000B\"}",
                                 &wr),
                *chip = NULL, *name = NULL;

    (void)state;
    assert_true(wr.chip_set && wr.strategies_set);
    assert_string_equal(wr.budget, "16000B");
    assert_true(json_object_object_get_ex(r, "chip", &chip) &&
                json_object_object_get_ex(chip, "name", &name));
    assert_string_equal(json_object_get_string(name), "v6e");
    assert_int_equal(num(r, "model", "devices"), 2);
    assert_int_equal(num(r, "summary", "budget_bytes"), 16000);
    json_object_put(r);
    free(wr.model);
}

static void test_bad_overrides_name_the_field(void **state)
{
    static const struct {
        const char *ov, *where;
    } cases[] = {
        {"[1]", "overrides"},
        {"{\"colour\":1}", "overrides.colour"},
        {"{\"dtype\":5}", "overrides.dtype"},
        {"{\"dtype\":{\"h\":5}}", "overrides.dtype.h"},
        {"{\"mesh\":{\"data\":0}}", "overrides.mesh.data"},
        {"{\"sharding\":{\"x\":\"data\"}}", "overrides.sharding.x"},
        {"{\"remat\":7}", "overrides.remat"},
        {"{\"chip\":\"\"}", "overrides.chip"},
        {"{\"budget\":\"lots\"}", "overrides.budget"},
        {"{\"chip\":\"v99\"}", "overrides.chip"},
        {"{\"strategies\":\"fastest\"}", "overrides.strategies"},
        {"{\"dtype\":{\"h\":\"f33\"}}", "overrides.dtype.h"},
        {"{\"remat\":[\"h\",3]}", "overrides.remat[1]"},
        /* every pattern must select something: a remat pattern an activation */
        {"{\"dtype\":{\"h\":\"bf16\",\"nothing*\":\"bf16\"}}", "overrides.dtype.nothing*"},
        {"{\"sharding\":{\"q?\":[null,null]}}", "overrides.sharding.q?"},
        {"{\"remat\":[\"h\",\"x\"]}", "overrides.remat[1]"},
        {"{\"remat\":\"param\"}", "overrides.remat"},
        {"{\"dtype\":", ""}, /* a syntax error: located by line:column in the message */
    };
    struct whatif_result wr;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (whatif_apply(model, sizeof(model) - 1, cases[i].ov, strlen(cases[i].ov), NULL, &wr,
                         &e) == ERR_OK)
            fail_msg("accepted %s", cases[i].ov);
        assert_string_equal(e.where, cases[i].where);
        assert_null(wr.model);
    }
    assert_int_not_equal(whatif_apply("{\"tensors\":3}", 13, "{}", 2, NULL, &wr, &e), ERR_OK);
    assert_string_equal(e.where, "tensors");
}

/* memory_space (whatif.h): the peak of each worked out by hand on the model above (4096
 * bytes a tensor, 16384 at step 2), the host bytes apart from HBM.
 *   - h (an activation over [0, 4)) offloaded: h [0, 1), h/from_host [3, 4) in HBM, h/host
 *     in host memory: steps 2 and 3 hold three tensors, 12288; host 4096, peak 4096;
 *   - x (an input) whole in host memory: 12288 at step 2; host 4096;
 *   - "input": host, then "x": device: the later pattern wins, x stays: 16384, no host;
 *   - remat then memory_space compose: remat leaves h live one step at each end, too short
 *     to offload, so the activations stay in HBM: remat's own 12288, no host. */
static void test_memory_space_puts_tensors_in_host_memory(void **state)
{
    static const struct {
        const char *ov;
        int64_t peak, tensors, host_bytes;
    } cases[] = {
        {"{\"memory_space\":{\"h\":\"host\"}}", 12288, 5, 4096},
        {"{\"memory_space\":{\"x\":\"pinned_host\"}}", 12288, 3, 4096},
        {"{\"memory_space\":{\"input\":\"host\",\"x\":\"device\"}}", 16384, 4, -1},
        {"{\"remat\":[\"h\"],\"memory_space\":{\"activation\":\"host\"}}", 12288, 5, -1},
    };
    struct whatif_result wr;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *r = whatif_plan(cases[i].ov, &wr), *sp = NULL;
        if (num(r, "summary", "peak_bytes") != cases[i].peak ||
            num(r, "summary", "tensors") != cases[i].tensors)
            fail_msg("%s: peak %lld, %lld tensors", cases[i].ov,
                     (long long)num(r, "summary", "peak_bytes"),
                     (long long)num(r, "summary", "tensors"));
        if (cases[i].host_bytes < 0) {
            assert_false(json_object_object_get_ex(r, "memory_spaces", &sp));
        } else {
            assert_true(json_object_object_get_ex(r, "memory_spaces", &sp));
            assert_int_equal(json_object_array_length(sp), 1);
            sp = json_object_array_get_idx(sp, 0);
            assert_string_equal(json_object_get_string(json_object_object_get(sp, "space")),
                                "host");
            assert_int_equal(json_object_get_int64(json_object_object_get(sp, "buffers")), 1);
            assert_int_equal(json_object_get_int64(json_object_object_get(sp, "bytes")),
                             cases[i].host_bytes);
            assert_int_equal(json_object_get_int64(json_object_object_get(sp, "peak_bytes")),
                             cases[i].host_bytes);
        }
        free(wr.model);
        json_object_put(r);
    }
}

/* A bad memory space is an error naming the field, in the overrides and in a model. */
static void test_a_bad_memory_space_is_named(void **state)
{
    static const char bad_model[] =
        "{\"tensors\":[{\"name\":\"a\",\"shape\":[8],\"dtype\":\"f32\"},"
        "{\"name\":\"b\",\"shape\":[8],\"dtype\":\"f32\",\"memory_space\":\"disk\"}]}";
    static const char disk[] = "{\"memory_space\":{\"h\":\"disk\"}}",
                      lone[] = "{\"memory_space\":\"host\"}",
                      none[] = "{\"memory_space\":{\"w*\":\"host\"}}";
    struct whatif_result wr;
    struct plan_summary s;
    struct err e;

    (void)state;
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, disk, sizeof(disk) - 1, NULL, &wr, &e),
                     ERR_INVALID);
    assert_string_equal(e.where, "overrides.memory_space.h");
    assert_non_null(strstr(e.msg, "must be \"device\" (HBM) or \"host\""));
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, lone, sizeof(lone) - 1, NULL, &wr, &e),
                     ERR_INVALID);
    assert_string_equal(e.where, "overrides.memory_space");
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, none, sizeof(none) - 1, NULL, &wr, &e),
                     ERR_INVALID);
    assert_string_equal(e.msg, "overrides.memory_space.w*: \"w*\" matches no tensor");
    assert_int_equal(plan_validate(bad_model, sizeof(bad_model) - 1, NULL, NULL, &s, &e),
                     ERR_INVALID);
    assert_string_equal(e.where, "tensors[1].memory_space");
}

/* The message of a pattern that selects nothing quotes it. */
static void test_a_pattern_matching_nothing_is_named(void **state)
{
    static const char ov[] = "{\"remat\":[\"h\",\"h\",\"h\",\"layers.*.x\"]}";
    struct whatif_result wr;
    struct err e;

    (void)state;
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, ov, sizeof(ov) - 1, NULL, &wr, &e),
                     ERR_INVALID);
    assert_string_equal(e.msg, "overrides.remat[3]: \"layers.*.x\" matches no activation");
    assert_int_equal(
        whatif_apply(model, sizeof(model) - 1, "{\"dtype\":{\"w*\":\"f32\"}}", 22, NULL, &wr, &e),
        ERR_INVALID);
    assert_string_equal(e.msg, "overrides.dtype.w*: \"w*\" matches no tensor");
}

/* {"remat": ["*", "*", ...]}: 16,000 patterns in 64 KB, the request that once split every
 * activation 16,000 times. Refused before the model is read, by whatif_check too. */
static void test_too_many_patterns_are_refused_first(void **state)
{
    size_t cap = 64 * 1024, n = 0;
    char *ov = malloc(cap);
    struct plan_limits lim;
    struct whatif_result wr;
    struct err e;

    (void)state;
    assert_non_null(ov);
    n += (size_t)snprintf(ov, cap, "{\"remat\":[");
    for (int i = 0; i < 16000; i++)
        n += (size_t)snprintf(ov + n, cap - n, "%s\"*\"", i > 0 ? "," : "");
    n += (size_t)snprintf(ov + n, cap - n, "]}");
    assert_true(n < cap);
    assert_int_equal(whatif_check(ov, n, NULL, NULL, &e), ERR_LIMIT);
    assert_string_equal(e.where, "overrides");
    assert_string_equal(e.msg, "overrides: 16000 patterns; the limit is 256 in all (dtype, "
                               "sharding, remat, xla_shape and memory_space together)");
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, ov, n, NULL, &wr, &e), ERR_LIMIT);
    assert_null(wr.model);
    free(ov);
    /* the limit counts dtype, sharding and remat together: 2 + 1 + 1 = 4 > 3 */
    plan_limits_default(&lim);
    lim.max_patterns = 3;
    static const char four[] = "{\"dtype\":{\"h\":\"bf16\",\"x\":\"bf16\"},"
                               "\"sharding\":{\"x\":[null,null]},\"remat\":\"h\"}";
    assert_int_equal(whatif_check(four, sizeof(four) - 1, &lim, NULL, &e), ERR_LIMIT);
    assert_string_equal(e.msg, "overrides: 4 patterns; the limit is 3 in all (dtype, sharding, "
                               "remat, xla_shape and memory_space together)");
    lim.max_patterns = 4;
    assert_int_equal(whatif_check(four, sizeof(four) - 1, &lim, NULL, &e), ERR_OK);
}

/* whatif_check notes what needs no model: the chip and strategies set, budget, name. */
static void test_check_notes_the_options(void **state)
{
    static const char ov[] = "{\"chip\":\"v6e\",\"budget\":\"0.9\",\"name\":\"n2\"}";
    struct whatif_result wr;
    struct err e;

    (void)state;
    assert_int_equal(whatif_check(ov, sizeof(ov) - 1, NULL, &wr, &e), ERR_OK);
    assert_true(wr.chip_set && !wr.strategies_set);
    assert_string_equal(wr.budget, "0.9");
    assert_string_equal(wr.name, "n2");
    assert_null(wr.model);
    assert_int_equal(whatif_check("{}", 2, NULL, &wr, &e), ERR_OK);
    assert_string_equal(wr.name, "");
}

/* The new model is held to a submission's limits: remat of h makes 5 tensors (limit 4), or
 * a longer text than the input limit; named as the remat override's doing. */
static void test_the_new_model_is_held_to_the_limits(void **state)
{
    struct plan_limits lim;
    struct whatif_result wr;
    struct err e;

    (void)state;
    plan_limits_default(&lim);
    lim.max_tensors = 4;
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, "{\"remat\":\"h\"}", 13, &lim, &wr, &e),
                     ERR_LIMIT);
    assert_string_equal(e.where, "overrides.remat");
    assert_string_equal(e.msg, "overrides.remat: rematerialising 1 activations makes 5 tensors; "
                               "the limit is 4");
    assert_null(wr.model);
    plan_limits_default(&lim);
    lim.max_input_bytes = sizeof(model) + 16; /* the copy of h is longer than 16 bytes */
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, "{\"remat\":\"h\"}", 13, &lim, &wr, &e),
                     ERR_LIMIT);
    assert_string_equal(e.where, "overrides.remat");
    assert_null(wr.model);
    /* without remat the same limit passes: the model is as long as it was, less the spaces */
    assert_int_equal(whatif_apply(model, sizeof(model) - 1, "{\"name\":\"n\"}", 12, &lim, &wr, &e),
                     ERR_OK);
    free(wr.model);
}

/*
 * A recipe's plan takes "recipe", a JSON Merge Patch of the recipe: batch 8 -> 16 on GPT-2
 * doubles the kept layer inputs, 12 x 8 x 1024 x 768 x 2 = 150,994,944 bytes ->
 * 301,989,888 (the stacked layers.x, no mesh). mesh and chip apply too; the keys that select
 * tensors do not, and the new recipe is checked as a whole.
 */
static const char recipe[] = "{\"model\": \"gpt2\", \"train\": {\"batch\": 8, \"seq\": 1024}}";

static int apply(const char *in, const char *ov, struct whatif_result *wr, struct err *e)
{
    return whatif_apply(in, strlen(in), ov, strlen(ov), NULL, wr, e);
}

static void test_recipe_overrides(void **state)
{
    struct whatif_result wr;
    struct plan_opts o = {.strategies = "xla-spatial", .format = "recipe"};
    json_object *root, *t, *v;
    char *json = NULL;
    size_t len;
    struct err e;
    static const char ov[] = "{\"recipe\": {\"train\": {\"batch\": 16}}, \"mesh\": {\"fsdp\": 2}, "
                             "\"chip\": \"v6e\"}";

    (void)state;
    assert_int_equal(whatif_apply(recipe, strlen(recipe), ov, strlen(ov), NULL, &wr, &e), ERR_OK);
    assert_true(wr.recipe);
    assert_true(wr.chip_set);
    assert_non_null(strstr(wr.model, "\"batch\":16"));
    assert_int_equal(plan_run(wr.model, wr.model_len, &o, NULL, &json, &len, NULL, NULL, &e),
                     ERR_OK);
    root = json_tokener_parse(json);
    assert_true(json_object_object_get_ex(root, "tensors", &t));
    for (size_t i = 0; i < json_object_array_length(t); i++) {
        json_object *x = json_object_array_get_idx(t, i);
        json_object_object_get_ex(x, "name", &v);
        if (strcmp(json_object_get_string(v), "layers.x") != 0)
            continue;
        json_object_object_get_ex(x, "logical_bytes", &v);
        /* batch 16 over fsdp 2: 8 a device, the same bytes as batch 8 alone */
        assert_int_equal(json_object_get_int64(v), 150994944);
    }
    json_object_object_get_ex(root, "chip", &v);
    json_object_object_get_ex(v, "name", &v);
    assert_string_equal(json_object_get_string(v), "v6e");
    json_object_put(root);
    free(json);
    free(wr.model);

    assert_int_equal(apply(recipe, "{\"recipe\": {\"train\": {\"batch\": 0}}}", &wr, &e),
                     ERR_INVALID);
    assert_string_equal(e.where, "overrides.recipe.train.batch");
    assert_null(wr.model);
    assert_int_equal(apply(recipe, "{\"dtype\": {\"param\": \"f32\"}}", &wr, &e), ERR_INVALID);
    assert_string_equal(e.where, "overrides.dtype");
    assert_int_equal(apply(recipe, "{\"mesh\": {\"model\": 2}}", &wr, &e), ERR_INVALID);
    assert_string_equal(e.where, "overrides.mesh.model");
    assert_null(wr.model);
    assert_int_equal(apply(model, "{\"recipe\": {}}", &wr, &e), ERR_INVALID);
    assert_string_equal(e.where, "overrides.recipe");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overrides_replan_the_model),
        cmocka_unit_test(test_mesh_chip_strategies_and_budget_reach_the_plan),
        cmocka_unit_test(test_bad_overrides_name_the_field),
        cmocka_unit_test(test_a_pattern_matching_nothing_is_named),
        cmocka_unit_test(test_memory_space_puts_tensors_in_host_memory),
        cmocka_unit_test(test_a_bad_memory_space_is_named),
        cmocka_unit_test(test_too_many_patterns_are_refused_first),
        cmocka_unit_test(test_the_new_model_is_held_to_the_limits),
        cmocka_unit_test(test_check_notes_the_options),
        cmocka_unit_test(test_recipe_overrides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
