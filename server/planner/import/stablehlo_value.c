/*
 * stablehlo_value.c - the SSA values of the StableHLO translator (stablehlo_int.h): defined
 * by name in the region that defines them, used by name (a value from an enclosing region
 * captured as a parameter of every region between), and written under their HLO names.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

int sh_grow_err(struct sh_translator *t, int rc)
{
    return err_set(t->c.e, rc, "",
                   rc == ERR_LIMIT ? "StableHLO module too large"
                                   : "out of memory translating StableHLO");
}

/* Names are scoped by region: sibling regions (a while's cond and do) reuse names. Element k
 * of a result group %r:N is its own value (r, k); a plain value is element 0. The scope of a
 * name in the table is the pair. */
static uint64_t scope_of(uint32_t region, uint32_t elem)
{
    return (uint64_t)region << 32 | elem;
}

int sh_push(struct sh_translator *t, struct vec *v, const void *x)
{
    int rc = vec_push(v, x);
    return rc == ERR_OK ? ERR_OK : sh_grow_err(t, rc);
}

struct sh_value *sh_value_at(const struct sh_translator *t, uint32_t v)
{
    return vec_at(&t->values, v);
}

struct names_key sh_value_name(const void *ctx, uint32_t v)
{
    const struct sh_translator *t = ctx;
    const struct sh_value *x = sh_value_at(t, v);

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

/* Defines x (its name, key element and HLO name set) of shape sh[0..shn) in the current
 * region. */
static int define_one(struct sh_translator *t, struct sh_value x, const char *sh, size_t shn)
{
    struct cursor *c = &t->c;
    uint32_t first;
    int rc;

    x.region = t->regions[t->depth - 1].id;
    x.shape_off = (uint32_t)t->shapes.n;
    x.shape_len = (uint32_t)shn;
    /* the table is sized by the values defined, which a few lines can make many of (a
     * while's loop variables, a result group) */
    if ((rc = names_reserve(&t->names, t->values.n + 1)) != ERR_OK)
        return err_set(c->e, rc, "", "out of memory translating StableHLO");
    /* MLIR regions are not isolated from above: a name visible from an enclosing region
     * cannot be defined again inside (and HLO would read two instructions of one name once
     * the outer one is a parameter of the region) */
    for (unsigned d = t->depth; d > 0 && x.elem == 0; d--) {
        if (find_value(t, x.off, x.len, t->regions[d - 1].id, 0) != NAMES_NONE)
            return defined_twice(t, x.off, x.len);
        if (t->regions[d - 1].isolated)
            break;
    }
    if ((rc = sh_buf_keep(t, &t->shapes, sh, shn)) != ERR_OK ||
        (rc = sh_push(t, &t->values, &x)) != ERR_OK)
        return rc;
    if ((rc = names_add(&t->names, (uint32_t)(t->values.n - 1), &first)) != ERR_OK)
        return err_set(c->e, rc, "", "out of memory translating StableHLO");
    return first == NAMES_NONE ? ERR_OK : defined_twice(t, x.off, x.len);
}

int sh_define_value(struct sh_translator *t, uint32_t off, uint32_t len, const char *sh, size_t shn)
{
    return define_one(t, (struct sh_value){.off = off, .len = len}, sh, shn);
}

int sh_define(struct sh_translator *t, const struct sh_stmt *st, bool tuple, const char *shape,
              uint32_t n)
{
    const char *p;
    if (shape == NULL) /* no type written: sh_type_list failed before */
        shape = "()";
    p = shape + 1;
    if (!tuple)
        return define_one(t, (struct sh_value){.off = st->res_off, .len = st->res_len}, shape,
                          strlen(shape));
    for (uint32_t k = 0; k < n; k++) {
        size_t el;
        const char *e = sh_next_elem(&p, &el);
        /* %r:N: (r, k) reads r#k; named results %a, %b: (b, 0) reads a#1 */
        struct sh_value x = {.off = st->names != NULL ? st->names[2 * k] : st->res_off,
                             .len = st->names != NULL ? st->names[2 * k + 1] : st->res_len,
                             .elem = st->names != NULL ? 0 : k,
                             .hoff = st->res_off,
                             .hlen = st->res_len,
                             .hidx = k,
                             .tuple = true};
        int rc = define_one(t, x, e, el);
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

int sh_put_value(struct sh_translator *t, struct sh_buf *b, const struct sh_value *v)
{
    struct cursor *c = &t->c;
    if (!v->tuple)
        return sh_buf_add(t, b, c->s + v->off, v->len);
    int rc = sh_buf_add(t, b, c->s + v->hoff, v->hlen);
    return rc == ERR_OK ? sh_buf_printf(t, b, "#%u", v->hidx) : rc;
}

int sh_push_u32(struct sh_translator *t, struct vec *v, uint32_t x)
{
    return sh_push(t, v, &x);
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

    for (unsigned d = top; t->regions[d].id != sh_value_at(t, v)->region && d > 0; d--) {
        struct sh_region *r = &t->regions[d];
        const struct sh_value *x = sh_value_at(t, v);
        if (x->cap_id != 0 && d <= x->cap_depth && r->id <= x->cap_id)
            break;
        if ((rc = sh_push_u32(t, &r->caps, v)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->params, "  ", 2)) != ERR_OK ||
            (rc = sh_put_value(t, &r->params, x)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->params, " = ", 3)) != ERR_OK ||
            (rc = sh_buf_add(t, &r->params, t->shapes.p + x->shape_off, x->shape_len)) != ERR_OK ||
            (rc = sh_buf_printf(t, &r->params, " parameter(%u)\n", r->nparams++)) != ERR_OK)
            return rc;
    }
    sh_value_at(t, v)->cap_depth = top;
    sh_value_at(t, v)->cap_id = t->regions[top].id;
    return ERR_OK;
}

int sh_use(struct sh_translator *t, struct sh_buf *ops)
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
    for (unsigned d = t->depth; d > 0 && len > 0 && v == NAMES_NONE; d--) { /* innermost first */
        v = find_value(t, off, len, t->regions[d - 1].id, elem);
        if (t->regions[d - 1].isolated)
            break;
    }
    if (v == NAMES_NONE)
        return cursor_fail_at(c->e, line, col, "%%%.*s is not defined before its use",
                              (int)(c->i - off > 200 ? 200 : c->i - off), c->s + off);
    if (sh_value_at(t, v)->region != t->regions[t->depth - 1].id && (rc = capture(t, v)) != ERR_OK)
        return rc;
    t->last_use = v;
    if (t->rs != NULL && (rc = sh_push_u32(t, &t->uses, v)) != ERR_OK)
        return rc;
    if (t->nopv < SH_REFINE_OPS)
        t->opv[t->nopv] = v;
    t->nopv += t->nopv <= SH_REFINE_OPS; /* past the bound: counted once more, then kept */
    if (ops->n > 0 && (rc = sh_buf_add(t, ops, ", ", 2)) != ERR_OK)
        return rc;
    return sh_put_value(t, ops, sh_value_at(t, v));
}

