/*
 * hlo.c - the HLO text parser (see hlo.h): XLA's lexer over one cursor, one function per
 * grammar rule of computations and instructions, every array a vec (base/vec.h) bounded by
 * what the input size and the caller's instruction limit imply, handed to the module once the
 * parse succeeds. The lexer, attribute lists and shapes are hlo_lex.c's; the module header's
 * and metadata's values are hlo_attrs.c's.
 */
#include "planner/hlo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/hlo_int.h"
#include "planner/text.h"

/* A reference to a called computation, resolved once every computation is known. */
struct hlo_pending_call {
    uint32_t slot; /* position in the operand and callee index list (idx) */
    struct hlo_span name;
    uint32_t line, col;
};

static struct hlo_comp *comp_at(const struct hlo_parser *p, size_t k)
{
    return vec_at(&p->comps, k);
}

static struct hlo_instr *instr_at(const struct hlo_parser *p, size_t k)
{
    return vec_at(&p->instrs, k);
}

static int push_idx(struct hlo_parser *p, uint32_t v)
{
    return hlo_push(p, &p->idx, &v);
}

/* ---- names ------------------------------------------------------------------------- */

/* An instruction's name within its computation (the parser's name table). */
static struct names_key instr_name(const void *ctx, uint32_t i)
{
    const struct hlo_parser *p = ctx;
    const struct hlo_instr *in = instr_at(p, i);

    return (struct names_key){p->c.s + in->name.off, in->name.len, in->comp};
}

static struct names_key comp_name(const void *ctx, uint32_t k)
{
    const struct hlo_parser *p = ctx;
    const struct hlo_comp *cp = comp_at(p, k);

    return (struct names_key){p->c.s + cp->name.off, cp->name.len, 0};
}

/* The instruction called sp in the computation being parsed, or HLO_NONE. */
static uint32_t find_instr(const struct hlo_parser *p, struct hlo_span sp)
{
    return names_find(&p->names, (struct names_key){p->c.s + sp.off, sp.len, p->comp});
}

/* [%]name */
static int name(struct cursor *c, struct hlo_span *out, const char *what)
{
    cursor_accept(c, '%');
    *out = hlo_word(c);
    return out->len > 0 ? ERR_OK : hlo_expected(c, what);
}

/* ---- instructions ------------------------------------------------------------------ */

/* [shape] [%]name: an operand, its shape (if written) read past. */
static int operand(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_span nm;
    uint32_t path[HLO_MAX_TUPLE_DEPTH];
    size_t line, col;
    uint32_t v;
    int rc;

    if (cursor_peek(c) != '%') {
        size_t at = c->i;
        (void)hlo_word(c);
        bool shaped = cursor_peek(c) == '[' || (c->i == at && cursor_peek(c) == '(');
        c->i = at;
        if (shaped) {
            if ((rc = hlo_any_shape(p, false, path, 0)) != ERR_OK)
                return rc;
            hlo_skip(c);
        }
    }
    line = c->line;
    col = cursor_col(c);
    if ((rc = name(c, &nm, "an operand name")) != ERR_OK)
        return rc;
    if (hlo_span_eq(c->s, nm, "..."))
        return cursor_fail_at(c->e, line, col,
                              "the operand list is cut short (\"...\"): XLA printed it "
                              "truncated; dump the module with its operands in full");
    hlo_skip(c);
    if (cursor_peek(c) == '(')
        return cursor_fail_at(c->e, line, col,
                              "a nested instruction %.*s(...) as an operand is not supported: "
                              "write it as an instruction of its own",
                              (int)(nm.len > 200 ? 200 : nm.len), c->s + nm.off);
    if ((v = find_instr(p, nm)) == HLO_NONE)
        return cursor_fail_at(c->e, line, col,
                              "operand %%%.*s is not defined before its use (the written order "
                              "must define every value before it is used)",
                              (int)(nm.len > 200 ? 200 : nm.len), c->s + nm.off);
    return push_idx(p, v);
}

