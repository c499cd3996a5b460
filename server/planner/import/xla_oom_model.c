/*
 * xla_oom_model.c - an out-of-memory report as a model (import_int.h): one tensor per listed
 * allocation, with the shape the report prints (its layout XLA's), so that its padded size
 * is ours by our layout rules, to be checked against the report's Size (plan_report.c); its
 * op_name and source from the Operator line, its allocation type as its tag. An entry
 * without a shape (cut off by the paste) or with one we cannot read is a raw buffer of the
 * report's Size. The report gives no live ranges: all are taken as live together, a warning
 * says so. The HBM capacity it reports becomes the model's own capacity option.
 */
#include "planner/import/import_int.h"

#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "planner/base/names.h"
#include "planner/model/model_build.h"
#include "planner/shape.h"
#include "planner/xla_oom.h"

/* The allocation types XLA prints, as tensor kinds; any other is a temporary (its type is
 * still the tensor's tag). */
static const struct {
    const char *type;
    enum tensor_kind kind;
} kinds[] = {
    {"HLO temp", TENSOR_TEMP},         {"scoped", TENSOR_TEMP},   {"parameter", TENSOR_INPUT},
    {"entry parameter", TENSOR_INPUT}, {"output", TENSOR_OUTPUT}, {"constant", TENSOR_CONSTANT},
};

static enum tensor_kind kind_of(const char *type)
{
    for (size_t k = 0; type != NULL && k < sizeof(kinds) / sizeof(kinds[0]); k++)
        if (strcmp(type, kinds[k].type) == 0)
            return kinds[k].kind;
    return TENSOR_TEMP;
}

static struct names_key tensor_name(const void *ctx, uint32_t i)
{
    const struct model *m = ctx;

    return (struct names_key){m->tensors[i].name, strlen(m->tensors[i].name), 0};
}

/* Tensor i's name: the instruction the label names, or "allocation.N"; a repeated name gets
 * "#K" (K the entry's place in the report, from 1). */
static int name_tensor(struct model *m, struct names *tab, size_t i, const struct xla_oom_alloc *a,
                       struct err *e)
{
    char buf[MODEL_MAX_NAME];
    uint32_t first;
    int rc;

    if (a->name != NULL)
        snprintf(buf, sizeof(buf), "%s", a->name);
    else
        snprintf(buf, sizeof(buf), "allocation.%lld", (long long)a->rank);
    for (int pass = 0; pass < 2; pass++) {
        if ((m->tensors[i].name = model_strdup(m, buf, strlen(buf))) == NULL)
            return err_set(e, ERR_NOMEM, "", "out of memory");
        if ((rc = names_add(tab, (uint32_t)i, &first)) != ERR_OK)
            return err_set(e, rc, "", "too many allocations");
        if (first == NAMES_NONE)
            return ERR_OK;
        snprintf(buf + strnlen(buf, sizeof(buf) - 24), 24, "#%zu", i + 1);
    }
    return err_set(e, ERR_INVALID, "", "line %zu: two allocations are named \"%s\"", a->line, buf);
}

/* The tensor's shape, its op_name, source and tag; a raw buffer of the report's Size when
 * the shape is missing or unreadable (*unread counts those). */
