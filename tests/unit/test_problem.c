/*
 * test_problem.c - problem+json documents and the problem catalogue (problem.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <json-c/json.h>

#include "service/problem.h"
#include "service/response.h"

static void test_planner_errors_map_to_problem_types_and_statuses(void **state)
{
    struct err e;
    size_t len = 0;
    int status = 0;
    char *p;
    struct json_object *o, *v;

    (void)state;
    err_set(&e, ERR_INVALID, "tensors[3].shape[1]", "tensors[3] \"w\": dim -1 is negative");
    p = problem_from_err(&e, NULL, "/api/v1/plans", &status, &len);
    assert_non_null(p);
    assert_int_equal(status, 422);
    assert_int_equal(strlen(p), len);
    o = json_tokener_parse(p);
    assert_non_null(o);
    assert_true(json_object_object_get_ex(o, "type", &v));
    assert_string_equal(json_object_get_string(v), "/problems/invalid-model");
    assert_true(json_object_object_get_ex(o, "status", &v));
    assert_int_equal(json_object_get_int(v), 422);
    assert_true(json_object_object_get_ex(o, "where", &v));
    assert_string_equal(json_object_get_string(v), "tensors[3].shape[1]");
    assert_true(json_object_object_get_ex(o, "detail", &v));
    assert_string_equal(json_object_get_string(v), "tensors[3] \"w\": dim -1 is negative");
    assert_true(json_object_object_get_ex(o, "instance", &v));
    json_object_put(o);
    free(p);
    /* A syntax error has no location: 400. */
    err_set(&e, ERR_INVALID, "", "model: invalid JSON at line 1 column 2");
    p = problem_from_err(&e, "", NULL, &status, NULL);
    assert_int_equal(status, 400);
    assert_non_null(strstr(p, "/problems/malformed-input"));
    assert_null(strstr(p, "\"where\""));
    free(p);
    assert_int_equal(problem_types[problem_for_err(ERR_LIMIT)].status, 422);
    assert_int_equal(problem_types[problem_for_err(ERR_INTERNAL)].status, 500);
}

/* Every entry is complete and unique, and Retry-After only goes with 503 and 429 (RFC 6585:
 * how long a client at its limit should wait). */
static void test_catalogue_is_complete_unique_and_retry_after_503(void **state)
{
    size_t i, k;

    (void)state;
    for (i = 0; i < PROBLEM_COUNT; i++) {
        const struct problem_type *t = &problem_types[i];
        assert_non_null(t->slug);
        assert_non_null(t->title);
        assert_true(t->slug[0] != '\0' && t->title[0] != '\0');
        assert_in_range(t->status, 400, 599);
        if (t->retry_after != NULL)
            assert_true(t->status == 503 || t->status == 429);
        for (k = 0; k < i; k++)
            assert_false(strcmp(t->slug, problem_types[k].slug) == 0 &&
                         strcmp(t->title, problem_types[k].title) == 0);
    }
}

/* static/openapi.json lists every slug the service can answer with (run from the root). */
static void test_every_problem_slug_is_in_openapi(void **state)
{
    FILE *f = fopen("static/openapi.json", "rb");
    char *doc = malloc(1 << 20);
    char want[96];
    size_t n, i;

    (void)state;
    assert_non_null(f);
    assert_non_null(doc);
    n = fread(doc, 1, (1 << 20) - 1, f);
    fclose(f);
    doc[n] = '\0';
    for (i = 0; i < PROBLEM_COUNT; i++) {
        snprintf(want, sizeof(want), "\"/problems/%s\"", problem_types[i].slug);
        if (strstr(doc, want) == NULL)
            fail_msg("%s is not in static/openapi.json", want);
    }
    free(doc);
}

