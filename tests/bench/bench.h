/*
 * bench.h - the clocks and the memory figure every benchmark binary reports. Header-only:
 * each benchmark is a program of its own.
 *
 * The machines are shared, so rates are computed on this process's CPU time and the wall
 * time is shown beside it.
 */
#ifndef TPUPLAN_BENCH_H
#define TPUPLAN_BENCH_H

#include <stdint.h>
#include <sys/resource.h>
#include <time.h>

#include "planner/clock.h"
#include "../unit/rng.h"

/* Wall-clock seconds: the program's one monotonic clock. */
static inline double bench_wall(void)
{
    return clock_now();
}

/* CPU seconds of the whole process, all threads. */
static inline double bench_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak resident set of the process, KiB. */
static inline long bench_peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

#endif
