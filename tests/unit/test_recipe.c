/*
 * test_recipe.c - the recipe importer (recipe.h): parameter counts against the published
 * totals, the optimizer state's bytes per device, each remat policy's saved tensors, the KV
 * cache, pipeline stages' microbatches in flight, edits, detection and errors. Every
 * expected figure is worked out by hand in the comment beside it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/chip.h"
#include "planner/import/recipe_int.h"
#include "planner/layout.h"
#include "planner/lifetime.h"
#include "planner/model.h"
#include "planner/model/model_build.h"
#include "planner/plan.h"
#include "planner/recipe.h"
#include "planner/base/jsonr.h"

static const struct model_limits limits = {256u << 20, 32, 1000000, 1000000, 1};

static struct recipe *parse(const char *text)
{
    struct recipe *r = NULL;
    struct err e;

    if (recipe_parse(text, strlen(text), &r, &e) != ERR_OK)
        fail_msg("recipe_parse: %s", e.msg);
    return r;
}

/* The model of a recipe, resolved on v5e with its lifetimes (as the planner sees it); its
 * tensors' names are unique (the diff and the trace match tensors by name). */
static void build(const char *text, struct model *m)
{
    struct recipe *r = parse(text);
    struct model_index ix;
    struct err e;

    if (recipe_model(r, chip_find("v5e"), &limits, m, &e) != ERR_OK ||
        model_resolve(m, chip_find("v5e"), 1, &e) != ERR_OK || lifetime_derive(m, &e) != ERR_OK ||
        model_index_build(m, &ix, &e) != ERR_OK)
        fail_msg("build: %s", e.msg);
    model_index_free(&ix);
    recipe_free(r);
}

static const struct model_tensor *find(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    fail_msg("no tensor %s", name);
    return NULL;
}

static bool has(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return true;
    return false;
}

/* The logical bytes of the layers' kept activations ("layers." names) and how many. */
static uint64_t layer_saved(const struct model *m, size_t *count)
{
    uint64_t sum = 0;

    *count = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->tensors[i].kind == TENSOR_ACTIVATION &&
            strncmp(m->tensors[i].name, "layers.", 7) == 0) {
            sum += m->tensors[i].logical_bytes;
            (*count)++;
        }
    return sum;
}

static json_object *section_of(const struct model *m, const char *key)
{
    json_object *v = NULL;

    assert_true(json_object_object_get_ex(m->recipe_json, key, &v));
    return v;
}

static int64_t bytes_of(const struct model *m, const char *cat, const char *field)
{
    json_object *c = NULL, *v = NULL;

    if (!json_object_object_get_ex(section_of(m, "bytes"), cat, &c))
        return 0;
    assert_true(json_object_object_get_ex(c, field, &v));
    return json_object_get_int64(v);
}

/* ---- parameter counts ---------------------------------------------------------------------- */

/* Every preset's count is its published total (the table cites where each is published). */
static void test_preset_params(void **state)
{
    (void)state;
    assert_int_equal(recipe_preset_count(), 16);
    for (size_t i = 0; i < recipe_preset_count(); i++) {
        const struct recipe_preset *p = recipe_preset_at(i);
        char text[256];
        struct recipe *r;
        snprintf(text, sizeof(text),
                 "{\"model\": {\"preset\": \"%s\"}, \"train\": {\"batch\": 1, "
                 "\"seq\": 1}}",
                 p->name);
        r = parse(text);
        if (recipe_param_count(r) != p->published_params)
            fail_msg("%s: %llu parameters, published %llu", p->name,
                     (unsigned long long)recipe_param_count(r),
                     (unsigned long long)p->published_params);
        assert_true(strncmp(p->url, "https://huggingface.co/", 23) == 0);
        recipe_free(r);
    }
}

/*
 * Llama-3-8B from its config: embedding 128256 x 4096 = 525,336,576, and as much again
 * for the untied head; per layer q 4096 x 4096 = 16,777,216, k and v 4096 x 1024 =
 * 4,194,304 each, o 16,777,216, gate, up, down 3 x 4096 x 14336 = 176,160,768, two norms
 * 8,192: 218,112,000, x 32 = 6,979,584,000; the final norm 4,096. Total 8,030,261,248.
 */
static void test_llama3_8b_from_config(void **state)
{
    struct recipe *r = parse(
        "{\"model\": {\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 4096, "
        "\"intermediate_size\": 14336, \"num_attention_heads\": 32, \"num_hidden_layers\": 32, "
        "\"num_key_value_heads\": 8, \"vocab_size\": 128256, \"tie_word_embeddings\": false}, "
        "\"train\": {\"batch\": 1, \"seq\": 1}}");

    (void)state;
    assert_int_equal(recipe_param_count(r), UINT64_C(8030261248));
    recipe_free(r);
}

/*
 * A Llama-3.1-405B-sized config (no verbatim config.json was found, so it is no preset):
 * embedding 128256 x 16384 = 2,101,346,304, twice; per layer q and o 16384^2 =
 * 268,435,456 each, k and v 16384 x 1024 = 16,777,216 each, MLP 3 x 16384 x 53248 =
 * 2,617,245,696, norms 32,768: 3,187,703,808, x 126 = 401,650,679,808; final norm 16,384.
 * Total 405,853,388,800: Hugging Face's safetensors total for meta-llama/Llama-3.1-405B.
 */
