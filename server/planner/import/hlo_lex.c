/*
 * hlo_lex.c - the HLO parser's lexer and the pieces both halves of the parser read with
 * (hlo_int.h): XLA's tokens (xla/hlo/parser/hlo_lexer.cc), balanced attribute values, the
 * key=value lists, shapes, and the growth of the module's arrays. hlo.c (computations and
 * instructions) and hlo_attrs.c (the module's facts) both sit on it; it calls neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/hlo_int.h"
#include "planner/text.h"

/* ---- the lexer (hlo_lexer.cc) ------------------------------------------------------- */

static bool is_name_ch(char ch)
{
    /* XLA's names; '#' and '$' also appear in names translated from StableHLO */
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '-' || ch == '#' || ch == '$';
}

static bool is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* The end of the block comment opening at s[at], or 0 when it is not closed. */
static size_t comment_end(const struct cursor *c, size_t at)
{
    for (size_t k = at + 2; k + 1 < c->len; k++)
        if (c->s[k] == '*' && c->s[k + 1] == '/')
            return k + 2;
    return 0;
}

void hlo_skip(struct cursor *c)
{
    for (;;) {
        if (c->i < c->len && is_space(c->s[c->i])) {
            cursor_next(c);
        } else if (cursor_starts(c, "//")) {
            cursor_to_eol(c);
        } else if (cursor_starts(c, "/*")) {
            size_t end = comment_end(c, c->i);
            if (end == 0)
                return; /* the caller's "expected" names it */
            while (c->i < end)
                cursor_next(c);
        } else {
            return;
        }
    }
}

int hlo_expected(const struct cursor *c, const char *what)
{
    char got[24];

    if (cursor_starts(c, "/*"))
        return cursor_fail(c, "a comment opens here and is never closed");
    if (c->i >= c->len)
        snprintf(got, sizeof(got), "the end of the input");
    else if (c->s[c->i] == '\n' || c->s[c->i] == '\r')
        snprintf(got, sizeof(got), "the end of the line");
    else
        snprintf(got, sizeof(got), "'%c'", c->s[c->i] >= 32 && c->s[c->i] < 127 ? c->s[c->i] : '?');
    return cursor_fail(c, "expected %s, found %s", what, got);
}

int hlo_expect(struct cursor *c, char ch, const char *what)
{
    hlo_skip(c);
    return cursor_accept(c, ch) ? ERR_OK : hlo_expected(c, what);
}

struct hlo_span hlo_word(struct cursor *c)
{
    struct hlo_span sp = {(uint32_t)c->i, 0};
    sp.len = (uint32_t)cursor_span(c, is_name_ch);
    return sp;
}

bool hlo_at_keyword(const struct cursor *c, const char *w)
{
    size_t n = strlen(w);
    return cursor_starts(c, w) && (c->i + n >= c->len || !is_name_ch(c->s[c->i + n]));
}

bool hlo_span_eq(const char *s, struct hlo_span sp, const char *w)
{
    size_t n = strlen(w);
    return sp.len == n && memcmp(s + sp.off, w, n) == 0;
}

bool hlo_span_is(const struct hlo_module *m, struct hlo_span sp, const char *w)
{
    return hlo_span_eq(m->text, sp, w);
}

int hlo_string(struct cursor *c, struct hlo_span *out)
{
    size_t l = c->line, col = cursor_col(c);

    if (!cursor_accept(c, '"'))
        return hlo_expected(c, "a quoted string");
    out->off = (uint32_t)c->i;
    for (; c->i < c->len && c->s[c->i] != '"'; c->i++) {
        if (c->s[c->i] == '\n')
            return cursor_fail_at(c->e, l, col, "unterminated string");
        if (c->s[c->i] == '\\' && c->i + 1 < c->len && c->s[c->i + 1] != '\n')
            c->i++;
    }
    if (c->i >= c->len)
        return cursor_fail_at(c->e, l, col, "unterminated string");
    out->len = (uint32_t)(c->i - out->off);
    c->i++;
    return ERR_OK;
}

