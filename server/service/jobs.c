/*
 * jobs.c - the planner worker pool over the jobs table (see jobs.h for the design).
 *
 * Shared state lives in struct jobs under one mutex: the wake-up generation counter that
 * jobs_kick() bumps, the stop flags, and one slot per worker naming the job it is running
 * (plan id and lease token), which the coordinator reads to renew leases and jobs_stop()
 * reads to hand plans back. Workers and the coordinator each own their struct store; no
 * connection is ever shared between threads.
 */
#include "service/jobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "planner/clock.h"
#include "service/backoff.h"
#include "service/jobs_frontier.h"
#include "service/jobs_whatif.h"
#include "service/log.h"
#include "service/memtrim.h"
#include "service/metrics.h"
#include "service/planopts.h"
#include "service/problem.h"
#include "service/store.h"

#define DEFAULT_LEASE_MS   15000
#define DEFAULT_POLL_MS    1000
#define DEFAULT_ATTEMPTS   5
#define COORD_SLICE_MS     250 /* longest the coordinator blocks, so jobs_stop joins fast */
#define SWEEP_BATCH        500 /* expired plans deleted per statement (one short transaction) */
#define SWEEP_BATCHES      20  /* statements per sweep, so one pass never runs long */
#define DEFAULT_ABANDON_MS 3000
#define MAX_WORKERS        1024
#define OPTS_BUF           2048

/* What may end a wait early. */
enum wake { WAKE_KICK = 1, WAKE_STOP = 2, WAKE_HARD = 4 };

struct slot {
    struct jobs *j;
    unsigned idx;
    pthread_t tid;
    bool busy;
    char plan_id[IDS_ID_LEN + 1];
    char token[STORE_LEASE_LEN + 1];
};

struct jobs {
    char *conninfo;
    char *name;
    const char *base_path; /* jobs_config's; "" when none */
    struct plan_limits limits;
    int lease_ms, renew_ms, poll_ms, max_attempts, abandon_ms;
    void (*on_done)(const char *plan_id, const struct store_plan *plan, void *arg);
    void (*on_deleted)(const char *plan_id, void *arg);
    void *arg;
    unsigned n;
    struct slot *slots;
    pthread_t coord;
    bool coord_started;

    pthread_mutex_t mu;
    pthread_cond_t wake; /* gen, stopping, hard_stop, coord_exit changed */
    pthread_cond_t idle; /* busy decreased */
    unsigned long gen;
    bool stopping;   /* claim nothing more */
    bool hard_stop;  /* grace is over: stop retrying, drop results */
    bool coord_exit; /* coordinator: leave */
    unsigned busy;
    struct jobs_stats stats;
};

/* True when a wait with these wake conditions should end. Called with mu held. */
static bool woken(const struct jobs *j, int on, unsigned long seen)
{
    return ((on & WAKE_KICK) && j->gen != seen) || ((on & WAKE_STOP) && j->stopping) ||
           ((on & WAKE_HARD) && j->hard_stop) || j->coord_exit;
}

/* Sleeps up to ms, or less when one of the `on` conditions happens. */
static void wait_for(struct jobs *j, int ms, int on, unsigned long seen)
{
    struct timespec until = clock_timespec(clock_now() + ms / 1e3);
    pthread_mutex_lock(&j->mu);
    while (!woken(j, on, seen))
        if (pthread_cond_timedwait(&j->wake, &j->mu, &until) == ETIMEDOUT)
            break;
    pthread_mutex_unlock(&j->mu);
}

void jobs_kick(struct jobs *j)
{
    pthread_mutex_lock(&j->mu);
    j->gen++;
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->mu);
}

static bool flag(struct jobs *j, const bool *f)
{
    pthread_mutex_lock(&j->mu);
    bool v = *f;
    pthread_mutex_unlock(&j->mu);
    return v;
}