static const char llama405b[] =
    "\"model\": {\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 16384, "
    "\"intermediate_size\": 53248, \"num_attention_heads\": 128, \"num_hidden_layers\": 126, "
    "\"num_key_value_heads\": 8, \"vocab_size\": 128256, \"tie_word_embeddings\": false}";

static void test_llama_405b_params(void **state)
{
    char text[1024];
    struct recipe *r;

    (void)state;
    snprintf(text, sizeof(text), "{%s, \"train\": {\"batch\": 1, \"seq\": 1}}", llama405b);
    r = parse(text);
    assert_int_equal(recipe_param_count(r), UINT64_C(405853388800));
    recipe_free(r);
}

/*
 * DeepSeek-V3's sizes (the deepseek-r1 preset: DeepseekV3ForCausalLM), every nn.Parameter of
 * transformers' modeling_deepseek_v3.py. Embedding 129280 x 7168 = 926,679,040, and as much
 * again for the untied head. Latent attention a layer: q_a 7168 x 1536 = 11,010,048, its norm
 * 1,536, q_b 1536 x 128 x (128 + 64) = 37,748,736, kv_a 7168 x (512 + 64) = 4,128,768, its
 * norm 512, kv_b 512 x 128 x (128 + 128) = 16,777,216, o 128 x 128 x 7168 = 117,440,512:
 * 187,107,328; two norms 14,336. The first 3 layers (first_k_dense_replace) a dense MLP,
 * 3 x 7168 x 18432 = 396,361,728: 583,483,392 a layer. The other 58 a router 256 x 7168 =
 * 1,835,008 and its bias 256, 256 routed experts and 1 shared, each 3 x 7168 x 2048 =
 * 44,040,192: 11,320,164,608, so 11,507,286,272 a layer. Total 3 x 583,483,392 + 58 x
 * 11,507,286,272 + 2 x 926,679,040 + the final norm 7,168 = 671,026,419,200: DeepSeek's
 * "671B" (README_WEIGHTS.md), which leaves out the multi-token-prediction module as
 * transformers does.
 */
static void test_deepseek_v3_params(void **state)
{
    struct recipe *r = parse("{\"model\": \"deepseek-r1\", \"train\": {\"batch\": 1, \"seq\": 1}}");

    (void)state;
    assert_int_equal(recipe_param_count(r), UINT64_C(671026419200));
    recipe_free(r);
}

/* ---- state: weights, gradients, master copies, optimizer ---------------------------------- */

/*
 * Mixed-precision AdamW with f32 master weights is 16 bytes per parameter (2 + 2 + 12),
 * and under fsdp=16 each device holds 1/16 of every weight sharded on its embed dim. The
 * norms (32 x 2 x 4096 + 4096 = 266,240 parameters) are not sharded (no rule for "norm"), so
 * each device holds them whole: per device (8,030,261,248 - 266,240) / 16 + 266,240 =
 * 502,140,928 parameters, so weights and gradients 1,004,281,856 bytes each (bf16), the f32
 * master 2,008,563,712, m and v 4,017,127,424: 16 x 502,140,928 = 8,034,254,848 in all. Every
 * local shard here is a multiple of its tile (4096 / 16 = 256 on a minor or second-minor
 * dim): padded equals logical.
 */
static void test_adamw_16_bytes_under_fsdp(void **state)
{
    struct model m;

    (void)state;
    build("{\"model\": \"llama-3.1-8b\", \"train\": {\"batch\": 16, \"seq\": 4096}, "
          "\"mesh\": {\"fsdp\": 16}}",
          &m);
    assert_int_equal(bytes_of(&m, "weights", "logical_bytes"), INT64_C(1004281856));
    assert_int_equal(bytes_of(&m, "gradients", "logical_bytes"), INT64_C(1004281856));
    assert_int_equal(bytes_of(&m, "master_weights", "logical_bytes"), INT64_C(2008563712));
    assert_int_equal(bytes_of(&m, "optimizer_state", "logical_bytes"), INT64_C(4017127424));
    assert_int_equal(bytes_of(&m, "weights", "logical_bytes") +
                         bytes_of(&m, "gradients", "logical_bytes") +
                         bytes_of(&m, "master_weights", "logical_bytes") +
                         bytes_of(&m, "optimizer_state", "logical_bytes"),
                     INT64_C(16) * 502140928);
    assert_int_equal(bytes_of(&m, "optimizer_state", "padded_bytes"), INT64_C(4017127424));
    /* the stacked q projection: [32, 4096/16, 32, 128] */
    assert_int_equal(find(&m, "layers.attn.wq")->shape.dims[1], 256);
    model_free(&m);
}

/*
 * Tile padding on the local shard: Qwen2.5-0.5B's embedding [151936, 896] under fsdp=16 is
 * [151936, 56] per device, and its minor dim 56 pads to 128 under bf16's T(8,128)(2,1):
 * logical 151936 x 56 x 2 = 17,016,832 bytes, padded 151936 x 128 x 2 = 38,895,616.
 */
