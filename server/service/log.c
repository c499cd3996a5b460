/*
 * log.c - see log.h.
 */
#include "service/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner/jsonw.h"
#include "planner/text.h"

/* A line as formatted, before escaping; escaped, each byte takes at most 4 ("\xHH"). */
#define LINE_MAX_FMT 1024
#define LINE_MAX_ESC (4 * LINE_MAX_FMT)

static bool log_json; /* set once before the threads start, read-only afterwards */
static _Thread_local char cur_request[LOG_REQUEST_ID_MAX + 1];

void log_set_json(bool json)
{
    log_json = json;
}

void log_set_request(const char *id)
{
    snprintf(cur_request, sizeof(cur_request), "%s", id != NULL ? id : "");
}

size_t log_escape(const char *s, char *out, size_t cap)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), o = 0;

    for (size_t i = 0; i < n;) {
        char esc[8];
        size_t el, take = 1;
        unsigned char c = p[i];
        size_t u = c >= 0x80 ? text_utf8_len(p + i, n - i) : 0;

        if (u == 2 && c == 0xC2 && p[i + 1] <= 0x9F) { /* U+0080..U+009F: C1 controls */
            el = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", p[i + 1]);
            take = 2;
        } else if (u > 0) {
            memcpy(esc, p + i, u);
            el = take = u;
        } else if (c == '\\' || c == '\n' || c == '\r' || c == '\t') {
            esc[0] = '\\';
            esc[1] = c == '\\' ? '\\' : c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
            el = 2;
        } else if (c < 0x20 || c >= 0x7F) { /* C0, DEL, a byte outside UTF-8 */
            el = (size_t)snprintf(esc, sizeof(esc), "\\x%02x", c);
        } else {
            esc[0] = (char)c;
            el = 1;
        }
        if (o + el >= cap)
            break;
        memcpy(out + o, esc, el);
        o += el;
        i += take;
    }
    out[o] = '\0';
    return o;
}

/* The text line: every field escaped (log.h). */
static void write_text(const char *module, const char *msg)
{
    char mod[64], text[LINE_MAX_ESC + 1], id[4 * LOG_REQUEST_ID_MAX + 1];

    log_escape(module, mod, sizeof(mod));
    log_escape(msg, text, sizeof(text));
    if (cur_request[0] != '\0') {
        log_escape(cur_request, id, sizeof(id));
        fprintf(stderr, "%s: %s request_id=%s\n", mod, text, id);
    } else {
        fprintf(stderr, "%s: %s\n", mod, text);
    }
}

/* The line as one JSON object; falls back to text when out of memory. */
static void write_json(const char *module, const char *msg)
{
    struct timespec ts;
    struct tm tm;
    char when[40];
    struct jsonw w;
    char *out = NULL;
    size_t len = 0;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + n, sizeof(when) - n, ".%03dZ", (int)(ts.tv_nsec / 1000000) % 1000);
    jsonw_init(&w, 8192);
    jsonw_obj_begin(&w, NULL);
    jsonw_str(&w, "time", when);
    jsonw_str(&w, "module", module);
    if (cur_request[0] != '\0')
        jsonw_str(&w, "request_id", cur_request);
    jsonw_str(&w, "message", msg);
    jsonw_obj_end(&w);
    if (jsonw_finish(&w, &out, &len) != 0) {
        write_text(module, msg);
        return;
    }
    fprintf(stderr, "%s\n", out);
    free(out);
}

void log_linev(const char *module, const char *fmt, va_list ap)
{
    char line[LINE_MAX_FMT];
    size_t n;

    vsnprintf(line, sizeof line, fmt, ap);
    n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    if (log_json)
        write_json(module, line);
    else
        write_text(module, line);
}

void log_line(const char *module, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_linev(module, fmt, ap);
    va_end(ap);
}
