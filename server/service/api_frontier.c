/*
 * api_frontier.c - frontier searches queued, read and listed (api_frontier.h).
 */
#include "service/api_frontier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/recipe.h"
#include "service/api.h"
#include "service/auth.h"
#include "service/config.h"
#include "service/frontierq.h"
#include "service/jobs.h"
#include "service/problem.h"
#include "service/request.h"
#include "service/response.h"
#include "service/server.h"
#include "service/store.h"
#include "service/storeerr.h"

/* A 4xx for a query the planner's words refuse (frontierq.h): 400 or 422 naming the member. */
static void reply_err(struct request *r, const struct err *e)
{
    char instance[80];

    snprintf(instance, sizeof(instance), "/api/v1/plans/%s/frontiers", r->route.plan_id);
    request_reply_err(r, e, instance);
}

/* A stored search's not-found or gone, as a plan's are answered. */
static void reply_store(struct request *r, int rc)
{
    if (rc == STORE_NOTFOUND)
        request_reply_problem(r, PROBLEM_NO_SUCH_FRONTIER,
                              "No frontier search has this id (its plan may have been deleted).");
    else
        storeerr_reply(r, rc);
}

/* `"text"` or null: ids, statuses and timestamps need no escaping. */
static const char *q(const char *s, char *buf, size_t cap)
{
    if (s == NULL)
        return "null";
    snprintf(buf, cap, "\"%s\"", s);
    return buf;
}

/* The search's document (malloc'd, *len bytes), NULL when out of memory. The stored query,
 * result and error are JSON text, spliced in as they are. */
static char *frontier_doc(const struct store_frontier *f, size_t *len)
{
    char c[48], s[48], fin[48], st[24];
    const char *res = f->result_json != NULL ? f->result_json : "null";
    const char *err = f->error_json != NULL ? f->error_json : "null";
    size_t n = strlen(f->query_json) + strlen(res) + strlen(err) + 512;
    char *doc = malloc(n);
    int w;

    if (doc == NULL)
        return NULL;
    w = snprintf(doc, n,
                 "{\"id\":\"%s\",\"plan\":\"%s\",\"status\":%s,\"query\":%s,\"created\":%s,"
                 "\"started\":%s,\"finished\":%s,\"frontier\":%s,\"error\":%s}",
                 f->id, f->plan_id, q(f->status, st, sizeof(st)), f->query_json,
                 q(f->created_at, c, sizeof(c)), q(f->started_at, s, sizeof(s)),
                 q(f->finished_at, fin, sizeof(fin)), res, err);
    if (w < 0 || (size_t)w >= n) {
        free(doc);
        return NULL;
    }
    *len = (size_t)w;
    return doc;
}

static bool finished(const struct store_frontier *f)
{
    return strcmp(f->status, "done") == 0 || strcmp(f->status, "failed") == 0;
}

/* Answers r with f's document: status, its Location when created, ETag and Retry-After
 * while it is not finished. */
static void reply_doc(struct request *r, int status, const struct store_frontier *f)
{
    char etag[64], loc[CONFIG_BASE_MAX + 64];
    struct MHD_Response *resp;
    size_t len = 0;
    char *doc;

    snprintf(etag, sizeof(etag), "\"%s-%lld\"", f->id, (long long)f->version);
    if (status == 200 && request_reply_not_modified(r, etag))
        return;
    if ((doc = frontier_doc(f, &len)) == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return;
    }
    resp = response_take(doc, len, "application/json");
    if (resp != NULL) {
        if (status == 202) {
            snprintf(loc, sizeof(loc), "%s/api/v1/frontiers/%s", r->srv->cfg->base_path, f->id);
            MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, loc);
        } else {
            MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
            MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
        }
        if (!finished(f))
            MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    }
    request_reply(r, status, resp);
}

/* The plan must be a recipe's: a search changes one of its fields and plans it again; and
 * the recipe must have the query's fields. 0, or -1 after answering (404, 410, 422). */
