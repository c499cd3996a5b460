/*
 * plan_options.c - the plan's options, one table (plan_options.h): each row says where the
 * option lives in struct plan_opts, its grammar, its range and its surfaces; one parser per
 * grammar, one store per field shape.
 */
#include "planner/plan_options.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "planner/base/jsonr.h"
#include "planner/budget.h"
#include "planner/bytes.h"
#include "planner/chip.h"
#include "planner/duration.h"
#include "planner/import.h"
#include "planner/pack.h"
#include "planner/text.h"

#define NAME_MAX_BYTES 127 /* a plan's name: the result's summary keeps 127 bytes */
#define STRATEGY_TOKEN 32  /* a strategy name's bytes, with its NUL */
#define THREADS_MAX    64

/* How a row's value sits in struct plan_opts. */
enum field {
    F_STR,      /* const char *; unset: NULL */
    F_FILE,     /* const char * and its size_t length at len_off */
    F_U64,      /* uint64_t; unset: 0 */
    F_REAL,     /* double; unset: 0 */
    F_PREALLOC, /* enum plan_prealloc; unset: PLAN_PREALLOC_DEFAULT */
    F_ENUM,     /* an int-sized enum named by the row's names; unset: 0 (then left out when
                 * written): enum pack_goal, enum plan_runtime_opt */
    F_UINT,     /* unsigned; unset: 0 */
};

struct name_value {
    const char *name;
    int value;
};

static const struct name_value goals[] = {
    {"min", PACK_GOAL_MIN}, {"fit", PACK_GOAL_FIT}, {NULL, 0}};
static const struct name_value runtimes[] = {
    {"none", PLAN_RUNTIME_NONE}, {"bfc", PLAN_RUNTIME_BFC}, {NULL, 0}};
static const struct name_value readings[] = {
    {"compiler", PLAN_READING_COMPILER}, {"written", PLAN_READING_WRITTEN}, {NULL, 0}};
static const struct name_value orders[] = {
    {"scheduler", PLAN_ORDER_SCHEDULER}, {"text", PLAN_ORDER_TEXT}, {NULL, 0}};

_Static_assert(sizeof(enum pack_goal) == sizeof(int) &&
                   sizeof(enum plan_runtime_opt) == sizeof(int) &&
                   sizeof(enum plan_reading) == sizeof(int) &&
                   sizeof(enum plan_order) == sizeof(int),
               "F_ENUM fields are int-sized");

struct row {
    struct plan_opt pub; /* first: plan_opt_at hands out &row->pub */
    enum field field;
    bool pow2;     /* BYTES: a power of two */
    unsigned slip; /* BYTES: the surfaces a person types on where a count without a unit
                    * below 1 MiB is refused as a likely slip (plan_opt_set_typed) */
    size_t off, len_off;
    /* the range: DURATION, FRACTION (lo, hi]; BYTES, COUNT, TEXT [min, max] (TEXT: bytes) */
    double lo, hi;
    uint64_t min, max;
    const struct name_value *names; /* ENUM */
};

#define OFF(f) offsetof(struct plan_opts, f)
#define ALL    (PLAN_OPT_CLI | PLAN_OPT_API | PLAN_OPT_STORED | PLAN_OPT_MODEL)
/* what plans a model: the two CLI commands that plan, the API and what it stores */
#define PLANS (PLAN_OPT_PLAN | PLAN_OPT_DIFF | PLAN_OPT_API | PLAN_OPT_STORED)

/* The table. Its order is the stored document's (service/planopts.c writes the rows in
 * order, and a plan's Idempotency-Key compares that text) and the help text's. */
