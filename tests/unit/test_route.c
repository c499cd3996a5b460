/*
 * test_route.c - the URL table: API routes with 404/405, static paths, the share page and plan-id
 * checks (route.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/route.h"

#define ID "AAAAAAAAAAAAAAAAAAAAAA"

static void test_route_api(void **state)
{
    struct route_match m;

    (void)state;
    route_match("GET", "/api/v1/plans", &m);
    assert_int_equal(m.id, ROUTE_PLANS);
    assert_int_equal(m.status, 0);
    route_match("POST", "/api/v1/plans", &m);
    assert_int_equal(m.status, 0);
    route_match("PUT", "/api/v1/plans", &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, HEAD, POST");
    route_match("DELETE", "/api/v1/plans/" ID, &m);
    assert_int_equal(m.id, ROUTE_PLAN);
    assert_int_equal(m.status, 0);
    assert_string_equal(m.plan_id, ID);
    route_match("POST", "/api/v1/plans/" ID, &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, HEAD, DELETE");
    /* Ids of the wrong length or alphabet never reach the database. */
    route_match("GET", "/api/v1/plans/short", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v1/plans/AAAAAAAAAAAAAAAAAAAAA.", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v1/plans/" ID "/x", &m);
    assert_int_equal(m.status, 404);
    /* what-if (POST only), the diff and the diff page */
    route_match("POST", "/api/v1/plans/" ID "/whatif", &m);
    assert_int_equal(m.id, ROUTE_WHATIF);
    assert_int_equal(m.status, 0);
    assert_string_equal(m.plan_id, ID);
    route_match("GET", "/api/v1/plans/" ID "/whatif", &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "POST");
    route_match("POST", "/api/v1/plans/AAAAAAAAAAAAAAAAAAAAA./whatif", &m);
    assert_int_equal(m.status, 404);
    route_match("POST", "/api/v1/plans/" ID "/whatifs", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v1/diff", &m);
    assert_int_equal(m.id, ROUTE_DIFF);
    assert_int_equal(m.status, 0);
    route_match("POST", "/api/v1/diff", &m);
    assert_int_equal(m.status, 405);
    route_match("GET", "/d/" ID "/" ID, &m);
    assert_int_equal(m.id, ROUTE_DIFF_PAGE);
    assert_string_equal(m.path, "diff.html");
    route_match("GET", "/d/" ID, &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/d/" ID "/" ID "/", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/d/" ID "/AAAAAAAAAAAAAAAAAAAAA.", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v2/anything", &m);
    assert_int_equal(m.status, 404);
    assert_int_equal(m.id, ROUTE_NONE);
    route_match("GET", "/api/v1/openapi.json", &m);
    assert_int_equal(m.id, ROUTE_OPENAPI);
    assert_string_equal(m.path, "openapi.json");
    route_match("POST", "/healthz", &m);
    assert_int_equal(m.status, 405);
    route_match("GET", "/api/v1/chips", &m);
    assert_int_equal(m.id, ROUTE_CHIPS);
    assert_int_equal(m.status, 0);
    route_match("DELETE", "/api/v1/chips", &m);
    assert_int_equal(m.status, 405);
    route_match("HEAD", "/metrics", &m);
    assert_int_equal(m.id, ROUTE_METRICS);
    assert_int_equal(m.status, 0);
}

static void test_route_static(void **state)
{
    struct route_match m;

    (void)state;
    route_match("GET", "/", &m);
    assert_int_equal(m.id, ROUTE_STATIC);
    assert_string_equal(m.path, "index.html");
    route_match("GET", "/js/app.js", &m);
    assert_string_equal(m.path, "js/app.js");
    route_match("GET", "/p/" ID, &m);
    assert_int_equal(m.id, ROUTE_SHARE);
    assert_string_equal(m.path, "plan.html");
    assert_string_equal(m.plan_id, ID);
    route_match("GET", "/p/nope", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/vendor/lib/x.mjs", &m);
    assert_int_equal(m.id, ROUTE_VENDOR);
    assert_string_equal(m.path, "lib/x.mjs");
    route_match("POST", "/index.html", &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(route_name(ROUTE_PLAN), "plan");
    assert_string_equal(route_name(ROUTE_NONE), "unmatched");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_api),
        cmocka_unit_test(test_route_static),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
