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

/* The pieces the loop modules share. The loop state: an s32[] counter and an f32[1024]. */
#define STATE "(s32[]{:T(128)}, f32[1024]{0:T(1024)})"

/* A body's first lines: the counter read and incremented, the array read as x. */
#define BODY_HEAD                                                                                  \
    "body {\n"                                                                                     \
    "  p = " STATE " parameter(0)\n"                                                               \
    "  i = s32[]{:T(128)} get-tuple-element(p), index=0\n"                                         \
    "  one = s32[]{:T(128)} constant(1)\n"                                                         \
    "  i1 = s32[]{:T(128)} add(i, one)\n"                                                          \
    "  x = f32[1024]{0:T(1024)} get-tuple-element(p), index=1\n"

/* cond: the counter below 10. */
#define COND_BELOW_10                                                                              \
    "cond {\n"                                                                                     \
    "  p = " STATE " parameter(0)\n"                                                               \
    "  i = s32[]{:T(128)} get-tuple-element(p), index=0\n"                                         \
    "  n = s32[]{:T(128)} constant(10)\n"                                                          \
    "  ROOT lt = pred[]{:T(512)} compare(i, n), direction=LT\n"                                    \
    "}\n"

/* A state of two f32[1024], a cond that is always true, and an entry that begins a, b. */
#define PAIR "(f32[1024]{0:T(1024)}, f32[1024]{0:T(1024)})"
#define COND_TRUE                                                                                  \
    "cond {\n"                                                                                     \
    "  p = " PAIR " parameter(0)\n"                                                                \
    "  ROOT t = pred[]{:T(512)} constant(true)\n"                                                  \
    "}\n"                                                                                          \
    "ENTRY main {\n"                                                                               \
    "  a = f32[1024]{0:T(1024)} parameter(0)\n"                                                    \
    "  b = f32[1024]{0:T(1024)} negate(a)\n"

/* JAX-style unscheduled text: no '%', no operand shapes, a while loop over a tuple. */
static const char WHILE[] =
    "HloModule jit_loop, entry_computation_layout={(f32[1024]{0:T(1024)})->f32[1024]{0:T(1024)}}\n"
    "\n" BODY_HEAD "  t1 = f32[1024]{0:T(1024)} exponential(x)\n"
    "  t2 = f32[1024]{0:T(1024)} reverse(t1), dimensions={0}\n"
    "  t3 = f32[1024]{0:T(1024)} multiply(t2, x)\n"
    "  ROOT r = " STATE " tuple(i1, t3)\n"
    "}\n"
    "\n" COND_BELOW_10 "\n"
    "ENTRY main {\n"
    "  a = f32[1024]{0:T(1024)} parameter(0)\n"
    "  z = s32[]{:T(128)} constant(0)\n"
    "  init = " STATE " tuple(z, a)\n"
    "  w = (s32[]{:T(128)}, /*index=1*/f32[1024]{0:T(1024)}) while(init), condition=cond, "
    "body=body\n"
    "  ROOT out = f32[1024]{0:T(1024)} get-tuple-element(w), index=1\n"
    "}\n";

/* A loop whose state dies at the while: the counter i0 and the array b are temps read last by
 * the while, so the result w{0} is written into i0 and w{1} into b (the loop state stays in
 * one set of buffers, as in XLA). Steps: 0 a, 1 b, 2 z, 3 i0, 4 init, 5 w, 6 out. */
static const char WHILE_STATE[] =
    "HloModule m\n" BODY_HEAD "  y = f32[1024]{0:T(1024)} exponential(x)\n"
    "  ROOT r = " STATE " tuple(i1, y)\n"
    "}\n" COND_BELOW_10 "ENTRY main {\n"
    "  a = f32[1024]{0:T(1024)} parameter(0)\n"
    "  b = f32[1024]{0:T(1024)} negate(a)\n"
    "  z = s32[]{:T(128)} constant(0)\n"
    "  i0 = s32[]{:T(128)} copy(z)\n"
    "  init = " STATE " tuple(i0, b)\n"
    "  w = " STATE " while(init), condition=cond, body=body\n"
    "  ROOT out = f32[1024]{0:T(1024)} get-tuple-element(w), index=1\n"
    "}\n";

