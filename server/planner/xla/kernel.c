/*
 * kernel.c - VMEM bytes, HBM<->VMEM traffic and the roofline of one Pallas kernel (see
 * kernel.h for the model and its sources).
 */
#include "planner/kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"

#define LANES 128u /* NUM_LANES (server/planner/SOURCES.md#tpu_info); minor dims pad to 128 */
/* 1-D blocks: T(1024), the tile seen on 1-D arrays of every width
 * (server/planner/SOURCES.md#1-d-arrays-and-scalars:
 * f32[1024]{0:T(1024)}, bf16[6144]{0:T(1024)(128)(2,1)}). An assumption for VMEM. */
#define RANK1_TILE 1024u
/* The smallest default scoped VMEM limit seen in an error (v5e, "limit 16.00M",
 * server/planner/SOURCES.md#scoped-vmem), used, capped by physical VMEM, where the chip's
 * default is unknown. */
#define FALLBACK_SCOPED_LIMIT (16ull << 20)

const char *kernel_role_name(enum kernel_role r)
{
    return r == KERNEL_INPUT ? "input" : r == KERNEL_OUTPUT ? "output" : "scratch";
}

const char *kernel_space_name(enum kernel_space s)
{
    switch (s) {
    case KSPACE_VMEM:
        return "vmem";
    case KSPACE_SMEM:
        return "smem";
    case KSPACE_SEMAPHORE:
        return "semaphore";
    case KSPACE_ANY:
        return "any";
    }
    return "vmem";
}

unsigned kernel_dtype_bits(enum dtype t)
{
    unsigned b;

    if (t == DT_PRED)
        return 32; /* BOOL_MEMREF_TYPE: server/planner/SOURCES.md#tiles-per-dtype */
    b = dtype_bits(t);
    if (t == DT_TOKEN || t == DT_C64 || t == DT_C128)
        return 0;
    return (b == 4 || b == 8 || b == 16 || b == 32) ? b : 0;
}

unsigned kernel_sublanes(enum dtype t)
{
    unsigned b = kernel_dtype_bits(t);
    /* 8 * (32 / bitwidth): server/planner/SOURCES.md#block-shapes */
    return b == 0 ? 8 : 8 * (32 / b);
}

bool kernel_block_bytes(const int64_t *dims, unsigned rank, enum dtype t, uint64_t *bytes)
{
    uint64_t n = 1;

    for (unsigned d = 0; d < rank; d++)
        if (__builtin_mul_overflow(n, (uint64_t)dims[d], &n))
            return true;
    if (__builtin_mul_overflow(n, (uint64_t)dtype_bits(t), &n))
        return true;
    *bytes = n / 8 + (n % 8 != 0);
    return false;
}

bool kernel_vmem_block(const int64_t *dims, unsigned rank, enum dtype t, int64_t *padded,
                       uint64_t *bytes)
{
    uint64_t n = 1, bits = kernel_dtype_bits(t), v;

    if (rank == 0) {
        *bytes = KERNEL_SCALAR_BYTES;
        return false;
    }
    for (unsigned d = 0; d < rank; d++) {
        uint64_t m = 1;
        if (rank == 1)
            m = RANK1_TILE;
        else if (d == rank - 1u)
            m = LANES;
        else if (d == rank - 2u)
            m = kernel_sublanes(t);
        if (arith_round_up((uint64_t)dims[d], m, &v) || v > INT64_MAX ||
            __builtin_mul_overflow(n, v, &n))
            return true;
        if (padded != NULL)
            padded[d] = (int64_t)v;
    }
    if (__builtin_mul_overflow(n, bits, &n))
        return true;
    *bytes = n / 8 + (n % 8 != 0);
    return false;
}

void kernel_block_with_tiles(const struct kernel_operand *o, const int64_t *tile, int64_t *out)
{
    for (unsigned d = 0; d < o->rank; d++) {
        int a = o->has_index_map ? o->index_map[d] : -1;
        out[d] = (tile != NULL && a >= 0 && tile[a] > 0) ? tile[a] : o->block[d];
    }
}

static bool whole_array(const struct kernel_operand *o, const int64_t *block)
{
    if (!o->has_array)
        return false;
    for (unsigned d = 0; d < o->rank; d++)
        if (block[d] != o->array[d])
            return false;
    return true;
}

static bool constant_index(const struct kernel_operand *o)
{
    if (!o->has_index_map)
        return true; /* a whole-array block can only have block index 0 */
    for (unsigned d = 0; d < o->rank; d++)
        if (o->index_map[d] >= 0)
            return false;
    return true;
}

/* Pallas' buffer count: the given one, else 1 for a trivial window (block = array, constant
 * index map: "Force single-buffering pipelining for trivial windowing in VMEM"), else the
 * default 2 (server/planner/SOURCES.md#buffering). */
