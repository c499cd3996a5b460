/*
 * test_diff.c - the plan diff (diff.h): exact deltas on hand-made result pairs (worked out
 * below), a pair planned for real (f32 -> bf16 activations, sizes from the tiling rules),
 * the same answer from whole results and from their views, and errors naming side and field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/diff.h"
#include "planner/plan.h"

/* A: w1, w2 params of 1000 padded bytes (750 logical), h an activation of 1000 (500). */
static const char result_a[] =
    "{\"schema_version\":1,\"model\":{\"name\":\"A\"},\"chip\":{\"name\":\"v5e\"},"
    "\"summary\":{\"tensors\":3,\"logical_bytes\":2000,\"padded_bytes\":3000,"
    "\"capacity_bytes\":4000,\"peak_bytes\":3000,\"lower_bound_bytes\":2500,"
    "\"fragmentation_bytes\":500,\"fragmentation\":0.25,\"fits\":true,"
    "\"by_kind\":{\"param\":{\"count\":2,\"logical_bytes\":1500,\"padded_bytes\":2000},"
    "\"activation\":{\"count\":1,\"logical_bytes\":500,\"padded_bytes\":1000}}},"
    "\"tensors\":["
    "{\"name\":\"w1\",\"kind\":\"param\",\"shape\":\"f32[10,25]\",\"padded_bytes\":1000,"
    "\"logical_bytes\":750,\"offset\":0,\"live\":[0,2]},"
    "{\"name\":\"w2\",\"kind\":\"param\",\"shape\":\"f32[10,25]\",\"padded_bytes\":1000,"
    "\"logical_bytes\":750,\"offset\":1000,\"live\":[0,2]},"
    "{\"name\":\"h\",\"kind\":\"activation\",\"shape\":\"bf16[250]\",\"padded_bytes\":1000,"
    "\"logical_bytes\":500,\"offset\":2000,\"live\":[0,1]}]}";

/* B: w1 moved (offset only: unchanged), w2 grew to 3000 (2250 logical) with a new layout,
 * h gone, g a new activation of 256 bytes. Peak 4256 > capacity 4000. */
static const char result_b[] =
    "{\"schema_version\":1,\"model\":{\"name\":\"B\"},\"chip\":null,"
    "\"summary\":{\"tensors\":3,\"logical_bytes\":3256,\"padded_bytes\":4256,"
    "\"capacity_bytes\":4000,\"peak_bytes\":4256,\"lower_bound_bytes\":4256,"
    "\"fragmentation_bytes\":0,\"fragmentation\":0,\"fits\":false,"
    "\"by_kind\":{\"param\":{\"count\":2,\"logical_bytes\":3000,\"padded_bytes\":4000},"
    "\"activation\":{\"count\":1,\"logical_bytes\":256,\"padded_bytes\":256}}},"
    "\"tensors\":["
    "{\"name\":\"g\",\"kind\":\"activation\",\"shape\":\"s8[256]\",\"padded_bytes\":256,"
    "\"logical_bytes\":256,\"offset\":4000,\"live\":[1,2]},"
    "{\"name\":\"w2\",\"kind\":\"param\",\"shape\":\"f32[30,25]{0,1}\",\"padded_bytes\":3000,"
    "\"logical_bytes\":2250,\"offset\":0,\"live\":[0,2]},"
    "{\"name\":\"w1\",\"kind\":\"param\",\"shape\":\"f32[10,25]\",\"padded_bytes\":1000,"
    "\"logical_bytes\":750,\"offset\":3000,\"live\":[0,2]}]}";

static json_object *run_diff(const struct diff_input *a, const struct diff_input *b)
{
    char *json = NULL;
    size_t len = 0;
    struct err e;
    json_object *doc;

    if (diff_run(a, b, 0, &json, &len, &e) != ERR_OK)
        fail_msg("diff_run: %s", e.msg);
    assert_int_equal(strlen(json), len);
    doc = json_tokener_parse(json);
    free(json);
    assert_non_null(doc);
    return doc;
}

static json_object *get(json_object *o, const char *path)
{
    char key[64];
    const char *dot;

    while ((dot = strchr(path, '.')) != NULL) {
        snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
        assert_true(json_object_object_get_ex(o, key, &o));
        path = dot + 1;
    }
    assert_true(json_object_object_get_ex(o, path, &o));
    return o;
}

static int64_t num(json_object *o, const char *path)
{
    return json_object_get_int64(get(o, path));
}

