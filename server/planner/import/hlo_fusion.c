/*
 * hlo_fusion.c - which values of a before-optimization computation XLA's fusion passes fuse
 * away (hlo_compile_int.h), and the fused graph the scheduler orders.
 *
 * XLA:TPU's fusion passes are not public; the rules are those of the public passes, which
 * share one base (openxla/xla at 9a77a882, the lines cited as they stand there):
 * - Producer and consumer: a producer is fused into a consumer that reads it; a value is
 *   fused away (no buffer) only when every reader fuses it, since InstructionFusion::Run
 *   (xla/service/instruction_fusion.cc:602-760) fuses edges and removes a producer once it
 *   has no user left.
 * - Loop fusion: the opcodes the elemental emitters fuse, as producer and as consumer:
 *   elementwise ops, broadcast, concatenate, dynamic-slice, dynamic-update-slice, gather, iota,
 *   pad, reshape, reverse, slice, transpose, copy (xla/service/cpu/cpu_instruction_fusion.cc:
 *   40-55 CanBeLoopFused; xla/service/gpu/gpu_fusible.cc:381-430 IsUniversallyLoopFusible and
 *   IsLoopFusibleAsProducer); constants only when effectively scalar (cpu_instruction_fusion.cc:
 *   164-167). Not into a bitcast (xla/service/gpu/transforms/priority_fusion.cc:790-796), and
 *   never the computation's ROOT (instruction_fusion.cc:1120-1124).
 * - Input fusion: a loop-fusible producer fused into a reduce or reduce-window
 *   (gpu_fusible.cc:158-172 IsInputFusibleReduction; CanBeLoopFused lists kReduce). A
 *   reduction's own result stays a buffer (priority_fusion.cc:829-842: fusing into a
 *   reduction's output would turn it into a loop fusion).
 * - Output fusion: a dot or convolution whose one user is elementwise of the same shape
 *   (a bias add, an activation) is fused into it (cpu_instruction_fusion.cc:57-81
 *   CanBeOutputFused; XLA:TPU's kOutput fusions hold a convolution and its elementwise
 *   epilogue). Wider than the CPU rule (an add of a matrix-vector dot): an assumption.
 * - Duplication: a producer read by several consumers is copied into each (cheap), unless it
 *   is expensive (instruction_fusion.cc:94-255 IsExpensive) and not always duplicable
 *   (broadcast, a widening convert: instruction_fusion.cc:83-91); then it keeps its buffer
 *   (instruction_fusion.cc:1124-1133).
 * - In place: the updated operand (operand 0) of a dynamic-update-slice is not fused into it
 *   (instruction_fusion.cc:935-1105 ShouldFuseInPlaceOp keeps the update in place).
 * Left out: fusion size limits (gpu_fusible.cc:653-751), multi-output fusion, the cost model's
 * choices. Both only keep more values as buffers than these rules do.
 */
#include <stdlib.h>
#include <string.h>

#include "planner/import/hlo_compile_int.h"
#include "planner/shape.h"

/* Producers visited building the external operand lists, per instruction: past it,
 * duplicated producers stay unfused (hlo_graph_build). */
#define FUSION_WORK_PER_INSTR 16

static bool op_is(const struct hlo_module *h, const struct hlo_instr *in, const char *w)
{
    return hlo_span_is(h, in->opcode, w);
}

static bool op_in(const struct hlo_module *h, const struct hlo_instr *in, const char *const *list)
{
    for (; *list != NULL; list++)
        if (op_is(h, in, *list))
            return true;
    return false;
}

static const char *const ALIAS_OPS[] = {"tuple",       "get-tuple-element",    "bitcast",
                                        "opt-barrier", "optimization-barrier", "add-dependency",
                                        NULL};

