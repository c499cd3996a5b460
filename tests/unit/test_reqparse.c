/*
 * test_reqparse.c - the pure request-header and parameter parsers: Prefer, Content-Type, ETag,
 * Authorization, numbers and URL encoding (reqparse.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/reqparse.h"

static void test_prefer_wait_is_read_and_capped(void **state)
{
    (void)state;
    assert_int_equal(reqparse_prefer_wait("wait=10", 60), 10);
    assert_int_equal(reqparse_prefer_wait("respond-async, wait=5", 60), 5);
    assert_int_equal(reqparse_prefer_wait("wait = 7 ; x", 60), 7);
    assert_int_equal(reqparse_prefer_wait("WAIT=\"3\"", 60), 3);
    assert_int_equal(reqparse_prefer_wait("wait=600", 60), 60);
    assert_int_equal(reqparse_prefer_wait("wait=99999999999999999999", 60), 60);
    assert_int_equal(reqparse_prefer_wait("wait=", 60), -1);
    assert_int_equal(reqparse_prefer_wait("wait=abc", 60), -1);
    assert_int_equal(reqparse_prefer_wait("waiting=3", 60), -1);
    assert_int_equal(reqparse_prefer_wait("return=minimal", 60), -1);
    assert_int_equal(reqparse_prefer_wait(NULL, 60), -1);
}

static void test_media_types_select_the_body_kind(void **state)
{
    (void)state;
    assert_int_equal(reqparse_media_type("application/json"), BODY_JSON);
    assert_int_equal(reqparse_media_type("Application/JSON; charset=utf-8"), BODY_JSON);
    assert_int_equal(reqparse_media_type("application/vnd.tpuplan+json"), BODY_JSON);
    assert_int_equal(reqparse_media_type("application/octet-stream"), BODY_SAFETENSORS);
    assert_int_equal(reqparse_media_type("text/csv;header=present"), BODY_CSV);
    assert_int_equal(reqparse_media_type("multipart/form-data; boundary=x"), BODY_MULTIPART);
    assert_int_equal(reqparse_media_type("text/plain; charset=utf-8"), BODY_TEXT);
    assert_int_equal(reqparse_media_type("Text/Plain"), BODY_TEXT);
    assert_int_equal(reqparse_media_type("text/html"), BODY_UNSUPPORTED);
    assert_int_equal(reqparse_media_type("application/jsonx"), BODY_UNSUPPORTED);
    assert_int_equal(reqparse_media_type(""), BODY_NONE);
    assert_int_equal(reqparse_media_type(NULL), BODY_NONE);
}

static void test_etag_bearer_and_numbers_are_parsed_strictly(void **state)
{
    char buf[64];
    uint64_t v;

    (void)state;
    assert_true(reqparse_etag_match("\"a-1\"", "\"a-1\""));
    assert_true(reqparse_etag_match("\"x\", \"a-1\"", "\"a-1\""));
    assert_true(reqparse_etag_match("W/\"a-1\"", "\"a-1\""));
    assert_true(reqparse_etag_match("*", "\"a-1\""));
    assert_false(reqparse_etag_match("\"a-12\"", "\"a-1\""));
    assert_false(reqparse_etag_match("\"a-2\"", "\"a-1\""));
    assert_false(reqparse_etag_match(NULL, "\"a-1\""));
    assert_string_equal(reqparse_bearer("Bearer abc"), "abc");
    assert_string_equal(reqparse_bearer("bearer   abc"), "abc");
    assert_null(reqparse_bearer("Basic abc"));
    assert_null(reqparse_bearer("Bearer "));
    assert_null(reqparse_bearer("Bearerabc"));
    assert_int_equal(reqparse_urlencode("a b/c&d", buf, sizeof(buf)), 13);
    assert_string_equal(buf, "a%20b%2Fc%26d");
    assert_int_equal(reqparse_urlencode("abcdef", buf, 4), -1);
    assert_int_equal(reqparse_u64("18446744073709551615", &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(reqparse_u64("18446744073709551616", &v), -1);
    assert_int_equal(reqparse_u64("-1", &v), -1);
    assert_int_equal(reqparse_u64("12x", &v), -1);
}

/* X-Request-Id from a client: kept only when safe in a header, a log line and JSON. */
static void test_client_request_id_is_kept_only_when_safe(void **state)
{
    char max[66];

    (void)state;
    assert_true(reqparse_request_id("a"));
    assert_true(reqparse_request_id("trace-42.abc:7_X"));
    memset(max, 'z', 64);
    max[64] = '\0';
    assert_true(reqparse_request_id(max));
    max[64] = 'z';
    max[65] = '\0';
    assert_false(reqparse_request_id(max)); /* 65 characters */
    assert_false(reqparse_request_id(""));
    assert_false(reqparse_request_id(NULL));
    assert_false(reqparse_request_id("has space"));
    assert_false(reqparse_request_id("quote\""));
    assert_false(reqparse_request_id("new\nline"));
    assert_false(reqparse_request_id("caf\xc3\xa9"));
}

/* A client token is 22 to 64 characters of base64url, nothing else. */
static void test_client_token_is_base64url_of_22_to_64(void **state)
{
    char t[67];

    (void)state;
    memset(t, 'A', 22);
    t[22] = '\0';
    assert_true(reqparse_client_token(t));
    t[21] = '\0';
    assert_false(reqparse_client_token(t)); /* 21: under 128 bits when random */
    memset(t, '-', 64);
    t[0] = '_';
    t[64] = '\0';
    assert_true(reqparse_client_token(t));
    t[64] = 'x';
    t[65] = '\0';
    assert_false(reqparse_client_token(t)); /* 65 */
    assert_true(reqparse_client_token("Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTAxMjM0NTY"));
    assert_false(reqparse_client_token("Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4OTAxMjM0NTY="));
    assert_false(reqparse_client_token("Zm9vYmFyYmF6cXV4cXV1eDEy.zQ1Njc4OTAxMjM0NTY"));
    assert_false(reqparse_client_token("Zm9vYmFyYmF6cXV4cXV1eDEy zQ1Njc4OTAxMjM0NTY"));
    assert_false(reqparse_client_token(NULL));
    assert_false(reqparse_client_token(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefer_wait_is_read_and_capped),
        cmocka_unit_test(test_media_types_select_the_body_kind),
        cmocka_unit_test(test_etag_bearer_and_numbers_are_parsed_strictly),
        cmocka_unit_test(test_client_request_id_is_kept_only_when_safe),
        cmocka_unit_test(test_client_token_is_base64url_of_22_to_64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
