/*
 * test_advice.c - the advice of a plan that does not fit (server/planner/RESULT.md#advice):
 * on a hand-made model whose every change is worked out by hand, each item's peak_after is
 * that figure and equals a separate plan of the changed model (its what-if overrides
 * applied, planned with the advice's strategies), and the combination fits.
 */
#include <math.h>
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
#include "planner/plan_options.h"
#include "planner/recipe.h"
#include "planner/whatif.h"

/*
 * On v5e, f32 with (8,128) tiles, nothing padded, offsets 512-aligned. Steps 0..5:
 *   p      param      f32[256,128]  131072  [0, 6)
 *   opt    optimizer  f32[256,128]  131072  [0, 6)
 *   layers.0.h  activation f32[64,128] 32768  [0, 6)
 *   layers.1.h  activation f32[64,128] 32768  [1, 5)
 *   t      temp       f32[64,128]    32768  [2, 4)
 * Steps 2 and 3 hold all five: peak 360448 (352K).
 *   - remat every activation: each keeps its first step and a copy at its last (whatif.h):
 *     at most p, opt and one 32K tensor at any step: 294912 (288K);
 *   - remat layers.0.* (or layers.1.*): the other activation still spans steps 2-3: 327680;
 *   - activations in bf16 (16384 each): 131072 * 2 + 16384 * 2 + 32768 = 327680;
 *   - optimizer state in s8 (s8[256,128] with (32,128) tiles: 32768): 262144 (256K);
 *   - s8 optimizer and every activation rematerialised: p, opt, t: 196608 (192K);
 *   - the optimizer state in host memory (whatif.h's memory_space, moved whole): p and the
 *     three 32K tensors at steps 2-3: 229376 (224K); 131072 bytes out and back a step:
 *     host_bytes_per_step 262144, 1.6384e-05 s at v5e's cited 1.6e10 B/s;
 *   - every saved activation offloaded: each in HBM at its first and last step, as remat
 *     leaves it: 294912; their 65536 bytes out and back: 131072 a step, 8.192e-06 s;
 *   - at 200K nothing fits alone; the optimizer offload first (229376), then remat of every
 *     activation with it: p and one 32K tensor, 163840 (160K).
 */
static const char model[] =
    "{\"name\":\"advice\",\"chip\":\"v5e\",\"tensors\":["
    "{\"name\":\"p\",\"shape\":[256,128],\"dtype\":\"f32\",\"kind\":\"param\",\"live\":[0,6]},"
    "{\"name\":\"opt\",\"shape\":[256,128],\"dtype\":\"f32\",\"kind\":\"optimizer\","
    "\"live\":[0,6]},"
    "{\"name\":\"layers.0.h\",\"shape\":[64,128],\"dtype\":\"f32\",\"kind\":\"activation\","
    "\"live\":[0,6]},"
    "{\"name\":\"layers.1.h\",\"shape\":[64,128],\"dtype\":\"f32\",\"kind\":\"activation\","
    "\"live\":[1,5]},"
    "{\"name\":\"t\",\"shape\":[64,128],\"dtype\":\"f32\",\"kind\":\"temp\",\"live\":[2,4]}]}";

static json_object *plan(const char *input, size_t len, const char *capacity, const char *budget,
                         const char *strategies)
{
    struct plan_opts o = {.strategies = strategies, .budget = budget};
    struct err e;
    char *json = NULL;
    size_t n = 0;
    json_object *r;

    err_clear(&e);
    if (capacity != NULL && plan_opts_set(&o, "capacity", capacity, &e) != ERR_OK)
        fail_msg("capacity: %s", e.msg);
    if (plan_run(input, len, &o, NULL, &json, &n, NULL, NULL, &e) != ERR_OK)
        fail_msg("plan_run: %s", e.msg);
    r = json_tokener_parse(json);
    free(json);
    assert_non_null(r);
    return r;
}

static json_object *get(json_object *o, const char *key)
{
    json_object *v = NULL;

    if (!json_object_object_get_ex(o, key, &v))
        fail_msg("no member %s", key);
    return v;
}

static int64_t num(json_object *o, const char *key)
{
    return json_object_get_int64(get(o, key));
}