static int operands(struct hlo_parser *p, struct hlo_instr *in)
{
    struct cursor *c = &p->c;
    int rc;

    hlo_skip(c);
    if (cursor_peek(c) != '(')
        return hlo_expected(c, "'(' after the opcode");
    in->opnd0 = (uint32_t)p->idx.n;
    if (hlo_span_eq(c->s, in->opcode, "constant"))
        return hlo_scan_balanced(c, false); /* the literal, from its '(' */
    c->i++;
    hlo_skip(c);
    if (hlo_span_eq(c->s, in->opcode, "parameter")) {
        if (!cursor_uint(c, &in->index))
            return hlo_expected(c, "a parameter number");
        return hlo_expect(c, ')', "')'");
    }
    if (cursor_accept(c, ')'))
        return ERR_OK;
    for (;;) {
        hlo_skip(c);
        if ((rc = operand(p)) != ERR_OK)
            return rc;
        in->nopnds++;
        hlo_skip(c);
        if (cursor_accept(c, ')'))
            return ERR_OK;
        if (!cursor_accept(c, ','))
            return hlo_expected(c, "',' or ')' after an operand");
    }
}

/* Computation names in an attribute value that starts at *at and ends at end: %a or
 * {%a, %b}. */
static int callees(struct hlo_parser *p, struct hlo_instr *in, const struct cursor *at, size_t end)
{
    struct cursor k = *at;
    int rc;

    k.len = end;
    for (;;) {
        struct hlo_span nm;
        hlo_skip(&k);
        if (k.i >= end)
            return ERR_OK;
        if (cursor_accept(&k, '{') || cursor_accept(&k, '}') || cursor_accept(&k, ','))
            continue;
        size_t col = cursor_col(&k);
        if ((rc = name(&k, &nm, "a computation name")) != ERR_OK)
            return rc;
        struct hlo_pending_call pc = {(uint32_t)p->idx.n, nm, (uint32_t)k.line, (uint32_t)col};
        if ((rc = hlo_push(p, &p->calls, &pc)) != ERR_OK)
            return rc;
        if (in->ncalls == 0)
            in->call0 = pc.slot; /* an instruction's callees are pushed together */
        if ((rc = push_idx(p, HLO_NONE)) != ERR_OK)
            return rc;
        in->ncalls++;
    }
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
        if (hlo_span_eq(s, k, keys[q]))
            return true;
    return false;
}

/* The instruction attributes kept as their values' text. */
static const struct hlo_span_attr SPAN_ATTRS[] = {
    {"kind", offsetof(struct hlo_instr, kind)},
    {"sharding", offsetof(struct hlo_instr, sharding)},
    {"frontend_attributes", offsetof(struct hlo_instr, frontend_attributes)},
    {"backend_config", offsetof(struct hlo_instr, backend_config)},
};

/* One attribute of in (key=value, the value at *at spanning val) into its fact. */
static int attribute(struct hlo_parser *p, struct hlo_instr *in, struct hlo_span key,
                     const struct cursor *at, struct hlo_span val)
{
    const char *s = p->c.s;

    if (hlo_put_span(s, key, SPAN_ATTRS, sizeof(SPAN_ATTRS) / sizeof(SPAN_ATTRS[0]), in, val))
        return ERR_OK;
    if (hlo_span_eq(s, key, "index")) {
        size_t i = val.off;
        if (!text_uint(s, (size_t)val.off + val.len, &i, &in->index) || i != val.off + val.len)
            return cursor_fail(at, "expected a tuple index");
    } else if (hlo_span_eq(s, key, "metadata")) {
        return hlo_metadata(at, val, &in->meta);
    } else if (hlo_span_eq(s, key, "custom_call_target")) {
        struct cursor k = *at;
        return hlo_string(&k, &in->custom_call_target);
    } else if (is_callee_key(s, key)) {
        return callees(p, in, at, (size_t)val.off + val.len);
    }
    return ERR_OK;
}

/* (',' key '=' value)*: an instruction's (in) or a computation's (in NULL: read past). */
static int attributes(struct hlo_parser *p, struct hlo_instr *in)
{
    struct cursor *c = &p->c;
    struct hlo_span key, val;
    struct cursor at;
    bool more = true;
    int rc;

    while ((rc = hlo_attr_next(c, &key, &more)) == ERR_OK && more)
        if ((rc = hlo_attr_value(c, &at, &val)) != ERR_OK ||
            (in != NULL && (rc = attribute(p, in, key, &at, val)) != ERR_OK))
            return rc;
    return rc;
}

