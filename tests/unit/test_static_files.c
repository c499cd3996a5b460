/*
 * test_static_files.c - static file paths (traversal refused) and MIME types (static_files.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/static_files.h"

static void test_static_paths_refuse_traversal_and_hidden(void **state)
{
    static const char *const bad[] = {
        "../etc/passwd", "a/../../b",   "..", "a/..",      "./a",    ".git/config", "a//b",
        "a\\b",          "/etc/passwd", "",   "a/.hidden", "a/\x01", "a/",
    };
    static const char *const good[] = {"index.html", "js/app.js", "a.b/c..d.css", "x"};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(static_path_ok(bad[i]));
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        assert_true(static_path_ok(good[i]));
    assert_string_equal(static_mime("index.html"), "text/html; charset=utf-8");
    assert_string_equal(static_mime("a/b.MJS"), "text/javascript; charset=utf-8");
    assert_string_equal(static_mime("x.css"), "text/css; charset=utf-8");
    assert_string_equal(static_mime("x.svg"), "image/svg+xml");
    assert_string_equal(static_mime("f.woff2"), "font/woff2");
    assert_string_equal(static_mime("app.js.map"), "application/json");
    assert_string_equal(static_mime("dir.js/README"), "application/octet-stream");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_paths_refuse_traversal_and_hidden),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
