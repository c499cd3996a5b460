/*
 * hlo_schedule.c - XLA's memory scheduler over a fused computation (hlo_compile_int.h).
 *
 * An unscheduled module is ordered by HloMemoryScheduler before buffer assignment;
 * DefaultMemoryScheduler runs three schedulers and keeps the one whose sequence needs the
 * least memory, not counting fragmentation (openxla/xla at 9a77a882,
 * xla/hlo/transforms/simplifiers/hlo_memory_scheduler.cc:572-625). Each is reproduced here
 * on the kept instructions of the fused graph (a fusion runs as one instruction):
 * - list (:93-397): a ready list; the next is the ready instruction with the highest
 *   (bytes freed - bytes defined, user count) (:224-259), an effectively scalar one first;
 *   ties go to the entry added last (a std::multimap's last equal key); when a buffer's
 *   unscheduled uses drop to one, the ready users of the scheduled one's operands are
 *   re-ranked (:343-363). Parameters and constants are ignored (:107-110).
 * - DFS (:425-502): a post-order from the ROOT, operands visited by decreasing transitive
 *   extra users, then transitive bytes, then name.
 * - post-order (:565-570): HloComputation::MakeInstructionPostOrder, the DFS from every
 *   instruction without users, operands in order (xla/hlo/ir/hlo_computation.cc:900-1030).
 * Each sequence is measured as MinimumMemoryForComputation does: the most bytes live at
 * once, each buffer from its definition through its last use, the ROOT's to the end; an
 * alias op (tuple, get-tuple-element, bitcast) holds no bytes but keeps its sources live.
 * A sequence's ties go to list, then DFS, then post-order (:612-624).
 */
#include <stdlib.h>
#include <string.h>

#include "planner/import/hlo_compile_int.h"
#include "planner/shape.h"

/* Sources kept per instruction in all: past it an alias op stands for itself alone. */
#define SCHED_SRC_PER_INSTR 8

struct sched {
    const struct hlo_graph *g;
    const uint64_t *bytes;
    uint32_t n;
    uint32_t *src0, *src;   /* per kept instruction: the buffers it stands for */
    uint32_t *use0, *use;   /* per kept instruction: the buffers (bytes > 0) it reads */
    uint32_t *duse0, *duse; /* per buffer: the kept instructions that read it */
    uint8_t *out;           /* per buffer: the ROOT's (live to the end) */
    uint8_t *scalar;        /* per instruction: effectively scalar */
    struct err *e;
};

static const struct hlo_instr *instr(const struct sched *s, uint32_t k)
{
    return &s->g->h->instrs[s->g->first + k];
}

static bool kept(const struct sched *s, uint32_t k)
{
    return s->g->fuse[k] == 0;
}

static int nomem(struct sched *s)
{
    return err_set(s->e, ERR_NOMEM, "", "out of memory scheduling HLO");
}

/* The tuple element a get-tuple-element of a tuple op takes, else HLO_NONE. */
static uint32_t gte_source(const struct sched *s, const struct hlo_instr *in)
{
    const struct hlo_module *h = s->g->h;
    const struct hlo_instr *t;

    if (!hlo_span_is(h, in->opcode, "get-tuple-element") || in->nopnds != 1)
        return HLO_NONE;
    t = &h->instrs[h->idx[in->opnd0]];
    if (!hlo_span_is(h, t->opcode, "tuple") || in->index < 0 || in->index >= (int64_t)t->nopnds)
        return HLO_NONE;
    return h->idx[t->opnd0 + (uint32_t)in->index] - s->g->first;
}

/* Appends the sources of kept instruction o, each once (stamp). */
static void add_sources(const struct sched *s, uint32_t o, uint32_t *stamp, uint32_t mark,
                        uint32_t *dst, uint32_t *n)
{
    for (uint32_t j = s->src0[o]; j < s->src0[o + 1]; j++)
        if (stamp[s->src[j]] != mark) {
            stamp[s->src[j]] = mark;
            dst[(*n)++] = s->src[j];
        }
}