/* Problem JSON for a planner failure (caller frees; NULL on OOM). */
static char *job_problem(const struct jobs *j, const struct err *e)
{
    return problem_from_err(e, j->base_path, NULL, NULL, NULL);
}

/* Plans one job into *json (len bytes), *views and *sum, or fills *e: a what-if's overrides
 * applied first (jobs_whatif.h; what it made in *w, which the caller frees). */
static int job_plan(const struct jobs *j, const struct store_job *job, char **json, size_t *len,
                    struct plan_views *views, struct plan_summary *sum, struct jobs_whatif *w,
                    struct err *e)
{
    struct plan_opts opts;
    struct err why;
    /* The options' strings (XLA's dumps among them) fit in the document's own length. */
    size_t opts_cap =
        strlen(job->options_json) + 1 > OPTS_BUF ? strlen(job->options_json) + 1 : OPTS_BUF;
    char *buf = malloc(opts_cap);
    const char *input = job->input;
    size_t input_len = job->input_len;
    int rc;

    memset(w, 0, sizeof(*w));
    if (buf == NULL) {
        rc = err_set(e, ERR_NOMEM, NULL, "out of memory reading the options of plan %s",
                     job->plan_id);
    } else if (planopts_parse(job->options_json, &opts, buf, opts_cap, &why) < 0) {
        rc = err_set(e, ERR_INTERNAL, "options", "the stored options of plan %s are malformed: %s",
                     job->plan_id, why.msg);
    } else if (job->whatif_json != NULL &&
               (rc = jobs_whatif_apply(job, &j->limits, &opts, w, e)) != ERR_OK) {
        /* the overrides' own error: e names them */
    } else {
        double t0 = clock_now();
        if (w->wr.model != NULL) {
            input = w->wr.model;
            input_len = w->wr.model_len;
        }
        rc = plan_run(input, input_len, &opts, &j->limits, json, len, views, sum, e);
        metrics_planner_observe(clock_now() - t0, rc == 0);
    }
    free(buf);
    return rc;
}

/* Runs finish(st, arg) until it is not STORE_UNAVAILABLE, backing off while the database
 * is down, or until the grace of a stop runs out (then the lease expires and another worker
 * runs the job again); returns its last answer. */
static int finish_retry(struct jobs *j, struct store *st, int (*finish)(struct store *, void *),
                        void *arg)
{
    unsigned backoff = 0;
    int rc;

    while ((rc = finish(st, arg)) == STORE_UNAVAILABLE && !flag(j, &j->hard_stop)) {
        backoff = backoff_next(backoff);
        wait_for(j, (int)backoff, WAKE_HARD, 0);
    }
    return rc;
}

/* What job_run stores: the plan's result or its error (store_job_finish's arguments). */
struct plan_outcome {
    const struct store_job *job;
    const char *json;
    const struct plan_views *views;
    const char *problem;
    const struct plan_summary *sum;
    const struct store_made *made;
    struct store_plan *done;
};

static int plan_finish(struct store *st, void *arg)
{
    struct plan_outcome *o = arg;
    return store_job_finish(st, o->job, o->json, o->json ? o->views : NULL, o->problem,
                            o->json ? o->sum : NULL, o->made, o->done);
}

/* Frees sl for the next job, counting the outcome. */
enum outcome { STORED, STORED_ERROR, LOST, ABANDONED };
static void slot_free(struct slot *sl, enum outcome outcome)
{
    struct jobs *j = sl->j;

    pthread_mutex_lock(&j->mu);
    sl->busy = false;
    sl->token[0] = '\0';
    j->busy--;
    if (outcome == STORED)
        j->stats.done++;
    else if (outcome == STORED_ERROR)
        j->stats.failed++;
    else if (outcome == LOST)
        j->stats.lost++;
    pthread_cond_broadcast(&j->idle);
    pthread_mutex_unlock(&j->mu);
}

