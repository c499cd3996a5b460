/*
 * stablehlo_type.c - MLIR types of the StableHLO translator (stablehlo_int.h) written as XLA
 * shapes: tensor<..>, tuple<..>, tokens, and the element types, quantized ones at their
 * storage type.
 *
 * The builtin types as MLIR prints them (mlir/IR/BuiltinTypes.td; LangRef "Builtin Types"):
 *   tensor<2x3xf32>, tensor<f32> (rank 0), tensor<2x?xf32> (dynamic), tensor<*xf32>
 *   (unranked), tensor<4xf32, #encoding> (an encoding after a comma), complex<f32>,
 *   tuple<tensor<i32>, tuple<>> (nested), integers iN / siN / uiN, floats f16 bf16 f32 f64
 *   and the f8 / f4 kinds (f8E4M3FN ...); !stablehlo.token; and the quant dialect's
 *   !quant.uniform<STORAGE[<min:max>]:EXPRESSED[:AXIS], SCALE[:ZERO] | {..}> whose storage
 *   type is what occupies memory (mlir/Dialect/Quant/IR/QuantTypes.h, UniformQuantizedType:
 *   "storage type ... the integral type used to store values"; the StableHLO spec's
 *   QuantizedTensorElementType in openxla/stablehlo docs/spec.md).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "planner/dtype.h"
#include "planner/import/stablehlo_int.h"

#define SH_MAX_TUPLE_DEPTH 8 /* the HLO parser's bound on nested tuples */

static bool digit(char ch)
{
    return ch >= '0' && ch <= '9';
}

/* The end of the element type that starts at q: the first ',' or '>' outside <..>. */
static size_t elem_end(const struct cursor *c, size_t q)
{
    unsigned angle = 0;
    for (; q < c->len && c->s[q] != '\n'; q++) {
        char ch = c->s[q];
        if (ch == '<') {
            angle++;
        } else if (ch == '>' && angle-- == 0) {
            break;
        } else if (ch == ',' && angle == 0) {
            break;
        } else if (ch == '"') { /* a quoted part of a dialect type */
            size_t e = q + 1;
            while (e < c->len && c->s[e] != '"' && c->s[e] != '\n')
                e += c->s[e] == '\\' ? 2 : 1;
            q = e < c->len ? e : c->len - 1;
        }
    }
    return q;
}

/* An integer type "i8", "si8", "ui8" (MLIR) or "u8" (the quant dialect's unsigned storage)
 * as XLA names it (pred for i1); false when p[0..n) is not one. */
static bool int_type(const char *p, size_t n, char *out, size_t cap)
{
    char sign = 's';
    size_t k = 0;

    if (n == 2 && memcmp(p, "i1", 2) == 0) {
        snprintf(out, cap, "pred");
        return true;
    }
    if (n > 2 && (memcmp(p, "si", 2) == 0 || memcmp(p, "ui", 2) == 0)) {
        sign = p[0] == 'u' ? 'u' : 's';
        k = 2;
    } else if (n > 1 && (p[0] == 'i' || p[0] == 'u')) {
        sign = p[0] == 'u' ? 'u' : 's';
        k = 1;
    } else {
        return false;
    }
    for (size_t q = k; q < n; q++)
        if (!digit(p[q]))
            return false;
    return snprintf(out, cap, "%c%.*s", sign, (int)(n - k), p + k) < (int)cap;
}

/* The storage type of !quant.uniform<..> (p just past "!quant.uniform<"), up to the ':' or
 * the storage range "<min:max>" after it. */
static size_t quant_storage(const char *p, size_t n)
{
    size_t k = 0;
    while (k < n && p[k] != ':' && p[k] != '<' && p[k] != ',' && p[k] != '>')
        k++;
    return k;
}

/*
 * The element type s[at, at + n) as XLA's name in out: i1 -> pred, i8 / si8 -> s8, ui8 -> u8,
 * f8E4M3FN -> f8e4m3fn, complex<f32> -> c64, complex<f64> -> c128, !quant.uniform<i8:f32, ..>
 * -> s8 (its storage). A name XLA does not have is an error at the cursor.
 */
