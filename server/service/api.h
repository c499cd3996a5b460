/*
 * api.h - the REST handlers that run on request-executor threads (exec.h): the exec
 * handlers of the route table (route.h), each named by its row there.
 *
 * Each does the database and planner work of one suspended request with st (its executor
 * thread's own connection) and answers it with request_reply(), or parks a Prefer: wait
 * submission with exec_park(). The documents they write are described in
 * static/openapi.json.
 */
#ifndef TPUPLAN_API_H
#define TPUPLAN_API_H

#include <stdbool.h>

struct store;
struct request;

/* GET /readyz: 200 while the database answers and its migrations are applied, else 503. */
void api_readyz(struct store *st, struct request *r);

/* GET /metrics: the Prometheus text (metrics.h) with the gauges sampled now. */
void api_metrics(struct store *st, struct request *r);

/* GET /api/v1/plans?limit=&cursor=&name=: a page of plans, newest first. */
void api_plan_list(struct store *st, struct request *r);

/* POST /api/v1/plans: validates the body and queues it as a new plan (202), or waits for it
 * (Prefer: wait), or replays an Idempotency-Key. Run again once parked: answers when the
 * plan finished or the wait is over, else parks again. */
void api_plan_create(struct store *st, struct request *r);

/* POST /api/v1/plans/{id}/whatif: the parent's model with the overrides (api_whatif.h),
 * submitted like api_plan_create as a new plan linked to its parent. */
void api_plan_whatif(struct store *st, struct request *r);

/* GET /api/v1/plans/{id}[?view=summary|layout|?format=trace]: the plan document (ETag, 304),
 * put in the plan cache once finished; the trace is made from the layout view. */
void api_plan_get(struct store *st, struct request *r);

/* DELETE /api/v1/plans/{id}: with the manage token, or the API key that created it. */
void api_plan_delete(struct store *st, struct request *r);

/* --max-queue: answers 503 (queue-full) and returns true when that many plans and frontier
 * searches already wait. Checked before validation, so a full queue costs a submission one
 * bounded count. A replayed Idempotency-Key is refused too: its client retries and gets the
 * replay later. Also for api_frontier.c. */
bool api_queue_full(struct store *st, struct request *r);

/* exec_abandon: answers a request the executor will not run (shutdown). A parked
 * submission already created its plan, so it gets 202 with the plan's location; anything
 * else gets 503 with Retry-After. */
void api_abandon(struct request *r, bool parked);

#endif