/* src: an alias op stands for its operands' sources (a get-tuple-element of a tuple op for
 * that element's); any other instruction for itself. Computed in written order. */
static int sources_build(struct sched *s, uint32_t *stamp)
{
    const struct hlo_module *h = s->g->h;
    size_t cap = (size_t)s->n * SCHED_SRC_PER_INSTR + 1024;
    uint32_t next = 0;

    s->src0 = calloc((size_t)s->n + 1, sizeof(*s->src0));
    s->src = malloc(cap * sizeof(*s->src));
    if (s->src0 == NULL || s->src == NULL)
        return nomem(s);
    for (uint32_t k = 0; k < s->n; k++) {
        const struct hlo_instr *in = instr(s, k);
        uint32_t el = gte_source(s, in);
        s->src0[k] = next;
        if (kept(s, k) && hlo_is_alias_op(h, in)) {
            size_t need = 0;
            for (uint32_t q = 0; q < in->nopnds; q++) {
                uint32_t o = h->idx[in->opnd0 + q] - s->g->first;
                need += s->src0[o + 1] - s->src0[o];
            }
            if (next + need + 1 <= cap) {
                if (el != HLO_NONE) {
                    add_sources(s, el, stamp, k + 1, s->src, &next);
                } else {
                    for (uint32_t q = 0; q < in->nopnds; q++)
                        add_sources(s, h->idx[in->opnd0 + q] - s->g->first, stamp, k + 1, s->src,
                                    &next);
                }
                s->src0[k + 1] = next;
                continue;
            }
        }
        if (kept(s, k) && next < cap)
            s->src[next++] = k;
        s->src0[k + 1] = next;
    }
    return ERR_OK;
}

/* use: the buffers each kept instruction reads through its external operands; duse its
 * transpose; out: the ROOT's sources. */
static int uses_build(struct sched *s, uint32_t *stamp)
{
    const struct hlo_graph *g = s->g;
    size_t total = 0;
    uint32_t next = 0, *fill;

    memset(stamp, 0, ((size_t)s->n + 1) * sizeof(*stamp));
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t j = g->opnd0[k]; j < g->opnd0[k + 1]; j++)
            total += s->src0[g->opnd[j] + 1] - s->src0[g->opnd[j]];
    s->use0 = calloc((size_t)s->n + 1, sizeof(*s->use0));
    s->use = malloc((total + 1) * sizeof(*s->use));
    s->duse0 = calloc((size_t)s->n + 1, sizeof(*s->duse0));
    s->out = calloc((size_t)s->n + 1, 1);
    if (s->use0 == NULL || s->use == NULL || s->duse0 == NULL || s->out == NULL)
        return nomem(s);
    for (uint32_t k = 0; k < s->n; k++) {
        s->use0[k] = next;
        for (uint32_t j = g->opnd0[k]; j < g->opnd0[k + 1]; j++)
            add_sources(s, g->opnd[j], stamp, k + 1, s->use, &next); /* next <= total */
        s->use0[k + 1] = next;
    }
    fill = calloc((size_t)s->n + 1, sizeof(*fill));
    s->duse = malloc(((size_t)next + 1) * sizeof(*s->duse));
    if (fill == NULL || s->duse == NULL) {
        free(fill);
        return nomem(s);
    }
    for (uint32_t j = 0; j < next; j++)
        s->duse0[s->use[j] + 1]++;
    for (uint32_t k = 0; k < s->n; k++)
        s->duse0[k + 1] += s->duse0[k];
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t j = s->use0[k]; j < s->use0[k + 1]; j++)
            s->duse[s->duse0[s->use[j]] + fill[s->use[j]]++] = k;
    free(fill);
    uint32_t root = g->h->comps[g->comp].root - g->first;
    for (uint32_t j = s->src0[root]; j < s->src0[root + 1]; j++)
        s->out[s->src[j]] = 1;
    return ERR_OK;
}

