/*
 * plan.c - the planner's front door (see plan.h): build the model with the input format's
 * importer (import.h), resolve layouts and lifetimes, settle the options and the packing
 * problem; then plan_run packs (plan_portfolio.c), checks and measures the packing, replays
 * it through the runtime allocator (plan_runtime.c), suggests (suggest_model) and writes the
 * result (plan_result.c, plan_views.c), the stages after packing on two threads (finish
 * below). plan_int.h is what these modules share.
 *
 * Everything is per device: a sharded model's tensors are planned at their local shapes.
 * All sizes are checked 64-bit sums (ERR_OVERFLOW); all memory is bounded by the input
 * size and struct plan_limits.
 */
#include "planner/model_json.h"
#include "planner/plan.h"
#include "planner/plan_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "planner/arith.h"
#include "planner/budget.h"
#include "planner/bfc.h"
#include "planner/chip.h"
#include "planner/import.h"
#include "planner/jsonw.h"
#include "planner/kernel.h"
#include "planner/layout.h"
#include "planner/lifetime.h"
#include "planner/model.h"
#include "planner/base/jsonr.h"
#include "planner/plan/plan_int.h"
#include "planner/suggest.h"

/* Offset alignment default. An assumption: no public source gives XLA:TPU's HBM buffer
 * alignment. The BFC allocator aligns to 256 B (server/planner/SOURCES.md#bfc) and every
 * tiled TPU array is a multiple of 512 B, the smallest scalar tile
 * (server/planner/SOURCES.md#1-d-arrays-and-scalars), so
 * 512 B rarely changes a plan; the result labels it an assumption. */
#define PLAN_DEFAULT_ALIGNMENT 512
#define PLAN_DEFAULT_TIME_S    2.0
#define PLAN_EXACT_MAX_BUFS    2000 /* "best" runs the exact solver only below this */
/* The search strategies' default time by problem size: PLAN_DEFAULT_TIME_S up to
 * PLAN_BUDGET_FULL_BUFS buffers, then that share of it (each search step is a greedy pass
 * or a probe whose cost grows with the buffers, while a plan should stay interactive: a
 * 4 MB program of 20,000 buffers gets 0.2 s and plans in under a second), at least
 * PLAN_BUDGET_MIN_S. A time limit the caller or the model gives is kept as it is. */
#define PLAN_BUDGET_FULL_BUFS 2000
#define PLAN_BUDGET_MIN_S     0.1
#define PLAN_MAX_KERNELS      100000

void plan_limits_default(struct plan_limits *l)
{
    l->max_input_bytes = 256u << 20;
    l->max_json_depth = 32;
    l->max_tensors = 1000000;
    l->max_ops = 1000000;
    l->max_time_limit_s = 0;
    l->max_patterns = 256;
}

/* ---- preparation: everything up to (not including) packing ----------------------- */

static void ctx_free(struct plan_ctx *c)
{
    plan_kernels_free(c);
    model_free(&c->m);
    plan_xla_free(&c->xla);
    plan_report_free(&c->report);
    free(c->bufs);
    free(c->buf_tensor);
    memset(c, 0, sizeof(*c));
}

/* Expands the requested list ("best", "all" or names) into c->strategies; the list is
 * checked by the options' table first (plan_options.h), so every name in it is known. */
static int choose_strategies(struct plan_ctx *c, const char *req, struct err *e)
{
    size_t nknown = pack_strategy_count();
    struct plan_opts checked = {0};
    int rc;

    if ((rc = plan_opts_set(&checked, "strategies", req, e)) != ERR_OK)
        return rc;
    c->nstrategies = 0;
    for (const char *p = req; *p != '\0';) {
        size_t n = strcspn(p, ",");
        char tok[32];
        snprintf(tok, sizeof(tok), "%.*s", (int)n, p);
        bool all = strcmp(tok, "all") == 0, best = strcmp(tok, "best") == 0;
        c->best_only |= best;
        for (size_t k = 0; k < nknown; k++) {
            const struct pack_strategy *ps = pack_strategy_at(k);
            if (!(all || best || strcmp(tok, ps->name) == 0))
                continue;
            /* Exhaustive search on thousands of buffers only burns the time limit. */
            if (best && ps->exhaustive && c->nbufs > PLAN_EXACT_MAX_BUFS)
                continue;
            bool dup = false;
            for (size_t q = 0; q < c->nstrategies; q++)
                dup |= strcmp(c->strategies[q], ps->name) == 0;
            if (!dup && c->nstrategies < PLAN_MAX_STRATEGIES)
                snprintf(c->strategies[c->nstrategies++], sizeof(c->strategies[0]), "%s", ps->name);
        }
        p += n;
        p += *p == ',';
    }
    if (c->nstrategies == 0)
        return err_set(e, ERR_INVALID, "strategies", "strategies: none selected from \"%.100s\"",
                       req);
    return ERR_OK;
}

