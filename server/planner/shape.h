/*
 * shape.h - XLA shape strings: parse and print exactly as XLA writes them.
 *
 *   f32[8,128]{1,0:T(8,128)}            array with layout and a tile
 *   bf16[4,1024]{1,0:T(8,128)(2,1)}     chained tiles: (2,1) is a sub-tile
 *   pred[64]{0:T(1024)(128)(4,1)}       1-D tiles
 *   s4[8,256]{1,0:T(8,128)(8,1)E(4)}    element size in bits
 *   s32[]{:T(256)S(6)}                  scalar, memory space
 *   (s32[]{:T(256)}, f32[8,128]{1,0:T(8,128)})   tuple (see shape_list_*)
 *
 * A struct shape is a plain value (no pointers): copy it with `=`. shape_print() of a
 * parsed shape reproduces the input text exactly (parse then print is the identity on
 * canonical text), which the tests check.
 */
#ifndef TPUPLAN_SHAPE_H
#define TPUPLAN_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/dtype.h"
#include "planner/err.h"

/*
 * Bounds.
 *
 * SHAPE_MAX_RANK: XLA itself sets no rank limit (xla/shape.h keeps dimensions in an
 * unbounded vector; the HLO parser takes any count). We bound rank at 32, NumPy 1.x's
 * NPY_MAXDIMS (numpy/core/include/numpy/ndarraytypes.h), the first limit a JAX or
 * PyTorch user meets, so every array those frameworks can build fits.
 * SHAPE_MAX_TEXT: 32 dims of 19 digits plus a full layout stay below 1600 characters.
 */
#define SHAPE_MAX_RANK      32
#define SHAPE_MAX_TILES     4 /* T(..)(..)(..)(..); real TPU layouts use at most 3 */
#define SHAPE_MAX_TILE_RANK 4
#define SHAPE_MAX_TEXT      2048 /* longest printed array shape, NUL included */

/* A tile dimension written '*' (xla/layout.h Tile::kCombineDimension): the shape's
 * dimension is combined with the next minor one before tiling. */
#define SHAPE_TILE_COMBINE (-1)

struct tile {
    uint8_t rank;
    int64_t dims[SHAPE_MAX_TILE_RANK]; /* elements per tile dim, major to minor, or
                                        * SHAPE_TILE_COMBINE */
};

struct shape {
    enum dtype dtype;
    uint8_t rank;
    int64_t dims[SHAPE_MAX_RANK]; /* logical dims, as written */
    bool has_layout;              /* a {...} part was given or chosen */
    uint8_t minor_to_major[SHAPE_MAX_RANK];
    uint8_t ntiles;
    struct tile tiles[SHAPE_MAX_TILES];
    uint8_t element_size_bits; /* E(n); 0 = not given */
    int8_t memory_space;       /* S(n); 0 = default (HBM, printed only when given) */
    bool memory_space_given;
    int64_t tail_align; /* L(n): element count rounded up to a multiple; 0 = not given */
};

/*
 * Parses one array shape (not a tuple) from s[0..len). Fails with ERR_INVALID on any
 * syntax error, naming the character offset ("at offset 7"); ERR_NOTFOUND for an unknown
 * element type; ERR_LIMIT above the bounds (rank, tiles, tile rank); ERR_OVERFLOW for a
 * number that does not fit 63 bits; ERR_INVALID when the layout is not a permutation of
 * the dims. e->where is "shape"; callers add context with err_prefix().
 *
 * Accepted layout attributes, in XLA's print order (xla/layout.cc Layout::Print):
 * T(..)(..) tiles, L(n) tail padding alignment, E(n) element size in bits, S(n) memory
 * space; a tile dim may be '*' (combined with the next minor dim before tiling). White
 * space may stand between tokens after the element type, as XLA's lexer allows. Sparse and
 * exotic attributes (D, #, *, SC, P, M) and dynamic dims ("<=8", "?") are rejected with a
 * message that names them.
 */
ERR_MUST_CHECK int shape_parse(const char *s, size_t len, struct shape *out, struct err *e);

/*
 * Prints sh into buf (size cap) in XLA's syntax. Returns the length written (excluding
 * the NUL) or a negative ERR_LIMIT if cap is too small. The layout part is printed only
 * when sh->has_layout; like XLA (ShapeUtil::PrintHumanStringWithLayout) a scalar's layout
 * is left out when it would print as "{}".
 */
ERR_MUST_CHECK int shape_print(const struct shape *sh, char *buf, size_t cap);

/* A parsed tuple or single shape. Elements are stored inline (bounded). */
#define SHAPE_LIST_MAX 64
struct shape_list {
    bool is_tuple;
    size_t n;
    struct shape elems[SHAPE_LIST_MAX];
};

/*
 * Parses "shape" or "(shape, shape, ...)" (nested tuples are rejected with ERR_LIMIT;
 * more than SHAPE_LIST_MAX elements too). Errors inside an element say which one
 * ("tuple element 2: ...") and give offsets into the whole string. Printing a tuple uses
 * XLA's ", " separator and, like XLA, puts an index comment before every fifth element
 * (the text "index=5" between C comment markers); the parser skips such comments.
 */
ERR_MUST_CHECK int shape_list_parse(const char *s, size_t len, struct shape_list *out,
                                    struct err *e);
ERR_MUST_CHECK int shape_list_print(const struct shape_list *l, char *buf, size_t cap);

/*
 * Checks a shape built in code (the parser already enforces all of this): known dtype,
 * rank and dims within bounds, minor_to_major a permutation, tiles of rank 1..
 * SHAPE_MAX_TILE_RANK with positive dims, and the first tile no wider than max(rank, 2)
 * (a scalar or 1-D array may take a 2-D tile, its missing dims counting as 1:
 * server/planner/SOURCES.md#array-size; later tiles may be wider, as in XLA's (8,128)(2,1,1,1)),
 * E(n) no narrower than the element type. ERR_INVALID or ERR_LIMIT, where "shape".
 */
ERR_MUST_CHECK int shape_validate(const struct shape *sh, struct err *e);

/* Logical element count of sh, checked: ERR_OVERFLOW past INT64_MAX. */
ERR_MUST_CHECK int shape_elements(const struct shape *sh, uint64_t *out, struct err *e);

#endif
