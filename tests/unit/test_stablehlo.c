/*
 * test_stablehlo.c - StableHLO text (what jax.jit(f).lower(*args).as_text() prints) through
 * the translation to HLO and the HLO buffer rules: types, SSA order, multi-results, a
 * pretty-printed while with a captured value, func.call, donation (tf.aliasing_output),
 * argument sharding, loc op names (#locN aliases, callsite, fused, arguments), generic
 * case/if/while regions (captured values as their parameters), lists of any length; sizes,
 * lifetimes and the peak worked out by hand; errors with the MLIR line:column.
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
#include "planner/import/stablehlo_int.h"
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

/* The rules as written: the compiler's estimate has tests of its own (test_hlo_compile.c). */
static const struct hlo_model_opts written = {.as_written = true};

static void import(const char *text, struct model *m)
{
    struct err e;
    err_clear(&e);
    /* the chip plan_run uses by default, so sizes agree with the plan's peak */
    if (stablehlo_import_opts(text, strlen(text), chip_default(), &limits, &written, m, &e) !=
        ERR_OK)
        fail_msg("%s", e.msg);
}

/* Entry steps: 0 arg0, 1 arg1, 2 %0, 3 %1, 4 %2, 5 %c, 6 the while's init tuple, 7 the while,
 * 8-9 its elements, 10 the call, 11 its element, 12 %5, 13 the return: 14 steps. */

static void test_jax_module_translates_with_donation(void **state)
{
    static const struct want_tensor want[] = {
        /* donated through tf.aliasing_output = 0: the call's result is written into arg0 */
        {.name = "arg0", .donated = true, .in_place = "4{0}", .start = 0, .end = 14},
        /* bf16[128,256] sharded {devices=[1,2]}: 128 x 128 per device */
        {.name = "arg1", .dim1 = 128},
        {.name = "0", .start = 2, .end = 4},
        {.name = "1", .start = 3, .end = 8}, /* read inside the while body: by the while (step 7) */
        /* %2 dies at the while (read last by its init tuple): the loop state 3{1} stays in it
         * (hlo_model.h, loop state), live to the call that reads 3{1} (step 10) */
        {.name = "2", .op_name = "jit(f)/dot_general", .in_place = "3{1}", .start = 4, .end = 11},
        {.name = "c", .kind = "constant"},
        {.name = "3{0}", .kind = "output"},
        /* body: constant 512 B for the whole body + %6 (4096 B); cond: 512 B */
        {.name = "3/temps", .padded = 4608},
        /* helper: %0 (4096 B) is live while %1 is made; %2 is written into %1 (the result) */
        {.name = "4/temps", .padded = 4096},
        {.name = "5", .start = 12, .end = 13},
        {0},
    };
    struct model m;
    (void)state;
    assert_true(stablehlo_detect(JAX, strlen(JAX)));
    import(JAX, &m);
    assert_string_equal(m.source_format, "stablehlo");
    assert_string_equal(m.name, "jit_f");
    assert_int_equal(m.n, 10); /* the while's state 3{1} is written into %2 */
    assert_tensors("jax", &m, want);
    assert_int_equal(tensor(&m, "arg1")->shape.dtype, DT_BF16);
    model_free(&m);

    /* Peak at step 3: arg0 4096 + arg1 32768 + %0 131072 + %1 65536 + c 512 = 233984. */
    assert_int_equal(plan_peak(JAX, "stablehlo"), 233984);
}

/* Element types as XLA names them. */
static void test_element_types_are_named_as_xla_names_them(void **state)
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

/* tests/data/hlo/jax_cond_while.mlir: a generic stablehlo.case of three branches and a generic
 * stablehlo.while with block arguments, both reading values of @main (captured). */
static const char COND_WHILE[] =
    "#loc = loc(unknown)\n"
    "module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
    "  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<8x128xf32>, %arg2: "
    "tensor<128x128xf32>) -> (tensor<8x128xf32> {jax.result_info = \"[0]\"}, tensor<i32> "
    "{jax.result_info = \"[1]\"}) {\n"
    "    %0 = stablehlo.exponential %arg1 : tensor<8x128xf32>\n"
    "    %1 = \"stablehlo.case\"(%arg0) ({\n"
    "      %5 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : "
    "(tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>\n"
    "      %6 = stablehlo.reverse %5, dims = [0] : tensor<8x128xf32>\n"
    "      \"stablehlo.return\"(%6) : (tensor<8x128xf32>) -> ()\n"
    "    }, {\n"
    "      %5 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<128x128xf32>) -> "
    "tensor<128x128xf32>\n"
    "      %6 = stablehlo.dot_general %0, %5, contracting_dims = [1] x [0] : (tensor<8x128xf32>, "
    "tensor<128x128xf32>) -> tensor<8x128xf32>\n"
    "      \"stablehlo.return\"(%6) : (tensor<8x128xf32>) -> ()\n"
    "    }, {\n"
    "      \"stablehlo.return\"(%0) : (tensor<8x128xf32>) -> ()\n"
    "    }) : (tensor<i32>) -> tensor<8x128xf32> loc(\"jit(g)/cond\")\n"
    "    %c = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %2:2 = \"stablehlo.while\"(%c, %1) ({\n"
    "    ^bb0(%a: tensor<i32>, %b: tensor<8x128xf32>):\n"
    "      %c_0 = stablehlo.constant dense<3> : tensor<i32>\n"
    "      %7 = stablehlo.compare  LT, %a, %c_0,  SIGNED : (tensor<i32>, tensor<i32>) -> "
    "tensor<i1>\n"
    "      \"stablehlo.return\"(%7) : (tensor<i1>) -> ()\n"
    "    }, {\n"
    "    ^bb0(%a: tensor<i32>, %b: tensor<8x128xf32>):\n"
    "      %c_0 = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %7 = stablehlo.add %a, %c_0 : tensor<i32>\n"
    "      %8 = stablehlo.dot_general %b, %arg2, contracting_dims = [1] x [0] : "
    "(tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>\n"
    "      %9 = stablehlo.dot_general %8, %arg2, contracting_dims = [1] x [0] : "
    "(tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>\n"
    "      \"stablehlo.return\"(%7, %9) : (tensor<i32>, tensor<8x128xf32>) -> ()\n"
    "    }) : (tensor<i32>, tensor<8x128xf32>) -> (tensor<i32>, tensor<8x128xf32>)\n"
    "    return %2#1, %2#0 : tensor<8x128xf32>, tensor<i32>\n"
    "  }\n"
    "}\n";

