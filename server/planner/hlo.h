/*
 * hlo.h - a bounded parser of XLA's HLO text (HloModule::ToString), the form JAX prints with
 * `.as_text(dialect="hlo")` and XLA writes to `*.after_optimizations.txt` under
 * --xla_dump_to.
 *
 *   HloModule jit_f, is_scheduled=true, input_output_alias={ {0}: (1, {}, may-alias) },
 *     entry_computation_layout={(f32[8]{0})->f32[8]{0}}
 *
 *   FileNames                                  (current XLA, with metadata: the stack-frame
 *   1 "f.py"                                    index that stack_frame_id=N points into)
 *   FunctionNames
 *   1 "f"
 *   FileLocations
 *   1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=2 end_column=9}
 *   StackFrames
 *   1 {file_location_id=1 parent_frame_id=1}
 *
 *   %fused_computation (param_0: f32[8]) -> f32[8] { ... }
 *
 *   ENTRY %main.5 (Arg_0.1: f32[8]) -> f32[8] {
 *     %Arg_0.1 = f32[8]{0} parameter(0), sharding={replicated}
 *     ROOT %add.2 = f32[8]{0} add(f32[8]{0} %Arg_0.1, f32[8]{0} %Arg_0.1),
 *       metadata={op_name="jit(f)/add" source_file="f.py" source_line=3}
 *   }
 *
 * The grammar is what openxla/xla's parser accepts (xla/hlo/parser/hlo_parser.cc and
 * hlo_lexer.cc):
 * - Tokens may be separated by any white space, line ends included, and by comments: an
 *   instruction, a shape or an operand list may go on over several lines. Block comments
 *   (slash-star to star-slash; XLA prints one holding "index=5" before every fifth element
 *   of a long tuple or operand list) and `//` comments to the end of the line are skipped
 *   wherever white space may be.
 * - The `HloModule name, attr=value, ...` header is optional: a text that starts with ENTRY
 *   or with `name {` is a module of its computations, named module_<entry>
 *   (HloParserImpl::Run, ParseHloModule). Without an ENTRY computation the last one is the
 *   entry; without a ROOT instruction the last one is the root.
 * - The stack-frame index (FileNames, FunctionNames, FileLocations, StackFrames) after the
 *   header (ParseStackFrameIndex); for older tpuplan inputs it may also follow the last
 *   computation.
 * - Names with or without '%', operands with or without their shapes, tuple shapes (nested),
 *   layouts as shape.h reads them, attribute values that nest braces, parentheses, brackets,
 *   quoted strings with escapes and comments; unknown attributes are read past.
 * - A result shape may be left out where XLA infers it (CanInferShape): hlo_parse infers it
 *   when it is an operand's shape (elementwise ops of one type, copy, select, clamp, while,
 *   opt-barrier, add-dependency), a tuple of the operands' (tuple), or an element of one
 *   (get-tuple-element); any other opcode without a shape is refused, naming it.
 * Refused, with a message: nested instructions as operands (`add(maximum(x, y), z)`), operand
 * lists XLA printed truncated (`...(+N)`), and what shape.h refuses.
 *
 * Kept for the model and for later passes (spans into the text): the module's header facts
 * (is_scheduled, entry_computation_layout, input_output_alias, buffer_donor, replica and
 * partition counts, frontend attributes), every leaf's memory space, and each instruction's
 * metadata (op_type, op_name, source file and line, or its stack frame), sharding, fusion
 * kind, frontend attributes, backend_config and custom_call_target.
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
    int8_t memory_space; /* S(n) of its layout: 0 default (HBM), 1 alternate (VMEM), 5 host
                          * (xla/layout.h kHostMemorySpace) */
    uint32_t path[HLO_MAX_TUPLE_DEPTH];
};

/* An instruction's metadata={...} (hlo_parser.cc ParseMetadata): spans of the strings'
 * contents as written (C escapes kept), len 0 when absent; source_line 0 when absent. */
struct hlo_metadata {
    struct hlo_span op_type, op_name, source_file;
    int64_t source_line;
    uint32_t stack_frame; /* stack_frame_id=N (1-based in hlo_module.frames), 0 when none */
};

/* An asynchronous op (hlo_parser.cc ParseOpcode): async-start, async-update, async-done, or
 * XLA's sugar for them, which its printer writes, an opcode "X-start", "X-update" or "X-done"
 * that is no opcode of its own (call-start, fusion-done, custom-call-update; not copy-start,
 * all-gather-done, all-reduce-start, collective-permute-done, send-done, recv-done). */
enum hlo_async { HLO_ASYNC_NONE, HLO_ASYNC_START, HLO_ASYNC_UPDATE, HLO_ASYNC_DONE };

