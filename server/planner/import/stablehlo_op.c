/*
 * stablehlo_op.c - one StableHLO op as one HLO instruction (stablehlo_int.h): its operands,
 * result types and attributes read from the text, its opcode from the op table
 * (stablehlo_ops.c); and the terminators, a region's ROOT.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

bool sh_op_is(const struct sh_translator *t, const struct sh_stmt *st, const char *name)
{
    const struct cursor *c = &t->c;
    size_t n = strlen(name);
    return st->op_len >= n && memcmp(c->s + st->op_off + st->op_len - n, name, n) == 0 &&
           (st->op_len == n || c->s[st->op_off + st->op_len - n - 1] == '.');
}

/* A place in the text to read again once the op's types are known. */
struct mark {
    size_t at, line, bol; /* at 0: none */
};

static struct mark mark_here(const struct cursor *c, size_t at)
{
    return (struct mark){at, c->line, c->bol};
}

/* Moves the cursor to m (its line and column kept for errors). */
static void go_to(struct cursor *c, struct mark m)
{
    c->i = m.at;
    c->line = m.line;
    c->bol = m.bol;
}

/* What an op's text holds up to its end (a line end outside brackets and regions): the
 * operands read (appended to ops), where the types begin, and what the op's kind reads. */
struct op_text {
    struct mark types;    /* just past the type separator " :" */
    struct sh_sym callee; /* @f of call and custom_call, decomposition = @f of composite */
    uint32_t loc_off, loc_len, nops;
    int64_t index;        /* get_tuple_element's [N] or index = N; -1: none */
    struct mark angle;    /* the first <..> after the operands: sdy.sharding_constraint's */
    struct mark mhlo_sh;  /* mhlo.sharding = "..": at the string */
    struct mark sdy_sh;   /* sdy.sharding = #sdy.sharding_per_value<..>: at its '<' */
    struct mark aliases;  /* output_operand_aliases = [..]: at the '[' */
    struct mark frontend; /* mhlo.frontend_attributes = {..}: at the '{' */
    struct mark place;    /* _xla_buffer_placement = "..", one of them: at the string */
};

/* The attributes an op's kind reads, found in its attribute dictionary: the key, and where
 * in struct op_text the place after it goes (the index and the callee are read at once). */
enum attr_to { TO_CALLEE, TO_INDEX, TO_MHLO_SH, TO_SDY_SH, TO_ALIASES, TO_FRONTEND, TO_PLACE };
static const struct {
    const char *key;
    enum attr_to to;
} ATTRS[] = {
    {"decomposition = ", TO_CALLEE},
    {"index = ", TO_INDEX},
    {"mhlo.sharding = ", TO_MHLO_SH},
    {"sdy.sharding = #sdy.sharding_per_value", TO_SDY_SH},
    {"output_operand_aliases = ", TO_ALIASES},
    {"mhlo.frontend_attributes = ", TO_FRONTEND},
    {"_xla_buffer_placement = ", TO_PLACE},
};

/* An attribute of ATTRS at the cursor (inside an attribute dictionary, where a key begins):
 * noted in o, the cursor past its key; false when none is. */
static int attr_at(struct sh_translator *t, struct op_text *o, bool *found)
{
    struct cursor *c = &t->c;
    char before = c->i > 0 ? c->s[c->i - 1] : ' ';

    *found = false;
    if (before != ' ' && before != '{' && before != ',')
        return ERR_OK;
    for (size_t k = 0; k < sizeof(ATTRS) / sizeof(ATTRS[0]); k++) {
        if (!cursor_lit(c, ATTRS[k].key))
            continue;
        *found = true;
        switch (ATTRS[k].to) {
        case TO_CALLEE:
            return cursor_peek(c) == '@' && o->callee.len == 0 ? sh_symbol(t, &o->callee) : ERR_OK;
        case TO_INDEX:
            if (!cursor_uint(c, &o->index))
                return cursor_fail(c, "expected a tuple index after index =");
            return ERR_OK;
        case TO_MHLO_SH:
            o->mhlo_sh = mark_here(c, c->i);
            return ERR_OK;
        case TO_SDY_SH:
            o->sdy_sh = mark_here(c, c->i);
            return ERR_OK;
        case TO_ALIASES:
            o->aliases = mark_here(c, c->i);
            return ERR_OK;
        case TO_FRONTEND:
            o->frontend = mark_here(c, c->i);
            return ERR_OK;
        case TO_PLACE:
            o->place = mark_here(c, c->i);
            return ERR_OK;
        }
    }
    return ERR_OK;
}

