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
    struct trace_cols c;
    int rc;

    *out = NULL;
    *out_len = 0;
    if ((rc = layout_view_read(layout, len, &v, e)) != ERR_OK)
        goto out;
    /* the view's columns as the trace reads them; a tensor's bytes are its padded size */
    c = (struct trace_cols){.n = v.n,
                            .name = v.name,
                            .start = v.start,
                            .end = v.end,
                            .offset = v.offset,
                            .bytes = v.padded,
                            .kind = v.kind,
                            .kinds = v.kinds,
                            .nkinds = v.nkinds,
                            .shape = v.shape,
                            .shapes = v.shapes,
                            .nshapes = v.nshapes};
    rc = trace_write(&c, title, ((size_t)1 << 20) + 16 * len + 1024 * v.n, out, out_len, counts, e);
out:
    layout_view_free(&v);
    return rc;
}
