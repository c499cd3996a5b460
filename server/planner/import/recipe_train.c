/*
 * recipe_train.c - one training step as a pipeline stage's devices run it: the weights and
 * their gradients, master copies and optimizer states (sharded as the weights), the
 * batch, then for each microbatch in flight the forward (embedding, the layers, the head and
 * the loss), then each one's backward in the same order, then the optimizer's update.
 *
 * What lives when (server/planner/INPUT.md#from-a-model-config-recipes says it for users):
 * - weights, master copies and optimizer states are arguments: live for the whole step;
 * - a layer's weights whose embed dim is sharded (FSDP) are all-gathered for each forward
 *   op that reads them, and once for the layer's backward, where each gradient is first
 *   whole (grad_full) before it is reduce-scattered into the sharded gradient;
 * - gradients live from the backward op that first writes them (from the step's start when
 *   microbatches accumulate into them) to the update;
 * - what the remat policy keeps (recipe_layer.c) lives from its forward op to its backward
 *   op; under scan the layers' kept tensors are stacked ([layers, ...], the scan's
 *   residuals) and one iteration's temporaries stand for every iteration's;
 * - the head's residuals (the final norm's output; the f32 probabilities of the whole
 *   logits) are always kept: the head is outside the layers' checkpoint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/import/recipe_int.h"

/* A weight as the stage holds it. */
struct winst {
    const struct recipe_weight *w;
    const char *body; /* prefix: "layers.3", "layers", or "" for a global */
    int64_t lead;     /* stacked layers (scan), 0: one layer's */
    int32_t layer;
    bool gathers; /* its embed dim is sharded: gathered for use */
    uint32_t param, grad, bwd_copy;
};

struct body {
    char name[48];
    int64_t first, count, lead;
    int32_t layer;
    uint32_t features;
    uint8_t status[RECIPE_ACT_ROWS];
    size_t w0, nw; /* its weights: c->w[w0 .. w0 + nw) */
};

struct train {
    struct rg *g;
    const struct recipe *r;
    const struct recipe_train *t;
    uint32_t run; /* RF_* of the run */
    struct body *bodies;
    size_t nbodies;
    struct winst *w;
    size_t nw, nembed; /* the embedding side's weights are w[0 .. nembed) */
    size_t head0;      /* the head side's: w[head0 .. nw) */
    int64_t nmb;
    bool first, last;
    uint32_t tokens, targets, loss;
    uint32_t *fwd;  /* [mb][body][row] */
    uint32_t *head; /* [mb][3]: final_in, hidden, probs */
    char sfx[24];
    struct recipe_pass pass; /* the body being emitted */
    size_t cur;              /* its index */
};

static uint32_t *fwd_at(struct train *c, int64_t mb, size_t b)
{
    return &c->fwd[((size_t)mb * c->nbodies + b) * RECIPE_ACT_ROWS];
}

/* ---- weights and their state ----------------------------------------------------------------- */

static void weight_spec(const struct train *c, const struct winst *wi, struct rg_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->kind = TENSOR_PARAM;
    s->cat = CAT_WEIGHTS;
    s->dtype = c->t->param;
    s->rank = wi->w->rank;
    s->dims = wi->w->dims;
    s->axes = wi->w->axes;
    s->lead = wi->lead;
    s->layer = wi->layer;
    s->block = wi->w->block;
}

static const char *wname(const struct winst *wi, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s", wi->body, wi->body[0] ? "." : "", wi->w->name);
    return buf;
}

/* One state tensor like the weight, maybe with dim `drop` left out (Adafactor's factored
 * moments; -1 keeps every dim, 0 is the stacked lead when there is one). */
static uint32_t state(struct train *c, const struct winst *wi, uint8_t cat, uint8_t dtype, int drop,
                      const char *suffix)
{
    struct rg_spec s;
    uint8_t dims[3], axes[3];
    char n[MODEL_MAX_NAME];
    int d0 = wi->lead > 0 ? 1 : 0; /* the first of the weight's own dims */

    weight_spec(c, wi, &s);
    s.kind = TENSOR_OPTIMIZER;
    s.cat = cat;
    s.dtype = dtype;
    if (drop == 0 && d0 == 1) {
        s.lead = 0;
    } else if (drop >= 0) {
        uint8_t k = 0;
        for (int d = 0; d < wi->w->rank; d++)
            if (d + d0 != drop) {
                dims[k] = wi->w->dims[d];
                axes[k++] = wi->w->axes[d];
            }
        s.rank = k;
        s.dims = dims;
        s.axes = axes;
    }
    return rg_tensor(c->g, &s, "%s.%s", wname(wi, n, sizeof(n)), suffix);
}