/* Skips the string at the cursor. */
static int skip_string(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    size_t e = sh_string_end(t, c->i);
    if (e == 0)
        return cursor_fail(c, "unterminated string");
    c->i = e;
    return ERR_OK;
}

/* One byte of the op's text at depth and brace (of brackets and braces): what it is noted in
 * o (operands used into ops); the cursor moves past what was read, else *step is set. */
static int scan_at(struct sh_translator *t, const struct sh_stmt *st, struct sh_buf *ops,
                   struct op_text *o, int depth, int brace, bool *step)
{
    struct cursor *c = &t->c;
    char ch = c->s[c->i];
    bool top = depth == 0 && brace == 0, found = false;
    int rc;

    *step = false;
    if (ch == '"')
        return skip_string(t);
    if (ch == '-' && c->i + 1 < c->len && c->s[c->i + 1] == '>') {
        c->i += 2;
        return ERR_OK;
    }
    if (top && o->types.at == 0 && ch == ':' && c->i > 0 && c->s[c->i - 1] == ' ') {
        o->types = mark_here(c, c->i + 1);
    } else if (ch == '%' && brace == 0 && o->types.at == 0 && st->nres > 0) {
        o->nops++;
        return sh_use(t, ops);
    } else if (ch == '@' && o->callee.len == 0 && brace == 0) {
        return sh_symbol(t, &o->callee);
    } else if (top && o->types.at == 0 && ch == '[' && o->nops > 0 && o->index < 0 &&
               c->i + 1 < c->len && c->s[c->i + 1] >= '0' && c->s[c->i + 1] <= '9') {
        size_t at = c->i + 1; /* get_tuple_element %t[N] */
        if (!text_uint(c->s, c->len, &at, &o->index))
            return cursor_fail(c, "expected a tuple index");
    } else if (top && o->types.at == 0 && ch == '<' && o->angle.at == 0) {
        o->angle = mark_here(c, c->i);
    } else if (top && cursor_starts(c, "loc(") && o->loc_len == 0) {
        sh_loc_name(t, c->i, &o->loc_off, &o->loc_len);
    } else if ((brace > 0 || depth > 0) && (rc = attr_at(t, o, &found)) != ERR_OK) {
        return rc;
    }
    *step = !found;
    return ERR_OK;
}

static int scan_op(struct sh_translator *t, const struct sh_stmt *st, struct sh_buf *ops,
                   struct op_text *o)
{
    struct cursor *c = &t->c;
    int depth = 0, brace = 0, rc;

    memset(o, 0, sizeof(*o));
    o->index = -1;
    while (c->i < c->len) { /* operands up to the type separator */
        char ch = c->s[c->i];
        bool step;
        if (ch == '\n' && depth == 0 && brace == 0)
            break;
        if ((rc = scan_at(t, st, ops, o, depth, brace, &step)) != ERR_OK)
            return rc;
        if (!step)
            continue;
        depth += ch == '(' || ch == '[' || ch == '<';
        depth -= (ch == ')' || ch == ']' || ch == '>') && depth > 0;
        brace += ch == '{';
        brace -= ch == '}' && brace > 0;
        cursor_next(c);
    }
    return ERR_OK;
}

/* The types after the separator: the results follow the last "->" of the type part; in
 * select's pretty form (no "->"), the predicate's type comes first. *shape is "S", or
 * "(S, ..)" when as_tuple. */
static int result_types(struct sh_translator *t, const struct op_text *o, const struct sh_op *op,
                        bool as_tuple, struct sh_buf *shape, uint32_t *n)
{
    struct cursor *c = &t->c, end = *c; /* read from the separator, then back here */
    bool arrow = false;
    int rc = ERR_OK;

    go_to(c, o->types);
    for (size_t q = o->types.at; q < end.i && c->s[q] != '\n'; q++)
        if (c->s[q] == '-' && q + 1 < c->len && c->s[q + 1] == '>') {
            c->i = q + 2;
            arrow = true;
        }
    if (!arrow && op->kind == SH_OP_SELECT) { /* pred_type, result_type */
        struct sh_buf pred = {0};
        bool dyn = t->dyn_ok;
        t->dyn_ok = t->bind != NULL; /* the predicate's type is not kept (nor its ? hinted) */
        rc = sh_type(t, &pred);
        t->dyn_ok = dyn;
        sh_buf_free(&pred);
        cursor_skip_blanks(c);
        if (rc == ERR_OK && !cursor_accept(c, ','))
            rc = cursor_fail(c, "expected ', ' and the result type after the predicate's");
    }
    if (rc == ERR_OK)
        rc = sh_type_list(t, shape, as_tuple, n);
    *c = end;
    return rc;
}