/* ---- result shapes XLA infers -------------------------------------------------------- */

enum infer_rule {
    INFER_OPERAND0, /* the first operand's shape */
    INFER_OPERAND1, /* the second's (select, clamp) */
    INFER_TUPLE,    /* a tuple of the operands' shapes */
    INFER_ELEMENT,  /* element `index` of the first operand's tuple */
    INFER_SORT,     /* the operand's shape, a tuple of them for several */
};

/* Opcodes whose result shape hlo_parser.cc infers (CanInferShape) and which is an operand's
 * shape or built from them; the others of that list (compare, broadcast, dot, reduce, ...)
 * change the element type or the dims, and are refused without a shape. */
static const struct {
    const char *opcode;
    enum infer_rule rule;
} INFER[] = {
    {"abs", INFER_OPERAND0},
    {"acos", INFER_OPERAND0},
    {"acosh", INFER_OPERAND0},
    {"add", INFER_OPERAND0},
    {"add-dependency", INFER_OPERAND0},
    {"and", INFER_OPERAND0},
    {"asin", INFER_OPERAND0},
    {"asinh", INFER_OPERAND0},
    {"atan2", INFER_OPERAND0},
    {"atanh", INFER_OPERAND0},
    {"cbrt", INFER_OPERAND0},
    {"ceil", INFER_OPERAND0},
    {"clamp", INFER_OPERAND1},
    {"count-leading-zeros", INFER_OPERAND0},
    {"copy", INFER_OPERAND0},
    {"cosh", INFER_OPERAND0},
    {"cosine", INFER_OPERAND0},
    {"divide", INFER_OPERAND0},
    {"domain", INFER_OPERAND0},
    {"erf", INFER_OPERAND0},
    {"exponential", INFER_OPERAND0},
    {"exponential-minus-one", INFER_OPERAND0},
    {"floor", INFER_OPERAND0},
    {"get-tuple-element", INFER_ELEMENT},
    {"log", INFER_OPERAND0},
    {"log-plus-one", INFER_OPERAND0},
    {"logistic", INFER_OPERAND0},
    {"maximum", INFER_OPERAND0},
    {"minimum", INFER_OPERAND0},
    {"multiply", INFER_OPERAND0},
    {"mulhi", INFER_OPERAND0},
    {"negate", INFER_OPERAND0},
    {"not", INFER_OPERAND0},
    {"opt-barrier", INFER_OPERAND0},
    {"or", INFER_OPERAND0},
    {"popcnt", INFER_OPERAND0},
    {"power", INFER_OPERAND0},
    {"remainder", INFER_OPERAND0},
    {"reverse", INFER_OPERAND0},
    {"round-nearest-afz", INFER_OPERAND0},
    {"round-nearest-even", INFER_OPERAND0},
    {"rsqrt", INFER_OPERAND0},
    {"select", INFER_OPERAND1},
    {"shift-left", INFER_OPERAND0},
    {"shift-right-arithmetic", INFER_OPERAND0},
    {"shift-right-logical", INFER_OPERAND0},
    {"sign", INFER_OPERAND0},
    {"sine", INFER_OPERAND0},
    {"sinh", INFER_OPERAND0},
    {"sort", INFER_SORT},
    {"sqrt", INFER_OPERAND0},
    {"subtract", INFER_OPERAND0},
    {"tan", INFER_OPERAND0},
    {"tanh", INFER_OPERAND0},
    {"tuple", INFER_TUPLE},
    {"while", INFER_OPERAND0},
    {"xor", INFER_OPERAND0},
};

/* Appends the leaves of operand q of in, each under tuple index prefix (HLO_NONE: none),
 * keeping those whose path starts with keep (element keep; HLO_NONE: all, the path whole). */
