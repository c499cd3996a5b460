/*
 * mmcsv.c - MiniMalloc CSV reader and solution writer (see mmcsv.h).
 */
#include "planner/mmcsv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/cursor.h"
#include "planner/base/names.h"
#include "planner/base/vec.h"
#include "planner/arith.h"
#include "planner/text.h"

enum col { COL_ID, COL_LOWER, COL_UPPER, COL_END, COL_SIZE, COL_IGNORED, COL_NONE };

#define MMCSV_COLS_MAX 16

static const struct {
    const char *name;
    enum col col;
} col_names[] = {
    {"id", COL_ID},        {"buffer", COL_ID},
    {"buffer_id", COL_ID}, {"lower", COL_LOWER},
    {"begin", COL_LOWER},  {"start", COL_LOWER},
    {"upper", COL_UPPER},  {"end", COL_END},
    {"size", COL_SIZE},    {"alignment", COL_IGNORED},
    {"hint", COL_IGNORED}, {"offset", COL_IGNORED},
    {"gaps", COL_IGNORED},
};

static const char *col_label(enum col c)
{
    switch (c) {
    case COL_ID:
        return "id";
    case COL_LOWER:
        return "lower";
    case COL_UPPER:
        return "upper";
    case COL_END:
        return "end";
    case COL_SIZE:
        return "size";
    default:
        return "?";
    }
}

/* A piece of a line (the row, a field): [s, s+len). */
struct span {
    const char *s;
    size_t len;
};

static struct span trim(struct span f)
{
    while (f.len > 0 && (f.s[0] == ' ' || f.s[0] == '\t')) {
        f.s++;
        f.len--;
    }
    while (f.len > 0 && (f.s[f.len - 1] == ' ' || f.s[f.len - 1] == '\t'))
        f.len--;
    return f;
}

static bool span_is(struct span f, const char *name)
{
    return f.len == strlen(name) && memcmp(f.s, name, f.len) == 0;
}

/* The end of the field that starts at p: the next comma, or for a quoted field ("a,b", ""
 * for a quote) the first comma after its closing quote; end when there is none. */
static const char *field_end(const char *p, const char *end)
{
    const char *q = p;

    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    if (q < end && *q == '"') {
        for (q++; q < end; q++) {
            if (*q == '"' && q + 1 < end && q[1] == '"')
                q++;
            else if (*q == '"')
                break;
        }
        p = q < end ? q : end;
    }
    q = memchr(p, ',', (size_t)(end - p));
    return q != NULL ? q : end;
}

/* Splits line into at most max fields at commas (not inside quotes); returns the number of
 * fields. */
static size_t split(struct span line, struct span *fields, size_t max)
{
    size_t n = 0;
    const char *p = line.s, *end = line.s + line.len;

    for (;;) {
        const char *c = field_end(p, end);
        if (n < max)
            fields[n] = trim((struct span){p, (size_t)(c - p)});
        n++;
        if (c == end)
            return n;
        p = c + 1;
    }
}

/* The id in field f as text, into out: a quoted field unquoted (RFC 4180: "" is a quote),
 * then one leading apostrophe dropped (the spreadsheet's text marker, which mmcsv_format
 * writes before an id a spreadsheet would take for a formula). Its length; -1 when a quoted
 * field is malformed, -2 when longer than MMCSV_ID_MAX. */
static long id_text(struct span f, char out[MMCSV_ID_MAX + 2])
{
    bool quoted = f.len > 0 && f.s[0] == '"';
    size_t o = 0, i = quoted ? 1 : 0, end = f.len;

    if (quoted) {
        if (f.len < 2 || f.s[f.len - 1] != '"')
            return -1;
        end--;
    }
    for (; i < end; i++) {
        if (quoted && f.s[i] == '"' && (i + 1 == end || f.s[++i] != '"'))
            return -1;
        if (o == MMCSV_ID_MAX + 1)
            return -2;
        out[o++] = f.s[i];
    }
    out[o] = '\0';
    if (o > 0 && out[0] == '\'') {
        memmove(out, out + 1, o); /* the rest and its NUL */
        o--;
    }
    return o > MMCSV_ID_MAX ? -2 : (long)o;
}

/* Parses a decimal integer; 0 ok, -1 not a number, -2 out of range. */
static int parse_i64(struct span f, int64_t *v)
{
    size_t i = 0;
    bool neg = false;
    uint64_t acc = 0, lim;

    if (f.len > 0 && (f.s[0] == '-' || f.s[0] == '+')) {
        neg = f.s[0] == '-';
        i++;
    }
    if (i == f.len)
        return -1;
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; i < f.len; i++) {
        if (f.s[i] < '0' || f.s[i] > '9')
            return -1;
        if (acc > (lim - (uint64_t)(f.s[i] - '0')) / 10)
            return -2;
        acc = acc * 10 + (uint64_t)(f.s[i] - '0');
    }
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return 0;
}

