/*
 * test_stablehlo_corpus.c - real modules JAX printed (tests/data/stablehlo, sources in its
 * SOURCE.md), translated and planned: every buffer's size, lifetime and in-place reuse and
 * the peak worked out by hand from the module's text and the chip's default layouts.
 * Run from the repository root (as tests/run.sh does).
 *
 * The default chip's layouts (layout.h) give the sizes below: an f32 array of 4 rows or
 * fewer is tiled T(4,128) (f32[4,4]: 4 x 128 x 4 = 2048 B), an f32 vector T(256) (f32[4]:
 * 1024 B), a 32-bit scalar T(128) (512 B), an 8-bit scalar T(512) (512 B), a pred array
 * T(8,128)(4,1) (one 8 x 128 tile of bytes: 1024 B).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/chip.h"
#include "planner/plan.h"
#include "planner/stablehlo.h"

#include "model_find.h"
#include "slurp.h"

#define DATA "tests/data/stablehlo/"

static const struct model_limits limits = {64u << 20, 32, 1000000, 1000000, 0};

/* The sample translated to HLO (caller frees). */
static char *translate(const char *path)
{
    size_t len, n;
    char *text = slurp(path, &len), *hlo = NULL;
    struct err e;
    if (stablehlo_to_hlo(text, len, &hlo, &n, &e) != ERR_OK)
        fail_msg("%s: %s", path, e.msg);
    free(text);
    return hlo;
}

/* The sample imported and its layouts resolved on the default chip (plan_run's, so sizes
 * agree with the peak). */
/* The rules as written: the compiler's estimate has tests of its own (test_hlo_compile.c). */
static const struct hlo_model_opts written = {.as_written = true};

static void import(const char *path, struct model *m)
{
    size_t len;
    char *text = slurp(path, &len);
    struct err e;
    if (stablehlo_import_opts(text, len, chip_default(), &limits, &written, m, &e) != ERR_OK ||
        model_resolve(m, chip_default(), 1, &e) != ERR_OK)
        fail_msg("%s: %s", path, e.msg);
    free(text);
}

/* The sample's peak, planned end to end with XLA's default heuristic. */
static uint64_t file_peak(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    uint64_t peak = plan_peak(text, "stablehlo");
    free(text);
    return peak;
}

static void assert_has(const char *hlo, const char *want)
{
    if (strstr(hlo, want) == NULL) {
        fprintf(stderr, "%s", hlo);
        fail_msg("\"%s\" not in the HLO above", want);
    }
}

static void assert_tensor(const struct model *m, const char *name, uint64_t bytes, int64_t s,
                          int64_t e)
{
    const struct model_tensor *t = tensor(m, name);
    if (t->padded_bytes != bytes)
        fail_msg("%s: %llu bytes, wanted %llu", name, (unsigned long long)t->padded_bytes,
                 (unsigned long long)bytes);
    assert_live(t, s, e);
}

/*
 * select_n_bool_2_3_bool_2_3_bool_2_3.mlir: `%2 = stablehlo.select %0#0, %0#2, %0#1 :
 * tensor<2x3xi1>, tensor<2x3xi1>`, the pretty select (the predicate's type, then the
 * result's) after a call of three results. Entry steps: 0 the call of @inputs, 1-3 its
 * elements, 4 the call of @expected, 5 its element, 6 the select, 7 the return (the
 * check.expect_eq custom call defines nothing). Four pred[2,3] buffers of 1024 B: the select
 * writes into 0{0} (its predicate, of its shape, dies there: XLA's in-place rule), which is
 * then the output; the peak is all four at step 4 or 5: 4096 B.
 */
static void test_pretty_select_plans_by_hand(void **state)
{
    static const char path[] = DATA "select_n_bool_2_3_bool_2_3_bool_2_3.mlir";
    struct model m;
    (void)state;
    char *hlo = translate(path);
    assert_has(hlo, "  2 = pred[2,3] select(0#0, 0#2, 0#1)\n");
    free(hlo);
    import(path, &m);
    assert_int_equal(m.n, 4);
    assert_tensor(&m, "0{0}", 1024, 0, 8);
    assert_string_equal(tensor(&m, "0{0}")->in_place, "2");
    assert_int_equal(tensor(&m, "0{0}")->kind, TENSOR_OUTPUT);
    assert_tensor(&m, "0{1}", 1024, 0, 7);
    assert_tensor(&m, "0{2}", 1024, 0, 7);
    assert_tensor(&m, "1{0}", 1024, 4, 5);
    model_free(&m);
    assert_int_equal(file_peak(path), 4096);
}