static void test_hand_written_pair_gives_the_worked_deltas(void **state)
{
    struct diff_input a = {result_a, sizeof(result_a) - 1, NULL, 0};
    struct diff_input b = {result_b, sizeof(result_b) - 1, NULL, 0};
    json_object *d = run_diff(&a, &b), *ts, *t;

    (void)state;
    assert_string_equal(json_object_get_string(get(d, "a.name")), "A");
    assert_string_equal(json_object_get_string(get(d, "a.chip")), "v5e");
    assert_true(json_object_is_type(get(d, "b.chip"), json_type_null));
    assert_int_equal(num(d, "summary.peak_bytes_before"), 3000);
    assert_int_equal(num(d, "summary.peak_bytes_after"), 4256);
    assert_int_equal(num(d, "summary.peak_bytes_delta"), 1256);
    assert_int_equal(num(d, "summary.padded_bytes_delta"), 1256);
    assert_int_equal(num(d, "summary.logical_bytes_delta"), 1256);
    assert_int_equal(num(d, "summary.lower_bound_bytes_delta"), 1756);
    assert_int_equal(num(d, "summary.fragmentation_bytes_delta"), -500);
    assert_true(json_object_get_double(get(d, "summary.fragmentation_delta")) == -0.25);
    assert_true(json_object_get_boolean(get(d, "summary.fits_before")));
    assert_false(json_object_get_boolean(get(d, "summary.fits_after")));
    assert_int_equal(num(d, "summary.added"), 1);
    assert_int_equal(num(d, "summary.removed"), 1);
    assert_int_equal(num(d, "summary.changed"), 1);
    assert_int_equal(num(d, "summary.unchanged"), 1); /* w1: only its offset moved */
    /* per kind: params 2000 -> 4000, activations 1000 -> 256 */
    assert_int_equal(num(d, "by_kind.param.padded_bytes_delta"), 2000);
    assert_int_equal(num(d, "by_kind.param.logical_bytes_delta"), 1500);
    assert_int_equal(num(d, "by_kind.activation.padded_bytes_delta"), -744);
    assert_int_equal(num(d, "by_kind.activation.count_before"), 1);
    assert_int_equal(json_object_object_length(get(d, "by_kind")), 2);
    /* tensors by |delta|: w2 +2000, h -1000, g +256 */
    ts = get(d, "tensors");
    assert_int_equal(json_object_array_length(ts), 3);
    t = json_object_array_get_idx(ts, 0);
    assert_string_equal(json_object_get_string(get(t, "name")), "w2");
    assert_string_equal(json_object_get_string(get(t, "status")), "changed");
    assert_int_equal(num(t, "padded_bytes_delta"), 2000);
    assert_int_equal(num(t, "logical_bytes_delta"), 1500);
    assert_string_equal(json_object_get_string(get(t, "layout_before")), "f32[10,25]");
    assert_string_equal(json_object_get_string(get(t, "layout_after")), "f32[30,25]{0,1}");
    assert_int_equal(num(t, "offset_before"), 1000);
    assert_int_equal(num(t, "offset_after"), 0);
    t = json_object_array_get_idx(ts, 1);
    assert_string_equal(json_object_get_string(get(t, "name")), "h");
    assert_string_equal(json_object_get_string(get(t, "status")), "removed");
    assert_int_equal(num(t, "padded_bytes_delta"), -1000);
    assert_true(json_object_is_type(get(t, "layout_after"), json_type_null));
    assert_true(json_object_is_type(get(t, "live_after"), json_type_null));
    t = json_object_array_get_idx(ts, 2);
    assert_string_equal(json_object_get_string(get(t, "name")), "g");
    assert_string_equal(json_object_get_string(get(t, "status")), "added");
    assert_int_equal(num(t, "padded_bytes_delta"), 256);
    assert_true(json_object_is_type(get(t, "padded_bytes_before"), json_type_null));
    assert_int_equal(json_object_get_int64(json_object_array_get_idx(get(t, "live_after"), 0)), 1);
    json_object_put(d);

    /* the other way round every delta flips sign, and added and removed swap */
    d = run_diff(&b, &a);
    assert_int_equal(num(d, "summary.peak_bytes_delta"), -1256);
    assert_int_equal(num(d, "by_kind.activation.padded_bytes_delta"), 744);
    assert_string_equal(
        json_object_get_string(get(json_object_array_get_idx(get(d, "tensors"), 1), "status")),
        "added");
    json_object_put(d);

    /* a plan against itself: nothing listed, every tensor unchanged */
    d = run_diff(&a, &a);
    assert_int_equal(json_object_array_length(get(d, "tensors")), 0);
    assert_int_equal(num(d, "summary.unchanged"), 3);
    assert_int_equal(num(d, "summary.peak_bytes_delta"), 0);
    json_object_put(d);
}

/* Plans the model text m on v5e; *r is the whole result, *v its views. */
static void plan(const char *m, char **r, size_t *rlen, struct plan_views *v)
{
    struct plan_opts o = {.chip = "v5e", .strategies = "xla-spatial"};
    struct err e;

    if (plan_run(m, strlen(m), &o, NULL, r, rlen, v, NULL, &e) != ERR_OK)
        fail_msg("plan_run: %s", e.msg);
}