static char *translate(const char *text)
{
    char *hlo;
    size_t n;
    struct err e;
    if (stablehlo_to_hlo(text, strlen(text), &hlo, &n, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    return hlo;
}

static void assert_has(const char *hlo, const char *want)
{
    if (strstr(hlo, want) == NULL) {
        fprintf(stderr, "%s", hlo);
        fail_msg("\"%s\" not in the HLO above", want);
    }
}

/*
 * Entry steps: 0-2 arg0-arg2, 3 %0, 4 the conditional %1, 5 its element, 6 %c, 7 the while's
 * init tuple, 8 the while, 9-10 its elements, 11 the return: 12 steps.
 * Branches (their parameters are the conditional's operands, their ROOT its result):
 * branch0 holds %5 (f32[8,128], 4096 B) while %6 is made; branch1 %5 (f32[128,128], 65536 B);
 * branch2 nothing. The conditional's temps are its largest branch: 65536.
 * While: cond holds c_0 (s32[], 512 B); body c_0 512 for the whole body + %8 4096 while %9
 * is made = 4608.
 * 1{0} dies at the while (read last by its init tuple): the loop state 2{1} stays in it
 * (hlo_model.h, loop state), an output live to the end.
 * Peak at step 4: arg0 512 + arg1 4096 + arg2 65536 + %0 4096 + 1{0} 4096 + 1/temps 65536
 * + c 512 = 144384 (step 8: 512 + 4096 + 65536 + 1{0} 4096 + c 512 + 2{0} 512 + 2/temps
 * 4608 = 79872).
 */
static void test_cond_and_while_temps_match_the_hand_count(void **state)
{
    static const struct want_tensor want[] = {
        {.name = "1/temps", .padded = 65536, .start = 4, .end = 5},
        {.name = "1{0}",
         .op_name = "jit(g)/cond",
         .in_place = "2{1}",
         .kind = "output",
         .start = 4,
         .end = 12},
        {.name = "0", .start = 3, .end = 5},
        {.name = "2/temps", .padded = 4608},
        {.name = "2{0}", .start = 8, .end = 12},
        {0},
    };
    struct model m;
    (void)state;
    char *hlo = translate(COND_WHILE);
    /* captures: branch0 reads %0 and %arg2, branch1 %arg2 and %0, branch2 %0: the
     * conditional reads them once each, in definition order */
    assert_has(hlo, "1 = (f32[8,128]) conditional(arg0, arg2, 0), branch_computations={"
                    "main.1.branch0, main.1.branch1, main.1.branch2}");
    assert_has(hlo, "main.1.branch1 {\n  arg2 = f32[128,128] parameter(0)\n"
                    "  0 = f32[8,128] parameter(1)\n");
    assert_has(hlo, "  6 = f32[8,128] dot(0, 5)\n  ROOT #ret = (f32[8,128]) tuple(6)\n");
    assert_has(hlo, "main.1.branch2 {\n  0 = f32[8,128] parameter(0)\n"
                    "  ROOT #ret = (f32[8,128]) tuple(0)\n");
    /* the block arguments are the loop state's elements; %arg2 is the body's parameter 1 */
    assert_has(hlo, "main.2.body {\n  arg2 = f32[128,128] parameter(1)\n"
                    "  #param = (s32[], f32[8,128]) parameter(0)\n"
                    "  a = s32[] get-tuple-element(#param), index=0\n");
    assert_has(hlo, "  9 = f32[8,128] dot(8, arg2)\n");
    assert_has(hlo, "  2 = (s32[], f32[8,128]) while(2#init, arg2), condition=main.2.cond, "
                    "body=main.2.body\n");
    free(hlo);

    import(COND_WHILE, &m);
    assert_tensors("cond_while", &m, want);
    model_free(&m);

    assert_int_equal(plan_peak(COND_WHILE, "stablehlo"), 144384);
}

/* stablehlo.if (generic and pretty) and the pretty stablehlo.case; a while nested in a branch
 * reads %x of @main through both regions. */
static void test_if_case_and_nested_while_read_through_regions(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%p: tensor<i1>, %i: tensor<i32>, %x: tensor<8x128xf32>) -> "
        "tensor<8x128xf32> {\n"
        "    %0 = \"stablehlo.if\"(%p) ({\n"
        "      %1 = stablehlo.tanh %x : tensor<8x128xf32>\n"
        "      \"stablehlo.return\"(%1) : (tensor<8x128xf32>) -> ()\n"
        "    }, {\n"
        "      %w:2 = \"stablehlo.while\"(%i, %x) ({\n"
        "      ^bb0(%a: tensor<i32>, %b: tensor<8x128xf32>):\n"
        "        \"stablehlo.return\"(%p) : (tensor<i1>) -> ()\n"
        "      }, {\n"
        "      ^bb0(%a: tensor<i32> loc(\"a\"), %b: tensor<8x128xf32>):\n"
        "        %2 = stablehlo.add %b, %x : tensor<8x128xf32>\n"
        "        stablehlo.return %a, %2 : tensor<i32>, tensor<8x128xf32>\n"
        "      }) : (tensor<i32>, tensor<8x128xf32>) -> (tensor<i32>, tensor<8x128xf32>)\n"
        "      stablehlo.return %w#1 : tensor<8x128xf32>\n"
        "    }) : (tensor<i1>) -> tensor<8x128xf32>\n"
        "    %3 = stablehlo.if %p ({\n"
        "      stablehlo.return %0 : tensor<8x128xf32>\n"
        "    }, {\n"
        "      stablehlo.return %x : tensor<8x128xf32>\n"
        "    }) : tensor<8x128xf32>\n"
        "    %4 = stablehlo.case(%i) ({\n"
        "      stablehlo.return %3 : tensor<8x128xf32>\n"
        "    }) : tensor<8x128xf32>\n"
        "    return %4 : tensor<8x128xf32>\n"
        "  }\n"
        "}\n";
    (void)state;
    char *hlo = translate(text);
    assert_has(hlo, "  0 = (f32[8,128]) conditional(p, p, i, x), true_computation=main.0.true, "
                    "false_computation=main.0.false\n");
    /* the while inside the false branch: its regions are numbered, %p and %x are parameters
     * of the branch and of the while's regions */
    assert_has(hlo, "main.0.false {\n  i = s32[] parameter(0)\n  x = f32[8,128] parameter(1)\n"
                    "  p = pred[] parameter(2)\n");
    assert_has(hlo, "  w = (s32[], f32[8,128]) while(w#init, p, x), condition=main.w.cond.4, "
                    "body=main.w.body.5\n");
    assert_has(hlo, "main.w.body.5 {\n  x = f32[8,128] parameter(1)\n");
    assert_has(hlo, "  ROOT #ret = (f32[8,128]) tuple(w#1)\n");
    assert_has(hlo, "  3 = (f32[8,128]) conditional(p, x, 0#0), true_computation=main.3.true, "
                    "false_computation=main.3.false\n");
    assert_has(hlo,
               "  4 = (f32[8,128]) conditional(i, 3#0), branch_computations={main.4.branch0}\n");
    assert_has(hlo, "main.4.branch0 {\n  3#0 = f32[8,128] parameter(0)\n");
    free(hlo);

    struct model m;
    import(text, &m);
    model_free(&m);
}

/* 300 loop variables and 300 returned values written on one line each: the name table grows
 * and the writer writes lists of any length. */
static void test_long_lists_grow_the_name_table(void **state)
{
    enum { N = 300 };
    size_t cap = 128 * N + 1024, n = 0;
    char *text = malloc(cap), *hlo;
    struct model m;
    (void)state;
    assert_non_null(text);
    n += (size_t)snprintf(text + n, cap - n,
                          "module @m {\n  func.func @main(%%a: tensor<8x128xf32>, %%p: "
                          "tensor<i1>) -> tensor<8x128xf32> {\n    %%w:%d = stablehlo.while(",
                          N);
    for (int k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, cap - n, "%s%%v%d = %%a", k ? ", " : "", k);
    n += (size_t)snprintf(text + n, cap - n, ") : ");
    for (int k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, cap - n, "%stensor<8x128xf32>", k ? ", " : "");
    n += (size_t)snprintf(text + n, cap - n,
                          "\n     cond {\n      stablehlo.return %%p : tensor<i1>\n    } do {\n"
                          "      stablehlo.return ");
    for (int k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, cap - n, "%s%%v%d", k ? ", " : "", (k + 1) % N);
    n += (size_t)snprintf(text + n, cap - n, " : ");
    for (int k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, cap - n, "%stensor<8x128xf32>", k ? ", " : "");
    n += (size_t)snprintf(text + n, cap - n, "\n    }\n    return ");
    for (int k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, cap - n, "%s%%w#%d", k ? ", " : "", k);
    n += (size_t)snprintf(text + n, cap - n, " : ");
    for (int k = 0; k < N; k++)
        n += (size_t)snprintf(text + n, cap - n, "%stensor<8x128xf32>", k ? ", " : "");
    n += (size_t)snprintf(text + n, cap - n, "\n  }\n}\n");
    assert_true(n < cap);
    hlo = translate(text);
    assert_has(hlo, "  v299 = f32[8,128] get-tuple-element(#param), index=299\n");
    assert_has(hlo, ", v0)\n}");           /* the body's ROOT, 300 operands */
    assert_has(hlo, ", w#298, w#299)\n}"); /* the entry's ROOT */
    free(hlo);
    /* the while's 300 results are the module's outputs */
    import(text, &m);
    assert_int_equal(tensor(&m, "w{299}")->kind, TENSOR_OUTPUT);
    assert_int_equal(tensor(&m, "w{299}")->shape.dims[1], 128);
    assert_int_equal(m.n, 302); /* a, p and the while's 300 results */
    model_free(&m);
    free(text);
}

/* Location names: an argument's loc("x") names its parameter (op_name); loc(#locN) resolves
 * through the #locN = loc(..) lines after the module, callsite(X at Y) takes X's name,
 * fused[..] its first part's that has one; a file position, loc(unknown), an undefined or a
 * cyclic alias give none. */
static void test_location_names_resolve_to_op_names(void **state)
{
    static const char text[] =
        "#loc = loc(unknown)\n"
        "module @m {\n"
        "  func.func public @main(%arg0: tensor<8x128xf32> loc(\"x\"), %arg1: tensor<8x128xf32> "
        "{mhlo.sharding = \"{replicated}\"} loc(\"params[\\\"w\\\"]\"), %arg2: tensor<8x128xf32> "
        "loc(#loc1)) -> (tensor<8x128xf32>) {\n"
        "    %c = stablehlo.constant dense<0> : tensor<i32>\n"
        "    %0 = stablehlo.add %arg0, %arg1 : tensor<8x128xf32> loc(#loc3)\n"
        "    %1 = stablehlo.multiply %arg0, %arg2 : tensor<8x128xf32> loc(#loc4)\n"
        "    %2 = stablehlo.tanh %arg0 : tensor<8x128xf32> loc(#loc5)\n"
        "    %3 = stablehlo.exponential %arg1 : tensor<8x128xf32> loc(#loc1)\n"
        "    %4 = stablehlo.negate %arg2 : tensor<8x128xf32> loc(#loc8)\n"
        "    %5 = stablehlo.abs %arg0 : tensor<8x128xf32> loc(#loc404)\n"
        "    %6 = stablehlo.sine %arg1 : tensor<8x128xf32> loc(callsite(callsite(\"inner\" at "
        "\"f.py\":1:0) at #loc1))\n"
        "    %7 = \"stablehlo.case\"(%c) ({\n"
        "      stablehlo.return %6 : tensor<8x128xf32> loc(#loc)\n"
        "    }) : (tensor<i32>) -> tensor<8x128xf32> loc(#loc6)\n"
        "    return %7 : tensor<8x128xf32> loc(#loc)\n"
        "  } loc(#loc)\n"
        "} loc(#loc)\n"
        "#loc1 = loc(\"f.py\":3:0)\n"
        "#loc2 = loc(\"jit(f)/mul\"(#loc1))\n"
        "#loc3 = loc(\"jit(f)/add\"(#loc1))\n"
        "#loc4 = loc(callsite(#loc2 at #loc1))\n"
        "#loc5 = loc(fused[#loc1, \"f.py\":4:2 to 4:9, \"jit(f)/tanh\"(\"f.py\":4:0), \"later\"])\n"
        "#loc6 = loc(fused<\"meta, [x]\">[unknown, #loc7])\n"
        "#loc7 = loc(\"jit(f)/cond\")\n"
        "#loc8 = loc(#loc9)\n"
        "#loc9 = loc(#loc8)\n";
    static const char *const want[][2] = {
        {"arg0", "x"},
        {"arg1", "params[\"w\"]"}, /* the string's value: its escapes undone */
        {"arg2", ""},
        {"0", "jit(f)/add"},
        {"1", "jit(f)/mul"},
        {"2", "jit(f)/tanh"},
        {"3", ""},
        {"4", ""},
        {"5", ""},
        {"6", "inner"},
        {"7{0}", "jit(f)/cond"},
    };
    struct model m;
    (void)state;
    import(text, &m);
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        const struct model_tensor *x = tensor(&m, want[k][0]);
        const char *got = x->op_name != NULL ? x->op_name : "";
        if (strcmp(got, want[k][1]) != 0)
            fail_msg("%s: op_name \"%s\", wanted \"%s\"", want[k][0], got, want[k][1]);
    }
    model_free(&m);
}

