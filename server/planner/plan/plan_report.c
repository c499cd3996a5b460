/*
 * plan_report.c - XLA's own report beside the plan (plan_int.h; packing.xla_report in
 * server/planner/RESULT.md#fields): an out-of-memory report (xla_oom.h) or XLA's memory
 * figures (xla_memstats.h), their numbers written next to ours, never mixed into them.
 *
 * An out-of-memory report's allocations are checked one by one: the tensor made of it (the
 * input itself: tensor i is allocation i) or the tensor of the same name (a program planned
 * with the report attached) is sized by our layout rules, and its padded and logical bytes,
 * printed as XLA prints sizes (layout_format_bytes), must read as the report's Size and
 * Unpadded size. A mismatch is counted, flagged on the allocation and warned about, never
 * dropped: it is either our padding rule or a layout we do not model.
 */
#include "planner/plan/plan_int.h"

#include <stdio.h>
#include <string.h>

#include "planner/jsonw.h"
#include "planner/layout.h"
#include "planner/model/model_build.h"

bool plan_report_takes(const char *text, size_t len)
{
    return xla_oom_detect(text, len) || xla_memstats_detect(text, len);
}

void plan_report_free(struct plan_report *r)
{
    xla_oom_free(&r->oom);
    memset(r, 0, sizeof(*r));
}

int plan_report_attach(struct plan_ctx *c, const struct plan_opts *o, size_t max_allocs,
                       struct err *e)
{
    struct plan_report *r = &c->report;

    if (o->xla_report == NULL || !plan_report_takes(o->xla_report, o->xla_report_len))
        return ERR_OK;
    if (r->standalone)
        return err_set(e, ERR_INVALID, "xla_report",
                       "xla_report: the input is an out-of-memory report already; attach one "
                       "to its program");
    if (xla_oom_detect(o->xla_report, o->xla_report_len)) {
        if (xla_oom_parse(o->xla_report, o->xla_report_len, max_allocs, &r->oom, e) != ERR_OK)
            return err_prefix(e, "xla_report", "xla_report: ");
        r->have_oom = true;
        return ERR_OK;
    }
    if (xla_memstats_parse(o->xla_report, o->xla_report_len, &r->ms, e) != ERR_OK)
        return err_prefix(e, "xla_report", "xla_report: ");
    r->have_stats = true;
    return ERR_OK;
}

static int64_t alloc_tensor(const struct plan_ctx *c, const struct model_index *ix, size_t k);

void plan_report_check(struct plan_ctx *c)
{
    struct model_index ix = {0};
    struct err e;
    size_t bad = 0, shown = 0;
    char names[160];
    bool have_ix;

    if (!c->report.have_oom)
        return;
    have_ix = !c->report.standalone && model_index_build(&c->m, &ix, &e) == ERR_OK;
    names[0] = '\0';
    for (size_t k = 0; k < c->report.oom.nallocs; k++) {
        const struct xla_oom_alloc *a = &c->report.oom.allocs[k];
        int64_t t = alloc_tensor(c, have_ix ? &ix : NULL, k);
        if (t < 0 || c->m.tensors[t].raw)
            continue;
        if (xla_oom_size_matches(&a->size, c->m.tensors[t].padded_bytes) &&
            (a->unpadded.text[0] == '\0' ||
             xla_oom_size_matches(&a->unpadded, c->m.tensors[t].logical_bytes)))
            continue;
        if (bad++ < 3) {
            size_t n = strlen(names);
            snprintf(names + n, sizeof(names) - n, "%s%.40s", shown++ ? ", " : "",
                     c->m.tensors[t].name);
        }
    }
    model_index_free(&ix);
    if (bad > 0)
        model_warn(&c->m,
                   "%zu allocations of XLA's report are not the size our layout rules give "
                   "(%s%s): see packing.xla_report",
                   bad, names, bad > 3 ? ", ..." : "");
}

