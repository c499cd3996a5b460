/*
 * kernel_suggest.c - what to change in a kernel that does not fit, or wastes VMEM on
 * padding (kernel.h):
 *
 *   blocks       over its limit: the largest tile-aligned blocks that fit, fewest HBM
 *                bytes moved first. Blocks are searched per grid axis: every block dim
 *                the index maps tie to axis a takes the same tile, a multiple of the
 *                VMEM tile of every such dim (128 lanes for a minor dim, 8 x 32/bits
 *                sublanes for a second-minor one, 1024 for a 1-D block;
 *                server/planner/SOURCES.md#block-shapes),
 *                halving from the current block; the grid grows to cover the same extent.
 *                "Largest" means no axis can take its next larger tile and still fit.
 *   raise_limit  over the chip's default scoped limit but within physical VMEM: the exact
 *                CompilerParams.vmem_limit_bytes and --xla_tpu_scoped_vmem_limit_kib (the
 *                docstring asks for N * 1 KiB > vmem_limit_bytes:
 *                server/planner/SOURCES.md#scoped-vmem).
 *   align        a padded block: the aligned block with no padding (the padding already
 *                costs the VMEM, so rounding up fills it with data for free), or rounded
 *                down where the array is too small.
 */
#include "planner/kernel.h"

#include <string.h>

#include "planner/arith.h"

#define MAX_CANDIDATES 24 /* tiles tried per axis: halvings of a 64-bit extent */
#define MAX_ALIGN      4  /* align suggestions per kernel, most waste first */

struct axes {
    unsigned n;
    int64_t tile[KERNEL_MAX_GRID];                 /* current tile, 0: not searched */
    int64_t align[KERNEL_MAX_GRID];                /* the tile must be a multiple of this */
    int64_t extent[KERNEL_MAX_GRID];               /* what the grid covers along the axis */
    int64_t cand[KERNEL_MAX_GRID][MAX_CANDIDATES]; /* descending, cand[a][0] = tile */
    unsigned ncand[KERNEL_MAX_GRID];
};

/* The VMEM tile along dim d of an operand's block. */
static int64_t dim_align(const struct kernel_operand *o, unsigned d)
{
    if (o->rank == 1)
        return 1024;
    if (d == o->rank - 1u)
        return 128;
    if (d == o->rank - 2u)
        return kernel_sublanes(o->dtype);
    return 1;
}

/* Which axes can be searched: those the pipelined VMEM blocks map to, all at one size. */
static void find_axes(const struct kernel_spec *k, struct axes *x)
{
    bool bad[KERNEL_MAX_GRID] = {false};

    memset(x, 0, sizeof(*x));
    x->n = k->grid_rank;
    for (size_t i = 0; i < k->nops; i++) {
        const struct kernel_operand *o = &k->ops[i];
        if (o->role == KERNEL_SCRATCH || o->space != KSPACE_VMEM || !o->has_index_map)
            continue;
        for (unsigned d = 0; d < o->rank; d++) {
            int a = o->index_map[d];
            int64_t al = dim_align(o, d), g;
            if (a < 0)
                continue;
            if (x->tile[a] != 0 && x->tile[a] != o->block[d])
                bad[a] = true;
            x->tile[a] = o->block[d];
            g = x->align[a] == 0
                    ? al
                    : x->align[a] / (int64_t)arith_gcd((uint64_t)x->align[a], (uint64_t)al) * al;
            x->align[a] = g > (INT64_C(1) << 40) ? x->align[a] : g;
            if (o->has_array && o->array[d] > x->extent[a])
                x->extent[a] = o->array[d];
        }
    }
    for (unsigned a = 0; a < x->n; a++) {
        int64_t cover;
        if (bad[a] || x->tile[a] == 0) {
            x->tile[a] = 0;
            continue;
        }
        if (x->extent[a] == 0)
            x->extent[a] =
                __builtin_mul_overflow(x->tile[a], k->grid[a], &cover) ? INT64_MAX : cover;
    }
}

/* Halvings of the tile that stay multiples of the alignment, largest first. */
static void candidates(struct axes *x)
{
    for (unsigned a = 0; a < x->n; a++) {
        int64_t t = x->tile[a], al = x->align[a], v;
        x->ncand[a] = 1;
        x->cand[a][0] = t;
        if (t == 0)
            continue;
        v = t / al * al; /* the aligned tile just below an unaligned one */
        if (v == t)
            v = (t / al / 2) * al;
        while (v >= al && x->ncand[a] < MAX_CANDIDATES) {
            x->cand[a][x->ncand[a]++] = v;
            v = (v / al / 2) * al;
        }
    }
}

