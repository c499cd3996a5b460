/*
 * test_planopts.c - plan options to their stored JSON document and back (planopts.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/plan_options.h"
#include "service/planopts.h"

static void test_opts_round_trip_through_json(void **state)
{
    struct plan_opts o = {.chip = "v5e",
                          .strategies = "all",
                          .capacity = 1ull << 40,
                          .time_limit_s = 2.5,
                          .alignment = 512,
                          .name = "n\"q"};
    struct plan_opts back;
    char buf[256];
    (void)state;
    char *j = planopts_json(&o);
    assert_non_null(j);
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf, NULL), 0);
    assert_string_equal(back.chip, "v5e");
    assert_string_equal(back.strategies, "all");
    assert_string_equal(back.name, "n\"q");
    assert_true(back.capacity == 1ull << 40 && back.alignment == 512);
    assert_true(back.time_limit_s == 2.5);
    assert_null(back.format);
    assert_int_equal(planopts_parse(j, &back, buf, 8, NULL), -1); /* strings do not fit */
    free(j);
    assert_int_equal(planopts_parse("{\"capacity\": -1}", &back, buf, sizeof buf, NULL), -1);
    assert_int_equal(planopts_parse("{\"chip\": 5}", &back, buf, sizeof buf, NULL), -1);
    assert_int_equal(planopts_parse("[]", &back, buf, sizeof buf, NULL), -1);
    assert_int_equal(planopts_parse("{}", &back, buf, sizeof buf, NULL), 0);
    assert_true(back.mem_fraction == 0);
    assert_int_equal(back.preallocate, PLAN_PREALLOC_DEFAULT);
}

/* The runtime allocator options: kept when set, omitted when default, typed on the way
 * back. */
static void test_runtime_opts_are_kept_only_when_set(void **state)
{
    struct plan_opts o = {.mem_fraction = 0.9, .preallocate = PLAN_PREALLOC_OFF};
    struct plan_opts back;
    char buf[64];
    char *j;

    (void)state;
    j = planopts_json(&o);
    assert_non_null(j);
    assert_non_null(strstr(j, "\"mem_fraction\":0.9")); /* json-c prints 17 digits */
    assert_non_null(strstr(j, "\"preallocate\":false"));
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf, NULL), 0);
    assert_true(back.mem_fraction == 0.9);
    assert_int_equal(back.preallocate, PLAN_PREALLOC_OFF);
    free(j);
    o = (struct plan_opts){.preallocate = PLAN_PREALLOC_ON};
    j = planopts_json(&o);
    assert_string_equal(j, "{\"preallocate\":true}");
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf, NULL), 0);
    assert_int_equal(back.preallocate, PLAN_PREALLOC_ON);
    free(j);
    o = (struct plan_opts){0};
    j = planopts_json(&o);
    assert_string_equal(j, "{}");
    free(j);
    assert_int_equal(planopts_parse("{\"preallocate\": 1}", &back, buf, sizeof buf, NULL), -1);
    /* a string in the parameter's grammar reads as the parameter would */
    assert_int_equal(planopts_parse("{\"mem_fraction\": \".5\"}", &back, buf, sizeof buf, NULL), 0);
    assert_true(back.mem_fraction == 0.5);
}

