/*
 * test_plan.c - plan_run / plan_validate / plan_buffers end to end on the library:
 * exact byte counts and suggestions from the real OOM reports in
 * server/planner/SOURCES.md#real-reports, per-device sharded sizes
 * (server/planner/SOURCES.md#per-device-layout), every input format, fit and overflow, properties
 * of random models (totals add up, padded >= logical, offsets never overlap in time x space), and
 * the error paths.
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

#include "jpath.h"
#include "plan_doc.h"
#include "rng.h"

#define JSONW_CHUNK_HINT (64 << 10) /* jsonw.h JSONW_SINK_CHUNK: the sink's piece size */

static json_object *plan_str(const char *text, const struct plan_opts *o)
{
    return plan_doc(text, strlen(text), o, NULL);
}

/* server/planner/SOURCES.md#real-reports: three real allocations, with the exact sizes the
 * reports print. */
static void test_real_report_sizes_are_reproduced(void **state)
{
    const char *text =
        "{\"name\":\"reports\",\"chip\":\"v4\",\"tensors\":["
        "{\"name\":\"ids\",\"xla_shape\":\"u32[12582912,1]{1,0:T(8,128)}\",\"kind\":\"temp\"},"
        "{\"name\":\"flowpm\",\"xla_shape\":\"s32[8388608,8,4]{2,1,0:T(8,128)}\"},"
        "{\"name\":\"xla3041\",\"xla_shape\":\"f32[29184,1,2560]{2,1,0:T(2,128)}\"}]}";
    json_object *r = plan_str(text, NULL);
    (void)state;

    /* pytorch/xla #1965: 48.00M unpadded, 6.00G (128.0x) */
    assert_int_equal(jint(r, "tensors[0].logical_bytes"), 50331648);
    assert_int_equal(jint(r, "tensors[0].padded_bytes"), 6442450944);
    assert_string_equal(jstr(r, "tensors[0].tiles"), "T(8,128)");
    assert_int_equal(jint(r, "tensors[0].padded_dims[1]"), 128);
    assert_string_equal(jstr(r, "tensors[0].confidence"), "given");
    /* flowpm #27: 1.00G -> 32.00G */
    assert_int_equal(jint(r, "tensors[1].logical_bytes"), 1073741824);
    assert_int_equal(jint(r, "tensors[1].padded_bytes"), 34359738368);
    /* pytorch/xla #3041: 285.00M -> 570.00M */
    assert_int_equal(jint(r, "tensors[2].logical_bytes"), 298844160);
    assert_int_equal(jint(r, "tensors[2].padded_bytes"), 597688320);

    assert_int_equal(jint(r, "summary.padded_bytes"), 6442450944 + 34359738368 + 597688320);
    assert_int_equal(jint(r, "summary.logical_bytes"), 50331648 + 1073741824 + 298844160);
    /* Everything lives for the whole program: the peak is the padded sum, exactly. */
    assert_int_equal(jint(r, "summary.peak_bytes"), jint(r, "summary.padded_bytes"));
    assert_int_equal(jint(r, "summary.capacity_bytes"), 33017561088); /* v4: 30.75G */
    assert_false(json_object_get_boolean(jget(r, "summary.fits")));
    assert_int_equal(jint(r, "summary.overflow_bytes"),
                     jint(r, "summary.peak_bytes") - 33017561088);

    /* Suggestions, biggest padding first, each sized exactly. */
    assert_int_equal(jint(r, "suggestions[0].tensor"), 1);
    assert_string_equal(jstr(r, "suggestions[0].suggested_shape"),
                        "s32[2097152,128]{1,0:T(8,128)}");
    assert_int_equal(jint(r, "suggestions[0].saves_bytes"), 34359738368 - 1073741824);
    assert_int_equal(jint(r, "suggestions[1].tensor"), 0);
    assert_string_equal(jstr(r, "suggestions[1].text"),
                        "minor dim 1 (size 1) pads to 128 under T(8,128); storing it as "
                        "u32[98304,128] saves 5.95G");
    assert_int_equal(jint(r, "suggestions[1].saves_bytes"), 6442450944 - 50331648);
    assert_int_equal(jint(r, "suggestions[2].tensor"), 2);
    assert_string_equal(jstr(r, "suggestions[2].action"), "merge-major");
    assert_int_equal(jint(r, "suggestions[2].saves_bytes"), 298844160);
    assert_non_null(strstr(jstr(r, "suggestions[2].text"),
                           "second-minor dim 1 (size 1) pads to 2 under T(2,128)"));
    json_object_put(r);
}

/* Per-device shapes: a [1024,256] f32 sharded 4 ways on its minor dim is [1024,64] per
 * device, which pads back to 128 lanes (server/planner/SOURCES.md#per-device-layout). */
static void test_sharded_tensor_pads_per_device(void **state)
{
    const char *text = "{\"chip\":\"v5p\",\"mesh\":{\"data\":4,\"model\":2},\"tensors\":["
                       "{\"name\":\"p\",\"shape\":[1024,256],\"dtype\":\"f32\",\"kind\":\"param\","
                       "\"sharding\":[\"model\",\"data\"]},"
                       "{\"name\":\"q\",\"shape\":[7,2],\"dtype\":\"f32\",\"kind\":\"param\","
                       "\"sharding\":[\"data\",\"model\"]}]}";
    json_object *r = plan_str(text, NULL);
    (void)state;
    assert_int_equal(jint(r, "model.devices"), 8);
    assert_int_equal(jint(r, "tensors[0].dims[0]"), 512);
    assert_int_equal(jint(r, "tensors[0].dims[1]"), 64);
    assert_int_equal(jint(r, "tensors[0].global_dims[1]"), 256);
    assert_string_equal(jstr(r, "tensors[0].sharding[1][0]"), "data");
    assert_int_equal(jint(r, "tensors[0].logical_bytes"), 512 * 64 * 4);
    assert_int_equal(jint(r, "tensors[0].padded_bytes"), 512 * 128 * 4);
    /* Sharding the minor dim re-introduces lane padding; sharding dim 0 over both axes
     * instead gives [128,256] per device with no padding. */
    assert_string_equal(jstr(r, "suggestions[0].action"), "reshard");
    assert_string_equal(jstr(r, "suggestions[0].suggested_shape"), "f32[128,256]{1,0:T(8,128)}");
    assert_int_equal(jint(r, "suggestions[0].saves_bytes"), 512 * 128 * 4 - 128 * 256 * 4);
    assert_int_equal(jint(r, "tensors[1].dims[0]"), 2); /* ceil(7/4) */
    assert_int_equal(jint(r, "tensors[1].dims[1]"), 1);
    assert_true(json_object_array_length(jget(r, "warnings")) >= 1);
    json_object_put(r);
}

/* Random models, RANDOM_ROUNDS of them from one seed, each test planning the same sequence. */
enum { RANDOM_ROUNDS = 8 };
#define RANDOM_SEED 12345u

/* Plans random model `round` (call rounds 0, 1, ... in order with *seed starting at
 * RANDOM_SEED): 20 + 10 x round tensors of mixed dtypes, ranks 1-4, dims 1-300, every third a
 * param and the rest activations, lifetimes within steps 0-30; on v5e with "best" in odd
 * rounds, on v4 with "xla-default,first-fit" in even ones. *n gets the tensor count. */