/* Keeps the search within KERNEL_SEARCH_MAX combinations: thins the axis with the most
 * candidates (keeping its largest and smallest) until the product fits. */
static uint64_t combinations(struct axes *x)
{
    for (;;) {
        uint64_t total = 1;
        unsigned widest = 0;
        for (unsigned a = 0; a < x->n; a++) {
            total *= x->ncand[a]; /* <= 24^8 < 2^37 */
            if (x->ncand[a] > x->ncand[widest])
                widest = a;
        }
        if (total <= KERNEL_SEARCH_MAX || x->ncand[widest] <= 2)
            return total <= KERNEL_SEARCH_MAX ? total : 0;
        unsigned n = x->ncand[widest], m = 0;
        for (unsigned j = 0; j < n; j++)
            if (j % 2 == 0 || j == n - 1)
                x->cand[widest][m++] = x->cand[widest][j];
        x->ncand[widest] = m;
    }
}

/* Tiles and grid of combination number c (mixed radix, axis 0 most significant). */
static void combination(const struct kernel_spec *k, const struct axes *x, uint64_t c,
                        unsigned *idx, int64_t *tile, int64_t *grid)
{
    for (unsigned a = x->n; a-- > 0;) {
        idx[a] = (unsigned)(c % x->ncand[a]);
        c /= x->ncand[a];
        tile[a] = x->cand[a][idx[a]];
        grid[a] =
            x->tile[a] == 0 ? k->grid[a] : x->extent[a] / tile[a] + (x->extent[a] % tile[a] != 0);
    }
}

static uint64_t index_of(const struct axes *x, const unsigned *idx)
{
    uint64_t c = 0;
    for (unsigned a = 0; a < x->n; a++)
        c = c * x->ncand[a] + idx[a];
    return c;
}

static bool combo_fits(const struct kernel_spec *k, const struct axes *x, uint64_t c,
                       uint64_t limit, uint64_t margin, uint64_t *vmem, uint64_t *hbm)
{
    unsigned idx[KERNEL_MAX_GRID];
    int64_t tile[KERNEL_MAX_GRID] = {0}, grid[KERNEL_MAX_GRID] = {0};
    uint64_t need;

    combination(k, x, c, idx, tile, grid);
    if (kernel_figures(k, tile, grid, vmem, hbm))
        return false;
    return !__builtin_add_overflow(*vmem, margin, &need) && need <= limit;
}

/* Inserts a fitting combination into the kernel's block suggestions, kept sorted by HBM
 * bytes (then more VMEM used, then search order) and cut at KERNEL_MAX_SUGGESTIONS. */
static void keep(struct kernel_plan *p, const struct kernel_spec *k, const struct axes *x,
                 uint64_t c, uint64_t vmem, uint64_t hbm)
{
    struct kernel_suggestion s = {.kind = KSUG_BLOCKS, .vmem_bytes = vmem, .hbm_bytes = hbm};
    unsigned idx[KERNEL_MAX_GRID];
    size_t at = p->nsug;

    combination(k, x, c, idx, s.tile, s.grid);
    for (unsigned a = 0; a < x->n; a++)
        if (x->tile[a] == 0)
            s.tile[a] = 0; /* not searched: each block keeps its own dim */
    while (at > 0 && (p->sug[at - 1].hbm_bytes > hbm ||
                      (p->sug[at - 1].hbm_bytes == hbm && p->sug[at - 1].vmem_bytes < vmem)))
        at--;
    if (at >= KERNEL_MAX_SUGGESTIONS)
        return;
    if (p->nsug < KERNEL_MAX_SUGGESTIONS)
        p->nsug++;
    memmove(&p->sug[at + 1], &p->sug[at], (p->nsug - 1 - at) * sizeof(p->sug[0]));
    p->sug[at] = s;
}

