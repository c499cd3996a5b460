/*
 * server.h - the running service's shared parts, as the transport (http.c) and the REST
 * handlers (api.c) see them through a request's srv pointer.
 *
 * Ownership: main.c creates cfg, cache, chips, exec and jobs before http_start() and
 * destroys them after http_stop(); http.c and api.c only borrow them. The daemon, the
 * static roots and the counters below them belong to http.c (http_start .. http_stop).
 */
#ifndef TPUPLAN_SERVER_H
#define TPUPLAN_SERVER_H

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
    struct exec *exec;
    struct jobs *jobs;           /* planner workers; NULL in tests that run none */
    struct ratelimit *ratelimit; /* plan submissions per client; NULL: no limit */
    int db_up;                   /* atomic: last database call succeeded (api.c writes it) */

    /* http.c's own. */
    struct MHD_Daemon *daemon;
    struct deadline *deadline; /* request-header deadline; NULL: none */
    struct static_root static_root, vendor_root;
    int shutting_down;      /* atomic */
    long inflight;          /* atomic: requests between first call and completion */
    uint64_t body_bytes;    /* atomic: bytes held by request bodies, all requests together */
    struct climit *clients; /* per-client request counts; NULL: MHD's per-IP limit is used */
    char *tls_cert_pem, *tls_key_pem; /* --tls-cert/--tls-key text, held while MHD runs */
};

#endif
