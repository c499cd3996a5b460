/*
 * shape.c - XLA shape strings: parse and print exactly as XLA writes them (see shape.h).
 *
 * The grammar is the one XLA's printers produce (xla/shape_util.cc
 * ShapeUtil::PrintHumanStringWithLayout, xla/layout.cc Layout::Print and Tile::Print,
 * read in openxla/xla):
 *
 *   shape  := dtype '[' [dim {',' dim}] ']' [layout]
 *   layout := '{' [m2m {',' m2m}] [':' attr...] '}'
 *   attr   := 'T' tile {tile} | 'L(' n ')' | 'E(' n ')' | 'S(' n ')'
 *   tile   := '(' tdim {',' tdim} ')'        tdim: n, or '*' (Tile::kCombineDimension)
 *   tuple  := '(' [shape {',' ' '? [comment] shape}] ')'    comment: XLA's index mark
 *
 * As in XLA's lexer (xla/hlo/parser/hlo_lexer.cc), white space may stand between the tokens
 * after the element type: "f32[1000, 1000]", "{0, 1:T(2, * , 128)}" (hlo_parser_test.cc).
 *
 * Layout::Print writes the attributes in the order T, L, #, *, E, S, SC, P, M and omits
 * each one at its default (no tiles, L(1), E(0), S(0)); we print in that order too, so a
 * canonical string round-trips byte for byte. A parse never allocates.
 */
#include "planner/shape.h"

#include <stdio.h>
#include <string.h>

#include "planner/base/cursor.h"

/*
 * The cursor is over the whole input, so offsets in messages are offsets in what the user
 * typed (a shape names offsets, not lines: it is one line of a larger input).
 */

/* The byte at the cursor, -1 at the end (a NUL byte is a byte here, not the end). */
static int peek(const struct cursor *c)
{
    return c->i < c->len ? (unsigned char)c->s[c->i] : -1;
}

static const char *found(const struct cursor *c, char *buf, size_t cap)
{
    int ch = peek(c);

    if (ch < 0)
        snprintf(buf, cap, "end of input");
    else if (ch >= 0x20 && ch < 0x7f)
        snprintf(buf, cap, "'%c'", ch);
    else
        snprintf(buf, cap, "byte 0x%02x", (unsigned)ch);
    return buf;
}

/* ERR_INVALID "expected X at offset N, found Y". */
static int expected(const struct cursor *c, const char *what, struct err *e)
{
    char f[32];

    return err_set(e, ERR_INVALID, "shape", "expected %s at offset %zu, found %s", what, c->i,
                   found(c, f, sizeof(f)));
}

/* Skips white space between two tokens (line ends too: an HLO shape may span lines). */
static void ws(struct cursor *c)
{
    cursor_skip_space(c);
}

/* Steps past ch and the white space after it. */
static int expect(struct cursor *c, char ch, const char *what, struct err *e)
{
    ws(c);
    if (!cursor_accept(c, ch))
        return expected(c, what, e);
    ws(c);
    return 0;
}

/* cursor_accept and the white space after ch. */
static bool accept(struct cursor *c, char ch)
{
    ws(c);
    if (!cursor_accept(c, ch))
        return false;
    ws(c);
    return true;
}

/* A decimal number without sign, 0..INT64_MAX. `what` names it in messages ("dimension"). */
static int parse_num(struct cursor *c, const char *what, int64_t *out, struct err *e)
{
    size_t start = c->i;
    uint64_t v = 0;

    if (peek(c) == '-')
        return err_set(e, ERR_INVALID, "shape", "negative %s at offset %zu", what, start);
    if (peek(c) < '0' || peek(c) > '9')
        return expected(c, what, e);
    while (peek(c) >= '0' && peek(c) <= '9') {
        unsigned d = (unsigned)(peek(c) - '0');
        if (__builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, d, &v) ||
            v > (uint64_t)INT64_MAX)
            return err_set(e, ERR_OVERFLOW, "shape",
                           "%s at offset %zu is larger than 2^63-1 (9223372036854775807)", what,
                           start);
        c->i++;
    }
    *out = (int64_t)v;
    return 0;
}

