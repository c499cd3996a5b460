/*
 * recipe_layer.c - one decoder layer's intermediates: a table of every tensor its forward
 * pass makes (by family feature and attention kind), what each is computed from, its class
 * as JAX's checkpoint policies see it, and whether the backward reads it; the remat
 * policies' table; which rows a policy keeps; and the forward ops that make them.
 *
 * The policies are JAX's (jax.checkpoint_policies: nothing_saveable,
 * dots_with_no_batch_dims_saveable, dots_saveable, everything_saveable,
 * offload_dot_with_no_batch_dims) and MaxText's names for them (remat_policy "full",
 * "minimal", "minimal_offloaded"). jax.checkpoint keeps a value for the backward when the
 * backward needs it (a residual) and the policy allows its primitive (a dot_general with or
 * without batch dimensions, anything); a residual the policy does not allow is recomputed
 * from what is kept, which may make further values residuals (x_mid is recomputed from x and
 * o, so under dots_with_no_batch_dims_saveable the output projection o is kept). The layer's
 * input is always kept: it is the checkpoint's argument (the scan's carry). recipe_act_plan
 * walks the table backwards to apply exactly that rule; INPUT.md lists each policy's result.
 */
#include <stdio.h>
#include <string.h>

#include "planner/import/recipe_int.h"

enum {
    A_X,
    A_N1,
    A_QA,
    A_QAN,
    A_KVA,
    A_KVAN,
    A_KV,
    A_Q,
    A_K,
    A_KM,
    A_V,
    A_VM,
    A_KALL,
    A_VALL,
    A_SCORES,
    A_PROBS,
    A_LSE,
    A_CTX,
    A_CTXF,
    A_O,
    A_OPN,
    A_XMID,
    A_N2,
    A_GATE,
    A_UP,
    A_ACT,
    A_DOWN,
    A_ROUTER,
    A_DISP,
    A_DISPL,
    A_EGATE,
    A_EGATEL,
    A_EUP,
    A_EUPL,
    A_EACT,
    A_EACTL,
    A_EOUT,
    A_EOUTL,
    A_SGATE,
    A_SUP,
    A_SACT,
    A_SOUT,
    A_MOEOUT,
    A_DPN,
    A_ROWS
};

_Static_assert(A_ROWS <= RECIPE_ACT_ROWS, "RECIPE_ACT_ROWS too small");

/* dims and their logical axes */
#define B  RD_BATCH
#define S  RD_SEQ
#define H  RD_HIDDEN
#define N  RD_HEADS
#define KH RD_KV_HEADS
#define HD RD_HEAD_DIM
#define VH RD_V_HEAD
#define KS RD_KV_SEQ
#define D2(a, b, x, y)                                                                             \
    2, {a, b},                                                                                     \
    {                                                                                              \
        x, y                                                                                       \
    }
#define D3(a, b, c, x, y, z)                                                                       \
    3, {a, b, c},                                                                                  \
    {                                                                                              \
        x, y, z                                                                                    \
    }
#define D4(a, b, c, d, x, y, z, w)                                                                 \
    4, {a, b, c, d},                                                                               \
    {                                                                                              \
        x, y, z, w                                                                                 \
    }
#define BSH             D3(B, S, H, LA_BATCH, LA_LENGTH, LA_ACT_EMBED)
#define BS(d, ax)       D3(B, S, d, LA_BATCH, LA_LENGTH, ax)
#define BSNX(n, nax, d) D4(B, S, n, d, LA_BATCH, LA_LENGTH, nax, LA_HEAD_DIM)
#define BNSS            D4(B, N, S, KS, LA_BATCH, LA_HEADS, LA_LENGTH, LA_KV_LENGTH)
#define BECX(d, ax)     D4(B, RD_EXPERTS, RD_CAPACITY, d, LA_BATCH, LA_EXP, LA_NONE, ax)
#define BRX(d, ax)      D3(B, RD_ROUTED, d, LA_BATCH, LA_NONE, ax)
#define F(...)                                                                                     \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }
#define R(a) ((a) + 1)

/* the backward reads it whatever the features */
#define ALWAYS 0
/* never read by the backward */
#define NEVER (RF_TRAIN | RF_SERVE)

