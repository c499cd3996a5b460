/*
 * metrics.h - Prometheus counters and histograms for GET /metrics.
 *
 * Process-wide counters in relaxed C11 atomics: any thread may observe without a lock
 * (only the first plan of a new API key name takes one, to add the name). The HTTP layer
 * counts requests by route (route.h series) and status and their duration; the planner workers
 * (jobs.c) report each plan_run() duration with metrics_planner_observe() and each frontier
 * search's with metrics_frontier_observe(). metrics_render() writes the text exposition format
 * (version 0.0.4).
 */
#ifndef TPUPLAN_METRICS_H
#define TPUPLAN_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct route;

/* One finished HTTP request: its route row (NULL: unmatched; rows with one name count
 * together, route.h), final status code, seconds from headers to completion. */
void metrics_request_observe(const struct route *row, int status, double seconds);

/* One plan_run() call by a planner worker, in seconds; ok = 0 when it failed. */
void metrics_planner_observe(double seconds, int ok);

/* One frontier search (frontier_search(), jobs_frontier.h) by a planner worker, in seconds;
 * ok = 0 when it failed. */
void metrics_frontier_observe(double seconds, int ok);

/* Requests refused for their API key (auth.c), by reason. */
enum metrics_auth {
    METRICS_AUTH_MISSING, /* --require-key and no key sent */
    METRICS_AUTH_UNKNOWN, /* a key the server does not know */
    METRICS_AUTH_REVOKED,
    METRICS_AUTH_COUNT
};
void metrics_auth_failure(enum metrics_auth why);

/* One plan created, with the name of the API key that sent it (NULL: none; borrowed).
 * The first METRICS_KEYS names get a series each; later ones count under "(other)". */
#define METRICS_KEYS 64
void metrics_plan_created(const char *key_name);

/* n plans deleted by this instance's expiry sweep. */
void metrics_plans_expired(long n);

/* Gauges sampled when /metrics is served; a negative value means "unknown" (omitted). */
struct metrics_gauges {
    int64_t jobs_queued, jobs_running, jobs_done, jobs_failed; /* store_job_counts */
    int64_t executor_queue;  /* requests waiting for a request-executor thread */
    int64_t waiting_clients; /* Prefer: wait requests parked until their plan finishes */
    int64_t cache_entries, cache_bytes;
    int db_up; /* 1 or 0 */
};

/* The whole exposition as a malloc'd string (caller frees) of *len bytes; NULL on OOM.
 * key_detail (--metrics-detail): plans created by API key name; otherwise one total, so that
 * an unauthenticated /metrics names no key and counts no key's plans. */
char *metrics_render(const struct metrics_gauges *g, bool key_detail, size_t *len);

#endif
