/*
 * recipe_arch.c - a config.json read into an architecture (recipe_int.h struct
 * recipe_arch): the families' table, the config fields each size comes from, which layers
 * are mixtures of experts or slide their attention window, and the weights' table that both
 * the parameter count and the step programs read.
 *
 * Sources for what each family holds: the Hugging Face transformers model files
 * (modeling_llama.py, modeling_mistral.py, modeling_qwen2.py, modeling_qwen3.py,
 * modeling_gemma.py, modeling_gemma2.py, modeling_gemma3.py, modeling_gpt2.py,
 * modeling_mixtral.py, modeling_qwen2_moe.py, modeling_qwen3_moe.py,
 * modeling_deepseek_v3.py): every weight below is one of their nn.Parameters, and the
 * counts equal the published totals (tests/unit/test_recipe.c checks each preset).
 */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/base/jsonr.h"
#include "planner/import/recipe_int.h"

/* ---- families ----------------------------------------------------------------------- */

#define DENSE (RF_GATED | RF_GQA)

static const struct recipe_family families[] = {
    {"llama", "LlamaForCausalLM", "Llama 2, 3, 3.1, 3.2", DENSE, false},
    {"mistral", "MistralForCausalLM", "Mistral", DENSE, false},
    {"qwen2", "Qwen2ForCausalLM", "Qwen2, Qwen2.5", DENSE | RF_QKV_BIAS, false},
    {"qwen3", "Qwen3ForCausalLM", "Qwen3 (dense)", DENSE | RF_QK_NORM, false},
    {"gemma", "GemmaForCausalLM", "Gemma", DENSE, true},
    {"gemma2", "Gemma2ForCausalLM", "Gemma 2", DENSE | RF_POST_NORMS, true},
    {"gemma3_text", "Gemma3ForCausalLM", "Gemma 3 (text)", DENSE | RF_POST_NORMS | RF_QK_NORM,
     true},
    {"gpt2", "GPT2LMHeadModel", "GPT-2",
     RF_GQA | RF_LN_BIAS | RF_QKV_BIAS | RF_O_BIAS | RF_MLP_BIAS | RF_POS_EMBED, true},
    {"mixtral", "MixtralForCausalLM", "Mixtral", DENSE | RF_MOE, false},
    {"qwen2_moe", "Qwen2MoeForCausalLM", "Qwen1.5-MoE, Qwen2-MoE",
     DENSE | RF_MOE | RF_QKV_BIAS | RF_SHARED_EXPERT | RF_SHARED_GATE, false},
    {"qwen3_moe", "Qwen3MoeForCausalLM", "Qwen3-MoE", DENSE | RF_MOE | RF_QK_NORM, false},
    {"deepseek_v3", "DeepseekV3ForCausalLM", "DeepSeek-V3",
     RF_GATED | RF_MLA | RF_MOE | RF_SHARED_EXPERT | RF_ROUTER_BIAS, false},
};

#define NFAMILIES (sizeof(families) / sizeof(families[0]))

size_t recipe_family_count(void)
{
    return NFAMILIES;
}

const struct recipe_family *recipe_family_at(size_t i)
{
    return i < NFAMILIES ? &families[i] : NULL;
}

/* ---- the sizes and the config keys they come from ----------------------------------- */

/* How a size is filled when the config leaves it out. */
enum fill { F_REQUIRED, F_HEADS, F_HIDDEN_PER_HEAD, F_FOUR_HIDDEN, F_ZERO };

struct size_field {
    const char *keys[3]; /* the config keys, first found wins (GPT-2's names second) */
    uint32_t need;       /* read only for families with these features */
    uint8_t dim;         /* enum recipe_dim */
    uint8_t fill;        /* enum fill */
};

