/*
 * test_xla_oom.c - XLA's own reports as input: the out-of-memory report (xla_oom.h) and
 * XLA's memory figures (xla_memstats.h), read from real pastes (tests/data/xla/oom, SOURCE.md
 * there names each issue) to the values they print, every error with its line:column, the
 * limit; then planned: each listed allocation sized by our rules against the report's Size
 * and Unpadded size, and the figures beside a program (packing.xla_report).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/plan.h"
#include "planner/xla_memstats.h"
#include "planner/xla_oom.h"

#include "slurp.h"

#define OOM_DIR "tests/data/xla/oom/"

static char *read_sample(const char *name, size_t *len)
{
    char path[256];
    char *text;

    snprintf(path, sizeof(path), OOM_DIR "%s", name);
    if ((text = slurp(path, len)) == NULL)
        fail_msg("cannot read %s", path);
    return text;
}

static void parse_sample(const char *name, struct xla_oom *r)
{
    size_t len;
    char *text = read_sample(name, &len);
    struct err e;

    if (xla_oom_parse(text, len, 1000, r, &e) != ERR_OK)
        fail_msg("%s: %s", name, e.msg);
    free(text);
}

/* s as the report prints it and its value: the printed figure in binary units (K = 2^10,
 * M = 2^20, G = 2^30), rounded to the nearest byte. */
static void assert_size(const struct xla_oom_size *s, const char *text, uint64_t bytes)
{
    assert_string_equal(s->text, text);
    assert_int_equal(s->bytes, bytes);
}

/* Every real paste: its form, space, header figures and entries as printed. */
static void test_real_pastes_parse(void **state)
{
    static const struct {
        const char *file;
        enum xla_oom_form form;
        const char *space, *used, *capacity, *exceeded;
        size_t nallocs, cut;
    } cases[] = {
        {"easydel-166.txt", XLA_OOM_CAPACITY, "hbm", "63.80G", "30.75G", "33.05G", 2, 1},
        {"easydel-142.txt", XLA_OOM_CAPACITY, "hbm", "30.21G", "15.48G", "14.73G", 1, 0},
        {"colabfold-62.txt", XLA_OOM_CAPACITY, "hbm", "9.08G", "7.48G", "1.60G", 2, 1},
        {"flowpm-27.txt", XLA_OOM_CAPACITY, "hbm", "41.74G", "16.00G", "25.74G", 1, 1},
        {"tensor2tensor-1807.txt", XLA_OOM_CAPACITY, "hbm", "8.83G", "8.00G", "848.88M", 1, 1},
        {"tensorflow-tpu-598.txt", XLA_OOM_CAPACITY, "hbm", "18.56G", "16.00G", "2.56G", 0, 0},
        {"enzyme-jax-2422.txt", XLA_OOM_CAPACITY, "hbm", "215.17G", "31.25G", "183.92G", 0, 0},
        {"vllm-tpu-inference-2803.txt", XLA_OOM_CAPACITY, "vmem", "76.58M", "64.00M", "12.58M", 0,
         0},
        {"pytorch-xla-9524.txt", XLA_OOM_CAPACITY, "vmem", "32.42M", "16.00M", "16.42M", 1, 0},
        {"pytorch-xla-3041.txt", XLA_OOM_LIST, "hbm", "", "", "", 1, 1},
        {"pytorch-xla-1965-a.txt", XLA_OOM_LIST, "", "", "", "", 1, 1},
        {"pytorch-xla-1965-b.txt", XLA_OOM_LIST, "", "", "", "", 1, 0},
        {"trax-1343.txt", XLA_OOM_LIST, "hbm", "", "", "", 2, 0},
        {"jax-7822.txt", XLA_OOM_EARLY, "hbm", "3.47E", "14.49G", "", 0, 0},
        {"xla-docs-error-1001.txt", XLA_OOM_ALLOCATION, "vmem", "128.00M", "64.00M", "64.00M", 1,
         0},
        {"xla-docs-oom-debugging.txt", XLA_OOM_ALLOCATION, "hbm", "100.00G", "16.00G", "84.00G", 1,
         0},
        {"lwm-60.txt", XLA_OOM_CAPACITY, "hbm", "21.95G", "15.48G", "6.47G", 0, 0},
        {"easydel-78.txt", XLA_OOM_CAPACITY, "hbm", "21.90G", "7.48G", "14.42G", 0, 0},
        {"flax-1733.txt", XLA_OOM_LIST, "hbm", "", "", "", 1, 1},
        {"tensorflow-26893.txt", XLA_OOM_CAPACITY, "vmem", "", "", "", 0, 0},
        /* 34.82G + 174.10G: 37387690312 + 186938451558 bytes, printed as XLA prints */
        {"xla-docs-error-1000-sparsecore.txt", XLA_OOM_SPARSECORE, "hbm", "208.92G", "95.74G",
         "113.18G", 0, 0},
    };

    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct xla_oom r;
        parse_sample(cases[k].file, &r);
        if (r.form != cases[k].form || strcmp(r.space, cases[k].space) != 0 ||
            strcmp(r.used.text, cases[k].used) != 0 ||
            strcmp(r.capacity.text, cases[k].capacity) != 0 ||
            strcmp(r.exceeded.text, cases[k].exceeded) != 0 || r.nallocs != cases[k].nallocs ||
            r.cut != cases[k].cut)
            fail_msg("%s: form %d space %s used %s of %s by %s, %zu allocations (%zu cut)",
                     cases[k].file, (int)r.form, r.space, r.used.text, r.capacity.text,
                     r.exceeded.text, r.nallocs, r.cut);
        xla_oom_free(&r);
    }
}