#define MOE_D  (RF_MOE_LAYER | RF_DROPPING)
#define MOE_L  (RF_MOE_LAYER | RF_DROPLESS)
#define SHARED (RF_MOE_LAYER | RF_SHARED_EXPERT)
#define KVALL  (RF_GQA | RF_CONTEXT)

/* name, op, class, backward op, read when, need, skip, rank, dims, axes, f32, from */
static const struct recipe_act acts[A_ROWS] = {
    [A_X] = {"x", LOP_COUNT, AC_INPUT, BOP_ATTN, ALWAYS, 0, 0, BSH, false, F(0)},
    [A_N1] = {"attn_norm", LOP_ATTN_NORM, AC_OTHER, BOP_ATTN, ALWAYS, 0, 0, BSH, false, F(R(A_X))},
    [A_QA] = {"q_a", LOP_QKV, AC_DOT_NB, BOP_ATTN, ALWAYS, RF_MLA, 0, BS(RD_Q_LORA, LA_NONE), false,
              F(R(A_N1))},
    [A_QAN] = {"q_a_norm", LOP_QKV, AC_OTHER, BOP_ATTN, ALWAYS, RF_MLA, 0, BS(RD_Q_LORA, LA_NONE),
               false, F(R(A_QA))},
    [A_KVA] = {"kv_a", LOP_QKV, AC_DOT_NB, BOP_ATTN, ALWAYS, RF_MLA, 0, BS(RD_KV_A, LA_NONE), false,
               F(R(A_N1))},
    [A_KVAN] = {"kv_a_norm", LOP_QKV, AC_OTHER, BOP_ATTN, ALWAYS, RF_MLA, 0,
                BS(RD_KV_LORA, LA_NONE), false, F(R(A_KVA))},
    [A_KV] = {"kv", LOP_QKV, AC_DOT_NB, BOP_NONE, NEVER, RF_MLA, 0, BSNX(N, LA_HEADS, RD_KV_B),
              false, F(R(A_KVAN))},
    [A_Q] = {"q", LOP_QKV, AC_DOT_NB, BOP_ATTN, ALWAYS, 0, 0, BSNX(N, LA_HEADS, HD), false,
             F(R(A_N1), R(A_QAN))},
    [A_K] = {"k", LOP_QKV, AC_DOT_NB, BOP_ATTN, ALWAYS, RF_GQA, 0, BSNX(KH, LA_KV_HEADS, HD), false,
             F(R(A_N1))},
    [A_KM] = {"k", LOP_QKV, AC_OTHER, BOP_ATTN, ALWAYS, RF_MLA, 0, BSNX(KH, LA_KV_HEADS, HD), false,
              F(R(A_KV), R(A_KVA))},
    [A_V] = {"v", LOP_QKV, AC_DOT_NB, BOP_ATTN, ALWAYS, RF_GQA, 0, BSNX(KH, LA_KV_HEADS, VH), false,
             F(R(A_N1))},
    [A_VM] = {"v", LOP_QKV, AC_OTHER, BOP_ATTN, ALWAYS, RF_MLA, 0, BSNX(KH, LA_KV_HEADS, VH), false,
              F(R(A_KV))},
    [A_KALL] = {"k_all", LOP_ATTN, AC_OTHER, BOP_NONE, NEVER, KVALL, 0,
                D4(B, KS, KH, HD, LA_BATCH, LA_KV_LENGTH, LA_KV_HEADS, LA_HEAD_DIM), false,
                F(R(A_K))},
    [A_VALL] = {"v_all", LOP_ATTN, AC_OTHER, BOP_NONE, NEVER, KVALL, 0,
                D4(B, KS, KH, VH, LA_BATCH, LA_KV_LENGTH, LA_KV_HEADS, LA_HEAD_DIM), false,
                F(R(A_V))},
    [A_SCORES] = {"scores", LOP_ATTN, AC_DOT_B, BOP_NONE, NEVER, RF_DOT_ATTN, 0, BNSS, false,
                  F(R(A_Q), R(A_K), R(A_KM))},
    [A_PROBS] = {"probs", LOP_ATTN, AC_OTHER, BOP_ATTN, ALWAYS, RF_DOT_ATTN, 0, BNSS, false,
                 F(R(A_SCORES))},
    [A_LSE] = {"lse", LOP_ATTN, AC_OTHER, BOP_ATTN, ALWAYS, RF_FLASH, 0,
               D3(B, N, S, LA_BATCH, LA_HEADS, LA_LENGTH), true, F(R(A_Q), R(A_K), R(A_KM))},
    [A_CTX] = {"context", LOP_ATTN, AC_DOT_B, BOP_ATTN, ALWAYS, RF_DOT_ATTN, 0,
               BSNX(N, LA_HEADS, VH), false, F(R(A_PROBS), R(A_V), R(A_VM))},
    [A_CTXF] = {"context", LOP_ATTN, AC_OTHER, BOP_ATTN, ALWAYS, 0, RF_DOT_ATTN,
                BSNX(N, LA_HEADS, VH), false, F(R(A_Q), R(A_K), R(A_V), R(A_LSE))},
    [A_O] = {"o", LOP_OPROJ, AC_DOT_NB, BOP_ATTN, RF_POST_NORMS, 0, 0, BSH, false,
             F(R(A_CTX), R(A_CTXF))},
    [A_OPN] = {"attn_post_norm", LOP_OPROJ, AC_OTHER, BOP_NONE, NEVER, RF_POST_NORMS, 0, BSH, false,
               F(R(A_O))},
    [A_XMID] = {"x_mid", LOP_OPROJ, AC_OTHER, BOP_MLP, ALWAYS, 0, 0, BSH, false,
                F(R(A_X), R(A_O), R(A_OPN))},
    [A_N2] = {"mlp_norm", LOP_MLP_NORM, AC_OTHER, BOP_MLP, ALWAYS, 0, 0, BSH, false, F(R(A_XMID))},
    [A_GATE] = {"gate", LOP_MLP_UP, AC_DOT_NB, BOP_MLP, ALWAYS, RF_DENSE_LAYER | RF_GATED, 0,
                BS(RD_INTER, LA_MLP), false, F(R(A_N2))},
    [A_UP] = {"up", LOP_MLP_UP, AC_DOT_NB, BOP_MLP, ALWAYS, RF_DENSE_LAYER, 0, BS(RD_INTER, LA_MLP),
              false, F(R(A_N2))},
    [A_ACT] = {"act", LOP_MLP_UP, AC_OTHER, BOP_MLP, ALWAYS, RF_DENSE_LAYER, 0,
               BS(RD_INTER, LA_MLP), false, F(R(A_GATE), R(A_UP))},
    [A_DOWN] = {"down", LOP_MLP_DOWN, AC_DOT_NB, BOP_MLP, RF_POST_NORMS, RF_DENSE_LAYER, 0, BSH,
                false, F(R(A_ACT))},
    [A_ROUTER] = {"router", LOP_MLP_UP, AC_DOT_NB, BOP_MLP, ALWAYS, RF_MOE_LAYER, 0,
                  BS(RD_EXPERTS, LA_NONE), true, F(R(A_N2))},
    [A_DISP] = {"dispatch", LOP_MLP_UP, AC_DOT_B, BOP_MLP, ALWAYS, MOE_D, 0, BECX(H, LA_ACT_EMBED),
                false, F(R(A_N2), R(A_ROUTER))},
    [A_DISPL] = {"dispatch", LOP_MLP_UP, AC_OTHER, BOP_MLP, ALWAYS, MOE_L, 0, BRX(H, LA_ACT_EMBED),
                 false, F(R(A_N2), R(A_ROUTER))},
    [A_EGATE] = {"expert_gate", LOP_MLP_UP, AC_DOT_B, BOP_MLP, ALWAYS, MOE_D, 0,
                 BECX(RD_MOE_INTER, LA_MLP), false, F(R(A_DISP))},
    [A_EGATEL] = {"expert_gate", LOP_MLP_UP, AC_DOT_NB, BOP_MLP, ALWAYS, MOE_L, 0,
                  BRX(RD_MOE_INTER, LA_MLP), false, F(R(A_DISPL))},
    [A_EUP] = {"expert_up", LOP_MLP_UP, AC_DOT_B, BOP_MLP, ALWAYS, MOE_D, 0,
               BECX(RD_MOE_INTER, LA_MLP), false, F(R(A_DISP))},
    [A_EUPL] = {"expert_up", LOP_MLP_UP, AC_DOT_NB, BOP_MLP, ALWAYS, MOE_L, 0,
                BRX(RD_MOE_INTER, LA_MLP), false, F(R(A_DISPL))},
    [A_EACT] = {"expert_act", LOP_MLP_UP, AC_OTHER, BOP_MLP, ALWAYS, MOE_D, 0,
                BECX(RD_MOE_INTER, LA_MLP), false, F(R(A_EGATE), R(A_EUP))},
    [A_EACTL] = {"expert_act", LOP_MLP_UP, AC_OTHER, BOP_MLP, ALWAYS, MOE_L, 0,
                 BRX(RD_MOE_INTER, LA_MLP), false, F(R(A_EGATEL), R(A_EUPL))},
    [A_EOUT] = {"expert_out", LOP_MLP_DOWN, AC_DOT_B, BOP_MLP, ALWAYS, MOE_D, 0,
                BECX(H, LA_ACT_EMBED), false, F(R(A_EACT))},
    [A_EOUTL] = {"expert_out", LOP_MLP_DOWN, AC_DOT_NB, BOP_MLP, ALWAYS, MOE_L, 0,
                 BRX(H, LA_ACT_EMBED), false, F(R(A_EACTL))},
    [A_SGATE] = {"shared_gate", LOP_MLP_UP, AC_DOT_NB, BOP_MLP, ALWAYS, SHARED, 0,
                 BS(RD_SHARED_INTER, LA_MLP), false, F(R(A_N2))},
    [A_SUP] = {"shared_up", LOP_MLP_UP, AC_DOT_NB, BOP_MLP, ALWAYS, SHARED, 0,
               BS(RD_SHARED_INTER, LA_MLP), false, F(R(A_N2))},
    [A_SACT] = {"shared_act", LOP_MLP_UP, AC_OTHER, BOP_MLP, ALWAYS, SHARED, 0,
                BS(RD_SHARED_INTER, LA_MLP), false, F(R(A_SGATE), R(A_SUP))},
    [A_SOUT] = {"shared_out", LOP_MLP_DOWN, AC_DOT_NB, BOP_NONE, NEVER, SHARED, 0, BSH, false,
                F(R(A_SACT))},
    [A_MOEOUT] = {"moe_out", LOP_MLP_DOWN, AC_DOT_B, BOP_MLP, RF_POST_NORMS, RF_MOE_LAYER, 0, BSH,
                  false, F(R(A_EOUT), R(A_EOUTL), R(A_ROUTER), R(A_SOUT))},
    [A_DPN] = {"mlp_post_norm", LOP_MLP_DOWN, AC_OTHER, BOP_NONE, NEVER, RF_POST_NORMS, 0, BSH,
               false, F(R(A_DOWN), R(A_MOEOUT))},
};

