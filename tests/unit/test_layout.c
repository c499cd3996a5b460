/*
 * test_layout.c - padded byte sizes against every real XLA:TPU report in the docs
 * (server/planner/SOURCES.md#report-rules, server/planner/SOURCES.md#tiles-per-dtype,
 * server/planner/SOURCES.md#real-reports and the entries around them), the TSL byte formatter,
 * default-layout rules per generation, and properties over random shapes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "planner/layout.h"
#include "rng.h"

/* Resolves text on chip (NULL = v4 rules) and returns the sizes; fails the test on error. */
static struct layout_info resolve(const char *text, const char *chip, struct shape *out)
{
    struct shape sh, res;
    struct layout_info li;
    struct err e;

    err_clear(&e);
    memset(&li, 0, sizeof(li));
    if (shape_parse(text, strlen(text), &sh, &e) != 0)
        fail_msg("parse %s: %s", text, e.msg);
    if (layout_resolve(&sh, chip ? chip_find(chip) : NULL, &res, &li, &e) != 0)
        fail_msg("resolve %s: %s", text, e.msg);
    if (out != NULL)
        *out = res;
    return li;
}

static const char *fmt(uint64_t b)
{
    static char buf[8][32];
    static int i;
    i = (i + 1) % 8;
    return layout_format_bytes(b, buf[i], sizeof(buf[i]));
}

static const char *fmtx(double x)
{
    static char buf[4][32];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof(buf[i]), "%.1fx", x);
    return buf[i];
}

/* One report entry: Size, Unpadded size, Extra (NULL when the report omits it), expansion. */
struct report {
    const char *shape;
    const char *size;
    const char *unpadded;
    const char *extra;
    const char *expansion;
    uint64_t exact; /* exact padded bytes when the source gives them, else 0 */
};

