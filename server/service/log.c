/*
 * log.c - see log.h.
 */
#include "service/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void log_linev(const char *module, const char *fmt, va_list ap)
{
    char line[1024];
    size_t n;

    vsnprintf(line, sizeof line, fmt, ap);
    n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    fprintf(stderr, "%s: %s\n", module, line);
}

void log_line(const char *module, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_linev(module, fmt, ap);
    va_end(ap);
}
