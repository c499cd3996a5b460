/*
 * pack_threads.c - how many threads a solver runs, and running them (pack_int.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "planner/pack/pack_int.h"

unsigned pack_threads(unsigned threads, unsigned max)
{
    if (threads == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (unsigned)c : 1;
    }
    return threads < max ? threads : max;
}

void pack_fan_out(void *(*fn)(void *), void *base, size_t size, unsigned n)
{
    pthread_t tid[PACK_MAX_THREADS];
    bool started[PACK_MAX_THREADS] = {false};
    char *rec = base;

    for (unsigned t = 1; t < n && t < PACK_MAX_THREADS; t++)
        started[t] = pthread_create(&tid[t], NULL, fn, rec + t * size) == 0;
    fn(rec);
    for (unsigned t = 1; t < n; t++) {
        if (t < PACK_MAX_THREADS && started[t])
            pthread_join(tid[t], NULL);
        else
            fn(rec + t * size);
    }
}