/* Optax's Adafactor factors the second moment over the two largest dims when the smaller
 * of them is at least 128 (min_dim_size_to_factor): v_row drops the largest, v_col the
 * second largest; otherwise v is whole. */
static void adafactor(struct train *c, const struct winst *wi)
{
    int64_t dims[4];
    int n = 0, big = -1, second = -1;
    uint8_t dt = c->t->opt.state;

    if (wi->lead > 0)
        dims[n++] = wi->lead;
    for (int d = 0; d < wi->w->rank; d++)
        dims[n++] = c->g->dim[wi->w->dims[d]];
    for (int d = 0; d < n; d++) {
        if (big < 0 || dims[d] >= dims[big]) {
            second = big;
            big = d;
        } else if (second < 0 || dims[d] >= dims[second]) {
            second = d;
        }
    }
    if (second >= 0 && dims[second] >= 128) {
        (void)state(c, wi, CAT_OPT_STATE, dt, big, "adafactor_v_row");
        (void)state(c, wi, CAT_OPT_STATE, dt, second, "adafactor_v_col");
    } else {
        (void)state(c, wi, CAT_OPT_STATE, dt, -1, "adafactor_v");
    }
    if (c->t->opt.momentum > 0)
        (void)state(c, wi, CAT_OPT_STATE, dt, -1, "adafactor_m");
}

static void weight(struct train *c, struct winst *wi, bool with_state)
{
    const struct recipe_train *t = c->t;
    struct rg_spec s;
    char n[MODEL_MAX_NAME];

    weight_spec(c, wi, &s);
    wi->param = rg_tensor(c->g, &s, "%s", wname(wi, n, sizeof(n)));
    wi->grad = wi->bwd_copy = RG_NONE;
    wi->gathers = rg_sharded_on(c->g, &s, LA_EMBED);
    if (!with_state)
        return;
    if (t->master != DT_INVALID)
        (void)state(c, wi, CAT_MASTER, t->master, -1, "master");
    switch (t->opt.kind) {
    case OPT_ADAMW:
        (void)state(c, wi, CAT_OPT_STATE, t->opt.state, -1, "adam_m");
        (void)state(c, wi, CAT_OPT_STATE, t->opt.state, -1, "adam_v");
        break;
    case OPT_LION:
        (void)state(c, wi, CAT_OPT_STATE, t->opt.state, -1, "lion_m");
        break;
    case OPT_SGD:
        if (t->opt.momentum > 0)
            (void)state(c, wi, CAT_OPT_STATE, t->opt.state, -1, "momentum");
        break;
    case OPT_ADAFACTOR:
        adafactor(c, wi);
        break;
    }
}

/* The gradient: made by the op now open the first time, read (accumulated into) after. */
static void grad(struct train *c, struct winst *wi)
{
    struct rg_spec s;
    char n[MODEL_MAX_NAME];

    if (wi->grad != RG_NONE) {
        rg_use(c->g, wi->grad);
        return;
    }
    weight_spec(c, wi, &s);
    s.kind = TENSOR_GRAD;
    s.cat = CAT_GRADS;
    s.dtype = c->t->grad;
    wi->grad = rg_tensor(c->g, &s, "%s.grad", wname(wi, n, sizeof(n)));
}

/* A weight as an op reads it: the parameter, or its gathered copy made by this op. */
static uint32_t use_weight(struct train *c, struct winst *wi, const char *what)
{
    struct rg_spec s;
    char n[MODEL_MAX_NAME];

    rg_use(c->g, wi->param);
    if (!wi->gathers)
        return wi->param;
    weight_spec(c, wi, &s);
    s.kind = TENSOR_TEMP;
    s.cat = CAT_GATHERED;
    s.lead = 0;
    s.layer = wi->lead > 0 ? -1 : wi->layer;
    s.gathered = (uint16_t)(1u << LA_EMBED);
    return rg_tensor(c->g, &s, "%s.%s%s", wname(wi, n, sizeof(n)), what, c->sfx);
}

