/*
 * cursor.c - errors at a place in a text (see cursor.h); the lexer steps are inline there.
 */
#include "planner/base/cursor.h"

#include <stdarg.h>
#include <stdio.h>

static int fail_v(struct err *e, size_t line, size_t col, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static int fail_v(struct err *e, size_t line, size_t col, const char *fmt, va_list ap)
{
    char where[48], what[ERR_MSG_MAX];

    vsnprintf(what, sizeof(what), fmt, ap);
    snprintf(where, sizeof(where), "line %zu:%zu", line, col);
    return err_set(e, ERR_INVALID, where, "%s: %s", where, what);
}

int cursor_fail_at(struct err *e, size_t line, size_t col, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = fail_v(e, line, col, fmt, ap);
    va_end(ap);
    return rc;
}

int cursor_fail(const struct cursor *c, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = fail_v(c->e, c->line, cursor_col(c), fmt, ap);
    va_end(ap);
    return rc;
}
