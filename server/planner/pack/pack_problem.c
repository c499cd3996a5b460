/*
 * pack_problem.c - what every packing module needs to know about a problem: its
 * validation, its lower bound, the peak of a packing, when a packing first fits, and the
 * orders a sweep of a packing over time walks (pack_sweep).
 *
 * A leaf below the dispatcher (pack.c), the solvers and the checker: they all call in
 * here, and nothing here calls back into them (only the greedy passes' sort, for the
 * lower bound's sweep).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/pack/pack_int.h"

/* Values stay below 2^62 so sums, differences and alignment round-ups cannot wrap. */
#define PACK_VALUE_MAX ((int64_t)1 << 62)
#define PACK_ALIGN_MAX ((uint64_t)1 << 32)

const char *pack_where(char *buf, size_t i)
{
    snprintf(buf, PACK_WHERE_MAX, "buffers[%zu]", i);
    return buf;
}

int pack_validate(const struct pack_problem *p, struct err *e)
{
    uint64_t total = 0;
    char where[PACK_WHERE_MAX];

    if (p == NULL)
        return err_set(e, ERR_INVALID, NULL, "no packing problem given");
    if (p->n > PACK_MAX_BUFFERS)
        return err_set(e, ERR_LIMIT, "buffers", "%zu buffers, the limit is %d", p->n,
                       PACK_MAX_BUFFERS);
    if (p->n > 0 && p->bufs == NULL)
        return err_set(e, ERR_INVALID, "buffers", "%zu buffers but no buffer array", p->n);
    if (p->alignment > PACK_ALIGN_MAX)
        return err_set(e, ERR_LIMIT, "alignment", "alignment %llu is above the limit %llu",
                       (unsigned long long)p->alignment, (unsigned long long)PACK_ALIGN_MAX);
    if (p->capacity > (uint64_t)PACK_VALUE_MAX)
        return err_set(e, ERR_LIMIT, "capacity", "capacity %llu is above the limit %llu",
                       (unsigned long long)p->capacity, (unsigned long long)PACK_VALUE_MAX);
    for (size_t i = 0; i < p->n; i++) {
        const struct pack_buffer *b = &p->bufs[i];

        if (b->size == 0)
            return err_set(e, ERR_INVALID, pack_where(where, i),
                           "buffer %zu: size must be positive", i);
        if (b->lower >= b->upper)
            return err_set(e, ERR_INVALID, pack_where(where, i),
                           "buffer %zu: lower %lld is not below upper %lld (lifetimes are "
                           "half-open [lower, upper))",
                           i, (long long)b->lower, (long long)b->upper);
        if (b->lower < -PACK_VALUE_MAX || b->upper > PACK_VALUE_MAX)
            return err_set(e, ERR_LIMIT, pack_where(where, i),
                           "buffer %zu: lifetime [%lld, %lld) is out of range", i,
                           (long long)b->lower, (long long)b->upper);
        if (b->size > (uint64_t)PACK_VALUE_MAX)
            return err_set(e, ERR_LIMIT, pack_where(where, i),
                           "buffer %zu: size %llu is out of range", i, (unsigned long long)b->size);
        if (p->capacity > 0 && b->size > p->capacity)
            return err_set(e, ERR_INVALID, pack_where(where, i),
                           "buffer %zu alone needs %llu bytes, capacity is %llu", i,
                           (unsigned long long)b->size, (unsigned long long)p->capacity);
        /* Every offset is at most the sum of the aligned sizes, so bounding that sum
         * bounds every intermediate value of every solver. */
        uint64_t step = b->size + (p->alignment > 1 ? p->alignment : 0);
        if (__builtin_add_overflow(total, step, &total) || total > (uint64_t)PACK_VALUE_MAX)
            return err_set(e, ERR_OVERFLOW, pack_where(where, i),
                           "buffer %zu: the total size of the buffers exceeds 2^62 bytes", i);
    }
    return ERR_OK;
}

/* A buffer live during the lower-bound sweep: when it ends and what it holds. */
struct lb_live {
    int64_t upper;
    uint64_t size;
};

/* Min-heap on upper: pushes x onto h[n]. */
static void lb_push(struct lb_live *h, size_t n, struct lb_live x)
{
    while (n > 0 && h[(n - 1) / 2].upper > x.upper) {
        h[n] = h[(n - 1) / 2];
        n = (n - 1) / 2;
    }
    h[n] = x;
}

