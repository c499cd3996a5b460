/*
 * recipe_serve.c - one serving step: the weights (quantized with their scales, or at the
 * parameter dtype), the paged KV cache, then a prefill chunk of one sequence and a decode
 * step of every sequence, each through every layer and the head.
 *
 * - Quantization: the layers' matmul weights are stored as int8 (s8), int4 (s4) or fp8
 *   (f8e4m3fn); the embedding, the LM head, the norms, the biases and the router stay at the
 *   parameter dtype. Scales (assumptions of this tool, INPUT.md says so): int8 and fp8 one f32
 *   scale per output channel (the weight's dims without the contracted ones); int4 one bf16
 *   scale per group of `group` elements of the last contracted dim.
 * - The KV cache is JAX's paged attention layout (jax.experimental.pallas.ops.tpu.
 *   paged_attention: k_pages and v_pages of [num_kv_heads, total_num_pages, page_size,
 *   head_dim]) per layer, kind kv_cache, live for the whole step (an argument written in
 *   place). Pages: sequences x ceil(context / page_size), a sliding-window layer
 *   ceil(min(context, window) / page_size) per sequence. DeepSeek's latent attention caches
 *   its compressed kv (kv_lora_rank + qk_rope_head_dim per token) in one tensor of [pages,
 *   page_size, kv_lora_rank + qk_rope_head_dim].
 * - Attention is the paged kernel: no S x S scores. Everything a pass makes is a
 *   temporary of its layer; mixtures of experts are dropless unless a capacity factor is
 *   given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/recipe_int.h"

struct sweight {
    const struct recipe_weight *w;
    uint32_t param, scale;
};

struct sbody {
    char name[48];
    int64_t first, count, lead;
    int32_t layer;
    uint32_t features;
    bool sliding;
    uint8_t status[RECIPE_ACT_ROWS];
    size_t w0, nw;
    uint32_t kv[2];
};

struct serve {
    struct rg *g;
    const struct recipe *r;
    const struct recipe_serve *s;
    uint32_t run;
    struct sbody *bodies;
    size_t nbodies;
    struct sweight *w;
    size_t nw, nembed, head0;
    struct recipe_pass pass;
    size_t cur;
    uint32_t page_table, out;
    const char *phase;
};

static bool quantized(const struct serve *c, const struct recipe_weight *w)
{
    return c->s->quant != Q_NONE && w->contract != 0 && (w->block == RB_ATTN || w->block == RB_MLP);
}

static uint8_t weight_dtype(const struct serve *c, const struct recipe_weight *w)
{
    static const uint8_t qdt[] = {DT_INVALID, DT_S8, DT_S4, DT_F8E4M3FN};

    return quantized(c, w) ? qdt[c->s->quant] : c->s->param;
}

/* The scales of a quantized weight (see the header). */
static uint32_t scales(struct serve *c, const struct sweight *sw, const char *wname,
                       const struct rg_spec *ws)
{
    const struct recipe_weight *w = sw->w;
    uint8_t dims[3], axes[3], k = 0;
    struct rg_spec s = *ws;
    int last = -1;

    for (int d = 0; d < w->rank; d++)
        if (w->contract & (1u << d))
            last = d;
    for (int d = 0; d < w->rank; d++) {
        if ((w->contract & (1u << d)) && (c->s->quant != Q_INT4 || d != last))
            continue;
        dims[k] = w->dims[d];
        axes[k++] = w->axes[d];
        if (c->s->quant == Q_INT4 && d == last) {
            int64_t n = c->g->dim[w->dims[d]];
            c->g->dim[RD_SCRATCH] = (n + c->s->group - 1) / c->s->group;
            dims[k - 1] = RD_SCRATCH;
            axes[k - 1] = LA_NONE;
        }
    }
    s.rank = k;
    s.dims = dims;
    s.axes = axes;
    s.cat = CAT_QUANT_SCALES;
    s.dtype = c->s->quant == Q_INT4 ? DT_BF16 : DT_F32;
    return rg_tensor(c->g, &s, "%s.scale", wname);
}

