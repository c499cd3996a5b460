/*
 * stablehlo.c - StableHLO / MHLO text to HLO text (see stablehlo.h): a cursor over the MLIR
 * text, one output buffer per computation being written (a function body or an op's
 * region: while, case, if), a name table of the SSA values defined so far. Location names are read
 * by stablehlo_loc.c and Shardy shardings by stablehlo_sdy.c (stablehlo_int.h).
 */
#include "planner/stablehlo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/hlo_model.h"
#include "planner/import/stablehlo_int.h"
#include "planner/text.h"

/* Skips blanks, line ends and // comments. */
static void skip_nl(struct cursor *c)
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

/* ---- output ------------------------------------------------------------------------ */

/* Appends a NUL-terminated string (NULL: nothing). */
static int buf_str(struct sh_translator *t, struct sh_buf *b, const char *s)
{
    return s != NULL ? sh_buf_add(t, b, s, strlen(s)) : ERR_OK;
}

static struct sh_buf *current_text(struct sh_translator *t)
{
    return &t->regions[t->depth - 1].text;
}

/* ---- types ------------------------------------------------------------------------- */

/* XLA's name of an MLIR element type (i1 -> pred, ui8 -> u8, f8E4M3FN -> f8e4m3fn). */
static int elem_type(struct sh_translator *t, const char *p, size_t n, char *out, size_t cap)
{
    struct cursor *c = &t->c;
    if (n == 2 && memcmp(p, "i1", 2) == 0) {
        snprintf(out, cap, "pred");
        return ERR_OK;
    }
    if (n >= 8 && memcmp(p, "complex<", 8) == 0) {
        snprintf(out, cap, "%s", n >= 11 && memcmp(p + 8, "f64", 3) == 0 ? "c128" : "c64");
        return ERR_OK;
    }
    if (n + 2 > cap || n == 0)
        return cursor_fail(c, "expected an element type");
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
static int type_at(struct sh_translator *t, struct sh_buf *b)
{
    struct cursor *c = &t->c;
    char et[32];
    size_t start;
    int rc;

    cursor_skip_blanks(c);
    if (cursor_starts(c, "!stablehlo.token") || cursor_starts(c, "!mhlo.token")) {
        c->i++;
        (void)cursor_span(c, ident_ch);
        return sh_buf_add(t, b, "token[]", 7);
    }
    if (!cursor_starts(c, "tensor<"))
        return cursor_fail(c, "expected a tensor<...> type");
    c->i += 7;
    start = c->i;
    /* dims: digits followed by 'x' */
    size_t dims_end = start, q = start;
    for (;;) {
        size_t d = q;
        while (q < c->len && c->s[q] >= '0' && c->s[q] <= '9')
            q++;
        if (q < c->len && c->s[q] == '?')
            return cursor_fail(c, "dynamic dimensions (?) are not supported");
        if (q > d && q < c->len && c->s[q] == 'x') {
            dims_end = ++q;
            continue;
        }
        q = dims_end;
        break;
    }
    size_t et_end = q;
    unsigned angle = 0;
    while (et_end < c->len && c->s[et_end] != '\n') {
        char ch = c->s[et_end];
        if (ch == '<')
            angle++;
        else if (ch == '>' && angle-- == 0)
            break;
        else if (ch == ',' && angle == 0)
            break;
        et_end++;
    }
    if ((rc = elem_type(t, c->s + q, et_end - q, et, sizeof(et))) != ERR_OK)
        return rc;
    if ((rc = sh_buf_printf(t, b, "%s[", et)) != ERR_OK)
        return rc;
    for (size_t k = start; k + 1 < dims_end; k++)
        if ((rc = sh_buf_add(t, b, c->s[k] == 'x' ? "," : c->s + k, 1)) != ERR_OK)
            return rc;
    if ((rc = sh_buf_add(t, b, "]", 1)) != ERR_OK)
        return rc;
    /* skip an encoding and the closing '>' */
    c->i = et_end;
    for (angle = 0; c->i < c->len && c->s[c->i] != '\n'; c->i++) {
        if (c->s[c->i] == '<')
            angle++;
        else if (c->s[c->i] == '>' && angle-- == 0)
            break;
    }
    if (!cursor_accept(c, '>'))
        return cursor_fail(c, "expected '>' to close the tensor type");
    return ERR_OK;
}

/* A type list "T" or "T, T" or "(T, T)" at the cursor into *b as "S" or "(S, S)" (always
 * parenthesised when as_tuple); *n gets the count. Stops at the end of the list. */
static int type_list(struct sh_translator *t, struct sh_buf *b, bool as_tuple, uint32_t *n)
{
    struct cursor *c = &t->c;
    bool paren;
    int rc;

    cursor_skip_blanks(c);
    paren = cursor_peek(c) == '(';
    if (paren)
        c->i++;
    *n = 0;
    if (as_tuple && (rc = sh_buf_add(t, b, "(", 1)) != ERR_OK)
        return rc;
    cursor_skip_blanks(c);
    while (!(paren && cursor_peek(c) == ')')) {
        if (*n > 0 && (rc = sh_buf_add(t, b, ", ", 2)) != ERR_OK)
            return rc;
        if ((rc = type_at(t, b)) != ERR_OK)
            return rc;
        if (++*n > SH_MAX_RESULTS)
            return cursor_fail(c, "more than %d types in a list", SH_MAX_RESULTS);
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '{') { /* result attributes */
            while (c->i < c->len && c->s[c->i] != '}' && c->s[c->i] != '\n')
                c->i++;
            (void)cursor_accept(c, '}');
            cursor_skip_blanks(c);
        }
        if (cursor_peek(c) != ',')
            break;
        c->i++;
        cursor_skip_blanks(c);
    }
    if (paren) {
        if (!cursor_accept(c, ')'))
            return cursor_fail(c, "expected ')' to close the type list");
    }
    return as_tuple ? sh_buf_add(t, b, ")", 1) : ERR_OK;
}

/* ---- names ------------------------------------------------------------------------- */

/* Names are scoped by region: sibling regions (a while's cond and do) reuse names. Element k
 * of a result group %r:N is its own value (r, k); a plain value is element 0. The scope of a
 * name in the table is the pair. */
static uint64_t scope_of(uint32_t region, uint32_t elem)
{
    return (uint64_t)region << 32 | elem;
}

/* Appends x to one of the translation's vecs. */
static int push(struct sh_translator *t, struct vec *v, const void *x)
{
    int rc = vec_push(v, x);
    return rc == ERR_OK ? ERR_OK : sh_grow_err(t, rc);
}

static struct sh_value *value_at(const struct sh_translator *t, uint32_t v)
{
    return vec_at(&t->values, v);
}

static struct names_key value_name(const void *ctx, uint32_t v)
{
    const struct sh_translator *t = ctx;
    const struct sh_value *x = value_at(t, v);

    return (struct names_key){t->c.s + x->off, x->len, scope_of(x->region, x->elem)};
}

/* The value (name, elem) of region, or NAMES_NONE. */
static uint32_t find_value(const struct sh_translator *t, uint32_t off, uint32_t len,
                           uint32_t region, uint32_t elem)
{
    return names_find(&t->names, (struct names_key){t->c.s + off, len, scope_of(region, elem)});
}

/* "%name is defined twice", where the definitions being made are written. */
static int defined_twice(const struct sh_translator *t, uint32_t off, uint32_t len)
{
    return cursor_fail_at(t->c.e, t->at_line, t->at_col, "%%%.*s is defined twice",
                          (int)(len > 200 ? 200 : len), t->c.s + off);
}