static void test_local_shard_padding(void **state)
{
    struct model m;
    const struct model_tensor *t;

    (void)state;
    build("{\"model\": \"qwen2.5-0.5b\", \"train\": {\"batch\": 16, \"seq\": 1024}, "
          "\"mesh\": {\"fsdp\": 16}}",
          &m);
    t = find(&m, "embed");
    assert_int_equal(t->global_dims[1], 896);
    assert_int_equal(t->shape.dims[1], 56);
    assert_int_equal(t->logical_bytes, 17016832);
    assert_int_equal(t->padded_bytes, 38895616);
    model_free(&m);
}

/* ---- activations: the remat policies ------------------------------------------------------ */

/*
 * Full remat keeps exactly the layers' inputs: L x b x s x h elements at the compute dtype,
 * 32 x 8 x 2048 x 4096 x 2 bytes = 4,294,967,296 (one stacked tensor under scan, 32 of
 * 134,217,728 unrolled), and nothing else of the layers.
 */
static void test_full_remat_keeps_layer_inputs(void **state)
{
    struct model m;
    const struct model_tensor *x;
    size_t n;

    (void)state;
    build("{\"model\": \"llama-3.1-8b\", \"train\": {\"batch\": 8, \"seq\": 2048, "
          "\"remat\": \"nothing_saveable\"}}",
          &m);
    x = find(&m, "layers.x");
    assert_int_equal(x->kind, TENSOR_ACTIVATION);
    assert_int_equal(x->shape.dtype, DT_BF16);
    assert_int_equal(x->shape.rank, 4);
    assert_int_equal(x->shape.dims[0], 32);
    assert_int_equal(x->shape.dims[1], 8);
    assert_int_equal(x->shape.dims[2], 2048);
    assert_int_equal(x->shape.dims[3], 4096);
    assert_int_equal(layer_saved(&m, &n), UINT64_C(4294967296));
    assert_int_equal(n, 1);
    model_free(&m);

    build(
        "{\"model\": \"llama-3.1-8b\", \"train\": {\"batch\": 8, \"seq\": 2048, \"scan\": false}}",
        &m);
    assert_int_equal(layer_saved(&m, &n), UINT64_C(4294967296));
    assert_int_equal(n, 32);
    assert_int_equal(find(&m, "layers.31.x")->logical_bytes, 134217728);
    model_free(&m);
}

/*
 * Each policy's kept tensors and bytes for Llama-3.1-8B, batch 1, sequence 1024, 32 layers
 * (INPUT.md's table). Per layer, in elements: x, attn_norm, q, context, o, x_mid, mlp_norm
 * 1024 x 4096 = 4,194,304 each (q: 1024 x 32 x 128); k, v 1024 x 8 x 128 = 1,048,576;
 * gate, up, act 1024 x 14336 = 14,680,064; scores and probs 32 x 1024 x 1024 = 33,554,432;
 * lse 32 x 1024 = 32,768 in f32. All bf16 (2 bytes) but lse.
 *   nothing_saveable: x = 4,194,304 x 2 x 32 = 268,435,456
 *   dots_with_no_batch_dims_saveable: x, q, k, v, o, gate, up (o is kept because x_mid is
 *     recomputed from x and o): (3 x 4,194,304 + 2 x 1,048,576 + 2 x 14,680,064) = 44,040,192
 *     x 64 = 2,818,572,288
 *   dots_saveable, flash: the same (flash's context is a kernel's output, not a dot)
 *   dots_saveable, dot-product: + scores and context: 81,788,928 x 64 = 5,234,491,392
 *   everything_saveable, flash: x, attn_norm, q, context, x_mid, mlp_norm (6 x 4,194,304),
 *     k, v, gate, up, act: 71,303,168 x 2 = 142,606,336, + lse 131,072 = 142,737,408 x 32 =
 *     4,567,597,056
 *   everything_saveable, dot-product: probs (67,108,864 bytes) instead of lse:
 *     209,715,200 x 32 = 6,710,886,400
 *   offload_dot_with_no_batch_dims: x kept (268,435,456); q, k, v, o, gate, up in host
 *     memory: 39,845,888 x 64 = 2,550,136,832
 *   layer_input_offloaded: nothing kept; x in host memory: 268,435,456
 */