/* Runs one claimed job, already registered in sl, and stores its outcome. */
static void job_run(struct slot *sl, struct store *st, const struct store_job *job)
{
    struct jobs *j = sl->j;
    struct plan_summary sum;
    struct plan_views views = {0};
    struct store_plan done;
    struct jobs_whatif w;
    struct store_made made, *mp = NULL;
    struct err e;
    char *json = NULL;
    char *problem = NULL;
    size_t len = 0;
    int rc;
    enum outcome outcome = ABANDONED;

    err_clear(&e);
    memset(&sum, 0, sizeof sum);
    memset(&done, 0, sizeof done);
    rc = job_plan(j, job, &json, &len, &views, &sum, &w, &e);
    if (rc != 0) {
        free(json);
        json = NULL;
        problem = job_problem(j, &e);
    }
    if (w.wr.model != NULL) {
        made = (struct store_made){w.wr.model, w.wr.model_len, w.options_json,
                                   rc == 0 ? sum.chip : NULL};
        mp = &made;
    }
    for (;;) {
        struct plan_outcome po = {job, json, &views, problem, &sum, mp, &done};
        rc = finish_retry(j, st, plan_finish, &po);
        if (rc == STORE_OK) {
            outcome = json ? STORED : STORED_ERROR;
            break;
        }
        if (rc == STORE_NOTFOUND) {
            outcome = LOST;
            break;
        }
        if (rc != STORE_UNAVAILABLE && json != NULL) {
            /* The result itself cannot be stored (e.g. not valid JSON): record
             * that as the plan's error rather than retrying forever. */
            log_line("jobs", "plan %s: result not storable (%s); storing an error", job->plan_id,
                     store_rc_name(rc));
            free(json);
            json = NULL;
            mp = NULL;
            err_set(&e, ERR_INTERNAL, NULL, "the planner's result for plan %s could not be stored",
                    job->plan_id);
            problem = job_problem(j, &e);
            continue;
        }
        if (rc != STORE_UNAVAILABLE)
            log_line("jobs", "plan %s: cannot store the outcome (%s); its lease will expire",
                     job->plan_id, store_rc_name(rc));
        break;
    }
    plan_views_free(&views);
    jobs_whatif_free(&w);
    free(problem);
    slot_free(sl, outcome);
    if ((outcome == STORED || outcome == STORED_ERROR) && j->on_done) {
        /* The finished plan, with the result this worker holds, for waiting requests. */
        if (done.status != NULL) {
            done.result_json = json;
            json = NULL;
        }
        j->on_done(job->plan_id, done.status != NULL ? &done : NULL, j->arg);
    }
    free(json);
    store_plan_free(&done);
}

/* What frontier_run stores. */
struct frontier_outcome {
    const struct store_frontier_job *job;
    const char *result, *problem;
};

static int frontier_finish(struct store *st, void *arg)
{
    struct frontier_outcome *o = arg;
    return store_frontier_finish(st, o->job, o->result, o->problem);
}

/* Runs one claimed frontier search, already registered in sl, and stores its outcome: the
 * status with the result or the error in one statement. */
static void frontier_run(struct slot *sl, struct store *st, const struct store_frontier_job *job)
{
    struct jobs *j = sl->j;
    struct frontier_outcome fo = {job, NULL, NULL};
    enum outcome outcome = ABANDONED;
    char *result = NULL, *problem = NULL;
    struct err e;
    size_t len = 0;
    double t0 = clock_now();
    int rc;

    err_clear(&e);
    rc = jobs_frontier_run(job, &j->limits, &result, &len, &e);
    metrics_frontier_observe(clock_now() - t0, rc == ERR_OK);
    if (rc != ERR_OK && (problem = job_problem(j, &e)) == NULL)
        log_line("jobs", "frontier %s: out of memory writing its error", job->id);
    fo.result = result;
    fo.problem = problem;
    if (result != NULL || problem != NULL) {
        rc = finish_retry(j, st, frontier_finish, &fo);
        if (rc == STORE_OK)
            outcome = result != NULL ? STORED : STORED_ERROR;
        else if (rc == STORE_NOTFOUND)
            outcome = LOST;
        else
            log_line("jobs", "frontier %s: cannot store the outcome (%s); its lease will expire",
                     job->id, store_rc_name(rc));
    }
    free(result);
    free(problem);
    slot_free(sl, outcome);
}

/* Registers a claimed job's lease in sl under the lock jobs_stop() reads: either the stop
 * sees the job as running (and may hand it back), or this sees the stop and hands it back
 * itself instead of starting a job nobody waits for (then false). */
static bool slot_take(struct slot *sl, struct store *st, const char *id, const char *token)
{
    struct jobs *j = sl->j;
    bool stop;

    pthread_mutex_lock(&j->mu);
    stop = j->stopping;
    if (!stop) {
        snprintf(sl->plan_id, sizeof sl->plan_id, "%s", id);
        snprintf(sl->token, sizeof sl->token, "%s", token);
        sl->busy = true;
        j->busy++;
    }
    pthread_mutex_unlock(&j->mu);
    if (stop) {
        const char *tok[1] = {token};
        if (store_job_release(st, tok, 1) != STORE_OK)
            log_line("jobs", "could not give job %s back; its lease will expire", id);
    }
    return !stop;
}

/* claim_run's answer when the pool is stopping (no STORE_* code is positive). */
#define CLAIM_STOPPING 1

/* Claims and runs one job: a plan's first, else a frontier search. STORE_OK when one ran,
 * STORE_NOTFOUND when none waits, CLAIM_STOPPING when the pool is stopping, else the
 * database's failure. */
static int claim_run(struct slot *sl, struct store *st, const char *who)
{
    struct jobs *j = sl->j;
    struct store_job job;
    struct store_frontier_job fj;
    bool large;
    int rc = store_job_claim(st, who, j->lease_ms, &job);

    if (rc == STORE_OK) {
        if (!slot_take(sl, st, job.plan_id, job.lease_token)) {
            store_job_free(&job);
            return CLAIM_STOPPING;
        }
        job_run(sl, st, &job);
        /* freed memory is kept for the next small job; a large one's (its model,
         * packing and result: about 1 KB a tensor) is given back (memtrim.h) */
        large = job.input_len >= MEMTRIM_LARGE;
        store_job_free(&job);
        if (store_shed(st) || large)
            memtrim_release();
        return STORE_OK;
    }
    store_job_free(&job);
    if (rc != STORE_NOTFOUND)
        return rc;
    if ((rc = store_frontier_claim(st, who, j->lease_ms, &fj)) == STORE_OK) {
        if (!slot_take(sl, st, fj.id, fj.lease_token)) {
            store_frontier_job_free(&fj);
            return CLAIM_STOPPING;
        }
        frontier_run(sl, st, &fj);
        if (store_shed(st))
            memtrim_release();
    }
    store_frontier_job_free(&fj);
    return rc;
}

static void *worker_main(void *p)
{
    struct slot *sl = p;
    struct jobs *j = sl->j;
    struct store *st = NULL;
    unsigned backoff = 0;
    char who[160];
    char err[512];
    snprintf(who, sizeof who, "%s/w%u", j->name, sl->idx);
    for (;;) {
        unsigned long seen;
        int rc;
        pthread_mutex_lock(&j->mu);
        seen = j->gen;
        bool stop = j->stopping;
        pthread_mutex_unlock(&j->mu);
        if (stop)
            break;
        if (st == NULL) {
            st = store_open(j->conninfo, err, sizeof err);
            if (st == NULL) {
                if (backoff == 0 && sl->idx == 0)
                    log_line("jobs", "%s; retrying", err);
                backoff = backoff_next(backoff);
                wait_for(j, (int)backoff, WAKE_STOP, 0);
                continue;
            }
        }
        rc = claim_run(sl, st, who);
        if (rc == STORE_OK) {
            backoff = 0;
            continue;
        }
        if (rc == CLAIM_STOPPING)
            break; /* the job went back to the queue */
        if (rc == STORE_NOTFOUND) {
            backoff = 0;
            wait_for(j, j->poll_ms, WAKE_KICK | WAKE_STOP, seen);
            continue;
        }
        if (backoff == 0 && sl->idx == 0)
            log_line("jobs", "claim: database %s; retrying", store_rc_name(rc));
        backoff = backoff_next(backoff);
        wait_for(j, (int)backoff, WAKE_STOP, 0);
    }
    store_close(st);
    return NULL;
}

static void coord_notify(const char *channel, const char *payload, void *arg)
{
    struct jobs *j = arg;
    if (strcmp(channel, "tpuplan_jobs") == 0)
        jobs_kick(j);
    else if (strcmp(channel, "tpuplan_done") == 0 && j->on_done && payload)
        j->on_done(payload, NULL, j->arg);
    else if (strcmp(channel, "tpuplan_deleted") == 0 && j->on_deleted && payload)
        j->on_deleted(payload, j->arg);
}

/* The lease tokens of the plans running here; returns how many (at most j->n). */
static size_t running_tokens(struct jobs *j, char (*toks)[STORE_LEASE_LEN + 1])
{
    size_t n = 0;
    pthread_mutex_lock(&j->mu);
    for (unsigned i = 0; i < j->n; i++)
        if (j->slots[i].busy && j->slots[i].token[0])
            memcpy(toks[n++], j->slots[i].token, STORE_LEASE_LEN + 1);
    pthread_mutex_unlock(&j->mu);
    return n;
}

/* The expiry sweep, on the reaper's schedule: cheap when nothing is due (one probe of
 * the partial index plans_expiry), and batched so no statement holds locks for long. */
static void sweep(struct jobs *j, struct store *ls)
{
    long expired = 0;

    if (store_plan_expire(ls, SWEEP_BATCH, SWEEP_BATCHES, &expired) == STORE_OK && expired > 0) {
        log_line("jobs", "expiry sweep deleted %ld plans", expired);
        metrics_plans_expired(expired);
    }
    (void)j;
}

