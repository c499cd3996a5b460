/*
 * api.c - REST handlers: create, get, list and delete plans; readiness and metrics.
 *
 * Plan documents are built with json-c for the small fields; the stored result and error
 * documents (already JSON text) are spliced in verbatim rather than re-parsed, since a
 * result can be megabytes. GET /api/v1/plans/{id}?view=summary|layout serves the small
 * forms of the result the store keeps (store_plan_get_view), so the dashboard never has
 * to download a whole 100,000-tensor result to draw it.
 */
#include "service/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "planner/budget.h"
#include "planner/bytes.h"
#include "planner/clock.h"
#include "planner/plan.h"
#include "planner/text.h"
#include "planner/trace.h"
#include "service/auth.h"
#include "service/exec.h"
#include "service/jobs.h"
#include "service/log.h"
#include "service/metrics.h"
#include "service/plancache.h"
#include "service/admit.h"
#include "service/api_diff.h"
#include "service/api_params.h"
#include "service/api_whatif.h"
#include "service/planopts.h"
#include "service/problem.h"
#include "service/request.h"
#include "service/response.h"
#include "service/server.h"
#include "service/sha256.h"
#include "service/store.h"
#include "service/storeerr.h"

#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define STR_(x)    #x
#define STR(x)     STR_(x)
#define IDEMPOTENCY_KEY_DETAIL                                                                     \
    "Idempotency-Key must be 1 to " STR(STORE_KEY_MAX) " bytes of UTF-8 text."

/* A 400 invalid-parameter whose where names the parameter or header at fault. */
static void reply_bad_param(struct request *r, const char *where, const char *detail)
{
    request_reply(
        r, problem_types[PROBLEM_INVALID_PARAMETER].status,
        response_problem(PROBLEM_INVALID_PARAMETER, r->srv->cfg->base_path, detail, where, NULL));
}

/* Answers a store failure: 503 (database down), 400 (bad argument), 404 or 500. */
static void reply_store_error(struct request *r, int rc)
{
    storeerr_reply(r, rc);
}

/* Takes ownership of o; returns its text (malloc'd) or NULL. */
static char *json_take_text(struct json_object *o, size_t *len)
{
    size_t n = 0;
    const char *t = json_object_to_json_string_length(o, JSON_FLAGS, &n);
    char *out = t != NULL ? malloc(n + 1) : NULL;

    if (out != NULL) {
        memcpy(out, t, n + 1);
        *len = n;
    }
    json_object_put(o);
    return out;
}

static void add_str(struct json_object *o, const char *k, const char *v)
{
    json_object_object_add(o, k, v != NULL ? json_object_new_string(v) : NULL);
}

/* Links are absolute paths under --base-path (config.h), so they work behind a proxy. A
 * what-if (parent not NULL or "") also links its parent and its diff against it. */
static struct json_object *links_new(const char *base, const char *id, const char *parent)
{
    struct json_object *l = json_object_new_object();
    char buf[CONFIG_BASE_MAX + 96];

    snprintf(buf, sizeof(buf), "%s/api/v1/plans/%s", base, id);
    add_str(l, "self", buf);
    snprintf(buf, sizeof(buf), "%s/p/%s", base, id);
    add_str(l, "share", buf);
    if (parent != NULL && parent[0] != '\0') {
        snprintf(buf, sizeof(buf), "%s/p/%s", base, parent);
        add_str(l, "parent", buf);
        snprintf(buf, sizeof(buf), "%s/api/v1/diff?a=%s&b=%s", base, parent, id);
        add_str(l, "diff", buf);
        snprintf(buf, sizeof(buf), "%s/d/%s/%s", base, parent, id);
        add_str(l, "compare", buf);
    }
    return l;
}

static struct json_object *summary_new(const struct plan_summary *s)
{
    struct json_object *o = json_object_new_object();

    json_object_object_add(o, "tensors", json_object_new_int64((int64_t)s->tensors));
    json_object_object_add(o, "logical_bytes", json_object_new_uint64(s->logical_bytes));
    json_object_object_add(o, "padded_bytes", json_object_new_uint64(s->padded_bytes));
    json_object_object_add(o, "peak_bytes", json_object_new_uint64(s->peak_bytes));
    json_object_object_add(o, "lower_bound_bytes", json_object_new_uint64(s->lower_bound_bytes));
    json_object_object_add(o, "capacity_bytes", json_object_new_uint64(s->capacity_bytes));
    json_object_object_add(o, "fits", json_object_new_boolean(s->fits));
    return o;
}

