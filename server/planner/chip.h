/*
 * chip.h - TPU generations: the figures the planner needs, each with its source.
 *
 * The table lives in chip.c as static const data (no mutable state). Every figure there
 * carries a comment naming its source, an entry of server/planner/SOURCES.md; a figure the
 * sources mark uncertain ([U]) or on which they conflict has its bit set in
 * `uncertain` and a sentence in `notes`, and every output that uses it says so.
 */
#ifndef TPUPLAN_CHIP_H
#define TPUPLAN_CHIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bits of struct chip.uncertain: which figures are assumptions. */
enum chip_field {
    CHIP_F_HBM = 1u << 0,
    CHIP_F_USABLE_HBM = 1u << 1,
    CHIP_F_HBM_BW = 1u << 2,
    CHIP_F_VMEM = 1u << 3,
    CHIP_F_SMEM = 1u << 4,
    CHIP_F_CMEM = 1u << 5,
    CHIP_F_CORES = 1u << 6,
    CHIP_F_MXU = 1u << 7,
    CHIP_F_BF16 = 1u << 8,
    CHIP_F_INT8 = 1u << 9,
    CHIP_F_ICI = 1u << 10,
    CHIP_F_SCOPED_VMEM = 1u << 11,
    CHIP_F_LAYOUT = 1u << 12, /* default tiling rules not confirmed by real reports */
};

struct chip {
    const char *name;        /* canonical: "v2" "v3" "v4" "v5e" "v5p" "v6e" "v7" */
    const char *aliases;     /* comma-separated: "v5litepod,v5lite" */
    const char *device_kind; /* jax device_kind, e.g. "TPU v5 lite" */
    int generation;          /* 2..7 */
    unsigned uncertain;      /* enum chip_field bits: which figures are assumptions */
    uint64_t hbm_bytes_per_chip;
    uint64_t hbm_bytes_per_device; /* what one JAX device sees */
    uint64_t usable_hbm_bytes;     /* capacity printed by the runtime in OOM reports */
    uint64_t hbm_bw_bytes_per_s;   /* per chip */
    uint64_t vmem_bytes;           /* per TensorCore */
    uint64_t smem_bytes;           /* per TensorCore */
    uint64_t cmem_bytes;           /* per chip, 0 when none */
    unsigned tensorcores_per_chip;
    unsigned tensorcores_per_device; /* 2 with megacore (v4, v5p), else 1 */
    unsigned mxu_dim;                /* 128 or 256 */
    unsigned mxus_per_core;
    double peak_bf16_flops;       /* per chip */
    double peak_int8_ops;         /* per chip, 0 when not available */
    const char *ici_topology;     /* "2D torus", "3D torus", ... */
    uint64_t scoped_vmem_default; /* default scoped VMEM limit, 0 when unknown */
    const char *notes;            /* why the uncertain figures are uncertain */
};

/* The last enum chip_field bit, for loops over every field. */
#define CHIP_F_LAST CHIP_F_LAYOUT

/* Stable name of one enum chip_field bit in JSON output ("hbm", "usable_hbm", ...), the
 * same for the CLI and the API; NULL for anything that is not a single field bit. */
const char *chip_field_name(unsigned bit);

/* Number of chips in the table and the i-th one (i < chip_count()). */
size_t chip_count(void);
const struct chip *chip_at(size_t i);

/* Finds a chip by name, alias or JAX device_kind, case-insensitively ("v5e", "V5LITEPOD",
 * "tpu7x", "TPU v5 lite"). NULL when unknown. */
const struct chip *chip_find(const char *name);

/*
 * Writes c's table record as members of the JSON object w has open: name, aliases,
 * device_kind, generation, default (the chip used when none is named), every memory and
 * compute figure, default_layout, uncertain (chip_field_name of each uncertain figure)
 * and notes. The one form of a chip in every output: `tpuplan chips --json`,
 * GET /api/v1/chips and a plan result's "chip" (which adds its "assumptions").
 */
struct jsonw;
void chip_json_write(struct jsonw *w, const struct chip *c);

/* The chip used when neither the input nor the caller names one. */
const struct chip *chip_default(void);

/* Comma-separated list of accepted names, for error messages ("v2, v3, v4, ..."). */
const char *chip_names(void);

#endif