static int elem_type(struct sh_translator *t, size_t at, size_t n, char *out, size_t cap)
{
    struct cursor *c = &t->c;
    const char *p = c->s + at;
    static const char quant[] = "!quant.uniform<";
    size_t k;

    if (n > sizeof(quant) - 1 && memcmp(p, quant, sizeof(quant) - 1) == 0) {
        p += sizeof(quant) - 1;
        n = quant_storage(p, n - (sizeof(quant) - 1));
        if (!int_type(p, n, out, cap))
            return cursor_fail(c, "expected the integer storage type of a !quant.uniform type");
        return ERR_OK;
    }
    if (n == 12 && memcmp(p, "complex<f32>", 12) == 0) {
        snprintf(out, cap, "c64");
        return ERR_OK;
    }
    if (n == 12 && memcmp(p, "complex<f64>", 12) == 0) {
        snprintf(out, cap, "c128");
        return ERR_OK;
    }
    if (int_type(p, n, out, cap))
        return ERR_OK;
    for (k = 0; k < n && k + 1 < cap; k++) /* floats: XLA's names are the lower case */
        out[k] = (char)(p[k] >= 'A' && p[k] <= 'Z' ? p[k] - 'A' + 'a' : p[k]);
    out[k] = '\0';
    if (k == n && n > 0 && (p[0] == 'f' || p[0] == 'b') && dtype_parse(out, k) != DT_INVALID)
        return ERR_OK;
    return cursor_fail(c, "the element type '%.*s' has no XLA equivalent", (int)(n > 60 ? 60 : n),
                       p);
}

/* The type text from start ("tensor<") to its closing '>' for a message: its length, at
 * most 80. */
static int type_text_len(const struct cursor *c, size_t start)
{
    size_t e = elem_end(c, start + 7);
    e = e < c->len && c->s[e] == '>' ? e + 1 : e;
    return (int)(e - start > 80 ? 80 : e - start);
}

/* The shape of the type at start with every ? written N ("Nx1"), for the refusal's example
 * of a binding, into buf. */
static void bind_example(const struct cursor *c, size_t start, char *buf, size_t cap)
{
    size_t n = 0, q = start + 7;

    buf[0] = '\0';
    while (q < c->len && (digit(c->s[q]) || c->s[q] == '?' || c->s[q] == 'x') && n + 2 < cap) {
        if (c->s[q] == 'x' && (q + 1 >= c->len || !(digit(c->s[q + 1]) || c->s[q + 1] == '?')))
            break; /* the 'x' before the element type */
        buf[n++] = c->s[q] == '?' ? 'N' : c->s[q];
        q++;
    }
    buf[n] = '\0';
}

/* A ? (at the cursor) that nothing binds, refused naming it and how to bind it. */
static int unbound(struct sh_translator *t, size_t start, unsigned rank)
{
    struct cursor *c = &t->c;
    int tl = type_text_len(c, start);
    char ex[80];

    if (t->arg_len > 0 && !t->arg_entry)
        return cursor_fail(c,
                           "dim %u of '%.*s' is dynamic (?) in an argument of @%s, which is not "
                           "the entry function @%s: only the entry's arguments are bound, and a "
                           "called function's are not refined yet",
                           rank, tl, c->s + start, t->fname, t->entry_name);
    if (t->arg_len > 0) {
        bind_example(c, start, ex, sizeof(ex));
        return cursor_fail(c,
                           "dim %u of '%.*s' is dynamic (?): tpuplan plans static shapes; bind "
                           "it with --bind %.*s=%s (N the real size) or export with concrete "
                           "shapes",
                           rank, tl, c->s + start, (int)(t->arg_len > 60 ? 60 : t->arg_len),
                           c->s + t->arg_off, ex);
    }
    if (t->bind == NULL)
        return cursor_fail(c,
                           "dim %u of '%.*s' is dynamic (?): tpuplan plans static shapes; bind "
                           "the entry function's dynamic arguments with --bind NAME=SHAPE or "
                           "export with concrete shapes",
                           rank, tl, c->s + start);
    if (t->refine_st != NULL)
        return cursor_fail(c,
                           "dim %u of '%.*s', the result of %.*s at %zu:%zu, is dynamic (?) "
                           "and not known: %s",
                           rank, tl, c->s + start, (int)t->refine_st->op_len,
                           c->s + t->refine_st->op_off, t->refine_st->line, t->refine_st->col,
                           t->why);
    return cursor_fail(c,
                       "dim %u of '%.*s' is dynamic (?) and not known from the bindings "
                       "(only the entry function's arguments are bound)",
                       rank, tl, c->s + start);
}

/* One dim at the cursor (q past its digits; q == c->i for a ?) against the hint h (NULL:
 * none): a ?'s text into d (d[0] NUL: the static dim's own text stands). */
