/*
 * layout.c - TPU tiled layouts: the default tile XLA:TPU picks, and padded byte sizes.
 *
 * Sizes follow XLA's ShapeUtil::ArraySize (openxla/xla xla/shape_util.cc, summarised in
 * server/planner/SOURCES.md#array-size): only the first tile pads; it rounds the k-th most
 * minor *physical* dimension up to the k-th last tile dimension, a missing dimension (scalar,
 * or 1-D with a 2-D tile) counting as 1; major dimensions are never padded; the count is
 * rounded up to L(n); E(n) sets the stored element width, else the type's byte width.
 *
 * Default tiles come from the table `rules` below. Each row names its source. A row is
 * "confirmed" only for the generations and element types that real XLA:TPU out-of-memory
 * reports show (server/planner/SOURCES.md#report-rules and
 * server/planner/SOURCES.md#tiles-per-dtype: v2, v3 and v4 only); everything
 * else is an assumption and the row carries the sentence the output prints.
 */
#include "planner/layout.h"

#include <stdio.h>
#include <string.h>

#include "planner/arith.h"

#define DT(t)       (1ull << (t))
#define GEN(lo, hi) ((uint8_t)(((1u << ((hi) + 1)) - 1) & ~((1u << (lo)) - 1)))

struct rule {
    const char *name;
    uint8_t ntiles;
    int32_t tiles[3][2]; /* {a,b} 2-D, {n,0} 1-D */
    uint8_t e_bits;      /* E(n), 0 = none */
    uint8_t gens;        /* GEN() mask where those reports confirm it */
    uint64_t seen;       /* DT() mask of element types seen with this tile in real reports */
    const char *note;    /* the assumption sentence when not confirmed for this dtype */
};

static const char gen_note[] =
    "This default tiling is seen in real XLA:TPU memory reports from v2-v4 only; it is "
    "assumed unchanged on this generation (no report from v5e or later was found).";

#define SEEN32 (DT(DT_F32) | DT(DT_S32) | DT(DT_U32))

enum rule_id {
    /* rank >= 2 */
    R_32_T2,
    R_32_T4,
    R_32_T8,
    R_16_T4,
    R_16_T8,
    R_16_T16,
    R_8_T8,
    R_8_T32,
    R_PRED_E32,
    R_PRED_PACKED,
    R_4BIT,
    R_2BIT,
    R_64BIT,
    R_128BIT,
    /* rank 1 */
    R1_32_256,
    R1_32_512,
    R1_32_1024,
    R1_32_512_GAP,
    R1_32_1024_GAP,
    R1_16_512,
    R1_16_1024,
    R1_PRED_E32_256,
    R1_PRED_E32_1024,
    R1_PRED_PACKED,
    R1_8,
    R1_4BIT,
    R1_2BIT,
    R1_WIDE,
    /* rank 0 */
    R0_32_256,
    R0_32_128,
    R0_16_512,
    R0_16_256,
    R0_8_1024,
    R0_8_512,
    R0_PRED_E32,
    R0_SUB_1024,
    R0_SUB_512,
    R0_WIDE_256,
    R0_WIDE_128,
    R_TOKEN,
    R_COUNT
};

/* Assumption sentences, printed with the rules below that use them. */
static const char note_16_t16[] =
    "TPU7x tiles 16-bit arrays T(16,128)(2,1) by default according to JAX's tpu_info; no v7 "
    "memory report was found to confirm it.";
static const char note_8_t8[] =
    "8-bit tiling T(8,128)(4,1) is seen for u8 only; s8 and fp8 are assumed to tile alike "
    "(XLA may also pick T(32,128)(4,1), server/planner/SOURCES.md#tiles-per-dtype).";
static const char note_8_t32[] =
    "On v7, 8-bit arrays are assumed to take the large T(32,128)(4,1) tile (the "
    "conservative choice; XLA's pick is a closed heuristic).";
static const char note_pred_e32[] =
    "pred is stored as 32-bit words on v2/v3 (older reports); not confirmed for this "
    "element type.";
static const char note_pred_packed[] =
    "pred is assumed packed 8-bit (T(8,128)(4,1), as newer reports show) from v4 on; older "
    "reports (v2/v3) show 32-bit E(32) storage.";
static const char note_4bit[] =
    "4-bit tiling T(8,128)(8,1)E(4) comes from XLA HLO text, not a memory report.";
