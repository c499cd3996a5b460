/*
 * budget.h - the memory budget a plan is gated on (`tpuplan plan --budget`, `?budget=`).
 *
 * A budget is either a byte count or a fraction of the plan's capacity (the chip's usable
 * HBM unless a capacity is given):
 *
 *   "14000000000"  bytes (an integer of at least 1 MiB, or any count with a unit: "1B")
 *   "14G", "14GiB" bytes in the one grammar of every byte count of tpuplan (bytes.h:
 *                  --capacity, --max-body): K, M, G, T are powers of 1024 with or without
 *                  "i" and "B", so "14G" and "14GiB" are both 14 x 2^30; "13.5G" is exact,
 *                  a count that is not a whole number of bytes ("0.3K") is refused
 *   "0.9", "1.0"   a fraction in (0, 1] of the capacity, written with a point, at most 6
 *                  decimals, taken exactly (decimal arithmetic, rounded down)
 *   "90%", "12.5%" a percentage in (0, 100] of the capacity, the same way
 *
 * A fraction is one only when written as one: "1" alone is refused as ambiguous (all of the
 * capacity, or one byte?), and an integer without a unit below 1 MiB ("16", "900") as a
 * likely slip (bytes_check_slip); "16B" is 16 bytes.
 *
 * A plan is within its budget when its peak is at most budget_bytes. Pure: no I/O, no state.
 */
#ifndef TPUPLAN_BUDGET_H
#define TPUPLAN_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "planner/err.h"

#define BUDGET_MAX_TEXT 64 /* bytes of budget text accepted */

struct budget {
    bool fraction;  /* a share of the capacity: num / den */
    uint64_t bytes; /* when !fraction */
    uint64_t num, den;
};

/* Parses s into *b; errors name `field` ("budget", "--budget", "options.budget"). */
ERR_MUST_CHECK int budget_parse(const char *field, const char *s, struct budget *b, struct err *e);

/* The budget in bytes against capacity (0 = none: a fraction is then an error). */
ERR_MUST_CHECK int budget_bytes(const struct budget *b, uint64_t capacity, uint64_t *out,
                                struct err *e);

#endif