struct hlo_instr {
    struct hlo_span name;   /* without '%' */
    struct hlo_span opcode; /* "add", "fusion", "get-tuple-element", ... */
    uint32_t line, col;     /* of the name, 1-based */
    uint32_t leaf0, nleaves;
    bool tuple_shaped;      /* its shape is a tuple (leaves named name{i}) */
    bool root;              /* marked ROOT */
    bool shape_inferred;    /* written without a result shape; hlo_parse inferred it */
    uint8_t async;          /* enum hlo_async */
    uint32_t opnd0, nopnds; /* operand instruction indices (module-wide) in hlo_module.idx */
    uint32_t call0, ncalls; /* called computation indices in hlo_module.idx */
    struct hlo_metadata meta;
    struct hlo_span sharding;            /* the value of sharding=, len 0 when none */
    struct hlo_span kind;                /* fusion kind ("kLoop"), len 0 when none */
    struct hlo_span frontend_attributes; /* the value of frontend_attributes={...} */
    struct hlo_span backend_config;      /* as written: a quoted string or a JSON object */
    struct hlo_span custom_call_target;  /* the string's contents, len 0 when none */
    uint32_t comp;                       /* its computation: the index in hlo_module.comps */
    int64_t index; /* parameter number or get-tuple-element index; -1 otherwise */
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
    bool must; /* must-alias (else may-alias, the default) */
    uint32_t line, col;
};

/* buffer_donor entry: parameter param's {path} may be reused for any output. */
struct hlo_donor {
    int64_t param;
    uint8_t depth;
    uint32_t path[HLO_MAX_TUPLE_DEPTH];
};

/* The stack-frame index: FileLocations and StackFrames entries, 1-based as printed. */
struct hlo_location {
    uint32_t file;     /* 1-based in hlo_module.files */
    uint32_t function; /* 1-based in hlo_module.functions, 0 when not given */
    int64_t line;
};

struct hlo_frame {
    uint32_t location; /* 1-based in hlo_module.locations */
    uint32_t parent;   /* 1-based in hlo_module.frames, 0 for the outermost (XLA prints the
                        * proto's parent_frame_id + 1; this is that proto value) */
};

struct hlo_module {
    const char *text;                      /* the input (borrowed) */
    int64_t replica_count, num_partitions; /* 1 when not given */
    struct hlo_comp *comps;
    struct hlo_instr *instrs;
    struct hlo_leaf *leaves;
    uint32_t *idx; /* operand and callee index lists */
    struct hlo_alias *aliases;
    struct hlo_donor *donors;
    /* The stack-frame index, empty when absent: FileNames and FunctionNames (the strings'
     * contents, escapes kept), FileLocations, StackFrames. */
    struct hlo_span *files, *functions;
    struct hlo_location *locations;
    struct hlo_frame *frames;
    uint32_t ncomps, entry, ninstrs, nleaves, nidx, naliases, ndonors;
    uint32_t nfiles, nfunctions, nlocations, nframes;
    struct hlo_span name; /* the header's; len 0 without a header (XLA names the module
                           * module_<entry name> then) */
    /* entry_computation_layout={(params)->result}: the parameters' list as a tuple-shaped
     * text "(...)" and the result's shape; len 0 when absent. */
    struct hlo_span entry_params, entry_result;
    struct hlo_span frontend_attributes; /* the header's, len 0 when none */
    bool header;                         /* an HloModule line was given */
    bool scheduled; /* is_scheduled=true: the text order of every computation is the
                     * schedule (hlo_parser.cc ScheduleFromInstructionOrder) */
};

/* True when text, after leading white space and comments, starts as a module: the word
 * HloModule, the word ENTRY, or a computation's `name {` (but not MLIR's `module {`). */
bool hlo_detect(const char *s, size_t len);

/*
 * Parses s[0..len) into *m (every array buffer owned by *m until hlo_free; spans point into
 * s). max_instrs bounds the instruction count (ERR_LIMIT). Checks: every operand is defined
 * earlier in its computation (the written order is a topological order, as XLA prints it),
 * every called computation exists, at most one ENTRY and one ROOT per computation, every
 * shape parses (shape.h), every stack_frame_id names a frame and every frame a location and
 * file. On failure *m is freed.
 */
ERR_MUST_CHECK int hlo_parse(const char *s, size_t len, size_t max_instrs, struct hlo_module *m,
                             struct err *e);

void hlo_free(struct hlo_module *m);

/* Whether span equals the NUL-terminated word w. */
bool hlo_span_is(const struct hlo_module *m, struct hlo_span sp, const char *w);

/* The source position of an instruction: its metadata's source_file and source_line, else
 * its stack frame's file location. False (and *file empty, *line 0) when it has neither. */
bool hlo_source(const struct hlo_module *m, const struct hlo_instr *in, struct hlo_span *file,
                int64_t *line);

/* Copies the C-escaped string contents sp (as XLA prints them with absl::CEscape: \n, \t,
 * \r, \", \', \\ and octal \NNN; \xNN too) into out[0..cap) unescaped and
 * NUL-terminated, truncating at cap - 1 bytes; returns the unescaped length written. */
size_t hlo_unescape(const struct hlo_module *m, struct hlo_span sp, char *out, size_t cap);

#endif
