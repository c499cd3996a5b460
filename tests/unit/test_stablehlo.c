/*
 * test_stablehlo.c - StableHLO text (what jax.jit(f).lower(*args).as_text() prints) through
 * the translation to HLO and the HLO buffer rules: types, SSA order, multi-results, a
 * pretty-printed while with a captured value, func.call, donation (tf.aliasing_output),
 * argument sharding, loc op names; sizes, lifetimes and the peak worked out by hand; errors
 * with the MLIR line:column.
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

static const struct model_limits limits = {64u << 20, 32, 1000000, 1000000, 0};

/* tests/data/hlo/jax_while_call.mlir */
static const char JAX[] =
    "#loc = loc(unknown)\n"
    "module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  func.func public @main(%arg0: tensor<8x128xf32> {mhlo.layout_mode = \"default\", "
    "tf.aliasing_output = 0 : i32}, %arg1: tensor<128x256xbf16> {mhlo.layout_mode = \"default\", "
    "mhlo.sharding = \"{devices=[1,2]<=[2]}\"}) -> (tensor<8x128xf32> {jax.result_info = "
    "\"[0]\"}, tensor<i32> {jax.result_info = \"[1]\"}) {\n"
    "    %0 = stablehlo.convert %arg1 : (tensor<128x256xbf16>) -> tensor<128x256xf32> "
    "loc(#loc3)\n"
    "    %1 = stablehlo.slice %0 [0:128, 0:128] : (tensor<128x256xf32>) -> "
    "tensor<128x128xf32>\n"
    "    %2 = stablehlo.dot_general %arg0, %1, contracting_dims = [1] x [0], precision = "
    "[DEFAULT, DEFAULT] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32> "
    "loc(\"jit(f)/dot_general\"(#loc1))\n"
    "    %c = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %3:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %2) : tensor<i32>, "
    "tensor<8x128xf32>\n"
    "     cond {\n"
    "      %c_1 = stablehlo.constant dense<3> : tensor<i32>\n"
    "      %5 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> "
    "tensor<i1>\n"
    "      stablehlo.return %5 : tensor<i1>\n"
    "    } do {\n"
    "      %c_1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %5 = stablehlo.add %iterArg, %c_1 : tensor<i32>\n"
    "      %6 = stablehlo.tanh %iterArg_0 : tensor<8x128xf32>\n"
    "      %7 = stablehlo.dot_general %6, %1, contracting_dims = [1] x [0] : "
    "(tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>\n"
    "      stablehlo.return %5, %7 : tensor<i32>, tensor<8x128xf32>\n"
    "    }\n"
    "    %4 = call @helper(%3#1) : (tensor<8x128xf32>) -> tensor<8x128xf32>\n"
    "    %5 = stablehlo.reduce(%4 init: %c) applies stablehlo.add across dimensions = [0, 1] : "
    "(tensor<8x128xf32>, tensor<i32>) -> tensor<i32>\n"
    "    return %4, %3#0 : tensor<8x128xf32>, tensor<i32>\n"
    "  }\n"
    "  func.func private @helper(%arg0: tensor<8x128xf32>) -> tensor<8x128xf32> {\n"
    "    %0 = stablehlo.exponential %arg0 : tensor<8x128xf32>\n"
    "    %1 = stablehlo.transpose %0, dims = [0, 1] : (tensor<8x128xf32>) -> "
    "tensor<8x128xf32>\n"
    "    %2 = \"stablehlo.multiply\"(%1, %0) : (tensor<8x128xf32>, tensor<8x128xf32>) -> "
    "tensor<8x128xf32>\n"
    "    return %2 : tensor<8x128xf32>\n"
    "  }\n"
    "}\n"
    "#loc1 = loc(\"f.py\":3:0)\n";

