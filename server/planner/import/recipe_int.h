/*
 * recipe_int.h - what the recipe importer's modules share, private to import/ (recipe.h is
 * the public contract):
 *
 *   recipe.c          the recipe document: parsed, checked, edited (recipe_set, merge
 *                     patches), written back; detection, the importer, the result section
 *   recipe_fields.c   the recipe's fields, one table per section (train, serve, precision,
 *                     optimizer, pipeline): names, types, ranges, defaults
 *   recipe_arch.c     the families (config.json -> struct recipe_arch) and the weights'
 *                     table, parameter counts
 *   recipe_presets.c  the presets: well-known config.json files, copied exactly
 *   recipe_gen.c      the emitter: tensors and ops as the step programs make them, the
 *                     logical axis rules, the finished struct model, a stage measured
 *   recipe_train.c    the training step's program (forward, backward, optimizer)
 *   recipe_serve.c    the serving step's program (a prefill chunk and a decode step)
 *
 * Data flows one way: recipe.c fills a struct recipe; recipe_gen's emitter is driven by
 * the step programs over it and becomes a model.
 */
#ifndef TPUPLAN_RECIPE_INT_H
#define TPUPLAN_RECIPE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/base/vec.h"
#include "planner/chip.h"
#include "planner/dtype.h"
#include "planner/err.h"
#include "planner/model.h"
#include "planner/recipe.h"

struct json_object;

#define RECIPE_MAX_LAYERS   1024
#define RECIPE_MAX_SIZE     (INT64_C(1) << 24) /* any size read from a config or a recipe */
#define RECIPE_MAX_AXES     6                  /* data, fsdp, sequence, tensor, expert, pipeline */
#define RECIPE_MAX_RULE     4                  /* mesh axes one logical axis maps to */
#define RECIPE_MAX_RANK     6
#define RECIPE_MAX_STAGES   64
#define RECIPE_MAX_INFLIGHT 64

/* ---- features: what a family has, what a run does ----------------------------------- */

enum recipe_feature {
    RF_GATED = 1u << 0,         /* gate, up and down projections (SwiGLU, GeGLU) */
    RF_QKV_BIAS = 1u << 1,      /* biases on q, k and v */
    RF_O_BIAS = 1u << 2,        /* a bias on the output projection */
    RF_MLP_BIAS = 1u << 3,      /* biases in the MLP */
    RF_LN_BIAS = 1u << 4,       /* LayerNorm with a bias (GPT-2), else RMSNorm */
    RF_POST_NORMS = 1u << 5,    /* Gemma 2/3: norms after attention and after the MLP too */
    RF_QK_NORM = 1u << 6,       /* Qwen3, Gemma 3: RMSNorm on q and k per head */
    RF_POS_EMBED = 1u << 7,     /* learned position embeddings (GPT-2) */
    RF_MOE = 1u << 8,           /* a mixture of experts in (some) layers */
    RF_SHARED_EXPERT = 1u << 9, /* Qwen-MoE, DeepSeek: an always-on expert beside the routed */
    RF_SHARED_GATE = 1u << 10,  /* Qwen-MoE: a sigmoid gate on the shared expert */
    RF_MLA = 1u << 11,          /* DeepSeek: multi-head latent attention */
    RF_ROUTER_BIAS = 1u << 12,  /* DeepSeek-V3: e_score_correction_bias */
    RF_TIED = 1u << 13,         /* the LM head is the embedding */
    RF_GQA = 1u << 14,          /* q/k/v attention (everything but MLA) */
    /* the layer a row is emitted for */
    RF_DENSE_LAYER = 1u << 16,
    RF_MOE_LAYER = 1u << 17,
    /* the run */
    RF_TRAIN = 1u << 20,
    RF_SERVE = 1u << 21,
    RF_DOT_ATTN = 1u << 22, /* dot-product attention: S x S scores materialized */
    RF_FLASH = 1u << 23,    /* flash/splash attention in training (its residual: lse) */
    RF_DROPLESS = 1u << 24, /* MoE without a capacity: tokens sorted by expert */
    RF_DROPPING = 1u << 25, /* MoE with a capacity per expert */
    RF_CONTEXT = 1u << 26,  /* the sequence axis shards the length: attention gathers K, V */
};