static const char note_2bit[] =
    "2-bit tiling is assumed by analogy with 4-bit (8 rows, packed into 32-bit words); "
    "never observed.";
static const char note_64bit[] =
    "64-bit and c64 arrays are assumed to tile T(8,128) like 32-bit ones; never observed in "
    "a TPU memory report.";
static const char note_128bit[] =
    "c128 arrays are assumed to tile T(8,128); never observed on TPU.";
static const char note_1d_32_512_gap[] =
    "1-D lengths 257-511 were never observed; they are assumed to take the next observed "
    "tile, T(512).";
static const char note_1d_32_1024_gap[] =
    "1-D lengths 513-1023 were never observed; they are assumed to take the next observed "
    "tile, T(1024).";
static const char note_1d_16_512[] =
    "Short 1-D 16-bit arrays are assumed to take T(512)(2,1) (the observed scalar tile); "
    "only T(1024)(128)(2,1) is seen for long ones.";
static const char note_1d_16_1024[] =
    "1-D 16-bit tiling T(1024)(128)(2,1) is seen in HLO dumps, not in a memory report.";
static const char note_1d_pred_packed[] =
    "pred is assumed packed 8-bit (T(1024)(128)(4,1), as a 2021 report shows) from v4 on.";
static const char note_1d_8[] =
    "1-D 8-bit arrays are assumed to tile like packed pred, T(1024)(128)(4,1).";
static const char note_1d_4bit[] =
    "1-D 4-bit tiling is assumed by analogy with packed pred; never observed.";
static const char note_1d_2bit[] =
    "1-D 2-bit tiling is assumed by analogy with packed pred; never observed.";
static const char note_1d_wide[] =
    "1-D 64/128-bit arrays are assumed to tile T(1024); never observed.";
static const char note_scalar_new[] =
    "Scalars are assumed to take the 512-byte tiles of newer HLO dumps (f32[]{:T(128)}, "
    "bf16[]{:T(256)}, pred[]{:T(512)}) from v5e on; their generation is not stated.";
static const char note_scalar_8bit_old[] =
    "8-bit scalars on v2-v4 are assumed to take a 1 KiB tile like the observed 32-bit and "
    "bf16 scalars.";
static const char note_scalar_pred_e32[] =
    "pred scalars on v2/v3 are assumed stored as 32-bit words like the observed 1-D "
    "pred[...]{0:T(256)E(32)}.";
static const char note_scalar_sub_old[] =
    "Sub-byte scalars are assumed to take a whole byte per element in a 1 KiB tile; never "
    "observed.";
static const char note_scalar_sub_new[] =
    "Sub-byte scalars are assumed to take a whole byte per element in a 512-byte tile; "
    "never observed.";
static const char note_scalar_wide[] =
    "64/128-bit scalars are assumed to take the 32-bit scalar tile; never observed.";

