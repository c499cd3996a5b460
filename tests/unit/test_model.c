/*
 * test_model.c - the native model description parser (model.h) and lifetimes
 * (lifetime.h): fields, sharding arithmetic (server/planner/SOURCES.md#uneven-sharding),
 * derived lifetimes, and
 * one test per malformed-input class, each checking the error code, the location and
 * that the message names the tensor.
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

#include "planner/chip.h"
#include "planner/layout.h"
#include "planner/lifetime.h"
#include "planner/model.h"
#include "planner/import/model_json_int.h"
#include "planner/model_json.h"

#include "model_find.h"
#include "rng.h"

static const struct model_limits limits = {64u << 20, 32, 1000, 1000, 0};

static void parse_ok(const char *json, struct model *m)
{
    struct err e;
    err_clear(&e);
    if (model_parse_json(json, strlen(json), &limits, m, &e) != ERR_OK)
        fail_msg("parse: %s (%s)", e.msg, e.where);
}

static void test_every_field_is_read(void **state)
{
    struct model m;
    (void)state;
    parse_ok("{\"name\":\"m\",\"chip\":\"v5e\",\"tensors\":["
             "{\"name\":\"w\",\"shape\":[1024,512],\"dtype\":\"bf16\",\"kind\":\"param\","
             "\"tags\":[\"a\",\"b\"]},"
             "{\"name\":\"x\",\"xla_shape\":\"f32[8,128]{1,0:T(8,128)}\",\"kind\":\"input\","
             "\"donated\":true,\"live\":[0,3]},"
             "{\"name\":\"y\",\"shape\":[4,128],\"dtype\":\"f32\",\"layout\":\"{0,1:T(4,128)}\"}"
             "],\"options\":{\"strategies\":\"xla-spatial\",\"capacity\":1000,"
             "\"alignment\":256,\"time_limit\":0.5}}",
             &m);
    assert_string_equal(m.name, "m");
    assert_string_equal(m.chip, "v5e");
    assert_int_equal(m.n, 3);
    assert_string_equal(m.tensors[0].name, "w");
    assert_int_equal(m.tensors[0].shape.dtype, DT_BF16);
    assert_int_equal(m.tensors[0].shape.rank, 2);
    assert_int_equal(m.tensors[0].shape.dims[0], 1024);
    assert_false(m.tensors[0].shape.has_layout);
    assert_int_equal(m.tensors[0].kind, TENSOR_PARAM);
    assert_int_equal(m.tensors[0].ntags, 2);
    assert_string_equal(m.tensors[0].tags[1], "b");
    assert_true(m.tensors[1].shape.has_layout);
    assert_true(m.tensors[1].donated);
    assert_true(m.tensors[1].live_given);
    assert_int_equal(m.tensors[1].live_end, 3);
    assert_int_equal(m.tensors[2].kind, TENSOR_TEMP); /* the default kind */
    assert_true(m.tensors[2].shape.has_layout);
    assert_int_equal(m.tensors[2].shape.minor_to_major[0], 0);
    assert_int_equal(m.tensors[2].shape.tiles[0].dims[0], 4);
    /* the options are kept as given: plan.c reads them through plan_options.h's table */
    assert_string_equal(json_object_to_json_string_ext(m.options_json, JSON_C_TO_STRING_PLAIN),
                        "{\"strategies\":\"xla-spatial\",\"capacity\":1000,\"alignment\":256,"
                        "\"time_limit\":0.5}");
    model_free(&m);
}

/* Per-device dims are ceil(dim / product of axes), server/planner/SOURCES.md#uneven-sharding:
 * f32[7,2] on a [4,2]
 * mesh is f32[2,1] per device (Reactant.jl PR #822). */
static void test_sharded_dims_are_ceil_per_device(void **state)
{
    struct model m;
    (void)state;
    parse_ok("{\"mesh\":{\"x\":4,\"y\":2,\"z\":3},\"tensors\":["
             "{\"name\":\"a\",\"shape\":[7,2],\"dtype\":\"f32\",\"kind\":\"param\","
             "\"sharding\":[\"x\",\"y\"]},"
             "{\"name\":\"b\",\"shape\":[48,256],\"dtype\":\"f32\",\"kind\":\"param\","
             "\"sharding\":[[\"x\",\"z\"],null]},"
             "{\"name\":\"c\",\"shape\":[0,5],\"dtype\":\"f32\",\"kind\":\"activation\","
             "\"sharding\":[\"x\",null]}]}",
             &m);
    assert_int_equal(m.devices, 24);
    assert_int_equal(m.tensors[0].shape.dims[0], 2);
    assert_int_equal(m.tensors[0].shape.dims[1], 1);
    assert_int_equal(m.tensors[0].global_dims[0], 7);
    assert_int_equal(m.tensors[0].shard_mask[0], 1);
    assert_int_equal(m.tensors[1].shape.dims[0], 4); /* 48 / (4*3) */
    assert_int_equal(m.tensors[1].shape.dims[1], 256);
    assert_int_equal(m.tensors[1].shard_mask[0], 1 | 4);
    assert_int_equal(m.tensors[2].shape.dims[0], 0);
    /* a is replicated over z, b over y: one warning per axis; a's 7/4 is uneven */
    assert_int_equal(m.warnings.n, 3);
    assert_non_null(strstr(m.warnings.lines[0], "\"y\""));
    assert_non_null(strstr(m.warnings.lines[2], "7 over 4"));
    model_free(&m);
}

static void expect_live(struct model *m, const char *name, int64_t s, int64_t e)
{
    assert_live(tensor(m, name), s, e);
}

