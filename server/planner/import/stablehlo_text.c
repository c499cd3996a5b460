/*
 * stablehlo_text.c - what every part of the StableHLO translator writes and reads with
 * (stablehlo_int.h): the bounded output buffers, the end of a string.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

int sh_buf_keep(struct sh_translator *t, struct sh_buf *b, const char *s, size_t n)
{
    struct cursor *c = &t->c;
    if (n == 0) /* s may be an empty buffer's NULL */
        return ERR_OK;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        char *p;
        while (cap < b->n + n + 1)
            cap *= 2;
        if ((p = realloc(b->p, cap)) == NULL)
            return err_set(c->e, ERR_NOMEM, "", "out of memory translating StableHLO");
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return ERR_OK;
}

int sh_buf_add(struct sh_translator *t, struct sh_buf *b, const char *s, size_t n)
{
    struct cursor *c = &t->c;
    if (t->out.n + t->entry.n + b->n + n > t->max_out)
        return err_set(c->e, ERR_LIMIT, "",
                       "the StableHLO module translates to more than %zu "
                       "bytes of HLO",
                       t->max_out);
    return sh_buf_keep(t, b, s, n);
}

int sh_buf_printf(struct sh_translator *t, struct sh_buf *b, const char *fmt, ...)
{
    struct cursor *c = &t->c;
    char buf[1024];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return err_set(c->e, ERR_LIMIT, "", "line %zu: a name or type is too long", c->line);
    return sh_buf_add(t, b, buf, (size_t)n);
}

size_t sh_string_end(const struct sh_translator *t, size_t q)
{
    const struct cursor *c = &t->c;
    for (q++; q < c->len && c->s[q] != '\n'; q++) {
        if (c->s[q] == '\\')
            q++;
        else if (c->s[q] == '"')
            return q + 1;
    }
    return 0;
}

void sh_buf_free(struct sh_buf *b)
{
    free(b->p);
    *b = (struct sh_buf){0};
}

static int hex(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if ((ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F'))
        return (ch | 0x20) - 'a' + 10;
    return -1;
}

int sh_put_unescaped(struct sh_translator *t, struct sh_buf *b, size_t from, size_t to)
{
    const char *s = t->c.s;
    int rc = ERR_OK;

    for (size_t q = from; q < to && rc == ERR_OK; q++) {
        unsigned char ch = (unsigned char)s[q];
        if (ch == '\\' && q + 2 < to && hex(s[q + 1]) >= 0 && hex(s[q + 2]) >= 0) {
            ch = (unsigned char)(hex(s[q + 1]) * 16 + hex(s[q + 2]));
            q += 2;
        } else if (ch == '\\' && q + 1 < to) {
            ch = (unsigned char)s[++q];
            ch = ch == 'n' || ch == 't' ? '_' : ch;
        }
        if (ch == '"' || ch == '\\')
            rc = sh_buf_add(t, b, ch == '"' ? "\\\"" : "\\\\", 2);
        else
            rc = sh_buf_add(t, b, ch >= 0x20 && ch < 0x7f ? (const char *)&ch : "_", 1);
    }
    return rc;
}

int sh_skip_group(struct cursor *c)
{
    unsigned depth = 0;
    while (c->i < c->len) {
        char ch = c->s[c->i];
        if (ch == '"') {
            for (c->i++; c->i < c->len && c->s[c->i] != '"' && c->s[c->i] != '\n'; c->i++)
                c->i += c->s[c->i] == '\\';
            if (c->i >= c->len)
                break;
        } else if (ch == '-' && c->i + 1 < c->len && c->s[c->i + 1] == '>') {
            c->i++; /* "->" of a function type: no bracket */
        } else if (ch == '(' || ch == '[' || ch == '<' || ch == '{') {
            depth++;
        } else if ((ch == ')' || ch == ']' || ch == '>' || ch == '}') && --depth == 0) {
            c->i++;
            return ERR_OK;
        }
        cursor_next(c);
    }
    return cursor_fail(c, "expected the end of a bracketed group");
}

void sh_skip_nl(struct cursor *c)
{
    for (;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '\n') {
            cursor_next(c);
        } else if (cursor_starts(c, "//")) {
            cursor_to_eol(c);
        } else {
            return;
        }
    }
}

int sh_buf_str(struct sh_translator *t, struct sh_buf *b, const char *s)
{
    return s != NULL ? sh_buf_add(t, b, s, strlen(s)) : ERR_OK;
}

struct sh_buf *sh_text(struct sh_translator *t)
{
    return &t->regions[t->depth - 1].text;
}

/* ---- symbols ------------------------------------------------------------------------- */

/* An MLIR bare-id: (letter | '_') (letter | digit | '_' | '$' | '.')* (LangRef). */
static bool bare_id(const char *p, size_t n)
{
    if (n == 0 || !((p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || p[0] == '_'))
        return false;
    for (size_t k = 1; k < n; k++)
        if (!ident_ch(p[k]) || p[k] == '-')
            return false;
    return true;
}

int sh_symbol(struct sh_translator *t, struct sh_sym *s)
{
    struct cursor *c = &t->c;

    *s = (struct sh_sym){0, 0, false};
    if (!cursor_accept(c, '@'))
        return cursor_fail(c, "expected a symbol @name");
    if (cursor_peek(c) == '"') {
        size_t e = sh_string_end(t, c->i);
        if (e == 0)
            return cursor_fail(c, "unterminated string");
        s->off = (uint32_t)c->i + 1;
        s->len = (uint32_t)(e - c->i - 2);
        s->quoted = !bare_id(c->s + s->off, s->len);
        c->i = e;
    } else {
        s->off = (uint32_t)c->i;
        s->len = (uint32_t)cursor_span(c, ident_ch);
    }
    return s->len > 0 ? ERR_OK : cursor_fail(c, "expected a symbol name after '@'");
}

bool sh_sym_name(const struct sh_translator *t, const struct sh_sym *s, char *out, size_t cap)
{
    static const char hex[] = "0123456789abcdef";
    const char *p = t->c.s + s->off;
    size_t k = 0;

    if (!s->quoted) {
        if (s->len >= cap)
            return false;
        memcpy(out, p, s->len);
        out[s->len] = '\0';
        return true;
    }
    if (cap < 3)
        return false;
    out[k++] = '_';
    out[k++] = 'q';
    for (size_t q = 0; q < s->len; q++) {
        char ch = p[q];
        if (k + 4 > cap)
            return false;
        bool keep = q == 0 ? (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'
                           : ident_ch(ch) && ch != '-' && ch != '$';
        if (keep) { /* a quoted name has one byte at least that is not kept: a '-' */
            out[k++] = ch;
        } else {
            out[k++] = '-';
            out[k++] = hex[(unsigned char)ch >> 4];
            out[k++] = hex[(unsigned char)ch & 15];
        }
    }
    out[k] = '\0';
    return true;
}
