/*
 * stablehlo_manual.c - Shardy's sdy.manual_computation, what jax's shard_map lowers to, in
 * the StableHLO translator (stablehlo_int.h).
 *
 *   %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"a"}, {}]>]
 *            out_shardings=[<@mesh, [{"a"}, {}]>] manual_axes={"a"}
 *            (%arg1: tensor<1x4xf32>) { .. sdy.return %2 : tensor<1x4xf32> }
 *            : (tensor<2x4xf32>) -> tensor<2x4xf32>
 *
 * (openxla/shardy shardy/dialect/sdy/ir/ops.td, ManualComputationOp, at a0277a83: the body
 * is IsolatedFromAbove; its arguments and results are the operands' and results' local
 * shapes, each dim divided by the manual axes that split it in in_shardings /
 * out_shardings, which must divide it; free axes keep the logical shape inside.)
 *
 * It becomes the HLO XLA's GSPMD partitioner reads for a shard_map (jax's
 * mlir.py wrap_with_full_to_shard_op / wrap_with_shard_to_full_op): each operand through
 * a custom-call SPMDFullToShardShape to its local shape (sharding={manual}), the body a
 * computation FUNC.R.manual called on them, each of its results through a custom-call
 * SPMDShardToFullShape back to the global shape, carrying its out_sharding (every axis), so
 * that it is planned per device. The body's own buffers are per device already.
 *
 *   R#in.0 = f32[1,4] custom-call(0), custom_call_target="SPMDFullToShardShape", ..
 *   R#body = (f32[1,4]) call(R#in.0), to_apply=main.1.manual
 *   R#body.0 = f32[1,4] get-tuple-element(R#body), index=0
 *   R = f32[2,4] custom-call(R#body.0), custom_call_target="SPMDShardToFullShape",
 *       sharding={devices=[2,1]<=[2]}
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

/* What the op's head holds: its operands, where its shardings are, its manual axes and its
 * body's arguments. */
struct manual {
    struct sh_buf ops;     /* the operands' HLO names, ", " between */
    uint32_t nops;         /* and how many */
    struct cursor in, out; /* at in_shardings' and out_shardings' '[' */
    struct sdy_names axes; /* manual_axes */
    uint32_t *args, nargs; /* the body's arguments: (offset, length) pairs */
    struct sh_buf local;   /* their types "(L, ..)" */
    struct sh_buf name;    /* the body's computation */
};

/* "KEY=" at the cursor, then the cursor is left at its value. */
static int key(struct sh_translator *t, const char *k)
{
    struct cursor *c = &t->c;
    cursor_skip_blanks(c);
    if (!cursor_lit(c, k))
        return cursor_fail(c, "expected %s in the manual computation", k);
    cursor_skip_blanks(c);
    return ERR_OK;
}

/* (%a, ..) in_shardings=[..] out_shardings=[..] manual_axes={..} (%x: L, ..) */
static int head(struct sh_translator *t, struct manual *mc)
{
    struct cursor *c = &t->c;
    int rc;

    if ((rc = sh_region_operands(t, &mc->ops, &mc->nops)) != ERR_OK ||
        (rc = key(t, "in_shardings=")) != ERR_OK)
        return rc;
    mc->in = *c;
    if ((rc = sh_skip_group(c)) != ERR_OK || (rc = key(t, "out_shardings=")) != ERR_OK)
        return rc;
    mc->out = *c;
    if ((rc = sh_skip_group(c)) != ERR_OK || (rc = key(t, "manual_axes=")) != ERR_OK ||
        (rc = sh_sdy_axes(t, &mc->axes)) != ERR_OK)
        return rc;
    cursor_skip_blanks(c);
    if (cursor_peek(c) != '(')
        return cursor_fail(c, "expected the body's arguments (%%x: type, ..)");
    if ((rc = sh_arg_list(t, mc->args, &mc->nargs, &mc->local)) != ERR_OK)
        return rc;
    if (mc->nargs != mc->nops)
        return cursor_fail(c, "the body takes %u arguments for %u operands", mc->nargs, mc->nops);
    return ERR_OK;
}

/* The body "{ .. }": a computation whose parameters are its arguments, of their local
 * shapes; isolated from above, it captures nothing. */