/* The peak of a separate plan of the model with overrides applied (what the plan page's
 * what-if link plans), with the advice's strategies and the same capacity. */
static json_object *separate_plan(const char *input, size_t len, json_object *overrides,
                                  const char *capacity, const char *strategies)
{
    const char *ov = json_object_to_json_string_ext(overrides, JSON_C_TO_STRING_PLAIN);
    struct whatif_result wr;
    struct err e;
    json_object *r;

    err_clear(&e);
    if (strstr(input, "\"train\"") != NULL) {
        /* a recipe: its recipe, mesh and chip members are one merge patch of it */
        json_object *v = NULL, *patch;
        struct recipe *rc = NULL;
        char *text = NULL;
        size_t n = 0;
        patch = json_object_object_get_ex(overrides, "recipe", &v) ? json_object_get(v)
                                                                   : json_object_new_object();
        if (json_object_object_get_ex(overrides, "mesh", &v))
            json_object_object_add(patch, "mesh", json_object_get(v));
        if (json_object_object_get_ex(overrides, "chip", &v))
            json_object_object_add(patch, "chip", json_object_get(v));
        const char *p = json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN);
        if (recipe_parse(input, len, &rc, &e) != ERR_OK ||
            recipe_merge(rc, p, strlen(p), &e) != ERR_OK ||
            recipe_text(rc, &text, &n, &e) != ERR_OK)
            fail_msg("recipe %s: %s", p, e.msg);
        r = plan(text, n, capacity, NULL, strategies);
        free(text);
        recipe_free(rc);
        json_object_put(patch);
    } else {
        if (whatif_apply(input, len, ov, strlen(ov), NULL, &wr, &e) != ERR_OK)
            fail_msg("whatif_apply %s: %s", ov, e.msg);
        r = plan(wr.model, wr.model_len, capacity, NULL, strategies);
        free(wr.model);
    }
    return r;
}

static int64_t separate_peak(const char *input, size_t len, json_object *overrides,
                             const char *capacity, const char *strategies, bool *fits)
{
    json_object *r = separate_plan(input, len, overrides, capacity, strategies), *s;
    int64_t peak;

    s = get(r, "summary");
    peak = num(s, "peak_bytes");
    *fits = json_object_get_boolean(get(s, "fits"));
    json_object_put(r);
    return peak;
}

/* Every item and the combination against a separate plan; returns the advice's items. */
static void check_against_separate_plans(const char *input, size_t len, json_object *adv,
                                         const char *capacity)
{
    const char *strategies = json_object_get_string(get(adv, "strategies"));
    json_object *items = get(adv, "items"), *combo = get(adv, "combination");
    bool fits;

    for (size_t k = 0; k < json_object_array_length(items); k++) {
        json_object *it = json_object_array_get_idx(items, k);
        int64_t peak = separate_peak(input, len, get(it, "overrides"), capacity, strategies, &fits);
        if (peak != num(it, "peak_after") || fits != json_object_get_boolean(get(it, "fits_after")))
            fail_msg("item %zu (%s): peak_after %lld, a separate plan %lld", k,
                     json_object_get_string(get(it, "change")), (long long)num(it, "peak_after"),
                     (long long)peak);
        assert_int_equal(num(it, "saves_bytes"), num(adv, "peak") - peak);
    }
    assert_int_equal(
        separate_peak(input, len, get(combo, "overrides"), capacity, strategies, &fits),
        num(combo, "peak_after"));
    assert_true(fits);
    assert_true(json_object_get_boolean(get(combo, "fits_after")));
}

