/*
 * response.h - MHD response constructors that every reply goes through, so each carries
 * the security headers (CSP, nosniff, no-referrer, DENY framing) and a Content-Type.
 *
 * Each function returns a new struct MHD_Response owned by the caller (queue it, then
 * MHD_destroy_response), or NULL when out of memory. Creating a response is safe on any
 * thread; only queueing it must happen in the access handler.
 */
#ifndef TPUPLAN_RESPONSE_H
#define TPUPLAN_RESPONSE_H

#include <stddef.h>

#include <microhttpd.h>

#include "service/problem.h"

#define RESPONSE_CSP                                                                               \
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

/* Adds the security headers to resp. */
void response_secure(struct MHD_Response *resp);

/* A response that takes ownership of the malloc'd buffer body (freed with the response,
 * also when this fails). ctype may be NULL for an empty body. */
struct MHD_Response *response_take(char *body, size_t len, const char *ctype);

/* A body sent from pieces in place: a large document (a plan's result as libpq read it)
 * goes out without being copied into one buffer. */
struct response_part {
    const char *p;
    size_t len;
};
#define RESPONSE_PARTS_MAX 12

/* A response whose body is the n parts (at most RESPONSE_PARTS_MAX; the array is copied,
 * the bytes are borrowed from owner) in order; release(owner) runs once the response is
 * done with them, also when this fails (NULL). */
struct MHD_Response *response_parts(const struct response_part *parts, size_t n, const char *ctype,
                                    void (*release)(void *owner), void *owner);

/* A response copying a static or borrowed buffer. */
struct MHD_Response *response_copy(const char *body, size_t len, const char *ctype);

/* The body-less 304 Not Modified standing for the representation whose entity tag is etag:
 * the security headers and ETag: etag. */
struct MHD_Response *response_not_modified(const char *etag);

/* An application/problem+json response for catalogue entry id (see problem.h; base is the
 * server's --base-path), with the entry's Retry-After when it has one. Queue it with
 * problem_types[id].status. */
struct MHD_Response *response_problem(enum problem_id id, const char *base, const char *detail,
                                      const char *where, const char *instance);

#endif