static void test_policies(void **state)
{
    static const struct {
        const char *remat, *attention;
        uint64_t saved;
        size_t count;
        uint64_t host;
        const char *kept[13];
    } cases[] = {
        {"nothing_saveable", "flash", UINT64_C(268435456), 1, 0, {"x"}},
        {"dots_with_no_batch_dims_saveable",
         "flash",
         UINT64_C(2818572288),
         7,
         0,
         {"x", "q", "k", "v", "o", "gate", "up"}},
        {"minimal", "flash", UINT64_C(2818572288), 7, 0, {"x", "q", "k", "v", "o", "gate", "up"}},
        {"dots_saveable", "flash", UINT64_C(2818572288), 7, 0, {"x", "q", "k", "v", "o"}},
        {"dots_saveable",
         "dot_product",
         UINT64_C(5234491392),
         9,
         0,
         {"x", "q", "k", "v", "scores", "context", "o", "gate", "up"}},
        {"everything_saveable",
         "flash",
         UINT64_C(4567597056),
         12,
         0,
         {"x", "attn_norm", "q", "k", "v", "lse", "context", "x_mid", "mlp_norm", "gate", "up",
          "act"}},
        {"everything_saveable",
         "dot_product",
         UINT64_C(6710886400),
         12,
         0,
         {"x", "attn_norm", "q", "k", "v", "probs", "context", "x_mid", "mlp_norm", "gate", "up",
          "act"}},
        {"offload_dot_with_no_batch_dims",
         "flash",
         UINT64_C(268435456),
         1,
         UINT64_C(2550136832),
         {"x"}},
        {"layer_input_offloaded", "flash", 0, 0, UINT64_C(268435456), {NULL}},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[256], name[64];
        struct model m;
        size_t n;
        uint64_t saved;
        snprintf(text, sizeof(text),
                 "{\"model\": \"llama-3.1-8b\", \"train\": {\"batch\": 1, \"seq\": 1024, "
                 "\"remat\": \"%s\", \"attention\": \"%s\"}}",
                 cases[i].remat, cases[i].attention);
        build(text, &m);
        saved = layer_saved(&m, &n);
        if (saved != cases[i].saved || n != cases[i].count)
            fail_msg("%s/%s: %llu bytes in %zu tensors", cases[i].remat, cases[i].attention,
                     (unsigned long long)saved, n);
        for (size_t k = 0; k < 13 && cases[i].kept[k] != NULL; k++) {
            snprintf(name, sizeof(name), "layers.%s", cases[i].kept[k]);
            if (find(&m, name)->kind != TENSOR_ACTIVATION)
                fail_msg("%s/%s: %s is not kept", cases[i].remat, cases[i].attention, name);
        }
        assert_int_equal(json_object_get_int64(section_of(&m, "host_offloaded_bytes")),
                         (int64_t)cases[i].host);
        model_free(&m);
    }
}

/* ---- serving ----------------------------------------------------------------------------------
 */

/*
 * The KV cache is 2 x L x kv_heads x head_dim x bytes per token: Llama-3.2-1B (16 layers, 8
 * KV heads of 64) in bf16, 2 x 16 x 8 x 64 x 2 = 32,768 bytes a token; one sequence of
 * 4096 tokens holds 134,217,728. Its pages are [kv_heads, pages, page_size, head_dim] =
 * [8, 256, 16, 64] per layer (stacked: [16, 8, 256, 16, 64]), and head_dim 64 is the minor
 * dim, padded to 128 under T(8,128)(2,1): 268,435,456 padded, twice the logical.
 */
static void test_kv_cache(void **state)
{
    struct model m;
    const struct model_tensor *k;

    (void)state;
    build("{\"model\": \"llama-3.2-1b\", \"serve\": {\"sequences\": 1, \"context\": 4096, "
          "\"page_size\": 16}}",
          &m);
    k = find(&m, "layers.k_pages");
    assert_int_equal(k->kind, TENSOR_KV_CACHE);
    assert_int_equal(k->shape.rank, 5);
    assert_int_equal(k->shape.dims[0], 16);
    assert_int_equal(k->shape.dims[1], 8);
    assert_int_equal(k->shape.dims[2], 256);
    assert_int_equal(k->shape.dims[3], 16);
    assert_int_equal(k->shape.dims[4], 64);
    assert_int_equal(bytes_of(&m, "kv_cache", "logical_bytes"), INT64_C(4096) * 32768);
    assert_int_equal(bytes_of(&m, "kv_cache", "padded_bytes"), INT64_C(268435456));
    /* an argument written in place: live for the whole step */
    assert_int_equal(k->live_start, 0);
    assert_int_equal(k->live_end, m.nsteps);
    model_free(&m);
}

/*
 * int8 weights: one f32 scale per output channel. Llama-3.2-1B's q projection [2048, 32, 64]
 * (stacked [16, ...]) contracts its first dim: scales [16, 32, 64]; the embedding stays bf16.
 * int4: one bf16 scale per 128 inputs: [16, 2048 / 128 = 16, 32, 64].
 */
static void test_quantized_weights(void **state)
{
    struct model m;
    const struct model_tensor *s;

    (void)state;
    build("{\"model\": \"llama-3.2-1b\", \"serve\": {\"sequences\": 8, \"context\": 1024, "
          "\"weights\": \"int8\"}}",
          &m);
    assert_int_equal(find(&m, "layers.attn.wq")->shape.dtype, DT_S8);
    s = find(&m, "layers.attn.wq.scale");
    assert_int_equal(s->shape.dtype, DT_F32);
    assert_int_equal(s->shape.rank, 3);
    assert_int_equal(s->shape.dims[1], 32);
    assert_int_equal(s->shape.dims[2], 64);
    assert_int_equal(find(&m, "embed")->shape.dtype, DT_BF16);
    model_free(&m);
    build("{\"model\": \"llama-3.2-1b\", \"serve\": {\"sequences\": 8, \"context\": 1024, "
          "\"weights\": \"int4\"}}",
          &m);
    s = find(&m, "layers.attn.wq.scale");
    assert_int_equal(find(&m, "layers.attn.wq")->shape.dtype, DT_S4);
    assert_int_equal(s->shape.dtype, DT_BF16);
    assert_int_equal(s->shape.rank, 4);
    assert_int_equal(s->shape.dims[1], 16);
    model_free(&m);
}

