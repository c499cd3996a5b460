/*
 * frontierq.h - a frontier search's query as JSON (POST /api/v1/plans/{id}/frontiers and
 * the frontiers table's query column): read into the planner's struct frontier_query
 * (planner/frontier.h), and written back normalised.
 *
 *   {"maximize": "batch", "min": 1, "max": 4096, "step": 1,
 *    "sweep": {"field": "train.remat", "values": ["full", "dots_saveable"]}}
 *
 * maximize is required: an alias or a recipe path (frontier_field). min, max and step are
 * whole numbers from 1; sweep is null or a field and 1 to FRONTIER_MAX_SWEEP strings of at
 * most FRONTIERQ_VALUE_MAX bytes. Anything else is an error naming the member. The
 * normalised form names the field by its path and fills in the range the search uses
 * (frontier_check), so one document says exactly what was searched; the worker reads it with
 * the same parser; the request also checks the fields against the plan's recipe
 * (frontierq_check_recipe). Pure: no I/O, no state.
 */
#ifndef TPUPLAN_FRONTIERQ_H
#define TPUPLAN_FRONTIERQ_H

#include <stddef.h>

#include "planner/err.h"
#include "planner/frontier.h"

#define FRONTIERQ_FIELD_MAX 63 /* bytes of maximize and sweep.field (frontier_result's) */
#define FRONTIERQ_VALUE_MAX 63 /* bytes of a sweep value (frontier_line.value's) */

/* A query read from JSON: q's strings point into the struct itself. */
struct frontierq {
    struct frontier_query q;
    char maximize[FRONTIERQ_FIELD_MAX + 1];
    char sweep[FRONTIERQ_FIELD_MAX + 1];
    char values[FRONTIER_MAX_SWEEP][FRONTIERQ_VALUE_MAX + 1];
    const char *value_ptrs[FRONTIER_MAX_SWEEP];
};

/* Reads len bytes of JSON into *out and checks it (frontier_check: the range, the field).
 * Errors: ERR_INVALID without a location for text that is not JSON, else naming the member
 * ("maximize", "sweep.values[2]", "colour" for a key that is no member). *out must not be
 * copied (q points into it). */
ERR_MUST_CHECK int frontierq_parse(const char *json, size_t len, struct frontierq *out,
                                   struct err *e);

/* Whether the recipe (len bytes, as frontier_search reads it) has the query's fields:
 * maximize a whole number, the swept field any value. ERR_OK also when the recipe itself
 * does not read (the search then says why); else ERR_INVALID naming "maximize" or
 * "sweep.field" with the recipe's reason ("train.loss: no such field in this recipe"). Reads
 * the recipe, builds no model: cheap enough for a request. */
ERR_MUST_CHECK int frontierq_check_recipe(const struct frontierq *q, const char *recipe, size_t len,
                                          struct err *e);

/* The normalised document of a parsed query (malloc'd, NUL-terminated; NULL when out of
 * memory): {"maximize": PATH, "min", "max", "step", "sweep": null | {"field", "values"}}. */
char *frontierq_json(const struct frontierq *q);

#endif
