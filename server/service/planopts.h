/*
 * planopts.h - a plan's options (struct plan_opts) as the JSON document stored with the
 * plan (plans.options): written by the API when a plan is submitted, read back by the
 * planner worker that runs it, so both sides agree on one form.
 *
 * The document is an object with the keys format (a plan_format_name), chip, strategies,
 * capacity, time_limit_s, alignment, name, mem_fraction, preallocate (a boolean), budget
 * (its text, planner/budget.h), goal (pack_goal_name), and xla_assignment and xla_report
 * (the text of XLA's dumps sent with the model); unset fields (NULL, 0, PLAN_FMT_AUTO,
 * PLAN_PREALLOC_DEFAULT, PACK_GOAL_MIN) are omitted. Pure: no I/O, no state.
 * A document holds its strings once: a buffer of strlen(json) + 1 bytes always fits them.
 */
#ifndef TPUPLAN_PLANOPTS_H
#define TPUPLAN_PLANOPTS_H

#include <stddef.h>

#include "planner/err.h"
#include "planner/plan.h"

/* The document for o, as a malloc'd string (caller frees); NULL when out of memory. */
char *planopts_json(const struct plan_opts *o);

/* Fills *o from such a document. The strings in *o point into buf (cap bytes, owned by
 * the caller). 0, or -1 when the document is malformed or its strings do not fit. */
ERR_MUST_CHECK int planopts_parse(const char *json, struct plan_opts *o, char *buf, size_t cap);

#endif
