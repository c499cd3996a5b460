/*
 * request.c - a request's lifetime and the executor's way of answering it (request.h).
 */
#include "service/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "planner/clock.h"
#include "service/response.h"
#include "service/server.h"
#include "service/store.h"

/* X-Forwarded-For and Forwarded may each come several times: a list split over lines
 * means the same as one joined with commas. Only the right end matters (proxy.h), so when
 * the joined text outgrows its buffer the left-most hops are dropped. */
struct fwd_join {
    char xff[1024], fwd[1024];
};

static void join_append(char *buf, size_t cap, const char *v)
{
    size_t have = strlen(buf), vl = strlen(v);

    if (vl >= cap) {
        v += vl - (cap - 1);
        have = 0;
    } else if (have > 0 && have + 2 + vl >= cap) {
        size_t drop = have + 2 + vl - (cap - 1);
        if (drop >= have) {
            have = 0;
        } else {
            memmove(buf, buf + drop, have - drop + 1);
            have -= drop;
        }
    }
    snprintf(buf + have, cap - have, "%s%s", have > 0 ? ", " : "", v);
}

static enum MHD_Result fwd_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    struct fwd_join *j = cls;

    (void)kind;
    if (value == NULL)
        return MHD_YES;
    if (strcasecmp(key, "X-Forwarded-For") == 0)
        join_append(j->xff, sizeof(j->xff), value);
    else if (strcasecmp(key, "Forwarded") == 0)
        join_append(j->fwd, sizeof(j->fwd), value);
    return MHD_YES;
}

/* Fills r->client_addr from the peer and, for a trusted proxy, its forwarding headers. */
static void client_capture(struct request *r)
{
    const struct proxy_nets *nets = &r->srv->cfg->trusted_proxies;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(r->http.conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    char peer[PROXY_ADDR_LEN];
    struct fwd_join *j;

    proxy_sockaddr_text(ci != NULL ? ci->client_addr : NULL, peer, sizeof(peer));
    snprintf(r->client_addr, sizeof(r->client_addr), "%s", peer);
    r->via_proxy = nets->n > 0 && proxy_trusted(nets, peer);
    if (!r->via_proxy)
        return;
    j = calloc(1, sizeof(*j));
    if (j == NULL)
        return; /* the proxy's own address: stricter, never laxer */
    MHD_get_connection_values(r->http.conn, MHD_HEADER_KIND, fwd_header, j);
    proxy_client_addr(nets, peer, j->xff[0] != '\0' ? j->xff : NULL,
                      j->fwd[0] != '\0' ? j->fwd : NULL, r->client_addr, sizeof(r->client_addr));
    free(j);
}

const char *request_client_addr(const struct request *r)
{
    return r->client_addr;
}

struct request *request_new(struct server *srv, struct MHD_Connection *conn, const char *method,
                            const char *url)
{
    struct request *r = calloc(1, sizeof(*r));
    const char *given;

    if (r == NULL)
        return NULL;
    r->srv = srv;
    r->http.conn = conn;
    r->t_start = clock_now();
    r->prefer_wait = -1;
    client_capture(r);
    given = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Request-Id");
    if (reqparse_request_id(given))
        snprintf(r->id, sizeof(r->id), "%s", given);
    else if (ids_new_request_id(r->id) != 0)
        snprintf(r->id, sizeof(r->id), "none"); /* no randomness: still one id a line */
    if (strlen(method) < sizeof(r->method))
        memcpy(r->method, method, strlen(method) + 1);
    r->url = strndup(url, 256);
    return r;
}

void request_free(struct request *r)
{
    size_t i;

    if (r->http.pp != NULL)
        MHD_destroy_post_processor(r->http.pp);
    body_free(&r->body);
    body_free(&r->attach);
    for (i = 0; i < REQ_PARAM_COUNT; i++)
        free(r->param[i]);
    for (i = 0; i < r->nargs; i++) {
        free(r->args[i].name);
        free(r->args[i].value);
    }
    free(r->authorization);
    free(r->if_none_match);
    free(r->idempotency_key);
    free(r->client);
    free(r->url);
    if (r->resp != NULL)
        MHD_destroy_response(r->resp);
    if (r->exec.finished != NULL) {
        store_plan_free(r->exec.finished);
        free(r->exec.finished);
    }
    free(r);
}

void request_reply(struct request *r, int status, struct MHD_Response *resp)
{
    struct MHD_Connection *conn = r->http.conn;
    bool suspended = r->http.phase == REQ_EXEC;

    if (resp == NULL) {
        /* Out of memory building the answer: a body-less 500 still needs no allocation. */
        resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        status = 500;
    }
    r->status = status;
    r->resp = resp;
    r->http.phase = REQ_READY;
    /* After this the MHD thread may run and free r: touch nothing of it below. */
    if (suspended)
        MHD_resume_connection(conn);
}

bool request_reply_not_modified(struct request *r, const char *etag)
{
    struct MHD_Response *resp;

    if (!reqparse_etag_match(r->if_none_match, etag))
        return false;
    resp = response_not_modified(etag);
    /* RFC 9110 section 15.4.5: a 304 carries the Cache-Control its 200 would, and every 200
     * answered through here (plans, their views and traces, diffs) says no-cache */
    if (resp != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    request_reply(r, 304, resp);
    return true;
}

void request_reply_problem(struct request *r, enum problem_id id, const char *detail)
{
    request_reply(r, problem_types[id].status,
                  response_problem(id, r->srv->cfg->base_path, detail, NULL, NULL));
}

void request_reply_err(struct request *r, const struct err *e, const char *instance)
{
    int status;
    size_t len = 0;
    char *pj = problem_from_err(e, r->srv->cfg->base_path, instance, &status, &len);

    request_reply(r, status, pj != NULL ? response_take(pj, len, PROBLEM_MEDIA_TYPE) : NULL);
}
