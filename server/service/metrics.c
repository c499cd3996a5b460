/*
 * metrics.c - counters in static arrays of atomics; rendering walks them once.
 *
 * Statuses are counted in a fixed table of the codes this server answers with, plus an
 * "other" slot, so a counter never needs allocating on the request path.
 */
#include "service/metrics.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/route.h"

static const int metrics_statuses[] = {200, 201, 202, 204, 304, 308, 400, 401, 403, 404,
                                       405, 408, 410, 413, 415, 422, 429, 431, 500, 503};
#define NSTATUS   (sizeof(metrics_statuses) / sizeof(metrics_statuses[0]))
#define REQ_NB    12
#define PLAN_NB   12
#define OTHER_IDX NSTATUS

static const double req_bounds[REQ_NB] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                          0.05,   0.1,   0.25,   0.5,   1.0,  2.5};
static const double plan_bounds[PLAN_NB] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                            0.1,   0.25,   0.5,   1.0,  5.0,   30.0};

/* Every counter is a relaxed atomic: each is read alone, so no order between them matters. */
typedef _Atomic uint64_t counter;

static counter req_count[ROUTE_SERIES][NSTATUS + 1]; /* by route_series() */
static counter req_hist[ROUTE_SERIES][REQ_NB + 1];   /* last slot: +Inf */
static counter req_sum_us[ROUTE_SERIES];
static counter plan_hist[PLAN_NB + 1];
static counter plan_sum_us;
static counter plan_fail;
static counter frontier_hist[PLAN_NB + 1];
static counter frontier_sum_us;
static counter frontier_fail;

static void add(counter *p, uint64_t v)
{
    atomic_fetch_add_explicit(p, v, memory_order_relaxed);
}

/* Plans by API key name: names are added once under key_mu (a name is at most 64
 * characters of [A-Za-z0-9._-], so it needs no escaping in a label); slot 0 is "no key",
 * the last "(other)". Counts are atomics like the rest. */
static const char *const auth_reasons[METRICS_AUTH_COUNT] = {"missing", "unknown", "revoked"};
static counter auth_fail[METRICS_AUTH_COUNT];
static pthread_mutex_t key_mu = PTHREAD_MUTEX_INITIALIZER;
static char key_names[METRICS_KEYS + 2][72];
static _Atomic size_t key_n = 1; /* grows under key_mu, after its name is written */
static counter key_plans[METRICS_KEYS + 2];
static counter plans_expired;

static uint64_t get(const counter *p)
{
    return atomic_load_explicit(p, memory_order_relaxed);
}

static size_t bucket(const double *bounds, size_t n, double v)
{
    size_t i;

    for (i = 0; i < n && v > bounds[i]; i++)
        ;
    return i;
}

static uint64_t to_us(double s)
{
    return s <= 0 ? 0 : (uint64_t)(s * 1e6);
}

void metrics_request_observe(const struct route *row, int status, double seconds)
{
    unsigned route = route_series(row);
    size_t si;

    for (si = 0; si < NSTATUS && metrics_statuses[si] != status; si++)
        ;
    add(&req_count[route][si], 1);
    add(&req_hist[route][bucket(req_bounds, REQ_NB, seconds)], 1);
    add(&req_sum_us[route], to_us(seconds));
}

void metrics_planner_observe(double seconds, int ok)
{
    add(&plan_hist[bucket(plan_bounds, PLAN_NB, seconds)], 1);
    add(&plan_sum_us, to_us(seconds));
    if (!ok)
        add(&plan_fail, 1);
}

void metrics_frontier_observe(double seconds, int ok)
{
    add(&frontier_hist[bucket(plan_bounds, PLAN_NB, seconds)], 1);
    add(&frontier_sum_us, to_us(seconds));
    if (!ok)
        add(&frontier_fail, 1);
}

void metrics_auth_failure(enum metrics_auth why)
{
    if ((unsigned)why < METRICS_AUTH_COUNT)
        add(&auth_fail[why], 1);
}

void metrics_plan_created(const char *key_name)
{
    size_t i = 0;

    if (key_name != NULL && key_name[0] != '\0') {
        pthread_mutex_lock(&key_mu);
        size_t n = atomic_load_explicit(&key_n, memory_order_relaxed);
        for (i = 1; i < n && strcmp(key_names[i], key_name) != 0; i++)
            ;
        if (i == n && n <= METRICS_KEYS) {
            snprintf(key_names[n], sizeof(key_names[0]), "%s", key_name);
            /* publishes the name to render_keys(), which reads without the lock */
            atomic_store_explicit(&key_n, n + 1, memory_order_release);
        } else if (i == n) {
            i = METRICS_KEYS + 1;
        }
        pthread_mutex_unlock(&key_mu);
    }
    add(&key_plans[i], 1);
}

