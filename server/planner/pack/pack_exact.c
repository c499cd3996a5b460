/*
 * pack_exact.c - the exact solver: feasibility at a height and minimisation of the peak.
 *
 * Search space. Every packing can be pushed down until each buffer rests at offset 0 or on
 * the end of a time-overlapping buffer ("justified"); pushing never raises the peak. Listed
 * by (offset, rank), a justified packing places each buffer at its current *floor*: the
 * highest end of the placed buffers that overlap it. So a depth-first search that places,
 * at each node, one unplaced buffer at its floor, with floors never below the previous
 * offset (cur) and equal offsets in rank order, enumerates every justified packing once.
 *
 * Pruning, each sound for the justified packing with the least sum of offsets:
 *   dominance   let M = min over unplaced k of floor(k) + size(k). Placing anything at or
 *               above M leaves k a hole below it that k could drop into (every later buffer
 *               lies above), so only floors in [cur, M) are candidates; M <= cur is a dead end.
 *   sections    the timeline is cut into sections (maximal runs with one live set). The
 *               unplaced buffers of a section are stacked above max(cur, their lowest
 *               floor), so that plus their total size must fit under the height.
 *   stranded    an unplaced buffer with floor < cur can only rest on a buffer still to be
 *               placed; with no unplaced buffer overlapping it, the node is a dead end.
 *   hatless     a candidate that raised no unplaced floor can sit at its floor in every
 *               packing below the node; once it fails, the later candidates are covered.
 *   decomposition  when no unplaced buffer crosses a section boundary, the two sides are
 *               independent: each is solved once, left to right, without backtracking
 *               between them (MiniMalloc's dynamic decomposition), once the whole part
 *               has passed the section bound at the floor of the placement that split it.
 * All of it is incremental: placing a buffer touches its overlap list and its sections,
 * with an undo trail; the per-node scans are over the unplaced buffers of the part only.
 *
 * Memory. The static data is linear in the problem's size: n, section memberships (tot)
 * and overlap-list entries (nadj). The two stacks are not: a path holds every open node's
 * candidate list and every change since the root, quadratic in n where a long chain of
 * overlapping buffers (consecutive layers' activations) neither decomposes nor prunes
 * (a 300-buffer chain: 22,651 candidates, 24,297 trail entries, 16-25 times its static
 * data). So each stack holds at most EXACT_STACK_FACTOR entries per entry of the static
 * data (n + tot + nadj), and never less than EXACT_STACK_MIN: past it the search gives up
 * as at its node limit, and the solver stops with its incumbent (see pack_exact). The
 * measured peaks: 1.4 (trail) and 1.0 (candidates) per entry on the challenging suite and
 * the perfect seeds, 1.75 and 1.24 on 240 random instances of four shapes.
 *
 * Sizes and heights are divided by the gcd of the sizes (and the alignment): MiniMalloc's
 * instances are all multiples of 1024, so heights step by one unit and the proof "no
 * packing of height H - g exists" makes H optimal.
 *
 * Portfolio. The threads run the same targets with different preorders of the buffers
 * (exact_cycle[] below: static ones, and dynamic ones re-ranked per independent part), in
 * rounds: every thread restarts with the next preorder, and the node limit doubles once
 * every preorder has had it. Nodes count the searches entered (after a placement, or for
 * an independent part); a candidate the section bound excludes costs none. A
 * job stops early only when a lower target, or the same target on a lower-numbered
 * thread, has found a packing, so the outcome depends on node counts only, never on
 * thread timing: deterministic for a thread count (the deadline aside).
 *
 * Minimisation. The goal is first the capacity (MiniMalloc's question), then one unit
 * below the best peak; below the capacity each round also searches a lower height, since
 * tight heights prune hard: halfway between the goal and what failed within the node
 * limit, or the proven lower bound itself (often the optimum). An exhausted search raises
 * the proven bound; the peak is proven optimal when the bound meets it.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/base/vec.h"
#include "planner/pack/pack_int.h"

#define EXACT_MAX_BUFFERS 200000 /* beyond this the exact solver keeps the incumbent */
#define EXACT_MAX_THREADS 16
_Static_assert(EXACT_MAX_THREADS <= PACK_MAX_THREADS, "every worker gets a thread of its own");
#define EXACT_BASE_NODES   4096       /* node limit of the first round; doubles per round */
#define EXACT_STACK_FACTOR 8          /* stack entries per entry of the static data (see Memory) */
#define EXACT_STACK_MIN    (1u << 18) /* ... and at least this many: small problems never stop */
/*
 * The portfolio of preorders. Letters (MiniMalloc's): T max section total, W width, A
 * area, in priority order. Dynamic ones re-rank every independent part found during the
 * search by what remains in it (rerank), as MiniMalloc re-sorts its sub-partitions.
 * Measured alone on the challenging suite at capacity (nodes to the first packing):
 * dynamic TWA solves A 4768, D 6026, E 5632 (the only one within 1M), F 7050, G 1265,
 * I 1969 (the only one), J 622, K 2115; dynamic TAW B 15994, C 4329, H 1487 (the only
 * one); WAT A 49191, D 2570, K 2045; static TWA F 505, G 795. The search heuristic's two
 * probe threads start at entries 0 and 3, so the two that cover the suite come there.
 */
static const struct {
    const char *letters;
    bool dynamic;
} portfolio[] = {
    {"TWA", true}, {"WAT", true}, {"TWA", false}, {"TAW", true}, {"TAW", false}, {"WAT", false},
};
#define EXACT_PORTFOLIO (sizeof(portfolio) / sizeof(portfolio[0]))
/* The preorders the exact solver's rounds cycle through (indices into portfolio[]; the
 * probes use all of them), the likeliest first: with two threads, the first round runs
 * dynamic TWA and TAW. */
static const unsigned exact_cycle[] = {0, 3, 1, 2};
#define EXACT_CYCLE (sizeof(exact_cycle) / sizeof(exact_cycle[0]))