static int one_dim(struct sh_translator *t, size_t start, unsigned rank, size_t q,
                   const struct sh_dims *h, char *d, size_t cap)
{
    struct cursor *c = &t->c;
    int64_t v = 0;
    size_t at = c->i;

    if (q == c->i) { /* ? */
        if (!t->dyn_ok && t->rs != NULL && t->rs->lenient && (h == NULL || rank >= h->rank))
            sh_refine_note(t); /* and it stays ? in this pass */
        if (t->dyn_ok || (t->rs != NULL && t->rs->lenient && (h == NULL || rank >= h->rank)))
            return snprintf(d, cap, "?"), ERR_OK;
        if (h == NULL || rank >= h->rank)
            return unbound(t, start, rank);
        snprintf(d, cap, "%lld", (long long)h->d[rank]);
        return ERR_OK;
    }
    if (h != NULL && !text_uint(c->s, q, &at, &v))
        return cursor_fail(c, "dim %u of '%.*s' is too large", rank, type_text_len(c, start),
                           c->s + start);
    if (h != NULL && rank < h->rank && h->d[rank] != v)
        return cursor_fail(c, "dim %u of '%.*s' is %lld, not %lld as %s give", rank,
                           type_text_len(c, start), c->s + start, (long long)v,
                           (long long)h->d[rank], t->hint_what);
    d[0] = '\0';
    return ERR_OK;
}

/* The dims of tensor<..> at the cursor (just past "tensor<", start the type's first byte),
 * each followed by 'x', written "a,b" into b. A dynamic dim (?) takes the hint's
 * (stablehlo_refine.c), and is refused at its column, naming it, when there is none; an
 * unranked tensor is refused. */
static int tensor_dims(struct sh_translator *t, size_t start, struct sh_buf *b)
{
    struct cursor *c = &t->c;
    const struct sh_dims *h =
        t->hint != NULL && t->hint_at < t->nhint && !t->dyn_ok ? &t->hint[t->hint_at] : NULL;
    unsigned rank = 0;
    int rc;

    t->hint_at += h != NULL;
    if (h != NULL && h->rank == UINT32_MAX) /* a callee's result not known yet */
        h = NULL;
    for (;;) {
        size_t q = c->i;
        char d[32] = "";
        while (q < c->len && digit(c->s[q]))
            q++;
        if (q == c->i && q < c->len && c->s[q] == '*') {
            c->i = q;
            return cursor_fail(c, "'%.*s' is unranked: tpuplan plans static shapes",
                               type_text_len(c, start), c->s + start);
        }
        bool dyn = q == c->i && q < c->len && c->s[q] == '?';
        if (!dyn && (q == c->i || q >= c->len || c->s[q] != 'x'))
            break; /* the element type */
        if ((rc = one_dim(t, start, rank, q, h, d, sizeof(d))) != ERR_OK)
            return rc;
        q += dyn;
        if (q >= c->len || c->s[q] != 'x')
            return cursor_fail(c, "expected 'x' after dim %u", rank);
        if ((rank > 0 && (rc = sh_buf_add(t, b, ",", 1)) != ERR_OK) ||
            (rc = d[0] != '\0' ? sh_buf_str(t, b, d) : sh_buf_add(t, b, c->s + c->i, q - c->i)) !=
                ERR_OK)
            return rc;
        rank++;
        c->i = q + 1;
    }
    if (h != NULL && rank != h->rank && !t->dyn_ok)
        return cursor_fail(c, "'%.*s' has rank %u, not %u as %s give", type_text_len(c, start),
                           c->s + start, rank, h->rank, t->hint_what);
    return ERR_OK;
}

/* tensor<..> at the cursor (just past "tensor<") as "T[a,b]". */
static int tensor_type(struct sh_translator *t, struct sh_buf *b)
{
    struct cursor *c = &t->c;
    struct sh_buf dims = {0};
    char et[32];
    int rc;

    if ((rc = tensor_dims(t, c->i - 7, &dims)) != ERR_OK)
        goto out;
    size_t end = elem_end(c, c->i);
    if ((rc = elem_type(t, c->i, end - c->i, et, sizeof(et))) != ERR_OK)
        goto out;
    c->i = end;
    if (cursor_peek(c) == ',') /* an encoding: #stablehlo.bounds<..>, a sparsity, .. */
        c->i = elem_end(c, c->i + 1);
    if (!cursor_accept(c, '>')) {
        rc = cursor_fail(c, "expected '>' to close the tensor type");
        goto out;
    }
    rc = sh_buf_printf(t, b, "%s[%s]", et, dims.p != NULL ? dims.p : "");
out:
    sh_buf_free(&dims);
    return rc;
}

static int type_nested(struct sh_translator *t, struct sh_buf *b, unsigned depth);

