/*
 * test_pack.c - packing: validation errors, the lower bound, the greedy strategies'
 * documented numbers (server/planner/SOURCES.md#greedy-baselines), the checker's verdicts and
 * the metrics.
 * test_pack_exact.c covers the exact solver and the search heuristic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/mmcsv.h"
#include "planner/pack.h"
#include "planner/pack/pack_int.h"
#include "rng.h"

/* benchmarks/examples/input.12.csv (google/minimalloc): LB 12, solvable at capacity 12. */
static const struct pack_buffer ex12[5] = {
    {0, 3, 4}, {3, 9, 4}, {0, 9, 4}, {9, 21, 4}, {0, 21, 4},
};

/* The one-pass strategies of the production table (greedy ones and xla-default's pick of
 * two): the i-th of them, NULL past the last. */
static const char *one_pass_strategy(size_t i)
{
    for (size_t k = 0; k < pack_strategy_count(); k++) {
        const struct pack_strategy *s = pack_strategy_at(k);
        if (s->cls != PACK_CLASS_SEARCH && i-- == 0)
            return s->name;
    }
    return NULL;
}

static void test_validate_rejects_bad_buffers_naming_them(void **state)
{
    struct pack_buffer b[2] = {{0, 3, 4}, {1, 2, 9}};
    struct pack_problem p = {2, b, 8, 0};
    struct err e;
    uint64_t lb;

    (void)state;
    assert_int_equal(pack_validate(&p, &e), ERR_INVALID);
    assert_string_equal(e.msg, "buffer 1 alone needs 9 bytes, capacity is 8");
    assert_string_equal(e.where, "buffers[1]");
    b[1].size = 0;
    assert_int_equal(pack_validate(&p, &e), ERR_INVALID);
    assert_string_equal(e.msg, "buffer 1: size must be positive");
    b[1] = (struct pack_buffer){4, 4, 1};
    assert_int_equal(pack_validate(&p, &e), ERR_INVALID);
    assert_string_equal(e.msg, "buffer 1: lower 4 is not below upper 4 (lifetimes are half-open "
                               "[lower, upper))");
    b[1] = (struct pack_buffer){0, 1, (uint64_t)1 << 61};
    p.capacity = 0;
    assert_int_equal(pack_validate(&p, &e), ERR_OK);
    b[0].size = (uint64_t)1 << 62;
    assert_int_equal(pack_validate(&p, &e), ERR_OVERFLOW);
    b[0] = (struct pack_buffer){INT64_MIN, 0, 1};
    assert_int_equal(pack_validate(&p, &e), ERR_LIMIT);
    p.n = PACK_MAX_BUFFERS + 1;
    assert_int_equal(pack_validate(&p, &e), ERR_LIMIT);
    assert_int_equal(pack_lower_bound(&p, &lb, &e), ERR_LIMIT);
    assert_int_equal(pack_validate(NULL, &e), ERR_INVALID);
}

/* The traits the plan's portfolio reads: every single strategy is listed once, in
 * pack_strategy_names() order, and xla-default's rule keeps the first on a tie. */
static void test_strategy_table_lists_each_once_in_name_order(void **state)
{
    char names[256] = "";
    const struct pack_strategy *d = pack_strategy_find("xla-default");

    (void)state;
    for (size_t i = 0; i < pack_strategy_count(); i++) {
        const struct pack_strategy *s = pack_strategy_at(i);
        assert_ptr_equal(pack_strategy_find(s->name), s);
        strcat(strcat(names, i ? "," : ""), s->name);
        assert_int_equal(s->exhaustive, strcmp(s->name, "exact") == 0);
    }
    assert_string_equal(names, pack_strategy_names());
    assert_null(pack_strategy_at(pack_strategy_count()));
    assert_null(pack_strategy_find("all"));
    assert_int_equal(pack_strategy_find("best")->cls, PACK_CLASS_SEARCH);
    assert_int_equal(pack_strategy_find("tpuplan-search")->cls, PACK_CLASS_SEARCH);
    assert_int_equal(pack_strategy_find("tflite")->cls, PACK_CLASS_GREEDY);
    assert_int_equal(d->cls, PACK_CLASS_PICK);
    assert_string_equal(d->picks[0], "xla-spatial");
    assert_string_equal(d->picks[1], "xla-temporal");
    assert_int_equal(pack_pick(5, 5), 0);
    assert_int_equal(pack_pick(5, 4), 1);
    assert_int_equal(pack_pick(4, 5), 0);
}

static void test_run_rejects_unknown_strategy_and_bad_time_limit(void **state)
{
    struct pack_problem p = {5, ex12, 12, 0};
    struct pack_opts o = {0};
    struct pack_result r;
    struct err e;

    (void)state;
    assert_int_equal(pack_run(&p, "bogus", &o, &r, &e), ERR_NOTFOUND);
    assert_non_null(strstr(e.msg, "unknown packing strategy \"bogus\""));
    o.time_limit_s = -1;
    assert_int_equal(pack_run(&p, "tflite", &o, &r, &e), ERR_INVALID);
    o.time_limit_s = PACK_TIME_LIMIT_MAX + 1;
    assert_int_equal(pack_run(&p, "tflite", &o, &r, &e), ERR_INVALID);
    assert_string_equal(e.where, "time_limit");
}