/* ---- sizes: the architecture's and the run's, by name --------------------------------- */

enum recipe_dim {
    RD_ONE,
    RD_HIDDEN,
    RD_HEADS,
    RD_KV_HEADS,
    RD_HEAD_DIM,
    RD_INTER,
    RD_VOCAB,
    RD_POSITIONS,
    RD_EXPERTS,
    RD_MOE_INTER,
    RD_SHARED_INTER, /* the shared expert's intermediate size (n_shared x moe_inter for DeepSeek) */
    RD_Q_LORA,
    RD_KV_LORA,
    RD_QK_HEAD, /* MLA: qk_nope + qk_rope */
    RD_KV_A,    /* MLA: kv_lora + qk_rope */
    RD_KV_B,    /* MLA: qk_nope + v_head */
    RD_V_HEAD,  /* MLA: v_head_dim */
    RD_QK_ROPE, /* MLA: qk_rope_head_dim */
    /* the run's (set per program and phase) */
    RD_BATCH,      /* sequences in this pass */
    RD_SEQ,        /* tokens per sequence in this pass */
    RD_KV_SEQ,     /* the attention's key length: the whole sequence */
    RD_CAPACITY,   /* MoE tokens per expert per sequence */
    RD_ROUTED,     /* MoE dropless: tokens x top-k per sequence */
    RD_CHUNK,      /* chunked cross-entropy: tokens per chunk */
    RD_PAGES,      /* KV cache pages, all sequences */
    RD_PAGE,       /* tokens per page */
    RD_STEP_BATCH, /* sequences of the whole step (every microbatch) */
    RD_SCRATCH,    /* set by a program just before the tensor that uses it */
    RD_COUNT
};

/* The logical axes a tensor's dims carry, mapped to mesh axes by the rules. */
enum recipe_laxis {
    LA_NONE,
    LA_EXP,
    LA_BATCH,
    LA_LENGTH,
    LA_HEADS,
    LA_KV_HEADS,
    LA_MLP,
    LA_VOCAB,
    LA_EMBED,
    LA_ACT_EMBED,
    LA_HEAD_DIM,
    LA_KV_LENGTH,
    LA_NORM,
    LA_LAYERS,
    LA_CACHE_PAGES,
    LA_CACHE_HEADS,
    LA_COUNT
};

/* Mesh axes, canonical order (the model's mesh lists them so). */
enum recipe_axis { AX_DATA, AX_FSDP, AX_SEQUENCE, AX_TENSOR, AX_EXPERT, AX_PIPELINE, AX_COUNT };

/* ---- the architecture ----------------------------------------------------------------- */

struct recipe_family {
    const char *model_type;   /* "llama" */
    const char *architecture; /* "LlamaForCausalLM" */
    const char *label;        /* "Llama 2, 3, 3.1, 3.2" */
    uint32_t features;        /* RF_* the family always has */
    bool tied_default;        /* tie_word_embeddings when the config leaves it out */
};

/* Per layer (struct recipe_arch.layer). */
enum { RL_MOE = 1u << 0, RL_SLIDING = 1u << 1 };

struct recipe_arch {
    const struct recipe_family *family;
    uint32_t features; /* the family's, and what the config adds (biases, tying) */
    int64_t dim[RD_QK_ROPE + 1];
    int64_t layers;
    int64_t top_k;
    int64_t sliding_window;           /* 0: none */
    uint8_t layer[RECIPE_MAX_LAYERS]; /* RL_* per layer */
};

/* One weight of the table (recipe_arch.c): a global (embedding side, head side) or one
 * per layer. */