static void suggest_blocks(const struct kernel_spec *k, struct kernel_plan *p)
{
    uint8_t fits[KERNEL_SEARCH_MAX / 8];
    uint64_t limit = p->vmem_limit < p->physical_vmem ? p->vmem_limit : p->physical_vmem;
    uint64_t total, vmem, hbm;
    struct axes x;
    bool any = false;

    find_axes(k, &x);
    candidates(&x);
    if ((total = combinations(&x)) == 0)
        return;
    memset(fits, 0, sizeof(fits));
    for (uint64_t c = 0; c < total; c++)
        if (combo_fits(k, &x, c, limit, p->margin_bytes, &vmem, &hbm))
            fits[c / 8] |= (uint8_t)(1u << (c % 8));
    for (uint64_t c = 0; c < total; c++) {
        unsigned idx[KERNEL_MAX_GRID];
        int64_t tile[KERNEL_MAX_GRID] = {0}, grid[KERNEL_MAX_GRID] = {0};
        bool largest = true;
        if (!(fits[c / 8] & (1u << (c % 8))))
            continue;
        any = true;
        combination(k, &x, c, idx, tile, grid);
        for (unsigned a = 0; a < x.n && largest; a++) {
            if (idx[a] == 0)
                continue;
            idx[a]--;
            uint64_t up = index_of(&x, idx);
            idx[a]++;
            largest = !(fits[up / 8] & (1u << (up % 8)));
        }
        if (largest && !kernel_figures(k, tile, grid, &vmem, &hbm))
            keep(p, k, &x, c, vmem, hbm);
    }
    if (!any && p->nwarn < KERNEL_MAX_WARNINGS) {
        p->warn[p->nwarn].code = KWARN_NO_FIT_AT_MIN;
        p->warn[p->nwarn++].operand = 0;
    }
}

/* Over the default scoped limit, within physical VMEM: the limit to set, to the KiB. */
static void suggest_limit(struct kernel_plan *p)
{
    struct kernel_suggestion *s = &p->sug[p->nsug];
    uint64_t need, lim;

    if (__builtin_add_overflow(p->vmem_bytes, p->margin_bytes, &need) || need <= p->default_limit ||
        need > p->physical_vmem || arith_round_up(need, 1024, &lim))
        return;
    memset(s, 0, sizeof(*s));
    s->kind = KSUG_RAISE_LIMIT;
    s->vmem_limit = lim;
    s->limit_kib = lim / 1024 + 1; /* N * 1 KiB > vmem_limit_bytes, strictly */
    p->nsug++;
}

/* The aligned block without padding: rounded up where the array allows, else down. */
static void suggest_align(const struct kernel_spec *k, struct kernel_plan *p)
{
    size_t first = p->nsug;

    for (size_t i = 0; i < k->nops; i++) {
        const struct kernel_operand *o = &k->ops[i];
        const struct kernel_operand_plan *r = &p->ops[i];
        struct kernel_suggestion s = {.kind = KSUG_ALIGN, .operand = i};
        uint64_t pad, up_bytes;
        bool up = true;
        if (o->space != KSPACE_VMEM || o->rank == 0 || r->waste_bytes == 0)
            continue;
        for (unsigned d = 0; d < o->rank; d++) {
            s.block[d] = r->padded[d];
            up &= !o->has_array || r->padded[d] <= o->array[d];
        }
        if (!up)
            for (unsigned d = 0; d < o->rank; d++) {
                int64_t al = dim_align(o, d);
                s.block[d] = o->block[d] / al * al;
                if (s.block[d] == 0)
                    goto next;
            }
        if (kernel_vmem_block(s.block, o->rank, o->dtype, NULL, &pad) ||
            kernel_block_bytes(s.block, o->rank, o->dtype, &up_bytes) || pad != up_bytes)
            goto next; /* sub-byte or 1-D rounding left some padding: nothing exact */
        s.saves_bytes = up ? r->waste_bytes : r->vmem_bytes - pad * r->buffers;
        {
            size_t at = p->nsug;
            while (at > first && p->sug[at - 1].saves_bytes < s.saves_bytes)
                at--;
            if (at - first >= MAX_ALIGN)
                goto next;
            if (p->nsug - first < MAX_ALIGN)
                p->nsug++;
            memmove(&p->sug[at + 1], &p->sug[at], (p->nsug - 1 - at) * sizeof(p->sug[0]));
            p->sug[at] = s;
        }
    next:;
    }
}

void kernel_suggest(const struct kernel_spec *k, struct kernel_plan *p)
{
    p->nsug = 0;
    if (!p->fits)
        suggest_blocks(k, p);
    suggest_limit(p);
    suggest_align(k, p);
}
