/*
 * vec.h - one growable array of fixed-size elements, with a required maximum count.
 *
 * The planner's parsers and solvers grow arrays whose final size they learn only as they go
 * (instructions of an HLO module, rows of a CSV, a search's undo trail). Each such array has
 * a maximum its caller derives from its input limits, so no input can make it grow without
 * a bound: reserving past the maximum is ERR_LIMIT, before any allocation is tried.
 * Capacity doubles (at least VEC_FIRST elements, at most the maximum); every size in bytes
 * is computed with overflow checks.
 *
 *   struct vec v;
 *   vec_init(&v, sizeof(struct row), max_rows);
 *   if ((rc = vec_push(&v, &row)) != ERR_OK) ... ERR_LIMIT: over max_rows, ERR_NOMEM
 *   struct row *rows = v.data;  (valid until the next push or reserve)
 *   ... vec_free(&v), or hand the array on with vec_take(&v)
 *
 * Ownership: the vec owns data (malloc'd) until vec_free or vec_take; after vec_take the
 * caller owns the array and frees it with free(). Pointers into data are invalidated by
 * any call that may grow it (vec_reserve, vec_push). A vec holds no other resource, and a
 * zeroed or vec_init'ed vec with nothing pushed holds no memory at all.
 */
#ifndef TPUPLAN_BASE_VEC_H
#define TPUPLAN_BASE_VEC_H

#include <stddef.h>

#include "planner/err.h"

#define VEC_FIRST 16 /* elements allocated by the first growth, unless the maximum is lower */

struct vec {
    void *data;  /* cap elements of elem bytes, the first n in use; owned (see above) */
    size_t n;    /* elements in use: the caller may lower it (truncate), never raise it */
    size_t cap;  /* elements allocated */
    size_t elem; /* bytes per element, > 0 */
    size_t max;  /* most elements it may hold (held to what SIZE_MAX bytes can hold) */
};

/* An empty vec of elements of elem (> 0) bytes that may hold at most max of them. */
void vec_init(struct vec *v, size_t elem, size_t max);

/* Room for need elements in all (n unchanged): ERR_OK, ERR_LIMIT when need is over the
 * maximum, ERR_NOMEM when the allocation fails. On failure v is unchanged. */
ERR_MUST_CHECK int vec_reserve(struct vec *v, size_t need);

/* Appends a copy of the elem bytes at x: vec_reserve's codes; on failure v is unchanged. */
ERR_MUST_CHECK int vec_push(struct vec *v, const void *x);

/* The address of element i (i <= cap; i == n is where the next push goes). */
static inline void *vec_at(const struct vec *v, size_t i)
{
    return (char *)v->data + i * v->elem;
}

/* Hands the array over (NULL when nothing was allocated): the caller frees it. v is left
 * empty, with its element size and maximum, ready for reuse. */
void *vec_take(struct vec *v);

/* Frees the array; v is left empty, as vec_take leaves it. */
void vec_free(struct vec *v);

#endif