static void test_lifetimes_follow_ops_kinds_and_live(void **state)
{
    struct model m;
    struct err e;
    (void)state;
    parse_ok("{\"tensors\":["
             "{\"name\":\"w\",\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"param\"},"
             "{\"name\":\"x\",\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"input\",\"donated\":true},"
             "{\"name\":\"h\",\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"activation\"},"
             "{\"name\":\"g\",\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"temp\"},"
             "{\"name\":\"dead\",\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"temp\"},"
             "{\"name\":\"fixed\",\"shape\":[8],\"dtype\":\"f32\",\"live\":[2,7]},"
             "{\"name\":\"y\",\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"output\"},"
             "{\"name\":\"free\",\"shape\":[8],\"dtype\":\"f32\",\"kind\":\"activation\"}],"
             "\"ops\":[{\"name\":\"f\",\"inputs\":[\"x\",\"w\"],\"outputs\":[\"h\"]},"
             "{\"name\":\"g\",\"inputs\":[\"h\"],\"outputs\":[\"g\",\"dead\"]},"
             "{\"name\":\"k\",\"inputs\":[\"g\",\"h\"],\"outputs\":[\"y\",\"w\"]},"
             "{\"name\":\"l\",\"inputs\":[\"y\"],\"outputs\":[]}]}",
             &m);
    err_clear(&e);
    assert_int_equal(lifetime_derive(&m, &e), ERR_OK);
    assert_int_equal(m.nsteps, 7); /* the explicit [2,7) extends the 4 ops */
    expect_live(&m, "w", 0, 7);    /* param: whole program, even when updated in place */
    expect_live(&m, "x", 0, 1);    /* donated input: dies after its last use (op 0) */
    expect_live(&m, "h", 0, 3);    /* produced by op 0, last used by op 2 */
    expect_live(&m, "g", 1, 3);
    expect_live(&m, "dead", 1, 2); /* never used: one step */
    expect_live(&m, "fixed", 2, 7);
    expect_live(&m, "y", 0, 7);    /* outputs: whole program */
    expect_live(&m, "free", 0, 7); /* not mentioned by any op */
    assert_int_equal(m.warnings.n, 1);
    model_free(&m);

    /* Without ops: everything lives for the whole program, nsteps = max(1, given ends). */
    parse_ok("{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"}]}", &m);
    assert_int_equal(lifetime_derive(&m, &e), ERR_OK);
    assert_int_equal(m.nsteps, 1);
    expect_live(&m, "a", 0, 1);
    model_free(&m);
}

struct bad {
    const char *json;
    int code;
    const char *where;
    const char *msg; /* a substring of the message */
};

