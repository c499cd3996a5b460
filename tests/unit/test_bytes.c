/*
 * test_bytes.c - the one byte-count grammar (bytes.h): every unit spelling, exact decimals,
 * the refusal of fractions of a byte, overflow at 2^64, and errors that name the field.
 * Values worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "planner/bytes.h"

/* s as a byte count; asserts success. */
static uint64_t value(const char *s)
{
    struct err e;
    uint64_t out = 0;

    err_clear(&e);
    if (bytes_parse("--capacity", s, &out, &e) != ERR_OK)
        fail_msg("refused \"%s\": %s", s, e.msg);
    return out;
}

/* s refused with code, the message naming the field and quoting s. */
static void refused(const char *s, int code)
{
    struct err e;
    uint64_t out = 0;

    err_clear(&e);
    if (bytes_parse("--capacity", s, &out, &e) != code)
        fail_msg("\"%s\": expected code %d, got \"%s\" (%d)", s, code, e.msg, e.code);
    assert_string_equal(e.where, "--capacity");
    assert_non_null(strstr(e.msg, "--capacity"));
    assert_non_null(strstr(e.msg, s));
}

static void test_units_are_powers_of_1024_however_spelled(void **state)
{
    (void)state;
    assert_true(value("0") == 0);
    assert_true(value("12") == 12);
    assert_true(value("12B") == 12);
    assert_true(value("17179869184") == 17179869184ull);
    /* K, M, G, T are 2^10, 2^20, 2^30, 2^40 however they are spelled */
    assert_true(value("1K") == 1024);
    assert_true(value("1k") == 1024);
    assert_true(value("1Ki") == 1024);
    assert_true(value("1KB") == 1024);
    assert_true(value("1KiB") == 1024);
    assert_true(value("64M") == 67108864ull);
    assert_true(value("64m") == 67108864ull);
    assert_true(value("16GiB") == 17179869184ull);
    assert_true(value("16g") == 17179869184ull);
    assert_true(value("2T") == 2199023255552ull);
    assert_true(value("2tiB") == 2199023255552ull);
}

static void test_decimals_give_whole_bytes_up_to_2_64(void **state)
{
    (void)state;
    assert_true(value("1.5K") == 1536);
    assert_true(value(".5K") == 512);
    assert_true(value("15.75G") == 16911433728ull);  /* 15 x 2^30 + 3 x 2^28 */
    assert_true(value("12.125G") == 13019119616ull); /* 12 x 2^30 + 2^27 */
    assert_true(value("0.015625K") == 16);           /* six decimals, 2^-6 of 2^10 */
    assert_true(value("3.0") == 3);
    assert_true(value("1.000000") == 1);
    /* the largest count: 2^64-1, and half a T below 2^64 */
    assert_true(value("18446744073709551615") == UINT64_MAX);
    assert_true(value("16777215.5T") == 16777215ull * (1ull << 40) + (1ull << 39));
}

static void test_malformed_and_overflowing_counts_are_rejected(void **state)
{
    static const char *invalid[] = {"",     "K",          "B",        "abc",  "-1",    "+1",
                                    " 1",   "1 ",         "1 K",      "1.",   ".",     "1.5.",
                                    "1e9",  "14X",        "14Kb",     "14kb", "14KIB", "14KBB",
                                    "14BK", "14iB",       "1,5K",     "0x10", "1.5",   "0.3K",
                                    "1.1K", "0.1234567K", "0.000001T" /* 1099511.627776 bytes */};
    struct err e;
    uint64_t out;

    (void)state;
    for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++)
        refused(invalid[i], ERR_INVALID);
    refused("18446744073709551616", ERR_OVERFLOW);
    refused("99999999999999999999G", ERR_OVERFLOW);
    refused("16777216T", ERR_OVERFLOW); /* exactly 2^64 */
    refused("16777216TiB", ERR_OVERFLOW);
    refused("17179869184G", ERR_OVERFLOW);
    /* NULL is refused with the field named, not dereferenced */
    err_clear(&e);
    assert_int_equal(bytes_parse("--capacity", NULL, &out, &e), ERR_INVALID);
    assert_string_equal(e.where, "--capacity");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_are_powers_of_1024_however_spelled),
        cmocka_unit_test(test_decimals_give_whole_bytes_up_to_2_64),
        cmocka_unit_test(test_malformed_and_overflowing_counts_are_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
