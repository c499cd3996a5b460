/*
 * test_ids.c - base64url against RFC 4648's test vectors, and the shape of ids and tokens.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "service/ids.h"

/* RFC 4648 section 10, without padding (base64url only differs in '+' '/'). */
static void test_encoding_matches_the_rfc4648_vectors(void **state)
{
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const out[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    (void)state;
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        char enc[16];
        unsigned char dec[16];
        size_t n = ids_b64url_encode((const unsigned char *)in[i], strlen(in[i]), enc);
        assert_string_equal(enc, out[i]);
        assert_int_equal(n, strlen(out[i]));
        long m = ids_b64url_decode(enc, n, dec, sizeof dec);
        assert_int_equal(m, (long)strlen(in[i]));
        assert_memory_equal(dec, in[i], (size_t)m);
    }
}

/* 0xfb 0xff is "+/8" in standard base64 and "-_8" in the URL-safe alphabet. */
static void test_encoding_uses_the_url_safe_alphabet(void **state)
{
    const unsigned char raw[] = {0xfb, 0xff};
    char enc[8];
    unsigned char dec[4];
    (void)state;
    ids_b64url_encode(raw, sizeof raw, enc);
    assert_string_equal(enc, "-_8");
    assert_int_equal(ids_b64url_decode("-_8", 3, dec, sizeof dec), 2);
    assert_memory_equal(dec, raw, 2);
}

static void test_decode_rejects(void **state)
{
    unsigned char dec[8];
    (void)state;
    assert_int_equal(ids_b64url_decode("Zm9v+A", 6, dec, sizeof dec), -1); /* '+' */
    assert_int_equal(ids_b64url_decode("Zm9v=", 5, dec, sizeof dec), -1);  /* padding */
    assert_int_equal(ids_b64url_decode("Z", 1, dec, sizeof dec), -1);      /* length 1 mod 4 */
    assert_int_equal(ids_b64url_decode("Zh", 2, dec, sizeof dec), -1);     /* non-zero tail bits */
    assert_int_equal(ids_b64url_decode("Zm9vYmFy", 8, dec, 5), -1);        /* buffer too small */
}

static void test_ids_and_tokens_are_random_and_validated(void **state)
{
    char a[IDS_ID_LEN + 1], b[IDS_ID_LEN + 1], t[IDS_TOKEN_LEN + 1];
    unsigned char raw[40];
    (void)state;
    assert_int_equal(ids_new_id(a), 0);
    assert_int_equal(ids_new_id(b), 0);
    assert_int_equal(strlen(a), 22);
    assert_true(ids_valid_id(a));
    assert_string_not_equal(a, b); /* 2^-128 chance of a false failure */
    assert_int_equal(ids_b64url_decode(a, strlen(a), raw, sizeof raw), 16);
    assert_int_equal(ids_new_token(t), 0);
    assert_int_equal(strlen(t), 43);
    assert_int_equal(ids_b64url_decode(t, strlen(t), raw, sizeof raw), 32);
    assert_false(ids_valid_id(t));
    assert_false(ids_valid_id("short"));
    assert_false(ids_valid_id("AAAAAAAAAAAAAAAAAAAAA/"));
    assert_true(ids_valid_id("AAAAAAAAAAAAAAAAAAAAA_"));
}

static void test_request_ids_are_random_and_url_safe(void **state)
{
    char a[IDS_REQUEST_LEN + 1], b[IDS_REQUEST_LEN + 1];

    (void)state;
    assert_int_equal(ids_new_request_id(a), 0);
    assert_int_equal(ids_new_request_id(b), 0);
    assert_int_equal(strlen(a), IDS_REQUEST_LEN);
    assert_int_equal(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"),
                     IDS_REQUEST_LEN);
    assert_string_not_equal(a, b); /* 96 random bits: a collision here is 2^-96 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encoding_matches_the_rfc4648_vectors),
        cmocka_unit_test(test_encoding_uses_the_url_safe_alphabet),
        cmocka_unit_test(test_decode_rejects),
        cmocka_unit_test(test_ids_and_tokens_are_random_and_validated),
        cmocka_unit_test(test_request_ids_are_random_and_url_safe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
