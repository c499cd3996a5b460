/*
 * fuzz_xla_assign.c - libFuzzer target: XLA buffer-assignment dumps and memory-usage reports.
 *
 * Any byte string must fail with an error that names a line:column (or a limit), or parse
 * into an assignment that keeps the parser's promises: every value lies inside its
 * allocation, allocations are laid end to end without gaps up to total_bytes, keys carry a
 * shape index and name_len never passes it, live ranges are non-empty. A parsed assignment
 * must also plan (plan_validate) or fail cleanly. The report parser must never crash.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan.h"
#include "planner/xla_assign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct xla_assign *a)
{
    uint64_t at = 0;

    for (size_t k = 0; k < a->nallocs; k++) {
        const struct xla_alloc *al = &a->allocs[k];
        if (al->base != at || al->first + al->count > a->nvalues)
            abort();
        at += al->size;
    }
    if (at != a->total_bytes)
        abort();
    for (size_t i = 0; i < a->nvalues; i++) {
        const struct xla_value *v = &a->values[i];
        size_t klen = strlen(v->key);
        if (v->alloc >= a->nallocs || v->offset + v->size > a->allocs[v->alloc].size ||
            v->name_len == 0 || v->name_len > klen || v->key[klen - 1] != '}')
            abort();
        if (v->live_given && !(v->live_start < v->live_end))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct xla_assign a;
    struct xla_report r;
    struct plan_limits lim;
    struct plan_opts opts = {.format = "xla-buffer-assignment"};
    struct plan_summary s;
    struct err e;

    if (xla_assign_parse(text, size, 1000, &a, &e) == ERR_OK) {
        check(&a);
        xla_assign_free(&a);
        plan_limits_default(&lim);
        lim.max_input_bytes = 1u << 16;
        lim.max_tensors = 1000;
        (void)plan_validate(text, size, &opts, &lim, &s, &e);
    } else if (e.code == ERR_INVALID && strncmp(e.where, "line ", 5) != 0) {
        abort(); /* every syntax error names its line:column */
    }
    (void)xla_report_parse(text, size, &r, &e);
    return 0;
}