/*
 * f32[16,128] is 8192 bytes under T(8,128); as bf16 it is 16 x 128 x 2 = 4096 bytes under
 * T(8,128)(2,1) (pairs of rows packed: 16 rows per tile, no padding either way): the activation's
 * delta is -4096, and the peak, with the 8192-byte param live beside it (both 512-aligned), goes
 * from 16384 to 12288.
 */
static void test_bf16_activation_halves_its_bytes_and_the_peak(void **state)
{
    static const char ma[] = "{\"tensors\":[{\"name\":\"w\",\"shape\":[16,128],\"dtype\":\"f32\","
                             "\"kind\":\"param\"},{\"name\":\"h\",\"shape\":[16,128],"
                             "\"dtype\":\"f32\",\"kind\":\"activation\",\"live\":[0,1]}]}";
    static const char mb[] = "{\"tensors\":[{\"name\":\"w\",\"shape\":[16,128],\"dtype\":\"f32\","
                             "\"kind\":\"param\"},{\"name\":\"h\",\"shape\":[16,128],"
                             "\"dtype\":\"bf16\",\"kind\":\"activation\",\"live\":[0,1]}]}";
    char *ra, *rb, *x, *y;
    size_t la, lb, lx, ly;
    struct plan_views va, vb;
    struct err e;

    (void)state;
    plan(ma, &ra, &la, &va);
    plan(mb, &rb, &lb, &vb);
    struct diff_input whole_a = {ra, la, NULL, 0}, whole_b = {rb, lb, NULL, 0};
    struct diff_input view_a = {va.summary, va.summary_len, va.layout, va.layout_len};
    struct diff_input view_b = {vb.summary, vb.summary_len, vb.layout, vb.layout_len};
    json_object *d = run_diff(&whole_a, &whole_b), *t;
    assert_int_equal(num(d, "summary.peak_bytes_before"), 16384);
    assert_int_equal(num(d, "summary.peak_bytes_delta"), -4096);
    assert_int_equal(num(d, "summary.logical_bytes_delta"), -4096);
    assert_int_equal(num(d, "by_kind.activation.padded_bytes_delta"), -4096);
    assert_int_equal(num(d, "by_kind.param.padded_bytes_delta"), 0);
    assert_int_equal(num(d, "summary.changed"), 1);
    assert_int_equal(num(d, "summary.unchanged"), 1);
    t = json_object_array_get_idx(get(d, "tensors"), 0);
    assert_string_equal(json_object_get_string(get(t, "layout_before")),
                        "f32[16,128]{1,0:T(8,128)}");
    assert_string_equal(json_object_get_string(get(t, "layout_after")),
                        "bf16[16,128]{1,0:T(8,128)(2,1)}");
    json_object_put(d);
    /* the views give the same document, byte for byte */
    assert_int_equal(diff_run(&whole_a, &whole_b, 0, &x, &lx, &e), ERR_OK);
    assert_int_equal(diff_run(&view_a, &view_b, 0, &y, &ly, &e), ERR_OK);
    assert_int_equal(lx, ly);
    assert_memory_equal(x, y, lx);
    free(x);
    free(y);
    /* and a bound too small is ERR_LIMIT */
    assert_int_equal(diff_run(&view_a, &view_b, 64, &x, &lx, &e), ERR_LIMIT);
    assert_null(x);
    free(ra);
    free(rb);
    plan_views_free(&va);
    plan_views_free(&vb);
}

static void test_bad_results_are_rejected_naming_the_field(void **state)
{
    static const char no_summary[] = "{\"schema_version\":1,\"tensors\":[]}";
    static const char bad_layout[] = "{\"tensors\":1,\"name\":[7]}";
    struct diff_input a = {result_a, sizeof(result_a) - 1, NULL, 0};
    struct diff_input ns = {no_summary, sizeof(no_summary) - 1, NULL, 0};
    struct diff_input bl = {result_b, sizeof(result_b) - 1, bad_layout, sizeof(bad_layout) - 1};
    struct diff_input trunc = {result_a, 40, NULL, 0};
    char *out;
    size_t len;
    struct err e;

    (void)state;
    assert_int_equal(diff_run(&ns, &a, 0, &out, &len, &e), ERR_INVALID);
    assert_string_equal(e.where, "a.summary");
    assert_null(out);
    assert_int_equal(diff_run(&a, &bl, 0, &out, &len, &e), ERR_INVALID);
    assert_string_equal(e.where, "b.layout.name[0]");
    assert_int_equal(diff_run(&a, &trunc, 0, &out, &len, &e), ERR_INVALID);
    assert_int_equal(diff_run(&a, NULL, 0, &out, &len, &e), ERR_INVALID);
    assert_string_equal(e.where, "b.result");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_written_pair_gives_the_worked_deltas),
        cmocka_unit_test(test_bf16_activation_halves_its_bytes_and_the_peak),
        cmocka_unit_test(test_bad_results_are_rejected_naming_the_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