static const struct report reports[] = {
    /* server/planner/SOURCES.md#report-rules */
    {"s32[29360128,10]{1,0:T(8,128)}", "14.00G", "1.09G", "12.91G", "12.8x", 15032385536ull},
    {"f32[512,100,30000]{2,1,0:T(8,128)}", "5.97G", NULL, NULL, NULL, 0},
    {"f32[2000,5000]{1,0:T(8,128)}", "39.06M", "38.15M", "937.5K", "1.0x", 0},
    {"f32[246534,1280]{1,0:T(8,128)}", "1.17G", "1.17G", "10.0K", "1.0x", 1262264320ull},
    /* 3.1: order only, tiles from the T(8,128) rule */
    {"f32[128,256,896,18]{0,3,2,1}", "2.62G", NULL, NULL, NULL, 0},
    {"f32[1024,245,64]{1,2,0}", "64.00M", NULL, NULL, NULL, 0},
    /* 3.4 */
    {"pred[64,512,2048]{2,1,0:T(8,128)E(32)}", "256.00M", "64.00M", "192.00M", "4.0x", 0},
    /* 3.5 */
    {"f32[29184,1,2560]{2,1,0:T(2,128)}", "570.00M", "285.00M", "285.00M", "2.0x", 0},
    {"f32[4,256,256,64]{3,0,2,1:T(4,128)}", NULL, NULL, NULL, "2.0x", 0},
    {"bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}", NULL, NULL, NULL, "4.0x", 0},
    /* 3.6: old TF logs print no tile; T(8,128) reproduces them */
    {"f32[256,512,128,2]{3,2,1,0}", "8.00G", NULL, NULL, "64.0x", 0},
    {"f32[32,128,32,64]{3,0,2,1}", "64.00M", "32.00M", NULL, "2.0x", 0},
    {"f32[128,6]{1,0}", "64.0K", "3.0K", "61.0K", "21.3x", 65536},
    {"f32[128,3]{1,0}", "64.0K", NULL, NULL, NULL, 65536},
    /* 3.7: the one 1-D Size line (vmem) */
    {"u8[4096]{0}", "4.0K", "4.0K", NULL, "1.0x", 4096},
    /* server/planner/SOURCES.md#real-reports */
    {"s32[8388608,8,4]{2,1,0:T(8,128)}", "32.00G", "1.00G", NULL, "32.0x", 0},
    {"u32[12582912,1]{1,0:T(8,128)}", "6.00G", "48.00M", NULL, "128.0x", 0},
    {"s32[2048,1,128,128,4]{4,3,2,0,1:T(8,128)}", "16.00G", "512.00M", NULL, "32.0x", 0},
    {"bf16[128,4096,352]{2,1,0:T(16,128)(2,1)}", "384.00M", "352.00M", "32.00M", "1.1x", 0},
    /* table 5: u8 packed, no padding */
    {"u8[256,384,1024]{2,1,0:T(8,128)(4,1)}", "96.00M", "96.00M", NULL, "1.0x", 0},
    /* server/planner/SOURCES.md#usable-hbm: "Allocation (size=107374182400)" for
     * u8[327680,327680] (XLA-OOM) */
    {"u8[327680,327680]{1,0:T(8,128)(4,1)}", "100.00G", NULL, NULL, NULL, 107374182400ull},
    /* server/planner/SOURCES.md#vmem-errors: E1001 sample "size=134217728" for u8[134217728]{0} */
    {"u8[134217728]{0}", "128.00M", NULL, NULL, NULL, 134217728ull},
    /* server/planner/SOURCES.md#1-d-arrays-and-scalars: scalars and 1-D (tile-derived sizes) */
    {"f32[]{:T(256)}", "1.0K", "4B", NULL, NULL, 1024},
    {"bf16[]{:T(512)(2,1)}", "1.0K", NULL, NULL, NULL, 1024},
    {"s32[]{:T(256)S(6)}", "1.0K", NULL, NULL, NULL, 1024},
    {"s32[]{:T(128)}", "512B", NULL, NULL, NULL, 512},
    {"bf16[]{:T(256)}", "512B", NULL, NULL, NULL, 512},
    {"pred[]{:T(512)}", "512B", NULL, NULL, NULL, 512},
    {"f32[8]{0:T(256)}", "1.0K", NULL, NULL, NULL, 1024},
    {"u32[256]{0:T(256)}", "1.0K", NULL, NULL, NULL, 1024},
    {"f32[1024]{0:T(1024)}", "4.0K", NULL, NULL, NULL, 4096},
    {"pred[2000]{0:T(1024)(128)(4,1)}", "2.0K", NULL, NULL, NULL, 2048},
    {"pred[2000]{0:T(1024)E(32)}", "8.0K", NULL, NULL, NULL, 8192},
    {"bf16[6144]{0:T(1024)(128)(2,1)}", "12.0K", NULL, NULL, NULL, 12288},
    /* server/planner/SOURCES.md#tiled-notation to #compact-tiles there: real HLO text */
    {"f32[3,5]{1,0:T(2,2)}", "96B", "60B", "36B", "1.6x", 96},
    {"f32[32,1,1]{2,1,0:T(2,128)S(5)}", "32.0K", NULL, NULL, NULL, 32768},
    {"s4[8,32768,1,256]{3,1,0,2:T(64,128)(8,1)E(4)S(1)}", "32.00M", "32.00M", NULL, "1.0x", 0},
    {"s8[2,6144,2,256]{3,1,0,2:T(32,128)(4,1)S(1)}", "6.00M", NULL, NULL, NULL, 6291456},
    {"pred[2,6144,1,256]{3,1,0,2:T(8,128)(4,1)}", "3.00M", NULL, NULL, NULL, 3145728},
    {"bf16[8,1024,8192]{2,1,0:T(8,128)(2,1)}", "128.00M", NULL, NULL, NULL, 134217728},
    /* openxla/xla docs/tiled_layout.md: sub-tiles never pad, whatever their rank */
    {"bf16[32,256]{1,0:T(8,128)(2,1,1,1)}", "16.0K", "16.0K", NULL, "1.0x", 16384},
};

static void test_padded_sizes_match_the_real_reports(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
        const struct report *r = &reports[i];
        struct layout_info li = resolve(r->shape, "v4", NULL);
        print_message("%s -> %s (%s) %s\n", r->shape, fmt(li.padded_bytes), fmt(li.logical_bytes),
                      li.rule);
        if (r->size != NULL)
            assert_string_equal(fmt(li.padded_bytes), r->size);
        if (r->unpadded != NULL)
            assert_string_equal(fmt(li.logical_bytes), r->unpadded);
        if (r->extra != NULL)
            assert_string_equal(fmt(li.padding_bytes), r->extra);
        if (r->expansion != NULL)
            assert_string_equal(fmtx(li.expansion), r->expansion);
        if (r->exact != 0)
            assert_int_equal(li.padded_bytes, r->exact);
        assert_int_equal(li.padding_bytes, li.padded_bytes - li.logical_bytes);
    }
}

