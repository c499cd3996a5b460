/*
 * stablehlo_refine.c - dynamic dims (?) of the StableHLO translator (stablehlo_int.h) made
 * static from the user's bindings (--bind NAME=VALUE), as StableHLO's own shape refinement
 * does it: openxla/stablehlo stablehlo/transforms/StablehloRefineShapes.cpp walks the
 * function forward, folds the small integer computations that make shapes (constant,
 * convert, reshape, concatenate, add, .., get_dimension_size: its Eval*OpPattern folds,
 * which it bounds by kFoldOpEltLimit, 65536 elements; shapes need SH_FOLD_MAX) and gives each op
 * whose result has a ? the shape its operands imply (the ops' inferReturnTypes,
 * stablehlo/dialect/TypeInference.cpp: elementwise ops take their operands' shape,
 * dynamic_iota / dynamic_broadcast_in_dim / dynamic_reshape their output-shape operand,
 * concatenate sums its dim). What stays unknown is refused, naming the op: never guessed.
 *
 * Only the entry function's arguments are bound; a called function is refined with what its
 * call passes (StablehloRefineShapes.cpp refines a callee per call context, its
 * RefinementKey: the leading scalar integer constants, jax.export's dimension arguments, and
 * the argument types), across the translator's passes (struct sh_refine_state).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "planner/import/stablehlo_int.h"

static bool digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* ---- the bindings -------------------------------------------------------------------- */

/* One "NAME=VALUE" of the list at p[0..n): VALUE "AxBxC" (or "N"). */
static int bind_one(struct sh_translator *t, const char *p, size_t n)
{
    struct sh_bind *b = &t->binds[t->nbinds];
    const char *eq = memchr(p, '=', n);
    size_t at;

    memset(b, 0, sizeof(*b));
    if (eq == NULL || eq == p || (eq == p + 1 && p[0] == '%'))
        return err_set(t->c.e, ERR_INVALID, "bind", "bind: expected NAME=VALUE, got \"%.*s\"",
                       (int)(n > 80 ? 80 : n), p);
    b->off = (uint32_t)(p - t->bind) + (p[0] == '%');
    b->len = (uint32_t)(eq - p) - (p[0] == '%');
    at = (size_t)(eq + 1 - p);
    for (;;) {
        int64_t v;
        if (at < n && p[at] == '-')
            return err_set(t->c.e, ERR_LIMIT, "bind",
                           "bind: %.*s: a dim or dimension value is from 0 to %lld, not negative",
                           (int)b->len, t->bind + b->off, (long long)SH_DIM_MAX);
        if (!digit(at < n ? p[at] : ' '))
            return err_set(t->c.e, ERR_INVALID, "bind",
                           "bind: %.*s: expected a shape AxBxC or an integer after '='",
                           (int)b->len, t->bind + b->off);
        if (!text_uint(p, n, &at, &v) || v > SH_DIM_MAX)
            return err_set(t->c.e, ERR_LIMIT, "bind",
                           "bind: %.*s: a dim or dimension value is at most %lld", (int)b->len,
                           t->bind + b->off, (long long)SH_DIM_MAX);
        if (b->dims.rank == SH_MAX_RANK)
            return err_set(t->c.e, ERR_LIMIT, "bind", "bind: %.*s: more than %d dims", (int)b->len,
                           t->bind + b->off, SH_MAX_RANK);
        b->dims.d[b->dims.rank++] = v;
        if (at == n)
            return ERR_OK;
        if (p[at] != 'x')
            return err_set(t->c.e, ERR_INVALID, "bind",
                           "bind: %.*s: expected a shape AxBxC or an integer after '='",
                           (int)b->len, t->bind + b->off);
        b->shape = true; /* "8x4": a shape, not a dimension argument's value */
        at++;
    }
}

int sh_bind_parse(struct sh_translator *t)
{
    const char *p = t->bind;
    int rc;

    if (p == NULL)
        return ERR_OK;
    while (*p != '\0') {
        const char *e = strchr(p, ',');
        size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
        if (t->nbinds == SH_MAX_BINDS)
            return err_set(t->c.e, ERR_LIMIT, "bind", "bind: more than %d bindings", SH_MAX_BINDS);
        if ((rc = bind_one(t, p, n)) != ERR_OK)
            return rc;
        for (uint32_t k = 0; k < t->nbinds; k++)
            if (t->binds[k].len == t->binds[t->nbinds].len &&
                memcmp(t->bind + t->binds[k].off, p + (p[0] == '%'), t->binds[k].len) == 0)
                return err_set(t->c.e, ERR_INVALID, "bind", "bind: %.*s is bound twice",
                               (int)t->binds[k].len, t->bind + t->binds[k].off);
        t->nbinds++;
        p += n + (e != NULL);
    }
    return ERR_OK;
}

/* The binding named s[off, off + len), or NULL. */
static struct sh_bind *bind_named(struct sh_translator *t, const char *s, size_t len)
{
    for (uint32_t k = 0; k < t->nbinds; k++)
        if (t->binds[k].len == len && memcmp(t->bind + t->binds[k].off, s, len) == 0)
            return &t->binds[k];
    return NULL;
}

/* The end of the argument whose type starts at the cursor: its ',' or ')' at depth 0. */
static size_t arg_end(const struct sh_translator *t)
{
    const struct cursor *c = &t->c;
    unsigned depth = 0;
    size_t q = c->i;

    for (; q < c->len; q++) {
        char ch = c->s[q];
        if (ch == '"') {
            size_t e = sh_string_end(t, q);
            if (e == 0)
                return c->len;
            q = e - 1;
        } else if (ch == '(' || ch == '[' || ch == '{' || ch == '<') {
            depth++;
        } else if ((ch == ')' || ch == ']' || ch == '}' || ch == '>') && depth > 0) {
            depth--;
        } else if ((ch == ',' || ch == ')') && depth == 0) {
            break;
        }
    }
    return q;
}

/* The binding of the argument at the cursor (its type there): by its name, else by the
 * string of its jax.arg_info or jax.global_constant attribute (jax/_src/export/_export.py
 * writes them). */
static struct sh_bind *arg_binding(struct sh_translator *t, uint32_t off, uint32_t len)
{
    static const char *keys[] = {"jax.arg_info = \"", "jax.global_constant = \""};
    const char *s = t->c.s;
    size_t end = arg_end(t);
    struct sh_bind *b = bind_named(t, s + off, len);

    for (size_t q = t->c.i; b == NULL && q < end; q++)
        for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]) && b == NULL; k++) {
            size_t kn = strlen(keys[k]), v = q + kn, e;
            if (end - q <= kn || memcmp(s + q, keys[k], kn) != 0)
                continue;
            for (e = v; e < end && s[e] != '"'; e++)
                ;
            b = bind_named(t, s + v, e - v);
        }
    return b;
}

int sh_bind_arg(struct sh_translator *t, uint32_t off, uint32_t len, uint32_t *bound)
{
    struct cursor *c = &t->c;
    struct sh_bind *b = arg_binding(t, off, len);
    bool scalar_type = cursor_starts(c, "tensor<") && c->i + 7 < c->len && !digit(c->s[c->i + 7]) &&
                       c->s[c->i + 7] != '?' && c->s[c->i + 7] != '*';

    *bound = UINT32_MAX;
    t->arg_off = off;
    t->arg_len = len;
    if (b == NULL)
        return ERR_OK;
    b->used = true;
    *bound = (uint32_t)(b - t->binds);
    if (scalar_type && b->shape)
        return cursor_fail(c,
                           "bind: %%%.*s is a scalar (a dimension's value): bind it to an "
                           "integer, not a shape",
                           (int)(len > 60 ? 60 : len), c->s + off);
    if (!scalar_type) {
        t->hint = &b->dims;
        t->nhint = 1;
        t->hint_at = 0;
        t->hint_what = "the binding's dims";
    }
    return ERR_OK;
}

int sh_bind_arg_done(struct sh_translator *t, uint32_t bound, const char *shape)
{
    t->hint = NULL;
    t->nhint = 0;
    t->arg_len = 0;
    if (bound == UINT32_MAX || t->binds[bound].dims.rank != 1 || t->binds[bound].shape ||
        sh_rank_of(shape) != 0)
        return ERR_OK;
    if (shape[0] != 's' && shape[0] != 'u')
        return cursor_fail_at(t->c.e, t->at_line, t->at_col,
                              "bind: %.*s is bound to an integer but its type is %s, not an "
                              "integer scalar",
                              (int)t->binds[bound].len, t->bind + t->binds[bound].off, shape);
    struct sh_fold f = {.n = 1, .v = {t->binds[bound].dims.d[0]}};
    return sh_fold_set(t, (uint32_t)(t->values.n - 1), &f);
}

int sh_bind_check(struct sh_translator *t)
{
    for (uint32_t k = 0; k < t->nbinds; k++)
        if (!t->binds[k].used)
            return err_set(t->c.e, ERR_NOTFOUND, "bind",
                           "bind: '%.*s' names no argument of @%s (an argument %%argN or argN, "
                           "or its jax.arg_info or jax.global_constant name)",
                           (int)t->binds[k].len, t->bind + t->binds[k].off, t->entry_name);
    return ERR_OK;
}

/* ---- folded values ------------------------------------------------------------------- */

int sh_fold_set(struct sh_translator *t, uint32_t v, const struct sh_fold *f)
{
    int rc = sh_push(t, &t->folds, f);
    if (rc == ERR_OK)
        sh_value_at(t, v)->fold = (uint32_t)t->folds.n;
    return rc;
}

/* Value v's folded elements, or NULL. */
static const struct sh_fold *fold_of(const struct sh_translator *t, uint32_t v)
{
    uint32_t f = sh_value_at(t, v)->fold;
    return f == 0 ? NULL : vec_at(&t->folds, f - 1);
}

/* The dims of an XLA array shape "T[a,b]{..}"; false for a tuple or a token. */
bool sh_dims_of(const char *shape, struct sh_dims *d)
{
    const char *p = shape != NULL ? strchr(shape, '[') : NULL;
    size_t at = 1;

    d->rank = 0;
    if (p == NULL || shape[0] == '(')
        return false;
    while (p[at] != ']') {
        if (d->rank == SH_MAX_RANK || !text_uint(p, at + 24, &at, &d->d[d->rank]))
            return false;
        d->rank++;
        at += p[at] == ',';
    }
    return true;
}

/* Value v's dims (false when it is not an array). */
static bool value_dims(const struct sh_translator *t, uint32_t v, struct sh_dims *d)
{
    const struct sh_value *x = sh_value_at(t, v);
    char buf[512];
    if (x->shape_len >= sizeof(buf))
        return false;
    memcpy(buf, t->shapes.p + x->shape_off, x->shape_len);
    buf[x->shape_len] = '\0';
    return sh_dims_of(buf, d);
}

/* Where the op's own text (t->c.s[from, to)) has key: just past it, or 0. */
static size_t find_key(const struct sh_translator *t, size_t from, size_t to, const char *key)
{
    size_t n = strlen(key);
    for (size_t q = from; q + n <= to; q++)
        if (memcmp(t->c.s + q, key, n) == 0)
            return q + n;
    return 0;
}

/* A signed integer at s[*q..to). */
static bool read_int(const char *s, size_t to, size_t *q, int64_t *v)
{
    bool neg = *q < to && s[*q] == '-';
    *q += neg;
    if (!text_uint(s, to, q, v))
        return false;
    *v = neg ? -*v : *v;
    return true;
}

/* An integer list "[a, b]" (or one integer "a") at s[q..to) into f. */
static bool read_list(const char *s, size_t to, size_t q, struct sh_fold *f)
{
    bool bracket = q < to && s[q] == '[';

    f->n = 0;
    q += bracket;
    while (q < to) {
        while (q < to && s[q] == ' ')
            q++;
        if (bracket && q < to && s[q] == ']')
            return true;
        if (f->n == SH_FOLD_MAX || !read_int(s, to, &q, &f->v[f->n]))
            return false;
        f->n++;
        while (q < to && s[q] == ' ')
            q++;
        if (!bracket)
            return true;
        if (q < to && s[q] == ',')
            q++;
    }
    return false;
}

/* The integer list after the first of keys found in the op's text, into f. */
static bool attr_list(const struct sh_translator *t, size_t from, size_t to, const char *key,
                      struct sh_fold *f)
{
    size_t q = find_key(t, from, to, key);
    if (q == 0)
        return false;
    if (q + 7 < to && memcmp(t->c.s + q, "array<i", 7) == 0) { /* generic: array<i64: 1, 2> */
        while (q < to && t->c.s[q] != ':')
            q++;
        q++;
        f->n = 0;
        while (q < to && f->n < SH_FOLD_MAX) {
            while (q < to && t->c.s[q] == ' ')
                q++;
            if (!read_int(t->c.s, to, &q, &f->v[f->n]))
                break;
            f->n++;
            if (q < to && t->c.s[q] == ',')
                q++;
        }
        return f->n > 0;
    }
    return read_list(t->c.s, to, q, f);
}

/* ---- result shapes ------------------------------------------------------------------- */

/* How an op's result shape follows from its operands (TypeInference.cpp's infer*Op). */
enum rule {
    R_NONE,
    R_SAME,      /* elementwise: the shape of its operand of the highest rank */
    R_OPERAND0,  /* the first operand's: scatter, dynamic_update_slice, select_and_scatter */
    R_OPERAND1,  /* the second operand's: triangular_solve (b's) */
    R_SHAPE0,    /* the folded output-shape operand 0: dynamic_iota */
    R_SHAPE1,    /* the folded output-shape operand 1: dynamic_broadcast_in_dim, .. */
    R_CONCAT,    /* concatenate: the operands' dims summed along dim */
    R_TRANSPOSE, /* the operand's dims permuted */
    R_REDUCE,    /* reduce: the first operand's dims less the reduced ones */
    R_PAD,       /* pad: each dim low + high + d + interior x (d - 1) */
    R_RDSLICE,   /* real_dynamic_slice: ceil((limit - start) / stride), folded operands */
    R_DOT,       /* dot_general: batch dims, then lhs's and rhs's free dims */
    R_SORT,      /* sort: each result its operand's */
    R_WINDOW,    /* reduce_window: each dim its windows' count */
    R_GATHER,    /* gather: the indices' batch dims and the slices' offset dims */
    R_DGATHER,   /* dynamic_gather: as gather, its slice sizes a folded operand */
};

static const struct {
    const char *name;
    enum rule rule;
} RULES[] = {
    {"abs", R_SAME},
    {"add", R_SAME},
    {"and", R_SAME},
    {"atan2", R_SAME},
    {"bitcast_convert", R_SAME}, /* of one width: a rank of its own is refused, not guessed */
    {"cbrt", R_SAME},
    {"ceil", R_SAME},
    {"clamp", R_SAME},
    {"compare", R_SAME},
    {"complex", R_SAME},
    {"concatenate", R_CONCAT},
    {"convert", R_SAME},
    {"cosine", R_SAME},
    {"count_leading_zeros", R_SAME},
    {"divide", R_SAME},
    {"dot_general", R_DOT},
    {"dynamic_broadcast_in_dim", R_SHAPE1},
    {"dynamic_gather", R_DGATHER},
    {"dynamic_iota", R_SHAPE0},
    {"dynamic_reshape", R_SHAPE1},
    {"dynamic_update_slice", R_OPERAND0},
    {"exponential", R_SAME},
    {"exponential_minus_one", R_SAME},
    {"floor", R_SAME},
    {"gather", R_GATHER},
    {"imag", R_SAME},
    {"is_finite", R_SAME},
    {"log", R_SAME},
    {"log_plus_one", R_SAME},
    {"logistic", R_SAME},
    {"maximum", R_SAME},
    {"minimum", R_SAME},
    {"multiply", R_SAME},
    {"negate", R_SAME},
    {"not", R_SAME},
    {"or", R_SAME},
    {"pad", R_PAD},
    {"popcnt", R_SAME},
    {"power", R_SAME},
    {"real", R_SAME},
    {"real_dynamic_slice", R_RDSLICE},
    {"reduce", R_REDUCE},
    {"reduce_precision", R_SAME},
    {"reduce_window", R_WINDOW},
    {"remainder", R_SAME},
    {"reverse", R_OPERAND0},
    {"round_nearest_afz", R_SAME},
    {"round_nearest_even", R_SAME},
    {"rsqrt", R_SAME},
    {"scatter", R_OPERAND0},
    {"select", R_SAME},
    {"select_and_scatter", R_OPERAND0},
    {"shift_left", R_SAME},
    {"shift_right_arithmetic", R_SAME},
    {"shift_right_logical", R_SAME},
    {"sign", R_SAME},
    {"sine", R_SAME},
    {"sort", R_SORT},
    {"sqrt", R_SAME},
    {"subtract", R_SAME},
    {"tan", R_SAME},
    {"tanh", R_SAME},
    {"transpose", R_TRANSPOSE},
    {"triangular_solve", R_OPERAND1},
    {"xor", R_SAME},
};

/* The op's name after its dialect, stablehlo or mhlo (*n bytes); NULL for another dialect's. */
static const char *op_base(const struct sh_translator *t, const struct sh_stmt *st, size_t *n)
{
    const char *s = t->c.s + st->op_off;
    const char *dot = memchr(s, '.', st->op_len);
    if (dot == NULL || !((dot - s == 9 && memcmp(s, "stablehlo", 9) == 0) ||
                         (dot - s == 4 && memcmp(s, "mhlo", 4) == 0)))
        return NULL;
    *n = st->op_len - (size_t)(dot + 1 - s);
    return dot + 1;
}

/* Whether p[0..n) is the NUL-terminated name. */
static bool named(const char *p, size_t n, const char *name)
{
    return strlen(name) == n && memcmp(name, p, n) == 0;
}

static enum rule rule_of(const struct sh_translator *t, const struct sh_stmt *st)
{
    size_t n = 0;
    const char *p = op_base(t, st, &n);
    for (size_t k = 0; p != NULL && k < sizeof(RULES) / sizeof(RULES[0]); k++)
        if (named(p, n, RULES[k].name))
            return RULES[k].rule;
    return R_NONE;
}

/* An output-shape operand folded into d; the reason it is not into t->why. */
static bool shape_operand(struct sh_translator *t, uint32_t k, struct sh_dims *d)
{
    const struct sh_fold *f = k < t->nopv ? fold_of(t, t->opv[k]) : NULL;

    if (f == NULL) {
        const struct sh_value *x = k < t->nopv ? sh_value_at(t, t->opv[k]) : NULL;
        snprintf(t->why, sizeof(t->why),
                 "its shape operand %s%.*s is not a constant of the bound values (bind the "
                 "dimension arguments, tensor<i64> ones: --bind arg0=N)",
                 x != NULL ? "%" : "", x != NULL ? (int)(x->len > 60 ? 60 : x->len) : 0,
                 x != NULL ? t->c.s + x->off : "");
        return false;
    }
    d->rank = f->n;
    for (uint32_t q = 0; q < f->n; q++) {
        if (f->v[q] < 0 || f->v[q] > SH_DIM_MAX) {
            snprintf(t->why, sizeof(t->why), "its shape operand gives dim %u = %lld", q,
                     (long long)f->v[q]);
            return false;
        }
        d->d[q] = f->v[q];
    }
    return true;
}

static bool infer_concat(struct sh_translator *t, size_t from, size_t to, struct sh_dims *out)
{
    struct sh_fold dim;
    struct sh_dims d;

    if ((!attr_list(t, from, to, "dim = ", &dim) &&
         !attr_list(t, from, to, "dimension = ", &dim)) ||
        dim.n != 1)
        return false;
    for (uint32_t k = 0; k < t->nopv; k++) {
        if (!value_dims(t, t->opv[k], &d) || dim.v[0] < 0 || dim.v[0] >= (int64_t)d.rank)
            return false;
        if (k == 0) {
            *out = d;
        } else if (d.rank != out->rank ||
                   __builtin_add_overflow(out->d[dim.v[0]], d.d[dim.v[0]], &out->d[dim.v[0]])) {
            return false;
        }
    }
    return t->nopv > 0;
}

static bool infer_permuted(struct sh_translator *t, size_t from, size_t to, enum rule r,
                           struct sh_dims *out)
{
    struct sh_fold dims;
    struct sh_dims in;

    if (t->nopv == 0 || !value_dims(t, t->opv[0], &in))
        return false;
    if (!attr_list(t, from, to, r == R_TRANSPOSE ? "permutation = " : "dimensions = ", &dims) &&
        !attr_list(t, from, to, "dims = ", &dims))
        return false;
    out->rank = 0;
    if (r == R_TRANSPOSE) {
        for (uint32_t k = 0; k < dims.n; k++) {
            if (dims.v[k] < 0 || dims.v[k] >= (int64_t)in.rank)
                return false;
            out->d[out->rank++] = in.d[dims.v[k]];
        }
        return out->rank == in.rank;
    }
    for (uint32_t k = 0; k < in.rank; k++) {
        bool gone = false;
        for (uint32_t q = 0; q < dims.n; q++)
            gone |= dims.v[q] == (int64_t)k;
        if (!gone)
            out->d[out->rank++] = in.d[k];
    }
    return true;
}

/* pad (TypeInference.cpp inferPadOp): dim d of the operand becomes low + d + high +
 * interior x (d - 1) (interior 0 for an empty dim). */
static bool infer_pad(struct sh_translator *t, size_t from, size_t to, struct sh_dims *out)
{
    struct sh_fold lo, hi, in;

    if (t->nopv < 1 || !value_dims(t, t->opv[0], out) || !attr_list(t, from, to, "low = ", &lo) ||
        !attr_list(t, from, to, "high = ", &hi) || !attr_list(t, from, to, "interior = ", &in) ||
        lo.n != out->rank || hi.n != out->rank || in.n != out->rank)
        return false;
    for (uint32_t k = 0; k < out->rank; k++) {
        int64_t d = out->d[k], inner = 0, r;
        if (in.v[k] < 0 || (d > 0 && __builtin_mul_overflow(in.v[k], d - 1, &inner)) ||
            __builtin_add_overflow(d, inner, &r) || __builtin_add_overflow(r, lo.v[k], &r) ||
            __builtin_add_overflow(r, hi.v[k], &r) || r < 0 || r > SH_DIM_MAX)
            return false;
        out->d[k] = r;
    }
    return true;
}

/* real_dynamic_slice (inferRealDynamicSliceOp, the spec's ceil((limit - start) / stride)):
 * its start, limit and stride operands folded. */
static bool infer_rdslice(struct sh_translator *t, struct sh_dims *out)
{
    const struct sh_fold *f[3];

    if (t->nopv != 4)
        return false;
    for (int k = 0; k < 3; k++)
        if ((f[k] = fold_of(t, t->opv[k + 1])) == NULL || f[k]->n != f[0]->n) {
            snprintf(t->why, sizeof(t->why),
                     "its start, limit and stride operands are not constants of the bound values");
            return false;
        }
    out->rank = f[0]->n;
    for (uint32_t k = 0; k < out->rank; k++) {
        int64_t span;
        if (f[2]->v[k] < 1 || __builtin_sub_overflow(f[1]->v[k], f[0]->v[k], &span) || span < 0)
            return false;
        out->d[k] = span / f[2]->v[k] + (span % f[2]->v[k] != 0);
    }
    return true;
}

/* A window attribute's list (each of rank values; absent: def each), into f. */
static bool window_attr(const struct sh_translator *t, size_t from, size_t to, const char *key,
                        uint32_t rank, int64_t def, struct sh_fold *f)
{
    if (!attr_list(t, from, to, key, f)) {
        f->n = rank;
        for (uint32_t k = 0; k < rank; k++)
            f->v[k] = def;
    }
    return f->n == rank;
}

/* reduce_window's padding = dense<[[lo, hi], ..]> (dense<0>: none), lo and hi per dim. */
static bool window_padding(const struct sh_translator *t, size_t from, size_t to, uint32_t rank,
                           int64_t *lo, int64_t *hi)
{
    size_t q = find_key(t, from, to, "padding = dense<");
    uint32_t n = 0;
    int64_t v[2 * SH_MAX_RANK] = {0};

    for (uint32_t k = 0; k < rank; k++)
        lo[k] = hi[k] = 0;
    while (q != 0 && q < to && t->c.s[q] != '>') {
        if ((t->c.s[q] == '-' || digit(t->c.s[q])) && n < 2 * SH_MAX_RANK) {
            if (!read_int(t->c.s, to, &q, &v[n++]))
                return false;
            continue;
        }
        q++;
    }
    if (n == 1 && v[0] == 0)
        return true;
    if (q != 0 && n != 2 * rank)
        return false;
    for (uint32_t k = 0; k < rank && q != 0; k++) {
        lo[k] = v[2 * k];
        hi[k] = v[2 * k + 1];
    }
    return true;
}

/* reduce_window (TypeInference.cpp inferWindowOutputShape): dim d, base dilation b, window
 * w, window dilation v, stride s, padding lo + hi: the dilated operand (d - 1) x b + 1 padded,
 * the dilated window (w - 1) x v + 1, and (padded - window) / s + 1 windows (0 when the
 * window is larger). */
