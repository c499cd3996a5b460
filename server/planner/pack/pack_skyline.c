/*
 * pack_skyline.c - the skyline search: "is there a packing of peak <= H?", decided by
 * filling the time x memory strip from the bottom up, one lowest cell at a time.
 *
 * Model. Time is compressed to columns: the runs between consecutive distinct lifetime
 * bounds, so buffer i covers the columns [cs(i), ce(i)) and two buffers overlap in time
 * iff their column ranges meet. Heights are in units of g, the gcd of the sizes (the stage
 * only runs when g is a multiple of the alignment, so every height is aligned). The state
 * is a skyline h(t) per column: below h(t) every cell of column t is decided, either
 * covered by a placed buffer or declared waste (empty in the packing). Each column may
 * waste at most slack(t) = H - live(t) cells in all, live(t) the sum of sizes live there:
 * the column holds live(t) of buffers and H - live(t) of empty cells, its top included.
 * sl(t), the waste still allowed, only drops on waste moves (a placement raises h(t) and
 * removes as much from what remains to place there), and never goes below 0.
 *
 * Branching. Take a valley: a maximal run [tl, tr] of columns at one height h whose
 * neighbours are both higher (or the boundary); the lowest columns always form one. In any
 * packing that extends the state, the cell (tl, h) is either empty, or covered by an
 * unplaced buffer b. Then b's bottom is exactly h: it is at least h, as column tl is
 * decided below h, and at most h, as b covers the cell. b starts at tl exactly: starting
 * earlier, it would cover column tl-1 at h, where h(tl-1) > h is already decided. And b
 * ends by tr: covering tr+1 at h < h(tr+1) is impossible the same way. So the children
 * are: each unplaced buffer with cs == tl and ce <= tr + 1 placed at h, and one waste
 * move that declares the cell empty (h(tl) += 1, sl(tl) -= 1; allowed when sl(tl) >= 1).
 * Every packing of peak <= H extends exactly one child (the cell is covered by a buffer
 * that starts there or not at all), so the search is complete: an exhausted tree proves
 * that no packing of peak <= H exists. With H at the lower bound on a perfect packing
 * (live(t) = H everywhere) no waste is possible: the tree only branches over placements.
 * The argument holds for every valley, so each node branches on the one with the fewest
 * viable moves (fail first; the leftmost on ties): on the kept perfect seeds the lowest
 * plateau alone reached the bound on 2 of 8 in 10 s, the fewest-moves valley on 6.
 *
 * Symmetry and forced moves (each keeps the argument above):
 *   classes    buffers with the same (cs, ce, size) are interchangeable: a class is
 *              branched on once, its members placed in index order.
 *   same span  a buffer directly on top of a buffer of the same span at column tl (the
 *              two stacked exactly) can swap with it: only one order of class ids is
 *              searched (lower ids below), which keeps a sorted copy of every packing.
 *   forced waste  while h(tl) < h(tl-1), a cell of column tl can only be covered by a
 *              buffer starting at tl (the argument above, at any height below h(tl-1);
 *              tl-1 is in no valley while its right neighbour is lower, so it does not
 *              change). With no unplaced buffer starting at tl, the whole run up to
 *              h(tl-1) (H at the left boundary) is waste in one move. Likewise a valley of
 *              one column: below the lower neighbour only a buffer of that one column fits
 *              there; with none left, the run up to the lower neighbour is waste.
 * Pruning, each a necessary condition of any packing extending the state:
 *   tiling     a valley's cells at h are each empty or covered by a buffer with bottom h
 *              lying inside [tl, tr] (one crossing a neighbour would overlap it), so every
 *              valley must be tiled, left to right, by unplaced buffers starting and ending
 *              inside it and by columns with sl >= 1. Checked right to left for all
 *              valleys at every node; a candidate whose end leaves an untileable rest is
 *              not a move. (Column-local checks, such as each column's lowest free cell
 *              needing a buffer that can rest there, or sums across a step, follow from
 *              sl >= 0 on perfect problems and never fired there: left out.)
 *   refuted    states whose subtree was exhausted go into a table of hashes (see
 *              struct sky_tt), and are refuted when met again by another path.
 *
 * Restarts (pack_skyline_solve): depth-first search has a heavy tail here: one early
 * wrong tile, then a huge refutation of placements under other regions (on the seeds the
 * doubling restarts of four fixed orders left unsolved, the search stayed with 50-280 of
 * 500 buffers placed). So eight variants (time forwards or backwards, candidates widest or
 * largest first, flush candidates first or not: see flush_rank) run in turn, first in their
 * own order, then as randomised dives: at 1 in SKY_DEVIATE branching frames a dive starts
 * from another candidate (all are still tried on backtracking), with its own random stream
 * per run, and a node limit of SKY_DIVE_NODES times the Luby sequence. Variants that
 * differ only in the flush order share a table of refuted states, kept across their runs
 * (the order changes, the classes never). The search is iterative (waste moves can make it
 * deep), bounded in depth and memory (sky_bounds), and deterministic: the streams are fixed, so the
 * same problem, height and limit give the same answer and node count. The runs are spread
 * over up to four threads by table (see struct sky_worker): each run searches as it would
 * on one thread, and the answer is the run of the least index that answers, so threads
 * only shorten the wall time (the sweep seed S56 on one and two threads:
 * tests/bench/RESULTS.md#the-skyline-stage-on-one-and-two-threads).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/base/vec.h"
#include "planner/pack/pack_int.h"

#define SKY_MAX_BUFFERS 200000     /* as the exact solver: beyond, the stage does not run */
#define SKY_MAX_FRAMES  (1u << 22) /* path depth where slack allows more (sky_bounds) */
#define SKY_LARGEST     1u         /* variant bit: candidates largest first (else widest) */
#define SKY_REVERSED    2u         /* variant bit: time runs backwards */
#define SKY_FLUSH       4u         /* variant bit: flush candidates first (see flush_rank) */
#define SKY_VARIANTS    8u
#define SKY_TABLES      4u /* refuted states are shared by the variants that differ in SKY_FLUSH */
#define SKY_DIVE_NODES  2000 /* node limit of a round's runs: this times the Luby term */
#define SKY_DEVIATE     4    /* a dive leaves the heuristic's order at 1 in this many frames */
#define SKY_TT_BITS     17   /* refuted states kept: 2^17 pairs of hashes, 2 MiB */
#define SKY_TT_PROBES   8
#define SKY_NONE        UINT32_MAX /* no class: waste, the floor, or no move yet */
#define SKY_WASTE       (UINT32_MAX - 1)