/* The caller's options that the input cannot override: their ranges are the table's. */
static int check_opts(const char *input, size_t len, const struct plan_opts *o,
                      const struct plan_limits *lim, struct err *e)
{
    if (input == NULL)
        return err_set(e, ERR_INVALID, "", "no input");
    if (len > lim->max_input_bytes)
        return err_set(e, ERR_LIMIT, "", "input is %zu bytes; the limit is %zu", len,
                       lim->max_input_bytes);
    return plan_opts_check(o, e);
}

/* Builds c->m with the importer of the input's format (o->format, or detected: *imp says
 * which). An XLA buffer assignment is kept as well, as the plan's own "xla-actual" row, and
 * an out-of-memory report, its allocations checked against ours (packing.xla_report). */
static int load(const char *input, size_t len, const struct plan_opts *o,
                const struct plan_limits *lim, struct plan_ctx *c, const struct importer **imp,
                struct err *e)
{
    struct model_limits ml = {lim->max_input_bytes, lim->max_json_depth, lim->max_tensors,
                              lim->max_ops, o->threads};
    struct import_ctx ic = {
        .limits = &ml,
        .chip = o->chip != NULL ? chip_find(o->chip) : chip_default(),
        .xla = &c->xla.a,
        .chip_given = o->chip != NULL && chip_find(o->chip) != NULL,
        .hlo = {o->reading == PLAN_READING_WRITTEN, o->order == PLAN_ORDER_TEXT, o->bind},
        .oom = &c->report.oom,
    };
    int rc;

    if ((rc = import_lookup("format", o->format, imp, e)) != ERR_OK)
        return rc;
    rc = import_run(*imp, input, len, &ic, &c->m, imp, e);
    if (rc == ERR_OK && o->bind != NULL && strcmp((*imp)->name, "stablehlo") != 0)
        rc = err_set(e, ERR_INVALID, "bind",
                     "bind: only StableHLO has dynamic dims to bind; this input is %s",
                     (*imp)->name);
    c->xla.have = c->xla.standalone = ic.xla_kept;
    c->report.have_oom = c->report.standalone = ic.oom_kept;
    return rc;
}

/* The time limit settled in o against lim's ceiling, named as its setter spelled it. */
static int check_time_limit(const struct plan_opts *o, bool from_caller,
                            const struct plan_limits *lim, struct err *e)
{
    const char *where = from_caller ? "time_limit" : "options.time_limit";

    if (lim->max_time_limit_s > 0 && o->time_limit_s > lim->max_time_limit_s)
        return err_set(e, ERR_LIMIT, where, "%s: %g s is above this server's limit of %g s", where,
                       o->time_limit_s, lim->max_time_limit_s);
    return ERR_OK;
}

/* Each setting from the caller, else the model's "options", else the default; the options
 * so settled in *o. */