/* The 2019 form (flowpm#27): a glog prefix, unknown arguments and output, "reserved" in the
 * program block, the old HLO temp statistics; sizes in bytes, binary. */
static void test_flowpm_values(void **state)
{
    struct xla_oom r;
    const struct xla_oom_alloc *a;

    (void)state;
    parse_sample("flowpm-27.txt", &r);
    assert_int_equal(r.header_line, 2);
    assert_size(&r.used, "41.74G", 44817983734ull); /* 41.74 x 2^30 = 44817983733.76 */
    assert_size(&r.capacity, "16.00G", 17179869184ull);
    assert_size(&r.total, "41.74G", 44817983734ull);
    assert_size(&r.reserved, "528.00M", 553648128);
    assert_true(r.arguments_unknown);
    assert_true(r.output_unknown);
    assert_size(&r.program_reserved, "4.0K", 4096);
    assert_size(&r.global, "29.82M", 31268536);     /* 29.82 x 2^20 = 31268536.32 */
    assert_size(&r.temp, "41.19G", 44227425731ull); /* 41.19 x 2^30 = 44227425730.56 */
    assert_string_equal(r.temp_utilization, "24.2");
    assert_string_equal(r.temp_unpadded.text, "");
    assert_size(&r.fragmentation, "293.84M", 308113572); /* 293.84 x 2^20 = 308113571.84 */
    a = &r.allocs[0];
    assert_int_equal(a->rank, 1);
    assert_size(&a->size, "32.00G", 34359738368ull);
    assert_size(&a->unpadded, "1.00G", 1073741824);
    assert_size(&a->extra, "31.00G", 33285996544ull);
    assert_string_equal(a->expansion, "32.0");
    assert_string_equal(a->op_type, "FloorMod");
    assert_string_equal(a->op_name, "slicewise_79/cic_update/FloorMod");
    assert_null(a->source_file);
    assert_string_equal(a->shape, "s32[8388608,8,4]{2,1,0:T(8,128)}");
    assert_string_equal(a->name, "copy.40488");
    assert_null(a->type); /* the paste ends before it */
    assert_true(a->cut);
    xla_oom_free(&r);
}

/* The 2024 form (EasyDeL#142): trailing blanks, the Unpadded/Padded statistics, an Operator
 * line with a source location, a short label. */