static void test_each_change_is_planned_and_ranked(void **state)
{
    static const struct {
        const char *overrides;
        int64_t peak;
        bool fits;
    } want[] = {
        /* those that fit first, most saved first; then the rest, most saved first, ties in
         * the order they were made (remat, precision, offload) */
        {"{\"memory_space\":{\"optimizer\":\"host\"}}", 229376, true},
        {"{\"dtype\":{\"optimizer\":\"s8\"}}", 262144, true},
        {"{\"remat\":[\"activation\"]}", 294912, true},
        {"{\"memory_space\":{\"activation\":\"host\"}}", 294912, true},
        {"{\"remat\":[\"layers.0.*\"]}", 327680, false},
        {"{\"remat\":[\"layers.1.*\"]}", 327680, false},
        {"{\"dtype\":{\"activation\":\"bf16\"}}", 327680, false},
    };
    json_object *r = plan(model, sizeof(model) - 1, "300K", NULL, NULL), *adv, *items;

    (void)state;
    assert_int_equal(num(get(r, "summary"), "peak_bytes"), 360448);
    adv = get(r, "advice");
    assert_string_equal(json_object_get_string(get(adv, "reason")), "does not fit");
    assert_true(json_object_is_type(get(adv, "unavailable"), json_type_null));
    items = get(adv, "items");
    assert_int_equal(json_object_array_length(items), sizeof(want) / sizeof(want[0]));
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
        json_object *it = json_object_array_get_idx(items, k);
        const char *ov =
            json_object_to_json_string_ext(get(it, "overrides"), JSON_C_TO_STRING_PLAIN);
        if (strcmp(ov, want[k].overrides) != 0 || num(it, "peak_after") != want[k].peak ||
            json_object_get_boolean(get(it, "fits_after")) != want[k].fits)
            fail_msg("item %zu: %s peak %lld, wanted %s peak %lld", k, ov,
                     (long long)num(it, "peak_after"), want[k].overrides, (long long)want[k].peak);
    }
    /* remat's cost: the activations made again (both: 65536 bytes) */
    assert_int_equal(num(get(json_object_array_get_idx(items, 2), "cost"), "recompute_bytes"),
                     65536);
    /* the offloads': twice what the changed plan holds in host memory, and its time at v5e's
     * cited host link */
    for (size_t k = 0; k < 4; k += 3) {
        json_object *cost = get(json_object_array_get_idx(items, k), "cost");
        int64_t bytes = k == 0 ? 262144 : 131072;
        assert_string_equal(json_object_get_string(get(cost, "kind")), "host");
        assert_int_equal(num(cost, "host_bytes_per_step"), bytes);
        assert_true(json_object_get_double(get(cost, "host_seconds_per_step")) == bytes / 1.6e10);
        assert_true(json_object_get_double(get(cost, "host_link_bytes_per_s")) == 1.6e10);
        assert_non_null(
            strstr(json_object_get_string(get(cost, "host_link_source")), "Scaling Book"));
    }
    /* the best single item fits: it is the combination */
    assert_string_equal(json_object_to_json_string_ext(get(get(adv, "combination"), "items"),
                                                       JSON_C_TO_STRING_PLAIN),
                        "[0]");
    check_against_separate_plans(model, sizeof(model) - 1, adv, "300K");
    json_object_put(r);
}

/* At 200K no change fits alone: the optimizer in host memory (229376) first, then every
 * activation rematerialised with it (163840). */
static void test_the_smallest_combination_is_found_greedily(void **state)
{
    json_object *r = plan(model, sizeof(model) - 1, "200K", NULL, NULL), *adv, *combo;

    (void)state;
    adv = get(r, "advice");
    combo = get(adv, "combination");
    assert_string_equal(
        json_object_to_json_string_ext(get(combo, "overrides"), JSON_C_TO_STRING_PLAIN),
        "{\"remat\":[\"activation\"],\"memory_space\":{\"optimizer\":\"host\"}}");
    assert_int_equal(num(combo, "peak_after"), 163840);
    assert_true(num(adv, "replans") <= num(adv, "max_replans"));
    check_against_separate_plans(model, sizeof(model) - 1, adv, "200K");
    json_object_put(r);
}

/*
 * Under-sharded state (ZeRO / FSDP over one more axis). Mesh data 2 x model 2, on v5e, every
 * tensor live over [0, 4):
 *   w  param      f32[512,128] sharded ["data", null]: [256,128] a device, 131072
 *   g  grad       the same                                              131072
 *   o  optimizer  the same                                              131072
 *   r  param      f32[256,128] replicated                               131072
 *   a  activation f32[64,128]                                            32768
 * peak 557056. w, g and o sharded over model too, [["data","model"], null]: [128,128], 65536
 * each: 557056 - 3 * 65536 = 360448, which fits 400K (409600). ZeRO's traffic for it (n = 2,
 * (n - 1) / n of the bytes a pass): w twice (all-gathered for the forward and the backward)
 * 2 * 65536, g once (reduce-scattered) 65536, o none: 196608. r sharded over data (the
 * replicated item): 557056 - 65536 = 491520, traffic 2 * 65536 = 131072.
 */