static const struct bad bad_models[] = {
    {"[1]", ERR_INVALID, "", "top level must be an object"},
    {"{\"tensors\":{}}", ERR_INVALID, "tensors", "must be an array"},
    {"{\"tensors\":[]", ERR_INVALID, "", "ends early"},
    {"{\"tensors\":[]} x", ERR_INVALID, "", "line 1 column 16"},
    {"{\"tensors\":[],}", ERR_INVALID, "", "invalid JSON"},
    {"{\"tensors\":[{\"name\":\"\xff\"}]}", ERR_INVALID, "", "invalid JSON"},
    {"{\"tensors\":[],\"shapes\":1}", ERR_INVALID, "shapes", "unknown top-level field"},
    {"{\"tensors\":[7]}", ERR_INVALID, "tensors[0]", "tensors[0]: must be an object"},
    {"{\"tensors\":[{\"shape\":[1],\"dtype\":\"f32\"}]}", ERR_INVALID, "tensors[0].name",
     "missing"},
    {"{\"tensors\":[{\"name\":5,\"shape\":[1],\"dtype\":\"f32\"}]}", ERR_INVALID, "tensors[0].name",
     "got an integer"},
    {"{\"tensors\":[{\"name\":\"a\\u0000b\",\"shape\":[1],\"dtype\":\"f32\"}]}", ERR_INVALID,
     "tensors[0].name", "without NUL"},
    {"{\"tensors\":[{\"name\":\"w\",\"dtype\":\"f32\"}]}", ERR_INVALID, "tensors[0].shape",
     "tensors[0] \"w\": shape: missing"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[1]}]}", ERR_INVALID, "tensors[0].dtype", "missing"},
    {"{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"},"
     "{\"name\":\"w\",\"shape\":[1],\"dtype\":\"float33\"}]}",
     ERR_NOTFOUND, "tensors[1].dtype", "tensors[1] \"w\": dtype: unknown dtype \"float33\""},
    {"{\"tensors\":[{\"name\":\"x\",\"shape\":[1],\"dtype\":\"f32\"},{\"name\":\"x\",\"shape\":"
     "[1],\"dtype\":\"f32\"},{\"name\":\"x\",\"shape\":[1],\"dtype\":\"f32\"},{\"name\":"
     "\"attn.wq\",\"shape\":[8,-4],\"dtype\":\"f32\"}]}",
     ERR_INVALID, "tensors[3].shape[1]", "tensors[3] \"attn.wq\": shape[1]: must be >= 0, got -4"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[1,2.5],\"dtype\":\"f32\"}]}", ERR_INVALID,
     "tensors[0].shape[1]", "must be an integer, got a non-integer number"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":\"[1]\",\"dtype\":\"f32\"}]}", ERR_INVALID,
     "tensors[0].shape", "must be an array of dims, got a string"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[99999999999999999999],\"dtype\":\"f32\"}]}",
     ERR_OVERFLOW, "tensors[0].shape[0]", "out of range"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[9223372036854775807],\"dtype\":\"f32\"}]}",
     ERR_OVERFLOW, "tensors[0].shape[0]", "out of range"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
     "1,1,1,1,1,1,1,1,1,1,1],\"dtype\":\"f32\"}]}",
     ERR_LIMIT, "tensors[0].shape", "rank 33 is above the limit of 32"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4,8],\"dtype\":\"f32\",\"layout\":\"{1,1}\"}]}",
     ERR_INVALID, "tensors[0].layout", "tensors[0] \"w\": layout \"{1,1}\""},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4,8],\"dtype\":\"f32\",\"layout\":\"1,0\"}]}",
     ERR_INVALID, "tensors[0].layout", "must be an XLA layout string"},
    {"{\"tensors\":[{\"name\":\"w\",\"xla_shape\":\"f32[4,8]{1,0:T(1,2,3,4,5)}\"}]}", ERR_LIMIT,
     "tensors[0].xla_shape", "tensors[0] \"w\": xla_shape: "},
    {"{\"tensors\":[{\"name\":\"w\",\"xla_shape\":\"f32[4,8\"}]}", ERR_INVALID,
     "tensors[0].xla_shape", "tensors[0] \"w\": xla_shape: "},
    {"{\"tensors\":[{\"name\":\"w\",\"xla_shape\":\"f32[4]\",\"dtype\":\"f32\"}]}", ERR_INVALID,
     "tensors[0].xla_shape", "not both"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"kind\":\"weights\"}]}",
     ERR_INVALID, "tensors[0].kind", "got \"weights\""},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"live\":[3,3]}]}", ERR_INVALID,
     "tensors[0].live", "start 3 must be below end 3"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"live\":[-1,3]}]}",
     ERR_INVALID, "tensors[0].live[0]", "between 0 and 2^53"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"live\":[1]}]}", ERR_INVALID,
     "tensors[0].live", "two integers"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"donated\":1}]}", ERR_INVALID,
     "tensors[0].donated", "true or false"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"tags\":[1]}]}", ERR_INVALID,
     "tensors[0].tags[0]", "non-empty string"},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"shap\":[4]}]}", ERR_INVALID,
     "tensors[0]", "unknown field \"shap\""},
    {"{\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\",\"sharding\":[\"x\"]}]}",
     ERR_NOTFOUND, "tensors[0].sharding[0]", "unknown mesh axis \"x\" (the model has no"},
    {"{\"mesh\":{\"x\":2},\"tensors\":[{\"name\":\"w\",\"shape\":[4,4],\"dtype\":\"f32\","
     "\"sharding\":[\"x\",\"x\"]}]}",
     ERR_INVALID, "tensors[0].sharding[1]", "used twice"},
    {"{\"mesh\":{\"x\":2},\"tensors\":[{\"name\":\"w\",\"shape\":[4,4],\"dtype\":\"f32\","
     "\"sharding\":[[\"x\",\"x\"],null]}]}",
     ERR_INVALID, "tensors[0].sharding[0][1]", "used twice"},
    {"{\"mesh\":{\"x\":2},\"tensors\":[{\"name\":\"w\",\"shape\":[4,4],\"dtype\":\"f32\","
     "\"sharding\":[\"x\"]}]}",
     ERR_INVALID, "tensors[0].sharding", "1 entries but the shape has rank 2"},
    {"{\"mesh\":{\"x\":2},\"tensors\":[{\"name\":\"w\",\"shape\":[4],\"dtype\":\"f32\","
     "\"sharding\":[3]}]}",
     ERR_INVALID, "tensors[0].sharding[0]", "got an integer"},
    {"{\"mesh\":{\"x\":0},\"tensors\":[]}", ERR_INVALID, "mesh.x", "size must be"},
    {"{\"mesh\":[2],\"tensors\":[]}", ERR_INVALID, "mesh", "must be an object"},
    {"{\"options\":[],\"tensors\":[]}", ERR_INVALID, "options", "must be an object"},
    {"{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"}],\"ops\":[{\"name\":"
     "\"matmul\",\"inputs\":[\"a\",\"b\"]}]}",
     ERR_NOTFOUND, "ops[0].inputs[1]", "ops[0] \"matmul\": inputs[1]: unknown tensor \"b\""},
    {"{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"}],\"ops\":[{\"name\":"
     "\"f\",\"outputs\":\"a\"}]}",
     ERR_INVALID, "ops[0].outputs", "must be an array"},
    {"{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"}],\"ops\":[{\"nam\":"
     "\"f\"}]}",
     ERR_INVALID, "ops[0]", "unknown field \"nam\""},
    {"{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"},{\"name\":\"b\",\"shape\":"
     "[1],\"dtype\":\"f32\"},{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"}]}",
     ERR_INVALID, "tensors[2].name",
     "tensors[2] \"a\": name: duplicate tensor name (first used "
     "by tensors[0])"},
};

/* Every invalid model description is rejected with its code, the field at fault (where) and
 * a message that names it. */
static void test_invalid_models_are_rejected_naming_the_field(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_models) / sizeof(bad_models[0]); i++) {
        const struct bad *b = &bad_models[i];
        struct model m;
        struct err e;
        err_clear(&e);
        int rc = model_parse_json(b->json, strlen(b->json), &limits, &m, &e);
        if (rc != b->code || strcmp(e.where, b->where) != 0 || strstr(e.msg, b->msg) == NULL)
            fail_msg("case %zu %s:\n got %d where \"%s\" msg \"%s\"\n want %d where \"%s\" msg "
                     "containing \"%s\"",
                     i, b->json, rc, e.where, e.msg, b->code, b->where, b->msg);
        assert_int_equal(e.code, rc);
    }
}

