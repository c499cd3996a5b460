/*
 * test_pack_exact.c - the exact solver and the search heuristic: optimality against an
 * independent brute force on tiny instances, never worse than any heuristic, every answer
 * through the checker, capacity questions, deadlines and determinism.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/pack.h"
#include "planner/pack/pack_int.h"
#include "../bench/perfect.h"
#include "pack_brute.h"
#include "rng.h"

/* The heuristics of the production table (every single strategy that is not exhaustive):
 * the i-th of them, NULL past the last. */
static const char *heuristic(size_t i)
{
    for (size_t k = 0; k < pack_strategy_count(); k++) {
        const struct pack_strategy *s = pack_strategy_at(k);
        if (!s->exhaustive && i-- == 0)
            return s->name;
    }
    return NULL;
}

/* The search strategies of the production table, "best" last: the i-th, NULL past it. */
static const char *search_strategy(size_t i)
{
    for (size_t k = 0; k < pack_strategy_count(); k++) {
        const struct pack_strategy *s = pack_strategy_at(k);
        if (s->cls == PACK_CLASS_SEARCH && i-- == 0)
            return s->name;
    }
    return i == 0 ? pack_strategy_find("best")->name : NULL;
}

static void random_instance(uint64_t *s, struct pack_buffer *b, size_t n, int64_t horizon,
                            int64_t maxlife, uint64_t maxsize)
{
    for (size_t i = 0; i < n; i++) {
        b[i].lower = (int64_t)(rng_splitmix64(s) % (uint64_t)horizon);
        b[i].upper = b[i].lower + 1 + (int64_t)(rng_splitmix64(s) % (uint64_t)maxlife);
        b[i].size = 1 + rng_splitmix64(s) % maxsize;
    }
}

static void run_checked(const struct pack_problem *p, const char *algo, const struct pack_opts *o,
                        struct pack_result *r)
{
    struct err e;
    struct pack_problem q = *p;

    assert_int_equal(pack_run(p, algo, o, r, &e), ERR_OK);
    q.capacity = r->solved ? p->capacity : 0;
    assert_int_equal(pack_check(&q, r->offsets, r->peak, &e), ERR_OK);
    assert_true(r->peak >= r->lower_bound);
    assert_string_equal(r->strategy, algo);
    /* Solved: when, within the strategy's time; not solved: never (-1). */
    if (r->solved)
        assert_true(r->solved_seconds >= 0 && r->solved_seconds <= r->seconds);
    else
        assert_true(r->solved_seconds == -1);
}

static void test_exact_proves_example12_at_its_lower_bound(void **state)
{
    /* benchmarks/examples/input.12.csv, capacity 12 = LB */
    const struct pack_buffer b[5] = {{0, 3, 4}, {3, 9, 4}, {0, 9, 4}, {9, 21, 4}, {0, 21, 4}};
    struct pack_problem p = {5, b, 12, 0};
    struct pack_opts o = {.time_limit_s = 2, .threads = 2};
    struct pack_result r;

    (void)state;
    run_checked(&p, "exact", &o, &r);
    assert_int_equal(r.peak, 12);
    assert_true(r.solved);
    assert_true(r.proven_optimal);
    assert_string_equal(r.strategy, "exact");
    pack_result_free(&r);
}

/* Property: on 300 tiny instances the exact optimum equals the brute force and is proven,
 * with one and two threads, and a capacity one below it is answered "does not fit". */