static int parse_small(struct cursor *c, const char *what, int64_t lo, int64_t hi, int64_t *out,
                       struct err *e)
{
    size_t start = c->i;
    int rc = parse_num(c, what, out, e);

    if (rc == 0 && (*out < lo || *out > hi))
        rc = err_set(e, ERR_INVALID, "shape", "%s %lld at offset %zu is outside %lld..%lld", what,
                     (long long)*out, start, (long long)lo, (long long)hi);
    return rc;
}

static int parse_dtype(struct cursor *c, struct shape *out, struct err *e)
{
    size_t start = c->i;

    while ((peek(c) >= 'a' && peek(c) <= 'z') || (peek(c) >= '0' && peek(c) <= '9') ||
           (peek(c) >= 'A' && peek(c) <= 'Z'))
        c->i++;
    if (c->i == start)
        return expected(c, "an element type (f32, bf16, s8, ...)", e);
    out->dtype = dtype_parse(c->s + start, c->i - start);
    if (out->dtype == DT_INVALID)
        return err_set(e, ERR_NOTFOUND, "shape",
                       "unknown element type '%.*s' at offset %zu (XLA spellings: pred, s4, "
                       "s8, u8, s16, s32, s64, f16, bf16, f32, f64, c64, c128, f8e4m3fn, "
                       "f8e5m2, ...)",
                       (int)(c->i - start > 32 ? 32 : c->i - start), c->s + start, start);
    return 0;
}

static int parse_dims(struct cursor *c, struct shape *out, struct err *e)
{
    int rc;

    if (!cursor_accept(c, '['))
        return expected(c, "'['", e);
    ws(c);
    out->rank = 0;
    if (cursor_accept(c, ']'))
        return 0;
    for (;;) {
        if (peek(c) == '<' || peek(c) == '?')
            return err_set(e, ERR_INVALID, "shape",
                           "dimension %u at offset %zu is dynamic ('%s'): tpuplan plans static "
                           "shapes, write its bound as a plain number",
                           out->rank, c->i, peek(c) == '?' ? "?" : "<=");
        if (out->rank == SHAPE_MAX_RANK)
            return err_set(e, ERR_LIMIT, "shape",
                           "rank above the limit of %d at offset %zu (XLA sets no limit; "
                           "tpuplan uses NumPy's 32)",
                           SHAPE_MAX_RANK, c->i);
        if ((rc = parse_num(c, "dimension", &out->dims[out->rank], e)) != 0)
            return rc;
        out->rank++;
        if (accept(c, ']'))
            return 0;
        if ((rc = expect(c, ',', "',' or ']' after a dimension", e)) != 0)
            return rc;
    }
}

static int parse_tile(struct cursor *c, struct tile *t, struct err *e)
{
    int rc;

    t->rank = 0;
    if ((rc = expect(c, '(', "'(' to start a tile", e)) != 0)
        return rc;
    for (;;) {
        if (t->rank == SHAPE_MAX_TILE_RANK)
            return err_set(e, ERR_LIMIT, "shape", "tile at offset %zu has more than %d dimensions",
                           c->i, SHAPE_MAX_TILE_RANK);
        /* '*': the dimension is combined with the next minor one before tiling (xla/layout.h
         * Tile::kCombineDimension). Tiles are small: 2^31 elements per tile dim is far past
         * any real TPU tile. */
        if (cursor_accept(c, '*'))
            t->dims[t->rank] = SHAPE_TILE_COMBINE;
        else if ((rc = parse_small(c, "tile dimension", 1, INT32_MAX, &t->dims[t->rank], e)) != 0)
            return rc;
        t->rank++;
        if (accept(c, ')'))
            return 0;
        if ((rc = expect(c, ',', "',' or ')' in a tile", e)) != 0)
            return rc;
    }
}