enum recipe_block { RB_EMBED, RB_ATTN, RB_MLP, RB_HEAD };
enum recipe_lop { /* a layer's forward ops, in order */
                  LOP_ATTN_NORM,
                  LOP_QKV,
                  LOP_ATTN,
                  LOP_OPROJ,
                  LOP_MLP_NORM,
                  LOP_MLP_UP,
                  LOP_MLP_DOWN,
                  LOP_COUNT
};
enum recipe_bop { BOP_NONE, BOP_MLP, BOP_ATTN }; /* a layer's backward ops */

struct recipe_weight {
    const char *name; /* "attn.wq" */
    uint8_t block;    /* enum recipe_block */
    uint32_t need;    /* RF_* all required */
    uint32_t skip;    /* RF_* none allowed */
    uint8_t rank;
    uint8_t dims[3];  /* enum recipe_dim */
    uint8_t axes[3];  /* enum recipe_laxis */
    uint8_t contract; /* bit d: dim d is contracted (a matmul weight; 0: not one) */
    uint8_t fwd;      /* enum recipe_lop that reads it */
};

size_t recipe_weight_count(void);
const struct recipe_weight *recipe_weight_at(size_t i);

/* Whether row w exists in a layer (or globally) with these features. */
static inline bool recipe_weight_applies(const struct recipe_weight *w, uint32_t f)
{
    return (w->need & f) == w->need && (w->skip & f) == 0;
}

/* The features of layer l (the arch's plus RF_MOE_LAYER or RF_DENSE_LAYER). */
uint32_t recipe_layer_features(const struct recipe_arch *a, int64_t l);

/* Reads a config.json object into *a; errors name "model.<key>" and, for an architecture
 * none of the families knows, list them and the fields read. */
ERR_MUST_CHECK int recipe_arch_read(struct json_object *config, struct recipe_arch *a,
                                    struct err *e);

/* Elements of every weight: the model's parameter count (checked sum). */
ERR_MUST_CHECK int recipe_arch_params(const struct recipe_arch *a, uint64_t *total, struct err *e);

/* The families' table, for listings. */
size_t recipe_family_count(void);
const struct recipe_family *recipe_family_at(size_t i);

/* "hidden_size, num_hidden_layers, ...": the config fields the generator reads. */
const char *recipe_arch_fields(void);

/* ---- presets --------------------------------------------------------------------------- */

const struct recipe_preset *recipe_preset_find(const char *name);

/* ---- the run --------------------------------------------------------------------------- */

enum recipe_opt { OPT_ADAMW, OPT_ADAFACTOR, OPT_SGD, OPT_LION };
enum recipe_quant { Q_NONE, Q_INT8, Q_INT4, Q_FP8 };
enum recipe_logits { LG_WHOLE, LG_CHUNKED };

/* Activation classes, as JAX's checkpoint policies tell them apart. */
enum recipe_aclass {
    AC_INPUT = 1u << 0,  /* the layer's input: the checkpoint boundary, always kept */
    AC_DOT_NB = 1u << 1, /* a dot without batch dims (a projection: x @ W) */
    AC_DOT_B = 1u << 2,  /* a dot with batch dims (q k^T, p v, experts' einsums) */
    AC_OTHER = 1u << 3,  /* anything else (norms, softmax, activations, kernels) */
};

struct recipe_policy {
    const char *name;
    const char *aliases[3]; /* other names it answers to, NULL-ended */
    uint8_t saved;          /* AC_* kept in HBM for the backward */
    uint8_t offloaded;      /* AC_* kept in host memory instead */
    const char *doc;
};
size_t recipe_policy_count(void);
const struct recipe_policy *recipe_policy_at(size_t i);

struct recipe_optimizer {
    uint8_t kind;    /* enum recipe_opt */
    uint8_t state;   /* enum dtype: m, v, momentum, factored moments */
    double momentum; /* sgd: 0 none; adafactor: > 0 keeps a first moment; < 0: the default */
};

enum recipe_attention { ATT_FLASH, ATT_DOT };

