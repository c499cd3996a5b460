/*
 * test_ratelimit.c - per-client token buckets (ratelimit.h): exact refills and waits
 * worked out by hand, independence of clients, bounded memory under many clients.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "service/ratelimit.h"

/* 60 a minute = 1 token a second, bursts of 3. */
static void test_bucket_refills_a_token_a_second_bursts_of_3(void **state)
{
    struct ratelimit *rl = ratelimit_new(60, 3);

    (void)state;
    assert_non_null(rl);
    /* A new client has a full bucket: three at once, the fourth waits 1 s (0 tokens,
     * 1 token a second). */
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 100.0), 0);
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 100.0), 0);
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 100.0), 0);
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 100.0), 1);
    /* Half a second later: 0.5 tokens, still short; ceil(0.5 s) = 1. */
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 100.5), 1);
    /* At 101.0 one token is back: taken. */
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 101.0), 0);
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 101.0), 1);
    /* Another client is not affected. */
    assert_int_equal(ratelimit_take(rl, "10.0.0.2", 101.0), 0);
    /* A long pause refills to the burst, not beyond: 3 then a refusal. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(ratelimit_take(rl, "10.0.0.1", 1000.0), 0);
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 1000.0), 1);
    /* A clock that steps back never adds tokens. */
    assert_int_equal(ratelimit_take(rl, "10.0.0.1", 500.0), 1);
    ratelimit_free(rl);
}

/* 6 a minute = 0.1 token a second, burst 1: Retry-After is the whole seconds to refill. */
static void test_slow_rate_retry_after_is_whole_seconds(void **state)
{
    struct ratelimit *rl = ratelimit_new(6, 1);

    (void)state;
    assert_int_equal(ratelimit_take(rl, "::1", 0.0), 0);
    assert_int_equal(ratelimit_take(rl, "::1", 0.0), 10);
    /* At 4 s: 0.4 tokens; 0.6 more take 6 s. */
    assert_int_equal(ratelimit_take(rl, "::1", 4.0), 6);
    assert_int_equal(ratelimit_take(rl, "::1", 10.0), 0);
    ratelimit_free(rl);
}

static void test_zero_rate_turns_limiting_off(void **state)
{
    (void)state;
    assert_null(ratelimit_new(0, 10));
    assert_int_equal(ratelimit_take(NULL, "10.0.0.1", 0.0), 0);
}

/* Far more clients than slots: memory stays fixed, every new client starts with a full
 * bucket (nobody is refused for someone else's submissions), and a client that keeps
 * submitting stays limited while the others come and go around it. */
static void test_many_clients_keep_memory_fixed_and_the_hot_one_limited(void **state)
{
    struct ratelimit *rl = ratelimit_new(60, 2);
    char addr[32];

    (void)state;
    assert_int_equal(ratelimit_take(rl, "hot", 0.0), 0);
    assert_int_equal(ratelimit_take(rl, "hot", 0.0), 0);
    /* A microsecond apart: 16,384 steps refill the hot client by 0.016 tokens only. */
    for (int i = 1; i <= 4 * RATELIMIT_SLOTS; i++) {
        double now = i * 1e-6;
        snprintf(addr, sizeof(addr), "10.%d.%d.%d", i >> 16 & 255, i >> 8 & 255, i & 255);
        assert_int_equal(ratelimit_take(rl, addr, now), 0);
        if (i % 8 == 0) /* the hot client keeps trying, so its slot stays fresh */
            assert_int_not_equal(ratelimit_take(rl, "hot", now), 0);
    }
    ratelimit_free(rl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket_refills_a_token_a_second_bursts_of_3),
        cmocka_unit_test(test_slow_rate_retry_after_is_whole_seconds),
        cmocka_unit_test(test_zero_rate_turns_limiting_off),
        cmocka_unit_test(test_many_clients_keep_memory_fixed_and_the_hot_one_limited),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
