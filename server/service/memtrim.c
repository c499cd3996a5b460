/*
 * memtrim.c - giving freed memory back (memtrim.h), on glibc's malloc.
 */
#include "service/memtrim.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

/* The thresholds are global: one release at a time lowers and restores them. */
static pthread_mutex_t release_mu = PTHREAD_MUTEX_INITIALIZER;

/* A free of this size or more makes glibc trim the arena it belongs to (its
 * FASTBIN_CONSOLIDATION_THRESHOLD is 64 KiB). */
#define TRIM_PROBE (128u << 10)

void memtrim_init(void)
{
    mallopt(M_MMAP_THRESHOLD, (int)MEMTRIM_MMAP_THRESHOLD);
    mallopt(M_TRIM_THRESHOLD, (int)MEMTRIM_THRESHOLD);
}

void memtrim_release(void)
{
    /* volatile: a compiler may drop a malloc whose block is only freed, and this one is
     * here for its free */
    void *volatile probe;

    pthread_mutex_lock(&release_mu);
    /* A thread arena gives back its free heaps, and its top above the threshold, when a
     * large free in it finds them: lower the threshold for one such free in this thread's
     * arena. malloc_trim then gives back the main arena's top and the free pages inside
     * every arena (it leaves thread arenas' tops alone). */
    mallopt(M_TRIM_THRESHOLD, (int)MEMTRIM_KEEP);
    probe = malloc(TRIM_PROBE);
    free(probe);
    mallopt(M_TRIM_THRESHOLD, (int)MEMTRIM_THRESHOLD);
    malloc_trim(0);
    pthread_mutex_unlock(&release_mu);
}
