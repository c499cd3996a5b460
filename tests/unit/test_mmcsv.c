/*
 * test_mmcsv.c - MiniMalloc CSV parsing: the shipped example, legacy aliases, every error
 * message (line and column), limits, and the solution writer.
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

/* benchmarks/examples/input.12.csv from google/minimalloc (shared/data/minimalloc). */
static const char example12[] = "id,lower,upper,size\n"
                                "b1,0,3,4\n"
                                "b2,3,9,4\n"
                                "b3,0,9,4\n"
                                "b4,9,21,4\n"
                                "b5,0,21,4\n";

static int parse(const char *s, struct mmcsv *m, struct err *e)
{
    err_clear(e);
    return mmcsv_parse(s, strlen(s), 100, m, e);
}

static void test_example12_parses_to_its_buffers(void **state)
{
    struct mmcsv m;
    struct err e;

    (void)state;
    assert_true(mmcsv_detect(example12, strlen(example12)));
    assert_int_equal(parse(example12, &m, &e), ERR_OK);
    assert_int_equal(m.n, 5);
    assert_string_equal(m.ids[3], "b4");
    assert_int_equal(m.bufs[3].lower, 9);
    assert_int_equal(m.bufs[3].upper, 21);
    assert_int_equal(m.bufs[3].size, 4);
    assert_int_equal(m.lines[4], 6);
    assert_string_equal(m.ignored, "");
    mmcsv_free(&m);
}

static void test_column_aliases_crlf_and_inclusive_end_are_read(void **state)
{
    struct mmcsv m;
    struct err e;
    const char *s = "buffer_id,start,end,size,alignment,hint\r\n"
                    "x,0,2,8,1,-1\r\n"
                    "\r\n"
                    "y, 3 ,3,16,1,-1\r\n";

    (void)state;
    assert_true(mmcsv_detect(s, strlen(s)));
    assert_int_equal(parse(s, &m, &e), ERR_OK);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.bufs[0].upper, 3); /* `end` is inclusive */
    assert_int_equal(m.bufs[1].lower, 3);
    assert_int_equal(m.bufs[1].upper, 4);
    assert_int_equal(m.lines[1], 4);
    assert_string_equal(m.ignored, "alignment,hint");
    mmcsv_free(&m);
    assert_int_equal(parse("buffer,begin,upper,size\nq,1,2,3\n", &m, &e), ERR_OK);
    assert_int_equal(m.bufs[0].lower, 1);
    mmcsv_free(&m);
}

static void test_detect_needs_a_csv_header(void **state)
{
    (void)state;
    assert_false(mmcsv_detect("{\"tensors\": []}", 15));
    assert_false(mmcsv_detect("", 0));
    assert_false(mmcsv_detect("identity,lower\n", 15));
    assert_true(mmcsv_detect("buffer,begin,end,size", 21));
}

static void expect_error(const char *s, int code, const char *msg)
{
    struct mmcsv m;
    struct err e;

    assert_int_equal(parse(s, &m, &e), code);
    assert_string_equal(e.msg, msg);
    assert_int_equal(m.n, 0);
    assert_null(m.bufs);
}

static void test_bad_rows_name_line_and_column(void **state)
{
    (void)state;
    expect_error("id,lower,upper,size\na,0,1,4\nb,0,x,4\n", ERR_INVALID,
                 "line 3, column upper: not a number");
    expect_error("id,lower,upper,size\na,0,1,4\nb,0,2,\n", ERR_INVALID,
                 "line 3, column size: not a number");
    expect_error("id,lower,upper,size\na,0,1,0\n", ERR_INVALID,
                 "line 2, column size: must be positive");
    expect_error("id,lower,upper,size\na,0,1,-5\n", ERR_INVALID,
                 "line 2, column size: must be positive");
    expect_error("id,lower,upper,size\na,5,5,1\n", ERR_INVALID,
                 "line 2: lower 5 is not below upper 5 (lifetimes are half-open [lower, upper))");
    expect_error("id,lower,upper,size\na,0,1,4\nb,0,1,4\na,2,3,4\n", ERR_INVALID,
                 "line 4, column id: duplicate id \"a\" (first on line 2)");
    expect_error("id,lower,upper,size\na,0,1\n", ERR_INVALID,
                 "line 2: expected 4 columns, found 3");
    expect_error("id,lower,upper,size\n,0,1,4\n", ERR_INVALID, "line 2, column id: empty id");
    expect_error("id,lower,upper,size\na,0,1,99999999999999999999\n", ERR_INVALID,
                 "line 2, column size: number out of range");
    expect_error("id,lower,size\n", ERR_INVALID,
                 "header: expected the columns id,lower,upper,size (upper or end, not both)");
    expect_error("id,lower,upper,end,size\n", ERR_INVALID,
                 "header: expected the columns id,lower,upper,size (upper or end, not both)");
    expect_error("id,lower,upper,size,colour\n", ERR_INVALID,
                 "header, column 5: unknown column \"colour\" (expected id,lower,upper,size)");
    expect_error("id,start,begin,upper,size\n", ERR_INVALID,
                 "header: column begin given twice (or with an alias)");
    expect_error("", ERR_INVALID, "empty input: expected a header id,lower,upper,size");
}