static int settle_opts(struct plan_ctx *c, struct plan_opts *o, const struct importer *imp,
                       const struct plan_limits *lim, struct err *e)
{
    struct plan_opts mo;
    const char *chip_name;
    bool caller_time = o->time_limit_s > 0;
    int rc;

    /* the model's own "options", their strings borrowed from the model's JSON */
    memset(&mo, 0, sizeof(mo));
    if (c->m.options_json != NULL &&
        (rc = plan_opts_set_object(&mo, PLAN_OPT_MODEL, c->m.options_json, NULL, 0, NULL, e)) !=
            ERR_OK)
        return rc;
    plan_opts_fill(o, &mo);
    if ((rc = check_time_limit(o, caller_time, lim, e)) != ERR_OK)
        return rc;
    chip_name = o->chip != NULL ? o->chip : c->m.chip;

    if (chip_name != NULL) {
        if ((c->chip = chip_find(chip_name)) == NULL)
            return err_set(e, ERR_NOTFOUND, "chip", "chip: unknown chip \"%.40s\" (known: %s)",
                           chip_name, chip_names());
    } else if (!imp->raw_sizes) {
        c->chip = chip_default();
    }
    snprintf(c->name, sizeof(c->name), "%s",
             o->name != NULL ? o->name : (c->m.name != NULL ? c->m.name : "model"));
    c->time_limit_s = o->time_limit_s > 0 ? o->time_limit_s : PLAN_DEFAULT_TIME_S;
    c->time_limit_given = o->time_limit_s > 0;
    c->alignment = o->alignment;
    if (c->alignment == 0) {
        c->alignment = imp->raw_sizes ? 1 : PLAN_DEFAULT_ALIGNMENT;
        c->alignment_default = !imp->raw_sizes;
    }
    /* The BFC replay is a GPU runtime model: off unless asked for, by name or by its
     * settings. */
    c->runtime_bfc = o->runtime == PLAN_RUNTIME_BFC ||
                     (o->runtime == PLAN_RUNTIME_DEFAULT &&
                      (o->mem_fraction > 0 || o->preallocate != PLAN_PREALLOC_DEFAULT));
    c->mem_fraction = o->mem_fraction > 0 ? o->mem_fraction : BFC_DEFAULT_FRACTION;
    c->preallocate = o->preallocate != PLAN_PREALLOC_OFF;
    c->goal = o->goal;
    c->program = imp->program;
    c->threads = o->threads;
    c->runtime_defaults = o->mem_fraction == 0 && o->preallocate == PLAN_PREALLOC_DEFAULT;
    c->capacity = o->capacity;
    if (c->capacity == 0 && c->chip != NULL) {
        c->capacity = c->chip->usable_hbm_bytes;
        c->capacity_from_chip = true;
    }
    if (o->budget != NULL) {
        struct budget b;
        if ((rc = budget_parse("budget", o->budget, &b, e)) != ERR_OK ||
            (rc = budget_bytes(&b, c->capacity, &c->budget_bytes, e)) != ERR_OK)
            return rc;
        c->has_budget = true;
    }
    return ERR_OK;
}

/* The totals (checked sums) and the packing problem: one buffer per tensor with bytes,
 * its padded size rounded up to the alignment. */