void metrics_plans_expired(long n)
{
    if (n > 0)
        add(&plans_expired, (uint64_t)n);
}

/* A growing text buffer; on OOM it sets failed and drops further text. */
struct tbuf {
    char *p;
    size_t len, cap;
    bool failed;
};

static void __attribute__((format(printf, 2, 3))) tb_printf(struct tbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->failed)
        return;
    for (;;) {
        va_start(ap, fmt);
        n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < b->cap - b->len) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap * 2 + (size_t)n;
        char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->failed = true;
            return;
        }
        b->p = np;
        b->cap = ncap;
    }
}

static void render_hist(struct tbuf *b, const char *name, const char *label, const double *bounds,
                        size_t nb, const counter *hist, uint64_t sum_us)
{
    uint64_t cum = 0;
    const char *sep = label[0] != '\0' ? "," : "";
    size_t i;

    for (i = 0; i <= nb; i++) {
        cum += get(&hist[i]);
        if (i < nb)
            tb_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, label, sep, bounds[i],
                      (unsigned long long)cum);
        else
            tb_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, label, sep,
                      (unsigned long long)cum);
    }
    if (label[0] != '\0') {
        tb_printf(b, "%s_sum{%s} %.6f\n", name, label, (double)sum_us / 1e6);
        tb_printf(b, "%s_count{%s} %llu\n", name, label, (unsigned long long)cum);
    } else {
        tb_printf(b, "%s_sum %.6f\n", name, (double)sum_us / 1e6);
        tb_printf(b, "%s_count %llu\n", name, (unsigned long long)cum);
    }
}

static void render_gauge(struct tbuf *b, const char *name, const char *help, int64_t v)
{
    if (v < 0)
        return;
    tb_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %lld\n", name, help, name, name, (long long)v);
}

/* Plans created, by API key name when detail (else one total: the names are not for anyone
 * who can reach /metrics), refusals by reason, and the expiry sweep. */
static void render_keys(struct tbuf *b, bool detail)
{
    size_t n = atomic_load_explicit(&key_n, memory_order_acquire);
    uint64_t total = get(&key_plans[METRICS_KEYS + 1]);

    tb_printf(b,
              "# HELP tpuplan_plans_created_total Plans created by this instance%s.\n"
              "# TYPE tpuplan_plans_created_total counter\n",
              detail ? ", by the name of the API key that sent them (\"\": none)" : "");
    for (size_t i = 0; i < n; i++) {
        total += get(&key_plans[i]);
        if (detail)
            tb_printf(b, "tpuplan_plans_created_total{key=\"%s\"} %llu\n", key_names[i],
                      (unsigned long long)get(&key_plans[i]));
    }
    if (!detail)
        tb_printf(b, "tpuplan_plans_created_total %llu\n", (unsigned long long)total);
    else if (get(&key_plans[METRICS_KEYS + 1]) > 0)
        tb_printf(b, "tpuplan_plans_created_total{key=\"(other)\"} %llu\n",
                  (unsigned long long)get(&key_plans[METRICS_KEYS + 1]));
    tb_printf(b, "# HELP tpuplan_auth_failures_total Requests refused for their API key.\n"
                 "# TYPE tpuplan_auth_failures_total counter\n");
    for (size_t i = 0; i < METRICS_AUTH_COUNT; i++)
        tb_printf(b, "tpuplan_auth_failures_total{reason=\"%s\"} %llu\n", auth_reasons[i],
                  (unsigned long long)get(&auth_fail[i]));
    tb_printf(b,
              "# HELP tpuplan_plans_expired_total Plans deleted by this instance's expiry "
              "sweep.\n"
              "# TYPE tpuplan_plans_expired_total counter\n"
              "tpuplan_plans_expired_total %llu\n",
              (unsigned long long)get(&plans_expired));
}

