/*
 * names.c - the open-addressing name table (see names.h).
 */
#include "planner/base/names.h"

#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/text.h"

#define NAMES_MIN_SLOTS 16

static bool same(struct names_key a, struct names_key b)
{
    return a.scope == b.scope && a.n == b.n && (a.n == 0 || memcmp(a.s, b.s, a.n) == 0);
}

static size_t home(const struct names *t, struct names_key k)
{
    return (size_t)text_hash_seed(k.s, k.n, k.scope) & t->mask;
}

/* Slots for max entries at most half full: a power of two, at least NAMES_MIN_SLOTS, and
 * the bytes they take in *bytes. */
static int slots_for(size_t max, size_t *slots, size_t *bytes)
{
    uint64_t need, cap = NAMES_MIN_SLOTS, b;

    if (max > NAMES_MAX || arith_mul(max, 2, &need))
        return ERR_LIMIT;
    while (cap < need)
        cap *= 2;
    if (arith_mul(cap, sizeof(uint32_t), &b) || b > SIZE_MAX)
        return ERR_LIMIT;
    *slots = (size_t)cap;
    *bytes = (size_t)b;
    return ERR_OK;
}

int names_init(struct names *t, size_t max, names_key_fn *key, const void *ctx)
{
    size_t slots, bytes;
    int rc;

    memset(t, 0, sizeof(*t));
    t->key = key;
    t->ctx = ctx;
    if ((rc = slots_for(max, &slots, &bytes)) != ERR_OK)
        return rc;
    if ((t->slot = malloc(bytes)) == NULL)
        return ERR_NOMEM;
    memset(t->slot, 0xff, bytes); /* NAMES_NONE */
    t->mask = slots - 1;
    t->max = max;
    return ERR_OK;
}

/* Puts idx in the first empty slot from its home on (the table is not full). */
static void put(struct names *t, uint32_t idx)
{
    size_t h = home(t, t->key(t->ctx, idx));

    while (t->slot[h] != NAMES_NONE)
        h = (h + 1) & t->mask;
    t->slot[h] = idx;
    t->n++;
}

int names_reserve(struct names *t, size_t max)
{
    struct names grown = *t;
    size_t slots, bytes, from = 0;
    int rc;

    if (max <= t->max)
        return ERR_OK;
    if ((rc = slots_for(max, &slots, &bytes)) != ERR_OK)
        return rc;
    if (slots == t->mask + 1) {
        t->max = max;
        return ERR_OK;
    }
    if ((grown.slot = malloc(bytes)) == NULL)
        return ERR_NOMEM;
    memset(grown.slot, 0xff, bytes);
    grown.mask = slots - 1;
    grown.max = max;
    grown.n = 0;
    /* From just past an empty slot, every run of entries is met from its start: the entries
     * of one key go back in the order they were added. */
    while (t->slot[from] != NAMES_NONE)
        from++;
    for (size_t k = 1; k <= t->mask + 1; k++) {
        uint32_t idx = t->slot[(from + k) & t->mask];
        if (idx != NAMES_NONE)
            put(&grown, idx);
    }
    free(t->slot);
    *t = grown;
    return ERR_OK;
}

size_t names_start(const struct names *t, struct names_key k)
{
    return home(t, k);
}

uint32_t names_next(const struct names *t, struct names_key k, size_t *at)
{
    for (size_t h = *at;; h = (h + 1) & t->mask) {
        uint32_t idx = t->slot[h];
        if (idx == NAMES_NONE) {
            *at = h;
            return NAMES_NONE;
        }
        if (same(t->key(t->ctx, idx), k)) {
            *at = (h + 1) & t->mask;
            return idx;
        }
    }
}

uint32_t names_find(const struct names *t, struct names_key k)
{
    size_t at = home(t, k);

    return names_next(t, k, &at);
}

int names_add(struct names *t, uint32_t idx, uint32_t *first)
{
    struct names_key k;
    size_t h;

    *first = NAMES_NONE;
    if (t->n >= t->max || idx == NAMES_NONE)
        return ERR_LIMIT;
    k = t->key(t->ctx, idx);
    for (h = home(t, k); t->slot[h] != NAMES_NONE; h = (h + 1) & t->mask)
        if (same(t->key(t->ctx, t->slot[h]), k)) {
            *first = t->slot[h];
            return ERR_OK;
        }
    t->slot[h] = idx;
    t->n++;
    return ERR_OK;
}

int names_add_dup(struct names *t, uint32_t idx)
{
    if (t->n >= t->max || idx == NAMES_NONE)
        return ERR_LIMIT;
    put(t, idx);
    return ERR_OK;
}

void names_free(struct names *t)
{
    free(t->slot);
    t->slot = NULL;
    t->n = t->max = 0;
}
