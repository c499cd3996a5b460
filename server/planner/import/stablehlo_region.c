/*
 * stablehlo_region.c - the ops with regions of the StableHLO translator (stablehlo_int.h):
 * while (pretty and generic), case and if, each region an HLO computation of its own, the
 * values it captures its parameters and the owning op's extra operands.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

int sh_open_region(struct sh_translator *t, const char *name)
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
        (rc = sh_buf_str(t, &r->text, shape)) != ERR_OK ||
        (rc = sh_buf_add(t, &r->text, " parameter(0)\n", 14)) != ERR_OK)
        return rc;
    r->nparams = 1;
    for (uint32_t k = 0; k < n; k++) {
        size_t len;
        const char *e = sh_next_elem(&p, &len);
        if ((rc = sh_buf_add(t, &r->text, "  ", 2)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->text, c->s + args[2 * k], args[2 * k + 1])) != ERR_OK ||
            (rc = sh_buf_add(t, &r->text, " = ", 3)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->text, e, len)) != ERR_OK ||
            (rc = sh_buf_printf(t, &r->text, " get-tuple-element(#param), index=%u\n", k)) !=
                ERR_OK ||
            (rc = sh_define_value(t, args[2 * k], args[2 * k + 1], e, len)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* Closes the current region: its computation (header, captured parameters, body) is
 * appended to the finished ones, and its captures to *caps (the owning op reads them). */
