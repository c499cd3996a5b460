/*
 * request.h - one HTTP request as it passes between the transport and the executor.
 *
 * Lifecycle. http.c creates a request with request_new() on the first access-handler call
 * and frees it with request_free() in MHD's completion callback. In between it belongs to
 * exactly one side at a time, and only that side touches it:
 *   - the transport (http.c, on an MHD thread) while the headers and body are read, while
 *     a row's fast handler runs (route.h), and again once the executor has answered;
 *   - the executor (exec.c's run queue or parking list, or a row's exec handler) from the
 *     hand-over (MHD_suspend_connection, exec_submit) until the handler answers with
 *     request_reply(), which resumes the connection and is its last touch.
 *
 * So the struct has three parts: what was asked (filled by the transport before any
 * handler runs, read-only afterwards), the transport's own state, and the executor's own
 * state. Every pointer in it is owned by the request and freed by request_free(), except
 * srv, http.conn and exec.parent (borrowed).
 */
#ifndef TPUPLAN_REQUEST_H
#define TPUPLAN_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>

#include "planner/err.h"
#include "service/body.h"
#include "service/ids.h"
#include "service/log.h"
#include "service/problem.h"
#include "service/proxy.h"
#include "service/reqparse.h"
#include "service/route.h"

struct server;
struct store_plan;

/* Request parameters, from the query string or (multipart) form fields. The plan options
 * (planner/plan_options.h) are not among them: the endpoints that create a plan read every
 * parameter from args. */
enum req_param {
    REQ_PARAM_LIMIT,
    REQ_PARAM_CURSOR,
    REQ_PARAM_NAME,   /* GET /api/v1/plans?name= (a plan's name when creating: args) */
    REQ_PARAM_FORMAT, /* GET /api/v1/plans/{id}?format=trace */
    REQ_PARAM_VIEW,   /* GET /api/v1/plans/{id}?view=summary|layout */
    REQ_PARAM_A,      /* GET /api/v1/diff?a=ID&b=ID */
    REQ_PARAM_B,
    REQ_PARAM_COUNT
};

#define REQ_PARAM_MAX 512 /* bytes in one parameter value */
#define REQ_ARGS_MAX  32  /* parameters kept in args */

/* One parameter as sent: a query parameter, or a form field of a multipart body (form). */
struct req_arg {
    char *name;
    char *value; /* NULL: a query parameter without "=" */
    bool form;
};

/* Where the transport is with a request. */
enum req_phase {
    REQ_NEW = 0,  /* headers and body being read */
    REQ_EXEC,     /* suspended: the executor holds it (queued, running or parked) */
    REQ_READY,    /* answered (request_reply), the response not queued yet */
    REQ_ANSWERED, /* a response was queued */
};

struct request {
    struct server *srv; /* borrowed; outlives every request */

    /* What was asked: filled by the transport, read-only once a handler runs. */
    struct route_match route;
    char client_addr[PROXY_ADDR_LEN]; /* request_client_addr() */
    bool via_proxy;                   /* the peer is a --trusted-proxy */
    char id[LOG_REQUEST_ID_MAX + 1];  /* X-Request-Id: the client's when well-formed, else new */
    char method[8];                   /* for the access log; "" when longer */
    char *url;                        /* for the access log (at most 256 bytes), or NULL */
    double t_start;                   /* clock_now() at the first call */
    enum body_kind kind;              /* a body row (route.h): the body's Content-Type */
    enum body_kind file_kind;         /* multipart: the "file" part's, from its name, type and
                                       * first bytes (BODY_TEXT: a format told by content) */
    struct body body;
    /* multipart: XLA's dumps sent beside the model (fields xla_assignment, xla_report),
     * one after the other in attach; attach_at/attach_len[k] is field k (len 0: none). */
    struct body attach;
    size_t attach_at[2], attach_len[2];
    bool attach_seen[2];
    char *param[REQ_PARAM_COUNT];
    /* Creating a plan (POST /api/v1/plans, .../whatif): every parameter as read (a form's
     * fields, then the query's), up to REQ_ARGS_MAX (args_over: there were more;
     * args_lost: one could not be kept, out of memory). */
    struct req_arg args[REQ_ARGS_MAX];
    size_t nargs;
    bool args_over, args_lost;
    /* Headers, or NULL. client: TPUplan-Client (auth.h). */
    char *authorization, *if_none_match, *idempotency_key, *client;
    int prefer_wait; /* Prefer: wait=N; -1: none */

