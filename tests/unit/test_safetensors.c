/*
 * test_safetensors.c - the safetensors header importer: every dtype of the format's
 * specification (its names and element widths, written down from the reference
 * implementation, not from our table), the length prefix, data_offsets checks, and every
 * malformed-header class.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/dtype.h"
#include "planner/safetensors.h"

static const struct model_limits limits = {64u << 20, 32, 1000, 1000, 0};

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

static void test_header_gives_tensors_in_header_order(void **state)
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
static void test_whole_file_is_accepted_when_its_length_matches(void **state)
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

/* The safetensors format's dtypes, from its reference implementation: huggingface/safetensors
 * safetensors/src/tensor.rs at commit 3de3a4a2fd91e050b2f812690a9eed4cb23ed9d2, `pub enum Dtype`
 * (a header spells each as its `Display` name) and `Dtype::bitsize()`, in the enum's order. The
 * reference's validate() sizes a tensor as elements x bitsize / 8 bytes and rejects a tensor
 * whose bits are not whole bytes (MisalignedSlice).
 *
 * `xla` is what the planner plans the tensor as (dtype.h; F8_E4M3 is torch's float8_e4m3fn and
 * F8_E8M0 the MX scale type XLA calls f8e8m0fnu; F4 is float4_e2m1fn), or DT_INVALID for the
 * two the planner does not accept: F6_E2M3 and F6_E3M2 (MX 6-bit floats) have no type in
 * dtype.h, and a header using either is rejected (ERR_NOTFOUND at tensors[i].dtype, the
 * message naming the dtypes it does accept; see
 * test_spec_dtypes_without_xla_type_are_rejected_by_name). */
static const struct {
    const char *name;
    unsigned bits; /* Dtype::bitsize() */
    enum dtype xla;
} spec_dtypes[] = {
    {"BOOL", 8, DT_PRED},
    {"F4", 4, DT_F4E2M1FN},
    {"F6_E2M3", 6, DT_INVALID},
    {"F6_E3M2", 6, DT_INVALID},
    {"U8", 8, DT_U8},
    {"I8", 8, DT_S8},
    {"F8_E5M2", 8, DT_F8E5M2},
    {"F8_E4M3", 8, DT_F8E4M3FN},
    {"F8_E8M0", 8, DT_F8E8M0FNU},
    {"F8_E4M3FNUZ", 8, DT_F8E4M3FNUZ},
    {"F8_E5M2FNUZ", 8, DT_F8E5M2FNUZ},
    {"I16", 16, DT_S16},
    {"U16", 16, DT_U16},
    {"F16", 16, DT_F16},
    {"BF16", 16, DT_BF16},
    {"I32", 32, DT_S32},
    {"U32", 32, DT_U32},
    {"F32", 32, DT_F32},
    {"C64", 64, DT_C64},
    {"F64", 64, DT_F64},
    {"I64", 64, DT_S64},
    {"U64", 64, DT_U64},
};
#define N_SPEC_DTYPES (sizeof(spec_dtypes) / sizeof(spec_dtypes[0]))

/* Parses a header holding one tensor "t" of dtype `name`, shape [elems], data_offsets
 * [0, bytes), followed by its `bytes` of data. */
static int parse_one(const char *name, unsigned elems, unsigned long bytes, struct model *m,
                     struct err *e)
{
    char header[256];
    size_t len;
    snprintf(header, sizeof(header),
             "{\"t\":{\"dtype\":\"%s\",\"shape\":[%u],\"data_offsets\":[0,%lu]}}", name, elems,
             bytes);
    const char *buf = make(header, strlen(header), bytes, &len);
    err_clear(e);
    return safetensors_parse(buf, len, &limits, m, e);
}

/* Every dtype the specification lists that has an XLA type is imported as that type, with the
 * specification's element width: a tensor of 8 elements holds exactly `bits` bytes, and the
 * planner sizes it (dtype_bits) as the specification does; one byte fewer is rejected. */