/* The backward's reading of a weight: its gathered copy (made once per layer backward),
 * then the whole gradient before the reduce-scatter, then the gradient. */
static void weight_bwd(struct train *c, struct winst *wi, const char *what)
{
    struct rg_spec s;
    char n[MODEL_MAX_NAME];

    if (wi->bwd_copy != RG_NONE)
        rg_use(c->g, wi->bwd_copy);
    else
        rg_use(c->g, wi->param);
    if (wi->gathers) {
        weight_spec(c, wi, &s);
        s.kind = TENSOR_TEMP;
        s.cat = CAT_GATHERED;
        s.dtype = c->t->grad;
        s.lead = 0;
        s.layer = wi->lead > 0 ? -1 : wi->layer;
        s.gathered = (uint16_t)(1u << LA_EMBED);
        (void)rg_tensor(c->g, &s, "%s.%s%s", wname(wi, n, sizeof(n)), what, c->sfx);
    }
    grad(c, wi);
}

/* ---- bodies ---------------------------------------------------------------------------------- */

static int plan_bodies(struct train *c)
{
    const struct recipe *r = c->r;
    int64_t first, n;
    bool scan = c->t->scan;

    recipe_stage_layers(r, c->g->stage, &first, &n);
    c->bodies = calloc((size_t)(n > 0 ? n : 1), sizeof(*c->bodies));
    if (c->bodies == NULL)
        return ERR_NOMEM;
    for (int64_t l = first; l < first + n; l++) {
        uint32_t f = recipe_layer_features(&r->arch, l) | c->run;
        struct body *b = &c->bodies[c->nbodies];
        if (scan && c->nbodies > 0 && b[-1].features == f) {
            b[-1].count++;
            b[-1].lead++;
            continue;
        }
        b->first = l;
        b->count = 1;
        b->lead = scan ? 1 : 0;
        b->layer = scan ? -2 : (int32_t)l;
        b->features = f;
        recipe_act_plan(f, recipe_policy_at(c->t->policy), b->status);
        c->nbodies++;
    }
    for (size_t i = 0; i < c->nbodies; i++)
        recipe_body_name(c->bodies[i].name, sizeof(c->bodies[i].name), scan, c->nbodies,
                         c->bodies[i].first, c->bodies[i].count);
    return ERR_OK;
}

static void add_weights(struct train *c, uint8_t block, const char *body, int64_t lead,
                        int32_t layer, uint32_t f, bool with_state)
{
    for (size_t i = 0; i < recipe_weight_count(); i++) {
        const struct recipe_weight *w = recipe_weight_at(i);
        struct winst *wi;
        bool mine =
            block == RB_ATTN ? (w->block == RB_ATTN || w->block == RB_MLP) : w->block == block;
        if (!mine || !recipe_weight_applies(w, f))
            continue;
        wi = &c->w[c->nw];
        wi->w = w;
        wi->body = body;
        wi->lead = lead;
        wi->layer = layer;
        c->nw++;
        weight(c, wi, with_state);
    }
}

/* The tied LM head on a later stage than the embedding: a copy, its gradient summed into the
 * embedding's on the first stage (so no optimizer state here). */
static const struct recipe_weight tied_head = {
    "lm_head (tied embedding)", RB_HEAD, 0, 0, 2, {RD_HIDDEN, RD_VOCAB},
    {LA_EMBED, LA_VOCAB},       1,       0};

static int weights(struct train *c)
{
    if (c->first)
        add_weights(c, RB_EMBED, "", 0, -1, c->r->arch.features, true);
    c->nembed = c->nw;
    for (size_t i = 0; i < c->nbodies; i++) {
        struct body *b = &c->bodies[i];
        b->w0 = c->nw;
        add_weights(c, RB_ATTN, b->name, b->lead > 0 ? b->count : 0, b->layer, b->features, true);
        b->nw = c->nw - b->w0;
    }
    c->head0 = c->nw;
    if (c->last) {
        add_weights(c, RB_HEAD, "", 0, -1, c->r->arch.features, true);
        if ((c->r->arch.features & RF_TIED) && !c->first) {
            struct winst *wi = &c->w[c->nw++];
            wi->w = &tied_head;
            wi->body = "";
            wi->layer = -1;
            weight(c, wi, false);
        }
    }
    return ERR_OK;
}