static json_object *plan_random(int round, uint64_t *seed, size_t *n, struct plan_summary *s)
{
    static const char *dtypes[] = {"f32", "bf16", "s8", "pred", "s32", "f16", "u8", "s4"};
    char *text = malloc(1 << 20);
    size_t len = 0;
    int count = 20 + round * 10;

    assert_non_null(text);
    *n = 0;
    len += (size_t)sprintf(text + len, "{\"chip\":\"%s\",\"tensors\":[", round % 2 ? "v5e" : "v4");
    for (int i = 0; i < count; i++) {
        uint64_t r = rng_splitmix64(seed);
        int rank = 1 + (int)(r % 4);
        len += (size_t)sprintf(text + len, "%s{\"name\":\"t%d\",\"dtype\":\"%s\",\"shape\":[",
                               i ? "," : "", i, dtypes[(r >> 8) % 8]);
        for (int d = 0; d < rank; d++)
            len += (size_t)sprintf(text + len, "%s%u", d ? "," : "",
                                   1 + (unsigned)(rng_splitmix64(seed) % 300));
        r = rng_splitmix64(seed);
        unsigned a = (unsigned)(r % 20), b = a + 1 + (unsigned)((r >> 8) % 10);
        len += (size_t)sprintf(text + len, "],\"kind\":\"%s\",\"live\":[%u,%u]}",
                               i % 3 ? "activation" : "param", a, b);
        (*n)++;
    }
    len += (size_t)sprintf(text + len, "]}");
    struct plan_opts o = {.strategies = round % 2 ? "best" : "xla-default,first-fit"};
    json_object *r = plan_doc(text, len, &o, s);
    free(text);
    return r;
}

/* Plans every random model and calls check with the result, its tensor count and the
 * plan_summary. */
static void for_each_random_plan(void (*check)(int round, json_object *r, size_t n,
                                               const struct plan_summary *s))
{
    uint64_t seed = RANDOM_SEED;
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        size_t n;
        struct plan_summary s;
        json_object *r = plan_random(round, &seed, &n, &s);
        assert_int_equal(json_object_array_length(jget(r, "tensors")), n);
        check(round, r, n, &s);
        json_object_put(r);
    }
}

/* Tensor i of result r: its padded bytes and offset. */
static json_object *tensor_at(json_object *r, size_t i, uint64_t *padded, uint64_t *offset)
{
    json_object *t = json_object_array_get_idx(jget(r, "tensors"), i);
    *padded = (uint64_t)jint(t, "padded_bytes");
    *offset = (uint64_t)jint(t, "offset");
    return t;
}

static void accounts_every_byte(int round, json_object *r, size_t n, const struct plan_summary *s)
{
    uint64_t sum_l = 0, sum_p = 0;
    (void)round;
    for (size_t i = 0; i < n; i++) {
        uint64_t pb, off;
        json_object *t = tensor_at(r, i, &pb, &off);
        uint64_t lb = (uint64_t)jint(t, "logical_bytes");
        assert_true(pb >= lb);
        assert_int_equal(jint(t, "padding_bytes"), pb - lb);
        sum_l += lb;
        sum_p += pb;
    }
    assert_int_equal(jint(r, "summary.logical_bytes"), sum_l);
    assert_int_equal(jint(r, "summary.padded_bytes"), sum_p);
    assert_int_equal(s->padded_bytes, sum_p);
    uint64_t kl = 0, kp = 0;
    json_object *kinds = jget(r, "summary.by_kind");
    struct json_object_iterator it = json_object_iter_begin(kinds);
    struct json_object_iterator end = json_object_iter_end(kinds);
    for (; !json_object_iter_equal(&it, &end); json_object_iter_next(&it)) {
        json_object *v = json_object_iter_peek_value(&it);
        kl += (uint64_t)jint(v, "logical_bytes");
        kp += (uint64_t)jint(v, "padded_bytes");
    }
    assert_int_equal(kl, sum_l);
    assert_int_equal(kp, sum_p);
}

/* Every byte is accounted for: each tensor's padded size is at least its logical size with
 * padding_bytes the difference, and the summary's totals, its per-kind totals and the
 * plan_summary are the sums over the tensors. */
static void test_random_plans_account_every_byte(void **state)
{
    (void)state;
    for_each_random_plan(accounts_every_byte);
}

static void places_aligned_disjoint_buffers(int round, json_object *r, size_t n,
                                            const struct plan_summary *s)
{
    uint64_t align = (uint64_t)jint(r, "packing.alignment");
    (void)s;
    for (size_t i = 0; i < n; i++) {
        uint64_t pb, off;
        json_object *t = tensor_at(r, i, &pb, &off);
        assert_int_equal(off % align, 0);
        for (size_t j = 0; j < i; j++) {
            uint64_t up, uo;
            json_object *u = tensor_at(r, j, &up, &uo);
            int64_t a0 = jint(t, "live[0]"), a1 = jint(t, "live[1]");
            int64_t b0 = jint(u, "live[0]"), b1 = jint(u, "live[1]");
            if (a0 < b1 && b0 < a1 && pb > 0 && up > 0 && off < uo + up && uo < off + pb)
                fail_msg("round %d: tensors %zu and %zu overlap", round, i, j);
        }
    }
}

/* Every offset is a multiple of the packing's alignment, and no two buffers live at the same
 * step share a byte. */
static void test_random_plans_place_aligned_disjoint_buffers(void **state)
{
    (void)state;
    for_each_random_plan(places_aligned_disjoint_buffers);
}

static void bounds_peak(int round, json_object *r, size_t n, const struct plan_summary *s)
{
    uint64_t top = 0;
    (void)round;
    for (size_t i = 0; i < n; i++) {
        uint64_t pb, off;
        tensor_at(r, i, &pb, &off);
        top = off + pb > top ? off + pb : top;
    }
    uint64_t peak = (uint64_t)jint(r, "summary.peak_bytes");
    assert_true(peak >= top);
    assert_true(peak >= (uint64_t)jint(r, "summary.lower_bound_bytes"));
    assert_int_equal(jint(r, "summary.fragmentation_bytes"),
                     peak - (uint64_t)jint(r, "summary.lower_bound_bytes"));
    assert_int_equal(peak, s->peak_bytes);
    json_object *heap = jget(r, "packing.timeline.heap_bytes");
    uint64_t hmax = 0;
    for (size_t q = 0; q < json_object_array_length(heap); q++) {
        uint64_t h = (uint64_t)json_object_get_int64(json_object_array_get_idx(heap, q));
        hmax = h > hmax ? h : hmax;
    }
    assert_int_equal(hmax, peak);
}

/* The peak covers the highest buffer top and is at least the lower bound, fragmentation is
 * the difference, and the timeline's highest heap and the plan_summary agree with it. */
static void test_random_plans_peak_bounds_and_fragmentation(void **state)
{
    (void)state;
    for_each_random_plan(bounds_peak);
}

