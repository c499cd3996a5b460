/*
 * xla_assign.c - XLA's buffer-assignment and memory-usage-report dumps (see xla_assign.h
 * for the grammar and where in openxla/xla each line is printed).
 */
#include "planner/xla_assign.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/cursor.h"
#include "planner/base/vec.h"
#include "planner/base/names.h"

#define XLA_KEY_MAX 768 /* bytes in NAME{INDEX}: a model name (512) and a deep index */

/* A decimal integer, optionally negative when neg_ok; false when none or out of range. */
static bool num(struct cursor *s, bool neg_ok, int64_t *v)
{
    bool neg = false;
    uint64_t acc = 0, lim;
    size_t q = s->i;

    if (q < s->len && s->s[q] == '-' && neg_ok) {
        neg = true;
        q++;
    }
    if (q == s->len || s->s[q] < '0' || s->s[q] > '9')
        return false;
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; q < s->len && s->s[q] >= '0' && s->s[q] <= '9'; q++) {
        if (acc > (lim - (uint64_t)(s->s[q] - '0')) / 10)
            return false;
        acc = acc * 10 + (uint64_t)(s->s[q] - '0');
    }
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    s->i = q;
    return true;
}

static bool unum(struct cursor *s, uint64_t *v)
{
    int64_t x;
    if (!num(s, false, &x))
        return false;
    *v = (uint64_t)x;
    return true;
}

/* Steps past the next c on the line; false when there is none. */
static bool skip_past(struct cursor *s, char c)
{
    const char *q = memchr(s->s + s->i, c, cursor_left(s));
    if (q == NULL)
        return false;
    s->i = (size_t)(q - s->s) + 1;
    return true;
}

/* Whether the line holds nothing but blanks. */
static bool blank(const struct cursor *s)
{
    for (size_t q = 0; q < s->len; q++)
        if (s->s[q] != ' ' && s->s[q] != '\t')
            return false;
    return true;
}

/* Pass one grows the allocations, the values and their keys (back to back, each with its
 * NUL) in vecs, bounded by the caller's max_values (a key is under XLA_KEY_MAX bytes);
 * xla_assign_parse hands them to the xla_assign before pass two. */
struct parser {
    struct xla_assign *a;
    struct vec allocs;  /* struct xla_alloc */
    struct vec values;  /* struct xla_value */
    struct vec strings; /* char */
    size_t max_values;
    struct err *e;
    /* XLA before 2019-09 printed a value as "  <ID NAME @C>, positions:", its positions and
     * uses, then " [OFFSET,SIZE]: SHAPE": the value read, waiting for that line. */
    bool pending;
    struct xla_value pv;
    char pkey[XLA_KEY_MAX];
    size_t pklen;
};

static struct xla_alloc *last_alloc(const struct parser *ps)
{
    return vec_at(&ps->allocs, ps->allocs.n - 1);
}

static void note_ignored(struct xla_assign *a, const char *s, size_t n)
{
    size_t have = strlen(a->ignored);
    if (strstr(a->ignored, "...") != NULL)
        return;
    if (n > 40)
        n = 40;
    if (have + n + 5 >= sizeof(a->ignored)) {
        snprintf(a->ignored + have, sizeof(a->ignored) - have, "%s...", have ? ", " : "");
        return;
    }
    snprintf(a->ignored + have, sizeof(a->ignored) - have, "%s%.*s", have ? ", " : "", (int)n, s);
}

/* The shape after "shape " or "output shape is ": between '|' pipes (since 2019-12,
 * cba0905e36), or, as driver.cc's example writes it, without them: then it runs, past any
 * bracketed group, to end (" at ShapeIndex" for a parameter; ", " or the final ':' for the
 * output). */
static int shape_text(struct cursor *s, const char *end)
{
    int depth = 0;

    if (cursor_accept(s, '|'))
        return skip_past(s, '|') ? ERR_OK : cursor_fail(s, "expected the '|' closing the shape");
    size_t at = s->i;

    for (; s->i < s->len; s->i++) {
        char ch = s->s[s->i];
        depth += ch == '(' || ch == '[' || ch == '{';
        depth -= ch == ')' || ch == ']' || ch == '}';
        if (depth == 0 && s->i > at &&
            (end != NULL ? cursor_starts(s, end)
                         : cursor_starts(s, ", ") || (cursor_left(s) == 1 && ch == ':')))
            return ERR_OK;
        if (depth < 0)
            break;
    }
    s->i = at;
    return cursor_fail(s, "expected a shape and %s", end != NULL ? end : "', ' or ':'");
}