static unsigned buffers_of(const struct kernel_operand *o, const int64_t *block,
                           enum kernel_buffers_src *src)
{
    if (o->role == KERNEL_SCRATCH || o->space != KSPACE_VMEM) {
        *src = KBUF_NONE;
        return o->role == KERNEL_SCRATCH && o->space == KSPACE_VMEM ? 1 : 0;
    }
    if (o->buffers != 0) {
        *src = KBUF_GIVEN;
        return o->buffers;
    }
    if (whole_array(o, block) && constant_index(o)) {
        *src = KBUF_WHOLE_ARRAY;
        return 1;
    }
    *src = KBUF_DEFAULT;
    return 2;
}

/*
 * How many times the block moves between HBM and VMEM over the grid. The grid runs in
 * lexicographic order (last axis fastest) and a block is skipped when its index equals the
 * previous step's (server/planner/SOURCES.md#buffering). Its index depends on the axes its index
 * map names; with a* the innermost of them that has more than one step, every change of the axes
 * 0..a* changes axis a* (it counts up or wraps), so the block moves prod(grid[0..a*]) times. No
 * index map: every step, unless the block is the whole array (its index is always 0).
 */
static bool transfers_of(const struct kernel_operand *o, const int64_t *block, const int64_t *grid,
                         unsigned grid_rank, uint64_t *out)
{
    int inner = -1;
    uint64_t n = 1;

    if (o->role == KERNEL_SCRATCH || o->space != KSPACE_VMEM) {
        *out = 0;
        return false;
    }
    if (o->has_index_map) {
        for (unsigned d = 0; d < o->rank; d++)
            if (o->index_map[d] > inner && grid[o->index_map[d]] > 1)
                inner = o->index_map[d];
    } else if (!whole_array(o, block)) {
        for (unsigned a = 0; a < grid_rank; a++)
            if (grid[a] > 1)
                inner = (int)a;
    }
    for (int a = 0; a <= inner; a++)
        if (__builtin_mul_overflow(n, (uint64_t)grid[a], &n))
            return true;
    *out = n;
    return false;
}

/* One operand's row with its block taking block[] on grid[]. */
static bool operand_figures(const struct kernel_operand *o, const int64_t *block,
                            const int64_t *grid, unsigned grid_rank, struct kernel_operand_plan *r)
{
    uint64_t pad = 0;

    memset(r, 0, sizeof(*r));
    r->buffers = buffers_of(o, block, &r->buffers_src);
    r->index_assumed = !o->has_index_map && o->role != KERNEL_SCRATCH && o->space == KSPACE_VMEM &&
                       !whole_array(o, block);
    if (kernel_block_bytes(block, o->rank, o->dtype, &r->block_bytes))
        return true;
    if (o->space == KSPACE_VMEM) {
        if (kernel_vmem_block(block, o->rank, o->dtype, r->padded, &r->padded_block_bytes))
            return true;
        pad = r->padded_block_bytes - r->block_bytes;
    } else {
        memcpy(r->padded, block, o->rank * sizeof(*block));
    }
    if (__builtin_mul_overflow(r->padded_block_bytes, (uint64_t)r->buffers, &r->vmem_bytes) ||
        __builtin_mul_overflow(pad, (uint64_t)r->buffers, &r->waste_bytes) ||
        transfers_of(o, block, grid, grid_rank, &r->transfers) ||
        __builtin_mul_overflow(r->transfers, r->block_bytes, &r->hbm_bytes))
        return true;
    return false;
}

bool kernel_figures(const struct kernel_spec *k, const int64_t *tile, const int64_t *grid,
                    uint64_t *vmem, uint64_t *hbm)
{
    int64_t block[KERNEL_MAX_RANK];
    struct kernel_operand_plan r;

    *vmem = 0;
    *hbm = 0;
    for (size_t i = 0; i < k->nops; i++) {
        kernel_block_with_tiles(&k->ops[i], tile, block);
        if (operand_figures(&k->ops[i], block, grid != NULL ? grid : k->grid, k->grid_rank, &r) ||
            __builtin_add_overflow(*vmem, r.vmem_bytes, vmem) ||
            __builtin_add_overflow(*hbm, r.hbm_bytes, hbm))
            return true;
    }
    return false;
}

static void warn(struct kernel_plan *p, enum kernel_warn_code code, size_t operand)
{
    if (p->nwarn == KERNEL_MAX_WARNINGS) {
        p->warn_dropped++;
        return;
    }
    p->warn[p->nwarn].code = code;
    p->warn[p->nwarn++].operand = operand;
}

/* Pallas' block-shape rules (server/planner/SOURCES.md#block-shapes), checked where the array
 * shape is known. */