static void test_safetensors_and_csv_inputs_are_detected_and_planned(void **state)
{
    static const char header[] = "{\"w\":{\"dtype\":\"BF16\",\"shape\":[4,1],"
                                 "\"data_offsets\":[0,8]},\"__metadata__\":{\"format\":\"pt\"}}";
    char st[sizeof(header) + 8] = {(char)(sizeof(header) - 1)};
    const char *csv = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\n";
    struct plan_opts o = {0};
    json_object *r;
    (void)state;

    memcpy(st + 8, header, sizeof(header) - 1);
    r = plan_doc(st, sizeof(st) - 1, NULL, NULL);
    assert_string_equal(jstr(r, "model.source_format"), "safetensors");
    assert_string_equal(jstr(r, "tensors[0].kind"), "param");
    assert_string_equal(jstr(r, "tensors[0].dtype"), "bf16");
    /* bf16[4,1]: second-minor 4 -> T(4,128)(2,1) rule, minor 1 -> 128: 4*128*2 bytes */
    assert_int_equal(jint(r, "tensors[0].padded_bytes"), 1024);
    json_object_put(r);

    r = plan_str(csv, NULL);
    assert_string_equal(jstr(r, "model.source_format"), "minimalloc-csv");
    assert_true(json_object_is_type(jget(r, "chip"), json_type_null));
    assert_true(json_object_is_type(jget(r, "summary.capacity_bytes"), json_type_null));
    assert_true(json_object_get_boolean(jget(r, "summary.fits")));
    assert_true(json_object_is_type(jget(r, "tensors[0].dtype"), json_type_null));
    assert_int_equal(jint(r, "tensors[3].live[1]"), 21);
    assert_int_equal(jint(r, "summary.peak_bytes"), 8); /* MiniMalloc input.12: b1|b2 + b3 */
    assert_int_equal(jint(r, "packing.alignment"), 1);
    json_object_put(r);

    r = plan_str("\xEF\xBB\xBF {\"tensors\":[]}", NULL); /* a byte order mark is skipped */
    assert_int_equal(jint(r, "summary.tensors"), 0);
    assert_true(json_object_is_type(jget(r, "summary.strategy"), json_type_null));
    json_object_put(r);

    o.capacity = 7;
    struct plan_summary s;
    r = plan_doc(csv, strlen(csv), &o, &s);
    assert_false(s.fits);
    assert_int_equal(jint(r, "summary.overflow_bytes"), 1);
    json_object_put(r);
}

/* plan_opts override the model's own options; the model's options apply otherwise. */
static void test_plan_opts_override_the_models_options(void **state)
{
    const char *text = "{\"chip\":\"v5e\",\"options\":{\"capacity\":1000,\"alignment\":2048,"
                       "\"strategies\":\"first-fit\"},\"tensors\":["
                       "{\"name\":\"a\",\"shape\":[8,128],\"dtype\":\"f32\"},"
                       "{\"name\":\"b\",\"shape\":[8,128],\"dtype\":\"f32\"}]}";
    struct plan_opts o = {0};
    struct plan_summary s;
    json_object *r = plan_doc(text, strlen(text), NULL, &s);
    (void)state;
    assert_false(s.fits);
    assert_int_equal(s.capacity_bytes, 1000);
    assert_int_equal(jint(r, "packing.alignment"), 2048);
    assert_string_equal(jstr(r, "packing.chosen"), "first-fit");
    assert_int_equal(json_object_array_length(jget(r, "packing.strategies")), 1);
    json_object_put(r);

    o.capacity = 1u << 20;
    o.alignment = 512;
    o.strategies = "xla-spatial,xla-temporal";
    o.name = "renamed";
    r = plan_doc(text, strlen(text), &o, &s);
    assert_true(s.fits);
    assert_string_equal(s.name, "renamed");
    assert_int_equal(jint(r, "summary.headroom_bytes"), (1 << 20) - 8192);
    assert_int_equal(json_object_array_length(jget(r, "packing.strategies")), 2);
    json_object_put(r);
}

static void test_validate_and_buffers_agree_with_the_model(void **state)
{
    const char *text = "{\"chip\":\"v4\",\"tensors\":["
                       "{\"name\":\"a\",\"shape\":[3,100],\"dtype\":\"f32\",\"live\":[0,2]},"
                       "{\"name\":\"z\",\"shape\":[0,100],\"dtype\":\"f32\"},"
                       "{\"name\":\"b\",\"shape\":[1000],\"dtype\":\"bf16\",\"live\":[1,4]}]}";
    struct plan_summary s;
    struct plan_buffers b;
    struct err e;
    (void)state;
    assert_int_equal(plan_validate(text, strlen(text), NULL, NULL, &s, &e), ERR_OK);
    assert_int_equal(s.tensors, 3);
    assert_string_equal(s.chip, "v4");
    assert_string_equal(s.source_format, "json");
    assert_int_equal(s.peak_bytes, 0);
    assert_int_equal(s.logical_bytes, 3 * 100 * 4 + 1000 * 2);
    assert_int_equal(plan_buffers(text, strlen(text), NULL, NULL, &b, &e), ERR_OK);
    assert_int_equal(b.n, 2); /* the zero-byte tensor is not a buffer */
    assert_string_equal(b.names[1], "b");
    assert_int_equal(b.alignment, 512);
    assert_int_equal(b.capacity, 33017561088);
    assert_int_equal(b.bufs[0].lower, 0);
    assert_int_equal(b.bufs[0].upper, 2);
    assert_int_equal(b.bufs[1].upper, 4);
    for (size_t i = 0; i < b.n; i++)
        assert_int_equal(b.bufs[i].size % 512, 0);
    plan_buffers_free(&b);
}

/* The search strategies' default time by size: 2 s up to 2000 buffers, then 2 s x 2000 /
 * buffers, at least 0.1 s, said in a warning; a time limit given is kept, and a list
 * without a search strategy is not told. n tensors of one step each: the search stops at
 * once (every packing is at the lower bound), so only the warning is measured here. */
static bool warned_budget(size_t n, const struct plan_opts *o, const char *want)
{
    size_t cap = n * 80 + 64, len = 0;
    char *text = malloc(cap);
    bool found = false;

    assert_non_null(text);
    len += (size_t)sprintf(text, "{\"tensors\":[");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(text + len,
                               "%s{\"name\":\"t%zu\",\"shape\":[8,128],\"dtype\":\"f32\","
                               "\"live\":[%zu,%zu]}",
                               i ? "," : "", i, i, i + 1);
    len += (size_t)sprintf(text + len, "]}");
    json_object *r = plan_doc(text, len, o, NULL), *w = jget(r, "warnings");
    for (size_t k = 0; k < json_object_array_length(w); k++)
        found |= strstr(json_object_get_string(json_object_array_get_idx(w, k)),
                        "the search strategies' time limit is") != NULL &&
                 (want == NULL ||
                  strstr(json_object_get_string(json_object_array_get_idx(w, k)), want) != NULL);
    json_object_put(r);
    free(text);
    return found;
}

static void test_search_time_is_budgeted_by_size(void **state)
{
    struct plan_opts search = {.strategies = "xla-spatial,tpuplan-search"};
    struct plan_opts given = {.strategies = "xla-spatial,tpuplan-search", .time_limit_s = 1};
    struct plan_opts greedy = {.strategies = "xla-spatial"};
    (void)state;

    assert_false(warned_budget(2000, &search, NULL));
    assert_true(warned_budget(2001, &search, "1.999 s each, the default for 2001 buffers"));
    assert_true(warned_budget(20000, &search, "0.200 s each, the default for 20000 buffers"));
    assert_true(warned_budget(50000, &search, "0.100 s each, the default for 50000 buffers"));
    assert_false(warned_budget(2001, &given, NULL));
    assert_false(warned_budget(2001, &greedy, NULL));
}

