/*
 * test_jobs.c - the planner worker pool against a real, throwaway PostgreSQL (tests/pg.sh)
 * and the real planner, on the small models in tests/data/service/.
 *
 * Checks what the pool promises: every plan finishes exactly once (jobs.completions = 1)
 * also with two pools (two "servers") on one database, planner errors are stored as
 * problem details, a NOTIFY wakes an idle pool at once (poll fallback set to a minute),
 * and a pool survives PostgreSQL restarting under it. Run from the repository root.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "service/jobs.h"
#include "service/store.h"

#include "pgtest.h"

static char *tiny, *bad;
static size_t tiny_len, bad_len;

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    if (f == NULL)
        return NULL;
    buf = calloc(1, 1 << 16);
    if (buf != NULL)
        *len = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

static long sql_long(const char *sql)
{
    PGconn *c = PQconnectdb(pgtest_info);
    long v = -1;
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0))
            v = strtol(PQgetvalue(r, 0, 0), NULL, 10);
        else if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
            fprintf(stderr, "sql: %s", PQerrorMessage(c));
        PQclear(r);
    }
    PQfinish(c);
    return v;
}

static int group_setup(void **state)
{
    (void)state;
    tiny = slurp("tests/data/service/tiny.json", &tiny_len);
    bad = slurp("tests/data/service/bad-dtype.json", &bad_len);
    if (tiny == NULL || bad == NULL)
        return -1;
    return pgtest_start("jobs");
}

static int group_teardown(void **state)
{
    (void)state;
    free(tiny);
    free(bad);
    return pgtest_ctl("stop") == 0 ? 0 : -1;
}

static int setup(void **state)
{
    char err[256];
    if (sql_long("TRUNCATE plans, jobs, idempotency_keys, frontiers") != -1)
        return -1;
    *state = store_open(pgtest_info, err, sizeof err);
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    store_close(*state);
    return 0;
}

static void submit(struct store *s, bool good)
{
    struct plan_summary sum = {.tensors = 1};
    struct store_new_plan np = {.name = good ? "tiny" : "bad",
                                .chip = "v5e",
                                .source_format = "json",
                                .input = good ? tiny : bad,
                                .input_len = good ? tiny_len : bad_len,
                                .summary = &sum};
    struct store_created c;
    assert_int_equal(store_plan_create(s, &np, &c), STORE_OK);
}

/* Polls until every job is finished; returns how many are. */
static long wait_finished(long want, int timeout_s)
{
    long n = -1;
    for (int i = 0; i < timeout_s * 20; i++) {
        n = sql_long("SELECT count(*) FROM jobs WHERE state IN ('done', 'failed')");
        if (n == want)
            break;
        usleep(50000);
    }
    return n;
}

/* The pools' counters: a worker counts its result just after the commit that wait_finished
 * sees, so a count read straight after could be one short (seen under load). Waits until
 * done + failed over the pools reaches want, or timeout_s; returns the sums in *sum. */
static void wait_counted(struct jobs *const *pools, int n, unsigned long want, int timeout_s,
                         struct jobs_stats *sum)
{
    for (int i = 0; i < timeout_s * 20; i++) {
        memset(sum, 0, sizeof *sum);
        for (int k = 0; k < n; k++) {
            struct jobs_stats st;
            jobs_stats(pools[k], &st);
            sum->done += st.done;
            sum->failed += st.failed;
            sum->lost += st.lost;
        }
        if (sum->done + sum->failed >= want)
            return;
        usleep(50000);
    }
}

static struct jobs *pool(unsigned workers, int poll_ms, const char *name,
                         void (*on_done)(const char *, const struct store_plan *, void *),
                         void *arg)
{
    char err[256];
    struct jobs_config c = {.conninfo = pgtest_info,
                            .workers = workers,
                            .poll_ms = poll_ms,
                            .name = name,
                            .on_done = on_done,
                            .arg = arg,
                            /* a stopped pool joins its plan_run()s, however slow (ASan) */
                            .abandon_ms = 120000};
    struct jobs *j = jobs_start(&c, err, sizeof err);
    assert_non_null(j);
    return j;
}

static void test_each_plan_runs_once(void **state)
{
    struct store *s = *state;
    struct jobs_stats st;
    for (int i = 0; i < 40; i++)
        submit(s, i % 4 != 3);
    struct jobs *j = pool(3, 200, "one", NULL, NULL);
    assert_int_equal(wait_finished(40, 120), 40);
    wait_counted(&j, 1, 40, 30, &st);
    jobs_stop(j, 5000);
    assert_int_equal(st.done, 30);
    assert_int_equal(st.failed, 10);
    assert_int_equal(st.lost, 0);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs WHERE completions <> 1"), 0);
    assert_int_equal(sql_long("SELECT count(*) FROM plans WHERE status = 'done'"
                              " AND result IS NOT NULL AND peak_bytes > 0"),
                     30);
    /* Planner errors are problem details naming the field. */
    assert_int_equal(sql_long("SELECT count(*) FROM plans WHERE status = 'failed'"
                              " AND (error->>'status')::int = 422"
                              " AND error->>'where' = 'tensors[0].dtype'"
                              " AND error->>'detail' LIKE '%f33%'"),
                     10);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs WHERE lease_token IS NOT NULL"), 0);
}

