/*
 * chip.c - the TPU generation table (see chip.h).
 *
 * Static const data only. Each figure's comment names its source, an entry of
 * server/planner/SOURCES.md: "Cloud" = server/planner/SOURCES.md#cloud-specs (Google Cloud's
 * per-chip specs), "tpu_info" = server/planner/SOURCES.md#tpu_info (JAX's per-TensorCore
 * table), "SB" = server/planner/SOURCES.md#scaling-book (the Scaling Book),
 * "conflicts" = server/planner/SOURCES.md#conflicts, "OOM" and "printed" =
 * server/planner/SOURCES.md#usable-hbm (usable HBM in real OOM reports, and the capacities
 * the runtime prints), "scoped" = server/planner/SOURCES.md#scoped-vmem. A figure the sources
 * mark uncertain, or on which they conflict, has its CHIP_F_* bit set and a sentence in
 * `notes`.
 *
 * Usable HBM: the runtime prints capacities with TSL's formatter ("15.75G"), so the exact
 * byte count is not in the reports; we store printed-value x 2^30, computed in integers
 * (e.g. 748 * GIB / 100 for "7.48G"), which is within 10 MiB of the truth.
 */
#include "planner/chip.h"

#include <strings.h>

#define KIB (1024ull)
#define MIB (1024ull * 1024ull)
#define GIB (1024ull * 1024ull * 1024ull)