static void add_weights(struct serve *c, uint8_t block, const char *body, int64_t lead,
                        int32_t layer, uint32_t f)
{
    for (size_t i = 0; i < recipe_weight_count(); i++) {
        const struct recipe_weight *w = recipe_weight_at(i);
        struct sweight *sw;
        bool mine =
            block == RB_ATTN ? (w->block == RB_ATTN || w->block == RB_MLP) : w->block == block;
        struct rg_spec s = {TENSOR_PARAM, CAT_WEIGHTS, 0,     w->rank,  w->dims,
                            w->axes,      lead,        layer, w->block, 0};
        char name[MODEL_MAX_NAME];
        if (!mine || !recipe_weight_applies(w, f))
            continue;
        sw = &c->w[c->nw];
        snprintf(name, sizeof(name), "%s%s%s", body, body[0] ? "." : "", w->name);
        s.dtype = weight_dtype(c, w);
        sw->w = w;
        sw->param = rg_tensor(c->g, &s, "%s", name);
        sw->scale = quantized(c, w) ? scales(c, sw, name, &s) : RG_NONE;
        c->nw++;
    }
}

/* Pages for every sequence of one layer: the whole context, or the window. */
static int64_t pages(const struct serve *c, bool sliding)
{
    int64_t ctx = c->s->context, win = c->r->arch.sliding_window;

    if (sliding && win > 0 && win < ctx)
        ctx = win;
    return c->s->sequences * ((ctx + c->s->page_size - 1) / c->s->page_size);
}

static void kv_cache(struct serve *c, struct sbody *b)
{
    static const uint8_t gqa_dims[4] = {RD_KV_HEADS, RD_PAGES, RD_PAGE, RD_HEAD_DIM},
                         gqa_axes[4] = {LA_CACHE_HEADS, LA_CACHE_PAGES, LA_NONE, LA_HEAD_DIM},
                         mla_dims[3] = {RD_PAGES, RD_PAGE, RD_KV_A},
                         mla_axes[3] = {LA_CACHE_PAGES, LA_NONE, LA_NONE};
    bool mla = (c->r->arch.features & RF_MLA) != 0;
    struct rg_spec s = {TENSOR_KV_CACHE,
                        CAT_KV_CACHE,
                        c->s->kv,
                        mla ? 3 : 4,
                        mla ? mla_dims : gqa_dims,
                        mla ? mla_axes : gqa_axes,
                        b->lead > 0 ? b->count : 0,
                        b->layer,
                        RB_ATTN,
                        0};

    c->g->dim[RD_PAGES] = pages(c, b->sliding);
    b->kv[1] = RG_NONE;
    if (mla) {
        b->kv[0] = rg_tensor(c->g, &s, "%s.kv_latent_pages", b->name);
        return;
    }
    b->kv[0] = rg_tensor(c->g, &s, "%s.k_pages", b->name);
    b->kv[1] = rg_tensor(c->g, &s, "%s.v_pages", b->name);
}

static int plan_bodies(struct serve *c)
{
    const struct recipe *r = c->r;
    bool scan = c->s->scan;

    c->bodies = calloc((size_t)r->arch.layers, sizeof(*c->bodies));
    if (c->bodies == NULL)
        return ERR_NOMEM;
    for (int64_t l = 0; l < r->arch.layers; l++) {
        uint32_t f = recipe_layer_features(&r->arch, l) | c->run;
        bool sliding = (r->arch.layer[l] & RL_SLIDING) != 0;
        struct sbody *b = &c->bodies[c->nbodies];
        if (scan && c->nbodies > 0 && b[-1].features == f && b[-1].sliding == sliding) {
            b[-1].count++;
            continue;
        }
        b->first = l;
        b->count = 1;
        b->lead = scan ? 1 : 0;
        b->layer = scan ? -2 : (int32_t)l;
        b->features = f;
        b->sliding = sliding;
        for (size_t i = 0; i < recipe_act_count(); i++) {
            const struct recipe_act *a = recipe_act_at(i);
            b->status[i] = (a->need & f) == a->need && !(a->skip & f) ? AS_DROPPED : AS_ABSENT;
        }
        c->nbodies++;
    }
    for (size_t i = 0; i < c->nbodies; i++)
        recipe_body_name(c->bodies[i].name, sizeof(c->bodies[i].name), scan, c->nbodies,
                         c->bodies[i].first, c->bodies[i].count);
    return ERR_OK;
}

