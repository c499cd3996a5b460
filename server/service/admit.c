/*
 * admit.c - the large reads' slots (admit.h): one counter, compare-and-swap below the limit.
 */
#include "service/admit.h"

#include <stdio.h>

#include "service/exec.h"
#include "service/problem.h"
#include "service/request.h"
#include "service/server.h"
#include "service/store.h"
#include "service/storeerr.h"

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

enum admit_verdict admit_large(struct request *r, uint64_t tensors)
{
    struct server *srv = r->srv;
    char d[240];

    if (r->http.heavy || tensors < ADMIT_LARGE_TENSORS)
        return ADMIT_RUN;
    if (!admit_heavy(srv)) {
        snprintf(d, sizeof(d),
                 "%u large reads (whole plans, layouts, traces, diffs of %u tensors or more) are "
                 "in progress, the most this server runs at once; retry in a moment.",
                 srv->cfg->max_heavy, ADMIT_LARGE_TENSORS);
        request_reply_problem(r, PROBLEM_SERVER_BUSY, d);
        return ADMIT_BUSY;
    }
    /* given back at completion (http.c), wherever it is answered */
    r->http.heavy = true;
    exec_submit(srv->exec_heavy, r);
    return ADMIT_MOVED;
}

bool admit_plans(struct store *st, struct request *r, const char *a, const char *b)
{
    uint64_t na = 0, nb = 0;
    int rc;

    if (r->http.heavy)
        return true; /* admitted before it moved here */
    rc = store_plan_tensors(st, a, &na);
    if (rc == STORE_OK && b != NULL)
        rc = store_plan_tensors(st, b, &nb);
    if (rc != STORE_OK) {
        storeerr_reply(r, rc);
        return false;
    }
    return admit_large(r, na > nb ? na : nb) == ADMIT_RUN;
}