static int build_problem(struct plan_ctx *c, struct err *e)
{
    c->bufs = malloc((c->m.n ? c->m.n : 1) * sizeof(*c->bufs));
    /* calloc: entries past nbufs are never read, but clang-analyzer cannot see that */
    c->buf_tensor = calloc(c->m.n ? c->m.n : 1, sizeof(*c->buf_tensor));
    if (c->bufs == NULL || c->buf_tensor == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu buffers", c->m.n);
    for (size_t i = 0; i < c->m.n; i++) {
        const struct model_tensor *t = &c->m.tensors[i];
        bool ovf = false;
        ovf |= __builtin_add_overflow(c->logical, t->logical_bytes, &c->logical);
        ovf |= __builtin_add_overflow(c->padded, t->padded_bytes, &c->padded);
        ovf |= __builtin_add_overflow(c->kind_logical[t->kind], t->logical_bytes,
                                      &c->kind_logical[t->kind]);
        ovf |= __builtin_add_overflow(c->kind_padded[t->kind], t->padded_bytes,
                                      &c->kind_padded[t->kind]);
        c->count[t->kind]++;
        if (!t->raw && t->confidence == LAYOUT_CONF_ASSUMED)
            c->assumed_layouts++;
        if (t->padded_bytes > 0) {
            struct pack_buffer *b = &c->bufs[c->nbufs];
            b->lower = t->live_start;
            b->upper = t->live_end;
            ovf |= arith_round_up(t->padded_bytes, c->alignment, &b->size);
            c->buf_tensor[c->nbufs++] = (uint32_t)i;
        }
        if (ovf) {
            char where[32];
            snprintf(where, sizeof(where), "tensors[%zu]", i);
            return err_set(e, ERR_OVERFLOW, where,
                           "tensors[%zu] \"%.200s\": the total byte "
                           "count passes 2^64-1",
                           i, t->name);
        }
    }
    return ERR_OK;
}

/* The default search time for c's buffers (PLAN_BUDGET_FULL_BUFS), said in a warning
 * when it is below PLAN_DEFAULT_TIME_S. */
static void budget_search(struct plan_ctx *c)
{
    bool search = false;
    double t;

    for (size_t k = 0; k < c->nstrategies; k++)
        search |= pack_strategy_find(c->strategies[k])->cls == PACK_CLASS_SEARCH;
    if (c->time_limit_given || c->nbufs <= PLAN_BUDGET_FULL_BUFS)
        return;
    t = PLAN_DEFAULT_TIME_S * PLAN_BUDGET_FULL_BUFS / (double)c->nbufs;
    c->time_limit_s = t > PLAN_BUDGET_MIN_S ? t : PLAN_BUDGET_MIN_S;
    if (search)
        model_warn(&c->m,
                   "the search strategies' time limit is %.3f s each, the default for %zu buffers "
                   "(%g s up to %d buffers, then in proportion, at least %g s); --time-limit "
                   "(time_limit) sets it",
                   c->time_limit_s, c->nbufs, PLAN_DEFAULT_TIME_S, PLAN_BUDGET_FULL_BUFS,
                   PLAN_BUDGET_MIN_S);
}

/* Everything up to (not including) packing; *c is released with ctx_free whatever this
 * returns. */
static int prepare(const char *input, size_t len, const struct plan_opts *opts,
                   const struct plan_limits *lim, struct plan_ctx *c, struct err *e)
{
    struct plan_opts none = {0}, settled;
    struct plan_limits defaults;
    const struct plan_opts *o = opts != NULL ? opts : &none;
    const struct importer *imp = NULL;
    int rc;

    memset(c, 0, sizeof(*c));
    err_clear(e);
    if (lim == NULL) {
        plan_limits_default(&defaults);
        lim = &defaults;
    }
    settled = *o;
    if ((rc = check_opts(input, len, o, lim, e)) != ERR_OK ||
        (rc = load(input, len, o, lim, c, &imp, e)) != ERR_OK ||
        (rc = settle_opts(c, &settled, imp, lim, e)) != ERR_OK ||
        (rc = model_resolve(&c->m, c->chip, o->threads, e)) != ERR_OK ||
        (rc = kernel_set_parse(c->m.kernels_json, PLAN_MAX_KERNELS, &c->ks, e)) != ERR_OK ||
        (rc = plan_kernels_check(c, e)) != ERR_OK || (rc = lifetime_derive(&c->m, e)) != ERR_OK ||
        (rc = lifetime_set_apart(&c->m, e)) != ERR_OK || (rc = build_problem(c, e)) != ERR_OK ||
        (rc = plan_xla_attach(c, o, lim->max_tensors, e)) != ERR_OK ||
        (rc = choose_strategies(c, settled.strategies != NULL ? settled.strategies : "best", e)) !=
            ERR_OK)
        return rc;
    budget_search(c);
    return ERR_OK;
}

uint64_t plan_host_bytes(const struct plan_ctx *c)
{
    json_object *v = NULL;
    int64_t offloaded = 0;

    if (c->m.recipe_json == NULL ||
        !json_object_object_get_ex(c->m.recipe_json, "host_offloaded_bytes", &v) ||
        jsonr_int(v, &offloaded) != 0)
        offloaded = 0;
    return c->m.program.spaces[MODEL_SPACE_HOST].bytes + (uint64_t)(offloaded > 0 ? offloaded : 0);
}

static void fill_summary(const struct plan_ctx *c, struct plan_summary *s, uint64_t peak,
                         uint64_t lb)
{
    struct plan_verdict v;

    if (s == NULL)
        return;
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", c->name);
    snprintf(s->chip, sizeof(s->chip), "%s", c->chip != NULL ? c->chip->name : "");
    snprintf(s->source_format, sizeof(s->source_format), "%s", c->m.source_format);
    s->tensors = c->m.n;
    s->logical_bytes = c->logical;
    s->padded_bytes = c->padded;
    s->peak_bytes = peak;
    s->lower_bound_bytes = lb;
    s->capacity_bytes = c->capacity;
    /* Before packing, "fits" is the conservative test: everything live at once. */
    plan_verdict_compose(c, peak != 0 ? peak : c->padded, &v);
    s->fits = v.fits;
    s->has_budget = c->has_budget;
    s->budget_bytes = c->budget_bytes;
    s->within_budget = v.within_budget;
    s->verdict = v.status;
    s->host_bytes = plan_host_bytes(c);
}

int plan_measure(const char *input, size_t len, const struct plan_opts *o,
                 const struct plan_limits *l, struct plan_summary *s, struct err *e)
{
    struct plan_ctx c;
    struct plan_packing pk;
    int rc;

    memset(&pk, 0, sizeof(pk));
    if ((rc = prepare(input, len, o, l, &c, e)) == ERR_OK &&
        (rc = plan_portfolio_run(&c, &pk, e)) == ERR_OK)
        fill_summary(&c, s, pk.chosen >= 0 ? pk.runs[pk.chosen].r.peak : 0, pk.lb);
    plan_portfolio_free(&pk, c.nstrategies);
    ctx_free(&c);
    return rc;
}

int plan_validate(const char *input, size_t len, const struct plan_opts *o,
                  const struct plan_limits *l, struct plan_summary *s, struct err *e)
{
    struct plan_ctx c;
    int rc = prepare(input, len, o, l, &c, e);
    if (rc == ERR_OK)
        fill_summary(&c, s, 0, 0);
    ctx_free(&c);
    return rc;
}

int plan_buffers(const char *input, size_t len, const struct plan_opts *o,
                 const struct plan_limits *l, struct plan_buffers *out, struct err *e)
{
    struct plan_ctx c;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = prepare(input, len, o, l, &c, e)) != ERR_OK)
        goto out;
    out->names = calloc(c.nbufs ? c.nbufs : 1, sizeof(*out->names));
    if (out->names == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory");
        goto out;
    }
    out->n = c.nbufs;
    for (size_t k = 0; k < c.nbufs; k++)
        if ((out->names[k] = strdup(c.m.tensors[c.buf_tensor[k]].name)) == NULL) {
            rc = err_set(e, ERR_NOMEM, "", "out of memory");
            goto out;
        }
    out->bufs = c.bufs; /* ownership moves to *out */
    c.bufs = NULL;
    out->capacity = c.capacity;
    out->alignment = c.alignment;
