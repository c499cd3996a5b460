/*
 * test_trace.c - the Chrome/Perfetto trace export (trace.h): a hand-worked plan with its
 * exact events (tracks, counters, slices), the track property on random plans (no two
 * slices of a track overlap in time; as many tracks as buffers live at once), the layout
 * view's errors, and the export of a real plan's layout view.
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

#include "planner/plan.h"
#include "planner/trace.h"
#include "rng.h"

static json_object *get(json_object *o, const char *k)
{
    json_object *v = NULL;

    json_object_object_get_ex(o, k, &v);
    return v;
}

static int64_t geti(json_object *o, const char *k)
{
    return json_object_get_int64(get(o, k));
}

/* Parses a trace; checks it is {"traceEvents": [...], "otherData": {...}} and counts the
 * events by phase (C, M, X). */
static json_object *parse_trace(const char *text, size_t len, size_t counts[3])
{
    json_object *root = json_tokener_parse(text), *ev;

    assert_non_null(root);
    assert_int_equal(strlen(text), len);
    ev = get(root, "traceEvents");
    assert_true(json_object_is_type(ev, json_type_array));
    assert_true(json_object_is_type(get(root, "otherData"), json_type_object));
    counts[0] = counts[1] = counts[2] = 0;
    for (size_t i = 0; i < json_object_array_length(ev); i++) {
        const char *ph = json_object_get_string(get(json_object_array_get_idx(ev, i), "ph"));
        assert_non_null(ph);
        assert_int_equal(strlen(ph), 1);
        if (ph[0] == 'C')
            counts[0]++;
        else if (ph[0] == 'M')
            counts[1]++;
        else if (ph[0] == 'X')
            counts[2]++;
        else
            fail_msg("unexpected phase %s", ph);
    }
    return root;
}

/* The event of phase ph named name (and at ts, for counters). */
static json_object *find(json_object *root, const char *ph, const char *name, int64_t ts)
{
    json_object *ev = get(root, "traceEvents");

    for (size_t i = 0; i < json_object_array_length(ev); i++) {
        json_object *x = json_object_array_get_idx(ev, i);
        if (strcmp(json_object_get_string(get(x, "ph")), ph) == 0 &&
            strcmp(json_object_get_string(get(x, "name")), name) == 0 &&
            (ph[0] != 'C' || geti(x, "ts") == ts))
            return x;
    }
    fail_msg("no %s event %s", ph, name);
    return NULL;
}

/*
 * a param [0,4) at 0 (100 B); b activation [0,2) at 100 (50 B); c activation [2,4) at 100
 * (60 B); d activation [1,3) at 200 (10 B); z [0,1) has no bytes and is left out.
 * Sweep: step 0: a takes new track T0, b new T1 (starts in offset order); step 1: d new T2;
 * step 2: b ends (T1 free, last offset 100), c at 100 takes T1 (nearest below); step 3: d
 * ends; step 4: a and c end. Tracks by lowest offset: T0 (0) tid 1, T1 (100) tid 2, T2
 * (200) tid 3. Counters after each step (live param / activation, heap = highest end):
 *   0: 100 / 50, 150   1: 100 / 60, 210   2: 100 / 70, 210   3: 100 / 60, 160   4: 0 / 0, 0
 * Events: 5 steps x 2 counters + 1 process name + 3 tracks x 2 + 4 slices = 21.
 */
