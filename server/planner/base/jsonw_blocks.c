/*
 * jsonw_blocks.c - a run of values written on two threads, in order (see jsonw_blocks.h).
 *
 * Block k is written into fragment k % JSONW_BLOCKS_AHEAD, and only once block
 * k - JSONW_BLOCKS_AHEAD is in w, so the fragments in use are always distinct. The mutex
 * guards the counters and the done flags; a fragment belongs to the one thread writing it
 * until its done flag is set, then to the caller's thread, which splices it in.
 */
#include "planner/jsonw_blocks.h"

#include <pthread.h>

#define AHEAD JSONW_BLOCKS_AHEAD

struct blocks {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a block done, one spliced in, or the run stopped */
    jsonw_block_fn fn;
    const void *ctx;
    size_t n, block, nblocks;
    size_t next;    /* the first block no thread has taken */
    size_t emitted; /* blocks in w so far */
    bool stop;      /* w failed or the run is over: the helper takes no more */
    bool done[AHEAD];
    struct jsonw frag[AHEAD];
};

static void write_block(const struct blocks *b, struct jsonw *w, size_t k)
{
    size_t lo = k * b->block, hi = b->n - lo > b->block ? lo + b->block : b->n;

    b->fn(w, b->ctx, lo, hi);
}

/* With b->mu held: takes the next block into its fragment (the mutex let go meanwhile). */
static void take_ahead(struct blocks *b)
{
    size_t k = b->next++;

    pthread_mutex_unlock(&b->mu);
    write_block(b, &b->frag[k % AHEAD], k);
    pthread_mutex_lock(&b->mu);
    b->done[k % AHEAD] = true;
    pthread_cond_broadcast(&b->cv);
}

static void *helper_main(void *arg)
{
    struct blocks *b = arg;

    pthread_mutex_lock(&b->mu);
    for (;;) {
        while (!b->stop && b->next < b->nblocks && b->next >= b->emitted + AHEAD)
            pthread_cond_wait(&b->cv, &b->mu);
        if (b->stop || b->next >= b->nblocks)
            break;
        take_ahead(b);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* The caller's thread: the block due next goes into w (spliced from its fragment, or
 * written there when nobody took it); while the helper still writes it, a later one is
 * written ahead, or, with AHEAD blocks out, it waits. */
static void emit_all(struct blocks *b, struct jsonw *w)
{
    pthread_mutex_lock(&b->mu);
    while (b->emitted < b->nblocks && !b->stop) {
        size_t k = b->emitted;
        if (b->done[k % AHEAD]) {
            b->done[k % AHEAD] = false;
            pthread_mutex_unlock(&b->mu);
            jsonw_fragment_append(w, &b->frag[k % AHEAD]);
        } else if (b->next == k) {
            b->next++;
            pthread_mutex_unlock(&b->mu);
            write_block(b, w, k);
        } else {
            if (b->next < b->nblocks && b->next < b->emitted + AHEAD)
                take_ahead(b);
            else
                pthread_cond_wait(&b->cv, &b->mu);
            continue;
        }
        pthread_mutex_lock(&b->mu);
        b->emitted++;
        b->stop = w->err != ERR_OK;
        pthread_cond_broadcast(&b->cv);
    }
    b->stop = true;
    pthread_cond_broadcast(&b->cv);
    pthread_mutex_unlock(&b->mu);
}

void jsonw_blocks_write(struct jsonw *w, size_t n, size_t block, jsonw_block_fn fn, const void *ctx,
                        bool threaded)
{
    struct blocks b = {.fn = fn, .ctx = ctx, .n = n, .block = block};
    pthread_t tid;
    bool started;

    if (!threaded || block == 0 || n <= block || w->err != ERR_OK) {
        fn(w, ctx, 0, n);
        return;
    }
    b.nblocks = n / block + (n % block != 0);
    for (size_t i = 0; i < AHEAD; i++)
        jsonw_fragment_init(&b.frag[i], w);
    pthread_mutex_init(&b.mu, NULL);
    pthread_cond_init(&b.cv, NULL);
    /* Block 0 is the caller's: a fragment's first value has a separator before it. */
    b.next = 1;
    started = pthread_create(&tid, NULL, helper_main, &b) == 0;
    write_block(&b, w, 0);
    pthread_mutex_lock(&b.mu);
    b.emitted = 1;
    b.stop = w->err != ERR_OK;
    pthread_cond_broadcast(&b.cv);
    pthread_mutex_unlock(&b.mu);
    emit_all(&b, w);
    if (started)
        pthread_join(tid, NULL);
    pthread_cond_destroy(&b.cv);
    pthread_mutex_destroy(&b.mu);
    for (size_t i = 0; i < AHEAD; i++)
        jsonw_discard(&b.frag[i]);
}