static void test_lower_bound_is_the_max_live_sum_half_open(void **state)
{
    /* Half-open: [0,2) and [2,4) never coexist, so LB is max(5, 7) = 7, not 12. */
    const struct pack_buffer b[3] = {{0, 2, 5}, {2, 4, 7}, {5, 6, 1}};
    struct pack_problem p = {3, b, 0, 0};
    struct pack_problem q = {5, ex12, 0, 0};
    struct pack_problem empty = {0, NULL, 0, 0};
    struct err e;
    uint64_t lb = 99;

    (void)state;
    assert_int_equal(pack_lower_bound(&p, &lb, &e), ERR_OK);
    assert_int_equal(lb, 7);
    assert_int_equal(pack_lower_bound(&q, &lb, &e), ERR_OK);
    assert_int_equal(lb, 12);
    assert_int_equal(pack_lower_bound(&empty, &lb, &e), ERR_OK);
    assert_int_equal(lb, 0);
}

static void test_checker_rejects_overlap_misalignment_and_capacity(void **state)
{
    struct pack_problem p = {5, ex12, 12, 0};
    uint64_t good[5] = {0, 0, 4, 4, 8};
    uint64_t offs[5];
    struct err e;

    (void)state;
    assert_int_equal(pack_check(&p, good, 12, &e), ERR_OK);
    assert_int_equal(pack_check(&p, good, 11, &e), ERR_INVALID); /* wrong peak */
    assert_string_equal(e.msg, "reported peak 11, the packing's peak is 12");
    memcpy(offs, good, sizeof(offs));
    offs[2] = 2; /* b3 [0,9) at 2..6 overlaps b1 [0,3) at 0..4 */
    assert_int_equal(pack_check(&p, offs, 12, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "overlaps"));
    offs[2] = 4;
    offs[4] = 9; /* above the capacity */
    assert_int_equal(pack_check(&p, offs, 13, &e), ERR_INVALID);
    assert_string_equal(e.msg, "buffer 4: ends at 13, above the capacity 12");
    p.alignment = 8;
    assert_int_equal(pack_check(&p, good, 12, &e), ERR_INVALID);
    assert_string_equal(e.msg, "buffer 2: offset 4 is not a multiple of 8");
    /* Touching lifetimes ([0,3) then [3,9)) may share memory; equal offsets may not. */
    p.alignment = 0;
    memcpy(offs, good, sizeof(offs));
    offs[3] = 0;
    offs[4] = 4;
    offs[2] = 8;
    assert_int_equal(pack_check(&p, offs, 12, &e), ERR_OK);
    offs[4] = 8;
    assert_int_equal(pack_check(&p, offs, 12, &e), ERR_INVALID);
    offs[2] = UINT64_MAX; /* an unplaced buffer */
    assert_int_equal(pack_check(&p, offs, 12, &e), ERR_INVALID);
}

static void test_one_pass_strategies_pack_example12(void **state)
{
    struct pack_problem p = {5, ex12, 0, 0};
    struct pack_opts o = {0};
    struct err e;

    (void)state;
    assert_non_null(one_pass_strategy(0));
    for (size_t i = 0; one_pass_strategy(i) != NULL; i++) {
        struct pack_result r;
        assert_int_equal(pack_run(&p, one_pass_strategy(i), &o, &r, &e), ERR_OK);
        assert_string_equal(r.strategy, one_pass_strategy(i));
        assert_int_equal(r.lower_bound, 12);
        assert_true(r.peak >= 12);
        assert_true(r.solved);
        assert_int_equal(pack_check(&p, r.offsets, r.peak, &e), ERR_OK);
        pack_result_free(&r);
    }
}

/* Best fit versus lowest offset on a hand-made case: a 4-byte buffer between a 6-byte and
 * a 4-byte gap goes into the smaller gap under best fit, the lower one under first fit. */
static void test_best_fit_takes_the_smaller_gap_first_fit_the_lower(void **state)
{
    const struct pack_buffer b[5] = {
        {0, 1, 6}, /* 0: at 0, dies at 1 -> gap [0,6) */
        {0, 9, 2}, /* 1: at 6 */
        {0, 1, 4}, /* 2: at 8, dies at 1 -> gap [8,12) */
        {0, 9, 2}, /* 3: at 12 */
        {2, 9, 4}, /* 4: first fit -> 0, best fit -> 8 */
    };
    struct pack_problem p = {5, b, 0, 0};
    struct pack_opts o = {0};
    struct pack_result r;
    struct err e;

    (void)state;
    assert_int_equal(pack_run(&p, "first-fit", &o, &r, &e), ERR_OK);
    assert_int_equal(r.offsets[1], 6);
    assert_int_equal(r.offsets[3], 12);
    assert_int_equal(r.offsets[4], 0);
    pack_result_free(&r);
    /* Best fit in the same order takes the smaller (4-byte) gap. */
    {
        uint64_t offs[5], peak;
        assert_int_equal(pack_greedy(&p, PACK_ORDER_PROGRAM, PACK_FIT_BEST, NULL, offs, &peak, &e),
                         ERR_OK);
        assert_int_equal(offs[4], 8);
        assert_int_equal(peak, 14);
    }
}

