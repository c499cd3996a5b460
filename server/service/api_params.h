/*
 * api_params.h - the parameters of a request that creates a plan (POST /api/v1/plans and
 * POST /api/v1/plans/{id}/whatif), query parameters and form fields alike (request.h args):
 * the plan options through the planner's one table (planner/plan_options.h: the names,
 * grammars, ranges and messages of `tpuplan plan`'s flags), and ?retain=. Every bad,
 * unknown or repeated parameter is listed in one 400 invalid-parameter problem, its
 * `errors` member holding each one's name and detail (problem.h).
 */
#ifndef TPUPLAN_API_PARAMS_H
#define TPUPLAN_API_PARAMS_H

#include <stdbool.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/plan.h"
#include "service/request.h"

struct api_params {
    /* The plan options: the input's format from the Content-Type (multipart: the file
     * part's) unless ?format= is given, XLA's dumps from the form's attachments. Its
     * strings are borrowed from the request. */
    struct plan_opts opts;
    uint64_t retain_s; /* ?retain=, at most --retain; else --retain (0: forever) */
};

/* Reads r's parameters into *p: the plan options when `options` (a submission; a what-if
 * takes none, its changes are its body) and retain. 0, or -1 after answering 400. */
ERR_MUST_CHECK int api_params_read(struct request *r, bool options, struct api_params *p);

#endif
