/*
 * admit.c - the large reads' slots (admit.h): one counter, compare-and-swap below the limit.
 */
#include "service/admit.h"

#include "service/server.h"

bool admit_heavy(struct server *srv)
{
    unsigned n = atomic_load_explicit(&srv->heavy, memory_order_relaxed);

    do {
        if (n >= srv->cfg->max_heavy)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&srv->heavy, &n, n + 1, memory_order_acq_rel,
                                                    memory_order_relaxed));
    return true;
}

void admit_heavy_done(struct server *srv)
{
    atomic_fetch_sub_explicit(&srv->heavy, 1, memory_order_acq_rel);
}