static void test_metrics_of_example12_by_hand(void **state)
{
    struct pack_problem p = {5, ex12, 0, 0};
    /* b1 and b2 at 0 (they do not coexist), b3 at 4, b4 at 0, b5 at 8. */
    const uint64_t offs[5] = {0, 0, 4, 0, 8};
    struct pack_metrics m;
    struct err e;

    (void)state;
    assert_int_equal(pack_check(&p, offs, 12, &e), ERR_OK);
    assert_int_equal(pack_metrics_compute(&p, offs, &m, &e), ERR_OK);
    /* Boundaries 0, 3, 9, 21. */
    assert_int_equal(m.nsteps, 4);
    assert_int_equal(m.steps[0], 0);
    assert_int_equal(m.steps[1], 3);
    assert_int_equal(m.steps[2], 9);
    assert_int_equal(m.steps[3], 21);
    assert_int_equal(m.live_bytes[0], 12);
    assert_int_equal(m.heap_top[0], 12);
    assert_int_equal(m.free_bytes[0], 0);
    assert_int_equal(m.largest_gap[0], 0);
    assert_int_equal(m.live_bytes[2], 8); /* b4 at 0 and b5 at 8: gap [4,8) */
    assert_int_equal(m.heap_top[2], 12);
    assert_int_equal(m.free_bytes[2], 4);
    assert_int_equal(m.largest_gap[2], 4);
    assert_int_equal(m.live_bytes[3], 0);
    assert_int_equal(m.heap_top[3], 0);
    assert_int_equal(m.peak_segment, 0);
    assert_int_equal(m.npeak_buffers, 3);
    assert_int_equal(m.peak_buffers[0], 0);
    assert_int_equal(m.peak_buffers[1], 2);
    assert_int_equal(m.peak_buffers[2], 4);
    pack_metrics_free(&m);
    {
        /* A gap at the bottom counts: one buffer at offset 5. */
        const struct pack_buffer one[1] = {{0, 1, 3}};
        const uint64_t o1[1] = {5};
        struct pack_problem q = {1, one, 0, 0};
        assert_int_equal(pack_metrics_compute(&q, o1, &m, &e), ERR_OK);
        assert_int_equal(m.largest_gap[0], 5);
        assert_int_equal(m.free_bytes[0], 5);
        pack_metrics_free(&m);
    }
}

/* Property: on random instances every greedy answer passes the checker, is >= LB, and the
 * metrics agree with it (max heap_top = peak, max live = LB). */
static void test_greedy_answers_pass_the_checker_and_metrics_agree(void **state)
{
    uint64_t s = 7;
    struct err e;

    (void)state;
    for (int it = 0; it < 200; it++) {
        size_t n = 1 + rng_splitmix64(&s) % 60;
        struct pack_buffer b[60];
        struct pack_problem p = {n, b, 0, (it % 3 == 0) ? 8 : 0};
        struct pack_opts o = {0};
        for (size_t i = 0; i < n; i++) {
            b[i].lower = (int64_t)(rng_splitmix64(&s) % 40) - 10;
            b[i].upper = b[i].lower + 1 + (int64_t)(rng_splitmix64(&s) % 15);
            b[i].size = 1 + rng_splitmix64(&s) % 100;
        }
        for (size_t k = 0; one_pass_strategy(k) != NULL; k++) {
            struct pack_result r;
            struct pack_metrics m;
            uint64_t top = 0, live = 0;
            assert_int_equal(pack_run(&p, one_pass_strategy(k), &o, &r, &e), ERR_OK);
            assert_int_equal(pack_check(&p, r.offsets, r.peak, &e), ERR_OK);
            assert_true(r.peak >= r.lower_bound);
            assert_int_equal(pack_metrics_compute(&p, r.offsets, &m, &e), ERR_OK);
            for (size_t i = 0; i < m.nsteps; i++) {
                top = m.heap_top[i] > top ? m.heap_top[i] : top;
                live = m.live_bytes[i] > live ? m.live_bytes[i] : live;
                assert_true(m.largest_gap[i] <= m.free_bytes[i]);
            }
            assert_int_equal(top, r.peak);
            assert_int_equal(live, r.lower_bound);
            assert_int_equal(m.heap_top[m.peak_segment], r.peak);
            pack_metrics_free(&m);
            pack_result_free(&r);
        }
    }
}

/* The reference orders of pack_int.h, by comparison (the radix sorts must agree). */
static const struct pack_buffer *ref_bufs;
static enum pack_order ref_ord;
static int64_t ref_tmin, ref_tmax;

static int ref_cmp3(uint64_t a, uint64_t b)
{
    return (a > b) - (a < b);
}

