/*
 * log.h - one line per event on stderr, prefixed with the module that reports it.
 *
 * The service's threads log concurrently; each entry is formatted first and written with
 * one call, so lines never interleave. Trailing newlines (PostgreSQL's messages end in one)
 * are dropped, so an entry is always exactly one line.
 */
#ifndef TPUPLAN_LOG_H
#define TPUPLAN_LOG_H

#include <stdarg.h>

/* The module name of the program's own lines (main.c, config.c). */
#define LOG_PROGRAM "tpuplan-server"

/* Writes "module: message\n". module and fmt are borrowed. */
void log_line(const char *module, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* log_line() with a va_list, for libraries that hand their messages over that way (MHD). */
void log_linev(const char *module, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif
