/*
 * api_diff.h - GET /api/v1/diff?a=ID&b=ID: two stored plans compared (planner/diff.h),
 * run on a request-executor thread like the handlers of api.h.
 */
#ifndef TPUPLAN_API_DIFF_H
#define TPUPLAN_API_DIFF_H

#include <stddef.h>

#include "planner/err.h"

struct store;
struct request;

/* Reads both plans' summary and layout views and answers the diff (200, with an ETag of
 * both plans' versions), 400 for a malformed id, 404 for an unknown one, 409 no-result when
 * either plan is not done. */
void api_diff(struct store *st, struct request *r);

/* The diff of finished plans ida (before) and idb (after) as JSON text into *json (malloc'd,
 * NUL-terminated, caller frees; *len bytes), at most max_bytes (0: diff.h's 1 GiB). 0, or
 * -1 with *json NULL and nothing answered when either plan is unreadable or not done, or
 * the diff fails or is larger: a caller that offers the diff inline then leaves it out. */
ERR_MUST_CHECK int api_diff_text(struct store *st, const char *ida, const char *idb,
                                 size_t max_bytes, char **json, size_t *len);

#endif
