/*
 * http.h - the libmicrohttpd daemon, per-request state and the access handler.
 *
 * Threading: MHD runs an epoll thread pool (config.http_threads). Its threads never block
 * on the database or the planner: a request that needs the database is suspended
 * (MHD_suspend_connection) and handed to the request-executor pool (exec.h), whose thread
 * builds the response, stores it in the request (phase REQ_READY) and resumes the
 * connection; the access handler then queues it on its next call. Only the access handler
 * ever queues responses. Static files, /healthz and cached finished plans are answered on
 * the MHD thread directly (local file open and in-memory lookups only).
 *
 * A struct request lives from the first access-handler call to MHD's completion callback,
 * which frees it; while suspended it belongs to whichever executor thread or parking list
 * holds it (exec.h), and nothing else touches it.
 */
#ifndef TPUPLAN_HTTP_H
#define TPUPLAN_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>

#include "service/body.h"
#include "service/config.h"
#include "service/plancache.h"
#include "service/problem.h"
#include "service/reqparse.h"
#include "service/route.h"
#include "service/static_files.h"

struct store_plan;

struct exec;
struct jobs;

/* Request parameters, from the query string or (multipart) form fields. */
enum req_param {
    REQ_PARAM_LIMIT,
    REQ_PARAM_CURSOR,
    REQ_PARAM_NAME,
    REQ_PARAM_CHIP,
    REQ_PARAM_STRATEGIES,
    REQ_PARAM_CAPACITY,
    REQ_PARAM_TIME_LIMIT,
    REQ_PARAM_ALIGNMENT,
    REQ_PARAM_FORMAT,
    REQ_PARAM_VIEW, /* GET /api/v1/plans/{id}?view=summary|layout */
    REQ_PARAM_COUNT
};

/* Names as they appear in the query string and form. */
extern const char *const req_param_names[REQ_PARAM_COUNT];

enum req_phase {
    REQ_NEW = 0,  /* headers and body being read */
    REQ_EXEC,     /* suspended: queued or running on an executor thread */
    REQ_PARKED,   /* suspended: Prefer: wait, until the plan finishes or the deadline */
    REQ_READY,    /* suspended: response ready, connection resumed */
    REQ_ANSWERED, /* a response was queued */
};

#define REQ_PARAM_MAX 512 /* bytes in one parameter value */

struct server {
    const struct config *cfg;
    struct MHD_Daemon *daemon;
    struct static_root static_root, vendor_root;
    struct plancache *cache;
    struct MHD_Response *chips; /* GET /api/v1/chips, built at start, owned here */
    struct exec *exec;
    struct jobs *jobs;   /* planner workers; NULL in tests that run none */
    int shutting_down;   /* atomic */
    long inflight;       /* atomic: requests between first call and completion */
    uint64_t body_bytes; /* atomic: bytes held by request bodies, all requests together */
    int db_up;           /* atomic: last database call succeeded */
};

struct request {
    struct server *srv;
    struct MHD_Connection *conn;
    struct route_match route;
    double t_start;
    enum req_phase phase;
    int status; /* response status once known (metrics) */

    /* Body (POST /api/v1/plans). */
    bool submission; /* a POST /api/v1/plans whose body is read */
    enum body_kind kind;
    struct body body;
    struct MHD_PostProcessor *pp;
    uint64_t charged;              /* bytes of this body counted in srv->body_bytes */
    bool file_seen;                /* multipart: a "file" part arrived */
    int file_format;               /* multipart: enum plan_format guessed from the part */
    bool early;                    /* an error found while reading: answered at the end */
    enum problem_id early_problem; /* which, when early */
    char early_detail[256];

    /* Copied headers and parameters (malloc'd, freed with the request). */
    char *param[REQ_PARAM_COUNT];
    char *authorization, *if_none_match, *idempotency_key;
    int prefer_wait; /* -1: none */

    /* Executor results. resp is owned by the request until queued. */
    struct MHD_Response *resp;
    struct request *next; /* executor queue / parking list link */

    /* Prefer: wait parking. */
    char plan_id[32];
    char manage_token[64];
    double deadline, next_poll;
    bool waited;
    struct store_plan *finished; /* the finished plan, handed over by its worker; owned */
};

/* Starts the daemon (binds, spawns threads). 0, or -1 with a message on stderr. The
 * server struct must outlive http_stop(); cfg, cache and exec are borrowed. */
int http_start(struct server *srv);

/* The bound port (useful with port 0). */
unsigned http_port(const struct server *srv);

/* Stops accepting new connections (MHD_quiesce_daemon) and makes every new request a 503. */
void http_quiesce(struct server *srv);

/* Waits up to timeout_s for in-flight requests to complete, then stops the daemon. */
void http_stop(struct server *srv, double timeout_s);

/* Executor side: sets the response and resumes the connection. Takes resp (NULL: 500). */
void http_reply(struct request *r, int status, struct MHD_Response *resp);

/* http_reply() with a problem+json body: catalogue entry id, its status and Retry-After. */
void http_reply_problem(struct request *r, enum problem_id id, const char *detail);

#endif
