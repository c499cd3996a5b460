/*
 * bytes.h - the one grammar of a byte count in text, for every place tpuplan takes one
 * (the plan options' bytes, plan_options.h: `tpuplan plan|diff|pack --capacity`, `--alignment`,
 * the API's ?capacity= and ?alignment=, a model's options.capacity; the server's `--max-body`,
 * `--cache-bytes` and `--body-min-rate`; and the byte form of a budget, budget.h):
 *
 *   count  = number [unit]
 *   number = digits | digits "." digits | "." digits      (at most 6 decimals)
 *   unit   = ("K" | "M" | "G" | "T") ["i"] ["B"]  |  "B"
 *
 * K, M, G and T are powers of 1024 (2^10 .. 2^40) whatever follows them: "14G", "14Gi",
 * "14GB" and "14GiB" are all 14 x 2^30. The unit letter may be lower case ("64m"); "i" is
 * lower case and "B" upper case only ("b" reads as bits, which no count here is). No sign,
 * no blanks, no exponent. A decimal is taken exactly (decimal arithmetic, no double) and must
 * come to a whole number of bytes: "1.5K" is 1536, "0.3K" (307.2 bytes) and "1.5" are
 * refused rather than rounded, so a count never means less than it says. Above 2^64-1 is
 * ERR_OVERFLOW. Zero is accepted here; callers that need more say so.
 *
 * Pure: no I/O, no state.
 */
#ifndef TPUPLAN_BYTES_H
#define TPUPLAN_BYTES_H

#include <stdbool.h>
#include <stdint.h>

#include "planner/err.h"

#define BYTES_MAX_DECIMALS 6

/* A count's text split into its parts: the value is (whole + frac / den) x mul. */
struct bytes_text {
    uint64_t whole, frac, den; /* den = 10^(decimals), 1 without a point */
    uint64_t mul;              /* the unit's multiplier, 1 without one */
    bool point, unit;          /* a decimal point, a unit was written */
};

/* Splits s by the grammar above into *t without judging the value; errors (ERR_INVALID, or
 * ERR_OVERFLOW for digits past 2^64-1) name `field` and quote s. */
ERR_MUST_CHECK int bytes_scan(const char *field, const char *s, struct bytes_text *t,
                              struct err *e);

/* The value of a scanned count: ERR_INVALID when it is not a whole number of bytes,
 * ERR_OVERFLOW above 2^64-1; errors name `field` and quote s. */
ERR_MUST_CHECK int bytes_value(const char *field, const char *s, const struct bytes_text *t,
                               uint64_t *out, struct err *e);

/* bytes_scan then bytes_value: s as a byte count into *out. */
ERR_MUST_CHECK int bytes_parse(const char *field, const char *s, uint64_t *out, struct err *e);

/* A count written without a unit below this is likely a slip where a person types a memory
 * size ("--capacity 16" meant 16G): the callers that take one (a plan's capacity, a budget)
 * refuse it unless it is written with "B" ("16B"). */
#define BYTES_SLIP_BELOW (UINT64_C(1) << 20)

/* ERR_INVALID, naming field and quoting s, when scanned count t of value v is such a slip:
 * no unit, and 1 <= v < BYTES_SLIP_BELOW (0 is the range's to refuse). */
ERR_MUST_CHECK int bytes_check_slip(const char *field, const char *s, const struct bytes_text *t,
                                    uint64_t v, struct err *e);

#endif
