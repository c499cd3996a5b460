/*
 * test_exec.c - the request-executor pool (exec.h): running queued requests in order,
 * parking Prefer: wait requests and waking exactly those parked on a finished plan (each
 * with its own copy of the plan), deadline and poll wake-ups, abandoning at stop (parked
 * vs queued), and exec_stats.
 *
 * The pool opens one store connection per thread, so the group setup starts a throwaway
 * PostgreSQL (pgtest.h); the handler and the abandon callback are the test's own, which
 * record what happened instead of answering over HTTP. Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "planner/clock.h"
#include "service/exec.h"
#include "service/request.h"
#include "service/store.h"

#include "pgtest.h"

#define FAR 60.0 /* seconds: a poll interval or deadline that never comes during a test */

/* One test request: exec sees only r. */
struct treq {
    struct request r;
    /* Set by the test. */
    double park_deadline; /* seconds from the park */
    int parks;            /* park again on this many more runs */
    bool block;           /* the handler waits for the gate */
    /* Recorded under mu. */
    bool abandoned_parked;
    bool got_plan;   /* a run found r->exec.finished */
    bool plan_alias; /* ... pointing at the caller's plan or its strings, not a copy */
    int runs;
    int order; /* 1 + how many runs began before this request's first */
    int abandons;
    double first_run, last_run;
    char plan_status[16], plan_result[32];
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC, for clock_timespec() deadlines */
    struct exec *x;
    bool gate_open;
    int started; /* runs begun, all requests */
    const struct store_plan *given;
    int no_store;      /* handler calls without a store */
    pthread_t stopper; /* a thread inside exec_stop(), while stopping */
    bool stopping;
} t = {.mu = PTHREAD_MUTEX_INITIALIZER};

static struct treq *treq_of(struct request *r)
{
    return (struct treq *)((char *)r - offsetof(struct treq, r));
}

static void handler(struct store *st, struct request *r)
{
    struct treq *q = treq_of(r);
    struct store_plan *p = r->exec.finished;
    bool park;

    pthread_mutex_lock(&t.mu);
    t.no_store += st == NULL; /* each thread holds its own connection */
    q->runs++;
    q->last_run = clock_now();
    if (q->runs == 1) {
        q->first_run = q->last_run;
        q->order = ++t.started;
    }
    if (p != NULL) {
        /* The handler owns its copy: it must not share memory with the worker's plan. */
        q->got_plan = true;
        q->plan_alias = p == t.given ||
                        (t.given != NULL &&
                         (p->status == t.given->status || p->result_json == t.given->result_json));
        snprintf(q->plan_status, sizeof q->plan_status, "%s", p->status ? p->status : "");
        snprintf(q->plan_result, sizeof q->plan_result, "%s", p->result_json ? p->result_json : "");
        store_plan_free(p);
        free(p);
        r->exec.finished = NULL;
    }
    pthread_cond_broadcast(&t.cv);
    while (q->block && !t.gate_open)
        pthread_cond_wait(&t.cv, &t.mu);
    park = q->parks > 0;
    if (park) {
        q->parks--;
        r->exec.deadline = clock_now() + q->park_deadline;
    }
    pthread_mutex_unlock(&t.mu);
    if (park)
        exec_park(t.x, r);
}

static void abandon(struct request *r, bool parked)
{
    struct treq *q = treq_of(r);

    pthread_mutex_lock(&t.mu);
    q->abandons++;
    q->abandoned_parked = parked;
    pthread_cond_broadcast(&t.cv);
    pthread_mutex_unlock(&t.mu);
}

static struct exec *pool(unsigned threads, double poll_s)
{
    char err[256] = "";

    t.gate_open = false;
    t.started = 0;
    t.given = NULL;
    t.x = exec_start(pgtest_info, threads, poll_s, handler, abandon, err, sizeof err);
    if (t.x == NULL)
        fail_msg("exec_start: %s", err);
    return t.x;
}

/* Requests live in static storage, not on a test's stack: a failed assertion leaves the
 * test function early, and the pool may still hold them until teardown stops it. */
static struct treq reqs[32];
static int nreqs;

static void open_gate(void)
{
    pthread_mutex_lock(&t.mu);
    t.gate_open = true;
    pthread_cond_broadcast(&t.cv);
    pthread_mutex_unlock(&t.mu);
}