/* The weight named name among w[lo, hi): the embedding, the LM head, the final norm. */
static struct winst *find_weight(struct train *c, size_t lo, size_t hi, const char *name)
{
    for (size_t i = lo; i < hi; i++)
        if (strncmp(c->w[i].w->name, name, strlen(name)) == 0)
            return &c->w[i];
    return NULL;
}

/* The LM head: its own weight, or the (tied) embedding; NULL (an error set) when there is
 * neither, which the weights' table rules out. */
static struct winst *head_weight(struct train *c)
{
    struct winst *w = find_weight(c, c->head0, c->nw, "lm_head");

    if (w == NULL)
        w = find_weight(c, 0, c->nembed, "embed");
    if (w == NULL && c->g->rc == ERR_OK)
        c->g->rc = err_set(c->g->e, ERR_INTERNAL, "", "recipe: a last stage without an LM head");
    return w;
}

/* ---- the forward -------------------------------------------------------------------------------
 */

static void set_pass(struct train *c, size_t b)
{
    struct body *bd = &c->bodies[b];

    c->cur = b;
    c->pass.name = bd->name;
    c->pass.suffix = c->sfx;
    c->pass.features = bd->features;
    c->pass.status = bd->status;
    c->pass.lead = bd->lead > 0 ? bd->count : 0;
    c->pass.layer = bd->lead > 0 ? -1 : bd->layer;
    c->pass.compute = c->t->compute;
}

/* The layer input of body b: kept (stacked under scan), or offloaded (a temporary here, its
 * kept bytes in host memory). An output of the op now open. */
static uint32_t layer_input(struct train *c, size_t b)
{
    struct rg_spec s;
    uint8_t st;

    set_pass(c, b);
    st = c->bodies[b].status[RECIPE_ROW_X];
    recipe_act_spec(&c->pass, RECIPE_ROW_X, st == AS_SAVED, &s);
    if (st == AS_OFFLOADED) {
        struct rg_spec kept;
        recipe_act_spec(&c->pass, RECIPE_ROW_X, true, &kept);
        c->g->host_bytes += rg_local_bytes(c->g, &kept);
    }
    return rg_tensor(c->g, &s, "%s.x%s", c->bodies[b].name, c->sfx);
}

static void fwd_op(void *ctx, struct rg *g, uint8_t lop)
{
    struct train *c = ctx;
    struct body *b = &c->bodies[c->cur];

    (void)g;
    for (size_t i = b->w0; i < b->w0 + b->nw; i++)
        if (c->w[i].w->fwd == lop)
            (void)use_weight(c, &c->w[i], "gathered");
}

/* After a layer's last op: the offloaded rows' kept bytes, and the next layer's input (or
 * the stage's output) from the residual stream. */
static void fwd_done(void *ctx, struct rg *g, uint8_t lop, uint32_t *t)
{
    struct train *c = ctx;
    size_t b = c->cur;
    struct rg_spec s;

    (void)t; /* the layer's output is made here, from x_mid and the MLP's (used by the op) */
    if (lop != LOP_MLP_DOWN)
        return;
    for (size_t i = 1; i < recipe_act_count(); i++)
        if (c->bodies[b].status[i] == AS_OFFLOADED) {
            recipe_act_spec(&c->pass, i, true, &s);
            g->host_bytes += rg_local_bytes(g, &s);
        }
    if (b + 1 < c->nbodies) {
        fwd_at(c, g->mb < 0 ? 0 : g->mb, b + 1)[RECIPE_ROW_X] = layer_input(c, b + 1);
        set_pass(c, b);
        return;
    }
    /* the stage's output: the head's input (kept for the final norm's backward) */
    recipe_hidden_spec(&c->pass, c->last ? TENSOR_ACTIVATION : TENSOR_TEMP,
                       c->last ? CAT_SAVED : CAT_TEMPS, &s);
    s.layer = -1;
    c->head[(g->mb < 0 ? 0 : (size_t)g->mb) * 3] = rg_tensor(g, &s, "final_in%s", c->sfx);
}