static int fill_tensor(struct model *m, struct model_tensor *t, const struct xla_oom_alloc *a,
                       size_t *unread, struct err *e)
{
    struct shape sh;
    struct err se;
    char src[MODEL_MAX_NAME];

    t->kind = kind_of(a->type);
    t->live_given = true;
    t->live_start = 0;
    t->live_end = 1;
    if (a->shape != NULL && shape_parse(a->shape, strlen(a->shape), &sh, &se) == ERR_OK) {
        if (model_tensor_set_shape(m, t, &sh) != ERR_OK)
            return err_set(e, ERR_NOMEM, "", "out of memory");
    } else {
        t->raw = true;
        t->logical_bytes = t->padded_bytes = a->size.bytes;
        (*unread)++;
    }
    if (a->op_name != NULL &&
        (t->op_name = model_strdup(m, a->op_name, strlen(a->op_name))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    if (a->source_file != NULL) {
        int n = a->source_line >= 0 ? snprintf(src, sizeof(src), "%s:%lld", a->source_file,
                                               (long long)a->source_line)
                                    : snprintf(src, sizeof(src), "%s", a->source_file);
        if ((t->source =
                 model_strdup(m, src, n < (int)sizeof(src) ? (size_t)n : sizeof(src) - 1)) == NULL)
            return err_set(e, ERR_NOMEM, "", "out of memory");
    }
    if (a->type != NULL) {
        if ((t->tags = model_alloc(m, sizeof(*t->tags))) == NULL ||
            (t->tags[0] = model_strdup(m, a->type, strlen(a->type))) == NULL)
            return err_set(e, ERR_NOMEM, "", "out of memory");
        t->ntags = 1;
    }
    return ERR_OK;
}

/* The capacity XLA reported for HBM (the "of C" of "Used U of C hbm", or the early abort's
 * "has C available") as the model's own option: the plan's verdict is then against the
 * device the report came from (a --capacity still wins). */
static int report_capacity(const struct xla_oom *r, struct model *m, struct err *e)
{
    struct json_object *o, *v;

    if (strcmp(r->space, "hbm") != 0 || r->capacity.text[0] == '\0' || r->capacity.bytes == 0 ||
        r->capacity.bytes > INT64_MAX)
        return ERR_OK;
    if ((o = json_object_new_object()) == NULL ||
        (v = json_object_new_int64((int64_t)r->capacity.bytes)) == NULL) {
        json_object_put(o);
        return err_set(e, ERR_NOMEM, "", "out of memory");
    }
    if (json_object_object_add(o, "capacity", v) != 0) {
        json_object_put(v);
        json_object_put(o);
        return err_set(e, ERR_NOMEM, "", "out of memory");
    }
    m->options_json = o;
    return ERR_OK;
}

/* What the report says of the whole program, beside the allocations it lists. */
static void warn_program(const struct xla_oom *r, struct model *m)
{
    if (r->used.text[0] != '\0' && r->capacity.text[0] != '\0')
        model_warn(m,
                   "XLA's report: the program needed %s of %s %s; the %zu allocations it lists "
                   "are its largest, not all of it, so a plan of them alone can fit where the "
                   "program did not",
                   r->used.text, r->capacity.text, r->space, r->nallocs);
}

static int build(const struct xla_oom *r, struct model *m, struct err *e)
{
    struct names tab = {0};
    size_t unread = 0;
    int rc;

    if (r->nallocs == 0)
        return err_set(e, ERR_INVALID, "",
                       "line %zu: the report lists no allocations, only XLA's totals: attach it "
                       "to its program (--xla-report, the form field xla_report)",
                       r->header_line);
    if (model_init(m, "xla-oom", r->nallocs) != ERR_OK ||
        names_init(&tab, r->nallocs, tensor_name, m) != ERR_OK) {
        names_free(&tab);
        return err_set(e, ERR_NOMEM, "", "out of memory for %zu allocations", r->nallocs);
    }
    m->name = "xla-oom";
    for (size_t i = 0; i < r->nallocs; i++)
        if ((rc = name_tensor(m, &tab, i, &r->allocs[i], e)) != ERR_OK ||
            (rc = fill_tensor(m, &m->tensors[i], &r->allocs[i], &unread, e)) != ERR_OK) {
            names_free(&tab);
            return rc;
        }
    names_free(&tab);
    if ((rc = report_capacity(r, m, e)) != ERR_OK)
        return rc;
    warn_program(r, m);
    model_warn(m,
               "an out-of-memory report lists XLA's largest allocations, not when each is live: "
               "the %zu are planned as live together",
               r->nallocs);
    if (strcmp(r->space, "hbm") != 0 && r->space[0] != '\0')
        model_warn(m,
                   "the report is of memory space %s: its allocations are planned against the "
                   "chip's HBM capacity",
                   r->space);
    if (unread > 0)
        model_warn(m,
                   "%zu allocations have no shape we read (cut off, or not an array): each is "
                   "a buffer of the report's Size",
                   unread);
    if (r->cut > 0)
        model_warn(m, "%zu allocations are cut off in the paste: their missing lines are unknown",
                   r->cut);
    return ERR_OK;
}

int xla_oom_import(const char *s, size_t len, struct import_ctx *c, struct model *m, struct err *e)
{
    struct xla_oom r;
    int rc;

    memset(m, 0, sizeof(*m));
    if ((rc = xla_oom_parse(s, len, c->limits->max_tensors, &r, e)) != ERR_OK)
        return rc;
    if ((rc = build(&r, m, e)) != ERR_OK) {
        model_free(m);
        xla_oom_free(&r);
        return rc;
    }
    if (c->oom != NULL) {
        *c->oom = r; /* ownership moves to the caller */
        c->oom_kept = true;
    } else {
        xla_oom_free(&r);
    }
    return ERR_OK;
}