static const struct row rows[] = {
    {.pub = {"format", "--input", "format", "FORMAT", PLAN_OPT_FORMAT, PLANS, NULL,
             "auto, detected from the content", "the input's format"},
     .field = F_STR,
     .off = OFF(format)},
    {.pub = {"chip", "--chip", "chip", "CHIP", PLAN_OPT_CHIP, PLANS, "a name of `tpuplan chips`",
             "the model's chip, else the default chip", "the TPU generation the layouts are for"},
     .field = F_STR,
     .off = OFF(chip)},
    {.pub = {"strategies", "--strategies", "strategies", "S", PLAN_OPT_STRATEGIES,
             PLANS | PLAN_OPT_MODEL,
             "best (every heuristic; exact up to 2000 buffers), all, or a comma-separated list of "
             "strategies",
             "best", "the packing strategies run"},
     .field = F_STR,
     .off = OFF(strategies)},
    {.pub = {"capacity", "--capacity", "capacity", "BYTES", PLAN_OPT_BYTES, ALL, "above 0 bytes",
             "the chip's usable HBM; none for a CSV without a chip",
             "the memory the plan must fit"},
     .field = F_U64,
     .slip = PLAN_OPT_PLAN | PLAN_OPT_DIFF | PLAN_OPT_API, /* pack: a CSV's sizes have none */
     .off = OFF(capacity),
     .min = 1,
     .max = UINT64_MAX},
    {.pub = {"time_limit", "--time-limit", "time_limit_s", "SECONDS", PLAN_OPT_DURATION, ALL,
             "above 0 and at most 3600 s",
             "2 s up to 2000 buffers, then 2 s x 2000 / buffers (at least 0.1 s)",
             "the search strategies' time, each"},
     .field = F_REAL,
     .off = OFF(time_limit_s),
     .hi = 3600},
    {.pub = {"alignment", "--alignment", "alignment", "BYTES", PLAN_OPT_BYTES,
             PLANS | PLAN_OPT_MODEL, "a power of two from 1 to 1G (2^30) bytes",
             "512 for models, an assumption; 1 for CSV", "buffer offsets are multiples of it"},
     .field = F_U64,
     .pow2 = true,
     .off = OFF(alignment),
     .min = 1,
     .max = UINT64_C(1) << 30},
    {.pub = {"name", "--name", "name", "NAME", PLAN_OPT_TEXT,
             PLAN_OPT_PLAN | PLAN_OPT_API | PLAN_OPT_STORED, "1 to 127 bytes", "the model's name",
             "the plan's name"},
     .field = F_STR,
     .off = OFF(name),
     .min = 1,
     .max = NAME_MAX_BYTES},
    {.pub =
         {"budget", "--budget", "budget", "BYTES|FRACTION", PLAN_OPT_BUDGET, PLANS | PLAN_OPT_MODEL,
          "above 0 bytes (below 1 MiB with its unit: 4096B), or a share of the capacity: 0.9, 90%",
          "none", "the peak the plan is gated on (above it: exit 1, summary.within_budget false)"},
     .field = F_STR,
     .off = OFF(budget)},
    {.pub = {"runtime", "--runtime", "runtime", "none|bfc", PLAN_OPT_ENUM, PLANS | PLAN_OPT_MODEL,
             "none or bfc", "none (bfc when --mem-fraction or --preallocate is given)",
             "bfc replays the plan through XLA's BFC allocator: a GPU runtime model, not the TPU"},
     .field = F_ENUM,
     .off = OFF(runtime),
     .names = runtimes},
    {.pub = {"mem_fraction", "--mem-fraction", "mem_fraction", "F", PLAN_OPT_FRACTION,
             PLANS | PLAN_OPT_MODEL, "above 0 and at most 1", "0.75",
             "the share of the capacity the simulated runtime allocator (BFC) may hold"},
     .field = F_REAL,
     .off = OFF(mem_fraction),
     .hi = 1},
    {.pub = {"xla_assignment", "--xla-assignment", "xla_assignment", "FILE", PLAN_OPT_FILE,
             PLAN_OPT_PLAN | PLAN_OPT_STORED, "an XLA *.buffer-assignment.txt", "none",
             "XLA's own buffer assignment of the program, compared (xla-actual)"},
     .field = F_FILE,
     .off = OFF(xla_assignment),
     .len_off = OFF(xla_assignment_len)},
    {.pub = {"xla_report", "--xla-report", "xla_report", "FILE", PLAN_OPT_FILE,
             PLAN_OPT_PLAN | PLAN_OPT_STORED, "an XLA *.memory-usage-report.txt", "none",
             "XLA's memory-usage report of the same program"},
     .field = F_FILE,
     .off = OFF(xla_report),
     .len_off = OFF(xla_report_len)},
    {.pub = {"preallocate", "--preallocate", "preallocate", "true|false", PLAN_OPT_BOOL,
             PLANS | PLAN_OPT_MODEL, "true or false", "true",
             "whether the simulated runtime allocator reserves its share up front"},
     .field = F_PREALLOC,
     .off = OFF(preallocate)},
    {.pub =
         {"goal", "--goal", "goal", "min|fit", PLAN_OPT_ENUM, PLANS | PLAN_OPT_PACK, "min or fit",
          "min",
          "what the search strategies aim at (min: the lowest peak; fit: the first packing within "
          "the capacity)"},
     .field = F_ENUM,
     .off = OFF(goal),
     .names = goals},
    {.pub = {"reading", "--reading", "reading", "compiler|written", PLAN_OPT_ENUM,
             PLANS | PLAN_OPT_MODEL, "compiler or written", "compiler",
             "a before-optimization program planned as XLA will compile it (fused, scheduled) "
             "or as written (every value a buffer, the text order)"},
     .field = F_ENUM,
     .off = OFF(reading),
     .names = readings},
    {.pub = {"order", "--order", "order", "scheduler|text", PLAN_OPT_ENUM, PLANS | PLAN_OPT_MODEL,
             "scheduler or text", "scheduler",
             "the compiler reading's order: XLA's memory scheduler's, or the text's"},
     .field = F_ENUM,
     .off = OFF(order),
     .names = orders},
    {.pub = {"bind", "--bind", "bind", "NAME=VALUE", PLAN_OPT_TEXT, PLANS,
             "NAME=SHAPE (8x20x20) or NAME=N, comma-separated (--bind again adds one), NAME an "
             "entry argument: arg1, its jax.arg_info or jax.global_constant name",
             "none: a StableHLO dynamic dim (?) is refused",
             "StableHLO's dynamic dims: the entry function's arguments' real shapes, or a "
             "dimension argument's value"},
     .field = F_STR,
     .off = OFF(bind),
     .min = 1,
     .max = 4096},
    {.pub = {"threads", "--threads", NULL, "N", PLAN_OPT_COUNT, PLAN_OPT_CLI, "1 to 64",
             "as many as the machine has", "threads the planner may use (the result is the same)"},
     .field = F_UINT,
     .off = OFF(threads),
     .min = 1,
     .max = THREADS_MAX},
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* A parsed value, before it is stored. */
union val {
    uint64_t u;
    double d;
    int i;
    const char *s;
};

static const struct row *row_of(const struct plan_opt *opt)
{
    return (const struct row *)(const void *)opt; /* pub is the first member */
}

size_t plan_opt_count(void)
{
    return NROWS;
}

const struct plan_opt *plan_opt_at(size_t i)
{
    return i < NROWS ? &rows[i].pub : NULL;
}

/* opt's spelling on surface s. */
static const char *spelled(const struct plan_opt *opt, unsigned s)
{
    if (s & PLAN_OPT_CLI)
        return opt->flag;
    return s == PLAN_OPT_STORED ? opt->key : opt->name;
}

const struct plan_opt *plan_opt_find(unsigned surfaces, const char *name)
{
    for (size_t i = 0; name != NULL && i < NROWS; i++)
        for (unsigned s = 1; s <= PLAN_OPT_MODEL; s <<= 1) {
            const char *sp =
                (surfaces & s & rows[i].pub.surfaces) ? spelled(&rows[i].pub, s) : NULL;
            if (sp != NULL && strcmp(sp, name) == 0)
                return &rows[i].pub;
        }
    return NULL;
}

const char *plan_opt_range(const struct plan_opt *opt, char *buf, size_t cap)
{
    if (cap == 0)
        return buf;
    if (opt->type == PLAN_OPT_FORMAT)
        import_names(buf, cap);
    else
        snprintf(buf, cap, "%s", opt->range);
    return buf;
}

void plan_opt_names(enum plan_opt_surface surface, char *buf, size_t cap)
{
    size_t n = 0;

    if (cap == 0)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < NROWS; i++) {
        if (!(rows[i].pub.surfaces & (unsigned)surface))
            continue;
        int w = snprintf(buf + n, cap - n, "%s%s", n > 0 ? ", " : "",
                         spelled(&rows[i].pub, (unsigned)surface));
        if (w < 0 || (size_t)w >= cap - n) {
            buf[n] = '\0'; /* whole names only */
            return;
        }
        n += (size_t)w;
    }
}