static void *coord_main(void *p)
{
    struct jobs *j = p;
    struct store *ls = NULL;
    unsigned backoff = 0;
    bool missed = true;      /* notifications may have been missed: wake the workers */
    unsigned long conns = 0; /* the listening connection's reconnects seen */
    int64_t next_renew = clock_now_ms() + j->renew_ms;
    int64_t next_reap = clock_now_ms();
    char err[512];
    char(*toks)[STORE_LEASE_LEN + 1] = calloc(j->n, sizeof *toks);
    const char **ptrs = calloc(j->n, sizeof *ptrs);
    char *gaveup = NULL;
    {
        /* The generic "internal" type (openapi.json lists every slug): a plan whose
         * server died max_attempts times while planning it is most likely what kills it. */
        char detail[200];
        snprintf(detail, sizeof detail,
                 "Planning stopped %d times because the server running it stopped; the plan "
                 "is not retried again",
                 j->max_attempts);
        gaveup = problem_json(PROBLEM_INTERNAL, j->base_path, detail, NULL, NULL, NULL);
    }
    if (toks == NULL || ptrs == NULL || gaveup == NULL) {
        log_line("jobs", "coordinator: out of memory; leases will not be renewed");
        goto out;
    }
    while (!flag(j, &j->coord_exit)) {
        int64_t now = clock_now_ms();
        int64_t next = next_renew < next_reap ? next_renew : next_reap;
        int timeout = next - now < 0 ? 0 : (int)(next - now);
        int n;
        if (ls == NULL) {
            ls = store_open(j->conninfo, err, sizeof err);
            if (ls != NULL && store_listen(ls) != STORE_OK) {
                store_close(ls);
                ls = NULL;
            }
            if (ls == NULL) {
                backoff = backoff_next(backoff);
                wait_for(j, (int)backoff, 0, 0);
                continue;
            }
        }
        if (timeout > COORD_SLICE_MS)
            timeout = COORD_SLICE_MS;
        n = store_wait_notify(ls, timeout, coord_notify, j);
        if (n < 0) {
            missed = true;
            backoff = backoff_next(backoff);
            wait_for(j, (int)backoff, 0, 0);
            continue;
        }
        backoff = 0;
        if (missed || store_connections(ls) != conns) {
            missed = false;
            conns = store_connections(ls);
            jobs_kick(j);
            if (j->on_deleted != NULL)
                j->on_deleted(NULL, j->arg); /* deletions may have gone unheard too */
        }
        now = clock_now_ms();
        if (now >= next_renew) {
            size_t k = running_tokens(j, toks);
            for (size_t i = 0; i < k; i++)
                ptrs[i] = toks[i];
            if (k > 0 && store_job_renew(ls, ptrs, k, j->lease_ms, NULL) != STORE_OK)
                missed = true;
            next_renew = now + j->renew_ms;
        }
        if (now >= next_reap) {
            int requeued = 0;
            if (store_job_reap(ls, j->max_attempts, gaveup, &requeued) == STORE_OK &&
                requeued > 0) {
                log_line("jobs", "requeued %d plans whose server stopped renewing their lease",
                         requeued);
                pthread_mutex_lock(&j->mu);
                j->stats.requeued += (unsigned long)requeued;
                pthread_mutex_unlock(&j->mu);
                jobs_kick(j);
            }
            next_reap = now + j->poll_ms;
            sweep(j, ls);
        }
    }
out:
    store_close(ls);
    free(gaveup);
    free(ptrs);
    free(toks);
    return NULL;
}

static void jobs_free(struct jobs *j)
{
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->wake);
    pthread_cond_destroy(&j->idle);
    free(j->slots);
    free(j->conninfo);
    free(j->name);
    free(j);
}

struct jobs *jobs_start(const struct jobs_config *c, char *errbuf, size_t cap)
{
    struct jobs *j = calloc(1, sizeof *j);
    pthread_condattr_t ca;
    unsigned started = 0;
    char host[64] = "localhost";
    char name[128];
    if (j == NULL)
        goto nomem;
    j->n = c->workers;
    if (j->n == 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        j->n = cpus > 0 ? (unsigned)cpus : 1;
    }
    if (j->n > MAX_WORKERS)
        j->n = MAX_WORKERS;
    j->lease_ms = c->lease_ms > 0 ? c->lease_ms : DEFAULT_LEASE_MS;
    j->renew_ms = c->renew_ms > 0 ? c->renew_ms : j->lease_ms / 3;
    if (j->renew_ms <= 0)
        j->renew_ms = 1;
    j->poll_ms = c->poll_ms > 0 ? c->poll_ms : DEFAULT_POLL_MS;
    j->abandon_ms = c->abandon_ms > 0 ? c->abandon_ms : DEFAULT_ABANDON_MS;
    j->max_attempts = c->max_attempts > 0 ? c->max_attempts : DEFAULT_ATTEMPTS;
    j->on_done = c->on_done;
    j->on_deleted = c->on_deleted;
    j->arg = c->arg;
    j->base_path = c->base_path != NULL ? c->base_path : "";
    if (c->limits)
        j->limits = *c->limits;
    else
        plan_limits_default(&j->limits);
    if (c->name == NULL) {
        gethostname(host, sizeof host - 1);
        snprintf(name, sizeof name, "%s:%ld", host, (long)getpid());
    }
    j->name = strdup(c->name ? c->name : name);
    j->conninfo = strdup(c->conninfo ? c->conninfo : "");
    j->slots = calloc(j->n, sizeof *j->slots);
    if (j->name == NULL || j->conninfo == NULL || j->slots == NULL) {
        free(j->name);
        free(j->conninfo);
        free(j->slots);
        free(j);
        goto nomem;
    }
    pthread_mutex_init(&j->mu, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->wake, &ca);
    pthread_cond_init(&j->idle, &ca);
    pthread_condattr_destroy(&ca);