static void test_exact_optimum_equals_the_brute_force(void **state)
{
    uint64_t s = 11;

    (void)state;
    for (int it = 0; it < 300; it++) {
        size_t n = 1 + rng_splitmix64(&s) % 7;
        struct pack_buffer b[7];
        struct pack_opts o = {.time_limit_s = 5, .threads = 1 + (unsigned)(it % 2), .seed = 3};
        struct pack_result r;
        uint64_t opt;

        random_instance(&s, b, n, 10, 6, 9);
        opt = pack_brute_force(b, n);
        struct pack_problem p = {n, b, 0, 0};
        run_checked(&p, "exact", &o, &r);
        assert_int_equal(r.peak, opt);
        assert_true(r.proven_optimal);
        pack_result_free(&r);
        /* Capacity = optimum: solved; optimum - 1 (when >= every size): not solved. */
        p.capacity = opt;
        run_checked(&p, "exact", &o, &r);
        assert_true(r.solved);
        assert_int_equal(r.peak, opt);
        pack_result_free(&r);
        uint64_t maxsize = 0;
        for (size_t i = 0; i < n; i++)
            maxsize = b[i].size > maxsize ? b[i].size : maxsize;
        if (opt - 1 >= maxsize && opt > 1) {
            p.capacity = opt - 1;
            run_checked(&p, "exact", &o, &r);
            assert_false(r.solved);
            pack_result_free(&r);
        }
    }
}

/*
 * Property: each preorder of the portfolio on its own is sound and complete. On 150 tiny
 * instances (a third with sizes in units of 1024, so heights step by the gcd), a probe at
 * the brute-force optimum finds a packing the checker accepts, and one unit below it
 * exhausts its tree: a proof, whatever preorder (static or re-ranked per part) and
 * however the timeline decomposes on the way.
 */
static void test_every_preorder_is_sound_and_complete(void **state)
{
    uint64_t s = 29, off[7];
    struct err e;

    (void)state;
    for (int it = 0; it < 150; it++) {
        size_t n = 1 + rng_splitmix64(&s) % 7;
        struct pack_buffer b[7];
        struct pack_probe *pr = NULL;
        uint64_t opt, g;
        int res;

        random_instance(&s, b, n, 12, 7, 9);
        if (it % 3 == 0)
            for (size_t i = 0; i < n; i++)
                b[i].size *= 1024;
        opt = pack_brute_force(b, n);
        struct pack_problem p = {n, b, 0, 0};
        assert_int_equal(pack_probe_new(&p, &pr, &e), ERR_OK);
        assert_non_null(pr);
        g = pack_probe_unit(pr);
        assert_int_equal(opt % g, 0); /* the gcd of the sizes */
        assert_int_equal(g % (it % 3 == 0 ? 1024 : 1), 0);
        for (unsigned h = 0; h < 6; h++) {
            struct pack_budget bud = {clock_now() + 10, 0};
            struct pack_incumbent inc = {off, 0, false, -1, 0, NULL};
            assert_int_equal(pack_probe_run(pr, opt, h, 1000000, &bud, &inc, &res, &e), ERR_OK);
            assert_int_equal(res, 1);
            assert_int_equal(inc.peak, opt);
            assert_int_equal(pack_check(&p, off, inc.peak, &e), ERR_OK);
            assert_int_equal(pack_probe_run(pr, opt - g, h, 1000000, &bud, &inc, &res, &e), ERR_OK);
            assert_int_equal(res, 0);
        }
        pack_probe_free(pr);
    }
}

/* Property: with alignment, sizes multiple of 1024 (the gcd scaling) and a few dozen
 * buffers, the search strategies are never worse than the greedy strategies they start
 * from (pack_solve.c's seeds: spatial, temporal and TFLite orders; so xla-default too),
 * whatever the clock does; once exact or best prove their peak optimal, it is at most every
 * strategy's. Nothing more can be promised: under a 0.2 s budget on a loaded machine the
 * search's share inside exact may be cut shorter than the search alone gets. */
