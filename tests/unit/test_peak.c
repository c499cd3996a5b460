/*
 * test_peak.c - the result's "peak" section (peak.h, plan_peak.c) on hand-made inputs whose
 * answer is worked out below by hand: the step at the peak, the op there (a model's ops, an
 * HLO instruction with its op_name, a tuple element and a call's temporaries named by their
 * instruction), what the step allocates, and each breakdown (kind, first tag, layer from the
 * name, op_name scope) to the byte, with the top-N cut and the rest summed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jpath.h"
#include <json-c/json.h>

#include "planner/peak.h"
#include "planner/plan.h"

static json_object *plan_text(const char *text)
{
    struct plan_limits l;
    struct plan_opts o = {0};
    struct err e;
    char *out = NULL;
    size_t len = 0;
    json_object *doc;

    o.threads = 1;
    plan_limits_default(&l);
    if (plan_run(text, strlen(text), &o, &l, &out, &len, NULL, NULL, &e) != ERR_OK)
        fail_msg("plan_run: %s (%s)", e.msg, e.where);
    doc = json_tokener_parse(out);
    free(out);
    assert_non_null(doc);
    return doc;
}

/* Whether path names a member whose value is null. */
static bool jnull(json_object *r, const char *path)
{
    char parent[128];
    const char *dot = strrchr(path, '.');
    json_object *p, *v;

    snprintf(parent, sizeof(parent), "%.*s", (int)(dot - path), path);
    p = jget(r, parent);
    return p != NULL && json_object_object_get_ex(p, dot + 1, &v) && v == NULL;
}

/* The group at path ("peak.by_tag.top[0]") is name, with bytes in tensors (tensors < 0:
 * not checked). */
static void expect_group(json_object *r, const char *path, const char *name, int64_t bytes,
                         int64_t tensors)
{
    char key[96];

    snprintf(key, sizeof(key), "%s.name", path);
    assert_string_equal(jstr(r, key), name);
    snprintf(key, sizeof(key), "%s.bytes", path);
    assert_int_equal(jint(r, key), bytes);
    snprintf(key, sizeof(key), "%s.tensors", path);
    if (tensors >= 0)
        assert_int_equal(jint(r, key), tensors);
}

/*
 * Four ops on v4 (f32[n,128] is tile-aligned, so padded = logical; 512-byte alignment is a
 * no-op on these sizes):
 *   layers.0.w, layers.1.w  param  f32[256,128] 131072 B each, tags layer0 / layer1
 *   x                       input  f32[8,128]     4096 B
 *   loss                    output f32[8,128]     4096 B
 *   layers.0.h              act    f32[64,128]   32768 B, tags layer0, saved: [0, 2)
 *   layers.1.h              act    f32[128,128]  65536 B, tag layer1:        [1, 3)
 *   logits                  act    f32[512,128] 262144 B:                     [2, 4)
 * Live bytes per step: 0: 303104, 1: 368640, 2: 598016, 3: 532480. Step 2 is the peak
 * (nothing packs below the live bytes, and 598016 is reached), op "xent", which allocates
 * logits. By kind: activation 65536 + 262144 = 327680 (2), param 262144 (2), input 4096,
 * output 4096 (kind order breaks the tie). By first tag: layer1 = 131072 + 65536 = 196608
 * (2), layer0 = 131072 (1); x, loss, logits have none: 270336 (3). By layer the same sets
 * under "layers.1" and "layers.0".
 */
static const char *const train =
    "{\"name\":\"peak\",\"chip\":\"v4\",\"tensors\":["
    "{\"name\":\"layers.0.w\",\"shape\":[256,128],\"dtype\":\"f32\",\"kind\":\"param\","
    "\"tags\":[\"layer0\"]},"
    "{\"name\":\"layers.1.w\",\"shape\":[256,128],\"dtype\":\"f32\",\"kind\":\"param\","
    "\"tags\":[\"layer1\"]},"
    "{\"name\":\"x\",\"shape\":[8,128],\"dtype\":\"f32\",\"kind\":\"input\"},"
    "{\"name\":\"loss\",\"shape\":[8,128],\"dtype\":\"f32\",\"kind\":\"output\"},"
    "{\"name\":\"layers.0.h\",\"shape\":[64,128],\"dtype\":\"f32\",\"kind\":\"activation\","
    "\"tags\":[\"layer0\",\"saved\"]},"
    "{\"name\":\"layers.1.h\",\"shape\":[128,128],\"dtype\":\"f32\",\"kind\":\"activation\","
    "\"tags\":[\"layer1\"]},"
    "{\"name\":\"logits\",\"shape\":[512,128],\"dtype\":\"f32\",\"kind\":\"activation\"}],"
    "\"ops\":["
    "{\"name\":\"l0\",\"inputs\":[\"x\",\"layers.0.w\"],\"outputs\":[\"layers.0.h\"]},"
    "{\"name\":\"l1\",\"inputs\":[\"layers.0.h\",\"layers.1.w\"],\"outputs\":[\"layers.1.h\"]},"
    "{\"name\":\"xent\",\"inputs\":[\"layers.1.h\"],\"outputs\":[\"logits\"]},"
    "{\"name\":\"reduce\",\"inputs\":[\"logits\"],\"outputs\":[\"loss\"]}]}";