/* A size as {bytes, text}, null when the report does not print it. */
static void write_size(struct jsonw *w, const char *key, const struct xla_oom_size *s)
{
    if (s->text[0] == '\0') {
        jsonw_null(w, key);
        return;
    }
    jsonw_obj_begin(w, key);
    jsonw_u64(w, "bytes", s->bytes);
    jsonw_str(w, "text", s->text);
    jsonw_obj_end(w);
}

static void write_opt_str(struct jsonw *w, const char *key, const char *s)
{
    if (s != NULL && s[0] != '\0')
        jsonw_str(w, key, s);
    else
        jsonw_null(w, key);
}

/* Our peak beside XLA's figures: the chosen packing's, or every tensor live at once. */
static void write_ours(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct pack_result *best = plan_chosen(pk);

    jsonw_obj_begin(w, "ours");
    jsonw_u64(w, "peak_bytes", best != NULL ? best->peak : c->padded);
    jsonw_u64(w, "padded_bytes", c->padded);
    jsonw_u64(w, "logical_bytes", c->logical);
    jsonw_obj_end(w);
}

/* The tensor each allocation is: standalone, its own; else the tensor of its name. */
static int64_t alloc_tensor(const struct plan_ctx *c, const struct model_index *ix, size_t k)
{
    const struct xla_oom_alloc *a = &c->report.oom.allocs[k];

    if (c->report.standalone)
        return k < c->m.n ? (int64_t)k : -1;
    if (a->name == NULL || ix == NULL)
        return -1;
    return model_index_find(ix, a->name, strlen(a->name));
}

/* What checking one allocation found. */
struct alloc_check {
    int64_t tensor;
    bool sized; /* the tensor has a shape of ours (not a raw buffer) */
    bool size_ok, unpadded_ok;
    uint64_t default_padded; /* the same dims with our default layout; 0 when not sized */
    const char *default_rule;
    bool fix;
    struct suggestion sg;
};

static void check_alloc(const struct plan_ctx *c, const struct model_index *ix, size_t k,
                        struct alloc_check *out)
{
    const struct xla_oom_alloc *a = &c->report.oom.allocs[k];
    struct shape sh;
    struct layout_info li;
    struct err e;

    memset(out, 0, sizeof(*out));
    out->tensor = alloc_tensor(c, ix, k);
    if (out->tensor < 0)
        return;
    const struct model_tensor *t = &c->m.tensors[out->tensor];
    out->size_ok = xla_oom_size_matches(&a->size, t->padded_bytes);
    out->unpadded_ok = xla_oom_size_matches(&a->unpadded, t->logical_bytes);
    if (t->raw)
        return;
    out->sized = true;
    model_tensor_shape(t, &sh);
    out->fix = suggest_tensor(&sh, c->chip, &out->sg, &e) == 1;
    sh.has_layout = false;
    sh.ntiles = 0;
    sh.element_size_bits = 0;
    if (layout_resolve(&sh, c->chip, NULL, &li, &e) == ERR_OK) {
        out->default_padded = li.padded_bytes;
        out->default_rule = li.rule;
    }
}