static void test_searches_are_never_worse_than_their_seeds(void **state)
{
    static const char *const seeds[] = {"xla-spatial", "xla-temporal", "xla-default", "tflite"};
    uint64_t s = 5;

    (void)state;
    for (size_t q = 0; q < sizeof(seeds) / sizeof(seeds[0]); q++)
        assert_false(pack_strategy_find(seeds[q])->exhaustive); /* each one is a heuristic */
    for (int it = 0; it < 12; it++) {
        size_t n = 10 + rng_splitmix64(&s) % 30;
        struct pack_buffer b[40];
        struct pack_opts o = {.time_limit_s = 0.2, .threads = 2, .seed = (uint64_t)it};
        struct pack_result r, x;
        uint64_t seeded = UINT64_MAX, any = UINT64_MAX;

        random_instance(&s, b, n, 30, 12, 64);
        if (it % 2 == 0)
            for (size_t i = 0; i < n; i++)
                b[i].size *= 1024;
        struct pack_problem p = {n, b, 0, it % 3 == 0 ? 8 : 0};
        for (size_t k = 0; heuristic(k) != NULL; k++) {
            bool seed = false;
            for (size_t q = 0; q < sizeof(seeds) / sizeof(seeds[0]); q++)
                seed |= strcmp(heuristic(k), seeds[q]) == 0;
            run_checked(&p, heuristic(k), &o, &r);
            if (seed && r.peak < seeded)
                seeded = r.peak;
            any = r.peak < any ? r.peak : any;
            pack_result_free(&r);
        }
        for (size_t k = 0; search_strategy(k) != NULL; k++) {
            run_checked(&p, search_strategy(k), &o, &x);
            assert_true(x.peak <= seeded);
            if (x.proven_optimal)
                assert_true(x.peak <= any);
            pack_result_free(&x);
        }
    }
}

/* A hard instance with a short time limit returns in time with a valid packing. */
static void test_hard_instance_returns_by_the_deadline(void **state)
{
    uint64_t s = 99;
    size_t n = 400;
    struct pack_buffer *b = malloc(n * sizeof(*b));
    struct pack_opts o = {.time_limit_s = 0.2, .threads = 2, .seed = 1};
    struct pack_result r;

    (void)state;
    assert_non_null(b);
    random_instance(&s, b, n, 200, 40, 1000);
    struct pack_problem p = {n, b, 1, 0};
    p.capacity = 0;
    run_checked(&p, "exact", &o, &r);
    assert_true(r.seconds < 2.0);
    pack_result_free(&r);
    run_checked(&p, "tpuplan-search", &o, &r);
    assert_true(r.seconds < 2.0);
    pack_result_free(&r);
    free(b);
}

/* Same seed and thread count, same answer (node-count driven, not timing driven). */
static void test_same_seed_and_threads_give_the_same_answer(void **state)
{
    uint64_t s = 1234;
    struct pack_buffer b[30];
    struct pack_opts o = {.time_limit_s = 10, .threads = 2, .seed = 7};
    struct pack_result r1, r2;

    (void)state;
    random_instance(&s, b, 30, 25, 10, 50);
    struct pack_problem p = {30, b, 0, 0};
    run_checked(&p, "exact", &o, &r1);
    run_checked(&p, "exact", &o, &r2);
    assert_true(r1.proven_optimal);
    assert_int_equal(r1.peak, r2.peak);
    assert_memory_equal(r1.offsets, r2.offsets, 30 * sizeof(uint64_t));
    pack_result_free(&r1);
    pack_result_free(&r2);
}

/* Capacity below the lower bound: not solved, quickly, with the incumbent's packing. */
static void test_capacity_below_lower_bound_is_proven_unsolved(void **state)
{
    const struct pack_buffer b[3] = {{0, 4, 5}, {1, 3, 5}, {2, 6, 5}};
    struct pack_problem p = {3, b, 12, 0};
    struct pack_opts o = {.time_limit_s = 1};
    struct pack_result r;

    (void)state;
    run_checked(&p, "exact", &o, &r);
    assert_int_equal(r.lower_bound, 15);
    assert_false(r.solved);
    assert_int_equal(r.peak, 15);
    assert_true(r.proven_optimal);
    assert_true(r.solved_seconds < 0);
    pack_result_free(&r);
    run_checked(&p, "best", &o, &r);
    assert_false(r.solved);
    pack_result_free(&r);
}

/* The generator's promise: the pieces where they were cut are a packing of peak capacity,
 * every step is fully live (LB = capacity), and the same seed gives the same instance. */
