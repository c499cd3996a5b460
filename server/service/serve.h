/*
 * serve.h - the answers made on the MHD thread: /healthz, the chip table, the dashboard's
 * files and pages, and finished plans from the cache (route.h: a row's `fast` handler).
 *
 * Each is a route_fast_fn: it reads only what the request captured, local files and memory
 * (never the database), answers with request_reply() and returns true; serve_plan_cached()
 * returns false on a miss so that the plan is read from the database instead.
 */
#ifndef TPUPLAN_SERVE_H
#define TPUPLAN_SERVE_H

#include <stdbool.h>

struct request;

/* GET /healthz: 200 {"status":"ok"} while the process runs (readiness is /readyz). */
bool serve_healthz(struct request *r);

/* GET /api/v1/chips: the chip table main.c built once (server.h chips), cacheable 300 s. */
bool serve_chips(struct request *r);

/* GET /api/v1/recipes: what a recipe may name (recipe.h recipe_catalog), built once by main.c
 * (server.h recipes), cacheable 300 s. */
bool serve_recipes(struct request *r);

/* The file r->route.path under the static root (--static), 304 on its ETag, 404 problem
 * when missing. */
bool serve_static(struct request *r);

/* The same under the vendor root (--vendor): the dashboard's third-party libraries. */
bool serve_vendor(struct request *r);

/* A page that shows someone's plans (/d/{a}/{b}): a static file marked X-Robots-Tag:
 * noindex. */
bool serve_page(struct request *r);

/* /p/{id}: like serve_page, with a short page saying where the JSON is when the dashboard
 * is not installed. */
bool serve_share(struct request *r);

/* GET /api/v1/plans/{id}: a finished plan from the cache (plancache.h), 304 on its ETag;
 * false on a miss or with ?format= (made per request by api.c). */
bool serve_plan_cached(struct request *r);

#endif
