/*
 * test_config.c - server settings: byte counts and listen addresses (config.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/config.h"

static void test_config(void **state)
{
    uint64_t v;
    char host[64];
    unsigned port;

    (void)state;
    assert_int_equal(config_parse_bytes("64M", &v), 0);
    assert_true(v == 64u << 20);
    assert_int_equal(config_parse_bytes("1KiB", &v), 0);
    assert_true(v == 1024);
    assert_int_equal(config_parse_bytes("12", &v), 0);
    assert_true(v == 12);
    assert_int_equal(config_parse_bytes("99999999999999999999G", &v), -1);
    assert_int_equal(config_parse_bytes("x", &v), -1);
    assert_int_equal(config_parse_bytes("5T", &v), -1);
    assert_int_equal(config_listen_split("127.0.0.1:8080", host, sizeof(host), &port), 0);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 8080);
    assert_int_equal(config_listen_split("[::1]:0", host, sizeof(host), &port), 0);
    assert_string_equal(host, "::1");
    assert_int_equal(port, 0);
    assert_int_equal(config_listen_split(":80", host, sizeof(host), &port), 0);
    assert_string_equal(host, "");
    assert_int_equal(config_listen_split("host", host, sizeof(host), &port), -1);
    assert_int_equal(config_listen_split("h:99999", host, sizeof(host), &port), -1);
}

/* The abuse limits and the log format: defaults, flags, the environment, a bad value. */
static void test_limits(void **state)
{
    struct config c;
    char *defaults[] = {"tpuplan-server", "--database-url", "x"};
    char *flags[] = {"tpuplan-server",
                     "--database-url",
                     "x",
                     "--rate-limit=0",
                     "--rate-burst",
                     "5",
                     "--max-queue",
                     "7",
                     "--log-format",
                     "json"};
    char *bad[] = {"tpuplan-server", "--database-url", "x", "--log-format", "xml"};

    (void)state;
    unsetenv("TPUPLAN_RATE_LIMIT");
    assert_int_equal(config_parse(&c, 3, defaults), 0);
    assert_int_equal(c.rate_limit, 120);
    assert_int_equal(c.rate_burst, 30);
    assert_int_equal(c.max_queue, 10000);
    assert_string_equal(c.log_format, "text");
    assert_int_equal(c.header_timeout_s, 10);
    assert_int_equal(config_parse(&c, 10, flags), 0);
    assert_int_equal(c.rate_limit, 0);
    assert_int_equal(c.rate_burst, 5);
    assert_int_equal(c.max_queue, 7);
    assert_string_equal(c.log_format, "json");
    setenv("TPUPLAN_RATE_LIMIT", "9", 1);
    assert_int_equal(config_parse(&c, 3, defaults), 0);
    assert_int_equal(c.rate_limit, 9);
    unsetenv("TPUPLAN_RATE_LIMIT");
    assert_int_equal(config_parse(&c, 5, bad), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