/* Elementwise opcodes (xla/hlo/ir/hlo_instruction.cc IsElementwiseImpl). */
static const char *const ELEMENTWISE[] = {"abs",
                                          "add",
                                          "and",
                                          "atan2",
                                          "bitcast-convert",
                                          "cbrt",
                                          "ceil",
                                          "clamp",
                                          "compare",
                                          "convert",
                                          "cosine",
                                          "divide",
                                          "erf",
                                          "exponential",
                                          "exponential-minus-one",
                                          "floor",
                                          "imag",
                                          "is-finite",
                                          "log",
                                          "log-plus-one",
                                          "logistic",
                                          "maximum",
                                          "minimum",
                                          "multiply",
                                          "negate",
                                          "not",
                                          "or",
                                          "popcnt",
                                          "power",
                                          "real",
                                          "reduce-precision",
                                          "remainder",
                                          "round-nearest-afz",
                                          "round-nearest-even",
                                          "rsqrt",
                                          "select",
                                          "shift-left",
                                          "shift-right-arithmetic",
                                          "shift-right-logical",
                                          "sign",
                                          "sine",
                                          "sqrt",
                                          "stochastic-convert",
                                          "subtract",
                                          "tan",
                                          "tanh",
                                          "xor",
                                          NULL};

/* The other loop-fusible opcodes (CanBeLoopFused, IsUniversallyLoopFusible). */
static const char *const LOOP_OTHER[] = {"broadcast", "concatenate", "dynamic-slice", "gather",
                                         "iota",      "pad",         "reshape",       "reverse",
                                         "slice",     "transpose",   "copy",          NULL};

/* Expensive elementwise ops (IsExpensive, instruction_fusion.cc:94-255); divide and
 * remainder are cheap only on integers by a constant, which hlo_expensive checks. */
static const char *const EXPENSIVE[] = {"atan2",       "erf",
                                        "exponential", "exponential-minus-one",
                                        "log",         "log-plus-one",
                                        "logistic",    "power",
                                        "rsqrt",       "sqrt",
                                        "cbrt",        "tanh",
                                        "gather",      NULL};

static const char *const REDUCTIONS[] = {"reduce", "reduce-window", NULL};
static const char *const CONTRACTIONS[] = {"dot", "convolution", NULL};

bool hlo_is_elementwise(const struct hlo_module *h, const struct hlo_instr *in)
{
    return op_in(h, in, ELEMENTWISE);
}

bool hlo_is_alias_op(const struct hlo_module *h, const struct hlo_instr *in)
{
    return op_in(h, in, ALIAS_OPS);
}

const char *hlo_sched_name(enum hlo_sched s)
{
    static const char *const names[HLO_SCHED_N] = {"list", "dfs", "post-order", "text"};
    return (unsigned)s < HLO_SCHED_N ? names[s] : "?";
}

static bool leaf_parse(const struct hlo_module *h, uint32_t leaf, struct shape *sh)
{
    struct err e;
    const struct hlo_leaf *l = &h->leaves[leaf];
    return shape_parse(h->text + l->shape.off, l->shape.len, sh, &e) == ERR_OK;
}

static bool effective_scalar(const struct hlo_module *h, const struct hlo_instr *in)
{
    struct shape sh;

    if (in->tuple_shaped || in->nleaves != 1 || !leaf_parse(h, in->leaf0, &sh))
        return false;
    for (unsigned d = 0; d < sh.rank; d++)
        if (sh.dims[d] != 1)
            return false;
    return true;
}

static bool tiled(const struct hlo_module *h, const struct hlo_leaf *l)
{
    const char *s = h->text + l->shape.off;
    for (uint32_t k = 0; k + 1 < l->shape.len; k++)
        if (s[k] == ':' && s[k + 1] == 'T')
            return true;
    return false;
}

bool hlo_before_optimization(const struct hlo_module *h)
{
    if (h->scheduled)
        return false;
    for (uint32_t i = 0; i < h->ninstrs; i++)
        if (op_is(h, &h->instrs[i], "fusion"))
            return false;
    for (uint32_t l = 0; l < h->nleaves; l++)
        if (tiled(h, &h->leaves[l]))
            return false;
    return true;
}

