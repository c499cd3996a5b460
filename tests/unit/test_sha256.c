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
        cmocka_unit_test(test_constant_time_equal_compares_n_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