size_t recipe_act_count(void)
{
    return A_ROWS;
}

const struct recipe_act *recipe_act_at(size_t i)
{
    return i < A_ROWS ? &acts[i] : NULL;
}

/* ---- the policies ------------------------------------------------------------------------- */

static const struct recipe_policy policies[] = {
    {"nothing_saveable",
     {"full", "layer_input"},
     AC_INPUT,
     0,
     "full remat: only each layer's input is kept; everything else is recomputed"},
    {"dots_with_no_batch_dims_saveable",
     {"minimal"},
     AC_INPUT | AC_DOT_NB,
     0,
     "the projections' outputs (q, k, v, o, the MLP's and router's) are kept"},
    {"dots_saveable",
     {"checkpoint_dots"},
     AC_INPUT | AC_DOT_NB | AC_DOT_B,
     0,
     "every matmul's output is kept, the attention's and the experts' too"},
    {"everything_saveable",
     {NULL},
     AC_INPUT | AC_DOT_NB | AC_DOT_B | AC_OTHER,
     0,
     "nothing is recomputed: every residual the backward reads is kept"},
    {"offload_dot_with_no_batch_dims",
     {"minimal_offloaded"},
     AC_INPUT,
     AC_DOT_NB,
     "as dots_with_no_batch_dims_saveable, the projections' outputs kept in host memory"},
    {"layer_input_offloaded",
     {NULL},
     0,
     AC_INPUT,
     "full remat with each layer's input kept in host memory"},
};

