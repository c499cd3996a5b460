/*
 * test_http.c - the HTTP layer's pure helpers: routing, static path sanitising and MIME
 * types, Prefer/Content-Type/ETag/Authorization parsing, bounded bodies (safetensors
 * header-only mode), problem+json documents, config parsing, SHA-256 and metrics text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <json-c/json.h>

#include "service/body.h"
#include "service/config.h"
#include "service/metrics.h"
#include "service/plancache.h"
#include "service/problem.h"
#include "service/reqparse.h"
#include "service/route.h"
#include "service/sha256.h"
#include "service/static_files.h"

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

static void test_static_path(void **state)
{
    static const char *const bad[] = {
        "../etc/passwd", "a/../../b",   "..", "a/..",      "./a",    ".git/config", "a//b",
        "a\\b",          "/etc/passwd", "",   "a/.hidden", "a/\x01", "a/",
    };
    static const char *const good[] = {"index.html", "js/app.js", "a.b/c..d.css", "x"};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(static_path_ok(bad[i]));
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_true(static_path_ok(good[i]));
    assert_string_equal(static_mime("index.html"), "text/html; charset=utf-8");
    assert_string_equal(static_mime("a/b.MJS"), "text/javascript; charset=utf-8");
    assert_string_equal(static_mime("x.css"), "text/css; charset=utf-8");
    assert_string_equal(static_mime("x.svg"), "image/svg+xml");
    assert_string_equal(static_mime("f.woff2"), "font/woff2");
    assert_string_equal(static_mime("app.js.map"), "application/json");
    assert_string_equal(static_mime("dir.js/README"), "application/octet-stream");
}

static void test_prefer(void **state)
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

static void test_media_type(void **state)
{
    (void)state;
    assert_int_equal(reqparse_media_type("application/json"), BODY_JSON);
    assert_int_equal(reqparse_media_type("Application/JSON; charset=utf-8"), BODY_JSON);
    assert_int_equal(reqparse_media_type("application/vnd.tpuplan+json"), BODY_JSON);
    assert_int_equal(reqparse_media_type("application/octet-stream"), BODY_SAFETENSORS);
    assert_int_equal(reqparse_media_type("text/csv;header=present"), BODY_CSV);
    assert_int_equal(reqparse_media_type("multipart/form-data; boundary=x"), BODY_MULTIPART);
    assert_int_equal(reqparse_media_type("text/plain"), BODY_UNSUPPORTED);
    assert_int_equal(reqparse_media_type("application/jsonx"), BODY_UNSUPPORTED);
    assert_int_equal(reqparse_media_type(""), BODY_NONE);
    assert_int_equal(reqparse_media_type(NULL), BODY_NONE);
}

static void test_headers(void **state)
{
    char buf[64];
    uint64_t v;
    double d;

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
    assert_int_equal(reqparse_seconds("2.5", &d), 0);
    assert_true(d == 2.5);
    assert_int_equal(reqparse_seconds("nan", &d), -1);
    assert_int_equal(reqparse_seconds("1e999", &d), -1);
}

static void test_body_plain(void **state)
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

static void test_body_safetensors(void **state)
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

static void test_problem(void **state)
{
    struct err e;
    size_t len = 0;
    int status = 0;
    char *p;
    struct json_object *o, *v;

    (void)state;
    err_set(&e, ERR_INVALID, "tensors[3].shape[1]", "tensors[3] \"w\": dim -1 is negative");
    p = problem_from_err(&e, "/api/v1/plans", &status, &len);
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
    p = problem_from_err(&e, NULL, &status, NULL);
    assert_int_equal(status, 400);
    assert_non_null(strstr(p, "/problems/malformed-input"));
    assert_null(strstr(p, "\"where\""));
    free(p);
    assert_int_equal(problem_types[problem_for_err(ERR_LIMIT)].status, 422);
    assert_int_equal(problem_types[problem_for_err(ERR_INTERNAL)].status, 500);
}

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

static void test_sha256(void **state)
{
    struct sha256 c;
    char hex[65];
    size_t i;

    (void)state;
    /* FIPS 180-4 examples (NIST CSRC "SHA256.pdf"). */
    sha256_init(&c);
    sha256_update(&c, "abc", 3);
    sha256_hex(&c, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha256_init(&c);
    sha256_update(&c, "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56);
    sha256_hex(&c, hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    sha256_init(&c);
    for (i = 0; i < 1000000; i += 1000) {
        char a[1000];
        memset(a, 'a', sizeof(a));
        sha256_update(&c, a, sizeof(a));
    }
    sha256_hex(&c, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void test_metrics(void **state)
{
    struct metrics_gauges g;
    size_t len = 0;
    char *t;

    (void)state;
    memset(&g, 0, sizeof(g));
    g.jobs_queued = 3;
    g.db_up = 1;
    metrics_request_observe(ROUTE_PLAN, 200, 0.0007);
    metrics_request_observe(ROUTE_PLAN, 299, 0.0007);
    metrics_planner_observe(0.02, 1);
    t = metrics_render(&g, &len);
    assert_non_null(t);
    assert_int_equal(strlen(t), len);
    assert_non_null(strstr(t, "tpuplan_http_requests_total{route=\"plan\",status=\"200\"} 1\n"));
    assert_non_null(strstr(t, "tpuplan_http_requests_total{route=\"plan\",status=\"other\"} 1\n"));
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

static struct MHD_Response *resp_new(void)
{
    return MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
}

static void test_plancache(void **state)
{
    /* Room for two 1,000-byte bodies (each entry also counts 512 bytes of overhead). */
    struct plancache *c = plancache_new(3100, 60);
    int64_t n, bytes;

    (void)state;
    assert_non_null(c);
    plancache_put(c, "a", NULL, "\"a-1\"", resp_new(), 1000);
    plancache_put(c, "b", NULL, "\"b-1\"", resp_new(), 1000);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 2);
    assert_int_equal(bytes, 3024);
    /* A third entry evicts the least recently used one. */
    plancache_put(c, "c", NULL, "\"c-1\"", resp_new(), 1000);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 2);
    /* Replacing an id keeps one entry for it ("" and NULL are the same view). */
    plancache_put(c, "c", "", "\"c-2\"", resp_new(), 10);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 2);
    assert_int_equal(bytes, 1512 + 522);
    plancache_evict(c, "c");
    plancache_evict(c, "nope");
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 1);
    assert_int_equal(bytes, 1512);
    /* Larger than the whole cache: not stored (and the response is freed, for ASan). */
    plancache_put(c, "d", NULL, "\"d-1\"", resp_new(), 5000);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 1);
    plancache_free(c);
}

