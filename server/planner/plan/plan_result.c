/*
 * plan_result.c - the result document (server/planner/RESULT.md#fields,
 * static/schema/result.schema.json), one writer per top-level section in document order:
 * model, chip, summary, tensors, suggestions, packing (with its timeline and peak), warnings.
 *
 * The writers only read the prepared plan and its packing (plan_int.h); the chip record
 * itself is chip_json_write's, the plan adding its assumptions.
 */
#include "planner/plan/plan_int.h"

#include <stdio.h>
#include <string.h>

#include "planner/base/jsonr.h"
#include "planner/jsonw.h"
#include "planner/jsonw_blocks.h"
#include "planner/layout.h"

static double ratio(uint64_t a, uint64_t b)
{
    return b == 0 ? 1.0 : (double)a / (double)b;
}

/* "capacity_bytes", null when the plan has none. */
static void write_capacity(struct jsonw *w, const struct plan_ctx *c)
{
    if (c->capacity != 0)
        jsonw_u64(w, "capacity_bytes", c->capacity);
    else
        jsonw_null(w, "capacity_bytes");
}

/* The buffers in memory spaces other than HBM, one entry per space that has any, as w's
 * member key (server/planner/RESULT.md#the-program-section). */
static void write_spaces(struct jsonw *w, const char *key, const struct model_program *p)
{
    static const int spaces[MODEL_SPACE_COUNT] = {5, 1, -1}; /* S(n); -1: several */

    jsonw_arr_begin(w, key);
    for (int k = 0; k < MODEL_SPACE_COUNT; k++) {
        const struct model_space_use *u = &p->spaces[k];
        if (u->buffers == 0)
            continue;
        jsonw_obj_begin(w, NULL);
        jsonw_str(w, "space", model_space_name((enum model_space)k));
        if (spaces[k] >= 0)
            jsonw_i64(w, "memory_space", spaces[k]);
        else
            jsonw_null(w, "memory_space");
        jsonw_u64(w, "buffers", u->buffers);
        jsonw_u64(w, "bytes", u->bytes);
        jsonw_u64(w, "peak_bytes", u->peak_bytes);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
}

/* An XLA program's "program" section (server/planner/RESULT.md#the-program-section); for
 * another input with tensors in host memory (a JSON model's "memory_space": "host"), its
 * "memory_spaces" alone; nothing else. */
static void write_program(struct jsonw *w, const struct model_program *p)
{
    if (p->stage == MODEL_STAGE_NONE) {
        if (p->spaces[MODEL_SPACE_HOST].buffers > 0)
            write_spaces(w, "memory_spaces", p);
        return;
    }
    jsonw_obj_begin(w, "program");
    jsonw_str(w, "stage", model_stage_name(p->stage));
    jsonw_arr_begin(w, "stage_evidence");
    for (size_t k = 0; k < p->nstage_evidence; k++)
        jsonw_str(w, NULL, p->stage_evidence[k]);
    jsonw_arr_end(w);
    jsonw_bool(w, "partitioned", p->partitioned);
    jsonw_arr_begin(w, "partition_evidence");
    for (size_t k = 0; k < p->npartition_evidence; k++)
        jsonw_str(w, NULL, p->partition_evidence[k]);
    jsonw_arr_end(w);
    write_spaces(w, "memory_spaces", p);
    jsonw_obj_end(w);
}

static void write_model(struct jsonw *w, const struct plan_ctx *c)
{
    jsonw_obj_begin(w, "model");
    jsonw_str(w, "name", c->name);
    jsonw_str(w, "source_format", c->m.source_format);
    if (c->m.naxes > 0) {
        jsonw_obj_begin(w, "mesh");
        for (size_t a = 0; a < c->m.naxes; a++)
            jsonw_i64(w, c->m.axis_names[a], c->m.axis_sizes[a]);
        jsonw_obj_end(w);
    } else {
        jsonw_null(w, "mesh");
    }
    jsonw_u64(w, "devices", c->m.devices);
    jsonw_i64(w, "steps", c->m.nsteps);
    jsonw_u64(w, "ops", c->m.nops);
    jsonw_obj_end(w);
    write_program(w, &c->m.program);
    if (c->m.recipe_json != NULL)
        jsonr_write(w, "recipe", c->m.recipe_json);
}

static void write_reading(struct jsonw *w, const char *key, const struct model_reading *r)
{
    jsonw_obj_begin(w, key);
    jsonw_u64(w, "peak_bytes", r->peak_bytes);
    jsonw_u64(w, "buffers", r->buffers);
    jsonw_i64(w, "steps", r->steps);
    jsonw_obj_end(w);
}

/* A before-optimization program's two readings (server/planner/RESULT.md#the-compile-estimate). */
static void write_compile(struct jsonw *w, const struct plan_ctx *c)
{
    static const char *const sched[MODEL_SCHED_COUNT] = {"list", "dfs", "post-order", "text"};
    const struct model_compile *mc = &c->m.compile;

    if (!mc->present)
        return;
    jsonw_obj_begin(w, "compile");
    jsonw_str(w, "chosen", mc->written_chosen ? "written" : "compiler");
    write_reading(w, "compiler", &mc->estimate);
    write_reading(w, "written", &mc->written);
    jsonw_obj_begin(w, "fused");
    jsonw_u64(w, "total", mc->fused_loop + mc->fused_input + mc->fused_output);
    jsonw_u64(w, "loop", mc->fused_loop);
    jsonw_u64(w, "input", mc->fused_input);
    jsonw_u64(w, "output", mc->fused_output);
    jsonw_obj_end(w);
    jsonw_u64(w, "relaid_out", mc->relaid);
    jsonw_obj_begin(w, "schedule");
    jsonw_str(w, "chosen", sched[mc->schedule]);
    jsonw_obj_begin(w, "peaks");
    for (int k = 0; k < MODEL_SCHED_COUNT; k++)
        if (mc->schedule_peak[k] != UINT64_MAX)
            jsonw_u64(w, sched[k], mc->schedule_peak[k]);
    jsonw_obj_end(w);
    jsonw_obj_end(w);
    jsonw_arr_begin(w, "assumptions");
    jsonw_str(w, NULL,
              "layouts: the chip's default rules, size-1 dims most major inside the "
              "program (the written minor-to-major is XLA's default, not its choice)");
    jsonw_str(w, NULL,
              "fusion: XLA's public fusion rules (loop, input, output); a fused value "
              "holds no buffer");
    jsonw_str(w, NULL,
              mc->text_order ? "order: the text order (--order text)"
                             : "order: XLA's memory scheduler (the least of list, DFS "
                               "and post-order)");
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

/* One line per distinct assumed layout rule (at most 16), with how many tensors use it. */
static void write_assumed_layouts(struct jsonw *w, const struct plan_ctx *c)
{
    const struct model_tensor *rules[16];
    size_t counts[16], nrules = 0, other = 0;
    char line[ERR_MSG_MAX];

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
                 rules[k]->layout_rule, counts[k], c->chip->name,
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

/* The chip record (chip_json_write) and the assumptions this plan makes about it. */
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
    if (c->assumed_layouts > 0)
        write_assumed_layouts(w, c);
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
    plan_kernels_assumptions(w, c);
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

static void write_summary(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct pack_result *best = plan_chosen(pk);
    uint64_t peak = best != NULL ? best->peak : 0;
    bool fits = c->capacity == 0 || peak <= c->capacity;
    struct plan_verdict v;

    jsonw_obj_begin(w, "summary");
    jsonw_u64(w, "tensors", c->m.n);
    jsonw_u64(w, "logical_bytes", c->logical);
    jsonw_u64(w, "padded_bytes", c->padded);
    jsonw_u64(w, "padding_bytes", c->padded - c->logical);
    jsonw_double(w, "expansion", ratio(c->padded, c->logical));
    write_capacity(w, c);
    plan_write_peak_figures(w, peak, pk->lb);
    /* fits: HBM and every kernel's VMEM; headroom and overflow are HBM's */
    plan_verdict_compose(c, peak, &v);
    jsonw_bool(w, "fits", v.fits);
    jsonw_bool(w, "hbm_fits", fits);
    jsonw_u64(w, "kernels", c->ks.n);
    jsonw_u64(w, "kernels_over_limit", c->kernels_over);
    if (c->capacity != 0) {
        jsonw_u64(w, "headroom_bytes", fits ? c->capacity - peak : 0);
        jsonw_u64(w, "overflow_bytes", fits ? 0 : peak - c->capacity);
    } else {
        jsonw_null(w, "headroom_bytes");
        jsonw_null(w, "overflow_bytes");
    }
    if (c->has_budget) {
        jsonw_u64(w, "budget_bytes", c->budget_bytes);
        jsonw_bool(w, "within_budget", v.within_budget);
    } else {
        jsonw_null(w, "budget_bytes");
        jsonw_null(w, "within_budget");
    }
    jsonw_str(w, "strategy", best != NULL ? best->strategy : NULL);
    jsonw_obj_begin(w, "by_kind");
    for (int k = 0; k < TENSOR_KIND_COUNT; k++) {
        if (c->count[k] == 0)
            continue;
        jsonw_obj_begin(w, tensor_kind_name((enum tensor_kind)k));
        jsonw_u64(w, "count", c->count[k]);
        jsonw_u64(w, "logical_bytes", c->kind_logical[k]);
        jsonw_u64(w, "padded_bytes", c->kind_padded[k]);
        jsonw_obj_end(w);
    }
    jsonw_obj_end(w);
    jsonw_u64(w, "assumed_layouts", c->assumed_layouts);
    plan_verdict_write(w, &v);
    jsonw_obj_end(w);
}

/* The mesh axes sharding each dim: null, or the list of axis names. */
static void write_sharding(struct jsonw *w, const struct plan_ctx *c, const struct model_tensor *t)
{
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

/* A tensor's dtype, dims, sharding and resolved layout (raw CSV buffers have none). */
static void write_tensor_shape(struct jsonw *w, const struct plan_ctx *c,
                               const struct model_tensor *t)
{
    char text[SHAPE_MAX_TEXT];
    struct layout_info info;
    struct shape sh;
    struct err ignore;

    model_tensor_shape(t, &sh);
    jsonw_str(w, "dtype", dtype_name(sh.dtype));
    jsonw_arr_begin(w, "dims");
    for (unsigned d = 0; d < sh.rank; d++)
        jsonw_i64(w, NULL, sh.dims[d]);
    jsonw_arr_end(w);
    if (t->sharded)
        write_sharding(w, c, t);
    if (shape_print(&sh, text, sizeof(text)) < 0)
        text[0] = '\0';
    jsonw_str(w, "shape", text);
    jsonw_arr_begin(w, "minor_to_major");
    for (unsigned d = 0; d < sh.rank; d++)
        jsonw_u64(w, NULL, sh.minor_to_major[d]);
    jsonw_arr_end(w);
    jsonw_str(w, "tiles", suggest_tiles_text(&sh, text, sizeof(text)));
    /* layout_size succeeded on this shape in model_resolve */
    jsonw_arr_begin(w, "padded_dims");
    if (layout_size(&sh, &info, &ignore) == ERR_OK)
        for (unsigned d = 0; d < sh.rank; d++)
            jsonw_i64(w, NULL, info.padded_dims[d]);
    jsonw_arr_end(w);
}

/* "in_place": the comma-joined names (HLO names have no comma) as an array. */
static void write_in_place(struct jsonw *w, const char *names)
{
    char name[MODEL_MAX_NAME + 64];

    jsonw_arr_begin(w, "in_place");
    while (*names != '\0') {
        size_t n = strcspn(names, ",");
        snprintf(name, sizeof(name), "%.*s", (int)n, names);
        jsonw_str(w, NULL, name);
        names += n + (names[n] == ',');
    }
    jsonw_arr_end(w);
}

static void write_tensor(struct jsonw *w, const struct plan_ctx *c, size_t i, uint64_t offset)
{
    const struct model_tensor *t = &c->m.tensors[i];

    jsonw_obj_begin(w, NULL);
    jsonw_u64(w, "id", i);
    jsonw_str(w, "name", t->name);
    jsonw_str(w, "kind", tensor_kind_name(t->kind));
    if (t->raw)
        jsonw_null(w, "dtype");
    else
        write_tensor_shape(w, c, t);
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
    if (plan_xla_offset(c, i, &offset))
        jsonw_u64(w, "xla_offset", offset);
    if (t->ntags > 0) {
        jsonw_arr_begin(w, "tags");
        for (unsigned k = 0; k < t->ntags; k++)
            jsonw_str(w, NULL, t->tags[k]);
        jsonw_arr_end(w);
    }
    if (t->donated)
        jsonw_bool(w, "donated", true);
    if (t->op_name != NULL)
        jsonw_str(w, "op_name", t->op_name);
    if (t->source != NULL)
        jsonw_str(w, "source", t->source);
    if (t->in_place != NULL)
        write_in_place(w, t->in_place);
    jsonw_obj_end(w);
}

uint64_t plan_tensor_offset(const struct plan_ctx *c, const uint64_t *offsets, size_t i, size_t *b)
{
    if (*b < c->nbufs && c->buf_tensor[*b] == i)
        return offsets != NULL ? offsets[(*b)++] : 0;
    return 0;
}

/* Tensors per block of the tensors array, which two threads write (jsonw_blocks.h): a
 * block of the bench model's tensors is about 150 KB of text. */
#define PLAN_TENSOR_BLOCK 256

struct tensors_ctx {
    const struct plan_ctx *c;
    const uint64_t *offsets; /* of the chosen packing, or NULL */
};

/* A jsonw_block_fn: tensors [lo, hi), starting at the first packed buffer of lo or after
 * (buf_tensor rises with the tensor ids). */
static void write_tensor_block(struct jsonw *w, const void *arg, size_t lo, size_t hi)
{
    const struct tensors_ctx *tc = arg;
    const struct plan_ctx *c = tc->c;
    size_t b = 0, end = c->nbufs;

    while (b < end) {
        size_t mid = b + (end - b) / 2;
        if (c->buf_tensor[mid] < lo)
            b = mid + 1;
        else
            end = mid;
    }
    for (size_t i = lo; i < hi; i++)
        write_tensor(w, c, i, plan_tensor_offset(c, tc->offsets, i, &b));
}

static void write_tensors(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct pack_result *best = plan_chosen(pk);
    struct tensors_ctx tc = {c, best != NULL ? best->offsets : NULL};

    jsonw_arr_begin(w, "tensors");
    jsonw_blocks_write(w, c->m.n, PLAN_TENSOR_BLOCK, write_tensor_block, &tc, plan_side_worth(c));
    jsonw_arr_end(w);
}

static void write_suggestions(struct jsonw *w, const struct plan_ctx *c,
                              const struct suggest_fix *sg, size_t nsg)
{
    jsonw_arr_begin(w, "suggestions");
    for (size_t q = 0; q < nsg; q++) {
        const struct suggest_fix *s = &sg[q];
        char text[ERR_MSG_MAX + 128], total[32];
        jsonw_obj_begin(w, NULL);
        jsonw_u64(w, "tensor", s->tensor);
        jsonw_str(w, "name", c->m.tensors[s->tensor].name);
        jsonw_str(w, "action", s->s.action);
        jsonw_str(w, "suggested_shape", s->s.suggested_shape);
        jsonw_u64(w, "padded_bytes", s->s.padded_bytes);
        jsonw_u64(w, "suggested_padded_bytes", s->s.suggested_padded_bytes);
        jsonw_u64(w, "saves_bytes", s->s.saves_bytes);
        jsonw_u64(w, "same_shape_tensors", s->same_shape);
        jsonw_u64(w, "total_saves_bytes", s->total_saves);
        if (s->same_shape > 1)
            snprintf(text, sizeof(text), "%s per tensor; %zu tensors have this shape: %s in total",
                     s->s.text, s->same_shape,
                     layout_format_bytes(s->total_saves, total, sizeof(total)));
        else
            snprintf(text, sizeof(text), "%s", s->s.text);
        jsonw_str(w, "text", text);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
}

/* Live bytes, heap top and largest gap per step of the chosen packing; beyond
 * PLAN_TIMELINE_MAX steps each point is the maximum of a group of steps. */
static void write_timeline(struct jsonw *w, const struct plan_packing *pk)
{
    const struct pack_metrics *mt = &pk->mt;
    size_t n = pk->have_metrics ? mt->nsteps : 0;
    jsonw_obj_begin(w, "timeline");
    plan_write_steps(w, mt->steps, n);
    plan_write_series(w, "live_bytes", mt->live_bytes, n);
    plan_write_series(w, "heap_bytes", mt->heap_top, n);
    plan_write_series(w, "largest_gap_bytes", mt->largest_gap, n);
    jsonw_bool(w, "downsampled", n > PLAN_TIMELINE_MAX);
    jsonw_obj_end(w);
}

/* The step of the chosen packing's peak and the tensors live there. */
static void write_peak(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct pack_metrics *mt = &pk->mt;
    const struct pack_result *best = plan_chosen(pk);

    jsonw_obj_begin(w, "peak");
    if (best != NULL && pk->have_metrics && mt->nsteps > 0) {
        jsonw_i64(w, "step", mt->steps[mt->peak_segment]);
        jsonw_u64(w, "bytes", best->peak);
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
}

static void write_strategy(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk,
                           size_t k)
{
    const struct plan_strat_run *sr = &pk->runs[k];

    jsonw_obj_begin(w, NULL);
    jsonw_str(w, "name", c->strategies[k]);
    if (sr->rc == ERR_OK) {
        plan_write_peak_figures(w, sr->r.peak, pk->lb);
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

static void write_packing(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    const struct pack_result *best = plan_chosen(pk);

    jsonw_obj_begin(w, "packing");
    jsonw_u64(w, "alignment", c->alignment);
    write_capacity(w, c);
    jsonw_arr_begin(w, "steps");
    jsonw_i64(w, NULL, 0);
    jsonw_i64(w, NULL, c->m.nsteps);
    jsonw_arr_end(w);
    jsonw_str(w, "chosen", best != NULL ? best->strategy : NULL);
    jsonw_u64(w, "buffers", c->nbufs);
    jsonw_arr_begin(w, "strategies");
    for (size_t k = 0; k < (c->nbufs > 0 ? c->nstrategies : 0); k++)
        write_strategy(w, c, pk, k);
    jsonw_arr_end(w);
    write_timeline(w, pk);
    write_peak(w, c, pk);
    plan_runtime_write(w, c, pk);
    plan_xla_write(w, c, pk);
    plan_report_write(w, c, pk);
    jsonw_obj_end(w);
}

/* The model's warnings, then the plan's own: unpacked tensors, failed strategies. */
static void write_warnings(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk)
{
    jsonw_arr_begin(w, "warnings");
    for (size_t k = 0; k < c->m.warnings.n; k++)
        jsonw_str(w, NULL, c->m.warnings.lines[k]);
    if (c->m.warnings.dropped > 0) {
        char line[96];
        snprintf(line, sizeof(line), "%zu more warnings not shown", c->m.warnings.dropped);
        jsonw_str(w, NULL, line);
    }
    if (c->nbufs < c->m.n) {
        char line[160];
        snprintf(line, sizeof(line), "%zu tensors hold zero bytes and are not packed (offset 0)",
                 c->m.n - c->nbufs);
        jsonw_str(w, NULL, line);
    }
    for (size_t k = 0; k < (c->nbufs > 0 ? c->nstrategies : 0); k++)
        if (pk->runs[k].rc != ERR_OK) {
            char line[ERR_MSG_MAX + 64];
            snprintf(line, sizeof(line), "strategy %s failed: %s", c->strategies[k],
                     pk->runs[k].error);
            jsonw_str(w, NULL, line);
        }
    jsonw_arr_end(w);
}

void plan_result_begin(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk,
                       bool with_tensors, const struct plan_sink *sink, size_t max_bytes)
{
    if (sink != NULL)
        jsonw_init_sink(w, sink->write, sink->ctx, sink->pretty);
    else
        jsonw_init(w, max_bytes);
    jsonw_obj_begin(w, NULL);
    jsonw_i64(w, "schema_version", TPUPLAN_SCHEMA_VERSION);
    write_model(w, c);
    write_compile(w, c);
    write_chip(w, c);
    write_summary(w, c, pk);
    if (with_tensors)
        write_tensors(w, c, pk);
}

int plan_result_end(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk,
                    const struct suggest_fix *sg, size_t nsg, const struct plan_sink *sink,
                    size_t max_bytes, char **json, size_t *json_len, struct err *e)
{
    int rc;

    plan_peak_write(w, pk);
    plan_advice_write(w, pk->advice);
    write_suggestions(w, c, sg, nsg);
    plan_kernels_write(w, c);
    write_packing(w, c, pk);
    write_warnings(w, c, pk);
    jsonw_obj_end(w);
    if ((rc = jsonw_finish(w, json, json_len)) == ERR_OK)
        return ERR_OK;
    if (sink != NULL && rc != ERR_NOMEM)
        return err_set(e, rc, "", "the result could not be written (after %zu bytes)", w->total);
    return err_set(e, rc, "",
                   rc == ERR_LIMIT ? "the result is larger than %zu bytes"
                                   : "out of memory writing the result (%zu)",
                   max_bytes);
}

int plan_result_write(const struct plan_ctx *c, const struct plan_packing *pk,
                      const struct suggest_fix *sg, size_t nsg, bool with_tensors,
                      const struct plan_sink *sink, size_t max_bytes, char **json, size_t *json_len,
                      struct err *e)
{
    struct jsonw w;

    plan_result_begin(&w, c, pk, with_tensors, sink, max_bytes);
    return plan_result_end(&w, c, pk, sg, nsg, sink, max_bytes, json, json_len, e);
}