static int copy_leaves(struct hlo_parser *p, const struct hlo_instr *in, uint32_t q,
                       uint32_t prefix, uint32_t keep, uint32_t *got)
{
    const struct hlo_instr *o = instr_at(p, ((const uint32_t *)p->idx.data)[in->opnd0 + q]);
    int rc;

    for (uint32_t k = 0; k < o->nleaves; k++) {
        const struct hlo_leaf *l = vec_at(&p->leaves, o->leaf0 + k);
        struct hlo_leaf copy = *l; /* leaves may move as they grow */
        uint32_t path[HLO_MAX_TUPLE_DEPTH + 1];
        unsigned skip = keep == HLO_NONE ? 0 : 1, np = prefix == HLO_NONE ? 0 : 1;
        if (keep != HLO_NONE && (copy.depth == 0 || copy.path[0] != keep))
            continue;
        path[0] = prefix;
        memcpy(path + np, copy.path + skip, (copy.depth - skip) * sizeof(*path));
        if ((rc = hlo_push_leaf(p, &copy, path, np + copy.depth - skip)) != ERR_OK)
            return rc;
        (*got)++;
    }
    return ERR_OK;
}

/* The result shape of in, written without one, from its operands (INFER). */
static int infer_shape(struct hlo_parser *p, struct hlo_instr *in)
{
    const uint32_t *idx = p->idx.data;
    enum infer_rule rule = INFER_TUPLE;
    size_t q = 0, n = sizeof(INFER) / sizeof(INFER[0]);
    uint32_t got = 0;
    int rc = ERR_OK;

    while (q < n && !hlo_span_eq(p->c.s, in->opcode, INFER[q].opcode))
        q++;
    if (q == n)
        return cursor_fail_at(p->c.e, in->line, in->col,
                              "%.*s has no result shape, and tpuplan infers only an operand's, "
                              "a tuple's or a tuple element's: write the shape before the opcode",
                              (int)(in->opcode.len > 60 ? 60 : in->opcode.len),
                              p->c.s + in->opcode.off);
    rule = INFER[q].rule;
    if (rule == INFER_SORT)
        rule = in->nopnds == 1 ? INFER_OPERAND0 : INFER_TUPLE;
    if (in->nopnds < (rule == INFER_OPERAND1 ? 2u : rule == INFER_TUPLE ? 0u : 1u))
        return cursor_fail_at(p->c.e, in->line, in->col,
                              "%.*s has too few operands to infer its result shape",
                              (int)in->opcode.len, p->c.s + in->opcode.off);
    in->shape_inferred = true;
    in->leaf0 = (uint32_t)p->leaves.n;
    if (rule == INFER_TUPLE) {
        in->tuple_shaped = true;
        for (uint32_t k = 0; k < in->nopnds && rc == ERR_OK; k++)
            rc = copy_leaves(p, in, k, k, HLO_NONE, &got);
    } else if (rule == INFER_ELEMENT) {
        const struct hlo_instr *o = instr_at(p, idx[in->opnd0]);
        if (!o->tuple_shaped || in->index < 0 || in->index > (int64_t)UINT32_MAX)
            return cursor_fail_at(p->c.e, in->line, in->col,
                                  "get-tuple-element of %.*s, which is not a tuple",
                                  (int)o->name.len, p->c.s + o->name.off);
        rc = copy_leaves(p, in, 0, HLO_NONE, (uint32_t)in->index, &got);
        if (rc == ERR_OK && got == 0)
            return cursor_fail_at(p->c.e, in->line, in->col, "%.*s has no tuple element %lld",
                                  (int)o->name.len, p->c.s + o->name.off, (long long)in->index);
        for (uint32_t k = 0; k < got; k++)
            in->tuple_shaped |=
                ((const struct hlo_leaf *)vec_at(&p->leaves, in->leaf0 + k))->depth > 0;
    } else {
        const struct hlo_instr *o = instr_at(p, idx[in->opnd0 + (rule == INFER_OPERAND1)]);
        in->tuple_shaped = o->tuple_shaped;
        rc = copy_leaves(p, in, rule == INFER_OPERAND1, HLO_NONE, HLO_NONE, &got);
    }
    in->nleaves = got;
    return rc;
}

