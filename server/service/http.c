/*
 * http.c - the libmicrohttpd daemon and the access handler.
 *
 * The access handler runs on MHD's epoll threads and never blocks: it reads bodies into
 * bounded buffers, answers the transport's own errors (shutdown, per-client limits, 404,
 * 405), runs a route's fast handler and suspends the rest to the executor pool (exec.h).
 * See http.h for the flow.
 */
#include "service/http.h"

#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "planner/clock.h"
#include "planner/plan.h"
#include "service/admit.h"
#include "service/auth.h"
#include "service/climit.h"
#include "service/deadline.h"
#include "service/exec.h"
#include "service/guard.h"
#include "service/log.h"
#include "service/memtrim.h"
#include "service/metrics.h"
#include "service/ratelimit.h"
#include "service/request.h"
#include "service/response.h"

#define POST_BUFFER 65536
/* All request bodies together may hold this many times --max-body (at least 256 MiB), so
 * many concurrent large uploads cannot exhaust memory; past it submissions get 503. */
#define BODY_BUDGET_FACTOR 4
#define BODY_BUDGET_MIN    (256ull << 20)
#define CONN_MEMORY        (64 * 1024)
#define PEM_MAX            (1 << 20) /* --tls-cert/--tls-key file size limit */
#define BUSY_DETAIL        "Too many large uploads are in progress; retry later."
/* RFC 6797: a year, the usual value (and the HSTS preload list's minimum). No
 * includeSubDomains: the server cannot know what else runs under its name. */
#define HSTS "max-age=31536000"

/* Parameter names as they appear in the query string and form. */
static const char *const req_param_names[REQ_PARAM_COUNT] = {
    [REQ_PARAM_LIMIT] = "limit",   [REQ_PARAM_CURSOR] = "cursor", [REQ_PARAM_NAME] = "name",
    [REQ_PARAM_FORMAT] = "format", [REQ_PARAM_VIEW] = "view",     [REQ_PARAM_A] = "a",
    [REQ_PARAM_B] = "b",
};

static bool shutting_down(const struct server *srv)
{
    return atomic_load_explicit(&srv->shutting_down, memory_order_acquire);
}

/* Gives r's body back to the server-wide budget and frees r. */
static void req_release(struct request *r)
{
    if (r->http.charged > 0)
        atomic_fetch_sub_explicit(&r->srv->body_bytes, r->http.charged, memory_order_relaxed);
    request_free(r);
}

/* Queues resp (taking it) as the answer; NULL resp means out of memory: close. */
static enum MHD_Result req_queue(struct request *r, int status, struct MHD_Response *resp)
{
    enum MHD_Result ret;

    if (resp == NULL) {
        r->status = 500;
        r->http.phase = REQ_ANSWERED;
        return MHD_NO;
    }
    if (shutting_down(r->srv))
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    MHD_add_response_header(resp, "X-Request-Id", r->id);
    /* Served over https: browsers that saw it once refuse plain http to this name. */
    if (r->srv->cfg->tls_cert != NULL)
        MHD_add_response_header(resp, "Strict-Transport-Security", HSTS);
    ret = MHD_queue_response(r->http.conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    r->status = status;
    r->http.phase = REQ_ANSWERED;
    return ret;
}

/* req_problem, naming where (a parameter) in the problem's "where"; NULL: none. */
static enum MHD_Result req_problem_at(struct request *r, enum problem_id id, const char *detail,
                                      const char *where)
{
    struct MHD_Response *resp = response_problem(id, r->srv->cfg->base_path, detail, where, NULL);

    if (resp != NULL && id == PROBLEM_METHOD_NOT_ALLOWED && r->route.allow[0] != '\0')
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->route.allow);
    return req_queue(r, problem_types[id].status, resp);
}

static enum MHD_Result req_problem(struct request *r, enum problem_id id, const char *detail)
{
    return req_problem_at(r, id, detail, NULL);
}

static char *dup_header(struct MHD_Connection *conn, enum MHD_ValueKind kind, const char *key)
{
    const char *v = MHD_lookup_connection_value(conn, kind, key);

    if (v == NULL)
        return NULL;
    return strndup(v, REQ_PARAM_MAX);
}

/* Whether r creates a plan (the route table's body rows: a submission, a what-if): its
 * handler reads every parameter (request.h args). */
static bool creates_plan(const struct request *r)
{
    return r->route.row != NULL && r->route.row->body;
}