static uint32_t head_tensor(struct train *c, uint8_t kind, uint8_t cat, uint8_t dtype, uint8_t vdim,
                            const char *name)
{
    static const uint8_t axes[3] = {LA_BATCH, LA_LENGTH, LA_VOCAB};
    uint8_t dims[3] = {RD_BATCH, RD_SEQ, RD_VOCAB};
    struct rg_spec s = {kind, cat, dtype, 3, dims, axes, 0, -1, RB_HEAD, 0};

    dims[1] = vdim;
    return rg_tensor(c->g, &s, "%s%s", name, c->sfx);
}

/* The name of the head's gathered copy: the embedding's when tied, told apart from the
 * embedding op's own copy. */
static const char *head_copy(const struct train *c, const struct winst *lm, const char *what)
{
    if (lm >= c->w + c->head0)
        return what;
    return strcmp(what, "gathered") == 0 ? "gathered_for_head" : "gathered_for_head_bwd";
}

static void head_fwd(struct train *c, int64_t mb)
{
    struct winst *lm = head_weight(c);
    uint32_t *h = &c->head[(size_t)mb * 3];
    struct rg_spec s;

    if (lm == NULL)
        return;
    rg_op(c->g, "final_norm%s", c->sfx);
    rg_use(c->g, h[0]);
    for (size_t i = c->head0; i < c->nw; i++)
        if (strncmp(c->w[i].w->name, "final_norm", 10) == 0)
            rg_use(c->g, c->w[i].param);
    set_pass(c, c->nbodies - 1);
    recipe_hidden_spec(&c->pass, TENSOR_ACTIVATION, CAT_SAVED, &s);
    s.layer = -1;
    s.block = RB_HEAD;
    h[1] = rg_tensor(c->g, &s, "final_norm.out%s", c->sfx);
    if (c->t->logits == LG_WHOLE) {
        uint32_t logits;
        rg_op(c->g, "lm_head%s", c->sfx);
        rg_use(c->g, h[1]);
        (void)use_weight(c, lm, head_copy(c, lm, "gathered"));
        logits = head_tensor(c, TENSOR_TEMP, CAT_TEMPS, c->t->compute, RD_SEQ, "logits");
        rg_op(c->g, "loss%s", c->sfx);
        rg_use(c->g, logits);
        h[2] = head_tensor(c, TENSOR_ACTIVATION, CAT_SAVED, DT_F32, RD_SEQ, "logits.softmax_f32");
    } else {
        rg_op(c->g, "loss.chunked%s", c->sfx);
        rg_use(c->g, h[1]);
        (void)use_weight(c, lm, head_copy(c, lm, "gathered"));
        (void)head_tensor(c, TENSOR_TEMP, CAT_TEMPS, c->t->compute, RD_CHUNK, "logits_chunk");
        (void)head_tensor(c, TENSOR_TEMP, CAT_TEMPS, DT_F32, RD_CHUNK, "logits_chunk.softmax_f32");
    }
    rg_use(c->g, c->targets);
    if (c->loss == RG_NONE) {
        struct rg_spec ls = {TENSOR_OUTPUT, CAT_OUTPUTS, DT_F32, 0, NULL, NULL, 0, -1, RB_HEAD, 0};
        c->loss = rg_tensor(c->g, &ls, "loss");
    } else {
        rg_use(c->g, c->loss);
    }
}

static void forward(struct train *c, int64_t mb)
{
    struct rg *g = c->g;

    rg_op(g, c->first ? "embed%s" : "recv%s", c->sfx);
    if (c->first) {
        rg_use(g, c->tokens);
        for (size_t i = 0; i < c->nembed; i++)
            (void)use_weight(c, &c->w[i], "gathered");
    }
    fwd_at(c, mb, 0)[RECIPE_ROW_X] = layer_input(c, 0);
    for (size_t b = 0; b < c->nbodies; b++) {
        set_pass(c, b);
        c->pass.on_op = fwd_op;
        c->pass.on_done = fwd_done;
        c->pass.ctx = c;
        recipe_layer_forward(g, &c->pass, fwd_at(c, mb, b));
    }
    if (c->last) {
        head_fwd(c, mb);
    } else {
        rg_op(g, "send%s", c->sfx);
        rg_use(g, c->head[(size_t)mb * 3]);
    }
}