bool mmcsv_detect(const char *text, size_t len)
{
    struct cursor c = cursor_make(text, len, NULL), line;
    struct span f;

    if (text == NULL || !cursor_line(&c, &line))
        return false;
    text_skip_bom(&line.s, &line.len);
    split((struct span){line.s, line.len}, &f, 1);
    return span_is(f, "id") || span_is(f, "buffer") || span_is(f, "buffer_id");
}

void mmcsv_free(struct mmcsv *m)
{
    if (m == NULL)
        return;
    if (m->ids != NULL)
        for (size_t i = 0; i < m->n; i++)
            free(m->ids[i]);
    free(m->ids);
    free(m->bufs);
    free(m->lines);
    memset(m, 0, sizeof(*m));
}

static struct names_key buffer_id(const void *ctx, uint32_t i)
{
    const struct mmcsv *m = ctx;

    return (struct names_key){m->ids[i], strlen(m->ids[i]), 0};
}

/* Rejects duplicate ids with a table of buffer indices by id. */
static int check_duplicates(const struct mmcsv *m, struct err *e)
{
    struct names tab;
    int rc;

    if ((rc = names_init(&tab, m->n, buffer_id, m)) != ERR_OK) {
        rc = err_set(e, rc, NULL, "out of memory for %zu buffers", m->n);
        goto out;
    }
    for (size_t i = 0; i < m->n; i++) {
        uint32_t first;
        if ((rc = names_add(&tab, (uint32_t)i, &first)) != ERR_OK) {
            rc = err_set(e, rc, NULL, "more than %zu buffers", m->n);
            goto out;
        }
        if (first != NAMES_NONE) {
            char where[48];
            snprintf(where, sizeof(where), "line %zu, column id", m->lines[i]);
            rc = err_set(e, ERR_INVALID, where,
                         "line %zu, column id: duplicate id \"%s\" (first on line %zu)",
                         m->lines[i], m->ids[i], m->lines[first]);
            goto out;
        }
    }
out:
    names_free(&tab);
    return rc;
}

static int field_err(struct err *e, int code, size_t lineno, enum col c, const char *what)
{
    char where[48];

    snprintf(where, sizeof(where), "line %zu, column %s", lineno, col_label(c));
    return err_set(e, code, where, "line %zu, column %s: %s", lineno, col_label(c), what);
}

/* Maps the header's columns to cols[0..*ncols); optional ones are listed in ignored. */
static int parse_header(struct span line, enum col cols[MMCSV_COLS_MAX], size_t *ncols,
                        char *ignored, size_t ignored_cap, struct err *e)
{
    struct span f[MMCSV_COLS_MAX];
    int have[COL_NONE] = {0};

    *ncols = split(line, f, MMCSV_COLS_MAX);
    if (*ncols > MMCSV_COLS_MAX)
        return err_set(e, ERR_LIMIT, "header", "header: %zu columns, the limit is %d", *ncols,
                       MMCSV_COLS_MAX);
    for (size_t i = 0; i < *ncols; i++) {
        cols[i] = COL_NONE;
        for (size_t k = 0; k < sizeof(col_names) / sizeof(col_names[0]); k++)
            if (span_is(f[i], col_names[k].name))
                cols[i] = col_names[k].col;
        if (cols[i] == COL_NONE)
            return err_set(
                e, ERR_INVALID, "header",
                "header, column %zu: unknown column \"%.*s\" (expected id,lower,upper,size)", i + 1,
                (int)(f[i].len > 64 ? 64 : f[i].len), f[i].s);
        if (cols[i] == COL_IGNORED) {
            size_t used = strlen(ignored);
            snprintf(ignored + used, ignored_cap - used, "%s%.*s", used ? "," : "", (int)f[i].len,
                     f[i].s);
            continue;
        }
        if (have[cols[i]]++)
            return err_set(e, ERR_INVALID, "header",
                           "header: column %.*s given twice (or with an alias)", (int)f[i].len,
                           f[i].s);
    }
    if (!have[COL_ID] || !have[COL_LOWER] || !have[COL_SIZE] || have[COL_UPPER] == have[COL_END])
        return err_set(e, ERR_INVALID, "header",
                       "header: expected the columns id,lower,upper,size (upper or end, not both)");
    return ERR_OK;
}