/* A new entry of r->args (name and value copied, at most REQ_PARAM_MAX bytes each; value may
 * be NULL); NULL when there are REQ_ARGS_MAX already (args_over) or out of memory
 * (args_lost). */
static struct req_arg *arg_add(struct request *r, const char *name, const char *value, bool form)
{
    struct req_arg *a;

    if (r->nargs == REQ_ARGS_MAX) {
        r->args_over = true;
        return NULL;
    }
    a = &r->args[r->nargs];
    a->name = strndup(name, REQ_PARAM_MAX);
    a->value = value != NULL ? strndup(value, REQ_PARAM_MAX) : NULL;
    a->form = form;
    if (a->name == NULL || (value != NULL && a->value == NULL)) {
        free(a->name);
        free(a->value);
        r->args_lost = true; /* never dropped unnoticed */
        return NULL;
    }
    r->nargs++;
    return a;
}

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *value)
{
    (void)kind;
    (void)arg_add(cls, key, value, false);
    return MHD_YES;
}

static char *dup_whole(struct MHD_Connection *conn, const char *key)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, key);

    return v != NULL ? strdup(v) : NULL;
}

/* Copies what the handlers read out of MHD's connection memory: once, before the first
 * handler runs (for a submission after its body, whose form fields come first). */
static void req_capture(struct request *r)
{
    size_t i;
    const char *prefer;

    for (i = 0; i < REQ_PARAM_COUNT; i++)
        if (r->param[i] == NULL)
            r->param[i] = dup_header(r->http.conn, MHD_GET_ARGUMENT_KIND, req_param_names[i]);
    if (creates_plan(r))
        MHD_get_connection_values(r->http.conn, MHD_GET_ARGUMENT_KIND, query_arg, r);
    r->authorization = dup_header(r->http.conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    /* Not truncated: an entity tag past the cut would never match, and a key over the
     * store's limit must be refused, not shortened (MHD bounds both: CONN_MEMORY). */
    r->if_none_match = dup_whole(r->http.conn, MHD_HTTP_HEADER_IF_NONE_MATCH);
    r->idempotency_key = dup_whole(r->http.conn, "Idempotency-Key");
    r->client = dup_header(r->http.conn, MHD_HEADER_KIND, AUTH_CLIENT_HEADER);
    prefer = MHD_lookup_connection_value(r->http.conn, MHD_HEADER_KIND, "Prefer");
    r->prefer_wait = reqparse_prefer_wait(prefer, r->srv->cfg->max_wait_s);
}

/* Queues the answer a handler left with request_reply() (phase REQ_READY). */
static enum MHD_Result req_queue_reply(struct request *r)
{
    struct MHD_Response *resp = r->resp;

    r->resp = NULL;
    return req_queue(r, r->status, resp);
}

/* Hands r, captured, to the executor pool of its row's lane (route.h); a large read moves
 * on to the heavy pool from there (admit.h). */
static enum MHD_Result req_submit(struct request *r)
{
    struct server *srv = r->srv;
    bool ops = r->route.row != NULL && r->route.row->lane == ROUTE_LANE_OPS;

    r->http.phase = REQ_EXEC;
    MHD_suspend_connection(r->http.conn);
    exec_submit(ops ? srv->exec_ops : srv->exec, r);
    return MHD_YES;
}

/* 421 for a Host that names no name of this server (guard.h). */
static enum MHD_Result wrong_host(struct request *r)
{
    const struct config *cfg = r->srv->cfg;
    const char *host = MHD_lookup_connection_value(r->http.conn, MHD_HEADER_KIND, "Host");
    char d[160 + GUARD_HOST_MAX];

    snprintf(d, sizeof(d),
             "Host %.80s is not a name of this server: use %s%s (or its address, or localhost).",
             host != NULL ? host : "", cfg->public_host[0] != '\0' ? cfg->public_host : "",
             cfg->public_host[0] != '\0' ? "" : "the name set with --public-url");
    return req_problem(r, PROBLEM_WRONG_HOST, d);
}

static enum MHD_Result client_busy(struct request *r)
{
    char d[160];

    snprintf(d, sizeof(d), "%s already has %u requests in progress; retry when one finishes.",
             request_client_addr(r), r->srv->cfg->max_per_ip);
    return req_problem(r, PROBLEM_CLIENT_BUSY, d);
}

/* The first query parameter r's row does not take (route.h), and how many there are. */
struct unknown_param {
    const struct route *row;
    char name[65];
    unsigned n;
};

static enum MHD_Result unknown_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    struct unknown_param *u = cls;

    (void)kind;
    (void)value;
    if (!route_takes_param(u->row, key) && u->n++ == 0)
        snprintf(u->name, sizeof(u->name), "%s", key);
    return MHD_YES;
}

