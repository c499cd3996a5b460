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

/* Bounds. SHAPE_MAX_RANK is the largest rank accepted (see shape.c for the source). */
#define SHAPE_MAX_RANK      16
#define SHAPE_MAX_TILES     4 /* T(..)(..)(..)(..) */
#define SHAPE_MAX_TILE_RANK 4
#define SHAPE_MAX_TEXT      512 /* longest printed shape */

struct tile {
    uint8_t rank;
    int64_t dims[SHAPE_MAX_TILE_RANK]; /* elements per tile dim, major to minor */
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
};

/*
 * Parses one array shape (not a tuple) from s[0..len). Fails with ERR_INVALID on any
 * syntax error, naming the character offset; ERR_LIMIT above the bounds; ERR_INVALID when
 * the layout is not a permutation of the dims or a tile has more dims than allowed.
 */
int shape_parse(const char *s, size_t len, struct shape *out, struct err *e);

/*
 * Prints sh into buf (size cap) in XLA's syntax. Returns the length written (excluding
 * the NUL) or a negative ERR_LIMIT if cap is too small. The layout part is printed only
 * when sh->has_layout.
 */
int shape_print(const struct shape *sh, char *buf, size_t cap);

/* A parsed tuple or single shape. Elements are stored inline (bounded). */
#define SHAPE_LIST_MAX 64
struct shape_list {
    bool is_tuple;
    size_t n;
    struct shape elems[SHAPE_LIST_MAX];
};

/* Parses "shape" or "(shape, shape, ...)" (nested tuples are rejected with ERR_LIMIT). */
int shape_list_parse(const char *s, size_t len, struct shape_list *out, struct err *e);
int shape_list_print(const struct shape_list *l, char *buf, size_t cap);

/* Logical element count of sh, checked: ERR_OVERFLOW past INT64_MAX. */
int shape_elements(const struct shape *sh, uint64_t *out, struct err *e);

#endif
