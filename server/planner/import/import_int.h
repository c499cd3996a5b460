/*
 * import_int.h - the importers the table (import.c) names that have no public header of
 * their own, private to import/: each builds a model from a format whose parser's public
 * header (mmcsv.h, xla_assign.h, xla_oom.h) stays free of models. All take and return what
 * import_fn (import.h) does.
 */
#ifndef TPUPLAN_IMPORT_INT_H
#define TPUPLAN_IMPORT_INT_H

#include <stddef.h>

#include "planner/err.h"
#include "planner/import.h"
#include "planner/model.h"

/* mmcsv_model.c: a MiniMalloc CSV (mmcsv.h), one raw buffer per row, sizes and lifetimes as
 * given; source_format "minimalloc-csv". */
ERR_MUST_CHECK int mmcsv_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                                struct err *e);

/* xla_assign_model.c: XLA's buffer assignment (xla_assign.h), one raw tensor per value with
 * its allocation's kind and its live range; source_format "xla-buffer-assignment". Keeps
 * the parsed assignment in c->xla when that is not NULL (import.h). */
ERR_MUST_CHECK int xla_assign_import(const char *s, size_t len, struct import_ctx *c,
                                     struct model *m, struct err *e);

/* xla_oom_model.c: XLA's out-of-memory report (xla_oom.h), one tensor per listed allocation
 * with the shape it prints; source_format "xla-oom". Keeps the parsed report in c->oom when
 * that is not NULL (import.h). */
ERR_MUST_CHECK int xla_oom_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                                  struct err *e);

#endif
