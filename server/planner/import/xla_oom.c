/*
 * xla_oom.c - XLA:TPU's out-of-memory report (xla_oom.h): a line at a time, each line past
 * its log prefix and indentation, matched by its leading words against the report's parts.
 */
#include "planner/xla_oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/base/cursor.h"
#include "planner/base/vec.h"
#include "planner/layout.h"

/* The block the last lines belong to: it says whose a "reserved" line is. */
enum part { PART_NONE, PART_USAGE, PART_PROGRAM, PART_LIST };

/* An entry while the strings grow: its string fields as offsets + 1 into them (0: none). */
struct entry_strs {
    size_t shape, op_type, op_name, source_file, label, name, type;
};

struct pentry {
    struct xla_oom_alloc a; /* its string pointers NULL until finish */
    struct entry_strs st;
};

/* Where the parse stands: the report so far, whether it has started, the block, whether an
 * entry is open and whether the header's "Exceeded" part is still to come. */
struct parser {
    struct xla_oom *r;
    struct vec allocs;  /* struct pentry */
    struct vec strings; /* char */
    bool started;
    enum part part;
    bool in_entry;
    bool want_exceeded;
    size_t stack_for; /* offset + 1 into strings; 0: none */
    struct err *e;
};

const char *xla_oom_form_name(enum xla_oom_form f)
{
    static const char *const names[] = {"out-of-memory", "stack", "early-abort",
                                        "allocation",    "list",  "sparsecore"};
    return (size_t)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

bool xla_oom_size_matches(const struct xla_oom_size *s, uint64_t bytes)
{
    char buf[XLA_OOM_TEXT_MAX];

    return s->text[0] != '\0' && strcmp(layout_format_bytes(bytes, buf, sizeof(buf)), s->text) == 0;
}

static bool find(const char *s, size_t len, const char *w)
{
    return memmem(s, len, w, strlen(w)) != NULL;
}

/* --- lexing on one line ------------------------------------------------------------------ */

static bool is_digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

static bool is_word(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '_';
}

static bool is_name(char ch)
{
    return is_word(ch) || ch == '.' || ch == '-';
}

static bool not_blank(char ch)
{
    return ch != ' ' && ch != '\t';
}

/* Exactly n digits. */
static bool digits(struct cursor *l, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!is_digit(cursor_peek(l)) || !cursor_accept(l, cursor_peek(l)))
            return false;
    return true;
}

static bool some_digits(struct cursor *l)
{
    return cursor_span(l, is_digit) > 0;
}

/* hh:mm:ss[.frac] */
static bool clock_time(struct cursor *l)
{
    if (!digits(l, 2) || !cursor_accept(l, ':') || !digits(l, 2) || !cursor_accept(l, ':') ||
        !digits(l, 2))
        return false;
    if (cursor_accept(l, '.') && !some_digits(l))
        return false;
    return true;
}

/* Past "FILE:LINE] " (the logger's source location). */
static bool source_bracket(struct cursor *l)
{
    while (cursor_left(l) > 0 && cursor_peek(l) != ']' && cursor_peek(l) != ' ')
        l->i++;
    if (!cursor_accept(l, ']'))
        return false;
    cursor_accept(l, ' ');
    return true;
}

/* glog: "E1111 07:35:00.272763 140408571025152 error_handling.py:81] " */
static bool glog_prefix(struct cursor *l)
{
    char s = cursor_peek(l);

    if ((s != 'I' && s != 'W' && s != 'E' && s != 'F') || !cursor_accept(l, s) || !digits(l, 4) ||
        !cursor_accept(l, ' ') || !clock_time(l))
        return false;
    cursor_skip_blanks(l);
    if (!some_digits(l) || !cursor_accept(l, ' '))
        return false;
    return source_bracket(l);
}

/* TensorFlow: "2020-05-04 09:05:40.719758: E    1578 tensorflow/.../xla_util.cc:76] " */
static bool tf_prefix(struct cursor *l)
{
    if (!digits(l, 4) || !cursor_accept(l, '-') || !digits(l, 2) || !cursor_accept(l, '-') ||
        !digits(l, 2) || !cursor_accept(l, ' ') || !clock_time(l) || !cursor_lit(l, ": "))
        return false;
    if (strchr("IWEF", cursor_peek(l)) == NULL || cursor_peek(l) == '\0')
        return false;
    l->i++;
    cursor_skip_blanks(l);
    if (!some_digits(l) || !cursor_accept(l, ' '))
        return false;
    return source_bracket(l);
}

