/*
 * cursor.h - one cursor over a text input, for the planner's hand-written readers (HLO,
 * StableHLO, XLA shapes, XLA's buffer-assignment dumps, MiniMalloc CSV): the position, the
 * line it is on and where that line begins, the small lexer steps every reader takes, and
 * an error at a place written "line L:C: ..." with where "line L:C" (L and C 1-based, C in
 * bytes).
 *
 * The cursor borrows its text, which must outlive it, and never reads past len: the text
 * need not be NUL-terminated and may hold NUL bytes. Nothing here allocates.
 */
#ifndef TPUPLAN_CURSOR_H
#define TPUPLAN_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "planner/err.h"
#include "planner/text.h"

struct cursor {
    const char *s; /* the text (borrowed) */
    size_t len;
    size_t i;      /* the next byte */
    size_t line;   /* the line of s[i], from 1 */
    size_t bol;    /* where that line begins in s */
    struct err *e; /* where cursor_fail writes; may be NULL */
};

/* A cursor at the start of s[0..len), its errors into e. */
static inline struct cursor cursor_make(const char *s, size_t len, struct err *e)
{
    return (struct cursor){.s = s, .len = len, .i = 0, .line = 1, .bol = 0, .e = e};
}

/* Bytes left after the cursor. */
static inline size_t cursor_left(const struct cursor *c)
{
    return c->i < c->len ? c->len - c->i : 0;
}

/* The byte at the cursor, '\0' at the end (a NUL byte in the text reads the same). */
static inline char cursor_peek(const struct cursor *c)
{
    return c->i < c->len ? c->s[c->i] : '\0';
}

/* The 1-based column of the cursor on its line. */
static inline size_t cursor_col(const struct cursor *c)
{
    return c->i - c->bol + 1;
}

/* Steps past the byte at the cursor (not at the end); past a '\n' the next line begins. */
static inline void cursor_next(struct cursor *c)
{
    if (c->s[c->i] == '\n') {
        c->line++;
        c->bol = c->i + 1;
    }
    c->i++;
}

/* Skips blanks on the line: ' ', '\t', '\r'. */
static inline void cursor_skip_blanks(struct cursor *c)
{
    while (c->i < c->len && (c->s[c->i] == ' ' || c->s[c->i] == '\t' || c->s[c->i] == '\r'))
        c->i++;
}

/* Skips blanks and line ends. */
static inline void cursor_skip_space(struct cursor *c)
{
    for (;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '\n')
            return;
        cursor_next(c);
    }
}

/* Moves to the end of the line: its '\n', or the end of the text. */
static inline void cursor_to_eol(struct cursor *c)
{
    if (c->i < c->len) {
        const char *nl = memchr(c->s + c->i, '\n', c->len - c->i);
        c->i = nl != NULL ? (size_t)(nl - c->s) : c->len;
    }
}

/* Whether the text at the cursor starts with the NUL-terminated w. */
static inline bool cursor_starts(const struct cursor *c, const char *w)
{
    size_t n = strlen(w);
    return cursor_left(c) >= n && memcmp(c->s + c->i, w, n) == 0;
}

/* Steps past w when the text at the cursor starts with it; false (and no step) otherwise. */
static inline bool cursor_lit(struct cursor *c, const char *w)
{
    if (!cursor_starts(c, w))
        return false;
    c->i += strlen(w);
    return true;
}

/* Steps past ch when it is at the cursor. */
static inline bool cursor_accept(struct cursor *c, char ch)
{
    if (c->i >= c->len || c->s[c->i] != ch)
        return false;
    c->i++;
    return true;
}

/* Steps past the bytes for which in() holds (never a line end, for the column's sake) and
 * returns how many. */
static inline size_t cursor_span(struct cursor *c, bool (*in)(char))
{
    size_t at = c->i;
    while (c->i < c->len && in(c->s[c->i]))
        c->i++;
    return c->i - at;
}

/* The decimal digits at the cursor as text_uint reads them (no sign, at most INT64_MAX),
 * stepping past them; false, and no step, when there are none or the value is too large. */
static inline bool cursor_uint(struct cursor *c, int64_t *out)
{
    return text_uint(c->s, c->len, &c->i, out);
}

/*
 * The line at text's cursor as a cursor of its own in *line: its s the line's first byte,
 * its len the line without its "\n" (or "\r\n"), at its column 1, with text's line number
 * and error; text moves to the next line. False, and no change, at the end of the text.
 * For readers that take a line at a time (XLA's dumps, CSV).
 */
static inline bool cursor_line(struct cursor *text, struct cursor *line)
{
    size_t at = text->i, n;
    const char *nl;

    if (at >= text->len)
        return false;
    nl = memchr(text->s + at, '\n', text->len - at);
    n = nl != NULL ? (size_t)(nl - (text->s + at)) : text->len - at;
    *line = (struct cursor){.s = text->s + at, .len = n, .line = text->line, .e = text->e};
    if (n > 0 && line->s[n - 1] == '\r')
        line->len--;
    text->i = at + n + (nl != NULL);
    if (nl != NULL) {
        text->line++;
        text->bol = text->i;
    }
    return true;
}

/* Sets *e to ERR_INVALID "line L:C: <fmt>" with where "line L:C"; returns ERR_INVALID. */
int cursor_fail_at(struct err *e, size_t line, size_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* cursor_fail_at at the cursor, into c->e. */
int cursor_fail(const struct cursor *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