/* More segments than the timeline keeps: downsampled by maximum to at most 4096. */
static void test_timeline_is_downsampled_by_maximum(void **state)
{
    size_t cap = 6000 * 90, len = 0;
    char *text = malloc(cap);
    struct plan_opts o = {.strategies = "xla-spatial"};
    (void)state;
    len += (size_t)sprintf(text, "{\"tensors\":[");
    for (int i = 0; i < 6000; i++)
        len += (size_t)sprintf(text + len,
                               "%s{\"name\":\"t%d\",\"shape\":[8,%d],\"dtype\":"
                               "\"f32\",\"live\":[%d,%d]}",
                               i ? "," : "", i, i == 4321 ? 1280 : 128, i, i + 1);
    len += (size_t)sprintf(text + len, "]}");
    json_object *r = plan_doc(text, len, &o, NULL);
    json_object *tl = jget(r, "packing.timeline");
    size_t k = json_object_array_length(jget(tl, "step"));
    assert_true(k <= 4096 && k >= 2048);
    assert_true(json_object_get_boolean(jget(tl, "downsampled")));
    assert_int_equal(json_object_array_length(jget(tl, "live_bytes")), k);
    uint64_t mx = 0;
    for (size_t i = 0; i < k; i++) {
        uint64_t v =
            (uint64_t)json_object_get_int64(json_object_array_get_idx(jget(tl, "live_bytes"), i));
        mx = v > mx ? v : mx;
    }
    assert_int_equal(mx, 8 * 1280 * 4); /* the one big tensor survives downsampling */
    assert_int_equal(jint(r, "packing.peak.step"), 4321);
    assert_int_equal(jint(r, "packing.peak.buffers[0]"), 4321);
    json_object_put(r);
    free(text);
}

struct bad {
    const char *text;
    struct plan_opts o;
    int code;
    const char *where;
    const char *msg;
};

/* Each case fails plan_run with its code and message (and its where, when one is given),
 * and writes no result. */
static void expect_plan_errors(const struct bad *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct plan_limits l;
        struct err e;
        char *out = NULL;
        size_t out_len;
        plan_limits_default(&l);
        err_clear(&e);
        int rc = plan_run(cases[i].text, strlen(cases[i].text), &cases[i].o, &l, &out, &out_len,
                          NULL, NULL, &e);
        if (rc != cases[i].code || strstr(e.msg, cases[i].msg) == NULL ||
            (cases[i].where[0] != '\0' && strcmp(e.where, cases[i].where) != 0))
            fail_msg("case %zu: got %d \"%s\" \"%s\"", i, rc, e.where, e.msg);
        assert_null(out);
    }
}

/* An unknown chip (in the model or the options), an unknown strategy, an alignment that is
 * not a power of two and a negative time limit are rejected naming the option. */
static void test_bad_options_are_rejected_naming_the_option(void **state)
{
    const struct bad cases[] = {
        {"{\"chip\":\"v9\",\"tensors\":[]}", {0}, ERR_NOTFOUND, "chip", "unknown chip \"v9\""},
        {"{\"tensors\":[]}", {.chip = "h100"}, ERR_NOTFOUND, "chip", "unknown chip \"h100\""},
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"}]}",
         {.strategies = "xla-spatial,magic"},
         ERR_NOTFOUND,
         "strategies",
         "unknown strategy \"magic\""},
        {"{\"tensors\":[]}",
         {.alignment = 3},
         ERR_INVALID,
         "alignment",
         "alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"3\""},
        {"{\"tensors\":[]}",
         {.time_limit_s = -1},
         ERR_INVALID,
         "time_limit",
         "time_limit: must be above 0 and at most 3600 s, got \"-1\""},
    };
    (void)state;
    expect_plan_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

/* A model's own "options" go through the plan options' table (plan_options.h): the grammar
 * of every other surface (a capacity of "16GiB", a time limit of "500ms", mem_fraction a
 * number, preallocate a boolean), and the caller's options win over them. */
static void test_model_options(void **state)
{
    static const char model[] =
        "{\"chip\":\"v5e\",\"tensors\":[{\"name\":\"w\",\"shape\":[4,128],\"dtype\":"
        "\"f32\"}],\"options\":{\"capacity\":\"16GiB\",\"time_limit\":\"500ms\",\"strategies\":"
        "\"xla-spatial\",\"alignment\":\"1K\",\"budget\":\"0.5\",\"mem_fraction\":0.5,"
        "\"preallocate\":false}}";
    struct plan_opts o = {.capacity = 1u << 30, .mem_fraction = 0.25};
    json_object *r;

    (void)state;
    r = plan_str(model, NULL);
    assert_int_equal(jint(r, "summary.capacity_bytes"), 17179869184);
    assert_int_equal(jint(r, "summary.budget_bytes"), 8589934592); /* 0.5 of 16GiB */
    assert_int_equal(jint(r, "packing.alignment"), 1024);
    assert_int_equal(json_object_array_length(jget(r, "packing.strategies")), 1);
    assert_string_equal(jstr(r, "packing.strategies[0].name"), "xla-spatial");
    assert_true(json_object_get_double(jget(r, "packing.runtime.memory_fraction")) == 0.5);
    assert_false(json_object_get_boolean(jget(r, "packing.runtime.preallocate")));
    assert_false(json_object_get_boolean(jget(r, "packing.runtime.jax_gpu_defaults")));
    json_object_put(r);
    r = plan_str(model, &o); /* the caller's capacity and mem_fraction, the model's others */
    assert_int_equal(jint(r, "summary.capacity_bytes"), 1073741824);
    assert_int_equal(jint(r, "summary.budget_bytes"), 536870912);
    assert_true(json_object_get_double(jget(r, "packing.runtime.memory_fraction")) == 0.25);
    assert_false(json_object_get_boolean(jget(r, "packing.runtime.preallocate")));
    json_object_put(r);
}

#define WITH_OPTIONS(opts) "{\"tensors\":[],\"options\":{" opts "}}"