/* tuple<T, T, ..> at the cursor (just past "tuple<") as "(S, S, ..)". */
static int tuple_type(struct sh_translator *t, struct sh_buf *b, unsigned depth)
{
    struct cursor *c = &t->c;
    int rc;

    if ((rc = sh_buf_add(t, b, "(", 1)) != ERR_OK)
        return rc;
    cursor_skip_blanks(c);
    for (uint32_t n = 0; cursor_peek(c) != '>'; n++) {
        if (n == SH_MAX_RESULTS)
            return cursor_fail(c, "more than %d elements in a tuple type", SH_MAX_RESULTS);
        if ((n > 0 && (rc = sh_buf_add(t, b, ", ", 2)) != ERR_OK) ||
            (rc = type_nested(t, b, depth + 1)) != ERR_OK)
            return rc;
        cursor_skip_blanks(c);
        if (!cursor_accept(c, ','))
            break;
        cursor_skip_blanks(c);
    }
    if (!cursor_accept(c, '>'))
        return cursor_fail(c, "expected ',' or '>' in the tuple type");
    return sh_buf_add(t, b, ")", 1);
}

static int type_nested(struct sh_translator *t, struct sh_buf *b, unsigned depth)
{
    struct cursor *c = &t->c;

    cursor_skip_blanks(c);
    if (cursor_lit(c, "!stablehlo.token") || cursor_lit(c, "!mhlo.token"))
        return sh_buf_add(t, b, "token[]", 7);
    if (cursor_lit(c, "tensor<"))
        return tensor_type(t, b);
    if (cursor_starts(c, "tuple<") && depth >= SH_MAX_TUPLE_DEPTH)
        return cursor_fail(c, "tuple types nested more than %d deep", SH_MAX_TUPLE_DEPTH);
    if (cursor_lit(c, "tuple<"))
        return tuple_type(t, b, depth);
    return cursor_fail(c, "expected a tensor<..>, tuple<..> or token type");
}

int sh_type(struct sh_translator *t, struct sh_buf *b)
{
    return type_nested(t, b, 0);
}

int sh_type_list(struct sh_translator *t, struct sh_buf *b, bool as_tuple, uint32_t *n)
{
    struct cursor *c = &t->c;
    bool paren;
    int rc;

    cursor_skip_blanks(c);
    paren = cursor_accept(c, '(');
    *n = 0;
    if (as_tuple && (rc = sh_buf_add(t, b, "(", 1)) != ERR_OK)
        return rc;
    cursor_skip_blanks(c);
    while (!(paren && cursor_peek(c) == ')')) {
        if (*n > 0 && (rc = sh_buf_add(t, b, ", ", 2)) != ERR_OK)
            return rc;
        if ((rc = sh_type(t, b)) != ERR_OK)
            return rc;
        if (++*n > SH_MAX_RESULTS)
            return cursor_fail(c, "more than %d types in a list", SH_MAX_RESULTS);
        cursor_skip_blanks(c);
        if (cursor_peek(c) == '{' && (rc = sh_skip_group(c)) != ERR_OK) /* result attributes */
            return rc;
        cursor_skip_blanks(c);
        if (cursor_peek(c) != ',')
            break;
        c->i++;
        cursor_skip_blanks(c);
    }
    if (paren && !cursor_accept(c, ')'))
        return cursor_fail(c, "expected ')' to close the type list");
    return as_tuple ? sh_buf_add(t, b, ")", 1) : ERR_OK;
}

const char *sh_next_elem(const char **p, size_t *len)
{
    const char *at = *p, *q = at;
    unsigned depth = 0;
    while (*q != '\0' && !(depth == 0 && (*q == ',' || *q == ')'))) {
        depth += *q == '[' || *q == '(';
        depth -= (*q == ']' || *q == ')') && depth > 0;
        q++;
    }
    *len = (size_t)(q - at);
    *p = *q == ',' ? q + 1 + (q[1] == ' ') : q;
    return at;
}

uint32_t sh_rank_of(const char *shape)
{
    const char *p = shape != NULL ? strchr(shape, '[') : NULL;
    uint32_t n = 0;
    if (p == NULL || p[1] == ']')
        return 0;
    for (n = 1; *p != '\0' && *p != ']'; p++)
        n += *p == ',';
    return n;
}

int sh_host_layout(struct sh_translator *t, struct sh_buf *shape)
{
    uint32_t rank = sh_rank_of(shape->p);
    int rc;

    if (shape->p == NULL || shape->p[0] == '(' || strncmp(shape->p, "token", 5) == 0)
        return ERR_OK; /* a tuple or token: no layout of its own */
    if ((rc = sh_buf_add(t, shape, "{", 1)) != ERR_OK)
        return rc;
    for (uint32_t d = rank; d > 0; d--)
        if ((rc = sh_buf_printf(t, shape, "%s%u", d < rank ? "," : "", d - 1)) != ERR_OK)
            return rc;
    return sh_buf_add(t, shape, ":S(5)}", 6);
}