int sh_put_res(struct sh_translator *t, struct sh_buf *b, const struct sh_stmt *st,
               const char *then)
{
    struct cursor *c = &t->c;
    int rc = sh_buf_add(t, b, "  ", 2);
    if (rc == ERR_OK)
        rc = sh_buf_add(t, b, c->s + st->res_off, st->res_len);
    return rc == ERR_OK ? sh_buf_add(t, b, then, strlen(then)) : rc;
}

int sh_elements(struct sh_translator *t, const struct sh_stmt *st, const char *shapes, uint32_t n)
{
    struct cursor *c = &t->c;
    const char *p = shapes != NULL ? shapes + 1 : "";
    for (uint32_t k = 0; k < n; k++) {
        size_t len;
        const char *e = sh_next_elem(&p, &len);
        struct sh_buf *b = sh_text(t);
        int rc;
        if ((rc = sh_put_res(t, b, st, "")) != ERR_OK ||
            (rc = sh_buf_printf(t, b, "#%u = ", k)) != ERR_OK ||
            (rc = sh_buf_add(t, b, e, len)) != ERR_OK ||
            (rc = sh_buf_add(t, b, " get-tuple-element(", 19)) != ERR_OK ||
            (rc = sh_buf_add(t, b, c->s + st->res_off, st->res_len)) != ERR_OK ||
            (rc = sh_buf_printf(t, b, "), index=%u\n", k)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}