/* XLA's dumps ride in the document as strings; the format names every format (xla too). */
static void test_xla_dumps_ride_as_strings(void **state)
{
    static const char assign[] = "allocation 0: size 8:\n value: <0 \"p\" @0> (size=8,offset=0)\n";
    struct plan_opts o = {.format = "xla-buffer-assignment",
                          .xla_assignment = assign,
                          .xla_assignment_len = sizeof(assign) - 1,
                          .xla_report = "Total bytes used: 8 (8B)\n",
                          .xla_report_len = 25};
    struct plan_opts back;
    char *j = planopts_json(&o);
    char *buf;

    (void)state;
    assert_non_null(j);
    buf = malloc(strlen(j) + 1); /* the contract: the document's length always fits */
    assert_non_null(buf);
    assert_int_equal(planopts_parse(j, &back, buf, strlen(j) + 1, NULL), 0);
    assert_string_equal(back.format, "xla-buffer-assignment");
    assert_int_equal(back.xla_assignment_len, sizeof(assign) - 1);
    assert_memory_equal(back.xla_assignment, assign, sizeof(assign) - 1);
    assert_string_equal(back.xla_report, "Total bytes used: 8 (8B)\n");
    assert_int_equal(back.xla_report_len, 25);
    assert_int_equal(planopts_parse("{\"format\": \"auto\"}", &back, buf, 16, NULL), 0);
    assert_null(back.format);
    /* an alias is read as its format's name (import.h): what the planner reports back */
    assert_int_equal(planopts_parse("{\"format\": \"mlir\"}", &back, buf, 16, NULL), 0);
    assert_string_equal(back.format, "stablehlo");
    assert_int_equal(planopts_parse("{\"format\": \"hlo9\"}", &back, buf, 16, NULL), -1);
    free(buf);
    free(j);
}

/* goal: stored only when it is fit (older rows read back as min), checked on the way back. */
static void test_goal_is_stored_only_when_fit(void **state)
{
    struct plan_opts o = {.goal = PACK_GOAL_FIT}, back;
    char buf[64];
    char *j;

    (void)state;
    j = planopts_json(&o);
    assert_string_equal(j, "{\"goal\":\"fit\"}");
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf, NULL), 0);
    assert_int_equal(back.goal, PACK_GOAL_FIT);
    free(j);
    assert_int_equal(planopts_parse("{}", &back, buf, sizeof buf, NULL), 0);
    assert_int_equal(back.goal, PACK_GOAL_MIN);
    assert_int_equal(planopts_parse("{\"goal\":\"most\"}", &back, buf, sizeof buf, NULL), -1);
}

/* The stored text, byte for byte as it was written before the options' table (an
 * Idempotency-Key replay compares it): every stored option, in this order. */
static void test_stored_text_is_byte_for_byte_as_before_the_table(void **state)
{
    struct plan_opts all = {.format = "minimalloc-csv",
                            .chip = "v5e",
                            .strategies = "all",
                            .capacity = 1ull << 40,
                            .time_limit_s = 2.5,
                            .alignment = 512,
                            .name = "n\"q",
                            .budget = "0.9",
                            .mem_fraction = 0.9,
                            .xla_assignment = "A\nB",
                            .xla_assignment_len = 3,
                            .xla_report = "R",
                            .xla_report_len = 1,
                            .preallocate = PLAN_PREALLOC_OFF,
                            .goal = PACK_GOAL_FIT,
                            .threads = 4}; /* not stored */
    struct plan_opts some = {
        .time_limit_s = 0.1, .mem_fraction = 0.75, .preallocate = PLAN_PREALLOC_ON};
    char *j;

    (void)state;
    j = planopts_json(&all);
    assert_string_equal(
        j, "{\"format\":\"minimalloc-csv\",\"chip\":\"v5e\",\"strategies\":\"all\","
           "\"capacity\":1099511627776,\"time_limit_s\":2.5,\"alignment\":512,"
           "\"name\":\"n\\\"q\",\"budget\":\"0.9\",\"mem_fraction\":0.90000000000000002,"
           "\"xla_assignment\":\"A\\nB\",\"xla_report\":\"R\",\"preallocate\":false,"
           "\"goal\":\"fit\"}");
    free(j);
    j = planopts_json(&some);
    assert_string_equal(j, "{\"time_limit_s\":0.10000000000000001,\"mem_fraction\":0.75,"
                           "\"preallocate\":true}");
    free(j);
}

/* A document is read through the same table as the API's parameters: an unknown key or a
 * value out of range is refused, and says which. */