/* ---- the backward ------------------------------------------------------------------------------
 */

static uint32_t grad_flow(struct train *c, const char *name)
{
    struct rg_spec s;

    recipe_hidden_spec(&c->pass, TENSOR_TEMP, CAT_TEMPS, &s);
    return rg_tensor(c->g, &s, "%s.%s%s", c->pass.name, name, c->sfx);
}

/* The head's backward: the loss's gradient, the LM head's and the final norm's; returns
 * the gradient of the stage's output. */
static uint32_t head_bwd(struct train *c, int64_t mb)
{
    const uint32_t *h = &c->head[(size_t)mb * 3];
    struct winst *lm = head_weight(c);
    struct rg_spec s;
    uint32_t d;

    if (lm == NULL)
        return RG_NONE;
    if (c->t->logits == LG_WHOLE) {
        rg_op(c->g, "loss.bwd%s", c->sfx);
        rg_use(c->g, h[2]);
        rg_use(c->g, c->targets);
        d = head_tensor(c, TENSOR_TEMP, CAT_TEMPS, c->t->compute, RD_SEQ, "d_logits");
        rg_op(c->g, "lm_head.bwd%s", c->sfx);
        rg_use(c->g, d);
    } else {
        rg_op(c->g, "loss.chunked.bwd%s", c->sfx);
        rg_use(c->g, c->targets);
        (void)head_tensor(c, TENSOR_TEMP, CAT_TEMPS, c->t->compute, RD_CHUNK, "logits_chunk.bwd");
        (void)head_tensor(c, TENSOR_TEMP, CAT_TEMPS, DT_F32, RD_CHUNK,
                          "logits_chunk.softmax_f32.bwd");
        (void)head_tensor(c, TENSOR_TEMP, CAT_TEMPS, c->t->compute, RD_CHUNK, "d_logits_chunk");
    }
    rg_use(c->g, h[1]);
    rg_use(c->g, h[0]);
    (void)use_weight(c, lm, head_copy(c, lm, "gathered_bwd"));
    for (size_t i = c->head0; i < c->nw; i++)
        weight_bwd(c, &c->w[i], "grad_full");
    if (lm < c->w + c->head0)
        weight_bwd(c, lm, "grad_full_head"); /* tied: the embedding's gradient */
    set_pass(c, c->nbodies - 1);
    recipe_hidden_spec(&c->pass, TENSOR_TEMP, CAT_TEMPS, &s);
    s.layer = -1;
    s.block = RB_HEAD;
    return rg_tensor(c->g, &s, "g_final%s", c->sfx);
}

/* What the backward reads of row i: the kept tensor, or its copy made again. */
static uint32_t bwd_row(const struct body *b, const uint32_t *fwd, const uint32_t *again, size_t i)
{
    return b->status[i] == AS_SAVED ? fwd[i] : again[i];
}

static void recompute(struct train *c, struct body *b, const uint32_t *fwd, uint32_t *again)
{
    bool any = false;

    for (size_t i = 0; i < recipe_act_count(); i++) {
        again[i] = RG_NONE;
        any |= b->status[i] == AS_RECOMPUTED || b->status[i] == AS_OFFLOADED;
    }
    rg_op(c->g, any ? "%s.bwd.recompute%s" : "%s.bwd.gather%s", b->name, c->sfx);
    for (size_t i = b->w0; i < b->w0 + b->nw; i++)
        c->w[i].bwd_copy =
            c->w[i].gathers ? use_weight(c, &c->w[i], "gathered_bwd") : c->w[i].param;
    for (size_t i = 0; any && i < recipe_act_count(); i++) {
        const struct recipe_act *a = recipe_act_at(i);
        struct rg_spec s;
        if (b->status[i] != AS_RECOMPUTED && b->status[i] != AS_OFFLOADED)
            continue;
        for (size_t k = 0; b->status[i] == AS_RECOMPUTED && k < 4 && a->from[k] != 0; k++)
            rg_use(c->g, bwd_row(b, fwd, again, a->from[k] - 1u));
        recipe_act_spec(&c->pass, i, false, &s);
        again[i] = rg_tensor(c->g, &s, "%s.%s.%s%s", b->name, a->name,
                             b->status[i] == AS_RECOMPUTED ? "recompute" : "reload", c->sfx);
    }
}

