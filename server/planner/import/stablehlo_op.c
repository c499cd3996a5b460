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

/* The HLO opcode of an MLIR op name: after the dialect prefix, '_' written '-'. */
static int opcode(struct sh_translator *t, const struct sh_stmt *st, struct sh_buf *b)
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

/* What a generic op's text holds up to its end (a line end outside brackets and regions):
 * the operands read (appended to ops), the type part, the callee and the loc name. */
struct op_text {
    size_t types_at;              /* just past the type separator " :", 0 when none */
    size_t types_line, types_bol; /* its line, and where that begins */
    uint32_t callee_off, callee_len, loc_off, loc_len;
};

static int scan_op(struct sh_translator *t, const struct sh_stmt *st, struct sh_buf *ops,
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
            if ((rc = sh_use(t, ops)) != ERR_OK)
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

int sh_generic_op(struct sh_translator *t, const struct sh_stmt *st)
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
        rc = sh_type_list(t, &shape, st->nres > 1 || call, &ntypes);
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
    struct sh_buf *b = sh_text(t);
    if ((rc = sh_put_res(t, b, st, " = ")) != ERR_OK ||
        (rc = sh_buf_str(t, b, shape.p)) != ERR_OK || (rc = sh_buf_add(t, b, " ", 1)) != ERR_OK ||
        (rc = sh_buf_str(t, b, code.p)) != ERR_OK || (rc = sh_buf_add(t, b, "(", 1)) != ERR_OK ||
        (rc = sh_buf_str(t, b, ops.p)) != ERR_OK || (rc = sh_buf_add(t, b, ")", 1)) != ERR_OK)
        goto out;
    if (call && ((rc = sh_buf_add(t, b, ", to_apply=", 11)) != ERR_OK ||
                 (rc = sh_buf_add(t, b, c->s + o.callee_off, o.callee_len)) != ERR_OK))
        goto out;
    if ((rc = sh_put_op_name(t, b, o.loc_off, o.loc_len)) != ERR_OK ||
        (rc = sh_buf_add(t, b, "\n", 1)) != ERR_OK)
        goto out;
    if ((st->nres > 1 || call) && (rc = sh_elements(t, st, shape.p, ntypes)) != ERR_OK)
        goto out;
    rc = sh_define(t, st, st->nres > 1 || call, shape.p, ntypes);
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
int sh_terminator(struct sh_translator *t, const struct sh_stmt *st)
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
        if ((rc = sh_use(t, &ops)) != ERR_OK)
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
        if ((rc = sh_type_list(t, &shape, true, &n)) != ERR_OK)
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
    struct sh_buf *b = sh_text(t);
    if ((rc = sh_buf_add(t, b, "  ROOT #ret = ", 14)) != ERR_OK ||
        (rc = sh_buf_str(t, b, shape.p)) != ERR_OK ||
        (rc = sh_buf_add(t, b, " tuple(", 7)) != ERR_OK || (rc = sh_buf_str(t, b, ops.p)) != ERR_OK)
        goto out;
    rc = sh_buf_add(t, b, ")\n", 2);
out:
    free(ops.p);
    free(shape.p);
    return rc;
}
