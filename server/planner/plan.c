/*
 * plan.c - the planner's front door (see plan.h): detect the input format, build the
 * model, resolve layouts and lifetimes, pack, check, suggest, and write the result JSON
 * (RESULT.md, static/schema/result.schema.json).
 *
 * Everything is per device: a sharded model's tensors are planned at their local shapes.
 * All sizes are checked 64-bit sums (ERR_OVERFLOW); all memory is bounded by the input
 * size and struct plan_limits.
 */
#include "planner/plan.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/arith.h"
#include "planner/chip.h"
#include "planner/jsonw.h"
#include "planner/layout.h"
#include "planner/lifetime.h"
#include "planner/mmcsv.h"
#include "planner/model.h"
#include "planner/model_int.h"
#include "planner/safetensors.h"
#include "planner/suggest.h"
#include "planner/text.h"

/* Offset alignment default. An assumption: no public source gives XLA:TPU's HBM buffer
 * alignment. The BFC allocator aligns to 256 B (../shared/docs/allocators.md 4) and every
 * tiled TPU array is a multiple of 512 B, the smallest scalar tile (tpu-facts.md 2e), so
 * 512 B rarely changes a plan; the result labels it an assumption. */
#define PLAN_DEFAULT_ALIGNMENT 512
#define PLAN_DEFAULT_TIME_S    2.0
#define PLAN_EXACT_MAX_BUFS    2000 /* "best" runs the exact solver only below this */
#define PLAN_MAX_STRATEGIES    16
#define PLAN_TIMELINE_MAX      4096
#define PLAN_AHEAD_MIN         256 /* greedy strategies share two threads from this many buffers */

const char *plan_format_name(enum plan_format f)
{
    switch (f) {
    case PLAN_FMT_AUTO:
        return "auto";
    case PLAN_FMT_JSON:
        return "json";
    case PLAN_FMT_SAFETENSORS:
        return "safetensors";
    case PLAN_FMT_CSV:
        return "minimalloc-csv";
    }
    return "auto";
}

void plan_limits_default(struct plan_limits *l)
{
    l->max_input_bytes = 64u << 20;
    l->max_json_depth = 32;
    l->max_tensors = 1000000;
    l->max_ops = 1000000;
}

/* ---- preparation: everything up to (not including) packing ----------------------- */

struct plan_ctx {
    struct model m;
    const struct chip *chip; /* NULL only for CSV inputs without --chip */
    uint64_t capacity;       /* 0 = none */
    bool capacity_from_chip;
    uint64_t alignment;
    bool alignment_default;
    double time_limit_s;
    char name[128];
    size_t nstrategies;
    char strategies[PLAN_MAX_STRATEGIES][32];
    bool best_only; /* "best" asked for: search strategies may stop at the lower bound */
    /* totals */
    uint64_t logical, padded;
    size_t count[TENSOR_KIND_COUNT];
    uint64_t kind_logical[TENSOR_KIND_COUNT], kind_padded[TENSOR_KIND_COUNT];
    size_t assumed_layouts;
    /* packing problem: only tensors with bytes > 0 */
    size_t nbufs;
    struct pack_buffer *bufs; /* malloc'd */
    uint32_t *buf_tensor;     /* pack id -> tensor id, malloc'd */
};

static void ctx_free(struct plan_ctx *c)
{
    model_free(&c->m);
    free(c->bufs);
    free(c->buf_tensor);
    memset(c, 0, sizeof(*c));
}

static bool skip_space(const char *s, size_t len, size_t *i)
{
    while (*i < len && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r' || s[*i] == '\n'))
        (*i)++;
    return *i < len;
}

static enum plan_format detect(const char *s, size_t len)
{
    size_t i = 0;

    /* Safetensors first: its length prefix has zero high bytes, which JSON and CSV text
     * never have, so the two tests cannot both match. */
    if (safetensors_detect(s, len))
        return PLAN_FMT_SAFETENSORS;
    if (!skip_space(s, len, &i))
        return PLAN_FMT_AUTO;
    if (s[i] == '{' || s[i] == '[')
        return PLAN_FMT_JSON; /* an array gets the model parser's "must be an object" */
    if (mmcsv_detect(s + i, len - i))
        return PLAN_FMT_CSV;
    return PLAN_FMT_AUTO;
}

/* MiniMalloc CSV: one raw buffer per row, sizes and lifetimes as given (mmcsv.h parses). */
static int load_csv(const char *input, size_t len, const struct model_limits *ml, struct model *m,
                    struct err *e)
{
    struct mmcsv mm;
    int rc;

    memset(m, 0, sizeof(*m));
    if ((rc = mmcsv_parse(input, len, ml->max_tensors, &mm, e)) != ERR_OK)
        return rc;
    if ((rc = model_init(m, "minimalloc-csv", mm.n)) != ERR_OK) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory for %zu buffers", mm.n);
        goto out;
    }
    m->name = "minimalloc";
    for (size_t i = 0; i < mm.n; i++) {
        struct model_tensor *t = &m->tensors[i];
        if ((t->name = model_strdup(m, mm.ids[i], strlen(mm.ids[i]))) == NULL) {
            rc = err_set(e, ERR_NOMEM, "", "out of memory");
            goto out;
        }
        t->raw = true;
        t->kind = TENSOR_TEMP;
        t->live_given = true;
        t->live_start = mm.bufs[i].lower;
        t->live_end = mm.bufs[i].upper;
        t->logical_bytes = t->padded_bytes = mm.bufs[i].size;
    }
    if (mm.ignored[0] != '\0')
        model_warn(m, "MiniMalloc columns read past and not used: %s", mm.ignored);
out:
    mmcsv_free(&mm);
    if (rc != ERR_OK)
        model_free(m);
    return rc;
}