static const struct size_field size_fields[] = {
    {{"hidden_size", "n_embd"}, 0, RD_HIDDEN, F_REQUIRED},
    {{"num_attention_heads", "n_head"}, 0, RD_HEADS, F_REQUIRED},
    {{"num_key_value_heads"}, RF_GQA, RD_KV_HEADS, F_HEADS},
    {{"head_dim"}, RF_GQA, RD_HEAD_DIM, F_HIDDEN_PER_HEAD},
    {{"intermediate_size", "n_inner"}, 0, RD_INTER, F_FOUR_HIDDEN},
    {{"vocab_size"}, 0, RD_VOCAB, F_REQUIRED},
    {{"n_positions", "max_position_embeddings"}, RF_POS_EMBED, RD_POSITIONS, F_REQUIRED},
    {{"num_local_experts", "num_experts", "n_routed_experts"}, RF_MOE, RD_EXPERTS, F_REQUIRED},
    {{"moe_intermediate_size", "intermediate_size"}, RF_MOE, RD_MOE_INTER, F_REQUIRED},
    {{"shared_expert_intermediate_size"}, RF_SHARED_GATE, RD_SHARED_INTER, F_REQUIRED},
    {{"q_lora_rank"}, RF_MLA, RD_Q_LORA, F_REQUIRED},
    {{"kv_lora_rank"}, RF_MLA, RD_KV_LORA, F_REQUIRED},
    {{"qk_nope_head_dim"}, RF_MLA, RD_QK_HEAD, F_REQUIRED}, /* + qk_rope below */
    {{"qk_rope_head_dim"}, RF_MLA, RD_QK_ROPE, F_REQUIRED},
    {{"v_head_dim"}, RF_MLA, RD_V_HEAD, F_REQUIRED},
};

static const char fields_read[] =
    "architectures or model_type, hidden_size, num_hidden_layers, num_attention_heads, "
    "num_key_value_heads, head_dim, intermediate_size, vocab_size, tie_word_embeddings, "
    "attention_bias, mlp_bias, sliding_window, use_sliding_window, max_window_layers, "
    "layer_types, sliding_window_pattern; GPT-2: n_embd, n_layer, n_head, n_inner, "
    "n_positions; mixtures of experts: num_local_experts or num_experts or n_routed_experts, "
    "num_experts_per_tok, moe_intermediate_size, shared_expert_intermediate_size, "
    "n_shared_experts, decoder_sparse_step, mlp_only_layers, first_k_dense_replace, "
    "moe_layer_freq; DeepSeek's latent attention: q_lora_rank, kv_lora_rank, "
    "qk_nope_head_dim, qk_rope_head_dim, v_head_dim";

const char *recipe_arch_fields(void)
{
    return fields_read;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;

    return json_object_object_get_ex(o, key, &v) && !json_object_is_type(v, json_type_null) ? v
                                                                                            : NULL;
}

/* An integer field in [lo, RECIPE_MAX_SIZE]: 1 read, 0 absent (or null), or an error. */
static int read_int(json_object *cfg, const char *key, int64_t lo, int64_t *out, struct err *e)
{
    json_object *v = get(cfg, key);
    char where[64];

    if (v == NULL)
        return 0;
    snprintf(where, sizeof(where), "model.%s", key);
    if (jsonr_int(v, out) != 0 || *out < lo || *out > RECIPE_MAX_SIZE)
        return err_set(e, ERR_INVALID, where,
                       "%s: must be a whole number from %lld to %lld, got %s", where, (long long)lo,
                       (long long)RECIPE_MAX_SIZE, jsonr_type_name(v));
    return 1;
}

/* A boolean field: 1 read, 0 absent, or an error. */
static int read_bool(json_object *cfg, const char *key, bool *out, struct err *e)
{
    json_object *v = get(cfg, key);
    char where[64];

    if (v == NULL)
        return 0;
    snprintf(where, sizeof(where), "model.%s", key);
    if (!json_object_is_type(v, json_type_boolean))
        return err_set(e, ERR_INVALID, where, "%s: must be true or false, got %s", where,
                       jsonr_type_name(v));
    *out = json_object_get_boolean(v);
    return 1;
}

static int unsupported(json_object *cfg, struct err *e)
{
    char known[256];
    size_t n = 0;
    json_object *arch = get(cfg, "architectures"), *mt = get(cfg, "model_type");
    const char *named = mt != NULL && json_object_is_type(mt, json_type_string)
                            ? json_object_get_string(mt)
                            : "(none)";

    if (arch != NULL && json_object_is_type(arch, json_type_array) &&
        json_object_array_length(arch) > 0 &&
        json_object_is_type(json_object_array_get_idx(arch, 0), json_type_string))
        named = json_object_get_string(json_object_array_get_idx(arch, 0));
    known[0] = '\0';
    for (size_t i = 0; i < NFAMILIES && n < sizeof(known); i++)
        n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "",
                              families[i].model_type);
    /* ERR_MSG_MAX bytes: the families by model_type, the core fields; INPUT.md has them all */
    return err_set(e, ERR_INVALID, "model.architectures",
                   "model: \"%.40s\" is not supported. Supported model_type: %s. For another "
                   "decoder, give the closest model_type with its sizes: hidden_size, "
                   "num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, "
                   "intermediate_size, vocab_size, tie_word_embeddings (experts, latent "
                   "attention: server/planner/INPUT.md#families)",
                   named, known);
}