/* 400 naming the first query parameter r's row does not take; false when there is none. */
static bool refuse_unknown_params(struct request *r, enum MHD_Result *ret)
{
    struct unknown_param u = {r->route.row, "", 0};
    char detail[256];

    if (r->route.row->query == NULL)
        return false;
    MHD_get_connection_values(r->http.conn, MHD_GET_ARGUMENT_KIND, unknown_param, &u);
    if (u.n == 0)
        return false;
    snprintf(detail, sizeof(detail), "%s: unknown parameter (this endpoint takes %s)%s", u.name,
             r->route.row->query[0] != '\0' ? r->route.row->query : "none",
             u.n > 1 ? "; and more" : "");
    *ret = req_problem_at(r, PROBLEM_INVALID_PARAMETER, detail, u.name);
    return true;
}

/* A request without a body (everything but a plan submission): answered at once, or
 * suspended to the executor pool. */
/* Answers r by its route (route.h): errors of the transport and the router first, then the
 * row's fast handler on this thread, else its exec handler on an executor thread. */
static enum MHD_Result dispatch(struct request *r)
{
    struct server *srv = r->srv;
    const struct route *row = r->route.row;
    enum MHD_Result ret;

    if (shutting_down(srv))
        return req_problem(r, PROBLEM_SHUTTING_DOWN, PROBLEM_SHUTTING_DOWN_DETAIL);
    if (r->http.wrong_host)
        return wrong_host(r);
    if (r->http.limited)
        return client_busy(r);
    if (r->http.to_base) {
        char loc[CONFIG_BASE_MAX + 1];
        struct MHD_Response *resp = response_copy("", 0, NULL);
        snprintf(loc, sizeof(loc), "%s/", srv->cfg->base_path);
        if (resp != NULL)
            MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
        return req_queue(r, 308, resp);
    }
    if (r->route.status == 404)
        return req_problem(r, PROBLEM_NOT_FOUND, "There is no such file or endpoint.");
    if (r->route.status == 405)
        return req_problem(r, PROBLEM_METHOD_NOT_ALLOWED,
                           "See the Allow header for the methods this resource supports.");
    if (refuse_unknown_params(r, &ret))
        return ret;
    req_capture(r);
    if (row->fast != NULL && row->fast(r))
        return req_queue_reply(r);
    if (row->exec != NULL)
        return req_submit(r);
    return req_problem(r, PROBLEM_INTERNAL, "Unroutable request.");
}

static void early_error(struct request *r, enum problem_id id, const char *detail)
{
    if (r->http.early)
        return;
    r->http.early = true;
    r->http.early_problem = id;
    snprintf(r->http.early_detail, sizeof(r->http.early_detail), "%s", detail);
}

static void too_large(struct request *r)
{
    char d[200];

    snprintf(d, sizeof(d), "The body (or a safetensors header) exceeds the limit of %llu bytes.",
             (unsigned long long)r->srv->cfg->max_body);
    early_error(r, PROBLEM_BODY_TOO_LARGE, d);
}

/* Multipart: the file and the attachments together are held to --max-body, as one body is
 * (what is kept: a safetensors file's tensor data is not). Checked after each chunk, so at
 * most one chunk (POST_BUFFER) more is ever held. True, with the 413 noted, when over. */
