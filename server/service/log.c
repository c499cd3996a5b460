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
        fprintf(stderr, "%s: %s\n", module, msg);
        return;
    }
    fprintf(stderr, "%s\n", out);
    free(out);
}

void log_linev(const char *module, const char *fmt, va_list ap)
{
    char line[1024];
    size_t n;

    vsnprintf(line, sizeof line, fmt, ap);
    n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    if (log_json)
        write_json(module, line);
    else if (cur_request[0] != '\0')
        fprintf(stderr, "%s: %s request_id=%s\n", module, line, cur_request);
    else
        fprintf(stderr, "%s: %s\n", module, line);
}

void log_line(const char *module, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    log_linev(module, fmt, ap);
    va_end(ap);
}