/* Reads one row's fields f[0..ncols) (laid out as cols) into *b and id (id_text). */
static int parse_row(const struct span *f, const enum col *cols, size_t ncols, size_t lineno,
                     struct pack_buffer *b, char id[MMCSV_ID_MAX + 2], struct err *e)
{
    for (size_t i = 0; i < ncols; i++) {
        int64_t v = 0;
        int prc;

        if (cols[i] == COL_IGNORED)
            continue;
        if (cols[i] == COL_ID) {
            long n = id_text(f[i], id);
            if (n == -1)
                return field_err(e, ERR_INVALID, lineno, COL_ID,
                                 "a quoted id must end with its quote, a quote in it doubled");
            if (n == 0)
                return field_err(e, ERR_INVALID, lineno, COL_ID, "empty id");
            if (n < 0)
                return field_err(e, ERR_LIMIT, lineno, COL_ID, "id longer than 256 bytes");
            /* Ids are kept as C strings: a NUL would cut one short (found by fuzz_mmcsv:
             * "a\0x" read as "a", or as "" which the written solution cannot carry). */
            if (memchr(id, '\0', (size_t)n) != NULL)
                return field_err(e, ERR_INVALID, lineno, COL_ID, "id holds a NUL byte");
            continue;
        }
        if ((prc = parse_i64(f[i], &v)) != 0)
            return field_err(e, ERR_INVALID, lineno, cols[i],
                             prc == -1 ? "not a number" : "number out of range");
        switch (cols[i]) {
        case COL_LOWER:
            b->lower = v;
            break;
        case COL_UPPER:
            b->upper = v;
            break;
        case COL_END:
            if (v == INT64_MAX)
                return field_err(e, ERR_INVALID, lineno, COL_END, "number out of range");
            b->upper = v + 1; /* inclusive end */
            break;
        case COL_SIZE:
            if (v <= 0)
                return field_err(e, ERR_INVALID, lineno, COL_SIZE, "must be positive");
            b->size = (uint64_t)v;
            break;
        default:
            break;
        }
    }
    if (b->lower >= b->upper) {
        char where[32], msg[96];
        snprintf(where, sizeof(where), "line %zu", lineno);
        snprintf(msg, sizeof(msg), "lower %lld is not below upper %lld", (long long)b->lower,
                 (long long)b->upper);
        return err_set(e, ERR_INVALID, where,
                       "line %zu: %s (lifetimes are half-open [lower, upper))", lineno, msg);
    }
    return ERR_OK;
}

/* The rows read so far: three arrays of one length (struct pack_buffer, char * ids, size_t
 * lines), vecs bounded by the caller's max_buffers, handed to the struct mmcsv at the end. */
struct rows {
    struct vec bufs, ids, lines;
};

/* Appends buffer b with its id (copied) and line: all three arrays or none. */
static int append(struct rows *r, struct pack_buffer b, const char *id, size_t lineno,
                  struct err *e)
{
    size_t n = r->bufs.n;
    char *s = NULL;
    int rc;

    if ((rc = vec_reserve(&r->bufs, n + 1)) != ERR_OK ||
        (rc = vec_reserve(&r->ids, n + 1)) != ERR_OK ||
        (rc = vec_reserve(&r->lines, n + 1)) != ERR_OK || (s = strdup(id)) == NULL)
        return err_set(e, rc == ERR_LIMIT ? ERR_LIMIT : ERR_NOMEM, NULL,
                       rc == ERR_LIMIT ? "line %zu: too many buffers" : "out of memory at line %zu",
                       lineno);
    *(struct pack_buffer *)vec_at(&r->bufs, n) = b;
    *(char **)vec_at(&r->ids, n) = s;
    *(size_t *)vec_at(&r->lines, n) = lineno;
    r->bufs.n = r->ids.n = r->lines.n = n + 1;
    return ERR_OK;
}