static void import(const char *text, struct model *m)
{
    struct err e;
    err_clear(&e);
    /* the chip plan_run uses by default, so sizes agree with the plan's peak */
    if (stablehlo_import(text, strlen(text), chip_default(), &limits, m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
}

/* Entry steps: 0 arg0, 1 arg1, 2 %0, 3 %1, 4 %2, 5 %c, 6 the while's init tuple, 7 the while,
 * 8-9 its elements, 10 the call, 11 its element, 12 %5, 13 the return: 14 steps. */
static void test_jax_module(void **state)
{
    struct model m;
    (void)state;
    assert_true(stablehlo_detect(JAX, strlen(JAX)));
    import(JAX, &m);
    assert_string_equal(m.source_format, "stablehlo");
    assert_string_equal(m.name, "jit_f");
    assert_int_equal(m.n, 10); /* the while's state 3{1} is written into %2 */
    /* donated through tf.aliasing_output = 0: the call's result is written into arg0 */
    const struct model_tensor *a0 = tensor(&m, "arg0");
    assert_true(a0->donated);
    assert_string_equal(a0->in_place, "4{0}");
    assert_live(a0, 0, 14);
    /* bf16[128,256] sharded {devices=[1,2]}: 128 x 128 per device */
    const struct model_tensor *a1 = tensor(&m, "arg1");
    assert_int_equal(a1->shape.dtype, DT_BF16);
    assert_int_equal(a1->shape.dims[1], 128);
    assert_live(tensor(&m, "0"), 2, 4);
    assert_live(tensor(&m, "1"), 3, 8); /* read inside the while body: by the while (step 7) */
    const struct model_tensor *t2 = tensor(&m, "2");
    assert_string_equal(t2->op_name, "jit(f)/dot_general");
    /* %2 dies at the while (read last by its init tuple): the loop state 3{1} stays in it
     * (hlo_model.h, loop state), live to the call that reads 3{1} (step 10) */
    assert_string_equal(t2->in_place, "3{1}");
    assert_live(t2, 4, 11);
    assert_int_equal(tensor(&m, "c")->kind, TENSOR_CONSTANT);
    assert_int_equal(tensor(&m, "3{0}")->kind, TENSOR_OUTPUT);
    /* body: constant 512 B for the whole body + %6 (4096 B); cond: 512 B */
    assert_int_equal(tensor(&m, "3/temps")->padded_bytes, 4608);
    /* helper: %0 (4096 B) is live while %1 is made; %2 is written into %1 (the result) */
    assert_int_equal(tensor(&m, "4/temps")->padded_bytes, 4096);
    assert_live(tensor(&m, "5"), 12, 13);
    model_free(&m);

    /* Peak at step 3: arg0 4096 + arg1 32768 + %0 131072 + %1 65536 + c 512 = 233984. */
    struct plan_summary s;
    struct plan_opts o = {.strategies = "xla-default"};
    struct err e;
    char *json;
    size_t len;
    if (plan_run(JAX, strlen(JAX), &o, NULL, &json, &len, NULL, &s, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    free(json);
    assert_string_equal(s.source_format, "stablehlo");
    assert_int_equal(s.peak_bytes, 233984);
}

/* Element types as XLA names them. */
static void test_types(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%a: tensor<4xi1>, %b: tensor<2x3xui8>, %c: tensor<8xf8E4M3FN>, "
        "%d: tensor<i64>, %e: tensor<4xcomplex<f32>>, %f: !stablehlo.token, "
        "%g: tensor<16xbf16>) -> tensor<4xi1> {\n"
        "    return %a : tensor<4xi1>\n"
        "  }\n"
        "}\n";
    static const char *const want[] = {"pred[4]", "u8[2,3]", "f8e4m3fn[8]", "s64[]",
                                       "c64[4]",  "token[]", "bf16[16]"};
    char *hlo;
    size_t n;
    struct err e;
    (void)state;
    if (stablehlo_to_hlo(text, strlen(text), &hlo, &n, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
        if (strstr(hlo, want[k]) == NULL)
            fail_msg("%s not in\n%s", want[k], hlo);
    free(hlo);
}

static void expect_error(const char *text, const char *where, const char *what)
{
    struct model m;
    struct err e;
    err_clear(&e);
    assert_int_not_equal(stablehlo_import(text, strlen(text), NULL, &limits, &m, &e), ERR_OK);
    if (strcmp(e.where, where) != 0)
        fail_msg("where \"%s\", wanted \"%s\" (%s)", e.where, where, e.msg);
    if (strstr(e.msg, what) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, what);
}

static void test_errors_give_line_and_column(void **state)
{
    (void)state;
    expect_error("module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                 "    %0 = stablehlo.add %a, %b : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"
                 "  }\n}\n",
                 "line 3:28", "%b is not defined before its use");
    expect_error("module @m {\n  func.func @main(%a: tensor<?xf32>) -> tensor<4xf32> {\n",
                 "line 2:30", "dynamic dimensions");
    expect_error("module @m {\n  func.func @main(%a: memref<4xf32>) -> tensor<4xf32> {\n",
                 "line 2:23", "expected a tensor<...> type");
    expect_error("module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                 "    %0 = stablehlo.negate %a\n",
                 "line 3:5", "expected ': type'");
    expect_error("module @m {\n}\n", "line 2:1", "expected a func.func");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jax_module),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_errors_give_line_and_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