static int weights(struct serve *c)
{
    add_weights(c, RB_EMBED, "", 0, -1, c->r->arch.features);
    c->nembed = c->nw;
    for (size_t i = 0; i < c->nbodies; i++) {
        struct sbody *b = &c->bodies[i];
        b->w0 = c->nw;
        add_weights(c, RB_ATTN, b->name, b->lead > 0 ? b->count : 0, b->layer, b->features);
        b->nw = c->nw - b->w0;
        kv_cache(c, b);
    }
    c->head0 = c->nw;
    add_weights(c, RB_HEAD, "", 0, -1, c->r->arch.features);
    return ERR_OK;
}

/* ---- passes -----------------------------------------------------------------------------------
 */

static void use_w(struct serve *c, const struct sweight *sw)
{
    rg_use(c->g, sw->param);
    rg_use(c->g, sw->scale);
}

static void set_pass(struct serve *c, size_t b, const char *suffix)
{
    struct sbody *bd = &c->bodies[b];

    c->cur = b;
    c->pass.name = bd->name;
    c->pass.suffix = suffix;
    c->pass.features = bd->features;
    c->pass.status = bd->status;
    c->pass.lead = 0;
    c->pass.layer = bd->lead > 0 ? -1 : bd->layer;
    c->pass.compute = c->s->compute;
}

static void hidden(struct serve *c, const char *name, uint32_t *x)
{
    struct rg_spec s;

    recipe_hidden_spec(&c->pass, TENSOR_TEMP, CAT_TEMPS, &s);
    s.layer = -1;
    *x = rg_tensor(c->g, &s, "%s%s", name, c->pass.suffix);
}

static void on_op(void *ctx, struct rg *g, uint8_t lop)
{
    struct serve *c = ctx;
    struct sbody *b = &c->bodies[c->cur];

    for (size_t i = b->w0; i < b->w0 + b->nw; i++)
        if (c->w[i].w->fwd == lop)
            use_w(c, &c->w[i]);
    if (lop == LOP_ATTN) {
        rg_use(g, b->kv[0]);
        rg_use(g, b->kv[1]);
        rg_use(g, c->page_table);
    }
}

static void on_done(void *ctx, struct rg *g, uint8_t lop, uint32_t *t)
{
    struct serve *c = ctx;
    size_t b = c->cur;
    char name[64];

    (void)g;
    if (lop != LOP_MLP_DOWN)
        return;
    snprintf(name, sizeof(name), "%s.x", b + 1 < c->nbodies ? c->bodies[b + 1].name : "final_in");
    hidden(c, b + 1 < c->nbodies ? name : "final_in", &t[RECIPE_ROW_OUT]);
}

