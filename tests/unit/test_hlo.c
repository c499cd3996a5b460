/*
 * test_hlo.c - the HLO text parser and its buffer rules (hlo.h, hlo_model.h): modules in the
 * forms XLA and JAX print (scheduled after-optimizations dumps with layouts and '%', and
 * unscheduled lowered text without either), sizes, lifetimes and peaks worked out by hand,
 * properties over generated modules, and error paths with line:column.
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
#include "planner/plan.h"

#include "model_find.h"
#include "rng.h"

static const struct model_limits limits = {64u << 20, 32, 1000000, 1000000, 0};

/* A scheduled dump: '%' names, operand shapes, TPU layouts, a loop fusion, a constant,
 * a donated parameter (input_output_alias) and a tuple ROOT. f32[8,128] with T(8,128) is
 * 4096 B; the f32 scalar constant takes one T(128) tile, 512 B. */
static const char DONATE[] =
    "HloModule jit_f, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias) }, "
    "entry_computation_layout={(f32[8,128]{1,0:T(8,128)}, "
    "f32[8,128]{1,0:T(8,128)})->(f32[8,128]{1,0:T(8,128)}, f32[8,128]{1,0:T(8,128)})}\n"
    "\n"
    "%fused_computation (param_0: f32[8,128], param_1: f32[8,128]) -> f32[8,128] {\n"
    "  %param_0 = f32[8,128]{1,0:T(8,128)} parameter(0)\n"
    "  %param_1 = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
    "  ROOT %add.0 = f32[8,128]{1,0:T(8,128)} add(f32[8,128]{1,0:T(8,128)} %param_0, "
    "f32[8,128]{1,0:T(8,128)} %param_1)\n"
    "}\n"
    "\n"
    "ENTRY %main.10 (Arg_0.1: f32[8,128], Arg_1.2: f32[8,128]) -> (f32[8,128], f32[8,128]) {\n"
    "  %Arg_0.1 = f32[8,128]{1,0:T(8,128)} parameter(0), sharding={replicated}, "
    "metadata={op_name=\"x\"}\n"
    "  %Arg_1.2 = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
    "  %mul.3 = f32[8,128]{1,0:T(8,128)} multiply(f32[8,128]{1,0:T(8,128)} %Arg_1.2, "
    "f32[8,128]{1,0:T(8,128)} %Arg_1.2), metadata={op_name=\"jit(f)/mul\" "
    "source_file=\"f.py\" source_line=3}\n"
    "  %fusion.4 = f32[8,128]{1,0:T(8,128)} fusion(f32[8,128]{1,0:T(8,128)} %mul.3, "
    "f32[8,128]{1,0:T(8,128)} %Arg_0.1), kind=kLoop, calls=%fused_computation, "
    "metadata={op_name=\"jit(f)/add\"}\n"
    "  %c = f32[]{:T(128)} constant(1)\n"
    "  %fusion.5 = f32[8,128]{1,0:T(8,128)} fusion(f32[8,128]{1,0:T(8,128)} %fusion.4, "
    "f32[8,128]{1,0:T(8,128)} %Arg_0.1), kind=kLoop, calls=%fused_computation\n"
    "  ROOT %tuple.6 = (f32[8,128]{1,0:T(8,128)}, f32[8,128]{1,0:T(8,128)}) "
    "tuple(%fusion.5, %mul.3)\n"
    "}\n";

/* JAX-style unscheduled text: no '%', no operand shapes, a while loop over a tuple. */
static const char WHILE[] =
    "HloModule jit_loop, entry_computation_layout={(f32[1024]{0:T(1024)})->f32[1024]{0:T(1024)}}\n"
    "\n"
    "body {\n"
    "  p = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) parameter(0)\n"
    "  i = s32[]{:T(128)} get-tuple-element(p), index=0\n"
    "  one = s32[]{:T(128)} constant(1)\n"
    "  i1 = s32[]{:T(128)} add(i, one)\n"
    "  x = f32[1024]{0:T(1024)} get-tuple-element(p), index=1\n"
    "  t1 = f32[1024]{0:T(1024)} exponential(x)\n"
    "  t2 = f32[1024]{0:T(1024)} reverse(t1), dimensions={0}\n"
    "  t3 = f32[1024]{0:T(1024)} multiply(t2, x)\n"
    "  ROOT r = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) tuple(i1, t3)\n"
    "}\n"
    "\n"
    "cond {\n"
    "  p = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) parameter(0)\n"
    "  i = s32[]{:T(128)} get-tuple-element(p), index=0\n"
    "  n = s32[]{:T(128)} constant(10)\n"
    "  ROOT lt = pred[]{:T(512)} compare(i, n), direction=LT\n"
    "}\n"
    "\n"
    "ENTRY main {\n"
    "  a = f32[1024]{0:T(1024)} parameter(0)\n"
    "  z = s32[]{:T(128)} constant(0)\n"
    "  init = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) tuple(z, a)\n"
    "  w = (s32[]{:T(128)}, /*index=1*/f32[1024]{0:T(1024)}) while(init), condition=cond, "
    "body=body\n"
    "  ROOT out = f32[1024]{0:T(1024)} get-tuple-element(w), index=1\n"
    "}\n";

/* The rules of hlo_model.h as written: a before-optimization module read literally (the
 * compiler's estimate has tests of its own, test_hlo_compile.c). */
static const struct hlo_model_opts written = {.as_written = true};

