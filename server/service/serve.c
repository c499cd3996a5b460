/*
 * serve.c - the answers made on the MHD thread (serve.h).
 */
#include "service/serve.h"

#include "service/plancache.h"
#include "service/request.h"
#include "service/response.h"
#include "service/server.h"

/* Shown at /p/{id} until the dashboard's static/plan.html exists. No inline script: the
 * CSP forbids it. */
static const char share_fallback[] =
    "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>tpuplan plan</title>"
    "</head><body><h1>tpuplan plan</h1><p>The dashboard is not installed on this server. The "
    "plan is available as JSON under <code>/api/v1/plans/</code> followed by the id in this "
    "page's address.</p></body></html>\n";

bool serve_healthz(struct request *r)
{
    static const char ok[] = "{\"status\":\"ok\"}";

    request_reply(r, 200, response_copy(ok, sizeof(ok) - 1, "application/json"));
    return true;
}

/* A document main.c built once (NULL: it could not): a response of its own (a few KB
 * copied) so it can carry the request id. */
static bool serve_document(struct request *r, const char *doc, size_t len)
{
    struct MHD_Response *resp = doc != NULL ? response_copy(doc, len, "application/json") : NULL;

    if (resp == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return true;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "public, max-age=300");
    request_reply(r, 200, resp);
    return true;
}

bool serve_chips(struct request *r)
{
    return serve_document(r, r->srv->chips, r->srv->chips_len);
}

bool serve_recipes(struct request *r)
{
    return serve_document(r, r->srv->recipes, r->srv->recipes_len);
}

/* r->route.path under root; noindex marks pages showing someone's plans; fallback (may be
 * NULL) is the HTML answered when the file is missing. Always answers. */
static bool serve_file(struct request *r, const struct static_root *root, bool noindex,
                       const char *fallback, size_t fallback_len)
{
    int status;
    struct MHD_Response *resp = static_serve(root, r->route.path, r->if_none_match, &status);

    if (resp == NULL && status == 404 && fallback != NULL) {
        resp = response_copy(fallback, fallback_len, "text/html; charset=utf-8");
        status = 200;
    }
    if (resp == NULL) {
        request_reply_problem(r, PROBLEM_NOT_FOUND, "There is no such file or endpoint.");
        return true;
    }
    if (noindex)
        MHD_add_response_header(resp, "X-Robots-Tag", "noindex");
    request_reply(r, status, resp);
    return true;
}

bool serve_static(struct request *r)
{
    return serve_file(r, &r->srv->static_root, false, NULL, 0);
}

bool serve_vendor(struct request *r)
{
    return serve_file(r, &r->srv->vendor_root, false, NULL, 0);
}

bool serve_page(struct request *r)
{
    return serve_file(r, &r->srv->static_root, true, NULL, 0);
}

bool serve_share(struct request *r)
{
    return serve_file(r, &r->srv->static_root, true, share_fallback, sizeof(share_fallback) - 1);
}

bool serve_plan_cached(struct request *r)
{
    char etag[PLANCACHE_ETAG_MAX + 1];
    struct MHD_Response *resp;

    /* ?format=trace is made per request (api.c), never from the cache of plan views */
    if (r->param[REQ_PARAM_FORMAT] != NULL)
        return false;
    resp = plancache_get(r->srv->cache, r->route.plan_id, r->param[REQ_PARAM_VIEW], etag);
    if (resp == NULL)
        return false;
    if (request_reply_not_modified(r, etag))
        MHD_destroy_response(resp);
    else
        request_reply(r, 200, resp);
    return true;
}