#define NPOLICIES (sizeof(policies) / sizeof(policies[0]))

size_t recipe_policy_count(void)
{
    return NPOLICIES;
}

const struct recipe_policy *recipe_policy_at(size_t i)
{
    return i < NPOLICIES ? &policies[i] : NULL;
}

static bool applies(const struct recipe_act *a, uint32_t f)
{
    return (a->need & f) == a->need && (a->skip & f) == 0;
}

void recipe_act_plan(uint32_t f, const struct recipe_policy *p, uint8_t *status)
{
    bool needed[A_ROWS];

    for (size_t i = 0; i < A_ROWS; i++) {
        const struct recipe_act *a = &acts[i];
        status[i] = applies(a, f) ? AS_DROPPED : AS_ABSENT;
        needed[i] =
            status[i] != AS_ABSENT && a->bwd != BOP_NONE && (a->bwd_need & f) == a->bwd_need;
    }
    /* backwards: a row's inputs come before it, so each is decided before its inputs */
    for (size_t i = A_ROWS; i-- > 0;) {
        const struct recipe_act *a = &acts[i];
        if (!needed[i])
            continue;
        if (p->saved & a->cls) {
            status[i] = AS_SAVED;
            continue;
        }
        if (p->offloaded & a->cls) {
            status[i] = AS_OFFLOADED;
            continue;
        }
        status[i] = AS_RECOMPUTED;
        for (size_t k = 0; k < 4 && a->from[k] != 0; k++)
            needed[a->from[k] - 1] |= status[a->from[k] - 1] != AS_ABSENT;
    }
}