/* One ", item" of an allocation line (BufferAllocation::ToShortString's order). */
static int alloc_item(struct parser *ps, struct cursor *s, struct xla_alloc *al)
{
    int rc;
    static const struct {
        const char *word;
        unsigned flag;
    } words[] = {{"constant", XLA_ALLOC_CONSTANT},
                 {"thread-local", XLA_ALLOC_THREAD_LOCAL},
                 {"maybe-live-out", XLA_ALLOC_LIVE_OUT},
                 {"preallocated-temp", XLA_ALLOC_TEMP}};

    if (cursor_lit(s, "color ")) {
        if (!num(s, true, &al->color))
            return cursor_fail(s, "expected the color's number");
        return ERR_OK;
    }
    if (cursor_lit(s, "parameter ")) {
        /* "parameter N at ShapeIndex {..}" before 2019-12, then with ", shape |S|" */
        if (!num(s, false, &al->parameter))
            return cursor_fail(s, "expected the parameter's number");
        al->flags |= XLA_ALLOC_PARAMETER;
        if (cursor_lit(s, ", shape ") && (rc = shape_text(s, " at ShapeIndex")) != ERR_OK)
            return rc;
        if (!cursor_lit(s, " at ShapeIndex {") || !skip_past(s, '}'))
            return cursor_fail(s, "expected \" at ShapeIndex {...}\" after the parameter");
        return ERR_OK;
    }
    if (cursor_lit(s, "output shape is ")) {
        if ((rc = shape_text(s, NULL)) != ERR_OK)
            return rc;
        al->flags |= XLA_ALLOC_OUTPUT;
        return ERR_OK;
    }
    for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++) {
        size_t save = s->i;
        if (cursor_lit(s, words[k].word) && (cursor_starts(s, ",") || cursor_left(s) == 1)) {
            al->flags |= words[k].flag;
            return ERR_OK;
        }
        s->i = save;
    }
    /* Something a later XLA prints: read past it to the next ", " (or the final ':'). */
    size_t q = s->i;
    while (q + 1 < s->len && !(s->s[q] == ',' && s->s[q + 1] == ' '))
        q++;
    if (q == s->i)
        return cursor_fail(s, "expected an allocation attribute");
    note_ignored(ps->a, s->s + s->i, q - s->i);
    s->i = q;
    return ERR_OK;
}

