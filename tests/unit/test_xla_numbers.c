/*
 * test_xla_numbers.c - the peaks, sizes, offsets and orders XLA's own tests assert, for the
 * small modules whose semantics tpuplan models, reproduced exactly (openxla/xla at 9a77a882;
 * every test names its file and lines). The table of all of them, those that do not apply and
 * why, is in tests/bench/RESULTS.md#xlas-own-numbers.
 *
 * XLA's tests size buffers with ShapeUtil::ByteSizeOf, without TPU tiles: the HLO figures here
 * are the model's logical bytes (model_resolve), its lifetimes the planner's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/hlo.h"
#include "planner/hlo_model.h"
#include "planner/import/hlo_compile_int.h"
#include "planner/layout.h"
#include "planner/pack.h"

#include "model_find.h"

static const struct model_limits limits = {64u << 20, 32, 1000000, 1000000, 0};

/* The module as written (XLA's tests run their own passes, or none), layouts resolved for
 * the logical bytes. */
static void import(const char *text, struct model *m)
{
    static const struct hlo_model_opts written = {.as_written = true};
    struct err e;
    err_clear(&e);
    if (hlo_import_opts(text, strlen(text), NULL, &limits, &written, m, &e) != ERR_OK ||
        model_resolve(m, NULL, 1, &e) != ERR_OK)
        fail_msg("%s", e.msg);
}

/* The most logical bytes live at once over the tensors of the kinds in mask (bit per enum
 * tensor_kind), raw ones (a call's temps, sized on the chip) left out. */
static uint64_t live_peak(const struct model *m, unsigned mask)
{
    uint64_t peak = 0;
    int64_t steps = 0;
    for (size_t i = 0; i < m->n; i++)
        steps = m->tensors[i].live_end > steps ? m->tensors[i].live_end : steps;
    for (int64_t s = 0; s < steps; s++) {
        uint64_t live = 0;
        for (size_t i = 0; i < m->n; i++) {
            const struct model_tensor *t = &m->tensors[i];
            if (!t->raw && (mask & (1u << t->kind)) && t->live_start <= s && s < t->live_end)
                live += t->logical_bytes;
        }
        peak = live > peak ? live : peak;
    }
    return peak;
}

#define ALL_KINDS  ((1u << TENSOR_INPUT) | (1u << TENSOR_OUTPUT) | (1u << TENSOR_TEMP))
#define TEMPS_ONLY (1u << TENSOR_TEMP)

/* heap_simulator_test.cc:131-247 MinimumMemoryForSequenceTest.SubcomputationAccounting:
 * 64 (L242), "broadcast creates 32 bytes", "transpose creates 32 bytes", constants not
 * simulated (L454-462). The add is written into the transpose (in place, it dies there). */
static void test_subcomputation_accounting_64(void **state)
{
    static const char text[] =
        "HloModule SubcomputationAccounting\n"
        "WhileBody {\n  body_param = f32[4] parameter(0)\n"
        "  constant.1 = f32[4] constant({1, 1, 1, 1})\n"
        "  ROOT subtract = f32[4] subtract(body_param, constant.1)\n}\n"
        "WhileCond {\n  cond_param = f32[4] parameter(0)\n"
        "  slice = f32[1] slice(cond_param), slice={[0:1]}\n"
        "  reshape = f32[] reshape(slice)\n  constant = f32[] constant(0)\n"
        "  ROOT not-equal-to = pred[] compare(reshape, constant), direction=NE\n}\n"
        "ENTRY SubcomputationAccounting {\n  constant.2 = f32[4] constant({1, 1, 1, 1})\n"
        "  while = f32[4] while(constant.2), condition=WhileCond, body=WhileBody\n"
        "  broadcast = f32[2,4] broadcast(while), dimensions={1}\n"
        "  constant.3 = f32[2,4] constant({ { 1, 2, 3, 4 }, { 1, 2, 3, 4 } })\n"
        "  transpose = f32[2,4] transpose(constant.3), dimensions={0,1}\n"
        "  ROOT add = f32[2,4] add(transpose, broadcast)\n}\n";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(live_peak(&m, ALL_KINDS), 64);
    assert_int_equal(tensor(&m, "broadcast")->logical_bytes, 32);
    assert_string_equal(tensor(&m, "transpose")->in_place, "add");
    model_free(&m);
}

