/*
 * api.h - the REST handlers that run on request-executor threads (exec.h).
 *
 * api_run() does the database and planner work of one suspended request and answers it
 * with request_reply(), or parks a Prefer: wait submission with exec_park(). The plan
 * documents it writes are described in static/openapi.json.
 */
#ifndef TPUPLAN_API_H
#define TPUPLAN_API_H

#include <stdbool.h>

struct store;
struct request;

/* exec_handler: one request on an executor thread (st owned by that thread). */
void api_run(struct store *st, struct request *r);

/* exec_abandon: answers a request the executor will not run (shutdown). A parked
 * submission already created its plan, so it gets 202 with the plan's location; anything
 * else gets 503 with Retry-After. */
void api_abandon(struct request *r, bool parked);

#endif