static void import(const char *text, struct model *m)
{
    struct err e;
    err_clear(&e);
    if (hlo_import_opts(text, strlen(text), NULL, &limits, &written, m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
}

static uint64_t peak_of(const char *text)
{
    struct plan_summary s;
    struct plan_opts o = {.strategies = "xla-default", .reading = PLAN_READING_WRITTEN};
    struct err e;
    char *json;
    size_t len;
    if (plan_run(text, strlen(text), &o, NULL, &json, &len, NULL, &s, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    free(json);
    return s.peak_bytes;
}

/* Steps 0..6: Arg_0.1, Arg_1.2, mul.3, fusion.4, c, fusion.5, tuple.6. */
static void test_scheduled_donation_fusion_constant(void **state)
{
    struct model m;
    (void)state;
    assert_true(hlo_detect(DONATE, strlen(DONATE)));
    import(DONATE, &m);
    assert_string_equal(m.source_format, "hlo");
    assert_string_equal(m.name, "jit_f");
    assert_int_equal(m.n, 5); /* fusion.5 is written in place into fusion.4 */
    /* Donated, but read at step 5 after fusion.4 (step 3) is written: XLA would copy, so
     * the output keeps its own buffer and the parameter dies after its last use. */
    const struct model_tensor *a0 = tensor(&m, "Arg_0.1");
    assert_int_equal(a0->kind, TENSOR_INPUT);
    assert_true(a0->donated);
    assert_live(a0, 0, 6);
    assert_string_equal(a0->op_name, "x");
    assert_live(tensor(&m, "Arg_1.2"), 0, 7); /* not donated: the whole program */
    const struct model_tensor *mul = tensor(&m, "mul.3");
    assert_int_equal(mul->kind, TENSOR_OUTPUT);
    assert_live(mul, 2, 7);
    assert_string_equal(mul->op_name, "jit(f)/mul");
    const struct model_tensor *f4 = tensor(&m, "fusion.4");
    assert_int_equal(f4->kind, TENSOR_OUTPUT);
    assert_live(f4, 3, 7);
    assert_string_equal(f4->in_place, "fusion.5");
    const struct model_tensor *c = tensor(&m, "c");
    assert_int_equal(c->kind, TENSOR_CONSTANT);
    assert_live(c, 0, 7);
    assert_true(c->shape.has_layout);
    assert_int_equal(c->shape.ntiles, 1);
    model_free(&m);
    /* Everything but Arg_0.1 is live at step 5: 4 x 4096 + 512, plus Arg_0.1 = 16896. */
    assert_int_equal(peak_of(DONATE), 16896);
}

/* Donation that XLA applies without a copy: the parameter is dead when the output is
 * written, so the output lives in the parameter's buffer. */
static void test_donated_output_reuses_parameter(void **state)
{
    static const char text[] = "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\n"
                               "ENTRY e {\n"
                               "  p = f32[1024]{0:T(1024)} parameter(0)\n"
                               "  q = f32[1024]{0:T(1024)} parameter(1)\n"
                               "  s = f32[1024]{0:T(1024)} sort(p), dimensions={0}\n"
                               "  ROOT r = f32[1024]{0:T(1024)} add(s, q)\n"
                               "}\n";
    struct model m;
    (void)state;
    import(text, &m);
    /* r is written into s in place (add, s dies there), and that buffer is the donated
     * output: p is dead once s is written (step 2 reads p last), so it all lives in p. */
    assert_int_equal(m.n, 2);
    const struct model_tensor *p = tensor(&m, "p");
    assert_true(p->donated);
    assert_int_equal(p->kind, TENSOR_INPUT);
    assert_live(p, 0, 4);
    assert_string_equal(p->in_place, "s,r");
    model_free(&m);
}

/* Body peak by hand: constant one (512 B, whole body) + t1 (4096 B, steps 5-6) = 4608 B;
 * t3 is written into t2 in place and with i1 is the ROOT (the while's result, counted in
 * the caller). cond: n, 512 B. Entry at step 3: a 4096 + z 512 + w{0} 512 + w{1} 4096 +
 * w/temps 4608 = 13824. */
static void test_while_temps_planned_recursively(void **state)
{
    struct model m;
    (void)state;
    import(WHILE, &m);
    assert_int_equal(m.n, 5);
    assert_live(tensor(&m, "a"), 0, 5);
    assert_int_equal(tensor(&m, "z")->kind, TENSOR_CONSTANT);
    assert_live(tensor(&m, "w{0}"), 3, 4);
    assert_int_equal(tensor(&m, "w{1}")->kind, TENSOR_OUTPUT);
    assert_live(tensor(&m, "w{1}"), 3, 5);
    const struct model_tensor *t = tensor(&m, "w/temps");
    assert_true(t->raw);
    assert_int_equal(t->padded_bytes, 4608);
    assert_live(t, 3, 4);
    model_free(&m);
    assert_int_equal(peak_of(WHILE), 13824);
}

/* A loop whose state dies at the while: the counter i0 and the array b are temps read last by
 * the while, so the result w{0} is written into i0 and w{1} into b (the loop state stays in
 * one set of buffers, as in XLA). Steps: 0 a, 1 b, 2 z, 3 i0, 4 init, 5 w, 6 out. */
static const char WHILE_STATE[] =
    "HloModule m\n"
    "body {\n"
    "  p = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) parameter(0)\n"
    "  i = s32[]{:T(128)} get-tuple-element(p), index=0\n"
    "  one = s32[]{:T(128)} constant(1)\n"
    "  i1 = s32[]{:T(128)} add(i, one)\n"
    "  x = f32[1024]{0:T(1024)} get-tuple-element(p), index=1\n"
    "  y = f32[1024]{0:T(1024)} exponential(x)\n"
    "  ROOT r = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) tuple(i1, y)\n"
    "}\n"
    "cond {\n"
    "  p = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) parameter(0)\n"
    "  i = s32[]{:T(128)} get-tuple-element(p), index=0\n"
    "  n = s32[]{:T(128)} constant(10)\n"
    "  ROOT lt = pred[]{:T(512)} compare(i, n), direction=LT\n"
    "}\n"
    "ENTRY main {\n"
    "  a = f32[1024]{0:T(1024)} parameter(0)\n"
    "  b = f32[1024]{0:T(1024)} negate(a)\n"
    "  z = s32[]{:T(128)} constant(0)\n"
    "  i0 = s32[]{:T(128)} copy(z)\n"
    "  init = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) tuple(i0, b)\n"
    "  w = (s32[]{:T(128)}, f32[1024]{0:T(1024)}) while(init), condition=cond, body=body\n"
    "  ROOT out = f32[1024]{0:T(1024)} get-tuple-element(w), index=1\n"
    "}\n";

/* Body: the constant one (512 B) is its only buffer of its own (i1 and y are its ROOT, the
 * loop state); cond: n, 512 B; so w/temps is 512 B. Entry at step 5: a 4096 + b (holding
 * w{1}) 4096 + z 512 + i0 (holding w{0}) 512 + w/temps 512 = 9728 B. With the result in
 * buffers of its own (w{0} 512 + w{1} 4096 beside i0 and b) it was 14336 B. */
static void test_while_state_in_place(void **state)
{
    struct model m;
    (void)state;
    import(WHILE_STATE, &m);
    assert_int_equal(m.n, 5);
    const struct model_tensor *b = tensor(&m, "b");
    assert_string_equal(b->in_place, "w{1}");
    assert_int_equal(b->kind, TENSOR_OUTPUT);
    assert_live(b, 1, 7);
    const struct model_tensor *i0 = tensor(&m, "i0");
    assert_string_equal(i0->in_place, "w{0}");
    assert_int_equal(i0->kind, TENSOR_TEMP);
    assert_live(i0, 3, 6);
    assert_int_equal(tensor(&m, "w/temps")->padded_bytes, 512);
    bool warned = false;
    for (size_t k = 0; k < m.warnings.n; k++)
        warned |= strstr(m.warnings.lines[k], "2 HLO results are written into a buffer") != NULL;
    assert_true(warned);
    model_free(&m);
    assert_int_equal(peak_of(WHILE_STATE), 9728);
}

/* Where the init value does not die at the while, the result keeps a buffer of its own: b is
 * read after the loop (XLA's copy insertion would copy it), the parameter a and the constant
 * z outlive it (WHILE, test_while_temps_planned_recursively, keeps w{0} and w{1}), and one
 * buffer passed twice holds only one leaf. */
static void test_while_state_not_in_place(void **state)
{
    static const char later[] =
        "HloModule m\n"
        "body {\n"
        "  p = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) parameter(0)\n"
        "  x = f32[1024]{0:T(1024)} get-tuple-element(p), index=0\n"
        "  y = f32[1024]{0:T(1024)} get-tuple-element(p), index=1\n"
        "  ROOT r = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(y, x)\n"
        "}\n"
        "cond {\n"
        "  p = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) parameter(0)\n"
        "  ROOT t = pred[]{:T(512)} constant(true)\n"
        "}\n"
        "ENTRY main {\n"
        "  a = f32[1024]{0:T(1024)} parameter(0)\n"
        "  b = f32[1024]{0:T(1024)} negate(a)\n"
        "  c = f32[1024]{0:T(1024)} sine(a)\n"
        "  init = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(b, c)\n"
        "  w = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) while(init), condition=cond, "
        "body=body\n"
        "  w0 = f32[1024]{0:T(1024)} get-tuple-element(w), index=0\n"
        "  ROOT s = f32[1024]{0:T(1024)} add(w0, b)\n"
        "}\n";
    struct model m;
    (void)state;
    import(later, &m);
    /* b is read by s after the while: w{0} keeps its own buffer (and s is written into it);
     * c dies at the while: w{1} is written into c. */
    assert_int_equal(m.n, 4);
    assert_null(tensor(&m, "b")->in_place);
    assert_live(tensor(&m, "b"), 1, 7);
    assert_string_equal(tensor(&m, "c")->in_place, "w{1}");
    assert_live(tensor(&m, "c"), 2, 5);
    assert_string_equal(tensor(&m, "w{0}")->in_place, "s");
    model_free(&m);

    static const char twice[] =
        "HloModule m\n"
        "body {\n"
        "  p = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) parameter(0)\n"
        "  ROOT r = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) copy(p)\n"
        "}\n"
        "cond {\n"
        "  p = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) parameter(0)\n"
        "  ROOT t = pred[]{:T(512)} constant(true)\n"
        "}\n"
        "ENTRY main {\n"
        "  a = f32[1024]{0:T(1024)} parameter(0)\n"
        "  b = f32[1024]{0:T(1024)} negate(a)\n"
        "  init = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(b, b)\n"
        "  ROOT w = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) while(init), condition=cond, "
        "body=body\n"
        "}\n";
    import(twice, &m);
    assert_int_equal(m.n, 3); /* a, b holding w{0}, w{1} */
    assert_string_equal(tensor(&m, "b")->in_place, "w{0}");
    assert_int_equal(tensor(&m, "w{1}")->kind, TENSOR_OUTPUT);
    model_free(&m);
}

/* Asynchronous pairs, scheduled with work between start and done. Steps: 0 a, 1 b, 2 cs,
 * 3 ags, 4 c, 5 cd, 6 agd, 7 cps, 8 cpd, 9 t. Each done is its start's destination and each
 * start's operand element is its operand: no buffers of their own. */
static const char ASYNC[] =
    "HloModule m, is_scheduled=true\n"
    "ENTRY e {\n"
    "  a = f32[1024]{0:T(1024)} parameter(0)\n"
    "  b = f32[1024]{0:T(1024)} negate(a)\n"
    "  cs = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, u32[]{:T(128)}) copy-start(b)\n"
    "  ags = (f32[1024]{0:T(1024)}, f32[2048]{0:T(1024)}) all-gather-start(a), dimensions={0}, "
    "replica_groups={{0,1}}\n"
    "  c = f32[1024]{0:T(1024)} sine(a)\n"
    "  cd = f32[1024]{0:T(1024)} copy-done(cs)\n"
    "  agd = f32[2048]{0:T(1024)} all-gather-done(ags)\n"
    "  cps = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, u32[]{:T(128)}, u32[]{:T(128)}) "
    "collective-permute-start(c), source_target_pairs={{0,1},{1,0}}\n"
    "  cpd = f32[1024]{0:T(1024)} collective-permute-done(cps)\n"
    "  ROOT t = (f32[1024]{0:T(1024)}, f32[2048]{0:T(1024)}, f32[1024]{0:T(1024)}) "
    "tuple(cd, agd, cpd)\n"
    "}\n";

/* Live bytes by step: a 4096 [0,10); b 4096 [1,6) (the copy reads it until copy-done);
 * cs{0} 4096 [2,10) (cd's result, an output); cs{2} 512 [2,6); ags{1} 8192 [3,10) (agd's);
 * c 4096 [4,9) (read by collective-permute-done); cps{1} 4096 [7,10) (cpd's); cps{2},
 * cps{3} 512 each [7,9). Step 7: 4096 + 4096 + 8192 + 4096 + 4096 + 1024 = 25600, the peak
 * (step 5: 25088). With each start's and done's leaves buffers of their own the plan's peak
 * was 33792 B. */
static void test_async_pairs_alias(void **state)
{
    struct model m;
    (void)state;
    import(ASYNC, &m);
    assert_int_equal(m.n, 9);
    assert_live(tensor(&m, "b"), 1, 6);
    const struct model_tensor *dst = tensor(&m, "cs{0}");
    assert_int_equal(dst->kind, TENSOR_OUTPUT);
    assert_live(dst, 2, 10);
    assert_live(tensor(&m, "cs{2}"), 2, 6);
    assert_int_equal(tensor(&m, "ags{1}")->shape.dims[0], 2048);
    assert_live(tensor(&m, "ags{1}"), 3, 10);
    assert_live(tensor(&m, "c"), 4, 9);
    assert_live(tensor(&m, "cps{1}"), 7, 10);
    assert_live(tensor(&m, "cps{3}"), 7, 9);
    for (size_t k = 0; k < m.n; k++) { /* no done, and no start's operand element */
        const char *nm = m.tensors[k].name;
        assert_true(strcmp(nm, "cd") != 0 && strcmp(nm, "agd") != 0 && strcmp(nm, "cpd") != 0 &&
                    strcmp(nm, "cs{1}") != 0 && strcmp(nm, "ags{0}") != 0 &&
                    strcmp(nm, "cps{0}") != 0);
    }
    model_free(&m);
    assert_int_equal(peak_of(ASYNC), 25600);
}

/* all-reduce-start writes into its operand when the operand dies there (XLA's in-place pair);
 * its done is the same buffer. ars2's operand c is read later (by d), so ars2 has a buffer of
 * its own, and d is written into it (ard2 dies at d). A 4-operand collective-permute-start
 * writes {1} into operand 1 (e, dying there); {0} is operand 0. Async-start/update/done: the
 * done is the start's {1}. Steps: 0 a, 1 b, 2 c, 3 ars, 4 ars2, 5 ard, 6 ard2, 7 d, 8 e,
 * 9 i, 10 cps, 11 cpd, 12 as, 13 au, 14 ad, 15 t. */
static void test_async_in_place(void **state)
{
    static const char text[] =
        "HloModule m, is_scheduled=true\n"
        "sum {\n"
        "  x = f32[] parameter(0)\n"
        "  y = f32[] parameter(1)\n"
        "  ROOT s = f32[] add(x, y)\n"
        "}\n"
        "wrapped {\n"
        "  p = f32[1024]{0:T(1024)} parameter(0)\n"
        "  ROOT q = f32[1024]{0:T(1024)} custom-call(p), custom_call_target=\"k\"\n"
        "}\n"
        "ENTRY e {\n"
        "  a = f32[1024]{0:T(1024)} parameter(0)\n"
        "  b = f32[1024]{0:T(1024)} negate(a)\n"
        "  c = f32[1024]{0:T(1024)} sine(a)\n"
        "  ars = f32[1024]{0:T(1024)} all-reduce-start(b), replica_groups={}, to_apply=sum\n"
        "  ars2 = f32[1024]{0:T(1024)} all-reduce-start(c), replica_groups={}, to_apply=sum\n"
        "  ard = f32[1024]{0:T(1024)} all-reduce-done(ars)\n"
        "  ard2 = f32[1024]{0:T(1024)} all-reduce-done(ars2)\n"
        "  d = f32[1024]{0:T(1024)} add(ard2, c)\n"
        "  e = f32[1024]{0:T(1024)} cosine(a)\n"
        "  i = s32[1]{0:T(256)} parameter(1)\n"
        "  cps = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}, u32[]{:T(128)}, u32[]{:T(128)}) "
        "collective-permute-start(d, e, i, i), source_target_pairs={{0,1}}\n"
        "  cpd = f32[1024]{0:T(1024)} collective-permute-done(cps)\n"
        "  as = ((f32[1024]{0:T(1024)}), f32[1024]{0:T(1024)}, s32[]{:T(128)}) "
        "async-start(cpd), calls=wrapped\n"
        "  au = ((f32[1024]{0:T(1024)}), f32[1024]{0:T(1024)}, s32[]{:T(128)}) "
        "async-update(as), calls=wrapped\n"
        "  ad = f32[1024]{0:T(1024)} async-done(au), calls=wrapped\n"
        "  ROOT t = (f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)}) tuple(ard, ad)\n"
        "}\n";
    struct model m;
    (void)state;
    import(text, &m);
    /* a, i, b (holding ars), c, ars2 (holding d), e (holding cps{1}), cps{2}, cps{3},
     * as{1}, as{2} */
    assert_int_equal(m.n, 10);
    const struct model_tensor *b = tensor(&m, "b");
    assert_string_equal(b->in_place, "ars");
    assert_int_equal(b->kind, TENSOR_OUTPUT);
    assert_live(b, 1, 16);
    assert_null(tensor(&m, "c")->in_place);
    assert_live(tensor(&m, "c"), 2, 8);
    assert_string_equal(tensor(&m, "ars2")->in_place, "d");
    assert_live(tensor(&m, "ars2"), 4, 12); /* d is read until collective-permute-done */
    assert_string_equal(tensor(&m, "e")->in_place, "cps{1}");
    /* cpd (e's buffer) is async-start's operand {0,0}, read until async-done */
    assert_live(tensor(&m, "e"), 8, 15);
    const struct model_tensor *res = tensor(&m, "as{1}");
    assert_int_equal(res->kind, TENSOR_OUTPUT);
    assert_live(res, 12, 16);
    assert_live(tensor(&m, "as{2}"), 12, 15);
    model_free(&m);
}

static void test_dynamic_update_slice_in_place(void **state)
{
    static const char text[] = "HloModule m\n"
                               "ENTRY e {\n"
                               "  a = f32[64]{0:T(64)} parameter(0)\n"
                               "  u = f32[8]{0:T(8)} parameter(1)\n"
                               "  i = s32[] parameter(2)\n"
                               "  b = f32[64]{0:T(64)} negate(a)\n"
                               "  d = f32[64]{0:T(64)} dynamic-update-slice(b, u, i)\n"
                               "  ROOT x = f32[64]{0:T(64)} cosine(d)\n"
                               "}\n";
    struct model m;
    (void)state;
    import(text, &m);
    /* b from step 3; d (step 4) into b; x (step 5, elementwise) into b too: output. */
    assert_int_equal(m.n, 4);
    const struct model_tensor *b = tensor(&m, "b");
    assert_string_equal(b->in_place, "d,x");
    assert_int_equal(b->kind, TENSOR_OUTPUT);
    assert_live(b, 3, 6);
    model_free(&m);
}

/* Fusions that update an operand in place, and a plain scatter. f1's fused ROOT is a
 * dynamic-update-slice of parameter 0; f2's ROOT tuple's element 1 is a scatter of a bitcast
 * of parameter 0 (element 0 is new memory); s is a scatter of f2{1}. Steps: 0 a, 1 u, 2 i,
 * 3 idx, 4 b, 5 f1, 6 f2, 7 g, 8 s, 9 h, 10 r. */
static const char DUS_FUSIONS[] =
    "HloModule m\n"
    "fused_dus {\n"
    "  p0 = f32[64,128]{1,0:T(8,128)} parameter(0)\n"
    "  p1 = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
    "  p2 = s32[]{:T(128)} parameter(2)\n"
    "  z = s32[]{:T(128)} constant(0)\n"
    "  ROOT d = f32[64,128]{1,0:T(8,128)} dynamic-update-slice(p0, p1, p2, z)\n"
    "}\n"
    "sum {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n"
    "}\n"
    "fused_scatter {\n"
    "  p0 = f32[64,128]{1,0:T(8,128)} parameter(0)\n"
    "  p1 = s32[8,1]{1,0:T(8,128)} parameter(1)\n"
    "  p2 = f32[8,128]{1,0:T(8,128)} parameter(2)\n"
    "  c = f32[64,128]{1,0:T(8,128)} bitcast(p0)\n"
    "  sc = f32[64,128]{1,0:T(8,128)} scatter(c, p1, p2), update_window_dims={1}, "
    "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
    "to_apply=sum\n"
    "  n = f32[8,128]{1,0:T(8,128)} negate(p2)\n"
    "  ROOT t = (f32[8,128]{1,0:T(8,128)}, f32[64,128]{1,0:T(8,128)}) tuple(n, sc)\n"
    "}\n"
    "ENTRY e {\n"
    "  a = f32[64,128]{1,0:T(8,128)} parameter(0)\n"
    "  u = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
    "  i = s32[]{:T(128)} parameter(2)\n"
    "  idx = s32[8,1]{1,0:T(8,128)} parameter(3)\n"
    "  b = f32[64,128]{1,0:T(8,128)} negate(a)\n"
    "  f1 = f32[64,128]{1,0:T(8,128)} fusion(b, u, i), kind=kLoop, calls=fused_dus\n"
    "  f2 = (f32[8,128]{1,0:T(8,128)}, f32[64,128]{1,0:T(8,128)}) fusion(f1, idx, u), "
    "kind=kLoop, calls=fused_scatter\n"
    "  g = f32[64,128]{1,0:T(8,128)} get-tuple-element(f2), index=1\n"
    "  s = f32[64,128]{1,0:T(8,128)} scatter(g, idx, u), update_window_dims={1}, "
    "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
    "to_apply=sum\n"
    "  h = f32[8,128]{1,0:T(8,128)} get-tuple-element(f2), index=0\n"
    "  ROOT r = (f32[8,128]{1,0:T(8,128)}, f32[64,128]{1,0:T(8,128)}) tuple(h, s)\n"
    "}\n";

/* f32[64,128] with T(8,128) is 32768 B, f32[8,128] and s32[8,1] 4096 B, s32[] 512 B. The
 * parameters, 41472 B, live throughout; b holds f1, f2{1} and s (an output) from step 4;
 * f2{0} (4096 B) from step 6: 41472 + 32768 + 4096 = 78336 B. With f1, f2{1} and s in
 * buffers of their own the plan's peak was 111104 B. */
static void test_dus_fusions_in_place(void **state)
{
    struct model m;
    (void)state;
    import(DUS_FUSIONS, &m);
    assert_int_equal(m.n, 6);
    const struct model_tensor *b = tensor(&m, "b");
    assert_string_equal(b->in_place, "f1,f2{1},s");
    assert_int_equal(b->kind, TENSOR_OUTPUT);
    assert_live(b, 4, 11);
    assert_int_equal(tensor(&m, "f2{0}")->kind, TENSOR_OUTPUT);
    assert_live(tensor(&m, "f2{0}"), 6, 11);
    model_free(&m);
    assert_int_equal(peak_of(DUS_FUSIONS), 78336);
}

/* No in-place write: the updated operand is read later (b, by c), a parameter (a), the
 * fusion's DUS updates a value computed inside it rather than a parameter (f4), or the
 * operand is an output (c, in the ROOT). Steps: 0 a, 1 u, 2 i, 3 b, 4 f1, 5 c, 6 f3, 7 f4,
 * 8 f5, 9 r. */
static void test_dus_fusions_not_in_place(void **state)
{
    static const char text[] =
        "HloModule m\n"
        "fused_dus {\n"
        "  p0 = f32[64,128]{1,0:T(8,128)} parameter(0)\n"
        "  p1 = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
        "  p2 = s32[]{:T(128)} parameter(2)\n"
        "  z = s32[]{:T(128)} constant(0)\n"
        "  ROOT d = f32[64,128]{1,0:T(8,128)} dynamic-update-slice(p0, p1, p2, z)\n"
        "}\n"
        "fused_dus_inner {\n"
        "  p0 = f32[64,128]{1,0:T(8,128)} parameter(0)\n"
        "  p1 = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
        "  p2 = s32[]{:T(128)} parameter(2)\n"
        "  n = f32[64,128]{1,0:T(8,128)} exponential(p0)\n"
        "  ROOT d = f32[64,128]{1,0:T(8,128)} dynamic-update-slice(n, p1, p2, p2)\n"
        "}\n"
        "ENTRY e {\n"
        "  a = f32[64,128]{1,0:T(8,128)} parameter(0)\n"
        "  u = f32[8,128]{1,0:T(8,128)} parameter(1)\n"
        "  i = s32[]{:T(128)} parameter(2)\n"
        "  b = f32[64,128]{1,0:T(8,128)} negate(a)\n"
        "  f1 = f32[64,128]{1,0:T(8,128)} fusion(b, u, i), kind=kLoop, calls=fused_dus\n"
        "  c = f32[64,128]{1,0:T(8,128)} add(f1, b)\n"
        "  f3 = f32[64,128]{1,0:T(8,128)} fusion(a, u, i), kind=kLoop, calls=fused_dus\n"
        "  f4 = f32[64,128]{1,0:T(8,128)} fusion(f3, u, i), kind=kLoop, calls=fused_dus_inner\n"
        "  f5 = f32[64,128]{1,0:T(8,128)} fusion(c, u, i), kind=kLoop, calls=fused_dus\n"
        "  ROOT r = (f32[64,128]{1,0:T(8,128)}, f32[64,128]{1,0:T(8,128)}, "
        "f32[64,128]{1,0:T(8,128)}) tuple(c, f4, f5)\n"
        "}\n";
    struct model m;
    (void)state;
    import(text, &m);
    /* a, u, i, b, f1 (holding c, elementwise into its dying first operand), f3, f4, f5 */
    assert_int_equal(m.n, 8);
    assert_null(tensor(&m, "b")->in_place);
    assert_live(tensor(&m, "b"), 3, 6);
    assert_string_equal(tensor(&m, "f1")->in_place, "c");
    assert_null(tensor(&m, "f3")->in_place);
    assert_live(tensor(&m, "f3"), 6, 8);
    assert_null(tensor(&m, "f4")->in_place);
    assert_int_equal(tensor(&m, "f5")->kind, TENSOR_OUTPUT);
    assert_live(tensor(&m, "f5"), 8, 10);
    model_free(&m);
}

static void test_shardings_divide_dims_and_host_is_left_out(void **state)
{
    static const char unscheduled[] =
        "HloModule m, num_partitions=2\n"
        "ENTRY e {\n"
        "  a = f32[16,256]{1,0} parameter(0), sharding={devices=[2,1]0,1}\n"
        "  t = (f32[16,256]{1,0}, f32[4,8]{1,0}) parameter(1), "
        "sharding={{devices=[1,2]0,1}, {replicated}}\n"
        "  v = f32[16,256]{1,0:S(5)} copy(a)\n"
        "  ROOT r = f32[16,256]{1,0} add(a, a), sharding={devices=[2,1,2]0,1,2,3 "
        "last_tile_dim_replicate}\n"
        "}\n";
    struct model m;
    (void)state;
    import(unscheduled, &m);
    assert_int_equal(m.n, 4); /* v is in host memory: left out */
    assert_int_equal(tensor(&m, "a")->shape.dims[0], 8);
    assert_int_equal(tensor(&m, "a")->shape.dims[1], 256);
    assert_int_equal(tensor(&m, "t{0}")->shape.dims[0], 16);
    assert_int_equal(tensor(&m, "t{0}")->shape.dims[1], 128);
    assert_int_equal(tensor(&m, "t{1}")->shape.dims[1], 8);
    assert_int_equal(tensor(&m, "r")->shape.dims[0], 8);
    bool host = false;
    for (size_t k = 0; k < m.warnings.n; k++)
        host |= strstr(m.warnings.lines[k], "in host (S(5)) memory") != NULL;
    assert_true(host);
    /* v has no sharding of its own: f32[16,256] as written (T(8,128): 16384 B) */
    assert_int_equal(m.program.spaces[MODEL_SPACE_HOST].buffers, 1);
    assert_int_equal(m.program.spaces[MODEL_SPACE_HOST].bytes, 16384);
    assert_int_equal(m.program.spaces[MODEL_SPACE_HOST].peak_bytes, 16384);
    model_free(&m);
}

static void test_scheduled_shapes_are_per_device(void **state)
{
    static const char text[] = "HloModule m, is_scheduled=true\n"
                               "ENTRY e {\n"
                               "  ROOT a = f32[16,256]{1,0} parameter(0), "
                               "sharding={devices=[2,1]0,1}\n"
                               "}\n";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(m.tensors[0].shape.dims[0], 16);
    model_free(&m);
}

/* Header attributes, a comment between operands, nested tuples, a long backend_config,
 * trailing stack-frame tables. */
static void test_every_printer_form_is_accepted(void **state)
{
    static const char text[] =
        "HloModule m, entry_computation_layout={()->(s32[], (f32[2], u8[3]))}, "
        "frontend_attributes={fingerprint_before_lhs=\"1\"}\n"
        "\n"
        "ENTRY %e () -> (s32[], (f32[2], u8[3])) {\n"
        "  %a = s32[] constant(7)\n"
        "  %b = f32[2]{0} constant({1, 2}), metadata={op_name=\"jit(g)/\\\"q\\\"\"}\n"
        "  %c = u8[3]{0} custom-call(), custom_call_target=\"x\", "
        "backend_config={\"k\":[{\"a\":\"}\"}]}\n"
        "  %t = (f32[2]{0}, u8[3]{0}) tuple(%b, /*index=1*/%c)\n"
        "  ROOT %r = (s32[], (f32[2]{0}, u8[3]{0})) tuple(s32[] %a, (f32[2]{0}, u8[3]{0}) %t)\n"
        "}\n"
        "\n"
        "FileNames\n1 \"f.py\"\nFunctionNames\nFileLocations\nStackFrames\n";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(m.n, 3);
    assert_string_equal(tensor(&m, "b")->op_name, "jit(g)/\"q\""); /* escapes undone */
    assert_int_equal(tensor(&m, "c")->kind, TENSOR_OUTPUT);
    model_free(&m);
}

/* A plan of text on v4 with no alignment: its summary (sizes, peak). */
static struct plan_summary plan_v4(const char *text)
{
    struct plan_summary s;
    struct plan_opts o = {
        .strategies = "xla-default", .chip = "v4", .alignment = 1, .reading = PLAN_READING_WRITTEN};
    struct err e;
    char *json;
    size_t len;
    if (plan_run(text, strlen(text), &o, NULL, &json, &len, NULL, &s, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    free(json);
    return s;
}

static bool has_warning(const struct model *m, const char *what)
{
    for (size_t k = 0; k < m->warnings.n; k++)
        if (strstr(m->warnings.lines[k], what) != NULL)
            return true;
    return false;
}

/* Tokens go on over lines and past comments, as XLA's lexer allows. Three modules from XLA's
 * own tests, verbatim:
 * - gpu_hlo_schedule_test.cc:1771-1780 (ReturnsValidScheduleMetadata) continues the ROOT
 *   custom-call on the next line. XLA asserts a GPU peak of 12288 = 3 x 32 x 32 x 4, the
 *   logical bytes here; on v4 each f32[32,32] takes T(8,128) (a written layout without tiles
 *   gets the chip's), 32 x 128 x 4 = 16384 B: 49152 B, all live at step 2.
 * - se_gpu_pjrt_client_test.cc:1923-1935 (GetCompiledMemoryStatsMixedTuple) has a "//"
 *   comment line: p0 8 B, ag 64 B, add0 8 B logical, XLA's output size 104 less its 3 x 8 B
 *   tuple table, which tpuplan does not count; on v4 each 1-D f32 takes T(256), 1024 B, all
 *   live at the end: 3072 B.
 * - se_gpu_pjrt_client_test.cc:1989-2008 (GetCompiledMemoryStatsCountTupleTable) writes the
 *   ROOT's 32-element tuple shape and operand list over 16 lines: p0 and add0, 4 B each
 *   logical (XLA: output 384 = 32 x 4 + 32 x 8, the table again), 1024 B each on v4. */
static void test_xla_modules_with_comments_and_continued_lines(void **state)
{
    static const char gemm[] = "\n    HloModule m\n\n    ENTRY ar {\n"
                               "      p0 = f32[32,32] parameter(0)\n"
                               "      p1 = f32[32,32] parameter(1)\n\n"
                               "      ROOT _ = f32[32,32]{1,0} custom-call(p0, p1),\n"
                               "        custom_call_target=\"__cublas$gemm\"\n    }";
    static const char mixed[] =
        "\nHloModule test\n\nregion_0 {\nArg_0 = f32[] parameter(0)\nArg_1 = f32[] parameter(1)\n"
        "ROOT add = f32[] add(Arg_0, Arg_1)\n}\n\nENTRY main {\np0 = f32[2]{0} parameter(0)\n"
        "// All-gather across 8 replicas to enlarge dim0.\n"
        "ag = f32[16]{0} all-gather(p0), channel_id=1, replica_groups=[1,8]<=[8], "
        "dimensions={0}, use_global_device_ids=true\n"
        "add0 = f32[2]{0} add(p0, p0)\n"
        "ROOT tuple = (f32[16]{0}, f32[2]{0}, f32[2]{0}) tuple(ag, p0, add0)\n}\n";
    char table[4096];
    int n = snprintf(table, sizeof(table),
                     "\nHloModule test\n\nENTRY main {\np0 = f32[1]{0} parameter(0)\n"
                     "add0 = f32[1]{0} add(p0, p0)\nROOT t = (");
    for (int k = 0; k < 32; k++)
        n += snprintf(table + n, sizeof(table) - (size_t)n, "f32[1]{0}%s",
                      k == 31      ? ")\n tuple("
                      : k % 4 == 3 ? ",\n         "
                                   : ", ");
    for (int k = 0; k < 32; k++)
        n += snprintf(table + n, sizeof(table) - (size_t)n, "%s%s", k % 2 ? "add0" : "p0",
                      k == 31      ? ")\n}\n"
                      : k % 4 == 3 ? ",\n       "
                                   : ", ");
    struct model m;
    struct plan_summary s;
    (void)state;

    import(gemm, &m);
    assert_int_equal(m.n, 3);
    assert_live(tensor(&m, "_"), 2, 3);
    assert_int_equal(tensor(&m, "_")->kind, TENSOR_OUTPUT);
    model_free(&m);
    s = plan_v4(gemm);
    assert_int_equal(s.logical_bytes, 12288);
    assert_int_equal(s.peak_bytes, 3 * 16384);

    import(mixed, &m);
    assert_int_equal(m.n, 3);
    assert_int_equal(tensor(&m, "ag")->kind, TENSOR_OUTPUT);
    assert_live(tensor(&m, "add0"), 2, 4);
    model_free(&m);
    s = plan_v4(mixed);
    assert_int_equal(s.logical_bytes, 80);
    assert_int_equal(s.peak_bytes, 3 * 1024);

    import(table, &m);
    assert_int_equal(m.n, 2);
    assert_live(tensor(&m, "add0"), 1, 3);
    model_free(&m);
    s = plan_v4(table);
    assert_int_equal(s.logical_bytes, 8);
    assert_int_equal(s.peak_bytes, 2 * 1024);
}

/* A module without the HloModule line is named module_<entry> (hlo_parser.cc Run and
 * ParseHloModule); without ENTRY the last computation is the entry, without ROOT the last
 * instruction the root; block comments may span lines and sit between any two tokens. */
static void test_headerless_modules_and_comments(void **state)
{
    static const char text[] = "// an XLA test's module, pasted without its header\n"
                               "/* a block comment\n   over two lines */\n"
                               "%add (x: f32[], y: f32[]) -> f32[] {\n"
                               "  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
                               "  ROOT %s = f32[] add(%x, %y)\n} // name\n\n"
                               "%main /* the entry */ {\n"
                               "  %a = f32[8,128]{1,0} parameter(0) /* a */\n"
                               "  %r = f32[8,128]{1,0} /* shape */ negate(/* operand */ %a)\n"
                               "  %t = f32[8,128]{1,0} exponential(%r), // attributes follow\n"
                               "    metadata={op_name=\"jit(f)/exp\" // inside braces\n"
                               "              source_file=\"f.py\" source_line=7}\n"
                               "}\n";
    struct hlo_module h;
    struct model m;
    struct err e;
    (void)state;
    assert_true(hlo_detect(text, strlen(text)));
    assert_true(hlo_detect("ENTRY e {", 9));
    assert_true(hlo_detect("  main {", 8));
    assert_false(hlo_detect("module {", 8)); /* MLIR */
    assert_false(hlo_detect("module @jit_f attributes {", 26));
    assert_false(hlo_detect("func.func @main(", 16));
    assert_int_equal(hlo_parse(text, strlen(text), 100, &h, &e), ERR_OK);
    assert_false(h.header);
    assert_int_equal(h.ncomps, 2);
    assert_int_equal(h.entry, 1);
    assert_true(h.comps[1].entry);
    assert_true(hlo_span_is(&h, h.instrs[h.comps[1].root].name, "t"));
    hlo_free(&h);
    import(text, &m);
    assert_string_equal(m.name, "module_main");
    assert_int_equal(m.n, 2); /* t is written into r, which dies there */
    assert_string_equal(tensor(&m, "r")->in_place, "t");
    assert_int_equal(tensor(&m, "r")->kind, TENSOR_OUTPUT);
    model_free(&m);
}

/* Modules from XLA's tests, verbatim, with the figures tpuplan's rules give them:
 * - buffer_assignment_test.cc:3369-3378 (BufferInfoStringTest): '%' names, an operand with its
 *   shape, ENTRY without a signature. s32[1024]{0} is 4096 B (T(1024) on v4 adds nothing),
 *   the broadcast 4194304 B (XLA's CSV, :3380-3387, gives the same sizes); add is written
 *   into mul, which dies there, and bcast reads it at step 4.
 * - gpu_hlo_schedule_test.cc:1739-1750 (DiscountCPUMemoryFromGPUPeakMemoryUsage): a space after
 *   "input_output_alias=", host buffers S(5). param.0 and copy-start.d2h's {0} (and the
 *   copy-done.d2h that is it) are host memory, left out; the HBM ones are param.1 (donated,
 *   but read after the output is written: kept), copy-start.h2d's {0} (the output, 4096 B)
 *   and the two u32[] contexts.
 * - hlo_memory_scheduler_test.cc:198-209 (HostSendDoneSchedule): dims written "1000, 1000",
 *   send's attributes on the next line, no ROOT (the last instruction, send-done, is it):
 *   f32[1000,1000] pads to 1000 x 1024 x 4 = 4096000 B on v4; n2 and n3 go into n1 (each
 *   operand dies there), so p, send{0} and n1 are live together: 12288000 B.
 * - heap_simulator_test.cc:983-996 (AsyncCallImplicitSharding): XLA's async sugar, call-start
 *   and call-done, are async-start and async-done: call-start's {0,0} is p0 and call-done is
 *   call-start's {1}. */
static void test_xla_test_modules_plan_by_hand(void **state)
{
    static const char info[] = "\nHloModule test_module\n\nENTRY %test_module {\n"
                               "  %param.0 = s32[1024]{0} parameter(0)\n"
                               "  %param.1 = s32[1024]{0} parameter(1)\n"
                               "  %mul = s32[1024]{0} multiply(%param.0, %param.1)\n"
                               "  %add = s32[1024]{0} add(%mul, %param.0)\n"
                               "  ROOT %bcast = s32[1024,1024]{1,0} broadcast(s32[1024] %add), "
                               "dimensions={0}\n}";
    static const char offload[] =
        "\n  HloModule offloading, input_output_alias= { {0}: (1, {}, must-alias) }\n\n"
        "  ENTRY main {\n"
        "    param.0 = f32[1024]{0:S(5)} parameter(0)\n"
        "    param.1 = f32[1024]{0} parameter(1)\n"
        "    copy-start.h2d = (f32[1024]{0}, f32[1024]{0:S(5)}, u32[]) copy-start(param.0)\n"
        "    copy-done.h2d = f32[1024]{0} copy-done(copy-start.h2d)\n"
        "    copy-start.d2h = (f32[1024]{0:S(5)}, f32[1024]{0}, u32[]) copy-start(param.1)\n"
        "    copy-done.d2h = f32[1024]{0:S(5)} copy-done(copy-start.d2h)\n"
        "    ROOT t = (f32[1024]{0}, f32[1024]{0:S(5)}) tuple(copy-done.h2d, copy-done.d2h)\n"
        "  }";
    static const char send[] = "\nHloModule module\n\nENTRY entry {\n"
                               "  %p = f32[1000, 1000] parameter(0)\n"
                               "  %token.0 = token[] after-all()\n"
                               "  %send = (f32[1000, 1000], token[]) send(%p, %token.0),\n"
                               "    channel_id=1, is_host_transfer=true\n"
                               "  %n1 = f32[1000, 1000] negate(%p)\n"
                               "  %n2 = f32[1000, 1000] negate(%n1)\n"
                               "  %n3 = f32[1000, 1000] negate(%n2)\n"
                               "  %send-done = token[] send-done(%send), channel_id=1, "
                               "is_host_transfer=true\n}\n";
    static const char call[] =
        "\n  HloModule module, is_scheduled=true\n\n  called_computation {\n"
        "    param0 = f32[4] parameter(0)\n    constant = f32[1] constant(1)\n"
        "    dynamic-update-slice = f32[4] dynamic-update-slice(param0, constant, constant)\n"
        "    ROOT negate = f32[4] negate(dynamic-update-slice)\n  }\n\n  ENTRY entry {\n"
        "    p0 = f32[8] parameter(0)\n"
        "    call-start = ((f32[8]), f32[8], s32[]) call-start(p0), "
        "async_execution_thread=\"foo\", to_apply=called_computation\n"
        "    ROOT call-done = f32[8] call-done(call-start)\n  }\n  ";
    struct model m;
    (void)state;

    import(info, &m);
    assert_int_equal(m.n, 4);
    assert_string_equal(tensor(&m, "mul")->in_place, "add");
    assert_live(tensor(&m, "mul"), 2, 5);
    assert_live(tensor(&m, "bcast"), 4, 5);
    model_free(&m);
    assert_int_equal(plan_v4(info).peak_bytes, 3 * 4096 + 4194304); /* params, add, bcast */

    import(offload, &m);
    assert_int_equal(m.n, 4);
    /* param.0 (all program) and copy-start.d2h{0} (an output, from step 4): 4096 B each */
    assert_true(has_warning(&m, "2 HLO buffers in host (S(5)) memory (8192 bytes, peak 8192 "
                                "bytes) are planned apart: never added to HBM"));
    assert_int_equal(m.program.spaces[MODEL_SPACE_HOST].peak_bytes, 8192);
    assert_true(tensor(&m, "param.1")->donated);
    assert_live(tensor(&m, "param.1"), 0, 6);
    assert_int_equal(tensor(&m, "copy-start.h2d{0}")->kind, TENSOR_OUTPUT);
    assert_live(tensor(&m, "copy-start.h2d{2}"), 2, 4);
    assert_live(tensor(&m, "copy-start.d2h{2}"), 4, 6);
    model_free(&m);

    import(send, &m);
    assert_int_equal(m.n, 6);
    assert_string_equal(tensor(&m, "n1")->in_place, "n2,n3");
    assert_int_equal(tensor(&m, "send-done")->kind, TENSOR_OUTPUT);
    model_free(&m);
    assert_int_equal(plan_v4(send).peak_bytes, 3 * 4096000);

    import(call, &m);
    assert_int_equal(m.n, 3); /* p0, call-start{1} (call-done), call-start{2} */
    assert_int_equal(tensor(&m, "call-start{1}")->kind, TENSOR_OUTPUT);
    assert_live(tensor(&m, "call-start{2}"), 1, 3);
    model_free(&m);
}

/* The stack-frame index current XLA prints after the header (jax tests/source_mapper_test.py
 * :24-44, verbatim): metadata's stack_frame_id=1 is frame 1, file location 1, file 1
 * "<embedded module>", line 153. Parents print as the proto's id + 1. */
static void test_stack_frame_index_gives_source_lines(void **state)
{
    static const char text[] =
        "HloModule m, entry_computation_layout={()->pred[]}\n\n"
        "FileNames\n1 \"<embedded module>\"\n2 \"experimental/module.py\"\n"
        "3 \"yet/another/test.py\"\n\n"
        "FunctionNames\n1 \"main\"\n2 \"method\"\n\n"
        "FileLocations\n"
        "1 {file_name_id=1 function_name_id=1 line=153 end_line=153 column=2 end_column=31}\n"
        "2 {file_name_id=3 function_name_id=2 line=35 end_line=35 column=2 end_column=24}\n"
        "3 {file_name_id=2 function_name_id=2 line=83 end_line=83 column=2 end_column=15}\n\n"
        "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n"
        "2 {file_location_id=2 parent_frame_id=2}\n\n\n"
        "ENTRY %constant_pred () -> pred[] {\n"
        "  ROOT %constant = pred[] constant(true), metadata={op_type=\"const\" "
        "op_name=\"opname\" stack_frame_id=1}\n}\n";
    struct hlo_module h;
    struct hlo_span file;
    int64_t line = 0;
    struct model m;
    struct err e;
    (void)state;
    assert_int_equal(hlo_parse(text, strlen(text), 100, &h, &e), ERR_OK);
    assert_int_equal(h.nfiles, 3);
    assert_int_equal(h.nfunctions, 2);
    assert_int_equal(h.nlocations, 3);
    assert_int_equal(h.nframes, 2);
    assert_int_equal(h.locations[1].file, 3);
    assert_int_equal(h.locations[1].line, 35);
    assert_int_equal(h.frames[0].parent, 0);
    assert_int_equal(h.frames[1].parent, 1);
    assert_true(hlo_span_is(&h, h.files[2], "yet/another/test.py"));
    assert_true(hlo_span_is(&h, h.instrs[0].meta.op_type, "const"));
    assert_int_equal(h.instrs[0].meta.stack_frame, 1);
    assert_true(hlo_source(&h, &h.instrs[0], &file, &line));
    assert_true(hlo_span_is(&h, file, "<embedded module>"));
    assert_int_equal(line, 153);
    assert_true(hlo_span_is(&h, h.entry_params, "()"));
    assert_true(hlo_span_is(&h, h.entry_result, "pred[]"));
    hlo_free(&h);
    import(text, &m);
    assert_string_equal(m.tensors[0].source, "<embedded module>:153");
    assert_string_equal(m.tensors[0].op_name, "opname");
    model_free(&m);
}

/* What the header, metadata and attributes hold is kept in the parsed module for the model
 * and the passes after it (hlo.h). */
static void test_header_metadata_and_attributes_are_kept(void **state)
{
    static const char text[] =
        "HloModule jit_step, is_scheduled=true, input_output_alias={ {1}: (2, {}, "
        "must-alias), {1}: (1, {1}) }, buffer_donor={ (2, {}), (3, {0,1}) },\n"
        "  entry_computation_layout={(f32[8]{0}, (s32[], f32[2]{0}), f32[2]{0}, "
        "f32[1]{0}, /*index=4*/f32[4]{0:S(5)})->(f32[8]{0}, f32[2]{0})},\n"
        "  replica_count=2, num_partitions=4, allow_spmd_sharding_propagation_to_output={true},\n"
        "  frontend_attributes={xla.sdy.meshes=\"{mesh = #sdy.mesh<[\\\"x\\\"=4]>}\"}\n"
        "ENTRY %main.7_spmd (p0: f32[8], p1: (s32[], f32[2]), p2: f32[2], p3: f32[1], "
        "p4: f32[4]) -> (f32[8], f32[2]) {\n"
        "  %p0 = f32[8]{0} parameter(0), metadata={op_name=\"x\"}\n"
        "  %p1 = (s32[], f32[2]{0}) parameter(1)\n"
        "  %p2 = f32[2]{0} parameter(2)\n  %p3 = f32[1]{0} parameter(3)\n"
        "  %p4 = f32[4]{0:S(5)} parameter(4)\n"
        "  %cc = f32[4]{0} custom-call(%p4), custom_call_target=\"MoveToDevice\", "
        "frontend_attributes={_xla_buffer_placement=\"pinned_host\"}, "
        "backend_config={\"flag_configs\":[],\"k\":\"}\"}, api_version=API_VERSION_TYPED_FFI\n"
        "  %g = f32[2]{0} get-tuple-element(%p1), index=1\n"
        "  %m = f32[8]{0} multiply(%p0, %p0), metadata={op_type=\"mul\" "
        "op_name=\"jit(step)/mul\" source_file=\"/src/model\\\\x.py\" source_line=42 "
        "source_end_line=42 source_column=3 source_end_column=9 deduplicated_name=\"d\"}\n"
        "  ROOT %t = (f32[8]{0}, f32[2]{0}) tuple(%m, %g)\n}\n";
    struct hlo_module h;
    struct model m;
    struct err e;
    char buf[64];
    (void)state;
    if (hlo_parse(text, strlen(text), 100, &h, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    assert_true(h.scheduled);
    assert_int_equal(h.replica_count, 2);
    assert_int_equal(h.num_partitions, 4);
    assert_int_equal(h.naliases, 2);
    assert_true(h.aliases[0].must);
    assert_false(h.aliases[1].must);
    assert_int_equal(h.aliases[1].param_depth, 1);
    assert_int_equal(h.ndonors, 2);
    assert_int_equal(h.donors[1].param, 3);
    assert_int_equal(h.donors[1].depth, 2);
    assert_int_equal(h.donors[1].path[1], 1);
    assert_int_equal(h.entry_result.len, strlen("(f32[8]{0}, f32[2]{0})"));
    assert_true(hlo_span_is(&h, h.comps[h.entry].name, "main.7_spmd"));
    assert_int_equal(h.leaves[h.instrs[4].leaf0].memory_space, 5);
    const struct hlo_instr *cc = &h.instrs[5], *mul = &h.instrs[7];
    assert_true(hlo_span_is(&h, cc->custom_call_target, "MoveToDevice"));
    assert_true(
        hlo_span_is(&h, cc->frontend_attributes, "{_xla_buffer_placement=\"pinned_host\"}"));
    assert_true(hlo_span_is(&h, cc->backend_config, "{\"flag_configs\":[],\"k\":\"}\"}"));
    assert_true(hlo_span_is(&h, mul->meta.op_type, "mul"));
    assert_int_equal(mul->meta.source_line, 42);
    assert_int_equal(hlo_unescape(&h, mul->meta.source_file, buf, sizeof(buf)), 15);
    assert_string_equal(buf, "/src/model\\x.py");
    assert_int_equal(hlo_unescape(&h, mul->meta.source_file, buf, 5), 4); /* cut at cap - 1 */
    assert_string_equal(buf, "/src");
    hlo_free(&h);
    import(text, &m);
    assert_string_equal(tensor(&m, "m")->source, "/src/model\\x.py:42");
    assert_string_equal(tensor(&m, "m")->op_name, "jit(step)/mul");
    assert_null(tensor(&m, "p0")->source);
    model_free(&m);
}

/* A result shape may be left out where XLA infers it (CanInferShape). The module of
 * memory_space_assignment_test.cc:12258-12273 (ExpandScopedAlternateMemory), verbatim, writes
 * none for its adds, multiplies and tuple: each is its first operand's f32[8,8], the tuple
 * (f32[8,8], f32[8,8]). */
static void test_result_shapes_are_inferred_where_xla_infers_them(void **state)
{
    static const char msa[] = "\n  HloModule TestModule, is_scheduled=true\n    ENTRY Main {\n"
                              "      p0 = f32[8,8] parameter(0)\n"
                              "      p1 = f32[8,8] parameter(1)\n"
                              "      p2 = f32[8,8] parameter(2)\n"
                              "      p3 = f32[8,8] parameter(3)\n\n"
                              "      v0 = add(p0, p1)\n      v1 = add(v0, p1)\n"
                              "      v2 = add(v1, p1)\n\n"
                              "      v3 = multiply(v2, p2)\n      v4 = multiply(v3, p3)\n\n"
                              "      ROOT t = tuple(v3, v4)\n    }\n  ";
    static const char more[] = "HloModule m\nENTRY e {\n"
                               "  p = (f32[2]{0}, (s32[], pred[4]{0})) parameter(0)\n"
                               "  q = pred[4]{0} parameter(1)\n"
                               "  g = get-tuple-element(p), index=1\n"
                               "  s = get-tuple-element(g), index=1\n"
                               "  x = f32[4]{0} parameter(2)\n"
                               "  y = select(q, x, x)\n  c = clamp(x, y, x)\n"
                               "  o = sort(c, y), dimensions={0}\n"
                               "  ROOT r = tuple(g, o, s)\n}\n";
    struct hlo_module h;
    struct model m;
    struct err e;
    (void)state;
    assert_int_equal(hlo_parse(msa, strlen(msa), 100, &h, &e), ERR_OK);
    const struct hlo_instr *t = &h.instrs[h.comps[0].root];
    assert_true(h.instrs[4].shape_inferred);
    assert_true(hlo_span_is(&h, h.leaves[h.instrs[8].leaf0].shape, "f32[8,8]"));
    assert_true(t->tuple_shaped);
    assert_int_equal(t->nleaves, 2);
    assert_int_equal(h.leaves[t->leaf0 + 1].path[0], 1);
    hlo_free(&h);
    import(msa, &m);
    assert_int_equal(m.n, 6); /* v1, v2 go into v0, v4 reads v3 (an output) so it is new */
    assert_string_equal(tensor(&m, "v0")->in_place, "v1,v2,v3");
    assert_int_equal(tensor(&m, "v4")->kind, TENSOR_OUTPUT);
    model_free(&m);

    assert_int_equal(hlo_parse(more, strlen(more), 100, &h, &e), ERR_OK);
    const struct hlo_instr *g = &h.instrs[2], *sv = &h.instrs[3], *o = &h.instrs[7],
                           *r = &h.instrs[8];
    assert_true(g->tuple_shaped); /* (s32[], pred[4]) */
    assert_int_equal(g->nleaves, 2);
    assert_true(hlo_span_is(&h, h.leaves[g->leaf0 + 1].shape, "pred[4]{0}"));
    assert_false(sv->tuple_shaped);
    assert_int_equal(sv->nleaves, 1);
    assert_true(hlo_span_is(&h, h.leaves[h.instrs[5].leaf0].shape, "f32[4]{0}")); /* select */
    assert_int_equal(o->nleaves, 2); /* sort of two arrays: a tuple of both */
    assert_int_equal(r->nleaves, 5);
    assert_int_equal(h.leaves[r->leaf0 + 1].depth, 2); /* r{0,1} */
    assert_int_equal(h.leaves[r->leaf0 + 1].path[1], 1);
    hlo_free(&h);
}

/* Sharding forms XLA prints (hlo_sharding.cc): an unscheduled module's arrays are planned at
 * ceil(dim / tiles) per dim from the tile assignment's dims, whichever way the devices are
 * listed; replicated, manual, unknown and maximal ones keep the whole shape; a tuple sharding
 * (with XLA's index comments) gives each leaf its own. */
static void test_sharding_forms_are_read(void **state)
{
    static const char text[] =
        "HloModule m\nENTRY e {\n"
        "  a = f32[64,256]{1,0} parameter(0), sharding={devices=[4,2]<=[8]}\n"
        "  b = f32[64,256]{1,0} parameter(1), sharding={devices=[2,1,4]<=[2,4]T(1,0) "
        "last_tile_dim_replicate}\n"
        "  c = f32[64,256]{1,0} parameter(2), sharding={devices=[1,8,2]<=[16] "
        "last_tile_dims={manual}}\n"
        "  d = f32[64,256]{1,0} parameter(3), sharding={manual}\n"
        "  u = f32[64,256]{1,0} parameter(4), sharding={unknown shard_as 1}\n"
        "  x = f32[64,256]{1,0} parameter(5), sharding={maximal device=0 "
        "metadata={op_name=\"a\"}}\n"
        "  t = (f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, f32[8]{0}, /*index=5*/f32[8]{0}) "
        "parameter(6), sharding={{replicated}, {replicated}, {replicated}, {replicated}, "
        "{replicated}, /*index=5*/{devices=[4]<=[4]}}\n"
        "  ROOT r = f32[64,256]{1,0} add(a, b)\n}\n";
    struct model m;
    (void)state;
    import(text, &m);
    assert_int_equal(tensor(&m, "a")->shape.dims[0], 16);
    assert_int_equal(tensor(&m, "a")->shape.dims[1], 128);
    assert_int_equal(tensor(&m, "b")->shape.dims[0], 32);
    assert_int_equal(tensor(&m, "b")->shape.dims[1], 256);
    assert_int_equal(tensor(&m, "c")->shape.dims[1], 32);
    assert_int_equal(tensor(&m, "d")->shape.dims[0], 64);
    assert_int_equal(tensor(&m, "u")->shape.dims[0], 64);
    assert_int_equal(tensor(&m, "x")->shape.dims[1], 256);
    assert_int_equal(tensor(&m, "t{4}")->shape.dims[0], 8);
    assert_int_equal(tensor(&m, "t{5}")->shape.dims[0], 2);
    model_free(&m);
}

/* Errors name line:column and what was expected. */
static void expect_error(const char *text, int code, const char *where, const char *what)
{
    struct model m;
    struct err e;
    err_clear(&e);
    assert_int_equal(hlo_import(text, strlen(text), NULL, &limits, &m, &e), code);
    if (where != NULL && strcmp(e.where, where) != 0)
        fail_msg("where \"%s\", wanted \"%s\" (%s)", e.where, where, e.msg);
    if (strstr(e.msg, what) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, what);
}

static void test_errors_give_line_and_column(void **state)
{
    (void)state;
    expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[2]{0} add(b, b)\n}\n", ERR_INVALID,
                 "line 3:26", "operand %b is not defined before its use");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2,x] parameter(0)\n}\n", ERR_INVALID,
                 "line 3:7", "shape \"f32[2,x]\"");
    expect_error("HloModule m\n", ERR_INVALID, "line 2:1", "expected a computation");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] call(), to_apply=nope\n}\n", ERR_INVALID,
                 "line 3:31", "no computation is called nope");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0), metadata={op_name=\"x}\n}\n",
                 ERR_INVALID, "line 3:46", "unterminated string");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n", ERR_INVALID, "line 4:1",
                 "expected '}' to close the computation");
    expect_error("HloModule m\nENTRY e {\n  a f32[2] parameter(0)\n}\n", ERR_INVALID, "line 3:5",
                 "expected '=' after the instruction name");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  a = f32[2] negate(a)\n}\n",
                 ERR_INVALID, "line 4:3", "a is defined twice");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT g = f32[2] "
                 "get-tuple-element(a), index=0\n}\n",
                 ERR_INVALID, "line 4:8", "not a tuple");
    expect_error("not hlo", ERR_INVALID, "line 1:1",
                 "expected \"HloModule\", ENTRY or a computation");
    expect_error("HloModule m, input_output_alias={ {0}: (3, {}) }\nENTRY e {\n  ROOT a = "
                 "f32[2] parameter(0)\n}\n",
                 ERR_INVALID, "line 1:35", "input_output_alias names a parameter index");
    /* the forms XLA accepts read, the rest refused by name */
    expect_error("HloModule m\nENTRY e {\n  /* x\n  a = f32[2] parameter(0)\n}\n", ERR_INVALID,
                 "line 3:3", "a comment opens here and is never closed");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] "
                 "add(negate(a), a)\n}\n",
                 ERR_INVALID, "line 4:23", "a nested instruction negate(...) as an operand");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] "
                 "add(a, ...(+3))\n}\n",
                 ERR_INVALID, "line 4:26", "the operand list is cut short");
    expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n  ROOT b = f32[2] "
                 "negate(a)\n}\n",
                 ERR_INVALID, "line 4:3", "a second ROOT in computation e");
    expect_error("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = compare(a, a), "
                 "direction=LT\n}\n",
                 ERR_INVALID, "line 4:8", "compare has no result shape");
    expect_error("HloModule m\nENTRY e {\n  t = (f32[2], f32[2]) parameter(0)\n  ROOT g = "
                 "get-tuple-element(t), index=5\n}\n",
                 ERR_INVALID, "line 4:8", "t has no tuple element 5");
    expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), metadata={op_name=\"x\" "
                 "stack_frame_id=3}\n}\n",
                 ERR_INVALID, "line 3:8", "stack_frame_id=3 names no frame");
    expect_error(
        "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), metadata={op_name=x}\n}\n",
        ERR_INVALID, "line 3:51", "expected a quoted string");
    expect_error("HloModule m\nFileNames\n1 \"f.py\"\nFunctionNames\nFileLocations\n"
                 "1 {file_name_id=2 line=3}\nStackFrames\nENTRY e {\n  ROOT a = f32[2] "
                 "parameter(0)\n}\n",
                 ERR_INVALID, "line 6:17",
                 "file_name_id=2 names no entry of FileNames (1 entries)");
    expect_error("HloModule m\nFileNames\n1 \"f.py\"\nENTRY e {\n  ROOT a = f32[2] "
                 "parameter(0)\n}\n",
                 ERR_INVALID, "line 4:1", "expected the heading FunctionNames");
    expect_error("HloModule m, is_scheduled=maybe\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n",
                 ERR_INVALID, "line 1:27", "expected true or false for is_scheduled");
    expect_error("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0), sharding=, x=1\n}\n",
                 ERR_INVALID, "line 3:42", "expected an attribute value");
    expect_error("HloModule m, input_output_alias={ {}: (0, {}, maybe-alias) }\nENTRY e {\n  ROOT "
                 "a = f32[2] parameter(0)\n}\n",
                 ERR_INVALID, "line 1:58", "expected may-alias or must-alias");
    /* latency_hiding_scheduler_test.cc:3098: a bounded dynamic dim is refused, named */
    expect_error("HloModule m, is_scheduled=true\ncalled_computation {\n  ROOT %param = "
                 "s32[<=4096]{0:T(8)M(1024)} parameter(0)\n}\nENTRY e {\n  ROOT a = f32[2] "
                 "parameter(0)\n}\n",
                 ERR_INVALID, "line 3:17", "dimension 0 at offset 4 is dynamic ('<=')");
}