/* ---- one parser per grammar: value text into *v, or an error naming label ---- */

/* "a, b or c": an enum's names, for its error. */
static void enum_list(const struct name_value *names, char *buf, size_t cap)
{
    size_t n = 0, k = 0;

    buf[0] = '\0';
    while (names[k].name != NULL)
        k++;
    for (size_t i = 0; i < k; i++) {
        int w = snprintf(buf + n, cap - n, "%s%s",
                         i == 0       ? ""
                         : i + 1 == k ? " or "
                                      : ", ",
                         names[i].name);
        if (w < 0 || (size_t)w >= cap - n)
            return;
        n += (size_t)w;
    }
}

static int parse_enum(const struct row *r, const char *label, const char *s, union val *v,
                      struct err *e)
{
    char list[256];

    for (const struct name_value *nv = r->names; nv->name != NULL; nv++)
        if (strcmp(s, nv->name) == 0) {
            v->i = nv->value;
            return ERR_OK;
        }
    enum_list(r->names, list, sizeof(list));
    return err_set(e, ERR_INVALID, label, "%s: must be %s, got \"%.64s\"", label, list, s);
}

static int parse_bool(const struct row *r, const char *label, const char *s, union val *v,
                      struct err *e)
{
    (void)r;
    if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
        v->i = s[0] == 't';
        return ERR_OK;
    }
    return err_set(e, ERR_INVALID, label, "%s: must be true or false, got \"%.64s\"", label, s);
}

