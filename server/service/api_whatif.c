/*
 * api_whatif.c - the parent's model with the overrides applied (api_whatif.h).
 */
#include "service/api_whatif.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/config.h"
#include "service/planopts.h"
#include "service/problem.h"
#include "service/request.h"
#include "service/response.h"
#include "service/server.h"
#include "service/storeerr.h"

void api_whatif_free(struct api_whatif *w)
{
    store_source_free(&w->src);
    free(w->wr.model);
    w->wr.model = NULL;
}

static int reply_err(struct request *r, const struct err *e)
{
    char instance[64];
    int status;
    size_t len = 0;
    char *pj;

    snprintf(instance, sizeof(instance), "/api/v1/plans/%s/whatif", r->route.plan_id);
    pj = problem_from_err(e, r->srv->cfg->base_path, instance, &status, &len);
    request_reply(r, status, pj != NULL ? response_take(pj, len, PROBLEM_MEDIA_TYPE) : NULL);
    return -1;
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
    /* the overrides alone first: bad or too many patterns cost no read of the parent */
    if (whatif_check(r->body.p, r->body.len, &lim, &e) != ERR_OK)
        return reply_err(r, &e);
    if ((rc = store_plan_source(st, r->route.plan_id, &w->src)) != STORE_OK) {
        storeerr_reply(r, rc);
        return -1;
    }
    if (strcmp(w->src.source_format, "json") != 0) {
        err_set(&e, ERR_INVALID, "source_format",
                "a what-if changes a JSON model description; this plan's input is %s",
                w->src.source_format);
        return reply_err(r, &e);
    }
    if (planopts_parse(w->src.options_json, &w->opts, w->buf, sizeof(w->buf), NULL) != 0) {
        request_reply_problem(r, PROBLEM_INTERNAL, "The parent plan's options are unreadable.");
        return -1;
    }
    if (whatif_apply(w->src.input, w->src.input_len, r->body.p, r->body.len, &lim, &w->wr, &e) !=
        ERR_OK)
        return reply_err(r, &e);
    /* what the overrides set in the model must not be overridden by the parent's options */
    if (w->wr.chip_set)
        w->opts.chip = NULL;
    if (w->wr.strategies_set)
        w->opts.strategies = NULL;
    if (w->wr.budget[0] != '\0')
        w->opts.budget = w->wr.budget;
    w->opts.name = NULL; /* the model's name is the what-if's */
    w->opts.format = "json";
    return 0;
}
