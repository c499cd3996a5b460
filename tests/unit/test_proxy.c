/*
 * test_proxy.c - trusted proxy nets, the forwarded client address (proxy.h), the per-client
 * request counts (climit.h), and the --base-path and --retain parsers (config.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "service/climit.h"
#include "service/config.h"
#include "service/proxy.h"

static void test_trusted_nets_match_v4_v6_and_mapped_addresses(void **state)
{
    struct proxy_nets p;

    (void)state;
    memset(&p, 0, sizeof(p));
    assert_int_equal(proxy_nets_add(&p, "10.0.0.0/8, 192.168.1.7 ,fd00::/8"), 0);
    assert_int_equal((int)p.n, 3);
    assert_true(proxy_trusted(&p, "10.255.0.1"));
    assert_false(proxy_trusted(&p, "11.0.0.1"));
    assert_true(proxy_trusted(&p, "192.168.1.7"));
    assert_false(proxy_trusted(&p, "192.168.1.8"));
    assert_true(proxy_trusted(&p, "fd12::1"));
    assert_false(proxy_trusted(&p, "fe80::1"));
    /* A dual-stack listener sees IPv4 peers as mapped IPv6. */
    assert_true(proxy_trusted(&p, "::ffff:10.1.2.3"));
    assert_false(proxy_trusted(&p, "not-an-address"));
    assert_false(proxy_trusted(&p, NULL));
    /* A prefix that is not a whole number of bytes: 172.16.0.0/12 is 172.16 .. 172.31. */
    memset(&p, 0, sizeof(p));
    assert_int_equal(proxy_nets_add(&p, "172.16.0.0/12"), 0);
    assert_true(proxy_trusted(&p, "172.31.255.255"));
    assert_false(proxy_trusted(&p, "172.32.0.0"));
    assert_false(proxy_trusted(&p, "172.15.255.255"));
    /* Malformed. */
    assert_int_equal(proxy_nets_add(&p, "10.0.0.0/33"), -1);
    assert_int_equal(proxy_nets_add(&p, "10.0.0.0/"), -1);
    assert_int_equal(proxy_nets_add(&p, "10.0.0/8"), -1);
    assert_int_equal(proxy_nets_add(&p, "::1/129"), -1);
    assert_int_equal(proxy_nets_add(&p, "10.0.0.1,,10.0.0.2"), -1);
    assert_int_equal(proxy_nets_add(&p, "10.0.0.0/x"), -1);
}

static void test_client_is_the_rightmost_untrusted_hop(void **state)
{
    static const struct {
        const char *peer, *xff, *fwd; /* X-Forwarded-For and Forwarded, NULL: absent */
        const char *client;
    } cases[] = {
        /* An untrusted peer: its headers are ignored, whatever they say. */
        {"127.0.0.3", "6.6.6.6", "for=7.7.7.7", "127.0.0.3"},
        /* A trusted peer without headers is the client. */
        {"127.0.0.2", NULL, NULL, "127.0.0.2"},
        /* The right-most untrusted hop: the left ones could be spoofed by the client. */
        {"127.0.0.2", "6.6.6.6, 203.0.113.9", NULL, "203.0.113.9"},
        {"127.0.0.2", "6.6.6.6, 203.0.113.9, 10.1.1.1", NULL, "203.0.113.9"},
        /* All trusted: the left-most. */
        {"127.0.0.2", "10.2.2.2,10.1.1.1", NULL, "10.2.2.2"},
        /* Garbage stops the walk at the last trusted hop. */
        {"127.0.0.2", "203.0.113.9, junk, 10.1.1.1", NULL, "10.1.1.1"},
        {"127.0.0.2", "203.0.113.9, ", NULL, "127.0.0.2"},
        /* Ports and IPv6 are normalised. */
        {"127.0.0.2", "203.0.113.9:4711", NULL, "203.0.113.9"},
        {"127.0.0.2", "2001:DB8:0:0::1", NULL, "2001:db8::1"},
        {"127.0.0.2", "[2001:db8::1]:443", NULL, "2001:db8::1"},
        /* Forwarded (RFC 7239) when there is no X-Forwarded-For. */
        {"127.0.0.2", NULL, "for=6.6.6.6, for=\"[2001:db8::7]:80\";proto=https, by=x;For=10.1.1.1",
         "2001:db8::7"},
        {"127.0.0.2", NULL, "for=unknown", "127.0.0.2"},
        {"127.0.0.2", "  ", "for=203.0.113.5", "203.0.113.5"},
        /* X-Forwarded-For wins over Forwarded. */
        {"127.0.0.2", "203.0.113.1", "for=203.0.113.5", "203.0.113.1"},
    };
    struct proxy_nets p;
    char out[PROXY_ADDR_LEN];

    (void)state;
    memset(&p, 0, sizeof(p));
    assert_int_equal(proxy_nets_add(&p, "127.0.0.2,10.0.0.0/8"), 0);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        proxy_client_addr(&p, cases[i].peer, cases[i].xff, cases[i].fwd, out, sizeof(out));
        if (strcmp(out, cases[i].client) != 0)
            fail_msg("case %zu (%s, %s, %s): %s, wanted %s", i, cases[i].peer,
                     cases[i].xff != NULL ? cases[i].xff : "-",
                     cases[i].fwd != NULL ? cases[i].fwd : "-", out, cases[i].client);
    }
    /* No trusted nets at all: always the peer. */
    memset(&p, 0, sizeof(p));
    proxy_client_addr(&p, "127.0.0.2", "203.0.113.1", NULL, out, sizeof(out));
    assert_string_equal(out, "127.0.0.2");
}

