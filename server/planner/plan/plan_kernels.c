/*
 * plan_kernels.c - the plan's Pallas kernels (kernel.h): checked when the plan is
 * prepared (every figure, the fit), written into the result's "kernels" section
 * (server/planner/RESULT.md#fields) with their suggestions, and the assumptions they rest on.
 *
 * A plan keeps no per-kernel results: the writer plans each kernel again into one
 * scratch row array (c->kops), so 10,000 kernels cost no more memory than one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/jsonw.h"
#include "planner/kernel.h"
#include "planner/layout.h"
#include "planner/plan/plan_int.h"

int plan_kernels_check(struct plan_ctx *c, struct err *e)
{
    struct kernel_plan p;
    size_t most = 1;
    int rc;

    c->kernels_over = 0;
    if (c->ks.n == 0)
        return ERR_OK;
    if (c->chip == NULL)
        return err_set(e, ERR_INVALID, "kernels", "kernels: planning VMEM needs a chip");
    for (size_t i = 0; i < c->ks.n; i++)
        most = c->ks.k[i].nops > most ? c->ks.k[i].nops : most;
    if ((c->kops = calloc(most, sizeof(*c->kops))) == NULL)
        return err_set(e, ERR_NOMEM, "kernels", "kernels: out of memory");
    for (size_t i = 0; i < c->ks.n; i++) {
        if ((rc = kernel_plan(&c->ks.k[i], i, c->chip, c->kops, &p, e)) != ERR_OK)
            return rc;
        if (!p.fits && c->kernels_over++ == 0) {
            uint64_t cap = p.vmem_limit < p.physical_vmem ? p.vmem_limit : p.physical_vmem;
            c->kernel_over = (struct plan_kernel_over){i, p.vmem_bytes + p.margin_bytes, cap};
        }
    }
    return ERR_OK;
}

void plan_kernels_free(struct plan_ctx *c)
{
    kernel_set_free(&c->ks);
    free(c->kops);
    c->kops = NULL;
}

size_t plan_kernels_oom(const struct kernel_spec *k, const struct kernel_plan *p, char *buf,
                        size_t cap)
{
    char used[32], lim[32], over[32];
    uint64_t need = p->vmem_bytes + p->margin_bytes; /* checked in kernel_plan */
    int n;

    if (p->fits) {
        buf[0] = '\0';
        return 0;
    }
    if (p->over_physical && p->vmem_limit >= p->physical_vmem)
        /* the total-capacity form (jax #38988, server/planner/SOURCES.md#vmem-errors) */
        n = snprintf(buf, cap,
                     "RESOURCE_EXHAUSTED: kernel \"%.200s\": Ran out of memory in memory space "
                     "vmem. Used %s of %s vmem. Exceeded vmem capacity by %s.",
                     k->name, layout_format_bytes(need, used, sizeof(used)),
                     layout_format_bytes(p->physical_vmem, lim, sizeof(lim)),
                     layout_format_bytes(need - p->physical_vmem, over, sizeof(over)));
    else
        /* E1001 CompileTimeScopedVmemOom (pytorch/xla #6611, tpu-inference #3407, 3d) */
        n = snprintf(buf, cap,
                     "E1001 CompileTimeScopedVmemOom: kernel \"%.200s\": Ran out of memory in "
                     "memory space vmem. Scoped allocation with size %s and limit %s exceeded "
                     "scoped vmem limit by %s.",
                     k->name, layout_format_bytes(need, used, sizeof(used)),
                     layout_format_bytes(p->vmem_limit, lim, sizeof(lim)),
                     layout_format_bytes(need - p->vmem_limit, over, sizeof(over)));
    return n < 0 ? 0 : (size_t)n;
}

static void write_dims(struct jsonw *w, const char *key, const int64_t *d, unsigned n)
{
    jsonw_arr_begin(w, key);
    for (unsigned i = 0; i < n; i++)
        jsonw_i64(w, NULL, d[i]);
    jsonw_arr_end(w);
}