struct recipe_train {
    int64_t batch, seq, microbatches;
    uint8_t param, compute, master, grad; /* enum dtype; master DT_INVALID: none */
    struct recipe_optimizer opt;
    uint8_t policy;    /* recipe_policy_at */
    uint8_t attention; /* enum recipe_attention */
    uint8_t logits;    /* enum recipe_logits */
    int64_t logits_chunk;
    bool scan;
    double capacity_factor; /* <= 0: dropless */
};

struct recipe_serve {
    int64_t sequences, context, prefill_chunk, page_size;
    uint8_t weights;            /* the weights' storage: an index of the serve weights table */
    uint8_t param, compute, kv; /* enum dtype */
    uint8_t quant;              /* enum recipe_quant */
    int64_t group;              /* int4: input elements per scale */
    bool scan;
    double capacity_factor;
};

struct recipe_rule {
    uint8_t n;
    uint8_t axes[RECIPE_MAX_RULE]; /* enum recipe_axis */
};

struct recipe {
    struct json_object *root;   /* the recipe as given (owned) */
    struct json_object *config; /* the config read (the preset's with the overrides; owned) */
    const struct recipe_preset *preset;
    struct recipe_arch arch;
    uint64_t params;
    bool is_train;
    struct recipe_train t;
    struct recipe_serve s;
    int64_t mesh[AX_COUNT]; /* 0: not given */
    int64_t stages;         /* the pipeline axis' size, 1 without */
    int64_t pp_microbatches;
    uint8_t schedule; /* 0: 1F1B, 1: GPipe */
    bool gpipe;
    struct recipe_rule rules[LA_COUNT];
    bool rule_given[LA_COUNT];
    char name[128];
    char chip[32]; /* "" when the recipe names none */
};

/* Table names, for echoes and errors. */
const char *recipe_axis_name(enum recipe_axis a);
/* The mesh axis a name or alias stands for ("context" is AX_SEQUENCE); -1: none. */
int recipe_axis_find(const char *name);
const char *recipe_laxis_name(enum recipe_laxis a);

/* The default rules (recipe_gen.c), into r[LA_COUNT]. */
void recipe_rules_default(struct recipe_rule *r);

/* The run's fields as planned (defaults filled), for the result's section: the train or
 * serve section, and the pipeline's; new json-c objects (the caller's). */
struct json_object *recipe_fields_echo(const struct recipe *r);
struct json_object *recipe_pipeline_echo(const struct recipe *r);
/* Every field whose value is one of a list of names, and the names: {"train.attention":
 * ["flash", "dot_product"], ...}; a new json-c object (the caller's). */
struct json_object *recipe_choices_echo(void);

/* recipe_fields.c: the sections read from the recipe's JSON into *r (r->arch read first);
 * errors name the field ("train.batch"). */
ERR_MUST_CHECK int recipe_fields_read(struct json_object *root, struct recipe *r, struct err *e);

/* ---- the emitter (recipe_gen.c) --------------------------------------------------------- */

/* What a tensor is for, in the result's recipe section ("categories"). */
enum recipe_cat {
    CAT_WEIGHTS,
    CAT_QUANT_SCALES,
    CAT_MASTER,
    CAT_OPT_STATE,
    CAT_GRADS,
    CAT_SAVED,
    CAT_TEMPS,
    CAT_GATHERED,
    CAT_INPUTS,
    CAT_OUTPUTS,
    CAT_KV_CACHE,
    CAT_COUNT
};
const char *recipe_cat_name(enum recipe_cat c);

#define RG_NONE UINT32_MAX

struct rg_tensor {
    uint32_t name; /* offset in the emitter's names */
    uint8_t kind;  /* enum tensor_kind */
    uint8_t cat;   /* enum recipe_cat */
    uint8_t dtype; /* enum dtype */
    uint8_t rank;
    int64_t dims[RECIPE_MAX_RANK];
    uint8_t axes[RECIPE_MAX_RANK]; /* enum recipe_laxis */
    uint16_t gathered;             /* logical axes whose mesh axes are dropped (bit per LA) */
    int32_t layer;                 /* tag: its layer, -1: none, -2: all (a stacked tensor) */
    uint8_t block;                 /* tag: enum recipe_block */
    int16_t mb;                    /* tag: its pipeline microbatch, -1: none */
};