/* ---- the forward ---------------------------------------------------------------------------- */

static const char *const lop_names[LOP_COUNT] = {"attn_norm", "qkv",    "attention", "out_proj",
                                                 "mlp_norm",  "mlp_up", "mlp_down"};

void recipe_act_spec(const struct recipe_pass *p, size_t i, bool saved, struct rg_spec *s)
{
    const struct recipe_act *a = &acts[i];

    memset(s, 0, sizeof(*s));
    s->kind = saved ? TENSOR_ACTIVATION : TENSOR_TEMP;
    s->cat = saved ? CAT_SAVED : CAT_TEMPS;
    s->dtype = a->f32 ? DT_F32 : p->compute;
    s->rank = a->rank;
    s->dims = a->dims;
    s->axes = a->axes;
    s->lead = saved ? p->lead : 0;
    s->layer = saved && p->lead > 0 ? -2 : p->layer;
    s->block = a->op >= LOP_MLP_NORM ? RB_MLP : RB_ATTN;
}

void recipe_layer_forward(struct rg *g, const struct recipe_pass *p, uint32_t *t)
{
    for (size_t i = 1; i < A_ROWS; i++)
        t[i] = RG_NONE;
    for (unsigned op = 0; op < LOP_COUNT; op++) {
        rg_op(g, "%s.fwd.%s%s", p->name, lop_names[op], p->suffix);
        if (op == LOP_ATTN_NORM)
            rg_use(g, t[A_X]);
        if (op == LOP_MLP_DOWN)
            rg_use(g, t[A_XMID]); /* the residual add: x_mid + the MLP's output */
        if (p->on_op != NULL)
            p->on_op(p->ctx, g, (uint8_t)op);
        for (size_t i = 1; i < A_ROWS; i++) {
            const struct recipe_act *a = &acts[i];
            struct rg_spec s;
            if (a->op != op || p->status[i] == AS_ABSENT)
                continue;
            for (size_t k = 0; k < 4 && a->from[k] != 0; k++)
                rg_use(g, t[a->from[k] - 1]);
            recipe_act_spec(p, i, p->status[i] == AS_SAVED, &s);
            t[i] = rg_tensor(g, &s, "%s.%s%s", p->name, a->name, p->suffix);
        }
        if (p->on_done != NULL)
            p->on_done(p->ctx, g, (uint8_t)op, t);
    }
}

/* ---- the backward's own temporaries --------------------------------------------------------- */

struct bwd_temp {
    const char *name;
    uint8_t bop; /* enum recipe_bop */
    uint32_t need, skip;
    uint8_t rank;
    uint8_t dims[4], axes[4];
    bool f32;
};

