/*
 * ratelimit.h - per-client token buckets for plan submissions (429 with Retry-After).
 *
 * Each client address (the key the per-IP connection limit uses) has a bucket of `burst`
 * tokens that refills at `per_minute` / 60 tokens a second; a submission takes one token.
 * The table has a fixed number of slots, so memory is bounded whatever the number of
 * clients: an address hashes to a window of slots, and when the window is full the slot
 * idle the longest is taken over (a client evicted that way starts again with a full
 * bucket: a forgiving error, never a wrong refusal of someone else).
 *
 * Time is passed in (clock_now() seconds), so the arithmetic is unit-tested exactly.
 * Thread-safe (one mutex).
 */
#ifndef TPUPLAN_RATELIMIT_H
#define TPUPLAN_RATELIMIT_H

#define RATELIMIT_SLOTS    4096 /* clients tracked at once */
#define RATELIMIT_ADDR_MAX 64   /* longest key kept; longer keys are cut (still one client) */

struct ratelimit;

/* A limiter of per_minute submissions a minute per client with bursts of burst (>= 1).
 * NULL when per_minute is 0 (no limit) or out of memory. Caller owns it: ratelimit_free(). */
struct ratelimit *ratelimit_new(unsigned per_minute, unsigned burst);
void ratelimit_free(struct ratelimit *rl);

/* Takes one token for addr (borrowed) at time now. Returns 0 when the submission may go
 * ahead, else the whole seconds until a token is back (>= 1), for Retry-After. A NULL rl
 * allows everything. */
unsigned ratelimit_take(struct ratelimit *rl, const char *addr, double now);

#endif
