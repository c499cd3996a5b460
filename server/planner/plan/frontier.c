/*
 * frontier.c - the most that fits (frontier.h): a doubling then halving search over one
 * recipe field, each probe a full plan of the recipe with that value.
 */
#include "planner/frontier.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/jsonw.h"
#include "planner/recipe.h"
#include "planner/plan/plan_int.h"

#define DEFAULT_HI (INT64_C(1) << 20)
#define MAX_HI     (INT64_C(1) << 30)

/* The names a user types for the fields worth maximizing. */
static const struct {
    const char *alias;
    const char *path;
} FIELDS[] = {
    {"batch", "train.batch"},          {"seq", "train.seq"},
    {"sequence", "train.seq"},         {"microbatches", "train.microbatches"},
    {"context", "serve.context"},      {"sequences", "serve.sequences"},
    {"concurrent", "serve.sequences"},
};

const char *frontier_field(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return NULL;
    for (size_t i = 0; i < sizeof(FIELDS) / sizeof(FIELDS[0]); i++)
        if (strcmp(name, FIELDS[i].alias) == 0)
            return FIELDS[i].path;
    return strchr(name, '.') != NULL ? name : NULL;
}

/* One search's state: the query resolved, the plans' options, the count of plans. */
struct search {
    const struct plan_opts *o;
    const struct plan_limits *l;
    const char *path;
    int64_t lo, hi, step;
    size_t max_plans;
    struct frontier_result *res;
};

/* Keeps p in the line's probes, in x order. */
static void keep(struct frontier_line *ln, const struct frontier_probe *p)
{
    size_t k = ln->n_probes;

    if (k == FRONTIER_MAX_PROBES)
        return;
    while (k > 0 && ln->probes[k - 1].x > p->x) {
        ln->probes[k] = ln->probes[k - 1];
        k--;
    }
    ln->probes[k] = *p;
    ln->n_probes++;
}

/* Plans the recipe with the field at x: *p its peak and verdict, kept in the line. */
static int probe(struct search *s, struct recipe *r, struct frontier_line *ln, int64_t x,
                 struct frontier_probe *p, struct err *e)
{
    struct plan_summary sum;
    char v[24], *text = NULL;
    size_t len = 0;
    int rc;

    if (s->res->plans == s->max_plans)
        return err_set(e, ERR_LIMIT, "max_plans",
                       "the search needs more than %zu plans; narrow it with a range or a step",
                       s->max_plans);
    snprintf(v, sizeof(v), "%lld", (long long)x);
    if ((rc = recipe_set(r, s->path, v, e)) != ERR_OK) {
        char msg[sizeof(e->msg)];
        snprintf(msg, sizeof(msg), "%s", e->msg);
        return err_set(e, rc, s->path, "%s = %lld: %s (a step makes the search try only multiples)",
                       s->path, (long long)x, msg);
    }
    if ((rc = recipe_text(r, &text, &len, e)) != ERR_OK)
        return rc;
    s->res->plans++;
    /* the portfolio alone: no document, no advice (its re-plans would multiply the probes) */
    rc = plan_measure(text, len, s->o, s->l, &sum, e);
    free(text);
    if (rc != ERR_OK)
        return rc;
    if (sum.verdict == PLAN_FIT_NO_CAPACITY)
        return err_set(e, ERR_INVALID, "chip", "no capacity to fit against: name a chip");
    s->res->capacity_bytes = ln->capacity_bytes = sum.capacity_bytes;
    s->res->has_budget = ln->has_budget = sum.has_budget;
    s->res->budget_bytes = ln->budget_bytes = sum.budget_bytes;
    p->x = x;
    p->peak_bytes = sum.peak_bytes;
    p->fits = sum.verdict == PLAN_FIT_FITS;
    keep(ln, p);
    return ERR_OK;
}

/* By how much a probe that does not fit is over: the line's capacity, else its budget. */
static uint64_t over_by(const struct frontier_line *ln, const struct frontier_probe *p)
{
    if (p->peak_bytes > ln->capacity_bytes)
        return p->peak_bytes - ln->capacity_bytes;
    if (ln->has_budget && p->peak_bytes > ln->budget_bytes)
        return p->peak_bytes - ln->budget_bytes;
    return 0; /* a kernel's VMEM */
}

