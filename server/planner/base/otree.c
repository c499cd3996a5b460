/*
 * otree.c - the treap behind otree.h. A node's priority is a hash of its index (a heap on
 * priorities over a search tree on keys), so no priority is stored and the shape is the
 * same on every run. Insert splits the subtree the node takes over, erase merges the
 * node's two children; every recursion is as deep as the tree, O(log n) expected.
 */
#include "planner/otree.h"

/* A bijective mix of the index (the finaliser of MurmurHash3's 32-bit variant). */
static uint32_t prio(uint32_t i)
{
    i ^= i >> 16;
    i *= 0x85ebca6bu;
    i ^= i >> 13;
    i *= 0xc2b2ae35u;
    i ^= i >> 16;
    return i;
}

static bool key_less(const struct otree_node *a, uint64_t k1, uint64_t k2)
{
    return a->k1 != k1 ? a->k1 < k1 : a->k2 < k2;
}

/* (k1, k2) < a's key. */
static bool key_less_than_node(uint64_t k1, uint64_t k2, const struct otree_node *a)
{
    return k1 != a->k1 ? k1 < a->k1 : k2 < a->k2;
}

/* Splits t into *l (keys < (k1, k2)) and *r (keys >= it). */
static void split(struct otree_node *nodes, uint32_t t, uint64_t k1, uint64_t k2, uint32_t *l,
                  uint32_t *r)
{
    if (t == OTREE_NONE) {
        *l = *r = OTREE_NONE;
        return;
    }
    if (key_less(&nodes[t], k1, k2)) {
        split(nodes, nodes[t].right, k1, k2, &nodes[t].right, r);
        *l = t;
    } else {
        split(nodes, nodes[t].left, k1, k2, l, &nodes[t].left);
        *r = t;
    }
}

/* Every key of l is below every key of r. */
static uint32_t merge(struct otree_node *nodes, uint32_t l, uint32_t r)
{
    if (l == OTREE_NONE)
        return r;
    if (r == OTREE_NONE)
        return l;
    if (prio(l) > prio(r)) {
        nodes[l].right = merge(nodes, nodes[l].right, r);
        return l;
    }
    nodes[r].left = merge(nodes, l, nodes[r].left);
    return r;
}

/* The child link of t to follow toward node i's key. */
static uint32_t *toward(struct otree_node *nodes, uint32_t t, uint32_t i)
{
    return key_less(&nodes[i], nodes[t].k1, nodes[t].k2) ? &nodes[t].left : &nodes[t].right;
}

/* Descends while the nodes outrank i, then splits the subtree found around i's key: only
 * that subtree is split, not the whole path from the root. */
static uint32_t insert(struct otree_node *nodes, uint32_t t, uint32_t i)
{
    if (t == OTREE_NONE)
        return i;
    if (prio(i) > prio(t)) {
        split(nodes, t, nodes[i].k1, nodes[i].k2, &nodes[i].left, &nodes[i].right);
        return i;
    }
    uint32_t *link = toward(nodes, t, i);
    *link = insert(nodes, *link, i);
    return t;
}

void otree_insert(struct otree_node *nodes, uint32_t *root, uint32_t i)
{
    nodes[i].left = nodes[i].right = OTREE_NONE;
    *root = insert(nodes, *root, i);
}

static uint32_t erase(struct otree_node *nodes, uint32_t t, uint32_t i)
{
    if (t == OTREE_NONE)
        return OTREE_NONE; /* not in the set: the caller broke the contract; leave it */
    if (t == i)
        return merge(nodes, nodes[t].left, nodes[t].right);
    uint32_t *link = toward(nodes, t, i);
    *link = erase(nodes, *link, i);
    return t;
}

void otree_erase(struct otree_node *nodes, uint32_t *root, uint32_t i)
{
    *root = erase(nodes, *root, i);
    nodes[i].left = nodes[i].right = OTREE_NONE;
}

/* The first node >= (k1, k2), or with floor the last node <= it. */
static uint32_t search(const struct otree_node *nodes, uint32_t root, uint64_t k1, uint64_t k2,
                       bool floor)
{
    uint32_t best = OTREE_NONE;

    for (uint32_t t = root; t != OTREE_NONE;) {
        bool right = floor ? !key_less_than_node(k1, k2, &nodes[t]) : key_less(&nodes[t], k1, k2);
        if (right == floor)
            best = t;
        t = right ? nodes[t].right : nodes[t].left;
    }
    return best;
}

uint32_t otree_ceil(const struct otree_node *nodes, uint32_t root, uint64_t k1, uint64_t k2)
{
    return search(nodes, root, k1, k2, false);
}

uint32_t otree_floor(const struct otree_node *nodes, uint32_t root, uint64_t k1, uint64_t k2)
{
    return search(nodes, root, k1, k2, true);
}

uint32_t otree_max(const struct otree_node *nodes, uint32_t root)
{
    uint32_t t = root;

    if (t == OTREE_NONE)
        return OTREE_NONE;
    while (nodes[t].right != OTREE_NONE)
        t = nodes[t].right;
    return t;
}
