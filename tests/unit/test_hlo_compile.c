/*
 * test_hlo_compile.c - a before-optimization program read as XLA will compile it (hlo_model.h,
 * server/planner/RESULT.md#the-compile-estimate): the values each fusion rule fuses away, the
 * scheduler XLA's DefaultMemoryScheduler would keep, the compiler's layout of size-1 dims, and
 * both readings' peaks, every figure worked out by hand on the v4 rules (chip NULL).
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

#include "model_find.h"

static const struct model_limits limits = {64u << 20, 32, 1000000, 1000000, 0};

#define MIB (UINT64_C(1) << 20)

static void import(const char *text, const struct hlo_model_opts *o, struct model *m)
{
    struct err e;
    err_clear(&e);
    if (hlo_import_opts(text, strlen(text), NULL, &limits, o, m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
}

static bool has(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return true;
    return false;
}

/* Every fusion rule once. f32[1024,1024] is 4 MiB (T(8,128), no padding), f32[1024] 4 KiB
 * (T(1024)), the f32 scalar 1 KiB (T(256)).
 * - loop: a into b, b into c (elementwise), bc (a broadcast) into e;
 * - input: c (exponential, one user) and the scalar zero into the reduce r;
 * - output: the dot d into its one elementwise user e.
 * Kept: p0, p1, r, e and the ROOT tuple: 5 steps. r and e are outputs; the peak is
 * p0 + p1 + e + r = 12 MiB + 4 KiB. As written: 11 steps; b and c are written into a, e into d
 * (in place); at e (step 9) p0, p1, d, bc, r and the constant zero are live: 16 MiB + 4 KiB +
 * 1 KiB. */
static const char FUSE[] = "HloModule fuse\n"
                           "add_f32 {\n"
                           "  x = f32[] parameter(0)\n"
                           "  y = f32[] parameter(1)\n"
                           "  ROOT s = f32[] add(x, y)\n"
                           "}\n"
                           "ENTRY main {\n"
                           "  p0 = f32[1024,1024] parameter(0)\n"
                           "  p1 = f32[1024,1024] parameter(1)\n"
                           "  a = f32[1024,1024] add(p0, p1)\n"
                           "  b = f32[1024,1024] multiply(a, a)\n"
                           "  c = f32[1024,1024] exponential(b)\n"
                           "  zero = f32[] constant(0)\n"
                           "  r = f32[1024] reduce(c, zero), dimensions={1}, to_apply=add_f32\n"
                           "  d = f32[1024,1024] dot(p0, p1), lhs_contracting_dims={1}, "
                           "rhs_contracting_dims={0}\n"
                           "  bc = f32[1024,1024] broadcast(r), dimensions={0}\n"
                           "  e = f32[1024,1024] add(d, bc)\n"
                           "  ROOT t = (f32[1024,1024], f32[1024]) tuple(e, r)\n"
                           "}\n";

static void test_each_fusion_rule_counts(void **state)
{
    struct model m;
    (void)state;
    import(FUSE, NULL, &m);
    assert_true(m.compile.present);
    assert_false(m.compile.written_chosen);
    assert_int_equal(m.compile.fused_loop, 3);
    assert_int_equal(m.compile.fused_input, 2);
    assert_int_equal(m.compile.fused_output, 1);
    assert_int_equal(m.n, 4);
    for (const char *const *f = (const char *const[]){"a", "b", "c", "zero", "d", "bc", NULL};
         *f != NULL; f++)
        assert_false(has(&m, *f));
    assert_int_equal(m.compile.estimate.buffers, 4);
    assert_int_equal(m.compile.estimate.steps, 5);
    assert_int_equal(m.compile.estimate.peak_bytes, 12 * MIB + 4096);
    /* r reads p0 and p1 through a, b and c: at its own step, 2 in the list order (the
     * parameters, then r, then e, then the tuple) */
    assert_live(tensor(&m, "p0"), 0, 5);
    assert_live(tensor(&m, "r"), 2, 5);
    assert_live(tensor(&m, "e"), 3, 5);
    assert_int_equal(m.compile.written.steps, 11);
    assert_int_equal(m.compile.written.buffers, 7);
    assert_int_equal(m.compile.written.peak_bytes, 16 * MIB + 4096 + 1024);
    model_free(&m);
}

