/*
 * test_names.c - the name table (base/names.h): find and add, scopes, the first of a repeated
 * name, the limit, and entries of one name kept in the order added when the table grows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "planner/base/names.h"
#include "planner/text.h"

struct entry {
    char name[16];
    uint64_t scope;
};

static struct names_key entry_key(const void *ctx, uint32_t i)
{
    const struct entry *es = ctx;

    return (struct names_key){es[i].name, strlen(es[i].name), es[i].scope};
}

static struct names_key key_of(const struct entry *x)
{
    return (struct names_key){x->name, strlen(x->name), x->scope};
}

static void test_find_add(void **state)
{
    const struct entry es[] = {{"a", 0}, {"bc", 0}, {"a", 7}, {"bc", 0}, {"", 0}};
    struct names t;
    uint32_t first;

    (void)state;
    assert_int_equal(names_init(&t, 5, entry_key, es), ERR_OK);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(names_add(&t, i, &first), ERR_OK);
        assert_int_equal(first, NAMES_NONE); /* "a" in scope 7 is not "a" in scope 0 */
    }
    assert_int_equal(names_add(&t, 3, &first), ERR_OK);
    assert_int_equal(first, 1); /* the second "bc" names the first, and is not added */
    assert_int_equal(names_add(&t, 4, &first), ERR_OK);
    assert_int_equal(first, NAMES_NONE); /* the empty name is a name */
    assert_int_equal(t.n, 4);
    assert_int_equal(names_find(&t, (struct names_key){"a", 1, 0}), 0);
    assert_int_equal(names_find(&t, (struct names_key){"a", 1, 7}), 2);
    assert_int_equal(names_find(&t, (struct names_key){"a", 1, 1}), NAMES_NONE);
    assert_int_equal(names_find(&t, (struct names_key){"bcd", 2, 0}), 1); /* n bytes only */
    assert_int_equal(names_find(&t, (struct names_key){"b", 1, 0}), NAMES_NONE);
    assert_int_equal(names_find(&t, (struct names_key){NULL, 0, 0}), 4);
    names_free(&t);
    names_free(&t); /* twice is fine */
}

static void test_limits(void **state)
{
    const struct entry es[] = {{"x", 0}, {"y", 0}, {"z", 0}};
    struct names t;
    uint32_t first;

    (void)state;
    assert_int_equal(names_init(&t, 2, entry_key, es), ERR_OK);
    assert_int_equal(names_add(&t, 0, &first), ERR_OK);
    assert_int_equal(names_add_dup(&t, 1), ERR_OK);
    assert_int_equal(names_add(&t, 2, &first), ERR_LIMIT); /* past the maximum given */
    assert_int_equal(names_add_dup(&t, 2), ERR_LIMIT);
    assert_int_equal(names_find(&t, key_of(&es[2])), NAMES_NONE);
    assert_int_equal(names_reserve(&t, 3), ERR_OK);
    assert_int_equal(names_add(&t, 2, &first), ERR_OK);
    assert_int_equal(names_find(&t, key_of(&es[2])), 2);
    names_free(&t);
    assert_int_equal(names_init(&t, (size_t)NAMES_MAX + 1, entry_key, es), ERR_LIMIT);
    assert_null(t.slot);
    names_free(&t);
}

/* Three entries of one name whose home is the last slot of the smallest table wrap around
 * to slots 0 and 1; growing must keep them in the order added, not in slot order. */
static void test_repeats_in_order_when_grown(void **state)
{
    struct entry es[64];
    struct names t;
    uint64_t scope = 0;
    size_t at;

    (void)state;
    while ((text_hash_seed("w", 1, scope) & 15) != 15)
        scope++;
    for (size_t i = 0; i < 3; i++)
        es[i] = (struct entry){"w", scope};
    assert_int_equal(names_init(&t, 3, entry_key, es), ERR_OK);
    assert_int_equal(t.mask, 15);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(names_add_dup(&t, i), ERR_OK);
    assert_int_equal(t.slot[15], 0);
    assert_int_equal(t.slot[0], 1);
    assert_int_equal(t.slot[1], 2);
    for (size_t i = 3; i < 64; i++) {
        snprintf(es[i].name, sizeof(es[i].name), "n%zu", i);
        es[i].scope = i % 3;
    }
    assert_int_equal(names_reserve(&t, 64), ERR_OK);
    assert_int_equal(t.mask, 127);
    for (uint32_t i = 3; i < 64; i++)
        assert_int_equal(names_add_dup(&t, i), ERR_OK);
    at = names_start(&t, key_of(&es[0]));
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(names_next(&t, key_of(&es[0]), &at), i);
    assert_int_equal(names_next(&t, key_of(&es[0]), &at), NAMES_NONE);
    for (uint32_t i = 3; i < 64; i++)
        assert_int_equal(names_find(&t, key_of(&es[i])), i);
    names_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_add),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_repeats_in_order_when_grown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