static void test_trace_tracks_and_counters_match_the_hand_count(void **state)
{
    const char *names[5] = {"a", "b", "c", "d", "z"};
    const int64_t start[5] = {0, 0, 2, 1, 0}, end[5] = {4, 2, 4, 3, 1};
    const uint64_t offset[5] = {0, 100, 100, 200, 0}, bytes[5] = {100, 50, 60, 10, 0};
    const uint32_t kind[5] = {0, 1, 1, 1, 1}, shape[5] = {0, 1, 1, 1, 1};
    const char *kinds[3] = {"param", "activation", "unused"};
    const char *shapes[2] = {"f32[25]{0:T(256)}", NULL};
    const struct trace_cols c = {5,    names, start, end,   offset, bytes,
                                 kind, kinds, 3,     shape, shapes, 2};
    const uint64_t act[5] = {50, 60, 70, 60, 0}, heap[5] = {150, 210, 210, 160, 0};
    struct trace_counts k;
    size_t counts[3], len;
    char *out;
    json_object *root, *x;
    struct err e;

    (void)state;
    assert_int_equal(trace_write(&c, "hand <b>plan</b>", 1 << 20, &out, &len, &k, &e), ERR_OK);
    root = parse_trace(out, len, counts);
    assert_int_equal(counts[0], 10);
    assert_int_equal(counts[1], 7);
    assert_int_equal(counts[2], 4);
    assert_int_equal(k.counters, 10);
    assert_int_equal(k.metadata, 7);
    assert_int_equal(k.slices, 4);
    assert_int_equal(k.tracks, 3);
    assert_int_equal(geti(find(root, "X", "a", 0), "tid"), 1);
    assert_int_equal(geti(find(root, "X", "b", 0), "tid"), 2);
    assert_int_equal(geti(find(root, "X", "c", 0), "tid"), 2);
    assert_int_equal(geti(find(root, "X", "d", 0), "tid"), 3);
    x = find(root, "X", "c", 0);
    assert_int_equal(geti(x, "ts"), 2);
    assert_int_equal(geti(x, "dur"), 2);
    assert_string_equal(json_object_get_string(get(x, "cat")), "activation");
    assert_int_equal(geti(get(x, "args"), "offset"), 100);
    assert_int_equal(geti(get(x, "args"), "end_offset"), 160);
    assert_null(get(get(x, "args"), "shape")); /* its shape is null */
    assert_string_equal(json_object_get_string(get(get(find(root, "X", "a", 0), "args"), "shape")),
                        "f32[25]{0:T(256)}");
    for (int t = 0; t <= 4; t++) {
        json_object *live = get(find(root, "C", "live bytes", t), "args");
        assert_int_equal(geti(live, "param"), t < 4 ? 100 : 0);
        assert_int_equal(geti(live, "activation"), act[t]);
        assert_null(get(live, "unused")); /* no buffer of that kind */
        assert_int_equal(geti(get(find(root, "C", "heap height", t), "args"), "bytes"), heap[t]);
    }
    /* metadata: the title as text, the tracks named in offset order */
    x = get(find(root, "M", "process_name", 0), "args");
    assert_string_equal(json_object_get_string(get(x, "name")),
                        "tpuplan: hand <b>plan</b> (per-device HBM, 1 us = 1 step)");
    json_object *ev = get(root, "traceEvents");
    int seen = 0;
    for (size_t i = 0; i < json_object_array_length(ev); i++) {
        json_object *m = json_object_array_get_idx(ev, i);
        if (strcmp(json_object_get_string(get(m, "name")), "thread_name") != 0)
            continue;
        const char *want[3] = {"track 0: offsets from 0B", "track 1: offsets from 100B",
                               "track 2: offsets from 200B"};
        assert_string_equal(json_object_get_string(get(get(m, "args"), "name")),
                            want[geti(m, "tid") - 1]);
        seen++;
    }
    assert_int_equal(seen, 3);
    json_object_put(root);
    free(out);

    /* the bound is kept */
    assert_int_equal(trace_write(&c, "t", 200, &out, &len, NULL, &e), ERR_LIMIT);
    assert_null(out);
}

/* Random plans: no two slices of a track overlap in time, and there are exactly as many
 * tracks as buffers live at once at most. */
static void test_tracks_never_overlap_and_match_max_live(void **state)
{
    enum { N = 400 };
    static const char *names[N];
    static int64_t start[N], end[N];
    static uint64_t offset[N], bytes[N];
    static uint32_t kind[N];
    const char *kinds[1] = {"temp"};
    uint64_t x = 99;

    (void)state;
    for (int round = 0; round < 5; round++) {
        struct trace_cols c = {N, names, start, end, offset, bytes, kind, kinds, 1, NULL, NULL, 0};
        size_t counts[3], len, maxlive = 0, nsteps = 0;
        struct trace_counts k;
        struct err e;
        char *out;
        for (int i = 0; i < N; i++) {
            names[i] = "buf";
            start[i] = (int64_t)(rng_lcg64(&x) % 100);
            end[i] = start[i] + 1 + (int64_t)(rng_lcg64(&x) % 30);
            offset[i] = rng_lcg64(&x) % 100000;
            bytes[i] = rng_lcg64(&x) % 4 == 0 ? 0 : 1 + rng_lcg64(&x) % 1000;
            kind[i] = 0;
        }
        for (int64_t t = 0; t < 131; t++) {
            size_t live = 0;
            bool event = false;
            for (int i = 0; i < N; i++) {
                live += bytes[i] > 0 && start[i] <= t && t < end[i];
                event |= bytes[i] > 0 && (start[i] == t || end[i] == t);
            }
            maxlive = live > maxlive ? live : maxlive;
            nsteps += event;
        }
        assert_int_equal(trace_write(&c, "r", 1 << 22, &out, &len, &k, &e), ERR_OK);
        json_object *root = parse_trace(out, len, counts);
        assert_int_equal(k.tracks, maxlive);
        assert_int_equal(counts[0], 2 * nsteps);
        assert_int_equal(counts[1], 1 + 2 * maxlive);
        json_object *ev = get(root, "traceEvents");
        size_t nx = json_object_array_length(ev);
        for (size_t i = 0; i < nx; i++) {
            json_object *a = json_object_array_get_idx(ev, i);
            if (strcmp(json_object_get_string(get(a, "ph")), "X") != 0)
                continue;
            for (size_t j = i + 1; j < nx; j++) {
                json_object *b = json_object_array_get_idx(ev, j);
                if (strcmp(json_object_get_string(get(b, "ph")), "X") != 0 ||
                    geti(a, "tid") != geti(b, "tid"))
                    continue;
                assert_true(geti(a, "ts") + geti(a, "dur") <= geti(b, "ts") ||
                            geti(b, "ts") + geti(b, "dur") <= geti(a, "ts"));
            }
        }
        json_object_put(root);
        free(out);
    }
}

