/*
 * jobs_frontier.h - a frontier search on the planner worker (jobs.c): the query stored with
 * it (frontierq.h, written by POST /api/v1/plans/{id}/frontiers: api_frontier.h) over its
 * plan's recipe, planned with the plan's stored options (planopts.h) within the server's
 * limits (planner/frontier.h's frontier_search), answered as frontier_json writes it.
 */
#ifndef TPUPLAN_JOBS_FRONTIER_H
#define TPUPLAN_JOBS_FRONTIER_H

#include <stddef.h>

#include "planner/err.h"
#include "planner/plan.h"
#include "service/store.h"

/* Runs job's search into *result (malloc'd: the value of frontier_json's "frontier" member,
 * the caller frees), or fills *e: the planner's errors (the recipe, a field that is no recipe
 * field, more plans than allowed: ERR_LIMIT), ERR_INTERNAL naming "query" or "options" for a
 * stored document that does not read back. */
ERR_MUST_CHECK int jobs_frontier_run(const struct store_frontier_job *job,
                                     const struct plan_limits *lim, char **result, size_t *len,
                                     struct err *e);

#endif