/* vLLM: "(EngineCore pid=106339) ERROR 06-03 07:41:11 [core.py:1184] " */
static bool vllm_prefix(struct cursor *l)
{
    static const char *const levels[] = {"DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL "};
    bool level = false;

    if (cursor_accept(l, '(')) {
        while (cursor_left(l) > 0 && cursor_peek(l) != ')')
            l->i++;
        if (!cursor_lit(l, ") "))
            return false;
    }
    for (size_t k = 0; k < sizeof(levels) / sizeof(levels[0]) && !level; k++)
        level = cursor_lit(l, levels[k]);
    if (!level || !digits(l, 2) || !cursor_accept(l, '-') || !digits(l, 2) ||
        !cursor_accept(l, ' ') || !clock_time(l) || !cursor_lit(l, " ["))
        return false;
    return source_bracket(l);
}

/* Past a log prefix, a "#" comment mark and the indentation. */
static void skip_prefix(struct cursor *l)
{
    static bool (*const prefixes[])(struct cursor *) = {glog_prefix, tf_prefix, vllm_prefix};

    for (size_t k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
        size_t at = l->i;
        if (prefixes[k](l))
            break;
        l->i = at;
    }
    cursor_skip_blanks(l);
    if (cursor_accept(l, '#'))
        cursor_skip_blanks(l);
}

/*
 * A size: DIGITS ["." DIGITS] UNIT, UNIT one of B K M G T P E, binary. The bytes are the
 * value rounded to the nearest byte (a decimal fraction of a power of 1024).
 */
static bool size_read(struct cursor *l, struct xla_oom_size *out)
{
    static const char units[] = "BKMGTPE";
    size_t at = l->i, ndec = 0;
    uint64_t num = 0, den = 1, unit = 1;
    long double exact;
    const char *u;

    if (!is_digit(cursor_peek(l)))
        return false;
    for (; is_digit(cursor_peek(l)); l->i++)
        if (arith_mul(num, 10, &num) || arith_add(num, (uint64_t)(cursor_peek(l) - '0'), &num))
            goto bad;
    if (cursor_accept(l, '.')) {
        for (; is_digit(cursor_peek(l)); l->i++, ndec++)
            if (ndec >= 6 || arith_mul(num, 10, &num) ||
                arith_add(num, (uint64_t)(cursor_peek(l) - '0'), &num) || arith_mul(den, 10, &den))
                goto bad;
        if (ndec == 0)
            goto bad;
    }
    if (cursor_peek(l) == '\0' || (u = strchr(units, cursor_peek(l))) == NULL)
        goto bad;
    for (const char *p = units; p < u; p++)
        unit *= 1024;
    l->i++;
    /* num x unit / den, rounded: in long double (a 64-bit mantissa on the targets we build
     * for), as 3.47E is past 2^64 before the division */
    exact = (long double)num * (long double)unit / (long double)den + 0.5L;
    if (l->i - at >= XLA_OOM_TEXT_MAX || exact >= 18446744073709551615.0L)
        goto bad;
    out->bytes = (uint64_t)exact;
    memcpy(out->text, l->s + at, l->i - at);
    out->text[l->i - at] = '\0';
    return true;
bad: /* the error points at the size's first character */
    l->i = at;
    return false;
}

static int expect_size(struct cursor *l, struct xla_oom_size *out, const char *what)
{
    if (!size_read(l, out))
        return cursor_fail(l, "expected %s, a size such as 2.00G, 420.0K or 0B", what);
    return ERR_OK;
}

/* A decimal as printed ("95.4"), into out (at most cap - 1 characters). */
static bool decimal_read(struct cursor *l, char *out, size_t cap)
{
    size_t at = l->i;

    if (!some_digits(l) || (cursor_accept(l, '.') && !some_digits(l)) || l->i - at >= cap) {
        l->i = at;
        return false;
    }
    memcpy(out, l->s + at, l->i - at);
    out[l->i - at] = '\0';
    return true;
}

/* A lower-case memory space name ("hbm", "vmem"). */
static int space_read(struct cursor *l, char *out)
{
    size_t at = l->i, n = cursor_span(l, is_word);

    if (n == 0 || n >= XLA_OOM_WORD_MAX)
        return cursor_fail(l, "expected a memory space name (hbm, vmem, ...)");
    memcpy(out, l->s + at, n);
    out[n] = '\0';
    return ERR_OK;
}

static int expect_lit(struct cursor *l, const char *w)
{
    return cursor_lit(l, w) ? ERR_OK : cursor_fail(l, "expected \"%s\"", w);
}

/* --- strings ------------------------------------------------------------------------------ */

/* Copies s[0..n) into the strings (unescaping \" and \\ when unescape); *at gets its offset
 * + 1. */
