/*
 * test_hlo_program.c - what an XLA program is (import/hlo_program.c): its stage (before or
 * after XLA's optimization passes), whether it is partitioned already (then its shardings
 * never divide its shapes again), and its buffers in host memory and VMEM, which are
 * reported apart and never added to HBM. Hand-made modules with bytes worked out by hand on
 * v4 (f32[N] takes T(1024) tiles of 4096 B; f32[R,C] T(8,128)).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/hlo_model.h"
#include "planner/plan.h"
#include "planner/stablehlo.h"

#include "model_find.h"

static const struct model_limits limits = {64u << 20, 32, 1000000, 1000000, 0};

static void import(const char *text, struct model *m)
{
    struct err e;
    err_clear(&e);
    if (hlo_import(text, strlen(text), NULL, &limits, m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
}

/* The module in its written order (hlo_model_opts.text_order): the steps the figures below
 * are worked out on; the compiler's estimate may reorder them. */
static void import_in_order(const char *text, struct model *m)
{
    struct hlo_model_opts o = {.text_order = true};
    struct err e;
    err_clear(&e);
    if (hlo_import_opts(text, strlen(text), NULL, &limits, &o, m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
}

static json_object *plan_v4(const char *text)
{
    struct plan_opts o = {.strategies = "xla-default", .chip = "v4", .alignment = 1};
    return plan_doc(text, strlen(text), &o, NULL);
}

static bool evidence_says(const char *const *lines, size_t n, const char *what)
{
    for (size_t k = 0; k < n; k++)
        if (strstr(lines[k], what) != NULL)
            return true;
    return false;
}

/* A Llama-3.1-70B train step's MLP weight after SPMD partitioning: the entry is main.5_spmd,
 * not scheduled, and its sharding (64 x 2 devices, the last replicated) still written on the
 * per-device shape f32[28672,80,128]: 28672 x 80 x 128 x 4 = 1174405120 B, never divided
 * again (dividing gave f32[28672,80,2], 18350080 logical bytes). */
#define LLAMA(ENTRY)                                                                               \
    "HloModule jit_train_step, num_partitions=128, "                                               \
    "entry_computation_layout={(f32[28672,80,128]{2,1,0})->f32[28672,80,128]{2,1,0}}\n\n"          \
    "ENTRY %" ENTRY " (param: f32[28672,80,128]) -> f32[28672,80,128] {\n"                         \
    "  %param = f32[28672,80,128]{2,1,0} parameter(0), sharding={devices=[1,1,64,2]<=[128] "       \
    "last_tile_dim_replicate}\n"                                                                   \
    "  ROOT %copy.1 = f32[28672,80,128]{2,1,0} copy(f32[28672,80,128]{2,1,0} %param), "            \
    "sharding={devices=[1,1,64,2]<=[128] last_tile_dim_replicate}\n"                               \
    "}\n"
static const char LLAMA_SPMD[] = LLAMA("main.5_spmd");
static const char LLAMA_GLOBAL[] = LLAMA("main.5"); /* the same module before partitioning */

static void test_spmd_entry_is_never_partitioned_again(void **state)
{
    struct model m;
    json_object *doc;
    (void)state;

    import(LLAMA_SPMD, &m);
    assert_int_equal(m.program.stage, MODEL_STAGE_BEFORE);
    assert_true(m.program.partitioned);
    assert_true(evidence_says(m.program.partition_evidence, m.program.npartition_evidence,
                              "main.5_spmd is named by XLA's SPMD partitioner"));
    assert_int_equal(tensor(&m, "param")->shape.dims[2], 128);
    model_free(&m);

    doc = plan_v4(LLAMA_SPMD);
    assert_string_equal(jstr(doc, "program.stage"), "before-optimization");
    assert_true(jbool(doc, "program.partitioned"));
    assert_int_equal(jint(doc, "tensors[0].padded_bytes"), 1174405120);
    assert_int_equal(jint(doc, "tensors[0].logical_bytes"), 1174405120);
    assert_int_equal(jint(doc, "summary.peak_bytes"), 2 * 1174405120LL);
    json_object_put(doc);

    /* The same module before partitioning (entry main.5): its sharding divides dim 2 by 64. */
    import(LLAMA_GLOBAL, &m);
    assert_false(m.program.partitioned);
    assert_int_equal(tensor(&m, "param")->shape.dims[2], 2);
    model_free(&m);
    doc = plan_v4(LLAMA_GLOBAL);
    assert_int_equal(jint(doc, "tensors[0].logical_bytes"), 28672LL * 80 * 2 * 4);
    json_object_put(doc);
}

/* Collectives outside a shard_map region exchange per-device shapes: the module is
 * partitioned. Inside one (after SPMDFullToShardShape) they say nothing of the rest. */
static void test_collectives_mean_per_device_shapes(void **state)
{
    static const char partitioned[] =
        "HloModule m, num_partitions=2\n"
        "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
        "ENTRY e {\n"
        "  a = f32[16,256]{1,0} parameter(0), sharding={devices=[2,1]0,1}\n"
        "  ROOT r = f32[16,256]{1,0} all-reduce(a), replica_groups={{0,1}}, to_apply=add, "
        "sharding={devices=[2,1]0,1}\n"
        "}\n";
    static const char manual[] =
        "HloModule m, num_partitions=2\n"
        "add { x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y) }\n"
        "ENTRY e {\n"
        "  a = f32[16,256]{1,0} parameter(0), sharding={devices=[2,1]0,1}\n"
        "  l = f32[8,256]{1,0} custom-call(a), custom_call_target=\"SPMDFullToShardShape\", "
        "sharding={manual}\n"
        "  s = f32[8,256]{1,0} all-reduce(l), replica_groups={{0,1}}, to_apply=add, "
        "sharding={manual}\n"
        "  ROOT g = f32[16,256]{1,0} custom-call(s), custom_call_target=\"SPMDShardToFullShape\", "
        "sharding={devices=[2,1]0,1}\n"
        "}\n";
    struct model m;
    (void)state;

    import(partitioned, &m);
    assert_true(m.program.partitioned);
    assert_true(evidence_says(m.program.partition_evidence, m.program.npartition_evidence,
                              "1 collectives (the first, r, line 7) outside any shard_map"));
    assert_int_equal(tensor(&m, "a")->shape.dims[0], 16);
    assert_int_equal(tensor(&m, "r")->shape.dims[0], 16);
    model_free(&m);

    import(manual, &m);
    assert_false(m.program.partitioned);
    assert_int_equal(tensor(&m, "a")->shape.dims[0], 8);
    assert_int_equal(tensor(&m, "l")->shape.dims[0], 8); /* {manual}: as written */
    assert_int_equal(tensor(&m, "g")->shape.dims[0], 8);
    model_free(&m);
}

/* Each sign of XLA's optimization passes makes a module after-optimization (and so
 * partitioned); a module with none is before. */
static void test_stage_signs(void **state)
{
    static const struct {
        const char *text, *evidence;
        enum model_stage stage;
    } cases[] = {
        {"HloModule m\nENTRY e {\n  a = f32[16,256]{1,0} parameter(0), "
         "sharding={devices=[2,1]0,1}\n  ROOT n = f32[16,256]{1,0} negate(a)\n}\n",
         "no schedule (is_scheduled), no fusion and no tiled layout", MODEL_STAGE_BEFORE},
        {"HloModule m, is_scheduled=true\nENTRY e {\n  a = f32[16,256]{1,0} parameter(0), "
         "sharding={devices=[2,1]0,1}\n  ROOT n = f32[16,256]{1,0} negate(a)\n}\n",
         "is_scheduled=true", MODEL_STAGE_AFTER},
        {"HloModule m\nf { p = f32[16,256]{1,0} parameter(0)\n ROOT n = f32[16,256]{1,0} "
         "negate(p) }\nENTRY e {\n  a = f32[16,256]{1,0} parameter(0), "
         "sharding={devices=[2,1]0,1}\n  ROOT n = f32[16,256]{1,0} fusion(a), kind=kLoop, "
         "calls=f\n}\n",
         "1 fusion instructions", MODEL_STAGE_AFTER},
        {"HloModule m\nENTRY e {\n  a = f32[16,256]{1,0:T(8,128)} parameter(0), "
         "sharding={devices=[2,1]0,1}\n  ROOT n = f32[16,256]{1,0:T(8,128)} negate(a)\n}\n",
         "2 arrays with tiled layouts", MODEL_STAGE_AFTER},
        {"HloModule m\nENTRY e {\n  a = f32[16,256]{1,0} parameter(0), "
         "sharding={devices=[2,1]0,1}\n  v = f32[16,256]{1,0:S(1)} copy(a)\n  ROOT n = "
         "f32[16,256]{1,0} negate(v)\n}\n",
         "1 arrays in VMEM (S(1))", MODEL_STAGE_AFTER},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        struct model m;
        import(cases[k].text, &m);
        if (m.program.stage != cases[k].stage ||
            !evidence_says(m.program.stage_evidence, m.program.nstage_evidence, cases[k].evidence))
            fail_msg("case %zu: stage %d, evidence \"%s\"", k, (int)m.program.stage,
                     m.program.stage_evidence[0]);
        /* partitioned exactly when optimized: a's dim 0 is 16 per device, else 16 / 2 */
        assert_int_equal(m.program.partitioned, cases[k].stage == MODEL_STAGE_AFTER);
        assert_int_equal(tensor(&m, "a")->shape.dims[0],
                         cases[k].stage == MODEL_STAGE_AFTER ? 16 : 8);
        model_free(&m);
    }
}

/* Host memory from the entry layout's S(5), MoveToHost and annotate_device_placement, and
 * back to HBM through MoveToDevice. Steps in the written order: 0 p0, 1 p1, 2 mth, 3 mtd,
 * 4 adp, 5 the ROOT.
 * Host: p0 f32[1024] (4096 B, an input: the whole program), mth f32[256,128] (131072 B,
 * read by mtd: [2, 4)), adp (131072 B, read by none: [4, 5)): 266240 B, peak 4096 + 131072
 * at step 2 (and again at 4). HBM: p1 and mtd, 131072 B each, both live at the end. */
static const char OFFLOAD[] =
    "HloModule offload, entry_computation_layout={(f32[1024]{0:S(5)}, "
    "f32[256,128]{1,0})->(f32[256,128]{1,0}, f32[1024]{0:S(5)})}\n"
    "ENTRY e {\n"
    "  p0 = f32[1024]{0} parameter(0)\n"
    "  p1 = f32[256,128]{1,0} parameter(1)\n"
    "  mth = f32[256,128]{1,0} custom-call(p1), custom_call_target=\"MoveToHost\"\n"
    "  mtd = f32[256,128]{1,0} custom-call(mth), custom_call_target=\"MoveToDevice\"\n"
    "  adp = f32[256,128]{1,0} custom-call(p1), custom_call_target=\"annotate_device_placement\", "
    "frontend_attributes={_xla_buffer_placement=\"pinned_host\"}\n"
    "  ROOT t = (f32[256,128]{1,0}, f32[1024]{0}) tuple(mtd, p0)\n"
    "}\n";

static void test_host_memory_is_reported_apart(void **state)
{
    struct model m;
    json_object *doc;
    (void)state;

    import_in_order(OFFLOAD, &m);
    assert_int_equal(m.n, 2);
    (void)tensor(&m, "p1");
    assert_int_equal(tensor(&m, "mtd")->kind, TENSOR_OUTPUT);
    assert_int_equal(m.program.spaces[MODEL_SPACE_HOST].buffers, 3);
    assert_warned(&m, "3 HLO buffers in host (S(5)) memory (266240 bytes, peak 135168 bytes) "
                      "are planned apart: never added to HBM");
    assert_int_equal(m.program.spaces[MODEL_SPACE_VMEM].buffers, 0);
    model_free(&m);

    doc = plan_v4(OFFLOAD);
    assert_string_equal(jstr(doc, "program.memory_spaces[0].space"), "host");
    assert_int_equal(jint(doc, "program.memory_spaces[0].memory_space"), 5);
    assert_int_equal(jint(doc, "program.memory_spaces[0].buffers"), 3);
    assert_int_equal(jint(doc, "program.memory_spaces[0].bytes"), 266240);
    /* the compiler's order (its scheduler weighs HBM bytes only) defines adp before mtd
     * reads mth: all three host buffers are live together */
    assert_int_equal(jint(doc, "program.memory_spaces[0].peak_bytes"), 266240);
    assert_int_equal(jint(doc, "summary.padded_bytes"), 2 * 131072); /* HBM only */
    assert_int_equal(jint(doc, "summary.peak_bytes"), 2 * 131072);
    json_object_put(doc);
}

/* VMEM buffers of an optimized module: their own space. Steps 0 a, 1 v, 2 w, 3 n; v
 * (8192 B on v4, f32[8,256]) is read by w and n: [1, 4); w by n: [2, 4): peak 16384. */
static void test_vmem_is_its_own_space(void **state)
{
    static const char text[] = "HloModule m, is_scheduled=true\n"
                               "ENTRY e {\n"
                               "  a = f32[8,256]{1,0:T(8,128)} parameter(0)\n"
                               "  v = f32[8,256]{1,0:T(8,128)S(1)} copy(a)\n"
                               "  w = f32[8,256]{1,0:T(8,128)S(1)} negate(v)\n"
                               "  ROOT n = f32[8,256]{1,0:T(8,128)} add(v, w)\n"
                               "}\n";
    struct model m;
    (void)state;

    import(text, &m);
    assert_int_equal(m.n, 2);
    assert_int_equal(m.program.spaces[MODEL_SPACE_VMEM].buffers, 2);
    assert_int_equal(m.program.spaces[MODEL_SPACE_VMEM].bytes, 16384);
    assert_int_equal(m.program.spaces[MODEL_SPACE_VMEM].peak_bytes, 16384);
    assert_int_equal(m.program.spaces[MODEL_SPACE_HOST].buffers, 0);
    assert_warned(&m, "2 HLO buffers in VMEM (S(1)) memory (16384 bytes, peak 16384 bytes)");
    model_free(&m);
}

/* jax.export's annotate_data_placement test record (jax-ml/jax
 * export_back_compat_test_data/annotate_data_placement.py, 2025-04-07, CUDA, GSPMD),
 * verbatim: %arg1 has mhlo.memory_kind = "pinned_host" and the result goes through
 * annotate_device_placement to pinned_host. f32[1] takes one T(256) tile on v4: 1024 B. */
static const char PLACEMENT[] =
    "#loc1 = loc(\"x\")\n#loc2 = loc(\"y\")\n"
    "module @jit_func attributes {jax.uses_shape_polymorphism = false, mhlo.num_partitions = 1 : "
    "i32, mhlo.num_replicas = 1 : i32} {\n"
    "  func.func public @main(%arg0: tensor<1xf32> {mhlo.memory_kind = \"device\", mhlo.sharding = "
    "\"{maximal device=0}\"} loc(\"x\"), %arg1: tensor<1xf32> {mhlo.memory_kind = \"pinned_host\", "
    "mhlo.sharding = \"{maximal device=0}\"} loc(\"y\")) -> (tensor<1xf32> {jax.result_info = "
    "\"result\", mhlo.memory_kind = \"pinned_host\", mhlo.sharding = \"{maximal device=0}\"}) {\n"
    "    %0 = stablehlo.add %arg0, %arg1 : tensor<1xf32> loc(#loc4)\n"
    "    %1 = stablehlo.custom_call @annotate_device_placement(%0) {has_side_effect = true, "
    "mhlo.frontend_attributes = {_xla_buffer_placement = \"pinned_host\"}} : (tensor<1xf32>) -> "
    "tensor<1xf32> loc(#loc)\n"
    "    return %1 : tensor<1xf32> loc(#loc)\n"
    "  } loc(#loc)\n"
    "} loc(#loc)\n"
    "#loc = loc(unknown)\n"
    "#loc3 = loc(\"third_party/py/jax/tests/export_back_compat_test.py\":878:13)\n"
    "#loc4 = loc(\"jit(func)/jit(main)/add\"(#loc3))\n";

static void test_stablehlo_memory_kinds(void **state)
{
    json_object *doc;
    (void)state;

    doc = plan_v4(PLACEMENT);
    assert_string_equal(jstr(doc, "model.source_format"), "stablehlo");
    assert_string_equal(jstr(doc, "program.stage"), "before-optimization");
    assert_string_equal(jstr(doc, "program.stage_evidence[0]"),
                        "StableHLO: what JAX lowers, before XLA optimizes it");
    assert_false(jbool(doc, "program.partitioned"));
    assert_int_equal(jint(doc, "program.memory_spaces[0].buffers"), 2); /* arg1, the result */
    assert_int_equal(jint(doc, "program.memory_spaces[0].bytes"), 2048);
    assert_int_equal(jint(doc, "program.memory_spaces[0].peak_bytes"), 2048);
    assert_int_equal(jint(doc, "summary.tensors"), 2); /* arg0 and the add */
    json_object_put(doc);
}

/* Inputs that are no XLA program have no "program" section. */
static void test_other_inputs_have_no_program(void **state)
{
    static const char model[] = "{\"tensors\": [{\"name\": \"w\", \"dtype\": \"f32\", "
                                "\"shape\": [8, 128], \"kind\": \"param\"}]}";
    json_object *doc;
    (void)state;

    doc = plan_v4(model);
    assert_null(jget(doc, "program"));
    json_object_put(doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spmd_entry_is_never_partitioned_again),
        cmocka_unit_test(test_collectives_mean_per_device_shapes),
        cmocka_unit_test(test_stage_signs),
        cmocka_unit_test(test_host_memory_is_reported_apart),
        cmocka_unit_test(test_vmem_is_its_own_space),
        cmocka_unit_test(test_stablehlo_memory_kinds),
        cmocka_unit_test(test_other_inputs_have_no_program),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
