/*
 * model.h - a model: the tensors a program holds in HBM, per device, with their shapes,
 * kinds, lifetimes, sharding over a mesh, the ops that use them, the plan options the input
 * carried, and warnings. Every importer (import/: model_json.h, safetensors.h, hlo_model.h,
 * stablehlo.h, ...) makes one; model_resolve gives it layouts on a chip.
 *
 * Sharding: the per-device dim is ceil(dim / product of its axes' sizes) (XLA pads the
 * last shard, server/planner/SOURCES.md#uneven-sharding) and layout and padding apply to that
 * local shape (server/planner/SOURCES.md#per-device-layout); every byte count of a plan is per
 * device.
 *
 * Lifetimes are filled later by lifetime.h. A model owns all its memory (tensors, ops,
 * strings) until model_free().
 */
#ifndef TPUPLAN_MODEL_H
#define TPUPLAN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/layout.h"
#include "planner/shape.h"

enum tensor_kind {
    TENSOR_PARAM = 0,
    TENSOR_GRAD,
    TENSOR_OPTIMIZER,
    TENSOR_ACTIVATION,
    TENSOR_TEMP,
    TENSOR_INPUT,
    TENSOR_OUTPUT,
    TENSOR_CONSTANT, /* a program constant (HLO): its own allocation, live throughout */
    TENSOR_KV_CACHE, /* a serving step's KV cache: an argument written in place */
    TENSOR_KIND_COUNT
};

/* "param", "grad", ...; tensor_kind_parse returns TENSOR_KIND_COUNT when unknown. */
const char *tensor_kind_name(enum tensor_kind k);
enum tensor_kind tensor_kind_parse(const char *s);

#define MODEL_MAX_AXES     16  /* mesh axes (a uint16_t mask per dim) */
#define MODEL_MAX_NAME     512 /* bytes in a tensor, op, axis or model name */
#define MODEL_MAX_TAGS     32  /* tags per tensor */
#define MODEL_MAX_WARNINGS 64  /* distinct warning lines kept; the rest are counted */
#define MODEL_MAX_STEP     (INT64_C(1) << 53) /* program steps stay exact in JSON */
/* A recomputed activation's copy at its last use is named "<name>/remat" (the what-if's
 * remat, whatif.h); the diff groups them (diff.h). */
#define MODEL_REMAT_SUFFIX "/remat"

/*
 * A tensor's shape, stored compactly: a struct shape has room for SHAPE_MAX_RANK dims and
 * SHAPE_MAX_TILES tiles (480 bytes), a tensor uses a few, and a model holds up to a million
 * of them. The scalars are struct shape's; the arrays live in the model's arena, sized to
 * this shape. model_tensor_shape expands one into a struct shape; importers store one with
 * model_tensor_set_shape (model_build.h).
 */
struct model_shape {
    int64_t *dims;           /* rank entries (arena); NULL when rank is 0 */
    uint8_t *minor_to_major; /* rank entries (arena); NULL when rank is 0 */
    struct tile *tiles;      /* ntiles entries (arena); NULL when ntiles is 0 */
    int64_t tail_align;
    enum dtype dtype;
    uint8_t rank;
    uint8_t ntiles;
    uint8_t element_size_bits;
    int8_t memory_space;
    bool has_layout;
    bool memory_space_given;
};

struct model_tensor {
    const char *name;         /* in the model's string arena */
    struct model_shape shape; /* per-device shape (sharding applied); given layout if any.
                               * After model_resolve: the resolved shape with its layout. */
    int64_t *global_dims;     /* NULL unless sharded: the dims as written (arena) */
    uint16_t *shard_mask;     /* NULL unless sharded: per dim, the mesh axes sharding it
                               * (bit i = axis i; rank entries, arena) */
    bool sharded;             /* a "sharding" was given */
    enum tensor_kind kind;
    bool donated;
    bool live_given;
    bool host; /* "memory_space": "host": planned apart from HBM (lifetime_set_apart) */
    int64_t live_start, live_end; /* [start, end); filled by lifetime_derive when not given */
    const char **tags;            /* ntags strings (arena) */
    uint8_t ntags;
    bool raw; /* MiniMalloc CSV buffer or HLO call temp: no dtype or layout, size given */
    const char *op_name;  /* HLO metadata op_name (arena); NULL when none */
    const char *source;   /* HLO metadata source "file:line" (arena; its source_file and
                           * source_line, or its stack frame's); NULL when none */
    const char *in_place; /* HLO: the values written into this buffer in place (in-place
                           * reuse, donation), comma-separated names (arena); NULL: none */
    /* Filled by model_resolve (or set from the CSV size for raw buffers): */
    uint64_t logical_bytes;
    uint64_t padded_bytes;
    const char *layout_rule;       /* static string from layout.h */
    const char *layout_assumption; /* static sentence when confidence is LAYOUT_CONF_ASSUMED */
    enum layout_confidence confidence;
};

struct model_op {
    const char *name;
    uint32_t *inputs; /* tensor indices (arena) */
    uint32_t *outputs;
    uint32_t ninputs, noutputs;
};

struct model_warnings {
    char *lines[MODEL_MAX_WARNINGS]; /* malloc'd */
    size_t n;
    size_t dropped; /* warnings past MODEL_MAX_WARNINGS */
};

/* One reading of a program (hlo_model.h): the most padded bytes live at once per device
 * (the lower bound of any packing), its buffers and steps. */
struct model_reading {
    uint64_t peak_bytes;
    size_t buffers;
    int64_t steps;
};