/* One attribute after ':' ; `seen` guards against repeats. */
static int parse_attr(struct cursor *c, struct shape *out, unsigned *seen, struct err *e)
{
    size_t at = c->i;
    int ch = peek(c);
    int64_t v = 0;
    int rc;
    unsigned bit;

    switch (ch) {
    case 'T':
        bit = 1;
        break;
    case 'L':
        bit = 2;
        break;
    case 'E':
        bit = 4;
        break;
    case 'S':
        bit = 8;
        break;
    case 'D':
    case '#':
    case '*':
    case 'P':
    case 'M':
        return err_set(e, ERR_INVALID, "shape",
                       "layout attribute '%c' at offset %zu is not supported (sparse or "
                       "physical-shape layouts)",
                       ch, at);
    default:
        return expected(c, "a layout attribute T(..), L(n), E(n) or S(n)", e);
    }
    if (*seen & bit)
        return err_set(e, ERR_INVALID, "shape", "layout attribute '%c' repeated at offset %zu", ch,
                       at);
    *seen |= bit;
    c->i++;
    if (ch == 'S' && peek(c) == 'C')
        return err_set(e, ERR_INVALID, "shape",
                       "layout attribute 'SC' (split configs) at offset %zu is not supported", at);
    if (ch == 'T') {
        out->ntiles = 0;
        do {
            if (out->ntiles == SHAPE_MAX_TILES)
                return err_set(e, ERR_LIMIT, "shape", "more than %d tiles at offset %zu",
                               SHAPE_MAX_TILES, c->i);
            if ((rc = parse_tile(c, &out->tiles[out->ntiles], e)) != 0)
                return rc;
            out->ntiles++;
            ws(c);
        } while (peek(c) == '(');
        return 0;
    }
    if ((rc = expect(c, '(', "'('", e)) != 0)
        return rc;
    if (ch == 'L') {
        if ((rc = parse_small(c, "tail padding alignment", 1, INT32_MAX, &v, e)) != 0)
            return rc;
        out->tail_align = v;
    } else if (ch == 'E') {
        /* E(0) means "unset" and XLA never prints it; the widest element is 128 bits. */
        if ((rc = parse_small(c, "element size in bits", 1, 128, &v, e)) != 0)
            return rc;
        out->element_size_bits = (uint8_t)v;
    } else {
        if ((rc = parse_small(c, "memory space", 0, 127, &v, e)) != 0)
            return rc;
        out->memory_space = (int8_t)v;
        out->memory_space_given = true;
    }
    if ((rc = expect(c, ')', "')'", e)) != 0)
        return rc;
    return 0;
}

static int parse_layout(struct cursor *c, struct shape *out, struct err *e)
{
    size_t start = c->i;
    uint8_t n = 0;
    uint32_t used = 0;
    unsigned seen = 0;
    int64_t v = 0;
    int rc;

    c->i++; /* '{' */
    ws(c);
    out->has_layout = true;
    if (peek(c) != ':' && peek(c) != '}') {
        for (;;) {
            size_t at = c->i;
            if (n == out->rank)
                return err_set(e, ERR_INVALID, "shape",
                               "layout at offset %zu lists more dimensions than the rank %u", start,
                               out->rank);
            if ((rc = parse_num(c, "layout dimension", &v, e)) != 0)
                return rc;
            if (v >= out->rank)
                return err_set(e, ERR_INVALID, "shape",
                               "layout dimension %lld at offset %zu is not a dimension of a "
                               "rank-%u shape",
                               (long long)v, at, out->rank);
            if (used & (1u << v))
                return err_set(e, ERR_INVALID, "shape",
                               "layout dimension %lld at offset %zu is repeated: the layout "
                               "must be a permutation of the dimensions",
                               (long long)v, at);
            used |= 1u << v;
            out->minor_to_major[n++] = (uint8_t)v;
            if (!accept(c, ','))
                break;
        }
    }
    if (n != out->rank)
        return err_set(e, ERR_INVALID, "shape",
                       "layout at offset %zu lists %u dimensions but the rank is %u: it must "
                       "be a permutation of the dimensions",
                       start, n, out->rank);
    if (accept(c, ':')) {
        if (peek(c) == '}')
            return expected(c, "a layout attribute after ':'", e);
        while (peek(c) != '}' && peek(c) >= 0) {
            if ((rc = parse_attr(c, out, &seen, e)) != 0)
                return rc;
            ws(c);
        }
    }
    if ((rc = expect(c, '}', "'}' to close the layout", e)) != 0)
        return rc;
    if ((rc = shape_validate(out, e)) != 0) {
        char pre[64];
        snprintf(pre, sizeof(pre), "layout at offset %zu: ", start);
        err_prefix(e, NULL, pre);
    }
    return rc;
}