/* The family: by architectures[0], else by model_type. */
static const struct recipe_family *find_family(json_object *cfg)
{
    json_object *arch = get(cfg, "architectures"), *mt = get(cfg, "model_type");

    for (size_t k = 0; arch != NULL && json_object_is_type(arch, json_type_array) &&
                       k < json_object_array_length(arch);
         k++) {
        json_object *a = json_object_array_get_idx(arch, k);
        for (size_t i = 0; json_object_is_type(a, json_type_string) && i < NFAMILIES; i++)
            if (strcmp(json_object_get_string(a), families[i].architecture) == 0)
                return &families[i];
    }
    for (size_t i = 0; json_object_is_type(mt, json_type_string) && i < NFAMILIES; i++)
        if (strcmp(json_object_get_string(mt), families[i].model_type) == 0)
            return &families[i];
    return NULL;
}

static int read_sizes(json_object *cfg, struct recipe_arch *a, struct err *e)
{
    int rc;

    for (size_t i = 0; i < sizeof(size_fields) / sizeof(size_fields[0]); i++) {
        const struct size_field *f = &size_fields[i];
        int64_t *v = &a->dim[f->dim];
        rc = 0;
        if ((f->need & a->features) != f->need)
            continue;
        for (size_t k = 0; k < 3 && f->keys[k] != NULL && rc == 0; k++)
            rc = read_int(cfg, f->keys[k], 1, v, e);
        if (rc < 0)
            return rc;
        if (rc == 1)
            continue;
        if (f->fill == F_HEADS)
            *v = a->dim[RD_HEADS];
        else if (f->fill == F_HIDDEN_PER_HEAD)
            *v = a->dim[RD_HIDDEN] / a->dim[RD_HEADS];
        else if (f->fill == F_FOUR_HIDDEN && !(a->features & RF_GATED))
            *v = 4 * a->dim[RD_HIDDEN];
        else
            return err_set(e, ERR_INVALID, "model", "model: \"%s\" is required for %s", f->keys[0],
                           a->family->label);
    }
    if ((rc = read_int(cfg, "num_hidden_layers", 1, &a->layers, e)) == 0)
        rc = read_int(cfg, "n_layer", 1, &a->layers, e);
    if (rc <= 0)
        return rc < 0
                   ? rc
                   : err_set(e, ERR_INVALID, "model", "model: \"num_hidden_layers\" is required");
    if (a->layers > RECIPE_MAX_LAYERS)
        return err_set(e, ERR_LIMIT, "model.num_hidden_layers",
                       "model.num_hidden_layers: %lld layers; at most %d are planned",
                       (long long)a->layers, RECIPE_MAX_LAYERS);
    if ((a->features & RF_GQA) && a->dim[RD_HEADS] % a->dim[RD_KV_HEADS] != 0)
        return err_set(e, ERR_INVALID, "model.num_key_value_heads",
                       "model.num_key_value_heads: %lld does not divide num_attention_heads %lld",
                       (long long)a->dim[RD_KV_HEADS], (long long)a->dim[RD_HEADS]);
    if (a->features & RF_MLA) {
        a->dim[RD_KV_B] = a->dim[RD_QK_HEAD] + a->dim[RD_V_HEAD];
        a->dim[RD_QK_HEAD] += a->dim[RD_QK_ROPE];
        a->dim[RD_KV_A] = a->dim[RD_KV_LORA] + a->dim[RD_QK_ROPE];
    }
    a->dim[RD_ONE] = 1;
    return ERR_OK;
}

