/*
 * hlo_model.c - the buffer rules of hlo_model.h: a walk over one computation in program
 * order gives its buffers and lifetimes; the entry's become model tensors, a called
 * computation's give the peak that sizes its caller's temp.
 */
#include "planner/hlo_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/cursor.h"
#include "planner/import/hlo_compile_int.h"
#include "planner/import/hlo_program_int.h"
#include "planner/layout.h"
#include "planner/model/model_build.h"
#include "planner/text.h"

#define HLO_MAX_CALL_DEPTH 64

struct buf {
    uint32_t instr; /* defining instruction */
    uint32_t leaf;  /* its leaf; HLO_NONE for a call's temp */
    uint32_t rep;   /* the buffer it is merged into (itself when not merged) */
    int64_t def, last, end;
    uint64_t temp_bytes;
    uint32_t written_by; /* 1 + the instruction last written into it in place, 0 if none */
    enum tensor_kind kind;
    bool output, donated, excluded;
};

/* One computation's buffers. vmap: for each leaf of its instructions, the buffer that
 * holds it (HLO_NONE: the caller's, or not a buffer). */
struct walk {
    uint32_t comp, leaf0;
    struct buf *b;
    uint32_t n, cap;
    uint32_t *vmap;
    size_t inplace, excluded;
    int64_t nsteps;            /* kept instructions: the program's steps */
    const struct hlo_graph *g; /* the fused graph it was walked over */
};

struct ctx {
    const struct hlo_module *h;
    const struct chip *chip;
    struct err *e;
    uint64_t *peak; /* per computation */
    uint8_t *state; /* 0 not planned, 1 being planned, 2 planned */
    unsigned depth;
    bool estimate;   /* the compiler's reading (hlo_model.h): fused, scheduled, laid out */
    bool text_order; /* ... but in the written order */
    size_t fused[HLO_FUSE_COUNT], relaid;
    struct hlo_order entry_order; /* the entry's schedule: its chosen one and peaks */
    int8_t *space;                /* per leaf: its memory space (hlo_leaf_spaces) */
    struct hlo_program prog;      /* stage and partitioning (hlo_program_int.h) */
};

static int walk_comp(struct ctx *c, uint32_t comp, bool entry, struct walk *w);

static const struct hlo_instr *ins(const struct ctx *c, uint32_t i)
{
    return &c->h->instrs[i];
}

static bool op_is(const struct ctx *c, const struct hlo_instr *in, const char *w)
{
    return hlo_span_is(c->h, in->opcode, w);
}

static bool op_in(const struct ctx *c, const struct hlo_instr *in, const char *const *list)
{
    for (; *list != NULL; list++)
        if (op_is(c, in, *list))
            return true;
    return false;
}

static const char *const ALIAS_OPS[] = {"tuple",       "get-tuple-element",    "bitcast",
                                        "opt-barrier", "optimization-barrier", "add-dependency",
                                        NULL};
static const char *const CALL_OPS[] = {"while", "conditional", "call", NULL};

static uint32_t find(const struct walk *w, uint32_t b)
{
    while (w->b[b].rep != b)
        b = w->b[b].rep;
    return b;
}

static int new_buf(struct ctx *c, struct walk *w, uint32_t instr, uint32_t leaf, int64_t step,
                   enum tensor_kind kind, uint32_t *id)
{
    struct buf *b;

    if (w->n == w->cap) /* walk_comp sized b for one buffer per leaf and per call */
        return err_set(c->e, ERR_INTERNAL, "", "HLO buffer count past its bound");
    b = &w->b[w->n];
    memset(b, 0, sizeof(*b));
    b->instr = instr;
    b->leaf = leaf;
    b->rep = w->n;
    b->def = b->last = step;
    b->kind = kind;
    if (leaf != HLO_NONE && c->space[leaf] != HLO_SPACE_HBM) {
        b->excluded = true;
        w->excluded++;
    }
    *id = w->n++;
    return ERR_OK;
}

/* The contiguous leaves of operand o's tuple element k (get-tuple-element). */
static bool element_range(const struct ctx *c, const struct hlo_instr *o, int64_t k, uint32_t *from,
                          uint32_t *n)
{
    *from = HLO_NONE;
    *n = 0;
    if (!o->tuple_shaped)
        return false;
    for (uint32_t q = 0; q < o->nleaves; q++) {
        const struct hlo_leaf *l = &c->h->leaves[o->leaf0 + q];
        if (l->depth > 0 && l->path[0] == (uint64_t)k) {
            if (*from == HLO_NONE)
                *from = q;
            (*n)++;
        }
    }
    return true;
}

/* tuple, get-tuple-element and the pass-through ops: the result's leaves are operand
 * leaves' buffers. */
static int alias_leaves(struct ctx *c, struct walk *w, const struct hlo_instr *in)
{
    uint32_t *dst = w->vmap + (in->leaf0 - w->leaf0);
    uint32_t got = 0;

    if (op_is(c, in, "tuple")) {
        for (uint32_t q = 0; q < in->nopnds; q++) {
            const struct hlo_instr *o = ins(c, c->h->idx[in->opnd0 + q]);
            if (got + o->nleaves > in->nleaves)
                break;
            memcpy(dst + got, w->vmap + (o->leaf0 - w->leaf0), o->nleaves * sizeof(*dst));
            got += o->nleaves;
        }
    } else if (in->nopnds > 0) {
        const struct hlo_instr *o = ins(c, c->h->idx[in->opnd0]);
        uint32_t from = 0, n = o->nleaves;
        if (op_is(c, in, "get-tuple-element") && !element_range(c, o, in->index, &from, &n))
            return cursor_fail_at(c->e, in->line, in->col,
                                  "get-tuple-element of %.*s, which is not a tuple",
                                  (int)o->name.len, c->h->text + o->name.off);
        if (n == in->nleaves)
            memcpy(dst, w->vmap + (o->leaf0 - w->leaf0) + from, n * sizeof(*dst));
        got = n;
    }
    if (got != in->nleaves)
        return cursor_fail_at(c->e, in->line, in->col,
                              "%.*s has %u array leaves but its operands give %u",
                              (int)in->opcode.len, c->h->text + in->opcode.off, in->nleaves, got);
    return ERR_OK;
}

/* The peak of a called computation's own buffers (planned recursively, once). */
static int callee_peak(struct ctx *c, uint32_t comp, const struct hlo_instr *caller, uint64_t *out)
{
    struct walk w;
    int rc;

    if (c->state[comp] == 2) {
        *out = c->peak[comp];
        return ERR_OK;
    }
    if (c->state[comp] == 1)
        return cursor_fail_at(c->e, caller->line, caller->col, "computation %.*s calls itself",
                              (int)c->h->comps[comp].name.len,
                              c->h->text + c->h->comps[comp].name.off);
    if (c->depth == HLO_MAX_CALL_DEPTH)
        return err_set(c->e, ERR_LIMIT, "", "line %u: calls nested more than %d deep", caller->line,
                       HLO_MAX_CALL_DEPTH);
    c->state[comp] = 1;
    c->depth++;
    rc = walk_comp(c, comp, false, &w);
    c->depth--;
    if (rc == ERR_OK) {
        c->state[comp] = 2;
        *out = c->peak[comp];
    }
    free(w.b);
    free(w.vmap);
    return rc;
}

