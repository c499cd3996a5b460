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

#include "service/planopts.h"

static void test_opts_roundtrip(void **state)
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
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf), 0);
    assert_string_equal(back.chip, "v5e");
    assert_string_equal(back.strategies, "all");
    assert_string_equal(back.name, "n\"q");
    assert_true(back.capacity == 1ull << 40 && back.alignment == 512);
    assert_true(back.time_limit_s == 2.5);
    assert_int_equal(back.format, PLAN_FMT_AUTO);
    assert_int_equal(planopts_parse(j, &back, buf, 8), -1); /* strings do not fit */
    free(j);
    assert_int_equal(planopts_parse("{\"capacity\": -1}", &back, buf, sizeof buf), -1);
    assert_int_equal(planopts_parse("{\"chip\": 5}", &back, buf, sizeof buf), -1);
    assert_int_equal(planopts_parse("[]", &back, buf, sizeof buf), -1);
    assert_int_equal(planopts_parse("{}", &back, buf, sizeof buf), 0);
    assert_true(back.mem_fraction == 0);
    assert_int_equal(back.preallocate, PLAN_PREALLOC_DEFAULT);
}

/* The runtime allocator options: kept when set, omitted when default, typed on the way
 * back. */
static void test_runtime_opts(void **state)
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
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf), 0);
    assert_true(back.mem_fraction == 0.9);
    assert_int_equal(back.preallocate, PLAN_PREALLOC_OFF);
    free(j);
    o = (struct plan_opts){.preallocate = PLAN_PREALLOC_ON};
    j = planopts_json(&o);
    assert_string_equal(j, "{\"preallocate\":true}");
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf), 0);
    assert_int_equal(back.preallocate, PLAN_PREALLOC_ON);
    free(j);
    o = (struct plan_opts){0};
    j = planopts_json(&o);
    assert_string_equal(j, "{}");
    free(j);
    assert_int_equal(planopts_parse("{\"preallocate\": 1}", &back, buf, sizeof buf), -1);
    assert_int_equal(planopts_parse("{\"mem_fraction\": \"0.5\"}", &back, buf, sizeof buf), -1);
}

/* XLA's dumps ride in the document as strings; the format names every format (xla too). */
static void test_xla_attachments(void **state)
{
    static const char assign[] = "allocation 0: size 8:\n value: <0 \"p\" @0> (size=8,offset=0)\n";
    struct plan_opts o = {.format = PLAN_FMT_XLA_ASSIGNMENT,
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
    assert_int_equal(planopts_parse(j, &back, buf, strlen(j) + 1), 0);
    assert_int_equal(back.format, PLAN_FMT_XLA_ASSIGNMENT);
    assert_int_equal(back.xla_assignment_len, sizeof(assign) - 1);
    assert_memory_equal(back.xla_assignment, assign, sizeof(assign) - 1);
    assert_string_equal(back.xla_report, "Total bytes used: 8 (8B)\n");
    assert_int_equal(back.xla_report_len, 25);
    assert_int_equal(planopts_parse("{\"format\": \"auto\"}", &back, buf, 16), 0);
    assert_int_equal(back.format, PLAN_FMT_AUTO);
    assert_int_equal(planopts_parse("{\"format\": \"hlo9\"}", &back, buf, 16), -1);
    free(buf);
    free(j);
}

/* goal: stored only when it is fit (older rows read back as min), checked on the way back. */
static void test_goal_opt(void **state)
{
    struct plan_opts o = {.goal = PACK_GOAL_FIT}, back;
    char buf[64];
    char *j;

    (void)state;
    j = planopts_json(&o);
    assert_string_equal(j, "{\"goal\":\"fit\"}");
    assert_int_equal(planopts_parse(j, &back, buf, sizeof buf), 0);
    assert_int_equal(back.goal, PACK_GOAL_FIT);
    free(j);
    assert_int_equal(planopts_parse("{}", &back, buf, sizeof buf), 0);
    assert_int_equal(back.goal, PACK_GOAL_MIN);
    assert_int_equal(planopts_parse("{\"goal\":\"most\"}", &back, buf, sizeof buf), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_roundtrip),
        cmocka_unit_test(test_goal_opt),
        cmocka_unit_test(test_runtime_opts),
        cmocka_unit_test(test_xla_attachments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