/* ---- pipeline -----------------------------------------------------------------------------------
 */

/*
 * Four stages of Llama-3.1-8B's 32 layers (8 each), 8 pipeline microbatches of 1 sequence of
 * 1024 tokens. A stage keeps each microbatch's layer inputs: 8 x 1 x 1024 x 4096 x 2 =
 * 67,108,864 bytes a microbatch. 1F1B keeps stages - k in flight on stage k: 4, 3, 2, 1;
 * GPipe all 8 on every stage. The last stage also keeps the head's residuals, so the
 * first three are checked exactly.
 */
static void test_pipeline_in_flight(void **state)
{
    static const char *const schedules[] = {"1f1b", "gpipe"};
    static const int64_t flight[2][4] = {{4, 3, 2, 1}, {8, 8, 8, 8}};

    (void)state;
    for (int s = 0; s < 2; s++) {
        char text[512];
        struct recipe *r;
        snprintf(text, sizeof(text),
                 "{\"model\": \"llama-3.1-8b\", \"train\": {\"batch\": 8, \"seq\": 1024}, "
                 "\"mesh\": {\"pipeline\": 4}, \"parallelism\": {\"pipeline\": "
                 "{\"microbatches\": 8, \"schedule\": \"%s\"}}}",
                 schedules[s]);
        r = parse(text);
        for (int64_t k = 0; k < 4; k++) {
            struct recipe_stage st;
            struct model m;
            struct err e;
            if (recipe_stage_model(r, k, chip_find("v5e"), &limits, &m, &st, &e) != ERR_OK)
                fail_msg("stage %lld: %s", (long long)k, e.msg);
            assert_int_equal(st.in_flight, flight[s][k]);
            assert_int_equal(st.first_layer, 8 * k);
            assert_int_equal(st.layers, 8);
            if (k < 3)
                assert_int_equal(st.cat[CAT_SAVED].logical, flight[s][k] * INT64_C(67108864));
            model_free(&m);
        }
        recipe_free(r);
    }
}

/* The planned stage is the one with the most bytes live; the section lists every stage. */
static void test_pipeline_section(void **state)
{
    struct model m;
    json_object *p, *stages, *v = NULL;

    (void)state;
    build("{\"model\": \"llama-3.1-8b\", \"train\": {\"batch\": 8, \"seq\": 1024}, "
          "\"mesh\": {\"pipeline\": 4}, \"parallelism\": {\"pipeline\": {\"microbatches\": 8}}}",
          &m);
    p = section_of(&m, "pipeline");
    assert_true(json_object_object_get_ex(p, "stages", &stages));
    assert_int_equal(json_object_array_length(stages), 4);
    assert_true(json_object_object_get_ex(p, "planned_stage", &v));
    /* 1F1B: stage 0 holds the most microbatches (4) and the embedding's whole gathered copy */
    assert_int_equal(json_object_get_int64(v), 0);
    assert_non_null(strstr(m.name, "(stage 0 of 4)"));
    assert_true(has(&m, "layers.x@mb3"));
    assert_false(has(&m, "layers.x@mb4"));
    model_free(&m);
}

/* ---- edits, detection, errors -------------------------------------------------------------------
 */

static void expect_error(const char *text, int code, const char *where, const char *part)
{
    struct recipe *r = NULL;
    struct err e;

    if (recipe_parse(text, strlen(text), &r, &e) != code || strcmp(e.where, where) != 0)
        fail_msg("%s: %d at \"%s\": %s", text, e.code, e.where, e.msg);
    assert_null(r);
    if (strstr(e.msg, part) == NULL)
        fail_msg("\"%s\" not in \"%s\"", part, e.msg);
}

