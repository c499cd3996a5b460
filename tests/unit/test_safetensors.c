/*
 * test_safetensors.c - the safetensors header importer: dtype mapping, the length prefix,
 * data_offsets checks, and every malformed-header class.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/safetensors.h"

static const struct model_limits limits = {64u << 20, 32, 1000, 1000};

/* 8-byte LE length of header + header + data_len zero bytes, in a static buffer. */
static const char *make(const char *header, uint64_t declared, size_t data_len, size_t *len)
{
    static char buf[8192];
    size_t h = strlen(header);
    assert_true(8 + h + 1 + data_len <= sizeof(buf));
    for (int i = 0; i < 8; i++)
        buf[i] = (char)((declared >> (8 * i)) & 0xff);
    memcpy(buf + 8, header, h + 1); /* the NUL is overwritten by the data or ignored */
    memset(buf + 8 + h, 0, data_len);
    *len = 8 + h + data_len;
    return buf;
}

static const char two[] = "{\"__metadata__\":{\"format\":\"pt\"},"
                          "\"model.embed\":{\"dtype\":\"BF16\",\"shape\":[32000,16],"
                          "\"data_offsets\":[0,1024000]},"
                          "\"model.norm\":{\"dtype\":\"F32\",\"shape\":[16],"
                          "\"data_offsets\":[1024000,1024064]}}  ";

static void test_header(void **state)
{
    struct model m;
    struct err e;
    size_t len;
    const char *buf = make(two, strlen(two), 0, &len);
    (void)state;
    err_clear(&e);
    assert_true(safetensors_detect(buf, len));
    if (safetensors_parse(buf, len, &limits, &m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    assert_string_equal(m.source_format, "safetensors");
    assert_int_equal(m.n, 2);
    assert_string_equal(m.tensors[0].name, "model.embed"); /* header order */
    assert_int_equal(m.tensors[0].shape.dtype, DT_BF16);
    assert_int_equal(m.tensors[0].shape.dims[0], 32000);
    assert_int_equal(m.tensors[0].kind, TENSOR_PARAM);
    assert_int_equal(m.tensors[1].shape.dtype, DT_F32);
    assert_int_equal(m.tensors[1].shape.rank, 1);
    model_free(&m);
}

/* The whole file is accepted when its data length matches the header. */
static void test_whole_file(void **state)
{
    const char *h = "{\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
                    "\"s\":{\"dtype\":\"I64\",\"shape\":[],\"data_offsets\":[3,11]},"
                    "\"e\":{\"dtype\":\"F16\",\"shape\":[0,4],\"data_offsets\":[11,11]}}";
    struct model m;
    struct err e;
    size_t len;
    const char *buf = make(h, strlen(h), 11, &len);
    (void)state;
    if (safetensors_parse(buf, len, &limits, &m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    assert_int_equal(m.n, 3);
    assert_int_equal(m.tensors[1].shape.rank, 0);
    assert_int_equal(m.tensors[1].shape.dtype, DT_S64);
    model_free(&m);
    buf = make(h, strlen(h), 10, &len);
    assert_int_equal(safetensors_parse(buf, len, &limits, &m, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "10 data bytes after the header but the header describes 11"));
}

static void test_dtypes(void **state)
{
    static const struct {
        const char *st;
        enum dtype dt;
        unsigned bits;
    } map[] = {
        {"F64", DT_F64, 64},
        {"F32", DT_F32, 32},
        {"F16", DT_F16, 16},
        {"BF16", DT_BF16, 16},
        {"I64", DT_S64, 64},
        {"I32", DT_S32, 32},
        {"I16", DT_S16, 16},
        {"I8", DT_S8, 8},
        {"U8", DT_U8, 8},
        {"U16", DT_U16, 16},
        {"U32", DT_U32, 32},
        {"U64", DT_U64, 64},
        {"BOOL", DT_PRED, 8},
        {"F8_E4M3", DT_F8E4M3FN, 8},
        {"F8_E5M2", DT_F8E5M2, 8},
        {"F8_E8M0", DT_F8E8M0FNU, 8},
        {"F8_E4M3FNUZ", DT_F8E4M3FNUZ, 8},
        {"F8_E5M2FNUZ", DT_F8E5M2FNUZ, 8},
        {"F4", DT_F4E2M1FN, 4},
        {"C64", DT_C64, 64},
    };
    unsigned bits;
    (void)state;
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        assert_int_equal(safetensors_dtype(map[i].st, &bits), map[i].dt);
        assert_int_equal(bits, map[i].bits);
    }
    assert_int_equal(safetensors_dtype("F6_E2M3", &bits), DT_INVALID);
    assert_int_equal(safetensors_dtype("f32", &bits), DT_INVALID);
}

struct bad {
    const char *header;
    int64_t declared; /* -1: strlen(header) */
    size_t data;
    size_t cut; /* truncate the input to this many bytes when > 0 */
    int code;
    const char *where;
    const char *msg;
};

static const struct bad bad_headers[] = {
    {"{}", 100, 0, 0, ERR_INVALID, "header", "header length 100 is larger than the 2 bytes"},
    {"{}", 200000000, 0, 0, ERR_LIMIT, "header", "above the format's cap of 100000000"},
    {"{}", -1, 0, 5, ERR_INVALID, "header", "5 bytes is too short"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}", -1, 0, 0, ERR_INVALID, "",
     "ends early"},
    {"[1]", -1, 0, 0, ERR_INVALID, "header", "must be a JSON object"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,12]}}", -1, 0, 0, ERR_INVALID,
     "tensors[0].data_offsets",
     "tensors[0] \"a\": data_offsets: [0, 12) holds 12 bytes but "
     "shape x dtype needs 8"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[16,24]}}",
     -1, 0, 0, ERR_INVALID, "tensors[1].data_offsets",
     "begins at 16 but the previous tensor "
     "ends at 8 (a gap"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
     "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
     -1, 0, 0, ERR_INVALID, "tensors[1].data_offsets", "overlapping"},
    {"{\"a\":{\"dtype\":\"F6_E2M3\",\"shape\":[2],\"data_offsets\":[0,8]}}", -1, 0, 0, ERR_NOTFOUND,
     "tensors[0].dtype", "unsupported dtype \"F6_E2M3\""},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", -1, 0, 0, ERR_INVALID,
     "tensors[0].shape[0]", "must be an integer >= 0"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", -1, 0, 0, ERR_INVALID,
     "tensors[0].data_offsets", "begin <= end"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", -1, 0, 0, ERR_INVALID, "tensors[0].data_offsets",
     "missing"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}", -1, 0, 0,
     ERR_INVALID, "tensors[0]", "unknown field \"x\""},
    {"{\"__metadata__\":{\"format\":1}}", -1, 0, 0, ERR_INVALID, "header.__metadata__",
     "must be a string"},
    {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
     "\"data_offsets\":[0,8]}}",
     -1, 0, 0, ERR_OVERFLOW, "tensors[0].shape", "overflows 64 bits"},
};

