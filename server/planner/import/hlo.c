/*
 * hlo.c - the HLO text parser (see hlo.h): one cursor over the text, one function per
 * grammar rule, every array a vec (base/vec.h) bounded by what the input size and the
 * caller's instruction limit imply, handed to the module once the parse succeeds.
 */
#include "planner/hlo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/cursor.h"
#include "planner/base/vec.h"
#include "planner/base/names.h"
#include "planner/text.h"

/* A reference to a called computation, resolved once every computation is known. */
struct pending_call {
    uint32_t slot; /* position in the operand and callee index list (idx) */
    struct hlo_span name;
    uint32_t line, col;
};

struct parser {
    struct cursor c; /* over the whole text; its errors into the caller's err */
    struct hlo_module *m;
    size_t max_instrs;
    struct names names; /* (computation, name) -> instruction index */
    uint32_t comp;      /* the computation being parsed */
    /* The module's arrays while they grow (hlo_parse hands them to it): struct hlo_comp,
     * struct hlo_instr, struct hlo_leaf, uint32_t operand and callee indices, struct
     * hlo_alias; and the callee references to resolve, struct pending_call. */
    struct vec comps, instrs, leaves, idx, aliases, calls;
};

static struct hlo_comp *comp_at(const struct parser *p, size_t k)
{
    return vec_at(&p->comps, k);
}

static struct hlo_instr *instr_at(const struct parser *p, size_t k)
{
    return vec_at(&p->instrs, k);
}

/* "expected WHAT, found X" at the cursor. */
static int expected(const struct cursor *c, const char *what)
{
    char got[24];
    if (c->i >= c->len)
        snprintf(got, sizeof(got), "the end of the input");
    else if (c->s[c->i] == '\n')
        snprintf(got, sizeof(got), "the end of the line");
    else
        snprintf(got, sizeof(got), "'%c'", c->s[c->i] >= 32 && c->s[c->i] < 127 ? c->s[c->i] : '?');
    return cursor_fail(c, "expected %s, found %s", what, got);
}

/* Skips blanks and C comments on the current line (comments may not span lines). */
static void skip_ws(struct cursor *c)
{
    for (;;) {
        cursor_skip_blanks(c);
        if (!cursor_starts(c, "/*"))
            return;
        const char *end = NULL;
        for (size_t k = c->i + 2; k + 1 < c->len && c->s[k] != '\n'; k++)
            if (c->s[k] == '*' && c->s[k + 1] == '/') {
                end = c->s + k + 2;
                break;
            }
        if (end == NULL)
            return; /* left for the caller's "expected" */
        c->i = (size_t)(end - c->s);
    }
}

/* Skips blanks, comments and line ends. */
static void skip_nl(struct cursor *c)
{
    for (;;) {
        skip_ws(c);
        if (cursor_peek(c) != '\n')
            return;
        cursor_next(c);
    }
}

static bool is_name_ch(char ch)
{
    /* XLA's names; '#' and '$' also appear in names translated from StableHLO */
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '-' || ch == '#' || ch == '$';
}

/* A bare word at the cursor (no '%'), possibly empty. */
static struct hlo_span word(struct cursor *c)
{
    struct hlo_span sp = {(uint32_t)c->i, 0};
    sp.len = (uint32_t)cursor_span(c, is_name_ch);
    return sp;
}

static bool span_eq(const char *s, struct hlo_span sp, const char *w)
{
    size_t n = strlen(w);
    return sp.len == n && memcmp(s + sp.off, w, n) == 0;
}

bool hlo_span_is(const struct hlo_module *m, struct hlo_span sp, const char *w)
{
    return span_eq(m->text, sp, w);
}

/* [%]name */
static int name(struct cursor *c, struct hlo_span *out, const char *what)
{
    cursor_accept(c, '%');
    *out = word(c);
    return out->len > 0 ? ERR_OK : expected(c, what);
}

static int expect(struct cursor *c, char ch, const char *what)
{
    skip_ws(c);
    return cursor_accept(c, ch) ? ERR_OK : expected(c, what);
}

