/*
 * stablehlo_int.h - what the parts of the StableHLO translator share, internal to
 * import/stablehlo*.c: the translator (struct tr: the cursor over the MLIR text, base/
 * cursor.h, and every buffer and table it writes, which it owns; stablehlo_to_hlo frees
 * them), MLIR's identifier bytes, the bounded output buffers (stablehlo_text.c), and the
 * entry points of the two parts kept apart from the statements (stablehlo.c):
 * stablehlo_loc.c (an op's location name) and stablehlo_sdy.c (Shardy meshes and
 * shardings).
 */
#ifndef TPUPLAN_STABLEHLO_INT_H
#define TPUPLAN_STABLEHLO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "planner/base/cursor.h"
#include "planner/base/names.h"
#include "planner/err.h"

#define SH_MAX_REGIONS 64 /* nested while regions */
#define SH_MAX_RESULTS 4096

struct sbuf {
    char *p;
    size_t n, cap;
};

struct val {
    uint32_t off, len;             /* the SSA name without '%' */
    uint32_t region;               /* the id of the region that defines it */
    uint32_t elem;                 /* its number in a result group %r:N (0: a plain value) */
    uint32_t shape_off, shape_len; /* its XLA shape, in tr.shapes */
    uint32_t cap_depth, cap_id;    /* the capture mark (see capture); cap_id 0: none */
    bool tuple; /* an element of a tuple-shaped instruction r: its HLO name is r#elem */
};

struct region {
    uint32_t id; /* unique: regions are numbered as they open */
    char name[600];
    struct sbuf text;   /* the body */
    struct sbuf params; /* the captured values' parameters, written before the body */
    uint32_t nparams;
    uint32_t *caps; /* vals captured from outside (indices) */
    uint32_t ncaps, capcap;
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

struct loc_def {
    uint32_t name_off, name_len; /* the alias without '#' */
    uint32_t at;                 /* its "loc(" */
};

struct tr {
    struct cursor c;     /* over the MLIR text; its errors into the caller's err */
    struct sbuf out;     /* finished computations */
    struct sbuf entry;   /* the entry computation, written last */
    struct sbuf aliases; /* input_output_alias entries */
    size_t max_out;
    struct sbuf shapes; /* the values' shapes */
    struct val *vals;
    uint32_t nvals, capvals;
    struct names names; /* the values by name and scope (region, result element) */
    uint32_t next_region;
    struct region reg[SH_MAX_REGIONS];
    unsigned depth;          /* regions open; reg[depth - 1] is the current one */
    struct sdy_mesh *meshes; /* the module's sdy.mesh definitions */
    uint32_t nmeshes, capmeshes;
    struct loc_def *locs; /* the location aliases (each name once: the first holds) */
    uint32_t nlocs;
    struct names loc_names; /* locs by name */
    size_t at_line, at_col; /* where the definitions being made are written (errors) */
    char fname[256];
    char entry_name[256];
};

/* ---- the lexer (base/cursor.h, and) ------------------------------------------------ */

/* A byte of an MLIR identifier: cursor_span(c, ident_ch) reads one. */
static inline bool ident_ch(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || ch == '.' || ch == '$' || ch == '-';
}

/* Appends without the output bound: for text that copies what the output holds already. */
int sh_sb_keep(struct tr *t, struct sbuf *b, const char *s, size_t n);

/* Appends n bytes of s to b within the translation's output bound (t->max_out). */
int sh_sb_add(struct tr *t, struct sbuf *b, const char *s, size_t n);

/* Appends a formatted piece of at most 1023 bytes. */
int sh_sb_printf(struct tr *t, struct sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The end of the string whose opening quote is at q (just past its closing quote), or 0. */
size_t sh_string_end(const struct tr *t, size_t q);

/* ---- stablehlo_loc.c ------------------------------------------------------------------ */

/* The location aliases: every line "#NAME = loc(..)" of the file, NAME -> the offset of its
 * "loc(", into t->locs (malloc'd) and t->loc_names. */
int sh_loc_table(struct tr *t);

/* The name of the loc(..) at q ("loc(" there): *off and *len in t->s, *len 0 when none. */
void sh_loc_name(const struct tr *t, size_t q, uint32_t *off, uint32_t *len);

/* The name of the first loc(..) in t->s[from, to) outside strings, as sh_loc_name. */
void sh_loc_in(const struct tr *t, size_t from, size_t to, uint32_t *off, uint32_t *len);

/* Writes ", metadata={op_name=\"..\"}" for a name (len 0: nothing). */
int sh_put_op_name(struct tr *t, struct sbuf *b, uint32_t off, uint32_t len);

/* ---- stablehlo_sdy.c ------------------------------------------------------------------ */

/* sdy.mesh @name = <..> at the cursor (module level), added to t->meshes (realloc'd). */
int sh_sdy_mesh_def(struct tr *t);

/* Writes the HLO sharding of the #sdy.sharding<..> at the cursor, for an array of rank
 * dims, into out. */
int sh_sdy_sharding(struct tr *t, uint32_t rank, struct sbuf *out);

#endif