/* f32[246534,1280] has no layout in one report: the default must give the same answer. */
static void test_default_matches_reports(void **state)
{
    struct layout_info li;
    struct shape sh;
    char buf[SHAPE_MAX_TEXT];

    (void)state;
    li = resolve("f32[246534,1280]", "v4", &sh);
    assert_string_equal(fmt(li.padded_bytes), "1.17G");
    assert_int_equal(li.padding_bytes, 10240); /* exactly 2 padding rows: "10.0K" */
    assert_string_equal(li.rule, "32bit-T(8,128)");
    assert_int_equal(li.confidence, LAYOUT_CONF_CONFIRMED);
    assert_null(li.assumption);
    assert_true(shape_print(&sh, buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "f32[246534,1280]{1,0:T(8,128)}");

    li = resolve("f32[29184,1,2560]", "v3", &sh);
    assert_string_equal(fmt(li.padded_bytes), "570.00M");
    assert_string_equal(li.rule, "32bit-small-T(2,128)");
    li = resolve("bf16[2048,1,2048,128]{0,1,3,2}", "v4", &sh);
    assert_string_equal(li.rule, "16bit-small-T(4,128)(2,1)");
    assert_string_equal(fmtx(li.expansion), "4.0x");
    li = resolve("bf16[256,2048,4096]{2,1,0}", "v2", &sh);
    assert_string_equal(li.rule, "16bit-T(8,128)(2,1)");
    assert_int_equal(li.padded_bytes, 4ull << 30);
    li = resolve("pred[64,512,2048]", "v3", &sh);
    assert_string_equal(fmt(li.padded_bytes), "256.00M");
    assert_string_equal(li.rule, "pred-E(32)-T(8,128)E(32)");
    assert_int_equal(li.confidence, LAYOUT_CONF_CONFIRMED);
    li = resolve("s32[4,128,128,9]{3,0,2,1}", "v4", &sh);
    assert_string_equal(li.rule, "32bit-small-T(4,128)");
}

struct want {
    const char *shape;
    const char *chip;
    const char *printed;
    const char *rule;
    enum layout_confidence conf;
};

static const struct want defaults[] = {
    {"f32[2000,5000]", "v4", "f32[2000,5000]{1,0:T(8,128)}", "32bit-T(8,128)",
     LAYOUT_CONF_CONFIRMED},
    {"f32[2000,5000]", "v5e", "f32[2000,5000]{1,0:T(8,128)}", "32bit-T(8,128)",
     LAYOUT_CONF_ASSUMED},
    {"s32[7,3,4]", "v2", "s32[7,3,4]{2,1,0:T(4,128)}", "32bit-small-T(4,128)",
     LAYOUT_CONF_CONFIRMED},
    {"u32[9,2,5]", "v3", "u32[9,2,5]{2,1,0:T(2,128)}", "32bit-small-T(2,128)",
     LAYOUT_CONF_CONFIRMED},
    {"f32[9,5,5]", "v4", "f32[9,5,5]{2,1,0:T(8,128)}", "32bit-T(8,128)", LAYOUT_CONF_CONFIRMED},
    {"bf16[64,64]", "v4", "bf16[64,64]{1,0:T(8,128)(2,1)}", "16bit-T(8,128)(2,1)",
     LAYOUT_CONF_CONFIRMED},
    {"bf16[64,3,64]", "v4", "bf16[64,3,64]{2,1,0:T(4,128)(2,1)}", "16bit-small-T(4,128)(2,1)",
     LAYOUT_CONF_CONFIRMED},
    {"bf16[64,64]", "v7", "bf16[64,64]{1,0:T(16,128)(2,1)}", "16bit-v7-T(16,128)(2,1)",
     LAYOUT_CONF_ASSUMED},
    {"f16[64,64]", "v4", "f16[64,64]{1,0:T(8,128)(2,1)}", "16bit-T(8,128)(2,1)",
     LAYOUT_CONF_ASSUMED},
    {"u8[64,64]", "v4", "u8[64,64]{1,0:T(8,128)(4,1)}", "8bit-T(8,128)(4,1)",
     LAYOUT_CONF_CONFIRMED},
    {"s8[64,64]", "v4", "s8[64,64]{1,0:T(8,128)(4,1)}", "8bit-T(8,128)(4,1)", LAYOUT_CONF_ASSUMED},
    {"f8e4m3fn[64,64]", "v7", "f8e4m3fn[64,64]{1,0:T(32,128)(4,1)}", "8bit-v7-T(32,128)(4,1)",
     LAYOUT_CONF_ASSUMED},
    {"pred[64,64]", "v2", "pred[64,64]{1,0:T(8,128)E(32)}", "pred-E(32)-T(8,128)E(32)",
     LAYOUT_CONF_CONFIRMED},
    {"pred[64,64]", "v5e", "pred[64,64]{1,0:T(8,128)(4,1)}", "pred-packed-T(8,128)(4,1)",
     LAYOUT_CONF_ASSUMED},
    {"s4[64,64]", "v5e", "s4[64,64]{1,0:T(8,128)(8,1)E(4)}", "4bit-T(8,128)(8,1)E(4)",
     LAYOUT_CONF_ASSUMED},
    {"f64[64,64]", "v4", "f64[64,64]{1,0:T(8,128)}", "64bit-T(8,128)", LAYOUT_CONF_ASSUMED},
    {"f32[]", "v4", "f32[]{:T(256)}", "scalar-32bit-T(256)", LAYOUT_CONF_CONFIRMED},
    {"bf16[]", "v3", "bf16[]{:T(512)(2,1)}", "scalar-16bit-T(512)(2,1)", LAYOUT_CONF_CONFIRMED},
    {"f32[]", "v6e", "f32[]{:T(128)}", "scalar-32bit-T(128)", LAYOUT_CONF_ASSUMED},
    {"f32[18]", "v4", "f32[18]{0:T(256)}", "1d-32bit-T(256)", LAYOUT_CONF_CONFIRMED},
    {"f32[512]", "v4", "f32[512]{0:T(512)}", "1d-32bit-T(512)", LAYOUT_CONF_CONFIRMED},
    {"f32[2000]", "v4", "f32[2000]{0:T(1024)}", "1d-32bit-T(1024)", LAYOUT_CONF_CONFIRMED},
    {"f32[300]", "v4", "f32[300]{0:T(512)}", "1d-32bit-T(512)-between", LAYOUT_CONF_ASSUMED},
    {"f32[600]", "v4", "f32[600]{0:T(1024)}", "1d-32bit-T(1024)-between", LAYOUT_CONF_ASSUMED},
    {"f32[256]", "v4", "f32[256]{0:T(256)}", "1d-32bit-T(256)", LAYOUT_CONF_CONFIRMED},
    {"f32[1024]", "v4", "f32[1024]{0:T(1024)}", "1d-32bit-T(1024)", LAYOUT_CONF_CONFIRMED},
    {"pred[2000]", "v2", "pred[2000]{0:T(1024)E(32)}", "1d-pred-E(32)-T(1024)E(32)",
     LAYOUT_CONF_CONFIRMED},
    {"pred[2000]", "v4", "pred[2000]{0:T(1024)(128)(4,1)}", "1d-pred-packed-T(1024)(128)(4,1)",
     LAYOUT_CONF_ASSUMED},
    {"bf16[6144]", "v5p", "bf16[6144]{0:T(1024)(128)(2,1)}", "1d-16bit-T(1024)(128)(2,1)",
     LAYOUT_CONF_ASSUMED},
    {"f32[8,128]{1,0:T(8,128)}", "v7", "f32[8,128]{1,0:T(8,128)}", "given", LAYOUT_CONF_GIVEN},
    {"token[]", "v5e", "token[]", "token-no-storage", LAYOUT_CONF_CONFIRMED},
};

static void test_default_layouts_per_dtype_and_generation(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        const struct want *w = &defaults[i];
        struct shape sh;
        char buf[SHAPE_MAX_TEXT];
        struct layout_info li = resolve(w->shape, w->chip, &sh);
        assert_true(shape_print(&sh, buf, sizeof(buf)) > 0);
        print_message("%s on %s -> %s %s\n", w->shape, w->chip, buf, li.rule);
        assert_string_equal(buf, w->printed);
        assert_string_equal(li.rule, w->rule);
        assert_int_equal(li.confidence, w->conf);
        if (w->conf == LAYOUT_CONF_ASSUMED)
            assert_non_null(li.assumption);
        else
            assert_null(li.assumption);
    }
}