/* A byte count's range: min, max and the power of two. shown is the value as given. */
static int range_bytes(const struct row *r, const char *label, uint64_t u, const char *shown,
                       struct err *e)
{
    if (u >= r->min && u <= r->max && (!r->pow2 || (u & (u - 1)) == 0))
        return ERR_OK;
    return err_set(e, ERR_INVALID, label, "%s: must be %s, got \"%.64s\"", label, r->pub.range,
                   shown);
}

static int parse_bytes(const struct row *r, const char *label, const char *s, union val *v,
                       struct err *e)
{
    int rc = bytes_parse(label, s, &v->u, e);

    return rc != ERR_OK ? rc : range_bytes(r, label, v->u, s, e);
}

/* A duration's or a fraction's range (lo, hi]; NaN fails it. */
static int range_real(const struct row *r, const char *label, double d, const char *shown,
                      struct err *e)
{
    if (d > r->lo && d <= r->hi)
        return ERR_OK;
    return err_set(e, ERR_INVALID, label, "%s: must be %s, got \"%.64s\"", label, r->pub.range,
                   shown);
}

static int parse_duration(const struct row *r, const char *label, const char *s, union val *v,
                          struct err *e)
{
    int rc = duration_parse(label, s, &v->d, e);

    return rc != ERR_OK ? rc : range_real(r, label, v->d, s, e);
}

static int parse_fraction(const struct row *r, const char *label, const char *s, union val *v,
                          struct err *e)
{
    struct bytes_text t;
    struct err scan;

    /* bytes.h's number without a unit, so a fraction reads as a budget's does */
    if (bytes_scan(label, s, &t, &scan) != ERR_OK || t.unit)
        return err_set(e, ERR_INVALID, label,
                       "%s: \"%.64s\" is not a decimal number (0.75, .5, 1: at most 6 decimals)",
                       label, s);
    v->d = (double)t.whole + (double)t.frac / (double)t.den;
    return range_real(r, label, v->d, s, e);
}

static int parse_count(const struct row *r, const char *label, const char *s, union val *v,
                       struct err *e)
{
    size_t n = strspn(s, "0123456789");

    v->u = 0;
    for (size_t i = 0; i < n && i < 20 && v->u <= r->max; i++)
        v->u = v->u * 10 + (uint64_t)(s[i] - '0');
    if (n == 0 || s[n] != '\0' || n >= 20 || v->u < r->min || v->u > r->max)
        return err_set(e, ERR_INVALID, label, "%s: must be a whole number from %s, got \"%.64s\"",
                       label, r->pub.range, s);
    return ERR_OK;
}

/* auto (stored as NULL, unset) or a format's name or alias, stored as the format's own name
 * (static): what the plan reports and the service stores. */
static int parse_format(const struct row *r, const char *label, const char *s, union val *v,
                        struct err *e)
{
    const struct importer *imp = NULL;
    int rc = import_lookup(label, s, &imp, e);

    (void)r;
    v->s = imp != NULL ? imp->name : NULL;
    return rc;
}

static int parse_chip(const struct row *r, const char *label, const char *s, union val *v,
                      struct err *e)
{
    (void)r;
    if (chip_find(s) == NULL)
        return err_set(e, ERR_NOTFOUND, label, "%s: unknown chip \"%.40s\" (known: %s)", label, s,
                       chip_names());
    v->s = s;
    return ERR_OK;
}