/* A pool serving under --base-path stores a failed plan's problem with the prefix on its
 * type, as every problem the server answers itself carries it
 * (server/service/README.md#behind-a-reverse-proxy). */
static void test_failed_plan_problem_carries_the_base_path(void **state)
{
    struct store *s = *state;
    char err[256];
    struct jobs_config c = {.conninfo = pgtest_info,
                            .workers = 1,
                            .poll_ms = 200,
                            .name = "base",
                            .base_path = "/tpuplan",
                            .abandon_ms = 120000};
    struct jobs *j;

    submit(s, false);
    j = jobs_start(&c, err, sizeof err);
    assert_non_null(j);
    assert_int_equal(wait_finished(1, 60), 1);
    jobs_stop(j, 5000);
    assert_int_equal(sql_long("SELECT count(*) FROM plans WHERE status = 'failed'"
                              " AND error->>'type' = '/tpuplan/problems/unknown-name'"
                              " AND error->>'where' = 'tensors[0].dtype'"),
                     1);
}

/* Two pools on one database, as two server instances: 100 plans, each exactly once. */
static void test_two_pools_run_each_plan_once(void **state)
{
    struct store *s = *state;
    struct jobs_stats a, b, sum;
    struct jobs *pools[2] = {pool(2, 100, "server-a", NULL, NULL),
                             pool(2, 100, "server-b", NULL, NULL)};
    for (int i = 0; i < 100; i++)
        submit(s, true);
    assert_int_equal(wait_finished(100, 120), 100);
    wait_counted(pools, 2, 100, 30, &sum);
    jobs_stats(pools[0], &a);
    jobs_stats(pools[1], &b);
    jobs_stop(pools[0], 5000);
    jobs_stop(pools[1], 5000);
    assert_int_equal(a.done + b.done, 100);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs WHERE completions = 1"), 100);
    assert_int_equal(sql_long("SELECT sum(completions) FROM jobs"), 100);
    assert_int_equal(sql_long("SELECT count(*) FROM plans WHERE status = 'done'"), 100);
    printf("# two pools: server-a %lu, server-b %lu plans\n", a.done, b.done);
}

struct done_log {
    pthread_mutex_t mu;
    int calls;
    int with_plan; /* calls that carried the finished plan (the worker's own) */
    int bad_plan;  /* ... that was not this plan, done, with its result */
    struct timespec first;
};

static void on_done(const char *plan_id, const struct store_plan *plan, void *arg)
{
    struct done_log *d = arg;
    pthread_mutex_lock(&d->mu);
    if (d->calls++ == 0)
        clock_gettime(CLOCK_MONOTONIC, &d->first);
    /* The worker's own call hands over the finished plan, result included (checked here,
     * asserted on the test's thread: cmocka cannot fail from a worker). */
    if (plan != NULL) {
        d->with_plan++;
        d->bad_plan += strcmp(plan->id, plan_id) != 0 || strcmp(plan->status, "done") != 0 ||
                       plan->result_json == NULL ||
                       strstr(plan->result_json, "\"schema_version\"") == NULL;
    }
    pthread_mutex_unlock(&d->mu);
}

static double since(const struct timespec *t0, const struct timespec *t1)
{
    return (double)(t1->tv_sec - t0->tv_sec) + (double)(t1->tv_nsec - t0->tv_nsec) / 1e9;
}

/* With the poll fallback at a minute, only LISTEN/NOTIFY can wake the pool quickly, and
 * on_done reports the finished plan. Also measures submit-to-done latency. */
static double notify_latency(struct store *s, struct done_log *d)
{
    struct timespec t0, t1;
    pthread_mutex_lock(&d->mu);
    d->calls = 0;
    pthread_mutex_unlock(&d->mu);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    submit(s, true);
    for (int i = 0; i < 400; i++) {
        pthread_mutex_lock(&d->mu);
        int calls = d->calls;
        t1 = d->first;
        pthread_mutex_unlock(&d->mu);
        if (calls > 0)
            return since(&t0, &t1);
        usleep(5000);
    }
    return 1e9;
}

