/*
 * pack_solve.c - the search strategies' pipeline ("tpuplan-search", "exact", "best").
 *
 * First what needs no search (pack_reduce.c): universal buffers are stacked at the bottom
 * and time-disjoint components packed on their own, recursively. Each part that does not
 * reduce gets the best of the greedy seeds (pack_heur.c), then, on a perfect packing
 * problem, the skyline search (pack_skyline.c), then the search heuristic (pack_search.c)
 * and, for the exact mode, the exact solver (pack_exact.c), seeded with the heuristic's
 * answer so it is never worse.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack/pack_int.h"

#define SOLVE_REDUCE_DEPTH  8   /* components inside components: each level holds O(n) */
#define SOLVE_SKYLINE_SHARE 0.9 /* of the time left, for the skyline stage where it applies */

/* An incumbent's peak before it holds a packing: the part then starts from the greedy
 * seeds. */
#define NO_PACKING UINT64_MAX

/* Runs the single greedy strategies that seed the search strategies; keeps the best. */
static int greedy_best(const struct pack_problem *p, uint64_t *offsets, uint64_t *peak,
                       uint64_t *tmp, struct err *e)
{
    static const enum pack_order ords[] = {PACK_ORDER_SPATIAL, PACK_ORDER_TFLITE,
                                           PACK_ORDER_TEMPORAL};
    int rc;

    *peak = UINT64_MAX;
    for (size_t i = 0; i < sizeof(ords) / sizeof(ords[0]); i++) {
        for (int fit = 0; fit < 2; fit++) {
            uint64_t pk;
            rc = pack_greedy(p, ords[i], (enum pack_fit)fit, NULL, tmp, &pk, e);
            if (rc != ERR_OK)
                return rc;
            if (pk < *peak) {
                *peak = pk;
                memcpy(offsets, tmp, p->n * sizeof(*tmp));
            }
        }
    }
    return ERR_OK;
}

static int solve(const struct pack_problem *p, enum pack_solve_mode mode, const struct pack_opts *o,
                 const struct pack_budget *b, unsigned depth, struct pack_incumbent *inc,
                 struct err *e);

/* A perfect packing problem: every step from the first lifetime to the last is fully live
 * at the lower bound (the sizes times the lifetimes add up to lb times that span), so a
 * packing at lb leaves no cell empty. False when the products overflow. */
static bool perfect_at(const struct pack_problem *p, uint64_t lb)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint64_t area = 0, a, span;

    for (size_t i = 0; i < p->n; i++) {
        if (__builtin_mul_overflow(p->bufs[i].size, (uint64_t)(p->bufs[i].upper - p->bufs[i].lower),
                                   &a) ||
            __builtin_add_overflow(area, a, &area))
            return false;
        lo = p->bufs[i].lower < lo ? p->bufs[i].lower : lo;
        hi = p->bufs[i].upper > hi ? p->bufs[i].upper : hi;
    }
    return p->n > 0 && !__builtin_mul_overflow(lb, (uint64_t)(hi - lo), &span) && span == area;
}

/*
 * The skyline stage (pack_skyline.c) where it applies: a perfect packing problem, the
 * incumbent above the lower bound and the goal. On a perfect problem the skyline search
 * at lb never wastes a cell, so it branches over placements only, where the offset sweep
 * of the exact solver stalls (3 of the 8 kept 400-500-buffer seeds in 30 s before it).
 * It gets SOLVE_SKYLINE_SHARE of the time left (most of it: on these problems the stages
 * after it rarely reach the bound). A packing is at the lower bound (optimal);
 * a proof that none exists raises *lb past it.
 */
static int skyline_stage(const struct pack_problem *p, const struct pack_opts *o,
                         const struct pack_budget *b, uint64_t *lb, struct pack_incumbent *inc,
                         uint64_t *tmp, struct err *e)
{
    double now = clock_now();
    int res, rc;

    if (inc->peak <= *lb || inc->peak <= b->enough || pack_skyline_unit(p) == 0 ||
        !perfect_at(p, *lb))
        return ERR_OK;
    rc = pack_skyline_solve(p, *lb, o->threads, now + (b->deadline - now) * SOLVE_SKYLINE_SHARE,
                            tmp, &res, &inc->nodes, e);
    if (rc != ERR_OK)
        return rc;
    if (res == 1) {
        memcpy(inc->offsets, tmp, p->n * sizeof(*tmp));
        inc->peak = pack_peak(p, tmp);
        inc->stage = "skyline";
        pack_note_fit(p, inc->peak, inc);
    } else if (res == 0) {
        (*lb)++;
    }
    return ERR_OK;
}

