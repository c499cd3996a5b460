/*
 * plan_verdict.c - the plan's one verdict (plan.h: enum plan_fit), composed from the HBM
 * peak against the capacity, every kernel's VMEM against its limit and the peak against the
 * budget, and worded once: the result's summary.verdict carries the words the CLI prints and
 * the dashboard's cards show (server/planner/RESULT.md#the-verdict). Byte counts are worded
 * by layout_format_bytes, XLA's formatter.
 */
#include "planner/plan/plan_int.h"

#include <stdio.h>
#include <string.h>

#include "planner/jsonw.h"
#include "planner/layout.h"

static const char *const fit_names[] = {"fits", "no-capacity", "over-budget", "does-not-fit"};
static const char *const headlines[] = {"fits", "no capacity to check", "over budget",
                                        "does not fit"};
static const char *const check_names[PLAN_CHECKS] = {"hbm", "vmem", "budget"};

const char *plan_fit_name(enum plan_fit f)
{
    return (unsigned)f < sizeof(fit_names) / sizeof(fit_names[0]) ? fit_names[f] : NULL;
}

static const char *fmt(uint64_t v, char *buf, size_t cap)
{
    return layout_format_bytes(v, buf, cap);
}

static void check_hbm(const struct plan_ctx *c, uint64_t peak, struct plan_check *k)
{
    char p[32], cap[32], d[32];

    k->applies = true;
    if (c->capacity == 0) {
        k->ok = PLAN_CHECK_UNKNOWN;
        snprintf(k->text, sizeof(k->text), "no capacity given to check the HBM peak %s against",
                 fmt(peak, p, sizeof(p)));
        return;
    }
    k->ok = peak <= c->capacity ? PLAN_CHECK_OK : PLAN_CHECK_FAILS;
    if (k->ok == PLAN_CHECK_OK)
        snprintf(k->text, sizeof(k->text), "HBM peak %s within the %s capacity, %s headroom",
                 fmt(peak, p, sizeof(p)), fmt(c->capacity, cap, sizeof(cap)),
                 fmt(c->capacity - peak, d, sizeof(d)));
    else
        snprintf(k->text, sizeof(k->text), "HBM peak %s over the %s capacity by %s",
                 fmt(peak, p, sizeof(p)), fmt(c->capacity, cap, sizeof(cap)),
                 fmt(peak - c->capacity, d, sizeof(d)));
}

static void check_vmem(const struct plan_ctx *c, struct plan_check *k)
{
    const struct plan_kernel_over *o = &c->kernel_over;
    char need[32], lim[32], d[32];

    k->applies = c->ks.n > 0;
    if (!k->applies)
        return;
    k->ok = c->kernels_over == 0 ? PLAN_CHECK_OK : PLAN_CHECK_FAILS;
    if (k->ok == PLAN_CHECK_OK)
        snprintf(k->text, sizeof(k->text), "%zu kernel%s within %s VMEM limit%s", c->ks.n,
                 c->ks.n == 1 ? "" : "s", c->ks.n == 1 ? "its" : "their", c->ks.n == 1 ? "" : "s");
    else
        snprintf(k->text, sizeof(k->text),
                 "kernel \"%.200s\" needs %s of VMEM, over its %s limit by %s (%zu of %zu kernels "
                 "over)",
                 c->ks.k[o->kernel].name, fmt(o->need, need, sizeof(need)),
                 fmt(o->limit, lim, sizeof(lim)), fmt(o->need - o->limit, d, sizeof(d)),
                 c->kernels_over, c->ks.n);
}