/* Shardy: an argument's sdy.sharding over a module's sdy.mesh (or an inline mesh) becomes
 * the HLO sharding, so it is planned per device as with mhlo.sharding: a dim split over
 * axes x (4) and y (2) spans 8 devices; devices no dim spans are a replicated last tile dim. */
static void test_shardy_shardings_plan_per_device(void **state)
{
    static const char text[] =
        "module @jit_f attributes {mhlo.num_partitions = 8 : i32} {\n"
        "  sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>\n"
        "  sdy.mesh @old = <\"a\"=2, \"b\"=2>\n"
        "  func.func public @main("
        "%arg0: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}, "
        "%arg1: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\", \"y\"}, {}]>}, "
        "%arg2: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"y\"}, {\"x\", ?}p1]>}, "
        "%arg3: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {?}], "
        "replicated={\"x\"}>}, "
        "%arg4: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<mesh<[\"a\"=2], "
        "device_ids=[1, 0]>, [{\"a\"}p0, {}]>} loc(\"w\"), "
        "%arg5: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\":(1)2}, {\"y\"}]>, "
        "tf.aliasing_output = 0 : i32}, "
        "%arg6: tensor<64x128xf32> {sdy.sharding = #sdy.sharding<@old, [{\"b\"}, {\"a\"}]>}) "
        "-> (tensor<64x128xf32>) {\n"
        "    return %arg5 : tensor<64x128xf32>\n"
        "  }\n"
        "}\n";
    static const struct {
        const char *name, *sharding;
        int64_t d0, d1;
    } want[] = {
        {"arg0", "{devices=[4,1,2]<=[8] last_tile_dim_replicate}", 16, 128},
        {"arg1", "{devices=[8,1]<=[8]}", 8, 128},
        {"arg2", "{devices=[2,4]<=[8]}", 32, 32},
        {"arg3", "{replicated}", 64, 128},
        {"arg4", "{devices=[2,1]<=[2]}", 32, 128},
        {"arg5", "{devices=[2,2,2]<=[8] last_tile_dim_replicate}", 32, 64},
        {"arg6", "{devices=[2,2]<=[4]}", 32, 64},
    };
    struct model m;
    char line[256];
    (void)state;
    char *hlo = translate(text);
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        snprintf(line, sizeof(line), "%s = f32[64,128] parameter(%zu), sharding=%s", want[k].name,
                 k, want[k].sharding);
        assert_has(hlo, line);
    }
    assert_has(hlo, "parameter(4), sharding={devices=[2,1]<=[2]}, metadata={op_name=\"w\"}");
    free(hlo);
    import(text, &m);
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        const struct model_tensor *x = tensor(&m, want[k].name);
        if (x->shape.dims[0] != want[k].d0 || x->shape.dims[1] != want[k].d1)
            fail_msg("%s: [%lld, %lld] per device, wanted [%lld, %lld]", want[k].name,
                     (long long)x->shape.dims[0], (long long)x->shape.dims[1],
                     (long long)want[k].d0, (long long)want[k].d1);
    }
    assert_true(tensor(&m, "arg5")->donated);
    model_free(&m);
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

