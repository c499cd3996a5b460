/*
 * test_route.c - the route table and its matcher (route.h): every row of the table is
 * reached by a path made from its own pattern, for the methods it serves, with 405 and the
 * Allow of its resource for the others and 404 for fences; then the cases the table does not
 * spell out (malformed ids, prefixes, the static catch-all) and the Allow texts clients see.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/route.h"

#define ID "AAAAAAAAAAAAAAAAAAAAAA"

static const char *const methods[] = {"GET", "HEAD", "POST", "DELETE", "PUT", "OPTIONS"};

/* A path the pattern matches: {id} -> ID, {*} -> rest, [/] -> slash ("" or "/"). */
static void path_of(const char *pat, const char *rest, const char *slash, char *out, size_t cap)
{
    size_t n = 0;

    while (*pat != '\0' && n + 1 < cap) {
        const char *put = NULL;
        if (strncmp(pat, "{id}", 4) == 0) {
            put = ID;
            pat += 4;
        } else if (strcmp(pat, "{*}") == 0) {
            put = rest;
            pat += 3;
        } else if (strcmp(pat, "[/]") == 0) {
            put = slash;
            pat += 3;
        }
        if (put != NULL)
            n += (size_t)snprintf(out + n, cap - n, "%s", put);
        else
            out[n++] = *pat++;
    }
    out[n] = '\0';
}

/* The methods the resource of row serves: every row with its pattern. */
static int resource_methods(const struct route *row)
{
    int all = 0;
    size_t i;

    for (i = 0; i < route_count; i++)
        if (strcmp(route_table[i].pattern, row->pattern) == 0)
            all |= route_table[i].methods;
    return all;
}

/* The shape of a row: a fence has nothing but its pattern; any other row a handler that
 * can answer; {*} and [/] only end a pattern; a body row is a POST run on an executor. */
static void check_row_shape(const struct route *row)
{
    const char *star = strstr(row->pattern, "{*}"), *slash = strstr(row->pattern, "[/]");

    assert_int_equal(row->pattern[0], '/');
    assert_true(star == NULL || star[3] == '\0');
    assert_true(slash == NULL || slash[3] == '\0');
    assert_int_equal(row->methods & ~(ROUTE_GET | ROUTE_POST | ROUTE_DELETE), 0);
    if (row->methods == 0) {
        assert_null(row->name);
        assert_null(row->fast);
        assert_null(row->exec);
        return;
    }
    assert_non_null(row->name);
    assert_true(row->fast != NULL || row->exec != NULL);
    if (row->body) {
        assert_int_equal(row->methods, ROUTE_POST);
        assert_non_null(row->exec);
        assert_null(row->fast);
    }
}

/* Requests for path with each method, against row (a non-fence). */
static void check_row_methods(const struct route *row, const char *path, const char *rest)
{
    int all = resource_methods(row);
    struct route_match m;
    size_t k;

    for (k = 0; k < sizeof(methods) / sizeof(methods[0]); k++) {
        int bit = route_method_parse(methods[k]);
        int want = bit == ROUTE_HEAD ? ROUTE_GET : bit;
        route_match(methods[k], path, &m);
        assert_int_equal(m.method, bit);
        if (row->methods & want) {
            /* reached: no row above shadows it */
            assert_int_equal(m.status, 0);
            assert_ptr_equal(m.row, row);
            if (strstr(row->pattern, "{id}") != NULL)
                assert_string_equal(m.plan_id, ID);
            if (strstr(row->pattern, "{*}") != NULL)
                assert_string_equal(m.path, rest);
            else if (row->file != NULL)
                assert_string_equal(m.path, row->file);
        } else if ((all & want) == 0) {
            /* 405 names what the resource serves; counted under its name */
            assert_int_equal(m.status, 405);
            assert_non_null(m.row);
            assert_string_equal(m.row->name, row->name);
            assert_int_equal(strstr(m.allow, "GET, HEAD") != NULL, (all & ROUTE_GET) != 0);
            assert_int_equal(strstr(m.allow, "POST") != NULL, (all & ROUTE_POST) != 0);
            assert_int_equal(strstr(m.allow, "DELETE") != NULL, (all & ROUTE_DELETE) != 0);
        }
    }
}

static void test_every_row_matches_its_paths_with_405s_and_a_series(void **state)
{
    char path[256];
    struct route_match m;
    size_t i, k;

    (void)state;
    assert_true(route_count > 0 && route_count <= ROUTE_MAX);
    for (i = 0; i < route_count; i++) {
        const struct route *row = &route_table[i];
        check_row_shape(row);
        path_of(row->pattern, "x/y.js", "", path, sizeof(path));
        if (row->methods == 0) {
            for (k = 0; k < sizeof(methods) / sizeof(methods[0]); k++) {
                route_match(methods[k], path, &m);
                assert_int_equal(m.status, 404);
                assert_null(m.row);
                assert_int_equal(route_series(m.row), 0);
            }
            continue;
        }
        check_row_methods(row, path, "x/y.js");
        if (strstr(row->pattern, "[/]") != NULL) {
            path_of(row->pattern, "", "/", path, sizeof(path));
            check_row_methods(row, path, "");
        }
        /* one series a name, labelled with it */
        assert_int_not_equal(route_series(row), 0);
        assert_true(route_series(row) < ROUTE_SERIES);
        assert_string_equal(route_series_name(route_series(row)), row->name);
        for (k = 0; k < route_count; k++)
            if (route_table[k].name != NULL)
                assert_int_equal(route_series(&route_table[k]) == route_series(row),
                                 strcmp(route_table[k].name, row->name) == 0);
    }
    assert_string_equal(route_series_name(0), "unmatched");
    assert_string_equal(route_series_name(ROUTE_SERIES - 1), "unmatched");
}

