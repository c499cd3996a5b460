/*
 * jsonw.c - bounded streaming JSON writer (see jsonw.h).
 */
#include "planner/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/err.h"
#include "planner/text.h"

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

/* The first error sticks: nothing is appended after it. */
static void fail(struct jsonw *w, int code)
{
    w->err = code;
    w->fast = 0;
}

/* One past what the fast path of put may fill: the capacity less one byte for the NUL
 * jsonw_finish writes, the limit and, with a sink, the chunk size. 0 (nothing fits) before
 * the buffer exists and after an error. */
static void set_fast(struct jsonw *w)
{
    size_t f = w->cap - 1;

    if (f > w->max_bytes)
        f = w->max_bytes;
    if (w->sink != NULL && f > JSONW_SINK_CHUNK)
        f = JSONW_SINK_CHUNK;
    w->fast = w->err == ERR_OK && w->buf != NULL ? f + 1 : 0;
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
    set_fast(w);
}

/* With a sink: the buffer filled to exactly JSONW_SINK_CHUNK bytes and handed over, as
 * often as s fills it, so the pieces never depend on how the text was appended (a fragment
 * spliced in whole cuts them where the same text written value by value would). What is
 * left, less than a piece, stays for put_slow to buffer. */
static void put_pieces(struct jsonw *w, const char **s, size_t *n)
{
    while (w->err == ERR_OK && w->len + *n > JSONW_SINK_CHUNK) {
        size_t take = JSONW_SINK_CHUNK - w->len;
        if (w->len == 0) { /* a whole piece of s: straight to the sink, not copied */
            int rc = w->sink(w->sink_ctx, *s, take);
            w->total += take;
            if (rc != ERR_OK)
                w->err = rc;
        } else {
            memcpy(w->buf + w->len, *s, take);
            w->len += take;
            flush(w);
        }
        *s += take;
        *n -= take;
    }
}

static void grow(struct jsonw *w, size_t need)
{
    size_t ncap = w->cap == 0 ? 4096 : w->cap;
    char *p;

    while (ncap < need)
        ncap *= 2;
    if ((p = realloc(w->buf, ncap)) == NULL) {
        fail(w, ERR_NOMEM);
        return;
    }
    w->buf = p;
    w->cap = ncap;
}

static void put_slow(struct jsonw *w, const char *s, size_t n)
{
    if (w->err == ERR_OK && w->sink != NULL && w->buf == NULL)
        grow(w, JSONW_SINK_CHUNK + 1); /* a piece and the NUL: all a sink's writer holds */
    if (w->err != ERR_OK)
        return;
    if (w->sink != NULL) {
        put_pieces(w, &s, &n);
        if (w->err != ERR_OK) {
            w->fast = 0;
            return;
        }
    }
    if (n > w->max_bytes || w->len > w->max_bytes - n) {
        fail(w, ERR_LIMIT);
        return;
    }
    if (w->buf == NULL || w->len + n + 1 > w->cap)
        grow(w, w->len + n + 1);
    if (w->err != ERR_OK)
        return;
    if (n > 0)
        memcpy(w->buf + w->len, s, n);
    w->len += n;
    set_fast(w);
}

/* Appends n bytes. A million-tensor result is tens of millions of small appends: the usual
 * one is a bounds check and a copy (w->fast is 0 after an error, so nothing is appended). */
static inline void put(struct jsonw *w, const char *s, size_t n)
{
    if (w->len + n < w->fast) {
        memcpy(w->buf + w->len, s, n);
        w->len += n;
        return;
    }
    put_slow(w, s, n);
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
        size_t u;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\')
            continue;
        if (c >= 0x80 && (u = text_utf8_len((const unsigned char *)s + i, n - i)) > 0) {
            i += u - 1; /* well-formed: copied as it is */
            continue;
        }
        put(w, s + run, i - run);
        run = i + 1;
        if (c >= 0x80) { /* not UTF-8: the replacement character, as the JSON stays UTF-8 */
            put(w, "\\ufffd", 6);
            continue;
        }
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

static const char spaces[2 * JSONW_MAX_DEPTH + 1] =
    "                                                                ";

/* Two spaces per level (pretty). */
static void indent(struct jsonw *w, unsigned depth)
{
    put(w, spaces, 2 * (size_t)depth); /* depth < JSONW_MAX_DEPTH = 32: 64 spaces at most */
}

/* true when key needs no escape or UTF-8 check (the keys the planner writes, but some come
 * from input). */
static bool plain_key(const char *key, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)key[i];
        if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
            return false;
    }
    return true;
}

#define PREFIX_KEY_MAX 64 /* plain keys up to this long are written in place */
/* The longest prefix written in place: separator, indent, a plain key and ": ". */
#define PREFIX_MAX (2 + 2 * JSONW_MAX_DEPTH + PREFIX_KEY_MAX + 4)

/* The usual prefix written straight into the buffer (a million-tensor result is tens of
 * millions of them): false, nothing written, when there may be no room for the longest, or
 * the key is long or needs escapes or a UTF-8 check. */
