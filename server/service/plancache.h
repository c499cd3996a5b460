/*
 * plancache.h - finished plans' GET responses in memory, so GET /api/v1/plans/{id} of a
 * done or failed plan never touches the database.
 *
 * An entry is keyed by plan id and view: the view is the request's ?view= value as given
 * ("summary", "layout"), NULL or "" for the whole plan. Only the API puts entries, and only
 * for views it serves, so an unknown view simply misses. Eviction by id drops every view.
 *
 * Finished plans are immutable; the only change is deletion. Every deletion, on any
 * instance (a DELETE, the expiry sweep), is announced by PostgreSQL on tpuplan_deleted
 * (store.h), and each instance's job coordinator evicts the id when it arrives (jobs.h
 * on_deleted); when the coordinator may have missed announcements (its connection was
 * lost) it clears the whole cache. ttl_s remains the bound should an announcement still be
 * lost. Bounded by bytes with least-recently-used eviction.
 * Thread-safe (one mutex). Each hit gets its own MHD response (so it can carry its request
 * id) over the cached body, which is reference-counted: an eviction while a response is
 * still being sent frees the body only when that response is done with it.
 */
#ifndef TPUPLAN_PLANCACHE_H
#define TPUPLAN_PLANCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

struct plancache;

struct plancache *plancache_new(uint64_t max_bytes, unsigned ttl_s);
void plancache_free(struct plancache *c);

#define PLANCACHE_VIEW_MAX 15 /* longest view name kept; longer ones are never cached */

/* Stores the body (malloc'd, len bytes; taken, also on failure) of the JSON response for
 * (id, view), whose strong ETag is etag. Replaces an older entry. */
void plancache_put(struct plancache *c, const char *id, const char *view, const char *etag,
                   char *body, size_t len);

/* Whether a body of len bytes is small enough to be kept (so a caller copies only those). */
bool plancache_keeps(const struct plancache *c, size_t len);

#define PLANCACHE_ETAG_MAX 63 /* longest ETag kept; longer ones are never cached */

/* On a hit: a new response (caller owns it) with the cached body as application/json, its
 * ETag, Cache-Control: no-cache and the security headers, and the ETag copied into etag.
 * NULL on a miss, an expired entry or out of memory. Safe on any thread. */
struct MHD_Response *plancache_get(struct plancache *c, const char *id, const char *view,
                                   char etag[PLANCACHE_ETAG_MAX + 1]);

/* Drops every view of plan id. */
void plancache_evict(struct plancache *c, const char *id);

/* Drops every entry. */
void plancache_clear(struct plancache *c);

void plancache_stats(struct plancache *c, int64_t *entries, int64_t *bytes);

#endif