char *metrics_render(const struct metrics_gauges *g, bool key_detail, size_t *len)
{
    struct tbuf b = {.p = malloc(8192), .cap = 8192};
    char label[64];
    size_t r, s;

    if (b.p == NULL)
        return NULL;
    b.p[0] = '\0';
    tb_printf(&b, "# HELP tpuplan_http_requests_total HTTP requests by route and status.\n"
                  "# TYPE tpuplan_http_requests_total counter\n");
    for (r = 0; r < ROUTE_SERIES; r++)
        for (s = 0; s <= NSTATUS; s++) {
            uint64_t c = get(&req_count[r][s]);
            if (c == 0)
                continue;
            if (s == OTHER_IDX)
                tb_printf(&b, "tpuplan_http_requests_total{route=\"%s\",status=\"other\"} %llu\n",
                          route_series_name((unsigned)r), (unsigned long long)c);
            else
                tb_printf(&b, "tpuplan_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n",
                          route_series_name((unsigned)r), metrics_statuses[s],
                          (unsigned long long)c);
        }
    tb_printf(&b, "# HELP tpuplan_http_request_duration_seconds Time from request headers to "
                  "the response being sent.\n"
                  "# TYPE tpuplan_http_request_duration_seconds histogram\n");
    for (r = 0; r < ROUTE_SERIES; r++) {
        uint64_t any = 0;
        for (s = 0; s <= REQ_NB; s++)
            any += get(&req_hist[r][s]);
        if (any == 0)
            continue;
        snprintf(label, sizeof(label), "route=\"%s\"", route_series_name((unsigned)r));
        render_hist(&b, "tpuplan_http_request_duration_seconds", label, req_bounds, REQ_NB,
                    req_hist[r], get(&req_sum_us[r]));
    }
    tb_printf(&b, "# HELP tpuplan_planner_duration_seconds plan_run() time per job.\n"
                  "# TYPE tpuplan_planner_duration_seconds histogram\n");
    render_hist(&b, "tpuplan_planner_duration_seconds", "", plan_bounds, PLAN_NB, plan_hist,
                get(&plan_sum_us));
    tb_printf(&b,
              "# HELP tpuplan_planner_failures_total plan_run() calls that failed.\n"
              "# TYPE tpuplan_planner_failures_total counter\n"
              "tpuplan_planner_failures_total %llu\n",
              (unsigned long long)get(&plan_fail));
    tb_printf(&b, "# HELP tpuplan_frontier_duration_seconds frontier search time per job.\n"
                  "# TYPE tpuplan_frontier_duration_seconds histogram\n");
    render_hist(&b, "tpuplan_frontier_duration_seconds", "", plan_bounds, PLAN_NB, frontier_hist,
                get(&frontier_sum_us));
    tb_printf(&b,
              "# HELP tpuplan_frontier_failures_total frontier searches that failed.\n"
              "# TYPE tpuplan_frontier_failures_total counter\n"
              "tpuplan_frontier_failures_total %llu\n",
              (unsigned long long)get(&frontier_fail));
    render_keys(&b, key_detail);
    if (g != NULL) {
        if (g->jobs_queued >= 0) {
            tb_printf(&b, "# HELP tpuplan_jobs Plans by state (database, all instances).\n"
                          "# TYPE tpuplan_jobs gauge\n");
            tb_printf(&b, "tpuplan_jobs{state=\"queued\"} %lld\n", (long long)g->jobs_queued);
            tb_printf(&b, "tpuplan_jobs{state=\"running\"} %lld\n", (long long)g->jobs_running);
            tb_printf(&b, "tpuplan_jobs{state=\"done\"} %lld\n", (long long)g->jobs_done);
            tb_printf(&b, "tpuplan_jobs{state=\"failed\"} %lld\n", (long long)g->jobs_failed);
            render_gauge(&b, "tpuplan_queue_depth", "Plans waiting for a planner worker.",
                         g->jobs_queued);
        }
        render_gauge(&b, "tpuplan_executor_queue_depth",
                     "Requests waiting for a request-executor thread.", g->executor_queue);
        render_gauge(&b, "tpuplan_waiting_clients", "Prefer: wait requests parked.",
                     g->waiting_clients);
        render_gauge(&b, "tpuplan_cache_entries", "Finished plans cached in memory.",
                     g->cache_entries);
        render_gauge(&b, "tpuplan_cache_bytes", "Bytes of cached plan bodies.", g->cache_bytes);
        render_gauge(&b, "tpuplan_database_up", "1 when the last database call succeeded.",
                     g->db_up);
    }
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    if (len != NULL)
        *len = b.len;
    return b.p;
}