/* After an item of a "(a, b, ...)" list: a ')' ends the list (*end true), a ',' leads to the
 * next item, anything else is expected(what). */
static int list_next(struct cursor *c, bool *end, const char *what)
{
    skip_ws(c);
    *end = cursor_accept(c, ')');
    return *end || cursor_accept(c, ',') ? ERR_OK : expected(c, what);
}

/* The next ", key = value" of an attribute list: its key in *key, the cursor at the value;
 * key->len 0 when no ',' follows (the list's end). */
static int attr_key(struct cursor *c, struct hlo_span *key)
{
    int rc;

    skip_ws(c);
    if (!cursor_accept(c, ',')) {
        key->len = 0;
        return ERR_OK;
    }
    skip_ws(c);
    *key = word(c);
    if (key->len == 0)
        return expected(c, "an attribute name");
    if ((rc = expect(c, '=', "'=' after the attribute name")) != ERR_OK)
        return rc;
    skip_ws(c);
    return ERR_OK;
}

/* ---- growth ------------------------------------------------------------------------ */

/* A vec_reserve or vec_push failure (rc) of one of the module's arrays as its error. */
static int grow_err(struct parser *p, int rc)
{
    return err_set(p->c.e, rc, "",
                   rc == ERR_LIMIT ? "HLO module too large" : "out of memory parsing HLO");
}

/* Appends x to one of the module's arrays. */
static int push(struct parser *p, struct vec *v, const void *x)
{
    int rc = vec_push(v, x);
    return rc == ERR_OK ? ERR_OK : grow_err(p, rc);
}

static int push_idx(struct parser *p, uint32_t v)
{
    return push(p, &p->idx, &v);
}

/* ---- shapes ------------------------------------------------------------------------ */

/* Scans a bracketed run opening at the cursor up to its matching closer, with quoted
 * strings, to at most HLO_MAX_DEPTH levels. stop_at_comma: at depth 0 also stop (without
 * consuming) at ',' or a line end; the cursor need not be at an opener then. */
static int scan_balanced(struct cursor *c, bool stop_at_comma)
{
    char closers[HLO_MAX_DEPTH];
    unsigned depth = 0;

    while (c->i < c->len) {
        char ch = c->s[c->i];
        if (depth == 0 && stop_at_comma && (ch == ',' || ch == '\n'))
            return ERR_OK;
        if (ch == '"') {
            size_t l = c->line, col = cursor_col(c);
            for (c->i++; c->i < c->len && c->s[c->i] != '"'; c->i++) {
                if (c->s[c->i] == '\n')
                    return cursor_fail_at(c->e, l, col, "unterminated string");
                if (c->s[c->i] == '\\')
                    c->i++;
            }
            if (c->i >= c->len)
                return cursor_fail_at(c->e, l, col, "unterminated string");
            c->i++;
            continue;
        }
        if (ch == '(' || ch == '{' || ch == '[') {
            if (depth == HLO_MAX_DEPTH)
                return err_set(c->e, ERR_LIMIT, "", "line %zu:%zu: more than %d nested brackets",
                               c->line, cursor_col(c), HLO_MAX_DEPTH);
            closers[depth++] = ch == '(' ? ')' : ch == '{' ? '}' : ']';
        } else if (ch == ')' || ch == '}' || ch == ']') {
            if (depth == 0) {
                if (stop_at_comma)
                    return ERR_OK;
                return expected(c, "an opening bracket");
            }
            if (ch != closers[depth - 1]) {
                char what[24];
                snprintf(what, sizeof(what), "'%c'", closers[depth - 1]);
                return expected(c, what);
            }
            if (--depth == 0 && !stop_at_comma) {
                c->i++;
                return ERR_OK;
            }
        } else if (ch == '\n') {
            cursor_next(c);
            continue;
        }
        c->i++;
    }
    if (depth > 0 || !stop_at_comma) {
        char what[24];
        snprintf(what, sizeof(what), "'%c'", depth > 0 ? closers[depth - 1] : ')');
        return expected(c, what);
    }
    return ERR_OK;
}