static const char under[] =
    "{\"name\":\"under\",\"chip\":\"v5e\",\"mesh\":{\"data\":2,\"model\":2},\"tensors\":["
    "{\"name\":\"w\",\"shape\":[512,128],\"dtype\":\"f32\",\"kind\":\"param\","
    "\"sharding\":[\"data\",null],\"live\":[0,4]},"
    "{\"name\":\"g\",\"shape\":[512,128],\"dtype\":\"f32\",\"kind\":\"grad\","
    "\"sharding\":[\"data\",null],\"live\":[0,4]},"
    "{\"name\":\"o\",\"shape\":[512,128],\"dtype\":\"f32\",\"kind\":\"optimizer\","
    "\"sharding\":[\"data\",null],\"live\":[0,4]},"
    "{\"name\":\"r\",\"shape\":[256,128],\"dtype\":\"f32\",\"kind\":\"param\",\"live\":[0,4]},"
    "{\"name\":\"a\",\"shape\":[64,128],\"dtype\":\"f32\",\"kind\":\"activation\","
    "\"live\":[0,4]}]}";

static json_object *item_of(json_object *adv, const char *overrides)
{
    json_object *items = get(adv, "items");

    for (size_t k = 0; k < json_object_array_length(items); k++) {
        json_object *it = json_object_array_get_idx(items, k);
        if (strcmp(json_object_to_json_string_ext(get(it, "overrides"), JSON_C_TO_STRING_PLAIN),
                   overrides) == 0)
            return it;
    }
    fail_msg("no item %s", overrides);
    return NULL;
}

static void test_under_sharded_state_is_sharded_over_one_more_axis(void **state)
{
    json_object *r = plan(under, sizeof(under) - 1, "400K", NULL, NULL), *adv, *it;

    (void)state;
    assert_int_equal(num(get(r, "summary"), "peak_bytes"), 557056);
    adv = get(r, "advice");
    it = json_object_array_get_idx(get(adv, "items"), 0);
    assert_string_equal(
        json_object_to_json_string_ext(get(it, "overrides"), JSON_C_TO_STRING_PLAIN),
        "{\"sharding\":{\"w\":[[\"data\",\"model\"],null],\"g\":[[\"data\",\"model\"],null],"
        "\"o\":[[\"data\",\"model\"],null]}}");
    assert_int_equal(num(it, "peak_after"), 360448);
    assert_true(json_object_get_boolean(get(it, "fits_after")));
    assert_string_equal(json_object_get_string(get(get(it, "cost"), "kind")), "communication");
    assert_int_equal(num(get(it, "cost"), "comm_bytes_per_step"), 196608);
    it = item_of(adv, "{\"sharding\":{\"r\":[\"data\",null]}}");
    assert_int_equal(num(it, "peak_after"), 491520);
    assert_int_equal(num(get(it, "cost"), "comm_bytes_per_step"), 131072);
    check_against_separate_plans(under, sizeof(under) - 1, adv, "400K");
    json_object_put(r);
}

/*
 * The smallest mesh that fits, searched: w f32[4096,128] sharded over data (1 device) is
 * 2 MiB; against 300K (307200) data 8 holds [512,128], 262144, and data 4 [1024,128], 524288,
 * does not. The search plans x2 (no), x4096 (the most chips: yes), then x64, x8 (yes) and x4
 * (no): 5 plans. A separate plan of each says the same.
 */