/* Duplication: e (exponential, expensive) read by two users is not copied into both, so it
 * keeps its buffer; m (multiply, cheap) read by two is, so it holds none. */
static const char DUP[] = "HloModule dup\n"
                          "ENTRY main {\n"
                          "  p = f32[1024,1024] parameter(0)\n"
                          "  e = f32[1024,1024] exponential(p)\n"
                          "  m = f32[1024,1024] multiply(p, p)\n"
                          "  n1 = f32[1024,1024] negate(e)\n"
                          "  n2 = f32[1024,1024] abs(e)\n"
                          "  n3 = f32[1024,1024] negate(m)\n"
                          "  n4 = f32[1024,1024] abs(m)\n"
                          "  ROOT t = (f32[1024,1024], f32[1024,1024], f32[1024,1024], "
                          "f32[1024,1024]) tuple(n1, n2, n3, n4)\n"
                          "}\n";

static void test_expensive_producers_are_not_duplicated(void **state)
{
    struct model m;
    (void)state;
    import(DUP, NULL, &m);
    assert_int_equal(m.compile.fused_loop, 1);
    assert_int_equal(m.compile.fused_input + m.compile.fused_output, 0);
    assert_true(has(&m, "e"));
    assert_false(has(&m, "m"));
    /* p, e and the four outputs, one written into e in place where e dies: the list order
     * runs n2 before n1 (a tie goes to the user added last), so n1 */
    assert_int_equal(m.n, 5);
    assert_string_equal(tensor(&m, "e")->in_place, "n1");
    model_free(&m);
}

/* A loop fusion writes into a buffer its fused producers read, when that value dies there
 * and has the fusion's shape (CanShareOperandBufferWithUser for a kLoop fusion): n is fused
 * into m, which reads a through it; a dies at m, so m is written into a. */
static const char INPLACE[] = "HloModule inplace\n"
                              "ENTRY main {\n"
                              "  p = f32[1024,1024] parameter(0)\n"
                              "  a = f32[1024,1024] custom-call(p), custom_call_target=\"f\"\n"
                              "  n = f32[1024,1024] negate(a)\n"
                              "  m = f32[1024,1024] multiply(n, n)\n"
                              "  ROOT out = f32[8] custom-call(m), custom_call_target=\"g\"\n"
                              "}\n";

static void test_a_loop_fusion_writes_into_what_it_fused_reads(void **state)
{
    struct model m;
    (void)state;
    import(INPLACE, NULL, &m);
    assert_int_equal(m.compile.fused_loop, 1);
    assert_int_equal(m.n, 3);
    assert_string_equal(tensor(&m, "a")->in_place, "m");
    assert_live(tensor(&m, "a"), 1, 4);
    /* p whole, a and m one buffer: 8 MiB, and the output's 1 KiB at the end */
    assert_int_equal(m.compile.estimate.peak_bytes, 8 * MIB + 1024);
    model_free(&m);
}

/* The scheduler's choice. a and b (16 KiB each, f32[4096] T(1024)) are custom calls, not
 * fusible; ra and rb (1 KiB, f32[8] T(256)) read them. Parameters count nothing in the
 * schedulers' measure (as in XLA's):
 * - text p, a, b, ra, rb, t: a + b + ra live at ra: 33 KiB;
 * - list: b is ready with a, same rank, added later: it wins the tie; then rb frees b
 *   (16 KiB - 1 KiB), then a, ra: at ra, rb + a + ra = 18 KiB;
 * - DFS from t: ra and rb tie on users and bytes, "ra" < "rb": p, a, ra, b, rb, t: 18 KiB;
 * - post-order from t, operands in order: the same 18 KiB.
 * List, DFS and post-order tie: list is kept. The entry's peak in the list order (p's 4 KiB
 * live throughout): p + rb + a + ra = 22 KiB; in the text order p + a + b + ra = 37 KiB. */