/* The leaf of instruction in at tuple index path[0..depth), or HLO_NONE. */
static uint32_t leaf_at(const struct ctx *c, const struct hlo_instr *in, const uint32_t *path,
                        unsigned depth)
{
    for (uint32_t q = 0; q < in->nleaves; q++) {
        const struct hlo_leaf *l = &c->h->leaves[in->leaf0 + q];
        if (l->depth == depth && memcmp(l->path, path, depth * sizeof(*path)) == 0)
            return in->leaf0 + q;
    }
    return HLO_NONE;
}

/* The leaf at path[0..depth) of in's operand q, or HLO_NONE. */
static uint32_t operand_leaf(const struct ctx *c, const struct hlo_instr *in, uint32_t q,
                             const uint32_t *path, unsigned depth)
{
    if (q >= in->nopnds)
        return HLO_NONE;
    return leaf_at(c, ins(c, c->h->idx[in->opnd0 + q]), path, depth);
}

static const char *const DONE_OF_ELEMENT_1[] = {"copy-done", "all-gather-done",
                                                "collective-permute-done", NULL};

/* Asynchronous pairs: the leaf of an operand that result leaf k of in forwards (the same
 * value, no buffer of its own), or HLO_NONE when in defines it. From openxla/xla
 * hlo_dataflow_analysis.cc, InitializeInstructionValueSets (which indices a start or done
 * defines) and the Update*ValueSet handlers (where the others come from):
 * - copy-start is (destination, operand, context): {1} is operand 0 (UpdateCopyStartValueSet);
 *   copy-done is its {0}, the destination (UpdateCopyDoneValueSet);
 * - all-gather-start and collective-permute-start are ({operands}, {destinations}, contexts):
 *   {0} is operand 0, or {0,i} operand i when there are several (UpdateAllGatherStartValueSet,
 *   UpdateCollectivePermuteStartValueSet; a 4-operand in-place collective-permute-start
 *   forwards operand 0 and writes {1} into operand 1, see in_place_operand);
 * - async-start is ({operands}, {results}, contexts): {0,i,..} is operand i
 *   (UpdateAsyncStartValueSet); async-update forwards its operand whole (async-start,
 *   -update and -done also under XLA's sugar, call-start, fusion-done, ...: hlo.h);
 * - all-gather-done, collective-permute-done and async-done are their operand's {1}
 *   (UpdateAllGatherDoneValueSet, UpdateCollectivePermuteDoneValueSet, UpdateAsyncDoneValueSet);
 *   all-reduce-done is its operand (UpdateAllReduceDoneValueSet).
 * The rest of a start (destinations, contexts) is new memory, live from the start through the
 * done and the done's readers: the overlap an asynchronous pair costs. */
static uint32_t forwarded(const struct ctx *c, const struct hlo_instr *in, uint32_t k)
{
    const struct hlo_leaf *l = &c->h->leaves[in->leaf0 + k];
    unsigned d = in->tuple_shaped ? l->depth : 0;
    uint32_t path[HLO_MAX_TUPLE_DEPTH];

    if (op_is(c, in, "copy-start"))
        return d == 1 && l->path[0] == 1 ? operand_leaf(c, in, 0, path, 0) : HLO_NONE;
    if (op_is(c, in, "all-reduce-done") || in->async == HLO_ASYNC_UPDATE)
        return operand_leaf(c, in, 0, l->path, d);
    if ((op_in(c, in, DONE_OF_ELEMENT_1) || in->async == HLO_ASYNC_DONE) &&
        d < HLO_MAX_TUPLE_DEPTH) {
        path[0] = op_is(c, in, "copy-done") ? 0 : 1;
        memcpy(path + 1, l->path, d * sizeof(*path));
        return operand_leaf(c, in, 0, path, d + 1);
    }
    if (d == 0 || l->path[0] != 0)
        return HLO_NONE;
    if (in->async == HLO_ASYNC_START)
        return d >= 2 ? operand_leaf(c, in, l->path[1], l->path + 2, d - 2) : HLO_NONE;
    if (op_is(c, in, "all-gather-start") || op_is(c, in, "collective-permute-start")) {
        if (in->nopnds == 1 || (op_is(c, in, "collective-permute-start") && in->nopnds == 4))
            return operand_leaf(c, in, 0, l->path + 1, d - 1);
        return d >= 2 ? operand_leaf(c, in, l->path[1], l->path + 2, d - 2) : HLO_NONE;
    }
    return HLO_NONE;
}

/* Instruction in reads its operands' buffers at step (a fused one: at its consumer's). */
static void read_operands(const struct ctx *c, struct walk *w, const struct hlo_instr *in,
                          int64_t step)
{
    for (uint32_t q = 0; q < in->nopnds; q++) {
        const struct hlo_instr *o = ins(c, c->h->idx[in->opnd0 + q]);
        for (uint32_t l = 0; l < o->nleaves; l++) {
            uint32_t b = w->vmap[o->leaf0 - w->leaf0 + l];
            if (b != HLO_NONE)
                w->b[b].last = step;
        }
    }
}

/* An instruction that defines memory: its reads, its buffers, a call's temp. */
static int define(struct ctx *c, struct walk *w, uint32_t i, int64_t step, bool entry)
{
    const struct hlo_instr *in = ins(c, i);
    enum tensor_kind kind = TENSOR_TEMP;
    uint32_t id = 0;
    int rc;

    read_operands(c, w, in, step);
    if (op_is(c, in, "parameter")) {
        if (!entry)
            return ERR_OK; /* the caller's operand */
        kind = TENSOR_INPUT;
    } else if (op_is(c, in, "constant")) {
        kind = TENSOR_CONSTANT;
    }
    for (uint32_t l = 0; l < in->nleaves; l++) {
        uint32_t src = forwarded(c, in, l);
        if (src != HLO_NONE) { /* the operand's buffer (HLO_NONE: the caller's) */
            w->vmap[in->leaf0 - w->leaf0 + l] = w->vmap[src - w->leaf0];
            continue;
        }
        if ((rc = new_buf(c, w, i, in->leaf0 + l, kind == TENSOR_INPUT ? 0 : step, kind, &id)) !=
            ERR_OK)
            return rc;
        w->vmap[in->leaf0 - w->leaf0 + l] = id;
    }
    if (op_in(c, in, CALL_OPS)) {
        uint64_t bytes = 0;
        for (uint32_t q = 0; q < in->ncalls; q++) {
            uint64_t p = 0;
            if ((rc = callee_peak(c, c->h->idx[in->call0 + q], in, &p)) != ERR_OK)
                return rc;
            bytes = p > bytes ? p : bytes;
        }
        if (bytes == 0)
            return ERR_OK; /* the callees hold nothing of their own */
        if ((rc = new_buf(c, w, i, HLO_NONE, step, TENSOR_TEMP, &id)) != ERR_OK)
            return rc;
        w->b[id].temp_bytes = bytes;
    }
    return ERR_OK;
}