struct rg_op {
    uint32_t name;
    uint32_t first, n_in, n_out; /* refs[first ..): inputs, then outputs */
};

/* Bytes of one category, per device. */
struct recipe_bytes {
    uint64_t count, logical, padded;
};

/* A stage measured: its model resolved on a chip, its lifetimes derived. */
struct recipe_stage {
    int64_t first_layer, layers;
    int64_t in_flight;
    uint64_t live_peak; /* the most padded bytes live at one step */
    int64_t peak_step;
    uint64_t total_padded;
    struct recipe_bytes cat[CAT_COUNT];
    uint64_t host_bytes; /* per device, logical: what the policy offloads */
    size_t tensors;
};

struct rg {
    const struct recipe *r;
    int64_t dim[RD_COUNT];
    struct vec tensors;  /* struct rg_tensor */
    struct vec ops;      /* struct rg_op */
    struct vec refs;     /* uint32_t */
    struct vec names;    /* char: NUL-terminated names, back to back */
    uint64_t host_bytes; /* offloaded, per device, logical */
    size_t n_offloaded;
    int rc; /* the first error (sticky): every call is a no-op after one */
    struct err *e;
    int64_t stage; /* the stage being emitted */
    int16_t mb;    /* the microbatch being emitted (-1: none) */
    bool op_open;
};

/* An emitter over r for stage `stage`, within the model limits. */
void rg_init(struct rg *g, const struct recipe *r, int64_t stage, const struct model_limits *l,
             struct err *e);
void rg_free(struct rg *g);