static bool prefix_fast(struct jsonw *w, const char *key)
{
    char *p;

    if (w->len + PREFIX_MAX >= w->fast)
        return false;
    p = w->buf + w->len;
    if (!w->first[w->depth]) {
        *p++ = ',';
        if (w->pretty)
            *p++ = '\n';
    }
    if (w->pretty) { /* all 64 spaces copied (a fixed-size copy), 2 per level kept */
        memcpy(p, spaces, 2 * JSONW_MAX_DEPTH);
        p += 2 * (size_t)w->depth;
    }
    if (key != NULL) {
        size_t k = 0;
        *p++ = '"';
        for (; key[k] != '\0'; k++) {
            unsigned char c = (unsigned char)key[k];
            if (k == PREFIX_KEY_MAX || c < 0x20 || c >= 0x80 || c == '"' || c == '\\')
                return false;
            p[k] = (char)c;
        }
        p += k;
        *p++ = '"';
        *p++ = ':';
        if (w->pretty)
            *p++ = ' ';
    }
    w->first[w->depth] = false;
    w->len = (size_t)(p - w->buf);
    return true;
}

/* Writes the separator and the key (in an object) before a value. */
static void prefix(struct jsonw *w, const char *key)
{
    size_t klen;

    if (w->err != ERR_OK || prefix_fast(w, key))
        return;
    if (!w->first[w->depth])
        put(w, w->pretty ? ",\n" : ",", w->pretty ? 2 : 1);
    w->first[w->depth] = false;
    if (w->pretty)
        indent(w, w->depth);
    if (key == NULL)
        return;
    klen = strlen(key);
    if (klen > PREFIX_KEY_MAX || !plain_key(key, klen))
        put_string(w, key, klen);
    else {
        put(w, "\"", 1);
        put(w, key, klen);
        put(w, "\"", 1);
    }
    put(w, w->pretty ? ": " : ":", w->pretty ? 2 : 1);
}

static void open_(struct jsonw *w, const char *key, const char *brace)
{
    prefix(w, key);
    if (w->err != ERR_OK)
        return;
    if (w->depth + 1 >= JSONW_MAX_DEPTH) {
        fail(w, ERR_INTERNAL);
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
        fail(w, ERR_INTERNAL);
        return;
    }
    if (w->pretty && w->len + 2 + 2 * JSONW_MAX_DEPTH < w->fast) { /* in place, as prefix */
        char *p = w->buf + w->len;
        if (!w->first[w->depth])
            *p++ = '\n';
        w->depth--;
        memcpy(p, spaces, 2 * JSONW_MAX_DEPTH);
        p += 2 * (size_t)w->depth;
        *p++ = *brace;
        w->len = (size_t)(p - w->buf);
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

/* v in decimal, as %llu prints it, ending at end; returns where the digits begin. */
static char *u64_text(uint64_t v, char *end)
{
    char *p = end;

    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return p;
}

/* v in decimal (after a '-' when neg), straight into the buffer when there is room: two
 * digits at a time from a table. */
static void put_dec(struct jsonw *w, uint64_t v, bool neg)
{
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                "31323334353637383940414243444546474849505152535455565758596061"
                                "62636465666768697071727374757677787980818283848586878889909192"
                                "93949596979899";
    char tmp[24], *d;

    if (w->len + 22 < w->fast) {
        char *p = w->buf + w->len + neg;
        size_t n = 1;
        for (uint64_t x = v; x >= 10; x /= 10)
            n++;
        if (neg)
            p[-1] = '-';
        w->len += n + neg;
        for (; v >= 100; v /= 100, n -= 2)
            memcpy(p + n - 2, pairs + 2 * (v % 100), 2);
        if (v >= 10)
            memcpy(p, pairs + 2 * v, 2);
        else
            p[0] = (char)('0' + v);
        return;
    }
    d = u64_text(v, tmp + sizeof(tmp));
    if (neg)
        *--d = '-';
    put(w, d, (size_t)(tmp + sizeof(tmp) - d));
}

void jsonw_u64(struct jsonw *w, const char *key, uint64_t v)
{
    prefix(w, key);
    put_dec(w, v, false);
}

void jsonw_i64(struct jsonw *w, const char *key, int64_t v)
{
    prefix(w, key);
    put_dec(w, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
}

void jsonw_double(struct jsonw *w, const char *key, double v)
{
    char tmp[32];
    prefix(w, key);
    if (!isfinite(v)) {
        puts_(w, "null");
        return;
    }
    /* A whole number below 10^6 is what %.6g prints it as: its digits (padding ratios
     * are often whole). */
    if (v > -1e6 && v < 1e6 && v == (double)(int64_t)v && (v != 0 || !signbit(v))) {
        put_dec(w, v < 0 ? (uint64_t)-v : (uint64_t)v, v < 0);
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
        fail(w, ERR_INTERNAL);
    if (w->err == ERR_OK && w->buf == NULL)
        put_slow(w, "", 0);
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
    w->buf[w->len] = '\0'; /* put keeps a byte for it */
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

void jsonw_fragment_init(struct jsonw *f, const struct jsonw *w)
{
    jsonw_init(f, w->max_bytes);
    f->pretty = w->pretty;
    f->depth = w->depth;
    f->first[f->depth] = false;
}

void jsonw_fragment_append(struct jsonw *w, struct jsonw *f)
{
    int rc = f->err != ERR_OK ? f->err : f->depth != w->depth ? ERR_INTERNAL : ERR_OK;

    if (f->len > 0) {
        put(w, f->buf, f->len);
        if (w->err == ERR_OK && w->depth < JSONW_MAX_DEPTH)
            w->first[w->depth] = false;
    }
    if (w->err == ERR_OK && rc != ERR_OK)
        fail(w, rc);
    f->len = 0;
    f->err = ERR_OK;
    f->depth = w->depth < JSONW_MAX_DEPTH ? w->depth : 0;
    f->first[f->depth] = false;
    set_fast(f);
}