static void check_block(const struct kernel_operand *o, size_t i, struct kernel_plan *p)
{
    unsigned r = o->rank;
    unsigned bits = kernel_dtype_bits(o->dtype);

    if (o->role == KERNEL_SCRATCH || o->space != KSPACE_VMEM)
        return;
    if (dtype_bits(o->dtype) == 4)
        warn(p, KWARN_INT4, i);
    if (!o->has_array)
        return;
    for (unsigned d = 0; d < r; d++)
        if (o->block[d] > o->array[d]) {
            warn(p, KWARN_BLOCK_BIGGER, i);
            return;
        }
    if (r == 1) {
        int64_t b = o->block[0];
        bool pow2 = (b & (b - 1)) == 0 && (uint64_t)b >= 128u * (32u / bits);
        if (b != o->array[0] && b % 1024 != 0 && !pow2)
            warn(p, KWARN_RANK1_RULE, i);
    } else if (r >= 2) {
        bool minor = o->block[r - 1] % 128 == 0 || o->block[r - 1] == o->array[r - 1];
        bool second = o->block[r - 2] % 8 == 0 || o->block[r - 2] == o->array[r - 2];
        if (!minor || !second)
            warn(p, KWARN_BLOCK_RULE, i);
    }
}

/* The limit: the kernel's own, else the chip's scoped default; where the docs give none
 * (v2, v3, v4, v5p), the smallest seen, capped by physical VMEM, as an assumption. */
static void settle_limit(const struct kernel_spec *k, const struct chip *chip,
                         struct kernel_plan *p)
{
    p->physical_vmem = chip->vmem_bytes; /* per TensorCore (tpu_info) */
    p->default_limit = chip->scoped_vmem_default;
    p->limit_assumed = (chip->uncertain & CHIP_F_SCOPED_VMEM) != 0;
    if (p->default_limit == 0) {
        p->default_limit =
            FALLBACK_SCOPED_LIMIT < p->physical_vmem ? FALLBACK_SCOPED_LIMIT : p->physical_vmem;
        p->limit_assumed = true;
    }
    p->limit_given = k->vmem_limit != 0;
    p->vmem_limit = p->limit_given ? k->vmem_limit : p->default_limit;
    if (p->vmem_limit > p->physical_vmem)
        warn(p, KWARN_LIMIT_ABOVE_PHYSICAL, 0);
}

/* Roofline on one TensorCore: a kernel runs on one core (megacore "parallel" axes aside,
 * server/planner/SOURCES.md#buffering), and tpu_info's per-core figures are the chip's over
 * its cores (server/planner/SOURCES.md#tpu_info). */
static void roofline(const struct kernel_spec *k, const struct chip *chip, struct kernel_plan *p)
{
    unsigned cores = chip->tensorcores_per_chip > 0 ? chip->tensorcores_per_chip : 1;

    p->peak_flops = chip->peak_bf16_flops / cores;
    p->hbm_bw = (double)chip->hbm_bw_bytes_per_s / cores;
    p->memory_s = p->hbm_bw > 0 ? (double)p->hbm_bytes / p->hbm_bw : 0;
    p->has_flops = k->has_flops;
    if (!k->has_flops)
        return;
    p->flops = k->flops * (double)p->steps;
    p->compute_s = p->peak_flops > 0 ? p->flops / p->peak_flops : 0;
    p->intensity = p->hbm_bytes > 0 ? p->flops / (double)p->hbm_bytes : 0;
}

int kernel_plan(const struct kernel_spec *k, size_t index, const struct chip *chip,
                struct kernel_operand_plan *ops, struct kernel_plan *p, struct err *e)
{
    uint64_t need;

    memset(p, 0, sizeof(*p));
    p->ops = ops;
    p->nops = k->nops;
    p->steps = 1;
    for (unsigned a = 0; a < k->grid_rank; a++)
        if (__builtin_mul_overflow(p->steps, (uint64_t)k->grid[a], &p->steps))
            goto overflow;
    for (size_t i = 0; i < k->nops; i++) {
        struct kernel_operand_plan *r = &ops[i];
        if (operand_figures(&k->ops[i], k->ops[i].block, k->grid, k->grid_rank, r) ||
            __builtin_add_overflow(p->vmem_bytes, r->vmem_bytes, &p->vmem_bytes) ||
            __builtin_add_overflow(p->hbm_bytes, r->hbm_bytes, &p->hbm_bytes) ||
            __builtin_add_overflow(p->max_step_bytes, r->transfers ? r->block_bytes : 0,
                                   &p->max_step_bytes))
            goto overflow;
        if (k->ops[i].role == KERNEL_SCRATCH)
            p->scratch_bytes += r->vmem_bytes; /* <= vmem_bytes, which did not overflow */
        check_block(&k->ops[i], i, p);
    }
    settle_limit(k, chip, p);
    p->margin_bytes = k->internal_scratch;
    if (__builtin_add_overflow(p->vmem_bytes, p->margin_bytes, &need))
        goto overflow;
    p->over_physical = need > p->physical_vmem;
    p->fits = need <= p->vmem_limit && !p->over_physical;
    roofline(k, chip, p);
    return ERR_OK;
overflow:;
    char where[32];
    snprintf(where, sizeof(where), "kernels[%zu]", index);
    return err_set(e, ERR_OVERFLOW, where, "kernels[%zu] \"%.200s\": a byte count passes 2^64-1",
                   index, k->name);
}

void kernel_set_free(struct kernel_set *ks)
{
    if (ks == NULL)
        return;
    free(ks->k);
    free(ks->ops);
    free(ks->strings);
    memset(ks, 0, sizeof(*ks));
}
