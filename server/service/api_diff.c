/*
 * api_diff.c - GET /api/v1/diff?a=ID&b=ID (api_diff.h). The diff is made per request from
 * the stored views, never stored itself: both plans are immutable once done, so the ETag
 * (both ids and versions) is stable and a revalidation costs four indexed reads.
 */
#include "service/api_diff.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

#include "planner/diff.h"
#include "service/storeerr.h"
#include "service/admit.h"
#include "service/ids.h"
#include "service/request.h"
#include "service/response.h"
#include "service/store.h"

/* One side: its summary view and its layout view. */
struct side {
    struct store_plan sum, lay;
};

/* STORE_OK, a store error, or SIDE_NOT_DONE: the plan has no result to compare yet. */
enum { SIDE_NOT_DONE = -100 };

/* Reads plan id's two views into *s (freed by the caller whatever this returns). */
static int side_read(struct store *st, const char *id, struct side *s)
{
    int rc = store_plan_get_view(st, id, STORE_VIEW_SUMMARY, &s->sum);

    if (rc == STORE_OK)
        rc = store_plan_get_view(st, id, STORE_VIEW_LAYOUT, &s->lay);
    if (rc == STORE_OK && (strcmp(s->sum.status, "done") != 0 || s->sum.result_json == NULL ||
                           s->lay.result_json == NULL))
        rc = SIDE_NOT_DONE;
    return rc;
}

/* Loads plan id's two views into *s; 0, or -1 after answering. */
static int side_load(struct store *st, struct request *r, const char *id, struct side *s)
{
    int rc = side_read(st, id, s);

    if (rc == SIDE_NOT_DONE) {
        char d[160];
        snprintf(d, sizeof(d), "Plan %s is %s: only finished plans can be compared.", id,
                 s->sum.status);
        request_reply_problem(r, PROBLEM_NO_RESULT, d);
        return -1;
    }
    if (rc != STORE_OK) {
        storeerr_reply(r, rc);
        return -1;
    }
    return 0;
}

static void side_free(struct side *s)
{
    store_plan_free(&s->sum);
    store_plan_free(&s->lay);
}

static void side_input(const struct side *s, struct diff_input *in)
{
    *in = (struct diff_input){s->sum.result_json, strlen(s->sum.result_json), s->lay.result_json,
                              strlen(s->lay.result_json)};
}

int api_diff_text(struct store *st, const char *ida, const char *idb, size_t max_bytes, char **json,
                  size_t *len)
{
    struct side a, b;
    struct diff_input in[2];
    struct err e;
    int rc = -1;

    *json = NULL;
    *len = 0;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    if (side_read(st, ida, &a) != STORE_OK || side_read(st, idb, &b) != STORE_OK)
        goto out;
    side_input(&a, &in[0]);
    side_input(&b, &in[1]);
    if (diff_run(&in[0], &in[1], max_bytes, json, len, &e) == ERR_OK)
        rc = 0;
out:
    side_free(&a);
    side_free(&b);
    return rc;
}

void api_diff(struct store *st, struct request *r)
{
    const char *ida = r->param[REQ_PARAM_A], *idb = r->param[REQ_PARAM_B];
    struct side a, b;
    struct diff_input in[2];
    struct MHD_Response *resp;
    struct err e;
    char etag[128], *json = NULL;
    size_t len = 0;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    if (ida == NULL || idb == NULL || !ids_valid_id(ida) || !ids_valid_id(idb)) {
        request_reply_problem(r, PROBLEM_INVALID_PARAMETER,
                              "a and b must both be plan ids (22 characters).");
        return;
    }
    if (!admit_plans(st, r, ida, idb))
        return;
    if (side_load(st, r, ida, &a) != 0 || side_load(st, r, idb, &b) != 0)
        goto out;
    snprintf(etag, sizeof(etag), "\"diff-%s-%lld-%s-%lld\"", ida, (long long)a.sum.version, idb,
             (long long)b.sum.version);
    if (request_reply_not_modified(r, etag))
        goto out;
    side_input(&a, &in[0]);
    side_input(&b, &in[1]);
    if (diff_run(&in[0], &in[1], 0, &json, &len, &e) != ERR_OK) {
        request_reply_problem(r, e.code == ERR_NOMEM ? PROBLEM_OUT_OF_MEMORY : PROBLEM_INTERNAL,
                              e.msg);
        goto out;
    }
    resp = response_take(json, len, "application/json");
    if (resp != NULL) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    }
    request_reply(r, 200, resp);
out:
    side_free(&a);
    side_free(&b);
}