static int ref_cmp(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    const struct pack_buffer *a = &ref_bufs[i], *b = &ref_bufs[j];
    uint64_t da = (uint64_t)(a->upper - a->lower), db = (uint64_t)(b->upper - b->lower);
    unsigned __int128 aa = (unsigned __int128)a->size * da, ab = (unsigned __int128)b->size * db;
    bool wa = a->lower == ref_tmin && a->upper == ref_tmax;
    bool wb = b->lower == ref_tmin && b->upper == ref_tmax;
    int c = 0;

    switch (ref_ord) {
    case PACK_ORDER_SPATIAL:
        c = ref_cmp3(b->size, a->size) ? ref_cmp3(b->size, a->size) : ref_cmp3(db, da);
        break;
    case PACK_ORDER_TEMPORAL:
        c = ref_cmp3(db, da) ? ref_cmp3(db, da) : ref_cmp3(b->size, a->size);
        break;
    case PACK_ORDER_AREA:
        c = (ab > aa) - (ab < aa);
        break;
    case PACK_ORDER_PROGRAM:
        c = (a->lower > b->lower) - (a->lower < b->lower);
        break;
    case PACK_ORDER_UPPER:
        c = (a->upper > b->upper) - (a->upper < b->upper);
        break;
    case PACK_ORDER_TFLITE:
        if (wa != wb)
            c = wa ? -1 : 1;
        else if (!wa)
            c = ref_cmp3(b->size, a->size) ? ref_cmp3(b->size, a->size)
                                           : (a->lower > b->lower) - (a->lower < b->lower);
        break;
    }
    return c ? c : ref_cmp3(i, j);
}

/* Property: every order equals a comparison sort's, on keys narrow and wide (sizes up to
 * 2^55, lifetimes spanning negative and positive steps, areas above 2^64). */
static void test_sort_orders_match_a_comparison_sort(void **state)
{
    uint64_t s = 11;
    struct err e;

    (void)state;
    for (int it = 0; it < 60; it++) {
        size_t n = 1 + rng_splitmix64(&s) % 300;
        struct pack_buffer b[300];
        uint32_t got[300] = {0}, want[300] = {0};
        unsigned shift = it % 4 == 0 ? 0 : (unsigned)(rng_splitmix64(&s) % 56);
        for (size_t i = 0; i < n; i++) {
            int64_t span = it % 2 ? ((int64_t)1 << 40) : 20;
            b[i].lower = (int64_t)(rng_splitmix64(&s) % (uint64_t)span) - span / 2;
            b[i].upper = b[i].lower + 1 + (int64_t)(rng_splitmix64(&s) % (uint64_t)span);
            b[i].size = 1 + (rng_splitmix64(&s) % 64 << shift) + rng_splitmix64(&s) % 3;
            if (rng_splitmix64(&s) % 8 == 0) /* duplicate keys: the index decides */
                b[i] = b[rng_splitmix64(&s) % (i + 1)];
        }
        ref_bufs = b;
        ref_tmin = INT64_MAX;
        ref_tmax = INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            ref_tmin = b[i].lower < ref_tmin ? b[i].lower : ref_tmin;
            ref_tmax = b[i].upper > ref_tmax ? b[i].upper : ref_tmax;
        }
        if (it % 3 == 0) { /* whole-run buffers for TFLite's first group */
            b[0].lower = b[n / 2].lower = ref_tmin;
            b[0].upper = b[n / 2].upper = ref_tmax;
        }
        struct pack_problem p = {n, b, 0, 0};
        for (int ord = PACK_ORDER_SPATIAL; ord <= PACK_ORDER_UPPER; ord++) {
            ref_ord = (enum pack_order)ord;
            for (size_t i = 0; i < n; i++)
                want[i] = (uint32_t)i;
            qsort(want, n, sizeof(want[0]), ref_cmp);
            assert_int_equal(pack_sort_order(&p, (enum pack_order)ord, got, &e), ERR_OK);
            assert_memory_equal(got, want, n * sizeof(got[0]));
        }
    }
}

static const uint64_t *ref_keys;

static int ref_key_cmp(const void *x, const void *y)
{
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    int c = ref_cmp3(ref_keys[i], ref_keys[j]);
    return c ? c : ref_cmp3(i, j);
}

/* Property: pack_sort_keys orders like a comparison sort on (key, index), for keys that
 * differ in a few low bits, in bits above 32 only, across all 64 bits, and not at all. */
static void test_sort_keys_match_a_comparison_sort(void **state)
{
    uint64_t s = 17;
    struct err e;

    (void)state;
    for (int it = 0; it < 80; it++) {
        size_t n = 1 + rng_splitmix64(&s) % 500;
        uint64_t key[500];
        uint32_t got[500] = {0}, want[500] = {0};
        for (size_t i = 0; i < n; i++) {
            uint64_t r = rng_splitmix64(&s);
            key[i] = it % 4 == 0   ? r % 8 << 9
                     : it % 4 == 1 ? (r % 1000) << 40 | 77
                     : it % 4 == 2 ? r
                                   : 12345;
            if (rng_splitmix64(&s) % 8 == 0) /* duplicate keys: the index decides */
                key[i] = key[rng_splitmix64(&s) % (i + 1)];
            want[i] = (uint32_t)i;
        }
        ref_keys = key;
        qsort(want, n, sizeof(want[0]), ref_key_cmp);
        assert_int_equal(pack_sort_keys(key, n, got, &e), ERR_OK);
        assert_memory_equal(got, want, n * sizeof(got[0]));
    }
}