/* Where the init value does not die at the while, the result keeps a buffer of its own: b is
 * read after the loop (XLA's copy insertion would copy it), the parameter a and the constant
 * z outlive it (WHILE keeps w{0} and w{1}). */
static const char WHILE_READ_LATER[] = "HloModule m\n"
                                       "body {\n"
                                       "  p = " PAIR " parameter(0)\n"
                                       "  x = f32[1024]{0:T(1024)} get-tuple-element(p), index=0\n"
                                       "  y = f32[1024]{0:T(1024)} get-tuple-element(p), index=1\n"
                                       "  ROOT r = " PAIR " tuple(y, x)\n"
                                       "}\n" COND_TRUE "  c = f32[1024]{0:T(1024)} sine(a)\n"
                                       "  init = " PAIR " tuple(b, c)\n"
                                       "  w = " PAIR " while(init), condition=cond, body=body\n"
                                       "  w0 = f32[1024]{0:T(1024)} get-tuple-element(w), index=0\n"
                                       "  ROOT s = f32[1024]{0:T(1024)} add(w0, b)\n"
                                       "}\n";

/* One buffer passed twice to a while holds only one leaf of its result. */
static const char WHILE_TWICE[] = "HloModule m\n"
                                  "body {\n"
                                  "  p = " PAIR " parameter(0)\n"
                                  "  ROOT r = " PAIR " copy(p)\n"
                                  "}\n" COND_TRUE "  init = " PAIR " tuple(b, b)\n"
                                  "  ROOT w = " PAIR " while(init), condition=cond, body=body\n"
                                  "}\n";

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

/* A reduction's computation, for all-reduce and scatter. */
#define SUM                                                                                        \
    "sum {\n"                                                                                      \
    "  x = f32[] parameter(0)\n"                                                                   \
    "  y = f32[] parameter(1)\n"                                                                   \
    "  ROOT s = f32[] add(x, y)\n"                                                                 \
    "}\n"

/* all-reduce-start writes into its operand when the operand dies there (XLA's in-place pair);
 * its done is the same buffer. ars2's operand c is read later (by d), so ars2 has a buffer of
 * its own, and d is written into it (ard2 dies at d). A 4-operand collective-permute-start
 * writes {1} into operand 1 (e, dying there); {0} is operand 0. Async-start/update/done: the
 * done is the start's {1}. Steps: 0 a, 1 b, 2 c, 3 ars, 4 ars2, 5 ard, 6 ard2, 7 d, 8 e,
 * 9 i, 10 cps, 11 cpd, 12 as, 13 au, 14 ad, 15 t. */
static const char ASYNC_IN_PLACE[] =
    "HloModule m, is_scheduled=true\n" SUM "wrapped {\n"
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

/* b from step 3; d (step 4) into b; x (step 5, elementwise) into b too: output. */
static const char DUS[] = "HloModule m\n"
                          "ENTRY e {\n"
                          "  a = f32[64]{0:T(64)} parameter(0)\n"
                          "  u = f32[8]{0:T(8)} parameter(1)\n"
                          "  i = s32[] parameter(2)\n"
                          "  b = f32[64]{0:T(64)} negate(a)\n"
                          "  d = f32[64]{0:T(64)} dynamic-update-slice(b, u, i)\n"
                          "  ROOT x = f32[64]{0:T(64)} cosine(d)\n"
                          "}\n";

/* A fusion whose ROOT is a dynamic-update-slice of its parameter 0, and a fusion's three
 * parameters. */
#define FUSED_DUS                                                                                  \
    "fused_dus {\n" DUS_PARAMS "  z = s32[]{:T(128)} constant(0)\n"                                \
    "  ROOT d = f32[64,128]{1,0:T(8,128)} dynamic-update-slice(p0, p1, p2, z)\n"                   \
    "}\n"
#define DUS_PARAMS                                                                                 \
    "  p0 = f32[64,128]{1,0:T(8,128)} parameter(0)\n"                                              \
    "  p1 = f32[8,128]{1,0:T(8,128)} parameter(1)\n"                                               \
    "  p2 = s32[]{:T(128)} parameter(2)\n"