static const struct hlo_instr *operand(const struct hlo_module *h, const struct hlo_instr *in,
                                       uint32_t q)
{
    return &h->instrs[h->idx[in->opnd0 + q]];
}

static bool integral(const struct hlo_module *h, const struct hlo_instr *in)
{
    struct shape sh;
    return in->nleaves == 1 && leaf_parse(h, in->leaf0, &sh) && sh.dtype >= DT_S2 &&
           sh.dtype <= DT_U64; /* the signed and unsigned integers (dtype.h) */
}

static bool expensive(const struct hlo_module *h, const struct hlo_instr *in)
{
    if (op_is(h, in, "divide") || op_is(h, in, "remainder")) {
        const struct hlo_instr *d = in->nopnds == 2 ? operand(h, in, 1) : NULL;
        if (d != NULL && op_is(h, d, "broadcast") && d->nopnds == 1)
            d = operand(h, d, 0);
        return !integral(h, in) || d == NULL || !op_is(h, d, "constant") || !effective_scalar(h, d);
    }
    return op_in(h, in, EXPENSIVE);
}

/* A widening convert or a broadcast: XLA copies it into every consumer. */
static bool always_duplicable(const struct hlo_module *h, const struct hlo_instr *in)
{
    struct shape a, b;

    if (op_is(h, in, "broadcast"))
        return true;
    if (!op_is(h, in, "convert") || in->nopnds != 1 || in->nleaves != 1)
        return false;
    const struct hlo_instr *o = operand(h, in, 0);
    return o->nleaves == 1 && leaf_parse(h, o->leaf0, &a) && leaf_parse(h, in->leaf0, &b) &&
           dtype_bits(a.dtype) < dtype_bits(b.dtype);
}

static bool loop_fusible(const struct hlo_module *h, const struct hlo_instr *in)
{
    return !in->tuple_shaped && (op_in(h, in, ELEMENTWISE) || op_in(h, in, LOOP_OTHER));
}

static bool same_dims(const struct hlo_module *h, const struct hlo_instr *a,
                      const struct hlo_instr *b)
{
    struct shape x, y;

    if (a->nleaves != 1 || b->nleaves != 1 || !leaf_parse(h, a->leaf0, &x) ||
        !leaf_parse(h, b->leaf0, &y) || x.rank != y.rank)
        return false;
    return memcmp(x.dims, y.dims, x.rank * sizeof(x.dims[0])) == 0;
}

/* How consumer u may take producer p in as its operand q: HLO_FUSE_NONE when it may not. */
static enum hlo_fuse absorbs(const struct hlo_module *h, const struct hlo_instr *p,
                             const struct hlo_instr *u, uint32_t q)
{
    if (op_is(h, u, "dynamic-update-slice") && q == 0)
        return HLO_FUSE_NONE;
    if (op_in(h, u, REDUCTIONS))
        return HLO_FUSE_INPUT;
    if (loop_fusible(h, u) || op_is(h, u, "dynamic-update-slice"))
        return HLO_FUSE_LOOP;
    (void)p;
    return HLO_FUSE_NONE;
}

/* The users of each instruction of the computation (CSR over the local indices; a user
 * reading it twice is listed twice). */
static int users_build(const struct hlo_graph *g, uint32_t **u0, uint32_t **u, struct err *e)
{
    const struct hlo_module *h = g->h;
    uint32_t total = 0, *fill;

    *u0 = calloc((size_t)g->n + 1, sizeof(**u0));
    fill = calloc((size_t)g->n + 1, sizeof(*fill));
    if (*u0 == NULL || fill == NULL)
        goto nomem;
    for (uint32_t k = 0; k < g->n; k++) {
        const struct hlo_instr *in = &h->instrs[g->first + k];
        for (uint32_t q = 0; q < in->nopnds; q++)
            (*u0)[h->idx[in->opnd0 + q] - g->first + 1]++;
        total += in->nopnds;
    }
    for (uint32_t k = 0; k < g->n; k++)
        (*u0)[k + 1] += (*u0)[k];
    if ((*u = malloc((total ? total : 1) * sizeof(**u))) == NULL)
        goto nomem;
    for (uint32_t k = 0; k < g->n; k++) {
        const struct hlo_instr *in = &h->instrs[g->first + k];
        for (uint32_t q = 0; q < in->nopnds; q++) {
            uint32_t o = h->idx[in->opnd0 + q] - g->first;
            (*u)[(*u0)[o] + fill[o]++] = k;
        }
    }
    free(fill);
    return ERR_OK;
nomem:
    free(fill);
    return err_set(e, ERR_NOMEM, "", "out of memory modelling HLO fusion");
}