/* Each model option refused with the table's message, naming options.<key>. */
static void test_bad_model_options(void **state)
{
    const struct bad cases[] = {
        {WITH_OPTIONS("\"alignment\":3"),
         {0},
         ERR_INVALID,
         "options.alignment",
         "options.alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"3\""},
        {WITH_OPTIONS("\"capacity\":-1"),
         {0},
         ERR_INVALID,
         "options.capacity",
         "options.capacity: \"-1\" is not a byte count (12, 64M, 1.5GiB: K/M/G/T are powers of "
         "1024)"},
        {WITH_OPTIONS("\"capacity\":1.5e9"),
         {0},
         ERR_INVALID,
         "options.capacity",
         "options.capacity: must be a whole number or a string, got a non-integer number"},
        {WITH_OPTIONS("\"capacity\":\"0.3K\""),
         {0},
         ERR_INVALID,
         "options.capacity",
         "options.capacity: \"0.3K\" is not a whole number of bytes"},
        {WITH_OPTIONS("\"time_limit\":4000"),
         {0},
         ERR_INVALID,
         "options.time_limit",
         "options.time_limit: must be above 0 and at most 3600 s, got \"4000\""},
        {WITH_OPTIONS("\"time_limit\":\"2x\""),
         {0},
         ERR_INVALID,
         "options.time_limit",
         "options.time_limit: \"2x\" is not a duration"},
        {WITH_OPTIONS("\"strategy\":\"x\""),
         {0},
         ERR_INVALID,
         "options",
         "options: unknown field \"strategy\" (known: strategies, capacity, time_limit, "
         "alignment, budget, runtime, mem_fraction, preallocate, reading, order)"},
        {WITH_OPTIONS("\"goal\":\"fit\""),
         {0},
         ERR_INVALID,
         "options",
         "options: unknown field \"goal\""},
        {WITH_OPTIONS("\"budget\":14000000000"),
         {0},
         ERR_INVALID,
         "options.budget",
         "options.budget: must be a string, got an integer"},
        {WITH_OPTIONS("\"preallocate\":\"yes\""),
         {0},
         ERR_INVALID,
         "options.preallocate",
         "options.preallocate: must be true or false, got \"yes\""},
        {WITH_OPTIONS("\"strategies\":\"magic\""),
         {0},
         ERR_NOTFOUND,
         "options.strategies",
         "options.strategies: unknown strategy \"magic\""},
    };
    (void)state;
    expect_plan_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

/* Input that is no known format, a format name no importer has, JSON that is not an object,
 * JSON given as CSV and CSV rows with a bad or inverted lifetime are rejected. */
static void test_unrecognized_and_malformed_input_is_rejected(void **state)
{
    const struct bad cases[] = {
        {"hello", {0}, ERR_INVALID, "", "unrecognized input"},
        {"[1,2]", {0}, ERR_INVALID, "", "top level must be an object"},
        {"", {0}, ERR_INVALID, "", "unrecognized input"},
        {"{\"tensors\":[]}", {.format = "minimalloc-csv"}, ERR_INVALID, "", ""},
        {"{\"tensors\":[]}",
         {.format = "yaml"},
         ERR_NOTFOUND,
         "format",
         "format: unknown input format \"yaml\" (known: auto, safetensors, recipe, json, "},
        {"id,lower,upper,size\nb1,5,3,4\n", {0}, ERR_INVALID, "", "lower"},
        {"id,lower,upper,size\nb1,x,3,4\n", {0}, ERR_INVALID, "", ""},
    };
    (void)state;
    expect_plan_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

/* A model whose total byte count passes 2^64 is an overflow naming the tensor where it does,
 * never a wrapped total. */
static void test_total_byte_overflow_names_the_tensor(void **state)
{
    const struct bad cases[] = {
        /* five tensors of 2^62 bytes each: the total reaches 2^64 at the fourth */
        {"{\"tensors\":[{\"name\":\"a\",\"shape\":[1152921504606846976],\"dtype\":\"f32\"},"
         "{\"name\":\"b\",\"shape\":[1152921504606846976],\"dtype\":\"f32\"},"
         "{\"name\":\"c\",\"shape\":[1152921504606846976],\"dtype\":\"f32\"},"
         "{\"name\":\"d\",\"shape\":[1152921504606846976],\"dtype\":\"f32\"},"
         "{\"name\":\"e\",\"shape\":[1152921504606846976],\"dtype\":\"f32\"}]}",
         {0},
         ERR_OVERFLOW,
         "tensors[3]",
         "tensors[3] \"d\": the total byte count passes"},
    };
    (void)state;
    expect_plan_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

/* plan_validate refuses input longer than the limit. */
static void test_validate_rejects_input_over_the_limit(void **state)
{
    struct plan_limits l;
    struct err e;
    (void)state;
    plan_limits_default(&l);
    l.max_input_bytes = 8;
    assert_int_equal(plan_validate("{\"tensors\":[]}", 14, NULL, &l, NULL, &e), ERR_LIMIT);
}

/* Names with quotes, backslashes and control characters survive the result writer. */
static void test_names_with_escapes_survive_the_writer(void **state)
{
    const char *text =
        "{\"name\":\"q\\\"m\",\"tensors\":[{\"name\":\"a\\\"b\\\\c\\n\\u0001\\u00e9\","
        "\"shape\":[2],\"dtype\":\"f32\",\"tags\":[\"</script>\"]}]}";
    json_object *r = plan_str(text, NULL);
    (void)state;
    assert_string_equal(jstr(r, "model.name"), "q\"m");
    assert_string_equal(jstr(r, "tensors[0].name"), "a\"b\\c\n\x01\xc3\xa9");
    assert_string_equal(jstr(r, "tensors[0].tags[0]"), "</script>");
    json_object_put(r);
}

struct collect {
    char *buf;
    size_t len, cap;
    size_t calls, fail_after; /* fail_after: the call that fails (0: none) */
};

static int collect(void *ctx, const char *buf, size_t n)
{
    struct collect *c = ctx;
    if (c->fail_after != 0 && ++c->calls >= c->fail_after)
        return ERR_LIMIT;
    if (c->len + n + 1 > c->cap) {
        c->cap = (c->len + n + 1) * 2;
        c->buf = realloc(c->buf, c->cap);
        assert_non_null(c->buf);
    }
    memcpy(c->buf + c->len, buf, n);
    c->len += n;
    c->buf[c->len] = '\0';
    return ERR_OK;
}

/* The streamed pretty result is laid out exactly as json-c pretty-prints it (what `tpuplan
 * plan` printed when it re-read the result): json-c re-printing it changes no byte, with
 * the escapes that differ between the two (\b \f \r) and 1,500 tensors (many chunks). */
static void test_stream_is_json_c_pretty(void **state)
{
    const char *head = "{\"name\":\"q\\b\\f\\r\\u0001/\\\"\\\\\u00e9\",\"tensors\":[";
    size_t cap = 1500 * 80 + 256, len = 0;
    char *text = malloc(cap);
    struct collect c = {0};
    struct plan_sink sink = {collect, &c, true, false};
    struct plan_views v;
    struct plan_summary s;
    struct err e;
    (void)state;

    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "%s", head);
    for (int i = 0; i < 1500; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "%s{\"name\":\"t%d\",\"shape\":[%d,128],\"dtype\":\"bf16\","
                                "\"live\":[%d,%d]}",
                                i ? "," : "", i, 1 + i % 7, i / 3, i / 3 + 2);
    len += (size_t)snprintf(text + len, cap - len, "]}");
    assert_int_equal(plan_run_stream(text, len, NULL, NULL, &sink, NULL, &s, &e), ERR_OK);
    assert_true(c.len > 4 * JSONW_CHUNK_HINT);
    json_object *doc = json_tokener_parse(c.buf);
    assert_non_null(doc);
    assert_string_equal(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE),
                        c.buf);
    assert_string_equal(jstr(doc, "model.name"), "q\b\f\r\x01/\"\\\xc3\xa9");
    json_object_put(doc);

    /* summary_only: the whole document, the summary view alone (what the CLI reads). */
    free(c.buf);
    c = (struct collect){0};
    sink.summary_only = true;
    assert_int_equal(plan_run_stream(text, len, NULL, NULL, &sink, &v, &s, &e), ERR_OK);
    assert_true(c.len > 4 * JSONW_CHUNK_HINT);
    assert_non_null(v.summary);
    assert_non_null(strstr(v.summary, "\"summary\":"));
    assert_null(v.layout);
    plan_views_free(&v);
    free(c.buf);
    c = (struct collect){0};
    sink.summary_only = false;
    assert_int_equal(plan_run_stream(text, len, NULL, NULL, &sink, &v, &s, &e), ERR_OK);
    assert_non_null(v.summary);
    assert_non_null(v.layout);
    plan_views_free(&v);

    /* A sink that fails stops the plan with its code. */
    free(c.buf);
    c = (struct collect){.fail_after = 2};
    assert_int_equal(plan_run_stream(text, len, NULL, NULL, &sink, NULL, &s, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "could not be written"));
    free(c.buf);
    free(text);
}

/* One dictionary column of the layout view, decoded for tensor i: the string, or NULL for
 * a null value. */
static const char *dict_at(json_object *layout, const char *col, size_t i)
{
    json_object *d, *values, *index;

    assert_true(json_object_object_get_ex(layout, col, &d));
    assert_true(json_object_object_get_ex(d, "values", &values));
    assert_true(json_object_object_get_ex(d, "index", &index));
    json_object *v = json_object_array_get_idx(
        values, (size_t)json_object_get_int64(json_object_array_get_idx(index, i)));
    return v == NULL ? NULL : json_object_get_string(v);
}

static json_object *parse_doc(const char *text)
{
    json_object *doc = json_tokener_parse(text);
    assert_non_null(doc);
    return doc;
}

/* The layout view's dictionary columns. */
static const char *const view_dicts[] = {"kind", "shape", "layout_source", "confidence"};

/* Row i of the layout view against tensor t of the result: every column agrees. */
static void check_layout_row(json_object *lay, json_object *t, size_t i)
{
    static const char *const nums[] = {"offset", "padded_bytes", "logical_bytes"};
    json_object *x, *live, *tags, *ltags, *lt;
    char key[24];

    assert_true(json_object_object_get_ex(t, "live", &live));
    assert_true(json_object_object_get_ex(lay, "name", &x));
    assert_string_equal(json_object_get_string(json_object_array_get_idx(x, i)), jstr(t, "name"));
    assert_true(json_object_object_get_ex(lay, "start", &x));
    assert_int_equal(json_object_get_int64(json_object_array_get_idx(x, i)),
                     json_object_get_int64(json_object_array_get_idx(live, 0)));
    assert_true(json_object_object_get_ex(lay, "end", &x));
    assert_int_equal(json_object_get_int64(json_object_array_get_idx(x, i)),
                     json_object_get_int64(json_object_array_get_idx(live, 1)));
    for (size_t f = 0; f < 3; f++) {
        assert_true(json_object_object_get_ex(lay, nums[f], &x));
        assert_int_equal(json_object_get_int64(json_object_array_get_idx(x, i)), jint(t, nums[f]));
    }
    for (size_t c = 0; c < 4; c++) {
        const char *want =
            json_object_object_get_ex(t, view_dicts[c], &x) ? json_object_get_string(x) : NULL;
        const char *got = dict_at(lay, view_dicts[c], i);
        if (want == NULL)
            assert_null(got);
        else
            assert_string_equal(got, want);
    }
    snprintf(key, sizeof(key), "%zu", i);
    assert_true(json_object_object_get_ex(lay, "tags", &ltags));
    if (json_object_object_get_ex(t, "tags", &tags)) {
        assert_true(json_object_object_get_ex(ltags, key, &lt));
        assert_true(json_object_equal(tags, lt));
    } else {
        assert_false(json_object_object_get_ex(ltags, key, &lt));
    }
}

/* The layout view's dictionaries: values distinct, sorted, null last. */
static void check_dictionaries(json_object *lay)
{
    for (size_t c = 0; c < 4; c++) {
        json_object *d, *values;
        assert_true(json_object_object_get_ex(lay, view_dicts[c], &d));
        assert_true(json_object_object_get_ex(d, "values", &values));
        for (size_t i = 1; i < json_object_array_length(values); i++) {
            json_object *a = json_object_array_get_idx(values, i - 1);
            json_object *b = json_object_array_get_idx(values, i);
            assert_non_null(a);
            if (b != NULL)
                assert_true(strcmp(json_object_get_string(a), json_object_get_string(b)) < 0);
        }
    }
}

/*
 * The views plan_run writes beside the result: the summary view is the result without its
 * tensors array (equal as JSON, key for key), and every column of the layout view agrees
 * with the result's tensors, for a model (with tags and shapes) and a MiniMalloc CSV (no
 * shapes: null in the dictionaries, sorted last). Dictionary values are distinct and
 * sorted.
 */
static void test_views_agree_with_the_result(void **state)
{
    static const char *const inputs[] = {
        "{\"name\":\"v\",\"chip\":\"v4\",\"tensors\":["
        "{\"name\":\"w\",\"shape\":[4,128],\"dtype\":\"f32\",\"kind\":\"param\"},"
        "{\"name\":\"x\",\"shape\":[8,128],\"dtype\":\"bf16\",\"kind\":\"activation\","
        "\"live\":[0,2],\"tags\":[\"layer0\",\"attn\"]},"
        "{\"name\":\"y\",\"shape\":[8,128],\"dtype\":\"bf16\",\"live\":[1,3]},"
        "{\"name\":\"z\",\"shape\":[4,128],\"dtype\":\"f32\",\"kind\":\"param\"}]}",
        "id,lower,upper,size\nb0,0,3,4\nb1,3,9,4\nb2,0,9,4\nb3,9,21,4\nb4,0,21,4\n",
    };
    struct plan_limits l;

    (void)state;
    plan_limits_default(&l);
    for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
        struct plan_opts o = {.strategies = "xla-default"};
        struct plan_views v;
        struct err e;
        char *out = NULL;
        size_t out_len = 0;
        json_object *res, *sum, *lay, *tensors;

        assert_int_equal(
            plan_run(inputs[k], strlen(inputs[k]), &o, &l, &out, &out_len, &v, NULL, &e), ERR_OK);
        assert_int_equal(strlen(v.summary), v.summary_len);
        assert_int_equal(strlen(v.layout), v.layout_len);
        res = parse_doc(out);
        sum = parse_doc(v.summary);
        lay = parse_doc(v.layout);
        assert_true(json_object_object_get_ex(res, "tensors", &tensors));
        tensors = json_object_get(tensors);
        json_object_object_del(res, "tensors");
        assert_true(json_object_equal(res, sum));
        size_t n = json_object_array_length(tensors);
        assert_int_equal(jint(lay, "tensors"), n);
        for (size_t i = 0; i < n; i++)
            check_layout_row(lay, json_object_array_get_idx(tensors, i), i);
        check_dictionaries(lay);
        if (k == 1) /* CSV: no shapes at all */
            assert_string_equal(strstr(v.layout, "\"shape\":"),
                                "\"shape\":{\"values\":[null],\"index\":[0,0,0,0,0]},"
                                "\"layout_source\":{\"values\":[null],\"index\":[0,0,0,0,0]},"
                                "\"confidence\":{\"values\":[null],\"index\":[0,0,0,0,0]},"
                                "\"op_name\":{\"values\":[null],\"index\":[0,0,0,0,0]},"
                                "\"tags\":{}}");
        else
            assert_non_null(strstr(v.layout, "\"kind\":{\"values\":[\"activation\",\"param\","
                                             "\"temp\"],\"index\":[1,0,2,1]}"));
        json_object_put(tensors);
        json_object_put(res);
        json_object_put(sum);
        json_object_put(lay);
        free(out);
        plan_views_free(&v);
    }
}