/* The entry's parameters of the DUS fusion modules. */
#define DUS_ENTRY                                                                                  \
    "  a = f32[64,128]{1,0:T(8,128)} parameter(0)\n"                                               \
    "  u = f32[8,128]{1,0:T(8,128)} parameter(1)\n"                                                \
    "  i = s32[]{:T(128)} parameter(2)\n"

/* Fusions that update an operand in place, and a plain scatter. f1's fused ROOT is a
 * dynamic-update-slice of parameter 0; f2's ROOT tuple's element 1 is a scatter of a bitcast
 * of parameter 0 (element 0 is new memory); s is a scatter of f2{1}. Steps: 0 a, 1 u, 2 i,
 * 3 idx, 4 b, 5 f1, 6 f2, 7 g, 8 s, 9 h, 10 r. */
static const char DUS_FUSIONS[] =
    "HloModule m\n" FUSED_DUS SUM "fused_scatter {\n"
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
    "ENTRY e {\n" DUS_ENTRY "  idx = s32[8,1]{1,0:T(8,128)} parameter(3)\n"
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

/* No in-place write: the updated operand is read later (b, by c), a parameter (a), the
 * fusion's DUS updates a value computed inside it rather than a parameter (f4), or the
 * operand is an output (c, in the ROOT). Steps: 0 a, 1 u, 2 i, 3 b, 4 f1, 5 c, 6 f3, 7 f4,
 * 8 f5, 9 r. */
static const char DUS_NOT_IN_PLACE[] =
    "HloModule m\n" FUSED_DUS "fused_dus_inner {\n" DUS_PARAMS
    "  n = f32[64,128]{1,0:T(8,128)} exponential(p0)\n"
    "  ROOT d = f32[64,128]{1,0:T(8,128)} dynamic-update-slice(n, p1, p2, p2)\n"
    "}\n"
    "ENTRY e {\n" DUS_ENTRY "  b = f32[64,128]{1,0:T(8,128)} negate(a)\n"
    "  f1 = f32[64,128]{1,0:T(8,128)} fusion(b, u, i), kind=kLoop, calls=fused_dus\n"
    "  c = f32[64,128]{1,0:T(8,128)} add(f1, b)\n"
    "  f3 = f32[64,128]{1,0:T(8,128)} fusion(a, u, i), kind=kLoop, calls=fused_dus\n"
    "  f4 = f32[64,128]{1,0:T(8,128)} fusion(f3, u, i), kind=kLoop, calls=fused_dus_inner\n"
    "  f5 = f32[64,128]{1,0:T(8,128)} fusion(c, u, i), kind=kLoop, calls=fused_dus\n"
    "  ROOT r = (f32[64,128]{1,0:T(8,128)}, f32[64,128]{1,0:T(8,128)}, "
    "f32[64,128]{1,0:T(8,128)}) tuple(c, f4, f5)\n"
    "}\n";

/* Shardings divide a dim by its devices; a value in VMEM (S(1)) is left out. */
static const char SHARDED[] =
    "HloModule m, num_partitions=2\n"
    "ENTRY e {\n"
    "  a = f32[16,256]{1,0} parameter(0), sharding={devices=[2,1]0,1}\n"
    "  t = (f32[16,256]{1,0}, f32[4,8]{1,0}) parameter(1), "
    "sharding={{devices=[1,2]0,1}, {replicated}}\n"
    "  v = f32[16,256]{1,0:T(8,128)S(1)} copy(a)\n"
    "  ROOT r = f32[16,256]{1,0} add(a, a), sharding={devices=[2,1,2]0,1,2,3 "
    "last_tile_dim_replicate}\n"
    "}\n";

/* A scheduled module's shapes are per device already: its sharding divides nothing. */
static const char SCHEDULED_SHARDED[] = "HloModule m, is_scheduled=true\n"
                                        "ENTRY e {\n"
                                        "  ROOT a = f32[16,256]{1,0} parameter(0), "
                                        "sharding={devices=[2,1]0,1}\n"
                                        "}\n";

/* Header attributes, a comment between operands, nested tuples, a long backend_config,
 * trailing stack-frame tables. */
static const char PRINTER_FORMS[] =
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
    "FileNames\n1 \"f.py\"\n";

/* Donation that XLA applies without a copy: the parameter is dead when the output is
 * written, so the output lives in the parameter's buffer. */