static int str_add(struct parser *p, const char *s, size_t n, bool unescape, size_t *at)
{
    int rc;

    if ((rc = vec_reserve(&p->strings, p->strings.n + n + 1)) != ERR_OK)
        return err_set(p->e, rc, "",
                       rc == ERR_NOMEM ? "out of memory for the report's text"
                                       : "the report's text is larger than the input");
    *at = p->strings.n + 1;
    for (size_t k = 0; k < n; k++) {
        if (unescape && s[k] == '\\' && k + 1 < n && (s[k + 1] == '"' || s[k + 1] == '\\'))
            k++;
        ((char *)p->strings.data)[p->strings.n++] = s[k];
    }
    ((char *)p->strings.data)[p->strings.n++] = '\0';
    return ERR_OK;
}

/* The rest of the line, trailing blanks dropped. */
static int str_rest(struct parser *p, struct cursor *l, size_t *at)
{
    size_t end = l->len;

    while (end > l->i && (l->s[end - 1] == ' ' || l->s[end - 1] == '\t'))
        end--;
    return str_add(p, l->s + l->i, end - l->i, false, at);
}

/* --- the header ---------------------------------------------------------------------------- */

/* "E1000: CompileTimeHbmOom: " or a bare "CompileTime...: " before the header's marker, in
 * line[0..end). */
static void header_code(struct xla_oom *r, const char *s, size_t end)
{
    for (size_t k = 0; k + 6 < end; k++) {
        bool code = s[k] == 'E' && (k == 0 || s[k - 1] == ' ') && is_digit(s[k + 1]) &&
                    is_digit(s[k + 2]) && is_digit(s[k + 3]) && is_digit(s[k + 4]) &&
                    s[k + 5] == ':' && s[k + 6] == ' ';
        size_t n = 0;
        if (code) {
            r->code = (s[k + 1] - '0') * 1000 + (s[k + 2] - '0') * 100 + (s[k + 3] - '0') * 10 +
                      (s[k + 4] - '0');
            k += 7;
        } else if (!(k + 11 < end && memcmp(s + k, "CompileTime", 11) == 0 &&
                     (k == 0 || s[k - 1] == ' '))) {
            continue;
        }
        while (k + n < end && is_word(s[k + n]))
            n++;
        if (n > 0 && n < XLA_OOM_WORD_MAX && k + n < end && s[k + n] == ':') {
            memcpy(r->code_name, s + k, n);
            r->code_name[n] = '\0';
        }
        return;
    }
}

/* "Exceeded hbm capacity by 14.73G", at the cursor. */
static int exceeded(struct parser *p, struct cursor *l)
{
    int rc;

    if ((rc = expect_lit(l, "Exceeded ")) != ERR_OK)
        return rc;
    if (!cursor_lit(l, p->r->space) || !cursor_lit(l, " capacity by "))
        return cursor_fail(l, "expected \"%s capacity by\"", p->r->space);
    p->want_exceeded = false;
    return expect_size(l, &p->r->exceeded, "the excess");
}

/* ". Used U of C space. Exceeded space capacity by X." or " while allocating on stack for
 * ..." after "Ran out of memory in memory space SPACE". */
static int header_capacity(struct parser *p, struct cursor *l)
{
    struct xla_oom *r = p->r;
    int rc;

    if ((rc = space_read(l, r->space)) != ERR_OK)
        return rc;
    if (cursor_lit(l, " while allocating on stack for ")) {
        r->form = XLA_OOM_STACK;
        return str_rest(p, l, &p->stack_for);
    }
    r->form = XLA_OOM_CAPACITY;
    if (!cursor_starts(l, ". Used "))
        return ERR_OK; /* 2019's "... space vmem. Please file a bug against XLA." */
    if ((rc = expect_lit(l, ". Used ")) != ERR_OK ||
        (rc = expect_size(l, &r->used, "the bytes used")) != ERR_OK ||
        (rc = expect_lit(l, " of ")) != ERR_OK ||
        (rc = expect_size(l, &r->capacity, "the capacity")) != ERR_OK)
        return rc;
    if (!cursor_accept(l, ' ') || !cursor_lit(l, r->space))
        return cursor_fail(l, "expected \" %s\"", r->space);
    cursor_accept(l, '.');
    cursor_skip_blanks(l);
    p->want_exceeded = true;
    return cursor_left(l) > 0 ? exceeded(p, l) : ERR_OK;
}