static int ref_chunk_cmp(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return (a[0] > b[0]) - (a[0] < b[0]);
}

/* The greedy placement written the obvious way: O(n^2) gather, qsort, the fit rule. */
static uint64_t ref_greedy(const struct pack_problem *p, const uint32_t *order, enum pack_fit fit,
                           uint64_t *off)
{
    uint64_t(*ch)[2] = malloc(p->n * sizeof(*ch)), peak = 0;
    bool *placed = calloc(p->n, sizeof(*placed));
    uint64_t al = p->alignment > 1 ? p->alignment : 1;

    assert_non_null(ch);
    assert_non_null(placed);
    for (size_t i = 0; i < p->n; i++) {
        const struct pack_buffer *b = &p->bufs[order[i]];
        size_t k = 0;
        uint64_t cur = 0, best = UINT64_MAX, best_gap = UINT64_MAX;
        for (size_t j = 0; j < p->n; j++)
            if (placed[j] && p->bufs[j].lower < b->upper && p->bufs[j].upper > b->lower) {
                ch[k][0] = off[j];
                ch[k++][1] = off[j] + p->bufs[j].size;
            }
        qsort(ch, k, sizeof(ch[0]), ref_chunk_cmp);
        for (size_t j = 0; j < k && !(fit == PACK_FIT_LOWEST && best != UINT64_MAX); j++) {
            uint64_t start = (cur + al - 1) / al * al;
            if (ch[j][0] > cur && start + b->size <= ch[j][0] && ch[j][0] - cur < best_gap) {
                best_gap = ch[j][0] - cur;
                best = start;
            }
            cur = ch[j][1] > cur ? ch[j][1] : cur;
        }
        off[order[i]] = best != UINT64_MAX ? best : (cur + al - 1) / al * al;
        placed[order[i]] = true;
        if (off[order[i]] + b->size > peak)
            peak = off[order[i]] + b->size;
    }
    free(ch);
    free(placed);
    return peak;
}

/* Every order and fit: pack_greedy places exactly as ref_greedy does. */
static void assert_greedy_is_reference(const struct pack_problem *p)
{
    uint32_t *order = calloc(p->n, sizeof(*order));
    uint64_t *got = calloc(p->n, sizeof(*got)), *want = calloc(p->n, sizeof(*want)), peak;
    struct err e;

    assert_non_null(order);
    assert_non_null(got);
    assert_non_null(want);
    for (int ord = PACK_ORDER_SPATIAL; ord <= PACK_ORDER_TFLITE; ord++)
        for (int fit = 0; fit < 2; fit++) {
            assert_int_equal(pack_sort_order(p, (enum pack_order)ord, order, &e), ERR_OK);
            assert_int_equal(
                pack_greedy(p, (enum pack_order)ord, (enum pack_fit)fit, NULL, got, &peak, &e),
                ERR_OK);
            assert_int_equal(peak, ref_greedy(p, order, (enum pack_fit)fit, want));
            assert_memory_equal(got, want, p->n * sizeof(*got));
        }
    free(order);
    free(got);
    free(want);
}

/* Property: pack_greedy places exactly like ref_greedy in every order and fit, with few
 * and with hundreds of buffers live at once (the radix sort of the overlapping chunks). */
static void test_greedy_places_like_the_reference(void **state)
{
    uint64_t s = 5;

    (void)state;
    for (int it = 0; it < 12; it++) {
        size_t n = 50 + rng_splitmix64(&s) % 700;
        struct pack_buffer *b = calloc(n, sizeof(*b));
        int64_t life = it % 2 ? 400 : 12;
        struct pack_problem p = {n, b, 0, it % 3 == 0 ? 64 : 0};
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            b[i].lower = (int64_t)(i / 2) - 40;
            b[i].upper = b[i].lower + 1 + (int64_t)(rng_splitmix64(&s) % (uint64_t)life);
            b[i].size = 1 + rng_splitmix64(&s) % 5000;
        }
        assert_greedy_is_reference(&p);
        free(b);
    }
}

/*
 * Property over a few thousand random problems: pack_greedy places exactly like ref_greedy
 * in every order and fit. The shapes cover what the placement index treats apart: up to
 * 700 buffers (several blocks of positions, whose offset-sorted runs are merged), all
 * lifetimes equal, short ones, long ones beside short ones (blocks reached only through
 * the tree), alignments above 1 with sizes that are and are not multiples of it, and
 * offsets past 2^31 units (sizes around 2^40 bytes counted in units of 512).
 */