static const struct rule rules[R_COUNT] = {
    /* server/planner/SOURCES.md#compact-tiles (XLA-tiled: "second most minor
     * dimension size is 1 or 2 ... 2x128", "3 or 4 ... 4x128"); f32[29184,1,2560] 2.0x.
     * `seen` lists exactly the types the report table of server/planner/SOURCES.md#tiles-per-dtype
     * shows with each tile (f32/u32 T(2,128),
     * f32/s32 T(4,128)); another 32-bit type with that tile is labelled assumed. */
    [R_32_T2] =
        {"32bit-small-T(2,128)", 1, {{2, 128}}, 0, GEN(2, 4), DT(DT_F32) | DT(DT_U32), gen_note},
    [R_32_T4] =
        {"32bit-small-T(4,128)", 1, {{4, 128}}, 0, GEN(2, 4), DT(DT_F32) | DT(DT_S32), gen_note},
    /* server/planner/SOURCES.md#report-rules: 47/47 printed sizes; XLA-tiled "most common
     * format". The "table" below is the report table of server/planner/SOURCES.md#tiles-per-dtype.
     */
    [R_32_T8] = {"32bit-T(8,128)", 1, {{8, 128}}, 0, GEN(2, 4), SEEN32, gen_note},
    /* server/planner/SOURCES.md#compact-tiles: bf16 T(4,128)(2,1) for second-minor 1-4. */
    [R_16_T4] =
        {"16bit-small-T(4,128)(2,1)", 2, {{4, 128}, {2, 1}}, 0, GEN(2, 4), DT(DT_BF16), gen_note},
    /* table: bf16 T(8,128)(2,1) in every generation seen 2019-2024. */
    [R_16_T8] = {"16bit-T(8,128)(2,1)", 2, {{8, 128}, {2, 1}}, 0, GEN(2, 4), DT(DT_BF16), gen_note},
    /* server/planner/SOURCES.md#tiles-per-dtype: tpu_info get_sublane_tiling, large 2nd-minor
     * tiling is the default from TPU7x; real dump bf16[128,4096,352]{2,1,0:T(16,128)(2,1)}
     * (tpu-inference #1882). */
    [R_16_T16] = {"16bit-v7-T(16,128)(2,1)", 2, {{16, 128}, {2, 1}}, 0, 0, 0, note_16_t16},
    /* table: u8[256,384,1024]{2,1,0:T(8,128)(4,1)} (pytorch/xla #7813); XLA-tiled. */
    [R_8_T8] = {"8bit-T(8,128)(4,1)", 2, {{8, 128}, {4, 1}}, 0, GEN(2, 4), DT(DT_U8), note_8_t8},
    /* server/planner/SOURCES.md#tiles-per-dtype: T(32,128)(4,1) is the "large 2nd minor" 8-bit
     * tile; chosen on v7 as the conservative estimate. */
    [R_8_T32] = {"8bit-v7-T(32,128)(4,1)", 2, {{32, 128}, {4, 1}}, 0, 0, 0, note_8_t32},
    /* table, and rule 4 of server/planner/SOURCES.md#report-rules:
     * pred[64,512,2048]{2,1,0:T(8,128)E(32)} 4.0x (2019-2020 logs). */
    [R_PRED_E32] =
        {"pred-E(32)-T(8,128)E(32)", 1, {{8, 128}}, 32, GEN(2, 3), DT(DT_PRED), note_pred_e32},
    /* table: newer reports pack pred T(8,128)(4,1) (t5x 2023), generation not stated. */
    [R_PRED_PACKED] =
        {"pred-packed-T(8,128)(4,1)", 2, {{8, 128}, {4, 1}}, 0, 0, 0, note_pred_packed},
    /* server/planner/SOURCES.md#tiles-per-dtype: s4[...]{...:T(8,128)(8,1)E(4)} real HLO text, not
     * a memory report. */
    [R_4BIT] = {"4bit-T(8,128)(8,1)E(4)", 2, {{8, 128}, {8, 1}}, 4, 0, 0, note_4bit},
    [R_2BIT] = {"2bit-T(8,128)(16,1)E(2)", 2, {{8, 128}, {16, 1}}, 2, 0, 0, note_2bit},
    [R_64BIT] = {"64bit-T(8,128)", 1, {{8, 128}}, 0, 0, 0, note_64bit},
    [R_128BIT] = {"128bit-T(8,128)", 1, {{8, 128}}, 0, 0, 0, note_128bit},
    /* server/planner/SOURCES.md#1-d-arrays-and-scalars: 1-D 32-bit T(256) up to 256, T(512) at 512,
     * T(1024) from 1024 (XLA labels, not Size lines); lengths 257-511 and 513-1023 are assumed. */
    [R1_32_256] =
        {"1d-32bit-T(256)", 1, {{256, 0}}, 0, GEN(2, 4), DT(DT_F32) | DT(DT_U32), gen_note},
    [R1_32_512] = {"1d-32bit-T(512)", 1, {{512, 0}}, 0, GEN(2, 4), DT(DT_F32), gen_note},
    [R1_32_1024] = {"1d-32bit-T(1024)", 1, {{1024, 0}}, 0, GEN(2, 4), DT(DT_F32), gen_note},
    /* Lengths between the observed ones take the next observed tile: an assumption. */
    [R1_32_512_GAP] = {"1d-32bit-T(512)-between", 1, {{512, 0}}, 0, 0, 0, note_1d_32_512_gap},
    [R1_32_1024_GAP] = {"1d-32bit-T(1024)-between", 1, {{1024, 0}}, 0, 0, 0, note_1d_32_1024_gap},
    /* server/planner/SOURCES.md#1-d-arrays-and-scalars: bf16[6144]{0:T(1024)(128)(2,1)}
     * (SB-profiling, HLO tests); the short form mirrors the observed scalar tile
     * bf16[]{:T(512)(2,1)}. */
    [R1_16_512] = {"1d-16bit-T(512)(2,1)", 2, {{512, 0}, {2, 1}}, 0, 0, 0, note_1d_16_512},
    [R1_16_1024] =
        {"1d-16bit-T(1024)(128)(2,1)", 3, {{1024, 0}, {128, 0}, {2, 1}}, 0, 0, 0, note_1d_16_1024},
    /* table: pred 1-D T(256)E(32) / T(1024)E(32) in older logs. */
    [R1_PRED_E32_256] =
        {"1d-pred-E(32)-T(256)E(32)", 1, {{256, 0}}, 32, GEN(2, 3), DT(DT_PRED), gen_note},
    [R1_PRED_E32_1024] =
        {"1d-pred-E(32)-T(1024)E(32)", 1, {{1024, 0}}, 32, GEN(2, 3), DT(DT_PRED), gen_note},
    /* table: pred[2000]{0:T(1024)(128)(4,1)} (jax #7404, 2021), generation not stated. */
    [R1_PRED_PACKED] = {"1d-pred-packed-T(1024)(128)(4,1)",
                        3,
                        {{1024, 0}, {128, 0}, {4, 1}},
                        0,
                        0,
                        0,
                        note_1d_pred_packed},
    [R1_8] = {"1d-8bit-T(1024)(128)(4,1)", 3, {{1024, 0}, {128, 0}, {4, 1}}, 0, 0, 0, note_1d_8},
    [R1_4BIT] =
        {"1d-4bit-T(1024)(128)(8,1)E(4)", 3, {{1024, 0}, {128, 0}, {8, 1}}, 4, 0, 0, note_1d_4bit},
    [R1_2BIT] = {"1d-2bit-T(1024)(128)(16,1)E(2)",
                 3,
                 {{1024, 0}, {128, 0}, {16, 1}},
                 2,
                 0,
                 0,
                 note_1d_2bit},
    [R1_WIDE] = {"1d-wide-T(1024)", 1, {{1024, 0}}, 0, 0, 0, note_1d_wide},
    /* server/planner/SOURCES.md#1-d-arrays-and-scalars: f32[]{:T(256)}, s32, u32 scalars (v2-v4
       labels), 1 KiB. */
    [R0_32_256] = {"scalar-32bit-T(256)", 1, {{256, 0}}, 0, GEN(2, 4), SEEN32, gen_note},
    /* server/planner/SOURCES.md#1-d-arrays-and-scalars: s32[]{:T(128)}, f32[]{:T(128)} in newer HLO
       tests (512 B). */
    [R0_32_128] = {"scalar-32bit-T(128)", 1, {{128, 0}}, 0, 0, 0, note_scalar_new},
    [R0_16_512] =
        {"scalar-16bit-T(512)(2,1)", 2, {{512, 0}, {2, 1}}, 0, GEN(2, 4), DT(DT_BF16), gen_note},
    [R0_16_256] = {"scalar-16bit-T(256)", 1, {{256, 0}}, 0, 0, 0, note_scalar_new},
    [R0_8_1024] = {"scalar-8bit-T(1024)", 1, {{1024, 0}}, 0, 0, 0, note_scalar_8bit_old},
    [R0_8_512] = {"scalar-8bit-T(512)", 1, {{512, 0}}, 0, 0, 0, note_scalar_new},
    [R0_PRED_E32] =
        {"scalar-pred-E(32)-T(256)E(32)", 1, {{256, 0}}, 32, 0, 0, note_scalar_pred_e32},
    [R0_SUB_1024] = {"scalar-subbyte-T(1024)", 1, {{1024, 0}}, 0, 0, 0, note_scalar_sub_old},
    [R0_SUB_512] = {"scalar-subbyte-T(512)", 1, {{512, 0}}, 0, 0, 0, note_scalar_sub_new},
    [R0_WIDE_256] = {"scalar-wide-T(256)", 1, {{256, 0}}, 0, 0, 0, note_scalar_wide},
    [R0_WIDE_128] = {"scalar-wide-T(128)", 1, {{128, 0}}, 0, 0, 0, note_scalar_wide},
    /* token[] holds no data (XLA sizes it at 0 bytes). */
    [R_TOKEN] = {"token-no-storage", 0, {{0, 0}}, 0, GEN(2, 7), ~0ull, NULL},
};