/* Defines value (name, elem) of shape sh[0..shn) in the current region. */
static int define_one(struct sh_translator *t, uint32_t off, uint32_t len, uint32_t elem,
                      bool tuple, const char *sh, size_t shn)
{
    struct cursor *c = &t->c;
    uint32_t region = t->regions[t->depth - 1].id, first;
    int rc;

    /* the table is sized by the values defined, which a few lines can make many of (a
     * while's loop variables, a result group) */
    if ((rc = names_reserve(&t->names, t->values.n + 1)) != ERR_OK)
        return err_set(c->e, rc, "", "out of memory translating StableHLO");
    /* MLIR regions are not isolated from above: a name visible from an enclosing region
     * cannot be defined again inside (and HLO would read two instructions of one name once
     * the outer one is a parameter of the region) */
    for (unsigned d = t->depth; d > 0 && elem == 0; d--)
        if (find_value(t, off, len, t->regions[d - 1].id, 0) != NAMES_NONE)
            return defined_twice(t, off, len);
    struct sh_value x = {.off = off,
                         .len = len,
                         .region = region,
                         .elem = elem,
                         .shape_off = (uint32_t)t->shapes.n,
                         .shape_len = (uint32_t)shn,
                         .tuple = tuple};
    if ((rc = sh_buf_keep(t, &t->shapes, sh, shn)) != ERR_OK ||
        (rc = push(t, &t->values, &x)) != ERR_OK)
        return rc;
    if ((rc = names_add(&t->names, (uint32_t)(t->values.n - 1), &first)) != ERR_OK)
        return err_set(c->e, rc, "", "out of memory translating StableHLO");
    return first == NAMES_NONE ? ERR_OK : defined_twice(t, off, len);
}

/* The next element of a tuple shape text "(S, S, ...)" (flat: StableHLO has no nested
 * tuples): *p at the element, which is returned (*len its length); *p moves past it. */
static const char *next_elem(const char **p, size_t *len)
{
    const char *at = *p, *q = at;
    unsigned depth = 0;
    while (*q != '\0' && !(depth == 0 && (*q == ',' || *q == ')'))) {
        depth += *q == '[';
        depth -= *q == ']' && depth > 0;
        q++;
    }
    *len = (size_t)(q - at);
    *p = *q == ',' ? q + 1 + (q[1] == ' ') : q;
    return at;
}

/* Defines result name: a tuple's n elements (name, k) of shape "(S, ...)", else one value. */
static int define(struct sh_translator *t, uint32_t off, uint32_t len, bool tuple,
                  const char *shape, uint32_t n)
{
    const char *p;
    if (shape == NULL) /* no type written: type_list failed before */
        shape = "()";
    p = shape + 1;
    if (!tuple)
        return define_one(t, off, len, 0, false, shape, strlen(shape));
    for (uint32_t k = 0; k < n; k++) {
        size_t el;
        const char *e = next_elem(&p, &el);
        int rc = define_one(t, off, len, k, true, e, el);
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* Writes value v's HLO name: r, or r#k for element k of a tuple-shaped instruction r. */
static int put_value(struct sh_translator *t, struct sh_buf *b, const struct sh_value *v)
{
    struct cursor *c = &t->c;
    int rc = sh_buf_add(t, b, c->s + v->off, v->len);
    if (rc == ERR_OK && v->tuple)
        rc = sh_buf_printf(t, b, "#%u", v->elem);
    return rc;
}

static int push_u32(struct sh_translator *t, struct vec *v, uint32_t x)
{
    return push(t, v, &x);
}

/*
 * Value v, defined outside the current region, becomes a parameter of every open region
 * between its definition and the current one (HLO computations read nothing from outside:
 * the op owning a region reads it as an operand and passes it in). The mark on the value
 * (cap_depth, cap_id) says which regions have it already: region d is marked when
 * d <= cap_depth and its id <= cap_id (opened before the mark, still open, so marked with
 * it; ids grow as regions open), so a use costs O(depth) at most and O(1) once marked.
 */
static int capture(struct sh_translator *t, uint32_t v)
{
    unsigned top = t->depth - 1;
    int rc;

    for (unsigned d = top; t->regions[d].id != value_at(t, v)->region && d > 0; d--) {
        struct sh_region *r = &t->regions[d];
        const struct sh_value *x = value_at(t, v);
        if (x->cap_id != 0 && d <= x->cap_depth && r->id <= x->cap_id)
            break;
        if ((rc = push_u32(t, &r->caps, v)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->params, "  ", 2)) != ERR_OK ||
            (rc = put_value(t, &r->params, x)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->params, " = ", 3)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->params, t->shapes.p + x->shape_off, x->shape_len)) != ERR_OK ||
            (rc = sh_buf_printf(t, &r->params, " parameter(%u)\n", r->nparams++)) != ERR_OK)
            return rc;
    }
    value_at(t, v)->cap_depth = top;
    value_at(t, v)->cap_id = t->regions[top].id;
    return ERR_OK;
}

/* A use %name or %name#k at the cursor, appended to *ops as an HLO operand (", " between);
 * a value from an enclosing region is captured (a parameter of this one). */
static int use(struct sh_translator *t, struct sh_buf *ops)
{
    struct cursor *c = &t->c;
    size_t line = c->line, col = cursor_col(c);
    uint32_t off, len, elem = 0, v = NAMES_NONE;
    int rc;

    c->i++; /* '%' */
    off = (uint32_t)c->i;
    len = (uint32_t)cursor_span(c, ident_ch);
    if (cursor_accept(c, '#')) {
        int64_t k;
        if (!cursor_uint(c, &k) || k >= SH_MAX_RESULTS)
            return cursor_fail_at(c->e, line, col, "expected a result number after '#'");
        elem = (uint32_t)k;
    }
    for (unsigned d = t->depth; d > 0 && len > 0 && v == NAMES_NONE; d--) /* innermost first */
        v = find_value(t, off, len, t->regions[d - 1].id, elem);
    if (v == NAMES_NONE)
        return cursor_fail_at(c->e, line, col, "%%%.*s is not defined before its use",
                              (int)(c->i - off > 200 ? 200 : c->i - off), c->s + off);
    if (value_at(t, v)->region != t->regions[t->depth - 1].id && (rc = capture(t, v)) != ERR_OK)
        return rc;
    if (ops->n > 0 && (rc = sh_buf_add(t, ops, ", ", 2)) != ERR_OK)
        return rc;
    return put_value(t, ops, value_at(t, v));
}

/* ---- statements -------------------------------------------------------------------- */

struct stmt {
    uint32_t res_off, res_len, nres; /* nres 0: no results */
    uint32_t op_off, op_len;
    size_t line, col;
};