static void test_bytes_format_truncates_like_xla(void **state)
{
    char buf[32];

    (void)state;
    /* server/planner/SOURCES.md#report-format: truncation, not rounding */
    assert_string_equal(layout_format_bytes(1262254080ull, buf, sizeof(buf)), "1.17G");
    assert_string_equal(layout_format_bytes(0, buf, sizeof(buf)), "0B");
    assert_string_equal(layout_format_bytes(1023, buf, sizeof(buf)), "1023B");
    assert_string_equal(layout_format_bytes(1024, buf, sizeof(buf)), "1.0K");
    assert_string_equal(layout_format_bytes(960000, buf, sizeof(buf)), "937.5K");
    assert_string_equal(layout_format_bytes(1048575, buf, sizeof(buf)), "1024.0K");
    assert_string_equal(layout_format_bytes(1048576, buf, sizeof(buf)), "1.00M");
    assert_string_equal(layout_format_bytes(40960000, buf, sizeof(buf)), "39.06M");
    assert_string_equal(layout_format_bytes(1ull << 40, buf, sizeof(buf)), "1.00T");
    assert_string_equal(layout_format_bytes(UINT64_MAX, buf, sizeof(buf)), "16.00E");
    /* a too-small buffer is truncated, never overrun */
    assert_string_equal(layout_format_bytes(1262254080ull, buf, 3), "1.");
}