/* Biases and tying the config switches on (Llama's attention_bias covers q, k, v and o). */
static int read_switches(json_object *cfg, struct recipe_arch *a, struct err *e)
{
    bool b = a->family->tied_default;
    int rc;

    if ((rc = read_bool(cfg, "tie_word_embeddings", &b, e)) < 0)
        return rc;
    a->features |= b ? RF_TIED : 0;
    b = false;
    if ((rc = read_bool(cfg, "attention_bias", &b, e)) < 0)
        return rc;
    a->features |= b ? RF_QKV_BIAS | RF_O_BIAS : 0;
    b = false;
    if ((rc = read_bool(cfg, "mlp_bias", &b, e)) < 0)
        return rc;
    a->features |= b ? RF_MLP_BIAS : 0;
    return ERR_OK;
}

/* Which layers are mixtures of experts: Mixtral all; Qwen-MoE every decoder_sparse_step-th
 * but mlp_only_layers; DeepSeek from first_k_dense_replace on, every moe_layer_freq-th. */
static int read_moe_layers(json_object *cfg, struct recipe_arch *a, struct err *e)
{
    int64_t step = 1, first = 0, k = 2;
    json_object *only = get(cfg, "mlp_only_layers");
    int rc;

    if (!(a->features & RF_MOE))
        return ERR_OK;
    if ((rc = read_int(cfg, "num_experts_per_tok", 1, &k, e)) < 0 ||
        (rc = read_int(cfg, "decoder_sparse_step", 1, &step, e)) < 0 ||
        (rc = read_int(cfg, "first_k_dense_replace", 0, &first, e)) < 0 ||
        (rc = read_int(cfg, "moe_layer_freq", 1, &step, e)) < 0)
        return rc;
    if (k > a->dim[RD_EXPERTS])
        return err_set(e, ERR_INVALID, "model.num_experts_per_tok",
                       "model.num_experts_per_tok: %lld is more than the %lld experts",
                       (long long)k, (long long)a->dim[RD_EXPERTS]);
    a->top_k = k;
    for (int64_t l = 0; l < a->layers; l++) {
        bool moe =
            l >= first && (a->family->features & RF_MLA ? l % step == 0 : (l + 1) % step == 0);
        for (size_t j = 0; moe && json_object_is_type(only, json_type_array) &&
                           j < json_object_array_length(only);
             j++)
            moe = json_object_get_int64(json_object_array_get_idx(only, j)) != l;
        a->layer[l] |= moe ? RL_MOE : 0;
    }
    if (a->features & RF_SHARED_EXPERT && !(a->features & RF_SHARED_GATE)) {
        int64_t n = 1;
        if ((rc = read_int(cfg, "n_shared_experts", 1, &n, e)) < 0)
            return rc;
        a->dim[RD_SHARED_INTER] = n * a->dim[RD_MOE_INTER];
    }
    /* DeepSeek's dense layers use intermediate_size, its experts moe_intermediate_size */
    return ERR_OK;
}

/* Which layers slide their attention window: "layer_types" when given; else Mistral all
 * (with a sliding_window), Gemma 2 the even layers, Gemma 3 all but every
 * sliding_window_pattern-th, Qwen from max_window_layers on when use_sliding_window. */
static int read_sliding(json_object *cfg, struct recipe_arch *a, struct err *e)
{
    json_object *types = get(cfg, "layer_types");
    const char *mt = a->family->model_type;
    int64_t pattern = 6, from = 0;
    bool use = strncmp(mt, "qwen", 4) != 0;
    int rc;

    if ((rc = read_int(cfg, "sliding_window", 1, &a->sliding_window, e)) <= 0)
        return rc;
    if ((rc = read_bool(cfg, "use_sliding_window", &use, e)) < 0 ||
        (rc = read_int(cfg, "sliding_window_pattern", 1, &pattern, e)) < 0 ||
        (rc = read_int(cfg, "max_window_layers", 0, &from, e)) < 0)
        return rc;
    for (int64_t l = 0; l < a->layers; l++) {
        bool s = false;
        if (json_object_is_type(types, json_type_array)) {
            json_object *t = json_object_array_get_idx(types, (size_t)l);
            s = json_object_is_type(t, json_type_string) &&
                strcmp(json_object_get_string(t), "sliding_attention") == 0;
        } else if (strcmp(mt, "gemma2") == 0) {
            s = l % 2 == 0;
        } else if (strcmp(mt, "gemma3_text") == 0) {
            s = (l + 1) % pattern != 0;
        } else if (strcmp(mt, "mistral") == 0 || strcmp(mt, "mixtral") == 0) {
            s = true;
        } else if (strncmp(mt, "qwen", 4) == 0) {
            s = use && l >= from;
        }
        a->layer[l] |= s ? RL_SLIDING : 0;
    }
    return ERR_OK;
}