static void test_greedy_places_like_the_reference_on_every_shape(void **state)
{
    static const uint64_t aligns[] = {0, 1, 8, 64, 512};
    uint64_t s = 2026;

    (void)state;
    for (int it = 0; it < 2500; it++) {
        size_t n = it % 100 == 0 ? 200 + rng_splitmix64(&s) % 500 : 1 + rng_splitmix64(&s) % 90;
        struct pack_buffer *b = calloc(n, sizeof(*b));
        struct pack_problem p = {n, b, 0, aligns[rng_splitmix64(&s) % 5]};
        int shape = (int)(rng_splitmix64(&s) % 4), sizes = (int)(rng_splitmix64(&s) % 3);
        int64_t span = 1 + (int64_t)(rng_splitmix64(&s) % 60);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            int64_t lo = (int64_t)(rng_splitmix64(&s) % (uint64_t)span), len;
            if (shape == 0) { /* every lifetime the same */
                lo = 3;
                len = 5;
            } else if (shape == 1) {
                len = 1 + (int64_t)(rng_splitmix64(&s) % 4);
            } else if (shape == 2) {
                len = 1 + (int64_t)(rng_splitmix64(&s) % (uint64_t)(span + 1));
            } else { /* one in eight lives from the start to past the end */
                lo = rng_splitmix64(&s) % 8 == 0 ? -1 : lo;
                len = lo < 0 ? span + 2 : 1 + (int64_t)(rng_splitmix64(&s) % 3);
            }
            b[i].lower = lo;
            b[i].upper = lo + len;
            b[i].size = sizes == 0   ? 1 + rng_splitmix64(&s) % 100
                        : sizes == 1 ? 512 * (1 + rng_splitmix64(&s) % 16)
                                     : ((uint64_t)1 << 40) + 512 * (rng_splitmix64(&s) % 4096);
        }
        assert_greedy_is_reference(&p);
        free(b);
    }
}

/*
 * Property: a training step's shape, where the interval tree (pack_heur.c) does the work:
 * activations kept from the forward pass to the backward one (nested lifetimes around the
 * middle, so thousands of them share the tree's top nodes, several blocks of each of their
 * lists), beside short temporaries at every step and a few buffers live throughout.
 * pack_greedy places exactly like ref_greedy.
 */
static void test_greedy_places_activations_like_the_reference(void **state)
{
    uint64_t s = 7;

    (void)state;
    for (int it = 0; it < 2; it++) {
        size_t n = 2000, kept = 1500 + (size_t)it * 200;
        struct pack_buffer *b = calloc(n, sizeof(*b));
        struct pack_problem p = {n, b, 0, it == 1 ? 512 : 0};
        int64_t steps = (int64_t)n;
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            int64_t at = (int64_t)(rng_splitmix64(&s) % (uint64_t)(steps / 2));
            if (i < kept) { /* forward at `at`, read again at its mirror in the backward pass */
                b[i].lower = at;
                b[i].upper = steps - at - (int64_t)(rng_splitmix64(&s) % 3);
            } else if (i % 97 == 0) { /* a weight */
                b[i].lower = 0;
                b[i].upper = steps;
            } else {
                b[i].lower = (int64_t)(rng_splitmix64(&s) % (uint64_t)steps);
                b[i].upper = b[i].lower + 1 + (int64_t)(rng_splitmix64(&s) % 4);
            }
            b[i].size = it == 1 ? 4096 : 1 + rng_splitmix64(&s) % 100000;
        }
        assert_greedy_is_reference(&p);
        free(b);
    }
}

/*
 * Property: with buffers live over the whole program (weights; kept apart from the index as
 * the union of their chunks, and every placed chunk's union for their own queries),
 * pack_greedy still places like ref_greedy: a third to all of them global, placed early, late
 * or in between (sizes of one scale or many), and a union of all chunks too fragmented to
 * keep (size 1 at alignment 2: every chunk stands apart, so past 256 the globals' queries go
 * back to the index).
 */
static void test_greedy_places_weights_like_the_reference(void **state)
{
    uint64_t s = 99;

    (void)state;
    for (int it = 0; it < 60; it++) {
        size_t n = it % 10 == 0 ? 600 + rng_splitmix64(&s) % 300 : 1 + rng_splitmix64(&s) % 200;
        struct pack_buffer *b = calloc(n, sizeof(*b));
        bool sparse = it % 5 == 4;
        struct pack_problem p = {n, b, 0, sparse ? 2 : (it % 3 == 0 ? 64 : 0)};
        unsigned share = 1 + (unsigned)(it % 3); /* one in share is global */
        int64_t span = 2 + (int64_t)(rng_splitmix64(&s) % 40);
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            bool global = rng_splitmix64(&s) % share == 0 || it % 7 == 0;
            int64_t lo = (int64_t)(rng_splitmix64(&s) % (uint64_t)span);
            b[i].lower = global ? 0 : lo;
            b[i].upper = global ? span + 4 : lo + 1 + (int64_t)(rng_splitmix64(&s) % 4);
            b[i].size = sparse   ? 1
                        : it % 2 ? 1 + rng_splitmix64(&s) % 3000
                                 : 1 + rng_splitmix64(&s) % 7;
        }
        if (sparse) /* many live at once, so the union of all chunks passes 256 pieces */
            for (size_t i = 0; i < n; i++)
                b[i].upper = b[i].lower == 0 ? 2 * span + 8 : b[i].lower + span + 4;
        assert_greedy_is_reference(&p);
        free(b);
    }
}

/* server/planner/SOURCES.md#greedy-baselines: best-fit peaks of the MiniMalloc challenging
 * instances in
 * the XLA spatial, temporal and area orders and TFLite's order (skipped without data). */