static const char *buffers_source(enum kernel_buffers_src s)
{
    switch (s) {
    case KBUF_DEFAULT:
        return "default";
    case KBUF_GIVEN:
        return "given";
    case KBUF_WHOLE_ARRAY:
        return "whole_array";
    case KBUF_NONE:
        return "none";
    }
    return "default";
}

static void write_operand(struct jsonw *w, const struct kernel_operand *o,
                          const struct kernel_operand_plan *r)
{
    jsonw_obj_begin(w, NULL);
    jsonw_str(w, "name", o->name);
    jsonw_str(w, "role", kernel_role_name(o->role));
    jsonw_str(w, "memory_space", kernel_space_name(o->space));
    jsonw_str(w, "dtype", dtype_name(o->dtype));
    write_dims(w, "block", o->block, o->rank);
    if (o->has_array)
        write_dims(w, "array", o->array, o->rank);
    else
        jsonw_null(w, "array");
    if (o->has_index_map) {
        jsonw_arr_begin(w, "index_map");
        for (unsigned d = 0; d < o->rank; d++)
            if (o->index_map[d] < 0)
                jsonw_null(w, NULL);
            else
                jsonw_i64(w, NULL, o->index_map[d]);
        jsonw_arr_end(w);
    } else {
        jsonw_null(w, "index_map");
    }
    write_dims(w, "padded_block", r->padded, o->space == KSPACE_VMEM ? o->rank : 0);
    jsonw_u64(w, "block_bytes", r->block_bytes);
    jsonw_u64(w, "padded_block_bytes", r->padded_block_bytes);
    jsonw_u64(w, "buffers", r->buffers);
    jsonw_str(w, "buffers_source", buffers_source(r->buffers_src));
    jsonw_u64(w, "vmem_bytes", r->vmem_bytes);
    jsonw_u64(w, "padding_bytes",
              r->padded_block_bytes > r->block_bytes ? r->padded_block_bytes - r->block_bytes : 0);
    jsonw_u64(w, "waste_bytes", r->waste_bytes);
    jsonw_u64(w, "transfers", r->transfers);
    jsonw_u64(w, "hbm_bytes", r->hbm_bytes);
    jsonw_bool(w, "index_assumed", r->index_assumed);
    jsonw_obj_end(w);
}

/* "x (256, 512), o (256, 256)": every pipelined VMEM block with the tiles applied. */
static void blocks_text(const struct kernel_spec *k, const int64_t *tile, char *buf, size_t cap)
{
    size_t n = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < k->nops && n + 1 < cap; i++) {
        const struct kernel_operand *o = &k->ops[i];
        int64_t b[KERNEL_MAX_RANK];
        if (o->role == KERNEL_SCRATCH || o->space != KSPACE_VMEM)
            continue;
        kernel_block_with_tiles(o, tile, b);
        n += (size_t)snprintf(buf + n, cap - n, "%s%.40s (", n ? ", " : "", o->name);
        for (unsigned d = 0; d < o->rank && n + 1 < cap; d++)
            n += (size_t)snprintf(buf + n, cap - n, "%s%lld", d ? ", " : "", (long long)b[d]);
        if (n + 1 < cap)
            n += (size_t)snprintf(buf + n, cap - n, ")");
    }
}

