/*
 * trace.h - a plan's memory timeline as Chrome / Perfetto trace JSON (the Trace Event
 * Format's JSON object form: {"traceEvents": [...], ...}), to open in ui.perfetto.dev or
 * chrome://tracing.
 *
 * Time is the program step: 1 step = 1 microsecond on the viewer's clock (the format's
 * "ts" and "dur" unit), so step s starts at s us. One process (pid 1) holds:
 *   - counter events ("ph":"C"), one sample per step where something starts or ends:
 *     "live bytes" with one argument per tensor kind present (Perfetto draws one counter
 *     track per argument, "live bytes activation", ...) and "heap height" with one
 *     argument "bytes" (the highest offset + size live at that step, the static plan's
 *     heap top);
 *   - one complete slice ("ph":"X") per buffer with bytes: name = the tensor's name, cat =
 *     its kind, ts/dur = its lifetime, args = offset, bytes, end offset, kind, shape;
 *   - metadata ("ph":"M"): the process name, and each track's name and sort index.
 * Tracks (the "threads" slices sit on) are offset-ordered lanes: a sweep over time in
 * program order (ends before starts at a step, starts in offset order) gives each
 * starting buffer the free track whose last buffer sat nearest below its offset (else
 * nearest above, else a new track), so no two slices on a track overlap in time and a
 * track follows one band of memory; the tracks are then numbered by the lowest offset they
 * hold (tid 1 = the bottom of memory), named "track NNN: offsets from X" (zero-padded, so
 * name order is offset order) and given that order as thread_sort_index. As many tracks as
 * the most buffers live at once, at most.
 *
 * Event count: 2 per distinct start/end step (counters) + 1 per buffer with bytes (slices)
 * + 1 + 2 per track (metadata). O(n log n) time.
 */
#ifndef TPUPLAN_TRACE_H
#define TPUPLAN_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

/* A plan's buffers as columns (the layout view's form, server/planner/RESULT.md#views),
 * borrowed. */
struct trace_cols {
    size_t n;
    const char *const *name; /* n */
    const int64_t *start, *end;
    const uint64_t *offset, *bytes; /* bytes 0: not packed, left out of the trace */
    const uint32_t *kind;           /* n indices into kinds */
    const char *const *kinds;       /* nkinds names */
    size_t nkinds;
    const uint32_t *shape;     /* n indices into shapes, or NULL */
    const char *const *shapes; /* nshapes texts; an entry may be NULL (no shape) */
    size_t nshapes;
};

#define TRACE_MAX_KINDS 64

/* What was written, for tests and logs. */
struct trace_counts {
    size_t slices, counters, metadata, tracks;
};

/*
 * Writes the trace of c, titled title (the plan's name), into *out (malloc'd,
 * NUL-terminated, caller frees; *out_len bytes), at most max_bytes (ERR_LIMIT beyond).
 * counts may be NULL. ERR_INVALID names the column entry that is malformed.
 */
ERR_MUST_CHECK int trace_write(const struct trace_cols *c, const char *title, size_t max_bytes,
                               char **out, size_t *out_len, struct trace_counts *counts,
                               struct err *e);

/*
 * The same from the text of a plan's layout view (what the service stores and
 * plan_run's views hold): parses it (ERR_INVALID naming "layout.<column>[i]" when it is
 * malformed), then trace_write with a bound of 1 MiB + 16 x len + 1 KiB per tensor.
 */
ERR_MUST_CHECK int trace_from_layout(const char *layout, size_t len, const char *title, char **out,
                                     size_t *out_len, struct trace_counts *counts, struct err *e);

#endif