/* Starts op `name` (printf): the tensors made next are its outputs, rg_use's its inputs. */
void rg_op(struct rg *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void rg_use(struct rg *g, uint32_t t);

/* A tensor: its name (printf after the arguments below), kind, category, dtype, dims and
 * logical axes; an output of the open op unless it is an argument (param, optimizer, input,
 * kv_cache). Returns its index, or RG_NONE after an error. */
struct rg_spec {
    uint8_t kind, cat, dtype, rank;
    const uint8_t *dims; /* enum recipe_dim, rank of them */
    const uint8_t *axes; /* enum recipe_laxis */
    int64_t lead;        /* > 0: a leading dim of this size (stacked layers), axis LA_LAYERS */
    int32_t layer;
    uint8_t block;
    uint16_t gathered;
};
uint32_t rg_tensor(struct rg *g, const struct rg_spec *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The bytes a tensor of spec s would hold per device, logical (for what is offloaded). */
uint64_t rg_local_bytes(const struct rg *g, const struct rg_spec *s);

/* Whether the rules shard a dim of s whose logical axis is la (FSDP: a weight's embed dim,
 * all-gathered before use). */
bool rg_sharded_on(const struct rg *g, const struct rg_spec *s, uint8_t la);

/* The finished model: tensors, ops, mesh (the recipe's without the pipeline axis), tags;
 * cats (may be NULL) gets the category of each tensor (malloc'd, caller frees). */
ERR_MUST_CHECK int rg_finish(struct rg *g, struct model *m, uint8_t **cats, struct err *e);

/* ---- one layer's intermediates (recipe_layer.c) ---------------------------------------- */

#define RECIPE_ACT_ROWS 48

/* What becomes of an intermediate of the forward pass. */
enum recipe_astatus {
    AS_ABSENT,     /* the layer has no such tensor */
    AS_DROPPED,    /* made and consumed in the forward; the backward does not need it */
    AS_SAVED,      /* kept in HBM for the backward (kind activation) */
    AS_OFFLOADED,  /* kept in host memory for the backward, reloaded there */
    AS_RECOMPUTED, /* made again in the backward from what is kept */
};

struct recipe_act {
    const char *name;
    uint8_t op;        /* enum recipe_lop that makes it (LOP_COUNT: the layer's input) */
    uint8_t cls;       /* enum recipe_aclass */
    uint8_t bwd;       /* enum recipe_bop that reads it, when bwd_need holds */
    uint32_t bwd_need; /* RF_* under which the backward reads it */
    uint32_t need, skip;
    uint8_t rank;
    uint8_t dims[4], axes[4];
    bool f32;        /* float32 whatever the compute dtype */
    uint8_t from[4]; /* rows it is computed from (index + 1; 0 ends) */
};
size_t recipe_act_count(void);
const struct recipe_act *recipe_act_at(size_t i);

/* The status of every row for a layer with features f under policy p (training); a row
 * the backward reads is kept if the policy saves its class, else offloaded or recomputed
 * (and what it is computed from becomes needed in turn). */
void recipe_act_plan(uint32_t f, const struct recipe_policy *p, uint8_t *status);

/* One pass through a layer body: the forward ops, calling on_op(ctx, lop) right after each
 * op starts (to use or gather weights) and on_done(ctx, lop, t) after its rows are made
 * (after LOP_MLP_DOWN the caller makes the layer's output there, from x_mid and the MLP's).
 * t[row] gets each row's tensor (RG_NONE when absent); t[0], the layer's input, is the
 * caller's, and t[RECIPE_ROW_OUT] is free for the caller (the layer's output). Saved rows are
 * activations with a leading dim of `lead` (stacked layers, 0: none); the rest are temporaries.
 * name is the body's prefix ("layers.3", "layers"). */
struct recipe_pass {
    const char *name;
    const char *suffix; /* after every name: "@mb1", "" */
    uint32_t features;
    const uint8_t *status;
    int64_t lead;
    int32_t layer;
    uint8_t compute; /* enum dtype */
    void (*on_op)(void *ctx, struct rg *g, uint8_t lop);
    void (*on_done)(void *ctx, struct rg *g, uint8_t lop, uint32_t *t);
    void *ctx;
};
void recipe_layer_forward(struct rg *g, const struct recipe_pass *p, uint32_t *t);

/* The spec of row i of a pass (for what is offloaded, and the backward's copies). */
void recipe_act_spec(const struct recipe_pass *p, size_t i, bool saved, struct rg_spec *s);

/* The backward op bop's own temporaries (the gradients of the layer's intermediates). */
void recipe_layer_bwd_temps(struct rg *g, const struct recipe_pass *p, uint8_t bop);

/* The hidden state's spec ([batch, length, embed], compute dtype) with kind and category. */
void recipe_hidden_spec(const struct recipe_pass *p, uint8_t kind, uint8_t cat, struct rg_spec *s);

/* Row indices the programs name. */
enum { RECIPE_ROW_X = 0, RECIPE_ROW_OUT = RECIPE_ACT_ROWS - 1 };

/* The step programs (recipe_train.c, recipe_serve.c): stage `g->stage` emitted. */
void recipe_train_emit(struct rg *g);
void recipe_serve_emit(struct rg *g);

/* A body's name prefix: "layers.<l>" unrolled; "layers" when one scan holds every layer;
 * "layers[<first>:<end>]" for each of several scans (dense and MoE layers, sliding and full
 * attention). */
void recipe_body_name(char *buf, size_t cap, bool scan, size_t nbodies, int64_t first,
                      int64_t count);

/* The layers of stage k: [*first, *first + *n). */
void recipe_stage_layers(const struct recipe *r, int64_t k, int64_t *first, int64_t *n);

/* Microbatches stage k keeps in flight (GPipe: all; 1F1B: stages - k, at most all). */
int64_t recipe_in_flight(const struct recipe *r, int64_t k);

/* Generates stage k's model (recipe_gen.c); when st is not NULL the model is resolved on
 * chip, its lifetimes derived and *st filled (the model is then for measuring only). */
ERR_MUST_CHECK int recipe_stage_model(const struct recipe *r, int64_t k, const struct chip *chip,
                                      const struct model_limits *l, struct model *m,
                                      struct recipe_stage *st, struct err *e);

#endif
