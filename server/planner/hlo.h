/*
 * hlo.h - a bounded parser of XLA's HLO text (HloModule::ToString), the form JAX prints with
 * `.as_text(dialect="hlo")` and XLA writes to `*.after_optimizations.txt` under
 * --xla_dump_to.
 *
 *   HloModule jit_f, is_scheduled=true, input_output_alias={ {0}: (1, {}, may-alias) },
 *     entry_computation_layout={(f32[8]{0})->f32[8]{0}}
 *
 *   %fused_computation (param_0: f32[8]) -> f32[8] { ... }
 *
 *   ENTRY %main.5 (Arg_0.1: f32[8]) -> f32[8] {
 *     %Arg_0.1 = f32[8]{0} parameter(0), sharding={replicated}
 *     ROOT %add.2 = f32[8]{0} add(f32[8]{0} %Arg_0.1, f32[8]{0} %Arg_0.1),
 *       metadata={op_name="jit(f)/add" source_file="f.py" source_line=3}
 *   }
 *
 * Accepted: names with or without '%', operands with or without their shapes, tuple shapes
 * (nested), comments between tuple elements and operands, layouts with tiles, element size
 * and memory space (shape.h parses every array shape), attribute values that nest braces,
 * parentheses, brackets and quoted strings with escapes, computation signatures or none, the
 * stack-frame tables newer XLA prints after the last computation (ignored).
 *
 * The parsed module points into the input text (spans), which must outlive it. Every
 * structure is bounded: lines of HLO_MAX_LINE bytes, HLO_MAX_DEPTH nested brackets, the
 * caller's instruction limit; errors say "line L:C: expected ..." (where "line L:C").
 */
#ifndef TPUPLAN_HLO_H
#define TPUPLAN_HLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/shape.h"

#define HLO_MAX_LINE        (4u << 20) /* bytes in one line (a printed constant can be long) */
#define HLO_MAX_DEPTH       64         /* nested brackets in an attribute value or a shape */
#define HLO_MAX_TUPLE_DEPTH 8          /* nested tuple shapes */
#define HLO_MAX_ALIASES     4096       /* input_output_alias entries */
#define HLO_NONE            UINT32_MAX

/* A piece of the input text. */
struct hlo_span {
    uint32_t off, len;
};

/* One array leaf of an instruction's shape: the text of its array shape and its tuple index
 * path (empty for an array-shaped result). Leaves are in pre-order, so the leaves of tuple
 * element k are contiguous. */
struct hlo_leaf {
    struct hlo_span shape;
    uint8_t depth;
    uint32_t path[HLO_MAX_TUPLE_DEPTH];
};

struct hlo_instr {
    struct hlo_span name;   /* without '%' */
    struct hlo_span opcode; /* "add", "fusion", "get-tuple-element", ... */
    uint32_t line, col;     /* of the name, 1-based */
    uint32_t leaf0, nleaves;
    bool tuple_shaped; /* its shape is a tuple (leaves named name{i}) */
    bool root;
    uint32_t opnd0, nopnds;   /* operand instruction indices (module-wide) in hlo_module.idx */
    uint32_t call0, ncalls;   /* called computation indices in hlo_module.idx */
    struct hlo_span op_name;  /* metadata op_name, len 0 when none */
    struct hlo_span sharding; /* the value of sharding=, len 0 when none */
    struct hlo_span kind;     /* fusion kind ("kLoop"), len 0 when none */
    uint32_t comp;            /* its computation: the index in hlo_module.comps */
    int64_t index;            /* parameter number or get-tuple-element index; -1 otherwise */
};

struct hlo_comp {
    struct hlo_span name;
    uint32_t line;
    uint32_t first, n; /* its instructions: instrs[first .. first + n) in written order */
    uint32_t root;     /* module-wide index of its ROOT instruction (the last one if unmarked) */
    bool entry;
};

/* input_output_alias entry: output {out_path} reuses parameter param's {param_path}. */
struct hlo_alias {
    uint8_t out_depth, param_depth;
    uint32_t out_path[HLO_MAX_TUPLE_DEPTH], param_path[HLO_MAX_TUPLE_DEPTH];
    int64_t param;
    uint32_t line, col;
};

struct hlo_module {
    const char *text; /* the input (borrowed) */
    struct hlo_span name;
    bool scheduled; /* is_scheduled=true */
    struct hlo_comp *comps;
    uint32_t ncomps, entry;
    struct hlo_instr *instrs;
    uint32_t ninstrs;
    struct hlo_leaf *leaves;
    uint32_t nleaves;
    uint32_t *idx; /* operand and callee index lists */
    uint32_t nidx;
    struct hlo_alias *aliases;
    uint32_t naliases;
};

/* True when text (after leading white space and comments) starts with "HloModule ". */
bool hlo_detect(const char *s, size_t len);

/*
 * Parses s[0..len) into *m (every array buffer owned by *m until hlo_free; spans point into
 * s). max_instrs bounds the instruction count (ERR_LIMIT). Checks: every operand is defined
 * earlier in its computation (the written order is a topological order, as XLA prints it),
 * every called computation exists, exactly one ENTRY, every shape parses (shape.h). On
 * failure *m is freed.
 */
ERR_MUST_CHECK int hlo_parse(const char *s, size_t len, size_t max_instrs, struct hlo_module *m,
                             struct err *e);

void hlo_free(struct hlo_module *m);

/* Whether span equals the NUL-terminated word w. */
bool hlo_span_is(const struct hlo_module *m, struct hlo_span sp, const char *w);

#endif
