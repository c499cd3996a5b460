/*
 * peak.h - why a plan's peak is what it is: the step at the peak, the op there, and the
 * bytes live at that step broken down by kind, by tag, by layer and by op_name scope
 * (server/planner/RESULT.md#the-peak). The plan writes it as the result's "peak" section;
 * what a change would save (advice) and how far a dimension may grow (frontier) read the
 * same struct.
 *
 * The caller hands in the live set at the peak: each tensor live there with the bytes it
 * takes in the packing (its padded size rounded up to the alignment), so every breakdown
 * sums exactly to live_bytes, and live_bytes + gap_bytes is the peak.
 *
 * The groupings, each a partition of the live tensors:
 *   kind   the tensor's kind (model.h);
 *   tag    its first tag; tensors without tags are "none";
 *   layer  the prefix of its name through its first layer index, a `.`- or `/`-separated
 *          component that is a number after another component (`layers.3` of
 *          `layers.3.attn.wq`, `model.layers.0` of `model.layers.0.mlp.weight`) or
 *          `layer` / `block` followed by one (`layer_3`, `block12`, any case); names without
 *          one, and a program's buffers (named by instructions: `fusion.3`), are "none";
 *   scope  its op_name without the last `/` component (`jit(train)/transformer/layer_3`
 *          of `jit(train)/transformer/layer_3/dot_general`; the whole op_name when it has
 *          no `/`), the grouping the dashboard's op_name filter uses; "none" without one.
 * Groups are ordered by bytes, largest first, then by name; the first PEAK_TOP are listed
 * and the rest summed.
 *
 * The op at the peak: the model's ops[step] when it has ops (step k is ops[k]); for a
 * program (HLO, StableHLO, XLA's buffer assignment: each step an instruction, each buffer
 * named by the instruction that defines it) the instruction whose buffer begins at the
 * step (the first in tensor order), its name without a tuple index `{i}` or `/temps`, and
 * that buffer's op_name metadata; otherwise none.
 *
 * Pure: no I/O, no state. Memory is bounded by the live set (freed before return); every
 * string in the answer is borrowed from the model.
 */
#ifndef TPUPLAN_PEAK_H
#define TPUPLAN_PEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/model.h"

#define PEAK_TOP 10 /* groups listed per grouping; tensors listed as beginning at the peak */

/* A group's name is name[0, len) of a model string (not NUL-terminated). */
struct peak_group {
    const char *name;
    size_t len;
    uint64_t bytes;
    size_t tensors;
};

struct peak_groups {
    struct peak_group top[PEAK_TOP]; /* the largest ntop groups */
    size_t ntop;
    size_t groups;       /* distinct groups, listed or not */
    uint64_t rest_bytes; /* groups past the top, summed */
    size_t rest_tensors; /* their tensors */
    uint64_t none_bytes; /* tensors in no group (no tag, no layer, no op_name) */
    size_t none_tensors;
};

enum peak_op_source {
    PEAK_OP_NONE = 0,    /* no op known at the step */
    PEAK_OP_OPS,         /* the model's ops[step] */
    PEAK_OP_INSTRUCTION, /* a program's instruction at the step */
};

/* "ops", "instruction"; NULL for PEAK_OP_NONE. */
const char *peak_op_source_name(enum peak_op_source s);

/* One tensor live at the peak and the bytes it takes there. */
struct peak_live {
    uint32_t tensor; /* index into the model's tensors */
    uint64_t bytes;
};

struct peak_explain {
    int64_t step, end;   /* the peak segment [step, end) */
    uint64_t bytes;      /* the peak: the heap top there */
    uint64_t live_bytes; /* sum of the live tensors' bytes */
    uint64_t gap_bytes;  /* bytes - live_bytes: free below the heap top there */
    size_t tensors;      /* tensors live */
    enum peak_op_source op_source;
    const char *op; /* op_len bytes; NULL when op_source is PEAK_OP_NONE */
    size_t op_len;
    const char *op_name; /* the instruction's op_name metadata, NUL-terminated; NULL: none */
    uint64_t kind_bytes[TENSOR_KIND_COUNT];
    size_t kind_tensors[TENSOR_KIND_COUNT];
    struct peak_groups by_tag, by_layer, by_scope;
    /* The tensors whose lifetime begins at the step (what the op there allocates): the
     * largest nbegin ids, largest first (ties: lowest id), and all of them counted. */
    uint32_t begin[PEAK_TOP];
    size_t nbegin, begin_tensors;
    uint64_t begin_bytes;
};

/*
 * Explains a peak of model m: the segment [step, end) whose heap top is `bytes`, with the
 * n tensors live there in live[] (each index below m->n, each once; their bytes summing
 * to at most `bytes`). program: m is a program (its steps are instructions; import.h's
 * `program`). ERR_INVALID naming "live[i]" for a bad entry, ERR_NOMEM.
 */
ERR_MUST_CHECK int peak_explain(const struct model *m, bool program, int64_t step, int64_t end,
                                uint64_t bytes, const struct peak_live *live, size_t n,
                                struct peak_explain *out, struct err *e);

/* Whether name has a layer (the "layer" grouping above), its prefix through the layer index
 * then the first *len bytes of name ("layers.3" of "layers.3.attn.wq"). */
bool peak_layer_prefix(const char *name, size_t *len);

/* The grouping names as the result spells them: "tag", "layer", "scope". */
#define PEAK_GROUPINGS 3
const char *peak_grouping_name(size_t g);
const struct peak_groups *peak_grouping(const struct peak_explain *p, size_t g);

#endif