/*
 * cpu_schur_lapack_gees__data_2024_11_29_f32.mlir: jnp.linalg.schur on CPU; a custom call of
 * six results (its typed-FFI mhlo.backend_config dictionary, output_operand_aliases), then
 * broadcast_in_dim, compare and two pretty selects. Entry steps: 0 arg0, 1 cst, 2 c, 3 the
 * custom call, 4-9 its elements, 10 %1, 11 %2, 12 %3, 13 %4, 14 %5, 15 %6, 16 %7, 17 %8,
 * 18 %9, 19 %10, 20 the return.
 *   arg0 f32[4,4] 2048, cst and c 512 each: the whole program.
 *   0{0} and 0{1} f32[4,4] 2048 from step 3: %6 = select(%5, %0#0, %4) writes into 0{0} and
 *   %10 into 0{1} (each dies there; %5 is pred), so both are outputs to the end.
 *   0{2}, 0{3} f32[4] 1024 and 0{4} s32[] 512 only at step 3: nothing reads them (their
 *   get-tuple-elements alias them and read nothing); 0{5} 512 to the compare at 11.
 *   %1 s32[] 512 [10, 12); %2 pred[] 512 [11, 17); %3 pred[1,1] 1024 [12, 15); %4 f32[4,4]
 *   2048 [13, 16); %5 pred[4,4] 1024 [14, 16); %7 1024 [16, 19); %8 2048 [17, 20); %9 1024
 *   [18, 20).
 * Always live from step 3: 2048 + 512 + 512 + 2048 + 2048 = 7168. Step 14 adds %2, %3, %4,
 * %5 = 4608: the peak, 11776 (step 3: 3072 more; step 18: 4096 more).
 */
static void test_jax_export_custom_call_and_selects_plan_by_hand(void **state)
{
    static const char path[] = DATA "cpu_schur_lapack_gees__data_2024_11_29_f32.mlir";
    struct model m;
    (void)state;
    char *hlo = translate(path);
    assert_has(hlo, "  0 = (f32[4,4], f32[4,4], f32[4], f32[4], s32[], s32[]) custom-call(arg0), "
                    "custom_call_target=\"lapack_sgees_ffi\"");
    assert_has(hlo, "  1 = s32[] broadcast(c), metadata=");
    assert_has(hlo, "  6 = f32[4,4] select(5, 0#0, 4), metadata=");
    free(hlo);
    import(path, &m);
    assert_int_equal(m.n, 17);
    assert_tensor(&m, "arg0", 2048, 0, 21);
    assert_tensor(&m, "cst", 512, 0, 21);
    assert_tensor(&m, "0{0}", 2048, 3, 21);
    assert_string_equal(tensor(&m, "0{0}")->in_place, "6");
    assert_tensor(&m, "0{1}", 2048, 3, 21);
    assert_string_equal(tensor(&m, "0{1}")->in_place, "10");
    assert_tensor(&m, "0{2}", 1024, 3, 4);
    assert_tensor(&m, "0{3}", 1024, 3, 4);
    assert_tensor(&m, "0{4}", 512, 3, 4);
    assert_tensor(&m, "0{5}", 512, 3, 12);
    assert_tensor(&m, "1", 512, 10, 12);
    assert_tensor(&m, "2", 512, 11, 17);
    assert_tensor(&m, "3", 1024, 12, 15);
    assert_tensor(&m, "4", 2048, 13, 16);
    assert_tensor(&m, "5", 1024, 14, 16);
    assert_tensor(&m, "7", 1024, 16, 19);
    assert_tensor(&m, "8", 2048, 17, 20);
    assert_tensor(&m, "9", 1024, 18, 20);
    assert_string_equal(tensor(&m, "0{0}")->op_name, "jit(func)/jit(main)/schur");
    model_free(&m);
    assert_int_equal(file_peak(path), 11776);
}

/*
 * top_k_float32_5_chlo.mlir: `%values, %indices = chlo.top_k(%0, k = 5) : tensor<5xf32> ->
 * (tensor<5xf32>, tensor<5xi32>)`, named results of an op HLO has no opcode for (a custom
 * call of the chlo op's name, one instruction "values" of two elements). Entry steps: 0 the
 * call of @inputs, 1 its element, 2 the call of @expected, 3-4 its elements, 5 top_k, 6-7
 * its elements, 8 the return. Every array is 5 elements of 4 bytes, a vector of one T(256)
 * tile: 1024 B. 0{0} [0, 6) (top_k reads it at 5); @expected's 1{0}, 1{1} only at step 2
 * (the check custom calls that read them define nothing, so are not kept); values{0},
 * values{1} from 5, outputs. Peak 3072 at step 2 (0{0}, 1{0}, 1{1}) and at 5 (0{0} and
 * top_k's two).
 */