static void test_bad_ops_are_rejected_naming_the_op(void **state)
{
    static const struct bad cases[] = {
        {"{\"tensors\":[{\"name\":\"h\",\"shape\":[1],\"dtype\":\"f32\",\"kind\":\"temp\"}],"
         "\"ops\":[{\"name\":\"a\",\"outputs\":[\"h\"]},{\"name\":\"b\",\"outputs\":[\"h\"]}]}",
         ERR_INVALID, "ops[1].outputs[0]", "produced twice, by ops[0] and ops[1]"},
        {"{\"tensors\":[{\"name\":\"h\",\"shape\":[1],\"dtype\":\"f32\",\"kind\":\"temp\"}],"
         "\"ops\":[{\"name\":\"a\",\"inputs\":[\"h\"]},{\"name\":\"b\",\"outputs\":[\"h\"]}]}",
         ERR_INVALID, "ops[1].outputs[0]", "used by ops[0] before this op produces it"},
        {"{\"tensors\":[{\"name\":\"h\",\"shape\":[1],\"dtype\":\"f32\",\"kind\":\"temp\","
         "\"donated\":true}]}",
         ERR_INVALID, "tensors[0].donated", "only arguments"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct model m;
        struct err e;
        parse_ok(cases[i].json, &m);
        err_clear(&e);
        int rc = lifetime_derive(&m, &e);
        if (rc != cases[i].code || strcmp(e.where, cases[i].where) != 0 ||
            strstr(e.msg, cases[i].msg) == NULL)
            fail_msg("case %zu: got %d \"%s\" \"%s\"", i, rc, e.where, e.msg);
        model_free(&m);
    }
}

/* Depth, tensor count, op count and input size limits. */
static void test_depth_count_and_size_limits_are_errors(void **state)
{
    struct model_limits l = {64, 4, 2, 1, 0};
    struct model m;
    struct err e;
    const char *deep = "{\"tensors\":[{\"tags\":[[[1]]]}]}";
    const char *three = "{\"tensors\":[{},{},{}]}";
    const char *ops = "{\"tensors\":[],\"ops\":[{},{}]}";
    (void)state;
    assert_int_equal(model_parse_json(deep, strlen(deep), &l, &m, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "deeper than the limit of 4"));
    assert_int_equal(model_parse_json(three, strlen(three), &l, &m, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "3 tensors; the limit is 2"));
    assert_int_equal(model_parse_json(ops, strlen(ops), &l, &m, &e), ERR_LIMIT);
    assert_string_equal(e.where, "ops");
    l.max_input_bytes = 10;
    assert_int_equal(model_parse_json(three, strlen(three), &l, &m, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "the limit is 10"));
}

/* Byte sizes that pass 2^64 are an error naming the tensor, never a wrapped number. */
static void test_byte_overflow_names_the_tensor(void **state)
{
    struct model m;
    struct err e;
    (void)state;
    parse_ok("{\"tensors\":[{\"name\":\"ok\",\"shape\":[8,128],\"dtype\":\"f32\"},"
             "{\"name\":\"huge\",\"shape\":[4294967296,4294967296],\"dtype\":\"f32\"}]}",
             &m);
    err_clear(&e);
    assert_int_equal(model_resolve(&m, chip_find("v4"), 0, &e), ERR_OVERFLOW);
    assert_string_equal(strncmp(e.where, "tensors[1]", 10) == 0 ? "ok" : e.where, "ok");
    assert_non_null(strstr(e.msg, "tensors[1] \"huge\": "));
    model_free(&m);

    /* Storage narrower than the data is rejected, so padding is never negative. */
    const char *narrow =
        "{\"tensors\":[{\"name\":\"q\",\"xla_shape\":\"s4[8,256]{1,0:T(8,128)(8,1)E(2)}\"}]}";
    assert_int_not_equal(model_parse_json(narrow, strlen(narrow), &limits, &m, &e), ERR_OK);
    assert_non_null(strstr(e.msg, "tensors[0] \"q\": "));
}

/* The tensors array is streamed element by element (model.c); these are the corners where
 * a stream could disagree with parsing the whole document first. */
static void test_streaming_matches_the_whole_document(void **state)
{
    struct model m;
    struct err e;
    (void)state;

    /* Members after the array are read before the tensors are converted: the mesh that
     * shards tensors[0] comes last. */
    parse_ok("{\"tensors\":[{\"name\":\"w\",\"shape\":[10,8],\"dtype\":\"f32\","
             "\"sharding\":[\"d\",null]}],\"mesh\":{\"d\":4}}",
             &m);
    assert_int_equal(m.tensors[0].shape.dims[0], 3); /* ceil(10 / 4) */
    model_free(&m);

    /* A tensor error before a syntax error later in the array: the syntax error wins, with
     * its line and column, as when the document was parsed whole. */
    const char *both = "{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"nope\"},\n"
                       "{\"name\":\"b\",,}]}";
    assert_int_equal(model_parse_json(both, strlen(both), &limits, &m, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "invalid JSON at line 2 column 13"));

    /* ... and an error in a field read before the tensors still waits for their syntax. */
    const char *late = "{\"name\":7,\"tensors\":[{\"name\":\"b\"}}";
    assert_int_equal(model_parse_json(late, strlen(late), &limits, &m, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "invalid JSON at line 1 column 34"));

    /* Duplicate keys: the last value counts, as json-c keeps it. */
    parse_ok("{\"tensors\":[{\"bad\":1}],\"tensors\":[{\"name\":\"x\",\"shape\":[2],"
             "\"dtype\":\"s8\"},{\"name\":\"y\",\"shape\":[3],\"dtype\":\"s8\"}]}",
             &m);
    assert_int_equal(m.n, 2);
    assert_string_equal(m.tensors[1].name, "y");
    model_free(&m);
    const char *notarr = "{\"tensors\":[],\"tensors\":{}}";
    assert_int_equal(model_parse_json(notarr, strlen(notarr), &limits, &m, &e), ERR_INVALID);
    assert_string_equal(e.where, "tensors");

    /* Whitespace everywhere, an empty array, strings holding brackets and escapes. */
    parse_ok(" \r\n{ \"tensors\" :\t[ ] }\n", &m);
    assert_int_equal(m.n, 0);
    model_free(&m);
    parse_ok("{\"tensors\":[{\"name\":\"a]},{\\\"\",\"shape\":[1],\"dtype\":\"s8\"} ,\n"
             "{\"name\":\"\\u0062\",\"shape\":[],\"dtype\":\"f32\"}]}",
             &m);
    assert_int_equal(m.n, 2);
    assert_string_equal(m.tensors[0].name, "a]},{\"");
    assert_string_equal(m.tensors[1].name, "b");
    model_free(&m);

    /* Trailing text and a NUL inside the array are syntax errors, reported as before. */
    const char *trail = "{\"tensors\":[]} x";
    assert_int_equal(model_parse_json(trail, strlen(trail), &limits, &m, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "line 1 column 16"));
    const char nul[] = "{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"s8\"}\0]}";
    assert_int_equal(model_parse_json(nul, sizeof(nul) - 1, &limits, &m, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "line 1 column 50: unexpected end of data"));
}

/* Nesting inside one streamed element is limited exactly as inside the whole document:
 * a limit of 6 levels admits {"tensors":[{"tags":[[1]]}]} (5) and not one more. */
static void test_streaming_depth_limit_is_the_documents(void **state)
{
    struct model_limits l = limits;
    struct model m;
    struct err e;
    const char *five =
        "{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"s8\",\"tags\":[[1]]}]}";
    const char *six =
        "{\"tensors\":[{\"name\":\"a\",\"shape\":[1],\"dtype\":\"s8\",\"tags\":[[[1]]]}]}";
    (void)state;
    l.max_json_depth = 5;
    assert_int_equal(model_parse_json(five, strlen(five), &l, &m, &e), ERR_LIMIT);
    l.max_json_depth = 6;
    /* within the limit: the error is about the tag, not the depth */
    assert_int_equal(model_parse_json(five, strlen(five), &l, &m, &e), ERR_INVALID);
    assert_string_equal(e.where, "tensors[0].tags[0]");
    assert_int_equal(model_parse_json(six, strlen(six), &l, &m, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "deeper than the limit of 6"));
}

/* model_fast_tensor on its own: the fields of a plain element, the position past its
 * comma or bracket, and nothing consumed for what it leaves to json-c. */
static void test_fast_reader_reads_plain_elements_only(void **state)
{
    static const char *const refused[] = {
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\",\"tags\":[\"x\"]},",
        "{\"name\":\"a\\u0062\",\"shape\":[1],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"name\":\"b\",\"shape\":[1],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[01],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[1.0],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[1e3],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[-1],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[1000000000000000000],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[1,],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f33\"},",
        "{\"name\":\"\",\"shape\":[1],\"dtype\":\"f32\"},",
        "{\"name\":\"\xc3\xa9\",\"shape\":[1],\"dtype\":\"f32\"},",
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\",\"kind\":\"weights\"},",
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\",\"live\":[2,2]},",
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\",\"live\":[0,9007199254740993]},",
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\",\"live\":[1]},",
        "{\"name\":\"a\",\"shape\":[1]},",
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"}x",
        "{\"name\":\"a\",\"shape\":[1],\"dtype\":\"f32\"",
        "{}]",
        "7,",
    };
    const char *ok = " {\"name\" : \"t 1\",\r\n\"shape\":[ 3 ,0,\t999999999999999999 ],"
                     "\"dtype\":\"bf16\",\"kind\":\"param\",\"live\":[0,9007199254740992],"
                     "\"description\":\"x\"} ]";
    struct model_fast_tensor t;
    size_t pos = 0;
    bool last = false;
    (void)state;

    assert_true(model_fast_tensor(ok, strlen(ok), &pos, &t, &last));
    assert_int_equal(pos, strlen(ok));
    assert_true(last);
    assert_int_equal(t.name_len, 3);
    assert_memory_equal(t.name, "t 1", 3);
    assert_int_equal(t.dtype, DT_BF16);
    assert_int_equal(t.kind, TENSOR_PARAM);
    assert_int_equal(t.rank, 3);
    assert_int_equal(t.dims[0], 3);
    assert_int_equal(t.dims[1], 0);
    assert_int_equal(t.dims[2], 999999999999999999);
    assert_true(t.live_given);
    assert_int_equal(t.live_start, 0);
    assert_int_equal(t.live_end, INT64_C(9007199254740992));
    const char *plain = "{\"shape\":[],\"dtype\":\"pred\",\"name\":\"s\"},{";
    pos = 0;
    assert_true(model_fast_tensor(plain, strlen(plain), &pos, &t, &last));
    assert_false(last);
    assert_int_equal(pos, strlen(plain) - 1);
    assert_int_equal(t.rank, 0);
    assert_int_equal(t.kind, TENSOR_TEMP);
    assert_false(t.live_given);
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        pos = 0;
        if (model_fast_tensor(refused[i], strlen(refused[i]), &pos, &t, &last))
            fail_msg("accepted: %s", refused[i]);
        assert_int_equal(pos, 0);
    }
}