static void test_greedy_peaks_match_the_documented_figures(void **state)
{
    static const struct {
        char name;
        uint64_t lb, spatial, temporal, area, tflite;
    } rows[] = {
        {'A', 1048576, 1374208, 1526784, 2150400, 1374208},
        {'D', 986112, 1304576, 1463296, 1401856, 1315840},
        {'G', 1048576, 1428480, 1470464, 1473536, 1396736},
        {'J', 989184, 1333248, 1593344, 1445888, 1333248},
        {'K', 1048576, 1397760, 1870848, 2630656, 1391616},
    };
    const char *dir = getenv("TPUPLAN_MINIMALLOC_DIR");

    (void)state;
    if (dir == NULL)
        dir = "../shared/data/minimalloc/challenging";
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char path[512], *text;
        FILE *f;
        long len;
        struct mmcsv m;
        struct err e;
        const char *algos[4] = {"xla-spatial", "xla-temporal", "xla-area", "tflite"};
        uint64_t want[4] = {rows[i].spatial, rows[i].temporal, rows[i].area, rows[i].tflite};

        snprintf(path, sizeof(path), "%s/%c.1048576.csv", dir, rows[i].name);
        f = fopen(path, "rb");
        if (f == NULL) {
            print_message("# skipped: %s not found\n", path);
            return;
        }
        fseek(f, 0, SEEK_END);
        len = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = malloc((size_t)len + 1);
        assert_non_null(text);
        assert_int_equal(fread(text, 1, (size_t)len, f), (size_t)len);
        fclose(f);
        assert_int_equal(mmcsv_parse(text, (size_t)len, 10000, &m, &e), ERR_OK);
        struct pack_problem p = {m.n, m.bufs, 1048576, 0};
        for (int k = 0; k < 4; k++) {
            struct pack_result r;
            struct pack_opts o = {0};
            assert_int_equal(pack_run(&p, algos[k], &o, &r, &e), ERR_OK);
            assert_int_equal(r.lower_bound, rows[i].lb);
            assert_int_equal(r.peak, want[k]);
            assert_false(r.solved);
            pack_result_free(&r);
        }
        mmcsv_free(&m);
        free(text);
    }
}

/* The reductions: in ex12 only [0,21) overlaps every other buffer ([0,9) misses [9,21));
 * without it, nothing is live across step 9, which splits the rest in two components. */
static void test_reduce_stacks_universal_buffers_and_splits_components(void **state)
{
    struct pack_problem p = {5, ex12, 0, 0};
    struct pack_reduction r;
    struct err e;

    (void)state;
    assert_int_equal(pack_reduce(&p, &r, &e), ERR_OK);
    assert_int_equal(r.nuniv, 1);
    assert_int_equal(r.univ[0], 4);
    assert_int_equal(r.base, 4);
    assert_int_equal(r.ncomp, 2);
    /* [0,3) [3,9) [0,9) by lower, then [9,21). */
    assert_int_equal(r.comp_off[1], 3);
    assert_int_equal(r.comp_off[2], 4);
    assert_int_equal(r.comp_mem[3], 3);
    pack_reduction_free(&r);

    /* A nested chain: every buffer overlaps every other, so all are universal. */
    const struct pack_buffer chain[4] = {{0, 10, 2}, {1, 9, 3}, {2, 8, 4}, {3, 7, 5}};
    p = (struct pack_problem){4, chain, 0, 0};
    assert_int_equal(pack_reduce(&p, &r, &e), ERR_OK);
    assert_int_equal(r.nuniv, 4);
    assert_int_equal(r.base, 14);
    assert_int_equal(r.ncomp, 0);
    pack_reduction_free(&r);

    /* Sizes that are not multiples of the alignment: nothing is stacked. */
    p = (struct pack_problem){4, chain, 0, 4};
    assert_int_equal(pack_reduce(&p, &r, &e), ERR_OK);
    assert_int_equal(r.nuniv, 0);
    assert_int_equal(r.ncomp, 1);
    pack_reduction_free(&r);
}

/*
 * A training step's shape (the service benchmark's model): 3 of 4 buffers live for the
 * whole program, the activations in a 56-step window. The reduction stacks the former and
 * leaves 250 buffers to search: the search reaches the lower bound, proven, and the greedy
 * seeds alone do not.
 */