/* A loop fusion whose fused computation only maps elements. */
static bool elementwise_fusion(const struct ctx *c, const struct hlo_instr *in)
{
    static const char *const extra[] = {"parameter", "constant", "broadcast", NULL};
    const struct hlo_comp *f;

    if (!op_is(c, in, "fusion") || !hlo_span_is(c->h, in->kind, "kLoop") || in->ncalls != 1)
        return false;
    f = &c->h->comps[c->h->idx[in->call0]];
    for (uint32_t k = 0; k < f->n; k++) {
        const struct hlo_instr *x = ins(c, f->first + k);
        if (!hlo_is_elementwise(c->h, x) && !op_in(c, x, extra))
            return false;
    }
    return true;
}

static bool same_shape_text(const struct ctx *c, uint32_t la, uint32_t lb)
{
    struct hlo_span a = c->h->leaves[la].shape, b = c->h->leaves[lb].shape;
    return a.len == b.len && memcmp(c->h->text + a.off, c->h->text + b.off, a.len) == 0;
}

/* The representative of buffer x when its value dies at step for the user at that step, so
 * that the user may write into it: a temp (neither a parameter, which the caller or the
 * program holds, nor a constant, which XLA never overwrites: hlo_dataflow_analysis.cc
 * CanShareOperandBufferWithUser), not an output, in HBM, read for the last time at step (the
 * heap simulator reuses only an operand that dies there:
 * server/planner/SOURCES.md#heap-simulator). HLO_NONE otherwise. */
static uint32_t dies_for(const struct walk *w, uint32_t x, int64_t step)
{
    uint32_t r;

    if (x == HLO_NONE)
        return HLO_NONE;
    r = find(w, x);
    if (w->b[r].kind != TENSOR_TEMP || w->b[r].output || w->b[r].excluded || w->b[r].end != step)
        return HLO_NONE;
    return r;
}

/* Buffer mine becomes part of representative r: one block of memory from r's definition to
 * the later of their ends, an output if either is. */
static void merge_into(struct walk *w, uint32_t mine, uint32_t r)
{
    w->b[mine].rep = r;
    w->b[r].end = w->b[mine].end > w->b[r].end ? w->b[mine].end : w->b[r].end;
    w->b[r].output |= w->b[mine].output;
    w->inplace++;
}

/* Writes result leaf rl (module-wide) of instruction i into the buffer of operand leaf ol
 * when that operand's value dies at step and has the same shape and layout. */
static bool reuse(const struct ctx *c, struct walk *w, uint32_t i, uint32_t rl, uint32_t ol,
                  int64_t step)
{
    uint32_t mine = w->vmap[rl - w->leaf0], x, r;

    /* only a buffer this instruction defines (not one it forwards) */
    if (mine == HLO_NONE || w->b[mine].instr != i || w->b[mine].rep != mine || w->b[mine].excluded)
        return false;
    x = w->vmap[ol - w->leaf0];
    /* one result leaf per buffer: tuple(b, b) into a while gives one leaf a buffer of its own */
    if ((r = dies_for(w, x, step)) == HLO_NONE || w->b[r].written_by == i + 1 ||
        !same_shape_text(c, w->b[x].leaf, rl))
        return false;
    merge_into(w, mine, r);
    w->b[r].written_by = i + 1;
    return true;
}

/* XLA's while keeps its loop state in one set of buffers: the init operand's leaves, the
 * body's and the condition's parameter, the body's ROOT and the while's result all alias
 * (openxla/xla hlo_dataflow_analysis.cc UpdateWhileValueSet and UpdateParameterValueSet,
 * merged into one HloBuffer by hlo_alias_analysis.cc; test HloAliasAnalysisTest.SingleWhile).
 * Each result leaf is written into its init leaf's buffer when that value dies at the while;
 * otherwise (a parameter, a constant, a value read later) copy insertion gives the loop a
 * copy of its own, which is the result's buffer. */
static void while_in_place(const struct ctx *c, struct walk *w, uint32_t i, int64_t step)
{
    const struct hlo_instr *in = ins(c, i);
    const struct hlo_instr *o;

    if (in->nopnds == 0) /* operands after the first are values a StableHLO body captures */
        return;
    o = ins(c, c->h->idx[in->opnd0]);
    if (o->nleaves != in->nleaves)
        return;
    for (uint32_t l = 0; l < in->nleaves; l++)
        (void)reuse(c, w, i, in->leaf0 + l, o->leaf0 + l, step);
}

/* Follows tuple and get-tuple-element back from instruction *x at index path[0..*depth) to
 * the instruction that defines that value (openxla/xla FollowTupleIndirection: tuples first,
 * then get-tuple-elements). False when the path grows past HLO_MAX_TUPLE_DEPTH. */
static bool follow_tuples(const struct ctx *c, const struct hlo_instr **x, uint32_t *path,
                          unsigned *depth)
{
    while (op_is(c, *x, "tuple") && *depth > 0) {
        if (path[0] >= (*x)->nopnds)
            return false;
        *x = ins(c, c->h->idx[(*x)->opnd0 + path[0]]);
        memmove(path, path + 1, --*depth * sizeof(*path));
    }
    while (op_is(c, *x, "get-tuple-element") && (*x)->nopnds > 0) {
        if (*depth == HLO_MAX_TUPLE_DEPTH || (*x)->index < 0 || (*x)->index > (int64_t)UINT32_MAX)
            return false;
        memmove(path + 1, path, (*depth)++ * sizeof(*path));
        path[0] = (uint32_t)(*x)->index;
        *x = ins(c, c->h->idx[(*x)->opnd0]);
    }
    return true;
}

/* A fusion that updates an operand in place: result leaf k's source in the fused computation
 * (its ROOT, through a ROOT tuple) is a dynamic-update-slice or a scatter whose updated operand
 * is, through tuples and one bitcast, a fusion parameter. The fusion's operand leaf that the
 * parameter stands for, or HLO_NONE (openxla/xla hlo_dataflow_analysis.cc
 * GetFusionInstructionInPlaceInputOutputPairs; alias_info.cc in current XLA, which skips the
 * bitcast). */
static uint32_t fusion_target(const struct ctx *c, const struct hlo_instr *in, uint32_t k)
{
    const struct hlo_leaf *l = &c->h->leaves[in->leaf0 + k];
    const struct hlo_instr *x;
    uint32_t path[HLO_MAX_TUPLE_DEPTH], q;
    unsigned d = in->tuple_shaped ? l->depth : 0;

    if (!op_is(c, in, "fusion") || in->ncalls != 1)
        return HLO_NONE;
    x = ins(c, c->h->comps[c->h->idx[in->call0]].root);
    memcpy(path, l->path, d * sizeof(*path));
    if (!follow_tuples(c, &x, path, &d))
        return HLO_NONE;
    if (op_is(c, x, "dynamic-update-slice") && d == 0) {
        q = 0;
    } else if (op_is(c, x, "scatter") && x->nopnds >= 3 && d <= 1) {
        /* n scattered arrays, the indices, n updates: result {i} updates operand i */
        q = d == 0 ? 0 : path[0];
        if (d == 1 && (x->nopnds < 5 || q >= (x->nopnds - 1) / 2))
            return HLO_NONE;
    } else {
        return HLO_NONE;
    }
    if (q >= x->nopnds)
        return HLO_NONE;
    x = ins(c, c->h->idx[x->opnd0 + q]);
    d = 0;
    if (!follow_tuples(c, &x, path, &d))
        return HLO_NONE;
    if (op_is(c, x, "bitcast") && x->nopnds == 1)
        x = ins(c, c->h->idx[x->opnd0]);
    if (!op_is(c, x, "parameter") || x->index < 0 || x->index >= (int64_t)in->nopnds)
        return HLO_NONE;
    return operand_leaf(c, in, (uint32_t)x->index, path, d);
}

