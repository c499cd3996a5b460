/*
 * test_cursor.c - the text cursor (base/cursor.h): lines and columns as the cursor moves,
 * a line at a time, the lexer steps at the end of the text, errors at line:column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "planner/base/cursor.h"

static bool is_lower(char ch)
{
    return ch >= 'a' && ch <= 'z';
}

static void test_moves_count_lines(void **state)
{
    static const char text[] = "ab \t\r\n  cd 42\n\n x";
    struct err e;
    struct cursor c = cursor_make(text, sizeof(text) - 1, &e);
    int64_t v = 0;

    (void)state;
    assert_int_equal(cursor_span(&c, is_lower), 2);
    cursor_skip_blanks(&c);
    assert_int_equal(cursor_peek(&c), '\n');
    assert_int_equal(cursor_col(&c), 6);
    cursor_skip_space(&c); /* the line end, then the blanks of line 2 */
    assert_int_equal(c.line, 2);
    assert_int_equal(cursor_col(&c), 3);
    assert_true(cursor_lit(&c, "cd "));
    assert_false(cursor_lit(&c, "43"));
    assert_true(cursor_uint(&c, &v));
    assert_int_equal(v, 42);
    cursor_to_eol(&c);
    assert_int_equal(cursor_peek(&c), '\n');
    cursor_skip_space(&c);
    assert_int_equal(c.line, 4);
    assert_int_equal(cursor_col(&c), 2);
    assert_true(cursor_accept(&c, 'x'));
    /* at the end: '\0', nothing to step over, no number */
    assert_int_equal(cursor_left(&c), 0);
    assert_int_equal(cursor_peek(&c), '\0');
    assert_false(cursor_accept(&c, 'x'));
    assert_false(cursor_uint(&c, &v));
    cursor_to_eol(&c);
    cursor_skip_space(&c);
    assert_int_equal(c.i, sizeof(text) - 1);
}

static void test_errors_at_line_and_column(void **state)
{
    static const char text[] = "one\ntwo three";
    struct err e;
    struct cursor c = cursor_make(text, sizeof(text) - 1, &e);

    (void)state;
    while (!cursor_starts(&c, "three"))
        cursor_next(&c);
    assert_int_equal(cursor_fail(&c, "expected %s", "four"), ERR_INVALID);
    assert_int_equal(e.code, ERR_INVALID);
    assert_string_equal(e.where, "line 2:5");
    assert_string_equal(e.msg, "line 2:5: expected four");
    assert_int_equal(cursor_fail_at(&e, 7, 1, "x"), ERR_INVALID);
    assert_string_equal(e.msg, "line 7:1: x");
    c.e = NULL; /* no err: the code still comes back */
    assert_int_equal(cursor_fail(&c, "y"), ERR_INVALID);
}

static void test_lines(void **state)
{
    /* CRLF and LF ends, an empty line, a NUL inside a line, no end on the last */
    static const char text[] = "a,b\r\n\nc\0d\n\r\nlast";
    static const char *const want[] = {"a,b", "", "c\0d", "", "last"};
    static const size_t want_len[] = {3, 0, 3, 0, 4};
    struct err e;
    struct cursor c = cursor_make(text, sizeof(text) - 1, &e), line;

    (void)state;
    for (size_t k = 0; k < 5; k++) {
        assert_true(cursor_line(&c, &line));
        assert_int_equal(line.line, k + 1);
        assert_int_equal(line.len, want_len[k]);
        assert_memory_equal(line.s, want[k], want_len[k]);
        assert_int_equal(cursor_col(&line), 1);
    }
    assert_false(cursor_line(&c, &line));
    /* an error on a line names the text's line and the column on it */
    c = cursor_make(text, sizeof(text) - 1, &e);
    assert_true(cursor_line(&c, &line));
    assert_true(cursor_line(&c, &line));
    assert_true(cursor_line(&c, &line));
    assert_true(cursor_lit(&line, "c"));
    cursor_fail(&line, "z");
    assert_string_equal(e.msg, "line 3:2: z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moves_count_lines),
        cmocka_unit_test(test_errors_at_line_and_column),
        cmocka_unit_test(test_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