static void test_reduced_training_step_reaches_the_lower_bound(void **state)
{
    enum { N = 1000 };
    struct pack_buffer *b = calloc(N, sizeof(*b));
    struct pack_opts o = {.time_limit_s = 20, .threads = 2, .seed = 1};
    struct pack_result r, g;
    struct err e;
    uint64_t stack = 0;

    (void)state;
    assert_non_null(b);
    for (int i = 0; i < N; i++) {
        uint64_t elems = (uint64_t)(128 * (1 + i % 7)) * (uint64_t)(256 * (1 + i % 5));
        b[i].size = elems * (i % 3 ? 2 : 4);
        b[i].lower = i % 4 == 3 ? i % 50 : 0;
        b[i].upper = i % 4 == 3 ? i % 50 + 1 + i % 7 : 57;
        stack += i % 4 == 3 ? 0 : b[i].size;
    }
    struct pack_problem p = {N, b, 0, 512};
    assert_int_equal(pack_run(&p, "xla-default", &o, &g, &e), ERR_OK);
    assert_true(g.peak > g.lower_bound);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(pack_run(&p, k ? "exact" : "tpuplan-search", &o, &r, &e), ERR_OK);
        assert_int_equal(pack_check(&p, r.offsets, r.peak, &e), ERR_OK);
        assert_int_equal(r.peak, r.lower_bound);
        assert_true(r.proven_optimal);
        /* The stack: the whole-program buffers in index order at the bottom, every
         * activation above them. */
        uint64_t at = 0;
        for (int i = 0; i < N; i++)
            if (i % 4 != 3) {
                assert_int_equal(r.offsets[i], at);
                at += b[i].size;
            } else {
                assert_true(r.offsets[i] >= stack);
            }
        pack_result_free(&r);
    }
    /* At a capacity equal to the lower bound: solved, with its time inside the run. */
    p.capacity = g.lower_bound;
    assert_int_equal(pack_run(&p, "exact", &o, &r, &e), ERR_OK);
    assert_true(r.solved && r.proven_optimal);
    assert_true(r.solved_seconds >= 0 && r.solved_seconds <= r.seconds);
    pack_result_free(&r);
    pack_result_free(&g);
    free(b);
}

/* Property: on sparse steps spread over the whole range (the index ranks them), with many
 * equal and touching lifetimes and sizes of every scale, pack_greedy still places like
 * ref_greedy, and the lower bound equals the largest live sum at any buffer's start,
 * counted the obvious way. */
static void test_greedy_places_sparse_steps_like_the_reference(void **state)
{
    static const int64_t steps[] = {
        -((int64_t)1 << 62), -1000000007,           -3, 0, 1, 2, 999999937,
        (int64_t)1 << 40,    ((int64_t)1 << 62) - 1};
    const size_t nsteps = sizeof(steps) / sizeof(steps[0]);
    uint64_t s = 11;
    struct err e;

    (void)state;
    for (int it = 0; it < 8; it++) {
        size_t n = 20 + rng_splitmix64(&s) % 300;
        struct pack_buffer *b = calloc(n, sizeof(*b));
        uint64_t lb, want_lb = 0;
        struct pack_problem p = {n, b, 0, it % 2 ? 16 : 0};
        assert_non_null(b);
        for (size_t i = 0; i < n; i++) {
            size_t lo = rng_splitmix64(&s) % (nsteps - 1);
            size_t hi =
                lo + 1 + rng_splitmix64(&s) % (it % 4 < 2 && lo + 2 < nsteps ? 2 : nsteps - 1 - lo);
            /* Sizes: small (32-bit units), multiples of 256 (the placement counts in larger
             * units), and multiples of 256 above 2^40 (64-bit units of 256 bytes). */
            uint64_t size = it % 3 == 0   ? 1 + rng_splitmix64(&s) % 300
                            : it % 3 == 1 ? 256 * (1 + rng_splitmix64(&s) % 40)
                                          : ((uint64_t)1 << 40) + 256 * (rng_splitmix64(&s) % 1000);
            b[i] = (struct pack_buffer){steps[lo], steps[hi], size};
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t live = 0;
            for (size_t j = 0; j < n; j++)
                if (b[j].lower <= b[i].lower && b[j].upper > b[i].lower)
                    live += b[j].size;
            want_lb = live > want_lb ? live : want_lb;
        }
        assert_int_equal(pack_lower_bound(&p, &lb, &e), ERR_OK);
        assert_int_equal(lb, want_lb);
        assert_greedy_is_reference(&p);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validate_rejects_bad_buffers_naming_them),
        cmocka_unit_test(test_strategy_table_lists_each_once_in_name_order),
        cmocka_unit_test(test_run_rejects_unknown_strategy_and_bad_time_limit),
        cmocka_unit_test(test_lower_bound_is_the_max_live_sum_half_open),
        cmocka_unit_test(test_checker_rejects_overlap_misalignment_and_capacity),
        cmocka_unit_test(test_one_pass_strategies_pack_example12),
        cmocka_unit_test(test_best_fit_takes_the_smaller_gap_first_fit_the_lower),
        cmocka_unit_test(test_metrics_of_example12_by_hand),
        cmocka_unit_test(test_greedy_answers_pass_the_checker_and_metrics_agree),
        cmocka_unit_test(test_greedy_peaks_match_the_documented_figures),
        cmocka_unit_test(test_sort_orders_match_a_comparison_sort),
        cmocka_unit_test(test_sort_keys_match_a_comparison_sort),
        cmocka_unit_test(test_greedy_places_like_the_reference),
        cmocka_unit_test(test_greedy_places_like_the_reference_on_every_shape),
        cmocka_unit_test(test_greedy_places_weights_like_the_reference),
        cmocka_unit_test(test_greedy_places_activations_like_the_reference),
        cmocka_unit_test(test_reduce_stacks_universal_buffers_and_splits_components),
        cmocka_unit_test(test_reduced_training_step_reaches_the_lower_bound),
        cmocka_unit_test(test_greedy_places_sparse_steps_like_the_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