/* XLA's in-place input/output pairs (openxla/xla hlo_dataflow_analysis.cc
 * GetInPlaceInputOutputPairs; xla/hlo/analysis/alias_info.cc in current XLA): the operand leaf
 * that result leaf k of in is written into, or HLO_NONE.
 * - dynamic-update-slice: operand 0; scatter: operand 0, or with n > 1 scattered arrays
 *   (2n + 1 operands: the arrays, the indices, the updates) result {i} into operand i;
 * - a fusion: fusion_target;
 * - all-reduce-start: operand 0, or with several operands result {i} into operand i;
 * - collective-permute-start with 4 operands (input, output, and their offsets): {1,..} into
 *   operand 1's {..}. */
static uint32_t in_place_operand(const struct ctx *c, const struct hlo_instr *in, uint32_t k)
{
    const struct hlo_leaf *l = &c->h->leaves[in->leaf0 + k];
    unsigned d = in->tuple_shaped ? l->depth : 0;

    if (op_is(c, in, "dynamic-update-slice"))
        return d == 0 ? operand_leaf(c, in, 0, l->path, 0) : HLO_NONE;
    if (op_is(c, in, "fusion"))
        return fusion_target(c, in, k);
    if (op_is(c, in, "scatter") || op_is(c, in, "all-reduce-start")) {
        if (d == 0)
            return operand_leaf(c, in, 0, l->path, 0);
        return d == 1 ? operand_leaf(c, in, l->path[0], l->path, 0) : HLO_NONE;
    }
    if (op_is(c, in, "collective-permute-start") && in->nopnds == 4 && d >= 1 && l->path[0] == 1)
        return operand_leaf(c, in, 1, l->path + 1, d - 1);
    return HLO_NONE;
}

/* In-place reuse (hlo_model.h): merges instruction i's result into a dying operand. */
static void in_place(const struct ctx *c, struct walk *w, uint32_t i, int64_t step)
{
    const struct hlo_instr *in = ins(c, i);

    if (op_is(c, in, "while")) {
        while_in_place(c, w, i, step);
        return;
    }
    if (in->nleaves == 1 && !in->tuple_shaped &&
        (hlo_is_elementwise(c->h, in) || elementwise_fusion(c, in))) {
        /* the first operand of the same shape that dies here; in the estimate, an elementwise
         * root is a loop fusion that may also write into what its fused producers read */
        for (uint32_t q = 0; q < in->nopnds; q++) {
            const struct hlo_instr *o = ins(c, c->h->idx[in->opnd0 + q]);
            if (o->nleaves == 1 && reuse(c, w, i, in->leaf0, o->leaf0, step))
                return;
        }
        for (uint32_t j = w->g->opnd0[i - w->g->first]; j < w->g->opnd0[i - w->g->first + 1]; j++) {
            const struct hlo_instr *o = ins(c, w->g->first + w->g->opnd[j]);
            if (o->nleaves == 1 && reuse(c, w, i, in->leaf0, o->leaf0, step))
                return;
        }
        return;
    }
    for (uint32_t k = 0; k < in->nleaves; k++) {
        uint32_t ol = in_place_operand(c, in, k);
        if (ol != HLO_NONE)
            (void)reuse(c, w, i, in->leaf0 + k, ol, step);
    }
}

/* input_output_alias: each aliased output is written into its parameter's buffer. */
static int donate(struct ctx *c, struct walk *w)
{
    const struct hlo_comp *cp = &c->h->comps[w->comp];
    const struct hlo_instr *root = ins(c, cp->root);

    for (uint32_t a = 0; a < c->h->naliases; a++) {
        const struct hlo_alias *al = &c->h->aliases[a];
        uint32_t pl = HLO_NONE, ol, p, o;
        for (uint32_t k = 0; k < cp->n && pl == HLO_NONE; k++) {
            const struct hlo_instr *x = ins(c, cp->first + k);
            if (op_is(c, x, "parameter") && x->index == al->param)
                pl = leaf_at(c, x, al->param_path, al->param_depth);
        }
        ol = leaf_at(c, root, al->out_path, al->out_depth);
        if (pl == HLO_NONE || ol == HLO_NONE)
            return cursor_fail_at(c->e, al->line, al->col,
                                  "input_output_alias names %s that the entry computation lacks",
                                  pl == HLO_NONE ? "a parameter index" : "an output index");
        p = w->vmap[pl - w->leaf0];
        o = w->vmap[ol - w->leaf0];
        if (p == HLO_NONE)
            continue;
        w->b[p].donated = true;
        /* Written into the parameter only once the parameter is dead (else XLA copies). */
        if (o == HLO_NONE || (o = find(w, o)) == (p = find(w, p)) || w->b[o].kind != TENSOR_TEMP ||
            w->b[p].last > w->b[o].def)
            continue;
        merge_into(w, o, p);
    }
    return ERR_OK;
}

static void apply_sharding(const char *s, struct hlo_span v, uint32_t leaf, struct shape *sh,
                           bool *applied);

/* The compiler's layout of an array the program reads or writes inside (hlo_model.h): the
 * written minor-to-major is dropped for the chip's default (XLA's layout assignment chooses
 * it), and dims of size 1 go most major, as XLA:TPU lays them out
 * (server/planner/SOURCES.md#degenerate-dims). io: an entry parameter or output, whose
 * layout is the caller's (the default order). True when the order differs from the default. */
static bool estimate_layout(struct shape *sh, bool io)
{
    unsigned at = 0, ones = 0;
    bool moved = false;

    if (sh->ntiles > 0 || sh->element_size_bits != 0)
        return false; /* a tiled layout is the compiler's already */
    sh->has_layout = false;
    if (io || sh->rank < 2)
        return false;
    for (unsigned d = 0; d < sh->rank; d++)
        ones += sh->dims[d] == 1;
    if (ones == 0 || ones == sh->rank)
        return false;
    for (unsigned d = sh->rank; d-- > 0;) /* minor first: the other dims, then the ones */
        if (sh->dims[d] != 1)
            sh->minor_to_major[at++] = (uint8_t)d;
    for (unsigned d = sh->rank; d-- > 0;)
        if (sh->dims[d] == 1)
            sh->minor_to_major[at++] = (uint8_t)d;
    for (unsigned d = 0; d < sh->rank; d++)
        moved |= sh->minor_to_major[d] != sh->rank - 1 - d;
    sh->has_layout = moved;
    return moved;
}

/* The shape leaf (module-wide) of in is planned at: its per-device dims when the module is
 * unpartitioned (hlo_program.c) and shard is set (*sharded: a sharding applied), and the written
 * layout, or the compiler's (estimate_layout; *relaid: size-1 dims moved) in the estimate. */
static int leaf_shape(const struct ctx *c, const struct hlo_instr *in, uint32_t leaf, bool shard,
                      bool io, struct shape *sh, bool *sharded, bool *relaid)
{
    const struct hlo_leaf *l = &c->h->leaves[leaf];

    if (shape_parse(c->h->text + l->shape.off, l->shape.len, sh, c->e) != ERR_OK)
        return c->e->code;
    if (shard && !c->prog.partitioned && in->sharding.len > 0)
        apply_sharding(c->h->text, in->sharding, leaf - in->leaf0, sh, sharded);
    if (c->estimate)
        *relaid = estimate_layout(sh, io);
    return ERR_OK;
}