/* Static data shared read-only by the threads. */
struct xprob {
    size_t n, nsec;
    uint64_t *size;     /* n: sizes in units of g */
    uint32_t *sec_lo;   /* n: first section of each buffer */
    uint32_t *sec_hi;   /* n: one past its last section */
    uint32_t *adj_off;  /* n+1: overlap list offsets */
    uint32_t *adj;      /* overlap lists: buffers overlapping in time */
    uint64_t *sectotal; /* nsec: total size live in each section */
    uint32_t *sec_off;  /* nsec+1: section member list offsets */
    uint32_t *sec_mem;  /* buffers live in each section */
    uint64_t *cuts0;    /* nsec+1: buffers crossing boundary b (between sections b-1, b) */
    uint64_t align;     /* in units of g; 0 or 1 = none */
    uint64_t *width;    /* n: upper - lower */
    uint64_t *area;     /* n: size (units) x width, saturated */
    size_t stack_max;   /* entries each stack of a search may hold (see Memory) */
};

struct trail_ent {
    uint64_t *at;
    uint64_t old;
};

struct pre_key {
    uint64_t k[4];
    uint32_t idx;
};

/* One thread's search state. */
struct xsearch {
    const struct xprob *xp;
    uint64_t *rank;       /* n: preorder rank of each buffer (re-ranked at decompositions) */
    uint64_t *base_rank;  /* n: the static preorder a search starts from */
    struct pre_key *keys; /* n: scratch for re-ranking */
    unsigned heur;        /* preorder in use */
    uint64_t *floor_;     /* n: highest end of placed overlapping buffers (aligned) */
    uint64_t *off;        /* n: offset of placed buffers */
    uint32_t *left;       /* unplaced buffers; nleft of them */
    uint32_t *leftpos;    /* n: position of each buffer in left */
    size_t nleft;
    uint64_t *rem;     /* nsec: unplaced size live in each section */
    uint64_t *wit;     /* nsec: the section's witness, an index into sec_mem (see witness) */
    uint64_t *cuts;    /* nsec+1: unplaced buffers crossing each section boundary */
    uint64_t *degleft; /* n: unplaced buffers overlapping each buffer */
    int hat;           /* the last placement raised some unplaced buffer's floor */
    struct vec trail;  /* struct trail_ent: the undo trail, at most xp->stack_max */
    struct vec cand;   /* uint32_t: the open nodes' candidates, at most xp->stack_max */
    uint64_t height;   /* target height (units) */
    uint64_t nodes, node_limit;
    double deadline;
    atomic_uint *found_by; /* shared: least (target, thread) key that found a packing */
    unsigned id;           /* this thread's number */
    size_t job;            /* index of the target being searched */
    int oom;
    const char *full; /* the stack that outgrew stack_max in this search (NULL: none) */
};

static void xprob_free(struct xprob *xp)
{
    free(xp->size);
    free(xp->sec_lo);
    free(xp->sec_hi);
    free(xp->adj_off);
    free(xp->adj);
    free(xp->sectotal);
    free(xp->width);
    free(xp->area);
    free(xp->sec_off);
    free(xp->sec_mem);
    free(xp->cuts0);
}

static int exact_nomem(struct err *e, size_t n)
{
    return err_set(e, ERR_NOMEM, NULL, "exact solver: out of memory for %zu buffers", n);
}

/* Sizes in units of g, widths, areas, and the sections: the distinct lifetime bounds cut
 * the timeline into nsec sections, and buffer i spans [sec_lo[i], sec_hi[i]). 0, or -1
 * out of memory. */
static int xprob_sections(struct xprob *xp, const struct pack_problem *p, uint64_t g)
{
    int64_t *bounds = malloc(2 * p->n * sizeof(*bounds));
    size_t nb = 0;
    int rc = 0;

    xp->size = malloc(p->n * sizeof(*xp->size));
    xp->sec_lo = malloc(p->n * sizeof(*xp->sec_lo));
    xp->sec_hi = malloc(p->n * sizeof(*xp->sec_hi));
    xp->width = malloc(p->n * sizeof(*xp->width));
    xp->area = malloc(p->n * sizeof(*xp->area));
    if (bounds == NULL || xp->size == NULL || xp->sec_lo == NULL || xp->sec_hi == NULL ||
        xp->width == NULL || xp->area == NULL) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < p->n; i++) {
        xp->size[i] = p->bufs[i].size / g;
        xp->width[i] = (uint64_t)(p->bufs[i].upper - p->bufs[i].lower);
        if (__builtin_mul_overflow(xp->size[i], xp->width[i], &xp->area[i]))
            xp->area[i] = UINT64_MAX;
        bounds[nb++] = p->bufs[i].lower;
        bounds[nb++] = p->bufs[i].upper;
    }
    nb = pack_time_points(bounds, nb);
    xp->nsec = nb - 1;
    xp->sectotal = calloc(xp->nsec + 1, sizeof(*xp->sectotal));
    if (xp->sectotal == NULL) {
        rc = -1;
        goto out;
    }
    for (size_t i = 0; i < p->n; i++) {
        xp->sec_lo[i] = (uint32_t)pack_time_index(bounds, nb, p->bufs[i].lower);
        xp->sec_hi[i] = (uint32_t)pack_time_index(bounds, nb, p->bufs[i].upper);
        for (uint32_t s = xp->sec_lo[i]; s < xp->sec_hi[i]; s++)
            xp->sectotal[s] += xp->size[i];
    }
out:
    free(bounds);
    return rc;
}

/* Section member lists and boundary cut counts. 0, or -1 out of memory (or too many
 * memberships for 32-bit offsets). */
static int xprob_members(struct xprob *xp, const struct pack_problem *p)
{
    uint32_t *fill = NULL;
    size_t tot = 0;

    xp->sec_off = calloc(xp->nsec + 2, sizeof(*xp->sec_off));
    xp->cuts0 = calloc(xp->nsec + 1, sizeof(*xp->cuts0));
    if (xp->sec_off == NULL || xp->cuts0 == NULL)
        return -1;
    for (size_t i = 0; i < p->n; i++) {
        tot += xp->sec_hi[i] - xp->sec_lo[i];
        if (tot > (size_t)UINT32_MAX)
            return -1;
        for (uint32_t c = xp->sec_lo[i]; c < xp->sec_hi[i]; c++)
            xp->sec_off[c + 1]++;
        for (uint32_t b = xp->sec_lo[i] + 1; b < xp->sec_hi[i]; b++)
            xp->cuts0[b]++;
    }
    for (size_t c = 0; c < xp->nsec; c++)
        xp->sec_off[c + 1] += xp->sec_off[c];
    xp->sec_mem = malloc((tot ? tot : 1) * sizeof(*xp->sec_mem));
    fill = calloc(xp->nsec + 1, sizeof(*fill));
    if (xp->sec_mem == NULL || fill == NULL) {
        free(fill);
        return -1;
    }
    for (size_t i = 0; i < p->n; i++)
        for (uint32_t c = xp->sec_lo[i]; c < xp->sec_hi[i]; c++)
            xp->sec_mem[xp->sec_off[c] + fill[c]++] = (uint32_t)i;
    free(fill);
    return 0;
}