/* The views of GET /api/v1/plans/{id}: the name in ?view=, the key the stored document
 * goes under in the plan document, and the ETag suffix (each view is its own entity). */
static const struct {
    const char *name;
    const char *key;
    const char *etag_suffix;
} views[] = {
    [STORE_VIEW_FULL] = {NULL, "result", ""},
    [STORE_VIEW_SUMMARY] = {"summary", "result", "-summary"},
    [STORE_VIEW_LAYOUT] = {"layout", "layout", "-layout"},
};

/* NULL (no ?view=) is the whole plan; -1 for a name that is not a view. */
static int view_parse(const char *s, enum store_view *v)
{
    size_t i;

    *v = STORE_VIEW_FULL;
    if (s == NULL)
        return 0;
    for (i = 1; i < sizeof(views) / sizeof(views[0]); i++) {
        if (strcmp(s, views[i].name) == 0) {
            *v = (enum store_view)i;
            return 0;
        }
    }
    return -1;
}

/* A plan document in parts (response.h's response_parts), sent without joining them: the
 * small fields as one object, then each stored document (the result in the form view asks
 * for, the error, what-if, a what-if's inline diff) spliced in where it lies, the result as
 * libpq read it. It owns the plan it is made of. */
struct plan_doc {
    struct store_plan p;
    char *head; /* the small fields' object, without its '}' */
    char *diff; /* reply_plan's inline diff, or NULL */
    struct response_part part[RESPONSE_PARTS_MAX];
    size_t n, len;
};

static void plan_doc_free(void *owner)
{
    struct plan_doc *d = owner;

    store_plan_free(&d->p);
    free(d->head);
    free(d->diff);
    free(d);
}

static void doc_part(struct plan_doc *d, const char *p, size_t len)
{
    d->part[d->n++] = (struct response_part){p, len};
    d->len += len;
}

/* `,"key":` and the document text, when there is one. */
static void doc_member(struct plan_doc *d, const char *member, const char *text)
{
    if (text != NULL) {
        doc_part(d, member, strlen(member));
        doc_part(d, text, strlen(text));
    }
}

/* The plan document of GET /api/v1/plans/{id} for *p (taken: moved into the document, *p
 * left empty), manage_token added when not NULL, diff (taken) when not NULL. NULL when out
 * of memory (p and diff released). */
static struct plan_doc *plan_doc_new(const struct request *r, struct store_plan *p,
                                     enum store_view view, const char *manage_token, char *diff)
{
    static const char *const members[] = {[STORE_VIEW_FULL] = ",\"result\":",
                                          [STORE_VIEW_SUMMARY] = ",\"result\":",
                                          [STORE_VIEW_LAYOUT] = ",\"layout\":"};
    struct plan_doc *d = calloc(1, sizeof(*d));
    struct json_object *o = json_object_new_object();
    size_t hl = 0;

    if (d != NULL)
        d->p = *p;
    else
        store_plan_free(p);
    memset(p, 0, sizeof(*p));
    if (d == NULL) {
        json_object_put(o);
        free(diff);
        return NULL;
    }
    d->diff = diff;
    p = &d->p;
    add_str(o, "id", p->id);
    add_str(o, "name", p->name);
    add_str(o, "chip", p->chip);
    add_str(o, "source_format", p->source_format);
    add_str(o, "status", p->status);
    add_str(o, "created_at", p->created_at);
    add_str(o, "updated_at", p->updated_at);
    add_str(o, "expires_at", p->expires_at);
    json_object_object_add(o, "summary", summary_new(&p->summary));
    if (p->parent_id[0] != '\0')
        add_str(o, "parent_id", p->parent_id);
    json_object_object_add(o, "links", links_new(r->srv->cfg->base_path, p->id, p->parent_id));
    if (manage_token != NULL && manage_token[0] != '\0')
        add_str(o, "manage_token", manage_token);
    if ((d->head = json_take_text(o, &hl)) == NULL) {
        plan_doc_free(d);
        return NULL;
    }
    doc_part(d, d->head, hl - 1); /* without the object's '}' */
    doc_member(d, members[view], p->result_json);
    doc_member(d, ",\"error\":", p->error_json);
    doc_member(d, ",\"whatif\":", p->whatif_json);
    doc_member(d, ",\"diff\":", d->diff);
    doc_part(d, "}", 1);
    return d;
}

/* The document as one malloc'd text (d->len bytes), for the plan cache; NULL when out of
 * memory. */