static uint64_t fast_rng = 0x9e3779b97f4a7c15ull;

/* One of n choices from the mutated elements' stream (rng_xorshift64). */
static size_t pick(size_t n)
{
    return (size_t)(rng_xorshift64(&fast_rng) % n);
}

/* Appends "key": val to an element, with random whitespace around the colon and value. */
static void field(char *buf, size_t cap, size_t *len, bool *any, const char *key, const char *val)
{
    static const char *const ws[] = {"", "", "", " ", "\n\t", "\r\n "};

    *len += (size_t)snprintf(buf + *len, cap - *len, "%s\"%s\"%s:%s%s%s", *any ? "," : "", key,
                             ws[pick(6)], ws[pick(6)], val, ws[pick(6)]);
    *any = true;
}

/* A random tensor element: half of them valid (the fast reader's or json-c's, by their
 * text), the rest with every kind of value the fast reader must leave to json-c or that
 * parse_tensor refuses, and odd whitespace. Valid choices come first in each list. */
static void random_element(char *buf, size_t cap, int i)
{
    static const char *const names[] = {"\"t%d\"", "\"a b%d\"", "\"\\u0074%d\"", "\"\xc3\xa9%d\"",
                                        "\"\"",    "5",         "\"x\""};
    static const char *const dtypes[] = {"\"f32\"",     "\"bf16\"", "\"pred\"", "\"s8\"",
                                         "\"float33\"", "\"\"",     "7"};
    static const char *const shapes[] = {
        "[]",
        "[1,2]",
        "[ 3 , 4 ]",
        "[0]",
        "[999999999999999999]",
        "[7,128]",
        "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
        "[1.5]",
        "[-1]",
        "[1e3]",
        "[99999999999999999999]",
        "[9223372036854775807]",
        "\"[1]\"",
        "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"};
    static const char *const kinds[] = {"\"param\"", "\"activation\"", "\"grad\"",
                                        "\"temp\"",  "\"weights\"",    "7"};
    static const char *const lives[] = {
        "[0,5]", "[2,9007199254740992]", "[ 4 ,\n6 ]", "[1.0,2]", "[3,3]", "[-1,2]",
        "[1]",   "[0,9007199254740993]"};
    static const char *const extras[] = {
        "\"donated\":true", "\"tags\":[\"a\"]", "\"description\":\"d\"", "\"layout\":\"{0}\"",
        "\"shap\":[1]",     "\"name\":\"dup\"", "\"description\":5",     "\"sharding\":[null]"};
    static const char *const ws[] = {"", "", "", " ", "\n\t", "\r\n "};
    bool clean = pick(2) == 0, any = false;
    size_t len = 0;
    char name[64];

    /* clean: the valid choices only (the first 3, 4, 7, 4, 3 and 3 entries) */
    snprintf(name, sizeof(name), names[pick(clean ? 3 : sizeof(names) / sizeof(names[0]))], i);
    len += (size_t)snprintf(buf + len, cap - len, "{%s", ws[pick(6)]);
    if (clean || pick(20) != 0)
        field(buf, cap, &len, &any, "name", name);
    if (pick(3) == 0)
        field(buf, cap, &len, &any, "kind",
              kinds[pick(clean ? 4 : sizeof(kinds) / sizeof(kinds[0]))]);
    if (clean || pick(20) != 0)
        field(buf, cap, &len, &any, "shape",
              shapes[pick(clean ? 7 : sizeof(shapes) / sizeof(shapes[0]))]);
    if (clean || pick(20) != 0)
        field(buf, cap, &len, &any, "dtype",
              dtypes[pick(clean ? 4 : sizeof(dtypes) / sizeof(dtypes[0]))]);
    if (pick(2) == 0)
        field(buf, cap, &len, &any, "live",
              lives[pick(clean ? 3 : sizeof(lives) / sizeof(lives[0]))]);
    if (pick(6) == 0) {
        const char *x = extras[pick(clean ? 3 : sizeof(extras) / sizeof(extras[0]))];
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", any ? "," : "", x);
    }
    snprintf(buf + len, cap - len, "}");
}