static uint32_t body_bwd_op(struct train *c, struct body *b, const uint32_t *fwd,
                            const uint32_t *again, uint8_t bop, uint32_t g_in)
{
    uint8_t block = bop == BOP_MLP ? RB_MLP : RB_ATTN;

    rg_op(c->g, "%s.bwd.%s%s", b->name, bop == BOP_MLP ? "mlp" : "attn", c->sfx);
    rg_use(c->g, g_in);
    for (size_t i = 0; i < recipe_act_count(); i++) {
        const struct recipe_act *a = recipe_act_at(i);
        if (a->bwd == bop && (a->bwd_need & b->features) == a->bwd_need &&
            b->status[i] != AS_ABSENT && b->status[i] != AS_DROPPED)
            rg_use(c->g, bwd_row(b, fwd, again, i));
    }
    recipe_layer_bwd_temps(c->g, &c->pass, bop);
    for (size_t i = b->w0; i < b->w0 + b->nw; i++)
        if (c->w[i].w->block == block)
            weight_bwd(c, &c->w[i], "grad_full");
    return grad_flow(c, bop == BOP_MLP ? "g_mid" : "g_in");
}

static uint32_t body_bwd(struct train *c, size_t bi, int64_t mb, uint32_t g_out)
{
    struct body *b = &c->bodies[bi];
    const uint32_t *fwd = fwd_at(c, mb, bi);
    uint32_t again[RECIPE_ACT_ROWS], g_mid;

    for (size_t i = 0; i < RECIPE_ACT_ROWS; i++)
        again[i] = RG_NONE;
    set_pass(c, bi);
    recompute(c, b, fwd, again);
    g_mid = body_bwd_op(c, b, fwd, again, BOP_MLP, g_out);
    return body_bwd_op(c, b, fwd, again, BOP_ATTN, g_mid);
}

static void backward(struct train *c, int64_t mb)
{
    uint32_t g_out;

    if (c->last) {
        g_out = head_bwd(c, mb);
    } else {
        struct rg_spec s;
        rg_op(c->g, "recv_grad%s", c->sfx);
        set_pass(c, c->nbodies - 1);
        recipe_hidden_spec(&c->pass, TENSOR_TEMP, CAT_TEMPS, &s);
        s.layer = -1;
        g_out = rg_tensor(c->g, &s, "g_recv%s", c->sfx);
    }
    for (size_t b = c->nbodies; b-- > 0;)
        g_out = body_bwd(c, b, mb, g_out);
    rg_op(c->g, c->first ? "embed.bwd%s" : "send_grad%s", c->sfx);
    rg_use(c->g, g_out);
    if (c->first) {
        rg_use(c->g, c->tokens);
        for (size_t i = 0; i < c->nembed; i++)
            weight_bwd(c, &c->w[i], "grad_full");
    }
}

/* ---- the step -------------------------------------------------------------------------------- */

static void update(struct train *c, const char *name, size_t lo, size_t hi)
{
    if (lo >= hi)
        return;
    rg_op(c->g, "update.%s", name);
    for (size_t i = lo; i < hi; i++) {
        rg_use(c->g, c->w[i].param);
        rg_use(c->g, c->w[i].grad);
    }
}

static void set_dims(struct train *c)
{
    const struct recipe *r = c->r;
    int64_t *dim = c->g->dim;
    int64_t pp = r->stages > 1 ? r->pp_microbatches : 1;
    double cap;

    dim[RD_BATCH] = c->t->batch / c->t->microbatches / pp;
    dim[RD_STEP_BATCH] = c->t->batch;
    dim[RD_SEQ] = dim[RD_KV_SEQ] = c->t->seq;
    dim[RD_CHUNK] = c->t->logits_chunk < c->t->seq ? c->t->logits_chunk : c->t->seq;
    if (r->arch.features & RF_MLA) {
        dim[RD_HEAD_DIM] = dim[RD_QK_HEAD];
        dim[RD_KV_HEADS] = dim[RD_HEADS];
    } else {
        dim[RD_V_HEAD] = dim[RD_HEAD_DIM];
    }
    if (r->arch.features & RF_MOE) {
        /* GShard's capacity per expert and group (a sequence): top_k x tokens x factor /
         * experts, rounded up; dropless keeps top_k x tokens rows, sorted by expert. */
        cap = (double)r->arch.top_k * (double)c->t->seq * c->t->capacity_factor /
              (double)dim[RD_EXPERTS];
        dim[RD_CAPACITY] = (int64_t)cap + ((double)(int64_t)cap < cap);
        dim[RD_ROUTED] = r->arch.top_k * c->t->seq;
    }
    c->run = RF_TRAIN | (c->t->attention == ATT_DOT ? RF_DOT_ATTN : RF_FLASH) |
             (c->t->capacity_factor > 0 ? RF_DROPPING : RF_DROPLESS) |
             (r->mesh[AX_SEQUENCE] > 1 ? RF_CONTEXT : 0);
}