static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_headers) / sizeof(bad_headers[0]); i++) {
        const struct bad *b = &bad_headers[i];
        struct model m;
        struct err e;
        size_t len;
        uint64_t declared = b->declared < 0 ? strlen(b->header) : (uint64_t)b->declared;
        const char *buf = make(b->header, declared, b->data, &len);
        if (b->cut > 0)
            len = b->cut;
        err_clear(&e);
        int rc = safetensors_parse(buf, len, &limits, &m, &e);
        if (rc != b->code || strcmp(e.where, b->where) != 0 || strstr(e.msg, b->msg) == NULL)
            fail_msg("case %zu: got %d where \"%s\" msg \"%s\"; want %d \"%s\" \"%s\"", i, rc,
                     e.where, e.msg, b->code, b->where, b->msg);
    }
}

static void test_detect(void **state)
{
    size_t len;
    const char *buf = make("{}", 2, 0, &len);
    (void)state;
    assert_true(safetensors_detect(buf, len));
    assert_false(safetensors_detect("{\"tensors\":[]}", 14));
    assert_false(safetensors_detect("id,lower,upper,size\n", 20));
    buf = make("[]", 2, 0, &len);
    assert_false(safetensors_detect(buf, len)); /* must be followed by '{' */
    buf = make("{}", 200000000, 0, &len);
    assert_false(safetensors_detect(buf, len));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header), cmocka_unit_test(test_whole_file),
        cmocka_unit_test(test_dtypes), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_detect),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