/* heap_simulator_test.cc:1069-1108 NoFragmentationStatsHeapTest: Simple 90 (L1076-1089),
 * Mixed 40 (L1091-1108); each Alloc and Free one tick, an interval [Alloc, Free]. */
static void test_no_fragmentation_heap_90_40(void **state)
{
    static const struct pack_buffer simple[] = {{0, 5, 10}, {1, 6, 20}, {2, 7, 30}, {3, 8, 30}};
    static const struct pack_buffer mixed[] = {{0, 8, 10}, {1, 3, 20}, {3, 5, 30}, {5, 7, 5}};
    struct pack_problem p = {4, simple, 0, 1};
    uint64_t lb = 0;
    struct err e;
    (void)state;
    assert_int_equal(pack_lower_bound(&p, &lb, &e), ERR_OK);
    assert_int_equal(lb, 90);
    p.bufs = mixed;
    assert_int_equal(pack_lower_bound(&p, &lb, &e), ERR_OK);
    assert_int_equal(lb, 40);
}

/* GlobalDecreasingSizeBestFitHeap with the default kSpatial order (heap_simulator.h:859),
 * tpuplan's xla-spatial: heap_simulator_test.cc DecreasingSize (L1121-1160: heap 100,
 * a 90, b 40, c 70, d 0), DecreasingSizeWithAlignment (L1162-1203, alignment 20: heap 120,
 * a 60, b 100, c 0, d 60), BestFit (L1205-1252: heap 140, a 90, b 120, c 50, d 90, e 0).
 * XLA's [Alloc, Free] ticks are the half-open [Alloc, Free + 1). */
static void test_best_fit_heap_offsets(void **state)
{
    static const struct {
        const char *name;
        uint64_t align, heap;
        size_t n;
        struct pack_buffer b[5];
        uint64_t off[5];
    } cases[] = {
        {"DecreasingSize",
         1,
         100,
         4,
         {{0, 5, 10}, {1, 6, 30}, {2, 7, 20}, {3, 8, 40}},
         {90, 40, 70, 0}},
        {"DecreasingSizeWithAlignment",
         20,
         120,
         4,
         {{0, 4, 10}, {1, 6, 20}, {2, 7, 50}, {4, 8, 40}},
         {60, 100, 0, 60}},
        {"BestFit",
         1,
         140,
         5,
         {{0, 4, 10}, {1, 7, 20}, {2, 8, 40}, {4, 9, 30}, {5, 10, 50}},
         {90, 120, 50, 90, 0}},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct pack_buffer b[5];
        struct pack_problem p = {cases[k].n, b, 0, 1};
        struct pack_opts o = {0};
        struct pack_result r;
        struct err e;
        /* XLA aligns each offset; the sizes it sums stay as given, but a chunk then ends on
         * the next aligned offset: the sizes rounded up to the alignment, as plan.c does */
        for (size_t i = 0; i < cases[k].n; i++) {
            b[i] = cases[k].b[i];
            b[i].size = (b[i].size + cases[k].align - 1) / cases[k].align * cases[k].align;
        }
        o.threads = 1;
        if (pack_run(&p, "xla-spatial", &o, &r, &e) != ERR_OK)
            fail_msg("%s: %s", cases[k].name, e.msg);
        if (r.peak != cases[k].heap)
            fail_msg("%s: heap %llu, XLA %llu", cases[k].name, (unsigned long long)r.peak,
                     (unsigned long long)cases[k].heap);
        for (size_t i = 0; i < cases[k].n; i++)
            if (r.offsets[i] != cases[k].off[i])
                fail_msg("%s: buffer %zu at %llu, XLA %llu", cases[k].name, i,
                         (unsigned long long)r.offsets[i], (unsigned long long)cases[k].off[i]);
        pack_result_free(&r);
    }
}