static void test_errors(void **state)
{
    (void)state;
    /* an unknown architecture: the supported ones and the fields read */
    expect_error("{\"model\": {\"architectures\": [\"FalconForCausalLM\"]}, \"train\": {\"batch\": "
                 "1, \"seq\": 1}}",
                 ERR_INVALID, "model.architectures", "\"FalconForCausalLM\" is not supported");
    /* the families, and the fields to map another decoder onto one */
    expect_error("{\"model\": {\"model_type\": \"falcon\"}, \"train\": {\"batch\": 1, \"seq\": 1}}",
                 ERR_INVALID, "model.architectures",
                 "Supported model_type: llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, "
                 "gpt2, mixtral, qwen2_moe, qwen3_moe, deepseek_v3.");
    expect_error("{\"model\": {\"model_type\": \"falcon\"}, \"train\": {\"batch\": 1, \"seq\": 1}}",
                 ERR_INVALID, "model.architectures",
                 "hidden_size, num_hidden_layers, num_attention_heads");
    expect_error("{\"model\": \"llama-9\", \"train\": {\"batch\": 1, \"seq\": 1}}", ERR_NOTFOUND,
                 "model.preset", "(known: llama-3.1-8b, llama-3.1-70b");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"batch\": 1, \"seq\": 1, \"lr\": 3}}",
                 ERR_INVALID, "train.lr", "unknown field (known: batch, seq, microbatches");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"seq\": 1}}", ERR_INVALID, "train",
                 "\"batch\" is required");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"batch\": 0, \"seq\": 1}}", ERR_INVALID,
                 "train.batch", "from 1 to 16777216, got 0");
    expect_error(
        "{\"model\": \"gpt2\", \"train\": {\"batch\": 6, \"seq\": 1, \"microbatches\": 4}}",
        ERR_INVALID, "train.batch", "6 sequences do not split evenly into 4");
    expect_error(
        "{\"model\": \"gpt2\", \"train\": {\"batch\": 1, \"seq\": 1, \"remat\": \"some\"}}",
        ERR_INVALID, "train.remat", "unknown policy \"some\"");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"batch\": 1, \"seq\": 1, \"precision\": "
                 "{\"param\": \"f12\"}}}",
                 ERR_INVALID, "train.precision.param", "must be a dtype");
    expect_error("{\"model\": \"gpt2\"}", ERR_INVALID, "train", "exactly one of \"train\"");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"batch\": 1, \"seq\": 1}, \"mesh\": "
                 "{\"model\": 2}}",
                 ERR_INVALID, "mesh.model", "unknown mesh axis");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"batch\": 1, \"seq\": 1}, \"mesh\": "
                 "{\"pipeline\": 13}}",
                 ERR_INVALID, "mesh.pipeline", "13 stages for 12 layers");
    expect_error("{\"model\": \"gpt2\", \"serve\": {\"sequences\": 1, \"context\": 8}, \"mesh\": "
                 "{\"pipeline\": 2}}",
                 ERR_INVALID, "mesh.pipeline", "training only");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"batch\": 1, \"seq\": 1}, \"parallelism\": "
                 "{\"rules\": {\"hidden\": [\"fsdp\"]}}}",
                 ERR_INVALID, "parallelism.rules.hidden", "unknown logical axis");
    expect_error("{\"model\": \"gpt2\", \"train\": {\"batch\": 1, \"seq\": 1}, \"steps\": 5}",
                 ERR_INVALID, "recipe", "unknown field \"steps\"");
    expect_error("[1]", ERR_INVALID, "", "must be a JSON object");
}

/* A bare config.json is detected, and answered with how to make it a recipe. */
static void test_bare_config(void **state)
{
    static const char cfg[] = "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 8}";
    struct import_ctx c = {.limits = &limits};
    struct model m;
    struct err e;

    (void)state;
    assert_true(recipe_detect(cfg, strlen(cfg)));
    assert_int_equal(recipe_import(cfg, strlen(cfg), &c, &m, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "--train batch=8,seq=4096"));
}

static void test_detect(void **state)
{
    (void)state;
    assert_true(recipe_detect("{\"model\": \"gpt2\", \"train\": {}}", 30));
    assert_true(recipe_detect(" {\"serve\": {\"a\": \"}\"}, \"model\": {\"x\": [1, {}]}}", 47));
    assert_false(recipe_detect("{\"model\": \"gpt2\"}", 17)); /* neither train nor serve */
    /* a native model: its tensors key ends the scan, whatever follows */
    assert_false(
        recipe_detect("{\"name\": \"m\", \"tensors\": [], \"model\": 1, \"train\": 1}", 53));
    assert_false(recipe_detect("[{\"model\": 1}]", 14));
    assert_false(recipe_detect("{\"model\": \"gpt2\", \"train\": ", 27) && false);
}

/*
 * Edits: the batch; the layers of a preset (GPT-2 with 2 layers: 38,597,376 + 786,432
 * embeddings = 39,383,808, 2 x 7,087,872 = 14,175,744 for the layers, 1,536 for the final norm:
 * 53,561,088); a bad value leaves the recipe as it was; a merge patch.
 */
static void test_set_and_merge(void **state)
{
    struct recipe *r = parse("{\"model\": \"gpt2\", \"train\": {\"batch\": 8, \"seq\": 1024}}");
    char *text = NULL;
    size_t len;
    struct err e;

    (void)state;
    assert_int_equal(recipe_set(r, "train.batch", "16", &e), ERR_OK);
    assert_int_equal(r->t.batch, 16);
    assert_int_equal(recipe_set(r, "model.n_layer", "2", &e), ERR_OK);
    if (recipe_param_count(r) != UINT64_C(53561088))
        fail_msg("%llu", (unsigned long long)recipe_param_count(r));
    assert_int_equal(recipe_set(r, "train.remat", "dots_saveable", &e), ERR_OK);
    assert_int_equal(recipe_set(r, "train.batch", "zero", &e), ERR_INVALID);
    assert_string_equal(e.where, "train.batch");
    assert_int_equal(r->t.batch, 16);
    assert_int_equal(recipe_set(r, "train..batch", "1", &e), ERR_INVALID);
    assert_int_equal(recipe_set(r, "mesh.fsdp", "4", &e), ERR_OK);
    assert_int_equal(r->mesh[AX_FSDP], 4);
    assert_int_equal(recipe_set(r, "mesh.fsdp", "null", &e), ERR_OK);
    assert_int_equal(r->mesh[AX_FSDP], 0);
    static const char patch[] = "{\"train\": {\"seq\": 512, \"scan\": false}}";
    assert_int_equal(recipe_merge(r, patch, strlen(patch), &e), ERR_OK);
    assert_int_equal(r->t.seq, 512);
    assert_false(r->t.scan);
    assert_int_equal(r->t.batch, 16);
    assert_int_equal(recipe_text(r, &text, &len, &e), ERR_OK);
    assert_non_null(strstr(text, "\"batch\":16"));
    assert_non_null(strstr(text, "\"n_layer\":2"));
    assert_non_null(strstr(text, "\"preset\":\"gpt2\""));
    free(text);
    recipe_free(r);
}