int sh_close_region(struct sh_translator *t, struct vec *caps)
{
    struct sh_region *r = &t->regions[t->depth - 1];
    const uint32_t *rcaps = r->caps.data;
    int rc = ERR_OK;

    for (size_t k = 0; k < r->caps.n && rc == ERR_OK; k++)
        rc = sh_push_u32(t, caps, rcaps[k]);
    if (rc == ERR_OK && (rc = sh_buf_str(t, &t->out, r->name)) == ERR_OK &&
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
            (rc = sh_put_value(t, b, sh_value_at(t, caps[k]))) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* The computation name of an op's region: FUNC.R.KIND for an op of the function body;
 * FUNC.R.KIND.ID (the region's unique number) inside a region or for a long R, where
 * names of sibling regions repeat. */
void sh_region_name(const struct sh_translator *t, const struct sh_stmt *st, const char *kind,
                    char *out, size_t cap)
{
    const struct cursor *c = &t->c;
    if (t->depth > 1 || st->res_len > 200)
        snprintf(out, cap, "%s.%.*s.%s.%u", t->fname, (int)(st->res_len > 200 ? 200 : st->res_len),
                 c->s + st->res_off, kind, t->next_region + 1);
    else
        snprintf(out, cap, "%s.%.*s.%s", t->fname, (int)st->res_len, c->s + st->res_off, kind);
}

/* A %name at the cursor appended to args (offset, length pairs; *n of them, at most
 * SH_MAX_RESULTS); what names what was expected instead. */
static int arg_name(struct sh_translator *t, uint32_t *args, uint32_t *n, const char *what)
{
    struct cursor *c = &t->c;
    if (cursor_peek(c) != '%' || *n == SH_MAX_RESULTS)
        return cursor_fail(c, "expected %s", what);
    c->i++;
    args[2 * *n] = (uint32_t)c->i;
    args[2 * *n + 1] = (uint32_t)cursor_span(c, ident_ch);
    ++*n;
    return ERR_OK;
}

/* The while's header "(%a = %x, ...) : T, ...": the loop variables' names (offset, length
 * pairs in args), their initial values (HLO operands in init) and the state's tuple shape. */
static int while_head(struct sh_translator *t, const struct sh_stmt *st, uint32_t *args,
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
        if ((rc = arg_name(t, args, nargs, "%name = %value in the while's operands")) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        if (!cursor_accept(c, '='))
            return cursor_fail(c, "expected '=' in the while's operands");
        cursor_skip_blanks(c);
        if (cursor_peek(c) != '%')
            return cursor_fail(c, "expected the loop variable's initial value");
        if ((rc = sh_use(t, init)) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        (void)cursor_accept(c, ',');
    }
    c->i++;
    cursor_skip_blanks(c);
    if (!cursor_accept(c, ':'))
        return cursor_fail(c, "expected ': types' after the while's operands");
    if ((rc = sh_type_list(t, shape, true, &ntypes)) != ERR_OK)
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

static int emit_owner(struct sh_translator *t, const struct sh_stmt *st, struct owner *w)
{
    struct cursor *c = &t->c;
    struct sh_buf *b = sh_text(t);
    bool loop = strcmp(w->kind, "while") == 0;
    int rc;

    if (loop &&
        ((rc = sh_put_res(t, b, st, "#init = ")) != ERR_OK ||
         (rc = sh_buf_str(t, b, w->shape)) != ERR_OK ||
         (rc = sh_buf_add(t, b, " tuple(", 7)) != ERR_OK ||
         (rc = sh_buf_str(t, b, w->ops)) != ERR_OK || (rc = sh_buf_add(t, b, ")\n", 2)) != ERR_OK))
        return rc;
    if ((rc = sh_put_res(t, b, st, " = ")) != ERR_OK ||
        (rc = sh_buf_str(t, b, w->shape)) != ERR_OK ||
        (rc = sh_buf_str(t, b, loop ? " while(" : " conditional(")) != ERR_OK)
        return rc;
    if (loop && (rc = sh_buf_add(t, b, c->s + st->res_off, st->res_len)) == ERR_OK)
        rc = sh_buf_add(t, b, "#init", 5);
    else if (!loop)
        rc = sh_buf_str(t, b, w->ops);
    if (rc != ERR_OK || (rc = put_caps(t, b, w->caps.data, w->caps.n)) != ERR_OK ||
        (rc = sh_buf_add(t, b, ")", 1)) != ERR_OK)
        return rc;
    /* the region names: "A, B" in w->names */
    const char *n0 = w->names.p, *comma = strchr(n0, ',');
    if (loop || strcmp(w->kind, "if") == 0) {
        if ((rc = sh_buf_str(t, b, loop ? ", condition=" : ", true_computation=")) != ERR_OK ||
            (rc = sh_buf_add(t, b, n0, (size_t)(comma - n0))) != ERR_OK ||
            (rc = sh_buf_str(t, b, loop ? ", body=" : ", false_computation=")) != ERR_OK ||
            (rc = sh_buf_str(t, b, comma + 2)) != ERR_OK)
            return rc;
    } else if ((rc = sh_buf_add(t, b, ", branch_computations={", 23)) != ERR_OK ||
               (rc = sh_buf_str(t, b, n0)) != ERR_OK || (rc = sh_buf_add(t, b, "}", 1)) != ERR_OK) {
        return rc;
    }
    if ((rc = sh_put_op_name(t, b, w->loc_off, w->loc_len)) != ERR_OK ||
        (rc = sh_buf_add(t, b, "\n", 1)) != ERR_OK ||
        (rc = sh_elements(t, st, w->shape, w->nres)) != ERR_OK)
        return rc;
    return sh_define(t, st, true, w->shape, w->nres);
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
int sh_while_op(struct sh_translator *t, const struct sh_stmt *st)
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
        sh_skip_nl(c);
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
        sh_region_name(t, st, part == 0 ? "cond" : "body", name, sizeof(name));
        if ((rc = sh_open_region(t, name)) != ERR_OK ||
            (rc = state_params(t, shape.p, args, nargs)) != ERR_OK ||
            (rc = t->statements(t)) != ERR_OK || (rc = sh_close_region(t, &w.caps)) != ERR_OK ||
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

int sh_arg_list(struct sh_translator *t, uint32_t *args, uint32_t *nargs, struct sh_buf *shape)
{
    struct cursor *c = &t->c;
    int rc;

    *nargs = 0;
    if ((rc = sh_buf_add(t, shape, "(", 1)) != ERR_OK)
        return rc;
    c->i++; /* '(' */
    for (;;) {
        sh_skip_nl(c);
        if (cursor_peek(c) == ')')
            break;
        if ((rc = arg_name(t, args, nargs, "an argument %name: type")) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        if (!cursor_accept(c, ':'))
            return cursor_fail(c, "expected ':' after the argument");
        if ((*nargs > 1 && (rc = sh_buf_add(t, shape, ", ", 2)) != ERR_OK) ||
            (rc = sh_type(t, shape)) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        if (cursor_starts(c, "loc(") && (c->i += 3, rc = sh_skip_group(c)) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        (void)cursor_accept(c, ',');
    }
    c->i++;
    return sh_buf_add(t, shape, ")", 1);
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
    if (cursor_peek(c) == '(')
        rc = sh_arg_list(t, args, nargs, shape);
    else
        rc = sh_buf_add(t, shape, "()", 2);
    if (rc != ERR_OK)
        return rc;
    cursor_skip_blanks(c);
    if (!cursor_accept(c, ':'))
        return cursor_fail(c, "expected ':' after the block's arguments");
    return ERR_OK;
}

int sh_region_types(struct sh_translator *t, struct sh_buf *shape, uint32_t *n,
                    struct sh_buf *inputs)
{
    struct cursor *c = &t->c;
    struct sh_buf first = {0};
    int rc;

    cursor_skip_blanks(c);
    if (!cursor_accept(c, ':'))
        return cursor_fail(c, "expected ': types' after the regions");
    if ((rc = sh_type_list(t, &first, true, n)) != ERR_OK)
        goto out;
    cursor_skip_blanks(c);
    if (cursor_starts(c, "->")) {
        c->i += 2;
        rc = sh_type_list(t, shape, true, n);
    } else {
        rc = sh_buf_add(t, shape, first.p, first.n);
    }
    if (rc == ERR_OK && inputs != NULL) {
        *inputs = first;
        first = (struct sh_buf){0};
    }
out:
    free(first.p);
    return rc;
}

int sh_region_operands(struct sh_translator *t, struct sh_buf *ops, uint32_t *n)
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
        if ((rc = sh_use(t, ops)) != ERR_OK)
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
static int one_region(struct sh_translator *t, const struct sh_stmt *st, struct owner *w,
                      struct loop_args *la)
{
    struct cursor *c = &t->c;
    char name[600], what[32];
    int rc;

    sh_skip_nl(c);
    if (!cursor_accept(c, '{'))
        return cursor_fail(c, "expected '{' to open a region");
    if (strcmp(w->kind, "while") == 0)
        snprintf(what, sizeof(what), "%s", w->nregions == 0 ? "cond" : "body");
    else if (strcmp(w->kind, "if") == 0)
        snprintf(what, sizeof(what), "%s", w->nregions == 0 ? "true" : "false");
    else
        snprintf(what, sizeof(what), "branch%u", w->nregions);
    sh_region_name(t, st, what, name, sizeof(name));
    if ((rc = sh_open_region(t, name)) != ERR_OK)
        return rc;
    sh_skip_nl(c);
    if ((rc = region_args(t, w, la)) != ERR_OK || (rc = t->statements(t)) != ERR_OK)
        return rc;
    c->i++; /* '}' */
    if ((rc = sh_close_region(t, &w->caps)) != ERR_OK ||
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
int sh_region_op(struct sh_translator *t, const struct sh_stmt *st, const char *kind)
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
    if ((rc = sh_region_operands(t, &ops, &nops)) != ERR_OK)
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
        sh_skip_nl(c);
        if (cursor_accept(c, ','))
            continue;
        if (!cursor_accept(c, ')')) {
            rc = cursor_fail(c, "expected ',' or ')' after a region");
            goto out;
        }
        break;
    }
    cursor_skip_blanks(c);
    if (cursor_peek(c) == '{' && (rc = sh_skip_group(c)) != ERR_OK) /* attributes */
        goto out;
    if ((rc = sh_region_types(t, &res, &ntypes, NULL)) != ERR_OK)
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