/* "'X'" for a closing bracket, in an "expected" message. */
static int expected_closer(const struct cursor *c, char closer)
{
    char what[8];
    snprintf(what, sizeof(what), "'%c'", closer);
    return hlo_expected(c, what);
}

int hlo_scan_balanced(struct cursor *c, bool value)
{
    char closers[HLO_MAX_DEPTH];
    unsigned depth = 0;
    struct hlo_span str;
    int rc;

    if (!value && cursor_peek(c) != '(' && cursor_peek(c) != '{' && cursor_peek(c) != '[')
        return hlo_expected(c, "an opening bracket");
    while (c->i < c->len) {
        char ch = c->s[c->i];
        bool comment = cursor_starts(c, "//") || cursor_starts(c, "/*");
        if (depth == 0 && value && (ch == ',' || is_space(ch) || comment))
            return ERR_OK;
        if (ch == '"') {
            if ((rc = hlo_string(c, &str)) != ERR_OK)
                return rc;
            continue;
        }
        if (comment || ch == '\n') {
            size_t at = c->i;
            hlo_skip(c);
            if (c->i == at) /* an unclosed comment */
                return hlo_expected(c, "a closing bracket");
            continue;
        }
        if (ch == '(' || ch == '{' || ch == '[') {
            if (depth == HLO_MAX_DEPTH)
                return err_set(c->e, ERR_LIMIT, "", "line %zu:%zu: more than %d nested brackets",
                               c->line, cursor_col(c), HLO_MAX_DEPTH);
            closers[depth++] = ch == '(' ? ')' : ch == '{' ? '}' : ']';
        } else if (ch == ')' || ch == '}' || ch == ']') {
            if (depth == 0) /* value: the end of an enclosing list */
                return ERR_OK;
            if (ch != closers[depth - 1])
                return expected_closer(c, closers[depth - 1]);
            if (--depth == 0 && !value) {
                c->i++;
                return ERR_OK;
            }
        }
        c->i++;
    }
    if (depth > 0)
        return expected_closer(c, closers[depth - 1]);
    return ERR_OK;
}

/* ---- growth ------------------------------------------------------------------------ */

/* A vec_reserve or vec_push failure (rc) of one of the module's arrays as its error. */
int hlo_grow_err(struct hlo_parser *p, int rc)
{
    return err_set(p->c.e, rc, "",
                   rc == ERR_LIMIT ? "HLO module too large" : "out of memory parsing HLO");
}

int hlo_push(struct hlo_parser *p, struct vec *v, const void *x)
{
    int rc = vec_push(v, x);
    return rc == ERR_OK ? ERR_OK : hlo_grow_err(p, rc);
}

/* ---- shapes ------------------------------------------------------------------------ */

int hlo_push_leaf(struct hlo_parser *p, const struct hlo_leaf *src, const uint32_t *path,
                  unsigned depth)
{
    struct hlo_leaf l;

    if (depth > HLO_MAX_TUPLE_DEPTH)
        return err_set(p->c.e, ERR_LIMIT, "", "line %zu: tuples nested more than %d deep",
                       p->c.line, HLO_MAX_TUPLE_DEPTH);
    memset(&l, 0, sizeof(l));
    l.shape = src->shape;
    l.memory_space = src->memory_space;
    l.depth = (uint8_t)depth;
    memcpy(l.path, path, depth * sizeof(*path));
    return hlo_push(p, &p->leaves, &l);
}

/* Whether a '{' after an array shape opens its layout: the next token is a number, ':' or
 * '}' (hlo_parser.cc ParseShape; a computation's "-> f32[2] {" opens its body). */
static bool layout_follows(const struct cursor *c)
{
    struct cursor k = *c;

    hlo_skip(&k);
    if (!cursor_accept(&k, '{'))
        return false;
    hlo_skip(&k);
    return (cursor_peek(&k) >= '0' && cursor_peek(&k) <= '9') || cursor_peek(&k) == ':' ||
           cursor_peek(&k) == '}';
}