/* Writes r's tiles and E(n) into sh. A tile {n, 0} is the 1-D tile (n). */
static void rule_apply(const struct rule *r, struct shape *sh)
{
    sh->ntiles = r->ntiles;
    for (unsigned t = 0; t < r->ntiles; t++) {
        struct tile *tl = &sh->tiles[t];
        tl->dims[0] = r->tiles[t][0];
        tl->dims[1] = r->tiles[t][1];
        tl->rank = r->tiles[t][1] == 0 ? 1 : 2;
    }
    sh->element_size_bits = r->e_bits;
}

enum dclass { C_PRED, C_2, C_4, C_8, C_16, C_32, C_64, C_128, C_TOKEN };

static enum dclass dclass_of(enum dtype t)
{
    if (t == DT_PRED)
        return C_PRED;
    if (t == DT_TOKEN)
        return C_TOKEN;
    switch (dtype_bits(t)) {
    case 2:
        return C_2;
    case 4:
        return C_4;
    case 8:
        return C_8;
    case 16:
        return C_16;
    case 32:
        return C_32;
    case 64:
        return C_64;
    default:
        return C_128;
    }
}

/* The rule for a shape whose physical order is already set. */
static enum rule_id rule_choose(const struct shape *sh, int gen)
{
    enum dclass c = dclass_of(sh->dtype);
    bool old = gen <= 4;

