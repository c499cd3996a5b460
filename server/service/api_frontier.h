/*
 * api_frontier.h - frontier searches over HTTP: POST /api/v1/plans/{id}/frontiers queues
 * one (the query checked and stored: frontierq.h, store.h), the worker pool runs it
 * (jobs_frontier.h), GET /api/v1/frontiers/{fid} reads it and GET
 * /api/v1/plans/{id}/frontiers lists a plan's newest. The documents (static/openapi.json):
 *
 *   {"id", "plan", "status": "queued"|"running"|"done"|"failed", "query": {normalised},
 *    "created", "started", "finished", "frontier": <frontier_json's "frontier"> | null,
 *    "error": <problem> | null}
 *
 * A search, like its plan, is read by whoever has its id
 * (server/service/README.md#private-plans), and goes with its plan: 404 once the plan is
 * deleted, 410 once it expired.
 */
#ifndef TPUPLAN_API_FRONTIER_H
#define TPUPLAN_API_FRONTIER_H

struct store;
struct request;

/* POST /api/v1/plans/{id}/frontiers: 202 with Location and the search's document; 415
 * unless the body is JSON, 400 for JSON that does not parse, 422 for a bad query (naming the
 * member), a field the plan's recipe does not have (frontierq_check_recipe) or a plan whose
 * input is no recipe, 404 or 410 for the plan. Idempotency-Key is
 * refused (400): a repeated POST queues another search. */
void api_frontier_create(struct store *st, struct request *r);

/* GET /api/v1/frontiers/{id}: the document, ETag and Retry-After while it runs. */
void api_frontier_get(struct store *st, struct request *r);

/* GET /api/v1/plans/{id}/frontiers: {"frontiers": [{id, status, query, created,
 * finished}, ...]}, the plan's newest API_FRONTIER_LIST first. */
#define API_FRONTIER_LIST 50
void api_frontier_list(struct store *st, struct request *r);

#endif
