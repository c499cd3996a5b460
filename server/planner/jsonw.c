/*
 * jsonw.c - bounded streaming JSON writer (see jsonw.h).
 */
#include "planner/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/err.h"

void jsonw_init(struct jsonw *w, size_t max_bytes)
{
    memset(w, 0, sizeof(*w));
    w->max_bytes = max_bytes;
    w->first[0] = true;
}

void jsonw_init_sink(struct jsonw *w, jsonw_sink_fn sink, void *ctx, bool pretty)
{
    jsonw_init(w, SIZE_MAX);
    w->sink = sink;
    w->sink_ctx = ctx;
    w->pretty = pretty;
}

/* Hands the buffered text to the sink. */
static void flush(struct jsonw *w)
{
    int rc;

    if (w->err != ERR_OK || w->len == 0)
        return;
    if ((rc = w->sink(w->sink_ctx, w->buf, w->len)) != ERR_OK)
        w->err = rc;
    w->total += w->len;
    w->len = 0;
}

static void put(struct jsonw *w, const char *s, size_t n)
{
    if (w->err != ERR_OK)
        return;
    if (w->sink != NULL && w->len + n > JSONW_SINK_CHUNK) {
        flush(w);
        if (w->err != ERR_OK)
            return;
    }
    if (n > w->max_bytes || w->len > w->max_bytes - n) {
        w->err = ERR_LIMIT;
        return;
    }
    if (w->buf == NULL || w->len + n + 1 > w->cap) {
        size_t ncap = w->cap == 0 ? 4096 : w->cap;
        while (ncap < w->len + n + 1)
            ncap *= 2;
        char *p = realloc(w->buf, ncap);
        if (p == NULL) {
            w->err = ERR_NOMEM;
            return;
        }
        w->buf = p;
        w->cap = ncap;
    }
    if (n > 0)
        memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void puts_(struct jsonw *w, const char *s)
{
    put(w, s, strlen(s));
}

static void put_string(struct jsonw *w, const char *s, size_t n)
{
    size_t run = 0;

    put(w, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(w, s + run, i - run);
        run = i + 1;
        if (w->pretty && (c == '\b' || c == '\f' || c == '\r')) { /* json-c's short forms */
            put(w, c == '\b' ? "\\b" : c == '\f' ? "\\f" : "\\r", 2);
            continue;
        }
        switch (c) {
        case '"':
            put(w, "\\\"", 2);
            break;
        case '\\':
            put(w, "\\\\", 2);
            break;
        case '\n':
            put(w, "\\n", 2);
            break;
        case '\t':
            put(w, "\\t", 2);
            break;
        default:
            snprintf(esc, sizeof(esc), "\\u%04x", c);
            put(w, esc, 6);
        }
    }
    put(w, s + run, n - run);
    put(w, "\"", 1);
}

/* Two spaces per level (pretty). */
static void indent(struct jsonw *w, unsigned depth)
{
    static const char spaces[] = "                                                                ";

    put(w, spaces, 2 * (size_t)depth); /* depth < JSONW_MAX_DEPTH = 32: 64 spaces at most */
}

/* Writes the separator and the key (in an object) before a value. */
static void prefix(struct jsonw *w, const char *key)
{
    if (w->err != ERR_OK)
        return;
    if (!w->first[w->depth])
        put(w, w->pretty ? ",\n" : ",", w->pretty ? 2 : 1);
    w->first[w->depth] = false;
    if (w->pretty)
        indent(w, w->depth);
    if (key != NULL) {
        put_string(w, key, strlen(key));
        put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
    }
}

static void open_(struct jsonw *w, const char *key, const char *brace)
{
    prefix(w, key);
    if (w->err != ERR_OK)
        return;
    if (w->depth + 1 >= JSONW_MAX_DEPTH) {
        w->err = ERR_INTERNAL;
        return;
    }
    put(w, brace, 1);
    if (w->pretty)
        put(w, "\n", 1);
    w->first[++w->depth] = true;
}

static void close_(struct jsonw *w, const char *brace)
{
    if (w->err != ERR_OK)
        return;
    if (w->depth == 0) {
        w->err = ERR_INTERNAL;
        return;
    }
    if (w->pretty && !w->first[w->depth])
        put(w, "\n", 1);
    w->depth--;
    if (w->pretty)
        indent(w, w->depth);
    put(w, brace, 1);
}

void jsonw_obj_begin(struct jsonw *w, const char *key)
{
    open_(w, key, "{");
}

void jsonw_obj_end(struct jsonw *w)
{
    close_(w, "}");
}

void jsonw_arr_begin(struct jsonw *w, const char *key)
{
    open_(w, key, "[");
}

void jsonw_arr_end(struct jsonw *w)
{
    close_(w, "]");
}

void jsonw_strn(struct jsonw *w, const char *key, const char *s, size_t n)
{
    prefix(w, key);
    put_string(w, s, n);
}

void jsonw_str(struct jsonw *w, const char *key, const char *s)
{
    if (s == NULL) {
        jsonw_null(w, key);
        return;
    }
    jsonw_strn(w, key, s, strlen(s));
}

void jsonw_u64(struct jsonw *w, const char *key, uint64_t v)
{
    char tmp[24];
    prefix(w, key);
    put(w, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%" PRIu64, v));
}

void jsonw_i64(struct jsonw *w, const char *key, int64_t v)
{
    char tmp[24];
    prefix(w, key);
    put(w, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%" PRId64, v));
}

void jsonw_double(struct jsonw *w, const char *key, double v)
{
    char tmp[32];
    prefix(w, key);
    if (!isfinite(v)) {
        puts_(w, "null");
        return;
    }
    /* Six significant digits are plenty for ratios and seconds; %g never prints a bare
     * "1." or a leading "." so the text is valid JSON. */
    put(w, tmp, (size_t)snprintf(tmp, sizeof(tmp), "%.6g", v));
}

void jsonw_bool(struct jsonw *w, const char *key, bool v)
{
    prefix(w, key);
    puts_(w, v ? "true" : "false");
}

void jsonw_null(struct jsonw *w, const char *key)
{
    prefix(w, key);
    puts_(w, "null");
}

int jsonw_finish(struct jsonw *w, char **out, size_t *out_len)
{
    if (w->err == ERR_OK && w->depth != 0)
        w->err = ERR_INTERNAL;
    if (w->err == ERR_OK && w->buf == NULL)
        put(w, "", 0);
    if (w->sink != NULL)
        flush(w);
    if (w->err != ERR_OK) {
        int rc = w->err;
        jsonw_discard(w);
        return rc;
    }
    if (w->sink != NULL) {
        *out = NULL;
        *out_len = w->total;
        jsonw_discard(w);
        return ERR_OK;
    }
    *out = w->buf;
    *out_len = w->len;
    w->buf = NULL;
    return ERR_OK;
}

void jsonw_discard(struct jsonw *w)
{
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}