/* The peak of a named strategy in a result's packing.strategies. */
static int64_t strategy_peak(json_object *doc, const char *name)
{
    char path[64];

    for (int k = 0; k < 16; k++) {
        snprintf(path, sizeof(path), "packing.strategies[%d].name", k);
        if (strcmp(jstr(doc, path), name) == 0) {
            snprintf(path, sizeof(path), "packing.strategies[%d].peak_bytes", k);
            return jint(doc, path);
        }
    }
    fail_msg("no strategy %s", name);
    return -1;
}

/* Under "all", xla-default is taken from the xla-spatial and xla-temporal runs instead of
 * packed again: the same peak as running it alone, the lower of the two (here temporal is
 * lower, so a wrong pick shows), and their time added. A training-step-like model. */
static void test_default_is_picked_from_the_spatial_temporal_runs(void **state)
{
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    struct plan_opts all = {.strategies = "xla-spatial,xla-temporal,xla-default"};
    struct plan_opts one = {.strategies = "xla-default"};

    (void)state;
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "{\"name\":\"m\",\"chip\":\"v5e\",\"tensors\":[");
    for (int i = 0; i < 1000; i++) {
        int k = i % 4;
        len += (size_t)snprintf(
            text + len, cap - len,
            "%s{\"name\":\"t%d\",\"shape\":[%d,%d],\"dtype\":\"%s\",\"kind\":\"%s\"", i ? "," : "",
            i, 128 * (1 + i % 7), 256 * (1 + i % 5), i % 3 ? "bf16" : "f32",
            k == 0   ? "param"
            : k == 1 ? "grad"
            : k == 2 ? "optimizer"
                     : "activation");
        if (k == 3)
            len += (size_t)snprintf(text + len, cap - len, ",\"live\":[%d,%d]", i % 50,
                                    i % 50 + 1 + i % 7);
        len += (size_t)snprintf(text + len, cap - len, "}");
    }
    len += (size_t)snprintf(text + len, cap - len, "]}");
    json_object *a = plan_doc(text, len, &all, NULL), *b = plan_doc(text, len, &one, NULL);
    int64_t sp = strategy_peak(a, "xla-spatial"), tm = strategy_peak(a, "xla-temporal");
    assert_true(tm < sp);
    assert_int_equal(strategy_peak(a, "xla-default"), tm);
    assert_int_equal(strategy_peak(b, "xla-default"), tm);
    assert_true(json_object_get_double(jget(a, "packing.strategies[2].seconds")) >=
                json_object_get_double(jget(a, "packing.strategies[1].seconds")));
    json_object_put(a);
    json_object_put(b);
    free(text);
}