static int setup(void **state)
{
    (void)state;
    memset(reqs, 0, sizeof reqs);
    nreqs = 0;
    t.no_store = 0;
    return 0;
}

/* Stops the test's pool, also after a failed assertion, and frees what is left. */
static int teardown(void **state)
{
    (void)state;
    open_gate();
    if (t.stopping)
        pthread_join(t.stopper, NULL);
    t.stopping = false;
    if (t.x != NULL) {
        exec_stop(t.x);
        exec_free(t.x);
        t.x = NULL;
    }
    for (int i = 0; i < nreqs; i++)
        if (reqs[i].r.exec.finished != NULL) {
            store_plan_free(reqs[i].r.exec.finished);
            free(reqs[i].r.exec.finished);
        }
    return t.no_store == 0 ? 0 : -1;
}

static struct treq *treq_new(const char *plan_id, int parks, double deadline_s)
{
    struct treq *q;

    if (nreqs == (int)(sizeof reqs / sizeof reqs[0]))
        fail_msg("out of test requests");
    q = &reqs[nreqs++];
    q->r.prefer_wait = -1;
    snprintf(q->r.exec.plan_id, sizeof q->r.exec.plan_id, "%s", plan_id != NULL ? plan_id : "");
    q->parks = parks;
    q->park_deadline = deadline_s;
    return q;
}

/* Waits up to timeout_s until *field of q reaches want; returns the last value seen. */
static int wait_count(const int *field, int want, double timeout_s)
{
    struct timespec until = clock_timespec(clock_now() + timeout_s);
    int v;

    pthread_mutex_lock(&t.mu);
    while (*field < want && pthread_cond_timedwait(&t.cv, &t.mu, &until) == 0)
        ;
    v = *field;
    pthread_mutex_unlock(&t.mu);
    return v;
}

/* A copy of *q taken under the lock. Assertions run on copies: one that fails while
 * holding the lock would leave it held for the teardown. */
static struct treq snap(const struct treq *q)
{
    struct treq c;

    pthread_mutex_lock(&t.mu);
    c = *q;
    pthread_mutex_unlock(&t.mu);
    return c;
}

/* Reads *field under the lock. */
static int count(const int *field)
{
    int v;

    pthread_mutex_lock(&t.mu);
    v = *field;
    pthread_mutex_unlock(&t.mu);
    return v;
}

static void wait_parked(struct exec *x, long want)
{
    long q = -1, p = -1;

    for (int i = 0; i < 500; i++) {
        exec_stats(x, &q, &p);
        if (p == want)
            return;
        usleep(10000);
    }
    fail_msg("%ld parked, wanted %ld", p, want);
}

#define ID_A "AAAAAAAAAAAAAAAAAAAAAA"
#define ID_B "BBBBBBBBBBBBBBBBBBBBBB"
#define ID_C "CCCCCCCCCCCCCCCCCCCCCC"
#define ID_D "DDDDDDDDDDDDDDDDDDDDDD"

/* Every submitted request runs once, on some thread. */
static void test_runs_each_once(void **state)
{
    struct treq *q[20];
    struct exec *x = pool(3, FAR);
    long queued, parked;

    (void)state;
    for (int i = 0; i < 20; i++) {
        q[i] = treq_new(NULL, 0, 0);
        exec_submit(x, &q[i]->r);
    }
    for (int i = 0; i < 20; i++)
        assert_int_equal(wait_count(&q[i]->runs, 1, 10), 1);
    usleep(50000);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(count(&q[i]->runs), 1);
        assert_int_equal(count(&q[i]->abandons), 0);
    }
    exec_stats(x, &queued, &parked);
    assert_int_equal(queued, 0);
    assert_int_equal(parked, 0);
}

/* With the only thread busy, requests wait in the queue (exec_stats counts them) and then
 * run in the order they came. */
