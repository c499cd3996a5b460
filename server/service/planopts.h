/*
 * planopts.h - a plan's options (struct plan_opts) as the JSON document stored with the
 * plan (plans.options): written by the API when a plan is submitted, read back by the
 * planner worker that runs it and by a what-if of it, so both sides agree on one form.
 *
 * The document is an object with a key per stored option of the planner's table
 * (planner/plan_options.h, PLAN_OPT_STORED): format (an input format's name, import.h),
 * chip, strategies, capacity (an integer), time_limit_s (a number of seconds), alignment,
 * name, budget (its text), mem_fraction, xla_assignment and xla_report (the text of XLA's
 * dumps sent with the model), preallocate (a boolean) and goal, in that order; unset options
 * are left out. Read back, each value goes through the same table as the API's parameters,
 * so a document holds nothing a parameter could not: an unknown key or a value out of range
 * is refused.
 * Pure: no I/O, no state. A document holds its strings once: a buffer of strlen(json) + 1
 * bytes always fits them.
 */
#ifndef TPUPLAN_PLANOPTS_H
#define TPUPLAN_PLANOPTS_H

#include <stddef.h>

#include "planner/err.h"
#include "planner/plan.h"

/* The document for o, as a malloc'd string (caller frees); NULL when out of memory. */
char *planopts_json(const struct plan_opts *o);

/* Fills *o from such a document. The strings in *o point into buf (cap bytes, owned by
 * the caller). 0, or -1 when the document is malformed, holds an unknown key or a bad
 * value, or its strings do not fit; *e (may be NULL) then says which. */
ERR_MUST_CHECK int planopts_parse(const char *json, struct plan_opts *o, char *buf, size_t cap,
                                  struct err *e);

#endif
