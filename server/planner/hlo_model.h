/*
 * hlo_model.h - from an HLO module (hlo.h) to the buffers a model plans (model.h).
 *
 * The rules (server/planner/INPUT.md#plan-an-xla-program):
 * - Program order: the entry computation's instructions in written order, step k = the k-th
 *   (the schedule when is_scheduled=true; otherwise XLA's printer writes a topological
 *   order, which hlo_parse checks).
 * - Buffers: each entry parameter, each instruction result and each constant, one per array
 *   leaf of its shape. tuple, get-tuple-element, bitcast, opt-barrier and add-dependency
 *   define no memory: they alias their operands. A fusion is one buffer (its result); the
 *   fused computation's instructions are not buffers. while, conditional and call hold their
 *   result, plus one temp "NAME/temps" live at their step, sized by the peak of their
 *   called computations (planned recursively by these same rules; a while counts its body
 *   and condition, a conditional its largest branch).
 * - Loop state: a while's result, its init operand, its body's parameter and ROOT and its
 *   condition's parameter are one set of buffers in XLA (hlo_dataflow_analysis.cc
 *   UpdateWhileValueSet, hlo_alias_analysis.cc). Each leaf of the result is written into its
 *   init leaf's buffer when that value dies at the while (a temp, not an output, not read
 *   later: the in-place conditions below); otherwise XLA copies the init value and the
 *   result keeps a buffer of its own.
 * - Asynchronous pairs: a *-done's result and a *-start's operand element are no buffers
 *   of their own (openxla/xla hlo_dataflow_analysis.cc InitializeInstructionValueSets and the
 *   Update*ValueSet handlers): copy-start's {1}, all-gather-start's,
 *   collective-permute-start's and async-start's {0,..} are their operands; copy-done is its
 *   operand's {0}, all-gather-done, collective-permute-done and async-done its operand's {1},
 *   all-reduce-done and async-update their operand. The destinations and contexts a start
 *   defines live from the start through the done's last reader, and the start reads its
 *   operands until the done.
 * - Names: the instruction name without '%'; element i of a tuple-shaped result is
 *   "name{i}" (nested: "name{i,j}"), as XLA's buffer assignment names values.
 * - Lifetimes: [defining step, last reading step + 1). Entry parameters live for the whole
 *   program unless donated (input_output_alias): then to their last use. Outputs (the ROOT's
 *   leaves) live to the end. Constants live for the whole program (XLA gives them their own
 *   allocations: server/planner/SOURCES.md#memory-viewer, IsIndefinite).
 * - Donation: an output that input_output_alias assigns to a parameter is written into
 *   that parameter's buffer (no memory of its own; the parameter is "donated").
 * - In-place reuse: a dynamic-update-slice (operand 0), a scatter (operand 0, or result {i}
 *   into operand i), an all-reduce-start (likewise), a 4-operand collective-permute-start
 *   ({1} into operand 1), a fusion whose fused ROOT (or ROOT tuple element) is a
 *   dynamic-update-slice or scatter of a fusion parameter (through tuples and a bitcast: that
 *   parameter's operand; GetInPlaceInputOutputPairs and
 *   GetFusionInstructionInPlaceInputOutputPairs), an elementwise instruction or a loop
 *   fusion whose fused computation is elementwise, writes its result into an operand of the
 *   same shape and layout that dies there and is neither a constant nor a parameter
 *   (openxla/xla hlo_dataflow_analysis.cc CanShareOperandBufferWithUser, applied by the
 *   heap simulator only to an operand that dies at that instruction:
 *   server/planner/SOURCES.md#heap-simulator, may_reuse_operand_buffers). The buffer keeps its
 * first name; the values written into it are listed in its "in_place".
 * - Kinds: parameters input, ROOT values output, constants constant, the rest temp.
 * - Sources: a tensor's op_name is its instruction's metadata op_name, its source
 *   "file:line" its metadata source (hlo_source), both unescaped.
 * - Layouts as written; a leaf in a memory space other than 0 (S(1) is VMEM, S(5) host:
 *   server/planner/SOURCES.md#tiled-notation; the entry_computation_layout's for the entry's
 *   parameters and result; the offloading custom calls' results: import/hlo_program.c) is
 *   not HBM: left out of the model, counted in m->program.spaces (buffers, bytes, its own
 *   peak), with a warning.
 * - Stage and partitioning (m->program; import/hlo_program.c): a partitioned module (an
 *   _spmd entry, an optimized one, collectives outside shard_map) has per-device shapes. In
 *   any other module an array with sharding={devices=[a,b,..]...} gets per-device dims
 *   ceil(dim / tiles), as "mesh" does for JSON models.
 * - Before optimization (StableHLO, or HLO with no fusion, no tiled layout and no schedule:
 *   server/planner/RESULT.md#the-compile-estimate), the model is by default the program as
 *   XLA will compile it: the values XLA's fusion passes fuse away hold no buffer (their reads
 *   are their consumer's), every computation runs in the order XLA's memory scheduler picks
 *   (import/hlo_fusion.c and import/hlo_schedule.c cite the passes), and arrays take the
 *   chip's default layouts with size-1 dims most major inside the program. The rules above
 *   hold for that fused, reordered program. The literal reading ("as written": text order,
 *   every value a buffer, the written layouts) is measured beside it (model.compile), or is
 *   the model with hlo_model_opts.as_written.
 */
#ifndef TPUPLAN_HLO_MODEL_H
#define TPUPLAN_HLO_MODEL_H

#include <stddef.h>

#include "planner/chip.h"
#include "planner/err.h"
#include "planner/hlo.h"
#include "planner/model.h"

/*
 * Builds *m (source_format "hlo") from a parsed module. chip sizes the called
 * computations' temporaries (NULL: the v4 rules, as layout.h). On failure *m is empty.
 */
ERR_MUST_CHECK int hlo_model_build(const struct hlo_module *h, const struct chip *chip,
                                   const struct model_limits *l, struct model *m, struct err *e);

/* How a before-optimization program is read (server/planner/RESULT.md#the-compile-estimate).
 * as_written: the tensors are the written reading (the estimate's figures still computed);
 * text_order: the estimate keeps the written order instead of XLA's scheduler's. */
struct hlo_model_opts {
    bool as_written;
    bool text_order;
    const char *bind; /* StableHLO's dynamic dims bound (stablehlo_to_hlo_bound); NULL: none */
};

/* hlo_model_build with options (NULL: the compiler's estimate, scheduled). m->compile holds
 * both readings' figures when the module is before optimization. */
ERR_MUST_CHECK int hlo_model_build_opts(const struct hlo_module *h, const struct chip *chip,
                                        const struct model_limits *l,
                                        const struct hlo_model_opts *o, struct model *m,
                                        struct err *e);

/* hlo_parse + hlo_model_build: the importer the table (import.h) calls. */
ERR_MUST_CHECK int hlo_import(const char *s, size_t len, const struct chip *chip,
                              const struct model_limits *l, struct model *m, struct err *e);

/* hlo_import with options (NULL: as hlo_import). */
ERR_MUST_CHECK int hlo_import_opts(const char *s, size_t len, const struct chip *chip,
                                   const struct model_limits *l, const struct hlo_model_opts *o,
                                   struct model *m, struct err *e);

#endif