/* Expands the requested list ("best", "all" or names) into c->strategies. */
static int choose_strategies(struct plan_ctx *c, const char *req, struct err *e)
{
    size_t nknown = pack_strategy_count();
    const char *p;

    c->nstrategies = 0;
    for (p = req; *p != '\0';) {
        size_t n = strcspn(p, ",");
        char tok[32];
        bool found = false;
        if (n == 0 || n >= sizeof(tok))
            return err_set(e, ERR_INVALID, "strategies",
                           "strategies: empty or overlong name "
                           "in \"%.100s\"",
                           req);
        memcpy(tok, p, n);
        tok[n] = '\0';
        for (size_t k = 0; k < nknown; k++) {
            const struct pack_strategy *ps = pack_strategy_at(k);
            bool all = strcmp(tok, "all") == 0;
            bool best = strcmp(tok, "best") == 0;
            c->best_only |= best;
            if (!(all || best || strcmp(tok, ps->name) == 0))
                continue;
            found = true;
            /* Exhaustive search on thousands of buffers only burns the time limit. */
            if (best && ps->exhaustive && c->nbufs > PLAN_EXACT_MAX_BUFS)
                continue;
            bool dup = false;
            for (size_t q = 0; q < c->nstrategies; q++)
                dup |= strcmp(c->strategies[q], ps->name) == 0;
            if (!dup && c->nstrategies < PLAN_MAX_STRATEGIES)
                snprintf(c->strategies[c->nstrategies++], sizeof(c->strategies[0]), "%s", ps->name);
        }
        if (!found && (strcmp(tok, "all") == 0 || strcmp(tok, "best") == 0))
            found = nknown > 0;
        if (!found)
            return err_set(e, ERR_NOTFOUND, "strategies",
                           "strategies: unknown strategy "
                           "\"%s\" (known: %s, best, all)",
                           tok, pack_strategy_names());
        p += n;
        p += *p == ',';
    }
    if (c->nstrategies == 0)
        return err_set(e, ERR_INVALID, "strategies", "strategies: none selected from \"%.100s\"",
                       req);
    return ERR_OK;
}

static int prepare(const char *input, size_t len, const struct plan_opts *opts,
                   const struct plan_limits *lim, struct plan_ctx *c, struct err *e)
{
    struct plan_opts none = {0};
    struct plan_limits defaults;
    const struct plan_opts *o = opts != NULL ? opts : &none;
    enum plan_format fmt;
    struct model_limits ml;
    const char *chip_name;
    int rc;

    memset(c, 0, sizeof(*c));
    err_clear(e);
    if (lim == NULL) {
        plan_limits_default(&defaults);
        lim = &defaults;
    }
    ml = (struct model_limits){lim->max_input_bytes, lim->max_json_depth, lim->max_tensors,
                               lim->max_ops};
    if (input == NULL)
        return err_set(e, ERR_INVALID, "", "no input");
    if (len > lim->max_input_bytes)
        return err_set(e, ERR_LIMIT, "", "input is %zu bytes; the limit is %zu", len,
                       lim->max_input_bytes);
    if (o->time_limit_s < 0 || o->time_limit_s > 3600)
        return err_set(e, ERR_INVALID, "time_limit",
                       "time_limit: must be from 0 to 3600 "
                       "seconds");
    if (o->alignment != 0 && (o->alignment & (o->alignment - 1)) != 0)
        return err_set(e, ERR_INVALID, "alignment", "alignment: %llu is not a power of two",
                       (unsigned long long)o->alignment);

    if (!safetensors_detect(input, len))
        text_skip_bom(&input, &len);
    fmt = o->format != PLAN_FMT_AUTO ? o->format : detect(input, len);
    switch (fmt) {
    case PLAN_FMT_JSON:
        rc = model_parse_json(input, len, &ml, &c->m, e);
        break;
    case PLAN_FMT_SAFETENSORS:
        rc = safetensors_parse(input, len, &ml, &c->m, e);
        break;
    case PLAN_FMT_CSV:
        rc = load_csv(input, len, &ml, &c->m, e);
        break;
    default:
        return err_set(e, ERR_INVALID, "",
                       "unrecognized input: expected a JSON model "
                       "description (an object), a safetensors file or header (8-byte length "
                       "then '{') or a MiniMalloc CSV (header id,lower,upper,size)");
    }
    if (rc != ERR_OK)
        return rc;

    chip_name = o->chip != NULL ? o->chip : c->m.chip;
    if (chip_name != NULL) {
        if ((c->chip = chip_find(chip_name)) == NULL)
            return err_set(e, ERR_NOTFOUND, "chip", "chip: unknown chip \"%.40s\" (known: %s)",
                           chip_name, chip_names());
    } else if (fmt != PLAN_FMT_CSV) {
        c->chip = chip_default();
    }

    snprintf(c->name, sizeof(c->name), "%s",
             o->name != NULL ? o->name : (c->m.name != NULL ? c->m.name : "model"));
    c->time_limit_s = o->time_limit_s > 0             ? o->time_limit_s
                      : c->m.options.time_limit_s > 0 ? c->m.options.time_limit_s
                                                      : PLAN_DEFAULT_TIME_S;
    c->alignment = o->alignment != 0 ? o->alignment : c->m.options.alignment;
    if (c->alignment == 0) {
        c->alignment = fmt == PLAN_FMT_CSV ? 1 : PLAN_DEFAULT_ALIGNMENT;
        c->alignment_default = fmt != PLAN_FMT_CSV;
    }
    c->capacity = o->capacity != 0 ? o->capacity : c->m.options.capacity;
    if (c->capacity == 0 && c->chip != NULL) {
        c->capacity = c->chip->usable_hbm_bytes;
        c->capacity_from_chip = true;
    }

    if ((rc = model_resolve(&c->m, c->chip, e)) != ERR_OK)
        return rc;
    if ((rc = lifetime_derive(&c->m, e)) != ERR_OK)
        return rc;

    /* Totals and the packing problem. */
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
    return choose_strategies(c,
                             o->strategies != NULL             ? o->strategies
                             : c->m.options.strategies != NULL ? c->m.options.strategies
                                                               : "best",
                             e);
}