static void test_named_results_of_a_chlo_op_plan_by_hand(void **state)
{
    static const char path[] = DATA "top_k_float32_5_chlo.mlir";
    struct model m;
    (void)state;
    char *hlo = translate(path);
    assert_has(hlo,
               "  values = (f32[5], s32[5]) custom-call(0#0), custom_call_target=\"chlo.top_k\"\n"
               "  values#0 = f32[5] get-tuple-element(values), index=0\n"
               "  values#1 = s32[5] get-tuple-element(values), index=1\n");
    assert_has(hlo, "  ROOT #ret = (f32[5], s32[5]) tuple(values#0, values#1)\n");
    free(hlo);
    import(path, &m);
    assert_int_equal(m.n, 5);
    assert_tensor(&m, "0{0}", 1024, 0, 6);
    assert_tensor(&m, "1{0}", 1024, 2, 3);
    assert_tensor(&m, "1{1}", 1024, 2, 3);
    assert_tensor(&m, "values{0}", 1024, 5, 9);
    assert_tensor(&m, "values{1}", 1024, 5, 9);
    assert_int_equal(tensor(&m, "values{1}")->kind, TENSOR_OUTPUT);
    model_free(&m);
    assert_int_equal(file_peak(path), 3072);
}

/*
 * shardy_sharding_ops_with_different_meshes__data_2025_06_30.mlir: a shard_map, lowered to
 * sdy.manual_computation over mesh "a"=2, manual in "a", of a tensor<2x4xf32> whose body
 * takes tensor<1x4xf32> (2 / |a| rows). It becomes GSPMD's form: SPMDFullToShardShape
 * (1#in.0), a call of the body (1#body), SPMDShardToFullShape (1) carrying the out_sharding
 * {devices=[2,1]<=[2]}, so planned per device. Entry steps: 0 arg0, 1 the sharding
 * constraint %0 (a Sharding custom call, per device f32[1,4]), 2 1#in.0, 3 the call, 4 its
 * element, 5 %1, 6 the return. Every array has at most 2 rows of 4 f32: one T(2,128) tile,
 * 1024 B. arg0 [0, 7); %0 [1, 3); 1#in.0 [2, 4); 1#body{0} [3, 6) (the body's
 * collective_permute is its ROOT's element: the call's buffer); %1 [5, 7), the output. The
 * body holds nothing else (no temps). Peak: three buffers at steps 2 to 5, 3072 B.
 */
static void test_shard_map_manual_computation_plans_by_hand(void **state)
{
    static const char path[] =
        DATA "shardy_sharding_ops_with_different_meshes__data_2025_06_30.mlir";
    struct model m;
    (void)state;
    char *hlo = translate(path);
    assert_has(hlo, "main.1.manual {\n  arg1 = f32[1,4] parameter(0)\n"
                    "  2 = f32[1,4] collective-permute(arg1)");
    assert_has(hlo, "  0 = f32[2,4] custom-call(arg0), custom_call_target=\"Sharding\", "
                    "sharding={devices=[2,1]<=[2]}");
    assert_has(hlo,
               "  1#in.0 = f32[1,4] custom-call(0), custom_call_target=\"SPMDFullToShardShape\", "
               "sharding={manual}\n"
               "  1#body = (f32[1,4]) call(1#in.0), to_apply=main.1.manual\n"
               "  1#body.0 = f32[1,4] get-tuple-element(1#body), index=0\n"
               "  1 = f32[2,4] custom-call(1#body.0), custom_call_target=\"SPMDShardToFullShape\", "
               "sharding={devices=[2,1]<=[2]}, metadata={op_name=\"shard_map:\"}\n");
    free(hlo);
    import(path, &m);
    assert_int_equal(m.n, 5);
    assert_tensor(&m, "arg0", 1024, 0, 7);
    assert_tensor(&m, "0", 1024, 1, 3);
    assert_int_equal(tensor(&m, "0")->shape.dims[0], 1); /* per device */
    assert_tensor(&m, "1#in.0", 1024, 2, 4);
    assert_tensor(&m, "1#body{0}", 1024, 3, 6);
    assert_tensor(&m, "1", 1024, 5, 7);
    assert_int_equal(tensor(&m, "1")->shape.dims[0], 1);
    assert_int_equal(tensor(&m, "1")->kind, TENSOR_OUTPUT);
    model_free(&m);
    assert_int_equal(file_peak(path), 3072);
}