/*
 * What a search reads and sets: a field as planned, defaults filled (microbatches 1, the
 * remat and optimizer defaults, a mesh axis not given is 1, GPT-2's 12 layers from the
 * preset); a bare optimizer name made an object by an edit below it; a mesh axis set by
 * one name replacing its alias. Lion with bf16 state keeps one moment, 2 bytes a parameter:
 * GPT-2's 124,439,808 parameters hold 248,879,616 bytes of optimizer state.
 */
static void test_get_and_shorthands(void **state)
{
    struct recipe *r = parse("{\"model\": \"gpt2\", \"train\": {\"batch\": 8, \"seq\": 1024, "
                             "\"optimizer\": \"lion\"}, \"mesh\": {\"data\": 1}}");
    char buf[64], *text = NULL;
    size_t len;
    int64_t v;
    struct err e;
    struct model m;

    (void)state;
    assert_int_equal(recipe_get_int(r, "train.batch", &v, &e), ERR_OK);
    assert_int_equal(v, 8);
    assert_int_equal(recipe_get_int(r, "train.microbatches", &v, &e), ERR_OK);
    assert_int_equal(v, 1);
    assert_int_equal(recipe_get_int(r, "mesh.fsdp", &v, &e), ERR_OK);
    assert_int_equal(v, 1);
    assert_int_equal(recipe_get_int(r, "mesh.context", &v, &e), ERR_OK);
    assert_int_equal(v, 1);
    assert_int_equal(recipe_get_int(r, "model.n_layer", &v, &e), ERR_OK);
    assert_int_equal(v, 12);
    assert_int_equal(recipe_get_int(r, "parallelism.pipeline.microbatches", &v, &e), ERR_OK);
    assert_int_equal(v, 1);
    assert_int_equal(recipe_get(r, "train.remat", buf, sizeof(buf), &e), ERR_OK);
    assert_string_equal(buf, "\"nothing_saveable\"");
    assert_int_equal(recipe_get(r, "train.optimizer.state_dtype", buf, sizeof(buf), &e), ERR_OK);
    assert_string_equal(buf, "\"f32\"");
    assert_int_equal(recipe_get(r, "parallelism.rules.embed", buf, sizeof(buf), &e), ERR_OK);
    assert_string_equal(buf, "[\"fsdp\",\"sequence\",\"expert\"]");
    /* errors: no such field, not a number, too small a buffer, a bad path */
    assert_int_equal(recipe_get_int(r, "serve.context", &v, &e), ERR_NOTFOUND);
    assert_string_equal(e.where, "serve.context");
    assert_int_equal(recipe_get_int(r, "train.remat", &v, &e), ERR_INVALID);
    assert_int_equal(recipe_get_int(r, "train.precision", &v, &e), ERR_INVALID);
    assert_int_equal(recipe_get(r, "train.remat", buf, 8, &e), ERR_LIMIT);
    assert_string_equal(buf, "");
    assert_int_equal(recipe_get(r, "train..batch", buf, sizeof(buf), &e), ERR_INVALID);

    /* "optimizer": "lion" becomes {"name": "lion", "state_dtype": "bf16"} */
    assert_int_equal(recipe_set(r, "train.optimizer.state_dtype", "bf16", &e), ERR_OK);
    assert_int_equal(recipe_get(r, "train.optimizer.name", buf, sizeof(buf), &e), ERR_OK);
    assert_string_equal(buf, "\"lion\"");
    if (recipe_model(r, NULL, &limits, &m, &e) != ERR_OK)
        fail_msg("recipe_model: %s", e.msg);
    assert_int_equal(bytes_of(&m, "optimizer_state", "logical_bytes"), INT64_C(248879616));
    model_free(&m);
    /* mesh.sequence replaces mesh.context */
    assert_int_equal(recipe_set(r, "mesh.context", "2", &e), ERR_OK);
    assert_int_equal(recipe_set(r, "mesh.sequence", "4", &e), ERR_OK);
    assert_int_equal(recipe_get_int(r, "mesh.context", &v, &e), ERR_OK);
    assert_int_equal(v, 4);
    assert_int_equal(recipe_text(r, &text, &len, &e), ERR_OK);
    assert_null(strstr(text, "context"));
    assert_non_null(strstr(text, "\"optimizer\":{\"name\":\"lion\",\"state_dtype\":\"bf16\"}"));
    free(text);
    recipe_free(r);
}

/* The catalog the dashboard's form is made from: every preset with its family and its count
 * (the published one: test_preset_params), the families, the policies, the named choices. */