/* Overlap lists: i and j overlap iff their section ranges intersect. A sweep in lower
 * order counts them (pass 0), then fills them (pass 1); their total size is bounded by
 * the caller's limit on n. */
static int xprob_overlaps(struct xprob *xp, const struct pack_problem *p, struct err *e)
{
    uint32_t *order = malloc(p->n * sizeof(*order)), *fill = NULL;
    size_t nadj = 0;
    int rc;

    xp->adj_off = calloc(p->n + 1, sizeof(*xp->adj_off));
    if (order == NULL || xp->adj_off == NULL) {
        rc = exact_nomem(e, p->n);
        goto out;
    }
    if ((rc = pack_sort_order(p, PACK_ORDER_PROGRAM, order, e)) != ERR_OK)
        goto out;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            for (size_t i = 0; i < p->n; i++)
                xp->adj_off[i + 1] += xp->adj_off[i];
            xp->adj = malloc((xp->adj_off[p->n] ? xp->adj_off[p->n] : 1) * sizeof(*xp->adj));
            fill = calloc(p->n, sizeof(*fill));
            if (xp->adj == NULL || fill == NULL) {
                rc = exact_nomem(e, p->n);
                goto out;
            }
        }
        for (size_t a = 0; a < p->n; a++) {
            uint32_t i = order[a];
            for (size_t b = a + 1; b < p->n; b++) {
                uint32_t j = order[b];
                if (xp->sec_lo[j] >= xp->sec_hi[i])
                    break;
                if (pass == 1) {
                    xp->adj[xp->adj_off[i] + fill[i]++] = j;
                    xp->adj[xp->adj_off[j] + fill[j]++] = i;
                    continue;
                }
                xp->adj_off[i + 1]++;
                xp->adj_off[j + 1]++;
                if ((nadj += 2) > (size_t)UINT32_MAX) {
                    rc = exact_nomem(e, p->n);
                    goto out;
                }
            }
        }
    }
out:
    free(order);
    free(fill);
    return rc;
}

/* Builds the static data of the search; on failure, frees what it built. */
static int xprob_init(struct xprob *xp, const struct pack_problem *p, uint64_t g, struct err *e)
{
    int rc;

    memset(xp, 0, sizeof(*xp));
    xp->n = p->n;
    xp->align = p->alignment > 1 ? p->alignment / g : 0;
    if (xprob_sections(xp, p, g) != 0 || xprob_members(xp, p) != 0)
        rc = exact_nomem(e, p->n);
    else
        rc = xprob_overlaps(xp, p, e);
    if (rc != ERR_OK) {
        xprob_free(xp);
        return rc;
    }
    /* The stacks' bound (see Memory): the counts are 32-bit, so nothing here overflows;
     * checked all the same. */
    uint64_t data, max;
    if (arith_add(xp->n, xp->sec_off[xp->nsec], &data) ||
        arith_add(data, xp->adj_off[xp->n], &data) || arith_mul(data, EXACT_STACK_FACTOR, &max) ||
        max > SIZE_MAX)
        max = SIZE_MAX;
    xp->stack_max = max > EXACT_STACK_MIN ? (size_t)max : EXACT_STACK_MIN;
    return ERR_OK;
}

/* ---- preorders ---------------------------------------------------------------------- */