static bool infer_window(struct sh_translator *t, size_t from, size_t to, struct sh_dims *out)
{
    struct sh_fold w, s, b, v;
    int64_t lo[SH_MAX_RANK], hi[SH_MAX_RANK];

    if (t->nopv < 1 || !value_dims(t, t->opv[0], out))
        return false;
    uint32_t r = out->rank;
    if (!window_attr(t, from, to, "window_dimensions = ", r, -1, &w) ||
        !window_attr(t, from, to, "window_strides = ", r, 1, &s) ||
        !window_attr(t, from, to, "base_dilations = ", r, 1, &b) ||
        !window_attr(t, from, to, "window_dilations = ", r, 1, &v) ||
        !window_padding(t, from, to, r, lo, hi))
        return false;
    for (uint32_t k = 0; k < r; k++) {
        int64_t d = out->d[k], base = 0, win, pad;
        if (w.v[k] < 1 || s.v[k] < 1 || b.v[k] < 1 || v.v[k] < 1 ||
            (d > 0 && (__builtin_mul_overflow(d - 1, b.v[k], &base) || base++ < 0)) ||
            __builtin_add_overflow(base, lo[k], &pad) || __builtin_add_overflow(pad, hi[k], &pad) ||
            __builtin_mul_overflow(w.v[k] - 1, v.v[k], &win))
            return false;
        win++;
        out->d[k] = pad < win ? 0 : (pad - win) / s.v[k] + 1;
    }
    return true;
}

/* A dims list after key, empty when absent. */
static bool dims_or_none(const struct sh_translator *t, size_t from, size_t to, const char *key,
                         struct sh_fold *f)
{
    f->n = 0;
    return find_key(t, from, to, key) == 0 || attr_list(t, from, to, key, f);
}

static bool listed(const struct sh_fold *l, uint32_t k);

/* gather (TypeInference.cpp inferGatherOp): result dim i is, when i is in offset_dims, the
 * next slice size of an operand dim neither collapsed nor a batching dim, else the next dim
 * of the start indices other than index_vector_dim. */
static bool infer_gather(struct sh_translator *t, size_t from, size_t to, bool dynamic,
                         struct sh_dims *out)
{
    struct sh_fold off, col, obatch, sizes, ivd;
    struct sh_dims in, idx;
    uint32_t next_slice = 0, next_batch = 0;
    const struct sh_fold *dyn = dynamic && t->nopv == 3 ? fold_of(t, t->opv[2]) : NULL;

    if (dyn != NULL)
        sizes = *dyn; /* dynamic_gather's slice sizes operand */
    if (t->nopv != (dynamic ? 3u : 2u) || !value_dims(t, t->opv[0], &in) ||
        !value_dims(t, t->opv[1], &idx) || (dynamic && dyn == NULL) ||
        !dims_or_none(t, from, to, "offset_dims = ", &off) ||
        !dims_or_none(t, from, to, "collapsed_slice_dims = ", &col) ||
        !dims_or_none(t, from, to, "operand_batching_dims = ", &obatch) ||
        !dims_or_none(t, from, to, "index_vector_dim = ", &ivd) ||
        (!dynamic && !attr_list(t, from, to, "slice_sizes = ", &sizes)) || sizes.n != in.rank)
        return false;
    int64_t iv = ivd.n == 1 ? ivd.v[0] : 0;
    uint32_t nbatch = idx.rank - (iv >= 0 && iv < (int64_t)idx.rank);
    if (nbatch + off.n > SH_MAX_RANK)
        return false;
    out->rank = nbatch + off.n;
    for (uint32_t i = 0; i < out->rank; i++) {
        if (listed(&off, i)) {
            while (next_slice < in.rank &&
                   (listed(&col, next_slice) || listed(&obatch, next_slice)))
                next_slice++;
            if (next_slice == in.rank)
                return false;
            out->d[i] = sizes.v[next_slice++];
        } else {
            next_batch += (int64_t)next_batch == iv;
            if (next_batch >= idx.rank)
                return false;
            out->d[i] = idx.d[next_batch++];
        }
    }
    return true;
}

/* Whether k is in the list. */
static bool listed(const struct sh_fold *l, uint32_t k)
{
    for (uint32_t q = 0; q < l->n; q++)
        if (l->v[q] == (int64_t)k)
            return true;
    return false;
}

/* A "[a, b] x [c, d]" pair of dim lists after key (its lhs and rhs), empty when absent. */
static bool dims_pair(const struct sh_translator *t, size_t from, size_t to, const char *key,
                      struct sh_fold *lhs, struct sh_fold *rhs)
{
    size_t q = find_key(t, from, to, key);
    lhs->n = rhs->n = 0;
    if (q == 0) { /* the generic #stablehlo.dot<lhs_batching_dimensions = [0], ..> */
        char l[48], r[48];
        snprintf(l, sizeof(l), "lhs_%.*simensions = ", (int)(strlen(key) - 6), key);
        snprintf(r, sizeof(r), "rhs_%.*simensions = ", (int)(strlen(key) - 6), key);
        size_t lq = find_key(t, from, to, l), rq = find_key(t, from, to, r);
        return (lq == 0 || read_list(t->c.s, to, lq, lhs)) &&
               (rq == 0 || read_list(t->c.s, to, rq, rhs));
    }
    if (!read_list(t->c.s, to, q, lhs))
        return false;
    while (q < to && t->c.s[q] != ']')
        q++;
    if (to - q < 5 || memcmp(t->c.s + q, "] x [", 5) != 0)
        return false;
    return read_list(t->c.s, to, q + 4, rhs);
}

/* dot_general (inferDotGeneralOp): the batch dims, then lhs's dims neither batch nor
 * contracting, then rhs's. */
static bool infer_dot(struct sh_translator *t, size_t from, size_t to, struct sh_dims *out)
{
    struct sh_fold lb, rb, lc, rc;
    struct sh_dims l, r;

    if (t->nopv != 2 || !value_dims(t, t->opv[0], &l) || !value_dims(t, t->opv[1], &r) ||
        !dims_pair(t, from, to, "batching_dims = ", &lb, &rb) ||
        !dims_pair(t, from, to, "contracting_dims = ", &lc, &rc) || lb.n != rb.n)
        return false;
    out->rank = 0;
    for (uint32_t k = 0; k < lb.n; k++) {
        if (lb.v[k] < 0 || lb.v[k] >= (int64_t)l.rank)
            return false;
        out->d[out->rank++] = l.d[lb.v[k]];
    }
    for (uint32_t k = 0; k < l.rank && out->rank < SH_MAX_RANK; k++)
        if (!listed(&lb, k) && !listed(&lc, k))
            out->d[out->rank++] = l.d[k];
    for (uint32_t k = 0; k < r.rank && out->rank < SH_MAX_RANK; k++)
        if (!listed(&rb, k) && !listed(&rc, k))
            out->d[out->rank++] = r.d[k];
    return true;
}

