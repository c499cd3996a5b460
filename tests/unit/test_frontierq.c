/*
 * test_frontierq.c - a frontier search's query as JSON (service/frontierq.h): what a POST
 * may send, what the normalised form says, and the member each mistake is named by.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/frontierq.h"

/* text parsed, then its normalised form, which must read back to itself. */
static void assert_normalises(const char *text, const char *want)
{
    struct frontierq q, again;
    struct err e;
    char *out, *out2;

    if (frontierq_parse(text, strlen(text), &q, &e) != ERR_OK)
        fail_msg("%s: %s", text, e.msg);
    out = frontierq_json(&q);
    assert_non_null(out);
    assert_string_equal(out, want);
    assert_int_equal(frontierq_parse(out, strlen(out), &again, &e), ERR_OK);
    out2 = frontierq_json(&again);
    assert_string_equal(out2, out);
    free(out);
    free(out2);
}

static void test_queries_normalise(void **state)
{
    (void)state;
    assert_normalises("{\"maximize\": \"batch\"}",
                      "{\"maximize\":\"train.batch\",\"min\":1,\"max\":1048576,\"step\":1,"
                      "\"sweep\":null}");
    /* min defaults to the step; max is rounded down to a multiple of it */
    assert_normalises("{\"step\": 8, \"max\": 100, \"maximize\": \"seq\", \"sweep\": null}",
                      "{\"maximize\":\"train.seq\",\"min\":8,\"max\":96,\"step\":8,"
                      "\"sweep\":null}");
    assert_normalises("{\"maximize\": \"serve.sequences\", \"min\": 2, \"max\": 4096, \"sweep\":"
                      " {\"field\": \"serve.kv_dtype\", \"values\": [\"bf16\", \"int8\"]}}",
                      "{\"maximize\":\"serve.sequences\",\"min\":2,\"max\":4096,\"step\":1,"
                      "\"sweep\":{\"field\":\"serve.kv_dtype\",\"values\":[\"bf16\",\"int8\"]}}");
}

static void test_mistakes_name_the_member(void **state)
{
    static const struct {
        const char *text;
        const char *where;
    } cases[] = {
        {"[\"batch\"]", ""},
        {"{\"maximize\": \"batch\"} {}", ""},
        {"{\"maximize\": ", ""},
        {"{\"maximize\": \"batch\", \"colour\": 1}", "colour"},
        {"{\"min\": 1}", "maximize"},
        {"{\"maximize\": 1}", "maximize"},
        {"{\"maximize\": \"\"}", "maximize"},
        {"{\"maximize\": \"size\"}", "maximize"},
        {"{\"maximize\": \"ba\\u0000tch\"}", "maximize"},
        {"{\"maximize\": \"batch\", \"min\": 0}", "min"},
        {"{\"maximize\": \"batch\", \"min\": 1.5}", "min"},
        {"{\"maximize\": \"batch\", \"min\": \"2\"}", "min"},
        {"{\"maximize\": \"batch\", \"min\": 6, \"step\": 4}", "min"},
        {"{\"maximize\": \"batch\", \"min\": 8, \"max\": 4}", "max"},
        {"{\"maximize\": \"batch\", \"max\": 2000000000}", "max"},
        {"{\"maximize\": \"batch\", \"step\": -1}", "step"},
        {"{\"maximize\": \"batch\", \"sweep\": []}", "sweep"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"train.remat\"}}", "sweep"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"train.remat\", \"values\": [\"a\"],"
         " \"x\": 1}}",
         "sweep"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": 7, \"values\": [\"a\"]}}",
         "sweep.field"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"train.remat\", \"values\": []}}",
         "sweep.values"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"train.remat\", \"values\": \"a\"}}",
         "sweep.values"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"train.remat\", \"values\": [\"a\","
         " \"\"]}}",
         "sweep.values[1]"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"mesh.fsdp\", \"values\": [8]}}",
         "sweep.values[0]"},
    };
    struct frontierq q;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = frontierq_parse(cases[i].text, strlen(cases[i].text), &q, &e);
        if (rc != ERR_INVALID || strcmp(e.where, cases[i].where) != 0)
            fail_msg("%s: rc %d at \"%s\" (%s); wanted \"%s\"", cases[i].text, rc, e.where, e.msg,
                     cases[i].where);
        /* the sentence names what the location names */
        if (cases[i].where[0] != '\0' &&
            strncmp(e.msg, cases[i].where, strlen(cases[i].where)) != 0)
            fail_msg("%s: \"%s\" does not start with %s", cases[i].text, e.msg, cases[i].where);
    }
}

