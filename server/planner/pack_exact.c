/* placeholder */
#include "planner/pack_int.h"
int pack_exact(const struct pack_problem *p, const struct pack_opts *o, double deadline,
               uint64_t lb, uint64_t *offsets, uint64_t *peak, bool *proven, double *solved_at,
               struct err *e)
{
    (void)p;
    (void)o;
    (void)deadline;
    (void)offsets;
    (void)lb;
    (void)peak;
    (void)e;
    (void)solved_at;
    *proven = false;
    return ERR_OK;
}