static void test_confidence_names_are_stable(void **state)
{
    (void)state;
    assert_string_equal(layout_confidence_name(LAYOUT_CONF_GIVEN), "given");
    assert_string_equal(layout_confidence_name(LAYOUT_CONF_CONFIRMED), "confirmed");
    assert_string_equal(layout_confidence_name(LAYOUT_CONF_ASSUMED), "assumed");
}

static void test_sizes_past_2_64_are_overflow_errors(void **state)
{
    struct shape sh;
    struct layout_info li;
    struct err e;
    const char *cases[] = {
        "f32[4294967296,4294967296]{1,0:T(8,128)}", /* 2^64 elements */
        "f32[9223372036854775807]{0}",              /* bytes past 2^64 */
        "f32[9223372036854775807]",                 /* default 1-D tile rounds past 2^63 */
        "u8[3037000499,3037000499,2]",              /* element product */
        "s32[4611686018427387904,1]{1,0:T(8,128)}", /* padded extent x 128 */
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err_clear(&e);
        assert_int_equal(shape_parse(cases[i], strlen(cases[i]), &sh, &e), 0);
        assert_int_equal(layout_resolve(&sh, chip_default(), NULL, &li, &e), ERR_OVERFLOW);
        assert_int_equal(e.code, ERR_OVERFLOW);
        assert_non_null(strstr(e.msg, "overflows 64 bits"));
    }
    /* the largest size that fits int64, as XLA requires, is computed, not refused */
    assert_int_equal(shape_parse("u8[9223372036854775807]{0}", 26, &sh, &e), 0);
    assert_int_equal(layout_size(&sh, &li, &e), 0);
    assert_int_equal(li.padded_bytes, (uint64_t)INT64_MAX);
    assert_int_equal(shape_parse("u8[4294967296,2147483647]{1,0}", 30, &sh, &e), 0);
    assert_int_equal(layout_size(&sh, &li, &e), 0);
    assert_int_equal(li.padded_bytes, 4294967296ull * 2147483647ull);
    /* ... but padding it to T(8,128) reaches 2^63 bytes: refused */
    assert_int_equal(shape_parse("u8[4294967296,2147483647]{1,0:T(8,128)}", 39, &sh, &e), 0);
    assert_int_equal(layout_size(&sh, &li, &e), ERR_OVERFLOW);
    /* one byte more than int64 is refused although it fits uint64 */
    assert_int_equal(shape_parse("u8[4294967296,4294967295]{1,0}", 30, &sh, &e), 0);
    assert_int_equal(layout_size(&sh, &li, &e), ERR_OVERFLOW);
    assert_non_null(strstr(e.msg, "2^63-1"));
}

