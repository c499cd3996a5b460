/*
 * test_apikey.c - API key text, hashing, the constant-time comparison and names (apikey.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/apikey.h"

static void test_new_key_carries_its_prefix_and_parses_back(void **state)
{
    char key[APIKEY_LEN + 1], prefix[APIKEY_PREFIX_LEN + 1], got[APIKEY_PREFIX_LEN + 1];
    char key2[APIKEY_LEN + 1], prefix2[APIKEY_PREFIX_LEN + 1];

    (void)state;
    assert_int_equal(apikey_new(key, prefix), 0);
    assert_int_equal((int)strlen(key), 56);
    assert_int_equal((int)strlen(prefix), 8);
    assert_memory_equal(key, "tpk_", 4);
    assert_memory_equal(key + 4, prefix, 8);
    assert_int_equal(key[12], '_');
    assert_true(apikey_parse(key, got));
    assert_string_equal(got, prefix);
    /* 48 + 256 random bits: two keys never share a prefix or a secret. */
    assert_int_equal(apikey_new(key2, prefix2), 0);
    assert_string_not_equal(prefix, prefix2);
    assert_string_not_equal(key + 13, key2 + 13);
    /* Not keys: a manage token (43 characters), a wrong tag, length or alphabet. */
    assert_false(apikey_parse("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", got));
    assert_false(apikey_parse(NULL, got));
    assert_false(apikey_parse("", got));
    key2[0] = 'x';
    assert_false(apikey_parse(key2, got));
    memcpy(key2, key, sizeof(key2));
    key2[12] = 'A';
    assert_false(apikey_parse(key2, got));
    memcpy(key2, key, sizeof(key2));
    key2[30] = '.';
    assert_false(apikey_parse(key2, got));
    memcpy(key2, key, sizeof(key2));
    key2[55] = '\0';
    assert_false(apikey_parse(key2, got));
}

static void test_hash_is_sha256_and_equal_compares_every_byte(void **state)
{
    /* SHA-256 of "abc" (FIPS 180-4, appendix B.1). */
    static const unsigned char abc[APIKEY_HASH_LEN] = {
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
        0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
        0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    unsigned char h[APIKEY_HASH_LEN], g[APIKEY_HASH_LEN];

    (void)state;
    apikey_hash("abc", h);
    assert_memory_equal(h, abc, APIKEY_HASH_LEN);
    assert_true(apikey_equal(h, abc));
    /* A difference in the first, a middle or the last byte is found. */
    for (size_t i = 0; i < APIKEY_HASH_LEN; i += 15) {
        memcpy(g, h, sizeof(g));
        g[i] ^= 0x80;
        assert_false(apikey_equal(g, h));
    }
    memcpy(g, h, sizeof(g));
    g[APIKEY_HASH_LEN - 1] ^= 1;
    assert_false(apikey_equal(h, g));
}

static void test_key_names_are_short_safe_words(void **state)
{
    char long_name[APIKEY_NAME_MAX + 2];

    (void)state;
    assert_true(apikey_valid_name("ci"));
    assert_true(apikey_valid_name("team-a.nightly_2"));
    assert_false(apikey_valid_name(""));
    assert_false(apikey_valid_name("bad name"));
    assert_false(apikey_valid_name("quote\""));
    assert_false(apikey_valid_name("new\nline"));
    memset(long_name, 'a', sizeof(long_name));
    long_name[APIKEY_NAME_MAX] = '\0';
    assert_true(apikey_valid_name(long_name));
    long_name[APIKEY_NAME_MAX] = 'a';
    long_name[APIKEY_NAME_MAX + 1] = '\0';
    assert_false(apikey_valid_name(long_name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_key_carries_its_prefix_and_parses_back),
        cmocka_unit_test(test_hash_is_sha256_and_equal_compares_every_byte),
        cmocka_unit_test(test_key_names_are_short_safe_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