    if (c == C_TOKEN)
        return R_TOKEN;
    if (sh->rank == 0) {
        switch (c) {
        case C_32:
            return old ? R0_32_256 : R0_32_128;
        case C_16:
            return old ? R0_16_512 : R0_16_256;
        case C_PRED:
            return gen <= 3 ? R0_PRED_E32 : old ? R0_8_1024 : R0_8_512;
        case C_8:
            return old ? R0_8_1024 : R0_8_512;
        case C_2:
        case C_4:
            return old ? R0_SUB_1024 : R0_SUB_512;
        default:
            return old ? R0_WIDE_256 : R0_WIDE_128;
        }
    }
    if (sh->rank == 1) {
        int64_t n = sh->dims[0];
        switch (c) {
        case C_32:
            if (n <= 256)
                return R1_32_256;
            if (n < 512)
                return R1_32_512_GAP;
            if (n == 512)
                return R1_32_512;
            return n < 1024 ? R1_32_1024_GAP : R1_32_1024;
        case C_16:
            return n <= 512 ? R1_16_512 : R1_16_1024;
        case C_PRED:
            if (gen <= 3)
                return n <= 256 ? R1_PRED_E32_256 : R1_PRED_E32_1024;
            return R1_PRED_PACKED;
        case C_8:
            return R1_8;
        case C_4:
            return R1_4BIT;
        case C_2:
            return R1_2BIT;
        default:
            return R1_WIDE;
        }
    }
    /* The second-minor physical extent decides the compact tiles
     * (server/planner/SOURCES.md#compact-tiles). */
    int64_t sm = sh->dims[sh->minor_to_major[1]];
    switch (c) {
    case C_32:
        return sm <= 2 ? R_32_T2 : sm <= 4 ? R_32_T4 : R_32_T8;
    case C_16:
        return sm <= 4 ? R_16_T4 : gen >= 7 ? R_16_T16 : R_16_T8;
    case C_PRED:
        return gen <= 3 ? R_PRED_E32 : R_PRED_PACKED;
    case C_8:
        return gen >= 7 && sm > 8 ? R_8_T32 : R_8_T8;
    case C_4:
        return R_4BIT;
    case C_2:
        return R_2BIT;
    case C_64:
        return R_64BIT;
    default:
        return R_128BIT;
    }
}

static enum layout_confidence rule_confidence(const struct rule *r, enum dtype t, int gen,
                                              const char **assumption)
{
    if ((r->seen & DT(t)) && (r->gens & (1u << gen))) {
        *assumption = NULL;
        return LAYOUT_CONF_CONFIRMED;
    }
    *assumption = (r->seen & DT(t)) ? gen_note : r->note;
    if (*assumption == NULL)
        *assumption = gen_note;
    return LAYOUT_CONF_ASSUMED;
}

