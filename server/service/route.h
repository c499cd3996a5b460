/*
 * route.h - the URL table: maps (method, decoded path) to a route, a plan id or a file path.
 *
 * Pure and allocation-free, so it is unit-tested directly. Unmatched paths under /api/ and
 * the operational endpoints are 404; a known path with a method it does not serve is 405
 * with `allow` naming the methods. Everything else that is not an API path is a candidate
 * static file (ROUTE_STATIC), whose `path` static_serve() checks with static_path_ok().
 */
#ifndef TPUPLAN_ROUTE_H
#define TPUPLAN_ROUTE_H

#include "service/ids.h"

enum route_id {
    ROUTE_NONE = 0, /* unmatched: 404 (also the metrics label of 404s and 405s) */
    ROUTE_HEALTHZ,
    ROUTE_READYZ,
    ROUTE_METRICS,
    ROUTE_OPENAPI,
    ROUTE_PLANS,     /* /api/v1/plans: GET list, POST create */
    ROUTE_PLAN,      /* /api/v1/plans/{id}: GET, DELETE */
    ROUTE_CHIPS,     /* /api/v1/chips: the chip table */
    ROUTE_SHARE,     /* /p/{id}: the dashboard's plan page */
    ROUTE_DIFF,      /* /api/v1/diff?a=ID&b=ID: two plans compared */
    ROUTE_WHATIF,    /* /api/v1/plans/{id}/whatif: POST overrides, a new plan */
    ROUTE_DIFF_PAGE, /* /d/{a}/{b}: the dashboard's diff page */
    ROUTE_VENDOR,
    ROUTE_STATIC,
    ROUTE_COUNT
};

enum route_method {
    ROUTE_METHOD_GET = 1,
    ROUTE_METHOD_HEAD = 2,
    ROUTE_METHOD_POST = 4,
    ROUTE_METHOD_DELETE = 8,
    ROUTE_METHOD_OTHER = 16,
};

struct route_match {
    enum route_id id;
    int method;                   /* enum route_method */
    int status;                   /* 0 when matched, else 404 or 405 */
    const char *allow;            /* for 405: static string, e.g. "GET, HEAD, POST" */
    char plan_id[IDS_ID_LEN + 1]; /* ids_valid_id() */
    const char *path;             /* ROUTE_STATIC/ROUTE_VENDOR: file path relative to the root,
                                     pointing into the url argument (borrowed) */
};

int route_method_parse(const char *method);

/* Fills *m for method and the percent-decoded url (borrowed; m->path points into it). */
void route_match(const char *method, const char *url, struct route_match *m);

/* Stable label for metrics: "plans", "plan", "static", ... ("unmatched" for ROUTE_NONE). */
const char *route_name(enum route_id id);

#endif