static void test_easydel_values(void **state)
{
    struct xla_oom r;
    const struct xla_oom_alloc *a;

    (void)state;
    parse_sample("easydel-142.txt", &r);
    assert_size(&r.reserved, "530.00M", 555745280);
    assert_size(&r.arguments, "15.90G", 17072495002ull); /* 15.9 x 2^30 = 17072495001.6 */
    assert_size(&r.output, "1.0K", 1024);
    assert_size(&r.output_shared, "0B", 0);
    assert_size(&r.global, "481.0K", 492544);
    assert_size(&r.scoped, "512.0K", 524288);
    assert_size(&r.temp_unpadded, "14.25G", 15300820992ull);
    assert_size(&r.temp_padded, "14.25G", 15300820992ull);
    assert_size(&r.fragmentation, "62.60M", 65640858); /* 62.6 x 2^20 = 65640857.6 */
    a = &r.allocs[0];
    assert_string_equal(a->source_file, "/tmp/ipykernel_1363/19855715.py");
    assert_int_equal(a->source_line, 3);
    assert_string_equal(a->name, "convert.15982");
    assert_string_equal(a->label, "convert.15982 = convert(param.72)");
    assert_string_equal(a->type, "HLO temp");
    assert_false(a->cut);
    xla_oom_free(&r);
}

/* LWM#60: the header's second half on its own line, and the question after the usage
 * block ends the report. flax#1733: an op_name cut off inside its quotes, the entry cut
 * off without a shape, the padded HLO temp (1.2% utilization). */
static void test_rewrapped_and_cut_pastes(void **state)
{
    struct xla_oom r;

    (void)state;
    parse_sample("lwm-60.txt", &r);
    assert_string_equal(r.exceeded.text, "6.47G");
    assert_string_equal(r.total.text, "22.47G");
    assert_string_equal(r.arguments.text, "0B");
    xla_oom_free(&r);
    parse_sample("flax-1733.txt", &r);
    assert_string_equal(r.temp_utilization, "1.2");
    assert_string_equal(r.temp_unpadded.text, "140.25M");
    assert_string_equal(r.temp_padded.text, "10.96G");
    assert_string_equal(r.allocs[0].op_type, "conv_general_dilated");
    assert_int_equal(strncmp(r.allocs[0].op_name, "jit(conv_general_dilated)/", 26), 0);
    assert_null(r.allocs[0].shape);
    assert_true(r.allocs[0].cut);
    xla_oom_free(&r);
}

/* The error code (Enzyme-JAX#2422), the E1001 allocation form (openxla/xla's
 * docs/errors/error_1001.md), E1000's SparseCore form (error_1000.md) and the early abort
 * (jax#7822). */
static void test_header_forms(void **state)
{
    struct xla_oom r;

    (void)state;
    parse_sample("enzyme-jax-2422.txt", &r);
    assert_int_equal(r.code, 1000);
    assert_string_equal(r.code_name, "CompileTimeHbmOom");
    xla_oom_free(&r);
    parse_sample("xla-docs-error-1001.txt", &r);
    assert_int_equal(r.used.bytes, 134217728);
    assert_int_equal(r.capacity.bytes, 67108864);
    assert_string_equal(r.allocs[0].shape, "u8[134217728]{0}");
    assert_string_equal(
        r.allocs[0].name,
        "ragged_latency_optimized_all_gather_lhs_contracting_gated_matmul_kernel.2");
    xla_oom_free(&r);
    parse_sample("xla-docs-error-1000-sparsecore.txt", &r);
    assert_string_equal(r.tensorcore.text, "34.82G");
    assert_string_equal(r.sparsecore.text, "174.10G");
    assert_int_equal(r.used.bytes, 224326141870ull);
    assert_int_equal(r.capacity.bytes, 102800042230ull);
    xla_oom_free(&r);
    parse_sample("jax-7822.txt", &r);
    assert_string_equal(r.used.text, "3.47E");
    assert_true(r.used.bytes >= 4000637620985759006ull && r.used.bytes <= 4000637620985759008ull);
    assert_int_equal(r.capacity.bytes, 15558519030ull);
    xla_oom_free(&r);
}