/* "Requires R, has H available." */
static int header_early(struct parser *p, struct cursor *l)
{
    struct xla_oom *r = p->r;
    const char *at = l->s + l->i;
    const char *req = NULL;
    int rc;

    r->form = XLA_OOM_EARLY;
    snprintf(r->space, sizeof(r->space), "hbm");
    for (size_t k = 0; k + 9 <= cursor_left(l) && req == NULL; k++)
        if (memcmp(at + k, "Requires ", 9) == 0)
            req = at + k;
    if (req == NULL)
        return cursor_fail(l, "expected \"Requires\" after \"Aborting compilation early\"");
    l->i = (size_t)(req - l->s) + 9;
    if ((rc = expect_size(l, &r->used, "the bytes required")) != ERR_OK ||
        (rc = expect_lit(l, ", has ")) != ERR_OK ||
        (rc = expect_size(l, &r->capacity, "the bytes available")) != ERR_OK)
        return rc;
    return ERR_OK;
}

/* A byte count printed in full, "134217728", into a size (its text as layout_format_bytes
 * prints it). */
static int count_read(struct cursor *l, struct xla_oom_size *out, const char *what)
{
    int64_t v;

    if (!cursor_uint(l, &v))
        return cursor_fail(l, "expected %s, a byte count", what);
    out->bytes = (uint64_t)v;
    layout_format_bytes(out->bytes, out->text, sizeof(out->text));
    return ERR_OK;
}

/* The text after key ("shape = '") up to the next quote, within s[0..n), as a string. */
static int quoted(struct parser *p, const char *s, size_t n, const char *key, size_t *at)
{
    size_t kn = strlen(key);
    const char *v = memmem(s, n, key, kn), *close;

    if (v == NULL)
        return ERR_OK;
    v += kn;
    if ((close = memchr(v, '\'', n - (size_t)(v - s))) == NULL)
        return ERR_OK;
    return str_add(p, v, (size_t)(close - v), false, at);
}

/* "#allocation25 [shape = 'u8[134217728]{0}', space=vmem, size = 0x8000000, tag = 'T'] ::
 * NAME": one entry, after " :: ". */
static int allocation_entry(struct parser *p, struct cursor *l)
{
    struct pentry pe = {.a = {.rank = 1, .source_line = -1, .line = l->line}};
    const char *s = l->s + l->i, *end;
    size_t n = cursor_left(l);
    int rc;

    pe.a.size = p->r->used;
    if ((rc = quoted(p, s, n, "shape = '", &pe.st.shape)) != ERR_OK ||
        (rc = quoted(p, s, n, "tag = '", &pe.st.type)) != ERR_OK)
        return rc;
    /* XLA writes "<no-hlo-instruction>" where no instruction is named */
    if ((end = memmem(s, n, "] :: ", 5)) != NULL && (size_t)(end - s) + 5 < n && end[5] != '<') {
        l->i += (size_t)(end - s) + 5;
        if ((rc = str_rest(p, l, &pe.st.name)) != ERR_OK)
            return rc;
    }
    if ((rc = vec_push(&p->allocs, &pe)) != ERR_OK)
        return err_set(p->e, rc, "", "more than %zu allocations", p->allocs.max);
    return ERR_OK;
}

/* "Allocation (size=N) would exceed memory (size=M)[ :: #allocation...]" after its
 * "Allocation (size=". */
static int header_allocation(struct parser *p, struct cursor *l)
{
    struct xla_oom *r = p->r;
    int rc;

    r->form = XLA_OOM_ALLOCATION;
    if ((rc = count_read(l, &r->used, "the allocation's size")) != ERR_OK ||
        (rc = expect_lit(l, ") would exceed memory (size=")) != ERR_OK ||
        (rc = count_read(l, &r->capacity, "the memory's size")) != ERR_OK ||
        (rc = expect_lit(l, ")")) != ERR_OK)
        return rc;
    if (r->used.bytes > r->capacity.bytes) {
        r->exceeded.bytes = r->used.bytes - r->capacity.bytes;
        layout_format_bytes(r->exceeded.bytes, r->exceeded.text, sizeof(r->exceeded.text));
    }
    for (size_t k = l->i; k + 5 < l->len; k++)
        if (memcmp(l->s + k, "space=", 6) == 0) {
            struct cursor at = *l;
            at.i = k + 6;
            if ((rc = space_read(&at, r->space)) != ERR_OK)
                return rc;
            break;
        }
    if (!cursor_lit(l, " :: "))
        return ERR_OK;
    return allocation_entry(p, l);
}

/* "TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding available
 * bytes: 95.74G" (openxla/xla docs/errors/error_1000.md): used is the two together. */
