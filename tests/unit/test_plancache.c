/*
 * test_plancache.c - the finished-plan response cache: LRU by bytes, one entry per view, eviction
 * by plan, and a hit's response and ETag (plancache.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/plancache.h"

/* A body of n bytes for the cache to own. */
static char *body_new(size_t n)
{
    return calloc(1, n > 0 ? n : 1);
}

/* The cache holds n entries of bytes in all (-1: not asked). */
static void assert_holds(struct plancache *c, int64_t n, int64_t bytes)
{
    int64_t got_n, got_bytes;

    plancache_stats(c, &got_n, &got_bytes);
    assert_int_equal(got_n, n);
    if (bytes >= 0)
        assert_int_equal(got_bytes, bytes);
}

static void test_cache_evicts_least_recent_within_its_bytes(void **state)
{
    /* Room for two 1,000-byte bodies (each entry also counts 512 bytes of overhead). */
    struct plancache *c = plancache_new(3100, 60);

    (void)state;
    assert_non_null(c);
    plancache_put(c, "a", NULL, "\"a-1\"", body_new(1000), 1000);
    plancache_put(c, "b", NULL, "\"b-1\"", body_new(1000), 1000);
    assert_holds(c, 2, 3024);
    /* A third entry evicts the least recently used one. */
    plancache_put(c, "c", NULL, "\"c-1\"", body_new(1000), 1000);
    assert_holds(c, 2, -1);
    /* Replacing an id keeps one entry for it ("" and NULL are the same view). */
    plancache_put(c, "c", "", "\"c-2\"", body_new(10), 10);
    assert_holds(c, 2, 1512 + 522);
    plancache_evict(c, "c");
    plancache_evict(c, "nope");
    assert_holds(c, 1, 1512);
    /* Larger than the whole cache: not stored (and the body is freed, for ASan). */
    plancache_put(c, "d", NULL, "\"d-1\"", body_new(5000), 5000);
    assert_holds(c, 1, -1);
    plancache_free(c);
}

static void test_each_view_is_an_entry_evicted_with_its_plan(void **state)
{
    struct plancache *c = plancache_new(1 << 20, 60);

    (void)state;
    assert_non_null(c);
    /* Each view of a plan is its own entry... */
    plancache_put(c, "a", NULL, "\"a-1\"", body_new(100), 100);
    plancache_put(c, "a", "summary", "\"a-1-summary\"", body_new(10), 10);
    plancache_put(c, "a", "layout", "\"a-1-layout\"", body_new(50), 50);
    plancache_put(c, "b", "layout", "\"b-1-layout\"", body_new(50), 50);
    plancache_put(c, "a", "summary", "\"a-2-summary\"", body_new(20), 20);
    assert_holds(c, 4, 4 * 512 + 100 + 20 + 50 + 50);
    /* ...a view name too long to be one is never stored... */
    plancache_put(c, "a", "a-view-name-over-15", "\"x\"", body_new(10), 10);
    assert_holds(c, 4, -1);
    /* ...and evicting a plan drops all of its views, and only its. */
    plancache_evict(c, "a");
    assert_holds(c, 1, 512 + 50);
    /* Clearing (deletions may have gone unheard) drops everything, and the cache goes on. */
    plancache_put(c, "c", NULL, "\"c-1\"", body_new(30), 30);
    plancache_clear(c);
    assert_holds(c, 0, 0);
    plancache_put(c, "c", NULL, "\"c-1\"", body_new(30), 30);
    assert_holds(c, 1, 512 + 30);
    plancache_free(c);
}

/* A hit is a response of its own over the cached body, with the entry's ETag copied out;
 * a miss, another view, or an entry past its ttl is NULL. */
static void test_hit_is_its_own_response_and_a_miss_or_expiry_is_null(void **state)
{
    struct plancache *c = plancache_new(1 << 20, 60), *stale = plancache_new(1 << 20, 0);
    char etag[PLANCACHE_ETAG_MAX + 1] = "";
    struct MHD_Response *resp;
    char *body = body_new(13);

    (void)state;
    assert_non_null(c);
    assert_non_null(stale);
    memcpy(body, "{\"id\":\"a-1\"}", 13); /* with its NUL */
    plancache_put(c, "a", "summary", "\"a-1-summary\"", body, 12);
    assert_null(plancache_get(c, "a", NULL, etag));
    assert_null(plancache_get(c, "b", "summary", etag));
    assert_string_equal(etag, "");
    resp = plancache_get(c, "a", "summary", etag);
    assert_non_null(resp);
    assert_string_equal(etag, "\"a-1-summary\"");
    assert_string_equal(MHD_get_response_header(resp, MHD_HTTP_HEADER_ETAG), etag);
    assert_string_equal(MHD_get_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE),
                        "application/json");
    assert_string_equal(MHD_get_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL), "no-cache");
    /* evicted while the response still holds the body: freed with the response (ASan) */
    plancache_evict(c, "a");
    assert_null(plancache_get(c, "a", "summary", etag));
    MHD_destroy_response(resp);
    /* a ttl of 0 s: expired when read, and dropped */
    plancache_put(stale, "a", NULL, "\"a-1\"", body_new(10), 10);
    assert_null(plancache_get(stale, "a", NULL, etag));
    assert_holds(stale, 0, -1);
    plancache_free(c);
    plancache_free(stale);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cache_evicts_least_recent_within_its_bytes),
        cmocka_unit_test(test_each_view_is_an_entry_evicted_with_its_plan),
        cmocka_unit_test(test_hit_is_its_own_response_and_a_miss_or_expiry_is_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