/* Removes the root of h[n]. */
static void lb_pop(struct lb_live *h, size_t n)
{
    struct lb_live x = h[--n];
    size_t i = 0;

    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && h[c + 1].upper < h[c].upper)
            c++;
        if (h[c].upper >= x.upper)
            break;
        h[i] = h[c];
    }
    h[i] = x;
}

/*
 * A sweep over the buffers by lower (the greedy passes' radix sort) with the live ones in a
 * heap by upper: each buffer first retires those that ended by its start (half-open
 * lifetimes), then adds its size. O(n log k) for k live at once and 20 bytes a buffer,
 * where sorting 2n (step, delta) events needed 64 and a comparison sort.
 */
int pack_lower_bound(const struct pack_problem *p, uint64_t *lb, struct err *e)
{
    uint32_t *order = NULL;
    struct lb_live *heap = NULL;
    uint64_t live = 0, best = 0;
    size_t nh = 0;
    int rc = pack_validate(p, e);

    if (rc != ERR_OK)
        return rc;
    *lb = 0;
    if (p->n == 0)
        return ERR_OK;
    order = malloc(p->n * sizeof(*order));
    heap = malloc(p->n * sizeof(*heap));
    if (order == NULL || heap == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    if ((rc = pack_sort_order(p, PACK_ORDER_PROGRAM, order, e)) != ERR_OK)
        goto out;
    for (size_t i = 0; i < p->n; i++) {
        const struct pack_buffer *b = &p->bufs[order[i]];
        while (nh > 0 && heap[0].upper <= b->lower) {
            live -= heap[0].size;
            lb_pop(heap, nh--);
        }
        lb_push(heap, nh++, (struct lb_live){b->upper, b->size});
        live += b->size; /* bounded by the validated total */
        if (live > best)
            best = live;
    }
    *lb = best;
out:
    free(order);
    free(heap);
    return rc;
}

uint64_t pack_peak(const struct pack_problem *p, const uint64_t *offsets)
{
    uint64_t peak = 0;

    for (size_t i = 0; i < p->n; i++)
        if (offsets[i] + p->bufs[i].size > peak)
            peak = offsets[i] + p->bufs[i].size;
    return peak;
}

void pack_note_fit(const struct pack_problem *p, uint64_t peak, struct pack_incumbent *inc)
{
    if (p->capacity > 0 && peak <= p->capacity && inc->solved_at < 0)
        inc->solved_at = clock_now();
}

static int time_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

size_t pack_time_points(int64_t *v, size_t n)
{
    size_t u = 0;

    qsort(v, n, sizeof(*v), time_cmp);
    for (size_t i = 0; i < n; i++)
        if (u == 0 || v[u - 1] != v[i])
            v[u++] = v[i];
    return u;
}

size_t pack_time_index(const int64_t *v, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void pack_sweep_free(struct pack_sweep *s)
{
    free(s->by_lower);
    free(s->by_upper);
    free(s->byrank);
    free(s->rank);
    memset(s, 0, sizeof(*s));
}

int pack_sweep_init(const struct pack_problem *p, const uint64_t *offsets, struct pack_sweep *s,
                    struct err *e)
{
    size_t n = p->n ? p->n : 1;
    int rc = ERR_OK;

    s->by_lower = malloc(n * sizeof(*s->by_lower));
    s->by_upper = malloc(n * sizeof(*s->by_upper));
    s->byrank = malloc(n * sizeof(*s->byrank));
    s->rank = malloc(n * sizeof(*s->rank));
    if (s->by_lower == NULL || s->by_upper == NULL || s->byrank == NULL || s->rank == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory for %zu buffers", p->n);
        goto out;
    }
    if ((rc = pack_sort_keys(offsets, p->n, s->byrank, e)) != ERR_OK ||
        (rc = pack_sort_order(p, PACK_ORDER_PROGRAM, s->by_lower, e)) != ERR_OK ||
        (rc = pack_sort_order(p, PACK_ORDER_UPPER, s->by_upper, e)) != ERR_OK)
        goto out;
    for (size_t r = 0; r < p->n; r++)
        s->rank[s->byrank[r]] = (uint32_t)r;
out:
    if (rc != ERR_OK)
        pack_sweep_free(s);
    return rc;
}