/* Hand-written variants of the printed forms: the header's second half on the next line
 * (LWM#60 shows users re-wrapping it), a "# " comment prefix, the scoped VMEM form. */
static void test_rewrapped_and_scoped(void **state)
{
    static const char wrapped[] =
        "RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. Used 21.95G of 15.48G hbm.\n"
        " Exceeded hbm capacity by 6.47G.\n"
        "# Largest program allocations in hbm:\n"
        "#  1. Size: 4.0K\n"
        "#     Shape: f32[1024]{0:T(1024)}\n"
        "#     Unpadded size: 4.0K\n"
        "#     ==========================\n";
    static const char scoped[] =
        "RESOURCE_EXHAUSTED: E1001: CompileTimeScopedVmemOom: Ran out of memory in memory space "
        "vmem while allocating on stack for %k = bf16[8]{0} custom-call(), "
        "custom_call_target=\"tpu_custom_call\"\n"
        "Scoped allocation with size 31.07M and limit 16.00M exceeded scoped vmem limit by "
        "15.07M.\n";
    struct xla_oom r;
    struct err e;

    (void)state;
    assert_int_equal(xla_oom_parse(wrapped, strlen(wrapped), 10, &r, &e), ERR_OK);
    assert_string_equal(r.exceeded.text, "6.47G");
    assert_int_equal(r.nallocs, 1);
    assert_false(r.allocs[0].cut);
    xla_oom_free(&r);
    assert_int_equal(xla_oom_parse(scoped, strlen(scoped), 10, &r, &e), ERR_OK);
    assert_int_equal(r.form, XLA_OOM_STACK);
    assert_int_equal(r.code, 1001);
    assert_string_equal(r.code_name, "CompileTimeScopedVmemOom");
    assert_string_equal(r.space, "vmem");
    assert_string_equal(r.used.text, "31.07M");
    assert_string_equal(r.capacity.text, "16.00M");
    assert_string_equal(r.exceeded.text, "15.07M");
    assert_non_null(r.stack_for);
    assert_int_equal(strncmp(r.stack_for, "%k = bf16[8]{0}", 15), 0);
    xla_oom_free(&r);
}

static void expect_error(const char *text, size_t max, int code, const char *where, const char *msg)
{
    struct xla_oom r;
    struct err e;

    assert_int_equal(xla_oom_parse(text, strlen(text), max, &r, &e), code);
    if (where != NULL)
        assert_string_equal(e.where, where);
    if (strstr(e.msg, msg) == NULL)
        fail_msg("\"%s\" does not say \"%s\"", e.msg, msg);
    assert_null(r.allocs);
}

static void test_errors_name_line_and_column(void **state)
{
    (void)state;
    expect_error("Ran out of memory in memory space hbm. Used 9.08Q of 7.48G hbm.\n", 10,
                 ERR_INVALID, "line 1:45", "expected the bytes used");
    expect_error("Ran out of memory in memory space hbm. Used 9.08G or 7.48G hbm.\n", 10,
                 ERR_INVALID, "line 1:50", "expected \" of \"");
    expect_error("Ran out of memory in memory space hbm. Used 1.00G of 1.00G hbm.\n"
                 "Total vmem usage >= 1.00G:\n",
                 10, ERR_INVALID, "line 2:7", "expected memory space \"hbm\"");
    expect_error("Largest program allocations in hbm:\n"
                 "  1. Size: 1.00G\n"
                 "     Shape: f32[2]{0}\n"
                 "     Bogus: 1\n",
                 10, ERR_INVALID, "line 4:6", "expected a line of allocation 1");
    expect_error("Largest program allocations in hbm:\n"
                 "  1. Size: 1.00G\n"
                 "     Operator: op_name\n",
                 10, ERR_INVALID, "line 3:23", "expected key=\"value\"");
    expect_error("Largest program allocations in hbm:\n"
                 "  1. Size: 1.00G\n"
                 "     Unpadded size: lots\n",
                 10, ERR_INVALID, "line 3:21", "expected the unpadded size");
    expect_error("Program hbm requirement 1.00G:\n"
                 "    HLO temp 1.00G (95.4% use)\n",
                 10, ERR_INVALID, "line 2:25", "% utilization");
    expect_error("hello\n", 10, ERR_INVALID, "line 1:1", "expected an XLA out-of-memory report");
    expect_error("Largest program allocations in hbm:\n"
                 "  1. Size: 1.00G\n"
                 "  2. Size: 1.00G\n",
                 1, ERR_LIMIT, NULL, "more than 1 allocations");
}