/* One pass of `batch` sequences of `seq` tokens over the cache, then the head. */
static void pass(struct serve *c, const char *phase, int64_t batch, int64_t seq, int64_t logits_seq)
{
    struct rg *g = c->g;
    static const uint8_t tdims[2] = {RD_BATCH, RD_SEQ}, taxes[2] = {LA_BATCH, LA_LENGTH},
                         ldims[3] = {RD_BATCH, RD_SEQ, RD_VOCAB},
                         laxes[3] = {LA_BATCH, LA_LENGTH, LA_VOCAB};
    struct rg_spec ts = {TENSOR_INPUT, CAT_INPUTS, DT_S32, 2, tdims, taxes, 0, -1, RB_EMBED, 0};
    uint32_t t[RECIPE_ACT_ROWS], x, tokens, logits;
    char sfx[24];

    snprintf(sfx, sizeof(sfx), "@%s", phase);
    g->dim[RD_BATCH] = batch;
    g->dim[RD_SEQ] = seq;
    if (c->r->arch.features & RF_MOE) {
        /* dropless: top_k rows per token; with a capacity factor GShard's capacity */
        double cap = (double)c->r->arch.top_k * (double)seq * c->s->capacity_factor /
                     (double)g->dim[RD_EXPERTS];
        g->dim[RD_ROUTED] = c->r->arch.top_k * seq;
        g->dim[RD_CAPACITY] = (int64_t)cap + ((double)(int64_t)cap < cap);
    }
    tokens = rg_tensor(g, &ts, "tokens%s", sfx);
    rg_op(g, "embed%s", sfx);
    rg_use(g, tokens);
    for (size_t i = 0; i < c->nembed; i++)
        use_w(c, &c->w[i]);
    set_pass(c, 0, sfx);
    hidden(c, "layers.x", &x);
    for (size_t b = 0; b < c->nbodies; b++) {
        set_pass(c, b, sfx);
        c->pass.on_op = on_op;
        c->pass.on_done = on_done;
        c->pass.ctx = c;
        t[0] = x;
        recipe_layer_forward(g, &c->pass, t);
        x = t[RECIPE_ROW_OUT];
    }
    rg_op(g, "final_norm%s", sfx);
    rg_use(g, x);
    for (size_t i = c->head0; i < c->nw; i++)
        if (strncmp(c->w[i].w->name, "final_norm", 10) == 0)
            use_w(c, &c->w[i]);
    hidden(c, "final_norm.out", &x);
    rg_op(g, "lm_head%s", sfx);
    rg_use(g, x);
    for (size_t i = c->head0; i < c->nw; i++)
        if (strcmp(c->w[i].w->name, "lm_head") == 0)
            use_w(c, &c->w[i]);
    if (c->r->arch.features & RF_TIED)
        use_w(c, &c->w[0]);
    g->dim[RD_SEQ] = logits_seq;
    {
        struct rg_spec ls = {TENSOR_TEMP, CAT_TEMPS, DT_F32, 3, ldims, laxes, 0, -1, RB_HEAD, 0};
        logits = rg_tensor(g, &ls, "logits%s", sfx);
    }
    rg_op(g, "sample%s", sfx);
    rg_use(g, logits);
    g->dim[RD_SEQ] = 1;
    ts.kind = TENSOR_OUTPUT;
    ts.cat = CAT_OUTPUTS;
    ts.block = RB_HEAD;
    (void)rg_tensor(g, &ts, "next_tokens%s", sfx);
}

void recipe_serve_emit(struct rg *g)
{
    struct serve c;
    struct sweight *warr = NULL;
    static const uint8_t pdims[2] = {RD_BATCH, RD_SCRATCH}, paxes[2] = {LA_CACHE_PAGES, LA_NONE};
    struct rg_spec ps = {TENSOR_INPUT, CAT_INPUTS, DT_S32, 2, pdims, paxes, 0, -1, RB_ATTN, 0};

    memset(&c, 0, sizeof(c));
    c.g = g;
    c.r = g->r;
    c.s = &g->r->s;
    c.run = RF_SERVE | (c.s->capacity_factor > 0 ? RF_DROPPING : RF_DROPLESS);
    if (c.r->arch.features & RF_MLA) {
        g->dim[RD_HEAD_DIM] = g->dim[RD_QK_HEAD];
        g->dim[RD_KV_HEADS] = g->dim[RD_HEADS];
    } else {
        g->dim[RD_V_HEAD] = g->dim[RD_HEAD_DIM];
    }
    g->dim[RD_PAGE] = c.s->page_size;
    g->dim[RD_KV_SEQ] = c.s->context;
    if (plan_bodies(&c) == ERR_OK) {
        /* kept here as well as in c.w: every row for every body at most */
        warr = calloc((c.nbodies + 2) * recipe_weight_count() + 1, sizeof(*warr));
        c.w = warr;
    }
    if (warr == NULL || weights(&c) != ERR_OK) {
        if (g->rc == ERR_OK)
            g->rc = err_set(g->e, ERR_NOMEM, "", "recipe: out of memory making the serving step");
        goto out;
    }
    g->dim[RD_BATCH] = c.s->sequences;
    g->dim[RD_SCRATCH] = (c.s->context + c.s->page_size - 1) / c.s->page_size;
    c.page_table = rg_tensor(g, &ps, "page_table");
    if (c.s->prefill_chunk > 0)
        pass(&c, "prefill", 1, c.s->prefill_chunk, 1);
    pass(&c, "decode", c.s->sequences, 1, 1);
out:
    free(c.bodies);
    free(warr);
}
