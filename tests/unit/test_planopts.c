/*
 * test_planopts.c - plan options to their stored JSON document and back (planopts.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

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
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