/* Whether p (local k) is fused away, and how; dup: duplicated producers may be. */
static enum hlo_fuse decide(const struct hlo_graph *g, uint32_t k, const uint32_t *u0,
                            const uint32_t *u, bool dup)
{
    const struct hlo_module *h = g->h;
    const struct hlo_instr *p = &h->instrs[g->first + k];
    const struct hlo_comp *cp = &h->comps[g->comp];
    uint32_t nusers = u0[k + 1] - u0[k];
    enum hlo_fuse kind = HLO_FUSE_LOOP;

    if (nusers == 0 || g->first + k == cp->root || p->tuple_shaped || p->nleaves != 1)
        return HLO_FUSE_NONE;
    if (op_in(h, p, CONTRACTIONS)) { /* output fusion */
        const struct hlo_instr *c = &h->instrs[g->first + u[u0[k]]];
        return nusers == 1 && op_in(h, c, ELEMENTWISE) && same_dims(h, p, c) ? HLO_FUSE_OUTPUT
                                                                             : HLO_FUSE_NONE;
    }
    if (op_is(h, p, "constant") ? !effective_scalar(h, p) : !loop_fusible(h, p))
        return HLO_FUSE_NONE;
    if (nusers > 1 && (!dup || (expensive(h, p) && !always_duplicable(h, p))))
        return HLO_FUSE_NONE;
    for (uint32_t j = u0[k]; j < u0[k + 1]; j++) {
        const struct hlo_instr *c = &h->instrs[g->first + u[j]];
        enum hlo_fuse f = HLO_FUSE_NONE;
        for (uint32_t q = 0; q < c->nopnds; q++)
            if (h->idx[c->opnd0 + q] == g->first + k && (f = absorbs(h, p, c, q)) == HLO_FUSE_NONE)
                return HLO_FUSE_NONE;
        if (f == HLO_FUSE_INPUT)
            kind = HLO_FUSE_INPUT;
    }
    return kind;
}

/* The external operands of kept instruction k, appended to ext (stamp marks those taken
 * and the fused producers walked for k). False when the work bound runs out. */
static bool gather_ext(const struct hlo_graph *g, uint32_t k, uint32_t *stack, uint32_t *stamp,
                       uint32_t *ext, uint32_t *next, size_t *work)
{
    const struct hlo_module *h = g->h;
    uint32_t top = 0;

    stack[top++] = k;
    while (top > 0) {
        const struct hlo_instr *in = &h->instrs[g->first + stack[--top]];
        for (uint32_t q = 0; q < in->nopnds; q++) {
            uint32_t o = h->idx[in->opnd0 + q] - g->first;
            if (stamp[o] == k + 1)
                continue;
            stamp[o] = k + 1;
            if (g->fuse[o] != HLO_FUSE_NONE) {
                if ((*work)-- == 0)
                    return false;
                stack[top++] = o; /* each fused producer once per k: top < n */
            } else {
                ext[(*next)++] = o;
            }
        }
    }
    return true;
}