static void test_spec_dtypes_import_with_spec_sizes(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_SPEC_DTYPES; i++) {
        const char *name = spec_dtypes[i].name;
        unsigned bits = spec_dtypes[i].bits, got_bits = 1234;
        struct model m;
        struct err e;
        if (spec_dtypes[i].xla == DT_INVALID)
            continue;
        assert_int_equal(safetensors_dtype(name, &got_bits), spec_dtypes[i].xla);
        assert_int_equal(got_bits, bits);
        if (parse_one(name, 8, bits, &m, &e) != ERR_OK)
            fail_msg("%s: %s", name, e.msg);
        assert_int_equal(m.n, 1);
        assert_int_equal(m.tensors[0].shape.dtype, spec_dtypes[i].xla);
        assert_int_equal(dtype_bits(m.tensors[0].shape.dtype), bits);
        model_free(&m);

        char want[96];
        snprintf(want, sizeof(want), "[0, %u) holds %u bytes but shape x dtype needs %u", bits - 1,
                 bits - 1, bits);
        assert_int_equal(parse_one(name, 8, bits - 1, &m, &e), ERR_INVALID);
        assert_string_equal(e.where, "tensors[0].data_offsets");
        if (strstr(e.msg, want) == NULL)
            fail_msg("%s: got \"%s\", want \"%s\"", name, e.msg, want);
    }
}

/* F6_E2M3 and F6_E3M2 have no XLA type: a header using one is rejected naming the tensor's
 * dtype field, and the message lists every dtype that is accepted. */
static void test_spec_dtypes_without_xla_type_are_rejected_by_name(void **state)
{
    (void)state;
    size_t rejected = 0;
    for (size_t i = 0; i < N_SPEC_DTYPES; i++) {
        const char *name = spec_dtypes[i].name;
        unsigned got_bits = 1234;
        struct model m;
        struct err e;
        char want[64];
        if (spec_dtypes[i].xla != DT_INVALID)
            continue;
        rejected++;
        assert_int_equal(safetensors_dtype(name, &got_bits), DT_INVALID);
        assert_int_equal(got_bits, 0);
        /* 4 elements x 6 bits = 3 bytes: well-formed by the specification. */
        assert_int_equal(parse_one(name, 4, 3, &m, &e), ERR_NOTFOUND);
        assert_string_equal(e.where, "tensors[0].dtype");
        snprintf(want, sizeof(want), "unsupported dtype \"%s\"", name);
        if (strstr(e.msg, want) == NULL)
            fail_msg("%s: %s", name, e.msg);
        for (size_t k = 0; k < N_SPEC_DTYPES; k++)
            if (spec_dtypes[k].xla != DT_INVALID && strstr(e.msg, spec_dtypes[k].name) == NULL)
                fail_msg("%s: the message does not name the accepted %s: %s", name,
                         spec_dtypes[k].name, e.msg);
    }
    assert_int_equal(rejected, 2);
}

/* Names are the specification's exact spellings: case matters. */
static void test_dtype_names_are_case_sensitive(void **state)
{
    unsigned bits;
    (void)state;
    assert_int_equal(safetensors_dtype("f32", &bits), DT_INVALID);
    assert_int_equal(safetensors_dtype("Bf16", &bits), DT_INVALID);
}

/* As in the reference (MisalignedSlice), a sub-byte tensor must fill whole bytes: 3 F4
 * elements are 12 bits. */
static void test_sub_byte_tensor_must_fill_whole_bytes(void **state)
{
    struct model m;
    struct err e;
    (void)state;
    assert_int_equal(parse_one("F4", 3, 2, &m, &e), ERR_INVALID);
    assert_string_equal(e.where, "tensors[0].shape");
    assert_non_null(strstr(e.msg, "sub-byte tensor does not fill whole bytes"));
    if (parse_one("F4", 4, 2, &m, &e) != ERR_OK)
        fail_msg("%s", e.msg);
    model_free(&m);
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

/* Each malformed header is rejected with its error code, the field at fault and a message
 * saying what is wrong. */
static void test_malformed_headers_name_field_and_reason(void **state)
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

static void test_detect_needs_a_safetensors_header(void **state)
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
        cmocka_unit_test(test_header_gives_tensors_in_header_order),
        cmocka_unit_test(test_whole_file_is_accepted_when_its_length_matches),
        cmocka_unit_test(test_spec_dtypes_import_with_spec_sizes),
        cmocka_unit_test(test_spec_dtypes_without_xla_type_are_rejected_by_name),
        cmocka_unit_test(test_dtype_names_are_case_sensitive),
        cmocka_unit_test(test_sub_byte_tensor_must_fill_whole_bytes),
        cmocka_unit_test(test_malformed_headers_name_field_and_reason),
        cmocka_unit_test(test_detect_needs_a_safetensors_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