/* The layout view's errors name the column entry. */
static void test_layout_errors_name_the_entry(void **state)
{
    static const struct {
        const char *doc, *where;
    } cases[] = {
        {"[1]", "layout.tensors"},
        {"{\"tensors\": -1}", "layout.tensors"},
        {"{\"tensors\": 1, \"name\": [\"a\", \"b\"]}", "layout.name"},
        {"{\"tensors\": 1, \"name\": [3]}", "layout.name[0]"},
        {"{\"tensors\": 1, \"name\": [\"a\"], \"start\": [0], \"end\": [1], \"offset\": [-5], "
         "\"padded_bytes\": [1]}",
         "layout.offset[0]"},
        {"{\"tensors\": 1, \"name\": [\"a\"], \"start\": [0], \"end\": [1], \"offset\": [0], "
         "\"padded_bytes\": [1], \"kind\": {\"values\": [\"temp\"], \"index\": [1]}}",
         "layout.kind[0]"},
        {"{\"tensors\": 1, \"name\": [\"a\"], \"start\": [0], \"end\": [1], \"offset\": [0], "
         "\"padded_bytes\": [1], \"kind\": {\"values\": [\"temp\"], \"index\": [0]}}",
         "layout.shape"},
        {"{\"tensors\": 1, \"name\": [\"a\"], \"start\": [3], \"end\": [1], \"offset\": [0], "
         "\"padded_bytes\": [1], \"kind\": {\"values\": [\"temp\"], \"index\": [0]}, "
         "\"shape\": {\"values\": [null], \"index\": [0]}}",
         "layout.end[0]"},
    };
    char *out;
    size_t len;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(
            trace_from_layout(cases[i].doc, strlen(cases[i].doc), "x", &out, &len, NULL, &e),
            ERR_INVALID);
        assert_string_equal(e.where, cases[i].where);
        assert_null(out);
    }
    assert_int_equal(trace_from_layout("{", 1, "x", &out, &len, NULL, &e), ERR_INVALID);
}

/* A real plan's layout view: one slice per tensor with bytes, the kinds of the model. */
static void test_plan_layout_gives_one_slice_per_tensor(void **state)
{
    const char *model =
        "{\"name\":\"m\",\"chip\":\"v5e\",\"tensors\":["
        "{\"name\":\"w\",\"shape\":[256,256],\"dtype\":\"f32\",\"kind\":\"param\"},"
        "{\"name\":\"h\",\"shape\":[8,256],\"dtype\":\"bf16\",\"kind\":\"activation\","
        "\"live\":[0,2]},"
        "{\"name\":\"g\",\"shape\":[8,256],\"dtype\":\"bf16\",\"kind\":\"activation\","
        "\"live\":[2,3]},"
        "{\"name\":\"e\",\"shape\":[0,4],\"dtype\":\"f32\",\"kind\":\"temp\",\"live\":[0,1]}]}";
    struct plan_views v;
    struct trace_counts k;
    char *json, *out;
    size_t jlen, len, counts[3];
    struct err e;

    (void)state;
    assert_int_equal(plan_run(model, strlen(model), NULL, NULL, &json, &jlen, &v, NULL, &e),
                     ERR_OK);
    assert_int_equal(trace_from_layout(v.layout, v.layout_len, "m", &out, &len, &k, &e), ERR_OK);
    json_object *root = parse_trace(out, len, counts);
    /* e has no bytes: 3 slices. w lives over [0, 3): steps 0, 2, 3 -> 6 counters. w is live
     * throughout and h, g follow each other: 2 tracks. */
    assert_int_equal(counts[2], 3);
    assert_int_equal(counts[0], 6);
    assert_int_equal(k.tracks, 2);
    assert_int_equal(counts[1], 5);
    json_object *live = get(find(root, "C", "live bytes", 0), "args");
    assert_non_null(get(live, "param"));
    assert_non_null(get(live, "activation"));
    assert_null(get(live, "temp"));
    json_object_put(root);
    free(out);
    free(json);
    plan_views_free(&v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_tracks_and_counters_match_the_hand_count),
        cmocka_unit_test(test_tracks_never_overlap_and_match_max_live),
        cmocka_unit_test(test_layout_errors_name_the_entry),
        cmocka_unit_test(test_plan_layout_gives_one_slice_per_tensor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
