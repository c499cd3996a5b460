/*
 * stablehlo_int.h - what the parts of the StableHLO translator share, internal to
 * import/stablehlo*.c: the translator (struct sh_translator: the cursor over the MLIR
 * text, base/cursor.h, and every buffer and table it writes, which it owns;
 * stablehlo_to_hlo frees them), MLIR's identifier bytes, the bounded output buffers
 * (stablehlo_text.c), and the entry points of the two parts kept apart from the
 * statements (stablehlo.c): stablehlo_loc.c (an op's location name) and stablehlo_sdy.c
 * (Shardy meshes and shardings).
 */
#ifndef TPUPLAN_STABLEHLO_INT_H
#define TPUPLAN_STABLEHLO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "planner/base/cursor.h"
#include "planner/base/names.h"
#include "planner/base/vec.h"
#include "planner/err.h"

#define SH_MAX_REGIONS 64 /* nested regions (while, case, if) */
#define SH_MAX_RESULTS 4096

/* A growing output buffer (malloc'd; NUL-terminated once it holds anything), written with
 * sh_buf_add and bounded by the translation's output bound. */
struct sh_buf {
    char *p;
    size_t n, cap;
};

/* An SSA value defined so far: its name in the text, where it is defined, its shape. */
struct sh_value {
    uint32_t off, len;             /* the SSA name without '%' */
    uint32_t region;               /* the id of the region that defines it */
    uint32_t elem;                 /* its number in a result group %r:N (0: a plain value) */
    uint32_t shape_off, shape_len; /* its XLA shape, in the translator's shapes */
    uint32_t cap_depth, cap_id;    /* the capture mark (see capture); cap_id 0: none */
    bool tuple; /* an element of a tuple-shaped instruction r: its HLO name is r#elem */
};

/* An open region: the HLO computation being written for a function body or an op's region
 * (its text, owned). */
struct sh_region {
    uint32_t id; /* unique: regions are numbered as they open */
    char name[600];
    struct sh_buf text;   /* the body */
    struct sh_buf params; /* the captured values' parameters, written before the body */
    uint32_t nparams;
    struct vec caps; /* uint32_t: values captured from outside (indices in values) */
};

/* A Shardy mesh (sdy.mesh @name = <["x"=4, "y"=2]>): its axes, major to minor. */
#define SDY_MAX_AXES    32
#define SDY_MAX_DEVICES (1u << 20)

struct sdy_axis {
    uint32_t off, len; /* the name, inside its quotes */
    uint32_t size;
};

struct sdy_mesh {
    uint32_t off, len; /* @name without '@' */
    uint32_t naxes;
    uint64_t devices;
    struct sdy_axis axes[SDY_MAX_AXES];
};

/* A location alias "#NAME = loc(..)" of the file. */
struct sh_loc_def {
    uint32_t name_off, name_len; /* the alias without '#' */
    uint32_t at;                 /* its "loc(" */
};

/* The translation of one module: the cursor over the MLIR text and everything written so
 * far; it owns every buffer and table it points to (stablehlo_to_hlo frees them). */
struct sh_translator {
    struct cursor c;       /* over the MLIR text; its errors into the caller's err */
    struct sh_buf out;     /* finished computations */
    struct sh_buf entry;   /* the entry computation, written last */
    struct sh_buf aliases; /* input_output_alias entries */
    size_t max_out;
    struct sh_buf shapes; /* the values' shapes */
    struct vec values;    /* struct sh_value: every value defined, by index */
    struct names names;   /* the values by name and scope (region, result element) */
    uint32_t next_region;
    struct sh_region regions[SH_MAX_REGIONS];
    unsigned depth;          /* regions open; regions[depth - 1] is the current one */
    struct vec meshes;       /* struct sdy_mesh: the module's sdy.mesh definitions */
    struct sh_loc_def *locs; /* the location aliases (each name once: the first holds) */
    uint32_t nlocs;
    struct names loc_names; /* locs by name */
    size_t at_line, at_col; /* where the definitions being made are written (errors) */
    char fname[256];
    char entry_name[256];
};

/* ---- reading and writing ------------------------------------------------------------ */

/* A byte of an MLIR identifier: cursor_span(c, ident_ch) reads one (base/cursor.h has the
 * rest of the lexer). */
static inline bool ident_ch(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '$' || ch == '-';
}

/* Steps past blanks, then past ch; "expected WHAT" at the cursor when ch is not there. */
static inline int sh_expect(struct cursor *c, char ch, const char *what)
{
    cursor_skip_blanks(c);
    return cursor_accept(c, ch) ? ERR_OK : cursor_fail(c, "expected %s", what);
}

/* Appends without the output bound: for text that copies what the output holds already. */
int sh_buf_keep(struct sh_translator *t, struct sh_buf *b, const char *s, size_t n);

/* A vec_reserve or vec_push failure (rc) of one of the translation's arrays as its error. */
int sh_grow_err(struct sh_translator *t, int rc);

/* Appends n bytes of s to b within the translation's output bound (t->max_out). */
int sh_buf_add(struct sh_translator *t, struct sh_buf *b, const char *s, size_t n);

/* Appends a formatted piece of at most 1023 bytes. */
int sh_buf_printf(struct sh_translator *t, struct sh_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The end of the string whose opening quote is at q (just past its closing quote), or 0. */
size_t sh_string_end(const struct sh_translator *t, size_t q);

/* ---- stablehlo_loc.c ------------------------------------------------------------------ */

/* The location aliases: every line "#NAME = loc(..)" of the file, NAME -> the offset of its
 * "loc(", into t->locs (malloc'd) and t->loc_names. */
int sh_loc_table(struct sh_translator *t);

/* The name of the loc(..) at q ("loc(" there): *off and *len in t->s, *len 0 when none. */
void sh_loc_name(const struct sh_translator *t, size_t q, uint32_t *off, uint32_t *len);

/* The name of the first loc(..) in t->s[from, to) outside strings, as sh_loc_name. */
void sh_loc_in(const struct sh_translator *t, size_t from, size_t to, uint32_t *off, uint32_t *len);

/* Writes ", metadata={op_name=\"..\"}" for a name (len 0: nothing). */
int sh_put_op_name(struct sh_translator *t, struct sh_buf *b, uint32_t off, uint32_t len);

/* ---- stablehlo_sdy.c ------------------------------------------------------------------ */

/* sdy.mesh @name = <..> at the cursor (module level), added to t->meshes. */
int sh_sdy_mesh_def(struct sh_translator *t);

/* Writes the HLO sharding of the #sdy.sharding<..> at the cursor, for an array of rank
 * dims, into out. */
int sh_sdy_sharding(struct sh_translator *t, uint32_t rank, struct sh_buf *out);

#endif