static int body(struct sh_translator *t, const struct sh_stmt *st, struct manual *mc)
{
    struct cursor *c = &t->c;
    struct vec caps;
    char name[600];
    const char *p = mc->local.p + 1;
    int rc;

    sh_skip_nl(c);
    if (!cursor_accept(c, '{'))
        return cursor_fail(c, "expected '{' to open the manual computation's body");
    sh_region_name(t, st, "manual", name, sizeof(name));
    if ((rc = sh_buf_str(t, &mc->name, name)) != ERR_OK || (rc = sh_open_region(t, name)) != ERR_OK)
        return rc;
    t->regions[t->depth - 1].isolated = true;
    for (uint32_t k = 0; k < mc->nargs; k++) {
        struct sh_buf *b = sh_text(t);
        size_t len;
        const char *e = sh_next_elem(&p, &len);
        if ((rc = sh_buf_printf(t, b, "  %.*s = ", (int)mc->args[2 * k + 1],
                                c->s + mc->args[2 * k])) != ERR_OK ||
            (rc = sh_buf_add(t, b, e, len)) != ERR_OK ||
            (rc = sh_buf_printf(t, b, " parameter(%u)\n", k)) != ERR_OK ||
            (rc = sh_define_value(t, mc->args[2 * k], mc->args[2 * k + 1], e, len)) != ERR_OK)
            return rc;
    }
    t->regions[t->depth - 1].nparams = mc->nargs;
    if ((rc = t->statements(t)) != ERR_OK)
        return rc;
    c->i++; /* '}' */
    vec_init(&caps, sizeof(uint32_t), 1);
    rc = sh_close_region(t, &caps); /* an isolated region captures nothing */
    vec_free(&caps);
    return rc;
}

/* The operands' global types against the shardings: their local shapes must be the body's
 * arguments'; the results' local shapes (the body's) and HLO shardings. */
static int shapes(struct sh_translator *t, struct manual *mc, const char *inputs,
                  const char *res_types, uint32_t nres, struct sh_buf *local_res,
                  struct sh_buf *sharding)
{
    struct cursor *c = &t->c, end = *c;
    struct sh_buf local_in = {0};
    int rc;

    *c = mc->in;
    rc = sh_sdy_manual(t, inputs, mc->nops, &mc->axes, &local_in, NULL);
    if (rc == ERR_OK && strcmp(local_in.p, mc->local.p) != 0) /* at in_shardings */
        rc = cursor_fail(&mc->in,
                         "the operands %s are %s on one device (manual axes), but the body "
                         "takes %s",
                         inputs, local_in.p, mc->local.p);
    if (rc == ERR_OK) {
        *c = mc->out;
        rc = sh_sdy_manual(t, res_types, nres, &mc->axes, local_res, sharding);
    }
    if (rc == ERR_OK)
        *c = end;
    sh_buf_free(&local_in);
    return rc;
}

/* R#in.k = L custom-call(op), custom_call_target="SPMDFullToShardShape", sharding={manual}
 * for each operand; R#body = (L, ..) call(R#in.0, ..), to_apply=BODY. */
static int put_call(struct sh_translator *t, const struct sh_stmt *st, const struct manual *mc,
                    const char *local_res)
{
    struct cursor *c = &t->c;
    struct sh_buf *b = sh_text(t);
    const char *p = mc->local.p + 1, *op = mc->ops.p != NULL ? mc->ops.p : "";
    int rc;

    for (uint32_t k = 0; k < mc->nops; k++) {
        size_t len, n = strcspn(op, ",");
        const char *e = sh_next_elem(&p, &len);
        if ((rc = sh_buf_printf(t, b, "  %.*s#in.%u = ", (int)st->res_len, c->s + st->res_off,
                                k)) != ERR_OK ||
            (rc = sh_buf_add(t, b, e, len)) != ERR_OK ||
            (rc = sh_buf_add(t, b, " custom-call(", 13)) != ERR_OK ||
            (rc = sh_buf_add(t, b, op, n)) != ERR_OK ||
            (rc = sh_buf_str(t, b,
                             "), custom_call_target=\"SPMDFullToShardShape\", "
                             "sharding={manual}\n")) != ERR_OK)
            return rc;
        op += n + (op[n] == ',' ? 2 : 0);
    }
    if ((rc = sh_put_res(t, b, st, "#body = ")) != ERR_OK ||
        (rc = sh_buf_str(t, b, local_res)) != ERR_OK ||
        (rc = sh_buf_add(t, b, " call(", 6)) != ERR_OK)
        return rc;
    for (uint32_t k = 0; k < mc->nops; k++)
        if ((rc = sh_buf_printf(t, b, "%s%.*s#in.%u", k > 0 ? ", " : "", (int)st->res_len,
                                c->s + st->res_off, k)) != ERR_OK)
            return rc;
    return sh_buf_printf(t, b, "), to_apply=%s\n", mc->name.p);
}