out:
    if (rc != ERR_OK)
        plan_buffers_free(out);
    ctx_free(&c);
    return rc;
}

void plan_buffers_free(struct plan_buffers *b)
{
    if (b == NULL)
        return;
    if (b->names != NULL)
        for (size_t i = 0; i < b->n; i++)
            free(b->names[i]);
    free(b->names);
    free(b->bufs);
    memset(b, 0, sizeof(*b));
}

static int check_side(void *pk, struct err *e)
{
    return plan_portfolio_check(pk, e);
}

static int metrics_side(void *pk, struct err *e)
{
    return plan_portfolio_metrics(pk, e);
}

/* The document is bounded by the input: a fixed part plus a few KiB per tensor, and per
 * kernel its suggestions (8 KiB) and a row per operand (1 KiB). */
static size_t result_bound(const struct plan_ctx *c, size_t len)
{
    size_t max_bytes = ((size_t)1 << 20) + c->m.n * 4096 + 4 * len + c->ks.n * 8192;

    for (size_t i = 0; i < c->ks.n; i++)
        max_bytes += c->ks.k[i].nops * 1024;
    return max_bytes;
}

/*
 * Everything after packing, on more threads when that pays (plan_side): the chosen
 * packing's independent check and its metrics (both read only the packing, and the metrics
 * are safe on any offsets) beside the runtime replay and the suggestions, then the result's
 * head (tensors included: most of a large result, written on two threads itself) beside what
 * is left of the metrics. Nothing is written before the check passes, and an error is the
 * one the stages would report one after another (check, metrics, runtime, suggestions); a
 * metrics error after the head was streamed leaves an incomplete document (plan.h allows
 * it).
 */