/* Every name of a strategy list known: best, all or pack.h's. */
static int parse_strategies(const struct row *r, const char *label, const char *s, union val *v,
                            struct err *e)
{
    (void)r;
    for (const char *p = s;;) {
        size_t n = strcspn(p, ",");
        char tok[STRATEGY_TOKEN];
        if (n == 0 || n >= sizeof(tok))
            return err_set(e, ERR_INVALID, label, "%s: empty or overlong name in \"%.100s\"", label,
                           s);
        memcpy(tok, p, n);
        tok[n] = '\0';
        if (strcmp(tok, "best") != 0 && strcmp(tok, "all") != 0 && pack_strategy_find(tok) == NULL)
            return err_set(e, ERR_NOTFOUND, label,
                           "%s: unknown strategy \"%s\" (known: %s, best, all)", label, tok,
                           pack_strategy_names());
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    v->s = s;
    return ERR_OK;
}

static int parse_budget(const struct row *r, const char *label, const char *s, union val *v,
                        struct err *e)
{
    struct budget b;
    int rc = budget_parse(label, s, &b, e);

    (void)r;
    v->s = s;
    return rc;
}

static int parse_text(const struct row *r, const char *label, const char *s, union val *v,
                      struct err *e)
{
    size_t n = strlen(s);

