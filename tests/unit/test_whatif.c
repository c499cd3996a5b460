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

static void test_no_override_plans_the_model_as_is(void **state)
{
    struct whatif_result wr;
    json_object *r = whatif_plan("{}", &wr);

    (void)state;
    assert_int_equal(num(r, "summary", "peak_bytes"), 16384);
    assert_string_equal(wr.name, "remat (what-if)");
    assert_false(wr.chip_set);
    assert_int_equal(wr.matched, 0);
    json_object_put(r);
    free(wr.model);
}

/* Activations (h) and the glob "g" to bf16: 2048 bytes each (T(8,128)(2,1)); g's xla_shape
 * keeps its dims and drops its f32 layout. Peak 4096 + 2048 + 4096 + 2048 = 12288. */
static void test_dtype_override_to_bf16_halves_bytes(void **state)
{
    struct whatif_result wr;
    json_object *r = whatif_plan("{\"dtype\":{\"activation\":\"bf16\",\"g\":\"bf16\"},"
                                 "\"name\":\"half\"}",
                                 &wr);

    (void)state;
    assert_int_equal(num(r, "summary", "peak_bytes"), 12288);
    assert_int_equal(wr.matched, 2);
    assert_string_equal(wr.name, "half");
    assert_non_null(strstr(wr.model, "\"xla_shape\":\"bf16[8,128]\""));
    json_object_put(r);
    free(wr.model);
}

/* h rematerialised: live [0, 1) and, as h/remat, [3, 4). Step 2 holds x, y, g (12288);
 * step 3 x, g, h/remat (12288): peak 12288, one tensor more. */
static void test_remat_splits_a_lifetime_in_two(void **state)
{
    struct whatif_result wr;
    json_object *r = whatif_plan("{\"remat\":\"h\"}", &wr);

    (void)state;
    assert_int_equal(num(r, "summary", "peak_bytes"), 12288);
    assert_int_equal(num(r, "summary", "tensors"), 5);
    assert_int_equal(wr.matched, 1);
    assert_non_null(strstr(wr.model, "\"name\":\"h/remat\""));
    json_object_put(r);
    free(wr.model);
    /* a pattern that selects no activation changes nothing */
    r = whatif_plan("{\"remat\":[\"x\",\"nothing*\"]}", &wr);
    assert_int_equal(num(r, "summary", "peak_bytes"), 16384);
    assert_int_equal(wr.matched, 0);
    json_object_put(r);
    free(wr.model);
}

/* Mesh data=2 and x sharded on its rows (x is f32[4,128] per device), chip v6e, strategies
 * and a budget: each reaches the plan. */
static void test_mesh_chip_strategies_and_budget_reach_the_plan(void **state)
{
    struct whatif_result wr;
    json_object *r = whatif_plan("{\"mesh\":{\"data\":2},\"sharding\":{\"x\":[\"data\",null]},"
                                 "\"chip\":\"v6e\",\"strategies\":\"first-fit\","
                                 "\"budget\":\"16000\"}",
                                 &wr),
                *chip = NULL, *name = NULL;

    (void)state;
    assert_true(wr.chip_set && wr.strategies_set);
    assert_string_equal(wr.budget, "16000");
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
        {"{\"budget\":\"lots\"}", "budget"},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_override_plans_the_model_as_is),
        cmocka_unit_test(test_dtype_override_to_bf16_halves_bytes),
        cmocka_unit_test(test_remat_splits_a_lifetime_in_two),
        cmocka_unit_test(test_mesh_chip_strategies_and_budget_reach_the_plan),
        cmocka_unit_test(test_bad_overrides_name_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
