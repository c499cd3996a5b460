/*
 * hlo_int.h - what the parts of the HLO parser share (private to import/): the parser's
 * state and, in hlo_lex.c, its lexer, attribute lists and shapes. hlo.c reads computations
 * and instructions; hlo_attrs.c reads the attribute values that become facts of the module
 * (the header, input_output_alias, buffer_donor, entry_computation_layout, the stack-frame
 * index, metadata). hlo.c calls hlo_attrs.c, both call hlo_lex.c, which calls neither.
 *
 * The lexer is XLA's (xla/hlo/parser/hlo_lexer.cc): tokens are separated by any white space,
 * line ends included, and by comments (block comments, which may span lines, and `//` to the
 * end of the line).
 */
#ifndef TPUPLAN_IMPORT_HLO_INT_H
#define TPUPLAN_IMPORT_HLO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/base/cursor.h"
#include "planner/base/names.h"
#include "planner/base/vec.h"
#include "planner/hlo.h"

struct hlo_parser {
    struct cursor c; /* over the whole text; its errors into the caller's err */
    struct hlo_module *m;
    size_t max_instrs;
    struct names names; /* (computation, name) -> instruction index */
    uint32_t comp;      /* the computation being parsed */
    bool frames_seen;   /* the stack-frame index was read */
    /* The module's arrays while they grow (hlo_parse hands them to it): struct hlo_comp,
     * struct hlo_instr, struct hlo_leaf, uint32_t operand and callee indices, struct
     * hlo_alias, struct hlo_donor, the stack-frame index (struct hlo_span file and function
     * names, struct hlo_location, struct hlo_frame); and the callee references to resolve,
     * struct hlo_pending_call. */
    struct vec comps, instrs, leaves, idx, aliases, donors, calls;
    struct vec files, functions, locations, frames;
};

/* Skips white space (line ends included) and comments. An unterminated block comment is
 * left at the cursor, for the caller's "expected" to report. */
void hlo_skip(struct cursor *c);

/* "expected WHAT, found X" at the cursor (an unterminated comment is named as such). */
int hlo_expected(const struct cursor *c, const char *what);

/* Skips white space, then steps past ch or fails with hlo_expected(what). */
int hlo_expect(struct cursor *c, char ch, const char *what);

/* A bare word of name characters at the cursor (no '%'), possibly empty. */
struct hlo_span hlo_word(struct cursor *c);

/* Whether the cursor is at the keyword w: w, then no name character. */
bool hlo_at_keyword(const struct cursor *c, const char *w);

/* Whether sp (in text s) is the NUL-terminated w. */
bool hlo_span_eq(const char *s, struct hlo_span sp, const char *w);

/* A quoted string at the cursor: *out its contents (escapes kept), the cursor past it. */
int hlo_string(struct cursor *c, struct hlo_span *out);

/* Scans a bracketed run opening at the cursor up to its matching closer, past quoted strings
 * and comments, at most HLO_MAX_DEPTH levels deep. value: an attribute value, which may also
 * be a bare run of characters: then stop (without consuming) at depth 0 before ',', white
 * space, a comment or an unmatched closer; the cursor need not be at an opener. */
int hlo_scan_balanced(struct cursor *c, bool value);

/* An attribute's "key=" at the cursor: *key, the cursor past '=' and the white space after. */
int hlo_attr_key(struct cursor *c, struct hlo_span *key);

/* The next ", key=" of an attribute list: *more false (and no step) when no ',' comes next. */
int hlo_attr_next(struct cursor *c, struct hlo_span *key, bool *more);

/* An attribute's value at the cursor (hlo_scan_balanced's value; not empty): *val, and in
 * *at the cursor at its start (its line and column, for errors and for reading it again). */
int hlo_attr_value(struct cursor *c, struct cursor *at, struct hlo_span *val);

/* An attribute kept as its value's text: its key and the offset of the struct hlo_span
 * that holds it in the structure it belongs to. */
struct hlo_span_attr {
    const char *key;
    size_t off;
};

/* Stores val in obj's span of the entry of table[0..n) named key; false when none is. */
bool hlo_put_span(const char *s, struct hlo_span key, const struct hlo_span_attr *table, size_t n,
                  void *obj, struct hlo_span val);

/* A shape, array or tuple; with collect, its leaves are appended to the module (path and
 * depth: where it sits in an enclosing tuple). */
int hlo_any_shape(struct hlo_parser *p, bool collect, uint32_t *path, unsigned depth);

/* Appends x to one of the module's arrays; a growth failure is the parser's error. */
int hlo_push(struct hlo_parser *p, struct vec *v, const void *x);

/* A vec_reserve or vec_push failure (rc) of one of the module's arrays as its error. */
int hlo_grow_err(struct hlo_parser *p, int rc);

/* Appends a copy of the leaf *src at path[0..depth) of the shape being collected. */
int hlo_push_leaf(struct hlo_parser *p, const struct hlo_leaf *src, const uint32_t *path,
                  unsigned depth);

/* ---- hlo_attrs.c (called by hlo.c)
 * --------------------------------------------------------------------- */

/* The module header after "HloModule": its name and attributes. */
int hlo_header(struct hlo_parser *p);

/* The stack-frame index at the cursor (at the word FileNames). */
int hlo_stack_frames(struct hlo_parser *p);

/* The value of metadata={...}, which starts at *at (a copy of the cursor there, for its
 * line and column) and spans v, into *out. */
int hlo_metadata(const struct cursor *at, struct hlo_span v, struct hlo_metadata *out);

/* Every stack_frame_id names a frame, every frame a location, every location a file. */
int hlo_check_frames(struct hlo_parser *p);

#endif