/* The cases the table leaves to the matcher: ids of the wrong length or alphabet never
 * reach the database, fenced prefixes, the files of the catch-all, and the Allow texts
 * clients see (the API's documented values, written out). */
static void test_bad_ids_fences_files_and_allow_texts_match_as_documented(void **state)
{
    struct route_match m;

    (void)state;
    route_match("PUT", "/api/v1/plans", &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, HEAD, POST");
    assert_string_equal(m.row->name, "plans");
    route_match("POST", "/api/v1/plans/" ID, &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, HEAD, DELETE");
    route_match("GET", "/api/v1/plans/" ID "/whatif", &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "POST");
    route_match("DELETE", "/api/v1/plans/" ID "/frontiers", &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, HEAD, POST");
    assert_string_equal(m.row->name, "frontiers");
    route_match("POST", "/api/v1/frontiers/" ID, &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, HEAD");
    route_match("GET", "/api/v1/frontiers/" ID, &m);
    assert_true(m.status == 0 && strcmp(m.row->name, "frontier") == 0 && m.row->query != NULL &&
                m.row->query[0] == '\0');
    assert_string_equal(m.plan_id, ID);
    route_match("POST", "/api/v1/plans/" ID "/frontiers", &m);
    assert_true(m.status == 0 && m.row->body && m.row->query != NULL && m.row->query[0] == '\0');
    route_match("GET", "/api/v1/frontiers/" ID "/x", &m);
    assert_int_equal(m.status, 404);
    route_match("DELETE", "/api/v1/chips", &m);
    assert_string_equal(m.allow, "GET, HEAD");
    route_match("POST", "/index.html", &m);
    assert_int_equal(m.status, 405);
    assert_string_equal(m.allow, "GET, HEAD");
    /* malformed ids and extra segments: 404, nothing captured */
    route_match("GET", "/api/v1/plans/short", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v1/plans/AAAAAAAAAAAAAAAAAAAAA.", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v1/plans/" ID "A", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v1/plans/" ID "/x", &m);
    assert_int_equal(m.status, 404);
    assert_string_equal(m.plan_id, "");
    route_match("POST", "/api/v1/plans/AAAAAAAAAAAAAAAAAAAAA./whatif", &m);
    assert_int_equal(m.status, 404);
    route_match("POST", "/api/v1/plans/" ID "/whatifs", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/d/" ID, &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/d/" ID "/" ID "/", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/d/" ID "/AAAAAAAAAAAAAAAAAAAAA.", &m);
    assert_int_equal(m.status, 404);
    route_match("POST", "/p/nope", &m);
    assert_int_equal(m.status, 404);
    assert_null(m.row);
    /* under /api nothing is a file, whatever the method */
    route_match("GET", "/api/v2/anything", &m);
    assert_int_equal(m.status, 404);
    route_match("PUT", "/api", &m);
    assert_int_equal(m.status, 404);
    route_match("GET", "/api/v1/plans//", &m);
    assert_int_equal(m.status, 404);
    /* outside the fences a path is a file: /apix, /p, /healthz/ */
    route_match("GET", "/apix", &m);
    assert_string_equal(m.row->name, "static");
    assert_string_equal(m.path, "apix");
    route_match("GET", "/p", &m);
    assert_string_equal(m.path, "p");
    route_match("GET", "/healthz/", &m);
    assert_string_equal(m.row->name, "static");
    route_match("GET", "/", &m);
    assert_string_equal(m.path, "index.html");
    route_match("HEAD", "/js/app.js", &m);
    assert_string_equal(m.path, "js/app.js");
    route_match("GET", "/vendor/", &m);
    assert_string_equal(m.row->name, "vendor");
    assert_string_equal(m.path, "");
    /* the first id of the diff page is the one captured */
    route_match("GET", "/d/" ID "/BBBBBBBBBBBBBBBBBBBBBB", &m);
    assert_int_equal(m.status, 0);
    assert_string_equal(m.plan_id, ID);
    assert_string_equal(m.path, "diff.html");
    /* not under --base-path: http.c matches "" */
    route_match("GET", "", &m);
    assert_int_equal(m.status, 404);
    assert_int_equal(route_method_parse("get"), ROUTE_OTHER);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_row_matches_its_paths_with_405s_and_a_series),
        cmocka_unit_test(test_bad_ids_fences_files_and_allow_texts_match_as_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