/* Differential: a document of random elements parses exactly as the same document whose
 * elements json-c must read (each starts with an escaped description, which the fast reader
 * refuses and which changes no meaning): the same tensors, warnings, or the same error. */
/* Two parses of a model agree on every tensor field and warning. */
static void assert_same_model(const struct model *ma, const struct model *mb)
{
    assert_int_equal(ma->n, mb->n);
    for (size_t i = 0; i < ma->n; i++) {
        const struct model_tensor *x = &ma->tensors[i], *y = &mb->tensors[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->shape.dtype, y->shape.dtype);
        assert_int_equal(x->shape.rank, y->shape.rank);
        assert_memory_equal(x->shape.dims, y->shape.dims, x->shape.rank * sizeof(int64_t));
        assert_int_equal(x->shape.has_layout, y->shape.has_layout);
        assert_int_equal(x->shape.ntiles, y->shape.ntiles);
        assert_int_equal(x->live_given, y->live_given);
        assert_int_equal(x->live_start, y->live_start);
        assert_int_equal(x->live_end, y->live_end);
        assert_int_equal(x->sharded, y->sharded);
        if (x->sharded) {
            assert_memory_equal(x->global_dims, y->global_dims, x->shape.rank * sizeof(int64_t));
            assert_memory_equal(x->shard_mask, y->shard_mask, x->shape.rank * sizeof(uint16_t));
        }
        assert_int_equal(x->donated, y->donated);
        assert_int_equal(x->ntags, y->ntags);
    }
    assert_int_equal(ma->warnings.n, mb->warnings.n);
    for (size_t w = 0; w < ma->warnings.n; w++)
        assert_string_equal(ma->warnings.lines[w], mb->warnings.lines[w]);
}