static void write_block_suggestion(struct jsonw *w, const struct kernel_spec *k,
                                   const struct kernel_suggestion *s)
{
    char text[768], blocks[600], v[32], h[32];

    jsonw_str(w, "kind", "blocks");
    write_dims(w, "grid", s->grid, k->grid_rank);
    jsonw_arr_begin(w, "blocks");
    for (size_t i = 0; i < k->nops; i++) {
        const struct kernel_operand *o = &k->ops[i];
        int64_t b[KERNEL_MAX_RANK];
        if (o->role == KERNEL_SCRATCH || o->space != KSPACE_VMEM)
            continue;
        kernel_block_with_tiles(o, s->tile, b);
        jsonw_obj_begin(w, NULL);
        jsonw_str(w, "operand", o->name);
        write_dims(w, "block", b, o->rank);
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
    jsonw_u64(w, "vmem_bytes", s->vmem_bytes);
    jsonw_u64(w, "hbm_bytes", s->hbm_bytes);
    blocks_text(k, s->tile, blocks, sizeof(blocks));
    snprintf(text, sizeof(text), "blocks %s: VMEM %s, HBM traffic %s", blocks,
             layout_format_bytes(s->vmem_bytes, v, sizeof(v)),
             layout_format_bytes(s->hbm_bytes, h, sizeof(h)));
    jsonw_str(w, "text", text);
}

static void write_suggestion(struct jsonw *w, const struct kernel_spec *k,
                             const struct kernel_plan *p, const struct kernel_suggestion *s)
{
    char text[768], a[32], b[32];

    jsonw_obj_begin(w, NULL);
    if (s->kind == KSUG_BLOCKS) {
        write_block_suggestion(w, k, s);
    } else if (s->kind == KSUG_RAISE_LIMIT) {
        jsonw_str(w, "kind", "raise_limit");
        jsonw_u64(w, "vmem_limit_bytes", s->vmem_limit);
        jsonw_u64(w, "xla_tpu_scoped_vmem_limit_kib", s->limit_kib);
        snprintf(text, sizeof(text),
                 "set pltpu.CompilerParams(vmem_limit_bytes=%llu) and "
                 "--xla_tpu_scoped_vmem_limit_kib=%llu (above the %s default; physical VMEM "
                 "is %s)",
                 (unsigned long long)s->vmem_limit, (unsigned long long)s->limit_kib,
                 layout_format_bytes(p->default_limit, a, sizeof(a)),
                 layout_format_bytes(p->physical_vmem, b, sizeof(b)));
        jsonw_str(w, "text", text);
    } else {
        const struct kernel_operand *o = &k->ops[s->operand];
        char dims[200];
        size_t n = 0;
        jsonw_str(w, "kind", "align");
        jsonw_str(w, "operand", o->name);
        write_dims(w, "block", s->block, o->rank);
        jsonw_u64(w, "saves_bytes", s->saves_bytes);
        for (unsigned d = 0; d < o->rank && n + 1 < sizeof(dims); d++)
            n += (size_t)snprintf(dims + n, sizeof(dims) - n, "%s%lld", d ? ", " : "",
                                  (long long)s->block[d]);
        snprintf(text, sizeof(text), "%.100s: block (%s) holds no padding (%s of VMEM %s)", o->name,
                 dims, layout_format_bytes(s->saves_bytes, a, sizeof(a)),
                 s->saves_bytes == p->ops[s->operand].waste_bytes ? "padding put to use" : "saved");
        jsonw_str(w, "text", text);
    }
    jsonw_obj_end(w);
}

static void write_warning(struct jsonw *w, const struct kernel_spec *k, const struct kernel_plan *p,
                          const struct kernel_warning *kw)
{
    const char *op = kw->operand < k->nops ? k->ops[kw->operand].name : "";
    char line[ERR_MSG_MAX], a[32], b[32];

    switch (kw->code) {
    case KWARN_BLOCK_RULE:
        snprintf(line, sizeof(line),
                 "%.100s: the last two block dims must be divisible by 8 and 128 or equal the "
                 "array's; Pallas' TPU lowering rejects this block "
                 "(server/planner/SOURCES.md#block-shapes)",
                 op);
        break;
    case KWARN_RANK1_RULE:
        snprintf(line, sizeof(line),
                 "%.100s: a 1-D block must equal the array, be a multiple of 1024 or a power "
                 "of 2 of at least 128 x 32/bits; Pallas' TPU lowering rejects this block "
                 "(server/planner/SOURCES.md#block-shapes)",
                 op);
        break;
    case KWARN_BLOCK_BIGGER:
        snprintf(line, sizeof(line), "%.100s: the block is larger than the array in some dim", op);
        break;
    case KWARN_LIMIT_ABOVE_PHYSICAL:
        snprintf(line, sizeof(line),
                 "vmem_limit_bytes %s is above the %s of physical VMEM per TensorCore "
                 "(server/planner/SOURCES.md#tpu_info); the kernel is checked against "
                 "physical VMEM",
                 layout_format_bytes(p->vmem_limit, a, sizeof(a)),
                 layout_format_bytes(p->physical_vmem, b, sizeof(b)));
        break;
    case KWARN_INT4:
        snprintf(line, sizeof(line),
                 "%.100s: 4-bit types are not in Pallas-details' list of supported dtypes "
                 "(server/planner/SOURCES.md#block-shapes; the list may lag the code); sized "
                 "with 64-row tiles",
                 op);
        break;
    case KWARN_NO_FIT_AT_MIN:
        snprintf(line, sizeof(line),
                 "no tile-aligned block of the grid-mapped dims fits; shrink the unmapped "
                 "dims or the scratch");
        break;
    }
    jsonw_str(w, NULL, line);
}

static void write_traffic(struct jsonw *w, const struct kernel_plan *p)
{
    jsonw_obj_begin(w, "traffic");
    jsonw_u64(w, "steps", p->steps);
    jsonw_double(w, "bytes_per_step", (double)p->hbm_bytes / (double)p->steps);
    jsonw_u64(w, "max_step_bytes", p->max_step_bytes);
    jsonw_u64(w, "total_bytes", p->hbm_bytes);
    jsonw_obj_end(w);
    if (p->has_flops && p->hbm_bytes > 0)
        jsonw_double(w, "intensity", p->intensity);
    else
        jsonw_null(w, "intensity");
    jsonw_obj_begin(w, "roofline");
    jsonw_double(w, "peak_flops", p->peak_flops);
    jsonw_double(w, "hbm_bytes_per_s", p->hbm_bw);
    jsonw_double(w, "ridge_intensity", p->hbm_bw > 0 ? p->peak_flops / p->hbm_bw : 0);
    jsonw_double(w, "memory_seconds", p->memory_s);
    if (p->has_flops) {
        jsonw_double(w, "flops", p->flops);
        jsonw_double(w, "compute_seconds", p->compute_s);
        jsonw_double(w, "bound_seconds", p->compute_s > p->memory_s ? p->compute_s : p->memory_s);
        jsonw_str(w, "binding", p->compute_s >= p->memory_s ? "compute" : "memory");
    } else {
        jsonw_null(w, "flops");
        jsonw_null(w, "compute_seconds");
        jsonw_null(w, "bound_seconds");
        jsonw_null(w, "binding");
    }
    jsonw_obj_end(w);
}

static void write_fit(struct jsonw *w, const struct kernel_spec *k, const struct kernel_plan *p)
{
    uint64_t need = p->vmem_bytes + p->margin_bytes;
    uint64_t eff = p->vmem_limit < p->physical_vmem ? p->vmem_limit : p->physical_vmem;
    char msg[ERR_MSG_MAX];

    jsonw_u64(w, "vmem_bytes", p->vmem_bytes);
    jsonw_u64(w, "scratch_bytes", p->scratch_bytes);
    jsonw_u64(w, "margin_bytes", p->margin_bytes);
    jsonw_u64(w, "vmem_limit_bytes", p->vmem_limit);
    jsonw_str(w, "limit_source",
              p->limit_given     ? "kernel"
              : p->limit_assumed ? "chip_default_assumed"
                                 : "chip_default");
    jsonw_u64(w, "default_limit_bytes", p->default_limit);
    jsonw_u64(w, "physical_vmem_bytes", p->physical_vmem);
    jsonw_bool(w, "fits", p->fits);
    jsonw_u64(w, "headroom_bytes", p->fits ? eff - need : 0);
    jsonw_u64(w, "overflow_bytes", p->fits ? 0 : need - eff);
    plan_kernels_oom(k, p, msg, sizeof(msg));
    if (p->fits)
        jsonw_null(w, "error");
    else
        jsonw_str(w, "error", msg);
}

static void write_kernel(struct jsonw *w, const struct plan_ctx *c, size_t i)
{
    const struct kernel_spec *k = &c->ks.k[i];
    struct kernel_plan p;
    struct err ignore;

    /* kernel_plan succeeded on this kernel in plan_kernels_check */
    if (kernel_plan(k, i, c->chip, c->kops, &p, &ignore) != ERR_OK)
        return;
    kernel_suggest(k, &p);
    jsonw_obj_begin(w, NULL);
    jsonw_str(w, "name", k->name);
    write_dims(w, "grid", k->grid, k->grid_rank);
    write_fit(w, k, &p);
    jsonw_arr_begin(w, "operands");
    for (size_t j = 0; j < k->nops; j++)
        write_operand(w, &k->ops[j], &p.ops[j]);
    jsonw_arr_end(w);
    write_traffic(w, &p);
    jsonw_arr_begin(w, "suggestions");
    for (size_t s = 0; s < p.nsug; s++)
        write_suggestion(w, k, &p, &p.sug[s]);
    jsonw_arr_end(w);
    jsonw_arr_begin(w, "warnings");
    for (size_t q = 0; q < p.nwarn; q++)
        write_warning(w, k, &p, &p.warn[q]);
    jsonw_arr_end(w);
    jsonw_obj_end(w);
}

void plan_kernels_write(struct jsonw *w, const struct plan_ctx *c)
{
    jsonw_arr_begin(w, "kernels");
    for (size_t i = 0; i < c->ks.n; i++)
        write_kernel(w, c, i);
    jsonw_arr_end(w);
}

void plan_kernels_assumptions(struct jsonw *w, const struct plan_ctx *c)
{
    const struct chip *ch = c->chip;
    char line[ERR_MSG_MAX], a[32], b[32];

    if (c->ks.n == 0 || ch == NULL)
        return;
    if (ch->scoped_vmem_default == 0)
        snprintf(line, sizeof(line),
                 "kernels: the default scoped VMEM limit of %s is not known "
                 "(server/planner/SOURCES.md#scoped-vmem); "
                 "assumed %s, the smallest default seen in an error (v5e), capped by the %s of "
                 "physical VMEM",
                 ch->name, layout_format_bytes(16ull << 20, a, sizeof(a)),
                 layout_format_bytes(ch->vmem_bytes, b, sizeof(b)));
    else
        snprintf(line, sizeof(line),
                 "kernels: the default scoped VMEM limit of %s (%s) is read from compiler "
                 "error messages, not documented (server/planner/SOURCES.md#scoped-vmem)",
                 ch->name, layout_format_bytes(ch->scoped_vmem_default, a, sizeof(a)));
    jsonw_str(w, NULL, line);
    jsonw_str(w, NULL,
              "kernels: VMEM blocks are sized with the second-minor dim rounded to 8 x 32/bits "
              "rows and the minor to 128 lanes, 1-D blocks to 1024 elements "
              "(server/planner/SOURCES.md#block-shapes: an estimate, no official formula); "
              "Mosaic's internal scratch and vreg spills are not modelled beyond margin_bytes, "
              "so the figure can be low (server/planner/SOURCES.md#vmem-estimate)");
    if (ch->uncertain & CHIP_F_VMEM) {
        snprintf(line, sizeof(line),
                 "kernels: physical VMEM of %s (%s per TensorCore) is uncertain: %s", ch->name,
                 layout_format_bytes(ch->vmem_bytes, a, sizeof(a)), ch->notes);
        jsonw_str(w, NULL, line);
    }
}