    if (pthread_create(&j->coord, NULL, coord_main, j) != 0) {
        snprintf(errbuf, cap, "cannot start the coordinator thread");
        jobs_free(j);
        return NULL;
    }
    j->coord_started = true;
    for (; started < j->n; started++) {
        j->slots[started].j = j;
        j->slots[started].idx = started;
        if (pthread_create(&j->slots[started].tid, NULL, worker_main, &j->slots[started]) != 0)
            break;
    }
    if (started < j->n) {
        snprintf(errbuf, cap, "cannot start planner worker %u of %u", started + 1, j->n);
        j->n = started;
        jobs_stop(j, 0);
        return NULL;
    }
    j->stats.workers = j->n;
    return j;
nomem:
    snprintf(errbuf, cap, "out of memory");
    return NULL;
}

void jobs_stop(struct jobs *j, int grace_ms)
{
    struct timespec until = clock_timespec(clock_now() + (grace_ms > 0 ? grace_ms : 0) / 1e3);
    char(*toks)[STORE_LEASE_LEN + 1] = NULL;
    const char **ptrs = NULL;
    size_t ntok = 0;
    bool leaked = false;
    if (j == NULL)
        return;
    pthread_mutex_lock(&j->mu);
    j->stopping = true;
    pthread_cond_broadcast(&j->wake);
    while (j->busy > 0)
        if (pthread_cond_timedwait(&j->idle, &j->mu, &until) == ETIMEDOUT)
            break;
    if (j->busy > 0) {
        j->hard_stop = true;
        pthread_cond_broadcast(&j->wake);
    }
    pthread_mutex_unlock(&j->mu);

    /* Plans still running go back to the queue now rather than after their lease expires,
     * so another instance can take them at once; our late finish will then be refused. */
    if (flag(j, &j->hard_stop)) {
        toks = calloc(j->n, sizeof *toks);
        ptrs = calloc(j->n, sizeof *ptrs);
        if (toks && ptrs)
            ntok = running_tokens(j, toks);
        if (ntok > 0) {
            char err[256];
            struct store *st = store_open(j->conninfo, err, sizeof err);
            for (size_t i = 0; i < ntok; i++)
                ptrs[i] = toks[i];
            if (st != NULL && store_job_release(st, ptrs, ntok) == STORE_OK)
                log_line("jobs", "gave %zu running plans back to the queue", ntok);
            else
                log_line("jobs", "could not give %zu running plans back; their leases will expire",
                         ntok);
            store_close(st);
        }
        free(toks);
        free(ptrs);
    }

    for (unsigned i = 0; i < j->n; i++) {
        if (flag(j, &j->hard_stop)) {
            struct timespec t = clock_timespec(clock_now() + j->abandon_ms / 1e3);
            if (pthread_clockjoin_np(j->slots[i].tid, NULL, CLOCK_MONOTONIC, &t) != 0) {
                pthread_detach(j->slots[i].tid);
                leaked = true;
            }
        } else {
            pthread_join(j->slots[i].tid, NULL);
        }
    }
    pthread_mutex_lock(&j->mu);
    j->coord_exit = true;
    pthread_cond_broadcast(&j->wake);
    pthread_mutex_unlock(&j->mu);
    if (j->coord_started)
        pthread_join(j->coord, NULL);
    if (leaked) {
        log_line("jobs", "abandoned planner threads still inside plan_run()");
        return;
    }
    jobs_free(j);
}

void jobs_stats(struct jobs *j, struct jobs_stats *out)
{
    pthread_mutex_lock(&j->mu);
    *out = j->stats;
    out->busy = j->busy;
    pthread_mutex_unlock(&j->mu);
}