/* The result dims of an op of rule r into *out; false when not known (t->why says why). */
static bool infer(struct sh_translator *t, enum rule r, size_t from, size_t to, struct sh_dims *out)
{
    struct sh_dims d;

    t->why[0] = '\0';
    if (t->nopv > SH_REFINE_OPS) {
        snprintf(t->why, sizeof(t->why), "it has more than %d operands", SH_REFINE_OPS);
        return false;
    }
    switch (r) {
    case R_SAME:
        out->rank = 0;
        for (uint32_t k = 0; k < t->nopv; k++)
            if (value_dims(t, t->opv[k], &d) && (k == 0 || d.rank > out->rank))
                *out = d;
        return t->nopv > 0;
    case R_OPERAND0:
    case R_OPERAND1:
        return t->nopv > (r == R_OPERAND1) && value_dims(t, t->opv[r == R_OPERAND1], out);
    case R_SHAPE0:
    case R_SHAPE1:
        return shape_operand(t, r == R_SHAPE0 ? 0 : 1, out);
    case R_CONCAT:
        return infer_concat(t, from, to, out);
    case R_TRANSPOSE:
    case R_REDUCE:
        return infer_permuted(t, from, to, r, out);
    case R_PAD:
        return infer_pad(t, from, to, out);
    case R_RDSLICE:
        return infer_rdslice(t, out);
    case R_DOT:
        return infer_dot(t, from, to, out);
    case R_WINDOW:
        return infer_window(t, from, to, out);
    case R_GATHER:
    case R_DGATHER:
        return infer_gather(t, from, to, r == R_DGATHER, out);
    default:
        return false;
    }
}

void sh_refine_op(struct sh_translator *t, const struct sh_stmt *st, size_t from, size_t to)
{
    enum rule r = rule_of(t, st);

    t->hint = NULL;
    t->nhint = 0;
    t->hint_at = 0;
    t->refine_st = st;
    snprintf(t->why, sizeof(t->why), "its result shape does not follow from its operands here");
    if (t->bind == NULL || r == R_NONE || st->nres > SH_MAX_HINTS ||
        (st->nres > 1 && r != R_REDUCE && r != R_SORT && r != R_WINDOW))
        return;
    /* a variadic reduce's results all take the first input's reduced dims (the inputs share
     * one shape: inferReduceOp), a sort's each its operand's */
    for (uint32_t k = 0; k < st->nres; k++) {
        if (r == R_SORT ? k >= t->nopv || !value_dims(t, t->opv[k], &t->hint_buf[k])
                        : !infer(t, r, from, to, &t->hint_buf[k]))
            return;
    }
    t->hint = t->hint_buf;
    t->nhint = st->nres;
    t->hint_what = "its operands' shapes";
}

/* ---- folding ------------------------------------------------------------------------- */

/* What a folded op computes from its operands' elements (StablehloRefineShapes.cpp's
 * EvalAddOpPattern .. EvalSelectOpPattern, on at most SH_FOLD_MAX elements). */
enum fold_op {
    F_NONE,
    F_CONSTANT,
    F_COPY,  /* convert, reshape: the same elements */
    F_SPLAT, /* broadcast_in_dim of one element */
    F_CONCAT,
    F_ADD,
    F_SUB,
    F_MUL,
    F_DIV,
    F_REM,
    F_MAX,
    F_MIN,
    F_AND,
    F_OR,
    F_COMPARE,
    F_SELECT,
    F_DIM_SIZE, /* get_dimension_size */
    F_SLICE,
};

static const struct {
    const char *name;
    enum fold_op op;
} FOLDS[] = {
    {"add", F_ADD},
    {"and", F_AND},
    {"broadcast_in_dim", F_SPLAT},
    {"compare", F_COMPARE},
    {"concatenate", F_CONCAT},
    {"constant", F_CONSTANT},
    {"convert", F_COPY},
    {"divide", F_DIV},
    {"get_dimension_size", F_DIM_SIZE},
    {"maximum", F_MAX},
    {"minimum", F_MIN},
    {"multiply", F_MUL},
    {"or", F_OR},
    {"remainder", F_REM},
    {"reshape", F_COPY},
    {"select", F_SELECT},
    {"slice", F_SLICE},
    {"subtract", F_SUB},
};

static enum fold_op fold_op_of(const struct sh_translator *t, const struct sh_stmt *st)
{
    size_t n = 0;
    const char *p = op_base(t, st, &n);
    for (size_t k = 0; p != NULL && k < sizeof(FOLDS) / sizeof(FOLDS[0]); k++)
        if (named(p, n, FOLDS[k].name))
            return FOLDS[k].op;
    return F_NONE;
}

/* One element of a binary op; false on overflow or a division by zero. */
static bool binary(enum fold_op op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case F_ADD:
        return !__builtin_add_overflow(a, b, r);
    case F_SUB:
        return !__builtin_sub_overflow(a, b, r);
    case F_MUL:
        return !__builtin_mul_overflow(a, b, r);
    case F_DIV:
    case F_REM:
        if (b == 0 || (a == INT64_MIN && b == -1))
            return false;
        *r = op == F_DIV ? a / b : a % b; /* C and StableHLO both truncate toward zero */
        return true;
    case F_MAX:
        *r = a > b ? a : b;
        return true;
    case F_MIN:
        *r = a < b ? a : b;
        return true;
    case F_AND:
        *r = a & b;
        return true;
    case F_OR:
        *r = a | b;
        return true;
    default:
        return false;
    }
}

/* compare's direction in the op's text (" GE," pretty, "direction GE>" generic): 0 EQ, 1
 * NE, 2 LT, 3 LE, 4 GT, 5 GE; -1 none. */
static int direction(const struct sh_translator *t, size_t from, size_t to)
{
    static const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    for (size_t q = from; q + 3 < to; q++)
        for (int k = 0; k < 6; k++)
            if (t->c.s[q] == ' ' && memcmp(t->c.s + q + 1, dirs[k], 2) == 0 &&
                (t->c.s[q + 3] == ',' || t->c.s[q + 3] == '>'))
                return k;
    return -1;
}

static bool compared(int dir, int64_t a, int64_t b)
{
    switch (dir) {
    case 0:
        return a == b;
    case 1:
        return a != b;
    case 2:
        return a < b;
    case 3:
        return a <= b;
    case 4:
        return a > b;
    default:
        return a >= b;
    }
}

