/*
 * clock.h - the one monotonic clock of the program: deadlines, durations and timed waits.
 *
 * Every deadline in the planner (search budgets) and the service (leases, polls, request
 * timing, reconnect backoff) is a clock_now() value, so they can be compared and mixed.
 * CLOCK_MONOTONIC never jumps with the wall clock; it says nothing about the date.
 */
#ifndef TPUPLAN_CLOCK_H
#define TPUPLAN_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Seconds on the monotonic clock (an arbitrary origin). */
double clock_now(void);

/* The same clock in whole milliseconds, for the service's millisecond timers. */
int64_t clock_now_ms(void);

/* The clock_now() time t as an absolute timespec, for pthread_cond_timedwait on a
 * condition variable whose clock attribute is CLOCK_MONOTONIC. */
struct timespec clock_timespec(double t);

#endif