static int finish(struct plan_ctx *c, struct plan_packing *pk, size_t max_bytes,
                  const struct plan_sink *sink, struct suggest_fix sg[SUGGEST_MAX_FIXES],
                  size_t *nsg, char **json, size_t *json_len, struct err *e)
{
    struct plan_side check = {0}, metrics = {0};
    bool threaded = plan_side_worth(c);
    struct jsonw w;
    int rc, rc_own;

    plan_side_start(&check, check_side, pk, threaded);
    plan_side_start(&metrics, metrics_side, pk, threaded);
    rc_own = plan_runtime_run(c, pk, e);
    if (rc_own == ERR_OK)
        rc_own = suggest_model(&c->m, c->chip, sg, nsg, e);
    if ((rc = plan_side_join(&check, e)) != ERR_OK) {
        (void)!plan_side_join(&metrics, NULL);
        return rc;
    }
    if (rc_own != ERR_OK) {
        rc = plan_side_join(&metrics, e); /* its error comes first */
        return rc != ERR_OK ? rc : rc_own;
    }
    plan_result_begin(&w, c, pk, true, sink, max_bytes);
    if ((rc = plan_side_join(&metrics, e)) != ERR_OK || (rc = plan_peak_run(c, pk, e)) != ERR_OK) {
        jsonw_discard(&w);
        return rc;
    }
    return plan_result_end(&w, c, pk, sg, *nsg, sink, max_bytes, json, json_len, e);
}

/* The advice (plan_advice.c) into pk->advice: re-plans of the model, when its verdict asks
 * for them. */
static int advise(const char *input, size_t len, const struct plan_opts *o,
                  const struct plan_limits *l, const struct plan_ctx *c, struct plan_packing *pk,
                  struct err *e)
{
    const struct pack_result *best = plan_chosen(pk);
    struct plan_limits defaults;

    if (best == NULL)
        return ERR_OK;
    if (l == NULL) {
        plan_limits_default(&defaults);
        l = &defaults;
    }
    if ((pk->advice = malloc(sizeof(*pk->advice))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    return plan_advice_run(c, best->peak, input, len, o, l, pk->advice, e);
}

/* plan_run and plan_run_stream: the result into *json, or to sink when it is not NULL. */
static int run(const char *input, size_t len, const struct plan_opts *o,
               const struct plan_limits *l, const struct plan_sink *sink, char **json,
               size_t *json_len, struct plan_views *views, struct plan_summary *s, struct err *e)
{
    struct plan_ctx c;
    struct plan_packing pk;
    struct suggest_fix sg[SUGGEST_MAX_FIXES];
    size_t nsg = 0, max_bytes;
    int rc;

    *json = NULL;
    *json_len = 0;
    if (views != NULL)
        memset(views, 0, sizeof(*views));
    memset(&pk, 0, sizeof(pk));
    if ((rc = prepare(input, len, o, l, &c, e)) != ERR_OK ||
        (rc = plan_portfolio_run(&c, &pk, e)) != ERR_OK)
        goto out;
    if ((rc = advise(input, len, o, l, &c, &pk, e)) != ERR_OK)
        goto out;
    max_bytes = result_bound(&c, len);
    if ((rc = finish(&c, &pk, max_bytes, sink, sg, &nsg, json, json_len, e)) != ERR_OK)
        goto out;
    if (views != NULL &&
        (rc = plan_views_write(&c, &pk, sg, nsg, sink != NULL && sink->summary_only, max_bytes,
                               views, e)) != ERR_OK) {
        free(*json);
        *json = NULL;
        *json_len = 0;
        goto out;
    }
    fill_summary(&c, s, pk.chosen >= 0 ? pk.runs[pk.chosen].r.peak : 0, pk.lb);
out:
    free(pk.advice);
    plan_portfolio_free(&pk, c.nstrategies);
    plan_runtime_free(&pk.rt);
    ctx_free(&c);
    return rc;
}

int plan_run(const char *input, size_t len, const struct plan_opts *o, const struct plan_limits *l,
             char **json, size_t *json_len, struct plan_views *views, struct plan_summary *s,
             struct err *e)
{
    return run(input, len, o, l, NULL, json, json_len, views, s, e);
}

int plan_run_stream(const char *input, size_t len, const struct plan_opts *o,
                    const struct plan_limits *l, const struct plan_sink *sink,
                    struct plan_views *views, struct plan_summary *s, struct err *e)
{
    char *json = NULL;
    size_t json_len = 0;

    if (sink == NULL || sink->write == NULL)
        return err_set(e, ERR_INVALID, "", "plan_run_stream: no sink given");
    return run(input, len, o, l, sink, &json, &json_len, views, s, e);
}
