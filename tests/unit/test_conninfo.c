/*
 * test_conninfo.c - database URLs and conninfo strings with their passwords masked
 * (conninfo.h), and the settings block that prints them (config_print).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/config.h"
#include "service/conninfo.h"

static void check(const char *in, const char *want)
{
    char *got = conninfo_masked(in);

    assert_non_null(got);
    if (strcmp(got, want) != 0)
        fail_msg("conninfo_masked(\"%s\") = \"%s\", want \"%s\"", in, got, want);
    free(got);
}

/* The password of a URI's user information, whatever it holds: percent-encoded as libpq
 * wants, or raw "@", ":", "/" and "?" (the "@" a settings log used to show half of). */
static void test_a_uri_password_is_masked_whole(void **state)
{
    (void)state;
    check("postgresql://tpuplan:s3cret@db.example:5432/tpuplan",
          "postgresql://tpuplan:***@db.example:5432/tpuplan");
    check("postgresql://u:p@ss@host/db", "postgresql://u:***@host/db");
    check("postgresql://u:p%40s%3As%2F%3F@host/db?sslmode=require",
          "postgresql://u:***@host/db?sslmode=require");
    check("postgresql://u:a:b/c?d@e@host/db", "postgresql://u:***@host/db");
    check("postgres://u:@host", "postgres://u:***@host");
    /* no password: kept as written */
    check("postgresql://u@host/db", "postgresql://u@host/db");
    check("postgresql:///tpuplan?host=/tmp/pg", "postgresql:///tpuplan?host=/tmp/pg");
    check("postgresql://[::1]:5432/db", "postgresql://[::1]:5432/db");
}

/* A URI's parameters: password and sslpassword, their names percent-decoded as libpq
 * decodes them; the others kept. */
static void test_uri_parameters_that_are_secrets_are_masked(void **state)
{
    (void)state;
    check("postgres://u@h/db?sslmode=disable&password=x%40y&application_name=t",
          "postgres://u@h/db?sslmode=disable&password=***&application_name=t");
    check("postgresql://h/db?%70assword=x&sslpassword=k",
          "postgresql://h/db?%70assword=***&sslpassword=***");
    check("postgresql://h/db?passwords=x", "postgresql://h/db?passwords=x");
    /* an "@" only in the query after host:port cannot be told from a raw password: more
     * is masked, never less */
    check("postgresql://host:5432/db?user=a@b&password=x", "postgresql://host:***@b&password=***");
}

/* key=value conninfo: bare and quoted values with escapes, blanks around "=", and text
 * that stops parsing (masked from there on). */
static void test_a_conninfo_password_is_masked(void **state)
{
    (void)state;
    check("host=db user=u password=s3cr@t:/x dbname=d", "host=db user=u password=*** dbname=d");
    check("host=db password='a b\\' c' sslpassword = k dbname=d",
          "host=db password=*** sslpassword = *** dbname=d");
    check("password=a\\ b host=h", "password=*** host=h");
    check("host=db password='unterminated dbname=d", "host=db ***");
    check("user=u password", "user=u ***");
    check("host=db  ", "host=db  ");
    check("=x", "***");
    check("mydb", "mydb"); /* no "=": a database name */
    check("", "");
}

/* The settings block prints the masked form. */
static void test_settings_show_the_url_masked(void **state)
{
    struct config c;
    char *argv[] = {"tpuplan-server", "--database-url", "postgresql://u:p@ss:w/rd@host/db"};
    char *text = NULL;
    size_t len = 0;
    FILE *f;

    (void)state;
    assert_int_equal(config_parse(&c, 3, argv), 0);
    f = open_memstream(&text, &len);
    assert_non_null(f);
    config_print(&c, f);
    fclose(f);
    assert_non_null(strstr(text, "  database-url    postgresql://u:***@host/db\n"));
    assert_null(strstr(text, "ss:w"));
    assert_null(strstr(text, "w/rd"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_uri_password_is_masked_whole),
        cmocka_unit_test(test_uri_parameters_that_are_secrets_are_masked),
        cmocka_unit_test(test_a_conninfo_password_is_masked),
        cmocka_unit_test(test_settings_show_the_url_masked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