/* Regression (fuzz_mmcsv): an id holding NUL bytes was cut at the first one, so "\0b3"
 * became the empty id and the written solution no longer parsed. Now it is refused. */
static void test_id_holding_nul_is_refused(void **state)
{
    static const char text[] = "id,lower,upper,size\nb1,0,3,4\n\0b\0\0C,3,9,4\n";
    struct mmcsv m;
    struct err e;

    (void)state;
    err_clear(&e);
    assert_int_equal(mmcsv_parse(text, sizeof(text) - 1, 100, &m, &e), ERR_INVALID);
    assert_string_equal(e.msg, "line 3, column id: id holds a NUL byte");
    assert_string_equal(e.where, "line 3, column id");
    assert_int_equal(m.n, 0);
}

static void test_rows_past_max_buffers_are_a_limit_error(void **state)
{
    struct mmcsv m;
    struct err e;
    const char *s = "id,lower,upper,size\na,0,1,1\nb,0,1,1\nc,0,1,1\n";

    (void)state;
    assert_int_equal(mmcsv_parse(s, strlen(s), 2, &m, &e), ERR_LIMIT);
    assert_string_equal(e.msg, "line 4: more than 2 buffers");
    assert_int_equal(mmcsv_parse(s, strlen(s), 3, &m, &e), ERR_OK);
    mmcsv_free(&m);
}

static void test_solution_lists_each_buffer_with_its_offset(void **state)
{
    struct mmcsv m;
    struct err e;
    const uint64_t offs[5] = {0, 4, 4, 0, 8};
    char *text = NULL;
    size_t len = 0;

    (void)state;
    assert_int_equal(parse(example12, &m, &e), ERR_OK);
    assert_int_equal(mmcsv_format(&m, offs, &text, &len, &e), ERR_OK);
    assert_string_equal(text, "id,lower,upper,size,offset\n"
                              "b1,0,3,4,0\n"
                              "b2,3,9,4,4\n"
                              "b3,0,9,4,4\n"
                              "b4,9,21,4,0\n"
                              "b5,0,21,4,8\n");
    assert_int_equal(len, strlen(text));
    free(text);
    mmcsv_free(&m);
}

/* A tensor name a spreadsheet would run as a formula (OWASP "CSV Injection": = + - @, tab,
 * carriage return) is written after an apostrophe; one with a comma, quote or line break,
 * or blanks at an end, in quotes. Numbers are written as they are. Each reads back as the
 * name it was. */
static void test_solution_ids_are_text_to_a_spreadsheet(void **state)
{
    static const char *const ids[] = {"=HYPERLINK(\"http://x\",\"y\")",
                                      "+1",
                                      "-2",
                                      "@SUM(A1)",
                                      "\tcmd",
                                      "\rx",
                                      "'quoted",
                                      "a,=b",
                                      "say \"hi\"",
                                      " pad ",
                                      "plain-name",
                                      "x=1"};
    struct pack_buffer bufs[12];
    char *names[12];
    uint64_t offs[12];
    struct mmcsv m = {.n = 12, .bufs = bufs, .ids = names}, back;
    struct err e;
    char *text = NULL;
    size_t len = 0;

    (void)state;
    for (size_t i = 0; i < 12; i++) {
        bufs[i] = (struct pack_buffer){.lower = (int64_t)i, .upper = (int64_t)i + 1, .size = 64};
        names[i] = (char *)ids[i];
        offs[i] = 64 * i;
    }
    assert_int_equal(mmcsv_format(&m, offs, &text, &len, &e), ERR_OK);
    assert_string_equal(text, "id,lower,upper,size,offset\n"
                              "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",0,1,64,0\n"
                              "'+1,1,2,64,64\n"
                              "'-2,2,3,64,128\n"
                              "'@SUM(A1),3,4,64,192\n"
                              "'\tcmd,4,5,64,256\n"
                              "\"'\rx\",5,6,64,320\n"
                              "''quoted,6,7,64,384\n"
                              "\"a,=b\",7,8,64,448\n"
                              "\"say \"\"hi\"\"\",8,9,64,512\n"
                              "\" pad \",9,10,64,576\n"
                              "plain-name,10,11,64,640\n"
                              "x=1,11,12,64,704\n");
    assert_int_equal(len, strlen(text));
    free(text);
    names[0] = "=HYPERLINK(\"x\")";
    assert_int_equal(mmcsv_format(&m, offs, &text, &len, &e), ERR_OK);
    assert_non_null(strstr(text, "\n\"'=HYPERLINK(\"\"x\"\")\",0,1,64,0\n"));
    assert_int_equal(parse(text, &back, &e), ERR_OK);
    assert_int_equal(back.n, 12);
    for (size_t i = 0; i < 12; i++)
        assert_string_equal(back.ids[i], names[i]);
    mmcsv_free(&back);
    free(text);
    /* a newline is written in quotes as RFC 4180 says, which a spreadsheet reads; this
     * reader reads a line at a time, so it refuses it rather than misread it */
    names[5] = "l1\nl2";
    assert_int_equal(mmcsv_format(&m, offs, &text, &len, &e), ERR_OK);
    assert_non_null(strstr(text, "\n\"l1\nl2\",5,6,64,320\n"));
    assert_int_equal(parse(text, &back, &e), ERR_INVALID);
    free(text);
}

