/*
 * route.c - the route table and its matcher (route.h).
 */
#include "service/route.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
#include <string.h>

#include "service/api.h"
#include "service/api_diff.h"
#include "service/api_frontier.h"
#include "service/log.h"
#include "service/memtrim.h"
#include "service/request.h"
#include "service/serve.h"
#include "service/store.h"

/* Specific rows before the fences of their prefix; the catch-all for static files last.
 * The order of first names is the order of the metrics series. */
const struct route route_table[] = {
    {"/healthz", "healthz", ROUTE_GET, .fast = serve_healthz, .query = ""},
    {"/readyz", "readyz", ROUTE_GET, .exec = api_readyz, .query = "", .lane = ROUTE_LANE_OPS},
    {"/metrics", "metrics", ROUTE_GET, .exec = api_metrics, .query = "", .lane = ROUTE_LANE_OPS},
    {"/api/v1/openapi.json", "openapi", ROUTE_GET, .fast = serve_static, .file = "openapi.json",
     .query = ""},
    {"/api/v1/plans[/]", "plans", ROUTE_GET, .exec = api_plan_list, .query = "limit, cursor, name"},
    {"/api/v1/plans[/]", "plans", ROUTE_POST, .exec = api_plan_create, .body = true},
    /* ?format=trace and cache misses go on to the database; of a large plan, all but the
     * summary view are large reads (admit.h) */
    {"/api/v1/plans/{id}", "plan", ROUTE_GET, .fast = serve_plan_cached, .exec = api_plan_get,
     .query = "view, format"},
    {"/api/v1/plans/{id}", "plan", ROUTE_DELETE, .exec = api_plan_delete, .query = ""},
    {"/api/v1/chips", "chips", ROUTE_GET, .fast = serve_chips, .query = ""},
    {"/api/v1/recipes", "recipes", ROUTE_GET, .fast = serve_recipes, .query = ""},
    {"/p/{id}", "share", ROUTE_GET, .fast = serve_share, .file = "plan.html"},
    {"/api/v1/diff", "diff", ROUTE_GET, .exec = api_diff, .query = "a, b"},
    {"/api/v1/plans/{id}/whatif", "whatif", ROUTE_POST, .exec = api_plan_whatif, .body = true},
    {"/api/v1/plans/{id}/frontiers", "frontiers", ROUTE_GET, .exec = api_frontier_list,
     .query = ""},
    {"/api/v1/plans/{id}/frontiers", "frontiers", ROUTE_POST, .exec = api_frontier_create,
     .body = true, .query = ""},
    {"/api/v1/frontiers/{id}", "frontier", ROUTE_GET, .exec = api_frontier_get, .query = ""},
    {"/d/{id}/{id}", "diff_page", ROUTE_GET, .fast = serve_page, .file = "diff.html"},
    {"/vendor/{*}", "vendor", ROUTE_GET, .fast = serve_vendor},
    /* fences: never a static file */
    {"/api", .methods = 0},
    {"/api/{*}", .methods = 0},
    {"/p/{*}", .methods = 0},
    {"/d/{*}", .methods = 0},
    {"/{*}", "static", ROUTE_GET, .fast = serve_static, .file = "index.html"},
};

const size_t route_count = sizeof(route_table) / sizeof(route_table[0]);

_Static_assert(sizeof(route_table) / sizeof(route_table[0]) <= ROUTE_MAX,
               "route.h: raise ROUTE_MAX (the metrics arrays are sized by it)");

bool route_takes_param(const struct route *row, const char *name)
{
    size_t n = strlen(name);

    if (row->query == NULL)
        return true;
    for (const char *q = row->query; *q != '\0';) {
        size_t k = strcspn(q, ",");
        if (k == n && strncmp(q, name, n) == 0)
            return true;
        q += k;
        q += strspn(q, ", ");
    }
    return false;
}

int route_method_parse(const char *method)
{
    static const struct {
        const char *name;
        int bit;
    } methods[] = {
        {"GET", ROUTE_GET}, {"HEAD", ROUTE_HEAD}, {"POST", ROUTE_POST}, {"DELETE", ROUTE_DELETE}};
    size_t i;

    for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
        if (strcmp(method, methods[i].name) == 0)
            return methods[i].bit;
    return ROUTE_OTHER;
}

/* True when url matches pat; then *id holds its first {id} ("" when none) and *rest what {*}
 * took (NULL when the pattern has none). */