/* The padded bytes of leaf (module-wide) of in on the chip, as leaf_shape plans it. */
static int leaf_bytes(const struct ctx *c, const struct hlo_instr *in, uint32_t leaf, bool shard,
                      bool io, uint64_t *out, bool *relaid_out)
{
    struct shape sh;
    struct layout_info li;
    bool sharded = false, relaid = false;

    if (leaf_shape(c, in, leaf, shard, io, &sh, &sharded, &relaid) != ERR_OK ||
        layout_resolve(&sh, c->chip, NULL, &li, c->e) != ERR_OK)
        return err_prefix(c->e, "", "HLO buffer: ");
    *out = li.padded_bytes;
    if (relaid_out != NULL)
        *relaid_out = relaid;
    return ERR_OK;
}

/* One buffer's padded bytes on the chip. A callee's are sized at their global shapes in
 * the written reading (shard false), as they always were; per device in the estimate. */
static int buf_bytes(const struct ctx *c, const struct buf *b, bool shard, bool io, uint64_t *out,
                     bool *relaid)
{
    if (b->leaf == HLO_NONE) {
        *out = b->temp_bytes;
        return ERR_OK;
    }
    return leaf_bytes(c, ins(c, b->instr), b->leaf, shard, io, out, relaid);
}

/* A called computation's peak: its own buffers (not its parameters, which are the caller's
 * operands, nor its ROOT's, which are the caller's result), live [def, last + 1). */
