/*
 * test_verdict.c - the plan's one verdict (plan.h: enum plan_fit; plan_verdict.c): composed
 * from the HBM peak, every kernel's VMEM and the budget, the same in summary.verdict, the
 * summary's fits / within_budget and struct plan_summary; worded with no negative figure.
 * Regression tests for the contradictions of issue 24: the Pallas example's HBM fits while a
 * kernel does not (the plan does not fit, and nothing says "over by -31.16G"); and the BFC
 * replay, a GPU runtime model, runs only when asked.
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

#include "planner/plan.h"

/* Plans text with o, the summary into *s; fails the test on error. */
static json_object *plan_text(const char *text, struct plan_opts *o, struct plan_summary *s)
{
    struct plan_limits l;
    struct err e;
    char *out = NULL;
    size_t len = 0;
    json_object *doc;

    plan_limits_default(&l);
    o->threads = 1;
    if (plan_run(text, strlen(text), o, &l, &out, &len, NULL, s, &e) != ERR_OK)
        fail_msg("plan_run: %s (%s)", e.msg, e.where);
    doc = json_tokener_parse(out);
    free(out);
    assert_non_null(doc);
    return doc;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb"); /* tests run from the repository root (tests/run.sh) */
    char *buf = malloc(1 << 16);
    size_t got;

    assert_non_null(f);
    assert_non_null(buf);
    got = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[got] = '\0';
    return buf;
}

/* The check at index i of summary.verdict.checks: its name, ok (-1: null) and text. */
static void verdict_check(json_object *r, int i, const char *name, int ok, const char *text)
{
    char path[64];
    json_object *v;

    snprintf(path, sizeof(path), "summary.verdict.checks[%d].name", i);
    assert_string_equal(jstr(r, path), name);
    snprintf(path, sizeof(path), "summary.verdict.checks[%d].ok", i);
    v = jget(r, path);
    if (ok < 0)
        assert_null(v);
    else
        assert_int_equal(json_object_get_boolean(v), ok);
    snprintf(path, sizeof(path), "summary.verdict.checks[%d].text", i);
    assert_string_equal(jstr(r, path), text);
}

/*
 * tests/data/models/pallas-kernels.json on v6e: 96.00M of HBM (16 + 16 + 64 MiB) within
 * 31.25G (33554432000 bytes), 31.16G headroom; the kernel "attention" needs 74.00M of VMEM
 * against the 32.00M scoped default: 42.00M over. It does not fit, and the HBM figures stay
 * positive (the card used to read "over by -31.16 GiB").
 */
static void test_a_kernel_over_its_vmem_makes_the_plan_not_fit(void **state)
{
    char *text = read_file("tests/data/models/pallas-kernels.json");
    struct plan_opts o = {0};
    struct plan_summary s;
    json_object *r = plan_text(text, &o, &s);
    (void)state;

    assert_false(jbool(r, "summary.fits"));
    assert_true(jbool(r, "summary.hbm_fits"));
    assert_int_equal(jint(r, "summary.overflow_bytes"), 0);
    assert_int_equal(jint(r, "summary.headroom_bytes"), 33554432000 - 100663296);
    assert_string_equal(jstr(r, "summary.verdict.status"), "does-not-fit");
    assert_string_equal(jstr(r, "summary.verdict.headline"), "does not fit");
    assert_string_equal(jstr(r, "summary.verdict.text"),
                        "does not fit: kernel \"attention\" needs 74.00M of VMEM, over its 32.00M "
                        "limit by 42.00M (1 of 2 kernels over)");
    assert_int_equal(json_object_array_length(jget(r, "summary.verdict.checks")), 2);
    verdict_check(r, 0, "hbm", 1, "HBM peak 96.00M within the 31.25G capacity, 31.16G headroom");
    verdict_check(r, 1, "vmem", 0,
                  "kernel \"attention\" needs 74.00M of VMEM, over its 32.00M limit by 42.00M (1 "
                  "of 2 kernels over)");
    assert_false(s.fits);
    assert_int_equal(s.verdict, PLAN_FIT_DOES_NOT_FIT);
    assert_string_equal(plan_fit_name(s.verdict), "does-not-fit");
    json_object_put(r);
    free(text);
}

/* One f32[1024,1024] (4 MiB) tensor on v4, against capacities and budgets. */
static const char *const one = "{\"chip\":\"v4\",\"tensors\":[{\"name\":\"w\",\"shape\":[1024,"
                               "1024],\"dtype\":\"f32\"}]}";