static char *plan_doc_join(const struct plan_doc *d)
{
    char *t = malloc(d->len > 0 ? d->len : 1), *at = t;

    for (size_t i = 0; t != NULL && i < d->n; i++) {
        memcpy(at, d->part[i].p, d->part[i].len);
        at += d->part[i].len;
    }
    return t;
}

/* The response sending d (taken). */
static struct MHD_Response *plan_doc_response(struct plan_doc *d)
{
    return response_parts(d->part, d->n, "application/json", plan_doc_free, d);
}

static bool finished(const struct store_plan *p)
{
    return strcmp(p->status, "done") == 0 || strcmp(p->status, "failed") == 0;
}

static void etag_of(const struct store_plan *p, enum store_view view, char *buf, size_t cap)
{
    snprintf(buf, cap, "\"%s-%lld%s\"", p->id, (long long)p->version, views[view].etag_suffix);
}

static void add_location(struct MHD_Response *resp, const char *base, const char *id)
{
    char loc[CONFIG_BASE_MAX + 64];

    snprintf(loc, sizeof(loc), "%s/api/v1/plans/%s", base, id);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
}

/* ---- GET /api/v1/plans/{id}?format=trace ---- */

/* The plan's memory timeline as Chrome/Perfetto trace JSON, made from its stored layout
 * view (trace.h); 409 while the plan has no result. */
static void api_plan_trace(struct store *st, struct request *r)
{
    struct store_plan p;
    struct MHD_Response *resp;
    struct err e;
    char etag[64], disp[96];
    char *out = NULL;
    size_t len = 0;
    int rc;

    memset(&p, 0, sizeof(p));
    rc = store_plan_get_view(st, r->route.plan_id, STORE_VIEW_LAYOUT, &p);
    if (rc != STORE_OK) {
        reply_store_error(r, rc);
        return;
    }
    if (strcmp(p.status, "done") != 0 || p.result_json == NULL) {
        request_reply_problem(r, PROBLEM_NO_RESULT,
                              strcmp(p.status, "failed") == 0
                                  ? "The plan failed: it has no memory timeline to export."
                                  : "The plan is not done yet; ask again when it is.");
        goto out;
    }
    snprintf(etag, sizeof(etag), "\"%s-%lld-trace\"", p.id, (long long)p.version);
    if (request_reply_not_modified(r, etag))
        goto out;
    err_clear(&e);
    if (trace_from_layout(p.result_json, strlen(p.result_json), p.name != NULL ? p.name : p.id,
                          &out, &len, NULL, &e) != ERR_OK) {
        request_reply_problem(r, e.code == ERR_NOMEM ? PROBLEM_OUT_OF_MEMORY : PROBLEM_INTERNAL,
                              e.msg);
        goto out;
    }
    resp = response_take(out, len, "application/json");
    if (resp != NULL) {
        snprintf(disp, sizeof(disp), "attachment; filename=\"%s.trace.json\"", p.id);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, disp);
    }
    request_reply(r, 200, resp);
out:
    store_plan_free(&p);
}

/* ---- GET /api/v1/plans/{id} ---- */

void api_plan_get(struct store *st, struct request *r)
{
    struct store_plan p;
    struct plan_doc *d;
    struct MHD_Response *resp;
    enum store_view view;
    char etag[64];
    bool done, cache;
    int rc;

    if (view_parse(r->param[REQ_PARAM_VIEW], &view) != 0) {
        request_reply_problem(r, PROBLEM_INVALID_PARAMETER,
                              "view must be summary or layout (or absent for the whole plan).");
        return;
    }
    if (r->param[REQ_PARAM_FORMAT] != NULL) {
        if (strcmp(r->param[REQ_PARAM_FORMAT], "trace") != 0 || r->param[REQ_PARAM_VIEW] != NULL)
            request_reply_problem(r, PROBLEM_INVALID_PARAMETER,
                                  "format must be trace (or absent), and not given with view.");
        else if (admit_plans(st, r, r->route.plan_id, NULL))
            api_plan_trace(st, r);
        return;
    }
    /* the summary view is small whatever the plan */
    if (view != STORE_VIEW_SUMMARY && !admit_plans(st, r, r->route.plan_id, NULL))
        return;
    memset(&p, 0, sizeof(p));
    rc = store_plan_get_view(st, r->route.plan_id, view, &p);
    if (rc != STORE_OK) {
        reply_store_error(r, rc);
        return;
    }
    etag_of(&p, view, etag, sizeof(etag));
    done = finished(&p);
    /* Not cached when it expires before the cache entry would: the cache must not outlive
     * it (a GET after expires_at is 410). */
    cache = done && p.expires_in_s > (double)r->srv->cfg->cache_ttl_s + 1;
    if ((d = plan_doc_new(r, &p, view, NULL, NULL)) == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return;
    }
    /* A copy for the cache, which owns its bodies outright: only one it would keep. */
    if (cache && plancache_keeps(r->srv->cache, d->len))
        plancache_put(r->srv->cache, d->p.id, views[view].name, etag, plan_doc_join(d), d->len);
    if (request_reply_not_modified(r, etag)) {
        plan_doc_free(d);
        return;
    }
    resp = plan_doc_response(d);
    if (resp != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        if (!done)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    }
    request_reply(r, 200, resp);
}

