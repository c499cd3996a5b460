/*
 * hlo_compile_int.h - what XLA does to a before-optimization program before it assigns
 * buffers, modelled for one computation at a time (private to import/): which values its
 * fusion passes fuse away (hlo_fusion.c) and the order its memory scheduler picks
 * (hlo_schedule.c). hlo_model.c walks the computation in that order and gives the fused
 * values no buffer (hlo_model.h; server/planner/RESULT.md#the-compile-estimate).
 *
 * Indices are local to the computation: instruction k is hlo_module.instrs[first + k].
 */
#ifndef TPUPLAN_IMPORT_HLO_COMPILE_INT_H
#define TPUPLAN_IMPORT_HLO_COMPILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/hlo.h"

/* Why a value was fused away: the fusion XLA would make of it with its consumers. */
enum hlo_fuse {
    HLO_FUSE_NONE = 0, /* a buffer of its own */
    HLO_FUSE_LOOP,     /* a loop-fusible producer into loop-fusible consumers */
    HLO_FUSE_INPUT,    /* a loop-fusible producer into a reduction (input fusion) */
    HLO_FUSE_OUTPUT,   /* a dot or convolution into its one elementwise consumer */
    HLO_FUSE_COUNT
};

/* The schedulers, in the order XLA's DefaultMemoryScheduler prefers them on a tie, and the
 * written order. */
enum hlo_sched { HLO_SCHED_LIST = 0, HLO_SCHED_DFS, HLO_SCHED_POST, HLO_SCHED_TEXT, HLO_SCHED_N };

/* "list", "dfs", "post-order", "text". */
const char *hlo_sched_name(enum hlo_sched s);

/* A before-optimization program (server/planner/RESULT.md#the-compile-estimate): not
 * scheduled, no fusion instruction, no tiled layout. What XLA prints before its passes. */
bool hlo_before_optimization(const struct hlo_module *h);

/* One computation's fused graph: the instructions that keep their own step (not fused),
 * and for each its external operands, those it reads through the producers fused into it
 * (each once). CSR arrays, all n + 1 or nnz long; owned until hlo_graph_free. */
struct hlo_graph {
    const struct hlo_module *h;
    uint32_t comp, first, n;
    uint8_t *fuse;          /* per instruction: enum hlo_fuse */
    uint32_t *opnd0, *opnd; /* external operands of each kept instruction */
    uint32_t *user0, *user; /* the kept instructions that read each (external users) */
    size_t fused[HLO_FUSE_COUNT];
};

/*
 * Decides which of comp's instructions XLA's fusion passes fuse away (fuse, fused) and
 * builds the external operand and user lists. fusion false: none is (the program as
 * written). work bounds the producers visited while the lists are built (duplicated
 * producers are visited once per consumer): past it, producers with several users stay
 * unfused and the lists are built again.
 */
ERR_MUST_CHECK int hlo_graph_build(const struct hlo_module *h, uint32_t comp, bool fusion,
                                   struct hlo_graph *g, struct err *e);
void hlo_graph_free(struct hlo_graph *g);

/* Whether in is elementwise (xla/hlo/ir/hlo_instruction.cc IsElementwiseImpl's opcodes). */
bool hlo_is_elementwise(const struct hlo_module *h, const struct hlo_instr *in);

/* Whether comp's instruction k is an alias op (no memory of its own: tuple,
 * get-tuple-element, bitcast, opt-barrier, add-dependency). */
bool hlo_is_alias_op(const struct hlo_module *h, const struct hlo_instr *in);

/*
 * An order of the kept instructions: seq[0..nseq) (local indices), and step[k] for every
 * instruction: a kept one's position in seq, a fused one's the step of the last kept
 * instruction that reads it. bytes[k]: what kept instruction k defines (0 for alias ops,
 * parameters and constants, which every order holds alike). Owned until hlo_order_free.
 */
struct hlo_order {
    uint32_t *seq, nseq;
    uint32_t *step;
    enum hlo_sched chosen;
    uint64_t peak[HLO_SCHED_N]; /* each scheduler's peak of bytes (UINT64_MAX: not run) */
};

/*
 * XLA's memory scheduler (hlo_memory_scheduler.cc DefaultMemoryScheduler): the list, DFS
 * and post-order schedules of g, each measured by its peak of live bytes, the least kept
 * (ties: list, DFS, post-order); text: the written order instead (measured too). bytes
 * NULL: the written order, unmeasured (the written reading needs no measure).
 */
ERR_MUST_CHECK int hlo_order_build(const struct hlo_graph *g, const uint64_t *bytes, bool text,
                                   struct hlo_order *o, struct err *e);
void hlo_order_free(struct hlo_order *o);

#endif
