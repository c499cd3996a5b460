/*
 * otree.h - an ordered set of caller-owned array nodes (a treap), keyed by a pair of
 * 64-bit integers compared lexicographically.
 *
 * The caller owns the node array and the root (one uint32_t per set); several sets may
 * share one node array as long as a node is in at most one of them at a time (the BFC
 * model keeps its 21 size bins this way, bfc.c; the trace export its free tracks,
 * trace.c). Nodes are addressed by index, so the array may be reallocated between calls.
 * Priorities come from a hash of the index: deterministic, and O(log n) expected depth
 * for every operation. Keys must be distinct within a set (callers add the index or an
 * address as the second key).
 *
 * Pure computation on caller memory: no allocation, no state.
 */
#ifndef TPUPLAN_OTREE_H
#define TPUPLAN_OTREE_H

#include <stdbool.h>
#include <stdint.h>

#define OTREE_NONE UINT32_MAX /* no node; also the root of an empty set */

struct otree_node {
    uint64_t k1, k2; /* the key, set by the caller before otree_insert */
    uint32_t left, right;
};

/* Inserts node i (its key already set) into the set rooted at *root. */
void otree_insert(struct otree_node *nodes, uint32_t *root, uint32_t i);

/* Removes node i, which must be in the set rooted at *root (its key unchanged). */
void otree_erase(struct otree_node *nodes, uint32_t *root, uint32_t i);

/* The first node whose key is >= (k1, k2), or OTREE_NONE. */
uint32_t otree_ceil(const struct otree_node *nodes, uint32_t root, uint64_t k1, uint64_t k2);

/* The last node whose key is <= (k1, k2), or OTREE_NONE. */
uint32_t otree_floor(const struct otree_node *nodes, uint32_t root, uint64_t k1, uint64_t k2);

/* The node with the largest key, or OTREE_NONE when the set is empty. */
uint32_t otree_max(const struct otree_node *nodes, uint32_t root);

#endif
