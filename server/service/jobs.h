/*
 * jobs.h - the planner worker pool: runs queued plans with plan_run() and stores results.
 *
 * The queue is the jobs table (store.h), shared by every server instance on the database.
 * Each of the `workers` threads owns one struct store (one PGconn) and loops: claim the
 * oldest queued job (FOR UPDATE SKIP LOCKED) with a lease, run plan_run() on it, and write
 * the result or the error in one transaction that succeeds only while the lease is still
 * its own. One extra thread, the coordinator, owns a second kind of connection: it LISTENs
 * for new work, finished plans and deleted ones, renews the leases of the plans running here, and
 * requeues jobs whose lease expired because their server died. NOTIFY is only a wake-up
 * hint: idle workers also poll every poll_ms, so a missed notification costs at most that.
 *
 * While the database is unreachable every thread retries with a backoff from 100 ms to 5 s;
 * nothing crashes and nothing spins. A plan whose server dies is planned again elsewhere
 * after its lease expires; one that was claimed max_attempts times fails for good.
 *
 * Thread use: jobs_start(), jobs_kick() and jobs_stop() may be called from any thread.
 * on_done runs on a worker or the coordinator thread and must not block.
 */
#ifndef TPUPLAN_JOBS_H
#define TPUPLAN_JOBS_H

#include <stddef.h>

#include "planner/plan.h"

struct store_plan;

struct jobs_config {
    const char *conninfo;  /* libpq conninfo; copied */
    unsigned workers;      /* planner threads; 0: online cores */
    int lease_ms;          /* lease length; 0: 15000 */
    int renew_ms;          /* lease renewal period; 0: lease_ms / 3 */
    int poll_ms;           /* idle poll fallback; 0: 1000 */
    int max_attempts;      /* claims before a plan fails for good; 0: 5 */
    int abandon_ms;        /* jobs_stop: how long a plan_run() still running after the grace
                            * may take before its thread is abandoned; 0: 3000 */
    const char *name;      /* instance name for jobs.locked_by; NULL: "host:pid"; copied */
    const char *base_path; /* --base-path, prefixed to the type of a stored failure's problem
                            * (problem.h); NULL: ""; borrowed, outlives the pool */
    const struct plan_limits *limits; /* NULL: plan_limits_default(); copied */
    /*
     * Called with the id of each plan that finished (done or failed): right after this
     * instance's worker committed it, and again when the NOTIFY from any instance arrives.
     * So it may run twice for one plan, and for plans finished elsewhere: treat it as a
     * wake-up for Prefer: wait requests, not as an event count. After this instance's own
     * commit, plan is the finished plan with its result (as store_plan_get() reads it), so a
     * waiting request needs no second read; otherwise NULL. Both borrowed for the call.
     * NULL: none.
     */
    void (*on_done)(const char *plan_id, const struct store_plan *plan, void *arg);
    /*
     * Called on the coordinator thread with the id of each plan deleted on any instance
     * (tpuplan_deleted, store.h), when the NOTIFY arrives; with NULL when announcements may
     * have been missed (the listening connection was lost or reconnected), meaning "any
     * plan may be gone". Must not block. NULL: none.
     */
    void (*on_deleted)(const char *plan_id, void *arg);
    void *arg; /* both callbacks' */
};

struct jobs;

/* Starts the coordinator and the workers. Connections are opened by the threads
 * themselves (and retried), so a database that is down at start is not an error. NULL
 * with a message in errbuf when threads or memory are lacking. Each plan_run() duration is
 * reported with metrics_planner_observe(). */
struct jobs *jobs_start(const struct jobs_config *c, char *errbuf, size_t cap);

/* Wakes idle workers now, e.g. right after this instance created a plan (saves the NOTIFY
 * round trip). Cheap; never blocks on the database. */
void jobs_kick(struct jobs *j);

/*
 * Stops claiming, lets running plans finish for up to grace_ms (their results are
 * stored), then gives the plans still running back to the queue, joins every thread and
 * frees j. A plan_run() that does not return within abandon_ms more is abandoned: its
 * thread is detached and j is deliberately leaked (the process is exiting anyway).
 */
void jobs_stop(struct jobs *j, int grace_ms);

/* Counters since start, for logs and tests. */
struct jobs_stats {
    unsigned workers;
    unsigned busy;          /* workers inside plan_run() now */
    unsigned long done;     /* results stored by this instance */
    unsigned long failed;   /* errors stored by this instance */
    unsigned long lost;     /* results dropped: lease lost or plan deleted meanwhile */
    unsigned long requeued; /* expired leases requeued by this instance's coordinator */
};
void jobs_stats(struct jobs *j, struct jobs_stats *out);

#endif