static const char SCHED[] = "HloModule sched\n"
                            "ENTRY main {\n"
                            "  p = f32[1024] parameter(0)\n"
                            "  a = f32[4096] custom-call(p), custom_call_target=\"big\"\n"
                            "  b = f32[4096] custom-call(p), custom_call_target=\"big\"\n"
                            "  ra = f32[8] custom-call(a), custom_call_target=\"small\"\n"
                            "  rb = f32[8] custom-call(b), custom_call_target=\"small\"\n"
                            "  ROOT t = (f32[8], f32[8]) tuple(ra, rb)\n"
                            "}\n";

static void test_the_scheduler_keeps_the_least_peak(void **state)
{
    struct model m;
    struct hlo_model_opts text = {.text_order = true};
    (void)state;
    import(SCHED, NULL, &m);
    assert_int_equal(m.compile.schedule, MODEL_SCHED_LIST);
    assert_int_equal(m.compile.schedule_peak[MODEL_SCHED_TEXT], 33 * 1024);
    assert_int_equal(m.compile.schedule_peak[MODEL_SCHED_LIST], 18 * 1024);
    assert_int_equal(m.compile.schedule_peak[MODEL_SCHED_DFS], 18 * 1024);
    assert_int_equal(m.compile.schedule_peak[MODEL_SCHED_POST], 18 * 1024);
    assert_live(tensor(&m, "b"), 1, 3);
    assert_live(tensor(&m, "a"), 3, 5);
    assert_int_equal(m.compile.estimate.peak_bytes, 22 * 1024);
    assert_int_equal(m.compile.written.peak_bytes, 37 * 1024);
    model_free(&m);
    /* --order text: the written order, measured the same way */
    import(SCHED, &text, &m);
    assert_int_equal(m.compile.schedule, MODEL_SCHED_TEXT);
    assert_int_equal(m.compile.schedule_peak[MODEL_SCHED_LIST], UINT64_MAX);
    assert_int_equal(m.compile.estimate.peak_bytes, 37 * 1024);
    assert_live(tensor(&m, "a"), 1, 4);
    model_free(&m);
}

/* The array: bf16[16,8,2048,2048,1]{4,3,2,1,0}, 1 GiB of data. As written its minor
 * dim of 1 pads to 128 lanes: 128 GiB. The compiler lays the intermediate r out with the
 * size-1 dim most major: {3,2,1,0,4}, 2048 x 2048 minor, no padding: 1 GiB. The parameter
 * keeps its order (1 GiB, no size-1 dim); the output f32[16] is 1 KiB (T(256)). Peaks: at the
 * custom call, p + r + out: 2 GiB + 1 KiB estimated, 129 GiB + 1 KiB as written. */
static const char RELAY[] = "HloModule relay\n"
                            "ENTRY main {\n"
                            "  p = bf16[16,8,2048,2048]{3,2,1,0} parameter(0)\n"
                            "  r = bf16[16,8,2048,2048,1]{4,3,2,1,0} reshape(p)\n"
                            "  ROOT out = f32[16]{0} custom-call(r), custom_call_target=\"f\"\n"
                            "}\n";

static void test_size_one_dims_go_major(void **state)
{
    struct model m;
    struct hlo_model_opts written = {.as_written = true};
    struct err e;
    const uint64_t gib = UINT64_C(1) << 30;
    (void)state;
    import(RELAY, NULL, &m);
    assert_int_equal(m.compile.relaid, 1);
    assert_int_equal(m.compile.estimate.peak_bytes, 2 * gib + 1024);
    assert_int_equal(m.compile.written.peak_bytes, 129 * gib + 1024);
    assert_int_equal(model_resolve(&m, NULL, 1, &e), ERR_OK);
    assert_int_equal(tensor(&m, "r")->padded_bytes, gib);
    model_free(&m);
    /* --reading written: the tensors are the literal ones, the figures the same */
    import(RELAY, &written, &m);
    assert_true(m.compile.written_chosen);
    assert_int_equal(m.compile.estimate.peak_bytes, 2 * gib + 1024);
    assert_int_equal(model_resolve(&m, NULL, 1, &e), ERR_OK);
    assert_int_equal(tensor(&m, "r")->padded_bytes, 128 * gib);
    model_free(&m);
}

/* Found by fuzz_stablehlo. In the list order p0 (the last effectively scalar entry added)
 * runs first, then n (scalar, added after p1), then p1: the output n, donated into p1, was
 * defined before the buffer it is written into. And a module whose values have no array
 * leaf at all. */
