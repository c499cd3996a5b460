/*
 * log.h - one line per event on stderr, prefixed with the module that reports it.
 *
 * The service's threads log concurrently; each entry is formatted first and written with
 * one call, so lines never interleave. Trailing newlines (PostgreSQL's messages end in one)
 * are dropped, so an entry is always exactly one line.
 *
 * Two formats (--log-format): text, "module: message", with " request_id=ID" appended
 * while the thread works on a request, every field escaped (log_escape), so a client's
 * text (a percent-decoded path, a header) can neither start a line of its own nor send a
 * terminal its escape sequences; and json, one object a line:
 *   {"time":"2026-12-03T12:00:00.123Z","module":"http","request_id":"...","message":"..."}
 * (request_id only while the thread works on a request). The request a thread works on is
 * set by the transport and the executor around their handling (log_set_request), so
 * every line written meanwhile, by any module, carries its id.
 */
#ifndef TPUPLAN_LOG_H
#define TPUPLAN_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* The module name of the program's own lines (main.c, config.c). */
#define LOG_PROGRAM "tpuplan-server"

#define LOG_REQUEST_ID_MAX 64 /* longest request id kept (reqparse_request_id) */

/* Writes s into out (cap >= 1 bytes, always NUL-terminated) as one line's field: a
 * backslash as \\, newline, carriage return and tab as \n \r \t, every other C0 control
 * and DEL as \xHH; well-formed UTF-8 is kept as it is except the C1 controls (U+0080 to
 * U+009F), written \u0080 to \u009f; a byte that is not part of well-formed UTF-8 is
 * \xHH. Stops before an escape that would not fit. Returns the length written. */
size_t log_escape(const char *s, char *out, size_t cap);

/* Chooses json (true) or text lines for everything logged afterwards. Call once at start,
 * before other threads run. */
void log_set_json(bool json);

/* The id of the request the calling thread now works on (copied; NULL or "": none). */
void log_set_request(const char *id);

/* Writes one line (see above). module and fmt are borrowed. */
void log_line(const char *module, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* log_line() with a va_list, for libraries that hand their messages over that way (MHD). */
void log_linev(const char *module, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif
