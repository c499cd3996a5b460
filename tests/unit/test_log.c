/*
 * test_log.c - the text log's escaping (log_escape) and the lines written with it: a
 * client's newline, carriage return or terminal escape never reaches the log raw; UTF-8
 * stays as it is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "service/log.h"

static void check(const char *in, const char *want)
{
    char out[256];
    size_t n = log_escape(in, out, sizeof(out));

    if (strcmp(out, want) != 0)
        fail_msg("log_escape(%zu bytes) = \"%s\", want \"%s\"", strlen(in), out, want);
    assert_int_equal(n, strlen(want));
}

/* C0 controls, DEL and the backslash itself (so an escape in the input cannot pass for
 * one of ours). */
static void test_controls_and_backslash_are_escaped(void **state)
{
    (void)state;
    check("GET /a\nhttp: GET /forged 200", "GET /a\\nhttp: GET /forged 200");
    check("a\r\tb\\n", "a\\r\\tb\\\\n");
    check("\x1b[2J\x1b]0;pwned\x07", "\\x1b[2J\\x1b]0;pwned\\x07");
    check("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
    check("plain ASCII ~!@#$%^&*()", "plain ASCII ~!@#$%^&*()");
}

/* Well-formed UTF-8 is kept, the C1 controls (U+0080..U+009F) are not; bytes outside
 * UTF-8 (a raw 8-bit CSI, a stray continuation, an overlong or cut-off sequence) are
 * escaped one by one. */
static void test_utf8_kept_c1_and_bad_bytes_escaped(void **state)
{
    (void)state;
    check("Z\xc3\xbcrich \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xc2\xa0.",
          "Z\xc3\xbcrich \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 \xc2\xa0.");
    check("\xc2\x9b"
          "31m \xc2\x85 \xc2\x80",
          "\\u009b31m \\u0085 \\u0080");
    check("\x9b"
          "31m",
          "\\x9b31m");
    check("\x80\xff", "\\x80\\xff");
    check("\xc0\xaf", "\\xc0\\xaf");
    check("\xe6\x97", "\\xe6\\x97");
    check("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
}

/* A full buffer ends before an escape, never inside one. */
static void test_escaping_stops_at_a_whole_escape(void **state)
{
    char out[8];

    (void)state;
    assert_int_equal(log_escape("ab\ncd", out, 6), 5);
    assert_string_equal(out, "ab\\nc");
    assert_int_equal(log_escape("ab\n", out, 4), 2);
    assert_string_equal(out, "ab");
    assert_int_equal(log_escape("\x01", out, 4), 0);
    assert_string_equal(out, "");
    assert_int_equal(log_escape("\xe6\x97\xa5", out, 3), 0);
    assert_string_equal(out, "");
}

/* What log_line writes to stderr, captured in a file. */
static char *logged(bool json, const char *request_id, const char *msg)
{
    char path[] = "/tmp/test_log_XXXXXX";
    int fd = mkstemp(path), saved = dup(2);
    char *text = calloc(1, 4096);
    FILE *f;

    assert_true(fd >= 0 && saved >= 0 && text != NULL);
    fflush(stderr);
    dup2(fd, 2);
    log_set_json(json);
    log_set_request(request_id);
    log_line("http", "%s", msg);
    log_set_request(NULL);
    log_set_json(false);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fdopen(fd, "r");
    assert_non_null(f);
    rewind(f);
    assert_true(fread(text, 1, 4095, f) > 0);
    fclose(f);
    unlink(path);
    return text;
}

/* One line, every field escaped; in JSON the same message is one JSON string. */
static void test_a_forged_line_stays_one_line(void **state)
{
    char *t;

    (void)state;
    t = logged(false, "r1", "GET /x\nhttp: GET / 200\x1b[8m 404 0.1 ms client 127.0.0.1\n\n");
    assert_string_equal(t, "http: GET /x\\nhttp: GET / 200\\x1b[8m 404 0.1 ms client 127.0.0.1 "
                           "request_id=r1\n");
    free(t);
    t = logged(true, "r1", "GET /x\nfake\x1b[8m");
    assert_non_null(strstr(t, "\"module\":\"http\",\"request_id\":\"r1\","
                              "\"message\":\"GET /x\\nfake\\u001b[8m\"}\n"));
    assert_null(strchr(t, '\x1b'));
    assert_ptr_equal(strchr(t, '\n'), t + strlen(t) - 1);
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controls_and_backslash_are_escaped),
        cmocka_unit_test(test_utf8_kept_c1_and_bad_bytes_escaped),
        cmocka_unit_test(test_escaping_stops_at_a_whole_escape),
        cmocka_unit_test(test_a_forged_line_stays_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