/* Whether opcode sp ends with the suffix w. */
static bool ends_with(const char *s, struct hlo_span sp, const char *w)
{
    size_t n = strlen(w);
    return sp.len > n && memcmp(s + sp.off + sp.len - n, w, n) == 0;
}

/* The asynchronous op an opcode is (enum hlo_async). */
static uint8_t async_kind(const char *s, struct hlo_span op)
{
    static const char *const own[] = {"all-gather-start",
                                      "all-gather-done",
                                      "all-reduce-start",
                                      "all-reduce-done",
                                      "collective-permute-start",
                                      "collective-permute-done",
                                      "copy-start",
                                      "copy-done",
                                      "send-done",
                                      "recv-done"};
    for (size_t q = 0; q < sizeof(own) / sizeof(own[0]); q++)
        if (hlo_span_eq(s, op, own[q]))
            return HLO_ASYNC_NONE;
    if (ends_with(s, op, "-start"))
        return HLO_ASYNC_START;
    if (ends_with(s, op, "-update"))
        return HLO_ASYNC_UPDATE;
    return ends_with(s, op, "-done") ? HLO_ASYNC_DONE : HLO_ASYNC_NONE;
}

/* Adds instruction at to the name table, growing it up to the instruction limit. */
static int name_add(struct hlo_parser *p, uint32_t at)
{
    uint32_t first;
    int rc = names_add(&p->names, at, &first);

    if (rc == ERR_LIMIT && p->names.max < p->max_instrs) {
        size_t more = p->names.max * 2 < p->max_instrs ? p->names.max * 2 : p->max_instrs;
        if ((rc = names_reserve(&p->names, more)) == ERR_OK)
            rc = names_add(&p->names, at, &first);
    }
    if (rc != ERR_OK)
        return err_set(p->c.e, rc, "", "line %zu: more than %zu HLO instructions", p->c.line,
                       p->names.max);
    return ERR_OK;
}

/* The result shape, or none (then *omitted): a tuple "(", or a word followed by '['. */
static int result_shape(struct hlo_parser *p, struct hlo_instr *in, bool *omitted)
{
    struct cursor *c = &p->c;
    uint32_t path[HLO_MAX_TUPLE_DEPTH];
    size_t at = c->i;
    int rc;

    in->leaf0 = (uint32_t)p->leaves.n;
    (void)hlo_word(c);
    *omitted = cursor_peek(c) != '[' && !(c->i == at && cursor_peek(c) == '(');
    c->i = at;
    if (*omitted)
        return ERR_OK;
    in->tuple_shaped = cursor_peek(c) == '(';
    if ((rc = hlo_any_shape(p, true, path, 0)) != ERR_OK)
        return rc;
    in->nleaves = (uint32_t)p->leaves.n - in->leaf0;
    return ERR_OK;
}

static int instruction(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_comp *cp = comp_at(p, p->comp);
    struct hlo_instr *in;
    uint32_t at = (uint32_t)p->instrs.n;
    bool omitted = false;
    int rc;

    if (at >= p->max_instrs)
        return err_set(c->e, ERR_LIMIT, "", "line %zu: more than %zu HLO instructions", c->line,
                       p->max_instrs);
    if ((rc = vec_reserve(&p->instrs, (size_t)at + 1)) != ERR_OK)
        return hlo_grow_err(p, rc);
    /* Written in place and counted once whole: nothing else grows instrs meanwhile. */
    in = instr_at(p, at);
    memset(in, 0, sizeof(*in));
    in->index = -1;
    in->comp = p->comp;
    if (hlo_at_keyword(c, "ROOT")) {
        if (cp->n > 0 && instr_at(p, cp->root)->root)
            return cursor_fail(c, "a second ROOT in computation %.*s", (int)cp->name.len,
                               c->s + cp->name.off);
        in->root = true;
        c->i += 4;
        hlo_skip(c);
    }
    in->line = (uint32_t)c->line;
    in->col = (uint32_t)cursor_col(c);
    if ((rc = name(c, &in->name, "an instruction name")) != ERR_OK)
        return rc;
    if (find_instr(p, in->name) != HLO_NONE)
        return cursor_fail_at(c->e, in->line, in->col, "%.*s is defined twice",
                              (int)(in->name.len > 200 ? 200 : in->name.len), c->s + in->name.off);
    if ((rc = hlo_expect(c, '=', "'=' after the instruction name")) != ERR_OK)
        return rc;
    hlo_skip(c);
    if ((rc = result_shape(p, in, &omitted)) != ERR_OK)
        return rc;
    hlo_skip(c);
    in->opcode = hlo_word(c);
    if (in->opcode.len == 0)
        return hlo_expected(c, "an opcode");
    in->async = async_kind(c->s, in->opcode);
    if ((rc = operands(p, in)) != ERR_OK || (rc = attributes(p, in)) != ERR_OK ||
        (omitted && (rc = infer_shape(p, in)) != ERR_OK) || (rc = name_add(p, at)) != ERR_OK)
        return rc;
    if (in->root || cp->n == 0 || !instr_at(p, cp->root)->root)
        cp->root = at;
    p->instrs.n++;
    cp->n++;
    return ERR_OK;
}