/* A tile dim '*' folds its dim into the next minor one before tiling (xla/layout.h
 * Tile::kCombineDimension): f32[123,456,789]{2,1,0:T(2,*,128)} is tiled as [123, 456 x 789]
 * by (2,128): 456 x 789 = 359784 rounds up to 359808 (2811 x 128), 123 to 124, so
 * 124 x 359808 x 4 = 178464768 bytes against 123 x 456 x 789 x 4 = 177013728 logical. The
 * minor dim's padded extent is its share, ceil(359808 / 456) = 790. */
static void test_combined_tile_dims_fold_before_tiling(void **state)
{
    static const char s[] = "f32[123,456,789]{2,1,0:T(2,*,128)}";
    struct shape sh;
    struct layout_info li;
    struct err e;

    (void)state;
    assert_int_equal(shape_parse(s, strlen(s), &sh, &e), 0);
    assert_int_equal(layout_size(&sh, &li, &e), 0);
    assert_int_equal(li.logical_bytes, 177013728);
    assert_int_equal(li.padded_bytes, 178464768);
    assert_int_equal(li.padded_dims[0], 124);
    assert_int_equal(li.padded_dims[1], 456);
    assert_int_equal(li.padded_dims[2], 790);
    /* a '*' in the minor-most place has nothing to fold into: it tiles by 1 */
    assert_int_equal(shape_parse("f32[3,5]{1,0:T(8,*)}", 20, &sh, &e), 0);
    assert_int_equal(layout_size(&sh, &li, &e), 0);
    assert_int_equal(li.padded_bytes, 8 * 5 * 4);
}

static void test_size_rejects_invalid(void **state)
{
    struct shape sh;
    struct layout_info li;
    struct err e;

    (void)state;
    assert_int_equal(shape_parse("f32[8,128]{1,0:T(8,128)}", 24, &sh, &e), 0);
    sh.minor_to_major[1] = 1; /* not a permutation */
    assert_int_equal(layout_size(&sh, &li, &e), ERR_INVALID);
    assert_int_equal(shape_parse("f32[8,128]{1,0:T(8,128)}", 24, &sh, &e), 0);
    sh.dims[0] = -1;
    assert_int_equal(layout_size(&sh, &li, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "negative"));
    assert_int_equal(shape_parse("f32[8,128]{1,0:T(8,128)}", 24, &sh, &e), 0);
    sh.tiles[0].rank = 3;
    sh.tiles[0].dims[2] = 1;
    assert_int_equal(layout_size(&sh, &li, &e), ERR_INVALID);
    assert_int_equal(shape_parse("f32[8,128]{1,0:T(8,128)}", 24, &sh, &e), 0);
    sh.dtype = DT_INVALID;
    assert_int_equal(layout_default(&sh, NULL, NULL, NULL, &e), ERR_INVALID);
}

