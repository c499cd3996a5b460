/*
 * route.h - the route table: one row per endpoint, and the matcher that finds a request's row.
 *
 * A row is a path pattern, the methods it serves, where it runs and its handlers. Everything
 * that depends on a route reads the table: the dispatch (http.c), 404 and 405 with its Allow
 * header, HEAD, which requests are suspended to an executor thread and which read a body
 * first, the metrics label. A new endpoint is one row in route.c.
 *
 * Patterns are literal text with three marks: {id} is a plan id (ids_valid_id; the first one
 * is captured in plan_id), {*} ends a pattern and takes the rest of the path, maybe empty (the
 * file path of a file row), and [/] ends a pattern with an optional slash. Rows are tried in
 * order; the first whose pattern matches names the resource, and the rows with that same
 * pattern are its methods. A resource with no row for the method is 405, Allow naming the
 * methods its rows serve; no match, or a match on a fence (a row without methods, such as
 * everything under /api/ that no row above it took), is 404. A row serving GET serves HEAD
 * (MHD sends the headers without the body).
 *
 * A row names the query parameters it takes (`query`); any other is answered 400
 * invalid-parameter naming it, before a handler runs, so "?chips=v4" or "?veiw=summary" is
 * never silently ignored. Rows that create a plan check their parameters themselves (every
 * plan option, api_params.c), and pages and files take any query (a browser adds its own).
 *
 * Where a row runs: `fast` on the MHD thread (it must not block: local files and memory
 * only), `exec` on an executor thread (exec.h) with that thread's database connection, in
 * the pool its `lane` names, both when `fast` may decline (the plan cache: a miss goes on
 * to the database). A `body` row
 * (plan submissions) has its body read on the MHD thread before it goes to `exec`. Handlers
 * answer with request_reply() (request.h) on either thread.
 *
 * route_match() is pure and allocation-free, so it is unit-tested directly.
 */
#ifndef TPUPLAN_ROUTE_H
#define TPUPLAN_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "service/ids.h"

struct request;
struct store;

/* Methods, as bits: a row's `methods` and a request's `method`. */
enum route_method {
    ROUTE_GET = 1, /* and HEAD */
    ROUTE_HEAD = 2,
    ROUTE_POST = 4,
    ROUTE_DELETE = 8,
    ROUTE_OTHER = 16, /* a request's method that no row can serve */
};

/* On the MHD thread: answers r (request_reply) and returns true, or returns false having
 * answered nothing, to hand r on to the row's exec handler. */
typedef bool (*route_fast_fn)(struct request *r);

/* On an executor thread, with the thread's own st: answers r (request_reply) or parks it
 * (exec_park). */
typedef void (*route_exec_fn)(struct store *st, struct request *r);

/* Which executor pool (exec.h) runs a row's exec handler. The operators' endpoints have a
 * thread and a connection of their own, so a server busy with anything else still answers
 * /readyz and /metrics at once. Large reads (a whole plan of 100,000 tensors or more, its
 * layout or trace, a diff with one) move from the executors to --max-heavy threads of their
 * own once their handler has seen the plan's size, up to that many at once (admit.h). */
enum route_lane { ROUTE_LANE_EXEC = 0, ROUTE_LANE_OPS };

struct route {
    const char *pattern;
    const char *name;     /* metrics label; rows with one name share its series; NULL: fence */
    int methods;          /* enum route_method bits, ROUTE_HEAD never needed; 0: a fence */
    bool body;            /* reads a request body (on the MHD thread) before exec runs */
    route_fast_fn fast;   /* NULL: none */
    route_exec_fn exec;   /* NULL: none */
    const char *file;     /* path served by a file row; with {*}: the one for an empty rest */
    const char *query;    /* the query parameters it takes, ", "-separated ("view, format"),
                           * "" none; NULL: not checked here (pages, files, plan submissions) */
    enum route_lane lane; /* where exec runs; ROUTE_LANE_EXEC by default */
};

/* Whether row takes query parameter name (always, when row->query is NULL). */
bool route_takes_param(const struct route *row, const char *name);

/* The table (route.c): route_count rows, at most ROUTE_MAX. */
#define ROUTE_MAX 32
extern const struct route route_table[];
extern const size_t route_count;

struct route_match {
    const struct route *row;      /* the method's row; for 405 the resource's first row (its
                                     metrics label); NULL for 404 */
    int method;                   /* the request's, enum route_method */
    int status;                   /* 0 when matched, else 404 or 405 */
    char allow[32];               /* for 405: the resource's methods, e.g. "GET, HEAD, POST" */
    char plan_id[IDS_ID_LEN + 1]; /* the first {id}; "" when none */
    const char *path;             /* a file row's file path relative to its root: {*} (pointing
                                     into the url argument: borrowed) or the row's file; NULL
                                     when neither */
};

int route_method_parse(const char *method);

/* Fills *m for method and the percent-decoded url (borrowed; m->path may point into it). */
void route_match(const char *method, const char *url, struct route_match *m);

/* Metrics series: rows with one name share one, numbered from 1 in table order; 0 is
 * "unmatched" (row NULL or a fence). Every series is below ROUTE_MAX + 1. */
#define ROUTE_SERIES (ROUTE_MAX + 1)
unsigned route_series(const struct route *row);

/* The label of series s: a row's name, "unmatched" for 0 and for a number no row has. */
const char *route_series_name(unsigned s);

/* exec_handler (exec.h): runs r's row's exec handler on this executor thread, with every
 * line it logs carrying r's id. After a request with a large body (a submission of 1 MiB
 * or more) the allocator gives its free memory back to the kernel (malloc_trim). */
void route_run(struct store *st, struct request *r);

/* route_run for the heavy pool (admit.h): the same, at a lower priority, then the
 * allocator's free memory is given back after every request (a large read's parse and
 * answer are hundreds of MB). */
void route_run_heavy(struct store *st, struct request *r);

#endif
