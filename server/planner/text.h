/*
 * text.h - small helpers for the planner's text inputs (JSON, CSV, HLO).
 */
#ifndef TPUPLAN_TEXT_H
#define TPUPLAN_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Steps *s and *len past a UTF-8 byte order mark, which editors on Windows write at the
 * start of a text file and which no text format of ours allows. */
static inline void text_skip_bom(const char **s, size_t *len)
{
    if (*len >= 3 && memcmp(*s, "\xEF\xBB\xBF", 3) == 0) {
        *s += 3;
        *len -= 3;
    }
}

/* Reads the decimal digits at s[*i..len) (no sign, no blanks) into *out and moves *i past
 * them: false when there is no digit or the value passes INT64_MAX. Unlike strtoll it never
 * reads past len, so it is safe on text that is not NUL-terminated. */
static inline bool text_uint(const char *s, size_t len, size_t *i, int64_t *out)
{
    size_t at = *i;
    int64_t v = 0;

    while (at < len && s[at] >= '0' && s[at] <= '9') {
        if (v > (INT64_MAX - (s[at] - '0')) / 10)
            return false;
        v = v * 10 + (s[at] - '0');
        at++;
    }
    if (at == *i)
        return false;
    *i = at;
    *out = v;
    return true;
}

/* The length of the well-formed UTF-8 sequence at s[0..n) (n >= 1, s[0] >= 0x80), or 0 when
 * it is not one (RFC 3629 section 4: no overlong forms, no surrogates, nothing past
 * U+10FFFF). The JSON writer replaces what is not with U+FFFD: names from a CSV or a URL in
 * a log line are bytes, and JSON (RFC 8259 section 8.1) and PostgreSQL's jsonb are UTF-8. */
static inline size_t text_utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t len;

    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4;
    else
        return 0;
    if (c == 0xE0)
        lo = 0xA0; /* overlong */
    else if (c == 0xED)
        hi = 0x9F; /* surrogates */
    else if (c == 0xF0)
        lo = 0x90; /* overlong */
    else if (c == 0xF4)
        hi = 0x8F; /* past U+10FFFF */
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

/* Whether s[0..n) is well-formed UTF-8 throughout (text_utf8_len): what PostgreSQL's text
 * columns take, so a name or key checked with it is stored, never refused as a 500. */
static inline bool text_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0; i < n; i++) {
        size_t u;
        if (p[i] < 0x80)
            continue;
        if ((u = text_utf8_len(p + i, n - i)) == 0)
            return false;
        i += u - 1;
    }
    return true;
}

/* FNV-1a of s[0, n) from the offset basis xor seed: a name within a scope (an HLO
 * computation, a StableHLO region) hashes as its bytes with the scope as the seed. The
 * planner's name tables (base/names.h) all hash with it. */
static inline uint64_t text_hash_seed(const char *s, size_t n, uint64_t seed)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

#endif
