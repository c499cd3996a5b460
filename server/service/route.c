/*
 * route.c - the URL table.
 */
#include "service/route.h"

#include <string.h>

static const char *const route_names[ROUTE_COUNT] = {
    [ROUTE_NONE] = "unmatched",      [ROUTE_HEALTHZ] = "healthz", [ROUTE_READYZ] = "readyz",
    [ROUTE_METRICS] = "metrics",     [ROUTE_OPENAPI] = "openapi", [ROUTE_PLANS] = "plans",
    [ROUTE_PLAN] = "plan",           [ROUTE_CHIPS] = "chips",     [ROUTE_SHARE] = "share",
    [ROUTE_VENDOR] = "vendor",       [ROUTE_STATIC] = "static",   [ROUTE_DIFF] = "diff",
    [ROUTE_DIFF_PAGE] = "diff_page", [ROUTE_WHATIF] = "whatif",
};

const char *route_name(enum route_id id)
{
    if ((unsigned)id >= ROUTE_COUNT)
        return "unmatched";
    return route_names[id];
}

int route_method_parse(const char *method)
{
    if (strcmp(method, "GET") == 0)
        return ROUTE_METHOD_GET;
    if (strcmp(method, "HEAD") == 0)
        return ROUTE_METHOD_HEAD;
    if (strcmp(method, "POST") == 0)
        return ROUTE_METHOD_POST;
    if (strcmp(method, "DELETE") == 0)
        return ROUTE_METHOD_DELETE;
    return ROUTE_METHOD_OTHER;
}

/* Sets the match, or 405 when the method is not among `allowed`. */
static void route_set(struct route_match *m, enum route_id id, int allowed, const char *allow)
{
    m->id = id;
    if ((m->method & allowed) == 0) {
        m->status = 405;
        m->allow = allow;
    }
}

/* /d/{a}/{b}: two valid plan ids (the page reads them from its address), else 404. */
static void route_diff_page(const char *ids, struct route_match *m)
{
    char a[IDS_ID_LEN + 1];

    if (strlen(ids) != 2 * IDS_ID_LEN + 1 || ids[IDS_ID_LEN] != '/') {
        m->status = 404;
        return;
    }
    memcpy(a, ids, IDS_ID_LEN);
    a[IDS_ID_LEN] = '\0';
    if (!ids_valid_id(a) || !ids_valid_id(ids + IDS_ID_LEN + 1)) {
        m->status = 404;
        return;
    }
    route_set(m, ROUTE_DIFF_PAGE, ROUTE_METHOD_GET | ROUTE_METHOD_HEAD, "GET, HEAD");
    m->path = "diff.html";
}

void route_match(const char *method, const char *url, struct route_match *m)
{
    static const char plans[] = "/api/v1/plans";
    static const char share[] = "/p/";
    static const char vendor[] = "/vendor/";
    const int get = ROUTE_METHOD_GET | ROUTE_METHOD_HEAD;

    memset(m, 0, sizeof(*m));
    m->method = route_method_parse(method);
    m->id = ROUTE_NONE;
    if (strcmp(url, "/healthz") == 0) {
        route_set(m, ROUTE_HEALTHZ, get, "GET, HEAD");
    } else if (strcmp(url, "/readyz") == 0) {
        route_set(m, ROUTE_READYZ, get, "GET, HEAD");
    } else if (strcmp(url, "/metrics") == 0) {
        route_set(m, ROUTE_METRICS, get, "GET, HEAD");
    } else if (strcmp(url, "/api/v1/openapi.json") == 0) {
        route_set(m, ROUTE_OPENAPI, get, "GET, HEAD");
        m->path = "openapi.json";
    } else if (strcmp(url, "/api/v1/chips") == 0) {
        route_set(m, ROUTE_CHIPS, get, "GET, HEAD");
    } else if (strcmp(url, plans) == 0 || strcmp(url, "/api/v1/plans/") == 0) {
        route_set(m, ROUTE_PLANS, get | ROUTE_METHOD_POST, "GET, HEAD, POST");
    } else if (strncmp(url, plans, sizeof(plans) - 1) == 0 && url[sizeof(plans) - 1] == '/') {
        const char *id = url + sizeof(plans);
        if (strlen(id) > IDS_ID_LEN && strcmp(id + IDS_ID_LEN, "/whatif") == 0) {
            memcpy(m->plan_id, id, IDS_ID_LEN);
            m->plan_id[IDS_ID_LEN] = '\0';
            if (!ids_valid_id(m->plan_id)) {
                m->status = 404;
                return;
            }
            route_set(m, ROUTE_WHATIF, ROUTE_METHOD_POST, "POST");
            return;
        }
        if (!ids_valid_id(id)) {
            m->status = 404;
            return;
        }
        memcpy(m->plan_id, id, IDS_ID_LEN + 1);
        route_set(m, ROUTE_PLAN, get | ROUTE_METHOD_DELETE, "GET, HEAD, DELETE");
    } else if (strcmp(url, "/api/v1/diff") == 0) {
        route_set(m, ROUTE_DIFF, get, "GET, HEAD");
    } else if (strncmp(url, "/api/", 5) == 0 || strcmp(url, "/api") == 0) {
        m->status = 404;
    } else if (strncmp(url, share, sizeof(share) - 1) == 0) {
        const char *id = url + sizeof(share) - 1;
        if (!ids_valid_id(id)) {
            m->status = 404;
            return;
        }
        memcpy(m->plan_id, id, IDS_ID_LEN + 1);
        route_set(m, ROUTE_SHARE, get, "GET, HEAD");
        m->path = "plan.html";
    } else if (strncmp(url, "/d/", 3) == 0) {
        route_diff_page(url + 3, m);
    } else if (strncmp(url, vendor, sizeof(vendor) - 1) == 0) {
        route_set(m, ROUTE_VENDOR, get, "GET, HEAD");
        m->path = url + sizeof(vendor) - 1;
    } else if (url[0] == '/') {
        route_set(m, ROUTE_STATIC, get, "GET, HEAD");
        m->path = url[1] == '\0' ? "index.html" : url + 1;
    } else {
        m->status = 404;
    }
}