/* The bytes of an answer: members in RFC 9457 order, Retry-After from the catalogue. */
static void test_problem_members_are_in_rfc9457_order(void **state)
{
    static const char want[] =
        "{\"type\":\"/problems/shutting-down\",\"title\":\"The server is shutting down\","
        "\"status\":503,\"detail\":\"Retry the request; another instance or a restarted one "
        "will answer it.\"}";
    size_t len = 0;
    char *p =
        problem_json(PROBLEM_SHUTTING_DOWN, NULL, PROBLEM_SHUTTING_DOWN_DETAIL, NULL, NULL, &len);
    struct MHD_Response *resp;
    struct err e;

    (void)state;
    assert_non_null(p);
    assert_string_equal(p, want);
    assert_int_equal(len, sizeof(want) - 1);
    free(p);
    p = problem_json(PROBLEM_NO_SUCH_PLAN, "", NULL, "", "/x", NULL);
    assert_string_equal(p, "{\"type\":\"/problems/not-found\",\"title\":\"No such plan\","
                           "\"status\":404,\"instance\":\"/x\"}");
    free(p);
    /* Under --base-path /a/b the type and the instance are paths under it too. */
    p = problem_json(PROBLEM_NO_SUCH_PLAN, "/a/b", NULL, NULL, "/api/v1/plans/x", NULL);
    assert_string_equal(p, "{\"type\":\"/a/b/problems/not-found\",\"title\":\"No such plan\","
                           "\"status\":404,\"instance\":\"/a/b/api/v1/plans/x\"}");
    free(p);
    err_set(&e, ERR_LIMIT, "tensors", "tensors: too many");
    p = problem_from_err(&e, "/tpuplan", NULL, NULL, NULL);
    assert_non_null(strstr(p, "\"type\":\"/tpuplan/problems/limit-exceeded\""));
    free(p);
    resp = response_problem(PROBLEM_DATABASE_UNAVAILABLE, "", "d", NULL, NULL);
    assert_non_null(resp);
    assert_string_equal(MHD_get_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER), "5");
    assert_string_equal(MHD_get_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE),
                        PROBLEM_MEDIA_TYPE);
    MHD_destroy_response(resp);
    resp = response_problem(PROBLEM_SHUTTING_DOWN, NULL, NULL, NULL, NULL);
    assert_string_equal(MHD_get_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER), "1");
    MHD_destroy_response(resp);
    resp = response_problem(PROBLEM_NOT_READY, NULL, NULL, NULL, NULL);
    assert_null(MHD_get_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER));
    MHD_destroy_response(resp);
}

/* Every bad parameter in "errors", after the standard members, in the order given. */
static void test_every_bad_parameter_is_listed_in_errors_in_order(void **state)
{
    const struct problem_param errs[] = {
        {"capacity", "capacity: \"lots\" is not a byte count"},
        {"colour", "colour: unknown parameter"},
    };
    char *p;

    (void)state;
    p = problem_json_errors(PROBLEM_INVALID_PARAMETER, "", "2 parameters are invalid.", "capacity",
                            NULL, errs, 2, NULL);
    assert_string_equal(p, "{\"type\":\"/problems/invalid-parameter\",\"title\":\"A request "
                           "parameter is invalid\",\"status\":400,\"detail\":\"2 parameters are "
                           "invalid.\",\"where\":\"capacity\",\"errors\":[{\"name\":\"capacity\","
                           "\"detail\":\"capacity: \\\"lots\\\" is not a byte count\"},{\"name\":"
                           "\"colour\",\"detail\":\"colour: unknown parameter\"}]}");
    free(p);
    p = problem_json_errors(PROBLEM_INVALID_PARAMETER, "", "d", NULL, NULL, errs, 0, NULL);
    assert_null(strstr(p, "errors")); /* none: no member */
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_planner_errors_map_to_problem_types_and_statuses),
        cmocka_unit_test(test_every_bad_parameter_is_listed_in_errors_in_order),
        cmocka_unit_test(test_catalogue_is_complete_unique_and_retry_after_503),
        cmocka_unit_test(test_every_problem_slug_is_in_openapi),
        cmocka_unit_test(test_problem_members_are_in_rfc9457_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
