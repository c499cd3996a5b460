/*
 * test_stablehlo_refine.c - StableHLO dynamic dims (?) bound by the user (stablehlo_to_hlo_bound,
 * import/stablehlo_refine.c): the bindings by argument and jax.arg_info name, the folded shape
 * computations, each op's inferred result shape, worked out by hand; the errors: a binding
 * naming no argument, a shape against a static dim, a rank, an unfoldable shape operand, a
 * negative or huge value, an overflowing fold.
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
#include "planner/model.h"
#include "planner/stablehlo.h"

#include "model_find.h"

/* The HLO of text with bind; fails the test on an error. */
static char *translate(const char *text, const char *bind)
{
    char *hlo;
    size_t n;
    struct err e;
    err_clear(&e);
    if (stablehlo_to_hlo_bound(text, strlen(text), bind, &hlo, &n, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    return hlo;
}

/* Each of want is in the HLO of text bound by bind. */
static void expect_hlo(const char *text, const char *bind, const char *const *want, size_t n)
{
    char *hlo = translate(text, bind);
    for (size_t k = 0; k < n; k++)
        if (strstr(hlo, want[k]) == NULL)
            fail_msg("\"%s\" not in\n%s", want[k], hlo);
    free(hlo);
}

/* text bound by bind is refused with rc, where (the field or line:column) and a message
 * holding what. */
static void expect_refusal(const char *text, const char *bind, int rc, const char *where,
                           const char *what)
{
    char *hlo = NULL;
    size_t n;
    struct err e;
    err_clear(&e);
    assert_int_equal(stablehlo_to_hlo_bound(text, strlen(text), bind, &hlo, &n, &e), rc);
    assert_null(hlo);
    if (strcmp(e.where, where) != 0)
        fail_msg("where \"%s\", wanted \"%s\" (%s)", e.where, where, e.msg);
    if (strstr(e.msg, what) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, what);
}

/* stablehlo-testdata's dynamic__tri_N_poly_M_poly_dynamic.mlir (jnp.tri(N, M=N+2) added to a
 * broadcast ?x1 argument), as exported: %arg0 is the dimension variable N. With N = 5, every
 * shape is [N, N + 2] = [5, 7]: the two dynamic_iota, the dynamic_broadcast_in_dim of 0 and of
 * %arg1 (5x1), the compare, the converts and the adds. */
static const char TRI[] =
    "module @jit_fun_flat_jax {\n"
    "  func.func public @main(%arg0: tensor<i64>, %arg1: tensor<?x1xf32> {mhlo.sharding = \"\"}) "
    "-> tensor<?x?xf32> {\n"
    "    %0 = stablehlo.constant dense<2> : tensor<i64>\n"
    "    %1 = stablehlo.add %arg0, %0 : tensor<i64>\n"
    "    %2 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>\n"
    "    %3 = stablehlo.reshape %2 : (tensor<i32>) -> tensor<1xi32>\n"
    "    %4 = stablehlo.convert %1 : (tensor<i64>) -> tensor<i32>\n"
    "    %5 = stablehlo.reshape %4 : (tensor<i32>) -> tensor<1xi32>\n"
    "    %6 = stablehlo.concatenate %3, %5, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> "
    "tensor<2xi32>\n"
    "    %7 = stablehlo.dynamic_iota %6, dim = 0 : (tensor<2xi32>) -> tensor<?x?xi32>\n"
    "    %8 = stablehlo.constant dense<0> : tensor<i32>\n"
    "    %16 = stablehlo.dynamic_broadcast_in_dim %8, %6, dims = [] : (tensor<i32>, "
    "tensor<2xi32>) -> tensor<?x?xi32>\n"
    "    %17 = stablehlo.add %7, %16 : tensor<?x?xi32>\n"
    "    %25 = stablehlo.dynamic_iota %6, dim = 1 : (tensor<2xi32>) -> tensor<?x?xi32>\n"
    "    %26 = stablehlo.compare  GE, %17, %25,  SIGNED : (tensor<?x?xi32>, tensor<?x?xi32>) -> "
    "tensor<?x?xi1>\n"
    "    %27 = stablehlo.convert %26 : (tensor<?x?xi1>) -> tensor<?x?xf32>\n"
    "    %35 = stablehlo.dynamic_broadcast_in_dim %arg1, %6, dims = [0, 1] : (tensor<?x1xf32>, "
    "tensor<2xi32>) -> tensor<?x?xf32>\n"
    "    %36 = stablehlo.add %27, %35 : tensor<?x?xf32>\n"
    "    return %36 : tensor<?x?xf32>\n"
    "  }\n"
    "}\n";

static void test_tri_binds_to_5x7(void **state)
{
    static const char *const want[] = {
        "arg1 = f32[5,1] parameter(1)",
        "7 = s32[5,7] custom-call(6), custom_call_target=\"stablehlo.dynamic_iota\"",
        "16 = s32[5,7] custom-call(8, 6)",
        "17 = s32[5,7] add(7, 16)",
        "26 = pred[5,7] compare(17, 25)",
        "27 = f32[5,7] convert(26)",
        "35 = f32[5,7] custom-call(arg1, 6)",
        "36 = f32[5,7] add(27, 35)",
        "ROOT #ret = (f32[5,7]) tuple(36)",
    };
    (void)state;
    expect_hlo(TRI, "arg0=5,arg1=5x1", want, sizeof(want) / sizeof(want[0]));
    expect_hlo(TRI, "%arg0=5,%arg1=5x1", want, sizeof(want) / sizeof(want[0]));
}

/* The model of the tri module: each [N, N + 2] value is 5x7, the argument 5x1. */
static void test_tri_model_has_the_bound_shapes(void **state)
{
    static const struct model_limits limits = {64u << 20, 32, 1000000, 1000000, 0};
    static const struct hlo_model_opts o = {.as_written = true, .bind = "arg0=5,arg1=5x1"};
    static const char *const names[] = {"7", "16", "25", "26", "27", "35"};
    struct model m;
    struct err e;
    (void)state;
    err_clear(&e);
    if (stablehlo_import_opts(TRI, strlen(TRI), chip_default(), &limits, &o, &m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        const struct model_tensor *x = tensor(&m, names[k]);
        assert_int_equal(x->shape.rank, 2);
        assert_int_equal(x->shape.dims[0], 5);
        assert_int_equal(x->shape.dims[1], 7);
    }
    assert_int_equal(tensor(&m, "arg1")->shape.dims[0], 5);
    assert_int_equal(tensor(&m, "arg1")->shape.dims[1], 1);
    assert_int_equal(tensor(&m, "27")->shape.dtype, DT_F32);
    assert_int_equal(tensor(&m, "26")->shape.dtype, DT_PRED);
    model_free(&m);
}

/* Every folded op on the way to one shape: arg1 bound 6x3, arg0 = 4.
 * %a = dim 0 of arg1 = 6; %b = 4; %c = 24; %d = 21; %e = 21 / 2 = 10; %f = 21 % 4 = 1;
 * %g = max 10; %h = min 1; %p = 10 > 1; %s = 10; concatenate [10], [1], [7] = [10, 1, 7];
 * slice [0:3:2] = [10, 7]: the iota is s32[10,7]. */
static const char FOLDS[] =
    "module @m {\n"
    "  func.func @main(%arg0: tensor<i64>, %arg1: tensor<?x3xf32>) -> tensor<?x?xi32> {\n"
    "    %a = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>\n"
    "    %b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>\n"
    "    %c = stablehlo.multiply %a, %b : tensor<i32>\n"
    "    %k3 = stablehlo.constant dense<3> : tensor<i32>\n"
    "    %d = stablehlo.subtract %c, %k3 : tensor<i32>\n"
    "    %k2 = stablehlo.constant dense<2> : tensor<i32>\n"
    "    %e = stablehlo.divide %d, %k2 : tensor<i32>\n"
    "    %k4 = stablehlo.constant dense<4> : tensor<i32>\n"
    "    %f = stablehlo.remainder %d, %k4 : tensor<i32>\n"
    "    %g = stablehlo.maximum %e, %f : tensor<i32>\n"
    "    %h = stablehlo.minimum %e, %f : tensor<i32>\n"
    "    %p = stablehlo.compare  GT, %g, %h,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    %s = stablehlo.select %p, %g, %h : tensor<i1>, tensor<i32>\n"
    "    %r1 = stablehlo.reshape %s : (tensor<i32>) -> tensor<1xi32>\n"
    "    %r2 = stablehlo.reshape %h : (tensor<i32>) -> tensor<1xi32>\n"
    "    %k7 = stablehlo.constant dense<[7]> : tensor<1xi32>\n"
    "    %cat = stablehlo.concatenate %r1, %r2, %k7, dim = 0 : (tensor<1xi32>, tensor<1xi32>, "
    "tensor<1xi32>) -> tensor<3xi32>\n"
    "    %sl = stablehlo.slice %cat [0:3:2] : (tensor<3xi32>) -> tensor<2xi32>\n"
    "    %i = stablehlo.dynamic_iota %sl, dim = 0 : (tensor<2xi32>) -> tensor<?x?xi32>\n"
    "    return %i : tensor<?x?xi32>\n"
    "  }\n"
    "}\n";

static void test_shape_computations_fold(void **state)
{
    static const char *const want[] = {"arg1 = f32[6,3] parameter(1)",
                                       "i = s32[10,7] custom-call(sl)",
                                       "ROOT #ret = (s32[10,7]) tuple(i)"};
    (void)state;
    expect_hlo(FOLDS, "arg0=4,arg1=6x3", want, sizeof(want) / sizeof(want[0]));
}

/* Result shapes from the operands: transpose permutes (dims = [1, 0]: 3x6), reduce drops the
 * reduced dims ([1]: 6), concatenate sums its dim (0: 12x3), dynamic_reshape takes its
 * folded shape operand (18), select its operands' shape. The argument is bound by its
 * jax.arg_info name. */
static void test_ops_infer_their_result_shapes(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func public @main(%arg0: tensor<?x3xf32> {jax.arg_info = \"x\", "
        "mhlo.sharding = \"{replicated}\"}) -> (tensor<?xf32>) {\n"
        "    %t = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<?x3xf32>) -> "
        "tensor<3x?xf32>\n"
        "    %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %r = stablehlo.reduce(%arg0 init: %z) applies stablehlo.add across dimensions = [1] "
        ": (tensor<?x3xf32>, tensor<f32>) -> tensor<?xf32>\n"
        "    %c = stablehlo.concatenate %arg0, %arg0, dim = 0 : (tensor<?x3xf32>, "
        "tensor<?x3xf32>) -> tensor<?x3xf32>\n"
        "    %n = stablehlo.constant dense<[18]> : tensor<1xi64>\n"
        "    %d = stablehlo.dynamic_reshape %arg0, %n : (tensor<?x3xf32>, tensor<1xi64>) -> "
        "tensor<?xf32>\n"
        "    %q = stablehlo.compare  GT, %d, %d : (tensor<?xf32>, tensor<?xf32>) -> "
        "tensor<?xi1>\n"
        "    %s = stablehlo.select %q, %d, %d : tensor<?xi1>, tensor<?xf32>\n"
        "    return %r : tensor<?xf32>\n"
        "  }\n"
        "}\n";
    static const char *const want[] = {"arg0 = f32[6,3] parameter(0)",
                                       "t = f32[3,6] transpose(arg0)",
                                       "r = f32[6] reduce(",
                                       "c = f32[12,3] concatenate(arg0, arg0)",
                                       "d = f32[18] custom-call(arg0, n)",
                                       "q = pred[18] compare(d, d)",
                                       "s = f32[18] select(q, d, d)",
                                       "ROOT #ret = (f32[6])"};
    (void)state;
    expect_hlo(text, "x=6x3", want, sizeof(want) / sizeof(want[0]));
}

/* arg0 bound 4x3. pad: dim 0 is 1 + 4 + 2 + 1 x (4 - 1) = 10, dim 1 0 + 3 + 1 = 4;
 * dot_general of 4x3 and its 3x4 transpose: 4x4; the generic form batching dim 0,
 * contracting 1: 4; reverse: 4x3; real_dynamic_slice from [1, 0] to [4, 3] by [2, 2]:
 * ceil(3 / 2) x ceil(3 / 2) = 2x2. */
static void test_pad_dot_and_slices_infer_their_shapes(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%arg0: tensor<?x3xf32>) -> tensor<?x?xf32> {\n"
        "    %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %p = stablehlo.pad %arg0, %z, low = [1, 0], high = [2, 1], interior = [1, 0] : "
        "(tensor<?x3xf32>, tensor<f32>) -> tensor<?x?xf32>\n"
        "    %t = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<?x3xf32>) -> "
        "tensor<3x?xf32>\n"
        "    %d = stablehlo.dot_general %arg0, %t, contracting_dims = [1] x [0] : "
        "(tensor<?x3xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>\n"
        "    %b = \"stablehlo.dot_general\"(%arg0, %arg0) {dot_dimension_numbers = "
        "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
        "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]>} : "
        "(tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?xf32>\n"
        "    %r = stablehlo.reverse %arg0, dims = [0] : tensor<?x3xf32>\n"
        "    %s = stablehlo.constant dense<[1, 0]> : tensor<2xi32>\n"
        "    %l = stablehlo.constant dense<[4, 3]> : tensor<2xi32>\n"
        "    %st = stablehlo.constant dense<2> : tensor<2xi32>\n"
        "    %x = stablehlo.real_dynamic_slice %arg0, %s, %l, %st : (tensor<?x3xf32>, "
        "tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x?xf32>\n"
        "    return %p : tensor<?x?xf32>\n"
        "  }\n"
        "}\n";
    static const char *const want[] = {"p = f32[10,4] pad(arg0, z)", "d = f32[4,4] dot(arg0, t)",
                                       "b = f32[4] dot(arg0, arg0)", "r = f32[4,3] reverse(arg0)",
                                       "x = f32[2,2] custom-call(arg0, s, l, st)"};
    (void)state;
    expect_hlo(text, "arg0=4x3", want, sizeof(want) / sizeof(want[0]));
}

/* The jax.export form: @main passes the dimension variable b (get_dimension_size, i32) and
 * the argument to @_wrapped_jax_export_main, defined after it, which refines the body with
 * b = 3 (x bound 3x4 by its jax.arg_info name): 2b x 4 = 6x4 for the iota, the concatenate
 * and the add; @main's call then returns (f32[6,4]) (a lenient pass learns it first). */
static const char EXPORT[] =
    "module @jit_f attributes {jax.uses_shape_polymorphism = true} {\n"
    "  func.func public @main(%arg0: tensor<?x4xf32> {jax.arg_info = \"x\"}) -> "
    "(tensor<?x4xf32> {jax.result_info = \"\"}) {\n"
    "    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
    "    %1 = call @_wrapped_jax_export_main(%0, %arg0) : (tensor<i32>, tensor<?x4xf32>) -> "
    "tensor<?x4xf32>\n"
    "    return %1 : tensor<?x4xf32>\n"
    "  }\n"
    "  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "
    "\"b\"}, %arg1: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
    "    %0 = stablehlo.constant dense<2> : tensor<i32>\n"
    "    %1 = stablehlo.multiply %arg0, %0 : tensor<i32>\n"
    "    %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>\n"
    "    %3 = stablehlo.constant dense<4> : tensor<1xi32>\n"
    "    %4 = stablehlo.concatenate %2, %3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> "
    "tensor<2xi32>\n"
    "    %5 = stablehlo.dynamic_iota %4, dim = 0 : (tensor<2xi32>) -> tensor<?x4xf32>\n"
    "    %6 = stablehlo.concatenate %arg1, %arg1, dim = 0 : (tensor<?x4xf32>, tensor<?x4xf32>) "
    "-> tensor<?x4xf32>\n"
    "    %7 = stablehlo.add %5, %6 : tensor<?x4xf32>\n"
    "    return %7 : tensor<?x4xf32>\n"
    "  }\n"
    "}\n";

static void test_jax_export_calls_are_refined_through(void **state)
{
    static const char *const want[] = {"arg0 = s32[] parameter(0)",
                                       "arg1 = f32[3,4] parameter(1)",
                                       "5 = f32[6,4] custom-call(4)",
                                       "6 = f32[6,4] concatenate(arg1, arg1)",
                                       "7 = f32[6,4] add(5, 6)",
                                       "1 = (f32[6,4]) call(0, arg0)",
                                       "ENTRY main {\n  arg0 = f32[3,4] parameter(0)"};
    (void)state;
    expect_hlo(EXPORT, "x=3x4", want, sizeof(want) / sizeof(want[0]));
}

/* A function is refined for one call context: called again with other shapes, refused. */
static void test_a_callee_takes_one_call_context(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%arg0: tensor<?xf32>, %arg1: tensor<?xf32>) -> tensor<?xf32> {\n"
        "    %0 = call @f(%arg0) : (tensor<?xf32>) -> tensor<?xf32>\n"
        "    %1 = call @f(%arg1) : (tensor<?xf32>) -> tensor<?xf32>\n"
        "    return %1 : tensor<?xf32>\n"
        "  }\n"
        "  func.func private @f(%a: tensor<?xf32>) -> tensor<?xf32> {\n"
        "    %0 = stablehlo.negate %a : tensor<?xf32>\n"
        "    return %0 : tensor<?xf32>\n"
        "  }\n"
        "}\n";
    static const char *const want[] = {"a = f32[2] parameter(0)", "0 = f32[2] negate(a)",
                                       "1 = (f32[2]) call(arg1)"};
    (void)state;
    expect_hlo(text, "arg0=2,arg1=2", want, sizeof(want) / sizeof(want[0]));
    expect_refusal(text, "arg0=2,arg1=3", ERR_INVALID, "line 4:5",
                   "@f is called with other shapes here than before");
}

/* reduce_window over arg0 bound 8x8, windows 2x3, strides 2x1, dim 0 padded 1 + 1: dim 0
 * (8 + 2 - 2) / 2 + 1 = 5, dim 1 (8 - 3) / 1 + 1 = 6; with base_dilations 2x1 as well, dim 0
 * is dilated to (8 - 1) x 2 + 1 = 15, padded 17: (17 - 2) / 2 + 1 = 8. */
static void test_reduce_window_counts_its_windows(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%arg0: tensor<?x8xf32>) -> tensor<?x6xf32> {\n"
        "    %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "    %w = \"stablehlo.reduce_window\"(%arg0, %z) ({\n"
        "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
        "      %s = stablehlo.add %a, %b : tensor<f32>\n"
        "      stablehlo.return %s : tensor<f32>\n"
        "    }) {padding = dense<[[1, 1], [0, 0]]> : tensor<2x2xi64>, window_dimensions = "
        "array<i64: 2, 3>, window_strides = array<i64: 2, 1>} : (tensor<?x8xf32>, tensor<f32>) -> "
        "tensor<?x6xf32>\n"
        "    %d = \"stablehlo.reduce_window\"(%arg0, %z) ({\n"
        "    ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
        "      %s = stablehlo.add %a, %b : tensor<f32>\n"
        "      stablehlo.return %s : tensor<f32>\n"
        "    }) {base_dilations = array<i64: 2, 1>, padding = dense<[[1, 1], [0, 0]]> : "
        "tensor<2x2xi64>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, "
        "1>} : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x6xf32>\n"
        "    return %w : tensor<?x6xf32>\n"
        "  }\n"
        "}\n";
    static const char *const want[] = {"w = f32[5,6] reduce-window(arg0, z)",
                                       "d = f32[8,6] reduce-window(arg0, z)"};
    (void)state;
    expect_hlo(text, "arg0=8x8", want, sizeof(want) / sizeof(want[0]));
}

/* gather of rows: operand 6x4, indices 5x1 (index_vector_dim 1), dim 0 collapsed, slices
 * 1x4: the indices' batch dim 5, then the offset dim 4: 5x4; dynamic_gather with the slice
 * sizes [1, 2] folded: 5x2. select_and_scatter and
 * triangular_solve take operand 0's and operand 1's (b's) shapes. */
static void test_gather_and_operand_shapes(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%arg0: tensor<?x4xf32>, %arg1: tensor<?x1xi64>, %arg2: "
        "tensor<?x?xf32>) -> tensor<?x4xf32> {\n"
        "    %g = \"stablehlo.gather\"(%arg0, %arg1) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<?x4xf32>, "
        "tensor<?x1xi64>) -> tensor<?x4xf32>\n"
        "    %s = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
        "    %dg = \"stablehlo.dynamic_gather\"(%arg0, %arg1, %s) {dimension_numbers = "
        "#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
        "index_vector_dim = 1>} : (tensor<?x4xf32>, tensor<?x1xi64>, tensor<2xi32>) -> "
        "tensor<?x2xf32>\n"
        "    %t = \"stablehlo.triangular_solve\"(%arg2, %arg0) {left_side = true, lower = true, "
        "transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false} : "
        "(tensor<?x?xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>\n"
        "    return %g : tensor<?x4xf32>\n"
        "  }\n"
        "}\n";
    static const char *const want[] = {"g = f32[5,4] gather(arg0, arg1)",
                                       "dg = f32[5,2] custom-call(arg0, arg1, s)",
                                       "t = f32[6,4] triangular-solve(arg2, arg0)"};
    (void)state;
    expect_hlo(text, "arg0=6x4,arg1=5x1,arg2=6x6", want, sizeof(want) / sizeof(want[0]));
}

static void test_unbound_dims_are_refused_saying_how_to_bind(void **state)
{
    (void)state;
    expect_refusal(FOLDS, NULL, ERR_INVALID, "line 2:53",
                   "dim 0 of 'tensor<?x3xf32>' is dynamic (?): tpuplan plans static shapes; "
                   "bind it with --bind arg1=Nx3");
    /* arg1 bound, the dimension argument not: the iota's shape is not known */
    expect_refusal(TRI, "arg1=5x1", ERR_INVALID, "line 10:73",
                   "dim 0 of 'tensor<?x?xi32>', the result of stablehlo.dynamic_iota at 10:5, is "
                   "dynamic (?) and not known: its shape operand %6 is not a constant of the "
                   "bound values");
}

static void test_bad_bindings_are_refused(void **state)
{
    (void)state;
    expect_refusal(TRI, "arg0=5,arg1=5x1,nope=3", ERR_NOTFOUND, "bind",
                   "bind: 'nope' names no argument of @main");
    expect_refusal(TRI, "arg0=5,arg1=5x2", ERR_INVALID, "line 2:62",
                   "dim 1 of 'tensor<?x1xf32>' is 1, not 2 as the binding's dims give");
    expect_refusal(TRI, "arg0=5,arg1=5x1x1", ERR_INVALID, "line 2:64",
                   "'tensor<?x1xf32>' has rank 2, not 3 as the binding's dims give");
    expect_refusal(TRI, "arg0=5x1,arg1=5x1", ERR_INVALID, "line 2:33",
                   "bind: %arg0 is a scalar (a dimension's value)");
    expect_refusal(TRI, "arg0=5,arg0=6", ERR_INVALID, "bind", "bind: arg0 is bound twice");
    expect_refusal(TRI, "arg0", ERR_INVALID, "bind", "bind: expected NAME=VALUE, got \"arg0\"");
    expect_refusal(TRI, "arg0=5y", ERR_INVALID, "bind", "bind: arg0: expected a shape AxBxC");
    expect_refusal(TRI, "arg0=-1", ERR_LIMIT, "bind", "not negative");
    expect_refusal(TRI, "arg0=1099511627777", ERR_LIMIT, "bind", "is at most 1099511627776");
    expect_refusal(TRI, "arg0=99999999999999999999999", ERR_LIMIT, "bind",
                   "is at most 1099511627776");
}

/* 2^40 x 2^40 overflows int64 in the multiply: the fold stops there, checked, and the shape it
 * would give is refused as unknown. */
static void test_overflowing_folds_are_not_folded(void **state)
{
    static const char text[] =
        "module @m {\n"
        "  func.func @main(%arg0: tensor<i64>) -> tensor<?xi32> {\n"
        "    %0 = stablehlo.multiply %arg0, %arg0 : tensor<i64>\n"
        "    %1 = stablehlo.multiply %0, %0 : tensor<i64>\n"
        "    %2 = stablehlo.reshape %1 : (tensor<i64>) -> tensor<1xi64>\n"
        "    %3 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<1xi64>) -> tensor<?xi32>\n"
        "    return %3 : tensor<?xi32>\n"
        "  }\n"
        "}\n";
    (void)state;
    expect_refusal(text, "arg0=1099511627776", ERR_INVALID, "line 6:73",
                   "its shape operand %2 is not a constant of the bound values");
    /* 2^10 squared twice is 2^40: a dim at the bound is planned */
    static const char *const want[] = {"3 = s32[1099511627776] custom-call(2)"};
    expect_hlo(text, "arg0=1024", want, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tri_binds_to_5x7),
        cmocka_unit_test(test_tri_model_has_the_bound_shapes),
        cmocka_unit_test(test_shape_computations_fold),
        cmocka_unit_test(test_ops_infer_their_result_shapes),
        cmocka_unit_test(test_pad_dot_and_slices_infer_their_shapes),
        cmocka_unit_test(test_jax_export_calls_are_refined_through),
        cmocka_unit_test(test_a_callee_takes_one_call_context),
        cmocka_unit_test(test_reduce_window_counts_its_windows),
        cmocka_unit_test(test_gather_and_operand_shapes),
        cmocka_unit_test(test_unbound_dims_are_refused_saying_how_to_bind),
        cmocka_unit_test(test_bad_bindings_are_refused),
        cmocka_unit_test(test_overflowing_folds_are_not_folded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