static void test_fast_reader_matches_json_c(void **state)
{
    char *a = malloc(1 << 16), *b = malloc(1 << 16), el[1024];
    (void)state;

    assert_non_null(a);
    assert_non_null(b);
    for (int it = 0; it < 3000; it++) {
        size_t la = 0, lb = 0;
        int n = 1 + (int)pick(4);
        const char *head = pick(3) == 0 ? "{\"mesh\":{\"x\":2}," : "{";
        struct model ma, mb;
        struct err ea, eb;
        la += (size_t)snprintf(a, 1 << 16, "%s\"tensors\":[", head);
        lb += (size_t)snprintf(b, 1 << 16, "%s\"tensors\":[", head);
        for (int i = 0; i < n; i++) {
            random_element(el, sizeof(el), i);
            la += (size_t)snprintf(a + la, (1 << 16) - la, "%s%s", i ? "," : "", el);
            size_t body = 1 + strspn(el + 1, " \t\r\n"); /* "{}" takes no comma */
            lb += (size_t)snprintf(b + lb, (1 << 16) - lb, "%s{\"description\":\"\\u0041\"%s%s",
                                   i ? "," : "", el[body] == '}' ? "" : ",", el + 1);
        }
        la += (size_t)snprintf(a + la, (1 << 16) - la, "]}");
        lb += (size_t)snprintf(b + lb, (1 << 16) - lb, "]}");
        int ra = model_parse_json(a, la, &limits, &ma, &ea);
        int rb = model_parse_json(b, lb, &limits, &mb, &eb);
        if (ra != rb || (ra != ERR_OK && (ea.code != eb.code || strcmp(ea.where, eb.where) != 0 ||
                                          strcmp(ea.msg, eb.msg) != 0)))
            fail_msg("%s\n%d %s: %s\nvs\n%s\n%d %s: %s", a, ra, ea.where, ea.msg, b, rb, eb.where,
                     eb.msg);
        if (ra != ERR_OK)
            continue;
        assert_same_model(&ma, &mb);
        model_free(&ma);
        model_free(&mb);
    }
    free(a);
    free(b);
}

#define SPLIT_N 10000 /* tensors: past the 4096 from which a second thread reads half */

/* The split test's model: params (replicated over the mesh: warnings counting both halves)
 * and activations, tensor `at` replaced by `odd` (a whole element, or text in its place). */
static size_t split_model(char *buf, size_t cap, size_t at, const char *odd, size_t at2)
{
    size_t n = (size_t)snprintf(buf, cap, "{\"name\":\"s\",\"mesh\":{\"d\":4},\"tensors\":[");

    for (size_t i = 0; i < SPLIT_N; i++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s", i ? ",\n" : "");
        if (i == at || i == at2) /* odd may hold a %zu for the index (names are unique) */
            n += (size_t)snprintf(buf + n, cap - n, odd, i);
        else
            n += (size_t)snprintf(buf + n, cap - n,
                                  "{\"name\":\"t%zu\",\"shape\":[%zu,128],\"dtype\":\"%s\","
                                  "\"kind\":\"%s\",\"live\":[%zu,%zu]}",
                                  i, 1 + i % 97, i % 3 ? "bf16" : "f32",
                                  i % 5 == 1 ? "param" : "activation", i % 50, i % 50 + 1 + i % 7);
    }
    n += (size_t)snprintf(buf + n, cap - n, "]}");
    assert_true(n < cap);
    return n;
}

/*
 * A long tensors array is read on two threads, the second half ahead by a helper (model.c
 * split_parse): the model, warnings and every error are those of reading it on one thread
 * (model_limits.threads = 1), whatever the element in each half does: plain ones only, one
 * the helper leaves to json-c (sharded, tagged), a bad dtype (the error in either half), an
 * unknown field, a syntax error (the whole-document parse reports it) and a trailing comma,
 * each near the start, around the middle where the helper starts, and at the end.
 */
static void test_split_parse_matches_one_thread(void **state)
{
    static const char *const odd[] = {
        NULL,
        "{\"name\":\"sh\",\"shape\":[8,128],\"dtype\":\"f32\",\"sharding\":[\"d\",null]}",
        "{\"name\":\"tg\",\"shape\":[8],\"dtype\":\"s8\",\"tags\":[\"x\"]}",
        "{\"name\":\"bad\",\"shape\":[8],\"dtype\":\"f33\"}",
        "{\"name\":\"unk\",\"shape\":[8],\"dtype\":\"s8\",\"colour\":1}",
        "{\"name\":\"syn\",,}",
        "{\"name\":\"esc\\u0041\",\"shape\":[8],\"dtype\":\"s8\"}",
    };
    static const int want[] = {ERR_OK,      ERR_OK,      ERR_OK, ERR_NOTFOUND,
                               ERR_INVALID, ERR_INVALID, ERR_OK};
    static const size_t ats[] = {3, SPLIT_N / 2 - 1, SPLIT_N / 2, SPLIT_N / 2 + 1, SPLIT_N - 1};
    size_t cap = SPLIT_N * 160;
    char *text = malloc(cap);
    (void)state;

    assert_non_null(text);
    for (size_t k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
        for (size_t a = 0; a < (k == 0 ? 1 : sizeof(ats) / sizeof(ats[0])); a++) {
            size_t len = split_model(text, cap, odd[k] != NULL ? ats[a] : SIZE_MAX,
                                     odd[k] != NULL ? odd[k] : "", SIZE_MAX);
            struct model m[2];
            struct err e[2];
            int rc[2];
            for (unsigned t = 0; t < 2; t++) {
                struct model_limits l = {64u << 20, 32, SPLIT_N, 1000, t == 0 ? 0 : 1};
                err_clear(&e[t]);
                rc[t] = model_parse_json(text, len, &l, &m[t], &e[t]);
            }
            assert_int_equal(rc[0], rc[1]);
            assert_int_equal(rc[0], want[k]);
            if (rc[0] != ERR_OK) {
                assert_int_equal(e[0].code, e[1].code);
                assert_string_equal(e[0].where, e[1].where);
                assert_string_equal(e[0].msg, e[1].msg);
                continue;
            }
            assert_same_model(&m[0], &m[1]);
            assert_true(m[0].warnings.n > 0); /* the replicated params, counted in both halves */
            for (unsigned t = 0; t < 2; t++)
                assert_int_equal(model_resolve(&m[t], chip_find("v5e"), t, &e[t]), ERR_OK);
            assert_same_model(&m[0], &m[1]);
            for (size_t i = 0; i < SPLIT_N; i++) {
                struct shape x, y;
                model_tensor_shape(&m[0].tensors[i], &x);
                model_tensor_shape(&m[1].tensors[i], &y);
                assert_memory_equal(&x, &y, sizeof(x));
                assert_int_equal(m[0].tensors[i].padded_bytes, m[1].tensors[i].padded_bytes);
                assert_int_equal(m[0].tensors[i].logical_bytes, m[1].tensors[i].logical_bytes);
            }
            model_free(&m[0]);
            model_free(&m[1]);
        }
    }
    /* Layouts resolved on two threads too (each half's first error, the first half's
     * first): a size past 2^64 in the first half, the second, or both. */
    static const size_t huge[][2] = {{3, SIZE_MAX}, {7000, SIZE_MAX}, {7000, 3}, {5001, 9999}};
    for (size_t k = 0; k < sizeof(huge) / sizeof(huge[0]); k++) {
        size_t len = split_model(text, cap, huge[k][0],
                                 "{\"name\":\"huge%zu\",\"shape\":[4294967296,4294967296],"
                                 "\"dtype\":\"f32\"}",
                                 huge[k][1]);
        char want_where[32];
        for (unsigned t = 0; t < 2; t++) {
            struct model_limits l = {64u << 20, 32, SPLIT_N, 1000, t == 0 ? 0 : 1};
            struct model m;
            struct err e;
            assert_int_equal(model_parse_json(text, len, &l, &m, &e), ERR_OK);
            assert_int_equal(model_resolve(&m, chip_find("v5e"), t, &e), ERR_OVERFLOW);
            snprintf(want_where, sizeof(want_where), "tensors[%zu]",
                     huge[k][0] < huge[k][1] ? huge[k][0] : huge[k][1]);
            assert_int_equal(strncmp(e.where, want_where, strlen(want_where)), 0);
            assert_non_null(strstr(e.msg, "\"huge"));
            model_free(&m);
        }
    }
    /* A trailing comma: array_skip counts one element more than there is. */
    size_t len = split_model(text, cap, SIZE_MAX, "", SIZE_MAX);
    memcpy(text + len - 2, ",]}", 4);
    for (unsigned t = 0; t < 2; t++) {
        struct model_limits l = {64u << 20, 32, SPLIT_N + 1, 1000, t == 0 ? 0 : 1};
        struct model m;
        struct err e;
        assert_int_equal(model_parse_json(text, len + 1, &l, &m, &e), ERR_INVALID);
        assert_non_null(strstr(e.msg, "invalid JSON"));
    }
    free(text);
}