static int header_sparsecore(struct parser *p, struct cursor *l)
{
    struct xla_oom *r = p->r;
    int rc;

    r->form = XLA_OOM_SPARSECORE;
    snprintf(r->space, sizeof(r->space), "hbm");
    if ((rc = expect_size(l, &r->tensorcore, "the TensorCore's bytes")) != ERR_OK ||
        (rc = expect_lit(l, ", SparseCore Hbm usage ")) != ERR_OK ||
        (rc = expect_size(l, &r->sparsecore, "the SparseCore's bytes")) != ERR_OK ||
        (rc = expect_lit(l, ", exceeding available bytes: ")) != ERR_OK ||
        (rc = expect_size(l, &r->capacity, "the bytes available")) != ERR_OK)
        return rc;
    if (arith_add(r->tensorcore.bytes, r->sparsecore.bytes, &r->used.bytes))
        return cursor_fail(l, "the two usages pass 2^64 bytes");
    layout_format_bytes(r->used.bytes, r->used.text, sizeof(r->used.text));
    if (r->used.bytes > r->capacity.bytes) {
        r->exceeded.bytes = r->used.bytes - r->capacity.bytes;
        layout_format_bytes(r->exceeded.bytes, r->exceeded.text, sizeof(r->exceeded.text));
    }
    return ERR_OK;
}

/* The header lines, by the words that mark them: each reader starts after its marker. */
static const struct {
    const char *marker;
    int (*read)(struct parser *p, struct cursor *l);
} headers[] = {
    {"Ran out of memory in memory space ", header_capacity},
    {"Aborting compilation early because", header_early},
    {"Allocation (size=", header_allocation},
    {"TensorCore Hbm usage: ", header_sparsecore},
};

bool xla_oom_detect(const char *text, size_t len)
{
    for (size_t k = 0; k < sizeof(headers) / sizeof(headers[0]); k++)
        if (find(text, len, headers[k].marker))
            return true;
    return find(text, len, "Largest program allocations in ") ||
           (find(text, len, ". Size: ") && find(text, len, "Unpadded size: "));
}

/* The header, when the line holds one: *found says so. */
static int header(struct parser *p, struct cursor *l, bool *found)
{
    const char *s = l->s + l->i;
    size_t n = cursor_left(l);

    *found = false;
    for (size_t k = 0; k < sizeof(headers) / sizeof(headers[0]); k++) {
        const char *at = memmem(s, n, headers[k].marker, strlen(headers[k].marker));
        if (at == NULL)
            continue;
        *found = true;
        p->r->header_line = l->line;
        header_code(p->r, l->s, (size_t)(at - l->s));
        l->i = (size_t)(at - l->s) + strlen(headers[k].marker);
        return headers[k].read(p, l);
    }
    return ERR_OK;
}

/* --- the blocks --------------------------------------------------------------------------- */

/* "(95.4% utilization: Unpadded (8.65G) Padded (9.06G), 0.0% fragmentation (0B))" or
 * "(24.2% utilization, 0.7% fragmentation (293.84M))" after HLO temp's size. */
static int temp_stats(struct parser *p, struct cursor *l)
{
    struct xla_oom *r = p->r;
    int rc;

    if (!decimal_read(l, r->temp_utilization, sizeof(r->temp_utilization)) ||
        !cursor_lit(l, "% utilization"))
        return cursor_fail(l, "expected \"N%% utilization\"");
    if (cursor_lit(l, ": Unpadded (")) {
        if ((rc = expect_size(l, &r->temp_unpadded, "the unpadded bytes")) != ERR_OK ||
            (rc = expect_lit(l, ") Padded (")) != ERR_OK ||
            (rc = expect_size(l, &r->temp_padded, "the padded bytes")) != ERR_OK ||
            (rc = expect_lit(l, ")")) != ERR_OK)
            return rc;
    }
    if (cursor_lit(l, ", ")) {
        char pct[XLA_OOM_TEXT_MAX];
        if (!decimal_read(l, pct, sizeof(pct)) || !cursor_lit(l, "% fragmentation ("))
            return cursor_fail(l, "expected \"N%% fragmentation (SIZE)\"");
        if ((rc = expect_size(l, &r->fragmentation, "the fragmentation")) != ERR_OK ||
            (rc = expect_lit(l, ")")) != ERR_OK)
            return rc;
    }
    return expect_lit(l, ")");
}

/* One line of the usage or program block: KEY SIZE [(...)]; *found false when the line is
 * no such line. */