/* A constant's dense<..> (splat to n elements), true / false included. */
static bool fold_constant(const struct sh_translator *t, size_t from, size_t to, uint32_t n,
                          struct sh_fold *f)
{
    size_t q = find_key(t, from, to, "dense<");
    if (q == 0)
        return false;
    if (to - q >= 4 && memcmp(t->c.s + q, "true", 4) == 0) {
        *f = (struct sh_fold){.n = 1, .v = {1}};
    } else if (to - q >= 5 && memcmp(t->c.s + q, "false", 5) == 0) {
        *f = (struct sh_fold){.n = 1, .v = {0}};
    } else if (!read_list(t->c.s, to, q, f)) {
        return false;
    }
    for (uint32_t k = f->n; f->n == 1 && k < n; k++)
        f->v[k] = f->v[0];
    f->n = f->n == 1 ? n : f->n;
    return f->n == n;
}

/* slice's [a:b] or [a:b:s] (one dim) of its operand's elements. */
static bool fold_slice(const struct sh_translator *t, size_t from, size_t to,
                       const struct sh_fold *x, struct sh_fold *f)
{
    size_t q = find_key(t, from, to, " [");
    int64_t lo, hi, step = 1;

    if (q == 0 || !read_int(t->c.s, to, &q, &lo) || q >= to || t->c.s[q++] != ':' ||
        !read_int(t->c.s, to, &q, &hi))
        return false;
    if (q < to && t->c.s[q] == ':' && (q++, !read_int(t->c.s, to, &q, &step)))
        return false;
    if (lo < 0 || hi > (int64_t)x->n || lo > hi || step < 1)
        return false;
    f->n = 0;
    for (int64_t k = lo; k < hi; k += step)
        f->v[f->n++] = x->v[k];
    return true;
}

/* The folded elements of an op of n elements (its operands' folds in x); false: none. */
static bool fold(struct sh_translator *t, enum fold_op op, size_t from, size_t to, uint32_t n,
                 const struct sh_fold *const *x, struct sh_fold *f)
{
    struct sh_fold dim;
    struct sh_dims d;

    f->n = n;
    switch (op) {
    case F_CONSTANT:
        return fold_constant(t, from, to, n, f);
    case F_COPY:
        *f = *x[0];
        return f->n == n;
    case F_SPLAT:
        for (uint32_t k = 0; k < n && x[0]->n == 1; k++)
            f->v[k] = x[0]->v[0];
        return x[0]->n == 1;
    case F_CONCAT:
        f->n = 0;
        for (uint32_t k = 0; k < t->nopv; k++)
            for (uint32_t q = 0; q < x[k]->n && f->n < SH_FOLD_MAX; q++)
                f->v[f->n++] = x[k]->v[q];
        return f->n == n;
    case F_DIM_SIZE:
        if ((!attr_list(t, from, to, "dim = ", &dim) &&
             !attr_list(t, from, to, "dimension = ", &dim)) ||
            dim.n != 1)
            return false;
        if (!value_dims(t, t->opv[0], &d) || dim.v[0] < 0 || dim.v[0] >= (int64_t)d.rank)
            return false;
        *f = (struct sh_fold){.n = 1, .v = {d.d[dim.v[0]]}};
        return n == 1;
    case F_COMPARE: {
        int dir = direction(t, from, to);
        for (uint32_t k = 0; k < n && dir >= 0; k++)
            f->v[k] = compared(dir, x[0]->v[k], x[1]->v[k]);
        return dir >= 0;
    }
    case F_SELECT:
        for (uint32_t k = 0; k < n; k++) {
            int64_t p = x[0]->v[x[0]->n == 1 ? 0 : k];
            f->v[k] = p != 0 ? x[1]->v[k] : x[2]->v[k];
        }
        return true;
    case F_SLICE:
        return fold_slice(t, from, to, x[0], f) && f->n == n;
    default:
        for (uint32_t k = 0; k < n; k++)
            if (!binary(op, x[0]->v[k], x[1]->v[k], &f->v[k]))
                return false;
        return true;
    }
}

/* The operands every fold but a constant's needs: how many, and whether they have n
 * elements (a select's predicate and a splat's operand may have one). */
static bool fold_operands(const struct sh_translator *t, enum fold_op op, uint32_t n,
                          const struct sh_fold **x)
{
    uint32_t need = op == F_CONSTANT || op == F_DIM_SIZE ? 0 : op == F_SELECT ? 3 : 1;
    need = op >= F_ADD && op <= F_COMPARE ? 2 : need;
    if (t->nopv < need || t->nopv > SH_REFINE_OPS || (op == F_CONCAT && t->nopv == 0))
        return false;
    for (uint32_t k = 0; k < (op == F_CONCAT ? t->nopv : need); k++) {
        if ((x[k] = fold_of(t, t->opv[k])) == NULL)
            return false;
        bool any_n = op == F_CONCAT || op == F_SLICE;
        bool one = (op == F_SPLAT || (op == F_SELECT && k == 0)) && x[k]->n == 1;
        if (!any_n && !one && x[k]->n != n)
            return false;
    }
    return true;
}

int sh_refine_fold(struct sh_translator *t, const struct sh_stmt *st, size_t from, size_t to,
                   const char *shape)
{
    const struct sh_fold *x[SH_REFINE_OPS] = {0};
    enum fold_op op = fold_op_of(t, st);
    struct sh_fold f;
    struct sh_dims d;
    uint64_t n = 1;

    if (t->bind == NULL || op == F_NONE || st->nres != 1 || shape == NULL ||
        !(shape[0] == 's' || shape[0] == 'u' || strncmp(shape, "pred", 4) == 0) ||
        !sh_dims_of(shape, &d) || d.rank > 1)
        return ERR_OK;
    for (uint32_t k = 0; k < d.rank; k++)
        n *= (uint64_t)d.d[k];
    if (n > SH_FOLD_MAX || !fold_operands(t, op, (uint32_t)n, x) ||
        !fold(t, op, from, to, (uint32_t)n, x, &f))
        return ERR_OK;
    return sh_fold_set(t, (uint32_t)(t->values.n - 1), &f);
}

/* ---- calls across the passes ---------------------------------------------------------- */

/* The function named name, added when absent (NULL: no room, *rc says why). */
static struct sh_fn *fn_named(struct sh_translator *t, const char *name, int *rc)
{
    struct sh_refine_state *rs = t->rs;
    struct sh_fn f = {.nargs = UINT32_MAX, .nrets = UINT32_MAX};

    *rc = ERR_OK;
    for (size_t k = 0; k < rs->fns.n; k++) {
        struct sh_fn *x = vec_at(&rs->fns, k);
        if (strcmp(x->name, name) == 0)
            return x;
    }
    snprintf(f.name, sizeof(f.name), "%s", name);
    if ((*rc = sh_push(t, &rs->fns, &f)) != ERR_OK)
        return NULL;
    return vec_at(&rs->fns, rs->fns.n - 1);
}