static void test_socket_addresses_print_as_text(void **state)
{
    struct sockaddr_in in;
    struct sockaddr_in6 in6;
    char out[PROXY_ADDR_LEN];

    (void)state;
    memset(&in, 0, sizeof(in));
    in.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.5", &in.sin_addr);
    proxy_sockaddr_text((const struct sockaddr *)&in, out, sizeof(out));
    assert_string_equal(out, "127.0.0.5");
    memset(&in6, 0, sizeof(in6));
    in6.sin6_family = AF_INET6;
    inet_pton(AF_INET6, "::ffff:192.0.2.1", &in6.sin6_addr);
    proxy_sockaddr_text((const struct sockaddr *)&in6, out, sizeof(out));
    assert_string_equal(out, "192.0.2.1");
    proxy_sockaddr_text(NULL, out, sizeof(out));
    assert_string_equal(out, "");
}

static void test_client_limit_caps_requests_in_progress(void **state)
{
    struct climit *c = climit_new(2);

    (void)state;
    assert_non_null(c);
    assert_true(climit_acquire(c, "10.0.0.1"));
    assert_true(climit_acquire(c, "10.0.0.1"));
    assert_false(climit_acquire(c, "10.0.0.1"));
    assert_true(climit_acquire(c, "10.0.0.2"));
    climit_release(c, "10.0.0.1");
    assert_true(climit_acquire(c, "10.0.0.1"));
    assert_false(climit_acquire(c, "10.0.0.1"));
    climit_release(c, "10.0.0.1");
    climit_release(c, "10.0.0.1");
    climit_release(c, "10.0.0.1"); /* one too many: ignored, never negative */
    assert_true(climit_acquire(c, "10.0.0.1"));
    assert_true(climit_acquire(c, "10.0.0.1"));
    assert_false(climit_acquire(c, "10.0.0.1"));
    climit_free(c);
}

static void test_base_paths_and_durations_are_checked(void **state)
{
    char b[CONFIG_BASE_MAX];
    uint64_t d;

    (void)state;
    assert_int_equal(config_base_path("/tpuplan/", b, sizeof(b)), 0);
    assert_string_equal(b, "/tpuplan");
    assert_int_equal(config_base_path("/", b, sizeof(b)), 0);
    assert_string_equal(b, "");
    assert_int_equal(config_base_path("/a/b-c.d", b, sizeof(b)), 0);
    assert_string_equal(b, "/a/b-c.d");
    assert_int_equal(config_base_path("tpuplan", b, sizeof(b)), -1);
    assert_int_equal(config_base_path("/a//b", b, sizeof(b)), -1);
    assert_int_equal(config_base_path("/a/../b", b, sizeof(b)), -1);
    assert_int_equal(config_base_path("/./b", b, sizeof(b)), -1);
    assert_int_equal(config_base_path("/a b", b, sizeof(b)), -1);
    assert_int_equal(config_base_path("/a?b", b, sizeof(b)), -1);
    assert_int_equal(config_parse_duration("30d", &d), 0);
    assert_true(d == 30u * 86400);
    assert_int_equal(config_parse_duration("12h", &d), 0);
    assert_true(d == 12u * 3600);
    assert_int_equal(config_parse_duration("90m", &d), 0);
    assert_true(d == 5400);
    assert_int_equal(config_parse_duration("45", &d), 0);
    assert_true(d == 45);
    assert_int_equal(config_parse_duration("0", &d), 0);
    assert_true(d == 0);
    assert_int_equal(config_parse_duration("3651d", &d), -1);
    assert_int_equal(config_parse_duration("1w", &d), -1);
    assert_int_equal(config_parse_duration("-1d", &d), -1);
    assert_int_equal(config_parse_duration("", &d), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trusted_nets_match_v4_v6_and_mapped_addresses),
        cmocka_unit_test(test_client_is_the_rightmost_untrusted_hop),
        cmocka_unit_test(test_socket_addresses_print_as_text),
        cmocka_unit_test(test_client_limit_caps_requests_in_progress),
        cmocka_unit_test(test_base_paths_and_durations_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
