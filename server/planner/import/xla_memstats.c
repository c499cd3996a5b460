/*
 * xla_memstats.c - CompiledMemoryStats(...) and MaxText's memory line (xla_memstats.h).
 */
#include "planner/xla_memstats.h"

#include <ctype.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/base/cursor.h"

#define GIB (UINT64_C(1) << 30)

/* Each field's names: XLA's, and MaxText's words before " size:" ("estimated" and "total"
 * dropped, lower case). */
static const struct {
    const char *xla;
    const char *maxtext;
} fields[XLA_MS_COUNT] = {
    [XLA_MS_GENERATED_CODE] = {"generated_code_size_in_bytes", NULL},
    [XLA_MS_ARGUMENT] = {"argument_size_in_bytes", "argument"},
    [XLA_MS_OUTPUT] = {"output_size_in_bytes", "output"},
    [XLA_MS_ALIAS] = {"alias_size_in_bytes", NULL},
    [XLA_MS_TEMP] = {"temp_size_in_bytes", "temp"},
    [XLA_MS_HOST_GENERATED_CODE] = {"host_generated_code_size_in_bytes", NULL},
    [XLA_MS_HOST_ARGUMENT] = {"host_argument_size_in_bytes", NULL},
    [XLA_MS_HOST_OUTPUT] = {"host_output_size_in_bytes", NULL},
    [XLA_MS_HOST_ALIAS] = {"host_alias_size_in_bytes", NULL},
    [XLA_MS_HOST_TEMP] = {"host_temp_size_in_bytes", "host temp"},
    [XLA_MS_PEAK] = {"peak_memory_in_bytes", NULL},
    [XLA_MS_TOTAL] = {"total_size_in_bytes", "memory"},
};

/* Where each form starts. */
static const char compiled_mark[] = "CompiledMemoryStats(";
static const char *const maxtext_marks[] = {
    "Total memory size: ", "Total estimated memory size: ", "Argument size: ", "Output size: "};

const char *xla_memstats_field_name(enum xla_memstats_field f)
{
    return (unsigned)f < XLA_MS_COUNT ? fields[f].xla : "?";
}

/* The first MaxText mark in text: a line that also says "temp size: " (so that a report's
 * "Output size 0B" or another tool's line is not taken). */
static const char *maxtext_find(const char *text, size_t len)
{
    const char *best = NULL;

    for (size_t k = 0; k < sizeof(maxtext_marks) / sizeof(maxtext_marks[0]); k++) {
        const char *p = text;
        size_t n = strlen(maxtext_marks[k]);
        while ((p = memmem(p, len - (size_t)(p - text), maxtext_marks[k], n)) != NULL) {
            const char *eol = memchr(p, '\n', len - (size_t)(p - text));
            size_t line = eol != NULL ? (size_t)(eol - p) : len - (size_t)(p - text);
            if (memmem(p, line, "emp size: ", 10) != NULL) {
                if (best == NULL || p < best)
                    best = p;
                break;
            }
            p += n;
        }
    }
    return best;
}

bool xla_memstats_detect(const char *text, size_t len)
{
    return memmem(text, len, compiled_mark, sizeof(compiled_mark) - 1) != NULL ||
           maxtext_find(text, len) != NULL;
}

static bool is_key(char ch)
{
    return (ch >= 'a' && ch <= 'z') || ch == '_';
}

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* Skips blanks, line ends and '#' comment marks between fields. */
static void skip_gap(struct cursor *c)
{
    for (;;) {
        cursor_skip_space(c);
        if (!cursor_accept(c, '#'))
            return;
    }
}

/* NAME=[-]INT, ... ")" after "CompiledMemoryStats(". */
static int compiled(struct cursor *c, struct xla_memstats *out)
{
    for (;;) {
        size_t at, n;
        int64_t v;
        bool neg;
        skip_gap(c);
        if (cursor_accept(c, ')'))
            return ERR_OK;
        at = c->i;
        n = cursor_span(c, is_key);
        if (n == 0 || !cursor_accept(c, '='))
            return cursor_fail(c, "expected NAME=INT (temp_size_in_bytes=512) or ')'");
        neg = cursor_accept(c, '-');
        if (!cursor_uint(c, &v))
            return cursor_fail(c, "expected an integer byte count");
        for (size_t f = 0; f < XLA_MS_COUNT; f++)
            if (strlen(fields[f].xla) == n && memcmp(fields[f].xla, c->s + at, n) == 0 && !neg) {
                out->have[f] = true;
                out->bytes[f] = (uint64_t)v;
            }
        skip_gap(c);
        if (!cursor_accept(c, ',') && cursor_peek(c) != ')')
            return cursor_fail(c, "expected ',' or ')'");
    }
}