/* One array shape, dtype[dims] and its layout {..}, into *l (its span and memory space). */
static int array_shape(struct cursor *c, struct hlo_leaf *l)
{
    size_t line = c->line, col = cursor_col(c);
    struct shape sh;
    struct err se;
    struct hlo_span *sp = &l->shape;
    int rc;

    sp->off = (uint32_t)c->i;
    while (c->i < c->len &&
           ((c->s[c->i] >= 'a' && c->s[c->i] <= 'z') || (c->s[c->i] >= '0' && c->s[c->i] <= '9')))
        c->i++;
    if (c->i == sp->off)
        return hlo_expected(c, "a shape");
    if (cursor_peek(c) != '[')
        return hlo_expected(c, "'[' after the element type");
    if ((rc = hlo_scan_balanced(c, false)) != ERR_OK)
        return rc;
    if (layout_follows(c)) {
        hlo_skip(c);
        if ((rc = hlo_scan_balanced(c, false)) != ERR_OK)
            return rc;
    }
    sp->len = (uint32_t)(c->i - sp->off);
    if (shape_parse(c->s + sp->off, sp->len, &sh, &se) != ERR_OK) {
        char where[32];
        snprintf(where, sizeof(where), "line %zu:%zu", line, col);
        return err_set(c->e, se.code, where, "%s: shape \"%.*s\": %s", where,
                       (int)(sp->len > 200 ? 200 : sp->len), c->s + sp->off, se.msg);
    }
    l->memory_space = sh.memory_space;
    return ERR_OK;
}

int hlo_any_shape(struct hlo_parser *p, bool collect, uint32_t *path, unsigned depth)
{
    struct cursor *c = &p->c;
    struct hlo_leaf l;
    uint32_t k = 0;
    int rc;

    memset(&l, 0, sizeof(l));
    if (cursor_peek(c) != '(') {
        if ((rc = array_shape(c, &l)) != ERR_OK)
            return rc;
        return collect ? hlo_push_leaf(p, &l, path, depth) : ERR_OK;
    }
    if (depth == HLO_MAX_TUPLE_DEPTH)
        return err_set(c->e, ERR_LIMIT, "", "line %zu:%zu: tuples nested more than %d deep",
                       c->line, cursor_col(c), HLO_MAX_TUPLE_DEPTH);
    c->i++;
    hlo_skip(c);
    if (cursor_accept(c, ')'))
        return ERR_OK;
    for (;; k++) {
        hlo_skip(c);
        path[depth] = k;
        if ((rc = hlo_any_shape(p, collect, path, depth + 1)) != ERR_OK)
            return rc;
        hlo_skip(c);
        if (cursor_accept(c, ')'))
            return ERR_OK;
        if (!cursor_accept(c, ','))
            return hlo_expected(c, "',' or ')' in a tuple shape");
    }
}

int hlo_attr_key(struct cursor *c, struct hlo_span *key)
{
    int rc;

    *key = hlo_word(c);
    if (key->len == 0)
        return hlo_expected(c, "an attribute name");
    if ((rc = hlo_expect(c, '=', "'=' after the attribute name")) != ERR_OK)
        return rc;
    hlo_skip(c);
    return ERR_OK;
}

int hlo_attr_next(struct cursor *c, struct hlo_span *key, bool *more)
{
    hlo_skip(c);
    *more = cursor_accept(c, ',');
    if (!*more)
        return ERR_OK;
    hlo_skip(c);
    return hlo_attr_key(c, key);
}

int hlo_attr_value(struct cursor *c, struct cursor *at, struct hlo_span *val)
{
    int rc;

    *at = *c;
    val->off = (uint32_t)c->i;
    if ((rc = hlo_scan_balanced(c, true)) != ERR_OK)
        return rc;
    val->len = (uint32_t)(c->i - val->off);
    return val->len > 0 ? ERR_OK : hlo_expected(c, "an attribute value");
}

bool hlo_put_span(const char *s, struct hlo_span key, const struct hlo_span_attr *table, size_t n,
                  void *obj, struct hlo_span val)
{
    for (size_t q = 0; q < n; q++)
        if (hlo_span_eq(s, key, table[q].key)) {
            memcpy((char *)obj + table[q].off, &val, sizeof(val));
            return true;
        }
    return false;
}
