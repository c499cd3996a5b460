/*
 * test_vec.c - the growable array with a required maximum (base/vec.h): pushes up to the
 * maximum and ERR_LIMIT one past it with the vec untouched, the capacities it doubles
 * through, reserve, take and reuse, a maximum held to what SIZE_MAX bytes can hold, and an
 * allocation that fails.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/base/vec.h"

/* ASan aborts on an allocation request past its limit instead of returning NULL. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

struct row {
    uint64_t a;
    uint32_t b;
};

/* 100 rows with a maximum of 100: every push in order, the 101st refused with the rows,
 * count and capacity as they were; the capacity doubles from VEC_FIRST and stops at the
 * maximum (16, 32, 64, then 100, not 128). */
static void test_push_stops_at_the_maximum_leaving_the_vec_as_it_was(void **state)
{
    struct vec v;
    struct row r;
    size_t caps[8] = {0}, ncaps = 0;

    (void)state;
    vec_init(&v, sizeof(struct row), 100);
    assert_null(v.data);
    assert_int_equal(v.n, 0);
    for (uint32_t i = 0; i < 100; i++) {
        r = (struct row){(uint64_t)i << 40, i};
        assert_int_equal(vec_push(&v, &r), ERR_OK);
        if (ncaps == 0 || caps[ncaps - 1] != v.cap)
            caps[ncaps++] = v.cap;
    }
    assert_int_equal(ncaps, 4);
    assert_int_equal(caps[0], VEC_FIRST);
    assert_int_equal(caps[1], 32);
    assert_int_equal(caps[2], 64);
    assert_int_equal(caps[3], 100);
    void *data = v.data;
    r = (struct row){7, 7};
    assert_int_equal(vec_push(&v, &r), ERR_LIMIT);
    assert_int_equal(vec_reserve(&v, 101), ERR_LIMIT);
    assert_ptr_equal(v.data, data);
    assert_int_equal(v.n, 100);
    assert_int_equal(v.cap, 100);
    for (uint32_t i = 0; i < 100; i++) {
        const struct row *q = vec_at(&v, i);
        assert_true(q->a == (uint64_t)i << 40);
        assert_int_equal(q->b, i);
    }
    vec_free(&v);
    assert_null(v.data);
    assert_int_equal(v.n + v.cap, 0);
}

/* Reserve makes room without counting; within the capacity it allocates nothing; a
 * maximum of 0 refuses the first element. */
static void test_reserve_makes_room_without_counting(void **state)
{
    struct vec v;
    uint32_t x = 5;

    (void)state;
    vec_init(&v, sizeof(uint32_t), 1000);
    assert_int_equal(vec_reserve(&v, 0), ERR_OK);
    assert_null(v.data);
    assert_int_equal(vec_reserve(&v, 300), ERR_OK);
    assert_int_equal(v.cap, 512); /* 16 doubled until 300 fits */
    assert_int_equal(v.n, 0);
    void *data = v.data;
    assert_int_equal(vec_reserve(&v, 512), ERR_OK);
    assert_ptr_equal(v.data, data);
    assert_int_equal(vec_reserve(&v, 513), ERR_OK);
    assert_int_equal(v.cap, 1000); /* 1024 held to the maximum */
    vec_free(&v);
    vec_init(&v, sizeof(uint32_t), 0);
    assert_int_equal(vec_push(&v, &x), ERR_LIMIT);
    assert_null(v.data);
}

/* vec_take hands the array over and leaves an empty vec of the same kind to reuse. */
static void test_take_hands_the_array_over_and_empties_the_vec(void **state)
{
    struct vec v;
    char *s;

    (void)state;
    vec_init(&v, 1, 8);
    for (const char *p = "abcdefgh"; *p != '\0'; p++)
        assert_int_equal(vec_push(&v, p), ERR_OK);
    assert_int_equal(vec_push(&v, "i"), ERR_LIMIT);
    s = vec_take(&v);
    assert_memory_equal(s, "abcdefgh", 8);
    assert_null(v.data);
    assert_int_equal(v.n, 0);
    assert_int_equal(v.elem, 1);
    assert_int_equal(v.max, 8);
    assert_int_equal(vec_push(&v, "z"), ERR_OK); /* reused: a new array */
    assert_true(v.data != (void *)s);
    free(s);
    vec_free(&v);
    assert_null(vec_take(&v)); /* nothing allocated: NULL */
}

/* A maximum past what SIZE_MAX bytes can hold is held to it, so no count overflows in
 * bytes; an allocation the system refuses is ERR_NOMEM with the vec untouched. */
static void test_huge_elements_are_bounded_and_refused_cleanly(void **state)
{
    struct vec v;
    size_t elem = SIZE_MAX / 4 + 1;

    (void)state;
    vec_init(&v, elem, SIZE_MAX);
    assert_int_equal(v.max, 3);
    assert_int_equal(vec_reserve(&v, 4), ERR_LIMIT);
    assert_int_equal(v.cap, 0);
#ifndef UNDER_ASAN
    /* Three elements of 2^62 bytes: past any address space, so realloc refuses. */
    assert_int_equal(vec_reserve(&v, 1), ERR_NOMEM);
    assert_null(v.data);
    assert_int_equal(v.cap, 0);
#endif
    vec_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_stops_at_the_maximum_leaving_the_vec_as_it_was),
        cmocka_unit_test(test_reserve_makes_room_without_counting),
        cmocka_unit_test(test_take_hands_the_array_over_and_empties_the_vec),
        cmocka_unit_test(test_huge_elements_are_bounded_and_refused_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
