/*
 * api_whatif.c - a what-if's overrides checked and its row described (api_whatif.h).
 */
#include "service/api_whatif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/config.h"
#include "service/problem.h"
#include "service/request.h"
#include "service/response.h"
#include "service/server.h"
#include "service/storeerr.h"

void api_whatif_free(struct api_whatif *w)
{
    free(w->doc);
    w->doc = NULL;
}

static int reply_err(struct request *r, const struct err *e)
{
    char instance[64];

    snprintf(instance, sizeof(instance), "/api/v1/plans/%s/whatif", r->route.plan_id);
    request_reply_err(r, e, instance);
    return -1;
}

/* {"parent": ID, "overrides": <body>}: the body as sent (checked JSON, so the document is
 * JSON), for the order of its patterns matters. */
static char *whatif_doc(const char *parent, const char *body, size_t len)
{
    static const char head[] = "{\"parent\":\"", mid[] = "\",\"overrides\":";
    size_t n = sizeof(head) - 1 + strlen(parent) + sizeof(mid) - 1 + len + 2;
    char *doc = malloc(n);

    if (doc != NULL)
        snprintf(doc, n, "%s%s%s%.*s}", head, parent, mid, (int)len, body);
    return doc;
}

int api_whatif_prepare(struct store *st, struct request *r, struct api_whatif *w)
{
    struct plan_limits lim;
    struct err e;
    int rc;

    memset(w, 0, sizeof(*w));
    if (r->kind != BODY_JSON) {
        request_reply_problem(r, PROBLEM_UNSUPPORTED_MEDIA_TYPE,
                              "Send the overrides as application/json.");
        return -1;
    }
    config_plan_limits(r->srv->cfg, &lim);
    err_clear(&e);
    /* the overrides alone first: bad or too many patterns cost no read at all */
    if (whatif_check(r->body.p, r->body.len, &lim, &w->wr, &e) != ERR_OK)
        return reply_err(r, &e);
    if ((rc = store_plan_format(st, r->route.plan_id, w->format, sizeof(w->format))) != STORE_OK) {
        storeerr_reply(r, rc);
        return -1;
    }
    if (strcmp(w->format, "json") != 0 && strcmp(w->format, "recipe") != 0) {
        err_set(&e, ERR_INVALID, "source_format",
                "a what-if changes a JSON model description or a recipe; this plan's input is %s",
                w->format);
        return reply_err(r, &e);
    }
    if ((w->doc = whatif_doc(r->route.plan_id, r->body.p, r->body.len)) == NULL) {
        request_reply_problem(r, PROBLEM_INTERNAL, "Out of memory.");
        return -1;
    }
    return 0;
}