/* The greedy strategies run ahead of the others (on two threads from 256 buffers); a
 * search strategy dropped under "best" (a greedy pass reached the lower bound) must not
 * shift the results of those after it onto the wrong names: each strategy's peak is the
 * one it has when run alone. A chain of 300 tensors, which first-fit packs worse. */
static void test_runs_ahead_keep_names(void **state)
{
    static const char *const names[] = {"xla-spatial", "xla-temporal", "first-fit", "tflite"};
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap);
    struct plan_opts mixed = {.strategies = "xla-spatial,tpuplan-search,best"};

    (void)state;
    assert_non_null(text);
    len += (size_t)snprintf(text, cap, "{\"name\":\"chain\",\"chip\":\"v5e\",\"tensors\":[");
    for (int i = 0; i < 300; i++)
        len += (size_t)snprintf(text + len, cap - len,
                                "%s{\"name\":\"t%d\",\"shape\":[64,%d],\"dtype\":\"f32\","
                                "\"live\":[%d,%d]}",
                                i ? "," : "", i, 128 * (1 + i % 7), i, i + 2);
    len += (size_t)snprintf(text + len, cap - len, "]}");
    json_object *a = plan_doc(text, len, &mixed, NULL);
    assert_int_equal(strategy_peak(a, "xla-spatial"), jint(a, "summary.lower_bound_bytes"));
    assert_null(jget(a, "packing.strategies[6]")); /* tpuplan-search and exact dropped */
    assert_string_equal(jstr(a, "packing.strategies[1].name"), "xla-temporal");
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        struct plan_opts one = {.strategies = names[k]};
        json_object *b = plan_doc(text, len, &one, NULL);
        assert_int_equal(strategy_peak(a, names[k]), strategy_peak(b, names[k]));
        json_object_put(b);
    }
    assert_true(strategy_peak(a, "first-fit") > strategy_peak(a, "xla-spatial"));
    json_object_put(a);
    free(text);
}

/* text without the numbers that follow "seconds": (wall times, never the same twice) */
static void drop_seconds(char *text)
{
    char *w = text;

    for (const char *r = text; *r != '\0';) {
        if (strncmp(r, "\"seconds\":", 10) == 0) {
            memmove(w, r, 10);
            w += 10;
            r += 10;
            while (*r != '\0' && strchr("0123456789.e+-", *r) != NULL)
                r++;
            continue;
        }
        *w++ = *r++;
    }
    *w = '\0';
}

/*
 * plan_run on two threads (the greedy passes ahead; the check and the metrics beside the
 * runtime replay, the suggestions and the result's head) and with plan_opts.threads = 1
 * (every stage on the caller's thread) gives the same document and views, seconds aside:
 * 600 tensors (over the 256 from which a second thread starts), sharded, tagged, with
 * given layouts and padding to suggest fixes for, and a capacity the runtime replay uses.
 */
static void test_two_threads_give_one_threads_result(void **state)
{
    size_t cap = 1 << 18, len = 0;
    char *text = malloc(cap), *json[2];
    size_t json_len[2];
    struct plan_views v[2];
    struct plan_limits l;
    struct err e;

    (void)state;
    assert_non_null(text);
    plan_limits_default(&l);
    len += (size_t)snprintf(text, cap, "{\"chip\":\"v5e\",\"mesh\":{\"d\":4},\"tensors\":[");
    for (int i = 0; i < 600; i++)
        len += (size_t)snprintf(
            text + len, cap - len,
            "%s{\"name\":\"t%d\",\"shape\":[%d,%d],\"dtype\":\"%s\",\"kind\":\"%s\","
            "\"live\":[%d,%d],\"tags\":[\"l%d\"]%s}",
            i ? "," : "", i, 8 * (1 + i % 9), 100 + 28 * (i % 11), i % 2 ? "bf16" : "f32",
            i % 3 ? "activation" : "param", i % 40, i % 40 + 1 + i % 13, i % 5,
            i % 4 == 0   ? ",\"sharding\":[null,\"d\"]"
            : i % 4 == 1 ? ",\"layout\":\"{0,1:T(8,128)}\""
                         : "");
    len += (size_t)snprintf(text + len, cap - len, "]}");
    for (unsigned k = 0; k < 2; k++) {
        struct plan_opts o = {.strategies = "xla-spatial,xla-temporal,xla-default,first-fit",
                              .threads = k == 0 ? 0 : 1,
                              .runtime = PLAN_RUNTIME_BFC};
        if (plan_run(text, len, &o, &l, &json[k], &json_len[k], &v[k], NULL, &e) != ERR_OK)
            fail_msg("plan: %s", e.msg);
        drop_seconds(json[k]);
        drop_seconds(v[k].summary);
    }
    assert_non_null(strstr(json[0], "\"suggestions\":[{")); /* the stages had work to do */
    assert_non_null(strstr(json[0], "\"runtime\":{"));
    assert_non_null(strstr(json[0], "\"sharding\":[null,[\"d\"]]"));
    assert_string_equal(json[0], json[1]);
    assert_string_equal(v[0].summary, v[1].summary);
    assert_string_equal(v[0].layout, v[1].layout);
    /* Streamed (the tensors array in blocks of 256 on two threads, or one) it is the same
     * text; a sink failing at its second piece fails both after the same bytes. */
    char msg[2][ERR_MSG_MAX];
    for (unsigned k = 0; k < 2; k++) {
        struct plan_opts o = {.strategies = "xla-spatial,xla-temporal,xla-default,first-fit",
                              .threads = k == 0 ? 0 : 1,
                              .runtime = PLAN_RUNTIME_BFC};
        struct collect c = {0};
        struct plan_sink sink = {collect, &c, false, false};
        if (plan_run_stream(text, len, &o, &l, &sink, NULL, NULL, &e) != ERR_OK)
            fail_msg("plan: %s", e.msg);
        drop_seconds(c.buf);
        assert_string_equal(c.buf, json[0]);
        free(c.buf);
        c = (struct collect){.fail_after = 2};
        assert_int_equal(plan_run_stream(text, len, &o, &l, &sink, NULL, NULL, &e), ERR_LIMIT);
        snprintf(msg[k], sizeof(msg[k]), "%s", e.msg);
        free(c.buf);
    }
    assert_string_equal(msg[0], "the result could not be written (after 131072 bytes)");
    assert_string_equal(msg[1], msg[0]);
    for (unsigned k = 0; k < 2; k++) {
        free(json[k]);
        plan_views_free(&v[k]);
    }
    free(text);
}

/*
 * The runtime allocator replay (plan_runtime.c, bfc.h) in a plan: a MiniMalloc CSV (sizes
 * as given, alignment 1) with a capacity of 1 MiB, so the default limit is 0.75 x 1048576 =
 * 786432 bytes in one preallocated region. a [0,2) and b [2,4) of 1000 bytes (1024 in BFC)
 * share address 0 (a is freed first at step 2); c [1,3) of 256 goes to 1024: the heap
 * reaches 1280 against a static peak of 1256 (1000 + 256 live at steps 1 and 2, the lower
 * bound). Its comparison row is packing.runtime, outside the strategies, never chosen.
 */