static void test_unknown_or_out_of_range_options_are_refused_by_name(void **state)
{
    struct plan_opts back;
    char buf[64];
    struct err e;

    (void)state;
    err_clear(&e);
    assert_int_equal(planopts_parse("{\"threads\": 4}", &back, buf, sizeof buf, &e), -1);
    assert_string_equal(e.msg,
                        "options: unknown field \"threads\" (known: format, chip, strategies, "
                        "capacity, time_limit_s, alignment, name, budget, runtime, mem_fraction, "
                        "xla_assignment, xla_report, preallocate, goal, reading, order, bind)");
    assert_int_equal(planopts_parse("{\"time_limit\": 4}", &back, buf, sizeof buf, &e), -1);
    assert_string_equal(e.where, "options"); /* stored as time_limit_s */
    assert_int_equal(planopts_parse("{\"time_limit_s\": 3601}", &back, buf, sizeof buf, &e), -1);
    assert_string_equal(e.msg,
                        "options.time_limit_s: must be above 0 and at most 3600 s, got \"3601\"");
    assert_int_equal(planopts_parse("{\"alignment\": 96}", &back, buf, sizeof buf, &e), -1);
    assert_string_equal(
        e.msg, "options.alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"96\"");
    assert_int_equal(planopts_parse("{\"chip\": \"v9\"}", &back, buf, sizeof buf, &e), -1);
    assert_int_equal(e.code, ERR_NOTFOUND);
    assert_int_equal(planopts_parse("{\"capacity\": \"16GiB\"}", &back, buf, sizeof buf, &e), 0);
    assert_true(back.capacity == 16ull << 30);
    assert_int_equal(planopts_parse("{", &back, buf, sizeof buf, &e), -1);
    assert_string_equal(e.msg, "options: not JSON");
    assert_int_equal(planopts_parse("[]", &back, buf, sizeof buf, &e), -1);
    assert_string_equal(e.msg, "options: must be an object, got an array");
}

/* static/openapi.json documents exactly the parameters POST /api/v1/plans takes: the
 * table's API options and retain (run from the root). */
static void test_openapi_documents_exactly_the_taken_parameters(void **state)
{
    json_object *doc = json_object_from_file("static/openapi.json"), *v = NULL;
    size_t documented = 0, taken = 0;

    (void)state;
    assert_non_null(doc);
    assert_true(json_object_object_get_ex(doc, "paths", &v) &&
                json_object_object_get_ex(v, "/api/v1/plans", &v) &&
                json_object_object_get_ex(v, "post", &v) &&
                json_object_object_get_ex(v, "parameters", &v));
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *name = NULL, *in = NULL, *p = json_object_array_get_idx(v, i);
        if (!json_object_object_get_ex(p, "in", &in) ||
            strcmp(json_object_get_string(in), "query") != 0 ||
            !json_object_object_get_ex(p, "name", &name) ||
            strcmp(json_object_get_string(name), "retain") == 0)
            continue;
        if (plan_opt_find(PLAN_OPT_API, json_object_get_string(name)) == NULL)
            fail_msg("openapi.json documents ?%s=, which is no plan option of the API",
                     json_object_get_string(name));
        documented++;
    }
    for (size_t i = 0; i < plan_opt_count(); i++)
        taken += (plan_opt_at(i)->surfaces & PLAN_OPT_API) != 0;
    assert_int_equal(documented, taken); /* none taken but undocumented */
    json_object_put(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_round_trip_through_json),
        cmocka_unit_test(test_goal_is_stored_only_when_fit),
        cmocka_unit_test(test_runtime_opts_are_kept_only_when_set),
        cmocka_unit_test(test_xla_dumps_ride_as_strings),
        cmocka_unit_test(test_stored_text_is_byte_for_byte_as_before_the_table),
        cmocka_unit_test(test_unknown_or_out_of_range_options_are_refused_by_name),
        cmocka_unit_test(test_openapi_documents_exactly_the_taken_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