/* expect_error on head followed by body. */
static void expect_error_after(const char *head, const char *body, const char *where,
                               const char *what)
{
    char text[1024];
    snprintf(text, sizeof(text), "%s%s", head, body);
    expect_error(text, where, what);
}

/* Tuples as the StableHLO printer writes them (stablehlo/tests/print_stablehlo.mlir 236-245 at
 * 3c9301c1): tuple's type is only the result's, get_tuple_element reads [N] (or the generic
 * index = N); tuple types nest. Tuples and their elements define no memory (hlo_model.h):
 * the one buffer is arg0, s32[] of 512 B, live for the whole program. */
static void test_tuples_nest_and_alias(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%arg0: tensor<i32>) -> tuple<tensor<i32>, tuple<tensor<i32>>> {\n"
        "    %0 = stablehlo.tuple %arg0, %arg0 : tuple<tensor<i32>, tensor<i32>>\n"
        "    %1 = stablehlo.tuple %arg0 : tuple<tensor<i32>>\n"
        "    %2 = stablehlo.tuple : tuple<>\n"
        "    %3 = stablehlo.get_tuple_element %1[0] : (tuple<tensor<i32>>) -> tensor<i32>\n"
        "    %4 = \"stablehlo.get_tuple_element\"(%0) <{index = 1 : i32}> : "
        "(tuple<tensor<i32>, tensor<i32>>) -> tensor<i32>\n"
        "    %5 = stablehlo.tuple %4, %1 : tuple<tensor<i32>, tuple<tensor<i32>>>\n"
        "    return %5 : tuple<tensor<i32>, tuple<tensor<i32>>>\n"
        "  }\n"
        "}\n";
    struct model m;
    (void)state;
    char *hlo = translate(text);
    assert_has(hlo, "  0 = (s32[], s32[]) tuple(arg0, arg0)\n");
    assert_has(hlo, "  2 = () tuple()\n");
    assert_has(hlo, "  3 = s32[] get-tuple-element(1), index=0\n");
    assert_has(hlo, "  4 = s32[] get-tuple-element(0), index=1\n");
    assert_has(hlo, "  5 = (s32[], (s32[])) tuple(4, 1)\n");
    assert_has(hlo, "  ROOT #ret = ((s32[], (s32[]))) tuple(5)\n");
    free(hlo);
    import(text, &m);
    assert_int_equal(m.n, 1);
    assert_live(tensor(&m, "arg0"), 0, 8);
    model_free(&m);
    assert_int_equal(plan_peak(text, "stablehlo"), 512);
}

/* Quoted symbols (LangRef: symbol-ref-id ::= '@' (suffix-id | string-literal)), as JAX names a
 * lambda: @"<lambda>" is a computation of its own name, @"helper" is @helper, a quoted
 * custom call target is the target's text; named results %a, %b. */