static int block_line(struct parser *p, struct cursor *l, bool *found)
{
    struct xla_oom *r = p->r;
    static const struct {
        const char *key;
        enum part part;
        size_t off;
    } keys[] = {
        {"reserved", PART_USAGE, offsetof(struct xla_oom, reserved)},
        {"program", PART_USAGE, offsetof(struct xla_oom, program)},
        {"arguments", PART_USAGE, offsetof(struct xla_oom, arguments)},
        {"reserved", PART_PROGRAM, offsetof(struct xla_oom, program_reserved)},
        {"global", PART_PROGRAM, offsetof(struct xla_oom, global)},
        {"scoped", PART_PROGRAM, offsetof(struct xla_oom, scoped)},
        {"HLO temp", PART_PROGRAM, offsetof(struct xla_oom, temp)},
    };
    int rc;

    *found = false;
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        struct xla_oom_size *sz = (struct xla_oom_size *)(void *)((char *)r + keys[k].off);
        size_t at = l->i;
        if (keys[k].part != p->part || !cursor_lit(l, keys[k].key) ||
            (cursor_peek(l) != ' ' && cursor_peek(l) != '\t')) {
            l->i = at;
            continue;
        }
        *found = true;
        cursor_skip_blanks(l);
        if (sz == &r->arguments && cursor_lit(l, "unknown size")) {
            r->arguments_unknown = true;
            return ERR_OK;
        }
        if ((rc = expect_size(l, sz, keys[k].key)) != ERR_OK)
            return rc;
        cursor_skip_blanks(l);
        if (!cursor_accept(l, '('))
            return ERR_OK;
        if (sz == &r->temp)
            return temp_stats(p, l);
        return ERR_OK; /* "(99.9% utilization)" of the arguments: read past */
    }
    return ERR_OK;
}

/* "Output size 1.0K[ (99.9% utilization)]; shares 0B with arguments." or "Output size
 * unknown." */
static int output_line(struct parser *p, struct cursor *l)
{
    struct xla_oom *r = p->r;
    int rc;

    if (cursor_lit(l, "unknown")) {
        r->output_unknown = true;
        return ERR_OK;
    }
    if ((rc = expect_size(l, &r->output, "the output's size")) != ERR_OK)
        return rc;
    while (cursor_left(l) > 0 && cursor_peek(l) != ';')
        l->i++;
    if ((rc = expect_lit(l, "; shares ")) != ERR_OK)
        return rc;
    return expect_size(l, &r->output_shared, "the bytes shared with the arguments");
}

/* "Total hbm usage >= 30.73G:", "Program hbm requirement 14.31G:", "Largest program
 * allocations in hbm:" (l past the first word); the space must be the report's. */
static int block_head(struct parser *p, struct cursor *l, const char *after,
                      struct xla_oom_size *sz, enum part part)
{
    char space[XLA_OOM_WORD_MAX];
    int rc;

    if ((rc = space_read(l, space)) != ERR_OK)
        return rc;
    if (p->r->space[0] == '\0')
        memcpy(p->r->space, space, sizeof(space));
    else if (strcmp(space, p->r->space) != 0)
        return cursor_fail_at(p->e, l->line, l->i - strlen(space) + 1,
                              "expected memory space \"%s\" (the report's), got \"%s\"",
                              p->r->space, space);
    if ((rc = expect_lit(l, after)) != ERR_OK ||
        (sz != NULL && (rc = expect_size(l, sz, "the total")) != ERR_OK) ||
        (rc = expect_lit(l, ":")) != ERR_OK)
        return rc;
    p->part = part;
    p->in_entry = false;
    return ERR_OK;
}

/* --- the entries -------------------------------------------------------------------------- */

static struct pentry *entry(struct parser *p)
{
    return vec_at(&p->allocs, p->allocs.n - 1);
}

/* op_type="..." op_name="..." source_file="..." source_line=N, any order, others read past. */
static int operator_line(struct parser *p, struct cursor *l)
{
    struct xla_oom_alloc *a = &entry(p)->a;
    struct entry_strs *st = &entry(p)->st;
    int rc;

    while (cursor_left(l) > 0) {
        size_t key = l->i, klen = cursor_span(l, is_word), v;
        size_t *dst = NULL;
        if (klen == 0 || !cursor_accept(l, '='))
            return cursor_fail(l, "expected key=\"value\" (op_name=\"...\")");
        if (klen == 11 && memcmp(l->s + key, "source_line", 11) == 0) {
            if (!cursor_uint(l, &a->source_line))
                return cursor_fail(l, "expected source_line's number");
        } else if (cursor_accept(l, '"')) {
            if (klen == 7 && memcmp(l->s + key, "op_type", 7) == 0)
                dst = &st->op_type;
            else if (klen == 7 && memcmp(l->s + key, "op_name", 7) == 0)
                dst = &st->op_name;
            else if (klen == 11 && memcmp(l->s + key, "source_file", 11) == 0)
                dst = &st->source_file;
            for (v = l->i; l->i < l->len && l->s[l->i] != '"'; l->i++)
                if (l->s[l->i] == '\\' && l->i + 1 < l->len)
                    l->i++;
            if (dst != NULL && (rc = str_add(p, l->s + v, l->i - v, true, dst)) != ERR_OK)
                return rc;
            cursor_accept(l, '"'); /* a label cut by the printer ends the line unquoted */
        } else {
            cursor_span(l, not_blank);
        }
        cursor_skip_blanks(l);
    }
    return ERR_OK;
}

