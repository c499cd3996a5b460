/*
 * api_diff.h - GET /api/v1/diff?a=ID&b=ID: two stored plans compared (planner/diff.h),
 * run on a request-executor thread like the handlers of api.h.
 */
#ifndef TPUPLAN_API_DIFF_H
#define TPUPLAN_API_DIFF_H

struct store;
struct request;

/* Reads both plans' summary and layout views and answers the diff (200, with an ETag of
 * both plans' versions), 400 for a malformed id, 404 for an unknown one, 409 no-result when
 * either plan is not done. */
void api_diff(struct store *st, struct request *r);

#endif
