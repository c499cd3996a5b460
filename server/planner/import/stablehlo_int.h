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

/* An SSA value defined so far: its name in the text, where it is defined, its shape, its
 * HLO name. Names are scoped by region (sibling regions, a while's cond and do, reuse them);
 * element k of a result group %r:N is its own value (r, k), a plain value element 0. */
struct sh_value {
    uint32_t off, len;             /* the SSA name without '%' */
    uint32_t region;               /* the id of the region that defines it */
    uint32_t elem;                 /* its number in a result group %r:N (0: a plain value) */
    uint32_t shape_off, shape_len; /* its XLA shape, in the translator's shapes */
    uint32_t cap_depth, cap_id;    /* the capture mark (see sh_use); cap_id 0: none */
    uint32_t hoff, hlen, hidx;     /* when tuple: its HLO name is hoff..#hidx */
    uint32_t fold; /* 1 + its folded elements' index in folds (stablehlo_refine.c); 0: none */
    bool tuple;    /* an element of a tuple-shaped instruction: named r#k (r the first result) */
};

/* A statement's results and op: %r = op, %r:N = op (a group) or %a, %b = op (named
 * results: the first names the group); where it begins, for errors. */
struct sh_stmt {
    uint32_t res_off, res_len, nres; /* the (first) result's name; nres 0: no results */
    uint32_t *names;                 /* named results: nres (offset, length) pairs; else NULL */
    uint32_t op_off, op_len;         /* the op's name, its dialect included */
    size_t line, col;
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
    bool isolated;   /* IsolatedFromAbove (sdy.manual_computation's body): sees no outer value */
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

/* Axis names (a manual_computation's manual_axes={"x", "y"}): each inside its quotes. */
struct sdy_names {
    uint32_t n;
    uint32_t off[SDY_MAX_AXES], len[SDY_MAX_AXES];
};

/* A location alias "#NAME = loc(..)" of the file. */
struct sh_loc_def {
    uint32_t name_off, name_len; /* the alias without '#' */
    uint32_t at;                 /* its "loc(" */
};

/* Dynamic dims made static (stablehlo_refine.c): dims, a binding, a folded value. */
#define SH_MAX_RANK   32
#define SH_MAX_BINDS  64
#define SH_FOLD_MAX   16                 /* elements of a folded integer tensor */
#define SH_REFINE_OPS 16                 /* operands an op's refinement reads */
#define SH_DIM_MAX    (INT64_C(1) << 40) /* a bound dim's or dimension value's largest */

struct sh_dims {
    uint32_t rank;
    int64_t d[SH_MAX_RANK];
};

/* "NAME=AxB" or "NAME=N" of the bindings (the name in sh_translator.bind). */
struct sh_bind {
    uint32_t off, len;
    bool shape; /* written with an 'x': a shape, never a dimension argument's value */
    bool used;
    struct sh_dims dims;
};

struct sh_fold {
    uint32_t n;
    int64_t v[SH_FOLD_MAX];
};

/* What the passes over a module with --bind learn of its functions (stablehlo_refine.c): the
 * shapes (and folded scalars) a call passes to each, the shapes each returns. A callee is
 * often defined after its caller (jax.export's @main calls @_wrapped_jax_export_main), so
 * the translation runs lenient passes (a ? nothing gives stays ?) until nothing new is
 * learnt, then the strict one; owned by stablehlo_to_hlo_bound. */
struct sh_fn {
    char name[256];                  /* its HLO computation name */
    uint32_t args_at, nargs, args_n; /* its arguments' entries in dims / vals (nargs: none) */
    uint32_t rets_at, nrets;         /* its results'; nrets UINT32_MAX: none yet */
    uint32_t pass;                   /* the pass that last recorded its arguments */
    char why[200]; /* where its body's first ? stayed unknown in a lenient pass ("": none) */
};

struct sh_fnval {
    bool array, folded; /* dims[i] holds its dims; a scalar's folded value */
    int64_t v;
};

#define SH_MAX_HINTS       8 /* results of one op given shapes (a variadic reduce, a sort) */
#define SH_MAX_PASSES      8
#define SH_MAX_CALL_VALUES 65536 /* call operands and results recorded, all passes together */

struct sh_refine_state {
    struct vec fns;  /* struct sh_fn */
    struct vec dims; /* struct sh_dims, beside vals */
    struct vec vals; /* struct sh_fnval */
    uint32_t pass;
    bool lenient, changed;
};

/* The translation of one module: the cursor over the MLIR text and everything written so
 * far; it owns every buffer and table it points to (stablehlo_to_hlo frees them). */
struct sh_translator {
    struct cursor c; /* over the MLIR text; its errors into the caller's err */
    /* The statement reader (stablehlo.c's): statements up to the region's closing '}' (left
     * at the cursor). The region readers (stablehlo_region.c, stablehlo_manual.c) call it for
     * a region's body: regions hold statements and statements hold regions, and through this
     * pointer the files stay layered, stablehlo.c above the two. */
    int (*statements)(struct sh_translator *t);
    struct sh_buf out;          /* finished computations */
    struct sh_buf entry;        /* the entry computation, written last */
    struct sh_buf aliases;      /* input_output_alias entries */
    struct sh_buf ret_sharding; /* ", sharding={..}" of the function's results, or empty */
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
    /* Refinement (stablehlo_refine.c): the bindings "NAME=VALUE,.." (borrowed; NULL: none,
     * every ? refused), the folded values, the dims the next types' ? take (hint[hint_at],
     * given by hint_what), the operands of the op being read (opv, nopv of them: past
     * SH_REFINE_OPS only counted), why its result is not known. */
    const char *bind;
    struct sh_bind binds[SH_MAX_BINDS];
    uint32_t nbinds;
    struct vec folds; /* struct sh_fold */
    struct sh_dims hint_buf[SH_MAX_HINTS];
    const struct sh_dims *hint;
    uint32_t nhint, hint_at;
    const char *hint_what;
    uint32_t opv[SH_REFINE_OPS], nopv;
    uint32_t last_use;               /* the value sh_use read last */
    struct vec uses;                 /* uint32_t: every value the op being read uses (bind only) */
    struct sh_refine_state *rs;      /* the passes' state; NULL: no bind */
    uint32_t arg_off, arg_len;       /* the argument being read; len 0: none */
    bool arg_entry;                  /* it is the entry function's */
    const struct sh_stmt *refine_st; /* the op being read; NULL: none */
    bool dyn_ok;                     /* ? read as '?': a type whose shape is not kept */
    char why[240];
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

/* The content [from, to) of a string in the text (between its quotes) copied into b as XLA's
 * parser reads a string: MLIR's escapes (\", \\, \n, \t, \XX: mlir/lib/AsmParser/Token.cpp
 * getStringValue) undone, '"' and '\' written \" and \\, a byte that is not printable ASCII
 * (a line end, a tab, UTF-8) '_' (XLA's op names and shardings hold none). */
int sh_put_unescaped(struct sh_translator *t, struct sh_buf *b, size_t from, size_t to);

/* Frees b's text and empties it. */
void sh_buf_free(struct sh_buf *b);

/* Skips a balanced (..), [..], <..> or {..} group at the cursor (strings and function
 * types' "->" inside, across lines). */
int sh_skip_group(struct cursor *c);

/* Skips blanks, line ends and // comments. */
void sh_skip_nl(struct cursor *c);

/* Appends a NUL-terminated string (NULL: nothing). */
int sh_buf_str(struct sh_translator *t, struct sh_buf *b, const char *s);

/* The text of the computation being written (the innermost open region). */
struct sh_buf *sh_text(struct sh_translator *t);

/* A symbol reference @name or @"quoted": its bytes (inside the quotes), and whether they
 * are not an MLIR bare-id (@"foo" is @foo; @"<lambda>" is quoted). */
struct sh_sym {
    uint32_t off, len;
    bool quoted;
};

/* The symbol at the cursor ('@' there): @bare-id or @"string" (LangRef: symbol-ref-id ::=
 * '@' (suffix-id | string-literal)). */
int sh_symbol(struct sh_translator *t, struct sh_sym *s);

/* The symbol's HLO name into out (NUL-terminated): its bytes when they are a bare-id, else
 * "_q" and its bytes with every one that is not a letter, digit, '_' or '.' (nor a digit
 * or '.' first) written "-XX" (hex): @"<lambda>" is _q-3clambda-3e. Such a name has a '-',
 * which bare-ids do not, so no two symbols share a name. False when it does not fit in cap
 * bytes. */
bool sh_sym_name(const struct sh_translator *t, const struct sh_sym *s, char *out, size_t cap);

/* ---- stablehlo_value.c ---------------------------------------------------------------- */

/* Appends x to one of the translation's vecs (its error as sh_grow_err's). */
int sh_push(struct sh_translator *t, struct vec *v, const void *x);
int sh_push_u32(struct sh_translator *t, struct vec *v, uint32_t x);

struct sh_value *sh_value_at(const struct sh_translator *t, uint32_t v);

/* The name table's key of value v (ctx the translator): its name, region and element. */
struct names_key sh_value_name(const void *ctx, uint32_t v);

/* Defines the plain value %name (s[off, off + len)) of shape sh[0..shn) in the current
 * region: an argument, a block argument. */
int sh_define_value(struct sh_translator *t, uint32_t off, uint32_t len, const char *sh,
                    size_t shn);

/* Defines a statement's results: when tuple, the n elements of the tuple-shaped instruction
 * of shape "(S, ...)" (%r:N's (r, k), or the named results), else one value of shape. */
int sh_define(struct sh_translator *t, const struct sh_stmt *st, bool tuple, const char *shape,
              uint32_t n);

/* Writes value v's HLO name: r, or r#k for element k of a tuple-shaped instruction r. */
int sh_put_value(struct sh_translator *t, struct sh_buf *b, const struct sh_value *v);

/* A use %name or %name#k at the cursor, appended to *ops as an HLO operand (", " between);
 * a value from an enclosing region is captured (a parameter of this one). */
int sh_use(struct sh_translator *t, struct sh_buf *ops);

/* Writes "  R" (the statement's first result name) and then the given string. */
int sh_put_res(struct sh_translator *t, struct sh_buf *b, const struct sh_stmt *st,
               const char *then);

/* Emits the element reads R#k of a tuple-shaped instruction R of shape "(S, ...)". */
int sh_elements(struct sh_translator *t, const struct sh_stmt *st, const char *shapes, uint32_t n);

/* ---- stablehlo_op.c ------------------------------------------------------------------- */

/* Whether the op name's last part is name: stablehlo.while -> while. */
bool sh_op_is(const struct sh_translator *t, const struct sh_stmt *st, const char *name);

/* An op without regions of its own (but perhaps with regions it does not plan: reduce
 * bodies, sort comparators), as one HLO instruction of its op's opcode (sh_op_find). */
int sh_generic_op(struct sh_translator *t, const struct sh_stmt *st);

/* return / func.return / stablehlo.return / sdy.return, pretty or generic: the region's
 * ROOT, a tuple of the values returned. */
int sh_terminator(struct sh_translator *t, const struct sh_stmt *st);

/* ---- stablehlo_region.c --------------------------------------------------------------- */

/* %r:N = stablehlo.while(%a = %x, ...) : T, ... cond { .. } do { .. } */
int sh_while_op(struct sh_translator *t, const struct sh_stmt *st);

/* The generic region ops: while, case, if (kind), see stablehlo.h. */
int sh_region_op(struct sh_translator *t, const struct sh_stmt *st, const char *kind);

/* Opens a region writing computation name (its parameters come as it captures values). */
int sh_open_region(struct sh_translator *t, const char *name);

/* Closes the current region: its computation (header, captured parameters, body) is
 * appended to the finished ones, and its captures to *caps (the owning op reads them). */
int sh_close_region(struct sh_translator *t, struct vec *caps);

/* The computation name of an op's region of this kind ("body", "cond", ..) into out. */
void sh_region_name(const struct sh_translator *t, const struct sh_stmt *st, const char *kind,
                    char *out, size_t cap);

/* The operands of a region op, "(%a, %b)" or "%p", as HLO operands in ops; *n of them. */
int sh_region_operands(struct sh_translator *t, struct sh_buf *ops, uint32_t *n);

/* "(%x: T loc(..), %y: T)" at the cursor ('(' there): the names into args (offset, length
 * pairs, at most SH_MAX_RESULTS; *nargs of them), the types into shape as "(S, S)". */
int sh_arg_list(struct sh_translator *t, uint32_t *args, uint32_t *nargs, struct sh_buf *shape);

/* The type signature after the regions: ": (T) -> (T, T)", ": (T) -> T" or ": T, T"; the
 * results as a tuple shape of *n, the inputs' ("(T) ->") into *inputs when not NULL. */
int sh_region_types(struct sh_translator *t, struct sh_buf *shape, uint32_t *n,
                    struct sh_buf *inputs);

/* ---- stablehlo_manual.c --------------------------------------------------------------- */

/* %r = sdy.manual_computation(..) .. (%x: T, ..) { .. sdy.return .. } : (..) -> (..), see
 * stablehlo.h. */
int sh_manual_op(struct sh_translator *t, const struct sh_stmt *st);

/* ---- stablehlo_type.c ----------------------------------------------------------------- */

/* One MLIR type at the cursor (tensor<..>, tuple<..>, !stablehlo.token) written as an XLA
 * shape ("f32[2,3]", "(s32[], f32[4])", "token[]"); a dynamic or unranked dim, or an
 * element type XLA has no name for, is an error at its column. */
int sh_type(struct sh_translator *t, struct sh_buf *b);

/* A type list "T" or "T, T" or "(T, T)" at the cursor into *b as "S" or "S, S" ("(S, S)"
 * when as_tuple); *n gets the count. Result attributes {..} after a type are skipped. Stops
 * at the end of the list. */
int sh_type_list(struct sh_translator *t, struct sh_buf *b, bool as_tuple, uint32_t *n);

/* The array shape "T[a,b]" in *shape given the default layout in memory space 5, the host
 * memory ("T[a,b]{1,0:S(5)}": xla/layout.h kHostMemorySpace = 5,
 * server/planner/SOURCES.md#layouts; the HLO rules leave such a buffer out of the plan); a
 * tuple or token shape is left as it is. */
int sh_host_layout(struct sh_translator *t, struct sh_buf *shape);

/* The rank of an array shape "T[a,b]" (0 for "T[]" and NULL). */
uint32_t sh_rank_of(const char *shape);

/* The next element of a tuple shape text "(S, S, ...)": *p at the element, which is returned
 * (*len its length, nested tuples whole); *p moves past it and its ", ". */
const char *sh_next_elem(const char **p, size_t *len);

/* ---- stablehlo_refine.c ------------------------------------------------------------- */

/* t->bind parsed into t->binds; errors name the field "bind". */
int sh_bind_parse(struct sh_translator *t);

/* Before the entry's argument %s[off, off + len) has its type read (the cursor at it): its
 * binding's shape as the hint; *bound the binding's index (UINT32_MAX: none). */
int sh_bind_arg(struct sh_translator *t, uint32_t off, uint32_t len, uint32_t *bound);

/* After the argument is defined (the last value): a dimension argument's value folded. */
int sh_bind_arg_done(struct sh_translator *t, uint32_t bound, const char *shape);

/* After the entry's arguments: every binding named one. */
int sh_bind_check(struct sh_translator *t);

/* A call of callee (its HLO name) whose operands are t->uses: recorded as the callee's
 * arguments, and its recorded results as the hint for the call's result types. */
int sh_refine_call(struct sh_translator *t, const struct sh_stmt *st, const char *callee);

/* In a lenient pass, a ? at the cursor that nothing gives: noted as its function's first
 * unknown (the strict pass's refusal of a call of it says where). */
void sh_refine_note(struct sh_translator *t);

/* Before argument narg of a function that is not the entry is read: what its calls pass as
 * the hint; after it is defined (sh_refine_param_done), a scalar's folded value. */
void sh_refine_param(struct sh_translator *t, uint32_t narg);
int sh_refine_param_done(struct sh_translator *t, uint32_t narg);

/* The function's return (its values t->uses): recorded as its results. */
int sh_refine_return(struct sh_translator *t);

/* Value v's folded elements set to f. */
int sh_fold_set(struct sh_translator *t, uint32_t v, const struct sh_fold *f);

/* The dims of an XLA array shape "T[a,b]"; false for a tuple or a token. */
bool sh_dims_of(const char *shape, struct sh_dims *d);

/* Before an op's result types are read (its operands in t->opv, its text s[from, to)): the
 * result's dims as the hint when they follow from the operands, else t->why says why. */
void sh_refine_op(struct sh_translator *t, const struct sh_stmt *st, size_t from, size_t to);

/* After an op's one result is defined (the last value) with shape: its elements folded when
 * the op computes them from folded operands. */
int sh_refine_fold(struct sh_translator *t, const struct sh_stmt *st, size_t from, size_t to,
                   const char *shape);

/* ---- stablehlo_ops.c ------------------------------------------------------------------ */

/* What an op needs beyond "R = SHAPE opcode(operands)". */
enum sh_op_kind {
    SH_OP_PLAIN,             /* nothing */
    SH_OP_SELECT,            /* its pretty types are the predicate's, then the result's */
    SH_OP_CONSTANT,          /* constant(0): the value is not planned */
    SH_OP_CALL,              /* a call of @callee, to_apply= */
    SH_OP_COMPOSITE,         /* a call of its decomposition = @f */
    SH_OP_CUSTOM_CALL,       /* custom_call_target= the @target */
    SH_OP_GET_TUPLE_ELEMENT, /* index= the [N] or index = N */
    SH_OP_SHARDING,          /* a custom-call "Sharding" with the <@mesh, [..]> sharding */
    SH_OP_FOREIGN,           /* no HLO opcode: a custom-call whose target is the op's name */
};

struct sh_op {
    const char *mlir; /* the name after the dialect (stablehlo, mhlo), else the whole name */
    const char *hlo;  /* the HLO opcode */
    enum sh_op_kind kind;
};

/* The op named name[0..len) (with its dialect: "stablehlo.add", "func.call"); never NULL:
 * what the table does not name is SH_OP_FOREIGN. */
const struct sh_op *sh_op_find(const char *name, size_t len);

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

/* Writes the HLO sharding "{devices=[..]..}" of the <@mesh, [..]> at the cursor (a
 * #sdy.sharding's, just past its name), for an array of rank dims, into out. */
int sh_sdy_sharding(struct sh_translator *t, uint32_t rank, struct sh_buf *out);

/* A list of shardings "[<@mesh, [..]>, ..]" at the cursor (sharding_per_value's), one per
 * value of shape (n values: "(S, ..)" when tuple, else "S"), as the HLO sharding "{..}", or
 * "{{..}, {..}}" when tuple. */
int sh_sdy_list(struct sh_translator *t, const char *shape, bool tuple, uint32_t n,
                struct sh_buf *out);

/* Axis names {"x", "y"} at the cursor (a manual_computation's manual_axes). */
int sh_sdy_axes(struct sh_translator *t, struct sdy_names *out);

/* The shardings "[<@mesh, [..]>, ..]" at the cursor, one per value of shapes ("(S, ..)", n
 * values), over a manual computation's manual axes: each value's shape on one device (each
 * dim divided by the manual axes that split it, which must divide it) into locals as
 * "(L, ..)", and when shardings is not NULL each value's HLO sharding "{..}" (every axis)
 * into it, one a line. */
int sh_sdy_manual(struct sh_translator *t, const char *shapes, uint32_t n,
                  const struct sdy_names *manual, struct sh_buf *locals, struct sh_buf *shardings);

#endif
