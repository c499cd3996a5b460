/*
 * pack_reduce.c - exact reductions of a packing problem for the search strategies.
 *
 * Real programs have a shape the searches should not pay for: parameters, gradients and
 * optimizer state live for the whole step, and phases of a program share no buffer. Two
 * reductions take that out without losing any packing:
 *
 *   universal buffers  a buffer whose lifetime overlaps every other buffer's. In any
 *               packing no other buffer ever shares its bytes, so removing it and
 *               shifting everything above it down by its size is again a packing; stacked
 *               at the bottom, the universal buffers cost exactly their total size and the
 *               rest is packed above them. They are found in one pass: a buffer that
 *               overlaps every other one still does once other universal ones are gone,
 *               and a buffer that misses some non-universal one keeps missing it.
 *   components  when no buffer is live across a step, the buffers before and after it
 *               never meet: each side is packed on its own from offset 0, and the peak is
 *               the larger of the two.
 *
 * A component may have universal buffers of its own (live across all of that component
 * but not of the whole program), so the caller (pack_solve.c) applies the reduction again
 * to each component, up to a bounded depth.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack/pack_int.h"

struct lower_key {
    int64_t lower;
    uint32_t idx;
};

static int lower_key_cmp(const void *a, const void *b)
{
    const struct lower_key *x = a, *y = b;

    if (x->lower != y->lower)
        return x->lower < y->lower ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

void pack_reduction_free(struct pack_reduction *r)
{
    if (r == NULL)
        return;
    free(r->univ);
    free(r->comp_off);
    free(r->comp_mem);
    memset(r, 0, sizeof(*r));
}

/* Universal buffers are stacked only when that keeps every offset aligned: with sizes
 * that are not multiples of the alignment, the stack would need padding the optimum might
 * not. */
static bool stack_aligned(const struct pack_problem *p)
{
    if (p->alignment <= 1)
        return true;
    for (size_t i = 0; i < p->n; i++)
        if (p->bufs[i].size % p->alignment != 0)
            return false;
    return true;
}

int pack_reduce(const struct pack_problem *p, struct pack_reduction *r, struct err *e)
{
    const struct pack_buffer *b = p->bufs;
    struct lower_key *keys = NULL;
    int64_t min_up = INT64_MAX, min_up2 = INT64_MAX, max_lo = INT64_MIN, max_lo2 = INT64_MIN;
    int64_t reach = INT64_MIN;
    size_t arg_up = SIZE_MAX, arg_lo = SIZE_MAX, nrest = 0;
    bool stack;
    int rc = ERR_OK;

    memset(r, 0, sizeof(*r));
    if (p->n == 0)
        return ERR_OK;
    r->univ = malloc(p->n * sizeof(*r->univ));
    r->comp_mem = malloc(p->n * sizeof(*r->comp_mem));
    r->comp_off = malloc((p->n + 1) * sizeof(*r->comp_off));
    keys = malloc(p->n * sizeof(*keys));
    if (r->univ == NULL || r->comp_mem == NULL || r->comp_off == NULL || keys == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "reduce: out of memory for %zu buffers", p->n);
        goto out;
    }
    /* The smallest upper and largest lower of the others: the two extremes of each. */
    for (size_t i = 0; i < p->n; i++) {
        if (b[i].upper < min_up) {
            min_up2 = min_up;
            min_up = b[i].upper;
            arg_up = i;
        } else if (b[i].upper < min_up2) {
            min_up2 = b[i].upper;
        }
        if (b[i].lower > max_lo) {
            max_lo2 = max_lo;
            max_lo = b[i].lower;
            arg_lo = i;
        } else if (b[i].lower > max_lo2) {
            max_lo2 = b[i].lower;
        }
    }
    /* A problem of one buffer is its own answer; leave it to the solvers. The others go to
     * the components, sorted by lower. */
    stack = p->n > 1 && stack_aligned(p);
    for (size_t i = 0; i < p->n; i++) {
        int64_t up_other = i == arg_up ? min_up2 : min_up;
        int64_t lo_other = i == arg_lo ? max_lo2 : max_lo;
        if (stack && b[i].lower < up_other && b[i].upper > lo_other) {
            r->univ[r->nuniv++] = (uint32_t)i;
            r->base += b[i].size; /* validated totals stay far below 2^64 */
        } else {
            keys[nrest++] = (struct lower_key){b[i].lower, (uint32_t)i};
        }
    }
    /* A new component starts where no earlier buffer is live any more. */
    qsort(keys, nrest, sizeof(*keys), lower_key_cmp);
    for (size_t k = 0; k < nrest; k++) {
        const struct pack_buffer *bk = &b[keys[k].idx];
        if (k == 0 || bk->lower >= reach)
            r->comp_off[r->ncomp++] = (uint32_t)k;
        if (bk->upper > reach)
            reach = bk->upper;
        r->comp_mem[k] = keys[k].idx;
    }
    r->comp_off[r->ncomp] = (uint32_t)nrest;
out:
    free(keys);
    if (rc != ERR_OK)
        pack_reduction_free(r);
    return rc;
}
