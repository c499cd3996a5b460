/*
 * jobs_whatif.h - a what-if on the planner worker (jobs.c): the overrides stored with its
 * job (store_job.whatif_json, written by POST /api/v1/plans/{id}/whatif: api_whatif.h)
 * applied to the model copied from its parent (planner/whatif.h, within the server's
 * limits), and the options it is planned with: the parent's, less what the overrides now set
 * in the model (chip, strategies), with their budget, the plan's name and the format json.
 * The model and those options then become the plan's input and options (store_made), so a
 * what-if of this plan starts from them.
 */
#ifndef TPUPLAN_JOBS_WHATIF_H
#define TPUPLAN_JOBS_WHATIF_H

#include "planner/err.h"
#include "planner/plan.h"
#include "planner/whatif.h"
#include "service/store.h"

/* What a what-if's worker made; released by jobs_whatif_free whatever apply returned. */
struct jobs_whatif {
    struct whatif_result wr; /* wr.model: the model to plan */
    char *options_json;      /* *o as stored (planopts.h; malloc'd) */
};

/* Applies job's overrides to job->input into *w and adjusts *o (the job's stored options,
 * read with planopts_parse; its strings may come to point into w or job). Errors are the
 * planner's (whatif.h: naming "overrides.<key>"), or ERR_INVALID naming "whatif" for a stored
 * document that is not {"parent", "overrides"}. */
ERR_MUST_CHECK int jobs_whatif_apply(const struct store_job *job, const struct plan_limits *lim,
                                     struct plan_opts *o, struct jobs_whatif *w, struct err *e);
void jobs_whatif_free(struct jobs_whatif *w);

#endif
