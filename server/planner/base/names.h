/*
 * names.h - one open-addressing table of names: the planner's name tables (a model's tensor
 * names, HLO instructions and computations, StableHLO values and location aliases, XLA's
 * value keys, MiniMalloc ids) are this table over their own arrays.
 *
 * The table holds uint32 indices into the caller's array and nothing else: the caller says
 * what the name of entry i is with a key function, called on every probe. A key may carry a
 * scope (an HLO computation, a StableHLO region and result element): equal bytes in two
 * scopes are two names. Lookups hash the key with text_hash_seed (text.h) and probe
 * linearly in a power-of-two table kept at most half full, so a search ends at an empty
 * slot; entries of the same key are met in the order they were added.
 *
 * Sized from a required maximum (names_init, names_reserve), with checked size arithmetic;
 * adding past it is refused. The failures are bare codes, ERR_NOMEM or ERR_LIMIT: the caller
 * names the table in its own message.
 */
#ifndef TPUPLAN_NAMES_H
#define TPUPLAN_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

#define NAMES_NONE UINT32_MAX       /* no entry; an empty slot */
#define NAMES_MAX  (UINT32_MAX - 1) /* the most entries: indices 0 .. NAMES_MAX - 1 */

/* A name: s[0, n) within scope (0 for a table of one scope). */
struct names_key {
    const char *s;
    size_t n;
    uint64_t scope;
};

/* The name of entry idx of the caller's array; ctx is the caller's (names_init). */
typedef struct names_key names_key_fn(const void *ctx, uint32_t idx);

struct names {
    uint32_t *slot; /* NAMES_NONE: empty (malloc'd, owned: names_free) */
    size_t mask;    /* slots - 1 */
    size_t n, max;  /* entries held; the most they may be */
    names_key_fn *key;
    const void *ctx;
};

/* An empty table for up to max entries named by key(ctx, i). ERR_LIMIT when max passes
 * NAMES_MAX or the slots' size overflows, ERR_NOMEM; on failure *t is empty (names_free is
 * still fine). */
ERR_MUST_CHECK int names_init(struct names *t, size_t max, names_key_fn *key, const void *ctx);

/* Lets the table hold up to max entries (never fewer than now), rehashing into more slots
 * when it must, in an order that keeps entries of one key in the order they were added.
 * ERR_LIMIT or ERR_NOMEM (the table is unchanged then). */
ERR_MUST_CHECK int names_reserve(struct names *t, size_t max);

/* The first entry added under key k, or NAMES_NONE. */
uint32_t names_find(const struct names *t, struct names_key k);

/* Adds entry idx under its name unless an entry has that name already: *first is then that
 * entry (nothing added), else NAMES_NONE. ERR_LIMIT when the table holds max entries. */
ERR_MUST_CHECK int names_add(struct names *t, uint32_t idx, uint32_t *first);

/* Adds entry idx under its name even when entries have that name already (names_next walks
 * them in order). ERR_LIMIT when the table holds max entries. */
ERR_MUST_CHECK int names_add_dup(struct names *t, uint32_t idx);

/* Where a walk over the entries of key k begins (for names_next). */
size_t names_start(const struct names *t, struct names_key k);

/* The next entry of key k from slot *at on, in the order they were added; *at moves past
 * it. NAMES_NONE after the last. */
uint32_t names_next(const struct names *t, struct names_key k, size_t *at);

void names_free(struct names *t);

#endif
