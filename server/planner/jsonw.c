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

static void put(struct jsonw *w, const char *s, size_t n)
{
    if (w->err != ERR_OK)
        return;
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

/* Writes the separator and the key (in an object) before a value. */
static void prefix(struct jsonw *w, const char *key)
{
    if (w->err != ERR_OK)
        return;
    if (!w->first[w->depth])
        put(w, ",", 1);
    w->first[w->depth] = false;
    if (key != NULL) {
        put_string(w, key, strlen(key));
        put(w, ":", 1);
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
    w->depth--;
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
    if (w->err != ERR_OK) {
        int rc = w->err;
        jsonw_discard(w);
        return rc;
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