static void test_reordered_donation_and_empty_modules(void **state)
{
    static const char donate[] = "HloModule d, input_output_alias={ {}: (1, {}, may-alias) }\n"
                                 "ENTRY e {\n  p1 = f32[1] parameter(1)\n"
                                 "  p0 = f32[1] parameter(0)\n  ROOT n = f32[1] negate(p0)\n}\n";
    static const char empty[] = "HloModule e\nENTRY e {\n  ROOT t = () tuple()\n}\n";
    struct model m;
    (void)state;
    import(donate, NULL, &m);
    assert_int_equal(m.n, 2);
    assert_string_equal(tensor(&m, "p1")->in_place, "n");
    assert_true(tensor(&m, "p1")->donated);
    model_free(&m);
    import(empty, NULL, &m);
    assert_int_equal(m.n, 0);
    assert_true(m.compile.present);
    model_free(&m);
}

/* After optimization (a schedule, a fusion or a tiled layout), the program is what runs: no
 * second reading. */
static void test_compiled_programs_are_read_as_they_are(void **state)
{
    static const char *const texts[] = {
        "HloModule s, is_scheduled=true\nENTRY e {\n  p = f32[8] parameter(0)\n"
        "  ROOT n = f32[8] negate(p)\n}\n",
        "HloModule t\nENTRY e {\n  p = f32[8]{0:T(256)} parameter(0)\n"
        "  ROOT n = f32[8]{0:T(256)} negate(p)\n}\n",
        "HloModule f\nfc {\n  q = f32[8] parameter(0)\n  ROOT n = f32[8] negate(q)\n}\n"
        "ENTRY e {\n  p = f32[8] parameter(0)\n"
        "  ROOT f = f32[8] fusion(p), kind=kLoop, calls=fc\n}\n",
    };
    (void)state;
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        struct model m;
        import(texts[i], NULL, &m);
        assert_false(m.compile.present);
        model_free(&m);
    }
}

/* The result carries both readings (server/planner/RESULT.md#the-compile-estimate), and --reading
 * written plans the literal one. */
static void test_the_result_shows_both_readings(void **state)
{
    struct plan_summary s;
    struct plan_opts o = {.strategies = "xla-default", .chip = "v4", .alignment = 1};
    json_object *r, *cp;
    (void)state;
    r = plan_doc(FUSE, strlen(FUSE), &o, &s);
    cp = json_object_object_get(r, "compile");
    assert_non_null(cp);
    assert_string_equal(json_object_get_string(json_object_object_get(cp, "chosen")), "compiler");
    assert_int_equal(json_object_get_int64(json_object_object_get(
                         json_object_object_get(cp, "compiler"), "peak_bytes")),
                     12 * MIB + 4096);
    assert_int_equal(json_object_get_int64(json_object_object_get(
                         json_object_object_get(cp, "written"), "peak_bytes")),
                     16 * MIB + 5120);
    assert_int_equal(
        json_object_get_int64(json_object_object_get(json_object_object_get(cp, "fused"), "total")),
        6);
    assert_int_equal(s.peak_bytes, 12 * MIB + 4096);
    json_object_put(r);
    o.reading = PLAN_READING_WRITTEN;
    r = plan_doc(FUSE, strlen(FUSE), &o, &s);
    cp = json_object_object_get(r, "compile");
    assert_string_equal(json_object_get_string(json_object_object_get(cp, "chosen")), "written");
    assert_int_equal(s.peak_bytes, 16 * MIB + 5120);
    json_object_put(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_fusion_rule_counts),
        cmocka_unit_test(test_expensive_producers_are_not_duplicated),
        cmocka_unit_test(test_a_loop_fusion_writes_into_what_it_fused_reads),
        cmocka_unit_test(test_the_scheduler_keeps_the_least_peak),
        cmocka_unit_test(test_size_one_dims_go_major),
        cmocka_unit_test(test_reordered_donation_and_empty_modules),
        cmocka_unit_test(test_compiled_programs_are_read_as_they_are),
        cmocka_unit_test(test_the_result_shows_both_readings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
