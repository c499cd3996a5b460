/*
 * test_budget.c - the budget option (budget.h): byte counts with K/M/G/T as powers of 1024
 * (with or without "iB"/"B"), fractions of the capacity taken in exact decimal, and the
 * errors for everything else. Values worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "planner/budget.h"

/* The budget text s resolved against capacity; asserts success. */
static uint64_t resolve(const char *s, uint64_t capacity)
{
    struct budget b;
    struct err e;
    uint64_t out = 0;

    err_clear(&e);
    assert_int_equal(budget_parse("budget", s, &b, &e), ERR_OK);
    assert_int_equal(budget_bytes(&b, capacity, &out, &e), ERR_OK);
    return out;
}

static void test_byte_budgets_read_the_byte_grammar(void **state)
{
    (void)state;
    assert_true(resolve("14000000000", 0) == 14000000000ull);
    assert_true(resolve("14G", 0) == 14ull << 30);
    assert_true(resolve("14GiB", 0) == 14ull << 30);
    assert_true(resolve("14GB", 0) == 14ull << 30);
    assert_true(resolve("14Gi", 0) == 14ull << 30); /* bytes.h's grammar: i and B optional */
    assert_true(resolve("14g", 0) == 14ull << 30);
    assert_true(resolve("1B", 0) == 1); /* a unit makes it bytes, even 1 */
    assert_true(resolve("512K", 0) == 512ull << 10);
    assert_true(resolve("3M", 0) == 3ull << 20);
    assert_true(resolve("2T", 0) == 2ull << 40);
    assert_true(resolve("12.125G", 0) == 13019119616ull); /* 12 x 2^30 + 2^27 */
    assert_true(resolve("1.5K", 0) == 1536);
    assert_true(resolve("0.5K", 0) == 512); /* a suffix makes it bytes */
}

static void test_fraction_budgets_take_a_share_of_capacity(void **state)
{
    (void)state;
    /* v4 usable HBM 33017561088: 0.9 of it is 29715804979.2 -> 29715804979 */
    assert_true(resolve("0.9", 33017561088ull) == 29715804979ull);
    assert_true(resolve(".5", 33017561088ull) == 16508780544ull);
    assert_true(resolve("1.0", 33017561088ull) == 33017561088ull);
    assert_true(resolve("100%", 33017561088ull) == 33017561088ull);
    assert_true(resolve("90%", 33017561088ull) == 29715804979ull); /* as 0.9 */
    assert_true(resolve("12.5%", 1000) == 125);
    assert_true(resolve("0.000001%", 100000000) == 1);
    assert_true(resolve("0.394", 33017561088ull) == 13008919068ull);
    assert_true(resolve("0.000001", 1000000) == 1);
    /* no overflow at the top of the range: floor((2^64-1) x 0.999999) */
    assert_true(resolve("0.999999", UINT64_MAX) ==
                UINT64_MAX / 1000000 * 999999 + UINT64_MAX % 1000000 * 999999 / 1000000);
}

static void test_malformed_budgets_are_rejected(void **state)
{
    static const char *bad[] = {
        "",          "G",  "abc",    "0",      "0.0",       "1.5",  "2.",   "14X",
        "0.3K",      "-1", "14 G",   "0.5.",   "0.1234567", "1e9",  "0K",   "99999999999999999999",
        "16777216T", "1",  "0%",     "100.5%", "%",         "90 %", "90%%", "5K%",
        "2",         "16", "1048575"};
    struct budget b;
    struct err e;
    uint64_t out;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err_clear(&e);
        if (budget_parse("budget", bad[i], &b, &e) == ERR_OK)
            fail_msg("accepted \"%s\"", bad[i]);
        assert_string_equal(e.where, "budget");
        assert_non_null(strstr(e.msg, "budget"));
    }
    assert_int_not_equal(budget_parse("budget", NULL, &b, &e), ERR_OK);
    /* a fraction needs a capacity; bytes do not */
    assert_int_equal(budget_parse("budget", "0.9", &b, &e), ERR_OK);
    assert_int_equal(budget_bytes(&b, 0, &out, &e), ERR_INVALID);
    assert_string_equal(e.where, "budget");
    assert_int_equal(budget_parse("budget", "2B", &b, &e), ERR_OK);
    assert_int_equal(budget_bytes(&b, 0, &out, &e), ERR_OK);
    assert_true(out == 2);
    assert_int_equal(budget_parse("budget", "1048576", &b, &e), ERR_OK); /* 1 MiB: bytes */
    assert_int_equal(budget_bytes(&b, 0, &out, &e), ERR_OK);
    assert_true(out == 1048576);
}

/* A fraction only when written as one: "1" is ambiguous, a small unit-less count a slip. */
static void test_ambiguous_budgets_are_refused_saying_how_to_write_them(void **state)
{
    struct budget b;
    struct err e;

    (void)state;
    err_clear(&e);
    assert_int_equal(budget_parse("--budget", "1", &b, &e), ERR_INVALID);
    assert_string_equal(e.msg, "--budget: \"1\" is ambiguous: write 100% (or 1.0) for all of the "
                               "capacity, or 1B for one byte");
    assert_int_equal(budget_parse("--budget", "900", &b, &e), ERR_INVALID);
    assert_string_equal(e.msg,
                        "--budget: \"900\" has no unit, so it is 900 bytes, below 1 MiB: "
                        "likely a slip (write 900B if you mean bytes, or give a unit: 16G, 512M)");
    assert_int_equal(budget_parse("--budget", "1B", &b, &e), ERR_OK);
    assert_false(b.fraction);
    assert_true(b.bytes == 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byte_budgets_read_the_byte_grammar),
        cmocka_unit_test(test_fraction_budgets_take_a_share_of_capacity),
        cmocka_unit_test(test_malformed_budgets_are_rejected),
        cmocka_unit_test(test_ambiguous_budgets_are_refused_saying_how_to_write_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
