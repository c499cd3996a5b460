/*
 * exec.c - the request-executor pool and the Prefer: wait parking list.
 */
#include "service/exec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner/clock.h"
#include "service/request.h"
#include "service/store.h"

#define RECENT_N 64 /* plans finished lately, for a park that races the completion */
#define RECENT_S 10.0
#define TICK_S   0.05

struct exec {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* run queue not empty, or stopping */
    pthread_cond_t tick_cv; /* ticker sleep */
    struct request *qhead, *qtail;
    long nq;
    struct request *parked;
    long nparked;
    bool stopping;
    unsigned n;
    pthread_t *threads;
    struct store **stores;
    pthread_t ticker;
    bool ticker_started;
    unsigned started;
    double poll_s;
    exec_handler run;
    exec_abandon abandon;
    char recent[RECENT_N][IDS_ID_LEN + 1];
    double recent_t[RECENT_N];
    unsigned recent_i;
};

struct worker_arg {
    struct exec *x;
    struct store *st;
};

/* Caller holds mu. */
static void queue_push(struct exec *x, struct request *r)
{
    r->exec.next = NULL;
    if (x->qtail != NULL)
        x->qtail->exec.next = r;
    else
        x->qhead = r;
    x->qtail = r;
    x->nq++;
    pthread_cond_signal(&x->cv);
}

