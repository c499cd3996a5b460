/*
 * climit.c - per-client request counts: a chained hash table under one mutex (climit.h).
 */
#include "service/climit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/proxy.h"

#define CLIMIT_BUCKETS 1024

struct climit_node {
    struct climit_node *next;
    unsigned count;
    char addr[PROXY_ADDR_LEN];
};

struct climit {
    pthread_mutex_t mu;
    unsigned max;
    struct climit_node *bucket[CLIMIT_BUCKETS];
};

/* FNV-1a: addresses are short, and the table only needs an even spread. */
static size_t bucket_of(const char *addr)
{
    uint32_t h = 2166136261u;

    for (; *addr != '\0'; addr++)
        h = (h ^ (uint8_t)*addr) * 16777619u;
    return h % CLIMIT_BUCKETS;
}

struct climit *climit_new(unsigned max)
{
    struct climit *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->max = max;
    return c;
}

void climit_free(struct climit *c)
{
    if (c == NULL)
        return;
    for (size_t i = 0; i < CLIMIT_BUCKETS; i++) {
        struct climit_node *n = c->bucket[i];
        while (n != NULL) {
            struct climit_node *next = n->next;
            free(n);
            n = next;
        }
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

bool climit_acquire(struct climit *c, const char *addr)
{
    size_t b = bucket_of(addr);
    struct climit_node *n;
    bool ok = false;

    pthread_mutex_lock(&c->mu);
    for (n = c->bucket[b]; n != NULL; n = n->next)
        if (strcmp(n->addr, addr) == 0)
            break;
    if (n == NULL) {
        n = calloc(1, sizeof(*n));
        if (n == NULL)
            goto out;
        strncpy(n->addr, addr, sizeof(n->addr) - 1);
        n->next = c->bucket[b];
        c->bucket[b] = n;
    }
    if (n->count < c->max) {
        n->count++;
        ok = true;
    }
out:
    pthread_mutex_unlock(&c->mu);
    return ok;
}

void climit_release(struct climit *c, const char *addr)
{
    struct climit_node **pp = &c->bucket[bucket_of(addr)];

    pthread_mutex_lock(&c->mu);
    for (; *pp != NULL; pp = &(*pp)->next) {
        struct climit_node *n = *pp;
        if (strcmp(n->addr, addr) != 0)
            continue;
        if (n->count > 0)
            n->count--;
        if (n->count == 0) {
            *pp = n->next;
            free(n);
        }
        break;
    }
    pthread_mutex_unlock(&c->mu);
}