/* The HLO opcode of an MLIR op name: after the dialect prefix, '_' written '-'. */
static int opcode(struct sh_translator *t, const struct stmt *st, struct sh_buf *b)
{
    struct cursor *c = &t->c;
    const char *p = c->s + st->op_off, *dot = NULL;
    for (uint32_t k = 0; k < st->op_len; k++)
        if (p[k] == '.')
            dot = p + k;
    const char *name = dot != NULL ? dot + 1 : p;
    size_t n = st->op_len - (size_t)(name - p);
    if (n == 20 && memcmp(name, "optimization_barrier", 20) == 0)
        return sh_buf_add(t, b, "tuple", 5); /* aliases its operands */
    for (size_t k = 0; k < n; k++) {
        int rc = sh_buf_add(t, b, name[k] == '_' ? "-" : name + k, 1);
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* Writes "  R" (the statement's result name) and then the given string. */
static int put_res(struct sh_translator *t, struct sh_buf *b, const struct stmt *st,
                   const char *then)
{
    struct cursor *c = &t->c;
    int rc = sh_buf_add(t, b, "  ", 2);
    if (rc == ERR_OK)
        rc = sh_buf_add(t, b, c->s + st->res_off, st->res_len);
    return rc == ERR_OK ? sh_buf_add(t, b, then, strlen(then)) : rc;
}

/* Emits the element reads R#k of a tuple-shaped instruction R of shape "(S, ...)". */
static int elements(struct sh_translator *t, const struct stmt *st, const char *shapes, uint32_t n)
{
    struct cursor *c = &t->c;
    const char *p = shapes != NULL ? shapes + 1 : "";
    for (uint32_t k = 0; k < n; k++) {
        size_t len;
        const char *e = next_elem(&p, &len);
        struct sh_buf *b = current_text(t);
        int rc;
        if ((rc = put_res(t, b, st, "")) != ERR_OK ||
            (rc = sh_buf_printf(t, b, "#%u = ", k)) != ERR_OK ||
            (rc = sh_buf_add(t, b, e, len)) != ERR_OK ||
            (rc = sh_buf_add(t, b, " get-tuple-element(", 19)) != ERR_OK ||
            (rc = sh_buf_add(t, b, c->s + st->res_off, st->res_len)) != ERR_OK ||
            (rc = sh_buf_printf(t, b, "), index=%u\n", k)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* What a generic op's text holds up to its end (a line end outside brackets and regions):
 * the operands read (appended to ops), the type part, the callee and the loc name. */
struct op_text {
    size_t types_at;              /* just past the type separator " :", 0 when none */
    size_t types_line, types_bol; /* its line, and where that begins */
    uint32_t callee_off, callee_len, loc_off, loc_len;
};

static int scan_op(struct sh_translator *t, const struct stmt *st, struct sh_buf *ops,
                   struct op_text *o)
{
    struct cursor *c = &t->c;
    int depth = 0, brace = 0, rc;

    memset(o, 0, sizeof(*o));
    while (c->i < c->len) { /* operands up to the type separator */
        char ch = c->s[c->i];
        if (ch == '\n' && depth == 0 && brace == 0)
            break;
        if (ch == '"') {
            for (c->i++; c->i < c->len && c->s[c->i] != '"' && c->s[c->i] != '\n'; c->i++)
                c->i += c->s[c->i] == '\\';
            if (cursor_peek(c) != '"') {
                return cursor_fail(c, "unterminated string");
            }
            c->i++;
            continue;
        }
        if (ch == '-' && c->i + 1 < c->len && c->s[c->i + 1] == '>') {
            c->i += 2;
            continue;
        }
        if (o->types_at == 0 && depth == 0 && brace == 0 && ch == ':' && c->i > 0 &&
            c->s[c->i - 1] == ' ') {
            o->types_at = c->i + 1;
            o->types_line = c->line;
            o->types_bol = c->bol;
        } else if (ch == '%' && brace == 0 && o->types_at == 0 && st->nres > 0) {
            if ((rc = use(t, ops)) != ERR_OK)
                return rc;
            continue;
        } else if (ch == '@' && o->callee_len == 0 && brace == 0) {
            c->i++;
            o->callee_off = (uint32_t)c->i;
            o->callee_len = (uint32_t)cursor_span(c, ident_ch);
            continue;
        } else if (depth == 0 && brace == 0 && cursor_starts(c, "loc(") && o->loc_len == 0) {
            sh_loc_name(t, c->i, &o->loc_off, &o->loc_len);
        }
        depth += ch == '(' || ch == '[' || ch == '<';
        depth -= (ch == ')' || ch == ']' || ch == '>') && depth > 0;
        brace += ch == '{';
        brace -= ch == '}' && brace > 0;
        cursor_next(c);
    }
    return ERR_OK;
}

static int generic(struct sh_translator *t, const struct stmt *st)
{
    struct cursor *c = &t->c;
    struct sh_buf ops = {0}, shape = {0}, code = {0};
    uint32_t ntypes = 0;
    struct op_text o;
    int rc;

    if ((rc = scan_op(t, st, &ops, &o)) != ERR_OK)
        goto out;
    if (st->nres == 0)
        goto out; /* no value defined: nothing to plan */
    if (o.types_at == 0) {
        rc = cursor_fail_at(c->e, st->line, st->col, "expected ': type' after the operation");
        goto out;
    }
    bool call = o.callee_len > 0 && (st->op_len == 4 || st->op_len == 9) &&
                memcmp(c->s + st->op_off + st->op_len - 4, "call", 4) == 0;
    {
        struct cursor end = *c; /* re-read the types from the separator, then back here */
        c->i = o.types_at;
        c->line = o.types_line;
        c->bol = o.types_bol;
        /* the result types follow the last "->" before the end of the type part */
        for (size_t q = o.types_at; q < end.i && c->s[q] != '\n'; q++)
            if (c->s[q] == '-' && q + 1 < c->len && c->s[q + 1] == '>')
                c->i = q + 2;
        rc = type_list(t, &shape, st->nres > 1 || call, &ntypes);
        *c = end;
        if (rc != ERR_OK)
            goto out;
    }
    if (ntypes != (st->nres > 1 ? st->nres : 1)) {
        rc = cursor_fail_at(c->e, st->line, st->col, "%u results but %u result types", st->nres,
                            ntypes);
        goto out;
    }
    if (call) {
        rc = sh_buf_add(t, &code, "call", 4);
    } else if (st->op_len >= 8 && memcmp(c->s + st->op_off + st->op_len - 8, "constant", 8) == 0) {
        rc = sh_buf_add(t, &code, "constant", 8);
        ops.n = 0;
        if (rc == ERR_OK)
            rc = sh_buf_add(t, &ops, "0", 1);
    } else {
        rc = opcode(t, st, &code);
    }
    if (rc != ERR_OK)
        goto out;
    struct sh_buf *b = current_text(t);
    if ((rc = put_res(t, b, st, " = ")) != ERR_OK || (rc = buf_str(t, b, shape.p)) != ERR_OK ||
        (rc = sh_buf_add(t, b, " ", 1)) != ERR_OK || (rc = buf_str(t, b, code.p)) != ERR_OK ||
        (rc = sh_buf_add(t, b, "(", 1)) != ERR_OK || (rc = buf_str(t, b, ops.p)) != ERR_OK ||
        (rc = sh_buf_add(t, b, ")", 1)) != ERR_OK)
        goto out;
    if (call && ((rc = sh_buf_add(t, b, ", to_apply=", 11)) != ERR_OK ||
                 (rc = sh_buf_add(t, b, c->s + o.callee_off, o.callee_len)) != ERR_OK))
        goto out;
    if ((rc = sh_put_op_name(t, b, o.loc_off, o.loc_len)) != ERR_OK ||
        (rc = sh_buf_add(t, b, "\n", 1)) != ERR_OK)
        goto out;
    if ((st->nres > 1 || call) && (rc = elements(t, st, shape.p, ntypes)) != ERR_OK)
        goto out;
    rc = define(t, st->res_off, st->res_len, st->nres > 1 || call, shape.p, ntypes);
out:
    free(ops.p);
    free(shape.p);
    free(code.p);
    return rc;
}

/*
 * return %a, %b : T, T  or  "stablehlo.return"(%a, %b) : (T, T) -> ()  as
 * ROOT #ret = (S, S) tuple(a, b): the region's results alias the values returned.
 */
static int terminator(struct sh_translator *t, const struct stmt *st)
{
    struct cursor *c = &t->c;
    struct sh_buf ops = {0}, shape = {0};
    uint32_t n = 0, nvals = 0;
    bool paren;
    int rc = ERR_OK;

    cursor_skip_blanks(c);
    paren = cursor_peek(c) == '(';
    if (paren)
        c->i++;
    for (;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '%')
            break;
        if ((rc = use(t, &ops)) != ERR_OK)
            goto out;
        nvals++;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != ',')
            break;
        c->i++;
    }
    if (paren) {
        if (cursor_peek(c) != ')') {
            rc = cursor_fail(c, "expected ')' after the returned values");
            goto out;
        }
        c->i++;
        cursor_skip_blanks(c);
    }
    if (cursor_peek(c) == ':') {
        c->i++;
        if ((rc = type_list(t, &shape, true, &n)) != ERR_OK)
            goto out;
    } else if ((rc = sh_buf_add(t, &shape, "()", 2)) != ERR_OK) {
        goto out;
    }
    if (n != nvals) {
        rc = cursor_fail_at(c->e, st->line, st->col, "the return has %u values but %u types", nvals,
                            n);
        goto out;
    }
    while (c->i < c->len && c->s[c->i] != '\n') /* "-> ()" of the generic form, loc(..) */
        c->i++;
    struct sh_buf *b = current_text(t);
    if ((rc = sh_buf_add(t, b, "  ROOT #ret = ", 14)) != ERR_OK ||
        (rc = buf_str(t, b, shape.p)) != ERR_OK ||
        (rc = sh_buf_add(t, b, " tuple(", 7)) != ERR_OK || (rc = buf_str(t, b, ops.p)) != ERR_OK)
        goto out;
    rc = sh_buf_add(t, b, ")\n", 2);
out:
    free(ops.p);
    free(shape.p);
    return rc;
}

static int statements(struct sh_translator *t);

/* Opens a region writing computation name (its parameters come as it captures values). */
static int open_region(struct sh_translator *t, const char *name)
{
    struct cursor *c = &t->c;
    struct sh_region *r;

    if (t->depth == SH_MAX_REGIONS)
        return cursor_fail(c, "regions nested more than %d deep", SH_MAX_REGIONS);
    r = &t->regions[t->depth++];
    free(r->text.p);
    free(r->params.p);
    vec_free(&r->caps);
    memset(r, 0, sizeof(*r));
    vec_init(&r->caps, sizeof(uint32_t), t->max_out); /* each writes a parameter line */
    r->id = ++t->next_region;
    snprintf(r->name, sizeof(r->name), "%s", name);
    return ERR_OK;
}

/* A while region's parameter 0, the loop state of tuple shape (S, ...), whose elements are
 * the SSA names args (n offset and length pairs). */
static int state_params(struct sh_translator *t, const char *shape, const uint32_t *args,
                        uint32_t n)
{
    struct cursor *c = &t->c;
    struct sh_region *r = &t->regions[t->depth - 1];
    const char *p;
    int rc;

    if (shape == NULL) /* while_head writes "(" at least: never, but not provably so */
        return cursor_fail(c, "the while's loop state has no type");
    p = shape + 1;
    if ((rc = sh_buf_add(t, &r->text, "  #param = ", 11)) != ERR_OK ||
        (rc = buf_str(t, &r->text, shape)) != ERR_OK ||
        (rc = sh_buf_add(t, &r->text, " parameter(0)\n", 14)) != ERR_OK)
        return rc;
    r->nparams = 1;
    for (uint32_t k = 0; k < n; k++) {
        size_t len;
        const char *e = next_elem(&p, &len);
        if ((rc = sh_buf_add(t, &r->text, "  ", 2)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->text, c->s + args[2 * k], args[2 * k + 1])) != ERR_OK ||
            (rc = sh_buf_add(t, &r->text, " = ", 3)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->text, e, len)) != ERR_OK ||
            (rc = sh_buf_printf(t, &r->text, " get-tuple-element(#param), index=%u\n", k)) !=
                ERR_OK ||
            (rc = define_one(t, args[2 * k], args[2 * k + 1], 0, false, e, len)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* Closes the current region: its computation (header, captured parameters, body) is
 * appended to the finished ones, and its captures to *caps (the owning op reads them). */
static int close_region(struct sh_translator *t, struct vec *caps)
{
    struct sh_region *r = &t->regions[t->depth - 1];
    const uint32_t *rcaps = r->caps.data;
    int rc = ERR_OK;

    for (size_t k = 0; k < r->caps.n && rc == ERR_OK; k++)
        rc = push_u32(t, caps, rcaps[k]);
    if (rc == ERR_OK && (rc = buf_str(t, &t->out, r->name)) == ERR_OK &&
        (rc = sh_buf_add(t, &t->out, " {\n", 3)) == ERR_OK &&
        (rc = sh_buf_add(t, &t->out, r->params.p, r->params.n)) == ERR_OK &&
        (rc = sh_buf_add(t, &t->out, r->text.p, r->text.n)) == ERR_OK)
        rc = sh_buf_add(t, &t->out, "}\n\n", 3);
    free(r->text.p);
    free(r->params.p);
    vec_free(&r->caps);
    memset(r, 0, sizeof(*r));
    t->depth--;
    return rc;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* The captured values an op's regions read, sorted by definition and without repeats,
 * written as its extra operands ", v, w". */
static int put_caps(struct sh_translator *t, struct sh_buf *b, uint32_t *caps, size_t n)
{
    if (n > 1)
        qsort(caps, n, sizeof(*caps), cmp_u32);
    for (size_t k = 0; k < n; k++) {
        int rc;
        if (k > 0 && caps[k] == caps[k - 1])
            continue;
        if ((rc = sh_buf_add(t, b, ", ", 2)) != ERR_OK ||
            (rc = put_value(t, b, value_at(t, caps[k]))) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* The computation name of an op's region: FUNC.R.KIND for an op of the function body;
 * FUNC.R.KIND.ID (the region's unique number) inside a region or for a long R, where
 * names of sibling regions repeat. */
static void region_name(const struct sh_translator *t, const struct stmt *st, const char *kind,
                        char *out, size_t cap)
{
    const struct cursor *c = &t->c;
    if (t->depth > 1 || st->res_len > 200)
        snprintf(out, cap, "%s.%.*s.%s.%u", t->fname, (int)(st->res_len > 200 ? 200 : st->res_len),
                 c->s + st->res_off, kind, t->next_region + 1);
    else
        snprintf(out, cap, "%s.%.*s.%s", t->fname, (int)st->res_len, c->s + st->res_off, kind);
}

/* A "%name" at the cursor, stepped past, as args' pair k (offset, length); what the error
 * says was expected when there is none or no room for it (k is SH_MAX_RESULTS). */
static int arg_name(struct cursor *c, uint32_t *args, uint32_t k, const char *what)
{
    if (cursor_peek(c) != '%' || k == SH_MAX_RESULTS)
        return cursor_fail(c, "expected %s", what);
    c->i++;
    args[2 * k] = (uint32_t)c->i;
    args[2 * k + 1] = (uint32_t)cursor_span(c, ident_ch);
    return ERR_OK;
}

/* The while's header "(%a = %x, ...) : T, ...": the loop variables' names (offset, length
 * pairs in args), their initial values (HLO operands in init) and the state's tuple shape. */
static int while_head(struct sh_translator *t, const struct stmt *st, uint32_t *args,
                      uint32_t *nargs, struct sh_buf *init, struct sh_buf *shape)
{
    struct cursor *c = &t->c;
    uint32_t ntypes = 0;
    int rc;

    c->i++; /* '(' */
    for (*nargs = 0;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) == ')')
            break;
        if ((rc = arg_name(c, args, *nargs, "%name = %value in the while's operands")) != ERR_OK)
            return rc;
        ++*nargs;
        if ((rc = sh_expect(c, '=', "'=' in the while's operands")) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '%')
            return cursor_fail(c, "expected the loop variable's initial value");
        if ((rc = use(t, init)) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        (void)cursor_accept(c, ',');
    }
    c->i++;
    if ((rc = sh_expect(c, ':', "': types' after the while's operands")) != ERR_OK)
        return rc;
    if ((rc = type_list(t, shape, true, &ntypes)) != ERR_OK)
        return rc;
    if (ntypes != *nargs || (st->nres > 1 ? st->nres : 1) != *nargs)
        return cursor_fail(c, "the while has %u loop variables, %u types and %u results", *nargs,
                           ntypes, st->nres);
    return ERR_OK;
}

/* The op owning regions, once they are closed: a while over its state (init operands ops),
 * or a conditional over ops (the index or predicate); caps are what the regions capture. */
struct owner {
    const char *kind;  /* "while", "case" or "if" */
    const char *shape; /* the result's tuple shape */
    uint32_t nres;
    const char *ops;     /* operands */
    struct sh_buf names; /* the regions' computations, ", " between */
    uint32_t nregions;
    struct vec caps; /* uint32_t: what the regions capture, repeats included */
    uint32_t loc_off, loc_len;
};

static int emit_owner(struct sh_translator *t, const struct stmt *st, struct owner *w)
{
    struct cursor *c = &t->c;
    struct sh_buf *b = current_text(t);
    bool loop = strcmp(w->kind, "while") == 0;
    int rc;

    if (loop &&
        ((rc = put_res(t, b, st, "#init = ")) != ERR_OK ||
         (rc = buf_str(t, b, w->shape)) != ERR_OK ||
         (rc = sh_buf_add(t, b, " tuple(", 7)) != ERR_OK ||
         (rc = buf_str(t, b, w->ops)) != ERR_OK || (rc = sh_buf_add(t, b, ")\n", 2)) != ERR_OK))
        return rc;
    if ((rc = put_res(t, b, st, " = ")) != ERR_OK || (rc = buf_str(t, b, w->shape)) != ERR_OK ||
        (rc = buf_str(t, b, loop ? " while(" : " conditional(")) != ERR_OK)
        return rc;
    if (loop && (rc = sh_buf_add(t, b, c->s + st->res_off, st->res_len)) == ERR_OK)
        rc = sh_buf_add(t, b, "#init", 5);
    else if (!loop)
        rc = buf_str(t, b, w->ops);
    if (rc != ERR_OK || (rc = put_caps(t, b, w->caps.data, w->caps.n)) != ERR_OK ||
        (rc = sh_buf_add(t, b, ")", 1)) != ERR_OK)
        return rc;
    /* the region names: "A, B" in w->names */
    const char *n0 = w->names.p, *comma = strchr(n0, ',');
    if (loop || strcmp(w->kind, "if") == 0) {
        if ((rc = buf_str(t, b, loop ? ", condition=" : ", true_computation=")) != ERR_OK ||
            (rc = sh_buf_add(t, b, n0, (size_t)(comma - n0))) != ERR_OK ||
            (rc = buf_str(t, b, loop ? ", body=" : ", false_computation=")) != ERR_OK ||
            (rc = buf_str(t, b, comma + 2)) != ERR_OK)
            return rc;
    } else if ((rc = sh_buf_add(t, b, ", branch_computations={", 23)) != ERR_OK ||
               (rc = buf_str(t, b, n0)) != ERR_OK || (rc = sh_buf_add(t, b, "}", 1)) != ERR_OK) {
        return rc;
    }
    if ((rc = sh_put_op_name(t, b, w->loc_off, w->loc_len)) != ERR_OK ||
        (rc = sh_buf_add(t, b, "\n", 1)) != ERR_OK ||
        (rc = elements(t, st, w->shape, w->nres)) != ERR_OK)
        return rc;
    return define(t, st->res_off, st->res_len, true, w->shape, w->nres);
}

/* The loc of the rest of the line (skipped) as the owner's op_name. */
static void owner_loc(struct sh_translator *t, struct owner *w)
{
    struct cursor *c = &t->c;
    size_t from = c->i;
    cursor_to_eol(c);
    sh_loc_in(t, from, c->i, &w->loc_off, &w->loc_len);
}

/* %r:N = stablehlo.while(%a = %x, ...) : T, ... cond { .. } do { .. } */
static int while_op(struct sh_translator *t, const struct stmt *st)
{
    struct cursor *c = &t->c;
    struct sh_buf init = {0}, shape = {0};
    struct owner w = {.kind = "while"};
    uint32_t *args = malloc(2 * SH_MAX_RESULTS * sizeof(*args)), nargs = 0;
    int rc;

    vec_init(&w.caps, sizeof(uint32_t), t->max_out);
    if (args == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory translating StableHLO");
    if ((rc = while_head(t, st, args, &nargs, &init, &shape)) != ERR_OK)
        goto out;
    owner_loc(t, &w);
    for (int part = 0; part < 2; part++) {
        char name[600];
        skip_nl(c);
        if (part == 1 && cursor_peek(c) == '}') { /* "} do {" */
            c->i++;
            cursor_skip_blanks(c);
        }
        if (!cursor_starts(c, part == 0 ? "cond" : "do")) {
            rc = cursor_fail(c, "expected the while's '%s' region", part == 0 ? "cond" : "do");
            goto out;
        }
        c->i += part == 0 ? 4 : 2;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '{') {
            rc = cursor_fail(c, "expected '{' to open the region");
            goto out;
        }
        c->i++;
        region_name(t, st, part == 0 ? "cond" : "body", name, sizeof(name));
        if ((rc = open_region(t, name)) != ERR_OK ||
            (rc = state_params(t, shape.p, args, nargs)) != ERR_OK ||
            (rc = statements(t)) != ERR_OK || (rc = close_region(t, &w.caps)) != ERR_OK ||
            (rc = sh_buf_printf(t, &w.names, "%s%s", part == 0 ? "" : ", ", name)) != ERR_OK)
            goto out;
    }
    if (cursor_peek(c) != '}') {
        rc = cursor_fail(c, "expected '}' to close the while's do region");
        goto out;
    }
    c->i++;
    w.shape = shape.p;
    w.nres = nargs;
    w.ops = init.p != NULL ? init.p : "";
    rc = emit_owner(t, st, &w);
out:
    free(args);
    free(init.p);
    free(shape.p);
    free(w.names.p);
    vec_free(&w.caps);
    return rc;
}

/* Skips a balanced (..), [..], <..> or {..} group at the cursor (strings inside). */
static int skip_group(struct cursor *c)
{
    unsigned depth = 0;
    while (c->i < c->len) {
        char ch = c->s[c->i];
        if (ch == '"') {
            for (c->i++; c->i < c->len && c->s[c->i] != '"' && c->s[c->i] != '\n'; c->i++)
                c->i += c->s[c->i] == '\\';
            if (c->i >= c->len)
                break;
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

/* A block's arguments "^bb0(%x: T, %y: T):" at the cursor: their names (offset, length
 * pairs in args) and their tuple shape "(S, S)". */
static int block_args(struct sh_translator *t, uint32_t *args, uint32_t *nargs,
                      struct sh_buf *shape)
{
    struct cursor *c = &t->c;
    int rc;

    c->i++; /* '^' */
    (void)cursor_span(c, ident_ch);
    *nargs = 0;
    if ((rc = sh_buf_add(t, shape, "(", 1)) != ERR_OK)
        return rc;
    if (cursor_peek(c) == '(') {
        c->i++;
        for (;;) {
            skip_nl(c);
            if (cursor_peek(c) == ')')
                break;
            if ((rc = arg_name(c, args, *nargs, "a block argument %name: type")) != ERR_OK)
                return rc;
            if ((rc = sh_expect(c, ':', "':' after the block argument")) != ERR_OK)
                return rc;
            if ((*nargs > 0 && (rc = sh_buf_add(t, shape, ", ", 2)) != ERR_OK) ||
                (rc = type_at(t, shape)) != ERR_OK)
                return rc;
            ++*nargs;
            cursor_skip_blanks(c);
            if (cursor_starts(c, "loc(") && (c->i += 3, rc = skip_group(c)) != ERR_OK)
                return rc;
            cursor_skip_blanks(c);
            (void)cursor_accept(c, ',');
        }
        c->i++;
    }
    if ((rc = sh_expect(c, ':', "':' after the block's arguments")) != ERR_OK)
        return rc;
    return sh_buf_add(t, shape, ")", 1);
}

/* The type signature after the regions: ": (T) -> (T, T)", ": (T) -> T" or ": T, T"; the
 * results as a tuple shape. */
static int result_types(struct sh_translator *t, struct sh_buf *shape, uint32_t *n)
{
    struct cursor *c = &t->c;
    struct sh_buf first = {0};
    int rc;

    if ((rc = sh_expect(c, ':', "': types' after the regions")) != ERR_OK)
        return rc;
    if ((rc = type_list(t, &first, true, n)) != ERR_OK)
        goto out;
    cursor_skip_blanks(c);
    if (cursor_starts(c, "->")) {
        c->i += 2;
        rc = type_list(t, shape, true, n);
    } else {
        rc = sh_buf_add(t, shape, first.p, first.n);
    }
out:
    free(first.p);
    return rc;
}

/* The operands of a region op, "(%a, %b)" or "%p", as HLO operands in ops; *n of them. */
static int region_operands(struct sh_translator *t, struct sh_buf *ops, uint32_t *n)
{
    struct cursor *c = &t->c;
    bool paren;
    int rc;

    cursor_skip_blanks(c);
    paren = cursor_accept(c, '(');
    for (*n = 0;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '%')
            break;
        if (*n == SH_MAX_RESULTS)
            return cursor_fail(c, "more than %d operands", SH_MAX_RESULTS);
        if ((rc = use(t, ops)) != ERR_OK)
            return rc;
        ++*n;
        cursor_skip_blanks(c);
        if (!cursor_accept(c, ','))
            break;
    }
    if (paren && !cursor_accept(c, ')'))
        return cursor_fail(c, "expected ')' after the operands");
    cursor_skip_blanks(c);
    return ERR_OK;
}

/* What a while's regions share: their block arguments' names (offset, length pairs) and
 * the loop state's tuple shape, which every region must take alike. */
struct loop_args {
    uint32_t *args, nargs;
    struct sh_buf state;
};

/* A region's block arguments "^bb0(%x: T, ..):" at the cursor, as the loop state's
 * parameters: only a while's regions take them. */
static int region_args(struct sh_translator *t, const struct owner *w, struct loop_args *la)
{
    struct cursor *c = &t->c;
    bool loop = strcmp(w->kind, "while") == 0;
    struct sh_buf sh = {0};
    int rc;

    if (loop && cursor_peek(c) != '^')
        return cursor_fail(c, "expected the while region's arguments ^bb0(%%x: type, ..):");
    if (cursor_peek(c) != '^')
        return ERR_OK;
    if (!loop)
        return cursor_fail(c, "a %s's branch takes no arguments", w->kind);
    rc = block_args(t, la->args, &la->nargs, &sh);
    if (rc == ERR_OK && w->nregions == 0) {
        la->state = sh;
        sh = (struct sh_buf){0};
    } else if (rc == ERR_OK && (la->state.p == NULL || strcmp(sh.p, la->state.p) != 0)) {
        rc = cursor_fail(c, "the while's regions take different arguments");
    }
    free(sh.p);
    return rc != ERR_OK ? rc : state_params(t, la->state.p, la->args, la->nargs);
}

/* One region "{ .. }" of a region op, the owner's region number w->nregions: its
 * computation (cond/body, true/false or branchN) opened, translated and closed. */
static int one_region(struct sh_translator *t, const struct stmt *st, struct owner *w,
                      struct loop_args *la)
{
    struct cursor *c = &t->c;
    char name[600], what[32];
    int rc;

    skip_nl(c);
    if (!cursor_accept(c, '{'))
        return cursor_fail(c, "expected '{' to open a region");
    if (strcmp(w->kind, "while") == 0)
        snprintf(what, sizeof(what), "%s", w->nregions == 0 ? "cond" : "body");
    else if (strcmp(w->kind, "if") == 0)
        snprintf(what, sizeof(what), "%s", w->nregions == 0 ? "true" : "false");
    else
        snprintf(what, sizeof(what), "branch%u", w->nregions);
    region_name(t, st, what, name, sizeof(name));
    if ((rc = open_region(t, name)) != ERR_OK)
        return rc;
    skip_nl(c);
    if ((rc = region_args(t, w, la)) != ERR_OK || (rc = statements(t)) != ERR_OK)
        return rc;
    c->i++; /* '}' */
    if ((rc = close_region(t, &w->caps)) != ERR_OK ||
        (rc = sh_buf_printf(t, &w->names, "%s%s", w->nregions == 0 ? "" : ", ", name)) != ERR_OK)
        return rc;
    w->nregions++;
    return ERR_OK;
}

/*
 * The generic forms
 *   %r:N = "stablehlo.while"(%a, %b) ({ ^bb0(%x: T, %y: T): .. }, { ^bb0(..): .. }) : ..
 *   %r:N = "stablehlo.case"(%i) ({ .. }, { .. }, ..) : (tensor<i32>) -> (T, T)
 *   %r:N = "stablehlo.if"(%p) ({ .. }, { .. }) : (tensor<i1>) -> (T, T)
 * and the pretty stablehlo.case(%i) ({ .. }) : T / stablehlo.if %p ({ .. }, { .. }) : T:
 * an HLO while over its loop state, or an HLO conditional whose branches are the regions.
 */
static int region_op(struct sh_translator *t, const struct stmt *st, const char *kind)
{
    struct cursor *c = &t->c;
    struct sh_buf ops = {0}, res = {0};
    struct owner w = {.kind = kind};
    struct loop_args la = {.args = malloc(2 * SH_MAX_RESULTS * sizeof(*la.args))};
    uint32_t nops = 0, ntypes = 0;
    bool loop = strcmp(kind, "while") == 0;
    int rc = ERR_OK;

    vec_init(&w.caps, sizeof(uint32_t), t->max_out);
    if (la.args == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory translating StableHLO");
    if ((rc = region_operands(t, &ops, &nops)) != ERR_OK)
        goto out;
    if (!loop && nops != 1) {
        rc = cursor_fail_at(c->e, st->line, st->col, "a %s takes one operand, not %u", kind, nops);
        goto out;
    }
    if (!cursor_accept(c, '(')) {
        rc = cursor_fail(c, "expected '(' before the %s's regions", kind);
        goto out;
    }
    for (;;) {
        if ((rc = one_region(t, st, &w, &la)) != ERR_OK)
            goto out;
        skip_nl(c);
        if (cursor_accept(c, ','))
            continue;
        if (!cursor_accept(c, ')')) {
            rc = cursor_fail(c, "expected ',' or ')' after a region");
            goto out;
        }
        break;
    }
    cursor_skip_blanks(c);
    if (cursor_peek(c) == '{' && (rc = skip_group(c)) != ERR_OK) /* attributes */
        goto out;
    if ((rc = result_types(t, &res, &ntypes)) != ERR_OK)
        goto out;
    owner_loc(t, &w);
    if ((loop || strcmp(kind, "if") == 0) && w.nregions != 2) {
        rc =
            cursor_fail_at(c->e, st->line, st->col, "a %s has 2 regions, not %u", kind, w.nregions);
        goto out;
    }
    if (ntypes != st->nres || (loop && (la.nargs != nops || la.nargs != ntypes))) {
        rc = cursor_fail_at(c->e, st->line, st->col, "the %s has %u results but %u result types%s",
                            kind, st->nres, ntypes,
                            loop ? " (and as many operands and region arguments)" : "");
        goto out;
    }
    w.shape = loop ? la.state.p : res.p;
    w.nres = ntypes;
    w.ops = ops.p != NULL ? ops.p : "";
    rc = emit_owner(t, st, &w);
out:
    free(la.args);
    free(la.state.p);
    free(ops.p);
    free(res.p);
    free(w.names.p);
    vec_free(&w.caps);
    return rc;
}

/* The op name's last part: stablehlo.while -> while. */
static bool op_is(const struct sh_translator *t, const struct stmt *st, const char *name)
{
    const struct cursor *c = &t->c;
    size_t n = strlen(name);
    return st->op_len >= n && memcmp(c->s + st->op_off + st->op_len - n, name, n) == 0 &&
           (st->op_len == n || c->s[st->op_off + st->op_len - n - 1] == '.');
}

/* One statement of a region. */
static int statement(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    struct stmt st = {0};
    bool quoted = false;
    int rc;

    st.line = t->at_line = c->line;
    st.col = t->at_col = cursor_col(c);
    if (cursor_peek(c) == '%') {
        c->i++;
        st.res_off = (uint32_t)c->i;
        st.res_len = (uint32_t)cursor_span(c, ident_ch);
        st.nres = 1;
        if (cursor_peek(c) == ':') {
            int64_t n;
            c->i++;
            if (!cursor_uint(c, &n) || n < 1 || n > SH_MAX_RESULTS)
                return cursor_fail(c, "expected a result count after ':'");
            st.nres = (uint32_t)n;
        }
        if ((rc = sh_expect(c, '=', "'=' after the results (one %name or %name:N)")) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
    }
    if (cursor_peek(c) == '"') {
        c->i++;
        st.op_off = (uint32_t)c->i;
        st.op_len = (uint32_t)cursor_span(c, ident_ch);
        if (!cursor_accept(c, '"'))
            return cursor_fail(c, "expected '\"' after the operation name");
        quoted = true;
    } else {
        st.op_off = (uint32_t)c->i;
        st.op_len = (uint32_t)cursor_span(c, ident_ch);
    }
    if (st.op_len == 0)
        return cursor_fail(c, "expected an operation");
    if (op_is(t, &st, "return") && st.nres == 0)
        return terminator(t, &st);
    cursor_skip_blanks(c);
    if (st.nres > 0 && op_is(t, &st, "while") && cursor_peek(c) == '(')
        return quoted ? region_op(t, &st, "while") : while_op(t, &st);
    if (st.nres > 0 && op_is(t, &st, "case"))
        return region_op(t, &st, "case");
    if (st.nres > 0 && op_is(t, &st, "if"))
        return region_op(t, &st, "if");
    return generic(t, &st);
}

/* Statements up to the region's closing '}' (left at the cursor). */
static int statements(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    for (;;) {
        int rc;
        skip_nl(c);
        if (cursor_peek(c) == '}' || cursor_peek(c) == '\0')
            return cursor_peek(c) == '}' ? ERR_OK
                                         : cursor_fail(c, "expected '}' to close the region");
        if ((rc = statement(t)) != ERR_OK)
            return rc;
    }
}

/* ---- functions and the module ------------------------------------------------------ */

/* One argument's attributes: mhlo.sharding and tf.aliasing_output. */
static int arg_attrs(struct sh_translator *t, uint32_t arg, uint32_t rank, struct sh_buf *sharding)
{
    struct cursor *c = &t->c;
    size_t end = c->i;
    unsigned d = 0;
    for (; end < c->len && c->s[end] != '\n'; end++) {
        if (c->s[end] == '"')
            for (end++; end < c->len && c->s[end] != '"' && c->s[end] != '\n'; end++)
                end += c->s[end] == '\\';
        if (end >= c->len)
            break;
        d += c->s[end] == '{';
        if (c->s[end] == '}' && --d == 0)
            break;
    }
    for (size_t q = c->i; q < end; q++) {
        static const char sh[] = "mhlo.sharding = \"",
                          al[] = "tf.aliasing_output = ", sdy[] = "sdy.sharding = #sdy.sharding";
        if (end - q > sizeof(sh) && memcmp(c->s + q, sh, sizeof(sh) - 1) == 0) {
            size_t v = q + sizeof(sh) - 1, n = 0;
            while (v + n < end && c->s[v + n] != '"')
                n++;
            int rc = sh_buf_add(t, sharding, ", sharding=", 11);
            if (rc != ERR_OK || (rc = sh_buf_add(t, sharding, c->s + v, n)) != ERR_OK)
                return rc;
        } else if (end - q > sizeof(sdy) && memcmp(c->s + q, sdy, sizeof(sdy) - 1) == 0) {
            size_t at = c->i;
            c->i = q + sizeof(sdy) - 1; /* on this line: errors name its column */
            int rc = sh_sdy_sharding(t, rank, sharding);
            q = c->i - 1;
            c->i = at;
            if (rc != ERR_OK)
                return rc;
        } else if (end - q > sizeof(al) && memcmp(c->s + q, al, sizeof(al) - 1) == 0) {
            size_t at = q + sizeof(al) - 1;
            int64_t o = 0;
            if (!text_uint(c->s, end, &at, &o))
                return cursor_fail(c, "expected an output number after tf.aliasing_output");
            int rc = sh_buf_printf(t, &t->aliases, "%s{%lld}: (%u, {}, may-alias)",
                                   t->aliases.n > 0 ? ", " : "", (long long)o, arg);
            if (rc != ERR_OK)
                return rc;
        }
    }
    c->i = end + (end < c->len);
    return ERR_OK;
}

/* The rank of an array shape "T[a,b]" (0 for "T[]"). */
static uint32_t rank_of(const char *shape)
{
    const char *p = shape != NULL ? strchr(shape, '[') : NULL;
    uint32_t n = 0;
    if (p == NULL || p[1] == ']')
        return 0;
    for (n = 1; *p != '\0'; p++)
        n += *p == ',';
    return n;
}

/* "  NAME = SHAPE parameter(N)[, sharding=..][, metadata={op_name=..}]" for an argument. */
static int param_line(struct sh_translator *t, struct sh_buf *b, uint32_t off, uint32_t len,
                      const char *shape, uint32_t n, const char *sharding, uint32_t loc_off,
                      uint32_t loc_len)
{
    struct cursor *c = &t->c;
    int rc;
    if ((rc = sh_buf_add(t, b, "  ", 2)) != ERR_OK ||
        (rc = sh_buf_add(t, b, c->s + off, len)) != ERR_OK ||
        (rc = sh_buf_add(t, b, " = ", 3)) != ERR_OK || (rc = buf_str(t, b, shape)) != ERR_OK ||
        (rc = sh_buf_printf(t, b, " parameter(%u)", n)) != ERR_OK ||
        (rc = buf_str(t, b, sharding)) != ERR_OK ||
        (rc = sh_put_op_name(t, b, loc_off, loc_len)) != ERR_OK)
        return rc;
    return sh_buf_add(t, b, "\n", 1);
}

/* A function definition, func.func [public|private|nested] @NAME(%ARG: T {ATTRS} loc(..),
 * ..) -> RESULTS {BODY}, as one HLO computation: the entry one when NAME is the entry
 * function (pick_entry), else appended to the finished ones. */
static int function_def(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    uint32_t narg = 0;
    size_t name_off, name_len;
    int rc = ERR_OK;

    c->i += 9; /* func.func */
    cursor_skip_blanks(c);
    if (cursor_starts(c, "public") || cursor_starts(c, "private") || cursor_starts(c, "nested")) {
        (void)cursor_span(c, ident_ch);
        cursor_skip_blanks(c);
    }
    if (!cursor_accept(c, '@'))
        return cursor_fail(c, "expected @name after func.func");
    name_off = c->i;
    name_len = cursor_span(c, ident_ch);
    if (name_len == 0 || name_len >= sizeof(t->fname))
        return cursor_fail(c, "expected a function name");
    snprintf(t->fname, sizeof(t->fname), "%.*s", (int)name_len, c->s + name_off);
    t->depth = 0;
    struct sh_region *r = &t->regions[t->depth++];
    memset(r, 0, sizeof(*r));
    r->id = ++t->next_region;
    if (!cursor_accept(c, '('))
        return cursor_fail(c, "expected '(' after the function name");
    if ((rc = sh_buf_printf(t, &r->text, "%s {\n", t->fname)) != ERR_OK)
        goto out;
    for (;;) {
        struct sh_buf shape = {0}, sharding = {0};
        uint32_t off, len, loc_off = 0, loc_len = 0;
        skip_nl(c);
        if (cursor_peek(c) == ')')
            break;
        if (cursor_peek(c) != '%') {
            rc = cursor_fail(c, "expected an argument %%name");
            goto out;
        }
        t->at_line = c->line;
        t->at_col = cursor_col(c);
        c->i++;
        off = (uint32_t)c->i;
        len = (uint32_t)cursor_span(c, ident_ch);
        cursor_skip_blanks(c);
        if (cursor_peek(c) != ':') {
            rc = cursor_fail(c, "expected ':' after the argument name");
            goto out;
        }
        c->i++;
        cursor_skip_blanks(c);
        if ((rc = type_at(t, &shape)) == ERR_OK && (cursor_skip_blanks(c), cursor_peek(c) == '{'))
            rc = arg_attrs(t, narg, rank_of(shape.p), &sharding);
        if (rc == ERR_OK &&
            (cursor_skip_blanks(c), cursor_starts(c, "loc("))) { /* its name: the op_name */
            sh_loc_name(t, c->i, &loc_off, &loc_len);
            c->i += 3;
            rc = skip_group(c);
        }
        if (rc == ERR_OK)
            rc = param_line(t, &r->text, off, len, shape.p, narg, sharding.p, loc_off, loc_len);
        free(sharding.p);
        if (rc == ERR_OK)
            rc = define(t, off, len, false, shape.p, 1);
        free(shape.p);
        if (rc != ERR_OK)
            goto out;
        narg++;
        cursor_skip_blanks(c);
        (void)cursor_accept(c, ',');
    }
    /* "-> results attributes {...} {": the body opens with the last '{' of the line */
    size_t open = 0;
    for (; c->i < c->len && c->s[c->i] != '\n'; c->i++)
        if (c->s[c->i] == '{')
            open = c->i;
    if (open == 0) {
        rc = cursor_fail(c, "expected '{' to open the function body");
        goto out;
    }
    if ((rc = statements(t)) != ERR_OK)
        goto out;
    c->i++; /* '}' */
    rc = sh_buf_add(t, &r->text, "}\n\n", 3);
    if (rc == ERR_OK && strcmp(t->fname, t->entry_name) == 0) {
        free(t->entry.p);
        t->entry = r->text;
        r->text = (struct sh_buf){0};
    } else if (rc == ERR_OK) {
        rc = sh_buf_add(t, &t->out, r->text.p, r->text.n);
    }
out:
    free(r->text.p);
    r->text = (struct sh_buf){0};
    t->depth = 0;
    return rc;
}

/* Skips blank, comment and #loc lines. */
static void skip_preamble(struct cursor *c)
{
    for (;;) {
        cursor_skip_space(c);
        if (cursor_peek(c) != '#' && !cursor_starts(c, "//"))
            return;
        cursor_to_eol(c);
    }
}

bool stablehlo_detect(const char *s, size_t len)
{
    struct cursor c = cursor_make(s, len, NULL);
    skip_preamble(&c);
    return cursor_starts(&c, "module ") || cursor_starts(&c, "module{") ||
           cursor_starts(&c, "func.func ");
}

/* The entry function: @main, else the first public one, else the first. */
static void pick_entry(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    static const char key[] = "func.func ";
    bool pub_found = false;

    t->entry_name[0] = '\0';
    for (size_t q = 0; q + sizeof(key) < c->len; q++) {
        if (memcmp(c->s + q, key, sizeof(key) - 1) != 0 ||
            (q > 0 && c->s[q - 1] != ' ' && c->s[q - 1] != '\n'))
            continue;
        size_t p = q + sizeof(key) - 1, n = 0;
        bool pub = c->len - p > 7 && memcmp(c->s + p, "public ", 7) == 0;
        while (p < c->len && c->s[p] != '@' && c->s[p] != '\n')
            p++;
        if (p >= c->len || c->s[p] != '@')
            continue;
        while (p + 1 + n < c->len && ident_ch(c->s[p + 1 + n]))
            n++;
        if (n == 0 || n >= sizeof(t->entry_name))
            continue;
        if ((n == 4 && memcmp(c->s + p + 1, "main", 4) == 0) || t->entry_name[0] == '\0' ||
            (pub && !pub_found)) {
            snprintf(t->entry_name, sizeof(t->entry_name), "%.*s", (int)n, c->s + p + 1);
            pub_found |= pub;
            if (strcmp(t->entry_name, "main") == 0)
                return;
        }
    }
}

static int module(struct sh_translator *t, char *name, size_t cap)
{
    struct cursor *c = &t->c;
    int rc;

    pick_entry(t);
    skip_preamble(c);
    snprintf(name, cap, "module");
    if (cursor_starts(c, "module")) {
        c->i += 6;
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '@') {
            size_t off = ++c->i, n = cursor_span(c, ident_ch);
            snprintf(name, cap, "%.*s", (int)(n < cap - 1 ? n : cap - 1), c->s + off);
        }
        while (c->i < c->len && c->s[c->i] != '\n') /* attributes {...} { */
            c->i++;
    }
    for (;;) {
        skip_nl(c);
        if (c->i >= c->len || cursor_peek(c) == '}')
            break;
        if (cursor_starts(c, "func.func ")) {
            if ((rc = function_def(t)) != ERR_OK)
                return rc;
        } else if (cursor_starts(c, "sdy.mesh ")) {
            if ((rc = sh_sdy_mesh_def(t)) != ERR_OK)
                return rc;
        } else { /* other module-level ops */
            cursor_to_eol(c);
        }
    }
    if (t->entry.n == 0)
        return cursor_fail(c, "expected a func.func in the module");
    return ERR_OK;
}

int stablehlo_to_hlo(const char *s, size_t len, char **out, size_t *out_len, struct err *e)
{
    struct sh_translator t = {.c = cursor_make(s, len, e)};
    char name[256];
    struct sh_buf all = {0};
    int rc;

    *out = NULL;
    *out_len = 0;
    if (len > UINT32_MAX / 16)
        return err_set(e, ERR_LIMIT, "", "StableHLO text of %zu bytes is too large", len);
    t.max_out = 8 * len + 65536;
    /* Every value defined writes its instruction (at least a line) to the output, and a mesh
     * definition takes more than ten bytes of the text. */
    vec_init(&t.values, sizeof(struct sh_value), t.max_out);
    vec_init(&t.meshes, sizeof(struct sdy_mesh), len);
    if ((rc = names_init(&t.names, 512, value_name, &t)) != ERR_OK)
        return err_set(e, rc, "", "out of memory translating StableHLO");
    if ((rc = sh_loc_table(&t)) != ERR_OK || (rc = module(&t, name, sizeof(name))) != ERR_OK)
        goto out;
    if ((rc = sh_buf_printf(&t, &all, "HloModule %s", name)) != ERR_OK ||
        (t.aliases.n > 0 &&
         (rc = sh_buf_printf(&t, &all, ", input_output_alias={ %s }", t.aliases.p)) != ERR_OK) ||
        (rc = sh_buf_add(&t, &all, "\n\n", 2)) != ERR_OK ||
        (t.out.n > 0 && (rc = sh_buf_add(&t, &all, t.out.p, t.out.n)) != ERR_OK) ||
        (rc = sh_buf_add(&t, &all, "ENTRY ", 6)) != ERR_OK ||
        (rc = sh_buf_add(&t, &all, t.entry.p, t.entry.n)) != ERR_OK)
        goto out;
    *out = all.p;
    *out_len = all.n;
    all.p = NULL;
out:
    for (unsigned d = 0; d < SH_MAX_REGIONS; d++) {
        free(t.regions[d].text.p);
        free(t.regions[d].params.p);
        vec_free(&t.regions[d].caps);
    }
    free(t.shapes.p);
    free(t.locs);
    names_free(&t.loc_names);
    vec_free(&t.meshes);
    free(all.p);
    free(t.out.p);
    free(t.entry.p);
    free(t.aliases.p);
    vec_free(&t.values);
    names_free(&t.names);
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
