/*
 * problem.h - RFC 9457 problem details (application/problem+json) for every error reply.
 *
 * Problem types are relative URIs "/problems/<slug>" (resolved against the server's own
 * origin), e.g. "/problems/invalid-model"; static/openapi.json lists every slug. Besides
 * the standard members (type, title, status, detail, instance) a problem may carry `where`:
 * the planner's machine-readable location of the offending field ("tensors[3].shape[1]").
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
 * Returns the problem document as a malloc'd NUL-terminated string (caller frees), its
 * length in *len when len is not NULL, or NULL when out of memory. slug names the type
 * ("invalid-model"); title is the short stable text of the type; detail, where and instance
 * may be NULL (then omitted).
 */
char *problem_json(int status, const char *slug, const char *title, const char *detail,
                   const char *where, const char *instance, size_t *len);

/* The HTTP status, type slug and title for a planner error code (enum err_code). Invalid
 * and semantically wrong inputs are 422; resource exhaustion and bugs are 500. */
void problem_for_err(int code, int *status, const char **slug, const char **title);

/* problem_json() for a planner error: detail = e->msg, where = e->where. *status receives
 * the HTTP status when status is not NULL: problem_for_err(), except that ERR_INVALID
 * without a location (a syntax error: the planner names no field) is 400 malformed-input.
 * Caller frees the result. */
char *problem_from_err(const struct err *e, const char *instance, int *status, size_t *len);

#endif