static const struct chip chips[] = {
    {
        .name = "v2",
        .aliases = "tpuv2",
        .device_kind = "TPU v2", /* tpu_info */
        .generation = 2,
        .hbm_bytes_per_chip = 16 * GIB,        /* printed "8 GiB/core" x 2 cores; tpu_info 16.0e9 */
        .hbm_bytes_per_device = 8 * GIB,       /* printed: each core is a device (no megacore) */
        .usable_hbm_bytes = 748 * GIB / 100,   /* OOM "Used 21.90G of 7.48G" (EasyDeL #78) */
        .hbm_bw_bytes_per_s = 716000000000ull, /* tpu_info 7.16e11 */
        .vmem_bytes = 16 * MIB,                /* tpu_info */
        .smem_bytes = 16 * KIB,                /* tpu_info */
        .cmem_bytes = 0,                       /* tpu_info */
        .tensorcores_per_chip = 2,             /* tpu_info */
        .tensorcores_per_device = 1,           /* tpu_info megacore "no" */
        .mxu_dim = 128,                        /* tpu_info */
        .mxus_per_core = 1,                    /* tpu_info */
        .peak_bf16_flops = 4.6e13,             /* tpu_info */
        .peak_int8_ops = 0,                    /* Cloud/tpu_info: n/a */
        .ici_topology = "2D torus",            /* SB: v2/v3 4 nearest neighbours */
        .scoped_vmem_default = 0,              /* scoped: not found */
        .uncertain = 0,
        .notes = "v2 HBM bandwidth and peak FLOP/s come from JAX's tpu_info table only.",
    },
    {
        .name = "v3",
        .aliases = "tpuv3",
        .device_kind = "TPU v3",
        .generation = 3,
        .hbm_bytes_per_chip = 32 * GIB,        /* Cloud "32 GiB"; tpu_info 34.4e9 */
        .hbm_bytes_per_device = 16 * GIB,      /* printed "16 GiB/core"; no megacore (tpu_info) */
        .usable_hbm_bytes = 1548 * GIB / 100,  /* OOM "Used 64.00G of 15.48G" (jax #7502) */
        .hbm_bw_bytes_per_s = 900000000000ull, /* Cloud/SB 900 GBps; tpu_info 8.25e11 */
        .vmem_bytes = 16 * MIB,                /* tpu_info */
        .smem_bytes = 16 * KIB,                /* tpu_info */
        .cmem_bytes = 0,                       /* tpu_info */
        .tensorcores_per_chip = 2,             /* Cloud v3 page */
        .tensorcores_per_device = 1,           /* tpu_info megacore "no" */
        .mxu_dim = 128,                        /* Cloud MXU definition */
        .mxus_per_core = 2,                    /* Cloud v3 page */
        .peak_bf16_flops = 123e12,             /* Cloud "123 teraflops"; SB 1.4e14 */
        .peak_int8_ops = 0,                    /* Cloud n/a; SB lists 1.4e14 */
        .ici_topology = "2D torus",            /* Cloud "2D torus", 1024 chips */
        .scoped_vmem_default = 0,              /* scoped: not found */
        .uncertain = CHIP_F_HBM_BW | CHIP_F_BF16 | CHIP_F_INT8,
        .notes = "Sources conflict (server/planner/SOURCES.md#conflicts): HBM bandwidth 900 GB/s "
                 "(Cloud, Scaling "
                 "Book) vs 8.25e11 (tpu_info); bf16 peak 123 TFLOP/s (Cloud, used here) vs "
                 "1.4e14 (Scaling Book, tpu_info); int8 n/a on Cloud but 1.4e14 in the "
                 "Scaling Book.",
    },
    {
        .name = "v4",
        .aliases = "tpuv4,v4p",
        .device_kind = "TPU v4",
        .generation = 4,
        .hbm_bytes_per_chip = 32 * GIB, /* Cloud "32 GiB" */
        .hbm_bytes_per_device =
            32 * GIB, /* megacore: the device is the chip (tpu_info, conflicts) */
        .usable_hbm_bytes = 3075 * GIB / 100, /* printed "30.75G", reserved 1.25G (EasyDeL #166) */
        .hbm_bw_bytes_per_s = 1200000000000ull, /* Cloud 1200 GBps; SB 1.2e12 */
        .vmem_bytes = 16 * MIB,                 /* tpu_info */
        .smem_bytes = 1 * MIB,                  /* tpu_info */
        .cmem_bytes = 134000000ull,             /* tpu_info 134e6 per chip */
        .tensorcores_per_chip = 2,              /* Cloud v4 page */
        .tensorcores_per_device = 2,            /* tpu_info megacore "yes" */
        .mxu_dim = 128,                         /* tpu_info */
        .mxus_per_core = 4,                     /* Cloud v4 page */
        .peak_bf16_flops = 275e12,              /* Cloud "275 teraflops" */
        .peak_int8_ops = 275e12,                /* Cloud "bf16 or int8"; tpu_info lists 0 */
        .ici_topology = "3D torus",             /* Cloud 3D mesh/torus, 4096 chips */
        .scoped_vmem_default = 0,               /* scoped: v4 default not found */
        .uncertain = CHIP_F_CMEM | CHIP_F_INT8,
        .notes = "CMEM 134e6 B is JAX tpu_info's figure, which a third-party measurement calls "
                 "an estimate (128 MiB measured). int8: Cloud says 275 TOP/s, tpu_info lists "
                 "none.",
    },
    {
        .name = "v5e",
        .aliases = "v5litepod,v5lite,tpuv5e,tpuv5lite",
        .device_kind = "TPU v5 lite", /* tpu_info ("TPU v5e"/"TPU v5 lite") */
        .generation = 5,
        .hbm_bytes_per_chip = 16 * GIB,        /* Cloud 16 GB; OOM 17179869184 B limit = 16 GiB */
        .hbm_bytes_per_device = 16 * GIB,      /* one TensorCore per chip (tpu_info) */
        .usable_hbm_bytes = 1575 * GIB / 100,  /* printed "15.75G" (GKE samples PR #1467) */
        .hbm_bw_bytes_per_s = 819000000000ull, /* Cloud 819 GBps */
        .vmem_bytes = 128 * MIB,               /* tpu_info; SB "128 MiB on TPU v5e" */
        .smem_bytes = 1 * MIB,                 /* tpu_info */
        .cmem_bytes = 0,                       /* tpu_info */
        .tensorcores_per_chip = 1,             /* Cloud, tpu_info */
        .tensorcores_per_device = 1,
        .mxu_dim = 128,                  /* tpu_info */
        .mxus_per_core = 4,              /* Cloud, tpu_info */
        .peak_bf16_flops = 197e12,       /* Cloud 197 TFLOPs */
        .peak_int8_ops = 393e12,         /* Cloud 393 TOPs */
        .ici_topology = "2D torus",      /* Cloud, 256 chips */
        .scoped_vmem_default = 16 * MIB, /* scoped: "limit 16.00M" (pytorch/xla #6611) */
        .uncertain = CHIP_F_SCOPED_VMEM | CHIP_F_LAYOUT,
        .notes = "Scoped VMEM default 16 MiB is read from a 2024 error message, not documented. "
                 "Default tiles are assumed: no v5e memory report was found. One XLA sample "
                 "shows an allocation limit of exactly 16 GiB; the 15.75G usable figure is "
                 "the runtime's printed capacity.",
    },
    {
        .name = "v5p",
        .aliases = "tpuv5p,tpuv5",
        .device_kind = "TPU v5", /* tpu_info ("TPU v5"/"TPU v5p") */
        .generation = 5,
        .hbm_bytes_per_chip = 96 * GIB,         /* SB "96GB"; tpu_info 103e9 B; Cloud "95 GiB" */
        .hbm_bytes_per_device = 96 * GIB,       /* megacore: device = chip (tpu_info) */
        .usable_hbm_bytes = 9574 * GIB / 100,   /* printed / OOM "95.74G", gen inferred */
        .hbm_bw_bytes_per_s = 2765000000000ull, /* Cloud 2765 GBps */
        .vmem_bytes = 64 * MIB,                 /* tpu_info */
        .smem_bytes = 1 * MIB,                  /* tpu_info */
        .cmem_bytes = 0,                        /* tpu_info */
        .tensorcores_per_chip = 2,              /* Cloud, tpu_info */
        .tensorcores_per_device = 2,            /* tpu_info megacore "yes" */
        .mxu_dim = 128,                         /* tpu_info */
        .mxus_per_core = 4,                     /* Cloud, tpu_info */
        .peak_bf16_flops = 459e12,              /* Cloud 459 TFLOPs */
        .peak_int8_ops = 918e12,                /* tpu_info, SB 9.18e14 */
        .ici_topology = "3D torus",             /* Cloud, 8960 chips */
        .scoped_vmem_default = 0,               /* scoped: v5p default not found */
        .uncertain = CHIP_F_HBM | CHIP_F_USABLE_HBM | CHIP_F_HBM_BW | CHIP_F_LAYOUT,
        .notes = "HBM sources conflict (server/planner/SOURCES.md#conflicts): 95 GB / 95 GiB "
                 "(Cloud), 96GB (Scaling "
                 "Book), 103e9 B (tpu_info); 96 GiB is used. Usable 95.74G comes from an XLA "
                 "error sample whose generation is inferred. HBM bandwidth: 2765 GB/s (Cloud) "
                 "vs 2.46e12-2.8e12 elsewhere. Default tiles are assumed.",
    },
    {
        .name = "v6e",
        .aliases = "trillium,v6lite,tpuv6e,tpuv6lite",
        .device_kind = "TPU v6 lite", /* tpu_info ("TPU v6e"/"TPU v6 lite") */
        .generation = 6,
        .hbm_bytes_per_chip = 32 * GIB,         /* Cloud 32 GB; tpu_info 34.4e9 B = 32 GiB */
        .hbm_bytes_per_device = 32 * GIB,       /* one TensorCore per chip */
        .usable_hbm_bytes = 3125 * GIB / 100,   /* printed "31.25G" (gen not stated) */
        .hbm_bw_bytes_per_s = 1600000000000ull, /* Cloud 1600 GBps (also 1640/1638) */
        .vmem_bytes = 128 * MIB,                /* tpu_info */
        .smem_bytes = 1 * MIB,                  /* tpu_info */
        .cmem_bytes = 0,                        /* tpu_info */
        .tensorcores_per_chip = 1,              /* Cloud, tpu_info */
        .tensorcores_per_device = 1,
        .mxu_dim = 256,                  /* tpu_info, SB "256x256 MXU" */
        .mxus_per_core = 2,              /* tpu_info; Cloud mostly 2, one snapshot 4 */
        .peak_bf16_flops = 918e12,       /* Cloud 918 TFLOPs */
        .peak_int8_ops = 1836e12,        /* Cloud 1836 TOPs */
        .ici_topology = "2D torus",      /* Cloud, 256 chips */
        .scoped_vmem_default = 32 * MIB, /* scoped: "default 32MiB" (tpu-inference #3407) */
        .uncertain =
            CHIP_F_USABLE_HBM | CHIP_F_HBM_BW | CHIP_F_MXU | CHIP_F_SCOPED_VMEM | CHIP_F_LAYOUT,
        .notes = "Usable 31.25G comes from reports that do not state the generation. HBM "
                 "bandwidth snapshots differ (1600/1640/1638 GB/s). MXUs per core: 2 "
                 "(tpu_info) but one Cloud snapshot says 4. Scoped VMEM default is read from "
                 "an error message. Default tiles are assumed.",
    },
    {
        .name = "v7",
        .aliases = "tpu7x,ironwood,tpu7,v7x",
        .device_kind = "TPU7x", /* tpu_info ("TPU7", "TPU7x") */
        .generation = 7,
        .hbm_bytes_per_chip = 192 * GIB,        /* Cloud "192 GiB"; tpu_info 206e9 B */
        .hbm_bytes_per_device = 96 * GIB,       /* conflicts: each TC is a device, half the HBM */
        .usable_hbm_bytes = 96 * GIB,           /* printed: "device HBM limit should be 96" (no OOM
                                                   report; tpu-inference PR #903) */
        .hbm_bw_bytes_per_s = 7380000000000ull, /* Cloud 7380 GB/s */
        .vmem_bytes = 64 * MIB,      /* tpu_info; conflicts "treat 64 MiB as the safe value" */
        .smem_bytes = 1 * MIB,       /* tpu_info */
        .cmem_bytes = 0,             /* tpu_info */
        .tensorcores_per_chip = 2,   /* Cloud "two TensorCores" */
        .tensorcores_per_device = 1, /* tpu_info megacore "no"; conflicts */
        .mxu_dim = 256,              /* tpu_info */
        .mxus_per_core = 2,          /* tpu_info; Cloud does not publish it */
        .peak_bf16_flops = 2307e12,  /* Cloud 2307 TFLOPs */
        .peak_int8_ops = 0,          /* Cloud/tpu_info: int8 not listed (FP8 4614e12) */
        .ici_topology = "not stated (9216-chip pod)", /* Cloud */
        .scoped_vmem_default = 32 * MIB, /* scoped: "scoped alloc 33.56M vs 32.00M limit" */
        .uncertain = CHIP_F_HBM | CHIP_F_USABLE_HBM | CHIP_F_VMEM | CHIP_F_CORES | CHIP_F_MXU |
                     CHIP_F_INT8 | CHIP_F_ICI | CHIP_F_SCOPED_VMEM | CHIP_F_LAYOUT,
        .notes = "Per-device HBM 96 GiB assumes each of the 2 TensorCores is one JAX device "
                 "(server/planner/SOURCES.md#conflicts); usable HBM is that figure with no runtime "
                 "reserve "
                 "subtracted, since no v7 OOM report was found. VMEM: 64 MiB (tpu_info, the "
                 "safe value) though reports claim 128 MiB. MXU count, int8 (FP8 4.6e15 "
                 "listed instead) and ICI topology are not published. Scoped VMEM default is "
                 "read from an error message. Default tiles are assumed (bf16 "
                 "T(16,128)(2,1) per tpu_info).",
    },
};

