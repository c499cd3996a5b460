/*
 * stablehlo.c - StableHLO / MHLO text to HLO text (see stablehlo.h): a cursor over the MLIR
 * text, one output buffer per computation being written (a function body or a while
 * region), a name table of the SSA values defined so far.
 */
#include "planner/stablehlo.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hlo.h"
#include "planner/hlo_model.h"
#include "planner/text.h"

#define SH_MAX_REGIONS 64 /* nested while regions */
#define SH_MAX_RESULTS 4096

struct sbuf {
    char *p;
    size_t n, cap;
};

struct val {
    uint32_t off, len; /* the SSA name without '%' */
    uint32_t region;
    bool tuple; /* a tuple-shaped instruction: a plain reference reads element 0 */
};

struct region {
    uint32_t id;
    struct sbuf text;
    uint32_t *caps; /* vals captured from outside (indices) */
    uint32_t ncaps, capcap;
};

struct tr {
    const char *s;
    size_t len, i;
    uint32_t line;
    size_t bol;
    struct err *e;
    struct sbuf out;     /* finished computations */
    struct sbuf entry;   /* the entry computation, written last */
    struct sbuf aliases; /* input_output_alias entries */
    size_t max_out;
    struct val *vals;
    uint32_t nvals, capvals;
    uint32_t *tab;
    size_t mask;
    uint32_t next_region;
    struct region reg[SH_MAX_REGIONS];
    unsigned depth; /* regions open; reg[depth - 1] is the current one */
    char fname[256];
    char entry_name[256];
};

static uint32_t col_of(const struct tr *t)
{
    return (uint32_t)(t->i - t->bol + 1);
}