static void fill_summary(const struct plan_ctx *c, struct plan_summary *s, uint64_t peak,
                         uint64_t lb)
{
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
    s->fits = c->capacity == 0 || (peak != 0 ? peak : c->padded) <= c->capacity;
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

/* ---- packing --------------------------------------------------------------------- */

struct strat_run {
    struct pack_result r;
    int rc;
    bool ran; /* run ahead of the main loop (run_ahead) */
    char error[ERR_MSG_MAX];
};

struct packing {
    struct pack_problem p;
    struct strat_run runs[PLAN_MAX_STRATEGIES];
    int chosen; /* index into runs, -1 when nothing was packed */
    uint64_t lb;
    struct pack_metrics mt;
    bool have_metrics;
};

static void packing_free(struct packing *pk, size_t nruns)
{
    for (size_t k = 0; k < nruns; k++)
        pack_result_free(&pk->runs[k].r);
    if (pk->have_metrics)
        pack_metrics_free(&pk->mt);
}

/* The class of a strategy chosen by choose_strategies (so known to pack.h). */
static enum pack_strategy_class class_of(const char *name)
{
    return pack_strategy_find(name)->cls;
}

/* The run of strategy name so far (with its packing), or NULL. */
static const struct strat_run *run_of(const struct plan_ctx *c, const struct packing *pk,
                                      size_t nruns, const char *name)
{
    for (size_t k = 0; k < nruns; k++)
        if (strcmp(c->strategies[k], name) == 0 && pk->runs[k].rc == ERR_OK)
            return &pk->runs[k];
    return NULL;
}

/*
 * A PACK_CLASS_PICK strategy (xla-default) keeps the better of its two picks (pack_pick).
 * When both already ran in this plan (they come first in the list), it is taken from them
 * rather than packed twice more: one greedy pass less each, a third of "best"'s greedy time
 * on a 1,000-tensor model. Its time is theirs added, what running it costs. false: pack it.
 */
static bool pick_from_runs(const struct plan_ctx *c, const struct packing *pk, struct strat_run *sr,
                           const struct pack_strategy *ps)
{
    size_t nruns = (size_t)(sr - pk->runs);
    const struct strat_run *r0 = run_of(c, pk, nruns, ps->picks[0]);
    const struct strat_run *r1 = run_of(c, pk, nruns, ps->picks[1]);
    const struct strat_run *pick = NULL;

    if (r0 == NULL || r1 == NULL)
        return false;
    pick = pack_pick(r0->r.peak, r1->r.peak) == 1 ? r1 : r0;
    sr->r = pick->r;
    sr->r.offsets = malloc(pk->p.n * sizeof(*sr->r.offsets));
    if (sr->r.offsets == NULL) {
        memset(&sr->r, 0, sizeof(sr->r));
        return false;
    }
    memcpy(sr->r.offsets, pick->r.offsets, pk->p.n * sizeof(*sr->r.offsets));
    snprintf(sr->r.strategy, sizeof(sr->r.strategy), "%s", ps->name);
    sr->r.seconds = r0->r.seconds + r1->r.seconds;
    sr->r.solved_seconds = sr->r.solved ? sr->r.seconds : -1;
    return true;
}

/* Runs strategy k into pk->runs[k]. */
static void run_one(const struct plan_ctx *c, struct packing *pk, size_t k,
                    const struct pack_opts *po)
{
    struct strat_run *sr = &pk->runs[k];
    struct err pe;

    err_clear(&pe);
    sr->rc = pack_run(&pk->p, c->strategies[k], po, &sr->r, &pe);
    if (sr->rc != ERR_OK) {
        snprintf(sr->error, sizeof(sr->error), "%s", pe.msg);
        snprintf(sr->r.strategy, sizeof(sr->r.strategy), "%s", c->strategies[k]);
    }
    sr->ran = true;
}

/* The single greedy passes, which run ahead of the main loop (a pick is left to it: it is
 * usually taken from two of them). */
static bool runs_ahead(const struct plan_ctx *c, size_t k)
{
    return class_of(c->strategies[k]) == PACK_CLASS_GREEDY;
}

struct ahead {
    const struct plan_ctx *c;
    struct packing *pk;
    const struct pack_opts *po;
    unsigned part; /* this thread takes every second greedy strategy from this one */
};

static void *ahead_main(void *arg)
{
    struct ahead *a = arg;

    for (size_t k = 0, i = 0; k < a->c->nstrategies; k++)
        if (runs_ahead(a->c, k) && i++ % 2 == a->part)
            run_one(a->c, a->pk, k, a->po);
    return NULL;
}

/*
 * The greedy strategies are independent single passes; with more than one core they are
 * shared between two threads: "best" on the 1,000-tensor bench model spends most of its
 * time in them (5 passes with ~750 buffers live at once), and the service's submit-to-done
 * latency is mostly that. Results do not depend on it. Below PLAN_AHEAD_MIN buffers a pass
 * costs less than starting a thread.
 */
static void run_ahead(const struct plan_ctx *c, struct packing *pk, const struct pack_opts *po)
{
    struct ahead a[2] = {{c, pk, po, 0}, {c, pk, po, 1}};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = 0;
    pthread_t tid;
    bool threaded;

    for (size_t k = 0; k < c->nstrategies; k++)
        n += runs_ahead(c, k);
    threaded = n >= 2 && c->nbufs >= PLAN_AHEAD_MIN && cores > 1 &&
               pthread_create(&tid, NULL, ahead_main, &a[1]) == 0;
    ahead_main(&a[0]);
    if (threaded)
        pthread_join(tid, NULL);
    else
        ahead_main(&a[1]);
}

static int run_packing(struct plan_ctx *c, struct packing *pk, struct err *e)
{
    struct pack_opts po = {.time_limit_s = c->time_limit_s, .seed = 1, .threads = 0};
    int rc;

    memset(pk, 0, sizeof(*pk));
    pk->chosen = -1;
    /* capacity 0: minimise the peak; the fit against the chip is judged here, so a plan
     * that does not fit still gets offsets to look at. */
    pk->p = (struct pack_problem){c->nbufs, c->bufs, 0, c->alignment};
    if (c->nbufs == 0)
        return ERR_OK;
    if ((rc = pack_lower_bound(&pk->p, &pk->lb, e)) != ERR_OK)
        return rc;
    run_ahead(c, pk, &po);
    for (size_t k = 0; k < c->nstrategies;) {
        struct strat_run *sr = &pk->runs[k];
        /* Under "best", a packing at the lower bound is proven optimal: the search
         * strategies could only spend their time limit to find it again. Drop them from
         * the list (and say so) rather than report runs that did not happen. */
        if (c->best_only && pk->chosen >= 0 && pk->runs[pk->chosen].r.peak == pk->lb &&
            class_of(c->strategies[k]) == PACK_CLASS_SEARCH) {
            model_warn(&c->m, "%s skipped: %s already reached the lower bound (optimal)",
                       c->strategies[k], pk->runs[pk->chosen].r.strategy);
            memmove(c->strategies[k], c->strategies[k + 1],
                    (c->nstrategies - k - 1) * sizeof(c->strategies[0]));
            /* Runs of later strategies may exist already (run ahead): they move too. */
            memmove(&pk->runs[k], &pk->runs[k + 1], (c->nstrategies - k - 1) * sizeof(*pk->runs));
            memset(&pk->runs[c->nstrategies - 1], 0, sizeof(*pk->runs));
            c->nstrategies--;
            continue;
        }
        if (sr->ran)
            ; /* a greedy pass, run ahead */
        else if (class_of(c->strategies[k]) == PACK_CLASS_PICK &&
                 pick_from_runs(c, pk, sr, pack_strategy_find(c->strategies[k])))
            sr->rc = ERR_OK;
        else
            run_one(c, pk, k, &po);
        if (sr->rc == ERR_OK && (pk->chosen < 0 || sr->r.peak < pk->runs[pk->chosen].r.peak))
            pk->chosen = (int)k;
        k++;
    }
    if (pk->chosen < 0)
        return err_set(e, pk->runs[0].rc, "strategies", "no packing strategy succeeded: %s: %s",
                       c->strategies[0], pk->runs[0].error);
    const struct pack_result *best = &pk->runs[pk->chosen].r;
    struct err ce;
    err_clear(&ce);
    if (pack_check(&pk->p, best->offsets, best->peak, &ce) != ERR_OK)
        return err_set(e, ERR_INTERNAL, "",
                       "internal error: the %s packing fails the "
                       "independent check: %s",
                       best->strategy, ce.msg);
    if ((rc = pack_metrics_compute(&pk->p, best->offsets, &pk->mt, e)) != ERR_OK)
        return rc;
    pk->have_metrics = true;
    return ERR_OK;
}

/* ---- result JSON ----------------------------------------------------------------- */

static void write_chip(struct jsonw *w, const struct plan_ctx *c)
{
    const struct chip *ch = c->chip;
    char line[ERR_MSG_MAX];

    if (ch == NULL) {
        jsonw_null(w, "chip");
        return;
    }
    jsonw_obj_begin(w, "chip");
    chip_json_write(w, ch);
    jsonw_arr_begin(w, "assumptions");
    if (c->capacity_from_chip) {
        snprintf(line, sizeof(line),
                 "capacity is the per-device HBM the runtime reports as "
                 "usable on %s (%llu bytes); program binary, constants and runtime reserve are "
                 "not modelled%s",
                 ch->name, (unsigned long long)ch->usable_hbm_bytes,
                 (ch->uncertain & (CHIP_F_USABLE_HBM | CHIP_F_HBM)) ? "; this figure is uncertain"
                                                                    : "");
        jsonw_str(w, NULL, line);
    }
    if (c->assumed_layouts > 0) {
        /* One line per distinct assumed rule (bounded), with how many tensors use it. */
        const struct model_tensor *rules[16];
        size_t counts[16], nrules = 0, other = 0;
        for (size_t i = 0; i < c->m.n; i++) {
            const struct model_tensor *t = &c->m.tensors[i];
            size_t k = 0;
            if (t->raw || t->confidence != LAYOUT_CONF_ASSUMED || t->layout_rule == NULL)
                continue;
            while (k < nrules && strcmp(rules[k]->layout_rule, t->layout_rule) != 0)
                k++;
            if (k == nrules && nrules == 16) {
                other++;
                continue;
            }
            if (k == nrules) {
                rules[nrules] = t;
                counts[nrules++] = 0;
            }
            counts[k]++;
        }
        for (size_t k = 0; k < nrules; k++) {
            snprintf(line, sizeof(line),
                     "default layout rule \"%s\" (%zu tensors) is an "
                     "assumption on %s: %s",
                     rules[k]->layout_rule, counts[k], ch->name,
                     rules[k]->layout_assumption != NULL
                         ? rules[k]->layout_assumption
                         : "no real XLA:TPU report for this generation confirms it");
            jsonw_str(w, NULL, line);
        }
        if (other > 0) {
            snprintf(line, sizeof(line), "%zu more tensors use other assumed layout rules", other);
            jsonw_str(w, NULL, line);
        }
    }
    if (c->alignment_default) {
        snprintf(line, sizeof(line),
                 "buffer offsets are aligned to %llu bytes: an assumption "
                 "(XLA:TPU's HBM buffer alignment is not public)",
                 (unsigned long long)c->alignment);
        jsonw_str(w, NULL, line);
    }
    if ((ch->uncertain & (CHIP_F_HBM | CHIP_F_USABLE_HBM | CHIP_F_LAYOUT)) != 0 &&
        ch->notes != NULL && ch->notes[0] != '\0')
        jsonw_str(w, NULL, ch->notes);
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

static double ratio(uint64_t a, uint64_t b)
{
    return b == 0 ? 1.0 : (double)a / (double)b;
}

static void write_tensor(struct jsonw *w, const struct plan_ctx *c, size_t i, uint64_t offset)
{
    const struct model_tensor *t = &c->m.tensors[i];
    char text[SHAPE_MAX_TEXT];

    jsonw_obj_begin(w, NULL);
    jsonw_u64(w, "id", i);
    jsonw_str(w, "name", t->name);
    jsonw_str(w, "kind", tensor_kind_name(t->kind));
    if (t->raw) {
        jsonw_null(w, "dtype");
    } else {
        struct layout_info info;
        struct err ignore;
        jsonw_str(w, "dtype", dtype_name(t->shape.dtype));
        jsonw_arr_begin(w, "dims");
        for (unsigned d = 0; d < t->shape.rank; d++)
            jsonw_i64(w, NULL, t->shape.dims[d]);
        jsonw_arr_end(w);
        if (t->sharded) {
            jsonw_arr_begin(w, "global_dims");
            for (unsigned d = 0; d < t->shape.rank; d++)
                jsonw_i64(w, NULL, t->global_dims[d]);
            jsonw_arr_end(w);
            jsonw_arr_begin(w, "sharding");
            for (unsigned d = 0; d < t->shape.rank; d++) {
                if (t->shard_mask[d] == 0) {
                    jsonw_null(w, NULL);
                    continue;
                }
                jsonw_arr_begin(w, NULL);
                for (size_t a = 0; a < c->m.naxes; a++)
                    if (t->shard_mask[d] & (1u << a))
                        jsonw_str(w, NULL, c->m.axis_names[a]);
                jsonw_arr_end(w);
            }
            jsonw_arr_end(w);
        }
        if (shape_print(&t->shape, text, sizeof(text)) < 0)
            text[0] = '\0';
        jsonw_str(w, "shape", text);
        jsonw_arr_begin(w, "minor_to_major");
        for (unsigned d = 0; d < t->shape.rank; d++)
            jsonw_u64(w, NULL, t->shape.minor_to_major[d]);
        jsonw_arr_end(w);
        jsonw_str(w, "tiles", suggest_tiles_text(&t->shape, text, sizeof(text)));
        /* layout_size succeeded on this shape in model_resolve */
        jsonw_arr_begin(w, "padded_dims");
        if (layout_size(&t->shape, &info, &ignore) == ERR_OK)
            for (unsigned d = 0; d < t->shape.rank; d++)
                jsonw_i64(w, NULL, info.padded_dims[d]);
        jsonw_arr_end(w);
    }
    jsonw_u64(w, "logical_bytes", t->logical_bytes);
    jsonw_u64(w, "padded_bytes", t->padded_bytes);
    jsonw_u64(w, "padding_bytes", t->padded_bytes - t->logical_bytes);
    jsonw_double(w, "expansion", ratio(t->padded_bytes, t->logical_bytes));
    if (!t->raw) {
        jsonw_str(w, "layout_source", t->layout_rule);
        jsonw_str(w, "confidence", layout_confidence_name(t->confidence));
    }
    jsonw_arr_begin(w, "live");
    jsonw_i64(w, NULL, t->live_start);
    jsonw_i64(w, NULL, t->live_end);
    jsonw_arr_end(w);
    jsonw_u64(w, "offset", offset);
    if (t->ntags > 0) {
        jsonw_arr_begin(w, "tags");
        for (unsigned k = 0; k < t->ntags; k++)
            jsonw_str(w, NULL, t->tags[k]);
        jsonw_arr_end(w);
    }
    if (t->donated)
        jsonw_bool(w, "donated", true);
    jsonw_obj_end(w);
}

static void write_timeline(struct jsonw *w, const struct plan_ctx *c, const struct packing *pk)
{
    const struct pack_metrics *mt = &pk->mt;
    size_t n = pk->have_metrics ? mt->nsteps : 0;
    size_t group = n > PLAN_TIMELINE_MAX ? (n + PLAN_TIMELINE_MAX - 1) / PLAN_TIMELINE_MAX : 1;
    const uint64_t *series[3] = {mt->live_bytes, mt->heap_top, mt->largest_gap};
    const char *names[3] = {"live_bytes", "heap_bytes", "largest_gap_bytes"};

    (void)c;
    jsonw_obj_begin(w, "timeline");
    jsonw_arr_begin(w, "step");
    for (size_t g = 0; g < n; g += group)
        jsonw_i64(w, NULL, mt->steps[g]);
    jsonw_arr_end(w);
    for (int s = 0; s < 3; s++) {
        jsonw_arr_begin(w, names[s]);
        for (size_t g = 0; g < n; g += group) {
            uint64_t mx = 0;
            for (size_t k = g; k < g + group && k < n; k++)
                mx = series[s][k] > mx ? series[s][k] : mx;
            jsonw_u64(w, NULL, mx);
        }
        jsonw_arr_end(w);
    }
    jsonw_bool(w, "downsampled", group > 1);
    jsonw_obj_end(w);
}

static void write_packing(struct jsonw *w, const struct plan_ctx *c, const struct packing *pk)
{
    jsonw_obj_begin(w, "packing");
    jsonw_u64(w, "alignment", c->alignment);
    if (c->capacity != 0)
        jsonw_u64(w, "capacity_bytes", c->capacity);
    else
        jsonw_null(w, "capacity_bytes");
    jsonw_arr_begin(w, "steps");
    jsonw_i64(w, NULL, 0);
    jsonw_i64(w, NULL, c->m.nsteps);
    jsonw_arr_end(w);
    jsonw_str(w, "chosen", pk->chosen >= 0 ? pk->runs[pk->chosen].r.strategy : NULL);
    jsonw_u64(w, "buffers", c->nbufs);
    jsonw_arr_begin(w, "strategies");
    for (size_t k = 0; k < (c->nbufs > 0 ? c->nstrategies : 0); k++) {
        const struct strat_run *sr = &pk->runs[k];
        jsonw_obj_begin(w, NULL);
        jsonw_str(w, "name", c->strategies[k]);
        if (sr->rc == ERR_OK) {
            uint64_t frag = sr->r.peak - (pk->lb < sr->r.peak ? pk->lb : sr->r.peak);
            jsonw_u64(w, "peak_bytes", sr->r.peak);
            jsonw_u64(w, "lower_bound_bytes", pk->lb);
            jsonw_u64(w, "fragmentation_bytes", frag);
            jsonw_double(w, "fragmentation", sr->r.peak ? (double)frag / (double)sr->r.peak : 0);
            jsonw_bool(w, "solved", true);
            jsonw_bool(w, "proven_optimal", sr->r.proven_optimal);
            jsonw_bool(w, "fits", c->capacity == 0 || sr->r.peak <= c->capacity);
        } else {
            jsonw_bool(w, "solved", false);
            jsonw_str(w, "error", sr->error);
        }
        jsonw_double(w, "seconds", sr->r.seconds);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    write_timeline(w, c, pk);
    jsonw_obj_begin(w, "peak");
    if (pk->have_metrics && pk->mt.nsteps > 0) {
        const struct pack_metrics *mt = &pk->mt;
        jsonw_i64(w, "step", mt->steps[mt->peak_segment]);
        jsonw_u64(w, "bytes", pk->runs[pk->chosen].r.peak);
        jsonw_arr_begin(w, "buffers");
        for (size_t k = 0; k < mt->npeak_buffers; k++)
            jsonw_u64(w, NULL, c->buf_tensor[mt->peak_buffers[k]]);
        jsonw_arr_end(w);
    } else {
        jsonw_i64(w, "step", 0);
        jsonw_u64(w, "bytes", 0);
        jsonw_arr_begin(w, "buffers");
        jsonw_arr_end(w);
    }
    jsonw_obj_end(w);
    jsonw_obj_end(w);
}

/* The offset of tensor i, walking the tensors in order with *b the next packed buffer:
 * tensors with no bytes are not packed and sit at 0. */
static uint64_t next_offset(const struct plan_ctx *c, const uint64_t *offsets, size_t i, size_t *b)
{
    if (*b < c->nbufs && c->buf_tensor[*b] == i)
        return offsets != NULL ? offsets[(*b)++] : 0;
    return 0;
}

/* The result document; without the tensors array it is the summary view. */
static int write_result(const struct plan_ctx *c, const struct packing *pk,
                        const struct suggest_fix *sg, size_t nsg, bool with_tensors,
                        size_t max_bytes, char **json, size_t *json_len, struct err *e)
{
    struct jsonw w;
    uint64_t peak = pk->chosen >= 0 ? pk->runs[pk->chosen].r.peak : 0;
    uint64_t frag = peak - (pk->lb < peak ? pk->lb : peak);
    bool fits = c->capacity == 0 || peak <= c->capacity;
    const uint64_t *offsets = pk->chosen >= 0 ? pk->runs[pk->chosen].r.offsets : NULL;
    size_t b = 0;
    int rc;

    jsonw_init(&w, max_bytes);
    jsonw_obj_begin(&w, NULL);
    jsonw_i64(&w, "schema_version", 1);

    jsonw_obj_begin(&w, "model");
    jsonw_str(&w, "name", c->name);
    jsonw_str(&w, "source_format", c->m.source_format);
    if (c->m.naxes > 0) {
        jsonw_obj_begin(&w, "mesh");
        for (size_t a = 0; a < c->m.naxes; a++)
            jsonw_i64(&w, c->m.axis_names[a], c->m.axis_sizes[a]);
        jsonw_obj_end(&w);
    } else {
        jsonw_null(&w, "mesh");
    }
    jsonw_u64(&w, "devices", c->m.devices);
    jsonw_i64(&w, "steps", c->m.nsteps);
    jsonw_u64(&w, "ops", c->m.nops);
    jsonw_obj_end(&w);

    write_chip(&w, c);

    jsonw_obj_begin(&w, "summary");
    jsonw_u64(&w, "tensors", c->m.n);
    jsonw_u64(&w, "logical_bytes", c->logical);
    jsonw_u64(&w, "padded_bytes", c->padded);
    jsonw_u64(&w, "padding_bytes", c->padded - c->logical);
    jsonw_double(&w, "expansion", ratio(c->padded, c->logical));
    if (c->capacity != 0)
        jsonw_u64(&w, "capacity_bytes", c->capacity);
    else
        jsonw_null(&w, "capacity_bytes");
    jsonw_u64(&w, "peak_bytes", peak);
    jsonw_u64(&w, "lower_bound_bytes", pk->lb);
    jsonw_u64(&w, "fragmentation_bytes", frag);
    jsonw_double(&w, "fragmentation", peak ? (double)frag / (double)peak : 0);
    jsonw_bool(&w, "fits", fits);
    if (c->capacity != 0) {
        jsonw_u64(&w, "headroom_bytes", fits ? c->capacity - peak : 0);
        jsonw_u64(&w, "overflow_bytes", fits ? 0 : peak - c->capacity);
    } else {
        jsonw_null(&w, "headroom_bytes");
        jsonw_null(&w, "overflow_bytes");
    }
    jsonw_str(&w, "strategy", pk->chosen >= 0 ? pk->runs[pk->chosen].r.strategy : NULL);
    jsonw_obj_begin(&w, "by_kind");
    for (int k = 0; k < TENSOR_KIND_COUNT; k++) {
        if (c->count[k] == 0)
            continue;
        jsonw_obj_begin(&w, tensor_kind_name((enum tensor_kind)k));
        jsonw_u64(&w, "count", c->count[k]);
        jsonw_u64(&w, "logical_bytes", c->kind_logical[k]);
        jsonw_u64(&w, "padded_bytes", c->kind_padded[k]);
        jsonw_obj_end(&w);
    }
    jsonw_obj_end(&w);
    jsonw_u64(&w, "assumed_layouts", c->assumed_layouts);
    jsonw_obj_end(&w);

    if (with_tensors) {
        jsonw_arr_begin(&w, "tensors");
        for (size_t i = 0; i < c->m.n; i++)
            write_tensor(&w, c, i, next_offset(c, offsets, i, &b));
        jsonw_arr_end(&w);
    }

    jsonw_arr_begin(&w, "suggestions");
    for (size_t q = 0; q < nsg; q++) {
        const struct suggest_fix *s = &sg[q];
        char text[ERR_MSG_MAX + 128], total[32];
        jsonw_obj_begin(&w, NULL);
        jsonw_u64(&w, "tensor", s->tensor);
        jsonw_str(&w, "name", c->m.tensors[s->tensor].name);
        jsonw_str(&w, "action", s->s.action);
        jsonw_str(&w, "suggested_shape", s->s.suggested_shape);
        jsonw_u64(&w, "padded_bytes", s->s.padded_bytes);
        jsonw_u64(&w, "suggested_padded_bytes", s->s.suggested_padded_bytes);
        jsonw_u64(&w, "saves_bytes", s->s.saves_bytes);
        jsonw_u64(&w, "same_shape_tensors", s->same_shape);
        jsonw_u64(&w, "total_saves_bytes", s->total_saves);
        if (s->same_shape > 1)
            snprintf(text, sizeof(text), "%s per tensor; %zu tensors have this shape: %s in total",
                     s->s.text, s->same_shape,
                     layout_format_bytes(s->total_saves, total, sizeof(total)));
        else
            snprintf(text, sizeof(text), "%s", s->s.text);
        jsonw_str(&w, "text", text);
        jsonw_obj_end(&w);
    }
    jsonw_arr_end(&w);

    write_packing(&w, c, pk);

    jsonw_arr_begin(&w, "warnings");
    for (size_t k = 0; k < c->m.warnings.n; k++)
        jsonw_str(&w, NULL, c->m.warnings.lines[k]);
    if (c->m.warnings.dropped > 0) {
        char line[96];
        snprintf(line, sizeof(line), "%zu more warnings not shown", c->m.warnings.dropped);
        jsonw_str(&w, NULL, line);
    }
    if (c->nbufs < c->m.n) {
        char line[160];
        snprintf(line, sizeof(line), "%zu tensors hold zero bytes and are not packed (offset 0)",
                 c->m.n - c->nbufs);
        jsonw_str(&w, NULL, line);
    }
    for (size_t k = 0; k < (c->nbufs > 0 ? c->nstrategies : 0); k++)
        if (pk->runs[k].rc != ERR_OK) {
            char line[ERR_MSG_MAX + 64];
            snprintf(line, sizeof(line), "strategy %s failed: %s", c->strategies[k],
                     pk->runs[k].error);
            jsonw_str(&w, NULL, line);
        }
    jsonw_arr_end(&w);
    jsonw_obj_end(&w);

    if ((rc = jsonw_finish(&w, json, json_len)) != ERR_OK)
        return err_set(e, rc, "",
                       rc == ERR_LIMIT ? "the result is larger than %zu bytes"
                                       : "out of memory writing the result (%zu)",
                       max_bytes);
    return ERR_OK;
}

/* ---- the views (RESULT.md "Views") ------------------------------------------------ */

void plan_views_free(struct plan_views *v)
{
    if (v == NULL)
        return;
    free(v->summary);
    free(v->layout);
    memset(v, 0, sizeof(*v));
}

struct dict_ent {
    const char *s; /* NULL: the field is absent (sorts last, written as null) */
    uint32_t i;    /* tensor */
};

static bool same_str(const char *a, const char *b)
{
    return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int dict_cmp(const void *x, const void *y)
{
    const struct dict_ent *a = x, *b = y;
    int r;

    if (a->s == NULL || b->s == NULL)
        r = (a->s == NULL) - (b->s == NULL);
    else
        r = strcmp(a->s, b->s);
    return r != 0 ? r : (a->i > b->i) - (a->i < b->i);
}

/* A column whose values repeat (a model has few distinct kinds, shapes, layout rules):
 * {"values": [the distinct values, sorted, null last], "index": [per tensor]}. Sorts
 * ents (n entries) and uses rank (n entries) as scratch. */
static void write_dict(struct jsonw *w, const char *key, struct dict_ent *ents, uint32_t *rank,
                       size_t n)
{
    uint32_t r = 0;

    qsort(ents, n, sizeof(*ents), dict_cmp);
    jsonw_obj_begin(w, key);
    jsonw_arr_begin(w, "values");
    for (size_t k = 0; k < n; k++) {
        if (k > 0 && !same_str(ents[k - 1].s, ents[k].s))
            r++;
        if (k == 0 || !same_str(ents[k - 1].s, ents[k].s))
            jsonw_str(w, NULL, ents[k].s);
        rank[ents[k].i] = r;
    }
    jsonw_arr_end(w);
    jsonw_arr_begin(w, "index");
    for (size_t i = 0; i < n; i++)
        jsonw_u64(w, NULL, rank[i]);
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

enum { COL_KIND, COL_SHAPE, COL_LAYOUT_SOURCE, COL_CONFIDENCE, NCOLS };

/* The dictionary columns' value of tensor i; shape text comes from shapes. */
static const char *col_value(const struct plan_ctx *c, int col, size_t i, const char *shapes,
                             const size_t *shape_at)
{
    const struct model_tensor *t = &c->m.tensors[i];

    switch (col) {
    case COL_KIND:
        return tensor_kind_name(t->kind);
    case COL_SHAPE:
        return t->raw ? NULL : shapes + shape_at[i];
    case COL_LAYOUT_SOURCE:
        return t->raw ? NULL : t->layout_rule;
    default:
        return t->raw ? NULL : layout_confidence_name(t->confidence);
    }
}

/*
 * The layout view: the tensors as columns, one array per field in tensor order, for the
 * dashboard's chart, tooltips, search and tables (~7 MB for 100,000 tensors, against a
 * 37 MB result). Written here, from the same data as the result, so storing a plan costs
 * no work in the database.
 */
static int write_layout_view(const struct plan_ctx *c, const struct packing *pk, size_t max_bytes,
                             char **out, size_t *out_len, struct err *e)
{
    static const char *const names[NCOLS] = {"kind", "shape", "layout_source", "confidence"};
    const uint64_t *offsets = pk->chosen >= 0 ? pk->runs[pk->chosen].r.offsets : NULL;
    size_t n = c->m.n, cap = 0, used = 0;
    struct dict_ent *ents = malloc((n ? n : 1) * sizeof(*ents));
    uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));
    size_t *shape_at = malloc((n ? n : 1) * sizeof(*shape_at));
    char *shapes = NULL, text[SHAPE_MAX_TEXT];
    struct jsonw w;
    int rc = ERR_OK;

    jsonw_init(&w, max_bytes);
    if (ents == NULL || rank == NULL || shape_at == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory writing the layout view");
        goto out;
    }
    /* Every printed shape, back to back: one allocation, grown by doubling. */
    for (size_t i = 0; i < n; i++) {
        int len = c->m.tensors[i].raw ? 0 : shape_print(&c->m.tensors[i].shape, text, sizeof(text));
        size_t need = used + (size_t)(len > 0 ? len : 0) + 1;
        if (need > cap) {
            size_t ncap = cap ? cap : 4096;
            while (ncap < need)
                ncap *= 2;
            char *grown = realloc(shapes, ncap);
            if (grown == NULL) {
                rc = err_set(e, ERR_NOMEM, "", "out of memory writing the layout view");
                goto out;
            }
            shapes = grown;
            cap = ncap;
        }
        shape_at[i] = used;
        memcpy(shapes + used, len > 0 ? text : "", (size_t)(len > 0 ? len : 0));
        used += (size_t)(len > 0 ? len : 0);
        shapes[used++] = '\0';
    }
    jsonw_obj_begin(&w, NULL);
    jsonw_u64(&w, "tensors", n);
    jsonw_arr_begin(&w, "name");
    for (size_t i = 0; i < n; i++)
        jsonw_str(&w, NULL, c->m.tensors[i].name);
    jsonw_arr_end(&w);
    jsonw_arr_begin(&w, "start");
    for (size_t i = 0; i < n; i++)
        jsonw_i64(&w, NULL, c->m.tensors[i].live_start);
    jsonw_arr_end(&w);
    jsonw_arr_begin(&w, "end");
    for (size_t i = 0; i < n; i++)
        jsonw_i64(&w, NULL, c->m.tensors[i].live_end);
    jsonw_arr_end(&w);
    jsonw_arr_begin(&w, "offset");
    for (size_t i = 0, b = 0; i < n; i++)
        jsonw_u64(&w, NULL, next_offset(c, offsets, i, &b));
    jsonw_arr_end(&w);
    jsonw_arr_begin(&w, "padded_bytes");
    for (size_t i = 0; i < n; i++)
        jsonw_u64(&w, NULL, c->m.tensors[i].padded_bytes);
    jsonw_arr_end(&w);
    jsonw_arr_begin(&w, "logical_bytes");
    for (size_t i = 0; i < n; i++)
        jsonw_u64(&w, NULL, c->m.tensors[i].logical_bytes);
    jsonw_arr_end(&w);
    for (int col = 0; col < NCOLS; col++) {
        for (size_t i = 0; i < n; i++)
            ents[i] = (struct dict_ent){col_value(c, col, i, shapes, shape_at), (uint32_t)i};
        write_dict(&w, names[col], ents, rank, n);
    }
    /* Few tensors have tags: only theirs, keyed by tensor id. */
    jsonw_obj_begin(&w, "tags");
    for (size_t i = 0; i < n; i++) {
        const struct model_tensor *t = &c->m.tensors[i];
        char key[24];
        if (t->ntags == 0)
            continue;
        snprintf(key, sizeof(key), "%zu", i);
        jsonw_arr_begin(&w, key);
        for (unsigned k = 0; k < t->ntags; k++)
            jsonw_str(&w, NULL, t->tags[k]);
        jsonw_arr_end(&w);
    }
    jsonw_obj_end(&w);
    jsonw_obj_end(&w);
    if ((rc = jsonw_finish(&w, out, out_len)) != ERR_OK)
        rc = err_set(e, rc, "",
                     rc == ERR_LIMIT ? "the layout view is larger than %zu bytes"
                                     : "out of memory writing the layout view (%zu)",
                     max_bytes);
out:
    jsonw_discard(&w); /* nothing left to free after jsonw_finish */
    free(ents);
    free(rank);
    free(shape_at);
    free(shapes);
    return rc;
}

int plan_run(const char *input, size_t len, const struct plan_opts *o, const struct plan_limits *l,
             char **json, size_t *json_len, struct plan_views *views, struct plan_summary *s,
             struct err *e)
{
    struct plan_ctx c;
    struct packing pk;
    struct suggest_fix sg[SUGGEST_MAX_FIXES];
    size_t nsg = 0, max_bytes;
    int rc;

    *json = NULL;
    *json_len = 0;
    if (views != NULL)
        memset(views, 0, sizeof(*views));
    memset(&pk, 0, sizeof(pk));
    if ((rc = prepare(input, len, o, l, &c, e)) != ERR_OK)
        goto out;
    if ((rc = run_packing(&c, &pk, e)) != ERR_OK)
        goto out;
    if ((rc = suggest_model(&c.m, c.chip, sg, &nsg, e)) != ERR_OK)
        goto out;
    /* The document is bounded by the input: a fixed part plus a few KiB per tensor. */
    max_bytes = ((size_t)1 << 20) + c.m.n * 4096 + 4 * len;
    if ((rc = write_result(&c, &pk, sg, nsg, true, max_bytes, json, json_len, e)) != ERR_OK)
        goto out;
    if (views != NULL && ((rc = write_result(&c, &pk, sg, nsg, false, max_bytes, &views->summary,
                                             &views->summary_len, e)) != ERR_OK ||
                          (rc = write_layout_view(&c, &pk, max_bytes, &views->layout,
                                                  &views->layout_len, e)) != ERR_OK)) {
        plan_views_free(views);
        free(*json);
        *json = NULL;
        *json_len = 0;
        goto out;
    }
    fill_summary(&c, s, pk.chosen >= 0 ? pk.runs[pk.chosen].r.peak : 0, pk.lb);
out:
    packing_free(&pk, c.nstrategies);
    ctx_free(&c);
    return rc;
}
