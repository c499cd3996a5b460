/*
 * problem.h - RFC 9457 problem details (application/problem+json) for every error reply.
 *
 * Problem types are relative URIs "BASE/problems/<slug>" (resolved against the server's own
 * origin; BASE is its --base-path, "" by default), e.g. "/problems/invalid-model" or behind a
 * proxy "/tpuplan/problems/invalid-model"; static/openapi.json lists every slug. The
 * `instance` (a path of the API) carries the same prefix. Besides
 * the standard members (type, title, status, detail, instance) a problem may carry `where`:
 * the planner's machine-readable location of the offending field ("tensors[3].shape[1]"),
 * and `errors`: every bad request parameter, each with its name and detail.
 *
 * The functions here are pure (no I/O, no global state) so the planner workers (jobs.c) can
 * use them to store a failed plan's error, and the unit tests can check them.
 */
#ifndef TPUPLAN_PROBLEM_H
#define TPUPLAN_PROBLEM_H

#include <stddef.h>

#include "planner/err.h"

#define PROBLEM_MEDIA_TYPE "application/problem+json"

/*
 * The catalogue: every problem the service answers or stores names one of these. Two
 * entries may share a slug with different titles (not-found for a path and for a plan;
 * out-of-memory for an upload and for the planner), since the title is what the entry adds.
 */
enum problem_id {
    /* Transport (http.c): routing and request bodies. */
    PROBLEM_NOT_FOUND,
    PROBLEM_METHOD_NOT_ALLOWED,
    PROBLEM_SHUTTING_DOWN,
    PROBLEM_BODY_TOO_LARGE,
    PROBLEM_UNSUPPORTED_MEDIA_TYPE,
    PROBLEM_MALFORMED_MULTIPART,
    PROBLEM_MISSING_FILE,
    PROBLEM_EMPTY_BODY,
    PROBLEM_TRUNCATED_SAFETENSORS,
    PROBLEM_SERVER_BUSY,
    PROBLEM_OUT_OF_MEMORY,
    PROBLEM_CLIENT_BUSY,
    PROBLEM_RATE_LIMITED, /* Retry-After: the seconds to the client's next token */
    PROBLEM_WRONG_HOST,   /* guard.h: a Host that names no name of this server */
    PROBLEM_CROSS_SITE,   /* guard.h: a body a cross-site form could send, unmarked */
    /* The REST handlers (api.c). */
    PROBLEM_INVALID_PARAMETER,
    PROBLEM_NO_SUCH_PLAN,
    PROBLEM_NO_SUCH_FRONTIER,
    PROBLEM_UNAUTHORIZED,
    PROBLEM_FORBIDDEN,
    PROBLEM_IDEMPOTENCY_KEY_REUSED,
    PROBLEM_KEY_REQUIRED,
    PROBLEM_KEY_REVOKED,
    PROBLEM_PLAN_EXPIRED,
    PROBLEM_DATABASE_UNAVAILABLE,
    PROBLEM_QUEUE_FULL,
    PROBLEM_NOT_READY,
    PROBLEM_NO_RESULT,
    PROBLEM_INTERNAL,
    /* Planner errors (problem_for_err). */
    PROBLEM_MALFORMED_INPUT,
    PROBLEM_INVALID_MODEL,
    PROBLEM_LIMIT_EXCEEDED,
    PROBLEM_SIZE_OVERFLOW,
    PROBLEM_UNKNOWN_NAME,
    PROBLEM_INFEASIBLE,
    PROBLEM_PLANNER_TIMEOUT,
    PROBLEM_PLANNER_OUT_OF_MEMORY,
    PROBLEM_COUNT
};

struct problem_type {
    const char *slug;        /* the type is "/problems/<slug>" */
    const char *title;       /* short, stable text of the type */
    int status;              /* HTTP status */
    const char *retry_after; /* Retry-After seconds sent with the answer; NULL: none */
};

/* The detail of PROBLEM_SHUTTING_DOWN, whether the transport or the executor refuses. */
#define PROBLEM_SHUTTING_DOWN_DETAIL                                                               \
    "Retry the request; another instance or a restarted one will answer it."

/* Indexed by enum problem_id; static. */
extern const struct problem_type problem_types[PROBLEM_COUNT];

/*
 * Returns the problem document of entry id as a malloc'd NUL-terminated string (caller
 * frees), its length in *len when len is not NULL, or NULL when out of memory. base (the
 * server's --base-path, borrowed) prefixes the type and the instance; base, detail, where and
 * instance may be NULL (then omitted; base NULL is "").
 */
char *problem_json(enum problem_id id, const char *base, const char *detail, const char *where,
                   const char *instance, size_t *len);

/* One bad request parameter, an element of a problem's "errors" member: its name as sent
 * and a sentence naming it (the plan options' table's, plan_options.h). Both borrowed. */
struct problem_param {
    const char *name;
    const char *detail;
};

/* problem_json() with an "errors" member after the others: [{"name", "detail"}, ...], the
 * nerrs entries of errs in order (none when nerrs is 0: then it is problem_json()). */
char *problem_json_errors(enum problem_id id, const char *base, const char *detail,
                          const char *where, const char *instance, const struct problem_param *errs,
                          size_t nerrs, size_t *len);

/* The entry for a planner error code (enum err_code). Invalid and semantically wrong inputs
 * are 422; resource exhaustion and bugs are 500 or 503. */
enum problem_id problem_for_err(int code);

/* problem_json() for a planner error: detail = e->msg, where = e->where, base as there. *status
 * receives the HTTP status when status is not NULL: problem_for_err()'s, except that ERR_INVALID
 * without a location (a syntax error: the planner names no field) is 400 malformed-input.
 * Caller frees the result. */
char *problem_from_err(const struct err *e, const char *base, const char *instance, int *status,
                       size_t *len);

#endif