/* The most bytes live at once in seq: each buffer from its step through its last reader's,
 * the ROOT's to the end (MinimumMemoryForComputation, without fragmentation). pos is
 * scratch, n + 1 entries; delta nseq + 1. */
static uint64_t measure(const struct sched *s, const uint32_t *seq, uint32_t nseq, uint32_t *pos,
                        uint64_t *delta)
{
    uint64_t live = 0, peak = 0;

    for (uint32_t k = 0; k < nseq; k++)
        pos[seq[k]] = k;
    memset(delta, 0, ((size_t)nseq + 1) * sizeof(*delta));
    for (uint32_t k = 0; k < nseq; k++) {
        uint32_t d = seq[k], last = k;
        if (s->bytes[d] == 0)
            continue;
        for (uint32_t j = s->duse0[d]; j < s->duse0[d + 1]; j++)
            last = pos[s->duse[j]] > last ? pos[s->duse[j]] : last;
        if (s->out[d])
            last = nseq - 1;
        delta[k] += s->bytes[d]; /* modulo 2^64: every partial sum is a sum of live bytes */
        delta[last + 1] -= s->bytes[d];
    }
    for (uint32_t k = 0; k < nseq; k++) {
        live += delta[k];
        peak = live > peak ? live : peak;
    }
    return peak;
}

/* ---- the list scheduler: an indexed max-heap of ready instructions ------------------ */

struct rank {
    int64_t freed; /* bytes freed - bytes defined; INT64_MAX for a scalar */
    int64_t users;
    uint64_t seq; /* insertion order: the later wins a tie */
};

struct heap {
    uint32_t *at;    /* heap slot -> instruction */
    uint32_t *slot;  /* instruction -> heap slot, HLO_NONE when not in the heap */
    struct rank *rk; /* per instruction */
    uint32_t n;
};

static bool above(const struct heap *hp, uint32_t a, uint32_t b)
{
    const struct rank *x = &hp->rk[a], *y = &hp->rk[b];
    if (x->freed != y->freed)
        return x->freed > y->freed;
    if (x->users != y->users)
        return x->users > y->users;
    return x->seq > y->seq;
}

static void heap_swap(struct heap *hp, uint32_t i, uint32_t j)
{
    uint32_t t = hp->at[i];
    hp->at[i] = hp->at[j];
    hp->at[j] = t;
    hp->slot[hp->at[i]] = i;
    hp->slot[hp->at[j]] = j;
}

static void heap_fix(struct heap *hp, uint32_t i)
{
    while (i > 0 && above(hp, hp->at[i], hp->at[(i - 1) / 2])) {
        heap_swap(hp, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < hp->n && above(hp, hp->at[l], hp->at[m]))
            m = l;
        if (r < hp->n && above(hp, hp->at[r], hp->at[m]))
            m = r;
        if (m == i)
            return;
        heap_swap(hp, i, m);
        i = m;
    }
}

static uint32_t heap_pop(struct heap *hp)
{
    uint32_t top = hp->at[0];
    heap_swap(hp, 0, --hp->n);
    hp->slot[top] = HLO_NONE;
    if (hp->n > 0)
        heap_fix(hp, 0);
    return top;
}

/* BytesFreedIfScheduled and GetPriority (hlo_memory_scheduler.cc:224-259). remaining: each
 * buffer's unscheduled uses. */
static struct rank rank_of(const struct sched *s, uint32_t k, const int64_t *remaining,
                           uint64_t seq)
{
    struct rank r = {INT64_MAX, INT64_MAX, seq};
    int64_t freed = 0;

    if (s->scalar[k])
        return r;
    for (uint32_t j = s->use0[k]; j < s->use0[k + 1]; j++)
        if (remaining[s->use[j]] == 1)
            freed += (int64_t)s->bytes[s->use[j]];
    r.freed = freed - (int64_t)s->bytes[k];
    r.users = (int64_t)(s->g->user0[k + 1] - s->g->user0[k]);
    return r;
}