#define NCHIPS (sizeof(chips) / sizeof(chips[0]))

size_t chip_count(void)
{
    return NCHIPS;
}

const struct chip *chip_at(size_t i)
{
    return i < NCHIPS ? &chips[i] : NULL;
}

/* Does the comma-separated list contain name (case-insensitive)? */
static int alias_match(const char *list, const char *name, size_t len)
{
    const char *p = list;

    while (*p != '\0') {
        const char *q = p;
        while (*q != '\0' && *q != ',')
            q++;
        if ((size_t)(q - p) == len && strncasecmp(p, name, len) == 0)
            return 1;
        p = *q == ',' ? q + 1 : q;
    }
    return 0;
}

const struct chip *chip_find(const char *name)
{
    size_t len;

    if (name == NULL)
        return NULL;
    for (len = 0; name[len] != '\0'; len++)
        ;
    for (size_t i = 0; i < NCHIPS; i++)
        if (strcasecmp(chips[i].name, name) == 0 || alias_match(chips[i].aliases, name, len) ||
            strcasecmp(chips[i].device_kind, name) == 0)
            return &chips[i];
    return NULL;
}

/* v5e: the generation the team treats as the most common target, and the newest one whose
 * usable HBM (15.75G) is attested by a real runtime report (printed). */
const struct chip *chip_default(void)
{
    return &chips[3];
}

const char *chip_names(void)
{
    return "v2, v3, v4, v5e (v5litepod), v5p, v6e (trillium), v7 (tpu7x, ironwood)";
}

const char *chip_field_name(unsigned bit)
{
    switch (bit) {
    case CHIP_F_HBM:
        return "hbm";
    case CHIP_F_USABLE_HBM:
        return "usable_hbm";
    case CHIP_F_HBM_BW:
        return "hbm_bandwidth";
    case CHIP_F_VMEM:
        return "vmem";
    case CHIP_F_SMEM:
        return "smem";
    case CHIP_F_CMEM:
        return "cmem";
    case CHIP_F_CORES:
        return "tensorcores";
    case CHIP_F_MXU:
        return "mxu";
    case CHIP_F_BF16:
        return "peak_bf16";
    case CHIP_F_INT8:
        return "peak_int8";
    case CHIP_F_ICI:
        return "ici_topology";
    case CHIP_F_SCOPED_VMEM:
        return "scoped_vmem_default";
    case CHIP_F_LAYOUT:
        return "default_layout";
    }
    return NULL;
}
