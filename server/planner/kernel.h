/*
 * kernel.h - VMEM planning of Pallas TPU kernels from their block specs alone.
 *
 * A kernel (model.schema.json "kernels") is a grid, its pipelined inputs and outputs (a
 * block shape, dtype, buffer count, optional full array shape and index map each) and its
 * scratch buffers. kernel_plan works out, without compiling anything:
 *
 *   vmem_bytes  = sum over VMEM operands of buffers x VMEM-padded block bytes
 *               + sum of VMEM-padded scratch bytes
 *                 (the planner model of server/planner/SOURCES.md#vmem-estimate; Pallas'
 *                 default of 2 buffers and single buffering of trivial windows,
 *                 server/planner/SOURCES.md#buffering)
 *   fits        = vmem_bytes + margin_bytes <= vmem_limit_bytes (and <= physical VMEM)
 *   traffic     = HBM<->VMEM bytes per grid step and in total: a block is moved when its
 *                 index differs from the previous step's (3b: "the HBM transfer for the
 *                 second iteration is skipped"); for a blocked matmul this is the formula
 *                 of Pallas-matmul, (m.k.n/bn + k.n.m/bm + m.n) x element size (3c)
 *   roofline    = time bounds from the chip's HBM bandwidth and bf16 peak per TensorCore
 *   suggestions = the largest tile-aligned blocks that fit, the exact raised limit, the
 *                 aligned block that removes padding (kernel_suggest.c, called after
 *                 kernel_plan)
 *
 * VMEM padding of a block (the rule, from server/planner/SOURCES.md#block-shapes [U/D]
 * and server/planner/SOURCES.md#tiles-per-dtype): the minor dim
 * rounds up to 128 lanes and the second-minor to 8 x (32 / bit width) sublanes (8 for
 * 32-bit, 16 for 16-bit, 32 for 8-bit, 64 for 4-bit); leading dims are never padded (2a).
 * A 1-D block rounds up to 1024 elements, the T(1024) tile seen for 1-D arrays (2e, an
 * assumption for VMEM); a scalar (scratch only) takes 512 B, one scalar tile (2e). bool
 * refs are int32 in Pallas (2c), so pred counts 32 bits.
 *
 * Pure and allocation-free apart from what the caller passes in: no I/O, no globals.
 * Every size is checked 64-bit arithmetic (ERR_OVERFLOW naming the kernel).
 */
#ifndef TPUPLAN_KERNEL_H
#define TPUPLAN_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/chip.h"
#include "planner/dtype.h"
#include "planner/err.h"

#define KERNEL_MAX_GRID        8    /* grid axes */
#define KERNEL_MAX_RANK        8    /* block dims */
#define KERNEL_MAX_OPERANDS    256  /* inputs + outputs + scratch per kernel */
#define KERNEL_MAX_BUFFERS     8    /* buffer count of one input (emit_pipeline allows > 2) */
#define KERNEL_MAX_SUGGESTIONS 3    /* block-shape suggestions kept per kernel */
#define KERNEL_MAX_WARNINGS    8    /* warnings kept per kernel; the rest are counted */
#define KERNEL_SCALAR_BYTES    512u /* one scalar tile (T(128) x 4 B) */

enum kernel_role { KERNEL_INPUT = 0, KERNEL_OUTPUT, KERNEL_SCRATCH };

/* Where an operand lives. Pipelined inputs/outputs default to VMEM; "any"/"hbm" operands
 * stay in HBM (the kernel copies by hand), SMEM holds scalars, semaphores take no VMEM. */
enum kernel_space { KSPACE_VMEM = 0, KSPACE_SMEM, KSPACE_SEMAPHORE, KSPACE_ANY };

/* "input" / "output" / "scratch"; "vmem" / "smem" / "semaphore" / "any". */
const char *kernel_role_name(enum kernel_role r);
const char *kernel_space_name(enum kernel_space s);

