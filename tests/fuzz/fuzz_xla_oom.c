/*
 * fuzz_xla_oom.c - libFuzzer target: XLA's out-of-memory reports and memory figures as
 * users paste them (xla_oom.h, xla_memstats.h).
 *
 * Any byte string must fail with an error that names a line:column (or a limit), or parse
 * into a report that keeps the parser's promises: each entry's strings are NUL-terminated
 * inside the report's strings, every printed size reads back as its bytes' text (a size's
 * text is what was printed, its bytes within half a unit of the last digit), the cut count
 * is the entries marked cut. A parsed report with entries must also plan (plan_validate)
 * or fail cleanly. The memory-figure parser must never crash either.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan.h"
#include "planner/xla_memstats.h"
#include "planner/xla_oom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_size(const struct xla_oom_size *s)
{
    if (strnlen(s->text, XLA_OOM_TEXT_MAX) >= XLA_OOM_TEXT_MAX)
        abort();
    if (s->text[0] == '\0' && s->bytes != 0)
        abort();
}

static void check(const struct xla_oom *r, size_t size)
{
    size_t cut = 0;

    check_size(&r->used);
    check_size(&r->capacity);
    check_size(&r->total);
    check_size(&r->temp);
    for (size_t k = 0; k < r->nallocs; k++) {
        const struct xla_oom_alloc *a = &r->allocs[k];
        const char *strs[] = {a->shape, a->op_type, a->op_name, a->source_file,
                              a->label, a->name,    a->type};
        check_size(&a->size);
        check_size(&a->unpadded);
        check_size(&a->extra);
        for (size_t f = 0; f < sizeof(strs) / sizeof(strs[0]); f++)
            if (strs[f] != NULL && strlen(strs[f]) > size)
                abort();
        cut += a->cut;
    }
    if (cut != r->cut)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    struct xla_oom r;
    struct xla_memstats ms;
    struct plan_limits lim;
    struct plan_opts opts = {.format = "xla-oom", .strategies = "xla-spatial"};
    struct plan_summary s;
    struct err e;

    if (xla_oom_parse(text, size, 1000, &r, &e) == ERR_OK) {
        check(&r, size);
        if (r.nallocs > 0) {
            plan_limits_default(&lim);
            lim.max_input_bytes = 1u << 16;
            lim.max_tensors = 1000;
            (void)plan_validate(text, size, &opts, &lim, &s, &e);
        }
        xla_oom_free(&r);
    } else if (e.code == ERR_INVALID && strncmp(e.where, "line ", 5) != 0) {
        abort(); /* every syntax error names its line:column */
    }
    if (xla_memstats_parse(text, size, &ms, &e) != ERR_OK && strncmp(e.where, "line ", 5) != 0)
        abort();
    return 0;
}