static int pre_key_cmp(const void *a, const void *b)
{
    const struct pre_key *x = a, *y = b;

    for (int i = 0; i < 4; i++)
        if (x->k[i] != y->k[i])
            return x->k[i] > y->k[i] ? -1 : 1; /* descending */
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/*
 * Preorder number h of the portfolio (modulo its size): letters T (max section total),
 * W (width), A (area), Z (size) in the priority of the string.
 */
static int preorder(const struct pack_problem *p, const struct xprob *xp, unsigned h,
                    uint64_t *rank, struct err *e)
{
    const size_t nh = EXACT_PORTFOLIO;
    struct pre_key *keys = malloc(p->n * sizeof(*keys));

    if (keys == NULL)
        return err_set(e, ERR_NOMEM, NULL, "exact solver: out of memory");
    for (size_t i = 0; i < p->n; i++) {
        const char *s = portfolio[h % nh].letters;
        uint64_t w = (uint64_t)(p->bufs[i].upper - p->bufs[i].lower), t = 0;
        uint64_t a = xp->size[i] * (w > UINT64_MAX / xp->size[i] ? UINT64_MAX / xp->size[i] : w);
        for (uint32_t sct = xp->sec_lo[i]; sct < xp->sec_hi[i]; sct++)
            if (xp->sectotal[sct] > t)
                t = xp->sectotal[sct];
        keys[i].idx = (uint32_t)i;
        for (int c = 0; c < 3; c++)
            keys[i].k[c] = s[c] == 'T' ? t : s[c] == 'W' ? w : s[c] == 'A' ? a : xp->size[i];
        keys[i].k[3] = 0;
    }
    qsort(keys, p->n, sizeof(*keys), pre_key_cmp);
    for (size_t r = 0; r < p->n; r++)
        rank[keys[r].idx] = r;
    free(keys);
    return ERR_OK;
}

/* ---- search ------------------------------------------------------------------------- */

/* Room for one more entry on stack v (named what): -1 when it has outgrown its bound (the
 * search gives up: s->full) or out of memory (s->oom), else 0. */
static int stack_room(struct xsearch *s, struct vec *v, const char *what)
{
    int rc;

    if (v->n < v->cap)
        return 0;
    if ((rc = vec_reserve(v, v->n + 1)) == ERR_OK)
        return 0;
    if (rc == ERR_LIMIT)
        s->full = what;
    else
        s->oom = 1;
    return -1;
}

static int trail_set(struct xsearch *s, uint64_t *at, uint64_t v)
{
    if (stack_room(s, &s->trail, "undo trail") != 0)
        return -1;
    ((struct trail_ent *)s->trail.data)[s->trail.n++] = (struct trail_ent){at, *at};
    *at = v;
    return 0;
}

static void trail_undo(struct xsearch *s, size_t mark)
{
    const struct trail_ent *t = s->trail.data;

    while (s->trail.n > mark) {
        s->trail.n--;
        *t[s->trail.n].at = t[s->trail.n].old;
    }
}

static uint64_t align_units(uint64_t v, uint64_t a)
{
    return a > 1 ? (v + a - 1) / a * a : v;
}

/*
 * The section bound: the unplaced buffers of section c are stacked above the lowest of
 * their floors, so one of them needs floor + rem[c] <= h. Each section keeps a witness
 * that does; a placement only re-checks the sections of the buffers it touched, and
 * looks for a new witness (the next member round the section's list) where the old one
 * was placed or rose too high. Returns 1 when none is left (the bound fails), -1 on out
 * of memory, else 0.
 */
static int witness(struct xsearch *s, uint32_t c)
{
    const struct xprob *xp = s->xp;
    uint64_t w = s->wit[c], lo = xp->sec_off[c], nm = xp->sec_off[c + 1] - lo, lim;

    if (s->rem[c] == 0)
        return 0;
    if (s->rem[c] > s->height)
        return 1;
    lim = s->height - s->rem[c];
    for (uint64_t k = 0; k < nm; k++) {
        uint64_t q = w + k < lo + nm ? w + k : w + k - nm;
        uint32_t j = xp->sec_mem[q];
        if (s->leftpos[j] < s->nleft && s->floor_[j] <= lim)
            return q == w ? 0 : trail_set(s, &s->wit[c], q);
    }
    return 1;
}

/*
 * Places i at its floor: raises the floors of the unplaced buffers overlapping it, and
 * updates its sections (remaining size, witnesses) and the boundary cuts. Returns -1 on
 * out of memory, else PLACE_SPLIT when a boundary inside i's lifetime lost its last
 * crossing buffer (the problem decomposes there) and PLACE_DEAD when a section bound
 * fails (the child is refuted without a node).
 */
#define PLACE_SPLIT 1
#define PLACE_DEAD  2
static int place(struct xsearch *s, uint32_t i)
{
    const struct xprob *xp = s->xp;
    uint64_t o = s->floor_[i], fl = align_units(o + xp->size[i], xp->align);
    uint32_t pos = s->leftpos[i], last = s->left[s->nleft - 1];
    int res = 0, w;

    s->hat = 0;
    s->off[i] = o;
    s->left[pos] = last;
    s->leftpos[last] = pos;
    s->left[s->nleft - 1] = i;
    s->leftpos[i] = (uint32_t)(s->nleft - 1);
    s->nleft--;
    for (uint32_t c = xp->sec_lo[i]; c < xp->sec_hi[i]; c++)
        if (trail_set(s, &s->rem[c], s->rem[c] - xp->size[i]) != 0)
            return -1;
    for (uint32_t b = xp->sec_lo[i] + 1; b < xp->sec_hi[i]; b++) {
        if (trail_set(s, &s->cuts[b], s->cuts[b] - 1) != 0)
            return -1;
        if (s->cuts[b] == 0)
            res |= PLACE_SPLIT;
    }
    for (uint32_t c = xp->sec_lo[i]; c < xp->sec_hi[i]; c++)
        if ((w = witness(s, c)) != 0)
            goto dead;
    for (uint32_t k = xp->adj_off[i]; k < xp->adj_off[i + 1]; k++) {
        uint32_t j = xp->adj[k];
        if (s->leftpos[j] >= s->nleft)
            continue;
        if (trail_set(s, &s->degleft[j], s->degleft[j] - 1) != 0)
            return -1;
        if (s->floor_[j] >= fl)
            continue;
        if (trail_set(s, &s->floor_[j], fl) != 0)
            return -1;
        s->hat = 1;
        for (uint32_t c = xp->sec_lo[j]; c < xp->sec_hi[j]; c++) {
            if (xp->sec_mem[s->wit[c]] == j && (w = witness(s, c)) != 0)
                goto dead;
        }
    }
    return res;
dead:
    /* Out of memory, or refuted: the caller undoes the rest and only needs the hat. */
    for (uint32_t k = xp->adj_off[i]; k < xp->adj_off[i + 1] && !s->hat; k++) {
        uint32_t j = xp->adj[k];
        s->hat = s->leftpos[j] < s->nleft && s->floor_[j] < fl;
    }
    return w < 0 ? -1 : res | PLACE_DEAD;
}

/* Undoes every placement and change made since (nleft0, mark). */
static void undo_to(struct xsearch *s, size_t nleft0, size_t mark)
{
    trail_undo(s, mark);
    s->nleft = nleft0;
}

static int cand_push(struct xsearch *s, uint32_t i)
{
    if (stack_room(s, &s->cand, "candidate stack") != 0)
        return -1;
    ((uint32_t *)s->cand.data)[s->cand.n++] = i;
    return 0;
}

static int dfs(struct xsearch *s, uint32_t slo, uint32_t shi, uint64_t cur, uint64_t last_rank);

/* Orders the nc candidates c[] by (floor, rank), the order dfs tries them in. */
static void cand_sort(struct xsearch *s, uint32_t *c, size_t nc)
{
    if (nc > 64) { /* long lists (thousands at the root of a large problem): qsort */
        for (size_t a = 0; a < nc; a++)
            s->keys[a] =
                (struct pre_key){{UINT64_MAX - s->floor_[c[a]], UINT64_MAX - s->rank[c[a]]}, c[a]};
        qsort(s->keys, nc, sizeof(*s->keys), pre_key_cmp); /* descending keys */
        for (size_t a = 0; a < nc; a++)
            c[a] = s->keys[a].idx;
        return;
    }
    for (size_t a = 1; a < nc; a++) { /* insertion sort: lists are short */
        uint32_t x = c[a];
        size_t b = a;
        for (; b > 0; b--) {
            uint32_t y = c[b - 1];
            if (s->floor_[y] < s->floor_[x] ||
                (s->floor_[y] == s->floor_[x] && s->rank[y] < s->rank[x]))
                break;
            c[b] = y;
        }
        c[b] = x;
    }
}

/*
 * Re-ranks the unplaced buffers of the part [slo, shi) with the thread's preorder letters,
 * T now meaning the largest *remaining* section total: what is left to place decides what
 * is hard (MiniMalloc re-sorts its sub-partitions the same way). Ranks go on the trail.
 */
static int rerank(struct xsearch *s, uint32_t slo, uint32_t shi)
{
    const struct xprob *xp = s->xp;
    const char *letters = portfolio[s->heur % EXACT_PORTFOLIO].letters;
    size_t k = 0;

    if (!portfolio[s->heur % EXACT_PORTFOLIO].dynamic)
        return 0;
    for (size_t q = 0; q < s->nleft; q++) {
        uint32_t j = s->left[q];
        uint64_t t = 0;
        if (xp->sec_lo[j] < slo || xp->sec_hi[j] > shi)
            continue;
        for (uint32_t c = xp->sec_lo[j]; c < xp->sec_hi[j]; c++)
            if (s->rem[c] > t)
                t = s->rem[c];
        s->keys[k].idx = j;
        for (int c = 0; c < 3; c++)
            s->keys[k].k[c] = letters[c] == 'T'   ? t
                              : letters[c] == 'W' ? xp->width[j]
                                                  : xp->area[j];
        s->keys[k].k[3] = 0;
        k++;
    }
    qsort(s->keys, k, sizeof(*s->keys), pre_key_cmp);
    for (size_t r = 0; r < k; r++)
        if (s->rank[s->keys[r].idx] != r && trail_set(s, &s->rank[s->keys[r].idx], r) != 0)
            return -1;
    return 0;
}

/*
 * Solves the independent parts of [slo, shi) split at its zero-cut boundaries, one after
 * the other (no unplaced buffer crosses such a boundary, so the parts share nothing). A
 * part without a packing fails the whole; on failure every placement made here is undone.
 * Every section of [slo, shi) has passed its bound at the floor of the placement that split
 * it (place() and the candidate filter, as MiniMalloc checks every section before it
 * decomposes): each part restarts at offset 0, and a part searched first would otherwise
 * hide a sibling that cannot fit at all (before: H at capacity, TAW-dynamic, 2.09M nodes
 * instead of 4789; E, TWA-dynamic, 4.9M instead of 13597).
 */
static int split(struct xsearch *s, uint32_t slo, uint32_t shi)
{
    size_t nleft0 = s->nleft, mark = s->trail.n;
    uint32_t a = slo;
    int r = 1;

    for (uint32_t b = slo + 1; b <= shi && r == 1; b++) {
        if (b < shi && s->cuts[b] != 0)
            continue;
        if (rerank(s, a, b) != 0) {
            r = -1;
            break;
        }
        r = dfs(s, a, b, 0, UINT64_MAX);
        a = b;
    }
    if (r != 1)
        undo_to(s, nleft0, mark);
    return r;
}

/*
 * Searches the part [slo, shi) of the timeline: the unplaced buffers whose lifetimes lie
 * in it. Returns 1 found (the placements stay), 0 exhausted, -1 aborted (node limit,
 * deadline, a lower-numbered thread decided, out of memory).
 */
static int dfs(struct xsearch *s, uint32_t slo, uint32_t shi, uint64_t cur, uint64_t last_rank)
{
    const struct xprob *xp = s->xp;
    uint64_t m = UINT64_MAX, h = s->height;
    size_t base, nc, members = 0;
    uint32_t cmax = slo; /* the part's section with the most unplaced size */
    int r = 0;

    if (++s->nodes > s->node_limit)
        return -1;
    /* Stop when a packing within a lower target, or the same target from a lower thread,
     * is known (see worker_main), or at the deadline. Every 16 nodes: a node scans the
     * part and may try hundreds of placements, so on large problems 256 of them ran
     * 0.1 s past the deadline. */
    if ((s->nodes & 15) == 0 && (atomic_load_explicit(s->found_by, memory_order_relaxed) <
                                     s->job * EXACT_MAX_THREADS + s->id ||
                                 clock_now() > s->deadline))
        return -1;
    for (size_t k = 0; k < s->nleft; k++) {
        uint32_t j = s->left[k];
        if (xp->sec_lo[j] < slo || xp->sec_hi[j] > shi)
            continue;
        members++;
        /* Below cur, j can only be placed on a buffer still to come: none, dead end. */
        if (s->floor_[j] < cur && s->degleft[j] == 0)
            return 0;
        uint64_t t = s->floor_[j] + xp->size[j];
        if (t < m)
            m = t;
    }
    if (members == 0)
        return 1;
    if (m <= cur || m > h)
        return 0;
    for (uint32_t c = slo; c < shi; c++) /* their bounds hold: see witness() */
        if (s->rem[c] > s->rem[cmax])
            cmax = c;
    /* Candidates: floors in [cur, m), ordered by (floor, rank), at most h - rem[cmax]:
     * the child's cur is the floor, and section cmax then needs floor + rem <= h (inside
     * the candidate's lifetime the others sit above floor + size and rem drops by size:
     * the same sum; alone there, it would not fit under h itself). */
    base = s->cand.n;
    for (size_t k = 0; k < s->nleft; k++) {
        uint32_t j = s->left[k];
        uint64_t f = s->floor_[j];
        if (xp->sec_lo[j] < slo || xp->sec_hi[j] > shi)
            continue;
        if (f < cur || f >= m || f + xp->size[j] > h || f + s->rem[cmax] > h)
            continue;
        if (f == cur && last_rank != UINT64_MAX && s->rank[j] <= last_rank)
            continue;
        if (cand_push(s, j) != 0)
            return -1;
    }
    nc = s->cand.n - base;
    cand_sort(s, (uint32_t *)s->cand.data + base, nc);
    for (size_t a = 0; a < nc && r == 0; a++) {
        uint32_t i = ((const uint32_t *)s->cand.data)[base + a]; /* re-read: deeper nodes grow it */
        size_t mark = s->trail.n, nleft0 = s->nleft;
        uint64_t o = s->floor_[i];
        int z = place(s, i);
        if (z < 0) {
            r = -1;
            break;
        }
        int hat = s->hat;
        r = z & PLACE_DEAD    ? 0
            : z & PLACE_SPLIT ? split(s, slo, shi)
                              : dfs(s, slo, shi, o, s->rank[i]);
        if (r == 1)
            break; /* keep the packing */
        undo_to(s, nleft0, mark);
        /* Hatless: i raised no unplaced floor, so every packing of this node can have i
         * at its floor, and all of those that place i before the later candidates were
         * just refuted. */
        if (r == 0 && !hat)
            break;
    }
    s->cand.n = base;
    return r;
}

/* ---- threads and rounds ------------------------------------------------------------- */

#define EXACT_MAX_TARGETS 2

/* One thread of the portfolio: its search state, and its jobs of the current round. */
struct worker {
    struct xsearch s;
    unsigned heur; /* preorder in use */
    size_t ntargets;
    uint64_t target[EXACT_MAX_TARGETS];
    int result[EXACT_MAX_TARGETS]; /* 1 found, 0 exhausted, -1 aborted or skipped */
    bool full[EXACT_MAX_TARGETS];  /* aborted: a stack outgrew its bound (see Memory) */
    uint64_t *offs[EXACT_MAX_TARGETS];
    uint64_t peak[EXACT_MAX_TARGETS];
    uint64_t nodes; /* spent by this worker's searches in the round */
};

static void xsearch_free(struct xsearch *s)
{
    free(s->rank);
    free(s->keys);
    free(s->base_rank);
    free(s->floor_);
    free(s->off);
    free(s->left);
    free(s->leftpos);
    free(s->rem);
    free(s->wit);
    free(s->cuts);
    free(s->degleft);
    vec_free(&s->trail);
    vec_free(&s->cand);
}

static int xsearch_init(struct xsearch *s, const struct xprob *xp, unsigned id)
{
    memset(s, 0, sizeof(*s));
    s->xp = xp;
    s->id = id;
    s->rank = malloc(xp->n * sizeof(*s->rank));
    s->keys = malloc(xp->n * sizeof(*s->keys));
    s->base_rank = malloc(xp->n * sizeof(*s->base_rank));
    s->floor_ = malloc(xp->n * sizeof(*s->floor_));
    s->off = malloc(xp->n * sizeof(*s->off));
    s->left = malloc(xp->n * sizeof(*s->left));
    s->leftpos = malloc(xp->n * sizeof(*s->leftpos));
    s->rem = malloc((xp->nsec + 1) * sizeof(*s->rem));
    s->wit = malloc((xp->nsec + 1) * sizeof(*s->wit));
    s->cuts = malloc((xp->nsec + 1) * sizeof(*s->cuts));
    s->degleft = malloc(xp->n * sizeof(*s->degleft));
    vec_init(&s->trail, sizeof(struct trail_ent), xp->stack_max);
    vec_init(&s->cand, sizeof(uint32_t), xp->stack_max);
    if (s->degleft == NULL || s->rank == NULL || s->keys == NULL || s->base_rank == NULL ||
        s->floor_ == NULL || s->off == NULL || s->left == NULL || s->leftpos == NULL ||
        s->rem == NULL || s->wit == NULL || s->cuts == NULL)
        return -1;
    return 0;
}

/* One search from scratch at s->height; returns dfs's answer. */
static int search_once(struct xsearch *s)
{
    const struct xprob *xp = s->xp;

    s->nleft = xp->n;
    memcpy(s->rank, s->base_rank, xp->n * sizeof(*s->rank));
    for (size_t i = 0; i < xp->n; i++) {
        s->left[i] = (uint32_t)i;
        s->leftpos[i] = (uint32_t)i;
        s->floor_[i] = 0;
        s->degleft[i] = xp->adj_off[i + 1] - xp->adj_off[i];
    }
    memcpy(s->rem, xp->sectotal, xp->nsec * sizeof(*s->rem));
    memcpy(s->cuts, xp->cuts0, (xp->nsec + 1) * sizeof(*s->cuts));
    s->trail.n = 0;
    s->cand.n = 0;
    s->full = NULL;
    s->nodes = 0;
    for (size_t c = 0; c < xp->nsec; c++) {
        s->wit[c] = xp->sec_off[c];
        if (s->rem[c] > s->height)
            return 0; /* the lower bound: nothing fits */
    }
    return s->oom ? -1 : split(s, 0, (uint32_t)xp->nsec);
}

/*
 * Runs this thread's jobs of the round: one search per target, lowest target first. A
 * job is skipped (or stopped) once a packing within a lower or equal target is known from
 * this thread or a lower-numbered one: the round's answer is then fixed whatever the job
 * would find, so the outcome never depends on thread timing.
 */
static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct xsearch *s = &w->s;

    for (size_t k = 0; k < w->ntargets; k++) {
        w->result[k] = -1;
        w->full[k] = false;
        s->job = k;
        if (atomic_load(s->found_by) < k * EXACT_MAX_THREADS + s->id)
            continue;
        s->height = w->target[k];
        w->result[k] = search_once(s);
        w->nodes += s->nodes;
        w->full[k] = s->full != NULL;
        if (s->oom)
            w->result[k] = -1;
        if (w->result[k] == 1) {
            uint64_t pk = 0;
            for (size_t i = 0; i < s->xp->n; i++) {
                w->offs[k][i] = s->off[i];
                if (s->off[i] + s->xp->size[i] > pk)
                    pk = s->off[i] + s->xp->size[i];
            }
            w->peak[k] = pk;
            /* found_by holds the least (target, thread) key that found a packing, in the
             * order jobs are compared: by target, then thread. */
            unsigned key = (unsigned)(k * EXACT_MAX_THREADS + s->id),
                     cur = atomic_load(s->found_by);
            while (key < cur && !atomic_compare_exchange_weak(s->found_by, &cur, key))
                ;
        }
    }
    return NULL;
}