static int plan_fits_query(struct store *st, struct request *r, const struct frontierq *fq)
{
    char fmt[24], *input = NULL;
    size_t len = 0;
    struct err e;
    int rc =
        store_plan_recipe(st, r->route.plan_id, RECIPE_MAX_INPUT, fmt, sizeof(fmt), &input, &len);

    if (rc != STORE_OK) {
        storeerr_reply(r, rc);
        return -1;
    }
    err_clear(&e);
    if (strcmp(fmt, "recipe") != 0) {
        err_set(&e, ERR_INVALID, "source_format",
                "a frontier search needs a recipe (a model config and the step to run: "
                "server/planner/INPUT.md#from-a-model-config-recipes): it changes one of the "
                "recipe's fields, such as train.batch, and plans the model it makes again; this "
                "plan's input is %s, which has no such fields",
                fmt);
        rc = -1;
    } else if (input != NULL && frontierq_check_recipe(fq, input, len, &e) != ERR_OK) {
        rc = -1;
    }
    free(input);
    if (rc != 0)
        reply_err(r, &e);
    return rc;
}

void api_frontier_create(struct store *st, struct request *r)
{
    struct store_apikey key;
    struct store_frontier f;
    struct frontierq *fq = NULL;
    struct err e;
    char *query = NULL;
    int rc;

    memset(&f, 0, sizeof(f));
    if (auth_key(st, r, r->srv->cfg->require_key, &key) == AUTH_ANSWERED)
        return;
    if (r->idempotency_key != NULL) {
        request_reply(r, problem_types[PROBLEM_INVALID_PARAMETER].status,
                      response_problem(PROBLEM_INVALID_PARAMETER, r->srv->cfg->base_path,
                                       "Idempotency-Key: a frontier search does not take one; "
                                       "each POST queues a search (GET "
                                       "/api/v1/plans/{id}/frontiers lists them).",
                                       "Idempotency-Key", NULL));
        return;
    }
    if (r->kind != BODY_JSON) {
        request_reply_problem(r, PROBLEM_UNSUPPORTED_MEDIA_TYPE,
                              "Send the query as application/json: {\"maximize\": \"batch\"}.");
        return;
    }
    if ((fq = malloc(sizeof(*fq))) == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return;
    }
    err_clear(&e);
    /* the query alone first: a bad one costs no read at all */
    if (frontierq_parse(r->body.p, r->body.len, fq, &e) != ERR_OK) {
        reply_err(r, &e);
        goto out;
    }
    if (api_queue_full(st, r) || plan_fits_query(st, r, fq) != 0)
        goto out;
    if ((query = frontierq_json(fq)) == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        goto out;
    }
    rc = store_frontier_create(st, r->route.plan_id, query, &f);
    if (rc != STORE_OK) {
        storeerr_reply(r, rc); /* the plan deleted meanwhile: 404 */
        goto out;
    }
    if (r->srv->jobs != NULL)
        jobs_kick(r->srv->jobs);
    reply_doc(r, 202, &f);
out:
    store_frontier_free(&f);
    free(query);
    free(fq);
}

void api_frontier_get(struct store *st, struct request *r)
{
    struct store_frontier f;
    int rc = store_frontier_get(st, r->route.plan_id, &f);

    if (rc != STORE_OK) {
        reply_store(r, rc);
        return;
    }
    reply_doc(r, 200, &f);
    store_frontier_free(&f);
}

void api_frontier_list(struct store *st, struct request *r)
{
    static const char head[] = "{\"frontiers\":";
    char *items = NULL, *doc;
    size_t n;
    struct MHD_Response *resp;
    int rc = store_frontier_list(st, r->route.plan_id, API_FRONTIER_LIST, &items);

    if (rc != STORE_OK) {
        storeerr_reply(r, rc);
        return;
    }
    n = sizeof(head) - 1 + strlen(items) + 1;
    if ((doc = malloc(n + 1)) == NULL) {
        free(items);
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return;
    }
    snprintf(doc, n + 1, "%s%s}", head, items);
    free(items);
    resp = response_take(doc, n, "application/json");
    if (resp != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    request_reply(r, 200, resp);
}