static void write_check(struct jsonw *w, const struct plan_ctx *c, const struct xla_oom_alloc *a,
                        const struct alloc_check *k)
{
    const struct model_tensor *t = k->tensor >= 0 ? &c->m.tensors[k->tensor] : NULL;
    char buf[XLA_OOM_TEXT_MAX];

    if (t == NULL) {
        jsonw_null(w, "tensor");
        jsonw_null(w, "ours");
        jsonw_null(w, "size_matches");
        jsonw_null(w, "unpadded_matches");
        jsonw_null(w, "fix");
        return;
    }
    jsonw_i64(w, "tensor", k->tensor);
    jsonw_obj_begin(w, "ours");
    jsonw_u64(w, "padded_bytes", t->padded_bytes);
    jsonw_str(w, "padded_text", layout_format_bytes(t->padded_bytes, buf, sizeof(buf)));
    jsonw_u64(w, "logical_bytes", t->logical_bytes);
    jsonw_str(w, "logical_text", layout_format_bytes(t->logical_bytes, buf, sizeof(buf)));
    write_opt_str(w, "layout_source", t->raw ? NULL : t->layout_rule);
    if (k->sized && k->default_rule != NULL) {
        jsonw_u64(w, "default_padded_bytes", k->default_padded);
        jsonw_str(w, "default_layout_source", k->default_rule);
    } else {
        jsonw_null(w, "default_padded_bytes");
        jsonw_null(w, "default_layout_source");
    }
    jsonw_obj_end(w);
    if (k->sized)
        jsonw_bool(w, "size_matches", k->size_ok);
    else
        jsonw_null(w, "size_matches");
    if (k->sized && a->unpadded.text[0] != '\0')
        jsonw_bool(w, "unpadded_matches", k->unpadded_ok);
    else
        jsonw_null(w, "unpadded_matches");
    if (!k->fix) {
        jsonw_null(w, "fix");
        return;
    }
    jsonw_obj_begin(w, "fix");
    jsonw_str(w, "action", k->sg.action);
    jsonw_str(w, "suggested_shape", k->sg.suggested_shape);
    jsonw_u64(w, "saves_bytes", k->sg.saves_bytes);
    jsonw_str(w, "text", k->sg.text);
    jsonw_obj_end(w);
}

static void write_alloc(struct jsonw *w, const struct plan_ctx *c, const struct model_index *ix,
                        size_t k, size_t *mismatches)
{
    const struct xla_oom_alloc *a = &c->report.oom.allocs[k];
    struct alloc_check ck;
    char src[MODEL_MAX_NAME];

    check_alloc(c, ix, k, &ck);
    if (ck.sized && (!ck.size_ok || (a->unpadded.text[0] != '\0' && !ck.unpadded_ok)))
        (*mismatches)++;
    jsonw_obj_begin(w, NULL);
    jsonw_i64(w, "rank", a->rank);
    write_opt_str(w, "name", a->name);
    write_opt_str(w, "shape", a->shape);
    write_opt_str(w, "allocation_type", a->type);
    write_opt_str(w, "op_type", a->op_type);
    write_opt_str(w, "op_name", a->op_name);
    if (a->source_file != NULL && a->source_line >= 0)
        snprintf(src, sizeof(src), "%s:%lld", a->source_file, (long long)a->source_line);
    else
        snprintf(src, sizeof(src), "%s", a->source_file != NULL ? a->source_file : "");
    write_opt_str(w, "source", src);
    write_opt_str(w, "label", a->label);
    jsonw_bool(w, "cut", a->cut);
    jsonw_u64(w, "line", a->line);
    write_size(w, "size", &a->size);
    write_size(w, "unpadded", &a->unpadded);
    write_size(w, "extra", &a->extra);
    write_opt_str(w, "expansion", a->expansion);
    write_check(w, c, a, &ck);
    jsonw_obj_end(w);
}

/* The report's own figures: its header, usage, output and program parts. */
static void write_oom_figures(struct jsonw *w, const struct xla_oom *r)
{
    char code[16];

    snprintf(code, sizeof(code), "E%04d", r->code);
    write_opt_str(w, "code", r->code > 0 ? code : NULL);
    write_opt_str(w, "code_name", r->code_name);
    write_opt_str(w, "memory_space", r->space);
    jsonw_u64(w, "header_line", r->header_line);
    write_size(w, "used", &r->used);
    write_size(w, "capacity", &r->capacity);
    write_size(w, "exceeded", &r->exceeded);
    write_size(w, "tensorcore", &r->tensorcore);
    write_size(w, "sparsecore", &r->sparsecore);
    write_opt_str(w, "stack_for", r->stack_for);
    jsonw_obj_begin(w, "usage");
    write_size(w, "total", &r->total);
    write_size(w, "reserved", &r->reserved);
    write_size(w, "program", &r->program);
    write_size(w, "arguments", &r->arguments);
    jsonw_bool(w, "arguments_unknown", r->arguments_unknown);
    write_size(w, "output", &r->output);
    write_size(w, "output_shared", &r->output_shared);
    jsonw_bool(w, "output_unknown", r->output_unknown);
    jsonw_obj_end(w);
    jsonw_obj_begin(w, "program");
    write_size(w, "requirement", &r->requirement);
    write_size(w, "reserved", &r->program_reserved);
    write_size(w, "global", &r->global);
    write_size(w, "scoped", &r->scoped);
    write_size(w, "temp", &r->temp);
    write_size(w, "temp_unpadded", &r->temp_unpadded);
    write_size(w, "temp_padded", &r->temp_padded);
    write_size(w, "fragmentation", &r->fragmentation);
    write_opt_str(w, "temp_utilization", r->temp_utilization);
    jsonw_obj_end(w);
}