static void test_hbm_over_fits_and_budgets(void **state)
{
    struct plan_opts o = {.capacity = 3 << 20};
    struct plan_summary s;
    json_object *r = plan_text(one, &o, &s);
    (void)state;

    /* 4.00M on 3.00M: over by 1.00M */
    assert_string_equal(jstr(r, "summary.verdict.status"), "does-not-fit");
    assert_string_equal(jstr(r, "summary.verdict.text"),
                        "does not fit: HBM peak 4.00M over the 3.00M capacity by 1.00M");
    verdict_check(r, 0, "hbm", 0, "HBM peak 4.00M over the 3.00M capacity by 1.00M");
    assert_int_equal(s.verdict, PLAN_FIT_DOES_NOT_FIT);
    json_object_put(r);

    /* fits in 8M, over a 3.5M budget by 512.0K */
    o = (struct plan_opts){.capacity = 8 << 20, .budget = "3.5M"};
    r = plan_text(one, &o, &s);
    assert_true(jbool(r, "summary.fits"));
    assert_false(jbool(r, "summary.within_budget"));
    assert_string_equal(jstr(r, "summary.verdict.status"), "over-budget");
    assert_string_equal(jstr(r, "summary.verdict.headline"), "over budget");
    assert_string_equal(jstr(r, "summary.verdict.text"),
                        "over budget: peak 4.00M over the 3.50M budget by 512.0K");
    verdict_check(r, 0, "hbm", 1, "HBM peak 4.00M within the 8.00M capacity, 4.00M headroom");
    verdict_check(r, 1, "budget", 0, "peak 4.00M over the 3.50M budget by 512.0K");
    assert_int_equal(s.verdict, PLAN_FIT_OVER_BUDGET);
    json_object_put(r);

    /* within a 0.75 budget (6.00M): every check in the sentence */
    o = (struct plan_opts){.capacity = 8 << 20, .budget = "0.75"};
    r = plan_text(one, &o, &s);
    assert_string_equal(jstr(r, "summary.verdict.status"), "fits");
    assert_string_equal(jstr(r, "summary.verdict.text"),
                        "fits: HBM peak 4.00M within the 8.00M capacity, 4.00M headroom; peak "
                        "4.00M within the 6.00M budget, 2.00M under");
    assert_int_equal(s.verdict, PLAN_FIT_FITS);
    json_object_put(r);
}

/* A CSV without a chip or capacity: nothing to check the peak against. */
static void test_no_capacity_is_said(void **state)
{
    struct plan_opts o = {0};
    struct plan_summary s;
    json_object *r = plan_text("id,lower,upper,size\na,0,2,1000\nb,1,3,24\n", &o, &s);
    (void)state;

    assert_true(jbool(r, "summary.fits"));
    assert_string_equal(jstr(r, "summary.verdict.status"), "no-capacity");
    assert_string_equal(jstr(r, "summary.verdict.headline"), "no capacity to check");
    verdict_check(r, 0, "hbm", -1, "no capacity given to check the HBM peak 1.0K against");
    assert_int_equal(s.verdict, PLAN_FIT_NO_CAPACITY);
    assert_true(s.fits && s.within_budget);
    json_object_put(r);
}

/* The BFC replay (a GPU runtime model) runs only when asked: by --runtime bfc, the model's
 * "runtime" option, or its settings (mem_fraction, preallocate); --runtime none wins. */
static void test_the_gpu_runtime_replay_is_asked_for(void **state)
{
    static const struct {
        const char *model_opts;
        struct plan_opts o;
        bool replayed;
    } cases[] = {
        {"", {0}, false},
        {"", {.runtime = PLAN_RUNTIME_BFC}, true},
        {",\"options\":{\"runtime\":\"bfc\"}", {0}, true},
        {",\"options\":{\"runtime\":\"bfc\"}", {.runtime = PLAN_RUNTIME_NONE}, false},
        {"", {.mem_fraction = 0.5}, true},
        {",\"options\":{\"preallocate\":false}", {0}, true},
        {"", {.runtime = PLAN_RUNTIME_NONE, .mem_fraction = 0.5}, false},
    };
    (void)state;

    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char text[512];
        struct plan_opts o = cases[k].o;
        json_object *r, *rt = NULL;
        snprintf(text, sizeof(text), "%.*s%s}", (int)strlen(one) - 1, one, cases[k].model_opts);
        r = plan_text(text, &o, NULL);
        assert_true(json_object_object_get_ex(jget(r, "packing"), "runtime", &rt));
        if ((rt != NULL) != cases[k].replayed)
            fail_msg("case %zu: runtime %s", k, rt != NULL ? "replayed" : "not replayed");
        json_object_put(r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_kernel_over_its_vmem_makes_the_plan_not_fit),
        cmocka_unit_test(test_hbm_over_fits_and_budgets),
        cmocka_unit_test(test_no_capacity_is_said),
        cmocka_unit_test(test_the_gpu_runtime_replay_is_asked_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