int recipe_arch_read(json_object *cfg, struct recipe_arch *a, struct err *e)
{
    int rc;

    memset(a, 0, sizeof(*a));
    if (!json_object_is_type(cfg, json_type_object))
        return err_set(e, ERR_INVALID, "model",
                       "model: must be a config.json object or {\"preset\": NAME}, got %s",
                       jsonr_type_name(cfg));
    if ((a->family = find_family(cfg)) == NULL)
        return unsupported(cfg, e);
    a->features = a->family->features;
    if ((rc = read_switches(cfg, a, e)) != ERR_OK || (rc = read_sizes(cfg, a, e)) != ERR_OK ||
        (rc = read_moe_layers(cfg, a, e)) != ERR_OK || (rc = read_sliding(cfg, a, e)) != ERR_OK)
        return rc;
    return ERR_OK;
}

uint32_t recipe_layer_features(const struct recipe_arch *a, int64_t l)
{
    return a->features | (a->layer[l] & RL_MOE ? RF_MOE_LAYER : RF_DENSE_LAYER);
}

/* ---- the weights ---------------------------------------------------------------------- */

#define W1(d0, a0)                                                                                 \
    1, {d0},                                                                                       \
    {                                                                                              \
        a0                                                                                         \
    }
#define W2(d0, d1, a0, a1)                                                                         \
    2, {d0, d1},                                                                                   \
    {                                                                                              \
        a0, a1                                                                                     \
    }
#define W3(d0, d1, d2, a0, a1, a2)                                                                 \
    3, {d0, d1, d2},                                                                               \
    {                                                                                              \
        a0, a1, a2                                                                                 \
    }
#define LN RF_LN_BIAS