    if (n < r->min || n > r->max)
        return err_set(e, ERR_INVALID, label, "%s: must be %s, got %zu", label, r->pub.range, n);
    if (!text_utf8_valid(s, n))
        return err_set(e, ERR_INVALID, label, "%s: must be UTF-8 text", label);
    v->s = s;
    return ERR_OK;
}

static int parse_file(const struct row *r, const char *label, const char *s, union val *v,
                      struct err *e)
{
    (void)r;
    (void)label;
    (void)e;
    v->s = s;
    return ERR_OK;
}

typedef int (*parse_fn)(const struct row *, const char *, const char *, union val *, struct err *);

/* Indexed by enum plan_opt_type. */
static const parse_fn parsers[] = {
    [PLAN_OPT_BYTES] = parse_bytes,
    [PLAN_OPT_DURATION] = parse_duration,
    [PLAN_OPT_FRACTION] = parse_fraction,
    [PLAN_OPT_COUNT] = parse_count,
    [PLAN_OPT_BOOL] = parse_bool,
    [PLAN_OPT_ENUM] = parse_enum,
    [PLAN_OPT_FORMAT] = parse_format,
    [PLAN_OPT_CHIP] = parse_chip,
    [PLAN_OPT_STRATEGIES] = parse_strategies,
    [PLAN_OPT_BUDGET] = parse_budget,
    [PLAN_OPT_TEXT] = parse_text,
    [PLAN_OPT_FILE] = parse_file,
};

/* ---- the field: store, read back ---- */

static void store(struct plan_opts *o, const struct row *r, const union val *v)
{
    char *p = (char *)o + r->off;

    switch (r->field) {
    case F_STR:
        *(const char **)(void *)p = v->s;
        break;
    case F_FILE:
        *(const char **)(void *)p = v->s;
        *(size_t *)(void *)((char *)o + r->len_off) = strlen(v->s);
        break;
    case F_U64:
        *(uint64_t *)(void *)p = v->u;
        break;
    case F_REAL:
        *(double *)(void *)p = v->d;
        break;
    case F_PREALLOC:
        *(enum plan_prealloc *)(void *)p = v->i ? PLAN_PREALLOC_ON : PLAN_PREALLOC_OFF;
        break;
    case F_ENUM:
        memcpy(p, &v->i, sizeof(int));
        break;
    case F_UINT:
        *(unsigned *)(void *)p = (unsigned)v->u;
        break;
    }
}

bool plan_opt_get(const struct plan_opts *o, const struct plan_opt *opt, struct plan_opt_value *v)
{
    const struct row *r = row_of(opt);
    const char *p = (const char *)o + r->off;

    memset(v, 0, sizeof(*v));
    switch (r->field) {
    case F_STR:
        v->text = *(const char *const *)(const void *)p;
        v->len = v->text != NULL ? strlen(v->text) : 0;
        return v->text != NULL;
    case F_FILE:
        v->text = *(const char *const *)(const void *)p;
        v->len = *(const size_t *)(const void *)((const char *)o + r->len_off);
        return v->text != NULL;
    case F_U64:
        v->kind = PLAN_OPT_V_UINT;
        v->u = *(const uint64_t *)(const void *)p;
        return v->u != 0;
    case F_REAL:
        v->kind = PLAN_OPT_V_REAL;
        v->d = *(const double *)(const void *)p;
        return v->d > 0;
    case F_PREALLOC:
        v->kind = PLAN_OPT_V_BOOL;
        v->b = *(const enum plan_prealloc *)(const void *)p == PLAN_PREALLOC_ON;
        return *(const enum plan_prealloc *)(const void *)p != PLAN_PREALLOC_DEFAULT;
    case F_ENUM: {
        int i;
        memcpy(&i, p, sizeof(int));
        for (const struct name_value *nv = r->names; nv->name != NULL; nv++)
            if (nv->value == i)
                v->text = nv->name;
        v->len = v->text != NULL ? strlen(v->text) : 0;
        return i != 0 && v->text != NULL;
    }
    case F_UINT:
        v->kind = PLAN_OPT_V_UINT;
        v->u = *(const unsigned *)(const void *)p;
        return v->u != 0;
    }
    return false;
}

/* The bytes of a row's field (and of its length, F_FILE). */
static size_t field_size(const struct row *r)
{
    switch (r->field) {
    case F_STR:
    case F_FILE:
        return sizeof(const char *);
    case F_U64:
        return sizeof(uint64_t);
    case F_REAL:
        return sizeof(double);
    case F_PREALLOC:
        return sizeof(enum plan_prealloc);
    case F_ENUM:
        return sizeof(int);
    case F_UINT:
        return sizeof(unsigned);
    }
    return 0;
}

void plan_opts_fill(struct plan_opts *o, const struct plan_opts *from)
{
    struct plan_opt_value v;

    for (size_t i = 0; i < NROWS; i++) {
        const struct row *r = &rows[i];
        if (plan_opt_get(o, &r->pub, &v) || !plan_opt_get(from, &r->pub, &v))
            continue;
        memcpy((char *)o + r->off, (const char *)from + r->off, field_size(r));
        if (r->field == F_FILE)
            memcpy((char *)o + r->len_off, (const char *)from + r->len_off, sizeof(size_t));
    }
}

/* ---- setting ---- */

int plan_opt_set(struct plan_opts *o, const struct plan_opt *opt, const char *label,
                 const char *value, struct err *e)
{
    const struct row *r = row_of(opt);
    union val v = {0};
    int rc;

    if (value == NULL)
        return err_set(e, ERR_INVALID, label, "%s: needs a value", label);
    if ((rc = parsers[r->pub.type](r, label, value, &v, e)) != ERR_OK)
        return rc;
    store(o, r, &v);
    return ERR_OK;
}

int plan_opt_set_typed(struct plan_opts *o, const struct plan_opt *opt, unsigned surface,
                       const char *label, const char *value, struct err *e)
{
    const struct row *r = row_of(opt);
    struct bytes_text t;
    uint64_t v;
    int rc;

    if ((rc = plan_opt_set(o, opt, label, value, e)) != ERR_OK || (r->slip & surface) == 0)
        return rc;
    /* parsed once already: these cannot fail */
    if (bytes_scan(label, value, &t, e) != ERR_OK || bytes_value(label, value, &t, &v, e) != ERR_OK)
        return ERR_INTERNAL;
    return bytes_check_slip(label, value, &t, v, e);
}

int plan_opts_set(struct plan_opts *o, const char *name, const char *value, struct err *e)
{
    for (size_t i = 0; name != NULL && i < NROWS; i++)
        if (strcmp(rows[i].pub.name, name) == 0)
            return plan_opt_set(o, &rows[i].pub, name, value, e);
    return err_set(e, ERR_NOTFOUND, name, "%.64s: unknown option", name != NULL ? name : "");
}

/* Whether a row's value is text that *o keeps (rather than parses). */
static bool keeps_text(const struct row *r)
{
    return r->field == F_STR || r->field == F_FILE;
}

int plan_opt_set_json(struct plan_opts *o, const struct plan_opt *opt, const char *label,
                      const struct json_object *v, char *buf, size_t cap, size_t *used,
                      struct err *e)
{
    const struct row *r = row_of(opt);
    char text[32];
    const char *s = text;
    int64_t i;