/* "XLA label: %fusion.11 = f32[...] fusion(...)": the text, and the name before " = ". */
static int label_line(struct parser *p, struct cursor *l)
{
    struct entry_strs *st = &entry(p)->st;
    size_t at, n;
    int rc;

    if ((rc = str_rest(p, l, &st->label)) != ERR_OK)
        return rc;
    cursor_accept(l, '%');
    at = l->i;
    n = cursor_span(l, is_name);
    if (n == 0)
        return ERR_OK;
    return str_add(p, l->s + at, n, false, &st->name);
}

/* "Extra memory due to padding: 1.50M (1.0x expansion)" */
static int extra_line(struct parser *p, struct cursor *l)
{
    struct xla_oom_alloc *a = &entry(p)->a;
    int rc;

    if ((rc = expect_size(l, &a->extra, "the padding")) != ERR_OK)
        return rc;
    cursor_skip_blanks(l);
    if (!cursor_accept(l, '('))
        return ERR_OK;
    if (!decimal_read(l, a->expansion, sizeof(a->expansion)) || !cursor_lit(l, "x expansion)"))
        return cursor_fail(l, "expected \"N.Nx expansion)\"");
    return ERR_OK;
}

/* The lines of an open entry, after "N. Size: S". */
static int entry_line(struct parser *p, struct cursor *l, bool *found)
{
    struct xla_oom_alloc *a = &entry(p)->a;
    struct entry_strs *st = &entry(p)->st;

    *found = true;
    if (cursor_lit(l, "Operator: "))
        return operator_line(p, l);
    if (cursor_lit(l, "Shape: "))
        return str_rest(p, l, &st->shape);
    if (cursor_lit(l, "Unpadded size: "))
        return expect_size(l, &a->unpadded, "the unpadded size");
    if (cursor_lit(l, "Extra memory due to padding: "))
        return extra_line(p, l);
    if (cursor_lit(l, "XLA label: "))
        return label_line(p, l);
    if (cursor_lit(l, "Allocation type: "))
        return str_rest(p, l, &st->type);
    if (cursor_lit(l, "===")) {
        p->in_entry = false;
        return ERR_OK;
    }
    if (cursor_lit(l, "...")) {
        a->cut = true;
        p->in_entry = false;
        return ERR_OK;
    }
    *found = false;
    return ERR_OK;
}

/* "N. Size: S" opens an entry; *found false when the line is not one. */
static int entry_head(struct parser *p, struct cursor *l, bool *found)
{
    struct pentry pe = {.a = {.source_line = -1, .line = l->line}};
    size_t at = l->i;
    int rc;

    *found = false;
    if (!cursor_uint(l, &pe.a.rank) || !cursor_lit(l, ". Size: ")) {
        l->i = at;
        return ERR_OK;
    }
    *found = true;
    if ((rc = expect_size(l, &pe.a.size, "the allocation's size")) != ERR_OK)
        return rc;
    if (p->in_entry)
        entry(p)->a.cut = true;
    if ((rc = vec_push(&p->allocs, &pe)) != ERR_OK)
        return err_set(p->e, rc, "", "line %zu: more than %zu allocations", l->line, p->allocs.max);
    p->in_entry = true;
    p->part = PART_LIST;
    return ERR_OK;
}

/* --- the lines ----------------------------------------------------------------------------- */

/* One line of a started report; *end true when it is none of the report's (the report ends
 * before it). */
static int report_line(struct parser *p, struct cursor *l, bool *end)
{
    struct xla_oom *r = p->r;
    bool found = false;
    int rc;

    *end = false;
    if (p->in_entry && ((rc = entry_line(p, l, &found)) != ERR_OK || found))
        return rc;
    if ((rc = entry_head(p, l, &found)) != ERR_OK || found)
        return rc;
    if (p->in_entry)
        return cursor_fail(l,
                           "expected a line of allocation %lld (Operator:, Shape:, Unpadded "
                           "size:, Extra memory due to padding:, XLA label:, Allocation "
                           "type: or =====)",
                           (long long)entry(p)->a.rank);
    if (cursor_lit(l, "Total "))
        return block_head(p, l, " usage >= ", &r->total, PART_USAGE);
    if (cursor_lit(l, "Program "))
        return block_head(p, l, " requirement ", &r->requirement, PART_PROGRAM);
    if (cursor_lit(l, "Largest program allocations in "))
        return block_head(p, l, "", NULL, PART_LIST);
    if (cursor_lit(l, "Output size "))
        return output_line(p, l);
    if (p->want_exceeded && cursor_starts(l, "Exceeded "))
        return exceeded(p, l);
    if (cursor_lit(l, "Scoped allocation with size ")) {
        if ((rc = expect_size(l, &r->used, "the scoped allocation's size")) != ERR_OK ||
            (rc = expect_lit(l, " and limit ")) != ERR_OK ||
            (rc = expect_size(l, &r->capacity, "the limit")) != ERR_OK)
            return rc;
        while (cursor_left(l) > 0 && !cursor_starts(l, " by "))
            l->i++;
        return cursor_lit(l, " by ") ? expect_size(l, &r->exceeded, "the excess") : ERR_OK;
    }
    if ((rc = block_line(p, l, &found)) != ERR_OK || found)
        return rc;
    if (cursor_lit(l, "...")) /* an elision in the paste */
        return ERR_OK;
    *end = true;
    return ERR_OK;
}

