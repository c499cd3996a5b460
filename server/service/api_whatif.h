/*
 * api_whatif.h - POST /api/v1/plans/{id}/whatif before it is stored: the overrides checked
 * alone (planner/whatif.h's whatif_check: bounded, no model read) and the parent's input
 * format, then what the new plan's row holds: {"parent": ID, "overrides": <the body>}, which
 * api.c stores like a submission (store_new_plan.whatif_json: the parent's input and options
 * are copied in SQL). The worker pool applies the overrides when it plans it (jobs_whatif.h),
 * so the request never reads the parent's model.
 */
#ifndef TPUPLAN_API_WHATIF_H
#define TPUPLAN_API_WHATIF_H

#include "planner/err.h"
#include "planner/whatif.h"
#include "service/store.h"

struct request;

/* What the new plan is made of; released by api_whatif_free whatever prepare returned. */
struct api_whatif {
    struct whatif_result wr; /* what the overrides alone say (wr.name "": not renamed) */
    char *doc;               /* {"parent": ID, "overrides": ...} (malloc'd) */
    char format[24];         /* the parent's input format, the new plan's: "json", "recipe" */
};

/* 0 with *w ready, or -1 after answering: 415 unless the body is JSON, 400 for JSON that
 * does not parse, 422 for a bad override (naming "overrides.<key>") or too many patterns
 * (limit-exceeded), 404 for an unknown parent, 410 for an expired one, 422 when the
 * parent's input is neither a JSON model description nor a recipe. */
ERR_MUST_CHECK int api_whatif_prepare(struct store *st, struct request *r, struct api_whatif *w);
void api_whatif_free(struct api_whatif *w);

#endif