static void check_budget(const struct plan_ctx *c, uint64_t peak, struct plan_check *k)
{
    char p[32], b[32], d[32];

    k->applies = c->has_budget;
    if (!k->applies)
        return;
    k->ok = peak <= c->budget_bytes ? PLAN_CHECK_OK : PLAN_CHECK_FAILS;
    if (k->ok == PLAN_CHECK_OK)
        snprintf(k->text, sizeof(k->text), "peak %s within the %s budget, %s under",
                 fmt(peak, p, sizeof(p)), fmt(c->budget_bytes, b, sizeof(b)),
                 fmt(c->budget_bytes - peak, d, sizeof(d)));
    else
        snprintf(k->text, sizeof(k->text), "peak %s over the %s budget by %s",
                 fmt(peak, p, sizeof(p)), fmt(c->budget_bytes, b, sizeof(b)),
                 fmt(peak - c->budget_bytes, d, sizeof(d)));
}

/* The verdict's sentence: its headline, then the checks that decide it (every check when it
 * fits), "; "-separated. */
static void compose_text(struct plan_verdict *v)
{
    bool passing = v->status == PLAN_FIT_FITS || v->status == PLAN_FIT_NO_CAPACITY;
    size_t n = (size_t)snprintf(v->text, sizeof(v->text), "%s", headlines[v->status]);
    const char *sep = ": ";

    for (int k = 0; k < PLAN_CHECKS && n < sizeof(v->text); k++) {
        const struct plan_check *ck = &v->checks[k];
        if (!ck->applies || (!passing && ck->ok != PLAN_CHECK_FAILS))
            continue;
        n += (size_t)snprintf(v->text + n, sizeof(v->text) - n, "%s%s", sep, ck->text);
        sep = "; ";
    }
}

void plan_verdict_compose(const struct plan_ctx *c, uint64_t peak, struct plan_verdict *v)
{
    memset(v, 0, sizeof(*v));
    check_hbm(c, peak, &v->checks[PLAN_CHECK_HBM]);
    check_vmem(c, &v->checks[PLAN_CHECK_VMEM]);
    check_budget(c, peak, &v->checks[PLAN_CHECK_BUDGET]);
    v->fits = v->checks[PLAN_CHECK_HBM].ok != PLAN_CHECK_FAILS && c->kernels_over == 0;
    v->within_budget = !c->has_budget || peak <= c->budget_bytes;
    if (!v->fits)
        v->status = PLAN_FIT_DOES_NOT_FIT;
    else if (!v->within_budget)
        v->status = PLAN_FIT_OVER_BUDGET;
    else
        v->status = c->capacity == 0 ? PLAN_FIT_NO_CAPACITY : PLAN_FIT_FITS;
    compose_text(v);
}

void plan_verdict_write(struct jsonw *w, const struct plan_verdict *v)
{
    jsonw_obj_begin(w, "verdict");
    jsonw_str(w, "status", fit_names[v->status]);
    jsonw_str(w, "headline", headlines[v->status]);
    jsonw_str(w, "text", v->text);
    /* the fit alone (HBM and VMEM) and the budget alone, for a caller that shows them apart */
    jsonw_str(w, "fit",
              !v->fits ? headlines[PLAN_FIT_DOES_NOT_FIT]
              : v->checks[PLAN_CHECK_HBM].ok == PLAN_CHECK_UNKNOWN ? headlines[PLAN_FIT_NO_CAPACITY]
                                                                   : headlines[PLAN_FIT_FITS]);
    if (v->checks[PLAN_CHECK_BUDGET].applies)
        jsonw_str(w, "budget",
                  v->within_budget ? "within budget" : headlines[PLAN_FIT_OVER_BUDGET]);
    else
        jsonw_null(w, "budget");
    jsonw_arr_begin(w, "checks");
    for (int k = 0; k < PLAN_CHECKS; k++) {
        const struct plan_check *ck = &v->checks[k];
        if (!ck->applies)
            continue;
        jsonw_obj_begin(w, NULL);
        jsonw_str(w, "name", check_names[k]);
        if (ck->ok == PLAN_CHECK_UNKNOWN)
            jsonw_null(w, "ok");
        else
            jsonw_bool(w, "ok", ck->ok == PLAN_CHECK_OK);
        jsonw_str(w, "text", ck->text);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}