/* The kept instructions' external operands (opnd0/opnd) and their users (user0/user). */
static int lists_build(struct hlo_graph *g, bool *done, struct err *e)
{
    size_t work = (size_t)g->n * FUSION_WORK_PER_INSTR + 1024, cap = 0;
    uint32_t *stack = malloc(((size_t)g->n + 1) * sizeof(*stack));
    uint32_t *stamp = calloc((size_t)g->n + 1, sizeof(*stamp)), *fill = NULL, next = 0;
    int rc = ERR_OK;

    *done = false;
    g->opnd0 = calloc((size_t)g->n + 1, sizeof(*g->opnd0));
    g->user0 = calloc((size_t)g->n + 1, sizeof(*g->user0));
    for (uint32_t k = 0; k < g->n; k++)
        cap += g->h->instrs[g->first + k].nopnds;
    g->opnd = malloc((cap + g->n + 1) * sizeof(*g->opnd)); /* each operand leads to one
                                                            * external operand at most */
    if (stack == NULL || stamp == NULL || g->opnd0 == NULL || g->user0 == NULL || g->opnd == NULL)
        goto nomem;
    for (uint32_t k = 0; k < g->n; k++) {
        g->opnd0[k] = next;
        if (g->fuse[k] == HLO_FUSE_NONE && !gather_ext(g, k, stack, stamp, g->opnd, &next, &work))
            goto out; /* *done false: the caller decides again without duplication */
    }
    g->opnd0[g->n] = next;
    for (uint32_t j = 0; j < next; j++)
        g->user0[g->opnd[j] + 1]++;
    for (uint32_t k = 0; k < g->n; k++)
        g->user0[k + 1] += g->user0[k];
    g->user = malloc((next ? next : 1) * sizeof(*g->user));
    fill = calloc((size_t)g->n + 1, sizeof(*fill));
    if (g->user == NULL || fill == NULL)
        goto nomem;
    for (uint32_t k = 0; k < g->n; k++)
        for (uint32_t j = g->opnd0[k]; j < g->opnd0[k + 1]; j++)
            g->user[g->user0[g->opnd[j]] + fill[g->opnd[j]]++] = k;
    *done = true;
    goto out;
nomem:
    rc = err_set(e, ERR_NOMEM, "", "out of memory modelling HLO fusion");
out:
    free(stack);
    free(stamp);
    free(fill);
    return rc;
}

void hlo_graph_free(struct hlo_graph *g)
{
    free(g->fuse);
    free(g->opnd0);
    free(g->opnd);
    free(g->user0);
    free(g->user);
    memset(g, 0, sizeof(*g));
}

static void lists_free(struct hlo_graph *g)
{
    free(g->opnd0);
    free(g->opnd);
    free(g->user0);
    free(g->user);
    g->opnd0 = g->opnd = g->user0 = g->user = NULL;
}

int hlo_graph_build(const struct hlo_module *h, uint32_t comp, bool fusion, struct hlo_graph *g,
                    struct err *e)
{
    uint32_t *u0 = NULL, *u = NULL;
    bool done = false;
    int rc;

    memset(g, 0, sizeof(*g));
    g->h = h;
    g->comp = comp;
    g->first = h->comps[comp].first;
    g->n = h->comps[comp].n;
    if ((g->fuse = calloc((size_t)g->n + 1, 1)) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory modelling HLO fusion");
    if (fusion && (rc = users_build(g, &u0, &u, e)) != ERR_OK)
        goto out;
    for (int pass = 0; pass < 2 && !done; pass++) {
        memset(g->fused, 0, sizeof(g->fused));
        for (uint32_t k = g->n; u0 != NULL && u != NULL && k-- > 0;) {
            g->fuse[k] = (uint8_t)decide(g, k, u0, u, pass == 0);
            g->fused[g->fuse[k]]++;
        }
        lists_free(g);
        if ((rc = lists_build(g, &done, e)) != ERR_OK)
            goto out;
    }
    if (!done)
        rc = err_set(e, ERR_INTERNAL, "", "HLO fusion lists past their bound");
out:
    free(u0);
    free(u);
    if (rc != ERR_OK)
        hlo_graph_free(g);
    return rc;
}