/* A part that does not reduce: the greedy seeds (unless inc already holds their best, as a
 * reduced problem's components do), then the search heuristic, then (exact mode) the exact
 * solver. */
static int solve_whole(const struct pack_problem *p, enum pack_solve_mode mode,
                       const struct pack_opts *o, const struct pack_budget *b,
                       struct pack_incumbent *inc, struct err *e)
{
    uint64_t *tmp = NULL, lb;
    double t0 = clock_now(), slice;
    int rc;

    if ((rc = pack_lower_bound(p, &lb, e)) != ERR_OK)
        goto out;
    if ((tmp = malloc((p->n ? p->n : 1) * sizeof(*tmp))) == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    if (inc->peak == NO_PACKING) {
        if ((rc = greedy_best(p, inc->offsets, &inc->peak, tmp, e)) != ERR_OK)
            goto out;
        inc->stage = "greedy";
    }
    pack_note_fit(p, inc->peak, inc);
    if ((rc = skyline_stage(p, o, b, &lb, inc, tmp, e)) != ERR_OK)
        goto out;
    if (mode == PACK_SOLVE_SEARCH) {
        rc = pack_search(p, o, b, inc, e);
        goto out;
    }
    /* A slice of the budget (up to the search's own default) goes to the search heuristic
     * first: a lower incumbent shortens the exact solver's descent, and the exact answer
     * is then never worse than the heuristics'. */
    if (inc->peak > lb && inc->peak > b->enough) {
        slice = (b->deadline - t0) * 0.1;
        if (slice > PACK_SEARCH_DEFAULT_S)
            slice = PACK_SEARCH_DEFAULT_S;
        struct pack_budget first = {t0 + slice, b->enough};
        rc = pack_search(p, o, &first, inc, e);
        if (rc != ERR_OK)
            goto out;
        pack_note_fit(p, inc->peak, inc);
    }
    if (inc->peak > b->enough)
        rc = pack_exact(p, o, b, lb, inc, e);
out:
    free(tmp);
    return rc;
}

struct comp_key {
    uint64_t lb;
    uint32_t c;
};

static int comp_key_cmp(const void *a, const void *b)
{
    const struct comp_key *x = a, *y = b;

    if (x->lb != y->lb)
        return x->lb > y->lb ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

/* A reduced problem's components, each a problem of its own over sub. */
struct reduced {
    const struct pack_problem *p;
    const struct pack_reduction *red;
    struct pack_buffer *sub; /* n: the components' buffers, in comp_mem order */
    uint64_t *suboff;        /* n: their offsets within their component */
    uint64_t *tmp;           /* n: scratch of the greedy passes */
    uint64_t *cpeak;         /* ncomp: each component's peak */
    uint64_t *ccap;          /* ncomp: its capacity (0: none) */
    bool *cproven;           /* ncomp: its peak is proven minimal */
    const char **cstage;     /* ncomp: the stage of its packing */
    struct comp_key *work;   /* ncomp: the components by lower bound, highest first */
    uint64_t lb;             /* the whole problem's lower bound */
};

static void reduced_free(struct reduced *r)
{
    free(r->sub);
    free(r->suboff);
    free(r->tmp);
    free(r->cpeak);
    free(r->ccap);
    free(r->cproven);
    free(r->cstage);
    free(r->work);
}

static int reduced_init(struct reduced *r, const struct pack_problem *p,
                        const struct pack_reduction *red, struct err *e)
{
    size_t n = p->n ? p->n : 1, nc = red->ncomp ? red->ncomp : 1;

    *r = (struct reduced){.p = p, .red = red, .lb = red->base};
    r->sub = malloc(n * sizeof(*r->sub));
    r->suboff = malloc(n * sizeof(*r->suboff));
    r->tmp = malloc(n * sizeof(*r->tmp));
    r->cpeak = calloc(nc, sizeof(*r->cpeak));
    r->ccap = calloc(nc, sizeof(*r->ccap));
    r->cproven = calloc(nc, sizeof(*r->cproven));
    r->cstage = calloc(nc, sizeof(*r->cstage));
    r->work = malloc(nc * sizeof(*r->work));
    if (r->sub == NULL || r->suboff == NULL || r->tmp == NULL || r->cpeak == NULL ||
        r->ccap == NULL || r->cproven == NULL || r->cstage == NULL || r->work == NULL) {
        reduced_free(r);
        return err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
    }
    return ERR_OK;
}

/* Component c as a problem of its own (borrowing r->sub). */
static struct pack_problem reduced_comp(const struct reduced *r, uint32_t c)
{
    uint32_t lo = r->red->comp_off[c], hi = r->red->comp_off[c + 1];

    return (struct pack_problem){hi - lo, r->sub + lo, r->ccap[c], r->p->alignment};
}

/* The peak of the whole: the stack, and each component above it. */
static uint64_t reduced_top(const struct reduced *r)
{
    uint64_t top = r->red->nuniv > 0 ? r->red->base : 0;

    for (size_t c = 0; c < r->red->ncomp; c++)
        if (r->red->base + r->cpeak[c] > top)
            top = r->red->base + r->cpeak[c];
    return top;
}

/* Pass 1: every component's buffers, capacity, lower bound and greedy seeds; the whole
 * problem's lower bound; the components by lower bound, highest first. */
static int reduced_seed(struct reduced *r, struct err *e)
{
    const struct pack_problem *p = r->p;
    const struct pack_reduction *red = r->red;
    int rc;

    for (uint32_t c = 0; c < red->ncomp; c++) {
        uint32_t lo = red->comp_off[c], hi = red->comp_off[c + 1];
        uint64_t maxsize = 0, clb;
        for (uint32_t j = lo; j < hi; j++) {
            r->sub[j] = p->bufs[red->comp_mem[j]];
            if (r->sub[j].size > maxsize)
                maxsize = r->sub[j].size;
        }
        /* The capacity left above the stack, when every buffer still fits under it;
         * otherwise the component is only minimised (and the answer is over capacity). */
        if (p->capacity > red->base && p->capacity - red->base >= maxsize)
            r->ccap[c] = p->capacity - red->base;
        struct pack_problem q = reduced_comp(r, c);
        if ((rc = pack_lower_bound(&q, &clb, e)) != ERR_OK)
            return rc;
        if ((rc = greedy_best(&q, r->suboff + lo, &r->cpeak[c], r->tmp, e)) != ERR_OK)
            return rc;
        r->cproven[c] = r->cpeak[c] == clb;
        r->cstage[c] = "greedy";
        if (red->base + clb > r->lb)
            r->lb = red->base + clb;
        r->work[c] = (struct comp_key){clb, c};
    }
    qsort(r->work, red->ncomp, sizeof(*r->work), comp_key_cmp);
    return ERR_OK;
}

/*
 * Pass 2: the components above the goal, highest lower bound first, each with an equal
 * share of the time left (the count only falls as the goal rises) and allowed to stop at
 * what the components before it already need. The whole problem is within the capacity
 * when its last component over it comes under.
 */
static int reduced_search(struct reduced *r, enum pack_solve_mode mode, const struct pack_opts *o,
                          const struct pack_budget *b, unsigned depth, struct pack_incumbent *inc,
                          struct err *e)
{
    const struct pack_problem *p = r->p;
    uint64_t base = r->red->base, goal = r->lb > b->enough ? r->lb : b->enough;
    size_t nc = r->red->ncomp, left = 0, over = 0; /* over: components still above the capacity */
    int rc;

    for (size_t k = 0; k < nc; k++) {
        left += base + r->cpeak[r->work[k].c] > goal;
        over += p->capacity > 0 && base + r->cpeak[r->work[k].c] > p->capacity;
    }
    for (size_t k = 0; k < nc; k++) {
        uint32_t c = r->work[k].c;
        struct pack_problem q = reduced_comp(r, c);
        double now = clock_now();
        if (base + r->cpeak[c] <= goal)
            continue;
        bool was_over = p->capacity > 0 && base + r->cpeak[c] > p->capacity;
        struct pack_budget cb = {now + (b->deadline - now) / (double)(left > 1 ? left : 1),
                                 goal - base};
        struct pack_incumbent ci = {
            r->suboff + r->red->comp_off[c], r->cpeak[c], false, -1, 0, r->cstage[c]};
        left -= left > 0;
        if ((rc = solve(&q, mode, o, &cb, depth + 1, &ci, e)) != ERR_OK)
            return rc;
        r->cpeak[c] = ci.peak;
        r->cproven[c] = ci.proven;
        r->cstage[c] = ci.stage;
        inc->nodes += ci.nodes;
        /* What this component needs, the later ones need not go below. */
        if (base + r->cpeak[c] > goal)
            goal = base + r->cpeak[c];
        /* The last component to come within the capacity makes the whole problem fit
         * (the stack fits: each buffer of it is under the capacity left above it). */
        if (was_over && base + r->cpeak[c] <= p->capacity && --over == 0 && inc->solved_at < 0)
            inc->solved_at = ci.solved_at >= 0 ? ci.solved_at : clock_now();
    }
    return ERR_OK;
}

/*
 * A reduced problem (pack_reduce.c): the universal buffers stacked at the bottom, each
 * component packed on its own above them. Every component first gets the greedy seeds;
 * those whose peak still sets the answer above the lower bound are then solved in turn.
 */
static int solve_reduced(const struct pack_problem *p, enum pack_solve_mode mode,
                         const struct pack_opts *o, const struct pack_budget *b, unsigned depth,
                         const struct pack_reduction *red, struct pack_incumbent *inc,
                         struct err *e)
{
    struct reduced r;
    uint64_t at = 0, top;
    int rc;

    if ((rc = reduced_init(&r, p, red, e)) != ERR_OK)
        return rc;
    for (size_t u = 0; u < red->nuniv; u++) {
        inc->offsets[red->univ[u]] = at;
        at += p->bufs[red->univ[u]].size;
    }
    if ((rc = reduced_seed(&r, e)) != ERR_OK)
        goto out;
    pack_note_fit(p, reduced_top(&r), inc);
    if ((rc = reduced_search(&r, mode, o, b, depth, inc, e)) != ERR_OK)
        goto out;
    for (size_t c = 0; c < red->ncomp; c++)
        for (uint32_t j = red->comp_off[c]; j < red->comp_off[c + 1]; j++)
            inc->offsets[red->comp_mem[j]] = red->base + r.suboff[j];
    top = reduced_top(&r);
    inc->peak = top;
    /* Optimal when it meets the lower bound, or when a component that sets it is proven
     * optimal on its own. */
    inc->proven = top == r.lb;
    inc->stage = "greedy"; /* the stack alone, or the stage of the first component at the top */
    for (size_t c = red->ncomp; c-- > 0;) {
        inc->proven |= r.cproven[c] && red->base + r.cpeak[c] == top;
        if (red->base + r.cpeak[c] == top)
            inc->stage = r.cstage[c];
    }
    pack_note_fit(p, top, inc);
out:
    reduced_free(&r);
    return rc;
}

static int solve(const struct pack_problem *p, enum pack_solve_mode mode, const struct pack_opts *o,
                 const struct pack_budget *b, unsigned depth, struct pack_incumbent *inc,
                 struct err *e)
{
    struct pack_reduction red;
    int rc;

    if (depth >= SOLVE_REDUCE_DEPTH)
        return solve_whole(p, mode, o, b, inc, e);
    if ((rc = pack_reduce(p, &red, e)) != ERR_OK)
        return rc;
    if (red.nuniv == 0 && red.ncomp <= 1)
        rc = solve_whole(p, mode, o, b, inc, e);
    else
        rc = solve_reduced(p, mode, o, b, depth, &red, inc, e);
    pack_reduction_free(&red);
    return rc;
}

int pack_solve(const struct pack_problem *p, enum pack_solve_mode mode, const struct pack_opts *o,
               const struct pack_budget *b, struct pack_incumbent *inc, struct err *e)
{
    inc->peak = NO_PACKING;
    return solve(p, mode, o, b, 0, inc, e);
}