/* The gradients a layer's backward makes on its way (of its intermediates, not its
 * weights): live within its backward op. */
static const struct bwd_temp bwd_temps[] = {
    {"d_gate", BOP_MLP, RF_DENSE_LAYER | RF_GATED, 0, BS(RD_INTER, LA_MLP), false},
    {"d_up", BOP_MLP, RF_DENSE_LAYER, 0, BS(RD_INTER, LA_MLP), false},
    {"d_router", BOP_MLP, RF_MOE_LAYER, 0, BS(RD_EXPERTS, LA_NONE), true},
    {"d_dispatch", BOP_MLP, MOE_D, 0, BECX(H, LA_ACT_EMBED), false},
    {"d_expert_gate", BOP_MLP, MOE_D, 0, BECX(RD_MOE_INTER, LA_MLP), false},
    {"d_expert_up", BOP_MLP, MOE_D, 0, BECX(RD_MOE_INTER, LA_MLP), false},
    {"d_dispatch", BOP_MLP, MOE_L, 0, BRX(H, LA_ACT_EMBED), false},
    {"d_expert_gate", BOP_MLP, MOE_L, 0, BRX(RD_MOE_INTER, LA_MLP), false},
    {"d_expert_up", BOP_MLP, MOE_L, 0, BRX(RD_MOE_INTER, LA_MLP), false},
    {"d_shared_gate", BOP_MLP, SHARED, 0, BS(RD_SHARED_INTER, LA_MLP), false},
    {"d_shared_up", BOP_MLP, SHARED, 0, BS(RD_SHARED_INTER, LA_MLP), false},
    {"d_context", BOP_ATTN, 0, 0, BSNX(N, LA_HEADS, VH), false},
    {"d_scores", BOP_ATTN, RF_DOT_ATTN, 0, BNSS, false},
    {"d_q", BOP_ATTN, 0, 0, BSNX(N, LA_HEADS, HD), false},
    {"d_k", BOP_ATTN, 0, 0, BSNX(KH, LA_KV_HEADS, HD), false},
    {"d_v", BOP_ATTN, 0, 0, BSNX(KH, LA_KV_HEADS, VH), false},
    {"d_k_all", BOP_ATTN, KVALL, 0,
     D4(B, KS, KH, HD, LA_BATCH, LA_KV_LENGTH, LA_KV_HEADS, LA_HEAD_DIM), false},
    {"d_v_all", BOP_ATTN, KVALL, 0,
     D4(B, KS, KH, VH, LA_BATCH, LA_KV_LENGTH, LA_KV_HEADS, LA_HEAD_DIM), false},
    {"d_kv", BOP_ATTN, RF_MLA, 0, BSNX(N, LA_HEADS, RD_KV_B), false},
    {"d_q_a", BOP_ATTN, RF_MLA, 0, BS(RD_Q_LORA, LA_NONE), false},
    {"d_kv_a", BOP_ATTN, RF_MLA, 0, BS(RD_KV_A, LA_NONE), false},
};

void recipe_layer_bwd_temps(struct rg *g, const struct recipe_pass *p, uint8_t bop)
{
    for (size_t i = 0; i < sizeof(bwd_temps) / sizeof(bwd_temps[0]); i++) {
        const struct bwd_temp *b = &bwd_temps[i];
        struct rg_spec s = {0};
        if (b->bop != bop || (b->need & p->features) != b->need || (b->skip & p->features))
            continue;
        s.kind = TENSOR_TEMP;
        s.cat = CAT_TEMPS;
        s.dtype = b->f32 ? DT_F32 : p->compute;
        s.rank = b->rank;
        s.dims = b->dims;
        s.axes = b->axes;
        s.layer = p->layer;
        s.block = bop == BOP_MLP ? RB_MLP : RB_ATTN;
        (void)rg_tensor(g, &s, "%s.%s%s", p->name, b->name, p->suffix);
    }
}

/* The hidden state's spec ([batch, length, embed] at the compute dtype), for the gradients
 * that flow between layers. */
void recipe_hidden_spec(const struct recipe_pass *p, uint8_t kind, uint8_t cat, struct rg_spec *s)
{
    recipe_act_spec(p, A_X, false, s);
    s->kind = kind;
    s->cat = cat;
}
