/*
 * exec.h - the request-executor pool: threads that do a suspended request's database work.
 *
 * Each thread owns one struct store (its own PostgreSQL connection) for its lifetime. A
 * request enters with exec_submit(); the thread calls the handler, which must either
 * answer (request_reply, which resumes the connection) or park the request with exec_park().
 *
 * Parking serves Prefer: wait=N. A parked request goes back to the run queue when
 * exec_plan_finished() names its plan (the planner workers' completion callback), every
 * poll interval (so plans finished by another server instance are seen too), and at its
 * deadline. Ownership: a request is owned by exactly one of the run queue, a running
 * handler, or the parking list; moving between them happens under the pool's mutex. The
 * pool uses only the executor part of a request (request.h: r->exec).
 */
#ifndef TPUPLAN_EXEC_H
#define TPUPLAN_EXEC_H

#include <stdbool.h>
#include <stddef.h>

struct store;
struct store_plan;
struct request;
struct exec;

/* Runs one request on an executor thread. */
typedef void (*exec_handler)(struct store *st, struct request *r);
/* Answers a request the pool will never run (shutdown): parked says whether it was parked. */
typedef void (*exec_abandon)(struct request *r, bool parked);

/* Opens nthreads store connections and starts the threads. NULL with errbuf on failure. */
struct exec *exec_start(const char *conninfo, unsigned nthreads, double poll_interval_s,
                        exec_handler run, exec_abandon abandon, char *errbuf, size_t cap);

/* Queues a suspended request. After exec_stop() began it is abandoned at once. */
void exec_submit(struct exec *x, struct request *r);

/* From a handler: parks r (r->exec.plan_id, r->exec.deadline set) until its plan finishes,
 * its deadline or the next poll, and marks it r->exec.parked. */
void exec_park(struct exec *x, struct request *r);

/* Wakes the requests parked on plan_id. Safe from any thread (the jobs callback). plan
 * (may be NULL; borrowed) is the finished plan with its result: each woken request gets
 * its own copy in r->exec.finished, and answers from it without reading the database. */
void exec_plan_finished(struct exec *x, const char *plan_id, const struct store_plan *plan);

/* Abandons queued and parked requests, lets running handlers finish, joins the threads
 * and closes their connections. Requests submitted afterwards are abandoned at once. A
 * second call does nothing. */
void exec_stop(struct exec *x);

/* Frees the pool after exec_stop(), once no thread can call exec_submit() any more. */
void exec_free(struct exec *x);

/* How many requests wait in the run queue and in the parking list now. */
void exec_stats(struct exec *x, long *queued, long *parked);

#endif