static bool form_over(struct request *r)
{
    char d[200];

    if ((uint64_t)r->body.len + r->attach.len <= r->srv->cfg->max_body)
        return false;
    snprintf(d, sizeof(d),
             "The form's file and attachments together exceed the limit of %llu bytes.",
             (unsigned long long)r->srv->cfg->max_body);
    early_error(r, PROBLEM_BODY_TOO_LARGE, d);
    return true;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

/* The attachment fields of a multipart form (request.h attach), in their order there. */
static const char *const attach_fields[2] = {"xla_assignment", "xla_report"};

/* A chunk of attachment field k: appended to r->attach; a field sent twice is an error. */
static enum MHD_Result attach_chunk(struct request *r, int k, const char *data, uint64_t off,
                                    size_t size)
{
    if (off == 0) {
        if (r->attach.limit == 0)
            body_init(&r->attach, r->srv->cfg->max_body, false);
        if (r->attach_seen[k]) {
            early_error(r, PROBLEM_INVALID_PARAMETER, "A form field is sent twice.");
            return MHD_NO;
        }
        r->attach_at[k] = r->attach.len;
        r->attach_seen[k] = true;
    }
    if (size > 0 && body_append(&r->attach, data, size) != 0) {
        too_large(r);
        return MHD_NO;
    }
    r->attach_len[k] += size;
    return form_over(r) ? MHD_NO : MHD_YES;
}

/* A chunk of a form field's value at offset off into *v (a field sent twice starts again). */
static enum MHD_Result field_chunk(struct request *r, char **v, const char *data, uint64_t off,
                                   size_t size)
{
    size_t have = off == 0 || *v == NULL ? 0 : strlen(*v);

    if (off != have || have + size > REQ_PARAM_MAX) {
        early_error(r, PROBLEM_INVALID_PARAMETER, "A form field is too long.");
        return MHD_NO;
    }
    char *p = realloc(*v, have + size + 1);
    if (p == NULL)
        return MHD_NO;
    memcpy(p + have, data, size);
    p[have + size] = '\0';
    *v = p;
    return MHD_YES;
}

/* A chunk of form field key as one of r->args: a new entry at offset 0 (one sent twice is
 * two entries, refused by the handler), else the field's latest. */
static enum MHD_Result form_arg(struct request *r, const char *key, const char *data, uint64_t off,
                                size_t size)
{
    struct req_arg *a = NULL;

    if (off == 0)
        a = arg_add(r, key, "", true);
    else if (r->nargs > 0 && r->args[r->nargs - 1].form &&
             strcmp(r->args[r->nargs - 1].name, key) == 0)
        a = &r->args[r->nargs - 1];
    if (a == NULL) /* past REQ_ARGS_MAX or out of memory: refused by the handler */
        return MHD_YES;
    return field_chunk(r, &a->value, data, off, size);
}

/* Multipart fields: "file" is the input, xla_assignment and xla_report attachments; every
 * other field is a parameter (request.h args), and the known ones also fill param. */
static enum MHD_Result post_iter(void *cls, enum MHD_ValueKind kind, const char *key,
                                 const char *filename, const char *content_type,
                                 const char *transfer_encoding, const char *data, uint64_t off,
                                 size_t size)
{
    struct request *r = cls;
    size_t i;

    (void)kind;
    (void)transfer_encoding;
    if (strcmp(key, "file") == 0) {
        if (!r->http.file_seen) {
            const char *fn = filename != NULL ? filename : "";
            enum body_kind k = reqparse_media_type(content_type);
            r->http.file_seen = true;
            /* Browsers send most files as application/octet-stream, so the name and
             * the first bytes decide: a safetensors file starts with a little-endian
             * header length (high bytes 0) followed by '{'. */
            bool st_bytes =
                size >= 9 && data[8] == '{' && data[5] == 0 && data[6] == 0 && data[7] == 0;
            if (ends_with(fn, ".safetensors") || (k == BODY_SAFETENSORS && st_bytes)) {
                r->file_kind = BODY_SAFETENSORS;
                r->body.safetensors = true;
            } else if (ends_with(fn, ".csv") || k == BODY_CSV) {
                r->file_kind = BODY_CSV;
            } else if (ends_with(fn, ".json") || k == BODY_JSON) {
                r->file_kind = BODY_JSON;
            } else {
                r->file_kind = BODY_TEXT;
            }
        }
        if (size > 0 && body_append(&r->body, data, size) != 0) {
            too_large(r);
            return MHD_NO;
        }
        return form_over(r) ? MHD_NO : MHD_YES;
    }
    for (i = 0; i < 2; i++)
        if (strcmp(key, attach_fields[i]) == 0)
            return attach_chunk(r, (int)i, data, off, size);
    for (i = 0; i < REQ_PARAM_COUNT; i++)
        if (strcmp(key, req_param_names[i]) == 0 &&
            field_chunk(r, &r->param[i], data, off, size) != MHD_YES)
            return MHD_NO;
    return form_arg(r, key, data, off, size);
}

/* Takes a submission token for r's client; answers 429 with Retry-After when there is none
 * (before the body is read: MHD then skips it). True when answered. */
static bool rate_limited(struct request *r, enum MHD_Result *ret)
{
    const char *addr = request_client_addr(r);
    char d[PROXY_ADDR_LEN + 160], secs[16];
    unsigned wait;
    struct MHD_Response *resp;

    if (r->srv->ratelimit == NULL)
        return false;
    wait = ratelimit_take(r->srv->ratelimit, addr, clock_now());
    if (wait == 0)
        return false;
    snprintf(d, sizeof(d),
             "%s has sent more than %u plan submissions a minute (bursts of %u); retry in %u s.",
             addr, r->srv->cfg->rate_limit, r->srv->cfg->rate_burst, wait);
    snprintf(secs, sizeof(secs), "%u", wait);
    resp = response_problem(PROBLEM_RATE_LIMITED, r->srv->cfg->base_path, d, NULL, "/api/v1/plans");
    if (resp != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
    *ret = req_queue(r, problem_types[PROBLEM_RATE_LIMITED].status, resp);
    return true;
}

/* First call of POST /api/v1/plans: checks the media type and length, sets up the body. */
static enum MHD_Result post_begin(struct request *r)
{
    const struct config *cfg = r->srv->cfg;
    const char *ct =
        MHD_lookup_connection_value(r->http.conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *cl =
        MHD_lookup_connection_value(r->http.conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    uint64_t len = 0;
    enum MHD_Result ret;

    r->kind = reqparse_media_type(ct);
    body_init(&r->body, cfg->max_body, r->kind == BODY_SAFETENSORS);
    if (r->http.wrong_host)
        return wrong_host(r); /* like too_large below: MHD then skips the body */
    if (r->http.limited)
        return client_busy(r);
    /* a body row that names its parameters (route.h) refuses others before the body */
    if (refuse_unknown_params(r, &ret))
        return ret;
    if (!guard_submission_ok(
            r->kind, MHD_lookup_connection_value(r->http.conn, MHD_HEADER_KIND, AUTH_CLIENT_HEADER),
            MHD_lookup_connection_value(r->http.conn, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_AUTHORIZATION)))
        return req_problem(
            r, PROBLEM_CROSS_SITE,
            "A text/plain or multipart/form-data submission needs the " AUTH_CLIENT_HEADER
            " header (the dashboard sends its token) or an API "
            "key, so that no other site's form can submit here; JSON needs "
            "neither. See server/service/README.md#cross-site-requests.");
    if (rate_limited(r, &ret))
        return ret;
    if (r->kind == BODY_NONE || r->kind == BODY_UNSUPPORTED) {
        char d[256];
        snprintf(d, sizeof(d),
                 "Content-Type %.60s is not supported: send application/json, "
                 "application/octet-stream (safetensors), text/csv, text/plain (HLO, "
                 "StableHLO or an XLA buffer assignment) or multipart/form-data.",
                 ct != NULL ? ct : "(none)");
        early_error(r, PROBLEM_UNSUPPORTED_MEDIA_TYPE, d);
        return MHD_YES;
    }
    if ((r->kind == BODY_JSON || r->kind == BODY_CSV || r->kind == BODY_TEXT) && cl != NULL &&
        reqparse_u64(cl, &len) == 0 && len > cfg->max_body) {
        /* Refuse before reading: MHD then skips the body (or never sends 100 Continue). */
        too_large(r);
        return req_problem(r, r->http.early_problem, r->http.early_detail);
    }
    if (r->kind == BODY_MULTIPART) {
        r->http.pp = MHD_create_post_processor(r->http.conn, POST_BUFFER, post_iter, r);
        if (r->http.pp == NULL)
            early_error(r, PROBLEM_MALFORMED_MULTIPART,
                        "The multipart/form-data Content-Type has no usable boundary.");
    }
    return MHD_YES;
}

/* Counts the growth of r's body against the server-wide budget; false when over it. */
static bool body_charge(struct request *r)
{
    uint64_t budget = r->srv->cfg->max_body * BODY_BUDGET_FACTOR;
    uint64_t grow, total;

    if (budget < BODY_BUDGET_MIN)
        budget = BODY_BUDGET_MIN;
    if (r->body.cap + r->attach.cap <= r->http.charged)
        return true;
    grow = r->body.cap + r->attach.cap - r->http.charged;
    total = atomic_fetch_add_explicit(&r->srv->body_bytes, grow, memory_order_relaxed) + grow;
    r->http.charged += grow;
    return total <= budget;
}

static void post_chunk(struct request *r, const char *data, size_t n)
{
    if (r->http.early)
        return; /* swallowed: the answer goes out at the end */
    if (!body_charge(r)) {
        early_error(r, PROBLEM_SERVER_BUSY, BUSY_DETAIL);
        return;
    }
    if (r->http.pp != NULL) {
        if (MHD_post_process(r->http.pp, data, n) != MHD_YES)
            early_error(r, PROBLEM_MALFORMED_MULTIPART,
                        "The multipart/form-data body could not be parsed.");
        return;
    }
    if (body_append(&r->body, data, n) != 0) {
        if (r->body.nomem)
            early_error(r, PROBLEM_OUT_OF_MEMORY,
                        "The server could not buffer the body; retry later.");
        else
            too_large(r);
        return;
    }
    if (!body_charge(r))
        early_error(r, PROBLEM_SERVER_BUSY, BUSY_DETAIL);
}

/* Last call of POST /api/v1/plans: the body is complete. */
static enum MHD_Result post_end(struct request *r)
{
    bool st_mode = r->kind == BODY_SAFETENSORS ||
                   (r->kind == BODY_MULTIPART && r->file_kind == BODY_SAFETENSORS);

    if (r->http.pp != NULL) {
        if (MHD_destroy_post_processor(r->http.pp) != MHD_YES && !r->http.early)
            early_error(r, PROBLEM_MALFORMED_MULTIPART, "The multipart/form-data body ends early.");
        r->http.pp = NULL;
    }
    if (r->http.early)
        return req_problem(r, r->http.early_problem, r->http.early_detail);
    if (r->kind == BODY_MULTIPART && !r->http.file_seen)
        return req_problem(r, PROBLEM_MISSING_FILE,
                           "Send the model as the multipart field \"file\".");
    if (r->body.len == 0)
        return req_problem(r, PROBLEM_EMPTY_BODY,
                           "Send a model description, a safetensors header or a MiniMalloc "
                           "CSV.");
    if (st_mode && !body_header_complete(&r->body)) {
        char d[200];
        if (r->body.len < 8)
            snprintf(d, sizeof(d),
                     "A safetensors file starts with an 8-byte header length; only %zu bytes "
                     "arrived.",
                     r->body.len);
        else
            snprintf(d, sizeof(d),
                     "The safetensors header declares %llu bytes but only %zu arrived.",
                     (unsigned long long)(r->body.want - 8), r->body.len - 8);
        return req_queue(r, problem_types[PROBLEM_TRUNCATED_SAFETENSORS].status,
                         response_problem(PROBLEM_TRUNCATED_SAFETENSORS, r->srv->cfg->base_path, d,
                                          "header", "/api/v1/plans"));
    }
    req_capture(r);
    return req_submit(r);
}

/* Marks requests whose raw target has an encoded NUL in its path: MHD decodes "%00" and the
 * handler would see a silently shortened path. The pointer becomes the first *con_cls. */
static char raw_nul_mark;

static void *http_uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
    const char *q = strchr(uri, '?');
    size_t n = q != NULL ? (size_t)(q - uri) : strlen(uri);
    size_t i;

    (void)cls;
    (void)conn;
    for (i = 0; i + 2 < n; i++)
        if (uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0')
            return &raw_nul_mark;
    return NULL;
}

/* Routes url under --base-path: the prefix is taken off; the bare prefix redirects to
 * prefix + "/" (so the dashboard's relative links resolve); anything else is 404. */
static void route_base(struct request *r, const char *url, const char *method)
{
    const char *base = r->srv->cfg->base_path;
    size_t bl = strlen(base);

    if (bl == 0 || (strncmp(url, base, bl) == 0 && url[bl] == '/')) {
        route_match(method, url + bl, &r->route);
        return;
    }
    route_match(method, "", &r->route); /* 404 */
    r->http.to_base = strcmp(url, base) == 0;
}

/* The connection's entry in the header deadline (its socket context), or NULL. */
static struct deadline_conn *conn_deadline(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci != NULL ? ci->socket_context : NULL;
}

/* MHD's connection notifications: a connection's header clock starts and ends with it. */
static void http_conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                             enum MHD_ConnectionNotificationCode code)
{
    struct server *srv = cls;

    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci != NULL ? deadline_open(srv->deadline, ci->connect_fd) : NULL;
    } else {
        deadline_close(srv->deadline, *socket_context);
        *socket_context = NULL;
    }
}

static enum MHD_Result access_call(struct server *srv, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *upload_data,
                                   size_t *upload_data_size, void **con_cls)
{
    struct request *r = *con_cls;

    if (r == NULL || (void *)r == (void *)&raw_nul_mark) {
        bool nul = r != NULL;
        deadline_headers(srv->deadline, conn_deadline(conn));
        r = request_new(srv, conn, method, url);
        if (r == NULL)
            return MHD_NO;
        log_set_request(r->id);
        route_base(r, url, method);
        r->http.wrong_host = !guard_host_ok(
            srv->cfg->public_host, srv->cfg->listen_loopback,
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host"), r->via_proxy);
        if (nul) {
            r->route.status = 404;
            r->route.row = NULL;
        }
        *con_cls = r;
        atomic_fetch_add_explicit(&srv->inflight, 1, memory_order_relaxed);
        if (srv->clients != NULL) {
            r->http.counted = climit_acquire(srv->clients, request_client_addr(r));
            r->http.limited = !r->http.counted;
        }
        if (r->route.status == 0 && r->route.row->body && !shutting_down(srv)) {
            r->http.submission = true;
            return post_begin(r);
        }
        /* Answering on this first call would make MHD 0.9.75 close the connection
         * (it cannot know the request had no body yet), so wait for the next call. */
        return MHD_YES;
    }
    log_set_request(r->id);
    deadline_body(srv->deadline, conn_deadline(conn), *upload_data_size);
    switch (r->http.phase) {
    case REQ_READY:
        return req_queue_reply(r);
    case REQ_NEW:
        break;
    default:
        /* Answered already (a body we refused is being skipped), or still suspended. */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (!r->http.submission) {
        /* Not a plan submission: any body is ignored. */
        if (*upload_data_size > 0) {
            *upload_data_size = 0;
            return MHD_YES;
        }
        return dispatch(r);
    }
    if (*upload_data_size > 0) {
        post_chunk(r, upload_data, *upload_data_size);
        *upload_data_size = 0;
        return MHD_YES;
    }
    return post_end(r);
}

/* MHD's access handler: every line logged while it handles a request carries the id. */
static enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url,
                                   const char *method, const char *version, const char *upload_data,
                                   size_t *upload_data_size, void **con_cls)
{
    enum MHD_Result ret;

    (void)version;
    ret = access_call(cls, conn, url, method, upload_data, upload_data_size, con_cls);
    log_set_request(NULL);
    return ret;
}

/* The access log: one line for each request answered with an error (4xx, 5xx) or cut off
 * (status 0), with its client, so abuse shows in the log; successes only count in
 * /metrics. */
static void access_log(const struct request *r, int status, double seconds)
{
    if (status > 0 && status < 400)
        return;
    log_set_request(r->id);
    log_line("http", "%s %s %d %.1f ms client %s", r->method, r->url != NULL ? r->url : "?", status,
             seconds * 1000, request_client_addr(r));
    log_set_request(NULL);
}

static void http_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                           enum MHD_RequestTerminationCode toe)
{
    struct server *srv = cls;
    struct request *r = *con_cls;

    deadline_idle(srv->deadline, conn_deadline(conn));
    if (r == NULL || (void *)r == (void *)&raw_nul_mark)
        return;
    *con_cls = NULL;
    if (r->http.counted)
        climit_release(srv->clients, request_client_addr(r));
    if (r->http.heavy)
        admit_heavy_done(srv);
    int status = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? r->status : 0;
    double secs = clock_now() - r->t_start;
    metrics_request_observe(r->route.row, status, secs);
    access_log(r, status, secs);
    /* a large body grew in this thread's arena: give it back (memtrim.h) */
    bool large = r->body.len >= MEMTRIM_LARGE;
    req_release(r);
    if (large)
        memtrim_release();
    atomic_fetch_sub_explicit(&srv->inflight, 1, memory_order_relaxed);
}

static void http_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    log_linev("mhd", fmt, ap);
}

/* A PEM file's text (malloc'd, NUL-terminated; caller frees), or NULL with a message. */
static char *read_pem(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0;

    if (f == NULL) {
        log_line("http", "cannot open %s", path);
        return NULL;
    }
    buf = malloc(PEM_MAX + 1);
    if (buf != NULL) {
        n = fread(buf, 1, PEM_MAX + 1, f);
        if (n == 0 || n > PEM_MAX) {
            log_line("http", "%s is empty or larger than %d bytes", path, PEM_MAX);
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* GnuTLS's defaults less TLS 1.0 and 1.1 (RFC 8996 deprecates them; SSL 3.0 is off in
 * NORMAL already): a client that offers nothing newer fails the handshake. */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* The TLS options (--tls-cert/--tls-key) into opts (4 items); flags gains MHD_USE_TLS.
 * 0, or -1 with a message logged. */
static int tls_options(struct server *srv, struct MHD_OptionItem *opts, unsigned *flags)
{
    const struct config *cfg = srv->cfg;

    opts[0] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    if (cfg->tls_cert == NULL)
        return 0;
    srv->tls_cert_pem = read_pem(cfg->tls_cert);
    srv->tls_key_pem = read_pem(cfg->tls_key);
    if (srv->tls_cert_pem == NULL || srv->tls_key_pem == NULL)
        return -1;
    opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, srv->tls_cert_pem};
    opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, srv->tls_key_pem};
    opts[2] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0, TLS_PRIORITIES};
    opts[3] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    *flags |= MHD_USE_TLS;
    return 0;
}