static void test_quoted_symbols_and_named_results(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func public @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {\n"
        "    %0 = call @\"<lambda>\"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "    %1 = func.call @\"helper\"(%0) : (tensor<4xf32>) -> tensor<4xf32>\n"
        "    %a, %b = stablehlo.custom_call @\"my-target\"(%1) : (tensor<4xf32>) -> "
        "(tensor<4xf32>, tensor<4xf32>)\n"
        "    %2 = stablehlo.add %b, %a : tensor<4xf32>\n"
        "    return %2, %b : tensor<4xf32>, tensor<4xf32>\n"
        "  }\n"
        "  func.func private @\"<lambda>\"(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = stablehlo.negate %arg0 : tensor<4xf32>\n"
        "    return %0 : tensor<4xf32>\n"
        "  }\n"
        "  func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    return %x : tensor<4xf32>\n"
        "  }\n"
        "}\n";
    (void)state;
    char *hlo = translate(text);
    assert_has(hlo, "\n_q-3clambda-3e {\n  arg0 = f32[4] parameter(0)\n");
    assert_has(hlo, "  0 = (f32[4]) call(arg0), to_apply=_q-3clambda-3e\n");
    assert_has(hlo, "  1 = (f32[4]) call(0#0), to_apply=helper\n");
    assert_has(hlo, "  a = (f32[4], f32[4]) custom-call(1#0), custom_call_target=\"my-target\"\n"
                    "  a#0 = f32[4] get-tuple-element(a), index=0\n"
                    "  a#1 = f32[4] get-tuple-element(a), index=1\n");
    assert_has(hlo, "  2 = f32[4] add(a#1, a#0)\n  ROOT #ret = (f32[4], f32[4]) tuple(2, a#1)\n");
    free(hlo);
}

/* Quantized element types are planned at their storage type (the quant dialect's
 * UniformQuantizedType; the StableHLO spec's QuantizedTensorElementType): per tensor
 * (stablehlo/testdata/quantized/abs_shape_float32_20_20_qi8.mlir), per axis with a storage
 * range, unsigned and 4-bit storage. uniform_dequantize has no HLO opcode (XLA lowers it
 * before HLO): a custom call of its name. */
static void test_quantized_types_take_their_storage_type(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%arg0: tensor<20x20x!quant.uniform<i8:f32, "
        "0.0039215482917486456:-128>>, %arg1: tensor<2x!quant.uniform<i8<-127:127>:f32:0, "
        "{0.072314441204071045,0.050758145749568939}>>, %arg2: tensor<3x!quant.uniform<u8:f32, "
        "5.000000e-01:3>>, %arg3: tensor<8x!quant.uniform<i4:f32, 1.000000e+00>>) -> "
        "tensor<20x20xf32> {\n"
        "    %0 = stablehlo.abs %arg0 : tensor<20x20x!quant.uniform<i8:f32, "
        "0.0039215482917486456:-128>>\n"
        "    %1 = stablehlo.uniform_dequantize %0 : (tensor<20x20x!quant.uniform<i8:f32, "
        "0.0039215482917486456:-128>>) -> tensor<20x20xf32>\n"
        "    return %1 : tensor<20x20xf32>\n"
        "  }\n"
        "}\n";
    (void)state;
    char *hlo = translate(text);
    assert_has(hlo, "  arg0 = s8[20,20] parameter(0)\n  arg1 = s8[2] parameter(1)\n"
                    "  arg2 = u8[3] parameter(2)\n  arg3 = s4[8] parameter(3)\n");
    assert_has(hlo, "  0 = s8[20,20] abs(arg0)\n");
    assert_has(hlo, "  1 = f32[20,20] custom-call(0), "
                    "custom_call_target=\"stablehlo.uniform_dequantize\"\n");
    free(hlo);
}

/* tests/fuzz/corpus/fuzz_stablehlo/seed12: a manual computation of two results over mesh
 * a=2, b=2, manual in "a" only: its body's ops carry their own shardings (sharding_per_value,
 * mhlo.sharding), the function's results theirs. */
static const char MANUAL[] =
    "module @m {\n"
    "  sdy.mesh @mesh = <[\"a\"=2, \"b\"=2]>\n"
    "  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"a\", \"b\"}, {}]>}) -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, "
    "[{\"a\"}, {\"b\"}]>}, tensor<8x4xf32>) {\n"
    "    %0:2 = sdy.manual_computation(%arg0, %arg0) in_shardings=[<@mesh, [{\"a\", \"b\"}, "
    "{}]>, <@mesh, [{\"a\"}, {?}]>] out_shardings=[<@mesh, [{\"a\"}, {\"b\"}]>, <@mesh, [{}, "
    "{}], replicated={\"a\"}>] manual_axes={\"a\"} (%x: tensor<4x4xf32>, %y: "
    "tensor<4x4xf32>) {\n"
    "      %1 = stablehlo.add %x, %y {sdy.sharding = #sdy.sharding_per_value<[<@mesh, "
    "[{\"b\"}, {}]>]>} : tensor<4x4xf32>\n"
    "      %2 = stablehlo.multiply %1, %1 {mhlo.sharding = \"{replicated}\"} : "
    "tensor<4x4xf32>\n"
    "      %3 = \"stablehlo.all_gather\"(%2) <{all_gather_dim = 0 : i64, replica_groups = "
    "dense<[[0, 1]]> : tensor<1x2xi64>}> : (tensor<4x4xf32>) -> tensor<8x4xf32>\n"
    "      sdy.return %1, %3 : tensor<4x4xf32>, tensor<8x4xf32>\n"
    "    } : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)\n"
    "    return %0#0, %0#1 : tensor<8x4xf32>, tensor<8x4xf32>\n"
    "  }\n"
    "}\n";

/*
 * The body takes each operand divided by its manual axes only ("a": 8 / 2 rows; "b" is free)
 * and is a computation called on SPMDFullToShardShape custom calls; each result goes back
 * through SPMDShardToFullShape with its out_sharding (every axis). Entry steps: 0 arg0,
 * 1-2 the two 0#in.k, 3 the call, 4 0#body.0, 5 0#0, 6 0#body.1, 7 0#1, 8 the return.
 *   arg0 f32[8,4] split 4 ways (a, b) on dim 0: f32[2,4] per device, T(2,128): 1024 [0, 9).
 *   0#in.0, 0#in.1 f32[4,4], T(4,128): 2048 each, [1, 4) and [2, 4).
 *   0#body{0} f32[4,4] 2048 [3, 6); 0#body{1} f32[8,4], T(8,128): 4096 [3, 8).
 *   0#body/temps: the body's own buffer %2 (f32[4,4], replicated): 2048 at step 3 (%1 and %3
 *   are its results, the call's buffers).
 *   0#0 f32[8,4] {devices=[2,2]}: f32[4,2] per device, 2048 [5, 9); 0#1 replicated 4096 [7, 9).
 * Peak at step 3: 1024 + 2048 + 2048 + 2048 + 4096 + 2048 = 13312.
 */
static void test_manual_computation_is_planned_per_device(void **state)
{
    struct model m;
    (void)state;
    char *hlo = translate(MANUAL);
    assert_has(hlo, "main.0.manual {\n  x = f32[4,4] parameter(0)\n  y = f32[4,4] parameter(1)\n"
                    "  1 = f32[4,4] add(x, y), sharding={devices=[2,1,2]<=[4] "
                    "last_tile_dim_replicate}\n  2 = f32[4,4] multiply(1, 1), "
                    "sharding={replicated}\n");
    assert_has(hlo, "  arg0 = f32[8,4] parameter(0), sharding={devices=[4,1]<=[4]}\n"
                    "  0#in.0 = f32[4,4] custom-call(arg0), "
                    "custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
                    "  0#in.1 = f32[4,4] custom-call(arg0), "
                    "custom_call_target=\"SPMDFullToShardShape\", sharding={manual}\n"
                    "  0#body = (f32[4,4], f32[8,4]) call(0#in.0, 0#in.1), "
                    "to_apply=main.0.manual\n");
    assert_has(hlo, "  0#0 = f32[8,4] custom-call(0#body.0), "
                    "custom_call_target=\"SPMDShardToFullShape\", sharding={devices=[2,2]<=[4]}\n");
    assert_has(hlo, "  0#1 = f32[8,4] custom-call(0#body.1), "
                    "custom_call_target=\"SPMDShardToFullShape\", sharding={replicated}\n");
    assert_has(hlo, "  ROOT #ret = (f32[8,4], f32[8,4]) tuple(0#0, 0#1), "
                    "sharding={{devices=[2,2]<=[4]}, {replicated}}\n");
    free(hlo);
    import(MANUAL, &m);
    assert_int_equal(m.n, 8);
    assert_int_equal(tensor(&m, "0#body/temps")->padded_bytes, 2048);
    assert_live(tensor(&m, "0#body/temps"), 3, 4);
    assert_live(tensor(&m, "0#body{1}"), 3, 8);
    const struct model_tensor *r = tensor(&m, "0#0");
    assert_int_equal(r->shape.dims[0], 4);
    assert_int_equal(r->shape.dims[1], 2);
    assert_live(r, 5, 9);
    model_free(&m);
    assert_int_equal(plan_peak(MANUAL, "stablehlo"), 13312);
}

/* What jax.export prints around custom calls and memory kinds (jax-export's
 * annotate_data_placement and cpu_cholesky_lapack_potrf records):
 * - mhlo.memory_kind = "pinned_host" / "unpinned_host" puts an argument in XLA's host memory
 *   space S(5) (xla/layout.h kHostMemorySpace), left out of the HBM plan; "device" is HBM;
 *   so does custom_call @annotate_device_placement with _xla_buffer_placement =
 *   "pinned_host" its result (XLA's MoveToHost);
 * - a custom call's output_operand_aliases become output_to_operand_aliasing, its
 *   mhlo.frontend_attributes' strings frontend_attributes; its typed-FFI mhlo.backend_config
 *   dictionary, api_version and a Shardy rule (whose "->" is no bracket) are read past;
 * - the non-compact reduce's reducer region on the lines after it (AssemblyFormat.cpp
 *   printReduceOp) is skipped like every scalar region;
 * - a location string's escapes (\22 is '"', \5C '\', mlir Token::getStringValue) undone.
 * Sizes (the default chip, layout.h): f32[4] 1024 B (T(256)), f32[] 512 B (T(128)).
 * Steps: 0-2 arg0-arg2, 3 %0, 4 %1, 5 %2, 6 %cst, 7 %3, 8 the return; the constant is live
 * for the whole program. arg1, arg2 and %1 are in host memory, not counted. Steps 3-4:
 * arg0 1024 + %0 1024 (read by %1) + cst 512 = 2560; step 5: arg0 + %2 + cst = 2560; the
 * peak at step 7: arg0 1024 + %2 1024 (read by the reduce) + cst 512 + %3 512 = 3072 (with
 * %1 in HBM it would be 3584, at step 4). */
static void test_custom_call_attributes_and_host_memory(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func public @main(%arg0: tensor<4xf32> {mhlo.memory_kind = \"device\"}, "
        "%arg1: tensor<4xf32> {mhlo.memory_kind = \"pinned_host\"}, %arg2: tensor<2x4xf32> "
        "{mhlo.memory_kind = \"unpinned_host\", mhlo.sharding = \"{replicated}\"}) -> "
        "tensor<f32> {\n"
        "    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32> loc(\"a\\22b\\5Cc\")\n"
        "    %1 = stablehlo.custom_call @annotate_device_placement(%0) {has_side_effect = true, "
        "mhlo.frontend_attributes = {_xla_buffer_placement = \"pinned_host\", n = 3 : i64}} : "
        "(tensor<4xf32>) -> tensor<4xf32>\n"
        "    %2 = stablehlo.custom_call @lapack_spotrf_ffi(%1) {api_version = 4 : i32, "
        "mhlo.backend_config = {uplo = 76 : ui8}, operand_layouts = [dense<0> : "
        "tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<"
        "output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], "
        "result_layouts = [dense<0> : tensor<1xindex>], sdy.sharding_rule = "
        "#sdy.op_sharding_rule<([i])->([i]) {i=4}, custom>} : (tensor<4xf32>) -> "
        "tensor<4xf32>\n"
        "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n"
        "    %3 = stablehlo.reduce(%2 init: %cst) across dimensions = [0] : (tensor<4xf32>, "
        "tensor<f32>) -> tensor<f32>\n"
        "     reducer(%a: tensor<f32>, %b: tensor<f32>)  {\n"
        "      %4 = stablehlo.add %a, %b : tensor<f32>\n"
        "      stablehlo.return %4 : tensor<f32>\n"
        "    }\n"
        "    return %3 : tensor<f32>\n"
        "  }\n"
        "}\n";
    struct model m;
    (void)state;
    char *hlo = translate(text);
    assert_has(hlo, "  arg0 = f32[4] parameter(0)\n  arg1 = f32[4]{0:S(5)} parameter(1)\n"
                    "  arg2 = f32[2,4]{1,0:S(5)} parameter(2), sharding={replicated}\n");
    assert_has(hlo, "  0 = f32[4] add(arg0, arg1), metadata={op_name=\"a\\\"b\\\\c\"}\n");
    assert_has(hlo, "  1 = f32[4]{0:S(5)} custom-call(0), "
                    "custom_call_target=\"annotate_device_placement\", "
                    "frontend_attributes={_xla_buffer_placement=\"pinned_host\"}\n");
    assert_has(hlo, "  2 = f32[4] custom-call(1), custom_call_target=\"lapack_spotrf_ffi\", "
                    "output_to_operand_aliasing={{}: (0, {})}\n");
    assert_has(hlo, "  3 = f32[] reduce(2, cst)");
    free(hlo);

    import(text, &m);
    assert_int_equal(m.n, 5); /* arg0, %0, %2, %cst, %3: not arg1, arg2, %1 */
    assert_string_equal(tensor(&m, "0")->op_name, "a\"b\\c");
    assert_warned(&m, "3 HLO buffers in "); /* host memory, apart from HBM */
    model_free(&m);
    assert_int_equal(plan_peak(text, "stablehlo"), 3072);
}

/* stablehlo.composite (StablehloOps.td CompositeOp; stablehlo/tests/interpret/composite.mlir):
 * pretty ("name" operands {attrs} : type, the attributes across lines) and generic; planned
 * as a call of its decomposition (XLA inlines it, or keeps it a call when told to); one with
 * no results defines no value and is left out. */
static void test_composites_are_calls_of_their_decomposition(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = stablehlo.composite \"my.add_n\" %arg0, %arg1 {\n"
        "        composite_attributes = { n = 2 : i64 },\n"
        "        decomposition = @add_n.impl\n"
        "      } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
        "    %1 = \"stablehlo.composite\"(%0, %arg1) {composite_attributes = {}, decomposition = "
        "@add_n.impl, name = \"my.add_n\", version = 1 : i32} : (tensor<4xf32>, tensor<4xf32>) "
        "-> tensor<4xf32>\n"
        "    stablehlo.composite \"my.effect\" %1 {decomposition = @effect} : (tensor<4xf32>) -> "
        "()\n"
        "    return %1 : tensor<4xf32>\n"
        "  }\n"
        "  func.func private @add_n.impl(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = stablehlo.add %a, %b : tensor<4xf32>\n"
        "    %1 = stablehlo.multiply %0, %0 : tensor<4xf32>\n"
        "    return %1 : tensor<4xf32>\n"
        "  }\n"
        "  func.func private @effect(%a: tensor<4xf32>) {\n"
        "    return\n"
        "  }\n"
        "}\n";
    (void)state;
    char *hlo = translate(text);
    assert_has(hlo, "\nadd_n.impl {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n");
    assert_has(hlo, "  0 = (f32[4]) call(arg0, arg1), to_apply=add_n.impl\n");
    assert_has(hlo, "  1 = (f32[4]) call(0#0, arg1), to_apply=add_n.impl\n");
    free(hlo);
    /* The decomposition's %1 is written into its %0 (an elementwise op into an operand that
     * dies there), its result: no temps. Peak at the second call: arg0 + arg1 + 0{0} (read
     * by it) + 1{0}, 1024 B each (f32[4], T(256)) = 4096. */
    assert_int_equal(plan_peak(text, "stablehlo"), 4096);
}

/* A skipped group ends at its own closing bracket: a function type's "->" inside it (a
 * Shardy rule, shardy/dialect/sdy/ir/attrs.td OpShardingRuleAttr) closes nothing, nor does
 * a bracket in a string; a group left open is an error. */
static void test_skipped_groups_read_past_arrows_and_strings(void **state)
{
    static const struct {
        const char *text;
        size_t end; /* where the cursor stops: past the group */
        bool ok;
    } cases[] = {
        {"<([i], [j])->([i]) {i=4, j=2}, custom>, x", 38, true},
        {"{f = (tensor<4xf32>) -> tensor<4xf32>} : t", 38, true},
        {"(\")>\\\"\" -> x) y", 13, true},
        {"<a -> b", 0, false},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct err e;
        struct cursor c = cursor_make(cases[k].text, strlen(cases[k].text), &e);
        err_clear(&e);
        int rc = sh_skip_group(&c);
        if ((rc == ERR_OK) != cases[k].ok || (cases[k].ok && c.i != cases[k].end))
            fail_msg("case %zu: rc %d at %zu, wanted %s at %zu", k, rc, c.i,
                     cases[k].ok ? "ok" : "an error", cases[k].end);
    }
}

static void test_errors_give_line_and_column(void **state)
{
    (void)state;
    expect_error("module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                 "    %0 = stablehlo.add %a, %b : tensor<4xf32>\n    return %0 : tensor<4xf32>\n"
                 "  }\n}\n",
                 "line 3:28", "%b is not defined before its use");
    expect_error("module @m {\n  func.func @main(%a: tensor<?xf32>) -> tensor<4xf32> {\n",
                 "line 2:30", "dim 0 of 'tensor<?xf32>' is dynamic (?)");
    /* the dim counted from 0, the column the '?' */
    expect_error("module @m {\n  func.func @main(%a: tensor<4x?x2xbf16>) -> tensor<4xf32> {\n",
                 "line 2:32", "dim 1 of 'tensor<4x?x2xbf16>' is dynamic (?)");
    expect_error("module @m {\n  func.func @main(%a: tensor<*xf32>) -> tensor<4xf32> {\n",
                 "line 2:30", "'tensor<*xf32>' is unranked");
    expect_error("module @m {\n  func.func @main(%a: memref<4xf32>) -> tensor<4xf32> {\n",
                 "line 2:23", "expected a tensor<..>, tuple<..> or token type");
    expect_error("module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                 "    %0 = stablehlo.negate %a\n",
                 "line 3:5", "expected ': type'");
    expect_error("module @m {\n}\n", "line 2:1", "expected a func.func");
    /* types */
    expect_error("module @m {\n  func.func @main(%a: tensor<4xindex>) -> tensor<4xf32> {\n",
                 "line 2:32", "the element type 'index' has no XLA equivalent");
    expect_error("module @m {\n  func.func @main(%a: tensor<4x!quant.uniform<f32:f32, 1.0>>) -> "
                 "tensor<4xf32> {\n",
                 "line 2:32", "expected the integer storage type of a !quant.uniform type");
    expect_error("module @m {\n  func.func @main(%a: tuple<tuple<tuple<tuple<tuple<tuple<tuple<"
                 "tuple<tuple<tensor<f32>>>>>>>>>>) -> tensor<4xf32> {\n",
                 "line 2:71", "tuple types nested more than 8 deep");
}

static void test_errors_in_results_and_returns(void **state)
{
    (void)state;
    /* named results, get_tuple_element */
    static const char fn[] =
        "module @m {\n  func.func @main(%x: tensor<4xf32>, %t: tuple<tensor<i32>>) -> "
        "tensor<4xf32> {\n";
    expect_error_after(fn, "    %a, %b = stablehlo.negate %x : tensor<4xf32>\n", "line 3:5",
                       "2 results but 1 result types");
    expect_error_after(fn, "    %a, = stablehlo.negate %x : tensor<4xf32>\n", "line 3:9",
                       "expected %name in the results");
    expect_error_after(fn,
                       "    %0 = stablehlo.get_tuple_element %t : (tuple<tensor<i32>>) -> "
                       "tensor<i32>\n",
                       "line 3:5", "expected the tuple index [N]");
    expect_error_after(fn, "    %0 = call @\"f(%x) : (tensor<4xf32>) -> tensor<4xf32>\n",
                       "line 3:16", "unterminated string");
    /* a return's values and types */
    expect_error("module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                 "    return %a, %a : tensor<4xf32>\n  }\n}\n",
                 "line 3:5", "the return has 2 values but 1 types");
    expect_error("module @m {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                 "    \"func.return\"(%a) : () -> ()\n  }\n}\n",
                 "line 3:5", "the return has 1 values but 0 types");
}

static void test_errors_in_regions(void **state)
{
    (void)state;
    /* regions */
    static const char head[] =
        "module @m {\n  func.func @main(%i: tensor<i32>, %x: tensor<4xf32>) -> tensor<4xf32> {\n";
    expect_error_after(head,
                       "    %0 = \"stablehlo.case\"(%i, %x) ({\n      stablehlo.return %x : "
                       "tensor<4xf32>\n    }) : (tensor<i32>) -> tensor<4xf32>\n",
                       "line 3:5", "a case takes one operand, not 2");
    expect_error_after(head, "    %0 = \"stablehlo.case\"(%i) ({\n    ^bb0(%y: tensor<4xf32>):\n",
                       "line 4:5", "a case's branch takes no arguments");
    expect_error_after(
        head,
        "    %0 = \"stablehlo.if\"(%i) ({\n      stablehlo.return %x : tensor<4xf32>\n"
        "    }) : (tensor<i32>) -> tensor<4xf32>\n",
        "line 3:5", "a if has 2 regions, not 1");
    expect_error_after(
        head,
        "    %0 = \"stablehlo.case\"(%i) ({\n      stablehlo.return %x : tensor<4xf32>\n"
        "    }) : (tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>)\n",
        "line 3:5", "the case has 1 results but 2 result types");
    expect_error_after(head,
                       "    %0 = \"stablehlo.while\"(%x) ({\n      stablehlo.return %x : "
                       "tensor<4xf32>\n",
                       "line 4:7", "expected the while region's arguments");
    expect_error_after(
        head,
        "    %0 = \"stablehlo.while\"(%x) ({\n    ^bb0(%y: tensor<4xf32>):\n"
        "      stablehlo.return %y : tensor<4xf32>\n    }, {\n    ^bb0(%y: tensor<8xf32>):\n",
        "line 7:29", "the while's regions take different arguments");
    expect_error_after(head,
                       "    %0 = \"stablehlo.case\"(%i) ({\n      %x = stablehlo.negate %i : "
                       "tensor<i32>\n",
                       "line 4:7", "%x is defined twice");
    /* a generic op's types after a region: their own line and column (the types were read
     * with the line and column of where the op ended: "line 3:4294967290" before) */
    expect_error_after(head,
                       "    %0 = \"stablehlo.reduce\"(%x, %x) ({\n    ^bb0(%a: tensor<f32>, %b: "
                       "tensor<f32>):\n      stablehlo.return %a : tensor<f32>\n"
                       "    }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32\n  }\n}\n",
                       "line 6:54", "expected '>' to close the tensor type");
}

static void test_errors_in_shardings(void **state)
{
    (void)state;
    /* Shardy */
    static const char mesh[] = "module @m {\n  sdy.mesh @mesh = <[\"x\"=4, \"y\"=2]>\n";
    expect_error_after(mesh,
                       "  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nope, "
                       "[{}]>}) -> tensor<8xf32> {\n",
                       "line 3:67", "no sdy.mesh @nope before this sharding");
    expect_error_after(mesh,
                       "  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
                       "[{\"y\", \"z\"}]>}) -> tensor<8xf32> {\n",
                       "line 3:81", "the mesh has no axis \"z\"");
    expect_error_after(mesh,
                       "  func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
                       "[{\"x\"}, {\"x\"}]>}) -> tensor<8xf32> {\n",
                       "line 3:85", "axis \"x\" is used twice");
    expect_error_after(mesh,
                       "  func.func @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
                       "[{\"x\"}]>}) -> tensor<8xf32> {\n",
                       "line 3:83", "the sharding has 1 dims but the array 2");
    expect_error_after(mesh,
                       "  func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, "
                       "[{\"x\":(2)4}]>}) -> tensor<8xf32> {\n",
                       "line 3:76", "expected a sub-axis \"x\":(pre)size that divides its axis");
    /* manual computations */
    static const char mc[] = "module @m {\n  sdy.mesh @mesh = <[\"a\"=2]>\n"
                             "  func.func @main(%x: tensor<8x4xf32>, %y: tensor<7x4xf32>) -> "
                             "tensor<8x4xf32> {\n";
    expect_error_after(mc,
                       "    %0 = sdy.manual_computation(%x) in_shardings=[<@mesh, [{\"a\"}, {}]>] "
                       "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%z: "
                       "tensor<8x4xf32>) {\n      sdy.return %z : tensor<8x4xf32>\n    } : "
                       "(tensor<8x4xf32>) -> tensor<8x4xf32>\n",
                       "line 4:50",
                       "the operands (f32[8,4]) are (f32[4,4]) on one device (manual axes), but "
                       "the body takes (f32[8,4])");
    expect_error_after(
        mc,
        "    %0 = sdy.manual_computation(%y) in_shardings=[<@mesh, [{\"a\"}, {}]>] "
        "out_shardings=[<@mesh, [{\"a\"}, {}]>] manual_axes={\"a\"} (%z: "
        "tensor<4x4xf32>) {\n      sdy.return %z : tensor<4x4xf32>\n    } : "
        "(tensor<7x4xf32>) -> tensor<8x4xf32>\n",
        "line 4:51", "dim 0 of value 0 (7) is not a multiple of the 2 devices of its manual axes");
    expect_error_after(mc,
                       "    %0 = sdy.manual_computation(%x, %x) in_shardings=[] out_shardings=[] "
                       "manual_axes={} (%z: tensor<8x4xf32>) {\n",
                       "line 4:110", "the body takes 1 arguments for 2 operands");
    expect_error("module @m {\n  sdy.mesh @big = <[\"x\"=1024, \"y\"=1024, \"z\"=2]>\n",
                 "line 2:41", "the mesh has more than 1048576 devices");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jax_module_translates_with_donation),
        cmocka_unit_test(test_element_types_are_named_as_xla_names_them),
        cmocka_unit_test(test_cond_and_while_temps_match_the_hand_count),
        cmocka_unit_test(test_if_case_and_nested_while_read_through_regions),
        cmocka_unit_test(test_long_lists_grow_the_name_table),
        cmocka_unit_test(test_location_names_resolve_to_op_names),
        cmocka_unit_test(test_shardy_shardings_plan_per_device),
        cmocka_unit_test(test_tuples_nest_and_alias),
        cmocka_unit_test(test_quoted_symbols_and_named_results),
        cmocka_unit_test(test_quantized_types_take_their_storage_type),
        cmocka_unit_test(test_manual_computation_is_planned_per_device),
        cmocka_unit_test(test_custom_call_attributes_and_host_memory),
        cmocka_unit_test(test_composites_are_calls_of_their_decomposition),
        cmocka_unit_test(test_skipped_groups_read_past_arrows_and_strings),
        cmocka_unit_test(test_errors_give_line_and_column),
        cmocka_unit_test(test_errors_in_results_and_returns),
        cmocka_unit_test(test_errors_in_regions),
        cmocka_unit_test(test_errors_in_shardings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