static void test_depth_and_instruction_limits_are_errors(void **state)
{
    char *text = malloc(4096);
    struct hlo_module h;
    struct err e;
    int n;
    (void)state;
    /* nesting depth */
    n = snprintf(text, 4096, "HloModule m\nENTRY e {\n  a = f32[2] parameter(0), x=");
    for (int k = 0; k < HLO_MAX_DEPTH + 1; k++)
        text[n++] = '{';
    text[n] = '\0';
    assert_int_equal(hlo_parse(text, (size_t)n, 100, &h, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "nested brackets"));
    /* instruction count */
    n = snprintf(text, 4096,
                 "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] negate(a)\n"
                 "  c = f32[2] negate(b)\n}\n");
    assert_int_equal(hlo_parse(text, (size_t)n, 2, &h, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "more than 2 HLO instructions"));
    assert_int_equal(hlo_parse(text, (size_t)n, 3, &h, &e), ERR_OK);
    hlo_free(&h);
    free(text);
}

/* Properties over generated modules: every buffer's lifetime starts at its definition and
 * covers its reads (defined before use), and the plan's peak is at least the largest live
 * sum at any step. */
static void test_generated_modules_live_from_definition_to_reads(void **state)
{
    size_t cap = 1 << 16;
    char *text = malloc(cap);
    uint64_t seed = 42;
    (void)state;
    for (int round = 0; round < 20; round++) {
        size_t at = 0;
        int n = 10 + round * 3;
        at += (size_t)snprintf(text + at, cap - at, "HloModule g%d\nENTRY e {\n", round);
        at += (size_t)snprintf(text + at, cap - at, "  v0 = f32[%d,128]{1,0} parameter(0)\n",
                               8 * (1 + round % 4));
        for (int k = 1; k < n; k++) {
            uint64_t r = rng_lcg64(&seed); /* bits 33-63 of the state */
            int a = (int)(r % (uint64_t)k), b = (int)((r >> 7) % (uint64_t)k);
            const char *op = (r >> 17) % 3 == 0 ? "add" : "dot";
            at += (size_t)snprintf(text + at, cap - at, "  %sv%d = f32[%d,128]{1,0} %s(v%d, v%d)\n",
                                   k == n - 1 ? "ROOT " : "", k, 8 * (1 + round % 4), op, a, b);
        }
        snprintf(text + at, cap - at, "}\n");
        struct model m;
        import(text, &m);
        uint64_t live_max = 0;
        for (int64_t s = 0; s < n; s++) {
            uint64_t live = 0;
            for (size_t i = 0; i < m.n; i++) {
                const struct model_tensor *t = &m.tensors[i];
                assert_true(t->live_start < t->live_end);
                assert_true(t->live_end <= n);
                if (t->live_start <= s && s < t->live_end)
                    live += 512 * ((t->shape.dims[0] * 128 * 4 + 511) / 512);
            }
            live_max = live > live_max ? live : live_max;
        }
        model_free(&m);
        assert_true(peak_of(text) >= live_max);
    }
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scheduled_donation_fusion_constant),
        cmocka_unit_test(test_donated_output_reuses_parameter),
        cmocka_unit_test(test_while_temps_planned_recursively),
        cmocka_unit_test(test_while_state_in_place),
        cmocka_unit_test(test_while_state_not_in_place),
        cmocka_unit_test(test_async_pairs_alias),
        cmocka_unit_test(test_async_in_place),
        cmocka_unit_test(test_dynamic_update_slice_in_place),
        cmocka_unit_test(test_dus_fusions_in_place),
        cmocka_unit_test(test_dus_fusions_not_in_place),
        cmocka_unit_test(test_shardings_divide_dims_and_host_is_left_out),
        cmocka_unit_test(test_scheduled_shapes_are_per_device),
        cmocka_unit_test(test_every_printer_form_is_accepted),
        cmocka_unit_test(test_xla_modules_with_comments_and_continued_lines),
        cmocka_unit_test(test_headerless_modules_and_comments),
        cmocka_unit_test(test_xla_test_modules_plan_by_hand),
        cmocka_unit_test(test_stack_frame_index_gives_source_lines),
        cmocka_unit_test(test_header_metadata_and_attributes_are_kept),
        cmocka_unit_test(test_result_shapes_are_inferred_where_xla_infers_them),
        cmocka_unit_test(test_sharding_forms_are_read),
        cmocka_unit_test(test_errors_give_line_and_column),
        cmocka_unit_test(test_depth_and_instruction_limits_are_errors),
        cmocka_unit_test(test_generated_modules_live_from_definition_to_reads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