/* One array shape at the cursor; stops after it. */
static int parse_array(struct cursor *c, struct shape *out, struct err *e)
{
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = parse_dtype(c, out, e)) != 0)
        return rc;
    if ((rc = parse_dims(c, out, e)) != 0)
        return rc;
    ws(c);
    if (peek(c) == '{')
        return parse_layout(c, out, e);
    return 0;
}

static int parse_end(struct cursor *c, struct err *e)
{
    cursor_skip_space(c);
    return peek(c) < 0 ? 0 : expected(c, "end of the shape", e);
}

/* XLA puts a comment holding "index=5" before every fifth tuple element (xla/shape_util.cc
 * PrintTupleShapes, kAnnotationPrintInterval = 5); skip any C comment before an element. */
static int skip_index_comment(struct cursor *c, struct err *e)
{
    size_t start = c->i;

    if (peek(c) != '/')
        return 0;
    if (c->i + 1 >= c->len || c->s[c->i + 1] != '*')
        return expected(c, "a shape or a /*...*/ comment", e);
    for (c->i += 2; c->i + 1 < c->len; c->i++)
        if (c->s[c->i] == '*' && c->s[c->i + 1] == '/') {
            c->i += 2;
            cursor_skip_space(c);
            return 0;
        }
    c->i = c->len;
    return err_set(e, ERR_INVALID, "shape", "unterminated comment at offset %zu", start);
}

int shape_parse(const char *s, size_t len, struct shape *out, struct err *e)
{
    struct cursor c = cursor_make(s, len, e);
    int rc;

    cursor_skip_space(&c);
    if (peek(&c) == '(')
        return err_set(e, ERR_INVALID, "shape",
                       "a tuple at offset %zu where one array shape is expected", c.i);
    if ((rc = parse_array(&c, out, e)) != 0)
        return rc;
    return parse_end(&c, e);
}

int shape_list_parse(const char *s, size_t len, struct shape_list *out, struct err *e)
{
    struct cursor c = cursor_make(s, len, e);
    char ctx[40];
    int rc;

    out->is_tuple = false;
    out->n = 0;
    cursor_skip_space(&c);
    if (!cursor_accept(&c, '(')) {
        if ((rc = parse_array(&c, &out->elems[0], e)) != 0)
            return rc;
        out->n = 1;
        return parse_end(&c, e);
    }
    out->is_tuple = true;
    cursor_skip_space(&c);
    if (!cursor_accept(&c, ')')) {
        for (;;) {
            cursor_skip_space(&c);
            if ((rc = skip_index_comment(&c, e)) != 0)
                return rc;
            if (peek(&c) == '(')
                return err_set(e, ERR_LIMIT, "shape", "nested tuple at offset %zu is not supported",
                               c.i);
            if (out->n == SHAPE_LIST_MAX)
                return err_set(e, ERR_LIMIT, "shape",
                               "tuple has more than %d elements (offset %zu)", SHAPE_LIST_MAX, c.i);
            if ((rc = parse_array(&c, &out->elems[out->n], e)) != 0) {
                snprintf(ctx, sizeof(ctx), "tuple element %zu: ", out->n);
                err_prefix(e, NULL, ctx);
                return rc;
            }
            out->n++;
            cursor_skip_space(&c);
            if (cursor_accept(&c, ')'))
                break;
            if ((rc = expect(&c, ',', "',' or ')' in a tuple", e)) != 0)
                return rc;
        }
    }
    return parse_end(&c, e);
}