/* R#body.k = L get-tuple-element(R#body), index=k; R (R#k for several) = G custom-call(
 * R#body.k), custom_call_target="SPMDShardToFullShape", sharding=S, op_name. */
static int put_results(struct sh_translator *t, const struct sh_stmt *st, const char *local_res,
                       const char *res_types, uint32_t nres, const char *sharding,
                       const uint32_t *loc)
{
    struct cursor *c = &t->c;
    struct sh_buf *b = sh_text(t);
    const char *lp = local_res + 1, *gp = res_types + 1, *sp = sharding;
    const char *r = c->s + st->res_off;
    int n = (int)st->res_len, rc;

    for (uint32_t k = 0; k < nres; k++) {
        size_t llen, glen, slen = strcspn(sp, "\n");
        const char *le = sh_next_elem(&lp, &llen), *ge = sh_next_elem(&gp, &glen);
        if ((rc = sh_buf_printf(t, b, "  %.*s#body.%u = ", n, r, k)) != ERR_OK ||
            (rc = sh_buf_add(t, b, le, llen)) != ERR_OK ||
            (rc = sh_buf_printf(t, b, " get-tuple-element(%.*s#body), index=%u\n", n, r, k)) !=
                ERR_OK ||
            (rc = nres > 1 ? sh_buf_printf(t, b, "  %.*s#%u = ", n, r, k)
                           : sh_buf_printf(t, b, "  %.*s = ", n, r)) != ERR_OK ||
            (rc = sh_buf_add(t, b, ge, glen)) != ERR_OK ||
            (rc = sh_buf_printf(t, b,
                                " custom-call(%.*s#body.%u), custom_call_target="
                                "\"SPMDShardToFullShape\", sharding=",
                                n, r, k)) != ERR_OK ||
            (rc = sh_buf_add(t, b, sp, slen)) != ERR_OK ||
            (rc = sh_put_op_name(t, b, loc[0], loc[1])) != ERR_OK ||
            (rc = sh_buf_add(t, b, "\n", 1)) != ERR_OK)
            return rc;
        sp += slen + (sp[slen] == '\n');
    }
    return ERR_OK;
}

int sh_manual_op(struct sh_translator *t, const struct sh_stmt *st)
{
    struct cursor *c = &t->c;
    struct manual mc = {.args = malloc(2 * SH_MAX_RESULTS * sizeof(*mc.args))};
    struct sh_buf res_types = {0}, inputs = {0}, local_res = {0}, sharding = {0};
    uint32_t nres = 0, loc[2] = {0, 0};
    int rc;

    if (mc.args == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory translating StableHLO");
    if ((rc = head(t, &mc)) != ERR_OK || (rc = body(t, st, &mc)) != ERR_OK)
        goto out;
    cursor_skip_blanks(c);
    if (cursor_peek(c) == '{' && (rc = sh_skip_group(c)) != ERR_OK) /* attributes */
        goto out;
    if ((rc = sh_region_types(t, &res_types, &nres, &inputs)) != ERR_OK)
        goto out;
    size_t from = c->i;
    cursor_to_eol(c);
    sh_loc_in(t, from, c->i, &loc[0], &loc[1]);
    if (nres != st->nres) {
        rc = cursor_fail_at(c->e, st->line, st->col, "%u results but %u result types", st->nres,
                            nres);
        goto out;
    }
    if ((rc = shapes(t, &mc, inputs.p, res_types.p, nres, &local_res, &sharding)) != ERR_OK ||
        (rc = put_call(t, st, &mc, local_res.p)) != ERR_OK ||
        (rc = put_results(t, st, local_res.p, res_types.p, nres, sharding.p, loc)) != ERR_OK)
        goto out;
    if (nres == 1) { /* one result: the value is the array, not the tuple */
        const char *p = res_types.p + 1;
        size_t len;
        const char *e = sh_next_elem(&p, &len);
        rc = sh_define_value(t, st->res_off, st->res_len, e, len);
    } else {
        rc = sh_define(t, st, true, res_types.p, nres);
    }
out:
    free(mc.args);
    sh_buf_free(&mc.ops);
    sh_buf_free(&mc.local);
    sh_buf_free(&mc.name);
    sh_buf_free(&res_types);
    sh_buf_free(&inputs);
    sh_buf_free(&local_res);
    sh_buf_free(&sharding);
    return rc;
}
