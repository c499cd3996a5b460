/*
 * plan_series.c - the number writers the result's sections share (plan_int.h): a timeline's
 * steps and series, downsampled alike (beyond PLAN_TIMELINE_MAX points, each point is the
 * maximum of a group of them), and a peak against the lower bound. A leaf: plan_result.c
 * and plan_runtime.c both call it.
 */
#include "planner/plan/plan_int.h"

#include "planner/jsonw.h"

static size_t timeline_group(size_t n)
{
    return n > PLAN_TIMELINE_MAX ? (n + PLAN_TIMELINE_MAX - 1) / PLAN_TIMELINE_MAX : 1;
}

void plan_write_steps(struct jsonw *w, const int64_t *steps, size_t n)
{
    size_t group = timeline_group(n);

    jsonw_arr_begin(w, "step");
    for (size_t g = 0; g < n; g += group)
        jsonw_i64(w, NULL, steps[g]);
    jsonw_arr_end(w);
}

/* One series, of u (or of d when u is NULL). */
static void write_series(struct jsonw *w, const char *key, const uint64_t *u, const double *d,
                         size_t n)
{
    size_t group = timeline_group(n);

    jsonw_arr_begin(w, key);
    for (size_t g = 0; g < n; g += group) {
        uint64_t mu = 0;
        double md = 0;
        for (size_t k = g; k < g + group && k < n; k++) {
            if (u != NULL)
                mu = u[k] > mu ? u[k] : mu;
            else
                md = d[k] > md ? d[k] : md;
        }
        if (u != NULL)
            jsonw_u64(w, NULL, mu);
        else
            jsonw_double(w, NULL, md);
    }
    jsonw_arr_end(w);
}

void plan_write_series(struct jsonw *w, const char *key, const uint64_t *v, size_t n)
{
    write_series(w, key, v, NULL, n);
}

void plan_write_series_double(struct jsonw *w, const char *key, const double *v, size_t n)
{
    write_series(w, key, NULL, v, n);
}

void plan_write_peak_figures(struct jsonw *w, uint64_t peak, uint64_t lb)
{
    uint64_t frag = peak - (lb < peak ? lb : peak);

    jsonw_u64(w, "peak_bytes", peak);
    jsonw_u64(w, "lower_bound_bytes", lb);
    jsonw_u64(w, "fragmentation_bytes", frag);
    jsonw_double(w, "fragmentation", peak ? (double)frag / (double)peak : 0);
}
