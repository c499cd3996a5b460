/*
 * admit.h - large reads admitted a few at a time (--max-heavy): the whole document, the
 * layout view or the trace of a plan of ADMIT_LARGE_TENSORS or more, or a diff with one.
 * Each takes hundreds of MB and seconds at 1,000,000 tensors, so a handful at once would
 * take the server's memory; beyond the limit such a read is answered 503 (server-busy,
 * Retry-After) before it reads anything, and a what-if's answer leaves its inline diff out
 * (links.diff has it). Reads of smaller plans are never refused for it.
 *
 * The handler on an executor learns a plan's size with one indexed read (store_plan_tensors)
 * and calls admit_large: a large read takes a slot and moves to the heavy pool (route.h),
 * which runs the handler again. The slot is given back when the request completes (its
 * answer sent, or the connection gone), so it covers the answer's memory too.
 */
#ifndef TPUPLAN_ADMIT_H
#define TPUPLAN_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

struct server;
struct request;

/* Plans from this many tensors on are large (a whole document of about 36 MB). */
#define ADMIT_LARGE_TENSORS 100000u

/* Takes a slot when fewer than --max-heavy are taken: true, or false (taken none).
 * Lock-free; any thread. */
bool admit_heavy(struct server *srv);

/* Gives back a slot admit_heavy() took. */
void admit_heavy_done(struct server *srv);

enum admit_verdict {
    ADMIT_RUN,   /* go on here: the read is small, or r already holds a slot */
    ADMIT_MOVED, /* r took a slot and went to the heavy pool: return without answering */
    ADMIT_BUSY,  /* every slot is taken: r was answered 503 */
};

/* For a handler on an executor about to read plans of up to `tensors` tensors for r. */
enum admit_verdict admit_large(struct request *r, uint64_t tensors);

struct store;

/* admit_large for a read of plan a, and of plan b when not NULL, their sizes read with st:
 * true when the handler goes on here; false when r moved or was answered (503, or the
 * database's failure). */
bool admit_plans(struct store *st, struct request *r, const char *a, const char *b);

#endif
