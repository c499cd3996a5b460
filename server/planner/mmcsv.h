/*
 * mmcsv.h - MiniMalloc CSV instances (server/planner/SOURCES.md#minimalloc-csv).
 *
 * Input: a header row naming the columns, then one buffer per row. Required columns are
 * id, lower, upper and size; lifetimes are half-open [lower, upper). MiniMalloc's legacy
 * aliases are accepted: begin/start -> lower, buffer/buffer_id -> id, and an `end` column
 * is inclusive (upper = end + 1). The optional columns alignment, hint, offset and gaps
 * are read past and listed in mmcsv.ignored so the caller can say so; ignoring gaps is
 * safe (a buffer then occupies its whole extent), ignoring the others only drops a wish.
 * An id may be quoted as RFC 4180 quotes a field ("a,b"; "" is a quote), within its line, and
 * one leading apostrophe is dropped (a spreadsheet's mark for text).
 * Output: the same buffers with an offset column appended (MiniMalloc's solution form), each
 * id written so that a spreadsheet shows it as text, never runs it as a formula (mmcsv_format),
 * and so that this reader reads it back.
 *
 * Errors name the line and column: "line 17, column size: not a number".
 */
#ifndef TPUPLAN_MMCSV_H
#define TPUPLAN_MMCSV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/pack.h"

#define MMCSV_ID_MAX 256 /* bytes in one id */

struct mmcsv {
    size_t n;
    struct pack_buffer *bufs; /* n entries, malloc'd, owned (mmcsv_free) */
    char **ids;               /* n NUL-terminated ids, each malloc'd, owned */
    size_t *lines;            /* n: the input line of each buffer (1-based), owned */
    char ignored[128];        /* comma list of optional columns read past, "" if none */
};

/* True when text starts with a MiniMalloc header (first column id or an alias). */
bool mmcsv_detect(const char *text, size_t len);

/*
 * Parses len bytes of text (need not be NUL-terminated). At most max_buffers rows
 * (ERR_LIMIT beyond). Checks duplicate ids, size > 0, lower < upper, numbers in range.
 * On failure *out is left empty.
 */
ERR_MUST_CHECK int mmcsv_parse(const char *text, size_t len, size_t max_buffers, struct mmcsv *out,
                               struct err *e);

void mmcsv_free(struct mmcsv *m);

/*
 * Formats the solution "id,lower,upper,size,offset" (one row per buffer, in input order)
 * into a malloc'd NUL-terminated string *text of *len bytes, owned by the caller. An id that
 * starts with = + - @, a tab, a carriage return or an apostrophe is written after an
 * apostrophe (OWASP's "CSV Injection"); one with a comma, quote or line break, or blanks at
 * either end, in quotes. The numbers are written as they are.
 */
ERR_MUST_CHECK int mmcsv_format(const struct mmcsv *m, const uint64_t *offsets, char **text,
                                size_t *len, struct err *e);

#endif
