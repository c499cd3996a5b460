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

#include "planner/plan.h"
#include "service/config.h"
#include "service/problem.h"

static void test_listen_address_splits_into_host_and_port(void **state)
{
    char host[64];
    unsigned port;

    (void)state;
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
static void test_abuse_limits_come_from_defaults_flags_and_env(void **state)
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
    assert_true(c.body_min_rate == 500);
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

/* The per-job cap: a plan runs under max_body and max_tensors, and a model with one tensor
 * more than --max-tensors is refused at submission as a 422 limit-exceeded problem. */
static void test_per_job_limits_refuse_a_model_over_them(void **state)
{
    char *argv[] = {"tpuplan-server", "--max-tensors",  "2", "--max-body", "1K",
                    "--database-url", "postgresql:///x"};
    const char *three = "{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"s8\"},"
                        "{\"name\":\"b\",\"shape\":[1],\"dtype\":\"s8\"},"
                        "{\"name\":\"c\",\"shape\":[1],\"dtype\":\"s8\"}]}";
    struct config c;
    struct plan_limits l;
    struct plan_summary s;
    struct err e;
    int status = 0;
    size_t len = 0;
    char *pj;

    (void)state;
    assert_int_equal(config_parse(&c, 7, argv), 0);
    config_plan_limits(&c, &l);
    assert_int_equal(l.max_tensors, 2);
    assert_int_equal(l.max_input_bytes, 1024);
    assert_int_equal(plan_validate(three, strlen(three), NULL, &l, &s, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "3 tensors; the limit is 2"));
    pj = problem_from_err(&e, NULL, "/api/v1/plans", &status, &len);
    assert_non_null(pj);
    assert_int_equal(status, 422);
    assert_non_null(strstr(pj, "limit-exceeded"));
    free(pj);
}

/* --max-time-limit and --max-patterns: 600 s and 256 by default; the time limit holds however
 * it is set (the caller's option, named time_limit, or the model's, options.time_limit). */
static void test_time_limit_and_patterns_are_capped(void **state)
{
    char *dflt[] = {"tpuplan-server", "--database-url", "x"};
    char *argv[] = {
        "tpuplan-server", "--database-url", "x", "--max-time-limit", "1m", "--max-patterns", "8"};
    const char *model = "{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"s8\"}],"
                        "\"options\":{\"time_limit\":\"61s\"}}";
    struct plan_opts o = {.time_limit_s = 60.5};
    struct config c;
    struct plan_limits l;
    struct err e;

    (void)state;
    assert_int_equal(config_parse(&c, 3, dflt), 0);
    config_plan_limits(&c, &l);
    assert_true(l.max_time_limit_s == 600 && l.max_patterns == 256);
    assert_int_equal(config_parse(&c, 7, argv), 0);
    config_plan_limits(&c, &l);
    assert_true(l.max_time_limit_s == 60 && l.max_patterns == 8);
    assert_int_equal(plan_validate(model, strlen(model), NULL, &l, NULL, &e), ERR_LIMIT);
    assert_string_equal(e.where, "options.time_limit");
    assert_string_equal(e.msg, "options.time_limit: 61 s is above this server's limit of 60 s");
    assert_int_equal(plan_validate(model, strlen(model), &o, &l, NULL, &e), ERR_LIMIT);
    assert_string_equal(e.msg, "time_limit: 60.5 s is above this server's limit of 60 s");
    o.time_limit_s = 60;
    assert_int_equal(plan_validate(model, strlen(model), &o, &l, NULL, &e), ERR_OK);
}

/* --max-body, --cache-bytes and --body-min-rate read the planner's one byte grammar (bytes.h):
 * decimals, T, "iB"; a fraction of a byte or a count past 2^64-1 stops start-up. */
static void test_byte_flags_read_the_byte_grammar(void **state)
{
    char *good[] = {"tpuplan-server",
                    "--database-url",
                    "x",
                    "--max-body=1.5MiB",
                    "--cache-bytes",
                    "2t",
                    "--body-min-rate",
                    "1K"};
    char *fraction[] = {"tpuplan-server", "--database-url", "x", "--max-body", "0.3K"};
    char *huge[] = {"tpuplan-server", "--database-url", "x", "--cache-bytes", "16777216T"};
    struct config c;

    (void)state;
    assert_int_equal(config_parse(&c, 8, good), 0);
    assert_true(c.max_body == 1572864); /* 1.5 x 2^20 */
    assert_true(c.body_min_rate == 1024);
    assert_true(c.cache_bytes == 2ull << 40);
    assert_int_equal(config_parse(&c, 5, fraction), -1);
    assert_int_equal(config_parse(&c, 5, huge), -1);
}

/* Counts, durations and ports share one number reader: digits only, bounded, all of it. */
static void test_numbers_are_bounded_digits_only(void **state)
{
    static const char *bad_counts[] = {
        "+4", " 4", "4 ", "4x", "", "-1", "1000001", "1e3", "99999999999999999999"};
    char *argv[] = {"tpuplan-server", "--database-url", "x", "--max-per-ip", NULL};
    struct config c;
    char host[64];
    unsigned port;
    uint64_t d;

    (void)state;
    argv[4] = "1000000";
    assert_int_equal(config_parse(&c, 5, argv), 0);
    assert_int_equal(c.max_per_ip, 1000000);
    for (size_t i = 0; i < sizeof(bad_counts) / sizeof(bad_counts[0]); i++) {
        argv[4] = (char *)bad_counts[i];
        if (config_parse(&c, 5, argv) != -1)
            fail_msg("--max-per-ip \"%s\" accepted", bad_counts[i]);
    }
    assert_int_equal(config_listen_split("h:65535", host, sizeof(host), &port), 0);
    assert_int_equal(port, 65535);
    assert_int_equal(config_listen_split("h:65536", host, sizeof(host), &port), -1);
    assert_int_equal(config_listen_split("h:+80", host, sizeof(host), &port), -1);
    assert_int_equal(config_listen_split("h: 80", host, sizeof(host), &port), -1);
    assert_int_equal(config_listen_split("h:", host, sizeof(host), &port), -1);
    assert_int_equal(config_listen_split("h:80x", host, sizeof(host), &port), -1);
    assert_int_equal(config_parse_duration("3650d", &d), 0);
    assert_true(d == 3650ull * 86400);
    assert_int_equal(config_parse_duration("315360001", &d), -1); /* 3650 days + 1 s */
    assert_int_equal(config_parse_duration("99999999999999999999s", &d), -1);
    assert_int_equal(config_parse_duration("+5m", &d), -1);
    assert_int_equal(config_parse_duration("5mm", &d), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen_address_splits_into_host_and_port),
        cmocka_unit_test(test_abuse_limits_come_from_defaults_flags_and_env),
        cmocka_unit_test(test_byte_flags_read_the_byte_grammar),
        cmocka_unit_test(test_numbers_are_bounded_digits_only),
        cmocka_unit_test(test_per_job_limits_refuse_a_model_over_them),
        cmocka_unit_test(test_time_limit_and_patterns_are_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