/* The largest multiple of step that fits, in [lo, hi]: double from lo, then halve the gap. */
static int search_line(struct search *s, struct recipe *r, struct frontier_line *ln, struct err *e)
{
    struct frontier_probe p = {0}, bad = {0};
    int64_t good;
    int rc;

    if ((rc = probe(s, r, ln, s->lo, &p, e)) != ERR_OK)
        return rc;
    if (!p.fits) {
        ln->next = s->lo;
        ln->next_peak = p.peak_bytes;
        ln->next_over_bytes = over_by(ln, &p);
        return ERR_OK;
    }
    good = s->lo;
    ln->max_fit_peak = p.peak_bytes;
    while (bad.x == 0 && good < s->hi) {
        int64_t x = good * 2 / s->step * s->step;
        if (x <= good)
            x = good + s->step;
        if (x > s->hi)
            x = s->hi;
        if ((rc = probe(s, r, ln, x, &p, e)) != ERR_OK)
            return rc;
        if (p.fits) {
            good = x;
            ln->max_fit_peak = p.peak_bytes;
        } else {
            bad = p;
        }
    }
    while (bad.x != 0 && bad.x - good > s->step) {
        int64_t x = good + (bad.x - good) / s->step / 2 * s->step;
        if ((rc = probe(s, r, ln, x, &p, e)) != ERR_OK)
            return rc;
        if (p.fits) {
            good = x;
            ln->max_fit_peak = p.peak_bytes;
        } else {
            bad = p;
        }
    }
    ln->max_fit = good;
    if (bad.x != 0) {
        ln->next = bad.x;
        ln->next_peak = bad.peak_bytes;
        ln->next_over_bytes = over_by(ln, &bad);
    }
    return ERR_OK;
}

/* The query's range, resolved and checked into *s and s->res's query fields. */
static int resolve(const struct frontier_query *q, struct search *s, struct err *e)
{
    if ((s->path = frontier_field(q->maximize)) == NULL)
        return err_set(e, ERR_INVALID, "maximize",
                       "maximize: \"%s\" is not a field: batch, seq, microbatches, context, "
                       "sequences, or a recipe path such as train.batch",
                       q->maximize != NULL ? q->maximize : "");
    if (strlen(s->path) >= sizeof(s->res->path))
        return err_set(e, ERR_INVALID, "maximize", "maximize: the path is too long");
    s->step = q->step != 0 ? q->step : 1;
    s->lo = q->lo != 0 ? q->lo : s->step;
    s->hi = q->hi != 0 ? q->hi : DEFAULT_HI;
    if (s->step < 1 || s->step > MAX_HI)
        return err_set(e, ERR_INVALID, "step", "step: must be 1 to %lld", (long long)MAX_HI);
    /* named as they are asked for (tpuplan fit --min/--max, the API's query), not as the
     * result's lo and hi */
    if (s->lo < 1 || s->lo % s->step != 0)
        return err_set(e, ERR_INVALID, "min", "min: must be a positive multiple of the step (%lld)",
                       (long long)s->step);
    if (s->hi < s->lo || s->hi > MAX_HI)
        return err_set(e, ERR_INVALID, "max", "max: must be from min (%lld) to %lld",
                       (long long)s->lo, (long long)MAX_HI);
    s->hi = s->hi / s->step * s->step;
    if (q->n_sweep > FRONTIER_MAX_SWEEP || (q->sweep != NULL) != (q->n_sweep > 0))
        return err_set(e, ERR_INVALID, "sweep", "sweep: a field and 1 to %d values",
                       FRONTIER_MAX_SWEEP);
    if (q->sweep != NULL && strlen(q->sweep) >= sizeof(s->res->sweep))
        return err_set(e, ERR_INVALID, "sweep", "sweep: the path is too long");
    s->max_plans =
        q->max_plans != 0 && q->max_plans < FRONTIER_MAX_PLANS ? q->max_plans : FRONTIER_MAX_PLANS;
    snprintf(s->res->path, sizeof(s->res->path), "%s", s->path);
    snprintf(s->res->sweep, sizeof(s->res->sweep), "%s", q->sweep != NULL ? q->sweep : "");
    s->res->lo = s->lo;
    s->res->hi = s->hi;
    s->res->step = s->step;
    return ERR_OK;
}

int frontier_check(const struct frontier_query *q, struct frontier_result *r, struct err *e)
{
    struct search s = {.res = r};

    memset(r, 0, sizeof(*r));
    return resolve(q, &s, e);
}

/* One line: the recipe text parsed afresh, the swept value set, the search. A sweep value's
 * failure is the line's error; without a sweep it is the call's. */
static int run_line(struct search *s, const char *text, size_t len, const struct frontier_query *q,
                    size_t k, struct err *e)
{
    struct frontier_line *ln = &s->res->lines[k];
    struct recipe *r = NULL;
    struct err le;
    int rc;

    err_clear(&le);
    if ((rc = recipe_parse(text, len, &r, e)) != ERR_OK)
        return rc;
    if (q->sweep != NULL) {
        snprintf(ln->value, sizeof(ln->value), "%s", q->sweep_values[k]);
        rc = recipe_set(r, q->sweep, q->sweep_values[k], &le);
        if (rc == ERR_OK)
            rc = search_line(s, r, ln, &le);
        if (rc != ERR_OK && rc != ERR_LIMIT) {
            snprintf(ln->error, sizeof(ln->error), "%s", le.msg);
            rc = ERR_OK;
        } else if (rc == ERR_LIMIT) {
            *e = le;
        }
    } else {
        rc = search_line(s, r, ln, e);
    }
    recipe_free(r);
    return rc;
}