/* Bounded appender: remembers overflow instead of checking at every call. */
struct out {
    char *buf;
    size_t cap;
    size_t n;
};

static void put(struct out *o, const char *s, size_t len)
{
    if (o->n + len < o->cap)
        memcpy(o->buf + o->n, s, len);
    o->n += len;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

static void putc_(struct out *o, char ch)
{
    put(o, &ch, 1);
}

static void putnum(struct out *o, int64_t v)
{
    char tmp[24];
    size_t i = sizeof(tmp);
    uint64_t u = (uint64_t)v;

    /* Dims and tiles are never negative (the parser rejects signs). */
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    put(o, tmp + i, sizeof(tmp) - i);
}

static void print_array(struct out *o, const struct shape *sh)
{
    bool attrs;

    puts_(o, dtype_name(sh->dtype));
    putc_(o, '[');
    for (unsigned i = 0; i < sh->rank; i++) {
        if (i > 0)
            putc_(o, ',');
        putnum(o, sh->dims[i]);
    }
    putc_(o, ']');
    if (!sh->has_layout)
        return;
    attrs = sh->ntiles > 0 || sh->tail_align > 1 || sh->element_size_bits != 0 ||
            sh->memory_space != 0 || sh->memory_space_given;
    if (sh->rank == 0 && !attrs)
        return; /* XLA does not print "{}" for scalars */
    putc_(o, '{');
    for (unsigned i = 0; i < sh->rank; i++) {
        if (i > 0)
            putc_(o, ',');
        putnum(o, sh->minor_to_major[i]);
    }
    if (attrs)
        putc_(o, ':');
    if (sh->ntiles > 0) {
        putc_(o, 'T');
        for (unsigned t = 0; t < sh->ntiles; t++) {
            putc_(o, '(');
            for (unsigned k = 0; k < sh->tiles[t].rank; k++) {
                if (k > 0)
                    putc_(o, ',');
                if (sh->tiles[t].dims[k] == SHAPE_TILE_COMBINE)
                    putc_(o, '*');
                else
                    putnum(o, sh->tiles[t].dims[k]);
            }
            putc_(o, ')');
        }
    }
    if (sh->tail_align > 1) {
        puts_(o, "L(");
        putnum(o, sh->tail_align);
        putc_(o, ')');
    }
    if (sh->element_size_bits != 0) {
        puts_(o, "E(");
        putnum(o, sh->element_size_bits);
        putc_(o, ')');
    }
    if (sh->memory_space != 0 || sh->memory_space_given) {
        puts_(o, "S(");
        putnum(o, sh->memory_space);
        putc_(o, ')');
    }
    putc_(o, '}');
}

static int finish(struct out *o)
{
    if (o->cap == 0)
        return ERR_LIMIT;
    if (o->n >= o->cap) {
        o->buf[0] = '\0';
        return ERR_LIMIT;
    }
    o->buf[o->n] = '\0';
    return (int)o->n;
}

int shape_print(const struct shape *sh, char *buf, size_t cap)
{
    struct out o = {buf, cap, 0};

    print_array(&o, sh);
    return finish(&o);
}

int shape_list_print(const struct shape_list *l, char *buf, size_t cap)
{
    struct out o = {buf, cap, 0};

    if (!l->is_tuple && l->n == 1) {
        print_array(&o, &l->elems[0]);
        return finish(&o);
    }
    putc_(&o, '(');
    for (size_t i = 0; i < l->n; i++) {
        if (i > 0 && i % 5 == 0) { /* XLA's PrintTupleShapes annotation */
            puts_(&o, ", /*index=");
            putnum(&o, (int64_t)i);
            puts_(&o, "*/");
        } else if (i > 0) {
            puts_(&o, ", ");
        }
        print_array(&o, &l->elems[i]);
    }
    putc_(&o, ')');
    return finish(&o);
}

int shape_validate(const struct shape *sh, struct err *e)
{
    uint32_t used = 0;
    unsigned wmax = sh->rank > 2 ? sh->rank : 2;

    if (sh->dtype <= DT_INVALID || sh->dtype >= DT_COUNT)
        return err_set(e, ERR_INVALID, "shape", "invalid element type %d", (int)sh->dtype);
    if (sh->rank > SHAPE_MAX_RANK)
        return err_set(e, ERR_LIMIT, "shape", "rank %u is above the limit of %d", sh->rank,
                       SHAPE_MAX_RANK);
    for (unsigned i = 0; i < sh->rank; i++)
        if (sh->dims[i] < 0)
            return err_set(e, ERR_INVALID, "shape", "dimension %u is negative (%lld)", i,
                           (long long)sh->dims[i]);
    if (!sh->has_layout)
        return 0;
    for (unsigned i = 0; i < sh->rank; i++) {
        unsigned d = sh->minor_to_major[i];
        if (d >= sh->rank || (used & (1u << d)))
            return err_set(e, ERR_INVALID, "shape",
                           "minor_to_major is not a permutation of the %u dimensions", sh->rank);
        used |= 1u << d;
    }
    if (sh->ntiles > SHAPE_MAX_TILES)
        return err_set(e, ERR_LIMIT, "shape", "%u tiles, the limit is %d", sh->ntiles,
                       SHAPE_MAX_TILES);
    for (unsigned t = 0; t < sh->ntiles; t++) {
        const struct tile *tl = &sh->tiles[t];
        if (tl->rank == 0 || tl->rank > SHAPE_MAX_TILE_RANK)
            return err_set(e, ERR_LIMIT, "shape", "tile %u has %u dimensions (1..%d allowed)", t,
                           tl->rank, SHAPE_MAX_TILE_RANK);
        /* Only the first tile must fit the shape; later tiles may tile the tile grid too,
         * e.g. XLA's alternative bf16 packing (8,128)(2,1,1,1) (openxla/xla
         * docs/tiled_layout.md). */
        if (t == 0 && tl->rank > wmax)
            return err_set(e, ERR_INVALID, "shape",
                           "tile %u has %u dimensions, more than the rank-%u shape can take "
                           "(at most max(rank, 2) = %u)",
                           t, tl->rank, sh->rank, wmax);
        for (unsigned k = 0; k < tl->rank; k++)
            if ((tl->dims[k] < 1 && tl->dims[k] != SHAPE_TILE_COMBINE) || tl->dims[k] > INT32_MAX)
                return err_set(e, ERR_INVALID, "shape", "tile %u dimension %u is %lld", t, k,
                               (long long)tl->dims[k]);
    }
    if (sh->element_size_bits != 0 && sh->element_size_bits < dtype_bits(sh->dtype))
        return err_set(e, ERR_INVALID, "shape",
                       "element size E(%u) is narrower than the %u-bit element type %s",
                       sh->element_size_bits, dtype_bits(sh->dtype), dtype_name(sh->dtype));
    if (sh->tail_align < 0 || sh->tail_align > INT32_MAX)
        return err_set(e, ERR_INVALID, "shape", "tail padding alignment L(%lld) is out of range",
                       (long long)sh->tail_align);
    return 0;
}

int shape_elements(const struct shape *sh, uint64_t *out, struct err *e)
{
    uint64_t n = 1;

    for (unsigned i = 0; i < sh->rank; i++)
        if (__builtin_mul_overflow(n, (uint64_t)sh->dims[i], &n) || n > (uint64_t)INT64_MAX)
            return err_set(e, ERR_OVERFLOW, "shape",
                           "element count of the shape overflows 2^63-1 at dimension %u", i);
    *out = n;
    return 0;
}
