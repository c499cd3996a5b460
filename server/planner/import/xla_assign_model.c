/*
 * xla_assign_model.c - XLA's buffer assignment as a model (import_int.h): one raw tensor per
 * value xla_assign.c parses, its size XLA's, its kind its allocation's, its lifetime the
 * HloLiveRange section's. The plan keeps the parsed assignment beside the model: planned on
 * its own, XLA's own layout is the "xla-actual" row (plan_xla.c).
 */
#include "planner/import/import_int.h"

#include <string.h>

#include "planner/model/model_build.h"
#include "planner/xla_assign.h"

/* What the allocation's flags make of its values: parameters in, outputs out, the rest
 * temporaries (XLA's constants are temporaries to us: they hold memory the same way). */
static enum tensor_kind kind_of(unsigned flags)
{
    if (flags & XLA_ALLOC_PARAMETER)
        return TENSOR_INPUT;
    if (flags & (XLA_ALLOC_OUTPUT | XLA_ALLOC_LIVE_OUT))
        return TENSOR_OUTPUT;
    return TENSOR_TEMP;
}

/* One tensor per value of a; values with no live range live for the whole program. */
static int build(const struct xla_assign *a, struct model *m, struct err *e)
{
    size_t unranged = 0;
    int64_t whole = a->have_live_ranges ? a->schedule_end + 1 : 1;

    if (model_init(m, "xla-buffer-assignment", a->nvalues) != ERR_OK)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu values", a->nvalues);
    m->name = "xla-buffer-assignment";
    for (size_t i = 0; i < a->nvalues; i++) {
        const struct xla_value *v = &a->values[i];
        struct model_tensor *t = &m->tensors[i];
        if ((t->name = model_strdup(m, v->key, v->name_len)) == NULL)
            return err_set(e, ERR_NOMEM, "", "out of memory");
        t->raw = true;
        t->kind = kind_of(a->allocs[v->alloc].flags);
        t->live_given = true;
        t->live_start = v->live_given ? v->live_start : 0;
        t->live_end = v->live_given ? v->live_end : whole;
        if (t->live_end > MODEL_MAX_STEP)
            return err_set(e, ERR_LIMIT, "", "line %zu: a live range past step 2^53", v->line);
        unranged += !v->live_given;
        t->logical_bytes = t->padded_bytes = v->size;
    }
    if (!a->have_live_ranges)
        model_warn(m, "the buffer assignment has no HloLiveRange section: every value is taken "
                      "as live for the whole program");
    else if (unranged > 0)
        model_warn(m,
                   "%zu values have no live range in the HloLiveRange section: taken as "
                   "live for the whole program",
                   unranged);
    return ERR_OK;
}

int xla_assign_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                      struct err *e)
{
    struct xla_assign a;
    int rc;

    memset(m, 0, sizeof(*m));
    if ((rc = xla_assign_parse(s, len, c->limits->max_tensors, &a, e)) != ERR_OK)
        return rc;
    if ((rc = build(&a, m, e)) != ERR_OK) {
        model_free(m);
        xla_assign_free(&a);
        return rc;
    }
    if (c->xla != NULL) {
        *c->xla = a; /* ownership moves to the caller */
        c->xla_kept = true;
    } else {
        xla_assign_free(&a);
    }
    return ERR_OK;
}