/* buffer_assignment_test.cc:1997-2069 OneTempAllocation: the temps dot_ab (32 B) and dot_bc
 * (48 B) live together: the temp allocation is 80 (L2045-2046). */
static void test_one_temp_allocation_80(void **state)
{
    static const char text[] =
        "HloModule OneTempAllocation\nENTRY OneTempAllocation {\n"
        "  param_a = f32[2,3] parameter(0)\n  param_b = f32[3,4] parameter(1)\n"
        "  param_c = f32[4,4] parameter(2)\n"
        "  dot_ab = f32[2,4] dot(param_a, param_b), lhs_contracting_dims={1}, "
        "rhs_contracting_dims={0}\n"
        "  dot_bc = f32[3,4] dot(param_b, param_c), lhs_contracting_dims={1}, "
        "rhs_contracting_dims={0}\n"
        "  ROOT concatenate = f32[5,4] concatenate(dot_ab, dot_bc), dimensions={0}\n}\n";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(tensor(&m, "dot_ab")->logical_bytes, 32);
    assert_int_equal(tensor(&m, "dot_bc")->logical_bytes, 48);
    assert_int_equal(live_peak(&m, TEMPS_ONLY), 80);
    model_free(&m);
}

/* buffer_assignment_test.cc:2178-2237 PeakBuffers, sequence p, log, rev, neg, concat, root:
 * the temp allocation is 1600 B (L2218-2225: 800 + 400 + 400), its peak set {rev, neg,
 * concat} (L2231-2236). */
static void test_peak_buffers_1600(void **state)
{
    static const char text[] = "HloModule PeakBuffers\nENTRY PeakBuffers {\n"
                               "  p = f32[100] parameter(0)\n  log = f32[100] log(p)\n"
                               "  rev = f32[100] reverse(log), dimensions={0}\n"
                               "  neg = f32[100] negate(p)\n"
                               "  concat = f32[200] concatenate(rev, neg), dimensions={0}\n"
                               "  ROOT root = f32[1] slice(concat), slice={[0:1]}\n}\n";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(live_peak(&m, TEMPS_ONLY), 1600);
    /* the peak set: live at concat (step 4) */
    assert_live(tensor(&m, "rev"), 2, 5);
    assert_live(tensor(&m, "neg"), 3, 5);
    assert_live(tensor(&m, "concat"), 4, 6);
    assert_live(tensor(&m, "log"), 1, 3);
    model_free(&m);
}

/* buffer_assignment_test.cc:3368-3401 BufferInfoStringTest: sizes 4096 and 4194304, live
 * ranges (inclusive) mul [2,3], add [3,4], bcast [4,5] (L3380-3387). add is written into mul
 * (in place): one buffer over [2,4], half-open [2,5); bcast, the output, [4,5). */
static void test_buffer_info_sizes_and_ranges(void **state)
{
    static const char text[] =
        "HloModule test_module\n\nENTRY %test_module {\n"
        "  %param.0 = s32[1024]{0} parameter(0)\n  %param.1 = s32[1024]{0} parameter(1)\n"
        "  %mul = s32[1024]{0} multiply(%param.0, %param.1)\n"
        "  %add = s32[1024]{0} add(%mul, %param.0)\n"
        "  ROOT %bcast = s32[1024,1024]{1,0} broadcast(s32[1024] %add), dimensions={0}\n}\n";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(tensor(&m, "param.0")->logical_bytes, 4096);
    assert_int_equal(tensor(&m, "mul")->logical_bytes, 4096);
    assert_int_equal(tensor(&m, "bcast")->logical_bytes, 4194304);
    assert_string_equal(tensor(&m, "mul")->in_place, "add");
    assert_live(tensor(&m, "mul"), 2, 5);
    assert_live(tensor(&m, "bcast"), 4, 5);
    model_free(&m);
}

