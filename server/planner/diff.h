/*
 * diff.h - two plan results compared: what changed between plan A ("before") and plan B
 * ("after"), for `tpuplan diff A B`, `GET /api/v1/diff?a=&b=` and the page /d/{a}/{b}.
 *
 * Each side is a plan result (server/planner/RESULT.md) in one of its stored forms: the whole
 * document (its tensors array is read), or its summary view with its layout view beside it (what
 * the service stores; the layout view's columns are read). A service plan document
 * ({"id", ..., "result": {...}}) is accepted for the whole result too.
 *
 * The answer (schema: static/schema/diff.schema.json) holds:
 *   - "a", "b": each side's name, chip, tensor count;
 *   - "summary": peak, padded, logical, lower-bound and fragmentation bytes before, after
 *     and their delta (after - before, signed), fragmentation before/after/delta, fits
 *     before and after, and how many tensors were added, removed, changed and unchanged;
 *     and each side's verdict (summary.verdict.headline; null in an older result);
 *   - "by_kind": per tensor kind present on either side, count and padded/logical bytes
 *     before and after, with the deltas;
 *   - "groups": the added remat copies (names ending in MODEL_REMAT_SUFFIX) as one entry,
 *     their deltas summed ([] when none); each is still in "tensors", marked with "group";
 *   - "tensors": the tensors matched by name that differ (padded or logical bytes, shape
 *     with its layout, or kind) or exist on one side only ("status": changed, added,
 *     removed), each with padded_bytes_delta, layout before and after (the XLA shape with
 *     its layout; null on the side where it is absent), offsets and lifetimes; sorted by
 *     |padded_bytes_delta|, largest first, then by name. Tensors whose offset or lifetime
 *     alone moved are counted as unchanged: a different packing moves every offset.
 *
 * Pure: no I/O, no global state; O(n log n) in the tensors of both sides.
 */
#ifndef TPUPLAN_DIFF_H
#define TPUPLAN_DIFF_H

#include <stddef.h>

#include "planner/err.h"

/* One side, borrowed for the call: result (result_len bytes) is the whole result or its
 * summary view; layout, when not NULL, is the layout view (then tensors come from it). */
struct diff_input {
    const char *result;
    size_t result_len;
    const char *layout;
    size_t layout_len;
};

/* The diff of a (before) and b (after) as a malloc'd NUL-terminated JSON document in *json
 * (caller frees; *json_len bytes), at most max_bytes (ERR_LIMIT beyond; 0: 1 GiB). Errors
 * name the side and field: "a.summary.peak_bytes", "b.layout.name[3]". */
ERR_MUST_CHECK int diff_run(const struct diff_input *a, const struct diff_input *b,
                            size_t max_bytes, char **json, size_t *json_len, struct err *e);

#endif