struct kernel_operand {
    const char *name; /* owned by the kernel set */
    enum kernel_role role;
    enum kernel_space space;
    enum dtype dtype;
    uint8_t rank;
    int64_t block[KERNEL_MAX_RANK]; /* block shape (scratch: its shape), each >= 1 */
    bool has_array;
    int64_t array[KERNEL_MAX_RANK]; /* the full operand shape, when given */
    bool has_index_map;
    int16_t index_map[KERNEL_MAX_RANK]; /* grid axis of each block dim, -1 for null */
    unsigned buffers;                   /* 0: the default (2, or 1 for a whole-array block) */
};

struct kernel_spec {
    const char *name; /* owned by the kernel set */
    uint8_t grid_rank;
    int64_t grid[KERNEL_MAX_GRID]; /* each >= 1 */
    uint64_t vmem_limit;           /* CompilerParams.vmem_limit_bytes; 0: the chip default */
    uint64_t internal_scratch;     /* CompilerParams.internal_scratch_in_bytes; the margin */
    bool has_flops;
    double flops; /* per grid step */
    size_t nops;
    struct kernel_operand *ops; /* nops entries, owned by the kernel set */
};

/* Every kernel of a model, in one allocation family (kernel_set_parse, model_json.h). */
struct kernel_set {
    size_t n;
    struct kernel_spec *k;      /* n entries */
    struct kernel_operand *ops; /* all operands, kernel by kernel */
    char *strings;              /* every name, NUL-terminated */
};

/* Frees what a kernel set holds (kernel_set_parse, model_json.h) and empties it. */
void kernel_set_free(struct kernel_set *ks);

/* Why an operand got its buffer count. */
enum kernel_buffers_src { KBUF_DEFAULT = 0, KBUF_GIVEN, KBUF_WHOLE_ARRAY, KBUF_NONE };

struct kernel_operand_plan {
    unsigned buffers; /* 0 outside VMEM */
    enum kernel_buffers_src buffers_src;
    int64_t padded[KERNEL_MAX_RANK]; /* the block as VMEM stores it (rank-1: elements) */
    uint64_t block_bytes;            /* logical bytes of one block */
    uint64_t padded_block_bytes;     /* VMEM bytes of one block (0 outside VMEM) */
    uint64_t vmem_bytes;             /* buffers x padded_block_bytes */
    uint64_t waste_bytes;            /* buffers x (padded - logical) */
    uint64_t transfers;              /* HBM<->VMEM moves of the block over the grid */
    uint64_t hbm_bytes;              /* transfers x block_bytes */
    bool index_assumed;              /* no index map: the block is assumed to move every step */
};

enum kernel_suggest_kind { KSUG_BLOCKS = 0, KSUG_RAISE_LIMIT, KSUG_ALIGN };

struct kernel_suggestion {
    enum kernel_suggest_kind kind;
    /* KSUG_BLOCKS: a tile per grid axis (the block dims mapped to that axis take it),
     * the grid it gives, and the kernel's figures with it. */
    int64_t tile[KERNEL_MAX_GRID];
    int64_t grid[KERNEL_MAX_GRID];
    uint64_t vmem_bytes;
    uint64_t hbm_bytes;
    /* KSUG_RAISE_LIMIT: CompilerParams.vmem_limit_bytes and --xla_tpu_scoped_vmem_limit_kib */
    uint64_t vmem_limit;
    uint64_t limit_kib;
    /* KSUG_ALIGN: operand index, the aligned block and the waste it removes */
    size_t operand;
    int64_t block[KERNEL_MAX_RANK];
    uint64_t saves_bytes;
};

/* Warnings worth a sentence, rendered by the result writer (plan_kernels.c). */
enum kernel_warn_code {
    KWARN_BLOCK_RULE = 0, /* the last two block dims break Pallas' (8, 128) rule (3a) */
    KWARN_RANK1_RULE,     /* a 1-D block breaks Pallas' rank-1 rule (3a) */
    KWARN_BLOCK_BIGGER,   /* a block dim is larger than the array's */
    KWARN_LIMIT_ABOVE_PHYSICAL,
    KWARN_INT4,          /* int4 is not in Pallas-details' dtype list (3a) */
    KWARN_NO_FIT_AT_MIN, /* over the limit, and no tile-aligned block fits */
};

struct kernel_warning {
    enum kernel_warn_code code;
    size_t operand; /* the operand concerned, when the code has one */
};