static int sub_peak(struct ctx *c, struct walk *w, int64_t nsteps, uint64_t *peak)
{
    uint64_t *delta = calloc((size_t)nsteps + 1, sizeof(*delta));
    uint64_t live = 0, total = 0;
    int rc = ERR_OK;

    *peak = 0;
    if (delta == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
    for (uint32_t k = 0; k < w->n; k++) {
        struct buf *b = &w->b[k];
        uint64_t sz = 0;
        if (b->rep != k || b->output || b->excluded)
            continue;
        if ((rc = buf_bytes(c, b, c->estimate, false, &sz, NULL)) != ERR_OK)
            goto out;
        int64_t s = b->kind == TENSOR_CONSTANT ? 0 : b->def;
        int64_t e = b->kind == TENSOR_CONSTANT ? nsteps : (b->end > b->def ? b->end : b->def) + 1;
        if (__builtin_add_overflow(total, sz, &total)) {
            rc = err_set(c->e, ERR_OVERFLOW, "", "HLO computation peak passes 2^64-1");
            goto out;
        }
        delta[s] += sz; /* modulo 2^64: every partial sum lies in [0, total] */
        delta[e] -= sz;
    }
    for (int64_t s = 0; s < nsteps; s++) {
        live += delta[s];
        *peak = live > *peak ? live : *peak;
    }
out:
    free(delta);
    return rc;
}

/* What kept instruction k of the graph defines, for the scheduler: its leaves' bytes and a
 * call's callee peak; nothing for parameters, constants and alias ops (every order holds
 * them alike, hlo_compile_int.h). */
static int sched_bytes(struct ctx *c, const struct hlo_graph *g, uint64_t *bytes)
{
    int rc;

    for (uint32_t k = 0; k < g->n; k++) {
        const struct hlo_instr *in = ins(c, g->first + k);
        bytes[k] = 0;
        if (g->fuse[k] != HLO_FUSE_NONE || hlo_is_alias_op(c->h, in) || op_is(c, in, "parameter") ||
            op_is(c, in, "constant"))
            continue;
        for (uint32_t l = 0; l < in->nleaves; l++) {
            uint64_t x = 0;
            if (c->space[in->leaf0 + l] != HLO_SPACE_HBM)
                continue;
            if ((rc = leaf_bytes(c, in, in->leaf0 + l, true, false, &x, NULL)) != ERR_OK)
                return rc;
            bytes[k] += x;
        }
        for (uint32_t q = 0; op_in(c, in, CALL_OPS) && q < in->ncalls; q++) {
            uint64_t p = 0;
            if ((rc = callee_peak(c, c->h->idx[in->call0 + q], in, &p)) != ERR_OK)
                return rc;
            bytes[k] += p;
        }
    }
    return ERR_OK;
}

/* The computation's fused graph and order: as written (every instruction, in written
 * order), or XLA's (hlo_compile_int.h) in the estimate. */
static int plan_comp(struct ctx *c, uint32_t comp, struct hlo_graph *g, struct hlo_order *o)
{
    uint64_t *bytes;
    int rc;

    if ((rc = hlo_graph_build(c->h, comp, c->estimate, g, c->e)) != ERR_OK)
        return rc;
    if (!c->estimate) /* as written: every instruction in the written order */
        return hlo_order_build(g, NULL, true, o, c->e);
    if ((bytes = calloc((size_t)g->n + 1, sizeof(*bytes))) == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
    if ((rc = sched_bytes(c, g, bytes)) == ERR_OK)
        rc = hlo_order_build(g, bytes, c->text_order, o, c->e);
    free(bytes);
    for (int f = HLO_FUSE_LOOP; rc == ERR_OK && f < HLO_FUSE_COUNT; f++)
        c->fused[f] += g->fused[f];
    return rc;
}

/* The walk in o's order: at each step, the fused instructions read there (their reads are
 * their consumer's), then the kept one. */
static int walk_steps(struct ctx *c, struct walk *w, const struct hlo_graph *g,
                      const struct hlo_order *o, bool entry)
{
    uint32_t *at = calloc((size_t)o->nseq + 2, sizeof(*at)), *fused = NULL;
    int rc = ERR_OK;

    fused = calloc((size_t)g->n + 1, sizeof(*fused));
    if (at == NULL || fused == NULL || o->step == NULL || o->seq == NULL) {
        rc = err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
        goto out;
    }
    for (uint32_t k = 0; k < g->n; k++) /* the fused ones bucketed by step */
        at[g->fuse[k] != HLO_FUSE_NONE ? o->step[k] + 1 : o->nseq + 1]++;
    for (uint32_t p = 0; p < o->nseq; p++)
        at[p + 1] += at[p];
    for (uint32_t k = 0; k < g->n; k++)
        if (g->fuse[k] != HLO_FUSE_NONE)
            fused[at[o->step[k]]++] = k;
    for (uint32_t p = 0, f = 0; p < o->nseq && rc == ERR_OK; p++) {
        const struct hlo_instr *in = ins(c, g->first + o->seq[p]);
        for (; f < at[p]; f++)
            read_operands(c, w, ins(c, g->first + fused[f]), (int64_t)p);
        rc = op_in(c, in, ALIAS_OPS) ? alias_leaves(c, w, in)
                                     : define(c, w, g->first + o->seq[p], (int64_t)p, entry);
    }
out:
    free(at);
    free(fused);
    return rc;
}

static int walk_comp(struct ctx *c, uint32_t comp, bool entry, struct walk *w)
{
    const struct hlo_comp *cp = &c->h->comps[comp];
    const struct hlo_instr *last = ins(c, cp->first + cp->n - 1), *root = ins(c, cp->root);
    struct hlo_graph g;
    struct hlo_order o;
    uint32_t nleaves;
    int rc;

    memset(w, 0, sizeof(*w));
    memset(&g, 0, sizeof(g));
    memset(&o, 0, sizeof(o));
    w->comp = comp;
    w->leaf0 = ins(c, cp->first)->leaf0;
    nleaves = last->leaf0 + last->nleaves - w->leaf0;
    if ((w->vmap = malloc((nleaves ? nleaves : 1) * sizeof(*w->vmap))) == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
    memset(w->vmap, 0xff, (nleaves ? nleaves : 1) * sizeof(*w->vmap));
    w->cap = nleaves + cp->n; /* a buffer per leaf, a temp per call at most */
    if ((w->b = calloc(w->cap ? w->cap : 1, sizeof(*w->b))) == NULL) /* calloc: for the analyser */
        return err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
    if ((rc = plan_comp(c, comp, &g, &o)) != ERR_OK)
        goto out;
    w->g = &g;
    w->nsteps = o.nseq;
    if ((rc = walk_steps(c, w, &g, &o, entry)) != ERR_OK)
        goto out;
    for (uint32_t l = 0; l < root->nleaves; l++) {
        uint32_t b = w->vmap[root->leaf0 - w->leaf0 + l];
        if (b != HLO_NONE)
            w->b[b].output = true;
    }
    for (uint32_t k = 0; k < w->n; k++)
        w->b[k].end = w->b[k].last;
    for (uint32_t p = 0; p < o.nseq; p++)
        in_place(c, w, g.first + o.seq[p], (int64_t)p);
    rc = entry ? donate(c, w) : sub_peak(c, w, w->nsteps, &c->peak[comp]);
out:
    w->g = NULL;
    hlo_graph_free(&g);
    if (entry && rc == ERR_OK) {
        c->entry_order = o; /* its chosen scheduler and peaks, for the result */
        memset(&o, 0, sizeof(o));
    }
    hlo_order_free(&o);
    return rc;
}

/* ---- model tensors ---------------------------------------------------------------- */

/* The per-device dims of an unpartitioned array from sharding={devices=[a,b,..]..}; for a
 * tuple sharding {{..}, {..}} the leaf-th element. Other shardings leave it whole. */
static void apply_sharding(const char *s, struct hlo_span v, uint32_t leaf, struct shape *sh,
                           bool *applied)
{
    const char *p = s + v.off, *end = s + v.off + v.len;
    static const char key[] = "devices=[";

    if (v.len > 1 && p[0] == '{' && p[1] == '{') { /* tuple: skip to element leaf */
        unsigned depth = 0, k = 0;
        for (p++; p < end && k < leaf; p++) {
            depth += *p == '{';
            depth -= *p == '}';
            k += depth == 0 && *p == ',';
        }
    }
    for (; p + sizeof(key) - 1 < end && *p != '}'; p++)
        if (memcmp(p, key, sizeof(key) - 1) == 0)
            break;
    if (p + sizeof(key) - 1 >= end || *p == '}')
        return;
    p += sizeof(key) - 1;
    for (unsigned d = 0; d < sh->rank && p < end; d++) {
        size_t at = 0;
        int64_t t;
        if (!text_uint(p, (size_t)(end - p), &at, &t) || t < 1)
            return;
        if (t > 1) {
            sh->dims[d] = sh->dims[d] == 0 ? 0 : (sh->dims[d] - 1) / t + 1;
            *applied = true;
        }
        p += at;
        p += p < end && *p == ',';
    }
}

/* A tensor's name: the instruction's, "{i,j}" for a tuple leaf, "/temps" for a call's. */
static const char *tensor_name(struct model *m, const struct hlo_module *h, const struct buf *b)
{
    const struct hlo_instr *in = &h->instrs[b->instr];
    char text[MODEL_MAX_NAME + 64];
    int n = snprintf(text, sizeof(text), "%.*s",
                     (int)(in->name.len > MODEL_MAX_NAME ? MODEL_MAX_NAME : in->name.len),
                     h->text + in->name.off);
    if (b->leaf == HLO_NONE) {
        n += snprintf(text + n, sizeof(text) - (size_t)n, "/temps");
    } else if (in->tuple_shaped) {
        const struct hlo_leaf *l = &h->leaves[b->leaf];
        n += snprintf(text + n, sizeof(text) - (size_t)n, "{");
        for (unsigned d = 0; d < l->depth && n < (int)sizeof(text) - 16; d++)
            n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%u", d ? "," : "", l->path[d]);
        n += snprintf(text + n, sizeof(text) - (size_t)n, "}");
    }
    return model_strdup(m, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
}

/* The names merged into representative r (in-place writes, donated outputs), comma-joined. */
static const char *merged_names(struct model *m, const struct hlo_module *h, const struct walk *w,
                                uint32_t r, const uint32_t *next)
{
    size_t len = 0, at = 0;
    char *text;
    const char *out;

    for (uint32_t k = next[r]; k != HLO_NONE; k = next[k])
        len += MODEL_MAX_NAME + 64;
    if (len == 0)
        return NULL;
    if ((text = malloc(len)) == NULL)
        return NULL;
    for (uint32_t k = next[r]; k != HLO_NONE; k = next[k]) {
        const char *nm = tensor_name(m, h, &w->b[k]);
        if (nm == NULL)
            break;
        at += (size_t)snprintf(text + at, len - at, "%s%s", at ? "," : "", nm);
    }
    out = model_strdup(m, text, at);
    free(text);
    return out;
}

/* The C-escaped text sp unescaped into the model's arena (NULL when out of memory). */
static const char *arena_text(struct model *m, const struct hlo_module *h, struct hlo_span sp,
                              size_t *n)
{
    char *out = model_alloc(m, (size_t)sp.len + 1); /* unescaping never lengthens */

    if (out != NULL)
        *n = hlo_unescape(h, sp, out, (size_t)sp.len + 1);
    return out;
}

/* The tensor's op_name and source ("file:line") from its instruction's metadata. */
static int put_source(struct ctx *c, struct model *m, const struct hlo_instr *in,
                      struct model_tensor *t)
{
    struct hlo_span file;
    int64_t line;
    size_t n = 0;
    char *text;

    if (in->meta.op_name.len > 0 &&
        (t->op_name = arena_text(m, c->h, in->meta.op_name, &n)) == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory");
    if (!hlo_source(c->h, in, &file, &line))
        return ERR_OK;
    if ((text = model_alloc(m, (size_t)file.len + 24)) == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory");
    n = hlo_unescape(c->h, file, text, (size_t)file.len + 1);
    if (line > 0)
        snprintf(text + n, 24, ":%lld", (long long)line);
    t->source = text;
    return ERR_OK;
}

/* Buffer set r's lifetime [*start, *end): parameters (unless donated), constants and
 * outputs the whole program, the rest from definition past the last read of any member. */
static void buf_live(const struct walk *w, uint32_t r, const uint32_t *next, int64_t nsteps,
                     int64_t *start, int64_t *end)
{
    const struct buf *b = &w->b[r];
    int64_t last = b->last;

    for (uint32_t k = next[r]; k != HLO_NONE; k = next[k])
        last = w->b[k].last > last ? w->b[k].last : last;
    *start = b->kind == TENSOR_TEMP ? b->def : 0;
    *end = (b->kind == TENSOR_INPUT && !b->donated) || b->kind == TENSOR_CONSTANT || b->output
               ? nsteps
               : last + 1;
}

static int fill_tensor(struct ctx *c, struct model *m, const struct walk *w, uint32_t r,
                       const uint32_t *next, int64_t nsteps, struct model_tensor *t,
                       size_t *sharded)
{
    const struct hlo_module *h = c->h;
    const struct buf *b = &w->b[r];
    const struct hlo_instr *in = &h->instrs[b->instr];
    int rc;

    if ((t->name = tensor_name(m, h, b)) == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory");
    if ((rc = put_source(c, m, in, t)) != ERR_OK)
        return rc;
    if (next[r] != HLO_NONE && (t->in_place = merged_names(m, h, w, r, next)) == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory");
    t->kind = b->kind == TENSOR_TEMP && b->output ? TENSOR_OUTPUT : b->kind;
    t->donated = b->donated;
    t->live_given = true;
    buf_live(w, r, next, nsteps, &t->live_start, &t->live_end);
    if (b->leaf == HLO_NONE) {
        t->raw = true;
        t->logical_bytes = t->padded_bytes = b->temp_bytes;
        return ERR_OK;
    }
    struct shape sh;
    bool applied = false, relaid = false;
    if ((rc = leaf_shape(c, in, b->leaf, true, t->kind == TENSOR_INPUT || b->output, &sh, &applied,
                         &relaid)) != ERR_OK)
        return rc;
    *sharded += applied;
    (void)relaid; /* counted by entry_reading */
    if (model_tensor_set_shape(m, t, &sh) != ERR_OK)
        return err_set(c->e, ERR_NOMEM, "", "out of memory");
    return ERR_OK;
}

/* The header's name; without a header, XLA's module_<entry> (hlo_parser.cc ParseHloModule). */
static const char *module_name(struct model *m, const struct hlo_module *h)
{
    struct hlo_span e = h->comps[h->entry].name;
    char text[MODEL_MAX_NAME];
    int n;

    if (h->header)
        return model_strdup(m, h->text + h->name.off, h->name.len);
    n = snprintf(text, sizeof(text), "module_%.*s", (int)(e.len > 400 ? 400 : e.len),
                 h->text + e.off);
    return model_strdup(m, text, (size_t)n);
}

/* Space sp's own peak from its buffers' [start, end) byte deltas (delta[nsteps + 1]). */
static uint64_t delta_peak(const uint64_t *delta, int64_t nsteps)
{
    uint64_t live = 0, peak = 0;

    for (int64_t s = 0; s < nsteps; s++) {
        live += delta[s]; /* modulo 2^64: every partial sum lies in [0, total] */
        peak = live > peak ? live : peak;
    }
    return peak;
}

/* The entry's buffers in memory spaces other than HBM, by space: count, bytes (laid out on
 * the chip as HBM arrays are, per device) and each space's own peak, into m->program. */
static int account_spaces(struct ctx *c, const struct walk *w, const uint32_t *next, int64_t nsteps,
                          struct model *m)
{
    uint64_t *delta = calloc(MODEL_SPACE_COUNT * ((size_t)nsteps + 1), sizeof(*delta));
    int rc = ERR_OK;

    if (delta == NULL)
        return err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
    for (uint32_t k = 0; k < w->n && rc == ERR_OK; k++) {
        const struct buf *b = &w->b[k];
        struct model_space_use *u;
        uint64_t bytes = 0;
        int64_t start, end;
        if (b->rep != k || !b->excluded)
            continue;
        enum model_space sp = hlo_space_of(c->space[b->leaf]);
        if ((rc = leaf_bytes(c, ins(c, b->instr), b->leaf, true,
                             b->kind == TENSOR_INPUT || b->output, &bytes, NULL)) != ERR_OK)
            break;
        u = &m->program.spaces[sp];
        if (__builtin_add_overflow(u->bytes, bytes, &u->bytes)) {
            rc = err_set(c->e, ERR_OVERFLOW, "", "HLO %s bytes pass 2^64-1", model_space_name(sp));
            break;
        }
        u->buffers++;
        buf_live(w, k, next, nsteps, &start, &end);
        delta[sp * ((size_t)nsteps + 1) + (size_t)start] += bytes;
        delta[sp * ((size_t)nsteps + 1) + (size_t)end] -= bytes;
    }
    for (int sp = 0; sp < MODEL_SPACE_COUNT && rc == ERR_OK; sp++) {
        struct model_space_use *u = &m->program.spaces[sp];
        u->peak_bytes = delta_peak(delta + (size_t)sp * ((size_t)nsteps + 1), nsteps);
        if (u->buffers > 0)
            model_warn(m,
                       "%zu HLO buffers in %s memory (%llu bytes, peak %llu bytes) are planned "
                       "apart: never added to HBM (see program.memory_spaces)",
                       u->buffers,
                       sp == MODEL_SPACE_HOST   ? "host (S(5))"
                       : sp == MODEL_SPACE_VMEM ? "VMEM (S(1))"
                                                : "another device",
                       (unsigned long long)u->bytes, (unsigned long long)u->peak_bytes);
    }
    free(delta);
    return rc;
}

static int build_tensors(struct ctx *c, const struct walk *w, const struct model_limits *l,
                         struct model *m)
{
    uint32_t *next = malloc((w->n ? w->n : 1) * sizeof(*next)), *tail = NULL;
    size_t count = 0, at = 0, sharded = 0, temps = 0;
    int rc = ERR_OK;

    tail = malloc((w->n ? w->n : 1) * sizeof(*tail));
    if (next == NULL || tail == NULL) {
        rc = err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
        goto out;
    }
    for (uint32_t k = 0; k < w->n; k++) {
        next[k] = HLO_NONE;
        tail[k] = k;
    }
    /* members of each set in the order they were defined (a representative may come later:
     * a parameter a reordered program reads after the output donated into it) */
    for (uint32_t k = 0; k < w->n; k++) {
        uint32_t r = find(w, k);
        if (r != k) {
            next[tail[r]] = k;
            tail[r] = k;
        } else if (!w->b[k].excluded) {
            count++;
            temps += w->b[k].leaf == HLO_NONE;
        }
    }
    if (count > l->max_tensors) {
        rc = err_set(c->e, ERR_LIMIT, "", "the HLO module has %zu buffers; the limit is %zu", count,
                     l->max_tensors);
        goto out;
    }
    if (model_init(m, "hlo", count) != ERR_OK) {
        rc = err_set(c->e, ERR_NOMEM, "", "out of memory for %zu buffers", count);
        goto out;
    }
    m->name = module_name(m, c->h);
    for (uint32_t k = 0; k < w->n && rc == ERR_OK; k++)
        if (w->b[k].rep == k && !w->b[k].excluded)
            rc = fill_tensor(c, m, w, k, next, w->nsteps, &m->tensors[at++], &sharded);
    if (rc != ERR_OK || (rc = hlo_program_put(&c->prog, m, c->e)) != ERR_OK ||
        (rc = account_spaces(c, w, next, w->nsteps, m)) != ERR_OK)
        goto out;
    if (w->inplace > 0)
        model_warn(m,
                   "%zu HLO results are written into a buffer they reuse (in-place reuse of an "
                   "operand that dies there, or an input_output_alias donation): see each "
                   "tensor's in_place",
                   w->inplace);
    if (sharded > 0)
        model_warn(m,
                   "%zu HLO arrays of this unpartitioned module are planned at their "
                   "per-device shapes from their sharding's tile assignment",
                   sharded);
    if (temps > 0)
        model_warn(m,
                   "%zu while/conditional/call temporaries are sized by their called "
                   "computations' peak (an estimate: see NAME/temps)",
                   temps);
out:
    free(next);
    free(tail);
    if (rc != ERR_OK)
        model_free(m);
    return rc;
}

/* The entry's reading (struct model_reading): its buffers live as fill_tensor gives them
 * (parameters and constants throughout unless donated, outputs to the end), sized per device
 * as leaf_shape plans them. */
static int entry_reading(struct ctx *c, const struct walk *w, struct model_reading *r)
{
    int64_t n = w->nsteps;
    int64_t *last = malloc((w->n ? w->n : 1) * sizeof(*last));
    uint64_t *delta = calloc((size_t)n + 2, sizeof(*delta)), live = 0;
    int rc = ERR_OK;

    memset(r, 0, sizeof(*r));
    r->steps = n;
    if (last == NULL || delta == NULL) {
        rc = err_set(c->e, ERR_NOMEM, "", "out of memory planning HLO buffers");
        goto out;
    }
    for (uint32_t k = 0; k < w->n; k++)
        last[k] = w->b[k].last;
    for (uint32_t k = 0; k < w->n; k++) { /* a merged value keeps its buffer to its last use */
        uint32_t rep = find(w, k);
        last[rep] = w->b[k].last > last[rep] ? w->b[k].last : last[rep];
    }
    for (uint32_t k = 0; k < w->n && rc == ERR_OK; k++) {
        const struct buf *b = &w->b[k];
        uint64_t sz = 0;
        bool relaid = false;
        if (b->rep != k || b->excluded)
            continue;
        bool whole =
            (b->kind == TENSOR_INPUT && !b->donated) || b->kind == TENSOR_CONSTANT || b->output;
        int64_t from = b->kind == TENSOR_TEMP ? b->def : 0, to = whole ? n : last[k] + 1;
        rc = buf_bytes(c, b, true, b->kind == TENSOR_INPUT || b->output, &sz, &relaid);
        c->relaid += relaid;
        r->buffers++;
        delta[from < n ? from : n] += sz; /* modulo 2^64: each partial sum is live bytes */
        delta[to < n ? to : n] -= sz;
    }
    for (int64_t s = 0; s < n; s++) {
        live += delta[s];
        r->peak_bytes = live > r->peak_bytes ? live : r->peak_bytes;
    }
out:
    free(last);
    free(delta);
    return rc;
}

/* One reading of the module: the entry walked (estimate or as written), its reading in *r,
 * its tensors in *m when tensors is set. */
static int read_module(struct ctx *c, bool estimate, const struct model_limits *l,
                       struct model_reading *r, struct model *m)
{
    const struct hlo_module *h = c->h;
    struct walk w;
    int rc;

    memset(&w, 0, sizeof(w));
    memset(c->state, 0, h->ncomps ? h->ncomps : 1);
    memset(c->fused, 0, sizeof(c->fused));
    hlo_order_free(&c->entry_order);
    c->estimate = estimate;
    c->relaid = 0;
    c->state[h->entry] = 1;
    if ((rc = walk_comp(c, h->entry, true, &w)) == ERR_OK)
        rc = entry_reading(c, &w, r);
    if (rc == ERR_OK && m != NULL)
        rc = build_tensors(c, &w, l, m);
    free(w.b);
    free(w.vmap);
    return rc;
}

/* The estimate's facts (after its walk) into *mc. */
static void put_compile(const struct ctx *c, const struct hlo_model_opts *o,
                        struct model_compile *mc)
{
    mc->present = true;
    mc->written_chosen = o->as_written;
    mc->text_order = o->text_order;
    mc->fused_loop = c->fused[HLO_FUSE_LOOP];
    mc->fused_input = c->fused[HLO_FUSE_INPUT];
    mc->fused_output = c->fused[HLO_FUSE_OUTPUT];
    mc->relaid = c->relaid;
    mc->schedule = (enum model_sched)c->entry_order.chosen;
    for (int k = 0; k < MODEL_SCHED_COUNT; k++)
        mc->schedule_peak[k] = c->entry_order.peak[k];
}

int hlo_model_build_opts(const struct hlo_module *h, const struct chip *chip,
                         const struct model_limits *l, const struct hlo_model_opts *o,
                         struct model *m, struct err *e)
{
    static const struct hlo_model_opts none = {false, false, NULL};
    struct ctx c = {.h = h, .chip = chip, .e = e};
    struct model_compile mc;
    int rc;

    memset(m, 0, sizeof(*m));
    memset(&mc, 0, sizeof(mc));
    o = o != NULL ? o : &none;
    c.text_order = o->text_order;
    c.peak = calloc(h->ncomps ? h->ncomps : 1, sizeof(*c.peak));
    c.state = calloc(h->ncomps ? h->ncomps : 1, 1);
    c.space = malloc(h->nleaves ? h->nleaves : 1);
    if (c.peak == NULL || c.state == NULL || c.space == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory planning HLO buffers");
        goto out;
    }
    hlo_program_detect(h, &c.prog);
    hlo_leaf_spaces(h, c.space);
    if (c.prog.stage != MODEL_STAGE_BEFORE) { /* the same test as hlo_before_optimization,
                                               * VMEM buffers counted too */
        rc = read_module(&c, false, l, &mc.written, m);
        goto out;
    }
    /* the estimate, then the written reading; the chosen one's tensors into m */
    if ((rc = read_module(&c, true, l, &mc.estimate, o->as_written ? NULL : m)) != ERR_OK)
        goto out;
    put_compile(&c, o, &mc);
    if ((rc = read_module(&c, false, l, &mc.written, o->as_written ? m : NULL)) != ERR_OK) {
        model_free(m);
        goto out;
    }
    m->compile = mc;
out:
    hlo_order_free(&c.entry_order);
    free(c.peak);
    free(c.state);
    free(c.space);
    return rc;
}

int hlo_model_build(const struct hlo_module *h, const struct chip *chip,
                    const struct model_limits *l, struct model *m, struct err *e)
{
    return hlo_model_build_opts(h, chip, l, NULL, m, e);
}

int hlo_import_opts(const char *s, size_t len, const struct chip *chip,
                    const struct model_limits *l, const struct hlo_model_opts *o, struct model *m,
                    struct err *e)
{
    struct hlo_module h;
    int rc;

    memset(m, 0, sizeof(*m));
    if ((rc = hlo_parse(s, len, l->max_tensors, &h, e)) != ERR_OK)
        return rc;
    rc = hlo_model_build_opts(&h, chip, l, o, m, e);
    hlo_free(&h);
    return rc;
}

int hlo_import(const char *s, size_t len, const struct chip *chip, const struct model_limits *l,
               struct model *m, struct err *e)
{
    return hlo_import_opts(s, len, chip, l, NULL, m, e);
}