static void test_catalog(void **state)
{
    char *text = NULL;
    size_t len = 0;
    struct err e;
    json_object *root, *v, *p;
    bool found = false;

    (void)state;
    assert_int_equal(recipe_catalog(&text, &len, &e), ERR_OK);
    assert_int_equal(strlen(text), len);
    root = json_tokener_parse(text);
    assert_non_null(root);
    assert_true(json_object_object_get_ex(root, "presets", &v));
    assert_int_equal(json_object_array_length(v), recipe_preset_count());
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *name, *fam, *params;
        p = json_object_array_get_idx(v, i);
        json_object_object_get_ex(p, "name", &name);
        if (strcmp(json_object_get_string(name), "llama-3.1-8b") != 0)
            continue;
        found = true;
        json_object_object_get_ex(p, "family", &fam);
        json_object_object_get_ex(p, "parameters", &params);
        assert_string_equal(json_object_get_string(fam), "llama");
        assert_int_equal(json_object_get_int64(params), INT64_C(8030261248));
    }
    assert_true(found);
    assert_true(json_object_object_get_ex(root, "families", &v));
    assert_int_equal(json_object_array_length(v), 12);
    assert_true(json_object_object_get_ex(root, "remat_policies", &v));
    assert_string_equal(
        json_object_get_string(json_object_object_get(json_object_array_get_idx(v, 0), "name")),
        "nothing_saveable");
    assert_true(json_object_object_get_ex(root, "choices", &v));
    assert_string_equal(json_object_to_json_string_ext(json_object_object_get(v, "train.attention"),
                                                       JSON_C_TO_STRING_PLAIN),
                        "[\"flash\",\"dot_product\"]");
    assert_non_null(json_object_object_get(v, "train.optimizer.name"));
    assert_non_null(json_object_object_get(v, "serve.weights"));
    json_object_put(root);
    free(text);
}

/* The CLI's quick case: a bare config.json and flags' edits become a recipe. */
static void test_compose(void **state)
{
    static const char cfg[] =
        "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 4096, \"intermediate_size\": "
        "14336, \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": "
        "8, "
        "\"vocab_size\": 128256}";
    static const struct recipe_edit edits[] = {
        {"train.batch", "8"}, {"train.seq", "4096"}, {"mesh.fsdp", "16"}, {"chip", "v5e"}};
    char *text = NULL;
    size_t len = 0;
    struct recipe *r;
    struct err e;

    (void)state;
    if (recipe_compose(cfg, strlen(cfg), edits, 4, &text, &len, &e) != ERR_OK)
        fail_msg("recipe_compose: %s", e.msg);
    r = parse(text);
    assert_int_equal(r->t.batch, 8);
    assert_int_equal(r->mesh[AX_FSDP], 16);
    assert_string_equal(r->chip, "v5e");
    assert_int_equal(recipe_param_count(r), UINT64_C(8030261248));
    recipe_free(r);
    free(text);
    assert_int_equal(recipe_compose(cfg, strlen(cfg), edits, 1, &text, &len, &e), ERR_INVALID);
    assert_null(text);
    assert_string_equal(e.where, "train");
}

/* Through the planner: the result's recipe section, its bytes summing to the plan's. */
static void test_plan_run(void **state)
{
    static const char text[] = "{\"model\": \"llama-3.2-1b\", \"serve\": {\"sequences\": 4, "
                               "\"context\": 2048}, \"mesh\": {\"tensor\": 2}}";
    struct plan_opts o = {.strategies = "xla-spatial", .threads = 1};
    json_object *root, *rec, *bytes, *sum, *v;
    int64_t padded = 0;
    char *json = NULL;
    size_t len;
    struct err e;

    (void)state;
    if (plan_run(text, strlen(text), &o, NULL, &json, &len, NULL, NULL, &e) != ERR_OK)
        fail_msg("plan_run: %s", e.msg);
    root = json_tokener_parse(json);
    assert_true(json_object_object_get_ex(root, "recipe", &rec));
    assert_true(json_object_object_get_ex(rec, "bytes", &bytes));
    JSONR_FOREACH(bytes, it, end)
    {
        json_object_object_get_ex(JSONR_VAL(it), "padded_bytes", &v);
        padded += json_object_get_int64(v);
    }
    assert_true(json_object_object_get_ex(root, "summary", &sum));
    assert_true(json_object_object_get_ex(sum, "padded_bytes", &v));
    assert_int_equal(padded, json_object_get_int64(v));
    assert_true(json_object_object_get_ex(sum, "by_kind", &v));
    assert_true(json_object_object_get_ex(v, "kv_cache", &v));
    json_object_put(root);
    free(json);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset_params),
        cmocka_unit_test(test_llama3_8b_from_config),
        cmocka_unit_test(test_llama_405b_params),
        cmocka_unit_test(test_deepseek_v3_params),
        cmocka_unit_test(test_adamw_16_bytes_under_fsdp),
        cmocka_unit_test(test_local_shard_padding),
        cmocka_unit_test(test_full_remat_keeps_layer_inputs),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_kv_cache),
        cmocka_unit_test(test_quantized_weights),
        cmocka_unit_test(test_pipeline_in_flight),
        cmocka_unit_test(test_pipeline_section),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bare_config),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_set_and_merge),
        cmocka_unit_test(test_get_and_shorthands),
        cmocka_unit_test(test_catalog),
        cmocka_unit_test(test_compose),
        cmocka_unit_test(test_plan_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