/* The bounds: 16 values of 63 bytes are a query; a 17th value or a 64th byte is not. */
static void test_sweep_bounds(void **state)
{
    char text[2048], v63[64];
    struct frontierq q;
    struct err e;
    size_t n;

    (void)state;
    memset(v63, 'x', 63);
    v63[63] = '\0';
    for (int k = 16; k <= 17; k++) {
        n = (size_t)snprintf(text, sizeof(text),
                             "{\"maximize\": \"batch\", \"sweep\": {\"field\": \"train.remat\","
                             " \"values\": [");
        for (int i = 0; i < k; i++)
            n += (size_t)snprintf(text + n, sizeof(text) - n, "%s\"%s\"", i ? "," : "", v63);
        snprintf(text + n, sizeof(text) - n, "]}}");
        assert_int_equal(frontierq_parse(text, strlen(text), &q, &e),
                         k == FRONTIER_MAX_SWEEP ? ERR_OK : ERR_INVALID);
        if (k == FRONTIER_MAX_SWEEP)
            assert_true(q.q.n_sweep == 16 && strcmp(q.q.sweep_values[15], v63) == 0);
        else
            assert_string_equal(e.where, "sweep.values");
    }
    snprintf(text, sizeof(text),
             "{\"maximize\": \"batch\", \"sweep\": {\"field\": \"train.remat\", \"values\":"
             " [\"%sy\"]}}",
             v63);
    assert_int_equal(frontierq_parse(text, strlen(text), &q, &e), ERR_INVALID);
    assert_string_equal(e.where, "sweep.values[0]");
}

/* The fields against a recipe: maximize a whole number it has, the swept field one it has
 * (chip has no dot); a recipe that does not read is the search's to answer. */
static void test_fields_checked_against_the_recipe(void **state)
{
    static const char recipe[] =
        "{\"chip\": \"v5e\", \"model\": {\"preset\": \"llama-3.1-8b\"}, \"train\": "
        "{\"batch\": 16, \"seq\": 4096}, \"mesh\": {\"fsdp\": 16}}";
    static const struct {
        const char *text;
        const char *where; /* NULL: accepted */
        const char *msg;
    } cases[] = {
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"chip\", \"values\": [\"v5p\"]}}", NULL,
         NULL},
        {"{\"maximize\": \"model.num_hidden_layers\", \"sweep\": {\"field\": \"train.remat\","
         " \"values\": [\"full\"]}}",
         NULL, NULL},
        {"{\"maximize\": \"train.nonesuch\"}", "maximize",
         "maximize: train.nonesuch: no such field in this recipe"},
        {"{\"maximize\": \"context\"}", "maximize",
         "maximize: serve.context: no such field in this recipe"},
        {"{\"maximize\": \"train.remat\"}", "maximize",
         "maximize: train.remat: not a whole number"},
        {"{\"maximize\": \"batch\", \"sweep\": {\"field\": \"serve.kv_dtype\", \"values\": "
         "[\"int8\"]}}",
         "sweep.field", "sweep.field: serve.kv_dtype: no such field in this recipe"},
    };
    struct frontierq q;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(frontierq_parse(cases[i].text, strlen(cases[i].text), &q, &e), ERR_OK);
        err_clear(&e);
        int rc = frontierq_check_recipe(&q, recipe, strlen(recipe), &e);
        if (cases[i].where == NULL) {
            if (rc != ERR_OK)
                fail_msg("%s: %s", cases[i].text, e.msg);
            continue;
        }
        if (rc != ERR_INVALID || strcmp(e.where, cases[i].where) != 0 ||
            strcmp(e.msg, cases[i].msg) != 0)
            fail_msg("%s: rc %d at %s: \"%s\"", cases[i].text, rc, e.where, e.msg);
    }
    {
        static const char text[] = "{\"maximize\": \"x.y\"}", bad[] = "{\"model\": 1";
        assert_int_equal(frontierq_parse(text, strlen(text), &q, &e), ERR_OK);
        assert_int_equal(frontierq_check_recipe(&q, bad, strlen(bad), &e), ERR_OK);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queries_normalise),
        cmocka_unit_test(test_mistakes_name_the_member),
        cmocka_unit_test(test_sweep_bounds),
        cmocka_unit_test(test_fields_checked_against_the_recipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