static void heap_put(struct heap *hp, const struct sched *s, uint32_t k, const int64_t *remaining,
                     uint64_t *seq)
{
    hp->rk[k] = rank_of(s, k, remaining, (*seq)++);
    hp->at[hp->n] = k;
    hp->slot[k] = hp->n++;
    heap_fix(hp, hp->slot[k]);
}

/* Re-ranks the ready users of k's operands (hlo_memory_scheduler.cc:343-363). */
static void rerank(struct heap *hp, const struct sched *s, uint32_t k, const int64_t *remaining,
                   uint64_t *seq)
{
    const struct hlo_graph *g = s->g;

    for (uint32_t j = g->opnd0[k]; j < g->opnd0[k + 1]; j++) {
        uint32_t o = g->opnd[j];
        for (uint32_t q = g->user0[o]; q < g->user0[o + 1]; q++) {
            uint32_t u = g->user[q];
            struct rank r;
            if (hp->slot[u] == HLO_NONE)
                continue;
            r = rank_of(s, u, remaining, 0);
            if (r.freed == hp->rk[u].freed && r.users == hp->rk[u].users)
                continue;
            r.seq = (*seq)++;
            hp->rk[u] = r;
            heap_fix(hp, hp->slot[u]);
        }
    }
}

static int list_schedule(struct sched *s, uint32_t *seq, uint32_t *nseq)
{
    const struct hlo_graph *g = s->g;
    struct heap hp = {0};
    int64_t *remaining = calloc((size_t)s->n + 1, sizeof(*remaining));
    uint32_t *preds = calloc((size_t)s->n + 1, sizeof(*preds));
    uint64_t order = 0;
    int rc = ERR_OK;

    hp.at = malloc(((size_t)s->n + 1) * sizeof(*hp.at));
    hp.slot = malloc(((size_t)s->n + 1) * sizeof(*hp.slot));
    hp.rk = calloc((size_t)s->n + 1, sizeof(*hp.rk));
    if (remaining == NULL || preds == NULL || hp.at == NULL || hp.slot == NULL || hp.rk == NULL ||
        s->duse0 == NULL || s->out == NULL) {
        rc = nomem(s);
        goto out;
    }
    for (uint32_t k = 0; k < s->n; k++) {
        hp.slot[k] = HLO_NONE;
        remaining[k] = (int64_t)(s->duse0[k + 1] - s->duse0[k]) + s->out[k];
        preds[k] = g->opnd0[k + 1] - g->opnd0[k];
    }
    for (uint32_t k = 0; k < s->n; k++)
        if (kept(s, k) && preds[k] == 0)
            heap_put(&hp, s, k, remaining, &order);
    *nseq = 0;
    while (hp.n > 0) {
        uint32_t best = heap_pop(&hp);
        bool adjust = false;
        seq[(*nseq)++] = best;
        for (uint32_t j = s->use0[best]; j < s->use0[best + 1]; j++)
            adjust |= --remaining[s->use[j]] == 1;
        for (uint32_t j = g->user0[best]; j < g->user0[best + 1]; j++)
            if (--preds[g->user[j]] == 0)
                heap_put(&hp, s, g->user[j], remaining, &order);
        if (adjust)
            rerank(&hp, s, best, remaining, &order);
    }
out:
    free(remaining);
    free(preds);
    free(hp.at);
    free(hp.slot);
    free(hp.rk);
    return rc;
}

/* ---- DFS and post-order ------------------------------------------------------------- */

struct dfs_stats {
    uint64_t extra_users, total_sizes;
};

struct dfs_ctx {
    const struct sched *s;
    const struct dfs_stats *st; /* NULL: operands in order (post-order) */
};

/* Whether a comes before b among the operands the DFS visits (hlo_memory_scheduler.cc:
 * 486-500): more extra users, then more bytes, then the smaller name. */