static void test_null_chip_aliases_and_untiled_edges_are_handled(void **state)
{
    struct shape sh, copy;
    struct layout_info li;
    struct err e;
    const char *rule = NULL;
    enum layout_confidence conf = LAYOUT_CONF_GIVEN;
    char buf[SHAPE_MAX_TEXT];

    (void)state;
    /* NULL chip: the v4 rules, which the reports confirm (bf16[7,7,3,64] is in table 5
     * with T(4,128)(2,1)) */
    assert_int_equal(shape_parse("bf16[7,7,3,64]", 14, &sh, &e), 0);
    assert_int_equal(layout_default(&sh, NULL, &rule, &conf, &e), 0);
    assert_string_equal(rule, "16bit-small-T(4,128)(2,1)");
    assert_int_equal(conf, LAYOUT_CONF_CONFIRMED);
    /* rule/conf may be NULL; a given tiled layout is left alone */
    copy = sh;
    assert_int_equal(layout_default(&sh, chip_find("v7"), NULL, NULL, &e), 0);
    assert_memory_equal(&sh, &copy, sizeof(sh));
    /* resolved may alias the input */
    assert_int_equal(shape_parse("f32[3,300]", 10, &sh, &e), 0);
    assert_int_equal(layout_resolve(&sh, chip_find("v2"), &sh, &li, &e), 0);
    assert_true(shape_print(&sh, buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "f32[3,300]{1,0:T(4,128)}");
    assert_int_equal(li.padded_bytes, 4 * 384 * 4);
    /* a memory space without tiles keeps the space and gets the default tiles */
    assert_int_equal(shape_parse("f32[8,100]{1,0:S(1)}", 20, &sh, &e), 0);
    assert_int_equal(layout_resolve(&sh, chip_find("v4"), &copy, &li, &e), 0);
    assert_true(shape_print(&copy, buf, sizeof(buf)) > 0);
    assert_string_equal(buf, "f32[8,100]{1,0:T(8,128)S(1)}");
    /* no layout at all: layout_size sizes it untiled, like XLA's ByteSizeOfElements */
    assert_int_equal(shape_parse("s4[3,5]", 7, &sh, &e), 0);
    assert_int_equal(layout_size(&sh, &li, &e), 0);
    assert_int_equal(li.padded_bytes, 15); /* one byte per s4 without E(4) */
    assert_int_equal(li.logical_bytes, 8); /* 60 bits */
    /* zero-size arrays */
    li = resolve("f32[0,1000]", "v4", NULL);
    assert_int_equal(li.padded_bytes, 0);
    assert_true(li.expansion == 1.0);
    /* L(n) rounds the element count */
    li = resolve("f32[3]{0:T(256)L(1024)}", "v4", NULL);
    assert_int_equal(li.padded_bytes, 4096);
    /* unknown chip generations fall back to v4 rules rather than crash */
    struct chip odd = *chip_find("v5e");
    odd.generation = 99;
    assert_int_equal(shape_parse("f32[64,64]", 10, &sh, &e), 0);
    assert_int_equal(layout_resolve(&sh, &odd, NULL, &li, &e), 0);
    assert_string_equal(li.rule, "32bit-T(8,128)");
}

/* The random shapes' stream (rng.h), reset by random_shape(0) so failures reproduce. */
static uint64_t rng;

enum { RANDOM_SHAPES = 20000 };

/* The i-th of RANDOM_SHAPES random shapes (i from 0, in order: each test walks the same
 * sequence from the same seed) and a chip to size it on: rank 0-5, dims up to 5000 (major)
 * or 300, half of them with a random permutation as the given layout. */
static const struct chip *random_shape(int i, struct shape *sh)
{
    static const enum dtype types[] = {DT_PRED, DT_S4,  DT_S8,  DT_U8,  DT_BF16, DT_F16,    DT_F32,
                                       DT_S32,  DT_U32, DT_F64, DT_C64, DT_C128, DT_F8E5M2, DT_U2};
    if (i == 0)
        rng = 0x9e3779b97f4a7c15ull;
    const struct chip *chip = chip_at(rng_xorshift64(&rng) % chip_count());
    memset(sh, 0, sizeof(*sh));
    sh->dtype = types[rng_xorshift64(&rng) % (sizeof(types) / sizeof(types[0]))];
    sh->rank = (uint8_t)(rng_xorshift64(&rng) % 6);
    for (unsigned d = 0; d < sh->rank; d++)
        sh->dims[d] = (int64_t)(rng_xorshift64(&rng) % (d == 0 ? 5000 : 300));
    if (rng_xorshift64(&rng) % 2) {
        sh->has_layout = true;
        for (unsigned d = 0; d < sh->rank; d++)
            sh->minor_to_major[d] = (uint8_t)d;
        for (unsigned d = sh->rank; d > 1; d--) {
            unsigned j = (unsigned)(rng_xorshift64(&rng) % d);
            uint8_t t = sh->minor_to_major[d - 1];
            sh->minor_to_major[d - 1] = sh->minor_to_major[j];
            sh->minor_to_major[j] = t;
        }
    }
    return chip;
}

/* Resolves every random shape on its chip and calls check with the shape as given, the
 * resolved shape and its sizes. */
static void for_each_random_shape(void (*check)(const struct shape *sh, const struct shape *res,
                                                const struct layout_info *li,
                                                const struct chip *chip))
{
    for (int it = 0; it < RANDOM_SHAPES; it++) {
        struct shape sh, res;
        struct layout_info li;
        struct err e;
        const struct chip *chip = random_shape(it, &sh);

        assert_int_equal(layout_resolve(&sh, chip, &res, &li, &e), 0);
        check(&sh, &res, &li, chip);
    }
}

static void pads_up_never_down(const struct shape *sh, const struct shape *res,
                               const struct layout_info *li, const struct chip *chip)
{
    (void)res;
    (void)chip;
    assert_true(li->padded_bytes >= li->logical_bytes);
    assert_int_equal(li->padding_bytes, li->padded_bytes - li->logical_bytes);
    for (unsigned i = 0; i < sh->rank; i++)
        assert_true(li->padded_dims[i] >= sh->dims[i]);
}

/* Padding only adds: no padded dim is below the logical one, and padding_bytes is exactly
 * padded - logical. */
static void test_random_shapes_pad_up_never_down(void **state)
{
    (void)state;
    for_each_random_shape(pads_up_never_down);
}

static void pads_to_whole_tiles(const struct shape *sh, const struct shape *res,
                                const struct layout_info *li, const struct chip *chip)
{
    (void)sh;
    (void)chip;
    if (res->ntiles > 0) {
        uint64_t tile_elems = 1, tile_bits;
        for (unsigned k = 0; k < res->tiles[0].rank; k++)
            tile_elems *= (uint64_t)res->tiles[0].dims[k];
        tile_bits = tile_elems *
                    (res->element_size_bits ? res->element_size_bits : dtype_bytes(res->dtype) * 8);
        assert_int_equal((li->padded_bytes * 8) % tile_bits, 0);
    }
}

/* A tiled shape's padded size is a whole number of its first tile. */
static void test_random_shapes_pad_to_whole_tiles(void **state)
{
    (void)state;
    for_each_random_shape(pads_to_whole_tiles);
}

static void prints_parses_and_sizes_back(const struct shape *sh, const struct shape *res,
                                         const struct layout_info *li, const struct chip *chip)
{
    struct shape back;
    struct layout_info li2;
    struct err e;
    char buf[SHAPE_MAX_TEXT], buf2[SHAPE_MAX_TEXT];

    (void)sh;
    int n = shape_print(res, buf, sizeof(buf));
    assert_true(n > 0);
    assert_int_equal(shape_parse(buf, (size_t)n, &back, &e), 0);
    assert_int_equal(shape_print(&back, buf2, sizeof(buf2)), n);
    assert_string_equal(buf, buf2);
    assert_int_equal(layout_resolve(&back, chip, NULL, &li2, &e), 0);
    assert_int_equal(li2.padded_bytes, li->padded_bytes);
    assert_string_equal(li2.rule, res->dtype == DT_TOKEN ? li->rule : "given");
}

/* The resolved shape, printed, parses back to itself (print . parse = id on what we print),
 * and sizing the printed shape gives the same bytes from the layout it now carries ("given"). */
static void test_random_resolved_shapes_print_parse_and_size_back(void **state)
{
    (void)state;
    for_each_random_shape(prints_parses_and_sizes_back);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_padded_sizes_match_the_real_reports),
        cmocka_unit_test(test_default_matches_reports),
        cmocka_unit_test(test_default_layouts_per_dtype_and_generation),
        cmocka_unit_test(test_bytes_format_truncates_like_xla),
        cmocka_unit_test(test_confidence_names_are_stable),
        cmocka_unit_test(test_sizes_past_2_64_are_overflow_errors),
        cmocka_unit_test(test_size_rejects_invalid),
        cmocka_unit_test(test_null_chip_aliases_and_untiled_edges_are_handled),
        cmocka_unit_test(test_combined_tile_dims_fold_before_tiling),
        cmocka_unit_test(test_random_shapes_pad_up_never_down),
        cmocka_unit_test(test_random_shapes_pad_to_whole_tiles),
        cmocka_unit_test(test_random_resolved_shapes_print_parse_and_size_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
