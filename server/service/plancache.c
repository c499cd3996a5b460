/*
 * plancache.c - a chained hash table plus an LRU list, under one mutex. Buckets hash the
 * plan id alone, so all views of a plan share one chain and eviction walks only that.
 */
#include "service/plancache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "planner/clock.h"
#include "service/response.h"

#define NBUCKETS       4096
#define ENTRY_OVERHEAD 512 /* headers and bookkeeping, so tiny bodies still count */

/* A cached body, shared by the entry and every response being sent from it: each holds one
 * reference, so an entry evicted mid-send frees its body only after the last response. */
struct blob {
    atomic_long refs;
    size_t len;
    char *data; /* malloc'd */
};

struct entry {
    char id[32];
    char view[PLANCACHE_VIEW_MAX + 1];
    char etag[PLANCACHE_ETAG_MAX + 1];
    struct blob *body;
    size_t bytes;
    double expires;                    /* clock_now() time */
    struct entry *hnext;               /* bucket chain */
    struct entry *lru_prev, *lru_next; /* most recent at head */
};

struct plancache {
    pthread_mutex_t mu;
    struct entry *buckets[NBUCKETS];
    struct entry *head, *tail;
    uint64_t max_bytes, bytes;
    int64_t n;
    unsigned ttl_s;
};

static size_t hash(const char *s)
{
    size_t h = 5381;
    while (*s != '\0')
        h = h * 33 + (unsigned char)*s++;
    return h % NBUCKETS;
}

struct plancache *plancache_new(uint64_t max_bytes, unsigned ttl_s)
{
    struct plancache *c = calloc(1, sizeof(*c));

    if (c == NULL)
        return NULL;
    pthread_mutex_init(&c->mu, NULL);
    c->max_bytes = max_bytes;
    c->ttl_s = ttl_s;
    return c;
}

static void lru_unlink(struct plancache *c, struct entry *e)
{
    if (e->lru_prev != NULL)
        e->lru_prev->lru_next = e->lru_next;
    else
        c->head = e->lru_next;
    if (e->lru_next != NULL)
        e->lru_next->lru_prev = e->lru_prev;
    else
        c->tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push(struct plancache *c, struct entry *e)
{
    e->lru_next = c->head;
    e->lru_prev = NULL;
    if (c->head != NULL)
        c->head->lru_prev = e;
    c->head = e;
    if (c->tail == NULL)
        c->tail = e;
}

static struct entry **find(struct plancache *c, const char *id, const char *view)
{
    struct entry **pp = &c->buckets[hash(id)];
    while (*pp != NULL && (strcmp((*pp)->id, id) != 0 || strcmp((*pp)->view, view) != 0))
        pp = &(*pp)->hnext;
    return pp;
}

static void blob_unref(void *arg)
{
    struct blob *b = arg;

    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        free(b->data);
        free(b);
    }
}

/* A response sending e's body (one more reference to it), with its headers; NULL when out
 * of memory. Caller holds the lock. */
static struct MHD_Response *entry_response(struct entry *e)
{
    struct MHD_Response *resp;

    atomic_fetch_add_explicit(&e->body->refs, 1, memory_order_relaxed);
    resp = MHD_create_response_from_buffer_with_free_callback_cls(e->body->len, e->body->data,
                                                                  blob_unref, e->body);
    if (resp == NULL) {
        blob_unref(e->body);
        return NULL;
    }
    response_secure(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, e->etag);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    return resp;
}

/* Unlinks and frees *pp (caller holds the lock). */
static void remove_at(struct plancache *c, struct entry **pp)
{
    struct entry *e = *pp;
    *pp = e->hnext;
    lru_unlink(c, e);
    c->bytes -= e->bytes;
    c->n--;
    blob_unref(e->body);
    free(e);
}

/* Drops every entry (caller holds the lock, or is the last user). */
static void remove_all(struct plancache *c)
{
    while (c->tail != NULL)
        remove_at(c, find(c, c->tail->id, c->tail->view));
}

void plancache_free(struct plancache *c)
{
    if (c == NULL)
        return;
    remove_all(c);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

void plancache_clear(struct plancache *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    remove_all(c);
    pthread_mutex_unlock(&c->mu);
}

bool plancache_keeps(const struct plancache *c, size_t len)
{
    return c != NULL && len + ENTRY_OVERHEAD <= c->max_bytes;
}

void plancache_put(struct plancache *c, const char *id, const char *view, const char *etag,
                   char *body, size_t len)
{
    struct entry *e = NULL, **pp;

    if (view == NULL)
        view = "";
    if (c == NULL || body == NULL || strlen(id) >= sizeof(e->id) ||
        strlen(view) >= sizeof(e->view) || strlen(etag) >= sizeof(e->etag) ||
        len + ENTRY_OVERHEAD > c->max_bytes) {
        free(body);
        return;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL || (e->body = malloc(sizeof(*e->body))) == NULL) {
        free(e);
        free(body);
        return;
    }
    atomic_init(&e->body->refs, 1);
    e->body->len = len;
    e->body->data = body;
    strcpy(e->id, id);
    strcpy(e->view, view);
    strcpy(e->etag, etag);
    e->bytes = len + ENTRY_OVERHEAD;
    e->expires = clock_now() + c->ttl_s;
    pthread_mutex_lock(&c->mu);
    pp = find(c, id, view);
    if (*pp != NULL)
        remove_at(c, pp);
    while (c->tail != NULL && c->bytes + e->bytes > c->max_bytes)
        remove_at(c, find(c, c->tail->id, c->tail->view));
    pp = &c->buckets[hash(id)];
    e->hnext = *pp;
    *pp = e;
    lru_push(c, e);
    c->bytes += e->bytes;
    c->n++;
    pthread_mutex_unlock(&c->mu);
}

struct MHD_Response *plancache_get(struct plancache *c, const char *id, const char *view,
                                   char etag[PLANCACHE_ETAG_MAX + 1])
{
    struct MHD_Response *resp = NULL;
    struct entry **pp;

    if (view == NULL)
        view = "";
    if (c == NULL || strnlen(view, PLANCACHE_VIEW_MAX + 1) > PLANCACHE_VIEW_MAX)
        return NULL;
    pthread_mutex_lock(&c->mu);
    pp = find(c, id, view);
    if (*pp == NULL)
        goto out;
    if ((*pp)->expires <= clock_now()) {
        remove_at(c, pp);
        goto out;
    }
    lru_unlink(c, *pp);
    lru_push(c, *pp);
    resp = entry_response(*pp);
    if (resp != NULL)
        memcpy(etag, (*pp)->etag, sizeof((*pp)->etag));
out:
    pthread_mutex_unlock(&c->mu);
    return resp;
}

void plancache_evict(struct plancache *c, const char *id)
{
    struct entry **pp;

    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    pp = &c->buckets[hash(id)];
    while (*pp != NULL) {
        if (strcmp((*pp)->id, id) == 0)
            remove_at(c, pp); /* *pp is now the next entry */
        else
            pp = &(*pp)->hnext;
    }
    pthread_mutex_unlock(&c->mu);
}

void plancache_stats(struct plancache *c, int64_t *entries, int64_t *bytes)
{
    pthread_mutex_lock(&c->mu);
    *entries = c->n;
    *bytes = (int64_t)c->bytes;
    pthread_mutex_unlock(&c->mu);
}
