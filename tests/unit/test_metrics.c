/*
 * test_metrics.c - the Prometheus text: request counters, duration buckets, gauges (metrics.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/metrics.h"
#include "service/route.h"

static void test_metrics_render_counters_and_cumulative_buckets(void **state)
{
    struct metrics_gauges g;
    struct route_match get, del;
    size_t len = 0;
    char *t;

    (void)state;
    memset(&g, 0, sizeof(g));
    g.jobs_queued = 3;
    g.db_up = 1;
    /* GET and DELETE of a plan are two rows of one resource: one series, "plan" */
    route_match("GET", "/api/v1/plans/AAAAAAAAAAAAAAAAAAAAAA", &get);
    route_match("DELETE", "/api/v1/plans/AAAAAAAAAAAAAAAAAAAAAA", &del);
    assert_ptr_not_equal(get.row, del.row);
    metrics_request_observe(get.row, 200, 0.0007);
    metrics_request_observe(del.row, 299, 0.0007);
    metrics_request_observe(NULL, 404, 0.0001);
    metrics_planner_observe(0.02, 1);
    t = metrics_render(&g, false, &len);
    assert_non_null(t);
    assert_int_equal(strlen(t), len);
    assert_non_null(strstr(t, "tpuplan_http_requests_total{route=\"plan\",status=\"200\"} 1\n"));
    assert_non_null(strstr(t, "tpuplan_http_requests_total{route=\"plan\",status=\"other\"} 1\n"));
    assert_non_null(
        strstr(t, "tpuplan_http_requests_total{route=\"unmatched\",status=\"404\"} 1\n"));
    assert_null(strstr(t, "route=\"plans\""));
    /* 0.0007 s is above the 0.0005 bucket and inside the 0.001 one (cumulative). */
    assert_non_null(strstr(
        t, "tpuplan_http_request_duration_seconds_bucket{route=\"plan\",le=\"0.0005\"} 0\n"));
    assert_non_null(
        strstr(t, "tpuplan_http_request_duration_seconds_bucket{route=\"plan\",le=\"0.001\"} 2\n"));
    assert_non_null(strstr(t, "tpuplan_planner_duration_seconds_bucket{le=\"0.025\"} 1\n"));
    assert_non_null(strstr(t, "tpuplan_planner_duration_seconds_bucket{le=\"0.01\"} 0\n"));
    assert_non_null(strstr(t, "tpuplan_jobs{state=\"queued\"} 3\n"));
    assert_non_null(strstr(t, "tpuplan_database_up 1\n"));
    free(t);
}

/* Plans by key name only with --metrics-detail; otherwise one total naming no key. */
static void test_key_names_only_in_detail(void **state)
{
    static const struct {
        const char *text;
        bool detail;
        bool present;
    } want[] = {
        {"\ntpuplan_plans_created_total 4\n", false, true},
        {"ci-nightly", false, false},
        {"release", false, false},
        {"key=", false, false},
        {"tpuplan_plans_created_total{key=\"ci-nightly\"} 2\n", true, true},
        {"tpuplan_plans_created_total{key=\"release\"} 1\n", true, true},
        {"tpuplan_plans_created_total{key=\"\"} 1\n", true, true},
        {"\ntpuplan_plans_created_total 4\n", true, false},
    };

    (void)state;
    metrics_plan_created("ci-nightly");
    metrics_plan_created("ci-nightly");
    metrics_plan_created(NULL);
    metrics_plan_created("release");
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char *t = metrics_render(NULL, want[i].detail, NULL);
        assert_non_null(t);
        if ((strstr(t, want[i].text) != NULL) != want[i].present)
            fail_msg("detail %d: \"%s\" %s", want[i].detail, want[i].text,
                     want[i].present ? "missing" : "present");
        free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_render_counters_and_cumulative_buckets),
        cmocka_unit_test(test_key_names_only_in_detail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
