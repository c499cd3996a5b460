/*
 * layout_view.h - a plan's layout view (server/planner/RESULT.md#views, written by
 * plan_views.c) read back into columns: what the trace export (trace.h) and the plan diff
 * (diff.h) work from, so a stored plan and a fresh one give the same answers. Every field is
 * checked; an error names it as "layout.<column>[i]".
 */
#ifndef TPUPLAN_LAYOUT_VIEW_H
#define TPUPLAN_LAYOUT_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

struct json_object;

/* The columns, entry i of each being tensor i. Every array is malloc'd and every string
 * points into root; all are owned by the view until layout_view_free. */
struct layout_view {
    size_t n;
    const char **name;
    int64_t *start, *end;
    uint64_t *offset, *padded, *logical; /* logical: valid when has_logical */
    bool has_logical;
    uint32_t *kind;      /* indices into kinds */
    uint32_t *shape;     /* indices into shapes */
    const char **kinds;  /* nkinds names */
    const char **shapes; /* nshapes texts; an entry may be NULL (a CSV buffer has none) */
    size_t nkinds, nshapes;
    struct json_object *root;
};

/* Parses text (len bytes) into *v (zeroed first; released by layout_view_free whatever
 * this returns). At most PACK_MAX_BUFFERS tensors. */
ERR_MUST_CHECK int layout_view_read(const char *text, size_t len, struct layout_view *v,
                                    struct err *e);
void layout_view_free(struct layout_view *v);

#endif