static void test_detect(void **state)
{
    static const char hlo[] = "HloModule m\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n";
    size_t len;
    char *text = read_sample("pytorch-xla-1965-a.txt", &len);

    (void)state;
    assert_true(xla_oom_detect(text, len));
    free(text);
    assert_false(xla_oom_detect(hlo, strlen(hlo)));
    assert_true(xla_oom_size_matches(&(struct xla_oom_size){1, "1B"}, 1));
    assert_false(xla_oom_size_matches(&(struct xla_oom_size){0, ""}, 0));
    /* the printer truncates: f32[246534,1280] is 1,262,254,080 B, printed 1.17G */
    assert_true(xla_oom_size_matches(&(struct xla_oom_size){0, "1.17G"}, 1262254080));
    assert_false(xla_oom_size_matches(&(struct xla_oom_size){0, "1.18G"}, 1262254080));
}

/* ---- XLA's memory figures ----------------------------------------------------------- */

static void parse_stats(const char *name, struct xla_memstats *ms)
{
    size_t len;
    char *text = read_sample(name, &len);
    struct err e;

    if (xla_memstats_parse(text, len, ms, &e) != ERR_OK)
        fail_msg("%s: %s", name, e.msg);
    free(text);
}

static void test_memstats(void **state)
{
    struct xla_memstats ms;
    struct err e;
    static const char bad[] = "x\nCompiledMemoryStats(temp_size_in_bytes=x)";

    (void)state;
    parse_stats("jax-18954.memstats.txt", &ms); /* 5 fields, jax 0.4.20 */
    assert_int_equal(ms.form, XLA_MS_COMPILED);
    assert_true(ms.have[XLA_MS_GENERATED_CODE] && !ms.have[XLA_MS_HOST_TEMP]);
    assert_int_equal(ms.bytes[XLA_MS_GENERATED_CODE], 2856);
    parse_stats("xla-10803.memstats.txt", &ms); /* 10 fields over 11 "#" lines */
    assert_int_equal(ms.bytes[XLA_MS_ARGUMENT], 131072);
    assert_int_equal(ms.bytes[XLA_MS_ALIAS], 65536);
    assert_int_equal(ms.bytes[XLA_MS_TEMP], 512);
    assert_true(ms.have[XLA_MS_HOST_TEMP]);
    assert_int_equal(ms.precision, 0);
    parse_stats("maxtext-docs.memstats.txt", &ms); /* 1 decimal of 2^30 */
    assert_int_equal(ms.form, XLA_MS_MAXTEXT);
    assert_int_equal(ms.bytes[XLA_MS_TOTAL], 107803679130ull); /* 100.4 x 2^30 */
    assert_int_equal(ms.bytes[XLA_MS_TEMP], 60022167962ull);   /* 55.9 x 2^30 */
    assert_int_equal(ms.bytes[XLA_MS_ARGUMENT], 47781511168ull);
    assert_int_equal(ms.precision, (1u << 30) / 20);
    parse_stats("maxtext-docs-old.memstats.txt", &ms);
    assert_int_equal(ms.bytes[XLA_MS_OUTPUT], 47781511168ull);
    assert_int_equal(xla_memstats_parse(bad, strlen(bad), &ms, &e), ERR_INVALID);
    assert_string_equal(e.where, "line 2:40");
}

/* ---- planned ------------------------------------------------------------------------ */

