/*
 * server.h - the running service's shared parts, as the transport (http.c) and the
 * handlers (serve.c, api.c) see them through a request's srv pointer.
 *
 * Ownership: main.c creates cfg, cache, chips, recipes, the exec pools, jobs and ratelimit
 * before http_start() and destroys them after http_stop(); everything else only borrows
 * them. The daemon, the static roots and the counters below them belong to http.c
 * (http_start .. http_stop); the handlers read the roots.
 */
#ifndef TPUPLAN_SERVER_H
#define TPUPLAN_SERVER_H

#include <stdatomic.h>
#include <stdint.h>

#include <microhttpd.h>

#include "service/config.h"
#include "service/static_files.h"

struct climit;
struct deadline;
struct exec;
struct jobs;
struct plancache;
struct ratelimit;

struct server {
    /* Set up by main.c; borrowed by everything else. */
    const struct config *cfg;
    struct plancache *cache;
    char *chips; /* GET /api/v1/chips's body, built once (NULL: out of memory) */
    size_t chips_len;
    char *recipes; /* GET /api/v1/recipes's body (recipe_catalog), built once (NULL: none) */
    size_t recipes_len;
    struct exec *exec;           /* the executors (route.h: ROUTE_LANE_EXEC) */
    struct exec *exec_ops;       /* /readyz and /metrics: one thread (ROUTE_LANE_OPS) */
    struct exec *exec_heavy;     /* large reads: --max-heavy threads (admit.h) */
    atomic_uint heavy;           /* large reads admitted and not yet completed (admit.h) */
    struct jobs *jobs;           /* planner workers; NULL in tests that run none */
    struct ratelimit *ratelimit; /* plan submissions per client; NULL: no limit */

    /* http.c's own. */
    struct MHD_Daemon *daemon;
    struct deadline *deadline; /* request-header deadline; NULL: none */
    struct static_root static_root, vendor_root;
    atomic_bool shutting_down;   /* set once by http_quiesce (release), read by any thread */
    atomic_long inflight;        /* requests between first call and completion */
    _Atomic uint64_t body_bytes; /* bytes held by request bodies, all requests together */
    struct climit *clients;      /* per-client request counts; NULL: MHD's per-IP limit is used */
    char *tls_cert_pem, *tls_key_pem; /* --tls-cert/--tls-key text, held while MHD runs */
};

#endif