static int fail(struct tr *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct tr *t, const char *fmt, ...)
{
    char what[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    return hlo_err_at(t->e, t->line, col_of(t), "%s", what);
}

static char peek(const struct tr *t)
{
    return t->i < t->len ? t->s[t->i] : '\0';
}

static void adv(struct tr *t)
{
    if (t->s[t->i] == '\n') {
        t->line++;
        t->bol = t->i + 1;
    }
    t->i++;
}

static void skip_ws(struct tr *t)
{
    while (t->i < t->len && (t->s[t->i] == ' ' || t->s[t->i] == '\t' || t->s[t->i] == '\r'))
        t->i++;
}

/* Skips blanks, line ends and // comments. */
static void skip_nl(struct tr *t)
{
    for (;;) {
        skip_ws(t);
        if (peek(t) == '\n') {
            adv(t);
        } else if (peek(t) == '/' && t->i + 1 < t->len && t->s[t->i + 1] == '/') {
            while (t->i < t->len && t->s[t->i] != '\n')
                t->i++;
        } else {
            return;
        }
    }
}

static bool starts(const struct tr *t, const char *w)
{
    size_t n = strlen(w);
    return t->len - t->i >= n && memcmp(t->s + t->i, w, n) == 0;
}

static bool ident_ch(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '$' || ch == '-';
}

static size_t ident(struct tr *t)
{
    size_t at = t->i;
    while (t->i < t->len && ident_ch(t->s[t->i]))
        t->i++;
    return t->i - at;
}

/* ---- output ------------------------------------------------------------------------ */

static int sb_add(struct tr *t, struct sbuf *b, const char *s, size_t n)
{
    if (t->out.n + t->entry.n + b->n + n > t->max_out)
        return err_set(t->e, ERR_LIMIT, "",
                       "the StableHLO module translates to more than %zu "
                       "bytes of HLO",
                       t->max_out);
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        char *p;
        while (cap < b->n + n + 1)
            cap *= 2;
        if ((p = realloc(b->p, cap)) == NULL)
            return err_set(t->e, ERR_NOMEM, "", "out of memory translating StableHLO");
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return ERR_OK;
}

static int sb_printf(struct tr *t, struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int sb_printf(struct tr *t, struct sbuf *b, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(buf))
        return err_set(t->e, ERR_LIMIT, "", "line %u: a name or type is too long", t->line);
    return sb_add(t, b, buf, (size_t)n);
}

static struct sbuf *cur_text(struct tr *t)
{
    return &t->reg[t->depth - 1].text;
}

/* ---- types ------------------------------------------------------------------------- */

/* XLA's name of an MLIR element type (i1 -> pred, ui8 -> u8, f8E4M3FN -> f8e4m3fn). */
static int elem_type(struct tr *t, const char *p, size_t n, char *out, size_t cap)
{
    if (n == 2 && memcmp(p, "i1", 2) == 0) {
        snprintf(out, cap, "pred");
        return ERR_OK;
    }
    if (n >= 8 && memcmp(p, "complex<", 8) == 0) {
        snprintf(out, cap, "%s", n >= 11 && memcmp(p + 8, "f64", 3) == 0 ? "c128" : "c64");
        return ERR_OK;
    }
    if (n + 2 > cap || n == 0)
        return fail(t, "expected an element type");
    size_t k = 0;
    if (p[0] == 'i') {
        out[k++] = 's';
        p++;
        n--;
    } else if (n > 2 && p[0] == 'u' && p[1] == 'i') {
        out[k++] = 'u';
        p += 2;
        n -= 2;
    }
    for (size_t q = 0; q < n && k + 1 < cap; q++)
        out[k++] = (char)(p[q] >= 'A' && p[q] <= 'Z' ? p[q] - 'A' + 'a' : p[q]);
    out[k] = '\0';
    return ERR_OK;
}

/* One MLIR type at the cursor (tensor<..> or !stablehlo.token) written as an XLA shape. */
static int type_at(struct tr *t, struct sbuf *b)
{
    char et[32];
    size_t start;
    int rc;

    skip_ws(t);
    if (starts(t, "!stablehlo.token") || starts(t, "!mhlo.token")) {
        t->i++;
        (void)ident(t);
        return sb_add(t, b, "token[]", 7);
    }
    if (!starts(t, "tensor<"))
        return fail(t, "expected a tensor<...> type");
    t->i += 7;
    start = t->i;
    /* dims: digits followed by 'x' */
    size_t dims_end = start, q = start;
    for (;;) {
        size_t d = q;
        while (q < t->len && t->s[q] >= '0' && t->s[q] <= '9')
            q++;
        if (q < t->len && t->s[q] == '?')
            return fail(t, "dynamic dimensions (?) are not supported");
        if (q > d && q < t->len && t->s[q] == 'x') {
            dims_end = ++q;
            continue;
        }
        q = dims_end;
        break;
    }
    size_t et_end = q;
    unsigned angle = 0;
    while (et_end < t->len && t->s[et_end] != '\n') {
        char ch = t->s[et_end];
        if (ch == '<')
            angle++;
        else if (ch == '>' && angle-- == 0)
            break;
        else if (ch == ',' && angle == 0)
            break;
        et_end++;
    }
    if ((rc = elem_type(t, t->s + q, et_end - q, et, sizeof(et))) != ERR_OK)
        return rc;
    if ((rc = sb_printf(t, b, "%s[", et)) != ERR_OK)
        return rc;
    for (size_t k = start; k + 1 < dims_end; k++)
        if ((rc = sb_add(t, b, t->s[k] == 'x' ? "," : t->s + k, 1)) != ERR_OK)
            return rc;
    if ((rc = sb_add(t, b, "]", 1)) != ERR_OK)
        return rc;
    /* skip an encoding and the closing '>' */
    t->i = et_end;
    for (angle = 0; t->i < t->len && t->s[t->i] != '\n'; t->i++) {
        if (t->s[t->i] == '<')
            angle++;
        else if (t->s[t->i] == '>' && angle-- == 0)
            break;
    }
    if (peek(t) != '>')
        return fail(t, "expected '>' to close the tensor type");
    t->i++;
    return ERR_OK;
}

/* A type list "T" or "T, T" or "(T, T)" at the cursor into *b as "S" or "(S, S)" (always
 * parenthesised when as_tuple); *n gets the count. Stops at the end of the list. */
static int type_list(struct tr *t, struct sbuf *b, bool as_tuple, uint32_t *n)
{
    bool paren;
    int rc;

    skip_ws(t);
    paren = peek(t) == '(';
    if (paren)
        t->i++;
    *n = 0;
    if (as_tuple && (rc = sb_add(t, b, "(", 1)) != ERR_OK)
        return rc;
    skip_ws(t);
    while (!(paren && peek(t) == ')')) {
        if (*n > 0 && (rc = sb_add(t, b, ", ", 2)) != ERR_OK)
            return rc;
        if ((rc = type_at(t, b)) != ERR_OK)
            return rc;
        if (++*n > SH_MAX_RESULTS)
            return fail(t, "more than %d types in a list", SH_MAX_RESULTS);
        skip_ws(t);
        if (peek(t) == '{') { /* result attributes */
            while (t->i < t->len && t->s[t->i] != '}' && t->s[t->i] != '\n')
                t->i++;
            if (peek(t) == '}')
                t->i++;
            skip_ws(t);
        }
        if (peek(t) != ',')
            break;
        t->i++;
        skip_ws(t);
    }
    if (paren) {
        if (peek(t) != ')')
            return fail(t, "expected ')' to close the type list");
        t->i++;
    }
    return as_tuple ? sb_add(t, b, ")", 1) : ERR_OK;
}

/* ---- names ------------------------------------------------------------------------- */

static size_t hash(const char *s, uint32_t off, uint32_t len, uint32_t region)
{
    uint64_t h = 1469598103934665603ull ^ region;
    for (uint32_t k = 0; k < len; k++)
        h = (h ^ (unsigned char)s[off + k]) * 1099511628211ull;
    return (size_t)h;
}

/* Names are scoped by region: sibling regions (a while's cond and do) reuse names. */
static size_t slot_of(const struct tr *t, uint32_t off, uint32_t len, uint32_t region)
{
    size_t h = hash(t->s, off, len, region) & t->mask;
    for (;; h = (h + 1) & t->mask) {
        uint32_t v = t->tab[h];
        if (v == UINT32_MAX)
            return h;
        const struct val *x = &t->vals[v];
        if (x->region == region && x->len == len && memcmp(t->s + x->off, t->s + off, len) == 0)
            return h;
    }
}

static int define(struct tr *t, uint32_t off, uint32_t len, bool tuple)
{
    size_t h = slot_of(t, off, len, t->reg[t->depth - 1].id);
    if (t->tab[h] != UINT32_MAX)
        return fail(t, "%%%.*s is defined twice", (int)(len > 200 ? 200 : len), t->s + off);
    if (t->nvals == t->capvals) {
        uint32_t cap = t->capvals ? t->capvals * 2 : 1024;
        struct val *p = realloc(t->vals, cap * sizeof(*p));
        if (p == NULL)
            return err_set(t->e, ERR_NOMEM, "", "out of memory translating StableHLO");
        t->vals = p;
        t->capvals = cap;
    }
    t->vals[t->nvals] = (struct val){off, len, t->reg[t->depth - 1].id, tuple};
    t->tab[h] = t->nvals++;
    return ERR_OK;
}

/* Marks value v captured by every open region below the one that defines it. */
static int capture(struct tr *t, uint32_t v)
{
    for (unsigned d = t->depth; d > 0 && t->reg[d - 1].id != t->vals[v].region; d--) {
        struct region *r = &t->reg[d - 1];
        bool seen = false;
        for (uint32_t k = 0; k < r->ncaps && !seen; k++)
            seen = r->caps[k] == v;
        if (seen)
            continue;
        if (r->ncaps == r->capcap) {
            uint32_t cap = r->capcap ? r->capcap * 2 : 16;
            uint32_t *p = realloc(r->caps, cap * sizeof(*p));
            if (p == NULL)
                return err_set(t->e, ERR_NOMEM, "", "out of memory translating StableHLO");
            r->caps = p;
            r->capcap = cap;
        }
        r->caps[r->ncaps++] = v;
    }
    return ERR_OK;
}

/* A use %name or %name#k at the cursor: appended to *ops as an HLO operand (", " between)
 * unless it is captured from outside the current region. */
static int use(struct tr *t, struct sbuf *ops)
{
    uint32_t line = t->line, col = col_of(t), off, len;
    long long k = -1;
    size_t h;
    int rc;

    t->i++; /* '%' */
    off = (uint32_t)t->i;
    len = (uint32_t)ident(t);
    if (peek(t) == '#') {
        int64_t v;
        t->i++;
        if (!text_uint(t->s, t->len, &t->i, &v))
            return hlo_err_at(t->e, line, col, "expected a result number after '#'");
        k = v;
    }
    h = 0;
    for (unsigned d = t->depth; d > 0 && len > 0; d--) /* innermost region first */
        if (t->tab[h = slot_of(t, off, len, t->reg[d - 1].id)] != UINT32_MAX)
            break;
    if (len == 0 || t->tab[h] == UINT32_MAX)
        return hlo_err_at(t->e, line, col, "%%%.*s is not defined before its use",
                          (int)(len > 200 ? 200 : len), t->s + off);
    const struct val *v = &t->vals[t->tab[h]];
    if (v->region != t->reg[t->depth - 1].id)
        return capture(t, t->tab[h]);
    if (ops->n > 0 && (rc = sb_add(t, ops, ", ", 2)) != ERR_OK)
        return rc;
    if ((rc = sb_add(t, ops, t->s + off, len)) != ERR_OK)
        return rc;
    if (v->tuple)
        return sb_printf(t, ops, "#%lld", k < 0 ? 0 : k);
    return ERR_OK;
}

/* ---- statements -------------------------------------------------------------------- */

struct stmt {
    uint32_t res_off, res_len, nres; /* nres 0: no results */
    uint32_t op_off, op_len;
    uint32_t line, col;
};

/* The HLO opcode of an MLIR op name: after the dialect prefix, '_' written '-'. */
static int opcode(struct tr *t, const struct stmt *st, struct sbuf *b)
{
    const char *p = t->s + st->op_off, *dot = NULL;
    for (uint32_t k = 0; k < st->op_len; k++)
        if (p[k] == '.')
            dot = p + k;
    const char *name = dot != NULL ? dot + 1 : p;
    size_t n = st->op_len - (size_t)(name - p);
    if (n == 20 && memcmp(name, "optimization_barrier", 20) == 0)
        return sb_add(t, b, "tuple", 5); /* aliases its operands */
    for (size_t k = 0; k < n; k++) {
        int rc = sb_add(t, b, name[k] == '_' ? "-" : name + k, 1);
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* Element k of a tuple shape text "(S, S, ...)" (flat: StableHLO has no nested tuples). */
static const char *nth_elem(const char *shapes, uint32_t k, size_t *len)
{
    const char *p = shapes + 1;
    for (;;) {
        const char *q = p;
        unsigned depth = 0;
        while (*q != '\0' && !(depth == 0 && (*q == ',' || *q == ')'))) {
            depth += *q == '[';
            depth -= *q == ']' && depth > 0;
            q++;
        }
        if (k-- == 0 || *q != ',') {
            *len = (size_t)(q - p);
            return p;
        }
        p = q + 1 + (q[1] == ' ');
    }
}

/* Emits the element reads name#k of a tuple-shaped instruction. */
static int elements(struct tr *t, const struct stmt *st, const char *shapes, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        size_t len;
        const char *p = nth_elem(shapes, k, &len);
        int rc = sb_printf(t, cur_text(t), "  %.*s#%u = %.*s get-tuple-element(%.*s), index=%u\n",
                           (int)st->res_len, t->s + st->res_off, k, (int)len, p, (int)st->res_len,
                           t->s + st->res_off, k);
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* A generic op: %r[:N] = op <operands and attributes> : <types> [regions] [loc(..)]. */
/* What a generic op's text holds up to its end (a line end outside brackets and regions):
 * the operands read (appended to ops), the type part, the callee and the loc name. */
struct op_text {
    size_t types_at; /* just past the type separator " :", 0 when none */
    uint32_t callee_off, callee_len, loc_off, loc_len;
};

static int scan_op(struct tr *t, const struct stmt *st, struct sbuf *ops, struct op_text *o)
{
    int depth = 0, brace = 0, rc;

    memset(o, 0, sizeof(*o));
    while (t->i < t->len) { /* operands up to the type separator */
        char ch = t->s[t->i];
        if (ch == '\n' && depth == 0 && brace == 0)
            break;
        if (ch == '"') {
            for (t->i++; t->i < t->len && t->s[t->i] != '"' && t->s[t->i] != '\n'; t->i++)
                t->i += t->s[t->i] == '\\';
            if (peek(t) != '"') {
                return fail(t, "unterminated string");
            }
            t->i++;
            continue;
        }
        if (ch == '-' && t->i + 1 < t->len && t->s[t->i + 1] == '>') {
            t->i += 2;
            continue;
        }
        if (o->types_at == 0 && depth == 0 && brace == 0 && ch == ':' && t->i > 0 &&
            t->s[t->i - 1] == ' ') {
            o->types_at = t->i + 1;
        } else if (ch == '%' && brace == 0 && o->types_at == 0 && st->nres > 0) {
            if ((rc = use(t, ops)) != ERR_OK)
                return rc;
            continue;
        } else if (ch == '@' && o->callee_len == 0 && brace == 0) {
            t->i++;
            o->callee_off = (uint32_t)t->i;
            o->callee_len = (uint32_t)ident(t);
            continue;
        } else if (depth == 0 && brace == 0 && starts(t, "loc(\"")) {
            o->loc_off = (uint32_t)t->i + 5;
            for (o->loc_len = 0;
                 o->loc_off + o->loc_len < t->len && t->s[o->loc_off + o->loc_len] != '"' &&
                 t->s[o->loc_off + o->loc_len] != '\n';
                 o->loc_len++)
                o->loc_len += t->s[o->loc_off + o->loc_len] == '\\';
        }
        depth += ch == '(' || ch == '[' || ch == '<';
        depth -= (ch == ')' || ch == ']' || ch == '>') && depth > 0;
        brace += ch == '{';
        brace -= ch == '}' && brace > 0;
        adv(t);
    }
    return ERR_OK;
}

static int generic(struct tr *t, const struct stmt *st)
{
    struct sbuf ops = {0}, shape = {0}, code = {0};
    uint32_t ntypes = 0;
    struct op_text o;
    int rc;

    if ((rc = scan_op(t, st, &ops, &o)) != ERR_OK)
        goto out;
    if (st->nres == 0)
        goto out; /* no value defined: nothing to plan */
    if (o.types_at == 0) {
        rc = hlo_err_at(t->e, st->line, st->col, "expected ': type' after the operation");
        goto out;
    }
    bool call = o.callee_len > 0 && (st->op_len == 4 || st->op_len == 9) &&
                memcmp(t->s + st->op_off + st->op_len - 4, "call", 4) == 0;
    {
        struct tr sub = *t; /* re-read the types from the separator */
        sub.i = o.types_at;
        sub.line = st->line;
        /* the result types follow the last "->" before the end of the type part */
        for (size_t q = o.types_at; q < t->i && t->s[q] != '\n'; q++)
            if (t->s[q] == '-' && q + 1 < t->len && t->s[q + 1] == '>')
                sub.i = q + 2;
        if ((rc = type_list(&sub, &shape, st->nres > 1 || call, &ntypes)) != ERR_OK)
            goto out;
    }
    if (ntypes != (st->nres > 1 ? st->nres : 1)) {
        rc =
            hlo_err_at(t->e, st->line, st->col, "%u results but %u result types", st->nres, ntypes);
        goto out;
    }
    if (call) {
        rc = sb_add(t, &code, "call", 4);
    } else if (st->op_len >= 8 && memcmp(t->s + st->op_off + st->op_len - 8, "constant", 8) == 0) {
        rc = sb_add(t, &code, "constant", 8);
        ops.n = 0;
        if (rc == ERR_OK)
            rc = sb_add(t, &ops, "0", 1);
    } else {
        rc = opcode(t, st, &code);
    }
    if (rc != ERR_OK)
        goto out;
    rc = sb_printf(t, cur_text(t), "  %.*s = %s %s(%s)", (int)st->res_len, t->s + st->res_off,
                   shape.p != NULL ? shape.p : "", code.p != NULL ? code.p : "",
                   ops.p != NULL ? ops.p : "");
    if (rc == ERR_OK && call)
        rc = sb_printf(t, cur_text(t), ", to_apply=%.*s", (int)o.callee_len, t->s + o.callee_off);
    if (rc == ERR_OK && o.loc_len > 0)
        rc = sb_printf(t, cur_text(t), ", metadata={op_name=\"%.*s\"}", (int)o.loc_len,
                       t->s + o.loc_off);
    if (rc == ERR_OK)
        rc = sb_add(t, cur_text(t), "\n", 1);
    if (rc == ERR_OK && (st->nres > 1 || call))
        rc = elements(t, st, shape.p, ntypes);
    if (rc == ERR_OK)
        rc = define(t, st->res_off, st->res_len, st->nres > 1 || call);
out:
    free(ops.p);
    free(shape.p);
    free(code.p);
    return rc;
}

/* return / stablehlo.return %a, %b : T, T -> ROOT #ret = (S, S) tuple(a, b). */
static int terminator(struct tr *t)
{
    struct sbuf ops = {0}, shape = {0};
    uint32_t n = 0;
    int rc = ERR_OK;

    for (;;) {
        skip_ws(t);
        if (peek(t) != '%')
            break;
        if ((rc = use(t, &ops)) != ERR_OK)
            goto out;
        skip_ws(t);
        if (peek(t) == ',')
            t->i++;
    }
    if (peek(t) == ':') {
        t->i++;
        if ((rc = type_list(t, &shape, true, &n)) != ERR_OK)
            goto out;
    } else if ((rc = sb_add(t, &shape, "()", 2)) != ERR_OK) {
        goto out;
    }
    while (t->i < t->len && t->s[t->i] != '\n') /* loc(..) */
        t->i++;
    rc = sb_printf(t, cur_text(t), "  ROOT #ret = %s tuple(%s)\n", shape.p,
                   ops.p != NULL ? ops.p : "");
out:
    free(ops.p);
    free(shape.p);
    return rc;
}

static int statements(struct tr *t);

/* Opens a region writing computation name with a tuple parameter of shape (types), whose
 * elements are the SSA names args (n of them, offsets and lengths). */
static int open_region(struct tr *t, const char *name, const char *shape, const uint32_t *args,
                       uint32_t n)
{
    struct region *r;
    int rc;

    if (t->depth == SH_MAX_REGIONS)
        return fail(t, "regions nested more than %d deep", SH_MAX_REGIONS);
    r = &t->reg[t->depth++];
    memset(r, 0, sizeof(*r));
    r->id = ++t->next_region;
    if ((rc = sb_printf(t, &r->text, "%s {\n  #param = %s parameter(0)\n", name, shape)) != ERR_OK)
        return rc;
    for (uint32_t k = 0; k < n; k++) {
        size_t len;
        const char *p = nth_elem(shape, k, &len);
        if ((rc = sb_printf(t, &r->text, "  %.*s = %.*s get-tuple-element(#param), index=%u\n",
                            (int)args[2 * k + 1], t->s + args[2 * k], (int)len, p, k)) != ERR_OK ||
            (rc = define(t, args[2 * k], args[2 * k + 1], false)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

static int close_region(struct tr *t)
{
    struct region *r = &t->reg[t->depth - 1];
    int rc = sb_add(t, &r->text, "}\n\n", 3);
    if (rc == ERR_OK)
        rc = sb_add(t, &t->out, r->text.p, r->text.n);
    free(r->text.p);
    r->text.p = NULL;
    t->depth--;
    return rc;
}

/* The while's header "(%a = %x, ...) : T, ...": the loop variables' names (offset, length
 * pairs in args), their initial values (HLO operands in init) and the state's tuple shape. */
static int while_head(struct tr *t, const struct stmt *st, uint32_t *args, uint32_t *nargs,
                      struct sbuf *init, struct sbuf *shape)
{
    uint32_t ntypes = 0;
    int rc;

    t->i++; /* '(' */
    for (*nargs = 0;;) {
        skip_ws(t);
        if (peek(t) == ')')
            break;
        if (peek(t) != '%' || *nargs == SH_MAX_RESULTS)
            return fail(t, "expected %%name = %%value in the while's operands");
        t->i++;
        args[2 * *nargs] = (uint32_t)t->i;
        args[2 * *nargs + 1] = (uint32_t)ident(t);
        ++*nargs;
        skip_ws(t);
        if (peek(t) != '=')
            return fail(t, "expected '=' in the while's operands");
        t->i++;
        skip_ws(t);
        if (peek(t) != '%')
            return fail(t, "expected the loop variable's initial value");
        if ((rc = use(t, init)) != ERR_OK)
            return rc;
        skip_ws(t);
        if (peek(t) == ',')
            t->i++;
    }
    t->i++;
    skip_ws(t);
    if (peek(t) != ':')
        return fail(t, "expected ': types' after the while's operands");
    t->i++;
    if ((rc = type_list(t, shape, true, &ntypes)) != ERR_OK)
        return rc;
    if (ntypes != *nargs || (st->nres > 1 ? st->nres : 1) != *nargs)
        return fail(t, "the while has %u loop variables, %u types and %u results", *nargs, ntypes,
                    st->nres);
    while (t->i < t->len && t->s[t->i] != '\n') /* loc(..) */
        t->i++;
    return ERR_OK;
}

/* The "cond { .. } do { .. }" regions as computations names[0] and names[1]; the values they
 * capture from outside are appended to *caps (malloc'd, *ncaps of them). */
static int while_regions(struct tr *t, char names[2][320], const char *shape, const uint32_t *args,
                         uint32_t nargs, uint32_t **caps, uint32_t *ncaps)
{
    int rc;

    for (int part = 0; part < 2; part++) {
        skip_nl(t);
        if (part == 1 && peek(t) == '}') { /* "} do {" */
            t->i++;
            skip_ws(t);
        }
        if (!starts(t, part == 0 ? "cond" : "do"))
            return fail(t, "expected the while's '%s' region", part == 0 ? "cond" : "do");
        t->i += part == 0 ? 4 : 2;
        skip_ws(t);
        if (peek(t) != '{')
            return fail(t, "expected '{' to open the region");
        t->i++;
        if ((rc = open_region(t, names[part], shape, args, nargs)) != ERR_OK ||
            (rc = statements(t)) != ERR_OK)
            return rc;
        struct region *r = &t->reg[t->depth - 1];
        for (uint32_t k = 0; k < r->ncaps; k++) {
            uint32_t *p = realloc(*caps, (*ncaps + 1) * sizeof(*p));
            if (p == NULL)
                return err_set(t->e, ERR_NOMEM, "", "out of memory translating StableHLO");
            *caps = p;
            (*caps)[(*ncaps)++] = r->caps[k];
        }
        free(r->caps);
        r->caps = NULL;
        if ((rc = close_region(t)) != ERR_OK)
            return rc;
    }
    if (peek(t) != '}')
        return fail(t, "expected '}' to close the while's do region");
    t->i++;
    return ERR_OK;
}

/* %r:N = stablehlo.while(%a = %x, ...) : T, ... cond { .. } do { .. } */
static int while_op(struct tr *t, const struct stmt *st)
{
    struct sbuf init = {0}, shape = {0}, caps = {0};
    uint32_t args[2 * SH_MAX_RESULTS], nargs = 0, *cap_list = NULL, ncaps = 0;
    char names[2][320];
    int rc;

    if ((rc = while_head(t, st, args, &nargs, &init, &shape)) != ERR_OK)
        goto out;
    snprintf(names[0], sizeof(names[0]), "%s.%.*s.cond", t->fname, (int)st->res_len,
             t->s + st->res_off);
    snprintf(names[1], sizeof(names[1]), "%s.%.*s.body", t->fname, (int)st->res_len,
             t->s + st->res_off);
    if ((rc = while_regions(t, names, shape.p, args, nargs, &cap_list, &ncaps)) != ERR_OK)
        goto out;
    for (uint32_t k = 0; k < ncaps; k++) { /* captured values are read by the while */
        const struct val *v = &t->vals[cap_list[k]];
        if (v->region != t->reg[t->depth - 1].id) {
            if ((rc = capture(t, cap_list[k])) != ERR_OK)
                goto out;
            continue;
        }
        if ((rc = sb_printf(t, &caps, ", %.*s%s", (int)v->len, t->s + v->off,
                            v->tuple ? "#0" : "")) != ERR_OK)
            goto out;
    }
    if ((rc = sb_printf(t, cur_text(t), "  %.*s#init = %s tuple(%s)\n", (int)st->res_len,
                        t->s + st->res_off, shape.p, init.p != NULL ? init.p : "")) != ERR_OK ||
        (rc = sb_printf(t, cur_text(t), "  %.*s = %s while(%.*s#init%s), condition=%s, body=%s\n",
                        (int)st->res_len, t->s + st->res_off, shape.p, (int)st->res_len,
                        t->s + st->res_off, caps.p != NULL ? caps.p : "", names[0], names[1])) !=
            ERR_OK ||
        (rc = elements(t, st, shape.p, nargs)) != ERR_OK)
        goto out;
    rc = define(t, st->res_off, st->res_len, true);
out:
    free(init.p);
    free(shape.p);
    free(caps.p);
    free(cap_list);
    return rc;
}

/* One statement of a region. */
static int statement(struct tr *t)
{
    struct stmt st = {0};

    st.line = t->line;
    st.col = col_of(t);
    if (peek(t) == '%') {
        t->i++;
        st.res_off = (uint32_t)t->i;
        st.res_len = (uint32_t)ident(t);
        st.nres = 1;
        if (peek(t) == ':') {
            int64_t n;
            t->i++;
            if (!text_uint(t->s, t->len, &t->i, &n) || n < 1 || n > SH_MAX_RESULTS)
                return fail(t, "expected a result count after ':'");
            st.nres = (uint32_t)n;
        }
        skip_ws(t);
        if (peek(t) != '=')
            return fail(t, "expected '=' after the results (one %%name or %%name:N)");
        t->i++;
        skip_ws(t);
    }
    if (peek(t) == '"') {
        t->i++;
        st.op_off = (uint32_t)t->i;
        st.op_len = (uint32_t)ident(t);
        if (peek(t) != '"')
            return fail(t, "expected '\"' after the operation name");
        t->i++;
    } else {
        st.op_off = (uint32_t)t->i;
        st.op_len = (uint32_t)ident(t);
    }
    if (st.op_len == 0)
        return fail(t, "expected an operation");
    const char *op = t->s + st.op_off;
    bool ret = (st.op_len == 6 && memcmp(op, "return", 6) == 0) ||
               (st.op_len > 7 && memcmp(op + st.op_len - 7, ".return", 7) == 0);
    if (ret && st.nres == 0)
        return terminator(t);
    skip_ws(t);
    if (st.nres > 0 && st.op_len >= 5 && memcmp(op + st.op_len - 5, "while", 5) == 0 &&
        peek(t) == '(')
        return while_op(t, &st);
    return generic(t, &st);
}

/* Statements up to the region's closing '}' (left at the cursor). */
static int statements(struct tr *t)
{
    for (;;) {
        int rc;
        skip_nl(t);
        if (peek(t) == '}' || peek(t) == '\0')
            return peek(t) == '}' ? ERR_OK : fail(t, "expected '}' to close the region");
        if ((rc = statement(t)) != ERR_OK)
            return rc;
    }
}

/* ---- functions and the module ------------------------------------------------------ */

/* One argument's attributes: mhlo.sharding and tf.aliasing_output. */
static int arg_attrs(struct tr *t, uint32_t arg, struct sbuf *sharding)
{
    size_t end = t->i;
    unsigned d = 0;
    for (; end < t->len && t->s[end] != '\n'; end++) {
        if (t->s[end] == '"')
            for (end++; end < t->len && t->s[end] != '"' && t->s[end] != '\n'; end++)
                end += t->s[end] == '\\';
        if (end >= t->len)
            break;
        d += t->s[end] == '{';
        if (t->s[end] == '}' && --d == 0)
            break;
    }
    for (size_t q = t->i; q < end; q++) {
        static const char sh[] = "mhlo.sharding = \"", al[] = "tf.aliasing_output = ";
        if (end - q > sizeof(sh) && memcmp(t->s + q, sh, sizeof(sh) - 1) == 0) {
            size_t v = q + sizeof(sh) - 1, n = 0;
            while (v + n < end && t->s[v + n] != '"')
                n++;
            int rc = sb_printf(t, sharding, ", sharding=%.*s", (int)n, t->s + v);
            if (rc != ERR_OK)
                return rc;
        } else if (end - q > sizeof(al) && memcmp(t->s + q, al, sizeof(al) - 1) == 0) {
            size_t at = q + sizeof(al) - 1;
            int64_t o = 0;
            if (!text_uint(t->s, end, &at, &o))
                return fail(t, "expected an output number after tf.aliasing_output");
            int rc = sb_printf(t, &t->aliases, "%s{%lld}: (%u, {}, may-alias)",
                               t->aliases.n > 0 ? ", " : "", (long long)o, arg);
            if (rc != ERR_OK)
                return rc;
        }
    }
    t->i = end + (end < t->len);
    return ERR_OK;
}

static int func(struct tr *t)
{
    uint32_t narg = 0;
    size_t name_off, name_len;
    int rc = ERR_OK;

    t->i += 9; /* func.func */
    skip_ws(t);
    if (starts(t, "public") || starts(t, "private") || starts(t, "nested")) {
        (void)ident(t);
        skip_ws(t);
    }
    if (peek(t) != '@')
        return fail(t, "expected @name after func.func");
    t->i++;
    name_off = t->i;
    name_len = ident(t);
    if (name_len == 0 || name_len >= sizeof(t->fname))
        return fail(t, "expected a function name");
    snprintf(t->fname, sizeof(t->fname), "%.*s", (int)name_len, t->s + name_off);
    t->depth = 0;
    struct region *r = &t->reg[t->depth++];
    memset(r, 0, sizeof(*r));
    r->id = ++t->next_region;
    if (peek(t) != '(')
        return fail(t, "expected '(' after the function name");
    t->i++;
    if ((rc = sb_printf(t, &r->text, "%s {\n", t->fname)) != ERR_OK)
        goto out;
    for (;;) {
        struct sbuf shape = {0}, sharding = {0};
        uint32_t off, len;
        skip_nl(t);
        if (peek(t) == ')')
            break;
        if (peek(t) != '%') {
            rc = fail(t, "expected an argument %%name");
            goto out;
        }
        t->i++;
        off = (uint32_t)t->i;
        len = (uint32_t)ident(t);
        skip_ws(t);
        if (peek(t) != ':') {
            rc = fail(t, "expected ':' after the argument name");
            goto out;
        }
        t->i++;
        skip_ws(t);
        if ((rc = type_at(t, &shape)) == ERR_OK && (skip_ws(t), peek(t) == '{'))
            rc = arg_attrs(t, narg, &sharding);
        if (rc == ERR_OK)
            rc = sb_printf(t, &r->text, "  %.*s = %s parameter(%u)%s\n", (int)len, t->s + off,
                           shape.p, narg, sharding.p != NULL ? sharding.p : "");
        free(shape.p);
        free(sharding.p);
        if (rc != ERR_OK || (rc = define(t, off, len, false)) != ERR_OK)
            goto out;
        narg++;
        skip_ws(t);
        if (peek(t) == ',')
            t->i++;
    }
    /* "-> results attributes {...} {": the body opens with the last '{' of the line */
    size_t open = 0;
    for (; t->i < t->len && t->s[t->i] != '\n'; t->i++)
        if (t->s[t->i] == '{')
            open = t->i;
    if (open == 0) {
        rc = fail(t, "expected '{' to open the function body");
        goto out;
    }
    if ((rc = statements(t)) != ERR_OK)
        goto out;
    t->i++; /* '}' */
    rc = sb_add(t, &r->text, "}\n\n", 3);
    if (rc == ERR_OK && strcmp(t->fname, t->entry_name) == 0) {
        free(t->entry.p);
        t->entry = r->text;
        r->text = (struct sbuf){0};
    } else if (rc == ERR_OK) {
        rc = sb_add(t, &t->out, r->text.p, r->text.n);
    }
out:
    free(r->text.p);
    r->text = (struct sbuf){0};
    t->depth = 0;
    return rc;
}

/* Skips blank, comment and #loc lines; *lines counts the line ends passed. */
static void skip_preamble(const char *s, size_t len, size_t *i, uint32_t *lines, size_t *bol)
{
    for (;;) {
        while (*i < len && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r' || s[*i] == '\n')) {
            if (s[*i] == '\n') {
                ++*lines;
                *bol = *i + 1;
            }
            (*i)++;
        }
        if (*i < len && (s[*i] == '#' || (s[*i] == '/' && *i + 1 < len && s[*i + 1] == '/'))) {
            while (*i < len && s[*i] != '\n')
                (*i)++;
            continue;
        }
        return;
    }
}

bool stablehlo_detect(const char *s, size_t len)
{
    size_t i = 0, bol = 0;
    uint32_t lines = 0;
    skip_preamble(s, len, &i, &lines, &bol);
    return (len - i >= 7 && memcmp(s + i, "module ", 7) == 0) ||
           (len - i >= 7 && memcmp(s + i, "module{", 7) == 0) ||
           (len - i >= 10 && memcmp(s + i, "func.func ", 10) == 0);
}

/* The entry function: @main, else the first public one, else the first. */
static void pick_entry(struct tr *t)
{
    static const char key[] = "func.func ";
    bool pub_found = false;

    t->entry_name[0] = '\0';
    for (size_t q = 0; q + sizeof(key) < t->len; q++) {
        if (memcmp(t->s + q, key, sizeof(key) - 1) != 0 ||
            (q > 0 && t->s[q - 1] != ' ' && t->s[q - 1] != '\n'))
            continue;
        size_t p = q + sizeof(key) - 1, n = 0;
        bool pub = t->len - p > 7 && memcmp(t->s + p, "public ", 7) == 0;
        while (p < t->len && t->s[p] != '@' && t->s[p] != '\n')
            p++;
        if (p >= t->len || t->s[p] != '@')
            continue;
        while (p + 1 + n < t->len && ident_ch(t->s[p + 1 + n]))
            n++;
        if (n == 0 || n >= sizeof(t->entry_name))
            continue;
        if ((n == 4 && memcmp(t->s + p + 1, "main", 4) == 0) || t->entry_name[0] == '\0' ||
            (pub && !pub_found)) {
            snprintf(t->entry_name, sizeof(t->entry_name), "%.*s", (int)n, t->s + p + 1);
            pub_found |= pub;
            if (strcmp(t->entry_name, "main") == 0)
                return;
        }
    }
}

static int module(struct tr *t, char *name, size_t cap)
{
    int rc;

    pick_entry(t);
    skip_preamble(t->s, t->len, &t->i, &t->line, &t->bol);
    snprintf(name, cap, "module");
    if (starts(t, "module")) {
        t->i += 6;
        skip_ws(t);
        if (peek(t) == '@') {
            size_t off = ++t->i, n = ident(t);
            snprintf(name, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), t->s + off);
        }
        while (t->i < t->len && t->s[t->i] != '\n') /* attributes {...} { */
            t->i++;
    }
    for (;;) {
        skip_nl(t);
        if (t->i >= t->len || peek(t) == '}')
            break;
        if (starts(t, "func.func ")) {
            if ((rc = func(t)) != ERR_OK)
                return rc;
        } else { /* sdy.mesh and other module-level ops */
            while (t->i < t->len && t->s[t->i] != '\n')
                t->i++;
        }
    }
    if (t->entry.n == 0)
        return fail(t, "expected a func.func in the module");
    return ERR_OK;
}

int stablehlo_to_hlo(const char *s, size_t len, char **out, size_t *out_len, struct err *e)
{
    struct tr t = {.s = s, .len = len, .line = 1, .e = e};
    char name[256];
    size_t lines = 1, cap = 1;
    struct sbuf all = {0};
    int rc;

    *out = NULL;
    *out_len = 0;
    if (len > UINT32_MAX / 16)
        return err_set(e, ERR_LIMIT, "", "StableHLO text of %zu bytes is too large", len);
    t.max_out = 8 * len + 65536;
    for (size_t k = 0; k < len; k++)
        lines += s[k] == '\n';
    while (cap < 2 * lines + 2)
        cap *= 2;
    if ((t.tab = malloc(cap * sizeof(*t.tab))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory translating StableHLO");
    memset(t.tab, 0xff, cap * sizeof(*t.tab));
    t.mask = cap - 1;
    if ((rc = module(&t, name, sizeof(name))) != ERR_OK)
        goto out;
    if ((rc = sb_printf(&t, &all, "HloModule %s", name)) != ERR_OK ||
        (t.aliases.n > 0 &&
         (rc = sb_printf(&t, &all, ", input_output_alias={ %s }", t.aliases.p)) != ERR_OK) ||
        (rc = sb_add(&t, &all, "\n\n", 2)) != ERR_OK ||
        (t.out.n > 0 && (rc = sb_add(&t, &all, t.out.p, t.out.n)) != ERR_OK) ||
        (rc = sb_add(&t, &all, "ENTRY ", 6)) != ERR_OK ||
        (rc = sb_add(&t, &all, t.entry.p, t.entry.n)) != ERR_OK)
        goto out;
    *out = all.p;
    *out_len = all.n;
    all.p = NULL;
out:
    for (unsigned d = 0; d < SH_MAX_REGIONS; d++) {
        free(t.reg[d].text.p);
        free(t.reg[d].caps);
    }
    free(all.p);
    free(t.out.p);
    free(t.entry.p);
    free(t.aliases.p);
    free(t.vals);
    free(t.tab);
    return rc;
}

int stablehlo_import(const char *s, size_t len, const struct chip *chip,
                     const struct model_limits *l, struct model *m, struct err *e)
{
    char *hlo;
    size_t n;
    int rc;

    memset(m, 0, sizeof(*m));
    if ((rc = stablehlo_to_hlo(s, len, &hlo, &n, e)) != ERR_OK)
        return rc;
    if ((rc = hlo_import(hlo, n, chip, l, m, e)) != ERR_OK)
        err_prefix(e, "", "StableHLO translated to HLO: ");
    else
        m->source_format = "stablehlo";
    free(hlo);
    return rc;
}