static json_object *jget(json_object *o, const char *k1, const char *k2)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, k1, &v))
        fail_msg("no %s", k1);
    if (k2 != NULL && !json_object_object_get_ex(v, k2, &v))
        fail_msg("no %s.%s", k1, k2);
    return v;
}

static json_object *run(const char *input, size_t len, const struct plan_opts *o)
{
    char *json = NULL;
    size_t jlen = 0;
    struct err e;
    json_object *r;

    err_clear(&e);
    if (plan_run(input, len, o, NULL, &json, &jlen, NULL, NULL, &e) != ERR_OK)
        fail_msg("plan_run: %s", e.msg);
    r = json_tokener_parse(json);
    free(json);
    assert_non_null(r);
    return r;
}

/* Every listed allocation with a shape, planned alone: our padded and logical bytes against
 * the report's Size and Unpadded size, exact. The layouts are the report's own (XLA's),
 * the byte counts ours (server/planner/SOURCES.md#report-rules). */
static void test_padding_matches_the_reports(void **state)
{
    static const struct {
        const char *file;
        size_t index;
        const char *size;
        uint64_t padded, logical;
    } cases[] = {
        {"easydel-166.txt", 0, "2.00G", 2147483648ull, 2147483648ull},
        {"easydel-142.txt", 0, "1.46G", 1572864000ull, 1572864000ull},
        {"colabfold-62.txt", 0, "124.00M", 130023424ull, 128450560ull},
        {"colabfold-62.txt", 1, "64.00M", 67108864ull, 64225280ull},
        {"flowpm-27.txt", 0, "32.00G", 34359738368ull, 1073741824ull},
        {"tensor2tensor-1807.txt", 0, "4.00G", 4294967296ull, 4294967296ull},
        {"pytorch-xla-1965-a.txt", 0, "6.00G", 6442450944ull, 50331648ull},
        {"pytorch-xla-1965-b.txt", 0, "96.00M", 100663296ull, 100663296ull},
        {"pytorch-xla-3041.txt", 0, "570.00M", 597688320ull, 597688320ull},
        {"pytorch-xla-9524.txt", 0, "64.0K", 65536ull, 3072ull},
        {"trax-1343.txt", 0, "1.00G", 1073741824ull, 1073741824ull},
        {"trax-1343.txt", 1, "1.00G", 1073741824ull, 1073741824ull},
        {"xla-docs-error-1001.txt", 0, "128.00M", 134217728ull, 134217728ull},
        {"xla-docs-oom-debugging.txt", 0, "100.00G", 107374182400ull, 107374182400ull},
    };
    struct plan_opts o = {.strategies = "xla-spatial"};

    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        size_t len;
        char *text = read_sample(cases[k].file, &len);
        json_object *r = run(text, len, &o), *x = jget(r, "packing", "xla_report");
        json_object *a = json_object_array_get_idx(jget(x, "allocations", NULL), cases[k].index);
        json_object *ours = jget(a, "ours", NULL);
        assert_string_equal(json_object_get_string(jget(r, "model", "source_format")), "xla-oom");
        assert_string_equal(json_object_get_string(jget(x, "source", NULL)), "standalone");
        assert_string_equal(json_object_get_string(jget(a, "size", "text")), cases[k].size);
        if ((uint64_t)json_object_get_int64(jget(ours, "padded_bytes", NULL)) != cases[k].padded ||
            (uint64_t)json_object_get_int64(jget(ours, "logical_bytes", NULL)) !=
                cases[k].logical ||
            !json_object_get_boolean(jget(a, "size_matches", NULL)))
            fail_msg("%s #%zu: ours %s", cases[k].file, cases[k].index,
                     json_object_to_json_string(ours));
        assert_int_equal(json_object_get_int(jget(x, "mismatches", NULL)), 0);
        json_object_put(r);
        free(text);
    }
}

/* One allocation's fields as the result carries them (flowpm#27): op_name, source, type as
 * tag, the fix, and our default layout beside XLA's. */