/*
 * One round: every thread searches every target with the node limit. Returns -1 on
 * out of memory, else 0; results are in the workers, *found the least (target, thread) key
 * that found a packing (UINT32_MAX: none).
 */
static int run_round(struct worker *w, unsigned nthreads, const uint64_t *targets, size_t ntargets,
                     uint64_t limit, double deadline, unsigned *found)
{
    atomic_uint found_by;
    int oom = 0;

    atomic_init(&found_by, UINT32_MAX);
    for (unsigned t = 0; t < nthreads; t++) {
        w[t].ntargets = ntargets;
        for (size_t k = 0; k < ntargets; k++)
            w[t].target[k] = targets[k];
        w[t].s.node_limit = limit;
        w[t].s.deadline = deadline;
        w[t].s.found_by = &found_by;
    }
    pack_fan_out(worker_main, w, sizeof(*w), nthreads);
    for (unsigned t = 0; t < nthreads; t++)
        oom |= w[t].s.oom;
    *found = atomic_load(&found_by);
    return oom ? -1 : 0;
}

/* Whether a job of the round gave up on its stacks' bound (see Memory) among those below the
 * key that found a packing: no answer could stop those early, so whether they did is the
 * same on every run, and so is the solver's decision to stop on it. */
static bool round_full(const struct worker *w, unsigned nthreads, size_t ntargets, unsigned found)
{
    for (size_t k = 0; k < ntargets; k++)
        for (unsigned t = 0; t < nthreads; t++)
            if (w[t].full[k] && k * EXACT_MAX_THREADS + t < found)
                return true;
    return false;
}