static void inputs(struct train *c)
{
    static const uint8_t dims[2] = {RD_STEP_BATCH, RD_SEQ}, axes[2] = {LA_BATCH, LA_LENGTH};
    struct rg_spec s = {TENSOR_INPUT, CAT_INPUTS, DT_S32, 2, dims, axes, 0, -1, RB_EMBED, 0};

    if (c->first)
        c->tokens = rg_tensor(c->g, &s, "tokens");
    s.block = RB_HEAD;
    if (c->last)
        c->targets = rg_tensor(c->g, &s, "targets");
}

/* Names what follows after microbatch mb (a "@mbN" suffix, none with one microbatch). */
static void microbatch_at(struct train *c, int64_t mb)
{
    c->g->mb = c->nmb > 1 ? (int16_t)mb : -1;
    c->sfx[0] = '\0';
    if (c->nmb > 1)
        snprintf(c->sfx, sizeof(c->sfx), "@mb%lld", (long long)mb);
}

static void program(struct train *c)
{
    if (c->t->microbatches > 1) {
        /* the accumulators: live over every microbatch */
        rg_op(c->g, "grad_accumulators.init");
        for (size_t i = 0; i < c->nw; i++)
            grad(c, &c->w[i]);
    }
    for (int64_t mb = 0; mb < c->nmb; mb++) {
        microbatch_at(c, mb);
        forward(c, mb);
    }
    for (int64_t mb = 0; mb < c->nmb; mb++) {
        microbatch_at(c, mb);
        backward(c, mb);
    }
    c->g->mb = -1;
    update(c, "embed", 0, c->nembed);
    for (size_t b = 0; b < c->nbodies; b++)
        update(c, c->bodies[b].name, c->bodies[b].w0, c->bodies[b].w0 + c->bodies[b].nw);
    update(c, "head", c->head0, c->nw);
}

void recipe_train_emit(struct rg *g)
{
    struct train c;
    struct winst *warr = NULL;

    memset(&c, 0, sizeof(c));
    c.g = g;
    c.r = g->r;
    c.t = &g->r->t;
    c.first = g->stage == 0;
    c.last = g->stage == g->r->stages - 1;
    c.nmb = recipe_in_flight(g->r, g->stage);
    c.tokens = c.targets = c.loss = RG_NONE;
    set_dims(&c);
    if (plan_bodies(&c) != ERR_OK)
        goto nomem;
    /* kept here as well as in c.w: the weights' array, at most every row for every body */
    warr = calloc((c.nbodies + 2) * recipe_weight_count() + 1, sizeof(*warr));
    c.w = warr;
    if (warr == NULL || weights(&c) != ERR_OK)
        goto nomem;
    c.fwd = malloc((size_t)c.nmb * (c.nbodies ? c.nbodies : 1) * RECIPE_ACT_ROWS * sizeof(*c.fwd));
    c.head = calloc((size_t)c.nmb * 3, sizeof(*c.head));
    if (c.fwd == NULL || c.head == NULL)
        goto nomem;
    for (size_t i = 0; i < (size_t)c.nmb * (c.nbodies ? c.nbodies : 1) * RECIPE_ACT_ROWS; i++)
        c.fwd[i] = RG_NONE;
    inputs(&c);
    program(&c);
    goto out;
nomem:
    if (g->rc == ERR_OK)
        g->rc = err_set(g->e, ERR_NOMEM, "", "recipe: out of memory making the training step");
out:
    free(c.bodies);
    free(warr);
    free(c.fwd);
    free(c.head);
}