/* An attribute's value at the cursor, brackets and strings balanced, into *val. */
static int attr_value(struct cursor *c, struct hlo_span *val)
{
    int rc;

    val->off = (uint32_t)c->i;
    if ((rc = scan_balanced(c, true)) != ERR_OK)
        return rc;
    val->len = (uint32_t)(c->i - val->off);
    return ERR_OK;
}

static int push_leaf(struct parser *p, struct hlo_span sp, const uint32_t *path, unsigned depth)
{
    struct hlo_leaf l;

    memset(&l, 0, sizeof(l));
    l.shape = sp;
    l.depth = (uint8_t)depth;
    memcpy(l.path, path, depth * sizeof(*path));
    return push(p, &p->leaves, &l);
}

/* One array shape: dtype[dims] and a layout {..} written right after the ']'. */
static int array_shape(struct cursor *c, struct hlo_span *sp)
{
    size_t col = cursor_col(c);
    struct shape sh;
    struct err se;

    sp->off = (uint32_t)c->i;
    while (c->i < c->len &&
           ((c->s[c->i] >= 'a' && c->s[c->i] <= 'z') || (c->s[c->i] >= '0' && c->s[c->i] <= '9')))
        c->i++;
    if (c->i == sp->off)
        return expected(c, "a shape");
    if (cursor_peek(c) != '[')
        return expected(c, "'[' after the element type");
    while (c->i < c->len && c->s[c->i] != ']' && c->s[c->i] != '\n')
        c->i++;
    if (cursor_peek(c) != ']')
        return expected(c, "']'");
    c->i++;
    if (cursor_peek(c) == '{' && scan_balanced(c, false) != ERR_OK)
        return c->e->code;
    sp->len = (uint32_t)(c->i - sp->off);
    if (shape_parse(c->s + sp->off, sp->len, &sh, &se) != ERR_OK) {
        char where[32];
        snprintf(where, sizeof(where), "line %zu:%zu", c->line, col);
        return err_set(c->e, se.code, where, "%s: shape \"%.*s\": %s", where,
                       (int)(sp->len > 200 ? 200 : sp->len), c->s + sp->off, se.msg);
    }
    return ERR_OK;
}

