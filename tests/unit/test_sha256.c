/*
 * test_sha256.c - SHA-256 against the FIPS 180-4 examples (sha256.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/sha256.h"

static void test_digest_matches_the_fips_examples(void **state)
{
    struct sha256 c;
    char hex[65];
    size_t i;

    (void)state;
    /* FIPS 180-4 examples (NIST CSRC "SHA256.pdf"). */
    sha256_init(&c);
    sha256_update(&c, "abc", 3);
    sha256_hex(&c, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_init(&c);
    sha256_update(&c, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56);
    sha256_hex(&c, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    sha256_init(&c);
    for (i = 0; i < 1000000; i += 1000) {
        char a[1000];
        memset(a, 'a', sizeof(a));
        sha256_update(&c, a, sizeof(a));
    }
    sha256_hex(&c, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

/* The one-call digest: the same bytes as the FIPS "abc" example. */
static void test_one_call_digest_is_the_same(void **state)
{
    static const unsigned char abc[SHA256_LEN] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                                  0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                                  0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                                  0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
    unsigned char d[SHA256_LEN];

    (void)state;
    sha256_of("abc", 3, d);
    assert_memory_equal(d, abc, SHA256_LEN);
}

static void test_constant_time_equal_compares_n_bytes(void **state)
{
    (void)state;
    assert_true(sha256_equal_ct("abcdef", "abcdef", 6));
    assert_false(sha256_equal_ct("abcdef", "abcdeF", 6)); /* last byte */
    assert_false(sha256_equal_ct("Xbcdef", "abcdef", 6)); /* first byte */
    assert_true(sha256_equal_ct("abcX", "abcY", 3));      /* only n bytes count */
    assert_true(sha256_equal_ct("", "", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_digest_matches_the_fips_examples),
        cmocka_unit_test(test_one_call_digest_is_the_same),
        cmocka_unit_test(test_constant_time_equal_compares_n_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
