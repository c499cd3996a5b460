/*
 * climit.h - concurrent requests per client address, for when MHD's per-IP connection
 * limit cannot be used.
 *
 * MHD counts connections per peer address. Behind a reverse proxy every peer is the proxy,
 * so with --trusted-proxy set, http.c turns MHD's limit off and counts each request here
 * under request_client_addr() instead, from the first access-handler call (headers read)
 * to its completion. Thread-safe (one mutex); memory is one small node per client with a
 * request in flight, so bounded by the connection limit.
 */
#ifndef TPUPLAN_CLIMIT_H
#define TPUPLAN_CLIMIT_H

#include <stdbool.h>

struct climit;

/* A table allowing max requests per client at once. NULL when out of memory. Caller owns
 * it: climit_free(). */
struct climit *climit_new(unsigned max);
void climit_free(struct climit *c);

/* Takes a place for addr (borrowed): false when addr already holds max (or out of
 * memory), and then nothing is taken. */
bool climit_acquire(struct climit *c, const char *addr);

/* Gives back a place climit_acquire() took for addr. */
void climit_release(struct climit *c, const char *addr);

#endif