/* gpu_hlo_schedule_test.cc:1770-1790 ReturnsValidScheduleMetadata: peak_memory_usage 12288
 * ("3*32*32 * 4 bytes"); the ROOT instruction goes on over two lines. */
static void test_gpu_schedule_peak_12288(void **state)
{
    static const char text[] = "    HloModule m\n\n    ENTRY ar {\n"
                               "      p0 = f32[32,32] parameter(0)\n"
                               "      p1 = f32[32,32] parameter(1)\n\n"
                               "      ROOT _ = f32[32,32]{1,0} custom-call(p0, p1),\n"
                               "        custom_call_target=\"__cublas$gemm\"\n    }";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(live_peak(&m, ALL_KINDS), 12288);
    model_free(&m);
}

/* hlo_memory_scheduler_test.cc:82-140 LastUseScheduledFirst: the parameter first, sub
 * last, add before negate (add is the last use of ab, so scheduling it frees ab). The
 * program unfused, each f32[42] 168 B (ByteSizeOf). */
static void test_last_use_scheduled_first(void **state)
{
    static const char text[] = "HloModule m\nENTRY LastUseScheduledFirst {\n"
                               "  param = f32[42] parameter(0)\n  ab = f32[42] abs(param)\n"
                               "  exp = f32[42] exponential(param)\n"
                               "  add = f32[42] add(ab, exp)\n  negate = f32[42] negate(exp)\n"
                               "  ROOT sub = f32[42] subtract(add, negate)\n}\n";
    struct hlo_module h;
    struct hlo_graph g;
    struct hlo_order o;
    uint64_t bytes[6] = {0, 168, 168, 168, 168, 168};
    uint32_t pos[6] = {0};
    struct err e;
    (void)state;
    assert_int_equal(hlo_parse(text, strlen(text), 100, &h, &e), ERR_OK);
    assert_int_equal(hlo_graph_build(&h, h.entry, false, &g, &e), ERR_OK);
    assert_int_equal(hlo_order_build(&g, bytes, false, &o, &e), ERR_OK);
    assert_int_equal(o.nseq, 6);
    for (uint32_t k = 0; k < o.nseq; k++)
        pos[o.seq[k]] = k;
    assert_int_equal(o.seq[0], 0);
    assert_int_equal(o.seq[5], 5);
    assert_true(pos[3] < pos[4]);
    hlo_order_free(&o);
    hlo_graph_free(&g);
    hlo_free(&h);
}

/* tsl/platform/numbers_test.cc:78-102 HumanReadableNumBytes, the form XLA's reports print,
 * without its "iB" (layout.h). */
static void test_human_readable_bytes(void **state)
{
    static const struct {
        uint64_t b;
        const char *s;
    } want[] = {{0, "0B"},
                {4, "4B"},
                {1023, "1023B"},
                {1024, "1.0K"},
                {1025, "1.0K"},
                {1500, "1.5K"},
                {1927, "1.9K"},
                {2048, "2.0K"},
                {UINT64_C(1) << 20, "1.00M"},
                {12345678, "11.77M"},
                {UINT64_C(1) << 30, "1.00G"},
                {UINT64_C(1) << 40, "1.00T"},
                {UINT64_C(1) << 50, "1.00P"},
                {UINT64_C(1) << 60, "1.00E"}};
    char buf[32];
    (void)state;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(layout_format_bytes(want[i].b, buf, sizeof(buf)), want[i].s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_subcomputation_accounting_64),
        cmocka_unit_test(test_no_fragmentation_heap_90_40),
        cmocka_unit_test(test_best_fit_heap_offsets),
        cmocka_unit_test(test_one_temp_allocation_80),
        cmocka_unit_test(test_peak_buffers_1600),
        cmocka_unit_test(test_buffer_info_sizes_and_ranges),
        cmocka_unit_test(test_gpu_schedule_peak_12288),
        cmocka_unit_test(test_last_use_scheduled_first),
        cmocka_unit_test(test_human_readable_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