static void test_notify_wakes_the_pool_and_it_survives_restart(void **state)
{
    struct store *s = *state;
    struct done_log d = {.mu = PTHREAD_MUTEX_INITIALIZER};
    struct jobs *j = pool(2, 60000, "listener", on_done, &d);
    usleep(300000); /* let the coordinator LISTEN */
    double lat = notify_latency(s, &d);
    printf("# submit to done via NOTIFY: %.1f ms\n", lat * 1e3);
    assert_true(lat < 1.0);
    /* The coordinator's NOTIFY call may come before the worker's own, which follows its
     * commit by moments: give that one a second. */
    for (int i = 0, got = 0; i < 200 && got < 1; i++) {
        pthread_mutex_lock(&d.mu);
        got = d.with_plan;
        pthread_mutex_unlock(&d.mu);
        if (got < 1)
            usleep(5000);
    }
    pthread_mutex_lock(&d.mu);
    assert_true(d.with_plan >= 1);
    assert_int_equal(d.bad_plan, 0);
    pthread_mutex_unlock(&d.mu);

    /* PostgreSQL restarts under the pool: it reconnects, re-LISTENs, and plans again. */
    assert_int_equal(pgtest_ctl("pause"), 0);
    usleep(500000);
    assert_int_equal(pgtest_ctl("start"), 0);
    int rc = STORE_ERROR;
    struct plan_summary sum = {.tensors = 1};
    struct store_new_plan np = {.name = "after",
                                .chip = "v5e",
                                .source_format = "json",
                                .input = tiny,
                                .input_len = tiny_len,
                                .summary = &sum};
    struct store_created c;
    for (int i = 0; i < 100 && rc != STORE_OK; i++)
        if ((rc = store_plan_create(s, &np, &c)) != STORE_OK)
            usleep(100000);
    assert_int_equal(rc, STORE_OK);
    assert_int_equal(wait_finished(2, 15), 2);
    /* Once reconnected, a NOTIFY wakes it again within the same latency. */
    usleep(200000);
    lat = notify_latency(s, &d);
    printf("# after a restart, submit to done via NOTIFY: %.1f ms\n", lat * 1e3);
    assert_true(lat < 6.0);
    jobs_stop(j, 5000);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs WHERE completions <> 1"), 0);
}

/* A chain of n activations: a model the planner needs a noticeable time for. */
static char *chain_model(int n, size_t *len)
{
    size_t cap = (size_t)n * 160 + 64;
    char *m = malloc(cap);
    size_t o = 0;
    assert_non_null(m);
    o += (size_t)snprintf(m + o, cap - o, "{\"name\":\"chain\",\"chip\":\"v5e\",\"tensors\":[");
    for (int i = 0; i < n; i++)
        o += (size_t)snprintf(m + o, cap - o,
                              "%s{\"name\":\"t%d\",\"shape\":[64,%d],\"dtype\":\"f32\","
                              "\"kind\":\"activation\"}",
                              i ? "," : "", i, 128 * (1 + i % 7));
    o += (size_t)snprintf(m + o, cap - o, "],\"ops\":[");
    for (int i = 0; i + 1 < n; i++)
        o += (size_t)snprintf(m + o, cap - o,
                              "%s{\"name\":\"op%d\",\"inputs\":[\"t%d\"],\"outputs\":[\"t%d\"]}",
                              i ? "," : "", i, i, i + 1);
    o += (size_t)snprintf(m + o, cap - o, "]}");
    assert_true(o < cap);
    *len = o;
    return m;
}

/* Waits until the pool's only worker is inside plan_run() (or has finished). */
static void wait_busy(struct jobs *j)
{
    struct jobs_stats st = {0};
    for (int i = 0; i < 500; i++) {
        jobs_stats(j, &st);
        if (st.busy + st.done + st.failed > 0)
            break;
        usleep(10000);
    }
    assert_int_equal(st.busy + st.done + st.failed, 1);
}

/* jobs_stop(0) while a plan runs gives it back to the queue (not a failed attempt, no
 * lease left); jobs_stop with a grace lets the running plan finish and stores it. */
static void test_stop_requeues_or_finishes_the_running_plan(void **state)
{
    struct store *s = *state;
    struct plan_summary sum = {.tensors = 1};
    struct store_new_plan np = {
        .name = "slow", .chip = "v5e", .source_format = "json", .summary = &sum};
    struct store_created c;
    /* Long enough to be caught running on any machine: 50,000 tensors and ops take ~2 s to
     * plan here (parsing and lifetimes; the packing is ms), ~10 s under ASan, inside
     * the finisher's grace. 1,500 took 70 ms and was sometimes done before the stop. */
    char *m = chain_model(50000, &np.input_len);
    np.input = m;
    assert_int_equal(store_plan_create(s, &np, &c), STORE_OK);

    struct jobs *j = pool(1, 100, "stopper", NULL, NULL);
    wait_busy(j);
    jobs_stop(j, 0);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs WHERE state = 'queued' AND attempts = 0"
                              " AND lease_token IS NULL AND completions = 0"),
                     1);
    assert_int_equal(sql_long("SELECT count(*) FROM plans WHERE status = 'queued'"), 1);

    j = pool(1, 100, "finisher", NULL, NULL);
    wait_busy(j);
    jobs_stop(j, 120000); /* ~10 s under ASan idle; several times that on a loaded machine */
    assert_int_equal(sql_long("SELECT count(*) FROM jobs WHERE state = 'done' AND completions = 1"),
                     1);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_plan_runs_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_pools_run_each_plan_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failed_plan_problem_carries_the_base_path, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stop_requeues_or_finishes_the_running_plan, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_notify_wakes_the_pool_and_it_survives_restart, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