/* ---- GET /api/v1/plans ---- */

/* Whose plans r lists (server/service/README.md#private-plans): every plan under
 * --public-list, else those of the API key and of the client token r presents (key and
 * client hold them). -1 after answering: an unknown or revoked key, a malformed token. */
static int list_owner(struct store *st, struct request *r, struct store_list_owner *o,
                      struct store_apikey *key, unsigned char client[SHA256_LEN])
{
    enum auth_result a;

    memset(o, 0, sizeof(*o));
    if (r->srv->cfg->public_list) {
        o->all = true;
        return 0;
    }
    a = auth_key(st, r, false, key);
    if (a == AUTH_ANSWERED)
        return -1;
    if (a == AUTH_OK)
        o->key_id = key->id;
    a = auth_client(r, client);
    if (a == AUTH_ANSWERED)
        return -1;
    if (a == AUTH_OK)
        o->client_hash = client;
    return 0;
}

void api_plan_list(struct store *st, struct request *r)
{
    char *items = NULL, *next = NULL, *doc = NULL;
    struct store_list_owner owner;
    struct store_apikey key;
    unsigned char client[SHA256_LEN];
    struct MHD_Response *resp;
    uint64_t limit = 20;
    size_t len;
    int rc;

    if (r->param[REQ_PARAM_LIMIT] != NULL &&
        (reqparse_u64(r->param[REQ_PARAM_LIMIT], &limit) != 0 || limit == 0)) {
        request_reply_problem(r, PROBLEM_INVALID_PARAMETER,
                              "limit must be a whole number from 1 to 100.");
        return;
    }
    if (limit > 100)
        limit = 100;
    if (r->param[REQ_PARAM_NAME] != NULL &&
        !text_utf8_valid(r->param[REQ_PARAM_NAME], strlen(r->param[REQ_PARAM_NAME]))) {
        reply_bad_param(r, "name", "name must be UTF-8 text (percent-encoded in the URL).");
        return;
    }
    if (list_owner(st, r, &owner, &key, client) != 0)
        return;
    rc = store_plan_list(st, &owner, (int)limit, r->param[REQ_PARAM_CURSOR],
                         r->param[REQ_PARAM_NAME], &items, &next);
    if (rc != STORE_OK) {
        if (rc == STORE_INVALID)
            request_reply_problem(r, PROBLEM_INVALID_PARAMETER,
                                  "cursor is not a cursor this server returned.");
        else
            reply_store_error(r, rc);
        goto out;
    }
    {
        size_t il = strlen(items), nl = next != NULL ? strlen(next) : 0;
        len = il + nl + 96;
        doc = malloc(len);
        if (doc == NULL) {
            request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
            goto out;
        }
        /* scope: whose plans these are, so a page can say "yours" or "everyone's" */
        len = (size_t)snprintf(
            doc, len, "{\"items\":%s,\"next_cursor\":%s%s%s,\"limit\":%d,\"scope\":\"%s\"}", items,
            next != NULL ? "\"" : "", next != NULL ? next : "null", next != NULL ? "\"" : "",
            (int)limit, owner.all ? "all" : "mine");
    }
    resp = response_take(doc, len, "application/json");
    doc = NULL;
    if (resp != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        if (next != NULL) {
            char link[2304 + CONFIG_BASE_MAX], enc_c[512], enc_n[3 * REQ_PARAM_MAX + 1] = "";
            if (reqparse_urlencode(next, enc_c, sizeof(enc_c)) >= 0 &&
                (r->param[REQ_PARAM_NAME] == NULL ||
                 reqparse_urlencode(r->param[REQ_PARAM_NAME], enc_n, sizeof(enc_n)) >= 0)) {
                snprintf(link, sizeof(link),
                         "<%s/api/v1/plans?limit=%d&cursor=%s%s%s>; rel=\"next\"",
                         r->srv->cfg->base_path, (int)limit, enc_c,
                         r->param[REQ_PARAM_NAME] != NULL ? "&name=" : "", enc_n);
                MHD_add_response_header(resp, MHD_HTTP_HEADER_LINK, link);
            }
        }
    }
    request_reply(r, 200, resp);
out:
    free(doc);
    free(items);
    free(next);
}