static void write_oom(struct jsonw *w, const struct plan_ctx *c)
{
    const struct xla_oom *r = &c->report.oom;
    struct model_index ix = {0};
    struct err e;
    size_t mismatches = 0, matched = 0;
    bool have_ix = !c->report.standalone && model_index_build(&c->m, &ix, &e) == ERR_OK;

    jsonw_str(w, "form", xla_oom_form_name(r->form));
    write_oom_figures(w, r);
    jsonw_arr_begin(w, "allocations");
    for (size_t k = 0; k < r->nallocs; k++) {
        write_alloc(w, c, have_ix ? &ix : NULL, k, &mismatches);
        matched += alloc_tensor(c, have_ix ? &ix : NULL, k) >= 0;
    }
    jsonw_arr_end(w);
    jsonw_u64(w, "allocations_listed", r->nallocs);
    jsonw_u64(w, "allocations_matched", matched);
    jsonw_u64(w, "mismatches", mismatches);
    model_index_free(&ix);
}

static void write_stats(struct jsonw *w, const struct xla_memstats *ms)
{
    uint64_t total = 0;

    jsonw_str(w, "form", ms->form == XLA_MS_COMPILED ? "compiled-memory-stats" : "maxtext");
    jsonw_u64(w, "line", ms->line);
    jsonw_obj_begin(w, "figures");
    for (size_t f = 0; f < XLA_MS_COUNT; f++)
        if (ms->have[f])
            jsonw_u64(w, xla_memstats_field_name((enum xla_memstats_field)f), ms->bytes[f]);
    jsonw_obj_end(w);
    jsonw_u64(w, "precision_bytes", ms->precision);
    /* XLA's device total: MaxText prints it; else pjrt_executable.h's "generated code +
     * argument + output - alias + temp" */
    if (ms->have[XLA_MS_TOTAL]) {
        total = ms->bytes[XLA_MS_TOTAL];
    } else {
        static const enum xla_memstats_field sum[] = {XLA_MS_GENERATED_CODE, XLA_MS_ARGUMENT,
                                                      XLA_MS_OUTPUT, XLA_MS_TEMP};
        for (size_t k = 0; k < sizeof(sum) / sizeof(sum[0]); k++)
            total += ms->have[sum[k]] ? ms->bytes[sum[k]] : 0;
        if (ms->have[XLA_MS_ALIAS])
            total = total >= ms->bytes[XLA_MS_ALIAS] ? total - ms->bytes[XLA_MS_ALIAS] : 0;
    }
    jsonw_u64(w, "xla_total_bytes", total);
}

void plan_report_write(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct plan_report *r = &c->report;

    if (!r->have_oom && !r->have_stats) {
        jsonw_null(w, "xla_report");
        return;
    }
    jsonw_obj_begin(w, "xla_report");
    jsonw_str(w, "label", "XLA's own report, as pasted: its figures beside ours");
    jsonw_str(w, "source", r->standalone ? "standalone" : "with-model");
    if (r->have_oom)
        write_oom(w, c);
    else
        write_stats(w, &r->ms);
    write_ours(w, c, pk);
    jsonw_obj_end(w);
}
