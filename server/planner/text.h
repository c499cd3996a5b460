/*
 * text.h - small helpers for the planner's text inputs (JSON, CSV, HLO).
 */
#ifndef TPUPLAN_TEXT_H
#define TPUPLAN_TEXT_H

#include <stddef.h>
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

#endif