static void test_the_smallest_mesh_that_fits_is_searched(void **state)
{
    static const char one[] =
        "{\"chip\":\"v5e\",\"mesh\":{\"data\":1},\"tensors\":[{\"name\":\"w\","
        "\"shape\":[4096,128],\"dtype\":\"f32\",\"kind\":\"param\",\"sharding\":[\"data\",null]}]}";
    json_object *r = plan(one, sizeof(one) - 1, "300K", NULL, NULL), *adv, *it, *ov;
    const char *strategies;
    bool fits;

    (void)state;
    adv = get(r, "advice");
    strategies = json_object_get_string(get(adv, "strategies"));
    it = item_of(adv, "{\"mesh\":{\"data\":8}}");
    assert_int_equal(num(it, "peak_after"), 262144);
    assert_true(json_object_get_boolean(get(it, "fits_after")));
    assert_non_null(strstr(json_object_get_string(get(it, "change")), "searched in 5 plans"));
    assert_string_equal(json_object_get_string(get(get(it, "cost"), "note")),
                        "the next smaller, data 4 (4x): peak 524288 bytes, does not fit");
    assert_int_equal(
        separate_peak(one, sizeof(one) - 1, get(it, "overrides"), "300K", strategies, &fits),
        262144);
    assert_true(fits);
    ov = json_tokener_parse("{\"mesh\":{\"data\":4}}");
    assert_int_equal(separate_peak(one, sizeof(one) - 1, ov, "300K", strategies, &fits), 524288);
    assert_false(fits);
    json_object_put(ov);
    json_object_put(r);
}

/* Over a budget (fits the chip), near the capacity, or far from both. */
static void test_advice_is_given_over_budget_or_near_and_only_then(void **state)
{
    json_object *r;

    (void)state;
    r = plan(model, sizeof(model) - 1, NULL, "300KB", NULL);
    assert_string_equal(json_object_get_string(get(get(r, "advice"), "reason")), "over budget");
    json_object_put(r);
    /* 360448 is above 9/10 of 380K (350208): near */
    r = plan(model, sizeof(model) - 1, "380K", NULL, NULL);
    assert_string_equal(json_object_get_string(get(get(r, "advice"), "reason")),
                        "within 10% of the capacity");
    assert_true(json_object_is_type(get(get(r, "advice"), "combination"), json_type_null));
    json_object_put(r);
    /* on v5e's 15.75G, nothing to advise */
    r = plan(model, sizeof(model) - 1, NULL, NULL, NULL);
    assert_true(json_object_is_type(get(r, "advice"), json_type_null));
    json_object_put(r);
}

/* A model too big for v5e: the smallest chip with more HBM that fits it. */
static void test_the_smallest_chip_that_fits(void **state)
{
    /* one 20 GiB f32 param: v5e (15.75G) is short; v4 (30.75G usable) holds it */
    static const char big[] = "{\"chip\":\"v5e\",\"tensors\":[{\"name\":\"w\",\"shape\":[40960,"
                              "131072],\"dtype\":\"f32\",\"kind\":\"param\"}]}";
    json_object *r = plan(big, sizeof(big) - 1, NULL, NULL, NULL), *items, *chip = NULL;

    (void)state;
    items = get(get(r, "advice"), "items");
    for (size_t k = 0; k < json_object_array_length(items); k++)
        if (strcmp(json_object_get_string(get(json_object_array_get_idx(items, k), "kind")),
                   "chip") == 0)
            chip = json_object_array_get_idx(items, k);
    assert_non_null(chip);
    assert_string_equal(
        json_object_to_json_string_ext(get(chip, "overrides"), JSON_C_TO_STRING_PLAIN),
        "{\"chip\":\"v4\"}");
    assert_true(json_object_get_boolean(get(chip, "fits_after")));
    json_object_put(r);
}

/* The case: Llama-3.1-8B trained with FSDP over 16 v5e chips (tests/data/recipes),
 * here against 8G: each change is a merge patch of the recipe (its fields, or the mesh),
 * planned for real, and a separate plan of the recipe so patched has the same peak. */