struct sky_cls {
    uint32_t cs, ce; /* columns [cs, ce) */
    uint64_t size;   /* units */
    uint32_t mem;    /* first member in sky.mem */
    uint32_t cnt;    /* members */
    uint32_t used;   /* members placed (the first used ones, in index order) */
};

struct frame {
    uint64_t key[2]; /* the state's hashes when the frame was entered */
    uint32_t tl, tr;
    uint64_t h;
    uint32_t next; /* the next candidate: index into start_cls from start_off[tl] */
    uint32_t move; /* the applied move: a class, SKY_WASTE, or SKY_NONE */
    uint64_t w;    /* a waste move's units */
    int waste_tried;
    uint32_t rot;  /* candidates are tried from this one on, cyclically (0: in order) */
    uint32_t rank; /* under SKY_FLUSH: the flush rank tried now, 2 down to 0 */
};

struct sky {
    size_t n, ncol, ncls, left;
    uint64_t g, H;
    struct sky_cls *cls;
    uint32_t *mem;       /* n: buffer ids, class by class, index ascending */
    uint32_t *start_off; /* ncol+1: classes by start column */
    uint32_t *start_cls; /* ncls: class ids (ascending: widest, then largest, first) */
    uint64_t *h;         /* ncol: the skyline */
    uint64_t *sl;        /* ncol: waste still allowed */
    uint32_t *top;       /* ncol: class whose top is h(t); SKY_NONE for waste or the floor */
    uint32_t *nstart;    /* ncol: unplaced buffers starting at column t */
    uint8_t *reach;      /* ncol+1: scratch of the tiling check */
    struct vec tops;     /* uint32_t: undo trail of top[] under the moves (sky_bounds) */
    uint64_t *off;       /* n: offsets in units */
    struct vec fr;       /* struct frame: the path, one frame per move (sky_bounds) */
    uint64_t hz[2];      /* the state's two hashes (see state_hash) */
    uint64_t *colw[2];   /* ncol+1 each: prefix sums of the columns' height weights */
    uint64_t *topw[2];   /* ncol each: the columns' top weights */
    uint64_t *clsw[2];   /* ncls each: the classes' weights */
    struct sky_tt *tt;   /* refuted states, the caller's */
    uint64_t nodes, limit;
    uint64_t seed; /* the dive's random stream; 0: the heuristic's order throughout */
    bool flush;    /* the variant's SKY_FLUSH */
    double deadline;
    const atomic_ullong *stop; /* the least run index that answered (NULL: a run on its own) */
    uint64_t index;            /* this run's index: it stops once stop is below it */
    int oom;
};

static void sky_free(struct sky *s)
{
    for (int i = 0; i < 2; i++) {
        free(s->colw[i]);
        free(s->topw[i]);
        free(s->clsw[i]);
    }
    free(s->cls);
    free(s->mem);
    free(s->start_off);
    free(s->start_cls);
    free(s->h);
    free(s->sl);
    free(s->top);
    free(s->nstart);
    free(s->reach);
    vec_free(&s->tops);
    free(s->off);
    vec_free(&s->fr);
}

/* Buffer keys for the class sort: start asc, then the variant's key desc (the end: widest
 * first, or the size: largest first), end desc, size desc, index asc. */
struct bkey {
    uint32_t cs, ce;
    uint64_t size;
    uint64_t r;
    uint32_t idx;
};