/* A MaxText value: D[.D] " GB" (2^30 bytes, rounded) or a byte count. */
static int maxtext_value(struct cursor *c, uint64_t *out, bool *gb)
{
    uint64_t num = 0, den = 1;

    if (!is_digit(cursor_peek(c)))
        return cursor_fail(c, "expected a number");
    for (; is_digit(cursor_peek(c)); c->i++)
        if (arith_mul(num, 10, &num) || arith_add(num, (uint64_t)(cursor_peek(c) - '0'), &num))
            return cursor_fail(c, "a number past 2^64");
    if (cursor_accept(c, '.')) {
        for (; is_digit(cursor_peek(c)); c->i++, den *= 10)
            if (den >= 1000000 || arith_mul(num, 10, &num) ||
                arith_add(num, (uint64_t)(cursor_peek(c) - '0'), &num))
                return cursor_fail(c, "too many digits");
    }
    *gb = cursor_lit(c, " GB");
    if (!*gb) {
        if (den != 1)
            return cursor_fail(c, "expected \" GB\" after a fraction");
        *out = num;
        return ERR_OK;
    }
    if (arith_mul(num, GIB, &num))
        return cursor_fail(c, "a size past 2^64 bytes");
    *out = (num + den / 2) / den;
    return ERR_OK;
}

/* The words before " size: " as a field: lower case, "estimated " and "total " dropped. */
static int maxtext_key(struct cursor *c, enum xla_memstats_field *f)
{
    char key[48];
    size_t n = 0, at = c->i;
    const char *k = key;

    while (cursor_left(c) > 0 && !cursor_starts(c, " size: ") && cursor_peek(c) != '\n' &&
           n + 1 < sizeof(key))
        key[n++] = (char)tolower((unsigned char)c->s[c->i++]);
    key[n] = '\0';
    if (!cursor_lit(c, " size: ")) {
        c->i = at;
        return cursor_fail(c, "expected \"NAME size: VALUE\"");
    }
    if (strncmp(k, "total ", 6) == 0)
        k += 6;
    if (strncmp(k, "estimated ", 10) == 0)
        k += 10;
    for (size_t q = 0; q < XLA_MS_COUNT; q++)
        if (fields[q].maxtext != NULL && strcmp(fields[q].maxtext, k) == 0) {
            *f = (enum xla_memstats_field)q;
            return ERR_OK;
        }
    c->i = at;
    return cursor_fail(c, "unknown MaxText figure \"%s size\"", key);
}

/* "Total memory size: 100.4 GB, Output size: 44.5 GB, ... Host temp size: 0.0 GB." */
static int maxtext(struct cursor *c, struct xla_memstats *out)
{
    bool any_gb = false;
    int rc;

    for (;;) {
        enum xla_memstats_field f = XLA_MS_COUNT;
        bool gb = false;
        if ((rc = maxtext_key(c, &f)) != ERR_OK ||
            (rc = maxtext_value(c, &out->bytes[f], &gb)) != ERR_OK)
            return rc;
        out->have[f] = true;
        any_gb |= gb;
        if (!cursor_lit(c, ", "))
            break;
        if (cursor_lit(c, "in bytes"))
            break;
    }
    out->precision = any_gb ? GIB / 20 : 0;
    return cursor_accept(c, '.') ? ERR_OK : cursor_fail(c, "expected ', ' or '.'");
}

/* The cursor moved to text + at, counting lines. */
static void cursor_goto(struct cursor *c, size_t at)
{
    while (c->i < at)
        cursor_next(c);
}

int xla_memstats_parse(const char *text, size_t len, struct xla_memstats *out, struct err *e)
{
    struct cursor c = cursor_make(text, len, e);
    const char *p = memmem(text, len, compiled_mark, sizeof(compiled_mark) - 1);
    const char *m = maxtext_find(text, len);
    int rc;

    memset(out, 0, sizeof(*out));
    if (p == NULL && m == NULL)
        return cursor_fail(&c, "expected CompiledMemoryStats(...) or MaxText's \"Total memory "
                               "size: ...\" line");
    if (p != NULL && (m == NULL || p < m)) {
        cursor_goto(&c, (size_t)(p - text));
        out->line = c.line;
        out->form = XLA_MS_COMPILED;
        c.i += sizeof(compiled_mark) - 1;
        rc = compiled(&c, out);
    } else {
        cursor_goto(&c, (size_t)(m - text));
        out->line = c.line;
        out->form = XLA_MS_MAXTEXT;
        rc = maxtext(&c, out);
    }
    if (rc != ERR_OK)
        memset(out, 0, sizeof(*out));
    return rc;
}