/* The unit of heights: the gcd of the sizes and the alignment. */
static uint64_t exact_unit(const struct pack_problem *p)
{
    uint64_t g = 0;

    for (size_t i = 0; i < p->n; i++)
        g = arith_gcd(g, p->bufs[i].size);
    if (p->alignment > 1)
        g = arith_gcd(g, p->alignment);
    return g == 0 ? 1 : g;
}

/* The exact solver's state across its rounds. Heights are in units of g: every justified
 * packing's peak is a sum of sizes (aligned offsets are multiples of g too), and so is the
 * incumbent's. */
struct exact {
    const struct pack_problem *p;
    struct xprob xp;
    struct worker *w; /* nthreads of them */
    unsigned nthreads;
    uint64_t g;
    uint64_t best_u; /* the incumbent's peak */
    uint64_t lbp;    /* proven: no packing lower than this */
    uint64_t cap_u;  /* the capacity (0: none) */
    uint64_t soft;   /* heights below this failed within the current node limit */
    uint64_t limit;  /* node limit of a search */
    uint64_t round;  /* rounds at this node limit */
    uint64_t targets[EXACT_MAX_TARGETS];
    size_t nt;
};

static void exact_free(struct exact *x)
{
    if (x->w != NULL)
        for (unsigned t = 0; t < x->nthreads; t++) {
            xsearch_free(&x->w[t].s);
            for (size_t k = 0; k < EXACT_MAX_TARGETS; k++)
                free(x->w[t].offs[k]);
        }
    free(x->w);
    xprob_free(&x->xp);
}

