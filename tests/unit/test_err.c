/*
 * test_err.c - error reporting: set, prefix, truncation, names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "planner/err.h"

static void test_set_fills_code_where_and_message(void **state)
{
    struct err e;

    (void)state;
    assert_int_equal(err_set(&e, ERR_INVALID, "shape", "bad %s at offset %d", "dim", 4),
                     ERR_INVALID);
    assert_int_equal(e.code, ERR_INVALID);
    assert_string_equal(e.where, "shape");
    assert_string_equal(e.msg, "bad dim at offset 4");
    err_clear(&e);
    assert_int_equal(e.code, ERR_OK);
    assert_string_equal(e.where, "");
    assert_string_equal(e.msg, "");
    err_clear(NULL);
    /* a NULL err still returns the code */
    assert_int_equal(err_set(NULL, ERR_OVERFLOW, NULL, "x"), ERR_OVERFLOW);
    assert_int_equal(err_set(&e, ERR_LIMIT, NULL, "y"), ERR_LIMIT);
    assert_string_equal(e.where, "");
}

static void test_prefix_joins_location_and_message(void **state)
{
    struct err e;

    (void)state;
    err_set(&e, ERR_INVALID, "shape", "negative dimension at offset 4");
    assert_int_equal(err_prefix(&e, "tensors[3]", "tensors[3] \"w\": "), ERR_INVALID);
    assert_string_equal(e.where, "tensors[3].shape");
    assert_string_equal(e.msg, "tensors[3] \"w\": negative dimension at offset 4");
    err_set(&e, ERR_INVALID, "[2]", "m");
    err_prefix(&e, "dims", NULL);
    assert_string_equal(e.where, "dims[2]");
    assert_string_equal(e.msg, "m");
    err_set(&e, ERR_INVALID, "", "m");
    err_prefix(&e, "header", "");
    assert_string_equal(e.where, "header");
    assert_int_equal(err_prefix(NULL, "a", "b"), ERR_INTERNAL);
}

static void test_long_text_is_truncated_to_the_buffers(void **state)
{
    struct err e;
    char longs[2 * ERR_MSG_MAX];

    (void)state;
    memset(longs, 'x', sizeof(longs) - 1);
    longs[sizeof(longs) - 1] = '\0';
    err_set(&e, ERR_INVALID, longs, "%s", longs);
    assert_int_equal(strlen(e.where), ERR_WHERE_MAX - 1);
    assert_int_equal(strlen(e.msg), ERR_MSG_MAX - 1);
    err_prefix(&e, "p", "prefix: ");
    assert_int_equal(strlen(e.msg), ERR_MSG_MAX - 1);
    assert_memory_equal(e.msg, "prefix: ", 8);
    assert_int_equal(strlen(e.where), ERR_WHERE_MAX - 1);
}

static void test_code_names_are_stable(void **state)
{
    (void)state;
    assert_string_equal(err_code_name(ERR_OK), "ok");
    assert_string_equal(err_code_name(ERR_INVALID), "invalid");
    assert_string_equal(err_code_name(ERR_LIMIT), "limit");
    assert_string_equal(err_code_name(ERR_OVERFLOW), "overflow");
    assert_string_equal(err_code_name(ERR_NOMEM), "nomem");
    assert_string_equal(err_code_name(ERR_NOTFOUND), "notfound");
    assert_string_equal(err_code_name(ERR_INFEASIBLE), "infeasible");
    assert_string_equal(err_code_name(ERR_TIMEOUT), "timeout");
    assert_string_equal(err_code_name(ERR_INTERNAL), "internal");
    assert_string_equal(err_code_name(-99), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_fills_code_where_and_message),
        cmocka_unit_test(test_prefix_joins_location_and_message),
        cmocka_unit_test(test_long_text_is_truncated_to_the_buffers),
        cmocka_unit_test(test_code_names_are_stable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
