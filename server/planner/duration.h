/*
 * duration.h - the one grammar of a duration in text, for the plan's time limit wherever it
 * is given (`tpuplan plan|diff|pack --time-limit`, the API's ?time_limit=, a model's
 * options.time_limit as a string; plan_options.h):
 *
 *   duration = number [unit]
 *   number   = digits | digits "." digits | "." digits      (at most 6 decimals: bytes.h's)
 *   unit     = "ms" | "s" | "m" | "h"                         (none: seconds)
 *
 * "2", "2s" and "2000ms" are two seconds, "1.5m" is ninety and "1h" 3600. Units are lower
 * case; no sign, no blanks, no exponent. The range a duration must lie in is its caller's.
 *
 * Pure: no I/O, no state.
 */
#ifndef TPUPLAN_DURATION_H
#define TPUPLAN_DURATION_H

#include "planner/err.h"

/* s as a duration in seconds into *seconds; errors (ERR_INVALID) name `field` and quote s. */
ERR_MUST_CHECK int duration_parse(const char *field, const char *s, double *seconds, struct err *e);

#endif
