/*
 * admit.h - large reads admitted a few at a time (--max-heavy): the whole plan document,
 * its trace, a diff. Each takes hundreds of MB and seconds on a 1,000,000-tensor plan, so a
 * handful at once would take the server's memory; beyond the limit a request is answered
 * 503 (server-busy, Retry-After) before any work, and a what-if's answer leaves its inline
 * diff out (links.diff has it).
 *
 * A slot is taken by the transport when it hands a large read to the heavy lane (route.h)
 * and given back when the request completes (its answer sent, or the connection gone), so
 * it covers the answer's memory too. Lock-free; any thread.
 */
#ifndef TPUPLAN_ADMIT_H
#define TPUPLAN_ADMIT_H

#include <stdbool.h>

struct server;

/* Takes a slot when fewer than --max-heavy are taken: true, or false (taken none). */
bool admit_heavy(struct server *srv);

/* Gives back a slot admit_heavy() took. */
void admit_heavy_done(struct server *srv);

#endif