static void http_free_setup(struct server *srv)
{
    deadline_stop(srv->deadline); /* after the daemon (if any) stopped: no connection left */
    srv->deadline = NULL;
    static_root_close(&srv->static_root);
    static_root_close(&srv->vendor_root);
    climit_free(srv->clients);
    srv->clients = NULL;
    free(srv->tls_cert_pem);
    free(srv->tls_key_pem);
    srv->tls_cert_pem = srv->tls_key_pem = NULL;
}

int http_start(struct server *srv)
{
    const struct config *cfg = srv->cfg;
    struct addrinfo hints, *ai = NULL;
    struct MHD_OptionItem tls[4];
    char host[256], portstr[8];
    unsigned port, per_ip = cfg->max_per_ip;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    int rc = -1;

    if (config_listen_split(cfg->listen, host, sizeof(host), &port) != 0) {
        log_line("http", "bad --listen %s", cfg->listen);
        return -1;
    }
    static_root_open(&srv->static_root, cfg->static_dir);
    static_root_open(&srv->vendor_root, cfg->vendor_dir);
    if (srv->static_root.dirfd < 0)
        log_line("http", "warning: static directory %s is missing", cfg->static_dir);
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(portstr, sizeof(portstr), "%u", port);
    if (getaddrinfo(host[0] != '\0' ? host : NULL, portstr, &hints, &ai) != 0 || ai == NULL) {
        log_line("http", "cannot resolve listen address %s", cfg->listen);
        goto out;
    }
    if (ai->ai_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    if (tls_options(srv, tls, &flags) != 0)
        goto out;
    /* Behind trusted proxies MHD would count every client as the proxy: count requests per
     * forwarded client instead (climit.h). */
    if (cfg->trusted_proxies.n > 0 && per_ip > 0) {
        srv->clients = climit_new(per_ip);
        if (srv->clients == NULL) {
            log_line("http", "out of memory");
            goto out;
        }
        per_ip = 0;
    }
    srv->deadline = deadline_start(cfg->header_timeout_s, cfg->body_min_rate);
    if (srv->deadline == NULL && cfg->header_timeout_s > 0)
        log_line("http", "warning: no request-header deadline (cannot start its thread)");
    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, http_access, srv, MHD_OPTION_EXTERNAL_LOGGER, http_log,
        NULL, MHD_OPTION_URI_LOG_CALLBACK, http_uri_log, NULL, MHD_OPTION_SOCK_ADDR, ai->ai_addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned)cfg->http_threads, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)cfg->timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)CONN_MEMORY, MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned)1024,
        MHD_OPTION_NOTIFY_COMPLETED, http_completed, srv, MHD_OPTION_NOTIFY_CONNECTION,
        http_conn_notify, srv, MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
    if (srv->daemon == NULL) {
        log_line("http", "cannot listen on %s%s", cfg->listen,
                 cfg->tls_cert != NULL ? " (or the TLS certificate and key do not load)" : "");
        goto out;
    }
    rc = 0;
out:
    if (rc != 0)
        http_free_setup(srv);
    if (ai != NULL)
        freeaddrinfo(ai);
    return rc;
}

unsigned http_port(const struct server *srv)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return i != NULL ? i->port : 0;
}

void http_quiesce(struct server *srv)
{
    MHD_socket fd;

    atomic_store_explicit(&srv->shutting_down, true, memory_order_release);
    if (srv->daemon == NULL)
        return;
    fd = MHD_quiesce_daemon(srv->daemon);
    if (fd != MHD_INVALID_SOCKET)
        close(fd);
}

void http_stop(struct server *srv, double timeout_s)
{
    double until = clock_now() + timeout_s;

    while (atomic_load_explicit(&srv->inflight, memory_order_relaxed) > 0 && clock_now() < until)
        usleep(10000);
    if (srv->daemon != NULL)
        MHD_stop_daemon(srv->daemon);
    srv->daemon = NULL;
    http_free_setup(srv);
}