/* A shape, array or tuple; with collect, its leaves are appended to the module. */
static int any_shape(struct parser *p, bool collect, uint32_t *path, unsigned depth)
{
    struct cursor *c = &p->c;
    struct hlo_span sp;
    uint32_t k = 0;
    int rc;

    if (cursor_peek(c) != '(') {
        if ((rc = array_shape(c, &sp)) != ERR_OK)
            return rc;
        return collect ? push_leaf(p, sp, path, depth) : ERR_OK;
    }
    if (depth == HLO_MAX_TUPLE_DEPTH)
        return err_set(c->e, ERR_LIMIT, "", "line %zu:%zu: tuples nested more than %d deep",
                       c->line, cursor_col(c), HLO_MAX_TUPLE_DEPTH);
    c->i++;
    skip_ws(c);
    for (bool end = cursor_accept(c, ')'); !end; k++) {
        skip_ws(c);
        path[depth] = k;
        if ((rc = any_shape(p, collect, path, depth + 1)) != ERR_OK ||
            (rc = list_next(c, &end, "',' or ')' in a tuple shape")) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* ---- names ------------------------------------------------------------------------- */

/* An instruction's name within its computation (the parser's name table). */
static struct names_key instr_name(const void *ctx, uint32_t i)
{
    const struct parser *p = ctx;
    const struct hlo_instr *in = instr_at(p, i);

    return (struct names_key){p->c.s + in->name.off, in->name.len, in->comp};
}

static struct names_key comp_name(const void *ctx, uint32_t k)
{
    const struct parser *p = ctx;
    const struct hlo_comp *cp = comp_at(p, k);

    return (struct names_key){p->c.s + cp->name.off, cp->name.len, 0};
}

/* The instruction called sp in the computation being parsed, or HLO_NONE. */
static uint32_t find_instr(const struct parser *p, struct hlo_span sp)
{
    return names_find(&p->names, (struct names_key){p->c.s + sp.off, sp.len, p->comp});
}

/* ---- instructions ------------------------------------------------------------------ */

static int operand(struct parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_span nm;
    uint32_t path[HLO_MAX_TUPLE_DEPTH];
    size_t line, col;
    uint32_t v;
    int rc;

    if (cursor_peek(c) == '(') {
        if ((rc = any_shape(p, false, path, 0)) != ERR_OK)
            return rc;
        skip_ws(c);
    } else if (cursor_peek(c) != '%') {
        size_t at = c->i;
        (void)word(c);
        if (cursor_peek(c) == '[') {
            c->i = at;
            if ((rc = any_shape(p, false, path, 0)) != ERR_OK)
                return rc;
            skip_ws(c);
        } else {
            c->i = at;
        }
    }
    line = c->line;
    col = cursor_col(c);
    if ((rc = name(c, &nm, "an operand name")) != ERR_OK)
        return rc;
    if ((v = find_instr(p, nm)) == HLO_NONE)
        return cursor_fail_at(c->e, line, col,
                              "operand %%%.*s is not defined before its use (the written order "
                              "must define every value before it is used)",
                              (int)(nm.len > 200 ? 200 : nm.len), c->s + nm.off);
    return push_idx(p, v);
}

static int operands(struct parser *p, struct hlo_instr *in)
{
    struct cursor *c = &p->c;
    int rc;

    if ((rc = expect(c, '(', "'(' after the opcode")) != ERR_OK)
        return rc;
    in->opnd0 = (uint32_t)p->idx.n;
    if (span_eq(c->s, in->opcode, "constant")) {
        c->i--; /* scan the literal from its '(' */
        return scan_balanced(c, false);
    }
    skip_ws(c);
    if (span_eq(c->s, in->opcode, "parameter")) {
        if (!cursor_uint(c, &in->index))
            return expected(c, "a parameter number");
        return expect(c, ')', "')'");
    }
    for (bool end = cursor_accept(c, ')'); !end; in->nopnds++) {
        skip_ws(c);
        if ((rc = operand(p)) != ERR_OK ||
            (rc = list_next(c, &end, "',' or ')' after an operand")) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* Computation names in an attribute value: %a or {%a, %b}. */
static int callees(struct parser *p, struct hlo_instr *in, size_t end)
{
    struct cursor *c = &p->c;
    while (c->i < end) {
        struct hlo_span nm;
        char ch = c->s[c->i];
        if (ch == '{' || ch == '}' || ch == ',' || ch == ' ') {
            c->i++;
            continue;
        }
        size_t col = cursor_col(c);
        if (name(c, &nm, "a computation name") != ERR_OK)
            return c->e->code;
        struct pending_call pc = {(uint32_t)p->idx.n, nm, (uint32_t)c->line, (uint32_t)col};
        if (push(p, &p->calls, &pc) != ERR_OK)
            return c->e->code;
        if (in->ncalls == 0)
            in->call0 = pc.slot; /* a computation's callees are pushed together */
        if (push_idx(p, HLO_NONE) != ERR_OK)
            return c->e->code;
        in->ncalls++;
    }
    return ERR_OK;
}

/* metadata={op_name="..." ...}: the op_name string as written (escapes kept). */
static struct hlo_span op_name_of(const char *s, struct hlo_span v)
{
    static const char key[] = "op_name=\"";
    struct hlo_span out = {0, 0};
    for (uint32_t k = 0; k + sizeof(key) - 1 <= v.len; k++) {
        if (memcmp(s + v.off + k, key, sizeof(key) - 1) != 0)
            continue;
        out.off = v.off + k + (uint32_t)sizeof(key) - 1;
        while (out.off + out.len < v.off + v.len && s[out.off + out.len] != '"')
            out.len += s[out.off + out.len] == '\\' ? 2 : 1;
        if (out.off + out.len > v.off + v.len)
            out.len = v.off + v.len - out.off;
        return out;
    }
    return out;
}

static bool is_callee_key(const char *s, struct hlo_span k)
{
    static const char *const keys[] = {"calls",
                                       "to_apply",
                                       "body",
                                       "condition",
                                       "true_computation",
                                       "false_computation",
                                       "branch_computations",
                                       "called_computations"};
    for (size_t q = 0; q < sizeof(keys) / sizeof(keys[0]); q++)
        if (span_eq(s, k, keys[q]))
            return true;
    return false;
}

static int attributes(struct parser *p, struct hlo_instr *in)
{
    struct cursor *c = &p->c;
    int rc;

    for (;;) {
        struct hlo_span key, val;
        if ((rc = attr_key(c, &key)) != ERR_OK || key.len == 0)
            return rc;
        if ((rc = attr_value(c, &val)) != ERR_OK)
            return rc;
        if (in == NULL)
            continue;
        if (span_eq(c->s, key, "index")) {
            size_t at = val.off;
            if (!text_uint(c->s, (size_t)val.off + val.len, &at, &in->index))
                return cursor_fail_at(c->e, c->line, (size_t)val.off - c->bol + 1,
                                      "expected a tuple index");
        } else if (span_eq(c->s, key, "kind")) {
            in->kind = val;
        } else if (span_eq(c->s, key, "sharding")) {
            in->sharding = val;
        } else if (span_eq(c->s, key, "metadata")) {
            in->op_name = op_name_of(c->s, val);
        } else if (is_callee_key(c->s, key)) {
            size_t end = c->i;
            c->i = val.off;
            if ((rc = callees(p, in, end)) != ERR_OK)
                return rc;
            c->i = end;
        }
    }
}

static int instruction(struct parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_comp *cp = comp_at(p, p->comp);
    struct hlo_instr *in;
    uint32_t path[HLO_MAX_TUPLE_DEPTH], first, at = (uint32_t)p->instrs.n;
    int rc;

    if (at >= p->max_instrs)
        return err_set(c->e, ERR_LIMIT, "", "line %zu: more than %zu HLO instructions", c->line,
                       p->max_instrs);
    if ((rc = vec_reserve(&p->instrs, (size_t)at + 1)) != ERR_OK)
        return grow_err(p, rc);
    /* Written in place and counted once whole: nothing else grows instrs meanwhile. */
    in = instr_at(p, at);
    memset(in, 0, sizeof(*in));
    in->index = -1;
    in->comp = p->comp;
    if (c->s[c->i] == 'R' && c->len - c->i > 5 && memcmp(c->s + c->i, "ROOT ", 5) == 0) {
        in->root = true;
        c->i += 5;
        skip_ws(c);
    }
    in->line = c->line;
    in->col = cursor_col(c);
    if ((rc = name(c, &in->name, "an instruction name")) != ERR_OK)
        return rc;
    if (find_instr(p, in->name) != HLO_NONE)
        return cursor_fail_at(c->e, in->line, in->col, "%.*s is defined twice",
                              (int)(in->name.len > 200 ? 200 : in->name.len), c->s + in->name.off);
    if ((rc = expect(c, '=', "'=' after the instruction name")) != ERR_OK)
        return rc;
    skip_ws(c);
    in->leaf0 = (uint32_t)p->leaves.n;
    in->tuple_shaped = cursor_peek(c) == '(';
    if ((rc = any_shape(p, true, path, 0)) != ERR_OK)
        return rc;
    in->nleaves = (uint32_t)p->leaves.n - in->leaf0;
    skip_ws(c);
    in->opcode = word(c);
    if (in->opcode.len == 0)
        return expected(c, "an opcode");
    if ((rc = operands(p, in)) != ERR_OK || (rc = attributes(p, in)) != ERR_OK)
        return rc;
    skip_ws(c);
    if (cursor_peek(c) != '\n' && cursor_peek(c) != '\0')
        return expected(c, "',' or the end of the line");
    if ((rc = names_add(&p->names, at, &first)) != ERR_OK)
        return err_set(c->e, rc, "", "line %zu: more than %zu HLO instructions", c->line,
                       p->names.max);
    if (in->root || cp->n == 0 || !instr_at(p, cp->root)->root)
        cp->root = at;
    p->instrs.n++;
    cp->n++;
    return ERR_OK;
}

/* ---- computations and the module --------------------------------------------------- */

static int computation(struct parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_module *m = p->m;
    struct hlo_comp *cp;
    uint32_t path[HLO_MAX_TUPLE_DEPTH], at = (uint32_t)p->comps.n;
    int rc;

    if ((rc = vec_reserve(&p->comps, (size_t)at + 1)) != ERR_OK)
        return grow_err(p, rc);
    /* Written in place, counted once its header is read (see below). */
    cp = comp_at(p, at);
    memset(cp, 0, sizeof(*cp));
    cp->line = c->line;
    if (c->len - c->i > 6 && memcmp(c->s + c->i, "ENTRY ", 6) == 0) {
        if (m->entry != HLO_NONE)
            return cursor_fail_at(c->e, c->line, cursor_col(c), "a second ENTRY computation");
        cp->entry = true;
        m->entry = at;
        c->i += 6;
        skip_ws(c);
    }
    if ((rc = name(c, &cp->name, "a computation name or ENTRY")) != ERR_OK)
        return rc;
    skip_ws(c);
    if (cursor_peek(c) == '(') {
        if ((rc = scan_balanced(c, false)) != ERR_OK)
            return rc;
        skip_ws(c);
        if (!cursor_lit(c, "->"))
            return expected(c, "'->' after the computation's parameters");
        skip_ws(c);
        if ((rc = any_shape(p, false, path, 0)) != ERR_OK)
            return rc;
    }
    if ((rc = expect(c, '{', "'{' to open the computation")) != ERR_OK)
        return rc;
    cp->first = (uint32_t)p->instrs.n;
    p->comp = at;
    p->comps.n++;
    for (;;) {
        skip_nl(c);
        if (cursor_peek(c) == '}')
            break;
        if (cursor_peek(c) == '\0')
            return expected(c, "'}' to close the computation");
        if ((rc = instruction(p)) != ERR_OK)
            return rc;
    }
    c->i++;
    if (cp->n == 0) /* cp is still valid: only other arrays grew since */
        return cursor_fail_at(c->e, c->line, cursor_col(c), "computation %.*s has no instructions",
                              (int)cp->name.len, c->s + cp->name.off);
    return attributes(p, NULL); /* e.g. execution_thread="..." */
}

static int alias_path(struct cursor *c, uint32_t *path, uint8_t *depth)
{
    int rc;

    *depth = 0;
    if ((rc = expect(c, '{', "'{' to open a shape index")) != ERR_OK)
        return rc;
    for (;;) {
        int64_t v;
        skip_ws(c);
        if (cursor_peek(c) == '}') {
            c->i++;
            return ERR_OK;
        }
        if (cursor_peek(c) == ',') {
            c->i++;
            continue;
        }
        if (!cursor_uint(c, &v) || v > INT32_MAX)
            return expected(c, "a shape index");
        if (*depth == HLO_MAX_TUPLE_DEPTH)
            return expected(c, "'}' (shape index too deep)");
        path[(*depth)++] = (uint32_t)v;
    }
}

/* input_output_alias={ {0}: (1, {}, may-alias), ... } */
static int io_alias(struct parser *p)
{
    struct cursor *c = &p->c;
    int rc;

    if ((rc = expect(c, '{', "'{' to open input_output_alias")) != ERR_OK)
        return rc;
    for (;;) {
        struct hlo_alias a;
        skip_ws(c);
        if (cursor_peek(c) == '}') {
            c->i++;
            return ERR_OK;
        }
        if (p->aliases.n == HLO_MAX_ALIASES)
            return err_set(c->e, ERR_LIMIT, "", "line %zu: more than %d input_output_alias entries",
                           c->line, HLO_MAX_ALIASES);
        memset(&a, 0, sizeof(a));
        a.line = c->line;
        a.col = cursor_col(c);
        if ((rc = alias_path(c, a.out_path, &a.out_depth)) != ERR_OK ||
            (rc = expect(c, ':', "':' after the output index")) != ERR_OK ||
            (rc = expect(c, '(', "'(' before the parameter number")) != ERR_OK)
            return rc;
        skip_ws(c);
        if (!cursor_uint(c, &a.param))
            return expected(c, "a parameter number");
        if ((rc = expect(c, ',', "',' after the parameter number")) != ERR_OK ||
            (rc = alias_path(c, a.param_path, &a.param_depth)) != ERR_OK)
            return rc;
        skip_ws(c);
        if (cursor_peek(c) == ',') { /* may-alias / must-alias */
            c->i++;
            skip_ws(c);
            (void)word(c);
        }
        if ((rc = expect(c, ')', "')' after the parameter index")) != ERR_OK)
            return rc;
        if ((rc = push(p, &p->aliases, &a)) != ERR_OK)
            return rc;
        skip_ws(c);
        (void)cursor_accept(c, ',');
    }
}

static int header(struct parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_module *m = p->m;
    int rc;

    skip_nl(c);
    if (!cursor_lit(c, "HloModule "))
        return expected(c, "\"HloModule\"");
    skip_ws(c);
    if ((rc = name(c, &m->name, "the module name")) != ERR_OK)
        return rc;
    for (;;) {
        struct hlo_span key, val;
        if ((rc = attr_key(c, &key)) != ERR_OK)
            return rc;
        if (key.len == 0)
            break;
        if (span_eq(c->s, key, "input_output_alias")) {
            if ((rc = io_alias(p)) != ERR_OK)
                return rc;
            continue;
        }
        if ((rc = attr_value(c, &val)) != ERR_OK)
            return rc;
        if (span_eq(c->s, key, "is_scheduled"))
            m->scheduled = span_eq(c->s, val, "true");
    }
    skip_ws(c);
    return cursor_peek(c) == '\n' || cursor_peek(c) == '\0'
               ? ERR_OK
               : expected(c, "',' or the end of the line");
}

/* Newer XLA prints stack-frame tables after the last computation. */
static bool at_trailer(const struct cursor *c)
{
    static const char *const words[] = {"FileNames", "FunctionNames", "FileLocations",
                                        "StackFrames"};
    for (size_t k = 0; k < sizeof(words) / sizeof(words[0]); k++)
        if (cursor_starts(c, words[k]))
            return true;
    return false;
}

/* Binds every pending computation reference to its computation. */
static int resolve_calls(struct parser *p)
{
    struct cursor *c = &p->c;
    const struct pending_call *calls = p->calls.data;
    uint32_t *idx = p->idx.data, ncomps = (uint32_t)p->comps.n;
    struct names comps;
    int rc;

    if ((rc = names_init(&comps, ncomps, comp_name, p)) != ERR_OK) {
        rc = err_set(c->e, rc, "", "out of memory parsing HLO");
        goto out;
    }
    for (uint32_t k = 0; k < ncomps; k++) {
        uint32_t j;
        if ((rc = names_add(&comps, k, &j)) != ERR_OK) {
            rc = err_set(c->e, rc, "", "more than %u HLO computations", ncomps);
            goto out;
        }
        if (j != NAMES_NONE) {
            struct hlo_span o = comp_at(p, j)->name;
            rc = cursor_fail_at(c->e, comp_at(p, k)->line, 1, "computation %.*s is defined twice",
                                (int)(o.len > 200 ? 200 : o.len), c->s + o.off);
            goto out;
        }
    }
    for (size_t q = 0; q < p->calls.n; q++) {
        const struct pending_call *pc = &calls[q];
        uint32_t k = names_find(&comps, (struct names_key){c->s + pc->name.off, pc->name.len, 0});
        if (k == NAMES_NONE) {
            rc =
                cursor_fail_at(c->e, pc->line, pc->col, "no computation is called %.*s",
                               (int)(pc->name.len > 200 ? 200 : pc->name.len), c->s + pc->name.off);
            goto out;
        }
        idx[pc->slot] = k;
    }
out:
    names_free(&comps);
    return rc;
}

/* Counts lines (bounds the name table) and checks every line's length. */
static int scan_lines(const char *s, size_t len, size_t *nlines, struct err *e)
{
    size_t at = 0, n = 1;
    while (at < len) {
        const char *nl = memchr(s + at, '\n', len - at);
        size_t end = nl != NULL ? (size_t)(nl - s) : len;
        if (end - at > HLO_MAX_LINE)
            return err_set(e, ERR_LIMIT, "", "line %zu: longer than %u bytes", n, HLO_MAX_LINE);
        at = end + 1;
        n++;
    }
    *nlines = n;
    return ERR_OK;
}

bool hlo_detect(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    return len - i >= 10 && memcmp(s + i, "HloModule ", 10) == 0;
}

int hlo_parse(const char *s, size_t len, size_t max_instrs, struct hlo_module *m, struct err *e)
{
    struct parser p = {.c = cursor_make(s, len, e), .m = m, .max_instrs = max_instrs};
    size_t nlines = 1;
    int rc;

    memset(m, 0, sizeof(*m));
    m->text = s;
    m->entry = HLO_NONE;
    /* The maxima: every computation but the one being read holds an instruction (an empty
     * one is an error), and every leaf, operand and callee takes bytes of the text (its
     * shape or name), so len (below 2^31) bounds those and their indices fit 32 bits. */
    vec_init(&p.comps, sizeof(struct hlo_comp),
             max_instrs < SIZE_MAX ? max_instrs + 1 : max_instrs);
    vec_init(&p.instrs, sizeof(struct hlo_instr), max_instrs);
    vec_init(&p.leaves, sizeof(struct hlo_leaf), len);
    vec_init(&p.idx, sizeof(uint32_t), len);
    vec_init(&p.calls, sizeof(struct pending_call), len);
    vec_init(&p.aliases, sizeof(struct hlo_alias), HLO_MAX_ALIASES);
    if (len > UINT32_MAX / 2)
        return err_set(e, ERR_LIMIT, "", "HLO text of %zu bytes is too large", len);
    if ((rc = scan_lines(s, len, &nlines, e)) != ERR_OK)
        return rc;
    /* an instruction takes a line of its own */
    if ((rc = names_init(&p.names, nlines < max_instrs ? nlines : max_instrs, instr_name, &p)) !=
        ERR_OK) {
        rc = err_set(e, rc, "", "out of memory parsing HLO");
        goto out;
    }
    if ((rc = header(&p)) != ERR_OK)
        goto out;
    for (;;) {
        skip_nl(&p.c);
        if (p.c.i >= len || at_trailer(&p.c))
            break;
        if ((rc = computation(&p)) != ERR_OK)
            goto out;
    }
    if (m->entry == HLO_NONE) {
        rc = cursor_fail(&p.c, "expected an ENTRY computation");
        goto out;
    }
    rc = resolve_calls(&p);
out:
    if (rc == ERR_OK) { /* the arrays become the module's */
        m->ncomps = (uint32_t)p.comps.n;
        m->comps = vec_take(&p.comps);
        m->ninstrs = (uint32_t)p.instrs.n;
        m->instrs = vec_take(&p.instrs);
        m->nleaves = (uint32_t)p.leaves.n;
        m->leaves = vec_take(&p.leaves);
        m->nidx = (uint32_t)p.idx.n;
        m->idx = vec_take(&p.idx);
        m->naliases = (uint32_t)p.aliases.n;
        m->aliases = vec_take(&p.aliases);
    }
    names_free(&p.names);
    vec_free(&p.comps);
    vec_free(&p.instrs);
    vec_free(&p.leaves);
    vec_free(&p.idx);
    vec_free(&p.aliases);
    vec_free(&p.calls);
    if (rc != ERR_OK)
        hlo_free(m);
    return rc;
}

void hlo_free(struct hlo_module *m)
{
    free(m->comps);
    free(m->instrs);
    free(m->leaves);
    free(m->idx);
    free(m->aliases);
    memset(m, 0, sizeof(*m));
}
