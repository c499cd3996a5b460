/*
 * deadline.c - see deadline.h.
 */
#include "service/deadline.h"

#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "planner/clock.h"
#include "service/log.h"

#define SWEEP_S 1 /* how often the reaper looks: a deadline is met to within a second */

enum wait { WAIT_HEADERS, WAIT_BODY, WAIT_NONE };

struct deadline_conn {
    int fd;
    enum wait wait; /* what the clock is running for */
    bool shut;      /* shut down by the reaper; MHD will close it */
    double since;   /* the clock started here */
    double allowed; /* seconds from since: the deadline's seconds, plus a body's credit */
    struct deadline_conn *prev, *next;
};

struct deadline {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool stopping;
    double seconds;
    double min_rate;     /* body bytes a second; 0: no body deadline */
    atomic_ulong reaped; /* written under mu, read without it */
    struct deadline_conn *head;
};

/* Shuts c's socket down (caller holds the lock) and says so, with the peer's address. */
static void reap(struct deadline *d, struct deadline_conn *c)
{
    struct sockaddr_storage sa;
    socklen_t sl = sizeof(sa);
    char host[NI_MAXHOST] = "unknown";

    if (getpeername(c->fd, (struct sockaddr *)&sa, &sl) == 0)
        (void)getnameinfo((struct sockaddr *)&sa, sl, host, sizeof(host), NULL, 0, NI_NUMERICHOST);
    shutdown(c->fd, SHUT_RDWR);
    c->shut = true;
    atomic_fetch_add_explicit(&d->reaped, 1, memory_order_relaxed);
    if (c->wait == WAIT_HEADERS)
        log_line("http", "closed a connection from %s: no complete request headers within %g s",
                 host, d->seconds);
    else
        log_line("http",
                 "closed a connection from %s: request body slower than %g bytes/s (%.1f s "
                 "allowed)",
                 host, d->min_rate, c->allowed);
}

static void *reaper(void *arg)
{
    struct deadline *d = arg;
    struct timespec ts;

    pthread_mutex_lock(&d->mu);
    while (!d->stopping) {
        double now = clock_now();
        for (struct deadline_conn *c = d->head; c != NULL; c = c->next)
            if (c->wait != WAIT_NONE && !c->shut && now - c->since >= c->allowed)
                reap(d, c);
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += SWEEP_S;
        while (!d->stopping && pthread_cond_timedwait(&d->cv, &d->mu, &ts) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

struct deadline *deadline_start(unsigned seconds, uint64_t min_rate)
{
    struct deadline *d;

    if (seconds == 0 || (d = calloc(1, sizeof(*d))) == NULL)
        return NULL;
    d->seconds = seconds;
    d->min_rate = (double)min_rate;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    if (pthread_create(&d->thread, NULL, reaper, d) != 0) {
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        free(d);
        return NULL;
    }
    return d;
}

void deadline_stop(struct deadline *d)
{
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    d->stopping = true;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->thread, NULL);
    while (d->head != NULL) { /* none after the daemon stopped; defensive */
        struct deadline_conn *c = d->head;
        d->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
    free(d);
}

struct deadline_conn *deadline_open(struct deadline *d, int fd)
{
    struct deadline_conn *c;

    if (d == NULL || (c = calloc(1, sizeof(*c))) == NULL)
        return NULL;
    c->fd = fd;
    c->wait = WAIT_HEADERS;
    c->since = clock_now();
    c->allowed = d->seconds;
    pthread_mutex_lock(&d->mu);
    c->next = d->head;
    if (d->head != NULL)
        d->head->prev = c;
    d->head = c;
    pthread_mutex_unlock(&d->mu);
    return c;
}

/* The clock starts again, for wait. */
static void restart(struct deadline *d, struct deadline_conn *c, enum wait wait)
{
    if (d == NULL || c == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    c->wait = wait;
    c->since = clock_now();
    c->allowed = d->seconds;
    pthread_mutex_unlock(&d->mu);
}

void deadline_headers(struct deadline *d, struct deadline_conn *c)
{
    restart(d, c, d != NULL && d->min_rate > 0 ? WAIT_BODY : WAIT_NONE);
}

void deadline_body(struct deadline *d, struct deadline_conn *c, size_t bytes)
{
    if (d == NULL || c == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    if (bytes == 0)
        c->wait = WAIT_NONE;
    else if (c->wait == WAIT_BODY)
        c->allowed += (double)bytes / d->min_rate;
    pthread_mutex_unlock(&d->mu);
}

void deadline_idle(struct deadline *d, struct deadline_conn *c)
{
    restart(d, c, WAIT_HEADERS);
}

void deadline_close(struct deadline *d, struct deadline_conn *c)
{
    if (d == NULL || c == NULL)
        return;
    pthread_mutex_lock(&d->mu);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        d->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&d->mu);
    free(c);
}

unsigned long deadline_reaped(struct deadline *d)
{
    return d != NULL ? atomic_load_explicit(&d->reaped, memory_order_relaxed) : 0;
}