static const char DONATED_REUSED[] = "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }\n"
                                     "ENTRY e {\n"
                                     "  p = f32[1024]{0:T(1024)} parameter(0)\n"
                                     "  q = f32[1024]{0:T(1024)} parameter(1)\n"
                                     "  s = f32[1024]{0:T(1024)} sort(p), dimensions={0}\n"
                                     "  ROOT r = f32[1024]{0:T(1024)} add(s, q)\n"
                                     "}\n";

static void import(const char *text, struct model *m)
{
    struct err e;
    err_clear(&e);
    if (hlo_import(text, strlen(text), NULL, &limits, m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
}

/* What the table cannot say of DONATE: the module's own fields and the constant's layout. */
static void donate_more(const struct model *m)
{
    assert_true(hlo_detect(DONATE, strlen(DONATE)));
    assert_string_equal(m->source_format, "hlo");
    assert_string_equal(m->name, "jit_f");
    assert_true(tensor(m, "c")->shape.has_layout);
    assert_int_equal(tensor(m, "c")->shape.ntiles, 1);
}

static void while_more(const struct model *m)
{
    assert_true(tensor(m, "w/temps")->raw);
}

/* No done, and no start's operand element, has a buffer. */
static void async_more(const struct model *m)
{
    static const char *const none[] = {"cd", "agd", "cpd", "cs{1}", "ags{0}", "cps{0}"};
    for (size_t k = 0; k < m->n; k++)
        for (size_t j = 0; j < sizeof(none) / sizeof(none[0]); j++)
            if (strcmp(m->tensors[k].name, none[j]) == 0)
                fail_msg("%s has a buffer", none[j]);
}

/* A module, the model it imports as, and its plan's peak. */
struct hlo_case {
    const char *title; /* the test's name */
    const char *text;
    size_t n;                            /* tensors */
    struct want_tensor want[8];          /* at most 7, ended by an entry without a name */
    const char *warning;                 /* a warning the model must have; NULL: none asked */
    void (*more)(const struct model *m); /* what the table cannot say; NULL: nothing */
    uint64_t peak;                       /* the plan's peak (xla-default); 0: not planned */
};

static const struct hlo_case cases[] = {
    /* Steps 0..6: Arg_0.1, Arg_1.2, mul.3, fusion.4, c, fusion.5, tuple.6. fusion.5 is
     * written in place into fusion.4. Arg_0.1 is donated, but read at step 5 after fusion.4
     * (step 3) is written: XLA would copy, so the output keeps its own buffer and the
     * parameter dies after its last use. Arg_1.2 is not donated: the whole program.
     * Everything but Arg_0.1 is live at step 5: 4 x 4096 + 512, plus Arg_0.1 = 16896. */
    {"scheduled_donation_fusion_constant",
     DONATE,
     5,
     {{.name = "Arg_0.1", .kind = "input", .donated = true, .end = 6, .op_name = "x"},
      {.name = "Arg_1.2", .start = 0, .end = 7},
      {.name = "mul.3", .kind = "output", .start = 2, .end = 7, .op_name = "jit(f)/mul"},
      {.name = "fusion.4", .kind = "output", .start = 3, .end = 7, .in_place = "fusion.5"},
      {.name = "c", .kind = "constant", .start = 0, .end = 7}},
     NULL,
     donate_more,
     16896},
    /* r is written into s in place (add, s dies there), and that buffer is the donated
     * output: p is dead once s is written (step 2 reads p last), so it all lives in p. */
    {"donated_output_reuses_parameter",
     DONATED_REUSED,
     2,
     {{.name = "p", .donated = true, .kind = "input", .start = 0, .end = 4, .in_place = "s,r"}},
     NULL,
     NULL,
     0},
    /* Body peak by hand: constant one (512 B, whole body) + t1 (4096 B, steps 5-6) = 4608 B;
     * t3 is written into t2 in place and with i1 is the ROOT (the while's result, counted in
     * the caller). cond: n, 512 B. Entry at step 3: a 4096 + z 512 + w{0} 512 + w{1} 4096 +
     * w/temps 4608 = 13824. */
    {"while_temps_planned_recursively",
     WHILE,
     5,
     {{.name = "a", .start = 0, .end = 5},
      {.name = "z", .kind = "constant"},
      {.name = "w{0}", .start = 3, .end = 4},
      {.name = "w{1}", .kind = "output", .start = 3, .end = 5},
      {.name = "w/temps", .padded = 4608, .start = 3, .end = 4}},
     NULL,
     while_more,
     13824},
    /* Body: the constant one (512 B) is its only buffer of its own (i1 and y are its ROOT, the
     * loop state); cond: n, 512 B; so w/temps is 512 B. Entry at step 5: a 4096 + b (holding
     * w{1}) 4096 + z 512 + i0 (holding w{0}) 512 + w/temps 512 = 9728 B. With the result in
     * buffers of its own (w{0} 512 + w{1} 4096 beside i0 and b) it was 14336 B. */
    {"while_state_in_place",
     WHILE_STATE,
     5,
     {{.name = "b", .in_place = "w{1}", .kind = "output", .start = 1, .end = 7},
      {.name = "i0", .in_place = "w{0}", .kind = "temp", .start = 3, .end = 6},
      {.name = "w/temps", .padded = 512}},
     "2 HLO results are written into a buffer",
     NULL,
     9728},
    /* b is read by s after the while: w{0} keeps its own buffer (and s is written into it);
     * c dies at the while: w{1} is written into c. */
    {"while_state_not_in_place",
     WHILE_READ_LATER,
     4,
     {{.name = "b", .in_place = IN_PLACE_NONE, .start = 1, .end = 7},
      {.name = "c", .in_place = "w{1}", .start = 2, .end = 5},
      {.name = "w{0}", .in_place = "s"}},
     NULL,
     NULL,
     0},
    /* a, b holding w{0}, w{1} */
    {"while_state_passed_twice",
     WHILE_TWICE,
     3,
     {{.name = "b", .in_place = "w{0}"}, {.name = "w{1}", .kind = "output"}},
     NULL,
     NULL,
     0},
    /* Live bytes by step: a 4096 [0,10); b 4096 [1,6) (the copy reads it until copy-done);
     * cs{0} 4096 [2,10) (cd's result, an output); cs{2} 512 [2,6); ags{1} 8192 [3,10) (agd's);
     * c 4096 [4,9) (read by collective-permute-done); cps{1} 4096 [7,10) (cpd's); cps{2},
     * cps{3} 512 each [7,9). Step 7: 4096 + 4096 + 8192 + 4096 + 4096 + 1024 = 25600, the
     * peak (step 5: 25088). With each start's and done's leaves buffers of their own the
     * plan's peak was 33792 B. */
    {"async_pairs_alias",
     ASYNC,
     9,
     {{.name = "b", .start = 1, .end = 6},
      {.name = "cs{0}", .kind = "output", .start = 2, .end = 10},
      {.name = "cs{2}", .start = 2, .end = 6},
      {.name = "ags{1}", .dim0 = 2048, .start = 3, .end = 10},
      {.name = "c", .start = 4, .end = 9},
      {.name = "cps{1}", .start = 7, .end = 10},
      {.name = "cps{3}", .start = 7, .end = 9}},
     NULL,
     async_more,
     25600},
    /* a, i, b (holding ars), c, ars2 (holding d), e (holding cps{1}), cps{2}, cps{3}, as{1},
     * as{2}. d is read until collective-permute-done; cpd (e's buffer) is async-start's
     * operand {0,0}, read until async-done. */
    {"async_in_place",
     ASYNC_IN_PLACE,
     10,
     {{.name = "b", .in_place = "ars", .kind = "output", .start = 1, .end = 16},
      {.name = "c", .in_place = IN_PLACE_NONE, .start = 2, .end = 8},
      {.name = "ars2", .in_place = "d", .start = 4, .end = 12},
      {.name = "e", .in_place = "cps{1}", .start = 8, .end = 15},
      {.name = "as{1}", .kind = "output", .start = 12, .end = 16},
      {.name = "as{2}", .start = 12, .end = 15}},
     NULL,
     NULL,
     0},
    {"dynamic_update_slice_in_place",
     DUS,
     4,
     {{.name = "b", .in_place = "d,x", .kind = "output", .start = 3, .end = 6}},
     NULL,
     NULL,
     0},
    /* f32[64,128] with T(8,128) is 32768 B, f32[8,128] and s32[8,1] 4096 B, s32[] 512 B. The
     * parameters, 41472 B, live throughout; b holds f1, f2{1} and s (an output) from step 4;
     * f2{0} (4096 B) from step 6: 41472 + 32768 + 4096 = 78336 B. With f1, f2{1} and s in
     * buffers of their own the plan's peak was 111104 B. */
    {"dus_fusions_in_place",
     DUS_FUSIONS,
     6,
     {{.name = "b", .in_place = "f1,f2{1},s", .kind = "output", .start = 4, .end = 11},
      {.name = "f2{0}", .kind = "output", .start = 6, .end = 11}},
     NULL,
     NULL,
     78336},
    /* a, u, i, b, f1 (holding c, elementwise into its dying first operand), f3, f4, f5 */
    {"dus_fusions_not_in_place",
     DUS_NOT_IN_PLACE,
     8,
     {{.name = "b", .in_place = IN_PLACE_NONE, .start = 3, .end = 6},
      {.name = "f1", .in_place = "c"},
      {.name = "f3", .in_place = IN_PLACE_NONE, .start = 6, .end = 8},
      {.name = "f4", .in_place = IN_PLACE_NONE},
      {.name = "f5", .kind = "output", .start = 8, .end = 10}},
     NULL,
     NULL,
     0},
    /* v is in VMEM: left out */
    {"shardings_divide_dims_and_vmem_is_left_out",
     SHARDED,
     4,
     {{.name = "a", .dim0 = 8, .dim1 = 256},
      {.name = "t{0}", .dim0 = 16, .dim1 = 128},
      {.name = "t{1}", .dim1 = 8},
      {.name = "r", .dim0 = 8}},
     "S(1) is VMEM",
     NULL,
     0},
    {"scheduled_shapes_are_per_device",
     SCHEDULED_SHARDED,
     1,
     {{.name = "a", .dim0 = 16}},
     NULL,
     NULL,
     0},
    {"every_printer_form_is_accepted",
     PRINTER_FORMS,
     3,
     {{.name = "b", .op_name = "jit(g)/\\\"q\\\""}, {.name = "c", .kind = "output"}},
     NULL,
     NULL,
     0},
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* One case: its module imported is the model the table says, planned its peak. */
static void test_case(void **state)
{
    const struct hlo_case *k = *state;
    struct model m;

    assert_null(k->want[sizeof(k->want) / sizeof(k->want[0]) - 1].name); /* the end is there */
    import(k->text, &m);
    if (m.n != k->n)
        fail_msg("%s: %zu tensors, wanted %zu", k->title, m.n, k->n);
    assert_tensors(k->title, &m, k->want);
    if (k->warning != NULL)
        assert_warned(&m, k->warning);
    if (k->more != NULL)
        k->more(&m);
    model_free(&m);
    if (k->peak != 0)
        assert_int_equal(plan_peak(k->text, "hlo"), k->peak);
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
    expect_error("HloModule m\ne {\n  a = f32[2] parameter(0)\n}\n", ERR_INVALID, "line 5:1",
                 "expected an ENTRY computation");
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
    expect_error("not hlo", ERR_INVALID, "line 1:1", "expected \"HloModule\"");
    expect_error("HloModule m, input_output_alias={ {0}: (3, {}) }\nENTRY e {\n  ROOT a = "
                 "f32[2] parameter(0)\n}\n",
                 ERR_INVALID, "line 1:35", "input_output_alias names a parameter index");
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
        assert_true(plan_peak(text, "hlo") >= live_max);
    }
    free(text);
}

int main(void)
{
    static const struct CMUnitTest more[] = {
        cmocka_unit_test(test_errors_give_line_and_column),
        cmocka_unit_test(test_depth_and_instruction_limits_are_errors),
        cmocka_unit_test(test_generated_modules_live_from_definition_to_reads),
    };
    struct CMUnitTest tests[NCASES + sizeof(more) / sizeof(more[0])];

    /* each case a test of its own, under its title */
    for (size_t i = 0; i < NCASES; i++)
        tests[i] = (struct CMUnitTest){cases[i].title, test_case, NULL, NULL, (void *)&cases[i]};
    memcpy(tests + NCASES, more, sizeof(more));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