    if (json_object_is_type(v, json_type_string)) {
        size_t n = (size_t)json_object_get_string_len(v);
        s = json_object_get_string((struct json_object *)v);
        if (memchr(s, '\0', n) != NULL)
            return err_set(e, ERR_INVALID, label, "%s: holds a NUL byte", label);
        if (keeps_text(r) && buf != NULL) {
            if (n + 1 > cap - *used)
                return err_set(e, ERR_LIMIT, label, "%s: no room for its %zu bytes", label, n);
            memcpy(buf + *used, s, n + 1);
            s = buf + *used;
            *used += n + 1;
        }
        return plan_opt_set(o, opt, label, s, e);
    }
    if (keeps_text(r) ||
        (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_boolean) &&
         !json_object_is_type(v, json_type_double)))
        return err_set(e, ERR_INVALID, label, "%s: must be a string, got %s", label,
                       jsonr_type_name(v));
    if (json_object_is_type(v, json_type_double)) {
        union val d = {.d = json_object_get_double(v)};
        int rc;
        if (r->pub.type != PLAN_OPT_DURATION && r->pub.type != PLAN_OPT_FRACTION)
            return err_set(e, ERR_INVALID, label, "%s: must be a whole number or a string, got %s",
                           label, jsonr_type_name(v));
        snprintf(text, sizeof(text), "%g", d.d);
        if ((rc = range_real(r, label, d.d, text, e)) != ERR_OK)
            return rc;
        store(o, r, &d);
        return ERR_OK;
    }
    if (json_object_is_type(v, json_type_boolean))
        snprintf(text, sizeof(text), "%s", json_object_get_boolean(v) ? "true" : "false");
    else if (jsonr_int(v, &i) == 0)
        snprintf(text, sizeof(text), "%lld", (long long)i);
    else /* above INT64_MAX: json-c keeps it unsigned */
        snprintf(text, sizeof(text), "%llu", (unsigned long long)json_object_get_uint64(v));
    return plan_opt_set(o, opt, label, s, e);
}

int plan_opts_set_object(struct plan_opts *o, enum plan_opt_surface surface,
                         const struct json_object *obj, char *buf, size_t cap, size_t *used,
                         struct err *e)
{
    char known[512], label[128];
    int rc;

    if (!json_object_is_type(obj, json_type_object))
        return err_set(e, ERR_INVALID, "options", "options: must be an object, got %s",
                       jsonr_type_name(obj));
    JSONR_FOREACH((struct json_object *)obj, it, end)
    {
        const char *key = JSONR_KEY(it);
        const struct plan_opt *opt = plan_opt_find((unsigned)surface, key);
        if (opt == NULL) {
            plan_opt_names(surface, known, sizeof(known));
            return err_set(e, ERR_INVALID, "options",
                           "options: unknown field \"%.100s\" (known: %s)", key, known);
        }
        snprintf(label, sizeof(label), "options.%.100s", key);
        if ((rc = plan_opt_set_json(o, opt, label, JSONR_VAL(it), buf, cap, used, e)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

int plan_opts_check(const struct plan_opts *o, struct err *e)
{
    for (size_t i = 0; i < NROWS; i++) {
        const struct row *r = &rows[i];
        const char *p = (const char *)o + r->off;
        char shown[32];
        int rc = ERR_OK;
        if (r->field == F_REAL && *(const double *)(const void *)p != 0) {
            snprintf(shown, sizeof(shown), "%g", *(const double *)(const void *)p);
            rc = range_real(r, r->pub.name, *(const double *)(const void *)p, shown, e);
        } else if (r->field == F_U64 && *(const uint64_t *)(const void *)p != 0) {
            snprintf(shown, sizeof(shown), "%llu",
                     (unsigned long long)*(const uint64_t *)(const void *)p);
            rc = range_bytes(r, r->pub.name, *(const uint64_t *)(const void *)p, shown, e);
        } else if (r->field == F_UINT && *(const unsigned *)(const void *)p > r->max) {
            rc = err_set(e, ERR_INVALID, r->pub.name, "%s: must be a whole number from %s, got %u",
                         r->pub.name, r->pub.range, *(const unsigned *)(const void *)p);
        }
        if (rc != ERR_OK)
            return rc;
    }
    return ERR_OK;
}
