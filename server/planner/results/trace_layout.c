/*
 * trace_layout.c - trace_from_layout (trace.h): a plan's layout view read back into its
 * columns (layout_view.h) for trace_write. The CLI and the service both export from this
 * view, so a stored plan and a fresh one give the same trace.
 */
#include "planner/layout_view.h"
#include "planner/trace.h"

int trace_from_layout(const char *layout, size_t len, const char *title, char **out,
                      size_t *out_len, struct trace_counts *counts, struct err *e)
{
    struct layout_view v;
    struct trace_cols c = {0};
    int rc;

    *out = NULL;
    *out_len = 0;
    if ((rc = layout_view_read(layout, len, &v, e)) != ERR_OK)
        goto out;
    c.n = v.n;
    c.name = v.name;
    c.start = v.start;
    c.end = v.end;
    c.offset = v.offset;
    c.bytes = v.padded;
    c.kind = v.kind;
    c.kinds = v.kinds;
    c.nkinds = v.nkinds;
    c.shape = v.shape;
    c.shapes = v.shapes;
    c.nshapes = v.nshapes;
    rc = trace_write(&c, title, ((size_t)1 << 20) + 16 * len + 1024 * v.n, out, out_len, counts, e);
out:
    layout_view_free(&v);
    return rc;
}