/* ---- DELETE /api/v1/plans/{id} ---- */

/* 401 asking for the manage token returned at creation. */
static void reply_token_required(struct request *r)
{
    struct MHD_Response *resp = response_problem(PROBLEM_UNAUTHORIZED, r->srv->cfg->base_path,
                                                 "Send the manage token returned at creation as "
                                                 "Authorization: Bearer TOKEN.",
                                                 NULL, NULL);

    if (resp != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    request_reply(r, problem_types[PROBLEM_UNAUTHORIZED].status, resp);
}

/* Whether r may delete the plan own describes; answers r (401, 403, 503) when not. A plan
 * created with an API key is deleted with that key (another key: 403), and without
 * --require-key also with its manage token; a plan created without a key only with its
 * manage token (any key: 403), whatever the server requires. */
static bool may_delete(struct store *st, struct request *r, const struct store_plan_owner *own)
{
    const char *bearer = reqparse_bearer(r->authorization);
    char prefix[APIKEY_PREFIX_LEN + 1];
    unsigned char given[SHA256_LEN];
    struct store_apikey key;

    if (apikey_parse(bearer, prefix)) {
        if (auth_key(st, r, true, &key) == AUTH_ANSWERED)
            return false;
        if (own->api_key_id == key.id)
            return true;
        request_reply_problem(r, PROBLEM_FORBIDDEN,
                              own->api_key_id == 0
                                  ? "This plan was created without an API key; only its manage "
                                    "token can delete it."
                                  : "Another API key created this plan; only that key can "
                                    "delete it.");
        return false;
    }
    if (own->api_key_id != 0 && r->srv->cfg->require_key) {
        auth_reply_key_required(r, "An API key created this plan; only that key can delete it "
                                   "(send Authorization: Bearer tpk_...).");
        return false;
    }
    if (bearer == NULL) {
        reply_token_required(r);
        return false;
    }
    /* Compared here, in constant time, rather than by the database's bytea equality,
     * which stops at the first differing byte; and only the digests reach SQL. */
    sha256_of(bearer, strlen(bearer), given);
    if (sha256_equal_ct(given, own->token_hash, SHA256_LEN))
        return true;
    request_reply_problem(r, PROBLEM_FORBIDDEN,
                          "This token does not manage this plan; share links are read-only.");
    return false;
}

void api_plan_delete(struct store *st, struct request *r)
{
    struct store_plan_owner own;
    int rc = store_plan_owner(st, r->route.plan_id, &own);

    if (rc != STORE_OK) {
        reply_store_error(r, rc);
        return;
    }
    if (!may_delete(st, r, &own))
        return;
    rc = store_plan_delete(st, r->route.plan_id, own.token_hash);
    if (rc == STORE_OK) {
        plancache_evict(r->srv->cache, r->route.plan_id);
        request_reply(r, 204, response_copy("", 0, NULL));
    } else {
        reply_store_error(r, rc);
    }
}

/* ---- POST /api/v1/plans ---- */

/* The 202 document: {id, status, manage_token, links}. */
static void reply_accepted(struct request *r, const char *id, const char *status, const char *token,
                           bool waited)
{
    struct json_object *o = json_object_new_object();
    struct MHD_Response *resp;
    char *t;
    size_t len = 0;

    add_str(o, "id", id);
    add_str(o, "status", status);
    if (token != NULL && token[0] != '\0')
        add_str(o, "manage_token", token);
    if (r->exec.parent != NULL)
        add_str(o, "parent_id", r->exec.parent);
    json_object_object_add(o, "links", links_new(r->srv->cfg->base_path, id, r->exec.parent));
    t = json_take_text(o, &len);
    resp = t != NULL ? response_take(t, len, "application/json") : NULL;
    if (resp != NULL) {
        add_location(resp, r->srv->cfg->base_path, id);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
        if (waited) {
            char pa[32];
            snprintf(pa, sizeof(pa), "wait=%d", r->prefer_wait);
            MHD_add_response_header(resp, "Preference-Applied", pa);
        }
    }
    request_reply(r, 202, resp);
}

/* The largest diff a what-if's answer carries inline; a larger one is left to links.diff. */
#define WHATIF_DIFF_MAX (16u << 20)

/* A what-if's diff against its parent, for its answer: NULL when it is not one, not done, has
 * ADMIT_LARGE_TENSORS or more (the diff would be a large read, on the executor answering), or
 * the diff is larger than WHATIF_DIFF_MAX (links.diff has it then). */
static char *inline_diff(struct store *st, struct request *r, const struct store_plan *p)
{
    char *diff = NULL;
    size_t dlen = 0;

    if (r->exec.parent == NULL || p->parent_id[0] == '\0' || strcmp(p->status, "done") != 0 ||
        p->summary.tensors >= ADMIT_LARGE_TENSORS)
        return NULL;
    if (api_diff_text(st, p->parent_id, p->id, WHATIF_DIFF_MAX, &diff, &dlen) != 0)
        diff = NULL;
    return diff;
}

/* A finished plan *p (taken) as the answer to a POST: 200 (idempotent replay) or 201
 * (waited). A what-if that is done also carries its diff against its parent (api_diff.h). */
static void reply_plan(struct store *st, struct request *r, int status, struct store_plan *p,
                       const char *token)
{
    struct MHD_Response *resp;
    struct plan_doc *d;
    char etag[64], id[IDS_ID_LEN + 1], *diff = inline_diff(st, r, p);
    bool with_diff = diff != NULL;

    etag_of(p, STORE_VIEW_FULL, etag, sizeof(etag));
    snprintf(id, sizeof(id), "%s", p->id);
    if ((d = plan_doc_new(r, p, STORE_VIEW_FULL, token, diff)) == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return;
    }
    resp = plan_doc_response(d);
    if (resp != NULL) {
        /* with the diff the body is not GET's representation, so it has no ETag */
        if (!with_diff)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
        add_location(resp, r->srv->cfg->base_path, id);
        if (r->prefer_wait >= 0 && status == 201) {
            char pa[32];
            snprintf(pa, sizeof(pa), "wait=%d", r->prefer_wait);
            MHD_add_response_header(resp, "Preference-Applied", pa);
        }
    }
    request_reply(r, status, resp);
}

/* A parked Prefer: wait submission: answer when finished or due, else park again. */
static void api_plan_wait_check(struct store *st, struct request *r)
{
    struct store_plan p;
    int rc;

    memset(&p, 0, sizeof(p));
    if (r->exec.finished != NULL) {
        /* Handed over by the worker that finished it: no second read. */
        p = *r->exec.finished;
        free(r->exec.finished);
        r->exec.finished = NULL;
        rc = STORE_OK;
    } else {
        rc = store_plan_get(st, r->exec.plan_id, &p);
    }
    if (rc == STORE_OK && finished(&p)) {
        reply_plan(st, r, 201, &p, r->exec.manage_token);
    } else if (rc == STORE_NOTFOUND) {
        /* Deleted while we waited (the token holder did it). */
        reply_store_error(r, rc);
    } else if (clock_now() >= r->exec.deadline) {
        reply_accepted(r, r->exec.plan_id, rc == STORE_OK ? p.status : "queued",
                       r->exec.manage_token, true);
    } else {
        store_plan_free(&p);
        exec_park(r->srv->exec, r);
        return;
    }
    store_plan_free(&p);
}

bool api_queue_full(struct store *st, struct request *r)
{
    unsigned max = r->srv->cfg->max_queue;
    int64_t queued = 0;
    char d[160];
    int rc;

    if (max == 0)
        return false;
    rc = store_jobs_queued(st, max, &queued);
    if (rc != STORE_OK) {
        reply_store_error(r, rc);
        return true;
    }
    if (queued < (int64_t)max)
        return false;
    snprintf(d, sizeof(d),
             "%u plans and frontier searches are waiting to be run, the most this server "
             "queues; retry later.",
             max);
    request_reply_problem(r, PROBLEM_QUEUE_FULL, d);
    return true;
}

/* Who submits a new plan, and for how long it is kept: the same gate for every POST that
 * creates one (a submission or a what-if). */
struct submitter {
    struct store_apikey key;
    enum auth_result auth;
    enum auth_result client;               /* AUTH_OK: client_hash holds its digest */
    unsigned char client_hash[SHA256_LEN]; /* the client token's (auth.h), kept with the plan */
    uint64_t retain_s;
    /* Whose Idempotency-Keys these are (store.h): the API key, else the client token, else
     * the client address, so that no other submitter can claim, probe or replay them. */
    char scope[PROXY_ADDR_LEN + REQPARSE_CLIENT_MAX + 16];
};

/* The key (under --require-key one is needed), then the parameters (api_params.h: the plan
 * options when `options`, and ?retain=) into *p; -1 after answering. */
static int submitter_of(struct store *st, struct request *r, bool options, struct submitter *who,
                        struct api_params *p)
{
    memset(who, 0, sizeof(*who));
    who->auth = auth_key(st, r, r->srv->cfg->require_key, &who->key);
    if (who->auth == AUTH_ANSWERED)
        return -1;
    who->client = auth_client(r, who->client_hash);
    if (who->client == AUTH_ANSWERED || api_params_read(r, options, p) != 0)
        return -1;
    if (r->idempotency_key != NULL &&
        (r->idempotency_key[0] == '\0' || strlen(r->idempotency_key) > STORE_KEY_MAX ||
         !text_utf8_valid(r->idempotency_key, strlen(r->idempotency_key)))) {
        reply_bad_param(r, "Idempotency-Key", IDEMPOTENCY_KEY_DETAIL);
        return -1;
    }
    who->retain_s = p->retain_s;
    if (who->auth == AUTH_OK) {
        snprintf(who->scope, sizeof(who->scope), "key %lld", (long long)who->key.id);
    } else if (who->client == AUTH_OK) {
        snprintf(who->scope, sizeof(who->scope), "client %s", r->client); /* never stored */
    } else {
        snprintf(who->scope, sizeof(who->scope), "addr %s", request_client_addr(r));
    }
    return 0;
}

/* Stores np as a new plan on behalf of who and answers: 202, or parks a Prefer: wait
 * request, or replays an Idempotency-Key (np->body_sha256_hex, which the caller fills). */
static void plan_store(struct store *st, struct request *r, const struct submitter *who,
                       struct store_new_plan *np)
{
    struct store_created created;
    int rc;

    np->idempotency_key = r->idempotency_key;
    np->idempotency_scope = who->scope;
    np->api_key_id = who->auth == AUTH_OK ? who->key.id : 0;
    np->client_hash = who->client == AUTH_OK ? who->client_hash : NULL;
    np->retain_s = who->retain_s;
    memset(&created, 0, sizeof(created));
    rc = store_plan_create(st, np, &created);
    if (rc == STORE_CONFLICT) {
        request_reply_problem(r, PROBLEM_IDEMPOTENCY_KEY_REUSED,
                              "You sent this Idempotency-Key before with a different body or "
                              "options; use a new key.");
        return;
    }
    if (rc == STORE_INVALID) {
        reply_bad_param(r, "Idempotency-Key", IDEMPOTENCY_KEY_DETAIL);
        return;
    }
    if (rc != STORE_OK) {
        reply_store_error(r, rc); /* a what-if's parent deleted meanwhile: 404 */
        return;
    }
    if (!created.replayed && r->srv->jobs != NULL)
        jobs_kick(r->srv->jobs);
    if (!created.replayed)
        metrics_plan_created(who->auth == AUTH_OK ? who->key.name : NULL);
    if (created.replayed) {
        struct store_plan p;
        memset(&p, 0, sizeof(p));
        rc = store_plan_get(st, created.id, &p);
        if (rc == STORE_OK && finished(&p))
            reply_plan(st, r, 200, &p, NULL);
        else if (rc == STORE_OK)
            reply_accepted(r, created.id, p.status, NULL, false);
        else
            reply_store_error(r, rc);
        store_plan_free(&p);
        return;
    }
    if (r->prefer_wait > 0) {
        snprintf(r->exec.plan_id, sizeof(r->exec.plan_id), "%s", created.id);
        snprintf(r->exec.manage_token, sizeof(r->exec.manage_token), "%s", created.manage_token);
        r->exec.deadline = r->t_start + r->prefer_wait;
        exec_park(r->srv->exec, r);
        return;
    }
    reply_accepted(r, created.id, "queued", created.manage_token, false);
}

/* Validates input (len bytes) under o, stores it as a new plan on behalf of who and
 * answers (plan_store). Problems name /api/v1/plans. */
static void plan_submit(struct store *st, struct request *r, const struct submitter *who,
                        const struct plan_opts *o, const char *input, size_t input_len)
{
    const struct config *cfg = r->srv->cfg;
    struct plan_limits lim;
    struct plan_summary sum;
    struct store_new_plan np;
    struct err e;
    struct sha256 h;
    char hex[65];
    char *opts_json = NULL;
    int rc;

    config_plan_limits(cfg, &lim);
    memset(&sum, 0, sizeof(sum));
    err_clear(&e);
    rc = plan_validate(input, input_len, o, &lim, &sum, &e);
    if (rc != 0) {
        request_reply_err(r, &e, "/api/v1/plans");
        return;
    }
    opts_json = planopts_json(o);
    if (opts_json == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return;
    }
    sha256_init(&h);
    sha256_update(&h, input, input_len);
    sha256_update(&h, "\n", 1);
    sha256_update(&h, opts_json, strlen(opts_json));
    sha256_hex(&h, hex);

    memset(&np, 0, sizeof(np));
    np.name = o->name != NULL ? o->name : sum.name;
    np.chip = sum.chip;
    np.source_format =
        sum.source_format[0] != '\0' ? sum.source_format : (o->format != NULL ? o->format : "auto");
    np.options_json = opts_json;
    np.input = input;
    np.input_len = input_len;
    np.body_sha256_hex = hex;
    np.summary = &sum;
    plan_store(st, r, who, &np);
    free(opts_json);
}

void api_plan_create(struct store *st, struct request *r)
{
    struct submitter who;
    struct api_params p;

    if (r->exec.parked) {
        api_plan_wait_check(st, r);
        return;
    }
    if (submitter_of(st, r, true, &who, &p) == 0 && !api_queue_full(st, r))
        plan_submit(st, r, &who, &p.opts, r->body.p, r->body.len);
}

/* The overrides checked, the what-if stored with its parent's model copied (api_whatif.h):
 * the worker pool applies them and plans it. */
void api_plan_whatif(struct store *st, struct request *r)
{
    struct submitter who;
    struct api_params p;
    struct api_whatif w;
    struct store_new_plan np;
    struct sha256 h;
    char hex[65];

    if (r->exec.parked) {
        api_plan_wait_check(st, r);
        return;
    }
    if (submitter_of(st, r, false, &who, &p) != 0 || api_queue_full(st, r))
        return;
    r->exec.parent = r->route.plan_id; /* the answers (now, or after a wait) link it */
    if (api_whatif_prepare(st, r, &w) == 0) {
        sha256_init(&h);
        sha256_update(&h, w.doc, strlen(w.doc));
        sha256_hex(&h, hex);
        memset(&np, 0, sizeof(np));
        np.name = w.wr.name;
        np.source_format = w.format;
        np.parent_id = r->route.plan_id;
        np.whatif_json = w.doc;
        np.body_sha256_hex = hex;
        plan_store(st, r, &who, &np);
    }
    api_whatif_free(&w);
}

/* ---- /readyz and /metrics ---- */

void api_readyz(struct store *st, struct request *r)
{
    static const char body[] = "{\"status\":\"ready\"}";

    if (store_ready(st, r->srv->cfg->migrations_dir))
        request_reply(r, 200, response_copy(body, sizeof(body) - 1, "application/json"));
    else
        request_reply_problem(r, PROBLEM_NOT_READY,
                              "The database is unreachable or migrations are not applied.");
}

void api_metrics(struct store *st, struct request *r)
{
    struct metrics_gauges g;
    struct store_job_counts jc;
    long q = 0, parked = 0;
    size_t len = 0;
    char *t;
    int rc;

    memset(&g, 0, sizeof(g));
    g.jobs_queued = -1;
    rc = store_job_counts(st, &jc);
    if (rc == STORE_OK) {
        g.jobs_queued = jc.queued;
        g.jobs_running = jc.running;
        g.jobs_done = jc.done;
        g.jobs_failed = jc.failed;
    }
    exec_stats(r->srv->exec, &q, &parked);
    g.executor_queue = q;
    g.waiting_clients = parked;
    plancache_stats(r->srv->cache, &g.cache_entries, &g.cache_bytes);
    g.db_up = rc == STORE_OK;
    t = metrics_render(&g, r->srv->cfg->metrics_detail, &len);
    request_reply(r, 200,
                  t != NULL ? response_take(t, len, "text/plain; version=0.0.4; charset=utf-8")
                            : NULL);
}

void api_abandon(struct request *r, bool parked)
{
    if (parked)
        reply_accepted(r, r->exec.plan_id, "queued", r->exec.manage_token, true);
    else
        request_reply_problem(r, PROBLEM_SHUTTING_DOWN, PROBLEM_SHUTTING_DOWN_DETAIL);
}