/* A line before the report: the header, or a block that starts a report without one. */
static int first_line(struct parser *p, struct cursor *l)
{
    bool found = false, end = false;
    size_t at = l->i;
    int rc;

    if ((rc = header(p, l, &found)) != ERR_OK || found) {
        p->started = found;
        return rc;
    }
    if ((rc = entry_head(p, l, &found)) != ERR_OK || found) {
        p->r->form = XLA_OOM_LIST;
        p->r->header_line = l->line;
        p->started = found;
        return rc;
    }
    if (cursor_starts(l, "Total ") || cursor_starts(l, "Program ") ||
        cursor_starts(l, "Largest program allocations in ")) {
        p->r->form = XLA_OOM_LIST;
        p->r->header_line = l->line;
        p->started = true;
        l->i = at;
        return report_line(p, l, &end);
    }
    return ERR_OK;
}

static const char *at_offset(const char *base, size_t off)
{
    return off != 0 ? base + off - 1 : NULL;
}

/* The entries with their strings as pointers, once the strings stop moving. */
static int finish(struct parser *p)
{
    struct xla_oom *r = p->r;
    const struct pentry *pe = p->allocs.data;
    const char *base;

    r->nallocs = p->allocs.n;
    r->allocs = calloc(r->nallocs ? r->nallocs : 1, sizeof(*r->allocs));
    if (r->allocs == NULL)
        return err_set(p->e, ERR_NOMEM, "", "out of memory for %zu allocations", r->nallocs);
    r->strings = vec_take(&p->strings);
    base = r->strings;
    r->stack_for = at_offset(base, p->stack_for);
    for (size_t k = 0; k < r->nallocs; k++) {
        struct xla_oom_alloc *a = &r->allocs[k];
        *a = pe[k].a;
        a->shape = at_offset(base, pe[k].st.shape);
        a->op_type = at_offset(base, pe[k].st.op_type);
        a->op_name = at_offset(base, pe[k].st.op_name);
        a->source_file = at_offset(base, pe[k].st.source_file);
        a->label = at_offset(base, pe[k].st.label);
        a->name = at_offset(base, pe[k].st.name);
        a->type = at_offset(base, pe[k].st.type);
        r->cut += a->cut;
    }
    vec_free(&p->allocs);
    return ERR_OK;
}

static int parse_lines(struct parser *p, const char *text, size_t len)
{
    struct cursor t = cursor_make(text, len, p->e), l;
    int rc;

    while (cursor_line(&t, &l)) {
        bool end = false;
        skip_prefix(&l);
        if (cursor_left(&l) == 0)
            continue;
        if (!p->started)
            rc = first_line(p, &l);
        else
            rc = report_line(p, &l, &end);
        if (rc != ERR_OK)
            return rc;
        if (end)
            break;
    }
    if (!p->started)
        return cursor_fail_at(p->e, 1, 1,
                              "expected an XLA out-of-memory report (\"Ran out of memory in "
                              "memory space ...\")");
    if (p->in_entry)
        entry(p)->a.cut = true;
    return ERR_OK;
}

int xla_oom_parse(const char *text, size_t len, size_t max_allocs, struct xla_oom *out,
                  struct err *e)
{
    struct parser p = {.r = out, .e = e};
    int rc;

    memset(out, 0, sizeof(*out));
    vec_init(&p.allocs, sizeof(struct pentry), max_allocs);
    vec_init(&p.strings, 1, 2 * len + 16);
    if ((rc = parse_lines(&p, text, len)) == ERR_OK && (rc = finish(&p)) == ERR_OK)
        return ERR_OK;
    vec_free(&p.allocs);
    vec_free(&p.strings);
    xla_oom_free(out);
    return rc;
}

void xla_oom_free(struct xla_oom *r)
{
    free(r->allocs);
    free(r->strings);
    memset(r, 0, sizeof(*r));
}