/* The static data, the threads' search states and the starting heights; on failure,
 * frees what it built. */
static int exact_init(struct exact *x, const struct pack_problem *p, const struct pack_opts *o,
                      uint64_t lb, uint64_t peak, struct err *e)
{
    int rc;

    memset(x, 0, sizeof(*x));
    x->p = p;
    x->g = exact_unit(p);
    x->nthreads = pack_threads(o->threads, EXACT_MAX_THREADS);
    if ((rc = xprob_init(&x->xp, p, x->g, e)) != ERR_OK)
        return rc;
    x->w = calloc(x->nthreads, sizeof(*x->w));
    if (x->w == NULL)
        goto nomem;
    for (unsigned t = 0; t < x->nthreads; t++) {
        if (xsearch_init(&x->w[t].s, &x->xp, t) != 0)
            goto nomem;
        for (size_t k = 0; k < EXACT_MAX_TARGETS; k++)
            if ((x->w[t].offs[k] = malloc(p->n * sizeof(*x->w[t].offs[k]))) == NULL)
                goto nomem;
    }
    x->best_u = peak / x->g;
    x->lbp = (lb + x->g - 1) / x->g;
    x->cap_u = p->capacity / x->g;
    x->soft = x->lbp;
    x->limit = EXACT_BASE_NODES;
    return ERR_OK;
nomem:
    exact_free(x);
    (void)exact_nomem(e, p->n);
    return ERR_NOMEM; /* spelt out: the analyzer cannot see err_set's code, and took it for 0 */
}

/*
 * The round's targets: the capacity first (MiniMalloc's question), then one unit below the
 * best. Once within the capacity, a lower height is searched alongside: halfway between
 * what failed within this node limit (soft) and the goal, as tight heights prune harder
 * (on D, 1000 and 995 are found within 150k nodes, 1008 and 1013 not in 20 s; D in 30 s:
 * 1000 units where one below the best alone reached 1014), or once that window is closed
 * the proven bound itself (cheap when it is infeasible, and where it is the optimum tight
 * bounds find it quickly: MiniMalloc's C at LB in 0.02 s). Above the capacity only the
 * capacity is searched. False when the goal is below the proven bound: nothing is left.
 */
static bool exact_targets(struct exact *x)
{
    bool above = x->p->capacity > 0 && x->best_u > x->cap_u;
    uint64_t goal = above ? x->cap_u : x->best_u - 1, mid;

    x->nt = 0;
    if (goal < x->lbp)
        return false;
    if (x->soft < x->lbp)
        x->soft = x->lbp;
    mid = x->soft + (goal - x->soft) / 2;
    if (!above && mid > x->lbp && mid < goal)
        x->targets[x->nt++] = mid;
    else if (!above && x->lbp < goal)
        x->targets[x->nt++] = x->lbp;
    x->targets[x->nt++] = goal;
    return true;
}

/* Round r: thread t searches with preorder exact_cycle[(t + r * threads) mod EXACT_CYCLE],
 * and the node limit doubles once every preorder has had it (MiniMalloc's round robin,
 * spread over the threads). */
static int exact_preorders(struct exact *x, struct err *e)
{
    for (unsigned t = 0; t < x->nthreads; t++) {
        unsigned h = exact_cycle[(t + x->round * x->nthreads) % EXACT_CYCLE];
        if (h != x->w[t].heur || x->round == 0) {
            int rc = preorder(x->p, &x->xp, h, x->w[t].s.base_rank, e);
            x->w[t].s.heur = h;
            if (rc != ERR_OK)
                return rc;
            x->w[t].heur = h;
        }
    }
    return ERR_OK;
}

/* What the round found: the packing of the lowest target found (lowest thread first) into
 * inc, the proven bound past every exhausted target, and soft past a halfway height that
 * failed within the limit. True when it made progress (a packing or a proof). */