static void test_queue_order_and_stats(void **state)
{
    struct treq *blocker, *q[3];
    struct exec *x = pool(1, FAR);
    long queued, parked;

    (void)state;
    blocker = treq_new(NULL, 0, 0);
    blocker->block = true;
    exec_submit(x, &blocker->r);
    assert_int_equal(wait_count(&blocker->runs, 1, 10), 1);
    for (int i = 0; i < 3; i++) {
        q[i] = treq_new(NULL, 0, 0);
        exec_submit(x, &q[i]->r);
    }
    exec_stats(x, &queued, &parked);
    assert_int_equal(queued, 3);
    assert_int_equal(parked, 0);
    open_gate();
    for (int i = 0; i < 3; i++)
        assert_int_equal(wait_count(&q[i]->runs, 1, 10), 1);
    for (int i = 0; i < 3; i++)
        assert_int_equal(count(&q[i]->order), 2 + i);
    exec_stats(x, &queued, &parked);
    assert_int_equal(queued, 0);
}

/* exec_plan_finished wakes the requests parked on that plan id, and only those, each with
 * its own copy of the finished plan; a NULL plan wakes them without one. */
static void test_finish_wakes_exactly_its_plan(void **state)
{
    struct treq *a1, *a2, *b, s1, s2, sb;
    struct exec *x = pool(2, FAR);
    struct store_plan plan;
    long queued, parked;

    (void)state;
    memset(&plan, 0, sizeof plan);
    snprintf(plan.id, sizeof plan.id, "%s", ID_A);
    plan.name = strdup("n");
    plan.chip = strdup("v5e");
    plan.source_format = strdup("json");
    plan.status = strdup("done");
    plan.result_json = strdup("{\"schema_version\":1}");
    plan.created_at = strdup("c");
    plan.updated_at = strdup("u");
    plan.version = 3;
    a1 = treq_new(ID_A, 1, FAR);
    a2 = treq_new(ID_A, 1, FAR);
    b = treq_new(ID_B, 1, FAR);
    exec_submit(x, &a1->r);
    exec_submit(x, &a2->r);
    exec_submit(x, &b->r);
    wait_parked(x, 3);
    assert_true(a1->r.exec.parked && a2->r.exec.parked && b->r.exec.parked);

    exec_plan_finished(x, ID_C, &plan); /* nobody waits on C */
    pthread_mutex_lock(&t.mu);
    t.given = &plan;
    pthread_mutex_unlock(&t.mu);
    exec_plan_finished(x, ID_A, &plan);
    assert_int_equal(wait_count(&a1->runs, 2, 10), 2);
    assert_int_equal(wait_count(&a2->runs, 2, 10), 2);
    usleep(100000);
    assert_int_equal(count(&b->runs), 1);
    exec_stats(x, &queued, &parked);
    assert_int_equal(parked, 1);
    s1 = snap(a1);
    s2 = snap(a2);
    sb = snap(b);
    assert_true(s1.got_plan && s2.got_plan);
    assert_false(s1.plan_alias || s2.plan_alias);
    assert_string_equal(s1.plan_status, "done");
    assert_string_equal(s2.plan_result, "{\"schema_version\":1}");
    assert_false(sb.got_plan);
    store_plan_free(&plan); /* borrowed for the call only: the copies outlive it */

    exec_plan_finished(x, ID_B, NULL);
    assert_int_equal(wait_count(&b->runs, 2, 10), 2);
    assert_false(snap(b).got_plan);
    exec_stats(x, &queued, &parked);
    assert_int_equal(parked, 0);
    assert_int_equal(count(&a1->runs), 2);
}

/* A parked request comes back at its deadline, not before. */
static void test_deadline_wakes(void **state)
{
    struct treq *q, sq;
    struct exec *x = pool(1, FAR);
    double t0;

    (void)state;
    q = treq_new(ID_A, 1, 0.3);
    exec_submit(x, &q->r);
    wait_parked(x, 1);
    t0 = clock_now();
    usleep(150000);
    if (clock_now() - t0 < 0.25) /* not when this thread overslept on a loaded machine */
        assert_int_equal(count(&q->runs), 1);
    assert_int_equal(wait_count(&q->runs, 2, 10), 2);
    sq = snap(q);
    assert_true(sq.last_run - sq.first_run >= 0.3 - 0.01);
    assert_true(clock_now() - t0 < 5);
}

/* Without a completion here, a parked request re-reads its plan every poll interval (a
 * plan finished by another server instance is seen that way). */