static bool pattern_match(const char *pat, const char *url, char id[IDS_ID_LEN + 1],
                          const char **rest)
{
    char seg[IDS_ID_LEN + 1];

    id[0] = '\0';
    *rest = NULL;
    while (*pat != '\0') {
        if (strcmp(pat, "{*}") == 0) {
            *rest = url;
            return true;
        }
        if (strcmp(pat, "[/]") == 0)
            return url[0] == '\0' || strcmp(url, "/") == 0;
        if (strncmp(pat, "{id}", 4) == 0) {
            if (strnlen(url, IDS_ID_LEN) < IDS_ID_LEN)
                return false;
            memcpy(seg, url, IDS_ID_LEN);
            seg[IDS_ID_LEN] = '\0';
            if (!ids_valid_id(seg))
                return false;
            if (id[0] == '\0')
                memcpy(id, seg, sizeof(seg));
            pat += 4;
            url += IDS_ID_LEN;
            continue;
        }
        if (*pat++ != *url++)
            return false;
    }
    return *url == '\0';
}

/* The Allow header's text for method bits (GET brings HEAD). */
static void allow_text(int methods, char *out, size_t cap)
{
    static const struct {
        int bit;
        const char *text;
    } names[] = {{ROUTE_GET, "GET, HEAD"}, {ROUTE_POST, "POST"}, {ROUTE_DELETE, "DELETE"}};
    size_t i, n = 0;

    out[0] = '\0';
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (methods & names[i].bit)
            n += (size_t)snprintf(out + n, cap - n, "%s%s", n > 0 ? ", " : "", names[i].text);
}

void route_match(const char *method, const char *url, struct route_match *m)
{
    const struct route *first = NULL;
    const char *rest = NULL;
    int want, allowed = 0;
    size_t i;

    memset(m, 0, sizeof(*m));
    m->method = route_method_parse(method);
    want = m->method == ROUTE_HEAD ? ROUTE_GET : m->method;
    for (i = 0; i < route_count; i++) {
        const struct route *row = &route_table[i];
        if (first == NULL) {
            if (!pattern_match(row->pattern, url, m->plan_id, &rest))
                continue;
            first = row;
            m->path = rest != NULL && (rest[0] != '\0' || row->file == NULL) ? rest : row->file;
        } else if (strcmp(row->pattern, first->pattern) != 0) {
            continue;
        }
        if (row->methods == 0)
            break; /* a fence */
        allowed |= row->methods;
        if (row->methods & want) {
            m->row = row;
            return;
        }
    }
    if (allowed == 0) {
        memset(m->plan_id, 0, sizeof(m->plan_id));
        m->path = NULL;
        m->status = 404;
        return;
    }
    m->row = first;
    m->status = 405;
    allow_text(allowed, m->allow, sizeof(m->allow));
}

unsigned route_series(const struct route *row)
{
    size_t i;

    if (row == NULL || row->name == NULL)
        return 0;
    for (i = 0; i < route_count; i++)
        if (route_table[i].name != NULL && strcmp(route_table[i].name, row->name) == 0)
            return (unsigned)i + 1;
    return 0;
}

const char *route_series_name(unsigned s)
{
    if (s == 0 || s > route_count || route_series(&route_table[s - 1]) != s)
        return "unmatched";
    return route_table[s - 1].name;
}

/* Runs r's row's exec handler; true when the memory it freed should be given back: it had
 * a large body (a submission of MEMTRIM_LARGE or more), or heavy, or its connection shed
 * large buffers (store.h). */
static bool route_exec(struct store *st, struct request *r, bool heavy)
{
    /* Read first: once answered, r may be gone. A parked request's body was read before. */
    bool large = heavy || (r->body.len >= MEMTRIM_LARGE && !r->exec.parked);

    /* Copied, so lines logged after the reply (when r may be gone) still carry it. */
    log_set_request(r->id);
    if (r->route.row != NULL && r->route.row->exec != NULL)
        r->route.row->exec(st, r);
    else
        request_reply_problem(r, PROBLEM_INTERNAL, "Unroutable request.");
    log_set_request(NULL);
    return store_shed(st) || large;
}

void route_run(struct store *st, struct request *r)
{
    if (route_exec(st, r, false))
        memtrim_release();
}

/* The heavy lane's threads run at this nice value, so that on a busy machine the scheduler
 * gives a core to the operators' endpoints and the other requests first. */
#define HEAVY_NICE 10

void route_run_heavy(struct store *st, struct request *r)
{
    static _Thread_local bool niced;

    if (!niced) {
        niced = true;
        /* per thread on Linux (setpriority(2)); if refused, it only runs at the usual one */
        (void)setpriority(PRIO_PROCESS, (id_t)gettid(), HEAVY_NICE);
    }
    if (route_exec(st, r, true))
        memtrim_release();
}