static int bkey_cmp(const void *a, const void *b)
{
    const struct bkey *x = a, *y = b;

    if (x->cs != y->cs)
        return x->cs < y->cs ? -1 : 1;
    if (x->r != y->r)
        return x->r > y->r ? -1 : 1;
    if (x->ce != y->ce)
        return x->ce > y->ce ? -1 : 1;
    if (x->size != y->size)
        return x->size > y->size ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull; /* splitmix64 */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Buffer i's lifetime as the variant sees it: time runs backwards under SKY_REVERSED. */
static int64_t sky_lower(const struct pack_problem *p, size_t i, unsigned variant)
{
    return variant & SKY_REVERSED ? -p->bufs[i].upper : p->bufs[i].lower;
}

static int64_t sky_upper(const struct pack_problem *p, size_t i, unsigned variant)
{
    return variant & SKY_REVERSED ? -p->bufs[i].lower : p->bufs[i].upper;
}

/* Columns, classes, and the slack per column; *none set when some column is over H. */
static int sky_classes(struct sky *s, const struct pack_problem *p, unsigned variant, bool *none)
{
    int64_t *bounds = malloc(2 * p->n * sizeof(*bounds));
    struct bkey *k = malloc(p->n * sizeof(*k));
    size_t nb = 0, u;
    int rc = -1;

    if (bounds == NULL || k == NULL)
        goto out;
    for (size_t i = 0; i < p->n; i++) {
        bounds[nb++] = sky_lower(p, i, variant);
        bounds[nb++] = sky_upper(p, i, variant);
    }
    u = pack_time_points(bounds, nb);
    s->ncol = u - 1;
    for (size_t i = 0; i < p->n; i++) {
        uint32_t cs = (uint32_t)pack_time_index(bounds, u, sky_lower(p, i, variant));
        uint32_t ce = (uint32_t)pack_time_index(bounds, u, sky_upper(p, i, variant));
        uint64_t sz = p->bufs[i].size / s->g;
        k[i] = (struct bkey){cs, ce, sz, variant & SKY_LARGEST ? sz : ce, (uint32_t)i};
    }
    qsort(k, p->n, sizeof(*k), bkey_cmp);
    s->cls = malloc(p->n * sizeof(*s->cls));
    s->mem = malloc(p->n * sizeof(*s->mem));
    s->start_off = calloc(s->ncol + 2, sizeof(*s->start_off));
    s->start_cls = malloc(p->n * sizeof(*s->start_cls));
    s->sl = calloc(s->ncol + 1, sizeof(*s->sl));
    if (s->cls == NULL || s->mem == NULL || s->start_off == NULL || s->start_cls == NULL ||
        s->sl == NULL)
        goto out;
    for (size_t i = 0; i < p->n; i++) {
        s->mem[i] = k[i].idx;
        if (i == 0 || k[i].cs != k[i - 1].cs || k[i].ce != k[i - 1].ce ||
            k[i].size != k[i - 1].size) {
            s->cls[s->ncls] = (struct sky_cls){k[i].cs, k[i].ce, k[i].size, (uint32_t)i, 0, 0};
            s->start_cls[s->ncls] = (uint32_t)s->ncls;
            s->start_off[k[i].cs + 1]++;
            s->ncls++;
        }
        s->cls[s->ncls - 1].cnt++;
        for (uint32_t t = k[i].cs; t < k[i].ce; t++)
            s->sl[t] += k[i].size; /* live(t) for now */
    }
    for (size_t t = 0; t < s->ncol; t++) {
        s->start_off[t + 1] += s->start_off[t];
        if (s->sl[t] > s->H)
            *none = true;
        else
            s->sl[t] = s->H - s->sl[t];
    }
    rc = 0;
out:
    free(bounds);
    free(k);
    return rc;
}

/*
 * The maxima of the search's two stacks: what one path can need (a path only ever holds
 * the moves from the root). A move places a buffer (at most n on a path, and the state is
 * final once all are) or wastes at least one unit of a column's allowance (at most slack,
 * the sum of sl(t), on a path), and the path holds a frame per move plus the current one:
 * at most n + slack frames, held to SKY_MAX_FRAMES where slack is large (a run that goes
 * deeper gives up, as at its node limit). A placement pushes one top per column it covers,
 * a waste move one: at most cover (the columns every buffer covers, summed) plus the waste
 * moves. Example 12 at its lower bound fills both exactly (test_pack_skyline).
 */
static void sky_bounds(struct sky *s)
{
    uint64_t slack = 0, cover = 0, w, frames, tops;

    for (size_t t = 0; t < s->ncol; t++)
        if (arith_add(slack, s->sl[t], &slack))
            slack = UINT64_MAX;
    for (size_t c = 0; c < s->ncls; c++)
        if (arith_mul(s->cls[c].ce - s->cls[c].cs, s->cls[c].cnt, &w) ||
            arith_add(cover, w, &cover))
            cover = UINT64_MAX;
    if (slack > SKY_MAX_FRAMES)
        slack = SKY_MAX_FRAMES;
    frames = s->n + slack < SKY_MAX_FRAMES ? s->n + slack : SKY_MAX_FRAMES;
    if (arith_add(cover, slack, &tops) || tops > SIZE_MAX)
        tops = SIZE_MAX;
    vec_init(&s->fr, sizeof(struct frame), (size_t)frames);
    vec_init(&s->tops, sizeof(uint32_t), (size_t)tops);
}

static int sky_init(struct sky *s, const struct pack_problem *p, uint64_t g, uint64_t height,
                    unsigned variant, bool *none)
{
    memset(s, 0, sizeof(*s));
    s->n = p->n;
    s->left = p->n;
    s->g = g;
    s->H = height / g;
    if (sky_classes(s, p, variant, none) != 0)
        return -1;
    s->h = calloc(s->ncol + 1, sizeof(*s->h));
    s->top = malloc((s->ncol + 1) * sizeof(*s->top));
    s->nstart = calloc(s->ncol + 1, sizeof(*s->nstart));
    s->reach = calloc(s->ncol + 2, sizeof(*s->reach));
    s->off = calloc(p->n, sizeof(*s->off)); /* all written once every buffer is placed */
    if (s->h == NULL || s->top == NULL || s->nstart == NULL || s->reach == NULL || s->off == NULL)
        return -1;
    for (size_t t = 0; t < s->ncol; t++)
        s->top[t] = SKY_NONE;
    for (size_t c = 0; c < s->ncls; c++) {
        s->nstart[s->cls[c].cs] += s->cls[c].cnt;
    }
    if (!*none) /* else sl[] is not set, and nothing is searched */
        sky_bounds(s);
    return 0;
}

/* ---- refuted states ------------------------------------------------------------------- */

/*
 * A state is the skyline, the classes' placed counts and the tops (the same-span rule
 * reads them), so two of its hashes are linear forms over them with random 64-bit weights:
 * sum over columns of colw * h + topw * id(top), plus sum over classes of clsw * used.
 * A move updates them in O(1) per column it touches. A state whose frame was exhausted
 * goes into a bounded table (a cache: a lost entry costs only search); entering a state
 * found there is refuted at once. The refutation holds for the same problem, height and
 * variant (the class order decides the same-span rule), so the table lives across that
 * variant's restarts. Both hashes must match: a false match needs a 128-bit collision.
 */
struct sky_tt {
    uint64_t *k; /* 2 x (mask + 1): the pairs of hashes, (0, 0) empty */
    size_t mask;
};

static int sky_tt_init(struct sky_tt *tt)
{
    tt->mask = ((size_t)1 << SKY_TT_BITS) - 1;
    tt->k = calloc(2 * (tt->mask + 1), sizeof(*tt->k));
    return tt->k == NULL ? -1 : 0;
}

static bool sky_tt_has(const struct sky_tt *tt, const uint64_t *key)
{
    for (size_t q = 0; q < SKY_TT_PROBES; q++) {
        size_t j = (key[0] + q) & tt->mask;
        if (tt->k[2 * j] == key[0] && tt->k[2 * j + 1] == (key[1] | 1))
            return true;
        if (tt->k[2 * j] == 0 && tt->k[2 * j + 1] == 0)
            return false;
    }
    return false;
}

static void sky_tt_add(struct sky_tt *tt, const uint64_t *key)
{
    size_t j = (key[0] + (key[1] & (SKY_TT_PROBES - 1))) & tt->mask;

    for (size_t q = 0; q < SKY_TT_PROBES; q++) {
        size_t i = (key[0] + q) & tt->mask;
        if (tt->k[2 * i] == 0 && tt->k[2 * i + 1] == 0) {
            j = i;
            break;
        }
    }
    tt->k[2 * j] = key[0];
    tt->k[2 * j + 1] = key[1] | 1; /* never (0, 0) */
}

/* The weights of the state hashes; 0, or -1 out of memory. */
static int sky_weights(struct sky *s)
{
    for (int i = 0; i < 2; i++) {
        uint64_t seed = mix64(0x736b796c696e65ull + (uint64_t)i);
        s->colw[i] = malloc((s->ncol + 1) * sizeof(*s->colw[i]));
        s->topw[i] = malloc((s->ncol + 1) * sizeof(*s->topw[i]));
        s->clsw[i] = malloc((s->ncls + 1) * sizeof(*s->clsw[i]));
        if (s->colw[i] == NULL || s->topw[i] == NULL || s->clsw[i] == NULL)
            return -1;
        s->colw[i][0] = 0;
        for (size_t t = 0; t < s->ncol; t++) {
            s->colw[i][t + 1] = s->colw[i][t] + mix64(seed ^ (2 * t));
            s->topw[i][t] = mix64(seed ^ (2 * t + 1));
        }
        for (size_t c = 0; c < s->ncls; c++)
            s->clsw[i][c] = mix64(seed ^ ((uint64_t)c << 32) ^ 0x636c73ull);
    }
    return 0;
}

/* The identity of a top in the hashes: a class's other weight, 0 for none. */
static uint64_t top_id(const struct sky *s, int i, uint32_t c)
{
    return c >= s->ncls ? 0 : s->clsw[1 - i][c] | 1;
}

/* Column t's top changes from old to c (sign +1), or back (sign -1, with the roles kept). */
static void hash_top(struct sky *s, uint32_t t, uint32_t old, uint32_t c, int sign)
{
    for (int i = 0; i < 2; i++) {
        uint64_t d = s->topw[i][t] * (top_id(s, i, c) - top_id(s, i, old));
        s->hz[i] += sign > 0 ? d : (uint64_t)0 - d;
    }
}

/* Columns [a, b) rise by dh (sign +1), or fall back (sign -1). */
static void hash_rise(struct sky *s, uint32_t a, uint32_t b, uint64_t dh, int sign)
{
    for (int i = 0; i < 2; i++) {
        uint64_t d = dh * (s->colw[i][b] - s->colw[i][a]);
        s->hz[i] += sign > 0 ? d : (uint64_t)0 - d;
    }
}

/* ---- moves ---------------------------------------------------------------------------- */

static int tops_push(struct sky *s, uint32_t v)
{
    int rc;

    if (s->tops.n == s->tops.cap && (rc = vec_reserve(&s->tops, s->tops.n + 1)) != ERR_OK) {
        s->oom = rc == ERR_NOMEM; /* past the bound: cannot happen (sky_bounds); give up */
        return -1;
    }
    ((uint32_t *)s->tops.data)[s->tops.n++] = v;
    return 0;
}

static int place(struct sky *s, uint32_t c, uint64_t h)
{
    struct sky_cls *k = &s->cls[c];

    for (uint32_t t = k->cs; t < k->ce; t++) {
        if (tops_push(s, s->top[t]) != 0)
            return -1;
        hash_top(s, t, s->top[t], c, 1);
        s->h[t] += k->size;
        s->top[t] = c;
    }
    hash_rise(s, k->cs, k->ce, k->size, 1);
    s->hz[0] += s->clsw[0][c];
    s->hz[1] += s->clsw[1][c];
    s->off[s->mem[k->mem + k->used]] = h;
    k->used++;
    s->nstart[k->cs]--;
    s->left--;
    return 0;
}

static void unplace(struct sky *s, uint32_t c)
{
    struct sky_cls *k = &s->cls[c];

    for (uint32_t t = k->ce; t-- > k->cs;) {
        s->h[t] -= k->size;
        s->top[t] = ((const uint32_t *)s->tops.data)[--s->tops.n];
        hash_top(s, t, s->top[t], c, -1);
    }
    hash_rise(s, k->cs, k->ce, k->size, -1);
    s->hz[0] -= s->clsw[0][c];
    s->hz[1] -= s->clsw[1][c];
    k->used--;
    s->nstart[k->cs]++;
    s->left++;
}

static void undo(struct sky *s, struct frame *f)
{
    if (f->move == SKY_WASTE) {
        s->h[f->tl] -= f->w;
        s->sl[f->tl] += f->w;
        s->top[f->tl] = ((const uint32_t *)s->tops.data)[--s->tops.n];
        hash_top(s, f->tl, s->top[f->tl], SKY_NONE, -1);
        hash_rise(s, f->tl, f->tl + 1, f->w, -1);
    } else if (f->move != SKY_NONE) {
        unplace(s, f->move);
    }
    f->move = SKY_NONE;
}

/*
 * The tiling check of the valley [tl, tr] at its height (see the header), right to left:
 * reach[t] says [t, tr] can be tiled by unplaced buffers inside the valley and columns
 * that may waste. Returns the valley's viable moves: the classes starting at tl whose end
 * leaves a tileable rest, and the waste move when column tl may waste and the rest tiles;
 * 0 when it cannot be tiled at all.
 */
static size_t valley_moves(struct sky *s, uint32_t tl, uint32_t tr)
{
    size_t moves = 0;

    s->reach[tr + 1] = 1;
    for (uint32_t t = tr + 1; t-- > tl;) {
        uint8_t ok = s->sl[t] >= 1 && s->reach[t + 1];
        for (uint32_t q = s->start_off[t]; q < s->start_off[t + 1]; q++) {
            const struct sky_cls *k = &s->cls[s->start_cls[q]];
            if (k->used < k->cnt && k->ce <= tr + 1 && s->reach[k->ce]) {
                ok = 1;
                moves += t == tl;
            }
        }
        s->reach[t] = ok;
    }
    return s->reach[tl] ? moves + (s->sl[tl] >= 1 && s->reach[tl + 1]) : 0;
}

/* The waste move's units at the frame's plateau (the forced runs of the header), 0 when
 * the column cannot waste that much. */
static uint64_t waste_units(const struct sky *s, const struct frame *f)
{
    uint64_t w = 1, hl = f->tl > 0 ? s->h[f->tl - 1] : s->H;
    uint64_t hr = f->tr + 1 < s->ncol ? s->h[f->tr + 1] : s->H;

    if (hl > s->H)
        hl = s->H;
    if (hr > s->H)
        hr = s->H;
    if (s->nstart[f->tl] == 0)
        w = hl - f->h;
    if (f->tl == f->tr) {
        bool single = false;
        for (uint32_t q = s->start_off[f->tl]; q < s->start_off[f->tl + 1] && !single; q++) {
            const struct sky_cls *k = &s->cls[s->start_cls[q]];
            single = k->used < k->cnt && k->ce == f->tl + 1;
        }
        if (!single && (hl < hr ? hl : hr) - f->h > w)
            w = (hl < hr ? hl : hr) - f->h;
    }
    return w <= s->sl[f->tl] ? w : 0;
}

/*
 * How flush a candidate of the frame's valley lies, 0-2: one for ending at the valley's
 * right end (filling its width, no new step), one for a top level with the wall on its
 * left, or on its right when it ends there (no new step in height). Under SKY_FLUSH a
 * frame tries rank 2, then 1, then 0, the variant's order within each: a perfect packing
 * has no empty cell, and placements that leave no step to fill around are those most
 * often in it. Only the order changes.
 */
static unsigned flush_rank(const struct sky *s, const struct frame *f, const struct sky_cls *k)
{
    uint64_t hl = f->tl > 0 ? s->h[f->tl - 1] : s->H;
    uint64_t hr = f->tr + 1 < s->ncol ? s->h[f->tr + 1] : s->H;
    bool fills = k->ce == f->tr + 1;

    return (unsigned)fills + (f->h + k->size == hl || (fills && f->h + k->size == hr));
}

/* Applies the frame's next move; false when none is left. */
static bool next_move(struct sky *s, struct frame *f)
{
    uint32_t below = s->top[f->tl], first = s->start_off[f->tl];
    uint32_t cnt = s->start_off[f->tl + 1] - first;

    (void)valley_moves(s, f->tl, f->tr); /* reach[] of this valley, for viability */
    for (;;) {
        if (f->next == cnt && f->rank > 0) {
            f->rank--; /* the next pass: the candidates of the next lower rank */
            f->next = 0;
        }
        if (f->next == cnt)
            break;
        uint32_t c = s->start_cls[first + (f->next + f->rot) % cnt];
        const struct sky_cls *k = &s->cls[c];
        f->next++;
        if (k->used == k->cnt || k->ce > f->tr + 1 || !s->reach[k->ce] ||
            (s->flush && flush_rank(s, f, k) != f->rank))
            continue;
        /* Same span as the buffer directly below: only larger (lower id) below. */
        if (below != SKY_NONE && below > c && s->cls[below].cs == k->cs &&
            s->cls[below].ce == k->ce)
            continue;
        if (place(s, c, f->h) != 0)
            return false;
        f->move = c;
        return true;
    }
    if (!f->waste_tried && s->reach[f->tl + 1]) {
        f->waste_tried = 1;
        f->w = waste_units(s, f);
        if (f->w == 0 || tops_push(s, s->top[f->tl]) != 0)
            return false;
        hash_top(s, f->tl, s->top[f->tl], SKY_NONE, 1);
        hash_rise(s, f->tl, f->tl + 1, f->w, 1);
        s->h[f->tl] += f->w;
        s->sl[f->tl] -= f->w;
        s->top[f->tl] = SKY_NONE;
        f->move = SKY_WASTE;
        return true;
    }
    return false;
}

/* ---- nodes ---------------------------------------------------------------------------- */

/*
 * Where a dive starts among the candidates of a frame at column tl: mostly 0 (the
 * heuristic's first), at 1 in SKY_DEVIATE frames with two or more candidates another one
 * at random. Only the order changes: every candidate is still tried on backtracking.
 */
static uint32_t deviation(const struct sky *s, uint32_t tl)
{
    uint32_t cnt = s->start_off[tl + 1] - s->start_off[tl];
    uint64_t r = mix64(s->seed ^ mix64(s->nodes));

    if (cnt < 2 || r % SKY_DEVIATE != 0)
        return 0;
    return 1 + (uint32_t)((r >> 32) % (cnt - 1));
}

/*
 * The state after a move: 1 every buffer is placed, 0 refuted (walls, a valley that
 * cannot be tiled), 2 a new frame was pushed for the valley with the fewest moves (the
 * most constrained; leftmost on ties), -1 out of memory or too deep.
 */
static int enter(struct sky *s)
{
    uint32_t best_tl = 0, best_tr = 0;
    size_t best = SIZE_MAX;

    if (s->left == 0)
        return 1;
    if (sky_tt_has(s->tt, s->hz))
        return 0;
    for (uint32_t t = 0; t < s->ncol; t++) {
        uint64_t ht = s->h[t];
        uint32_t tr = t;
        size_t moves;
        if (ht >= s->H)
            continue;
        if (t > 0 && s->h[t - 1] <= ht)
            continue; /* not the left end of a valley */
        while (tr + 1 < s->ncol && s->h[tr + 1] == ht)
            tr++;
        if (tr + 1 < s->ncol && s->h[tr + 1] < ht)
            continue; /* a step down: not a valley */
        if ((moves = valley_moves(s, t, tr)) == 0)
            return 0;
        if (moves < best) {
            best = moves;
            best_tl = t;
            best_tr = tr;
        }
    }
    if (best == SIZE_MAX)
        return 0; /* every column full, buffers left: cannot happen with sl >= 0 */
    struct frame f = {{s->hz[0], s->hz[1]}, best_tl, best_tr, s->h[best_tl], 0, SKY_NONE, 0, 0, 0,
                      s->flush ? 2 : 0};
    if (s->seed != 0)
        f.rot = deviation(s, best_tl);
    int rc = vec_push(&s->fr, &f);
    if (rc != ERR_OK) {
        s->oom = rc == ERR_NOMEM; /* past the bound: too deep (sky_bounds) */
        return -1;
    }
    return 2;
}

/* 1 found, 0 exhausted, -1 node limit, deadline, depth or memory. */
static int sky_search(struct sky *s)
{
    int r = enter(s);

    if (r != 2)
        return r;
    while (s->fr.n > 0) {
        struct frame *f = vec_at(&s->fr, s->fr.n - 1);
        undo(s, f);
        if (s->nodes >= s->limit ||
            ((s->nodes & 1023) == 0 &&
             (clock_now() > s->deadline || (s->stop != NULL && atomic_load(s->stop) < s->index))))
            return -1;
        if (!next_move(s, f)) {
            if (s->oom)
                return -1;
            sky_tt_add(s->tt, f->key); /* exhausted: refuted */
            s->fr.n--;
            continue;
        }
        s->nodes++;
        r = enter(s);
        if (r == 1 || r < 0)
            return r;
    }
    return 0;
}

uint64_t pack_skyline_unit(const struct pack_problem *p)
{
    uint64_t g = 0;

    for (size_t i = 0; i < p->n; i++)
        g = arith_gcd(g, p->bufs[i].size);
    if (g == 0 || p->n > SKY_MAX_BUFFERS || (p->alignment > 1 && g % p->alignment != 0))
        return 0;
    return g;
}

/* What one run searches with: the variant, its table of refuted states (the caller's),
 * the dive's random stream (0: none), and where it stops: its node limit, the deadline, and
 * (stop not NULL) once a run of a lower index has answered. */
struct sky_cfg {
    unsigned variant;
    struct sky_tt *tt;
    uint64_t seed, limit;
    double deadline;
    const atomic_ullong *stop;
    uint64_t index;
};

/* One search (see pack_skyline). */
static int sky_run(const struct pack_problem *p, uint64_t g, uint64_t height,
                   const struct sky_cfg *cfg, uint64_t *offsets, int *result, uint64_t *nodes,
                   struct err *e)
{
    struct sky s;
    bool none = false;
    int rc = ERR_OK;

    if (sky_init(&s, p, g, height, cfg->variant, &none) != 0 || sky_weights(&s) != 0) {
        rc = err_set(e, ERR_NOMEM, NULL, "skyline search: out of memory for %zu buffers", p->n);
        goto out;
    }
    if (none) {
        *result = 0;
        goto out;
    }
    s.limit = cfg->limit;
    s.seed = cfg->seed;
    s.flush = (cfg->variant & SKY_FLUSH) != 0;
    s.deadline = cfg->deadline;
    s.stop = cfg->stop;
    s.index = cfg->index;
    s.tt = cfg->tt;
    *result = sky_search(&s);
    *nodes += s.nodes;
    if (s.oom) {
        rc = err_set(e, ERR_NOMEM, NULL, "skyline search: out of memory for %zu buffers", p->n);
        *result = -1;
    } else if (*result == 1) {
        for (size_t i = 0; i < p->n; i++)
            offsets[i] = s.off[i] * g;
    }
out:
    sky_free(&s);
    return rc;
}

int pack_skyline(const struct pack_problem *p, uint64_t height, unsigned variant,
                 uint64_t node_limit, double deadline, uint64_t *offsets, int *result,
                 uint64_t *nodes, struct err *e)
{
    uint64_t g = pack_skyline_unit(p);
    struct sky_tt tt;
    int rc;

    *result = p->n == 0 ? 1 : -1;
    if (p->n == 0 || g == 0)
        return ERR_OK;
    if (sky_tt_init(&tt) != 0)
        return err_set(e, ERR_NOMEM, NULL, "skyline search: out of memory");
    struct sky_cfg cfg = {variant, &tt, 0, node_limit, deadline, NULL, 0};
    rc = sky_run(p, g, height, &cfg, offsets, result, nodes, e);
    free(tt.k);
    return rc;
}

/* The Luby sequence 1 1 2 1 1 2 4 1 1 2 1 1 2 4 8 ... (term i >= 1): the restart
 * schedule that is within a log factor of the best fixed cutoff for any distribution of run
 * lengths (Luby, Sinclair and Zuckerman 1993), and unbounded, so a run long enough to
 * exhaust the tree always comes. */
static uint64_t luby(uint64_t i)
{
    for (;;) {
        unsigned k = 1;
        while (k < 63 && ((uint64_t)1 << k) - 1 < i)
            k++;
        if (((uint64_t)1 << k) - 1 == i || k == 63)
            return (uint64_t)1 << (k - 1);
        i -= ((uint64_t)1 << (k - 1)) - 1;
    }
}

/*
 * The restarts' runs in one sequence: run k = (round - 1) * SKY_VARIANTS + v is variant
 * v ^ SKY_FLUSH with table v % SKY_TABLES (the flush variants first), in its own order in
 * round 1 and as a dive with its own stream after that. The tables split the runs between
 * the threads: thread t runs those whose table is t modulo the thread count, in sequence
 * order. A run reads and writes only its own table, which only earlier runs of the same
 * thread touched, in the same order as on one thread; so every run searches as it would on
 * one thread, and the answer, that of the least index that answers, is the same for any
 * thread count. A thread stops before a run of a higher index than one that answered, and
 * inside one at its next check (sky_search). Threads only shorten the wall time.
 */
struct sky_worker {
    const struct pack_problem *p;
    uint64_t g, height;
    double deadline;
    struct sky_tt *tt;   /* SKY_TABLES tables, shared; this thread's ones only are touched */
    atomic_ullong *stop; /* shared: the least run index that answered (UINT64_MAX: none) */
    uint64_t *off;       /* n: this thread's packing when it found one */
    uint64_t index;      /* the run that answered (UINT64_MAX: none) */
    uint64_t nodes;      /* spent by this thread's runs */
    unsigned id, nthreads;
    int result; /* its answer: 1 found, 0 proven none */
    int rc;
    struct err e;
};

static void *sky_worker_main(void *arg)
{
    struct sky_worker *w = arg;

    for (uint64_t round = 1;; round++) {
        for (unsigned v = 0; v < SKY_VARIANTS; v++) {
            uint64_t k = (round - 1) * SKY_VARIANTS + v;
            int res = -1;
            if ((v % SKY_TABLES) % w->nthreads != w->id)
                continue;
            if (clock_now() >= w->deadline || atomic_load(w->stop) <= k)
                return NULL;
            struct sky_cfg cfg = {v ^ SKY_FLUSH,
                                  &w->tt[v % SKY_TABLES],
                                  round == 1 ? 0 : mix64(round * SKY_VARIANTS + v),
                                  SKY_DIVE_NODES * luby(round),
                                  w->deadline,
                                  w->stop,
                                  k};
            w->rc = sky_run(w->p, w->g, w->height, &cfg, w->off, &res, &w->nodes, &w->e);
            if (w->rc != ERR_OK || res >= 0) {
                /* An error stops every thread (index 0); an answer the later runs. */
                unsigned long long key = w->rc != ERR_OK ? 0 : k, cur = atomic_load(w->stop);
                while (key < cur && !atomic_compare_exchange_weak(w->stop, &cur, key))
                    ;
                w->index = k;
                w->result = res;
                return NULL;
            }
        }
    }
}

/* The thread count of the stage: threads, or the online CPUs for 0, at most one per table. */
int pack_skyline_solve(const struct pack_problem *p, uint64_t height, unsigned threads,
                       double deadline, uint64_t *offsets, int *result, uint64_t *nodes,
                       struct err *e)
{
    uint64_t g = pack_skyline_unit(p);
    struct sky_tt tt[SKY_TABLES] = {{NULL, 0}};
    struct sky_worker w[SKY_TABLES];
    unsigned nt = pack_threads(threads, SKY_TABLES);
    atomic_ullong stop;
    int rc = ERR_OK;

    *result = p->n == 0 ? 1 : -1;
    if (p->n == 0 || g == 0)
        return ERR_OK;
    atomic_init(&stop, UINT64_MAX);
    memset(w, 0, sizeof(w));
    for (unsigned v = 0; v < SKY_TABLES; v++)
        if (sky_tt_init(&tt[v]) != 0)
            goto nomem;
    for (unsigned t = 0; t < nt; t++) {
        w[t] = (struct sky_worker){.p = p,
                                   .g = g,
                                   .height = height,
                                   .deadline = deadline,
                                   .id = t,
                                   .nthreads = nt,
                                   .tt = tt,
                                   .stop = &stop,
                                   .index = UINT64_MAX,
                                   .result = -1};
        err_clear(&w[t].e);
        if (t > 0 && (w[t].off = malloc(p->n * sizeof(*w[t].off))) == NULL)
            goto nomem;
    }
    w[0].off = offsets;
    pack_fan_out(sky_worker_main, w, sizeof(*w), nt);
    for (unsigned t = 0; t < nt; t++) {
        *nodes += w[t].nodes;
        if (w[t].rc != ERR_OK && rc == ERR_OK) {
            *e = w[t].e;
            rc = w[t].rc;
            *result = -1;
        }
        if (rc == ERR_OK && w[t].index != UINT64_MAX && w[t].index == atomic_load(&stop)) {
            *result = w[t].result;
            if (w[t].result == 1 && t > 0)
                memcpy(offsets, w[t].off, p->n * sizeof(*offsets));
        }
    }
    goto out;
nomem:
    rc = err_set(e, ERR_NOMEM, NULL, "skyline search: out of memory");
out:
    for (unsigned t = 1; t < nt; t++)
        free(w[t].off);
    for (unsigned v = 0; v < SKY_TABLES; v++)
        free(tt[v].k);
    return rc;
}
