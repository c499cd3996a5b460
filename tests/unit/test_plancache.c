/*
 * test_plancache.c - the finished-plan response cache: LRU by bytes, one entry per view, eviction
 * by plan (plancache.h).
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

static void test_plancache(void **state)
{
    /* Room for two 1,000-byte bodies (each entry also counts 512 bytes of overhead). */
    struct plancache *c = plancache_new(3100, 60);
    int64_t n, bytes;

    (void)state;
    assert_non_null(c);
    plancache_put(c, "a", NULL, "\"a-1\"", body_new(1000), 1000);
    plancache_put(c, "b", NULL, "\"b-1\"", body_new(1000), 1000);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 2);
    assert_int_equal(bytes, 3024);
    /* A third entry evicts the least recently used one. */
    plancache_put(c, "c", NULL, "\"c-1\"", body_new(1000), 1000);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 2);
    /* Replacing an id keeps one entry for it ("" and NULL are the same view). */
    plancache_put(c, "c", "", "\"c-2\"", body_new(10), 10);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 2);
    assert_int_equal(bytes, 1512 + 522);
    plancache_evict(c, "c");
    plancache_evict(c, "nope");
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 1);
    assert_int_equal(bytes, 1512);
    /* Larger than the whole cache: not stored (and the body is freed, for ASan). */
    plancache_put(c, "d", NULL, "\"d-1\"", body_new(5000), 5000);
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
    plancache_put(c, "a", NULL, "\"a-1\"", body_new(100), 100);
    plancache_put(c, "a", "summary", "\"a-1-summary\"", body_new(10), 10);
    plancache_put(c, "a", "layout", "\"a-1-layout\"", body_new(50), 50);
    plancache_put(c, "b", "layout", "\"b-1-layout\"", body_new(50), 50);
    plancache_put(c, "a", "summary", "\"a-2-summary\"", body_new(20), 20);
    plancache_stats(c, &n, &bytes);
    assert_int_equal(n, 4);
    assert_int_equal(bytes, 4 * 512 + 100 + 20 + 50 + 50);
    /* ...a view name too long to be one is never stored... */
    plancache_put(c, "a", "a-view-name-over-15", "\"x\"", body_new(10), 10);
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
        cmocka_unit_test(test_plancache),
        cmocka_unit_test(test_plancache_views),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