static void test_runtime_replay_rounds_and_reuses_like_bfc(void **state)
{
    const char *csv = "id,lower,upper,size\na,0,2,1000\nb,2,4,1000\nc,1,3,256\n";
    struct plan_opts o = {.capacity = 1048576, .runtime = PLAN_RUNTIME_BFC};
    json_object *r, *row;
    char path[64];
    int last;

    (void)state;
    r = plan_str(csv, &o);
    row = jget(r, "packing.runtime");
    assert_string_equal(jstr(row, "name"), "bfc-runtime");
    assert_int_equal(jint(row, "peak_bytes"), 1280);
    assert_int_equal(jint(row, "lower_bound_bytes"), 1256);
    assert_int_equal(jint(row, "fragmentation_bytes"), 24);
    assert_true(json_object_get_boolean(jget(row, "fits")));
    /* not a packing: not among the strategies, never chosen */
    last = (int)json_object_array_length(jget(r, "packing.strategies"));
    for (int k = 0; k < last; k++) {
        snprintf(path, sizeof(path), "packing.strategies[%d].name", k);
        assert_string_not_equal(jstr(r, path), "bfc-runtime");
    }
    assert_string_equal(jstr(r, "packing.chosen"), jstr(r, "summary.strategy"));
    assert_int_equal(jint(r, "packing.runtime.memory_limit_bytes"), 786432);
    assert_int_equal(jint(r, "packing.runtime.device_bytes"), 1048576);
    assert_true(json_object_get_boolean(jget(r, "packing.runtime.preallocate")));
    assert_true(json_object_get_boolean(jget(r, "packing.runtime.jax_gpu_defaults")));
    assert_int_equal(jint(r, "packing.runtime.peak_reserved_bytes"), 786432);
    assert_int_equal(jint(r, "packing.runtime.peak_in_use_bytes"), 1280);
    assert_int_equal(jint(r, "packing.runtime.static_peak_bytes"), 1256);
    assert_int_equal(jint(r, "packing.runtime.regions"), 1);
    assert_int_equal(jint(r, "packing.runtime.region_bytes[0]"), 786432);
    assert_int_equal(jint(r, "packing.runtime.failed_allocations"), 0);
    assert_true(json_object_is_type(jget(r, "packing.runtime.first_failure"), json_type_null));
    /* the runtime timeline has the static timeline's steps */
    assert_int_equal(json_object_array_length(jget(r, "packing.runtime.timeline.step")),
                     json_object_array_length(jget(r, "packing.timeline.step")));
    assert_int_equal(jint(r, "packing.runtime.timeline.in_use_bytes[1]"), 1280);
    assert_int_equal(jint(r, "packing.runtime.timeline.heap_bytes[3]"), 1024);
    json_object_put(r);

    /* Growth: 64 MiB x 0.5 = 32 MiB may be held, the first region is 2 MiB. */
    o = (struct plan_opts){
        .capacity = 64 << 20, .mem_fraction = 0.5, .preallocate = PLAN_PREALLOC_OFF};
    r = plan_str(csv, &o);
    assert_int_equal(jint(r, "packing.runtime.memory_limit_bytes"), 32 << 20);
    assert_int_equal(jint(r, "packing.runtime.peak_reserved_bytes"), 2 << 20);
    assert_int_equal(jint(r, "packing.runtime.region_bytes[0]"), 2 << 20);
    assert_false(json_object_get_boolean(jget(r, "packing.runtime.preallocate")));
    assert_false(json_object_get_boolean(jget(r, "packing.runtime.jax_gpu_defaults")));
    json_object_put(r);

    /* Out of memory with free bytes: 8192 x 0.5 = 4096 bytes; four 1024-byte buffers, two
     * die at step 1, leaving two 1024 holes for a 2048-byte one (bfc.h's hand trace). */
    o = (struct plan_opts){.capacity = 8192, .mem_fraction = 0.5};
    r = plan_str("id,lower,upper,size\nb0,0,1,1024\nb1,0,5,1024\nb2,0,1,1024\nb3,0,5,1024\n"
                 "b4,1,5,2048\nb5,2,5,5000\n",
                 &o);
    assert_int_equal(jint(r, "packing.runtime.failed_allocations"), 2);
    assert_int_equal(jint(r, "packing.runtime.first_failure.step"), 1);
    assert_int_equal(jint(r, "packing.runtime.first_failure.tensor"), 4);
    assert_string_equal(jstr(r, "packing.runtime.first_failure.name"), "b4");
    assert_int_equal(jint(r, "packing.runtime.first_failure.free_bytes"), 2048);
    assert_int_equal(jint(r, "packing.runtime.first_failure.largest_free_bytes"), 1024);
    assert_true(json_object_get_boolean(jget(r, "packing.runtime.first_failure.with_free_memory")));
    assert_int_equal(jint(r, "packing.runtime.first_oom_with_free_memory.tensor"), 4);
    json_object_put(r);

    /* Without a capacity there is no fraction to take: no replay. */
    r = plan_str(csv, NULL);
    assert_true(json_object_is_type(jget(r, "packing.runtime"), json_type_null));
    json_object_put(r);
}

/* mem_fraction must lie in (0, 1]. */
static void test_mem_fraction_outside_0_1_is_rejected(void **state)
{
    const struct bad cases[] = {
        {"{\"tensors\":[]}", {.mem_fraction = 1.5}, ERR_INVALID, "mem_fraction", "at most 1"},
        {"{\"tensors\":[]}", {.mem_fraction = -0.25}, ERR_INVALID, "mem_fraction", "above 0"},
    };
    (void)state;
    expect_plan_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_report_sizes_are_reproduced),
        cmocka_unit_test(test_sharded_tensor_pads_per_device),
        cmocka_unit_test(test_random_plans_account_every_byte),
        cmocka_unit_test(test_random_plans_place_aligned_disjoint_buffers),
        cmocka_unit_test(test_random_plans_peak_bounds_and_fragmentation),
        cmocka_unit_test(test_safetensors_and_csv_inputs_are_detected_and_planned),
        cmocka_unit_test(test_plan_opts_override_the_models_options),
        cmocka_unit_test(test_validate_and_buffers_agree_with_the_model),
        cmocka_unit_test(test_timeline_is_downsampled_by_maximum),
        cmocka_unit_test(test_search_time_is_budgeted_by_size),
        cmocka_unit_test(test_bad_options_are_rejected_naming_the_option),
        cmocka_unit_test(test_model_options),
        cmocka_unit_test(test_bad_model_options),
        cmocka_unit_test(test_unrecognized_and_malformed_input_is_rejected),
        cmocka_unit_test(test_total_byte_overflow_names_the_tensor),
        cmocka_unit_test(test_validate_rejects_input_over_the_limit),
        cmocka_unit_test(test_names_with_escapes_survive_the_writer),
        cmocka_unit_test(test_stream_is_json_c_pretty),
        cmocka_unit_test(test_views_agree_with_the_result),
        cmocka_unit_test(test_default_is_picked_from_the_spatial_temporal_runs),
        cmocka_unit_test(test_runs_ahead_keep_names),
        cmocka_unit_test(test_two_threads_give_one_threads_result),
        cmocka_unit_test(test_runtime_replay_rounds_and_reuses_like_bfc),
        cmocka_unit_test(test_mem_fraction_outside_0_1_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