static bool dfs_first(const struct dfs_ctx *c, uint32_t a, uint32_t b)
{
    const struct dfs_stats *x = &c->st[a], *y = &c->st[b];
    const struct hlo_module *h = c->s->g->h;
    struct hlo_span na = instr(c->s, a)->name, nb = instr(c->s, b)->name;
    int cmp;

    if (x->extra_users != y->extra_users)
        return x->extra_users > y->extra_users;
    if (x->total_sizes != y->total_sizes)
        return x->total_sizes > y->total_sizes;
    cmp = memcmp(h->text + na.off, h->text + nb.off, na.len < nb.len ? na.len : nb.len);
    return cmp != 0 ? cmp < 0 : na.len < nb.len;
}

/* PostOrderDFS (xla/hlo/ir/hlo_instruction.cc:4840-4940) from root: a stack; an instruction
 * seen for the first time pushes its unvisited operands (sorted by dfs_first when stats are
 * given), then reversed, so the first is visited first; seen again, it is emitted. state: 0
 * new, 1 visiting, 2 visited. stack holds n + the operand count entries at most. */
static void dfs_from(const struct dfs_ctx *c, uint32_t root, uint8_t *state, uint32_t *stack,
                     uint32_t *seq, uint32_t *nseq)
{
    const struct hlo_graph *g = c->s->g;
    uint32_t top = 0;

    stack[top++] = root;
    while (top > 0) {
        uint32_t k = stack[top - 1], from;
        if (state[k] != 0) {
            top--;
            if (state[k] == 1) {
                state[k] = 2;
                seq[(*nseq)++] = k;
            }
            continue;
        }
        state[k] = 1;
        from = top;
        for (uint32_t j = g->opnd0[k]; j < g->opnd0[k + 1]; j++)
            if (state[g->opnd[j]] == 0)
                stack[top++] = g->opnd[j];
        if (c->st != NULL) /* insertion sort: operand lists are short */
            for (uint32_t i = from + 1; i < top; i++)
                for (uint32_t j = i; j > from && dfs_first(c, stack[j], stack[j - 1]); j--) {
                    uint32_t t = stack[j];
                    stack[j] = stack[j - 1];
                    stack[j - 1] = t;
                }
        for (uint32_t i = from, j = top - 1; i < j; i++, j--) {
            uint32_t t = stack[i];
            stack[i] = stack[j];
            stack[j] = t;
        }
    }
}

/* The DFS scheduler's statistics (hlo_memory_scheduler.cc:441-476), in written order (each
 * operand before its users); parameters and constants count nothing. */
static void dfs_stats(const struct sched *s, struct dfs_stats *st)
{
    const struct hlo_graph *g = s->g;
    uint64_t cumulative = 0, nhlos = 0;

    for (uint32_t k = 0; k < s->n; k++)
        nhlos += kept(s, k);
    for (uint32_t k = 0; k < s->n; k++) {
        const struct hlo_instr *in = instr(s, k);
        uint32_t nusers = g->user0[k + 1] - g->user0[k];
        memset(&st[k], 0, sizeof(st[k]));
        if (!kept(s, k) || hlo_span_is(g->h, in->opcode, "parameter") ||
            hlo_span_is(g->h, in->opcode, "constant"))
            continue;
        st[k].extra_users = nusers ? nusers - 1 : 0;
        st[k].total_sizes = s->bytes[k];
        cumulative += s->bytes[k];
        for (uint32_t j = g->opnd0[k]; j < g->opnd0[k + 1]; j++) {
            st[k].extra_users += st[g->opnd[j]].extra_users;
            st[k].total_sizes += st[g->opnd[j]].total_sizes;
        }
        st[k].total_sizes = st[k].total_sizes < cumulative ? st[k].total_sizes : cumulative;
        st[k].extra_users = st[k].extra_users < nhlos ? st[k].extra_users : nhlos;
    }
}