/* name, block, need, skip, rank, dims, axes, contracted dims (matmul weights), forward op */
static const struct recipe_weight weights[] = {
    /* embedding side (the first stage) */
    {"embed", RB_EMBED, 0, 0, W2(RD_VOCAB, RD_HIDDEN, LA_VOCAB, LA_EMBED), 0, 0},
    {"pos_embed", RB_EMBED, RF_POS_EMBED, 0, W2(RD_POSITIONS, RD_HIDDEN, LA_NONE, LA_EMBED), 0, 0},
    /* attention */
    {"attn_norm.scale", RB_ATTN, 0, 0, W1(RD_HIDDEN, LA_NORM), 0, LOP_ATTN_NORM},
    {"attn_norm.bias", RB_ATTN, LN, 0, W1(RD_HIDDEN, LA_NORM), 0, LOP_ATTN_NORM},
    {"attn.wq", RB_ATTN, RF_GQA, 0,
     W3(RD_HIDDEN, RD_HEADS, RD_HEAD_DIM, LA_EMBED, LA_HEADS, LA_HEAD_DIM), 1, LOP_QKV},
    {"attn.wk", RB_ATTN, RF_GQA, 0,
     W3(RD_HIDDEN, RD_KV_HEADS, RD_HEAD_DIM, LA_EMBED, LA_KV_HEADS, LA_HEAD_DIM), 1, LOP_QKV},
    {"attn.wv", RB_ATTN, RF_GQA, 0,
     W3(RD_HIDDEN, RD_KV_HEADS, RD_HEAD_DIM, LA_EMBED, LA_KV_HEADS, LA_HEAD_DIM), 1, LOP_QKV},
    {"attn.bq", RB_ATTN, RF_GQA | RF_QKV_BIAS, 0, W2(RD_HEADS, RD_HEAD_DIM, LA_HEADS, LA_HEAD_DIM),
     0, LOP_QKV},
    {"attn.bk", RB_ATTN, RF_GQA | RF_QKV_BIAS, 0,
     W2(RD_KV_HEADS, RD_HEAD_DIM, LA_KV_HEADS, LA_HEAD_DIM), 0, LOP_QKV},
    {"attn.bv", RB_ATTN, RF_GQA | RF_QKV_BIAS, 0,
     W2(RD_KV_HEADS, RD_HEAD_DIM, LA_KV_HEADS, LA_HEAD_DIM), 0, LOP_QKV},
    {"attn.q_norm.scale", RB_ATTN, RF_QK_NORM, 0, W1(RD_HEAD_DIM, LA_NORM), 0, LOP_QKV},
    {"attn.k_norm.scale", RB_ATTN, RF_QK_NORM, 0, W1(RD_HEAD_DIM, LA_NORM), 0, LOP_QKV},
    {"attn.wq_a", RB_ATTN, RF_MLA, 0, W2(RD_HIDDEN, RD_Q_LORA, LA_EMBED, LA_NONE), 1, LOP_QKV},
    {"attn.q_a_norm.scale", RB_ATTN, RF_MLA, 0, W1(RD_Q_LORA, LA_NORM), 0, LOP_QKV},
    {"attn.wq_b", RB_ATTN, RF_MLA, 0,
     W3(RD_Q_LORA, RD_HEADS, RD_QK_HEAD, LA_NONE, LA_HEADS, LA_HEAD_DIM), 1, LOP_QKV},
    {"attn.wkv_a", RB_ATTN, RF_MLA, 0, W2(RD_HIDDEN, RD_KV_A, LA_EMBED, LA_NONE), 1, LOP_QKV},
    {"attn.kv_a_norm.scale", RB_ATTN, RF_MLA, 0, W1(RD_KV_LORA, LA_NORM), 0, LOP_QKV},
    {"attn.wkv_b", RB_ATTN, RF_MLA, 0,
     W3(RD_KV_LORA, RD_HEADS, RD_KV_B, LA_NONE, LA_HEADS, LA_HEAD_DIM), 1, LOP_QKV},
    {"attn.wo", RB_ATTN, RF_GQA, 0,
     W3(RD_HEADS, RD_HEAD_DIM, RD_HIDDEN, LA_HEADS, LA_HEAD_DIM, LA_EMBED), 3, LOP_OPROJ},
    {"attn.wo", RB_ATTN, RF_MLA, 0,
     W3(RD_HEADS, RD_V_HEAD, RD_HIDDEN, LA_HEADS, LA_HEAD_DIM, LA_EMBED), 3, LOP_OPROJ},
    {"attn.bo", RB_ATTN, RF_O_BIAS, 0, W1(RD_HIDDEN, LA_NORM), 0, LOP_OPROJ},
    {"attn.post_norm.scale", RB_ATTN, RF_POST_NORMS, 0, W1(RD_HIDDEN, LA_NORM), 0, LOP_OPROJ},
    /* MLP: dense layers */
    {"mlp_norm.scale", RB_MLP, 0, 0, W1(RD_HIDDEN, LA_NORM), 0, LOP_MLP_NORM},
    {"mlp_norm.bias", RB_MLP, LN, 0, W1(RD_HIDDEN, LA_NORM), 0, LOP_MLP_NORM},
    {"mlp.w_gate", RB_MLP, RF_DENSE_LAYER | RF_GATED, 0, W2(RD_HIDDEN, RD_INTER, LA_EMBED, LA_MLP),
     1, LOP_MLP_UP},
    {"mlp.w_up", RB_MLP, RF_DENSE_LAYER, 0, W2(RD_HIDDEN, RD_INTER, LA_EMBED, LA_MLP), 1,
     LOP_MLP_UP},
    {"mlp.b_gate", RB_MLP, RF_DENSE_LAYER | RF_GATED | RF_MLP_BIAS, 0, W1(RD_INTER, LA_MLP), 0,
     LOP_MLP_UP},
    {"mlp.b_up", RB_MLP, RF_DENSE_LAYER | RF_MLP_BIAS, 0, W1(RD_INTER, LA_MLP), 0, LOP_MLP_UP},
    {"mlp.w_down", RB_MLP, RF_DENSE_LAYER, 0, W2(RD_INTER, RD_HIDDEN, LA_MLP, LA_EMBED), 1,
     LOP_MLP_DOWN},
    {"mlp.b_down", RB_MLP, RF_DENSE_LAYER | RF_MLP_BIAS, 0, W1(RD_HIDDEN, LA_NORM), 0,
     LOP_MLP_DOWN},
    /* MLP: mixture-of-experts layers */
    {"moe.router", RB_MLP, RF_MOE_LAYER, 0, W2(RD_HIDDEN, RD_EXPERTS, LA_EMBED, LA_NONE), 0,
     LOP_MLP_UP},
    {"moe.router_bias", RB_MLP, RF_MOE_LAYER | RF_ROUTER_BIAS, 0, W1(RD_EXPERTS, LA_NONE), 0,
     LOP_MLP_UP},
    {"moe.w_gate", RB_MLP, RF_MOE_LAYER, 0,
     W3(RD_EXPERTS, RD_HIDDEN, RD_MOE_INTER, LA_EXP, LA_EMBED, LA_MLP), 2, LOP_MLP_UP},
    {"moe.w_up", RB_MLP, RF_MOE_LAYER, 0,
     W3(RD_EXPERTS, RD_HIDDEN, RD_MOE_INTER, LA_EXP, LA_EMBED, LA_MLP), 2, LOP_MLP_UP},
    {"moe.w_down", RB_MLP, RF_MOE_LAYER, 0,
     W3(RD_EXPERTS, RD_MOE_INTER, RD_HIDDEN, LA_EXP, LA_MLP, LA_EMBED), 2, LOP_MLP_DOWN},
    {"moe.shared.w_gate", RB_MLP, RF_MOE_LAYER | RF_SHARED_EXPERT, 0,
     W2(RD_HIDDEN, RD_SHARED_INTER, LA_EMBED, LA_MLP), 1, LOP_MLP_UP},
    {"moe.shared.w_up", RB_MLP, RF_MOE_LAYER | RF_SHARED_EXPERT, 0,
     W2(RD_HIDDEN, RD_SHARED_INTER, LA_EMBED, LA_MLP), 1, LOP_MLP_UP},
    {"moe.shared.w_down", RB_MLP, RF_MOE_LAYER | RF_SHARED_EXPERT, 0,
     W2(RD_SHARED_INTER, RD_HIDDEN, LA_MLP, LA_EMBED), 1, LOP_MLP_DOWN},
    {"moe.shared.gate", RB_MLP, RF_MOE_LAYER | RF_SHARED_GATE, 0,
     W2(RD_HIDDEN, RD_ONE, LA_EMBED, LA_NONE), 0, LOP_MLP_UP},
    {"mlp.post_norm.scale", RB_MLP, RF_POST_NORMS, 0, W1(RD_HIDDEN, LA_NORM), 0, LOP_MLP_DOWN},
    /* head side (the last stage) */
    {"final_norm.scale", RB_HEAD, 0, 0, W1(RD_HIDDEN, LA_NORM), 0, 0},
    {"final_norm.bias", RB_HEAD, LN, 0, W1(RD_HIDDEN, LA_NORM), 0, 0},
    {"lm_head", RB_HEAD, 0, RF_TIED, W2(RD_HIDDEN, RD_VOCAB, LA_EMBED, LA_VOCAB), 1, 0},
};

