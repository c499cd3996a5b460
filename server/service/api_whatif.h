/*
 * api_whatif.h - the preparation of POST /api/v1/plans/{id}/whatif: the parent plan's
 * stored model with the request's overrides applied (planner/whatif.h), and the options it
 * is planned with (the parent's, less those the overrides now set in the model). api.c
 * then submits it as a new plan whose parent is {id}.
 */
#ifndef TPUPLAN_API_WHATIF_H
#define TPUPLAN_API_WHATIF_H

#include "planner/err.h"
#include "planner/plan.h"
#include "planner/whatif.h"
#include "service/store.h"

struct request;

/* What the new plan is made of; released by api_whatif_free whatever prepare returned. */
struct api_whatif {
    struct store_source src; /* the parent's input and options */
    struct whatif_result wr; /* wr.model: the new model */
    struct plan_opts opts;   /* strings point into buf, src or wr */
    char buf[2048];
};

/* 0 with *w ready, or -1 after answering: 415 unless the body is JSON, 404 for an unknown
 * parent, 422 when the parent's input is not a JSON model description or an override is
 * bad (naming "overrides.<key>" or the model's field). */
ERR_MUST_CHECK int api_whatif_prepare(struct store *st, struct request *r, struct api_whatif *w);
void api_whatif_free(struct api_whatif *w);

#endif