    /* The answer: set by request_reply() or the transport; resp is owned until queued. */
    int status; /* final status (metrics) */
    struct MHD_Response *resp;

    /* Transport state: http.c only. */
    struct request_http {
        struct MHD_Connection *conn; /* borrowed from MHD */
        enum req_phase phase;
        bool submission; /* a body row's request (route.h): its body is read */
        struct MHD_PostProcessor *pp;
        uint64_t charged; /* bytes of this body counted in srv->body_bytes */
        bool file_seen;   /* multipart: a "file" part arrived */
        bool early;       /* an error found while reading: answered at the end */
        bool counted;     /* holds a place in srv->clients (released at completion) */
        bool limited;     /* its client had no place left: answered 429 */
        bool to_base;     /* exactly --base-path without its slash: redirected */
        bool heavy;       /* holds a large read's slot (admit.h; given back at completion) */
        bool wrong_host;  /* its Host names no name of this server (guard.h): 421 */
        enum problem_id early_problem;
        char early_detail[256];
    } http;

    /* Executor state: exec.c and the exec handler (api.c), while the connection is
     * suspended. */
    struct request_exec {
        struct request *next;         /* run queue / parking list link (exec.c, under its mutex) */
        bool parked;                  /* exec_park() took it once: its plan exists */
        char plan_id[IDS_ID_LEN + 1]; /* Prefer: wait: the plan it waits for */
        const char *parent;           /* a what-if's parent (route.plan_id), else NULL */
        char manage_token[IDS_TOKEN_LEN + 1];
        double deadline;             /* clock_now() time the wait ends */
        double next_poll;            /* clock_now() time of the next re-read (exec.c) */
        struct store_plan *finished; /* the finished plan, handed over by its worker */
    } exec;
};

/* A new request on conn (both borrowed) for method and url (copied), in phase REQ_NEW, with
 * its id. NULL when out of memory. */
struct request *request_new(struct server *srv, struct MHD_Connection *conn, const char *method,
                            const char *url);

/* Who sent r: the peer's address, or for a peer in --trusted-proxy the client it forwards
 * (proxy.h). Per-client limits, rate limits and logs use this. Text owned by r ("" if the
 * peer's address is unknown); set by request_new(), so safe on any thread. */
const char *request_client_addr(const struct request *r);

/* Frees r and everything it owns. */
void request_free(struct request *r);

/* A handler's answer, on either side: stores resp (taken; NULL: a body-less 500) as r's
 * response. On the executor it resumes the connection, whose next access-handler call
 * queues the response; after that the transport may free r at any moment, so the caller
 * must not touch r again. On the MHD thread (a fast handler) the dispatch queues it when
 * the handler returns. */
void request_reply(struct request *r, int status, struct MHD_Response *resp);

/* The conditional GET: when r's If-None-Match matches etag (reqparse_etag_match), answers
 * 304 Not Modified with that ETag (response_not_modified) and Cache-Control: no-cache, as
 * every 200 these answer carries (RFC 9110 section 15.4.5), and returns true, after which r
 * is the transport's as after request_reply(); false, having answered nothing, when it
 * does not match or there is none. */
ERR_MUST_CHECK bool request_reply_not_modified(struct request *r, const char *etag);

/* request_reply() with a problem+json body: catalogue entry id, its status and Retry-After. */
void request_reply_problem(struct request *r, enum problem_id id, const char *detail);

/* request_reply() with the problem of a planner error (problem_from_err: 400 or 422 naming
 * e->where, ...), instance (may be NULL) the path it is about. */
void request_reply_err(struct request *r, const struct err *e, const char *instance);

#endif