/* ---- computations and the module --------------------------------------------------- */

static int computation(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_module *m = p->m;
    struct hlo_comp *cp;
    uint32_t path[HLO_MAX_TUPLE_DEPTH], at = (uint32_t)p->comps.n;
    int rc;

    if ((rc = vec_reserve(&p->comps, (size_t)at + 1)) != ERR_OK)
        return hlo_grow_err(p, rc);
    /* Written in place, counted once its header is read (see below). */
    cp = comp_at(p, at);
    memset(cp, 0, sizeof(*cp));
    cp->line = (uint32_t)c->line;
    if (hlo_at_keyword(c, "ENTRY")) {
        if (m->entry != HLO_NONE)
            return cursor_fail(c, "a second ENTRY computation");
        cp->entry = true;
        m->entry = at;
        c->i += 5;
        hlo_skip(c);
    }
    if ((rc = name(c, &cp->name, "a computation name or ENTRY")) != ERR_OK)
        return rc;
    hlo_skip(c);
    if (cursor_peek(c) == '(') {
        if ((rc = hlo_scan_balanced(c, false)) != ERR_OK)
            return rc;
        hlo_skip(c);
        if (!cursor_lit(c, "->"))
            return hlo_expected(c, "'->' after the computation's parameters");
        hlo_skip(c);
        if ((rc = hlo_any_shape(p, false, path, 0)) != ERR_OK)
            return rc;
    }
    if ((rc = hlo_expect(c, '{', "'{' to open the computation")) != ERR_OK)
        return rc;
    cp->first = (uint32_t)p->instrs.n;
    p->comp = at;
    p->comps.n++;
    for (;;) {
        hlo_skip(c);
        if (cursor_peek(c) == '}' || c->i >= c->len)
            break;
        if ((rc = instruction(p)) != ERR_OK)
            return rc;
    }
    if (!cursor_accept(c, '}'))
        return hlo_expected(c, "'}' to close the computation");
    if (cp->n == 0)
        return cursor_fail_at(c->e, c->line, cursor_col(c), "computation %.*s has no instructions",
                              (int)cp->name.len, c->s + cp->name.off);
    return attributes(p, NULL); /* e.g. execution_thread="..." */
}