static void test_op_and_breakdowns_of_a_model_with_ops(void **state)
{
    json_object *r = plan_text(train);
    (void)state;

    assert_int_equal(jint(r, "summary.peak_bytes"), 598016);
    assert_int_equal(jint(r, "peak.step"), 2);
    assert_int_equal(jint(r, "peak.end"), 3);
    assert_int_equal(jint(r, "peak.bytes"), 598016);
    assert_int_equal(jint(r, "peak.live_bytes"), 598016);
    assert_int_equal(jint(r, "peak.gap_bytes"), 0);
    assert_int_equal(jint(r, "peak.tensors"), 6);
    assert_string_equal(jstr(r, "peak.op.name"), "xent");
    assert_string_equal(jstr(r, "peak.op.source"), "ops");
    assert_true(jnull(r, "peak.op.op_name"));
    assert_int_equal(jint(r, "peak.begins.tensors"), 1);
    assert_int_equal(jint(r, "peak.begins.bytes"), 262144);
    assert_int_equal(jint(r, "peak.begins.ids[0]"), 6);

    assert_int_equal(json_object_array_length(jget(r, "peak.by_kind")), 4);
    expect_group(r, "peak.by_kind[0]", "activation", 327680, 2);
    expect_group(r, "peak.by_kind[1]", "param", 262144, -1);
    expect_group(r, "peak.by_kind[2]", "input", 4096, -1);
    expect_group(r, "peak.by_kind[3]", "output", 4096, -1);

    assert_int_equal(jint(r, "peak.by_tag.groups"), 2);
    expect_group(r, "peak.by_tag.top[0]", "layer1", 196608, 2);
    expect_group(r, "peak.by_tag.top[1]", "layer0", 131072, -1);
    assert_int_equal(jint(r, "peak.by_tag.rest.groups"), 0);
    assert_int_equal(jint(r, "peak.by_tag.rest.bytes"), 0);
    assert_int_equal(jint(r, "peak.by_tag.none.bytes"), 270336);
    assert_int_equal(jint(r, "peak.by_tag.none.tensors"), 3);

    expect_group(r, "peak.by_layer.top[0]", "layers.1", 196608, -1);
    expect_group(r, "peak.by_layer.top[1]", "layers.0", 131072, -1);
    assert_int_equal(jint(r, "peak.by_layer.none.bytes"), 270336);
    /* no op_name anywhere */
    assert_int_equal(jint(r, "peak.by_scope.groups"), 0);
    assert_int_equal(jint(r, "peak.by_scope.none.bytes"), 598016);
    assert_int_equal(jint(r, "peak.by_scope.none.tensors"), 6);
    json_object_put(r);
}

/*
 * Twelve tensors live throughout (no ops: one step), "block_k.w" of f32[8(k+1),128] =
 * 4096 (k+1) bytes, tag "gk". The top ten groups are k = 11 .. 2; the rest are g1 and g0:
 * 2 groups, 8192 + 4096 = 12288 bytes. Every tensor begins at step 0: 12 of them,
 * 4096 x 78 = 319488 bytes, the ten largest listed (ids 11 .. 2). No ops and not a
 * program: no op.
 */