const char *layout_confidence_name(enum layout_confidence c)
{
    switch (c) {
    case LAYOUT_CONF_GIVEN:
        return "given";
    case LAYOUT_CONF_CONFIRMED:
        return "confirmed";
    default:
        return "assumed";
    }
}

static int chip_gen(const struct chip *chip)
{
    return chip != NULL && chip->generation >= 2 && chip->generation <= 7 ? chip->generation : 4;
}

/* Shared by layout_default and layout_resolve; *assumption may be NULL. */
static int layout_fill(struct shape *sh, const struct chip *chip, const char **rule,
                       enum layout_confidence *conf, const char **assumption, struct err *e)
{
    const char *dummy_a;
    const struct rule *r;
    int gen = chip_gen(chip);
    int rc;

    if (assumption == NULL)
        assumption = &dummy_a;
    if ((rc = shape_validate(sh, e)) != 0)
        return rc;
    if (sh->has_layout && (sh->ntiles > 0 || sh->element_size_bits != 0)) {
        if (rule != NULL)
            *rule = "given";
        if (conf != NULL)
            *conf = LAYOUT_CONF_GIVEN;
        *assumption = NULL;
        return 0;
    }
    if (!sh->has_layout) {
        /* XLA's default order: major-to-minor as written, {rank-1,...,0}. */
        for (unsigned i = 0; i < sh->rank; i++)
            sh->minor_to_major[i] = (uint8_t)(sh->rank - 1 - i);
        sh->has_layout = sh->dtype != DT_TOKEN;
    }
    r = &rules[rule_choose(sh, gen)];
    rule_apply(r, sh);
    if (rule != NULL)
        *rule = r->name;
    enum layout_confidence c = rule_confidence(r, sh->dtype, gen, assumption);
    if (conf != NULL)
        *conf = c;
    return 0;
}

int layout_default(struct shape *sh, const struct chip *chip, const char **rule,
                   enum layout_confidence *conf, struct err *e)
{
    return layout_fill(sh, chip, rule, conf, NULL, e);
}

/* ceil(count * bits / 8) without overflowing on the intermediate bit count. */
static int bytes_of(uint64_t count, uint64_t bits, uint64_t *out)
{
    uint64_t whole, rest = ((count % 8) * bits + 7) / 8;

    if (__builtin_mul_overflow(count / 8, bits, &whole))
        return -1;
    return __builtin_add_overflow(whole, rest, out) ? -1 : 0;
}

static int overflow(struct err *e, const char *what)
{
    return err_set(e, ERR_OVERFLOW, "shape",
                   "%s of the shape overflows 64 bits (sizes must stay within 2^63-1 bytes, "
                   "XLA's own int64 limit)",
                   what);
}

/* The logical dim at physical position k, counted from the minor-most. */
static unsigned dim_at(const struct shape *sh, unsigned k)
{
    return sh->has_layout ? sh->minor_to_major[k] : sh->rank - 1 - k;
}