static void test_allocation_fields(void **state)
{
    struct plan_opts o = {.strategies = "xla-spatial"};
    size_t len;
    char *text = read_sample("colabfold-62.txt", &len);
    json_object *r = run(text, len, &o), *x = jget(r, "packing", "xla_report");
    json_object *a = json_object_array_get_idx(jget(x, "allocations", NULL), 1);
    json_object *t = json_object_array_get_idx(jget(r, "tensors", NULL), 1);

    (void)state;
    assert_string_equal(json_object_get_string(jget(a, "name", NULL)), "broadcast.82209");
    assert_string_equal(json_object_get_string(jget(a, "source", NULL)),
                        "/usr/local/lib/python3.7/dist-packages/alphafold/model/mapping.py:177");
    assert_string_equal(json_object_get_string(jget(a, "allocation_type", NULL)), "HLO temp");
    assert_string_equal(json_object_get_string(jget(a, "expansion", NULL)), "1.0");
    /* f32[1024,245,64]{1,2,0}: XLA made 245 minor (64.00M); our default keeps 64 minor,
     * padded to 128 lanes: 1024 x 248 x 128 x 4 = 130023424 */
    assert_int_equal(
        json_object_get_int64(jget(jget(a, "ours", NULL), "default_padded_bytes", NULL)),
        130023424);
    assert_string_equal(json_object_get_string(jget(jget(a, "fix", NULL), "action", NULL)),
                        "fold-minor");
    assert_string_equal(json_object_get_string(jget(t, "name", NULL)), "broadcast.82209");
    assert_string_equal(json_object_get_string(jget(t, "kind", NULL)), "temp");
    assert_non_null(strstr(json_object_get_string(jget(t, "op_name", NULL)), "broadcast_in_dim"));
    assert_string_equal(json_object_get_string(json_object_array_get_idx(jget(t, "tags", NULL), 0)),
                        "HLO temp");
    /* the entry without a label is named by its number */
    assert_string_equal(json_object_get_string(jget(
                            json_object_array_get_idx(jget(r, "tensors", NULL), 0), "name", NULL)),
                        "allocation.1");
    json_object_put(r);
    free(text);
}

/* The HBM capacity the report prints is the model's own (flowpm#27: "of 16.00G hbm"); a
 * caller's capacity wins; a VMEM report's capacity is not HBM's, and is left out. */
static void test_report_capacity(void **state)
{
    struct plan_opts o = {.strategies = "xla-spatial"};
    size_t len;
    char *text = read_sample("flowpm-27.txt", &len);
    json_object *r = run(text, len, &o);

    (void)state;
    assert_int_equal(json_object_get_int64(jget(r, "packing", "capacity_bytes")), 17179869184ll);
    assert_false(json_object_get_boolean(jget(r, "summary", "fits")));
    json_object_put(r);
    o.capacity = 64ull << 30;
    r = run(text, len, &o);
    assert_int_equal(json_object_get_int64(jget(r, "packing", "capacity_bytes")), 64ll << 30);
    json_object_put(r);
    free(text);
    o.capacity = 0;
    text = read_sample("pytorch-xla-9524.txt", &len);
    r = run(text, len, &o);
    assert_int_not_equal(json_object_get_int64(jget(r, "packing", "capacity_bytes")), 16777216);
    json_object_put(r);
    free(text);
}

/* A Size that our rules do not give is flagged on the allocation, counted and warned about
 * (hand-written: f32[1024] is 4.0K, the report says 8.0K). */
static void test_mismatch_is_flagged(void **state)
{
    static const char text[] = "Largest program allocations in hbm:\n"
                               "  1. Size: 8.0K\n"
                               "     Shape: f32[1024]{0:T(1024)}\n"
                               "     Unpadded size: 4.0K\n"
                               "     XLA label: t1 = exponential(x)\n"
                               "     Allocation type: HLO temp\n"
                               "     ==========================\n";
    struct plan_opts o = {.strategies = "xla-spatial"};
    json_object *r = run(text, strlen(text), &o), *x = jget(r, "packing", "xla_report");
    json_object *a = json_object_array_get_idx(jget(x, "allocations", NULL), 0);
    json_object *w = jget(r, "warnings", NULL);
    bool warned = false;

    (void)state;
    assert_false(json_object_get_boolean(jget(a, "size_matches", NULL)));
    assert_true(json_object_get_boolean(jget(a, "unpadded_matches", NULL)));
    assert_int_equal(json_object_get_int(jget(x, "mismatches", NULL)), 1);
    for (size_t k = 0; k < json_object_array_length(w); k++)
        warned |= strstr(json_object_get_string(json_object_array_get_idx(w, k)),
                         "1 allocations of XLA's report are not the size") != NULL;
    assert_true(warned);
    json_object_put(r);
}