/* The values t->uses as entries of dims and vals (from *at, n of them: the old ones
 * rewritten when there are as many, else new ones appended); *same whether they were so.
 * Only compared when !write. */
static int record(struct sh_translator *t, uint32_t *at, uint32_t *n, bool *same, bool write)
{
    struct sh_refine_state *rs = t->rs;
    uint32_t m = (uint32_t)t->uses.n, base = *at;
    int rc;

    *same = *n == m;
    if (!write && !*same)
        return ERR_OK;
    if (*n != m) {
        base = (uint32_t)rs->dims.n;
        for (uint32_t k = 0; k < m; k++) {
            struct sh_dims d = {0};
            struct sh_fnval v = {0};
            if ((rc = sh_push(t, &rs->dims, &d)) != ERR_OK ||
                (rc = sh_push(t, &rs->vals, &v)) != ERR_OK)
                return rc;
        }
    }
    for (uint32_t k = 0; k < m; k++) {
        uint32_t u = *(const uint32_t *)vec_at(&t->uses, k);
        struct sh_dims d = {0};
        struct sh_fnval v = {.array = value_dims(t, u, &d)};
        const struct sh_fold *f = fold_of(t, u);
        if (!v.array)
            d.rank = UINT32_MAX; /* not known (yet): no hint */
        struct sh_dims *od = vec_at(&rs->dims, base + k);
        struct sh_fnval *ov = vec_at(&rs->vals, base + k);
        if (f != NULL && f->n == 1 && d.rank == 0) {
            v.folded = true;
            v.v = f->v[0];
        }
        *same = *same && ov->array == v.array && ov->folded == v.folded && ov->v == v.v &&
                od->rank == d.rank &&
                (!v.array || memcmp(od->d, d.d, d.rank * sizeof(d.d[0])) == 0);
        if (write) {
            *od = d;
            *ov = v;
        }
    }
    *at = base;
    *n = m;
    return ERR_OK;
}

int sh_refine_call(struct sh_translator *t, const struct sh_stmt *st, const char *callee)
{
    struct sh_refine_state *rs = t->rs;
    struct sh_fn *fn;
    bool same;
    int rc;

    if (rs == NULL)
        return ERR_OK;
    if ((fn = fn_named(t, callee, &rc)) == NULL)
        return rc;
    if (fn->pass == rs->pass + 1 && fn->nargs != UINT32_MAX) { /* called before in this pass */
        uint32_t at = fn->args_at, n = fn->nargs;
        if ((rc = record(t, &at, &n, &same, false)) != ERR_OK)
            return rc;
        if (!same && !rs->lenient) /* the first call's context stands */
            return cursor_fail_at(t->c.e, st->line, st->col,
                                  "@%s is called with other shapes here than before: its body "
                                  "is refined for one call context only",
                                  callee);
    } else {
        uint32_t at = fn->args_at, n = fn->nargs;
        if ((rc = record(t, &at, &n, &same, true)) != ERR_OK)
            return rc;
        fn = fn_named(t, callee, &rc);
        fn->args_at = at;
        fn->nargs = n;
        fn->pass = rs->pass + 1;
        rs->changed |= !same;
    }
    snprintf(t->why, sizeof(t->why), "@%s's results are not known: %s", callee,
             fn->why[0] != '\0' ? fn->why : "a ? in its body stays unknown");
    if (fn->nrets != UINT32_MAX) {
        t->hint = vec_at(&rs->dims, fn->rets_at);
        t->nhint = fn->nrets;
        t->hint_at = 0;
        t->hint_what = "the callee's results";
    }
    return ERR_OK;
}

void sh_refine_param(struct sh_translator *t, uint32_t narg)
{
    struct sh_refine_state *rs = t->rs;
    int rc;
    const struct sh_fn *fn = rs != NULL ? fn_named(t, t->fname, &rc) : NULL;

    if (fn == NULL || fn->nargs == UINT32_MAX || narg >= fn->nargs ||
        !((const struct sh_fnval *)vec_at(&rs->vals, fn->args_at + narg))->array)
        return;
    t->hint = vec_at(&rs->dims, fn->args_at + narg);
    t->nhint = 1;
    t->hint_at = 0;
    t->hint_what = "its call's operand";
}

int sh_refine_param_done(struct sh_translator *t, uint32_t narg)
{
    struct sh_refine_state *rs = t->rs;
    int rc;
    const struct sh_fn *fn = rs != NULL ? fn_named(t, t->fname, &rc) : NULL;
    const struct sh_fnval *v;

    t->hint = NULL;
    if (fn == NULL || fn->nargs == UINT32_MAX || narg >= fn->nargs)
        return ERR_OK;
    v = vec_at(&rs->vals, fn->args_at + narg);
    if (!v->folded)
        return ERR_OK;
    struct sh_fold f = {.n = 1, .v = {v->v}};
    return sh_fold_set(t, (uint32_t)(t->values.n - 1), &f);
}

int sh_refine_return(struct sh_translator *t)
{
    struct sh_refine_state *rs = t->rs;
    struct sh_fn *fn;
    bool same;
    int rc;

    if (rs == NULL || strcmp(t->fname, t->entry_name) == 0)
        return ERR_OK;
    if ((fn = fn_named(t, t->fname, &rc)) == NULL)
        return rc;
    uint32_t at = fn->rets_at, n = fn->nrets;
    if ((rc = record(t, &at, &n, &same, true)) != ERR_OK)
        return rc;
    fn = fn_named(t, t->fname, &rc);
    fn->rets_at = at;
    fn->nrets = n;
    rs->changed |= !same;
    return ERR_OK;
}

void sh_refine_note(struct sh_translator *t)
{
    struct cursor *c = &t->c;
    int rc;
    struct sh_fn *fn = fn_named(t, t->fname, &rc);

    if (fn == NULL || fn->why[0] != '\0')
        return; /* no room to note it: the strict pass refuses the call all the same */
    if (t->refine_st != NULL)
        snprintf(fn->why, sizeof(fn->why), "at %zu:%zu, %.*s's result: %.120s", c->line,
                 cursor_col(c), (int)(t->refine_st->op_len > 60 ? 60 : t->refine_st->op_len),
                 c->s + t->refine_st->op_off, t->why);
    else
        snprintf(fn->why, sizeof(fn->why), "at %zu:%zu, a ? of an argument no call gives", c->line,
                 cursor_col(c));
}