static bool exact_harvest(struct exact *x, struct pack_incumbent *inc)
{
    const struct pack_problem *p = x->p;
    bool progress = false;

    for (size_t k = 0; k < x->nt && !progress; k++)
        for (unsigned t = 0; t < x->nthreads; t++) {
            const struct worker *w = &x->w[t];
            if (w->result[k] != 1)
                continue;
            for (size_t i = 0; i < p->n; i++)
                inc->offsets[i] = w->offs[k][i] * x->g;
            inc->peak = w->peak[k] * x->g;
            inc->stage = "exact";
            x->best_u = w->peak[k];
            pack_note_fit(p, inc->peak, inc);
            progress = true;
            break;
        }
    for (size_t k = 0; k < x->nt; k++)
        for (unsigned t = 0; t < x->nthreads; t++)
            if (x->w[t].result[k] == 0 && x->targets[k] + 1 > x->lbp) {
                x->lbp = x->targets[k] + 1; /* exhausted: nothing fits in targets[k] */
                progress = true;
            }
    if (!progress && x->nt == 2 && x->targets[0] > x->lbp)
        x->soft = x->targets[0] + 1; /* the halfway height failed within this limit */
    return progress;
}

int pack_exact(const struct pack_problem *p, const struct pack_opts *o, const struct pack_budget *b,
               uint64_t lb, struct pack_incumbent *inc, struct err *e)
{
    struct exact x;
    int rc;

    if (p->n == 0 || inc->peak <= lb) {
        inc->proven = true;
        return ERR_OK;
    }
    if (inc->peak <= b->enough)
        return ERR_OK; /* good enough for the caller; not a proof */
    if (p->n > EXACT_MAX_BUFFERS)
        return ERR_OK; /* too large to search: the incumbent stands, unproven */
    if ((rc = exact_init(&x, p, o, lb, inc->peak, e)) != ERR_OK)
        return rc;
    while (clock_now() < b->deadline) {
        unsigned found;
        bool progress;

        if (!exact_targets(&x)) {
            inc->proven |= x.best_u <= x.lbp;
            break;
        }
        if ((rc = exact_preorders(&x, e)) != ERR_OK)
            break;
        if (run_round(x.w, x.nthreads, x.targets, x.nt, x.limit, b->deadline, &found) != 0) {
            rc = exact_nomem(e, p->n);
            break;
        }
        x.round++;
        for (unsigned t = 0; t < x.nthreads; t++) { /* the round's nodes */
            inc->nodes += x.w[t].nodes;
            x.w[t].nodes = 0;
        }
        progress = exact_harvest(&x, inc);
        if (x.best_u <= x.lbp) {
            inc->proven = true;
            break;
        }
        if (inc->peak <= b->enough)
            break;
        if (p->capacity > 0 && x.lbp > x.cap_u && x.best_u > x.cap_u)
            break; /* proven: nothing fits in the capacity */
        if (round_full(x.w, x.nthreads, x.nt, found))
            break; /* a search outgrew its stacks (see Memory): the incumbent stands */
        if (progress) {
            x.limit = EXACT_BASE_NODES;
            x.round = 0;
            x.soft = x.lbp;
        } else if (x.round % ((EXACT_CYCLE + x.nthreads - 1) / x.nthreads) == 0 &&
                   x.limit < UINT64_MAX / 2) {
            x.limit *= 2;
            x.soft = x.lbp;
        }
    }
    exact_free(&x);
    return rc;
}

/* ---- bounded probes for the search heuristic ---------------------------------------- */

struct pack_probe {
    const struct pack_problem *p;
    struct xprob xp;
    struct xsearch s;
    atomic_uint never; /* found_by of a lone search: nothing ever stops it early */
    uint64_t g;
    unsigned heur;
};

int pack_probe_new(const struct pack_problem *p, struct pack_probe **out, struct err *e)
{
    struct pack_probe *pr;
    int rc;

    *out = NULL;
    if (p->n == 0 || p->n > EXACT_MAX_BUFFERS)
        return ERR_OK; /* no probes: the caller keeps its greedy answer */
    pr = calloc(1, sizeof(*pr));
    if (pr == NULL)
        return err_set(e, ERR_NOMEM, NULL, "search: out of memory");
    pr->p = p;
    pr->g = exact_unit(p);
    rc = xprob_init(&pr->xp, p, pr->g, e);
    if (rc != ERR_OK) {
        free(pr);
        return rc;
    }
    if (xsearch_init(&pr->s, &pr->xp, 0) != 0) {
        pack_probe_free(pr);
        return err_set(e, ERR_NOMEM, NULL, "search: out of memory");
    }
    atomic_init(&pr->never, UINT32_MAX);
    pr->s.found_by = &pr->never;
    pr->heur = UINT32_MAX;
    *out = pr;
    return ERR_OK;
}

void pack_probe_free(struct pack_probe *pr)
{
    if (pr == NULL)
        return;
    xsearch_free(&pr->s);
    xprob_free(&pr->xp);
    free(pr);
}

int pack_probe_run(struct pack_probe *pr, uint64_t height, unsigned heur, uint64_t node_limit,
                   const struct pack_budget *b, struct pack_incumbent *inc, int *result,
                   struct err *e)
{
    int rc;

    if (heur != pr->heur) {
        rc = preorder(pr->p, &pr->xp, heur, pr->s.base_rank, e);
        pr->s.heur = heur;
        if (rc != ERR_OK)
            return rc;
        pr->heur = heur;
    }
    pr->s.height = height / pr->g;
    pr->s.node_limit = node_limit;
    pr->s.deadline = b->deadline;
    pr->s.job = 0;
    *result = search_once(&pr->s);
    inc->nodes += pr->s.nodes;
    if (pr->s.oom)
        return err_set(e, ERR_NOMEM, NULL, "search: out of memory");
    if (pr->s.full != NULL)
        return err_set(e, ERR_LIMIT, NULL,
                       "search: the %s outgrew its bound of %zu entries (%d per entry of the "
                       "problem's static data, at least %u)",
                       pr->s.full, pr->xp.stack_max, EXACT_STACK_FACTOR, EXACT_STACK_MIN);
    if (*result == 1) {
        for (size_t i = 0; i < pr->p->n; i++)
            inc->offsets[i] = pr->s.off[i] * pr->g;
        inc->peak = pack_peak(pr->p, inc->offsets);
    }
    return ERR_OK;
}

uint64_t pack_probe_unit(const struct pack_probe *pr)
{
    return pr->g;
}