/* A string attribute's text at m ('"' there) copied into b as XLA's parser reads a string
 * (sh_put_unescaped). */
static int put_string_at(struct sh_translator *t, struct sh_buf *b, struct mark m)
{
    struct cursor *c = &t->c;
    size_t e = sh_string_end(t, m.at);

    if (m.at >= c->len || c->s[m.at] != '"' || e == 0) {
        go_to(c, m);
        return cursor_fail(c, "expected a string");
    }
    return sh_put_unescaped(t, b, m.at + 1, e - 1);
}

/* An index list "[1, 2]" at the cursor written "{1,2}" into b. */
static int index_list(struct sh_translator *t, struct sh_buf *b)
{
    struct cursor *c = &t->c;
    int rc;

    if (!cursor_accept(c, '['))
        return cursor_fail(c, "expected '[' and a list of indices");
    if ((rc = sh_buf_add(t, b, "{", 1)) != ERR_OK)
        return rc;
    for (int64_t k = 0, v; cursor_skip_blanks(c), cursor_uint(c, &v); k++) {
        if ((rc = sh_buf_printf(t, b, "%s%lld", k > 0 ? "," : "", (long long)v)) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        if (!cursor_accept(c, ','))
            break;
    }
    if (!cursor_accept(c, ']'))
        return cursor_fail(c, "expected ']' to close the indices");
    return sh_buf_add(t, b, "}", 1);
}

/* One #stablehlo.output_operand_alias<output_tuple_indices = [..], operand_index = N,
 * operand_tuple_indices = [..]> (just past its '<') as "{out}: (N, {opnd})": the result
 * element written into operand N's buffer (stablehlo/dialect/StablehloAttrs.td). */
static int one_alias(struct sh_translator *t, uint32_t nops, struct sh_buf *b)
{
    struct cursor *c = &t->c;
    struct sh_buf out = {0}, opnd = {0};
    int64_t operand = -1;
    int rc = ERR_OK;

    while (rc == ERR_OK && (cursor_skip_blanks(c), cursor_peek(c) != '>')) {
        if (cursor_lit(c, "output_tuple_indices = "))
            rc = index_list(t, &out);
        else if (cursor_lit(c, "operand_tuple_indices = "))
            rc = index_list(t, &opnd);
        else if (!cursor_lit(c, "operand_index = ") || !cursor_uint(c, &operand))
            rc = cursor_fail(c, "expected output_tuple_indices, operand_index or "
                                "operand_tuple_indices");
        cursor_skip_blanks(c);
        (void)cursor_accept(c, ',');
    }
    if (rc == ERR_OK && (operand < 0 || operand >= (int64_t)nops))
        rc = cursor_fail(c, "the alias names operand %lld of %u", (long long)operand, nops);
    if (rc == ERR_OK)
        rc = sh_buf_printf(t, b, "%s: (%lld, %s)", out.p != NULL ? out.p : "{}", (long long)operand,
                           opnd.p != NULL ? opnd.p : "{}");
    c->i += rc == ERR_OK; /* '>' */
    sh_buf_free(&out);
    sh_buf_free(&opnd);
    return rc;
}

/* ", output_to_operand_aliasing={..}" of a custom call's output_operand_aliases = [..]. */
static int put_aliases(struct sh_translator *t, const struct op_text *o, struct sh_buf *b)
{
    struct cursor *c = &t->c, end = *c;
    static const char alias[] = "#stablehlo.output_operand_alias<";
    int rc;

    if (o->aliases.at == 0)
        return ERR_OK;
    go_to(c, o->aliases);
    if (!cursor_accept(c, '['))
        return cursor_fail(c, "expected '[' and the output operand aliases");
    if ((rc = sh_buf_add(t, b, ", output_to_operand_aliasing={", 30)) != ERR_OK)
        return rc;
    for (uint32_t k = 0; rc == ERR_OK && (cursor_skip_blanks(c), cursor_lit(c, alias)); k++) {
        if ((k > 0 && (rc = sh_buf_add(t, b, ", ", 2)) != ERR_OK) ||
            (rc = one_alias(t, o->nops, b)) != ERR_OK)
            break;
        cursor_skip_blanks(c);
        (void)cursor_accept(c, ',');
    }
    if (rc == ERR_OK && !cursor_accept(c, ']'))
        rc = cursor_fail(c, "expected ']' to close the output operand aliases");
    if (rc == ERR_OK) {
        rc = sh_buf_add(t, b, "}", 1);
        *c = end;
    }
    return rc;
}

/* Skips an attribute's value at the cursor, to the ',' or '}' after it. */
static int skip_value(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    while (c->i < c->len && c->s[c->i] != ',' && c->s[c->i] != '}' && c->s[c->i] != '\n') {
        char ch = c->s[c->i];
        int rc = ERR_OK;
        if (ch == '"')
            rc = skip_string(t);
        else if (ch == '{' || ch == '[' || ch == '<' || ch == '(')
            rc = sh_skip_group(c);
        else
            c->i++;
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* ", frontend_attributes={k=\"v\", ..}" of mhlo.frontend_attributes = {k = "v", ..}: its
 * string entries (XLA's memory placement reads _xla_buffer_placement from it). */
static int put_frontend(struct sh_translator *t, const struct op_text *o, struct sh_buf *b)
{
    struct cursor *c = &t->c, end = *c;
    uint32_t n = 0;
    int rc = ERR_OK;

    if (o->frontend.at == 0)
        return ERR_OK;
    go_to(c, o->frontend);
    if (!cursor_accept(c, '{'))
        return cursor_fail(c, "expected '{' and the frontend attributes");
    while (rc == ERR_OK && (cursor_skip_blanks(c), cursor_peek(c) != '}')) {
        size_t k = c->i, klen = cursor_span(c, ident_ch);
        cursor_skip_blanks(c);
        if (klen == 0 || !cursor_accept(c, '='))
            return cursor_fail(c, "expected name = value in the frontend attributes");
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '"' &&
            ((rc = sh_buf_str(t, b, n++ == 0 ? ", frontend_attributes={" : ", ")) != ERR_OK ||
             (rc = sh_buf_add(t, b, c->s + k, klen)) != ERR_OK ||
             (rc = sh_buf_add(t, b, "=\"", 2)) != ERR_OK ||
             (rc = put_string_at(t, b, mark_here(c, c->i))) != ERR_OK ||
             (rc = sh_buf_add(t, b, "\"", 1)) != ERR_OK))
            return rc;
        if ((rc = skip_value(t)) == ERR_OK && !cursor_accept(c, ',') && cursor_peek(c) != '}')
            return cursor_fail(c, "expected ',' or '}' in the frontend attributes");
    }
    if (n > 0 && (rc = sh_buf_add(t, b, "}", 1)) != ERR_OK)
        return rc;
    *c = end;
    return ERR_OK;
}

/* ", custom_call_target=\"T\"": the @target of a custom_call, the op's name for one HLO has
 * no opcode for, Sharding for Shardy's constraint. */
static int put_target(struct sh_translator *t, const struct sh_stmt *st, const struct sh_op *op,
                      const struct op_text *o, struct sh_buf *b)
{
    const struct cursor *c = &t->c;
    int rc = sh_buf_add(t, b, ", custom_call_target=\"", 22);

    if (rc != ERR_OK)
        return rc;
    if (op->kind == SH_OP_SHARDING)
        rc = sh_buf_add(t, b, "Sharding", 8);
    else if (op->kind == SH_OP_FOREIGN)
        rc = sh_buf_add(t, b, c->s + st->op_off, st->op_len);
    else if (o->callee.len == 0)
        return cursor_fail_at(c->e, st->line, st->col, "expected the custom call's @target");
    else if (!o->callee.quoted)
        rc = sh_buf_add(t, b, c->s + o->callee.off, o->callee.len);
    else
        rc = put_string_at(t, b, mark_here(c, o->callee.off - 1));
    return rc == ERR_OK ? sh_buf_add(t, b, "\"", 1) : rc;
}

/* What the op's kind adds after "R = S opcode(ops)": the callee, the index, the target. */
static int put_kind(struct sh_translator *t, const struct sh_stmt *st, const struct sh_op *op,
                    const struct op_text *o, const char *shape, struct sh_buf *b)
{
    struct cursor *c = &t->c;
    char name[256];
    int rc;

    switch (op->kind) {
    case SH_OP_CALL:
    case SH_OP_COMPOSITE:
        if (o->callee.len == 0 || !sh_sym_name(t, &o->callee, name, sizeof(name)))
            return cursor_fail_at(c->e, st->line, st->col, "expected the %s @function",
                                  op->kind == SH_OP_CALL ? "called" : "composite's decomposition");
        return sh_buf_printf(t, b, ", to_apply=%s", name);
    case SH_OP_GET_TUPLE_ELEMENT:
        if (o->index < 0 || o->index >= SH_MAX_RESULTS)
            return cursor_fail_at(c->e, st->line, st->col, "expected the tuple index [N]");
        return sh_buf_printf(t, b, ", index=%lld", (long long)o->index);
    case SH_OP_SHARDING: {
        struct cursor end = *c;
        if (o->angle.at == 0)
            return cursor_fail_at(c->e, st->line, st->col, "expected the sharding <@mesh, [..]>");
        go_to(c, o->angle);
        if ((rc = put_target(t, st, op, o, b)) == ERR_OK &&
            (rc = sh_buf_add(t, b, ", sharding=", 11)) == ERR_OK)
            rc = sh_sdy_sharding(t, sh_rank_of(shape), b);
        *c = end;
        return rc;
    }
    case SH_OP_CUSTOM_CALL:
        if ((rc = put_target(t, st, op, o, b)) != ERR_OK)
            return rc;
        return put_aliases(t, o, b);
    case SH_OP_FOREIGN:
        return put_target(t, st, op, o, b);
    default:
        return ERR_OK;
    }
}

/* ", sharding=.." of the op's own results: mhlo.sharding = "{..}" (HLO's text) or
 * sdy.sharding = #sdy.sharding_per_value<[<@mesh, [..]>, ..]>. */
static int put_sharding(struct sh_translator *t, const struct op_text *o, const char *shape,
                        bool tuple, uint32_t n, struct sh_buf *b)
{
    struct cursor *c = &t->c, end = *c;
    int rc = ERR_OK;

    if (o->mhlo_sh.at == 0 && o->sdy_sh.at == 0)
        return ERR_OK;
    if ((rc = sh_buf_add(t, b, ", sharding=", 11)) != ERR_OK)
        return rc;
    if (o->mhlo_sh.at != 0)
        return put_string_at(t, b, o->mhlo_sh);
    go_to(c, o->sdy_sh);
    if (!cursor_accept(c, '<'))
        rc = cursor_fail(c, "expected '<' after #sdy.sharding_per_value");
    if (rc == ERR_OK && (rc = sh_sdy_list(t, shape, tuple, n, b)) == ERR_OK &&
        !cursor_accept(c, '>'))
        rc = cursor_fail(c, "expected '>' to close the sharding_per_value");
    *c = end;
    return rc;
}

/* Whether the custom call's @target is callee[0..n). */
static bool target_is(const struct sh_translator *t, const struct op_text *o, const char *callee)
{
    size_t n = strlen(callee);
    return o->callee.len == n && memcmp(t->c.s + o->callee.off, callee, n) == 0;
}

/* A custom call XLA erases on import, its one operand passed through: Shardy's
 * xla.sdy.FuncResultSharding only carries a function result's sharding
 * (xla/service/spmd/shardy/constants.h kFuncResultShardingTargetName; the round-trip import
 * moves it onto the result and deletes the call, ShardingRemover too). Written as a
 * bitcast, which defines no buffer of its own (hlo_model.h). */
static const struct sh_op PASS_THROUGH = {"", "bitcast", SH_OP_PLAIN};

/* Whether the op is JAX's memory placement of a value in host memory: custom_call
 * @annotate_device_placement with _xla_buffer_placement = "pinned_host" or "unpinned_host"
 * (jax/_src/interpreters/mlir.py wrap_with_memory_kind). XLA makes it a MoveToHost
 * (xla/hlo/transforms/convert_memory_placement_to_internal_annotations.cc), whose result
 * its host offloader puts in memory space S(5) (xla/service/host_offloader.cc). */
static bool to_host(const struct sh_translator *t, const struct op_text *o)
{
    const char *s = t->c.s;
    size_t at = o->place.at, left = t->c.len - at;

    if (o->place.at == 0 || !target_is(t, o, "annotate_device_placement"))
        return false;
    return (left >= 13 && memcmp(s + at, "\"pinned_host\"", 13) == 0) ||
           (left >= 15 && memcmp(s + at, "\"unpinned_host\"", 15) == 0);
}

/* R = SHAPE opcode(ops), the kind's attributes, the sharding, the op_name; then, for a
 * tuple-shaped instruction, its elements' reads. */
static int put_op(struct sh_translator *t, const struct sh_stmt *st, const struct sh_op *op,
                  const struct op_text *o, const char *ops, const char *shape, bool tuple,
                  uint32_t n)
{
    struct sh_buf *b = sh_text(t);
    int rc;

    if ((rc = sh_put_res(t, b, st, " = ")) != ERR_OK || (rc = sh_buf_str(t, b, shape)) != ERR_OK ||
        (rc = sh_buf_printf(t, b, " %s(", op->hlo)) != ERR_OK ||
        (rc = sh_buf_str(t, b, op->kind == SH_OP_CONSTANT ? "0" : ops)) != ERR_OK ||
        (rc = sh_buf_add(t, b, ")", 1)) != ERR_OK ||
        (rc = put_kind(t, st, op, o, shape, b)) != ERR_OK ||
        (rc = put_sharding(t, o, shape, tuple, n, b)) != ERR_OK ||
        (rc = put_frontend(t, o, b)) != ERR_OK ||
        (rc = sh_put_op_name(t, b, o->loc_off, o->loc_len)) != ERR_OK ||
        (rc = sh_buf_add(t, b, "\n", 1)) != ERR_OK)
        return rc;
    return tuple ? sh_elements(t, st, shape, n) : ERR_OK;
}

/* The non-compact pretty reduce's region, on the lines after the op (stablehlo's
 * AssemblyFormat.cpp printReduceOp): " reducer(%a: T, %b: T) (%c: T, %d: T)  { .. }". Its
 * ops are scalar: skipped, as every region of an op that is not a while, case or if. */
static int reducer(struct sh_translator *t)
{
    struct cursor *c = &t->c, at = *c;
    int rc;

    sh_skip_nl(c);
    if (!cursor_lit(c, "reducer")) {
        *c = at;
        return ERR_OK;
    }
    while (cursor_skip_blanks(c), cursor_peek(c) == '(')
        if ((rc = sh_skip_group(c)) != ERR_OK)
            return rc;
    if (cursor_peek(c) != '{')
        return cursor_fail(c, "expected '{' to open the reducer region");
    return sh_skip_group(c);
}

/* A call's operands recorded for its callee, its results' shapes hinted (stablehlo_refine.c). */
static int refine_call(struct sh_translator *t, const struct sh_stmt *st, const struct op_text *o)
{
    char name[256];
    if (o->callee.len == 0 || !sh_sym_name(t, &o->callee, name, sizeof(name)))
        return ERR_OK; /* put_kind says what is wrong */
    return sh_refine_call(t, st, name);
}

int sh_generic_op(struct sh_translator *t, const struct sh_stmt *st)
{
    struct cursor *c = &t->c;
    const struct sh_op *op = sh_op_find(c->s + st->op_off, st->op_len);
    struct sh_buf ops = {0}, shape = {0};
    uint32_t ntypes = 0;
    struct op_text o;
    int rc;

    t->nopv = 0;
    t->uses.n = 0;
    if ((rc = scan_op(t, st, &ops, &o)) != ERR_OK ||
        (sh_op_is(t, st, "reduce") && (rc = reducer(t)) != ERR_OK))
        goto out;
    if (st->nres == 0)
        goto out; /* no value defined: nothing to plan */
    if (o.types.at == 0) {
        rc = cursor_fail_at(c->e, st->line, st->col, "expected ': type' after the operation");
        goto out;
    }
    /* a call's result is its callee's ROOT tuple */
    bool tuple = st->nres > 1 || op->kind == SH_OP_CALL || op->kind == SH_OP_COMPOSITE;
    if (op->kind == SH_OP_CUSTOM_CALL && !tuple && o.nops == 1 &&
        target_is(t, &o, "xla.sdy.FuncResultSharding"))
        op = &PASS_THROUGH;
    sh_refine_op(t, st, st->op_off, o.types.at);
    if (op->kind == SH_OP_CALL && t->rs != NULL && (rc = refine_call(t, st, &o)) != ERR_OK)
        goto out;
    rc = result_types(t, &o, op, tuple, &shape, &ntypes);
    t->hint = NULL;
    t->refine_st = NULL;
    if (rc != ERR_OK || (op->kind == SH_OP_CUSTOM_CALL && !tuple && to_host(t, &o) &&
                         (rc = sh_host_layout(t, &shape)) != ERR_OK))
        goto out;
    if (ntypes != (st->nres > 1 ? st->nres : 1)) {
        rc = cursor_fail_at(c->e, st->line, st->col, "%u results but %u result types", st->nres,
                            ntypes);
        goto out;
    }
    if ((rc = put_op(t, st, op, &o, ops.p, shape.p, tuple, ntypes)) == ERR_OK &&
        (rc = sh_define(t, st, tuple, shape.p, ntypes)) == ERR_OK && !tuple)
        rc = sh_refine_fold(t, st, st->op_off, o.types.at, shape.p);
out:
    sh_buf_free(&ops);
    sh_buf_free(&shape);
    return rc;
}

/* The shape of the value returned k-th (t->last_use) appended to the tuple shape *vals. */
static int returned_shape(struct sh_translator *t, struct sh_buf *vals, uint32_t k)
{
    const struct sh_value *x = sh_value_at(t, t->last_use);
    int rc = sh_buf_add(t, vals, k == 0 ? "(" : ", ", k == 0 ? 1 : 2);
    return rc == ERR_OK ? sh_buf_add(t, vals, t->shapes.p + x->shape_off, x->shape_len) : rc;
}

/*
 * return %a, %b : T, T  or  "stablehlo.return"(%a, %b) : (T, T) -> ()  as
 * ROOT #ret = (S, S) tuple(a, b): the region's results alias the values returned.
 */
int sh_terminator(struct sh_translator *t, const struct sh_stmt *st)
{
    struct cursor *c = &t->c;
    struct sh_buf ops = {0}, shape = {0}, vals = {0};
    uint32_t n = 0, nvals = 0;
    bool paren;
    int rc = ERR_OK;

    t->uses.n = 0;
    cursor_skip_blanks(c);
    paren = cursor_peek(c) == '(';
    if (paren)
        c->i++;
    for (;;) {
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '%')
            break;
        if ((rc = sh_use(t, &ops)) != ERR_OK)
            goto out;
        if (t->bind != NULL && (rc = returned_shape(t, &vals, nvals)) != ERR_OK)
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
        t->dyn_ok = t->bind != NULL; /* the values' own shapes replace a ? */
        rc = sh_type_list(t, &shape, true, &n);
        t->dyn_ok = false;
        if (rc != ERR_OK)
            goto out;
        if (shape.p != NULL && strchr(shape.p, '?') != NULL) {
            if ((rc = sh_buf_add(t, &vals, ")", 1)) != ERR_OK)
                goto out;
            free(shape.p);
            shape = vals;
            vals = (struct sh_buf){0};
        }
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
    if (t->depth == 1 && (rc = sh_refine_return(t)) != ERR_OK) /* a function's results */
        goto out;
    struct sh_buf *b = sh_text(t);
    if ((rc = sh_buf_add(t, b, "  ROOT #ret = ", 14)) != ERR_OK ||
        (rc = sh_buf_str(t, b, shape.p)) != ERR_OK ||
        (rc = sh_buf_add(t, b, " tuple(", 7)) != ERR_OK || (rc = sh_buf_str(t, b, ops.p)) != ERR_OK)
        goto out;
    if ((rc = sh_buf_add(t, b, ")", 1)) != ERR_OK)
        goto out;
    if (t->depth == 1 && t->ret_sharding.n > 0 && /* the function's results */
        (rc = sh_buf_add(t, b, t->ret_sharding.p, t->ret_sharding.n)) != ERR_OK)
        goto out;
    rc = sh_buf_add(t, b, "\n", 1);
out:
    free(ops.p);
    free(shape.p);
    free(vals.p);
    return rc;
}
