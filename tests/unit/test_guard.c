/*
 * test_guard.c - the cross-site submission rule and the Host check (guard.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/guard.h"

#define KEY "Bearer tpk_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

/* The bodies a cross-site form can send need the header or a key; the others need neither. */
static void test_form_bodies_need_the_client_header_or_a_key(void **state)
{
    (void)state;
    assert_false(guard_submission_ok(BODY_TEXT, NULL, NULL));
    assert_false(guard_submission_ok(BODY_MULTIPART, NULL, NULL));
    /* a manage token, or Basic credentials a browser attaches by itself, are no key */
    assert_false(guard_submission_ok(BODY_MULTIPART, NULL, "Bearer abc"));
    assert_false(guard_submission_ok(BODY_TEXT, NULL, "Basic dXNlcjpwYXNz"));
    assert_true(guard_submission_ok(BODY_TEXT, "any-value", NULL));
    assert_true(guard_submission_ok(BODY_MULTIPART, NULL, KEY));
    assert_true(guard_submission_ok(BODY_JSON, NULL, NULL));
    assert_true(guard_submission_ok(BODY_CSV, NULL, NULL));
    assert_true(guard_submission_ok(BODY_SAFETENSORS, NULL, NULL));
    assert_true(guard_submission_ok(BODY_UNSUPPORTED, NULL, NULL)); /* 415 in any case */
}

static void test_url_host_is_read_and_normalised(void **state)
{
    char h[GUARD_HOST_MAX];

    (void)state;
    assert_int_equal(guard_url_host("https://Plans.Example.ORG/tpuplan", h), 0);
    assert_string_equal(h, "plans.example.org");
    assert_int_equal(guard_url_host("http://plans.example.org.:8080", h), 0);
    assert_string_equal(h, "plans.example.org");
    assert_int_equal(guard_url_host("HTTPS://user:pw@plans.example.org?x#y", h), 0);
    assert_string_equal(h, "plans.example.org");
    assert_int_equal(guard_url_host("http://[2001:DB8::1]:8080/", h), 0);
    assert_string_equal(h, "2001:db8::1");
    assert_int_equal(guard_url_host("ftp://plans.example.org", h), -1);
    assert_int_equal(guard_url_host("plans.example.org", h), -1);
    assert_int_equal(guard_url_host("https://", h), -1);
    assert_int_equal(guard_url_host("https://:8080/", h), -1);
    assert_int_equal(guard_url_host("http://[nope]/", h), -1);
    assert_int_equal(guard_url_host(NULL, h), -1);
}

static void test_loopback_names(void **state)
{
    (void)state;
    assert_true(guard_loopback("127.0.0.1"));
    assert_true(guard_loopback("127.1.2.3"));
    assert_true(guard_loopback("::1"));
    assert_true(guard_loopback("0:0:0:0:0:0:0:1"));
    assert_true(guard_loopback("localhost"));
    assert_true(guard_loopback("app.localhost"));
    assert_false(guard_loopback("0.0.0.0"));
    assert_false(guard_loopback(""));
    assert_false(guard_loopback("::"));
    assert_false(guard_loopback("10.0.0.5"));
    assert_false(guard_loopback("localhost.example.org"));
    assert_false(guard_loopback(NULL));
}

/* The rule's table: with and without --public-url, loopback or not, direct or via a trusted
 * proxy. */
static void test_host_check(void **state)
{
    static const struct {
        const char *pub;
        const char *host;
        bool loopback;
        bool proxy;
        bool ok;
    } cases[] = {
        /* `make run`: 127.0.0.1:8080 and no --public-url */
        {"", "127.0.0.1:8080", true, false, true},
        {"", "localhost:8080", true, false, true},
        {"", "LOCALHOST", true, false, true},
        {"", "[::1]:8080", true, false, true},
        {"", "rebind.attacker.example:8080", true, false, false}, /* DNS rebinding */
        {"", "rebind.attacker.example", true, true, true},        /* a proxy routed it */
        {"", NULL, true, false, true},                            /* HTTP/1.0 */
        /* listening on every address, no --public-url: no name is known */
        {"", "tpuplan:8080", false, false, true},
        {"", "anything.example", false, false, true},
        /* --public-url https://plans.example.org */
        {"plans.example.org", "plans.example.org", false, false, true},
        {"plans.example.org", "Plans.Example.Org.:443", false, false, true},
        {"plans.example.org", "plans.example.org:8080", true, true, true},
        {"plans.example.org", "10.1.2.3:8080", false, false, true}, /* a probe by address */
        {"plans.example.org", "localhost", false, false, true},
        {"plans.example.org", "evil.example", false, false, false},
        {"plans.example.org", "evil.example", true, true, false}, /* proxies too */
        {"plans.example.org", "plans.example.org.evil.example", false, false, false},
        /* malformed */
        {"", "", false, false, false},
        {"", "[::1", false, false, false},
        {"", "[::1]x", false, false, false},
        {"", ":8080", false, false, false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        bool got = guard_host_ok(cases[i].pub, cases[i].loopback, cases[i].host, cases[i].proxy);
        if (got != cases[i].ok)
            fail_msg("case %zu: Host %s (public %s, loopback %d, proxy %d): %d, want %d", i,
                     cases[i].host ? cases[i].host : "(none)", cases[i].pub, cases[i].loopback,
                     cases[i].proxy, got, cases[i].ok);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_form_bodies_need_the_client_header_or_a_key),
        cmocka_unit_test(test_url_host_is_read_and_normalised),
        cmocka_unit_test(test_loopback_names),
        cmocka_unit_test(test_host_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