/* dfs: the DFS scheduler (the unreachable roots first, then the ROOT:
 * HloComputation::AcceptWithOperandOrder, hlo_computation.cc:1883-1897); else
 * MakeInstructionPostOrder (every instruction without users, in written order). */
static int dfs_schedule(struct sched *s, bool dfs, uint32_t *seq, uint32_t *nseq)
{
    const struct hlo_graph *g = s->g;
    uint32_t root = g->h->comps[g->comp].root - g->first;
    struct dfs_stats *st = dfs ? calloc((size_t)s->n + 1, sizeof(*st)) : NULL;
    uint8_t *state = calloc((size_t)s->n + 1, 1);
    uint32_t *stack = malloc(((size_t)s->n + g->opnd0[s->n] + 1) * sizeof(*stack));
    struct dfs_ctx c = {s, st};
    int rc = ERR_OK;

    if ((dfs && st == NULL) || state == NULL || stack == NULL) {
        rc = nomem(s);
        goto out;
    }
    if (dfs)
        dfs_stats(s, st);
    *nseq = 0;
    for (uint32_t k = 0; k < s->n; k++)
        if (kept(s, k) && g->user0[k + 1] == g->user0[k] && (!dfs || k != root))
            dfs_from(&c, k, state, stack, seq, nseq);
    if (dfs)
        dfs_from(&c, root, state, stack, seq, nseq);
out:
    free(st);
    free(state);
    free(stack);
    return rc;
}

static void text_schedule(const struct sched *s, uint32_t *seq, uint32_t *nseq)
{
    *nseq = 0;
    for (uint32_t k = 0; k < s->n; k++)
        if (kept(s, k))
            seq[(*nseq)++] = k;
}

/* ---- the chosen order ------------------------------------------------------------- */

static void sched_free(struct sched *s)
{
    free(s->src0);
    free(s->src);
    free(s->use0);
    free(s->use);
    free(s->duse0);
    free(s->duse);
    free(s->out);
    free(s->scalar);
}

static int sched_init(struct sched *s, const struct hlo_graph *g, const uint64_t *bytes,
                      struct err *e)
{
    uint32_t *stamp;
    int rc;

    memset(s, 0, sizeof(*s));
    s->g = g;
    s->bytes = bytes;
    s->n = g->n;
    s->e = e;
    stamp = calloc((size_t)g->n + 1, sizeof(*stamp));
    s->scalar = calloc((size_t)g->n + 1, 1);
    if (stamp == NULL || s->scalar == NULL) {
        free(stamp);
        return nomem(s);
    }
    for (uint32_t k = 0; k < g->n; k++) {
        const struct hlo_instr *in = instr(s, k);
        struct shape sh;
        struct err ignored;
        bool one = !in->tuple_shaped && in->nleaves == 1 &&
                   shape_parse(g->h->text + g->h->leaves[in->leaf0].shape.off,
                               g->h->leaves[in->leaf0].shape.len, &sh, &ignored) == ERR_OK;
        for (unsigned d = 0; one && d < sh.rank; d++)
            one = sh.dims[d] == 1;
        s->scalar[k] = one;
    }
    if ((rc = sources_build(s, stamp)) == ERR_OK)
        rc = uses_build(s, stamp);
    free(stamp);
    return rc;
}

/* Each fused instruction's step: the latest step of the kept instructions that read it,
 * directly or through other fused ones (its users come later in written order). */
static void fused_steps(const struct hlo_graph *g, uint32_t *step)
{
    const struct hlo_module *h = g->h;

    for (uint32_t k = 0; k < g->n; k++)
        if (g->fuse[k] != 0)
            step[k] = 0;
    for (uint32_t k = g->n; k-- > 0;) {
        const struct hlo_instr *in = &h->instrs[g->first + k];
        for (uint32_t q = 0; q < in->nopnds; q++) {
            uint32_t o = h->idx[in->opnd0 + q] - g->first;
            if (g->fuse[o] != 0 && step[k] > step[o])
                step[o] = step[k];
        }
    }
}