static bool hex_ch(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* allocation N: [0xADDRESS, ]size S[, ...]: */
static int alloc_line(struct parser *ps, struct cursor *s)
{
    struct xla_assign *a = ps->a;
    struct xla_alloc al;
    int rc;

    memset(&al, 0, sizeof(al));
    al.parameter = -1;
    al.line = s->line;
    al.first = ps->values.n;
    s->i += strlen("allocation ");
    if (!num(s, false, &al.index))
        return cursor_fail(s, "expected the allocation's index");
    if (ps->allocs.n > 0 && al.index <= last_alloc(ps)->index)
        return cursor_fail(s, "allocation %lld follows allocation %lld: indices must increase",
                           (long long)al.index, (long long)last_alloc(ps)->index);
    if (!cursor_lit(s, ": "))
        return cursor_fail(s, "expected \": size \" after the allocation index");
    if (cursor_lit(s, "0x")) { /* the allocation's address, printed until 2022-09 (d35412bdbd) */
        (void)cursor_span(s, hex_ch);
        if (!cursor_lit(s, ", "))
            return cursor_fail(s, "expected \", size \" after the allocation's address");
    }
    if (!cursor_lit(s, "size "))
        return cursor_fail(s, "expected \": size \" after the allocation index");
    if (!unum(s, &al.size))
        return cursor_fail(s, "expected the allocation's size in bytes");
    while (!(cursor_left(s) == 1 && s->s[s->i] == ':')) {
        if (!cursor_lit(s, ", "))
            return cursor_fail(s, "expected \", \" and an attribute, or the final ':'");
        if ((rc = alloc_item(ps, s, &al)) != ERR_OK)
            return rc;
    }
    al.base = a->total_bytes;
    if ((rc = vec_push(&ps->allocs, &al)) == ERR_LIMIT)
        return err_set(ps->e, ERR_LIMIT, "", "line %zu: more than %zu allocations", s->line,
                       ps->max_values);
    if (rc != ERR_OK)
        return err_set(ps->e, rc, "", "out of memory for %zu allocations", ps->allocs.n + 1);
    if (__builtin_add_overflow(a->total_bytes, al.size, &a->total_bytes))
        return cursor_fail(s, "the allocations' sizes add up past 2^64-1");
    return ERR_OK;
}

/* A byte of an HLO name as the dump prints it: printable, not '{' (its index) or '>'. */
static bool name_ch(char ch)
{
    return (unsigned char)ch > ' ' && ch != 0x7f && ch != '{' && ch != '>';
}

static bool index_ch(char ch)
{
    return (ch >= '0' && ch <= '9') || ch == ',';
}

/* NAME[{INDEX}] into key (always with an index), *name_len the tensor name's length. */
static int value_name(struct cursor *s, char *key, size_t *klen, size_t *name_len)
{
    const char *n0 = s->s + s->i, *i0;
    size_t n, ni;

    /* HLO names are printable: a control byte (NUL above all) ends the name, and then
     * the '>' expected after it is missing. */
    n = cursor_span(s, name_ch);
    if (n == 0)
        return cursor_fail(s, "expected the value's instruction name");
    i0 = s->s + s->i;
    if (cursor_accept(s, '{')) {
        (void)cursor_span(s, index_ch);
        if (!cursor_lit(s, "}"))
            return cursor_fail(s, "expected a shape index of digits and commas closed by '}'");
    }
    ni = (size_t)(s->s + s->i - i0);
    if (n + (ni ? ni : 2) >= XLA_KEY_MAX)
        return cursor_fail(s, "the value's name is longer than %d bytes", XLA_KEY_MAX);
    memcpy(key, n0, n);
    memcpy(key + n, ni ? i0 : "{}", ni ? ni : 2);
    *klen = n + (ni ? ni : 2);
    key[*klen] = '\0';
    /* The contract: NAME for an array and for a tuple's own buffer, NAME{i,...} below. */
    *name_len = (ni == 0 || ni == 2) ? n : n + ni;
    return ERR_OK;
}

/* "ID NAME[INDEX][ (phi)][ @COLOR]>" after a value's '<' (HloValue::ToShortString) into
 * *v (in the last allocation) and its key. */
static int value_head(struct parser *ps, struct cursor *s, struct xla_value *v, char *key,
                      size_t *klen)
{
    int rc;

    memset(v, 0, sizeof(*v));
    v->line = s->line;
    v->alloc = ps->allocs.n - 1;
    if (!num(s, false, &v->id) || !cursor_lit(s, " "))
        return cursor_fail(s, "expected the value's id and a space");
    if ((rc = value_name(s, key, klen, &v->name_len)) != ERR_OK)
        return rc;
    (void)cursor_lit(s, " (phi)");
    if (cursor_lit(s, " @") && !num(s, true, &v->color))
        return cursor_fail(s, "expected the value's color (memory space) after '@'");
    return cursor_lit(s, ">") ? ERR_OK : cursor_fail(s, "expected '>' after the value");
}

/* Adds value v (its size and offset read) with its key to the last allocation. */
static int value_push(struct parser *ps, const struct cursor *s, struct xla_value *v,
                      const char *key, size_t klen)
{
    struct xla_alloc *al = last_alloc(ps);
    size_t end;
    int rc;

    if (__builtin_add_overflow(v->offset, v->size, &end) || end > al->size)
        return cursor_fail(s,
                           "the value (offset %llu, size %llu) does not fit in allocation "
                           "%lld of %llu bytes",
                           (unsigned long long)v->offset, (unsigned long long)v->size,
                           (long long)al->index, (unsigned long long)al->size);
    if (ps->values.n >= ps->max_values)
        return err_set(ps->e, ERR_LIMIT, "", "line %zu: more than %zu values", s->line,
                       ps->max_values);
    /* The key first: a value is pushed only with its key. */
    v->key_at = ps->strings.n;
    if ((rc = vec_reserve(&ps->strings, ps->strings.n + klen + 1)) != ERR_OK ||
        (rc = vec_push(&ps->values, v)) != ERR_OK)
        return err_set(ps->e, rc, "", "out of memory for %zu values", ps->values.n + 1);
    memcpy(vec_at(&ps->strings, ps->strings.n), key, klen + 1);
    ps->strings.n += klen + 1;
    al->count++;
    return ERR_OK;
}

/*  value: <ID NAME[INDEX][ (phi)][ @COLOR]> (size=S,offset=O): SHAPE */
static int value_line(struct parser *ps, struct cursor *s)
{
    struct xla_value v;
    char key[XLA_KEY_MAX];
    size_t klen = 0;
    int rc;

    s->i += strlen(" value: <");
    if ((rc = value_head(ps, s, &v, key, &klen)) != ERR_OK)
        return rc;
    if (!cursor_lit(s, " (size="))
        return cursor_fail(s, "expected \"> (size=\"");
    if (!unum(s, &v.size) || !cursor_lit(s, ",offset="))
        return cursor_fail(s, "expected the value's size in bytes and \",offset=\"");
    if (!unum(s, &v.offset) || !cursor_lit(s, "):"))
        return cursor_fail(s, "expected the value's offset and \"):\"");
    return value_push(ps, s, &v, key, klen);
}

/* XLA before 2019-09 (4ef42a940e's parent, BufferAllocation::ToString): each value as
 * "  %s [%d,%d]: %s", HloValue::ToString then offset, size and shape, over lines:
 *   "  <ID NAME @C>, positions:", "  POSITION" lines, " uses:", "  USE" lines, then
 *   " [OFFSET,SIZE]: SHAPE". One line of it (pending: a value waits for its offset line). */
static int old_value_line(struct parser *ps, struct cursor *s)
{
    int rc;

    if (cursor_lit(s, "  <")) {
        if (ps->pending)
            return cursor_fail(s, "a value before the \" [OFFSET,SIZE]: SHAPE\" line of the last");
        if ((rc = value_head(ps, s, &ps->pv, ps->pkey, &ps->pklen)) != ERR_OK)
            return rc;
        if (!cursor_lit(s, ", positions:") || cursor_left(s) != 0)
            return cursor_fail(s, "expected \", positions:\" after the value");
        ps->pending = true;
        return ERR_OK;
    }
    if (!ps->pending)
        return cursor_fail(s, "a value's position, use or offset line without its value");
    if (cursor_lit(s, " [")) {
        if (!unum(s, &ps->pv.offset) || !cursor_lit(s, ",") || !unum(s, &ps->pv.size) ||
            !cursor_lit(s, "]:"))
            return cursor_fail(s, "expected \" [OFFSET,SIZE]: SHAPE\"");
        ps->pending = false;
        return value_push(ps, s, &ps->pv, ps->pkey, ps->pklen);
    }
    return ERR_OK; /* "  POSITION", " uses:", "  USE, operand N": read past */
}

/* ---- keys: the values by NAME{INDEX} ------------------------------------------------ */

static struct names_key value_key(const void *ctx, uint32_t i)
{
    const struct xla_assign *a = ctx;

    return (struct names_key){a->values[i].key, strlen(a->values[i].key), 0};
}

/* Builds the table; a key printed twice is an error naming its second line. */
static int keys_build(struct xla_assign *a, struct names *t, struct err *e)
{
    int rc;

    if ((rc = names_init(t, a->nvalues, value_key, a)) != ERR_OK)
        return err_set(e, rc, "", "out of memory for %zu values", a->nvalues);
    for (size_t i = 0; i < a->nvalues; i++) {
        const struct xla_value *v = &a->values[i];
        uint32_t first;
        if ((rc = names_add(t, (uint32_t)i, &first)) != ERR_OK)
            return err_set(e, rc, "", "more than %zu values", a->nvalues);
        if (first != NAMES_NONE)
            return cursor_fail_at(e, v->line, 1,
                                  "value %.200s is assigned twice (first on line %zu)", v->key,
                                  a->values[first].line);
    }
    return ERR_OK;
}

/* ---- sections ---------------------------------------------------------------------- */

enum section { SEC_ALLOCS, SEC_USED, SEC_LIVE, SEC_SEQ, SEC_RANGES, SEC_PEAK };

/* "    KEY:START-END", both ends inclusive (HloLiveRange::ToString). */
static int range_line(struct parser *ps, struct cursor *s, const struct names *t)
{
    struct xla_assign *a = ps->a;
    const char *k = s->s + s->i, *colon = NULL;
    int64_t lo, hi;

    for (const char *q = k; q < s->s + s->len; q++)
        if (*q == ':')
            colon = q;
    if (colon == NULL || colon == k)
        return cursor_fail(s, "expected NAME{INDEX}:START-END");
    s->i = (size_t)(colon - s->s) + 1;
    if (!num(s, false, &lo) || !cursor_lit(s, "-") || !num(s, false, &hi) || cursor_left(s) != 0)
        return cursor_fail(s, "expected START-END, two step numbers");
    if (hi < lo || hi >= INT64_MAX - 1) {
        s->i = (size_t)(colon - s->s) + 1;
        return cursor_fail(s, "the live range %lld-%lld ends before it starts", (long long)lo,
                           (long long)hi);
    }
    uint32_t i = names_find(t, (struct names_key){k, (size_t)(colon - k), 0});
    if (i == NAMES_NONE) {
        a->live_unknown++; /* a value with no allocation (XLA allocated none for it) */
        return ERR_OK;
    }
    struct xla_value *v = &a->values[i];
    v->live_given = true;
    v->live_start = lo;
    v->live_end = hi + 1;
    return ERR_OK;
}

/* One line of the HloLiveRange part; *sec moves between its subsections. */
static int live_line(struct parser *ps, struct cursor *s, enum section *sec, const struct names *t)
{
    if (cursor_lit(s, "  InstructionSequence:") && cursor_left(s) == 0)
        *sec = SEC_SEQ;
    else if (cursor_lit(s, "  BufferLiveRange:") && cursor_left(s) == 0)
        *sec = SEC_RANGES;
    else if (cursor_lit(s, "  Live ranges at ") && skip_past(s, ':') && cursor_left(s) == 0)
        *sec = SEC_PEAK;
    else if (cursor_lit(s, "    ") && (*sec == SEC_SEQ || *sec == SEC_PEAK))
        ; /* the flattened sequence and the buffers live at the peak: read past */
    else if (*sec == SEC_RANGES && s->i == 4)
        return range_line(ps, s, t);
    else
        return cursor_fail(s,
                           "expected an HloLiveRange line (InstructionSequence:, BufferLiveRange:, "
                           "Live ranges at N (peak):, or an indented entry)");
    return ERR_OK;
}

static int total_line(struct parser *ps, struct cursor *s)
{
    uint64_t v;
    s->i += strlen("Total bytes used: ");
    if (!unum(s, &v))
        return cursor_fail(s, "expected the total in bytes");
    if (v != ps->a->total_bytes)
        return cursor_fail(
            s,
            "the total %llu is not the sum of the allocations above (%llu): is the file "
            "cut short?",
            (unsigned long long)v, (unsigned long long)ps->a->total_bytes);
    ps->a->have_total_line = true;
    return ERR_OK;
}

/* One line in the allocations part. */
static int allocs_line(struct parser *ps, struct cursor *s, enum section *sec)
{
    if (ps->pending && !cursor_starts(s, "  ") && !cursor_starts(s, " uses:") &&
        !cursor_starts(s, " ["))
        return cursor_fail(
            s, "expected the \" [OFFSET,SIZE]: SHAPE\" line of the value on line %zu", ps->pv.line);
    if (cursor_starts(s, "allocation "))
        return alloc_line(ps, s);
    bool value = cursor_starts(s, " value: <"),
         old = cursor_starts(s, "  ") || cursor_starts(s, " uses:") || cursor_starts(s, " [");
    if ((value || old) && ps->allocs.n == 0)
        return cursor_fail(s, "a value before any allocation line");
    if (value)
        return value_line(ps, s);
    if (old)
        return old_value_line(ps, s);
    if (cursor_starts(s, "Total bytes used: "))
        return total_line(ps, s);
    if (cursor_lit(s, "Used values:") && cursor_left(s) == 0) {
        *sec = SEC_USED;
        return ERR_OK;
    }
    if (cursor_lit(s, "BufferAssignment:") && cursor_left(s) == 0 && ps->allocs.n == 0)
        return ERR_OK;
    return cursor_fail(s,
                       "expected \"allocation N: size S...:\", \" value: <ID NAME @COLOR> "
                       "(size=S,offset=O): SHAPE\", \"Total bytes used: N\" or \"Used values:\"");
}

/* The part after "Used values:": HloValue::ToString blocks are read past up to the
 * HloLiveRange part, whose lines are read with the value table. */
static int parse_lines(struct parser *ps, struct cursor *text, enum section *sec,
                       const struct names *t)
{
    struct cursor line, at = *text;
    struct cursor *s = &line;
    int rc;

    for (; cursor_line(text, s); at = *text) {
        if (s->len > XLA_LINE_MAX)
            return err_set(ps->e, ERR_LIMIT, "", "line %zu is longer than %u bytes", s->line,
                           XLA_LINE_MAX);
        if (blank(s))
            continue;
        if (cursor_starts(s, "HloLiveRange (max ")) {
            if (t == NULL) { /* unread it: the caller builds the value table first */
                *text = at;
                *sec = SEC_USED;
                return ERR_OK;
            }
            s->i += strlen("HloLiveRange (max ");
            if (!num(s, false, &ps->a->schedule_end) || !cursor_lit(s, "):") || cursor_left(s) != 0)
                return cursor_fail(s, "expected \"HloLiveRange (max N):\"");
            ps->a->have_live_ranges = true;
            *sec = SEC_LIVE;
            continue;
        }
        if (*sec == SEC_ALLOCS) {
            if ((rc = allocs_line(ps, s, sec)) != ERR_OK)
                return rc;
            if (*sec == SEC_USED && t == NULL)
                return ERR_OK; /* the caller builds the value table, then goes on */
            continue;
        }
        if (*sec == SEC_USED)
            continue;
        if ((rc = live_line(ps, s, sec, t)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

void xla_assign_free(struct xla_assign *a)
{
    if (a == NULL)
        return;
    free(a->allocs);
    free(a->values);
    free(a->strings);
    memset(a, 0, sizeof(*a));
}

int xla_assign_parse(const char *text, size_t len, size_t max_values, struct xla_assign *out,
                     struct err *e)
{
    struct parser ps;
    struct names t = {0};
    struct cursor c = cursor_make(text, len, e);
    enum section sec = SEC_ALLOCS;
    int rc;

    memset(out, 0, sizeof(*out));
    memset(&ps, 0, sizeof(ps));
    ps.a = out;
    ps.max_values = max_values;
    ps.e = e;
    vec_init(&ps.allocs, sizeof(struct xla_alloc), max_values);
    vec_init(&ps.values, sizeof(struct xla_value), max_values);
    vec_init(&ps.strings, 1,
             max_values <= SIZE_MAX / XLA_KEY_MAX ? max_values * XLA_KEY_MAX : SIZE_MAX);
    /* Pass one: the allocations and their values, up to "Used values:" (or the end). */
    rc = parse_lines(&ps, &c, &sec, NULL);
    if (rc == ERR_OK && ps.pending)
        rc = cursor_fail_at(
            e, ps.pv.line, 1,
            "the value has no \" [OFFSET,SIZE]: SHAPE\" line: is the file cut short?");
    out->nallocs = ps.allocs.n;
    out->allocs = vec_take(&ps.allocs);
    out->nvalues = ps.values.n;
    out->values = vec_take(&ps.values);
    out->strings = vec_take(&ps.strings);
    if (rc != ERR_OK)
        goto out;
    if (out->nallocs == 0) {
        rc = err_set(e, ERR_INVALID, "line 1:1",
                     "line 1:1: no \"allocation N: size S:\" line: not a buffer assignment");
        goto out;
    }
    for (size_t i = 0; i < out->nvalues; i++)
        out->values[i].key = out->strings + out->values[i].key_at;
    if ((rc = keys_build(out, &t, e)) != ERR_OK)
        goto out;
    /* Pass two: the rest, with the table to find each live range's value. */
    if (sec != SEC_ALLOCS)
        rc = parse_lines(&ps, &c, &sec, &t);
out:
    names_free(&t);
    if (rc != ERR_OK)
        xla_assign_free(out);
    return rc;
}

/* The first non-blank line of text, in *s; false when there is none. */
static bool first_line(const char *text, size_t len, struct cursor *s)
{
    struct cursor c = cursor_make(text, len, NULL);

    while (cursor_line(&c, s))
        if (!blank(s))
            return true;
    return false;
}

bool xla_assign_detect(const char *text, size_t len)
{
    struct cursor s;
    int64_t n;

    if (!first_line(text, len, &s))
        return false;
    if (cursor_lit(&s, "BufferAssignment:"))
        return cursor_left(&s) == 0;
    if (!cursor_lit(&s, "allocation ") || !num(&s, false, &n) || !cursor_lit(&s, ": "))
        return false;
    if (cursor_lit(&s, "0x")) { /* the address XLA printed until 2022 */
        (void)cursor_span(&s, hex_ch);
        if (!cursor_lit(&s, ", "))
            return false;
    }
    return cursor_lit(&s, "size ");
}

bool xla_report_detect(const char *text, size_t len)
{
    struct cursor s;

    if (!first_line(text, len, &s))
        return false;
    return cursor_starts(&s, "Total bytes used: ") ||
           cursor_starts(&s, "memory_space_allocation_entries {");
}

/* One line of the proto form, with its block depth before the line in *depth. */
static int report_proto_line(struct cursor *s, int *depth, struct xla_report *r)
{
    uint64_t v;
    int64_t c;

    while (cursor_peek(s) == ' ')
        s->i++;
    if (*depth == 0 && cursor_lit(s, "memory_space_allocation_entries {")) {
        *depth = 1;
        if (r->nspaces < XLA_REPORT_SPACES_MAX)
            memset(&r->spaces[r->nspaces], 0, sizeof(r->spaces[0]));
        r->nspaces++;
        return ERR_OK;
    }
    if (*depth == 1 && cursor_lit(s, "total_bytes: ")) {
        if (!unum(s, &v))
            return cursor_fail(s, "expected total_bytes' value");
        if (__builtin_add_overflow(r->total_bytes, v, &r->total_bytes))
            return cursor_fail(s, "the totals add up past 2^64-1");
        if (r->nspaces <= XLA_REPORT_SPACES_MAX)
            r->spaces[r->nspaces - 1].total_bytes = v;
        return ERR_OK;
    }
    if (*depth == 1 && cursor_lit(s, "memory_space_color: ")) {
        if (!num(s, true, &c))
            return cursor_fail(s, "expected memory_space_color's value");
        if (r->nspaces <= XLA_REPORT_SPACES_MAX)
            r->spaces[r->nspaces - 1].color = c;
        return ERR_OK;
    }
    if (cursor_left(s) > 0 && s->s[s->len - 1] == '{')
        (*depth)++;
    else if (cursor_left(s) == 1 && s->s[s->i] == '}')
        (*depth)--;
    if (*depth < 0)
        return cursor_fail(s, "a '}' closes no block");
    return ERR_OK;
}

int xla_report_parse(const char *text, size_t len, struct xla_report *out, struct err *e)
{
    struct cursor c = cursor_make(text, len, e), s;
    int depth = 0, rc;

    memset(out, 0, sizeof(*out));
    if (!xla_report_detect(text, len))
        return err_set(e, ERR_INVALID, "line 1:1",
                       "line 1:1: expected \"Total bytes used: N\" or "
                       "\"memory_space_allocation_entries {\": not an XLA memory-usage report");
    while (cursor_line(&c, &s)) {
        if (blank(&s))
            continue;
        if (!out->proto && cursor_lit(&s, "Total bytes used: ")) {
            if (!unum(&s, &out->total_bytes))
                return cursor_fail(&s, "expected the total in bytes");
            return ERR_OK; /* the text form's total; the rest lists allocations */
        }
        out->proto = true;
        if ((rc = report_proto_line(&s, &depth, out)) != ERR_OK) {
            memset(out, 0, sizeof(*out));
            return rc;
        }
    }
    if (out->nspaces > XLA_REPORT_SPACES_MAX)
        out->nspaces = XLA_REPORT_SPACES_MAX;
    return ERR_OK;
}