static void test_top_groups_and_the_rest(void **state)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof(text), "{\"chip\":\"v4\",\"tensors\":[");
    json_object *r;
    (void)state;

    for (int k = 0; k < 12; k++)
        n += (size_t)snprintf(text + n, sizeof(text) - n,
                              "%s{\"name\":\"block_%d.w\",\"shape\":[%d,128],\"dtype\":\"f32\","
                              "\"kind\":\"param\",\"tags\":[\"g%d\"]}",
                              k ? "," : "", k, 8 * (k + 1), k);
    snprintf(text + n, sizeof(text) - n, "]}");
    r = plan_text(text);
    assert_int_equal(jint(r, "peak.step"), 0);
    assert_int_equal(jint(r, "peak.live_bytes"), 319488);
    assert_true(jnull(r, "peak.op"));
    assert_int_equal(jint(r, "peak.begins.tensors"), 12);
    assert_int_equal(jint(r, "peak.begins.bytes"), 319488);
    assert_int_equal(json_object_array_length(jget(r, "peak.begins.ids")), PEAK_TOP);
    assert_int_equal(jint(r, "peak.begins.ids[0]"), 11);
    assert_int_equal(jint(r, "peak.begins.ids[9]"), 2);
    assert_int_equal(jint(r, "peak.by_tag.groups"), 12);
    assert_int_equal(json_object_array_length(jget(r, "peak.by_tag.top")), PEAK_TOP);
    expect_group(r, "peak.by_tag.top[0]", "g11", 49152, -1);
    expect_group(r, "peak.by_tag.top[9]", "g2", 12288, -1);
    assert_int_equal(jint(r, "peak.by_tag.rest.groups"), 2);
    assert_int_equal(jint(r, "peak.by_tag.rest.bytes"), 12288);
    assert_int_equal(jint(r, "peak.by_tag.rest.tensors"), 2);
    assert_int_equal(jint(r, "peak.by_tag.none.tensors"), 0);
    assert_string_equal(jstr(r, "peak.by_layer.top[0].name"), "block_11");
    assert_int_equal(jint(r, "peak.by_layer.rest.bytes"), 12288);
    json_object_put(r);
}

/* The layer of a name: through the first component that is a number or layer/block and a
 * number. Each tensor f32[8,128] (4096 B) under its own name; the groups, by name. */
static void test_layer_names(void **state)
{
    static const struct {
        const char *name, *layer; /* NULL: none */
    } cases[] = {
        {"layers.3.attn.wq", "layers.3"},
        {"model.layers.0.mlp.weight", "model.layers.0"},
        {"Layer_7/x", "Layer_7"},
        {"enc/block12/y", "enc/block12"},
        {"h.10", "h.10"},
        {"mlp.fc1.weight", NULL},
        {"layer", NULL},
        {"layerx3.w", NULL},
        {"blocks_2.w", NULL},
        {"7", NULL},
    };
    const size_t ncases = sizeof(cases) / sizeof(cases[0]);
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof(text), "{\"chip\":\"v4\",\"tensors\":[");
    json_object *r;
    size_t named = 0;
    (void)state;

    for (size_t k = 0; k < ncases; k++) {
        n += (size_t)snprintf(text + n, sizeof(text) - n,
                              "%s{\"name\":\"%s\",\"shape\":[8,128],\"dtype\":\"f32\"}",
                              k ? "," : "", cases[k].name);
        named += cases[k].layer != NULL;
    }
    snprintf(text + n, sizeof(text) - n, "]}");
    r = plan_text(text);
    assert_int_equal(jint(r, "peak.by_layer.groups"), named);
    assert_int_equal(jint(r, "peak.by_layer.none.tensors"), ncases - named);
    for (size_t k = 0; k < ncases; k++) {
        bool found = false;
        if (cases[k].layer == NULL)
            continue;
        for (size_t g = 0; g < named; g++) {
            char path[64];
            snprintf(path, sizeof(path), "peak.by_layer.top[%zu].name", g);
            found |= strcmp(jstr(r, path), cases[k].layer) == 0;
        }
        if (!found)
            fail_msg("%s: no layer group %s", cases[k].name, cases[k].layer);
    }
    json_object_put(r);
}

/*
 * An HLO program: p0 (f32[256,128], 131072 B, no metadata) for the whole program; fusion.1
 * = add(p0, p0) at step 1 (131072 B, jit(f)/layer_0/add), dies at the concatenate;
 * concatenate.2 at step 2 (f32[512,128], 262144 B, jit(f)/layer_1/concat); c = its slice at
 * step 3, the output (f32[128,128], 65536 B). Live: step 2 holds 131072 + 131072 + 262144 =
 * 524288, step 3 131072 + 262144 + 65536 = 458752: the peak is step 2, instruction
 * concatenate.2 with its op_name. Scopes: jit(f)/layer_1
 * 262144, jit(f)/layer_0 131072; p0 has no op_name (131072, 1 tensor).
 */
