/*
 * err.c - error reporting for the planner library (see err.h).
 */
#include "planner/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Copies src into dst[cap], truncating: messages are best effort, never an overflow. */
static void copy_trunc(char *dst, size_t cap, const char *a, const char *b, const char *c)
{
    size_t n = 0;
    const char *parts[3] = {a, b, c};

    for (int i = 0; i < 3; i++)
        for (const char *p = parts[i]; p != NULL && *p != '\0' && n + 1 < cap; p++)
            dst[n++] = *p;
    dst[n] = '\0';
}

void err_clear(struct err *e)
{
    if (e == NULL)
        return;
    e->code = ERR_OK;
    e->where[0] = '\0';
    e->msg[0] = '\0';
}

int err_set(struct err *e, int code, const char *where, const char *fmt, ...)
{
    va_list ap;

    if (e == NULL)
        return code;
    e->code = code;
    copy_trunc(e->where, sizeof(e->where), where, NULL, NULL);
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return code;
}

int err_prefix(struct err *e, const char *where_prefix, const char *msg_prefix)
{
    char tmp[ERR_MSG_MAX];

    if (e == NULL)
        return ERR_INTERNAL;
    if (where_prefix != NULL && where_prefix[0] != '\0') {
        const char *sep = (e->where[0] == '\0' || e->where[0] == '[') ? "" : ".";
        copy_trunc(tmp, sizeof(e->where), where_prefix, sep, e->where);
        copy_trunc(e->where, sizeof(e->where), tmp, NULL, NULL);
    }
    if (msg_prefix != NULL && msg_prefix[0] != '\0') {
        copy_trunc(tmp, sizeof(tmp), msg_prefix, e->msg, NULL);
        copy_trunc(e->msg, sizeof(e->msg), tmp, NULL, NULL);
    }
    return e->code;
}

const char *err_code_name(int code)
{
    switch (code) {
    case ERR_OK:
        return "ok";
    case ERR_INVALID:
        return "invalid";
    case ERR_LIMIT:
        return "limit";
    case ERR_OVERFLOW:
        return "overflow";
    case ERR_NOMEM:
        return "nomem";
    case ERR_NOTFOUND:
        return "notfound";
    case ERR_INFEASIBLE:
        return "infeasible";
    case ERR_TIMEOUT:
        return "timeout";
    case ERR_INTERNAL:
        return "internal";
    }
    return "unknown";
}
