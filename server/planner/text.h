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

#endif