struct kernel_plan {
    uint64_t vmem_bytes;     /* the exact sum above, margin excluded */
    uint64_t scratch_bytes;  /* VMEM scratch part of vmem_bytes */
    uint64_t margin_bytes;   /* internal scratch allowance (the kernel's, else 0) */
    uint64_t vmem_limit;     /* the kernel's own, else the chip's scoped default */
    bool limit_given;        /* the kernel set its own limit */
    bool limit_assumed;      /* the chip's default is unknown or uncertain */
    uint64_t default_limit;  /* the chip's scoped default (or the assumed one) */
    uint64_t physical_vmem;  /* per TensorCore (tpu_info) */
    bool fits;               /* vmem + margin <= limit and <= physical */
    bool over_physical;      /* vmem + margin > physical VMEM */
    uint64_t steps;          /* product of the grid */
    uint64_t hbm_bytes;      /* total HBM<->VMEM traffic */
    uint64_t max_step_bytes; /* the most one step moves (the first: every block) */
    double flops;            /* total (flops per step x steps); valid with has_flops */
    bool has_flops;
    double intensity;           /* flops per HBM byte */
    double compute_s, memory_s; /* roofline time bounds */
    double peak_flops, hbm_bw;  /* per TensorCore: chip figure / TensorCores */
    size_t nops;
    struct kernel_operand_plan *ops; /* nops entries, caller-provided */
    size_t nsug;
    struct kernel_suggestion sug[KERNEL_MAX_SUGGESTIONS + 2 + 4]; /* blocks, limit, aligns */
    size_t nwarn, warn_dropped;
    struct kernel_warning warn[KERNEL_MAX_WARNINGS];
};

/*
 * Plans kernel k on chip into *p. ops must hold k->nops entries (p->ops = ops). Fills
 * every figure but the suggestions (kernel_suggest). Fails only with ERR_OVERFLOW (a size
 * past 2^64-1), naming "kernels[index]" in *e.
 */
ERR_MUST_CHECK int kernel_plan(const struct kernel_spec *k, size_t index, const struct chip *chip,
                               struct kernel_operand_plan *ops, struct kernel_plan *p,
                               struct err *e);

/*
 * VMEM bytes of one block of `rank` dims of dtype t as VMEM stores it, with the padded
 * dims in padded (may be NULL). Rank 0 is one scalar tile. true on overflow.
 */
bool kernel_vmem_block(const int64_t *dims, unsigned rank, enum dtype t, int64_t *padded,
                       uint64_t *bytes);

/* Logical bytes of a block (elements x width, rounded up to bytes). true on overflow. */
bool kernel_block_bytes(const int64_t *dims, unsigned rank, enum dtype t, uint64_t *bytes);

/* The width in bits a kernel operand of dtype t takes in VMEM: pred 32 (int32 memrefs,
 * server/planner/SOURCES.md#tiles-per-dtype), 4/8/16/32-bit types their own width; 0 for types
 * Pallas TPU kernels do not take (64-bit, complex, 2-bit, token). */
unsigned kernel_dtype_bits(enum dtype t);

/* The VMEM sublane tile of dtype t: 8 x (32 / bit width)
 * (server/planner/SOURCES.md#block-shapes). */
unsigned kernel_sublanes(enum dtype t);

/* Operand o's block when the grid axes take the tiles in tile[] (KSUG_BLOCKS). */
void kernel_block_with_tiles(const struct kernel_operand *o, const int64_t *tile, int64_t *out);

/* kernel_suggest.c: the suggestions of a kernel planned by kernel_plan, into p->sug, and
 * KWARN_NO_FIT_AT_MIN when it is over its limit and no tile-aligned block fits. Bounded
 * work: at most KERNEL_SEARCH_MAX block combinations are tried. */
#define KERNEL_SEARCH_MAX 1024
void kernel_suggest(const struct kernel_spec *k, struct kernel_plan *p);

/* Shared by kernel.c and kernel_suggest.c: VMEM bytes and traffic of k with its grid axes
 * taking tile[] / grid[] (the kernel's own when NULL). true on overflow. */
bool kernel_figures(const struct kernel_spec *k, const int64_t *tile, const int64_t *grid,
                    uint64_t *vmem, uint64_t *hbm);

#endif