#define NWEIGHTS (sizeof(weights) / sizeof(weights[0]))

size_t recipe_weight_count(void)
{
    return NWEIGHTS;
}

const struct recipe_weight *recipe_weight_at(size_t i)
{
    return i < NWEIGHTS ? &weights[i] : NULL;
}

/* Elements of one weight (checked). */
static bool weight_elems(const struct recipe_arch *a, const struct recipe_weight *w, uint64_t *n)
{
    bool ovf = false;

    *n = 1;
    for (unsigned d = 0; d < w->rank; d++)
        ovf |= arith_mul(*n, (uint64_t)a->dim[w->dims[d]], n);
    return ovf;
}

int recipe_arch_params(const struct recipe_arch *a, uint64_t *total, struct err *e)
{
    bool ovf = false;

    *total = 0;
    for (size_t i = 0; i < NWEIGHTS; i++) {
        const struct recipe_weight *w = &weights[i];
        uint64_t n, sum = 0;
        if (w->block == RB_EMBED || w->block == RB_HEAD) {
            if (recipe_weight_applies(w, a->features)) {
                ovf |= weight_elems(a, w, &n);
                ovf |= arith_add(*total, n, total);
            }
            continue;
        }
        for (int64_t l = 0; l < a->layers; l++)
            if (recipe_weight_applies(w, recipe_layer_features(a, l))) {
                ovf |= weight_elems(a, w, &n);
                ovf |= arith_add(sum, n, &sum);
            }
        ovf |= arith_add(*total, sum, total);
    }
    if (ovf)
        return err_set(e, ERR_OVERFLOW, "model", "model: the parameter count passes 2^64");
    return ERR_OK;
}