static void test_a_recipe_is_advised_by_its_fields(void **state)
{
    FILE *f = fopen("tests/data/recipes/llama-3.1-8b-fsdp16.json", "rb");
    char text[8192];
    size_t len;
    json_object *r, *adv, *items;
    bool remat = false, mesh = false;

    (void)state;
    assert_non_null(f);
    len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    r = plan(text, len, "8G", NULL, NULL);
    adv = get(r, "advice");
    assert_string_equal(json_object_get_string(get(adv, "reason")), "does not fit");
    items = get(adv, "items");
    assert_true(json_object_array_length(items) >= 4);
    for (size_t k = 0; k < json_object_array_length(items); k++) {
        json_object *it = json_object_array_get_idx(items, k), *ov = get(it, "overrides");
        const char *kind = json_object_get_string(get(it, "kind"));
        remat |= strcmp(kind, "offload") == 0 &&
                 strcmp(json_object_to_json_string_ext(ov, JSON_C_TO_STRING_PLAIN),
                        "{\"recipe\":{\"train\":{\"remat\":\"layer_input_offloaded\"}}}") == 0;
        mesh |= strcmp(kind, "mesh") == 0 &&
                strcmp(json_object_to_json_string_ext(ov, JSON_C_TO_STRING_PLAIN),
                       "{\"mesh\":{\"fsdp\":32}}") == 0;
    }
    assert_true(remat && mesh);
    /* the offload's host traffic: twice the offloaded bytes of a separate plan of it (each
     * layer's input out after its forward, back for its backward) */
    for (size_t k = 0; k < json_object_array_length(items); k++) {
        json_object *it = json_object_array_get_idx(items, k), *sep;
        if (strcmp(json_object_get_string(get(it, "kind")), "offload") != 0)
            continue;
        sep = separate_plan(text, len, get(it, "overrides"), "8G",
                            json_object_get_string(get(adv, "strategies")));
        assert_true(num(get(sep, "recipe"), "host_offloaded_bytes") > 0);
        assert_int_equal(num(get(it, "cost"), "host_bytes_per_step"),
                         2 * num(get(sep, "recipe"), "host_offloaded_bytes"));
        json_object_put(sep);
    }
    check_against_separate_plans(text, len, adv, "8G");
    json_object_put(r);
}

/* An item's recompute FLOPs by kind, or -1 when it is null; its note into note. */
static int64_t flops_of(json_object *items, const char *kind, const char **note)
{
    for (size_t k = 0; k < json_object_array_length(items); k++) {
        json_object *it = json_object_array_get_idx(items, k), *c = get(it, "cost");
        if (strcmp(json_object_get_string(get(it, "kind")), kind) != 0)
            continue;
        *note = json_object_get_string(get(c, "note"));
        return json_object_is_type(get(c, "recompute_flops"), json_type_int)
                   ? num(c, "recompute_flops")
                   : -1;
    }
    fail_msg("no %s item", kind);
    return -1;
}

/*
 * Recompute FLOPs by Kaplan et al.'s count (server/planner/SOURCES.md#kaplan-flops), for the
 * Llama-3.1-8B recipe under dots_saveable (every matmul's output kept) against 8G. N =
 * 8,030,261,248 - 2 x 128,256 x 4,096 = 6,979,588,096 non-embedding parameters; a token's forward:
 * layers 2N = 13,959,176,192, attention 2 x 32 x 4,096 x 32 x 128 = 1,073,741,824, logits 2 x 4,096
 * x 128,256 = 1,050,673,152. 16 x 4,096 = 65,536 tokens a step:
 *   - nothing_saveable recomputes layers and attention: 15,032,918,016 x 65,536 =
 *     985,197,315,096,576 FLOPs, of 3 x 16,083,591,168 x 65,536 a step: 0.3116;
 *   - chunked logits recompute the logits matmul: 1,050,673,152 x 65,536 = 68,856,915,689,472;
 *   - from dots_with_no_batch_dims_saveable (attention already recomputed) remat adds the
 *     layers' only: 13,959,176,192 x 65,536 = 914,828,570,918,912.
 * An MoE recipe (Mixtral) has none, and says why.
 */