static void test_instruction_and_scopes_of_an_hlo_program(void **state)
{
    const char *hlo =
        "HloModule m, is_scheduled=true\n\n"
        "ENTRY main {\n"
        "  p0 = f32[256,128]{1,0:T(8,128)} parameter(0)\n"
        "  fusion.1 = f32[256,128]{1,0:T(8,128)} add(p0, p0), "
        "metadata={op_name=\"jit(f)/layer_0/add\"}\n"
        "  concatenate.2 = f32[512,128]{1,0:T(8,128)} concatenate(fusion.1, fusion.1), "
        "dimensions={0}, "
        "metadata={op_name=\"jit(f)/layer_1/concat\"}\n"
        "  ROOT c = f32[128,128]{1,0:T(8,128)} slice(concatenate.2), slice={[0:128], [0:128]}, "
        "metadata={op_name=\"jit(f)/layer_1/slice\"}\n"
        "}\n";
    json_object *r = plan_text(hlo);
    (void)state;

    assert_int_equal(jint(r, "peak.step"), 2);
    assert_int_equal(jint(r, "peak.live_bytes"), 524288);
    assert_string_equal(jstr(r, "peak.op.name"), "concatenate.2");
    /* instruction names (fusion.1) are no layers */
    assert_int_equal(jint(r, "peak.by_layer.groups"), 0);
    assert_string_equal(jstr(r, "peak.op.source"), "instruction");
    assert_string_equal(jstr(r, "peak.op.op_name"), "jit(f)/layer_1/concat");
    assert_int_equal(jint(r, "peak.by_scope.groups"), 2);
    expect_group(r, "peak.by_scope.top[0]", "jit(f)/layer_1", 262144, -1);
    expect_group(r, "peak.by_scope.top[1]", "jit(f)/layer_0", 131072, -1);
    assert_int_equal(jint(r, "peak.by_scope.none.bytes"), 131072);
    assert_int_equal(jint(r, "peak.by_scope.none.tensors"), 1);
    json_object_put(r);
}

/*
 * tests/data/hlo/while.hlo's peak is the while's step (3): its buffers w{0}, w{1} and
 * w/temps begin there, and the op is the instruction "w" (the tuple index and "/temps"
 * dropped). Begins, largest first: w/temps (4608), w{1} (4096), w{0} (512) = 9216.
 */
static void test_tuple_and_call_buffers_name_their_instruction(void **state)
{
    char hlo[4096];
    FILE *f = fopen("tests/data/hlo/while.hlo", "rb");
    size_t got;
    json_object *r;
    (void)state;

    assert_non_null(f); /* tests run from the repository root (tests/run.sh) */
    got = fread(hlo, 1, sizeof(hlo) - 1, f);
    fclose(f);
    hlo[got] = '\0';
    r = plan_text(hlo);

    assert_int_equal(jint(r, "peak.step"), 3);
    assert_string_equal(jstr(r, "peak.op.name"), "w");
    assert_string_equal(jstr(r, "peak.op.source"), "instruction");
    assert_int_equal(jint(r, "peak.begins.tensors"), 3);
    assert_int_equal(jint(r, "peak.begins.bytes"), 9216);
    assert_string_equal(jstr(r, "tensors[4].name"), "w/temps");
    assert_int_equal(jint(r, "peak.begins.ids[0]"), 4);
    assert_int_equal(jint(r, "peak.begins.ids[1]"), 3);
    assert_int_equal(jint(r, "peak.begins.ids[2]"), 2);
    json_object_put(r);
}

/* Nothing to pack: no peak. */
static void test_no_buffers_no_peak(void **state)
{
    json_object *r = plan_text("{\"chip\":\"v4\",\"tensors\":[]}"), *v = r;
    (void)state;

    assert_true(json_object_object_get_ex(r, "peak", &v));
    assert_null(v);
    json_object_put(r);
}

/* peak_explain's own errors: a tensor out of range, live bytes past the peak. */
static void test_bad_live_sets_are_refused(void **state)
{
    struct model m = {0};
    struct model_tensor t[1] = {{.name = "t", .kind = TENSOR_TEMP}};
    struct peak_live bad_id = {1, 10}, too_big = {0, 11};
    struct peak_explain p;
    struct err e;
    (void)state;

    m.n = 1;
    m.tensors = t;
    assert_int_equal(peak_explain(&m, false, 0, 1, 10, &bad_id, 1, &p, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "live[0]: no such tensor"));
    assert_int_equal(peak_explain(&m, false, 0, 1, 10, &too_big, 1, &p, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "pass the peak"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_op_and_breakdowns_of_a_model_with_ops),
        cmocka_unit_test(test_top_groups_and_the_rest),
        cmocka_unit_test(test_layer_names),
        cmocka_unit_test(test_instruction_and_scopes_of_an_hlo_program),
        cmocka_unit_test(test_tuple_and_call_buffers_name_their_instruction),
        cmocka_unit_test(test_no_buffers_no_peak),
        cmocka_unit_test(test_bad_live_sets_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