int mmcsv_parse(const char *text, size_t len, size_t max_buffers, struct mmcsv *out, struct err *e)
{
    /* zeroed: parse_header sets the first ncols, but clang-analyzer cannot see that */
    enum col cols[MMCSV_COLS_MAX] = {0};
    struct cursor c = cursor_make(text, len, e), line;
    struct span f[MMCSV_COLS_MAX];
    struct rows r;
    size_t ncols;
    int rc;

    if (out == NULL)
        return err_set(e, ERR_INVALID, NULL, "mmcsv_parse: no result given");
    memset(out, 0, sizeof(*out));
    vec_init(&r.bufs, sizeof(struct pack_buffer), max_buffers);
    vec_init(&r.ids, sizeof(char *), max_buffers);
    vec_init(&r.lines, sizeof(size_t), max_buffers);
    if (text == NULL || !cursor_line(&c, &line))
        return err_set(e, ERR_INVALID, "header",
                       "empty input: expected a header id,lower,upper,size");
    text_skip_bom(&line.s, &line.len);
    if ((rc = parse_header((struct span){line.s, line.len}, cols, &ncols, out->ignored,
                           sizeof(out->ignored), e)) != ERR_OK)
        goto out;
    while (cursor_line(&c, &line)) {
        struct span row = {line.s, line.len};
        char id[MMCSV_ID_MAX + 2];
        struct pack_buffer b = {0};
        size_t nf, lineno = line.line;

        if (trim(row).len == 0)
            continue;
        nf = split(row, f, MMCSV_COLS_MAX);
        if (nf != ncols || r.bufs.n == max_buffers) {
            char where[32];
            snprintf(where, sizeof(where), "line %zu", lineno);
            rc = nf != ncols
                     ? err_set(e, ERR_INVALID, where, "line %zu: expected %zu columns, found %zu",
                               lineno, ncols, nf)
                     : err_set(e, ERR_LIMIT, where, "line %zu: more than %zu buffers", lineno,
                               max_buffers);
            goto out;
        }
        if ((rc = parse_row(f, cols, ncols, lineno, &b, id, e)) != ERR_OK ||
            (rc = append(&r, b, id, lineno, e)) != ERR_OK)
            goto out;
    }
out:
    /* The rows read become out's, so that one free (mmcsv_free) covers every id. */
    out->n = r.bufs.n;
    out->bufs = vec_take(&r.bufs);
    out->ids = vec_take(&r.ids);
    out->lines = vec_take(&r.lines);
    if (rc == ERR_OK)
        rc = check_duplicates(out, e);
    if (rc != ERR_OK)
        mmcsv_free(out);
    return rc;
}

/* Writes id as a cell a spreadsheet shows as text (OWASP's "CSV Injection"): an id that
 * starts with = + - @, a tab or a carriage return (a formula to Excel, LibreOffice and Google
 * Sheets), or with the apostrophe itself, gets a leading apostrophe; one holding a comma, a
 * quote or a line break, or one the reader would trim or take for quoted, goes in quotes with
 * its quotes doubled (RFC 4180). mmcsv_parse reads it back as id. out has 2 * strlen(id) + 4
 * bytes; returns the bytes written (no NUL). */
static size_t id_cell(const char *id, char *out)
{
    size_t n = strlen(id), o = 0;
    bool mark = n > 0 && strchr("=+-@\t\r'", id[0]) != NULL;
    bool quote = strpbrk(id, ",\"\r\n") != NULL || (n > 0 && strchr(" \t", id[n - 1]) != NULL) ||
                 (n > 0 && id[0] == ' ');

    if (quote)
        out[o++] = '"';
    if (mark)
        out[o++] = '\'';
    for (size_t i = 0; i < n; i++) {
        if (id[i] == '"')
            out[o++] = '"';
        out[o++] = id[i];
    }
    if (quote)
        out[o++] = '"';
    return o;
}

int mmcsv_format(const struct mmcsv *m, const uint64_t *offsets, char **text, size_t *len,
                 struct err *e)
{
    static const char header[] = "id,lower,upper,size,offset\n";
    uint64_t cap = sizeof(header), row;
    size_t used = 0;
    char *buf;

    /* Each row is at most the id's cell plus four 20-digit numbers, commas and a newline. */
    for (size_t i = 0; i < m->n; i++)
        if (arith_mul(strlen(m->ids[i]), 2, &row) || arith_add(row, 4 + 4 * 21 + 1, &row) ||
            arith_add(cap, row, &cap))
            return err_set(e, ERR_LIMIT, NULL, "the solution of %zu buffers is too large", m->n);
    buf = malloc((size_t)cap);
    if (buf == NULL)
        return err_set(e, ERR_NOMEM, NULL, "out of memory formatting %zu buffers", m->n);
    used = (size_t)snprintf(buf, (size_t)cap, "%s", header);
    for (size_t i = 0; i < m->n; i++) {
        used += id_cell(m->ids[i], buf + used);
        used +=
            (size_t)snprintf(buf + used, (size_t)cap - used, ",%lld,%lld,%llu,%llu\n",
                             (long long)m->bufs[i].lower, (long long)m->bufs[i].upper,
                             (unsigned long long)m->bufs[i].size, (unsigned long long)offsets[i]);
    }
    *text = buf;
    *len = used;
    return ERR_OK;
}