/*
 * argmax_int32_3.mlir: jnp.argmax as the non-compact reduce of two operands, its reducer
 * region on the lines after it (AssemblyFormat.cpp printReduceOp), inside a called
 * function. Entry steps: 0 the call of @inputs, 1 its element, 2 the call of @expected, 3
 * its element, 4 the call of @argmax, 5 its element, 6 the return.
 *   0{0} s32[3] 1024 B (T(256)), read by the call at 4: [0, 5).
 *   1{0} s32[] 512 B (T(128)), read by nothing (check.expect_eq defines no value): [2, 3).
 *   2{0} s32[] 512 B, the output: [4, 7).
 *   2/temps, @argmax's peak: iota s32[3] 1024 + its two constants 512 + 512 + the reduce's
 *   first result 512 (its second is the call's result, in 2{0}) = 2560, at step 4.
 * Peak at step 4: 1024 + 512 + 2560 = 4096.
 */
static void test_non_compact_reduce_plans_by_hand(void **state)
{
    static const char path[] = DATA "argmax_int32_3.mlir";
    struct model m;
    (void)state;
    char *hlo = translate(path);
    assert_has(hlo, "  1 = (s32[], s32[]) reduce(arg0, c, 0, c_0)\n");
    free(hlo);
    import(path, &m);
    assert_int_equal(m.n, 4);
    assert_tensor(&m, "0{0}", 1024, 0, 5);
    assert_tensor(&m, "1{0}", 512, 2, 3);
    assert_tensor(&m, "2{0}", 512, 4, 7);
    assert_int_equal(tensor(&m, "2{0}")->kind, TENSOR_OUTPUT);
    assert_tensor(&m, "2/temps", 2560, 4, 5);
    model_free(&m);
    assert_int_equal(file_peak(path), 4096);
}

/*
 * annotate_data_placement__data_2025_04_07_cuda_shardy.mlir: jax.device_put to host memory
 * kinds: arg1 has mhlo.memory_kind = "pinned_host", %1 is custom_call
 * @annotate_device_placement with _xla_buffer_placement = "pinned_host" (XLA's MoveToHost),
 * both in memory space S(5) and out of the HBM plan; %2, Shardy's xla.sdy.FuncResultSharding
 * of %1, is %1 passed through (XLA erases the call: a bitcast), so the output is in host
 * memory too, as the result's mhlo.memory_kind = "pinned_host" says. Steps: 0 arg0, 1 arg1,
 * 2 %0 (the add), 3 %1, 4 %2, 5 the return. f32[1] is 1024 B (T(256)): arg0 [0, 6); %0
 * [2, 4), read by %1. Peak 2048; with the host values in HBM and the pass-through a buffer
 * of its own it was 3072.
 */
static void test_host_memory_kinds_stay_out_of_hbm_by_hand(void **state)
{
    static const char path[] = DATA "annotate_data_placement__data_2025_04_07_cuda_shardy.mlir";
    struct model m;
    (void)state;
    char *hlo = translate(path);
    assert_has(hlo, "  arg1 = f32[1]{0:S(5)} parameter(1), sharding={devices=[1]<=[1]}, "
                    "metadata={op_name=\"y\"}\n");
    assert_has(hlo, "  1 = f32[1]{0:S(5)} custom-call(0), "
                    "custom_call_target=\"annotate_device_placement\", "
                    "frontend_attributes={_xla_buffer_placement=\"pinned_host\"}\n");
    assert_has(hlo, "  2 = f32[1] bitcast(1), frontend_attributes={xla.sdy.sharding=");
    free(hlo);
    import(path, &m);
    assert_int_equal(m.n, 2);
    assert_tensor(&m, "arg0", 1024, 0, 6);
    assert_tensor(&m, "0", 1024, 2, 4);
    assert_warned(&m, "2 HLO buffers in "); /* host memory, apart from HBM */
    model_free(&m);
    assert_int_equal(file_peak(path), 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pretty_select_plans_by_hand),
        cmocka_unit_test(test_jax_export_custom_call_and_selects_plan_by_hand),
        cmocka_unit_test(test_named_results_of_a_chlo_op_plan_by_hand),
        cmocka_unit_test(test_shard_map_manual_computation_plans_by_hand),
        cmocka_unit_test(test_non_compact_reduce_plans_by_hand),
        cmocka_unit_test(test_host_memory_kinds_stay_out_of_hbm_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
