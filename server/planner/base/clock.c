#include "planner/clock.h"

#include <math.h>

double clock_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t clock_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct timespec clock_timespec(double t)
{
    double whole = floor(t);
    struct timespec ts = {.tv_sec = (time_t)whole, .tv_nsec = (long)((t - whole) * 1e9)};

    if (ts.tv_nsec >= 1000000000L) { /* rounding of t - whole near 1 */
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}