int frontier_search(const char *recipe, size_t len, const struct plan_opts *o,
                    const struct plan_limits *l, const struct frontier_query *q,
                    struct frontier_result *out, struct err *e)
{
    struct search s = {.o = o, .l = l, .res = out};
    char *text = NULL;
    size_t text_len = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = resolve(q, &s, e)) != ERR_OK)
        return rc;
    out->n_lines = q->sweep != NULL ? q->n_sweep : 1;
    if ((out->lines = calloc(out->n_lines, sizeof(*out->lines))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    if ((rc = recipe_compose(recipe, len, NULL, 0, &text, &text_len, e)) != ERR_OK)
        goto out;
    for (size_t k = 0; k < out->n_lines && rc == ERR_OK; k++)
        rc = run_line(&s, text, text_len, q, k, e);
out:
    free(text);
    if (rc != ERR_OK)
        frontier_free(out);
    return rc;
}

static void line_json(struct jsonw *w, const struct frontier_result *r,
                      const struct frontier_line *ln)
{
    jsonw_obj_begin(w, NULL);
    if (r->sweep[0] != '\0')
        jsonw_str(w, "value", ln->value);
    else
        jsonw_null(w, "value");
    if (ln->error[0] != '\0') {
        jsonw_str(w, "error", ln->error);
        jsonw_obj_end(w);
        return;
    }
    jsonw_null(w, "error");
    jsonw_u64(w, "capacity_bytes", ln->capacity_bytes);
    if (ln->has_budget)
        jsonw_u64(w, "budget_bytes", ln->budget_bytes);
    else
        jsonw_null(w, "budget_bytes");
    if (ln->max_fit > 0) {
        jsonw_i64(w, "max_fit", ln->max_fit);
        jsonw_u64(w, "max_fit_peak_bytes", ln->max_fit_peak);
    } else {
        jsonw_null(w, "max_fit");
        jsonw_null(w, "max_fit_peak_bytes");
    }
    if (ln->next > 0) {
        jsonw_i64(w, "next", ln->next);
        jsonw_u64(w, "next_peak_bytes", ln->next_peak);
        jsonw_u64(w, "next_over_bytes", ln->next_over_bytes);
    } else {
        jsonw_null(w, "next");
        jsonw_null(w, "next_peak_bytes");
        jsonw_null(w, "next_over_bytes");
    }
    jsonw_arr_begin(w, "probes");
    for (size_t i = 0; i < ln->n_probes; i++) {
        jsonw_obj_begin(w, NULL);
        jsonw_i64(w, "x", ln->probes[i].x);
        jsonw_u64(w, "peak_bytes", ln->probes[i].peak_bytes);
        jsonw_bool(w, "fits", ln->probes[i].fits);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

int frontier_json(const struct frontier_result *r, char **json, size_t *len, struct err *e)
{
    struct jsonw w;
    int rc;

    jsonw_init(&w, (size_t)64 << 20);
    jsonw_obj_begin(&w, NULL);
    jsonw_obj_begin(&w, "frontier");
    jsonw_str(&w, "maximize", r->path);
    jsonw_i64(&w, "lo", r->lo);
    jsonw_i64(&w, "hi", r->hi);
    jsonw_i64(&w, "step", r->step);
    if (r->sweep[0] != '\0')
        jsonw_str(&w, "sweep", r->sweep);
    else
        jsonw_null(&w, "sweep");
    jsonw_u64(&w, "capacity_bytes", r->capacity_bytes);
    if (r->has_budget)
        jsonw_u64(&w, "budget_bytes", r->budget_bytes);
    else
        jsonw_null(&w, "budget_bytes");
    jsonw_u64(&w, "plans", r->plans);
    jsonw_arr_begin(&w, "lines");
    for (size_t k = 0; k < r->n_lines; k++)
        line_json(&w, r, &r->lines[k]);
    jsonw_arr_end(&w);
    jsonw_obj_end(&w);
    jsonw_obj_end(&w);
    if ((rc = jsonw_finish(&w, json, len)) != ERR_OK)
        return err_set(e, rc, "", "writing the frontier failed");
    return ERR_OK;
}

void frontier_free(struct frontier_result *r)
{
    if (r == NULL)
        return;
    free(r->lines);
    memset(r, 0, sizeof(*r));
}
