/*
 * test_body.c - bounded request bodies, and the safetensors header-only mode (body.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/body.h"

static void test_plain_body_refuses_bytes_past_its_limit(void **state)
{
    struct body b;

    (void)state;
    body_init(&b, 10, false);
    assert_int_equal(body_append(&b, "hello", 5), 0);
    assert_int_equal(body_append(&b, "world", 5), 0);
    assert_int_equal(b.len, 10);
    assert_string_equal(b.p, "helloworld");
    assert_int_equal(body_append(&b, "!", 1), -1);
    assert_true(b.over);
    body_free(&b);
}

static void test_safetensors_body_keeps_only_its_bounded_header(void **state)
{
    static const char hdr[7] = {'{', '"', 'a', '"', ':', '1', '}'};
    char data[8 + 7 + 100];
    struct body b;
    size_t i;

    (void)state;
    memset(data, 0xAB, sizeof(data));
    data[0] = 7;
    memset(data + 1, 0, 7);
    memcpy(data + 8, hdr, 7);
    /* Byte by byte: only the header is kept, the tensor data is counted and dropped. */
    body_init(&b, 64, true);
    for (i = 0; i < sizeof(data); i++)
        assert_int_equal(body_append(&b, data + i, 1), 0);
    assert_true(body_header_complete(&b));
    assert_int_equal(b.len, 15);
    assert_true(b.seen == sizeof(data));
    assert_memory_equal(b.p + 8, hdr, 7);
    body_free(&b);
    /* A header longer than the limit is refused as soon as the length arrives. */
    body_init(&b, 64, true);
    data[0] = 100;
    assert_int_equal(body_append(&b, data, 8), -1);
    assert_true(b.over);
    body_free(&b);
    /* A huge declared length cannot overflow the check. */
    body_init(&b, 64, true);
    memset(data, 0xFF, 8);
    assert_int_equal(body_append(&b, data, 8), -1);
    body_free(&b);
    /* Truncated: fewer bytes than declared. */
    body_init(&b, 64, true);
    data[0] = 7;
    memset(data + 1, 0, 7);
    assert_int_equal(body_append(&b, data, 10), 0);
    assert_false(body_header_complete(&b));
    body_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_body_refuses_bytes_past_its_limit),
        cmocka_unit_test(test_safetensors_body_keeps_only_its_bounded_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