/* A before-optimization program (StableHLO, or HLO without fusions, tiles or a schedule)
 * read two ways (server/planner/RESULT.md#the-compile-estimate): as XLA will compile it
 * (fused, scheduled, laid out by the chip's rules) and as written (every value a buffer, the
 * text order, the written layouts: an upper bound). The model's tensors are the chosen one. */
enum model_sched {
    MODEL_SCHED_LIST = 0,
    MODEL_SCHED_DFS,
    MODEL_SCHED_POST,
    MODEL_SCHED_TEXT,
    MODEL_SCHED_COUNT
};
struct model_compile {
    bool present;
    bool written_chosen; /* the tensors are the written reading (hlo_model_opts) */
    bool text_order;     /* the estimate kept the text order (hlo_model_opts) */
    struct model_reading estimate, written;
    size_t fused_loop, fused_input, fused_output; /* values fused away, by fusion */
    size_t relaid;                                /* arrays whose size-1 dims went major */
    enum model_sched schedule;                    /* the entry's order in the estimate */
    uint64_t schedule_peak[MODEL_SCHED_COUNT];    /* each one's peak; UINT64_MAX: not run */
};

/*
 * What an XLA program is (hlo_model.h; stablehlo.h): set by the HLO and StableHLO importers,
 * MODEL_STAGE_NONE for every other input (the result then has no "program" section).
 * - stage: before optimization (StableHLO, or HLO without a schedule, fusions or tiled
 *   layouts: what `lower().as_text()`, `jax.export` and a before_optimizations dump hold)
 *   or after (is_scheduled=true, fusion instructions, tiled layouts, VMEM buffers).
 * - partitioned: its shapes are per device already (SPMD partitioning has run), so the
 *   plan never divides them by their shardings again.
 * - spaces: the buffers of the entry computation in a memory space other than HBM, which
 *   the plan leaves out: each space's buffer count, bytes and its own peak (the most bytes
 *   of that space live at once), never added to HBM.
 * The evidence lines say why, one sentence each (arena strings).
 */
enum model_stage { MODEL_STAGE_NONE = 0, MODEL_STAGE_BEFORE, MODEL_STAGE_AFTER };
enum model_space { MODEL_SPACE_HOST = 0, MODEL_SPACE_VMEM, MODEL_SPACE_OTHER, MODEL_SPACE_COUNT };
#define MODEL_MAX_EVIDENCE 6

struct model_space_use {
    size_t buffers;
    uint64_t bytes, peak_bytes;
};

struct model_program {
    enum model_stage stage;
    bool partitioned;
    const char *stage_evidence[MODEL_MAX_EVIDENCE];
    const char *partition_evidence[MODEL_MAX_EVIDENCE];
    size_t nstage_evidence, npartition_evidence;
    struct model_space_use spaces[MODEL_SPACE_COUNT];
};

/* "before-optimization", "after-optimization"; NULL for MODEL_STAGE_NONE. */
const char *model_stage_name(enum model_stage s);
/* "host", "vmem", "other". */
const char *model_space_name(enum model_space s);

struct model_arena; /* the string arena (model_build.h) */
struct json_object;

struct model {
    const char *name;          /* arena */
    const char *chip;          /* arena; NULL when the input names none */
    const char *source_format; /* static: "json", "safetensors", "minimalloc-csv",
                                * "xla-buffer-assignment", "hlo", "stablehlo", "recipe" */
    size_t n;
    struct model_tensor *tensors; /* n entries, malloc'd */
    size_t naxes;
    const char *axis_names[MODEL_MAX_AXES];
    int64_t axis_sizes[MODEL_MAX_AXES];
    uint64_t devices; /* product of the axis sizes; 1 without a mesh */
    size_t nops;
    struct model_op *ops; /* nops entries, malloc'd */
    int64_t nsteps;       /* program length; filled by lifetime_derive */
    struct model_warnings warnings;
    struct model_arena *arena;
    /* The "kernels" array as json-c parsed it (a reference, put by model_free), for
     * kernel_set_parse (kernel.h); NULL when the input has none. */
    struct json_object *kernels_json;
    /* The "options" object as json-c parsed it (a reference, put by model_free), read
     * through the plan options' table (plan_options.h, plan.c); NULL when the input has
     * none. */
    struct json_object *options_json;
    /* The result's "recipe" section (a reference, put by model_free), written as it is by
     * the plan (server/planner/RESULT.md#the-recipe-section); NULL unless the input was a recipe
     * (recipe.h). */
    struct json_object *recipe_json;
    /* What an HLO or StableHLO importer read of a before-optimization program. */
    struct model_compile compile;
    struct model_program program; /* an XLA program's stage, partitioning, other spaces */
};

struct model_limits {
    size_t max_input_bytes;
    unsigned max_json_depth;
    size_t max_tensors;
    size_t max_ops;
    unsigned threads; /* 1: the caller's thread only; else a long tensors array is read on
                       * two (the same model and errors either way) */
};

/* t's shape, expanded into *out: as the importer's struct shape was, every slot past the
 * rank and the tile count zero. */
void model_tensor_shape(const struct model_tensor *t, struct shape *out);

/* Resolves every tensor's layout on chip (layout_resolve) and fills the byte counts;
 * errors name the tensor (the first in order that fails). Raw (CSV) tensors are left as
 * they are. threads 1 keeps it on the caller's thread; else a long model is resolved on
 * two (the same model and error either way). */
ERR_MUST_CHECK int model_resolve(struct model *m, const struct chip *chip, unsigned threads,
                                 struct err *e);

void model_free(struct model *m);

/* Adds a warning line (printf format) to m->warnings; silently counts it once the list is
 * full. Importers and the passes over a model (lifetime.h, the planner) report this way. */
void model_warn(struct model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