/* layout_size on a shape already validated. */
static int size_of(const struct shape *sh, struct layout_info *out, struct err *e)
{
    const struct tile *t0 = NULL;
    uint64_t n = 1, count = 1;
    unsigned tr = 0, span;
    for (unsigned i = 0; i < sh->rank; i++) {
        if (__builtin_mul_overflow(n, (uint64_t)sh->dims[i], &n))
            return overflow(e, "element count");
        out->padded_dims[i] = sh->dims[i];
    }
    out->elements = n;
    if (bytes_of(n, dtype_bits(sh->dtype), &out->logical_bytes) != 0)
        return overflow(e, "logical byte size");

    if (sh->has_layout && sh->ntiles > 0) {
        t0 = &sh->tiles[0];
        tr = t0->rank;
    }
    span = tr > sh->rank ? tr : sh->rank;
    /* k counts physical dims from the minor-most; missing ones count as 1. */
    uint64_t ext[SHAPE_MAX_RANK], folded[SHAPE_MAX_RANK];
    for (unsigned k = 0; k < span; k++) {
        ext[k] = k < sh->rank ? (uint64_t)sh->dims[dim_at(sh, k)] : 1;
        folded[k] = 1;
    }
    /* A tile dim '*' folds its dim (and what was folded into it) into the next minor one
     * before tiling (xla/layout.h Tile::kCombineDimension); the minor-most has none. */
    for (unsigned k = tr > 0 ? tr - 1 : 0; k > 0; k--) {
        if (t0->dims[tr - 1 - k] != SHAPE_TILE_COMBINE)
            continue;
        if (__builtin_mul_overflow(ext[k - 1], ext[k], &ext[k - 1]) ||
            __builtin_mul_overflow(folded[k - 1], ext[k], &folded[k - 1]))
            return overflow(e, "combined extent");
        ext[k] = 1;
    }
    for (unsigned k = 0; k < span; k++) {
        bool combined = k < tr && t0->dims[tr - 1 - k] == SHAPE_TILE_COMBINE;
        if (k < tr && !combined && arith_round_up(ext[k], (uint64_t)t0->dims[tr - 1 - k], &ext[k]))
            return overflow(e, "padded extent");
        if (k < sh->rank) {
            /* a dim folded into a minor one keeps its extent; the one holding others its
             * share of the padded product, rounded up */
            uint64_t p = combined ? (uint64_t)sh->dims[dim_at(sh, k)]
                                  : (folded[k] > 0 ? (ext[k] + folded[k] - 1) / folded[k] : ext[k]);
            out->padded_dims[dim_at(sh, k)] = (int64_t)(p > INT64_MAX ? INT64_MAX : p);
        }
        if (__builtin_mul_overflow(count, ext[k], &count))
            return overflow(e, "padded element count");
    }
    if (sh->has_layout && sh->tail_align > 1 &&
        arith_round_up(count, (uint64_t)sh->tail_align, &count))
        return overflow(e, "padded element count");
    if (sh->has_layout && sh->element_size_bits != 0) {
        if (bytes_of(count, sh->element_size_bits, &out->padded_bytes) != 0)
            return overflow(e, "padded byte size");
    } else if (__builtin_mul_overflow(count, (uint64_t)dtype_bytes(sh->dtype),
                                      &out->padded_bytes)) {
        return overflow(e, "padded byte size");
    }
    /* XLA sizes shapes in int64 and refuses larger ones (ShapeUtil::MakeValidatedShape
     * checks the byte-width x extent product), so do we: callers may add sizes as int64. */
    if (out->padded_bytes > (uint64_t)INT64_MAX || out->logical_bytes > (uint64_t)INT64_MAX)
        return overflow(e, "byte size");
    /* Sub-byte types without E(n) take a byte each (XLA), so padded >= logical always. */
    out->padding_bytes =
        out->padded_bytes > out->logical_bytes ? out->padded_bytes - out->logical_bytes : 0;
    out->expansion =
        out->logical_bytes ? (double)out->padded_bytes / (double)out->logical_bytes : 1.0;
    return 0;
}

int layout_size(const struct shape *sh, struct layout_info *out, struct err *e)
{
    int rc = shape_validate(sh, e);

    return rc != 0 ? rc : size_of(sh, out, e);
}

int layout_resolve(const struct shape *sh, const struct chip *chip, struct shape *resolved,
                   struct layout_info *out, struct err *e)
{
    struct shape tmp;
    struct shape *w = &tmp;
    int rc;

    if (resolved != NULL && resolved != sh)
        w = resolved;
    /* Work in the caller's buffer when there is one: one copy of the shape, not two. */
    *w = *sh;
    if ((rc = layout_fill(w, chip, &out->rule, &out->confidence, &out->assumption, e)) != 0)
        return rc;
    if ((rc = size_of(w, out, e)) != 0)
        return rc;
    if (resolved != NULL && w != resolved)
        *resolved = *w;
    return 0;
}

char *layout_format_bytes(uint64_t bytes, char *buf, size_t cap)
{
    static const char units[] = "KMGTPE";
    unsigned u = 0;

    if (cap == 0)
        return buf;
    /* TSL HumanReadableNumBytes (tsl/platform/numbers.cc): integer-divide by 1024 while
     * the value is >= 1 MiB, then print value/1024.0; this truncation is why 1262254080 B
     * prints 1.17G, not 1.18G (server/planner/SOURCES.md#report-format). */
    if (bytes < 1024) {
        snprintf(buf, cap, "%uB", (unsigned)bytes);
        return buf;
    }
    while (bytes >= 1024u * 1024u) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, cap, u == 0 ? "%.1f%c" : "%.2f%c", (double)bytes / 1024.0, units[u]);
    return buf;
}