static void test_plancache_views(void **state)
{
    struct plancache *c = plancache_new(1 << 20, 60);
    int64_t n, bytes;

    (void)state;
    assert_non_null(c);
    /* Each view of a plan is its own entry... */
    plancache_put(c, "a", NULL, "\"a-1\"", resp_new(), 100);
    plancache_put(c, "a", "summary", "\"a-1-summary\"", resp_new(), 10);
    plancache_put(c, "a", "layout", "\"a-1-layout\"", resp_new(), 50);
    plancache_put(c, "b", "layout", "\"b-1-layout\"", resp_new(), 50);
    plancache_put(c, "a", "summary", "\"a-2-summary\"", resp_new(), 20);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 4);
    assert_int_equal(bytes, 4 * 512 + 100 + 20 + 50 + 50);
    /* ...a view name too long to be one is never stored... */
    plancache_put(c, "a", "a-view-name-over-15", "\"x\"", resp_new(), 10);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 4);
    /* ...and evicting a plan drops all of its views, and only its. */
    plancache_evict(c, "a");
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 1);
    assert_int_equal(bytes, 512 + 50);
    plancache_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_api),   cmocka_unit_test(test_route_static),
        cmocka_unit_test(test_static_path), cmocka_unit_test(test_prefer),
        cmocka_unit_test(test_media_type),  cmocka_unit_test(test_headers),
        cmocka_unit_test(test_body_plain),  cmocka_unit_test(test_body_safetensors),
        cmocka_unit_test(test_problem),     cmocka_unit_test(test_config),
        cmocka_unit_test(test_sha256),      cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_plancache),   cmocka_unit_test(test_plancache_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