static void test_recompute_flops_of_a_recipe(void **state)
{
    static const struct {
        const char *policy;
        int64_t remat;
    } cases[] = {{"dots_saveable", 985197315096576LL},
                 {"dots_with_no_batch_dims_saveable", 914828570918912LL}};
    FILE *f = fopen("tests/data/recipes/llama-3.1-8b-fsdp16.json", "rb");
    char text[8192], changed[8192], *at;
    const char *note = NULL;
    size_t len;
    json_object *r, *items;

    (void)state;
    assert_non_null(f);
    len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    at = strstr(text, "\"nothing_saveable\"");
    assert_non_null(at);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(changed, sizeof(changed), "%.*s\"%s\"%s", (int)(at - text), text, cases[i].policy,
                 at + strlen("\"nothing_saveable\""));
        r = plan(changed, strlen(changed), "8G", NULL, NULL);
        items = get(get(r, "advice"), "items");
        assert_int_equal(flops_of(items, "remat", &note), cases[i].remat);
        assert_int_equal(flops_of(items, "logits", &note), 68856915689472LL);
        for (size_t k = 0; k < json_object_array_length(items); k++) {
            json_object *c = get(json_object_array_get_idx(items, k), "cost");
            if (json_object_get_int64(get(c, "recompute_flops")) == 985197315096576LL)
                assert_true(fabs(json_object_get_double(get(c, "recompute_flops_fraction")) -
                                 15032918016.0 / (3 * 16083591168.0)) < 1e-6);
        }
        json_object_put(r);
    }
    /* under nothing_saveable the offload recomputes nothing more */
    r = plan(text, len, "8G", NULL, NULL);
    assert_int_equal(flops_of(get(get(r, "advice"), "items"), "offload", &note), 0);
    json_object_put(r);

    f = fopen("tests/data/recipes/mixtral-8x7b-expert.json", "rb");
    assert_non_null(f);
    len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    r = plan(text, len, "8G", NULL, NULL);
    assert_int_equal(flops_of(get(get(r, "advice"), "items"), "logits", &note), -1);
    assert_non_null(strstr(note, "MoE"));
    json_object_put(r);
}

/* pytorch/xla #1965 (tests/data/models/embedding-padding.json) in 7G: token_ids and gathered
 * (u32 and f32 [12582912,1], each padded to 6,442,450,944 bytes) and the table (134,217,728)
 * all live at step 0. token_ids stored as u32[98304,128] is 50,331,648 bytes: the peak
 * 6,442,450,944 + 134,217,728 + 50,331,648 = 6,627,000,320 fits; it is the first change. */
static void test_a_layout_fix_is_ranked_with_the_rest(void **state)
{
    FILE *f = fopen("tests/data/models/embedding-padding.json", "rb");
    char text[8192];
    size_t len;
    json_object *r, *adv, *first;

    (void)state;
    assert_non_null(f);
    len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    r = plan(text, len, "7G", NULL, NULL);
    adv = get(r, "advice");
    first = json_object_array_get_idx(get(adv, "items"), 0);
    assert_string_equal(json_object_get_string(get(first, "kind")), "layout");
    assert_string_equal(
        json_object_to_json_string_ext(get(first, "overrides"), JSON_C_TO_STRING_PLAIN),
        "{\"xla_shape\":{\"token_ids\":\"u32[98304,128]\"}}");
    assert_int_equal(num(first, "peak_after"), 6627000320);
    check_against_separate_plans(text, len, adv, "7G");
    json_object_put(r);
}

/* A CSV input takes no what-if: advice says so. */
static void test_inputs_without_what_ifs_say_why(void **state)
{
    static const char csv[] = "id,lower,upper,size\na,0,2,8\nb,1,3,8\n";
    json_object *r = plan(csv, sizeof(csv) - 1, "12B", NULL, NULL), *adv;

    (void)state;
    adv = get(r, "advice");
    assert_string_equal(json_object_get_string(get(adv, "reason")), "does not fit");
    assert_non_null(strstr(json_object_get_string(get(adv, "unavailable")), "minimalloc-csv"));
    assert_int_equal(json_object_array_length(get(adv, "items")), 0);
    json_object_put(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_change_is_planned_and_ranked),
        cmocka_unit_test(test_the_smallest_combination_is_found_greedily),
        cmocka_unit_test(test_advice_is_given_over_budget_or_near_and_only_then),
        cmocka_unit_test(test_the_smallest_chip_that_fits),
        cmocka_unit_test(test_under_sharded_state_is_sharded_over_one_more_axis),
        cmocka_unit_test(test_the_smallest_mesh_that_fits_is_searched),
        cmocka_unit_test(test_a_recipe_is_advised_by_its_fields),
        cmocka_unit_test(test_recompute_flops_of_a_recipe),
        cmocka_unit_test(test_a_layout_fix_is_ranked_with_the_rest),
        cmocka_unit_test(test_inputs_without_what_ifs_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