static void test_perfect_instances_pack_at_their_capacity(void **state)
{
    struct pack_buffer b[300], b2[300];
    uint64_t off[300], lb = 0;
    struct err e;
    (void)state;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        size_t n = 50 + (size_t)(seed * 12);
        struct pack_problem p = {.n = n, .bufs = b, .capacity = PERFECT_CAPACITY};
        assert_int_equal(perfect_instance(seed, n, PERFECT_CAPACITY, PERFECT_HORIZON, b, off), 0);
        assert_int_equal(pack_check(&p, off, PERFECT_CAPACITY, &e), ERR_OK);
        assert_int_equal(pack_lower_bound(&p, &lb, &e), ERR_OK);
        assert_int_equal(lb, PERFECT_CAPACITY);
        assert_int_equal(perfect_instance(seed, n, PERFECT_CAPACITY, PERFECT_HORIZON, b2, NULL), 0);
        assert_memory_equal(b, b2, n * sizeof(*b));
    }
    /* A 1024-byte rectangle one step long cannot be cut into two pieces. */
    assert_int_equal(perfect_instance(1, 2, 1024, 1, b, NULL), -1);
}

/*
 * --goal: fit stops at the first packing within the capacity, min minimises and stops at
 * the lower bound. On small perfect packings (LB = optimum = 2^20) with twice that as the
 * capacity, the greedy seed already fits: fit returns it, searching nothing, while min
 * searches on to the lower bound and proves it, long before its time limit.
 */
static void test_goal_fit_stops_within_capacity_min_at_bound(void **state)
{
    struct pack_buffer b[48];
    struct err e;
    int searched_below = 0;
    (void)state;
    assert_string_equal(pack_goal_name(PACK_GOAL_FIT), "fit");
    for (uint64_t seed = 1; seed <= 12; seed++) {
        struct pack_problem p = {.n = 48, .bufs = b, .capacity = 2 * PERFECT_CAPACITY};
        struct pack_opts o = {.time_limit_s = 20, .threads = 2, .seed = 1};
        struct pack_result fit, min, greedy;
        assert_int_equal(perfect_instance(seed, 48, PERFECT_CAPACITY, 100, b, NULL), 0);
        o.goal = PACK_GOAL_FIT;
        assert_int_equal(pack_run(&p, "exact", &o, &fit, &e), ERR_OK);
        o.goal = PACK_GOAL_MIN;
        assert_int_equal(pack_run(&p, "exact", &o, &min, &e), ERR_OK);
        assert_int_equal(pack_run(&p, "xla-spatial", &o, &greedy, &e), ERR_OK);
        assert_true(fit.solved && fit.peak <= p.capacity);
        assert_int_equal(fit.nodes, 0); /* answered by the greedy seeds */
        assert_true(fit.peak <= greedy.peak);
        assert_int_equal(min.peak, PERFECT_CAPACITY);
        assert_true(min.proven_optimal);
        assert_true(min.seconds < 10);
        searched_below += fit.peak > PERFECT_CAPACITY && min.nodes > 0;
        pack_result_free(&fit);
        pack_result_free(&min);
        pack_result_free(&greedy);
    }
    assert_true(searched_below >= 6); /* fit left most of them above the optimum */

    /* min with the capacity at the lower bound: returns there, proven, well before 20 s. */
    struct pack_problem p = {.n = 48, .bufs = b, .capacity = PERFECT_CAPACITY};
    struct pack_opts o = {.time_limit_s = 20, .threads = 2};
    struct pack_result r;
    assert_int_equal(perfect_instance(3, 48, PERFECT_CAPACITY, 100, b, NULL), 0);
    assert_int_equal(pack_run(&p, "best", &o, &r, &e), ERR_OK);
    assert_true(r.solved && r.proven_optimal && r.peak == PERFECT_CAPACITY && r.seconds < 10);
    pack_result_free(&r);
    assert_int_equal(pack_goal_parse("fit", &o.goal), 0);
    assert_int_equal(o.goal, PACK_GOAL_FIT);
    assert_int_equal(pack_goal_parse("max", &o.goal), -1);
}