/*
 * The compact shape (model.h struct model_shape) expands to exactly the struct shape it was
 * made from: an xla_shape with every layout attribute, a rank-32 shape (the limit) and a
 * scalar, each compared whole with shape_parse's own result. model_resolve stores the
 * resolved layout and keeps the dims' storage; shard masks are per dim.
 */
static void test_compact_shapes_expand_to_the_parsed_shape(void **state)
{
    static const char *const texts[] = {
        "f32[8,128,3]{2,1,0:T(8,128)(2,1)L(1024)E(32)S(1)}",
        "bf16[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,2]",
        "s32[]",
    };
    char json[1024];
    struct model m;
    struct shape want, got;
    struct layout_info info;
    struct err e;

    (void)state;
    for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
        snprintf(json, sizeof(json), "{\"tensors\":[{\"name\":\"t\",\"xla_shape\":\"%s\"}]}",
                 texts[k]);
        parse_ok(json, &m);
        assert_int_equal(shape_parse(texts[k], strlen(texts[k]), &want, &e), ERR_OK);
        model_tensor_shape(&m.tensors[0], &got);
        assert_memory_equal(&got, &want, sizeof(want));
        model_free(&m);
    }
    parse_ok("{\"mesh\":{\"x\":4,\"y\":2},\"tensors\":[{\"name\":\"w\",\"shape\":[64,6,256],"
             "\"dtype\":\"f32\",\"sharding\":[\"x\",null,\"y\"]}]}",
             &m);
    const int64_t *dims = m.tensors[0].shape.dims;
    assert_int_equal(m.tensors[0].shard_mask[0], 1);
    assert_int_equal(m.tensors[0].shard_mask[1], 0);
    assert_int_equal(m.tensors[0].shard_mask[2], 2);
    model_tensor_shape(&m.tensors[0], &want);
    assert_false(want.has_layout);
    assert_int_equal(model_resolve(&m, chip_find("v5e"), 0, &e), ERR_OK);
    assert_ptr_equal(m.tensors[0].shape.dims, dims); /* the dims' storage is kept */
    assert_int_equal(layout_resolve(&want, chip_find("v5e"), &want, &info, &e), ERR_OK);
    model_tensor_shape(&m.tensors[0], &got);
    assert_true(got.has_layout);
    assert_int_equal(got.dims[0], 16); /* 64 over x = 4 */
    assert_int_equal(got.dims[2], 128);
    assert_memory_equal(&got, &want, sizeof(want));
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_field_is_read),
        cmocka_unit_test(test_sharded_dims_are_ceil_per_device),
        cmocka_unit_test(test_lifetimes_follow_ops_kinds_and_live),
        cmocka_unit_test(test_invalid_models_are_rejected_naming_the_field),
        cmocka_unit_test(test_bad_ops_are_rejected_naming_the_op),
        cmocka_unit_test(test_depth_count_and_size_limits_are_errors),
        cmocka_unit_test(test_byte_overflow_names_the_tensor),
        cmocka_unit_test(test_streaming_matches_the_whole_document),
        cmocka_unit_test(test_streaming_depth_limit_is_the_documents),
        cmocka_unit_test(test_fast_reader_reads_plain_elements_only),
        cmocka_unit_test(test_fast_reader_matches_json_c),
        cmocka_unit_test(test_compact_shapes_expand_to_the_parsed_shape),
        cmocka_unit_test(test_split_parse_matches_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