static void test_poll_wakes(void **state)
{
    struct treq *q, sq;
    struct exec *x = pool(1, 0.2);

    (void)state;
    q = treq_new(ID_A, 2, FAR);
    exec_submit(x, &q->r);
    assert_int_equal(wait_count(&q->runs, 3, 10), 3);
    sq = snap(q);
    assert_true(sq.last_run - sq.first_run >= 2 * 0.2 - 0.02);
    wait_parked(x, 0);
}

/* A plan that finished just before its request parks (the handler read it as running)
 * sends the request straight back to the queue instead of leaving it to the poll. */
static void test_park_after_finish_requeues(void **state)
{
    struct treq *q;
    struct exec *x = pool(1, FAR);

    (void)state;
    exec_plan_finished(x, ID_C, NULL);
    q = treq_new(ID_C, 1, FAR);
    exec_submit(x, &q->r);
    assert_int_equal(wait_count(&q->runs, 2, 5), 2);
    wait_parked(x, 0);
}

static void *stopper(void *arg)
{
    exec_stop(arg);
    return NULL;
}

/* exec_stop answers everything it will not run: parked requests (and parked ones already
 * woken into the queue) as parked, queued ones as not, while the running handler finishes.
 * Afterwards submit and park abandon at once. */
static void test_stop_abandons(void **state)
{
    struct treq *p1, *p2, *blocker, *q1, *late, *late_park;
    struct exec *x = pool(1, FAR);
    long queued, parked;

    (void)state;
    p1 = treq_new(ID_A, 1, FAR);
    p2 = treq_new(ID_D, 1, FAR);
    blocker = treq_new(NULL, 0, 0);
    blocker->block = true;
    q1 = treq_new(NULL, 0, 0);
    exec_submit(x, &p1->r);
    exec_submit(x, &p2->r);
    wait_parked(x, 2);
    exec_submit(x, &blocker->r);
    assert_int_equal(wait_count(&blocker->runs, 1, 10), 1);
    exec_plan_finished(x, ID_D, NULL); /* p2: woken, queued behind the blocker */
    exec_submit(x, &q1->r);
    exec_stats(x, &queued, &parked);
    assert_int_equal(queued, 2);
    assert_int_equal(parked, 1);

    assert_int_equal(pthread_create(&t.stopper, NULL, stopper, x), 0);
    t.stopping = true;
    assert_int_equal(wait_count(&p1->abandons, 1, 10), 1);
    assert_int_equal(wait_count(&p2->abandons, 1, 10), 1);
    assert_int_equal(wait_count(&q1->abandons, 1, 10), 1);
    assert_true(snap(p1).abandoned_parked);
    assert_true(snap(p2).abandoned_parked);
    assert_false(snap(q1).abandoned_parked);
    assert_int_equal(count(&blocker->runs), 1); /* still running: the stop waits for it */
    assert_int_equal(count(&blocker->abandons), 0);
    open_gate();
    assert_int_equal(pthread_join(t.stopper, NULL), 0);
    t.stopping = false;
    assert_int_equal(count(&p1->runs), 1);
    assert_int_equal(count(&p2->runs), 1);
    assert_int_equal(count(&q1->runs), 0);
    exec_stats(x, &queued, &parked);
    assert_int_equal(queued, 0);
    assert_int_equal(parked, 0);

    late = treq_new(NULL, 0, 0);
    exec_submit(x, &late->r);
    assert_int_equal(count(&late->abandons), 1);
    assert_false(snap(late).abandoned_parked);
    late_park = treq_new(ID_B, 0, 0);
    exec_park(x, &late_park->r);
    assert_int_equal(count(&late_park->abandons), 1);
    assert_true(snap(late_park).abandoned_parked);
    assert_int_equal(count(&late->runs) + count(&late_park->runs), 0);
    exec_stop(x); /* a second stop does nothing (teardown stops it once more) */
}

static int group_setup(void **state)
{
    pthread_condattr_t ca;

    (void)state;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&t.cv, &ca);
    pthread_condattr_destroy(&ca);
    return pgtest_start("exec") == 0 ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    pthread_cond_destroy(&t.cv);
    return pgtest_ctl("stop") == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_runs_each_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_queue_order_and_stats, setup, teardown),
        cmocka_unit_test_setup_teardown(test_finish_wakes_exactly_its_plan, setup, teardown),
        cmocka_unit_test_setup_teardown(test_deadline_wakes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_wakes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_park_after_finish_requeues, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_abandons, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
