/*
 * bench.h - the clocks and the memory figure every benchmark binary reports. Header-only:
 * each benchmark is a program of its own.
 *
 * The machines are shared, so rates are computed on this process's CPU time and the wall
 * time is shown beside it.
 */
#ifndef TPUPLAN_BENCH_H
#define TPUPLAN_BENCH_H

#include <sys/resource.h>
#include <time.h>

static inline double bench_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall-clock seconds (monotonic). */
static inline double bench_wall(void)
{
    return bench_clock(CLOCK_MONOTONIC);
}

/* CPU seconds of the whole process, all threads. */
static inline double bench_cpu(void)
{
    return bench_clock(CLOCK_PROCESS_CPUTIME_ID);
}

/* Peak resident set of the process, KiB. */
static inline long bench_peak_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

#endif
