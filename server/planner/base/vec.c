/*
 * vec.c - the growable array with a required maximum (see vec.h).
 */
#include "planner/base/vec.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"

void vec_init(struct vec *v, size_t elem, size_t max)
{
    memset(v, 0, sizeof(*v));
    v->elem = elem;
    /* So that no count up to the maximum overflows in bytes. */
    v->max = max <= SIZE_MAX / elem ? max : SIZE_MAX / elem;
}

int vec_reserve(struct vec *v, size_t need)
{
    uint64_t ncap, bytes;
    void *p;

    if (need <= v->cap)
        return ERR_OK;
    if (need > v->max)
        return ERR_LIMIT;
    /* Double from the current capacity (VEC_FIRST at first) until need fits; past the
     * maximum, the maximum itself (need is within it). */
    ncap = v->cap > 0 ? v->cap : VEC_FIRST;
    while (ncap < need && ncap <= v->max)
        if (arith_mul(ncap, 2, &ncap))
            ncap = UINT64_MAX;
    if (ncap > v->max)
        ncap = v->max;
    if (arith_mul(ncap, v->elem, &bytes) || bytes > SIZE_MAX)
        return ERR_LIMIT; /* cannot happen: vec_init holds max to SIZE_MAX / elem */
    if ((p = realloc(v->data, (size_t)bytes)) == NULL)
        return ERR_NOMEM;
    v->data = p;
    v->cap = (size_t)ncap;
    return ERR_OK;
}

int vec_push(struct vec *v, const void *x)
{
    int rc;

    if (v->n >= v->max)
        return ERR_LIMIT; /* before n + 1, which could wrap where max is SIZE_MAX */
    if (v->n == v->cap && (rc = vec_reserve(v, v->n + 1)) != ERR_OK)
        return rc;
    memcpy(vec_at(v, v->n), x, v->elem);
    v->n++;
    return ERR_OK;
}

void *vec_take(struct vec *v)
{
    void *p = v->data;

    v->data = NULL;
    v->n = 0;
    v->cap = 0;
    return p;
}

void vec_free(struct vec *v)
{
    free(vec_take(v));
}