/* Quoted ids: a comma inside, "" for a quote, blanks kept; one leading apostrophe dropped;
 * a quote left open or stray after the closing one is an error naming the id column. */
static void test_quoted_and_marked_ids_are_read(void **state)
{
    struct mmcsv m;
    struct err e;

    (void)state;
    assert_int_equal(parse("id,lower,upper,size\n \"a,b\" ,0,1,4\n\"\"\"q\"\"\",0,1,4\n"
                           "'=x,0,1,4\n\"'' y \",0,1,4\n",
                           &m, &e),
                     ERR_OK);
    assert_int_equal(m.n, 4);
    assert_string_equal(m.ids[0], "a,b");
    assert_string_equal(m.ids[1], "\"q\"");
    assert_string_equal(m.ids[2], "=x");
    assert_string_equal(m.ids[3], "' y ");
    mmcsv_free(&m);
    expect_error("id,lower,upper,size\n\"a,0,1,4\n", ERR_INVALID,
                 "line 2: expected 4 columns, found 1");
    expect_error("id,lower,upper,size\n\"a\"b,0,1,4\n", ERR_INVALID,
                 "line 2, column id: a quoted id must end with its quote, a quote in it doubled");
    expect_error("id,lower,upper,size\n\"a\"b\",0,1,4\n", ERR_INVALID,
                 "line 2, column id: a quoted id must end with its quote, a quote in it doubled");
    expect_error("id,lower,upper,size\n',0,1,4\n", ERR_INVALID, "line 2, column id: empty id");
}

/* 200 rows: the arrays grow past their first 64 and 128 entries, stopping at max_buffers,
 * and every row keeps its id, line and buffer; optional columns are listed, not read. */
static void test_arrays_grow_to_max_buffers_keeping_every_row(void **state)
{
    static char text[200 * 40 + 64];
    size_t used = 0;
    struct mmcsv m;
    struct err e;

    (void)state;
    used += (size_t)snprintf(text, sizeof(text), "id,lower,end,size,hint\n");
    for (int i = 0; i < 200; i++)
        used += (size_t)snprintf(text + used, sizeof(text) - used, "b%d,%d,%d,%d,7\n", i, i, i + 2,
                                 8 * (i + 1));
    assert_int_equal(mmcsv_parse(text, used, 200, &m, &e), ERR_OK);
    assert_int_equal(m.n, 200);
    assert_string_equal(m.ignored, "hint");
    for (size_t i = 0; i < m.n; i++) {
        char id[24];
        snprintf(id, sizeof(id), "b%zu", i);
        assert_string_equal(m.ids[i], id);
        assert_int_equal(m.lines[i], i + 2);
        assert_int_equal(m.bufs[i].lower, (int64_t)i);
        assert_int_equal(m.bufs[i].upper, (int64_t)i + 3); /* end is inclusive */
        assert_int_equal(m.bufs[i].size, 8 * (i + 1));
    }
    mmcsv_free(&m);
    assert_int_equal(mmcsv_parse(text, used, 199, &m, &e), ERR_LIMIT);
    assert_string_equal(e.msg, "line 201: more than 199 buffers");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example12_parses_to_its_buffers),
        cmocka_unit_test(test_column_aliases_crlf_and_inclusive_end_are_read),
        cmocka_unit_test(test_detect_needs_a_csv_header),
        cmocka_unit_test(test_bad_rows_name_line_and_column),
        cmocka_unit_test(test_rows_past_max_buffers_are_a_limit_error),
        cmocka_unit_test(test_solution_lists_each_buffer_with_its_offset),
        cmocka_unit_test(test_arrays_grow_to_max_buffers_keeping_every_row),
        cmocka_unit_test(test_id_holding_nul_is_refused),
        cmocka_unit_test(test_solution_ids_are_text_to_a_spreadsheet),
        cmocka_unit_test(test_quoted_and_marked_ids_are_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