void hlo_order_free(struct hlo_order *o)
{
    free(o->seq);
    free(o->step);
    memset(o, 0, sizeof(*o));
}

/* The written order alone, unmeasured (hlo_order_build without bytes). */
static int text_only(const struct hlo_graph *g, struct hlo_order *o, struct err *e)
{
    o->seq = malloc(((size_t)g->n + 1) * sizeof(*o->seq));
    o->step = calloc((size_t)g->n + 1, sizeof(*o->step));
    if (o->seq == NULL || o->step == NULL) {
        hlo_order_free(o);
        return err_set(e, ERR_NOMEM, "", "out of memory scheduling HLO");
    }
    o->chosen = HLO_SCHED_TEXT;
    for (int k = 0; k < HLO_SCHED_N; k++)
        o->peak[k] = UINT64_MAX;
    for (uint32_t k = 0; k < g->n; k++)
        if (g->fuse[k] == 0) {
            o->step[k] = o->nseq;
            o->seq[o->nseq++] = k;
        }
    fused_steps(g, o->step);
    return ERR_OK;
}

int hlo_order_build(const struct hlo_graph *g, const uint64_t *bytes, bool text,
                    struct hlo_order *o, struct err *e)
{
    struct sched s;
    uint32_t *cand = NULL, *pos = NULL, nseq = 0;
    uint64_t *delta = NULL;
    int rc;

    memset(o, 0, sizeof(*o));
    if (bytes == NULL)
        return text_only(g, o, e);
    if ((rc = sched_init(&s, g, bytes, e)) != ERR_OK)
        goto out;
    o->seq = malloc(((size_t)g->n + 1) * sizeof(*o->seq));
    o->step = calloc((size_t)g->n + 1, sizeof(*o->step));
    cand = malloc(((size_t)g->n + 1) * sizeof(*cand));
    pos = malloc(((size_t)g->n + 1) * sizeof(*pos));
    delta = malloc(((size_t)g->n + 2) * sizeof(*delta));
    if (o->seq == NULL || o->step == NULL || cand == NULL || pos == NULL || delta == NULL) {
        rc = nomem(&s);
        goto out;
    }
    o->chosen = HLO_SCHED_TEXT;
    o->peak[HLO_SCHED_TEXT] = UINT64_MAX;
    for (int k = 0; k < HLO_SCHED_N; k++) {
        enum hlo_sched which = (enum hlo_sched)k;
        o->peak[k] = UINT64_MAX;
        if (text && which != HLO_SCHED_TEXT)
            continue; /* the written order alone: nothing to compare */
        if (which == HLO_SCHED_LIST)
            rc = list_schedule(&s, cand, &nseq);
        else if (which == HLO_SCHED_TEXT)
            text_schedule(&s, cand, &nseq);
        else
            rc = dfs_schedule(&s, which == HLO_SCHED_DFS, cand, &nseq);
        if (rc != ERR_OK)
            goto out;
        if (nseq != o->nseq && o->nseq != 0) {
            rc = err_set(e, ERR_INTERNAL, "", "HLO schedules of different lengths");
            goto out;
        }
        o->peak[k] = measure(&s, cand, nseq, pos, delta);
        bool take =
            text || (which != HLO_SCHED_TEXT && (k == 0 || o->peak[k] < o->peak[o->chosen]));
        o->nseq = nseq;
        if (take) {
            o->chosen = which;
            memcpy(o->seq, cand, nseq * sizeof(*cand));
        }
    }
    for (uint32_t k = 0; k < o->nseq; k++)
        o->step[o->seq[k]] = k;
    fused_steps(g, o->step);
out:
    sched_free(&s);
    free(cand);
    free(pos);
    free(delta);
    if (rc != ERR_OK)
        hlo_order_free(o);
    return rc;
}
