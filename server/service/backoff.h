/*
 * backoff.h - the one retry schedule for a database that went away: reconnect attempts
 * (store.c) and the job loops' waits (jobs.c) both double from BACKOFF_MIN_MS up to
 * BACKOFF_MAX_MS, so neither hammers a restarting PostgreSQL nor sleeps past its return
 * by more than a few seconds.
 */
#ifndef TPUPLAN_BACKOFF_H
#define TPUPLAN_BACKOFF_H

#define BACKOFF_MIN_MS 100u
#define BACKOFF_MAX_MS 5000u

/* The wait after one that lasted ms (0: the first failure). */
static inline unsigned backoff_next(unsigned ms)
{
    if (ms == 0)
        return BACKOFF_MIN_MS;
    return ms >= BACKOFF_MAX_MS / 2 ? BACKOFF_MAX_MS : ms * 2;
}

#endif