/* Beside a program (tests/data/hlo/while.hlo): the report's allocations matched by name,
 * and CompiledMemoryStats' total (5792 + 131072 + 65536 - 65536 + 512). */
static void test_beside_a_program(void **state)
{
    static const char oom[] = "Ran out of memory in memory space hbm. Used 1.00G of 1.00G hbm. "
                              "Exceeded hbm capacity by 1.0K.\n"
                              "  Largest program allocations in hbm:\n"
                              "  1. Size: 4.0K\n"
                              "     Shape: f32[1024]{0:T(1024)}\n"
                              "     XLA label: %a = f32[1024]{0:T(1024)} parameter(0)\n"
                              "     Allocation type: HLO temp\n"
                              "     ==========================\n";
    size_t len, slen;
    char *hlo = slurp("tests/data/hlo/while.hlo", &len);
    char *stats = read_sample("xla-10803.memstats.txt", &slen);
    struct plan_opts o = {
        .strategies = "xla-spatial", .xla_report = oom, .xla_report_len = sizeof(oom) - 1};
    json_object *r, *x;

    (void)state;
    assert_non_null(hlo);
    r = run(hlo, len, &o);
    x = jget(r, "packing", "xla_report");
    assert_string_equal(json_object_get_string(jget(x, "source", NULL)), "with-model");
    assert_int_equal(json_object_get_int(jget(x, "allocations_matched", NULL)), 1);
    json_object_put(r);
    o.xla_report = stats;
    o.xla_report_len = slen;
    r = run(hlo, len, &o);
    x = jget(r, "packing", "xla_report");
    assert_string_equal(json_object_get_string(jget(x, "form", NULL)), "compiled-memory-stats");
    assert_int_equal(json_object_get_int64(jget(x, "xla_total_bytes", NULL)), 137376);
    json_object_put(r);
    free(stats);
    free(hlo);
}

/* Reports that cannot plan alone say what to do with them. */
static void test_alone_without_allocations(void **state)
{
    static const char *const files[] = {"enzyme-jax-2422.txt", "jax-18954.memstats.txt"};
    static const char *const says[] = {"line 1: the report lists no allocations",
                                       "totals only: attach them to their program"};

    (void)state;
    for (size_t k = 0; k < 2; k++) {
        size_t len;
        char *text = read_sample(files[k], &len), *json = NULL;
        size_t jlen;
        struct err e;
        assert_int_equal(plan_run(text, len, NULL, NULL, &json, &jlen, NULL, NULL, &e),
                         ERR_INVALID);
        if (strstr(e.msg, says[k]) == NULL)
            fail_msg("%s: %s", files[k], e.msg);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_pastes_parse),
        cmocka_unit_test(test_flowpm_values),
        cmocka_unit_test(test_easydel_values),
        cmocka_unit_test(test_header_forms),
        cmocka_unit_test(test_rewrapped_and_cut_pastes),
        cmocka_unit_test(test_rewrapped_and_scoped),
        cmocka_unit_test(test_errors_name_line_and_column),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_memstats),
        cmocka_unit_test(test_padding_matches_the_reports),
        cmocka_unit_test(test_allocation_fields),
        cmocka_unit_test(test_report_capacity),
        cmocka_unit_test(test_mismatch_is_flagged),
        cmocka_unit_test(test_beside_a_program),
        cmocka_unit_test(test_alone_without_allocations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
