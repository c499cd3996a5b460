/*
 * pack.c - placeholder implementation of pack.h until the owning module lands.
 */
#include "planner/pack.h"

#include <stdlib.h>

void pack_result_free(struct pack_result *r)
{
    if (r == NULL)
        return;
    free(r->offsets);
    r->offsets = NULL;
}

int pack_lower_bound(const struct pack_problem *p, uint64_t *lb, struct err *e)
{
    (void)p;
    (void)lb;
    return err_set(e, ERR_INTERNAL, NULL, "pack_lower_bound: not implemented");
}

int pack_validate(const struct pack_problem *p, struct err *e)
{
    (void)p;
    return err_set(e, ERR_INTERNAL, NULL, "pack_validate: not implemented");
}

int pack_run(const struct pack_problem *p, const char *strategy, const struct pack_opts *o,
             struct pack_result *out, struct err *e)
{
    (void)p;
    (void)strategy;
    (void)o;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "pack_run: not implemented");
}

const char *pack_strategy_names(void)
{
    return "";
}

int pack_check(const struct pack_problem *p, const uint64_t *offsets, uint64_t peak, struct err *e)
{
    (void)p;
    (void)offsets;
    (void)peak;
    return err_set(e, ERR_INTERNAL, NULL, "pack_check: not implemented");
}

int pack_metrics_compute(const struct pack_problem *p, const uint64_t *offsets,
                         struct pack_metrics *out, struct err *e)
{
    (void)p;
    (void)offsets;
    (void)out;
    return err_set(e, ERR_INTERNAL, NULL, "pack_metrics_compute: not implemented");
}

void pack_metrics_free(struct pack_metrics *m)
{
    (void)m;
}