static void *exec_thread(void *arg)
{
    struct exec *x = ((struct worker_arg *)arg)->x;
    struct store *st = ((struct worker_arg *)arg)->st;

    free(arg);
    pthread_mutex_lock(&x->mu);
    for (;;) {
        while (!x->stopping && x->qhead == NULL)
            pthread_cond_wait(&x->cv, &x->mu);
        if (x->stopping)
            break;
        struct request *r = x->qhead;
        x->qhead = r->exec.next;
        if (x->qhead == NULL)
            x->qtail = NULL;
        x->nq--;
        pthread_mutex_unlock(&x->mu);
        x->run(st, r);
        pthread_mutex_lock(&x->mu);
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

/* Moves due parked requests (deadline or poll time reached) to the run queue. */
static void *exec_ticker(void *arg)
{
    struct exec *x = arg;
    struct timespec ts;

    pthread_mutex_lock(&x->mu);
    while (!x->stopping) {
        double now = clock_now();
        struct request **pp = &x->parked;
        while (*pp != NULL) {
            struct request *r = *pp;
            if (now >= r->exec.deadline || now >= r->exec.next_poll) {
                *pp = r->exec.next;
                x->nparked--;
                queue_push(x, r);
            } else {
                pp = &r->exec.next;
            }
        }
        ts = clock_timespec(clock_now() + TICK_S);
        pthread_cond_timedwait(&x->tick_cv, &x->mu, &ts);
    }
    pthread_mutex_unlock(&x->mu);
    return NULL;
}

struct exec *exec_start(const char *conninfo, unsigned nthreads, double poll_interval_s,
                        exec_handler run, exec_abandon abandon, char *errbuf, size_t cap)
{
    struct exec *x = calloc(1, sizeof(*x));
    pthread_condattr_t ca;
    unsigned i;

    if (x == NULL) {
        snprintf(errbuf, cap, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&x->mu, NULL);
    pthread_cond_init(&x->cv, NULL);
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&x->tick_cv, &ca);
    pthread_condattr_destroy(&ca);
    x->n = nthreads;
    x->poll_s = poll_interval_s;
    x->run = run;
    x->abandon = abandon;
    x->threads = calloc(nthreads, sizeof(*x->threads));
    x->stores = calloc(nthreads, sizeof(struct store *)); /* NOLINT(bugprone-sizeof-expression) */
    if (x->threads == NULL || x->stores == NULL) {
        snprintf(errbuf, cap, "out of memory");
        goto fail;
    }
    for (i = 0; i < nthreads; i++) {
        x->stores[i] = store_open(conninfo, errbuf, cap);
        if (x->stores[i] == NULL)
            goto fail;
    }
    for (i = 0; i < nthreads; i++) {
        struct worker_arg *a = malloc(sizeof(*a));
        if (a == NULL) {
            snprintf(errbuf, cap, "out of memory");
            goto fail;
        }
        a->x = x;
        a->st = x->stores[i];
        if (pthread_create(&x->threads[i], NULL, exec_thread, a) != 0) {
            free(a);
            snprintf(errbuf, cap, "cannot start executor thread");
            goto fail;
        }
        x->started++;
    }
    if (pthread_create(&x->ticker, NULL, exec_ticker, x) != 0) {
        snprintf(errbuf, cap, "cannot start executor ticker");
        goto fail;
    }
    x->ticker_started = true;
    return x;
fail:
    exec_stop(x);
    exec_free(x);
    return NULL;
}

void exec_submit(struct exec *x, struct request *r)
{
    pthread_mutex_lock(&x->mu);
    if (x->stopping) {
        pthread_mutex_unlock(&x->mu);
        x->abandon(r, false);
        return;
    }
    queue_push(x, r);
    pthread_mutex_unlock(&x->mu);
}

static bool recent_has(struct exec *x, const char *id, double now)
{
    unsigned i;

    for (i = 0; i < RECENT_N; i++)
        if (now - x->recent_t[i] < RECENT_S && strcmp(x->recent[i], id) == 0)
            return true;
    return false;
}

void exec_park(struct exec *x, struct request *r)
{
    double now = clock_now();

    pthread_mutex_lock(&x->mu);
    if (x->stopping) {
        pthread_mutex_unlock(&x->mu);
        x->abandon(r, true);
        return;
    }
    r->exec.parked = true;
    r->exec.next_poll = now + x->poll_s;
    if (recent_has(x, r->exec.plan_id, now)) {
        /* It finished between the handler's last look and now: re-check at once. */
        r->exec.next_poll = now;
        queue_push(x, r);
    } else {
        r->exec.next = x->parked;
        x->parked = r;
        x->nparked++;
    }
    pthread_mutex_unlock(&x->mu);
}

void exec_plan_finished(struct exec *x, const char *plan_id, const struct store_plan *plan)
{
    struct request **pp;

    if (x == NULL || plan_id == NULL || strlen(plan_id) >= sizeof(x->recent[0]))
        return;
    pthread_mutex_lock(&x->mu);
    strcpy(x->recent[x->recent_i], plan_id);
    x->recent_t[x->recent_i] = clock_now();
    x->recent_i = (x->recent_i + 1) % RECENT_N;
    pp = &x->parked;
    while (*pp != NULL) {
        struct request *r = *pp;
        if (strcmp(r->exec.plan_id, plan_id) == 0) {
            *pp = r->exec.next;
            x->nparked--;
            /* Out of memory only costs the shortcut: the handler reads the plan instead. */
            if (plan != NULL && r->exec.finished == NULL &&
                (r->exec.finished = malloc(sizeof(*r->exec.finished))) != NULL &&
                store_plan_copy(plan, r->exec.finished) != STORE_OK) {
                free(r->exec.finished);
                r->exec.finished = NULL;
            }
            queue_push(x, r);
        } else {
            pp = &r->exec.next;
        }
    }
    pthread_mutex_unlock(&x->mu);
}

void exec_stop(struct exec *x)
{
    struct request *q, *p;
    unsigned i;

    if (x == NULL)
        return;
    pthread_mutex_lock(&x->mu);
    x->stopping = true;
    q = x->qhead;
    p = x->parked;
    x->qhead = x->qtail = x->parked = NULL;
    x->nq = x->nparked = 0;
    pthread_cond_broadcast(&x->cv);
    pthread_cond_broadcast(&x->tick_cv);
    pthread_mutex_unlock(&x->mu);
    while (q != NULL) {
        struct request *r = q;
        q = q->exec.next;
        x->abandon(r, r->exec.parked);
    }
    while (p != NULL) {
        struct request *r = p;
        p = p->exec.next;
        x->abandon(r, true);
    }
    for (i = 0; i < x->started; i++)
        pthread_join(x->threads[i], NULL);
    if (x->ticker_started)
        pthread_join(x->ticker, NULL);
    x->started = 0;
    x->ticker_started = false;
    for (i = 0; x->stores != NULL && i < x->n; i++)
        if (x->stores[i] != NULL)
            store_close(x->stores[i]);
    for (i = 0; x->stores != NULL && i < x->n; i++)
        x->stores[i] = NULL;
}

void exec_free(struct exec *x)
{
    if (x == NULL)
        return;
    free(x->threads);
    free(x->stores);
    pthread_cond_destroy(&x->cv);
    pthread_cond_destroy(&x->tick_cv);
    pthread_mutex_destroy(&x->mu);
    free(x);
}

void exec_stats(struct exec *x, long *queued, long *parked)
{
    pthread_mutex_lock(&x->mu);
    *queued = x->nq;
    *parked = x->nparked;
    pthread_mutex_unlock(&x->mu);
}