/*
 * The search's stacks are bounded (pack_exact.c, Memory). A chain of 1,200 one-unit buffers,
 * each overlapping the next ([2j, 2j + 3)), does not decompose while a dive places it, so
 * every open node keeps its candidate list, and the dynamic preorders re-rank the rest of
 * the chain at each split: both stacks grow with the square of the depth (about n^2 / 4
 * entries by the bottom), past their bound of 262,144 entries (the floor: 8 per entry of the
 * static data is less). A probe with a static preorder stops on the candidate stack, one
 * with a dynamic preorder on the undo trail, each with ERR_LIMIT naming it; the exact solver
 * stops after its first round, and the search heuristic's probes and exact phase stop, with
 * the incumbent they were given, unproven, long before their deadline.
 */
static void test_chain_outgrows_the_stacks_and_the_search_gives_up(void **state)
{
    enum { N = 1200 };
    struct pack_buffer *b = malloc(N * sizeof(*b));
    uint64_t *off = malloc(N * sizeof(*off));
    struct pack_problem p = {N, b, 0, 0};
    struct pack_opts o = {.threads = 2};
    struct pack_probe *pr = NULL;
    struct err e;
    int res = 2;

    (void)state;
    assert_non_null(b);
    assert_non_null(off);
    for (size_t j = 0; j < N; j++)
        b[j] = (struct pack_buffer){(int64_t)(2 * j), (int64_t)(2 * j + 3), 1};
    assert_int_equal(pack_probe_new(&p, &pr, &e), ERR_OK);
    assert_non_null(pr);
    for (unsigned h = 0; h < 6; h++) { /* preorders 2, 4 and 5 are static (pack_exact.c) */
        struct pack_budget bud = {clock_now() + 600, 0};
        struct pack_incumbent inc = {off, 0, false, -1, 0, NULL};
        bool dynamic = h != 2 && h != 4 && h != 5;
        assert_int_equal(pack_probe_run(pr, 2, h, UINT64_MAX, &bud, &inc, &res, &e), ERR_LIMIT);
        assert_int_equal(res, -1);
        assert_non_null(strstr(e.msg, dynamic ? "undo trail" : "candidate stack"));
        assert_non_null(strstr(e.msg, "bound of 262144 entries"));
    }
    pack_probe_free(pr);
    for (size_t j = 0; j < N; j++)
        off[j] = j; /* stacked: peak N */
    struct pack_incumbent inc = {off, N, false, -1, 0, NULL};
    struct pack_budget bud = {clock_now() + 600, 0};
    double t0 = clock_now();
    assert_int_equal(pack_exact(&p, &o, &bud, 2, &inc, &e), ERR_OK);
    assert_false(inc.proven);
    assert_int_equal(inc.peak, N);
    assert_int_equal(pack_search(&p, &o, &bud, &inc, &e), ERR_OK);
    assert_true(clock_now() - t0 < 60);
    assert_int_equal(inc.peak, N);
    assert_int_equal(pack_check(&p, off, N, &e), ERR_OK);
    free(b);
    free(off);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_proves_example12_at_its_lower_bound),
        cmocka_unit_test(test_exact_optimum_equals_the_brute_force),
        cmocka_unit_test(test_every_preorder_is_sound_and_complete),
        cmocka_unit_test(test_searches_are_never_worse_than_their_seeds),
        cmocka_unit_test(test_hard_instance_returns_by_the_deadline),
        cmocka_unit_test(test_same_seed_and_threads_give_the_same_answer),
        cmocka_unit_test(test_capacity_below_lower_bound_is_proven_unsolved),
        cmocka_unit_test(test_perfect_instances_pack_at_their_capacity),
        cmocka_unit_test(test_goal_fit_stops_within_capacity_min_at_bound),
        cmocka_unit_test(test_chain_outgrows_the_stacks_and_the_search_gives_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