/* Binds every pending computation reference to its computation. */
static int resolve_calls(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    const struct hlo_pending_call *calls = p->calls.data;
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
        const struct hlo_pending_call *pc = &calls[q];
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

/* Counts lines (sizes the name table) and checks every line's length. */
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

/* Whether the cursor is at a computation without a module header: ENTRY, or "[%]name {"
 * (hlo_parser.cc Run: the second token is '{'), but not MLIR's "module {"; also, where XLA
 * would read one instruction, "[%]name (params) -> shape": a dump's computations pasted
 * without their HloModule line. */
static bool at_headerless(const struct cursor *c)
{
    struct cursor k = *c;
    struct hlo_span w;

    if (hlo_at_keyword(c, "ENTRY"))
        return true;
    k.e = NULL;
    cursor_accept(&k, '%');
    w = hlo_word(&k);
    if (w.len == 0 || hlo_span_eq(k.s, w, "module"))
        return false;
    hlo_skip(&k);
    if (cursor_peek(&k) == '(' && hlo_scan_balanced(&k, false) == ERR_OK) {
        hlo_skip(&k);
        return cursor_starts(&k, "->");
    }
    return cursor_peek(&k) == '{';
}

bool hlo_detect(const char *s, size_t len)
{
    struct cursor c = cursor_make(s, len, NULL);

    hlo_skip(&c);
    return hlo_at_keyword(&c, "HloModule") || at_headerless(&c);
}

/* The module: [header] [stack-frame index] computation+ (ParseHloModule), the stack-frame
 * index also taken between or after the computations. */
static int module(struct hlo_parser *p)
{
    struct cursor *c = &p->c;
    struct hlo_module *m = p->m;
    int rc;

    hlo_skip(c);
    if (hlo_at_keyword(c, "HloModule")) {
        c->i += strlen("HloModule");
        if ((rc = hlo_header(p)) != ERR_OK)
            return rc;
    } else if (!at_headerless(c)) {
        return hlo_expected(c, "\"HloModule\", ENTRY or a computation");
    }
    for (;;) {
        hlo_skip(c);
        if (c->i >= c->len)
            break;
        rc = hlo_at_keyword(c, "FileNames") ? hlo_stack_frames(p) : computation(p);
        if (rc != ERR_OK)
            return rc;
    }
    if (p->comps.n == 0)
        return hlo_expected(c, "a computation");
    if (m->entry == HLO_NONE) { /* the last computation (ParseComputations) */
        m->entry = (uint32_t)p->comps.n - 1;
        comp_at(p, m->entry)->entry = true;
    }
    if ((rc = resolve_calls(p)) != ERR_OK)
        return rc;
    return hlo_check_frames(p);
}

/* The arrays become the module's. */
static void hand_over(struct hlo_parser *p, struct hlo_module *m)
{
    m->ncomps = (uint32_t)p->comps.n;
    m->comps = vec_take(&p->comps);
    m->ninstrs = (uint32_t)p->instrs.n;
    m->instrs = vec_take(&p->instrs);
    m->nleaves = (uint32_t)p->leaves.n;
    m->leaves = vec_take(&p->leaves);
    m->nidx = (uint32_t)p->idx.n;
    m->idx = vec_take(&p->idx);
    m->naliases = (uint32_t)p->aliases.n;
    m->aliases = vec_take(&p->aliases);
    m->ndonors = (uint32_t)p->donors.n;
    m->donors = vec_take(&p->donors);
    m->nfiles = (uint32_t)p->files.n;
    m->files = vec_take(&p->files);
    m->nfunctions = (uint32_t)p->functions.n;
    m->functions = vec_take(&p->functions);
    m->nlocations = (uint32_t)p->locations.n;
    m->locations = vec_take(&p->locations);
    m->nframes = (uint32_t)p->frames.n;
    m->frames = vec_take(&p->frames);
}

int hlo_parse(const char *s, size_t len, size_t max_instrs, struct hlo_module *m, struct err *e)
{
    struct hlo_parser p = {.c = cursor_make(s, len, e), .m = m, .max_instrs = max_instrs};
    struct vec *all[] = {&p.comps, &p.instrs, &p.leaves,    &p.idx,       &p.aliases, &p.donors,
                         &p.calls, &p.files,  &p.functions, &p.locations, &p.frames};
    size_t nlines = 1;
    int rc;

    memset(m, 0, sizeof(*m));
    m->text = s;
    m->entry = HLO_NONE;
    m->replica_count = m->num_partitions = 1;
    /* The maxima: every computation but the one being read holds an instruction (an empty
     * one is an error), and every leaf, operand, callee, donor and stack-frame entry takes
     * bytes of the text (its shape, name or number; an inferred leaf copies an operand's,
     * whose name it takes), so len (below 2^31) bounds those and their indices fit 32 bits. */
    vec_init(&p.comps, sizeof(struct hlo_comp),
             max_instrs < SIZE_MAX ? max_instrs + 1 : max_instrs);
    vec_init(&p.instrs, sizeof(struct hlo_instr), max_instrs);
    vec_init(&p.leaves, sizeof(struct hlo_leaf), len);
    vec_init(&p.idx, sizeof(uint32_t), len);
    vec_init(&p.calls, sizeof(struct hlo_pending_call), len);
    vec_init(&p.aliases, sizeof(struct hlo_alias), HLO_MAX_ALIASES);
    vec_init(&p.donors, sizeof(struct hlo_donor), HLO_MAX_ALIASES);
    vec_init(&p.files, sizeof(struct hlo_span), len);
    vec_init(&p.functions, sizeof(struct hlo_span), len);
    vec_init(&p.locations, sizeof(struct hlo_location), len);
    vec_init(&p.frames, sizeof(struct hlo_frame), len);
    if (len > UINT32_MAX / 2)
        return err_set(e, ERR_LIMIT, "", "HLO text of %zu bytes is too large", len);
    if ((rc = scan_lines(s, len, &nlines, e)) != ERR_OK)
        return rc;
    /* Most modules write an instruction a line; name_add grows the table past that. */
    if ((rc = names_init(&p.names, nlines < max_instrs ? nlines : max_instrs, instr_name, &p)) !=
        ERR_OK) {
        rc = err_set(e, rc, "", "out of memory parsing HLO");
        goto out;
    }
    rc = module(&p);
out:
    if (rc == ERR_OK)
        hand_over(&p, m);
    names_free(&p.names);
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
        vec_free(all[k]);
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
    free(m->donors);
    free(m->files);
    free(m->functions);
    free(m->locations);
    free(m->frames);
    memset(m, 0, sizeof(*m));
}

/* ---- reading the facts back ---------------------------------------------------------- */

bool hlo_source(const struct hlo_module *m, const struct hlo_instr *in, struct hlo_span *file,
                int64_t *line)
{
    const struct hlo_metadata *md = &in->meta;

    *file = (struct hlo_span){0, 0};
    *line = 0;
    if (md->source_file.len > 0) {
        *file = md->source_file;
        *line = md->source_line;
        return true;
    }
    if (md->stack_frame == 0 || md->stack_frame > m->nframes)
        return false;
    /* hlo_parse checked every index below */
    const struct hlo_location *loc = &m->locations[m->frames[md->stack_frame - 1].location - 1];
    *file = m->files[loc->file - 1];
    *line = loc->line;
    return true;
}

/* The value of hex digit ch, or -1. */
static int hex_digit(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* The escape at s[*k] (just past the backslash, *k < end) as one byte; *k moves past it. */
static char unescape_one(const char *s, size_t end, size_t *k)
{
    static const char from[] = "ntr\"'\\", to[] = "\n\t\r\"'\\";
    const char *hit = memchr(from, s[*k], sizeof(from) - 1);
    unsigned v = 0, n = 0;

    if (hit != NULL) {
        (*k)++;
        return to[hit - from];
    }
    if (s[*k] == 'x') { /* \xNN */
        for ((*k)++; *k < end && n < 2 && hex_digit(s[*k]) >= 0; (*k)++, n++)
            v = v * 16 + (unsigned)hex_digit(s[*k]);
        return (char)v;
    }
    for (; *k < end && n < 3 && s[*k] >= '0' && s[*k] <= '7'; (*k)++, n++) /* \NNN */
        v = v * 8 + (unsigned)(s[*k] - '0');
    if (n == 0) /* an escape absl does not write: the character itself */
        return s[(*k)++];
    return (char)v;
}

size_t hlo_unescape(const struct hlo_module *m, struct hlo_span sp, char *out, size_t cap)
{
    const char *s = m->text;
    size_t end = (size_t)sp.off + sp.len, k = sp.off, n = 0;

    if (cap == 0)
        return 0;
    while (k < end && n + 1 < cap) {
        char ch = s[k++];
        if (ch == '\\' && k < end)
            ch = unescape_one(s, end, &k);
        out[n++] = ch;
    }
    out[n] = '\0';
    return n;
}
