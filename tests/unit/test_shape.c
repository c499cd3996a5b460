/*
 * test_shape.c - XLA shape strings: exact round trips of real shapes from the docs and XLA's
 * printers, every dtype spelling, tuples, and every parse error path (code, message, offset).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "planner/shape.h"
#include "rng.h"

/* Canonical strings: print(parse(s)) must give s back byte for byte. */
static const char *canonical[] = {
    "f32[8,128]{1,0:T(8,128)}",
    "bf16[4,1024]{1,0:T(8,128)(2,1)}",
    "pred[64]{0:T(1024)(128)(4,1)}",
    "s4[8,256]{1,0:T(8,128)(8,1)E(4)}",
    "s32[]{:T(256)S(6)}",
    "f32[]{:T(256)}",
    "bf16[]{:T(512)(2,1)}",
    "pred[]{:T(512)}",
    "f32[]",
    "token[]",
    "u8[4096]{0}",
    "f32[3,5]{1,0:T(2,2)}",
    "s32[29360128,10]{1,0:T(8,128)}",
    "f32[128,256,896,18]{0,3,2,1}",
    "pred[64,512,2048]{2,1,0:T(8,128)E(32)}",
    "bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}",
    "s32[2048,1,128,128,4]{4,3,2,0,1:T(8,128)}",
    "bf16[128,4096,352]{2,1,0:T(16,128)(2,1)}",
    "s4[8,32768,1,256]{3,1,0,2:T(64,128)(8,1)E(4)S(1)}",
    "s8[2,6144,2,256]{3,1,0,2:T(32,128)(4,1)S(1)}",
    "f8e4m3fn[16,256]{1,0:T(32,128)(4,1)}",
    "f8e5m2[16,256]{1,0:T(8,128)(4,1)}",
    "f32[32,1,1]{2,1,0:T(2,128)S(5)}",
    "pred[2000]{0:T(1024)E(32)}",
    "f32[1024]{0:T(1024)}",
    "f32[8,128]{1,0:T(8,128)L(1024)}",
    "f32[0,128]{1,0:T(8,128)}",
    "c64[2,2]{1,0}",
    "c128[3]",
    "f32[8,128]{0,1:S(1)}",
    "bf16[32,256]{1,0:T(8,128)(2,1,1,1)}", /* XLA docs: alternative bf16 packing */
    "pred[8,128]{1,0:T(32,128)(32,1)}",    /* XLA docs: the 1-bit format it proposes */
    "u32[9223372036854775807]",
    "(s32[]{:T(256)}, f32[8,128]{1,0:T(8,128)})",
    "(f32[], bf16[4]{0:T(512)(2,1)}, pred[2,2])",
    "()",
    "(f32[1])",
    "f32[123,456,789]{0,1,2:T(2,*,128)}", /* hlo_parser_test.cc: Tile::kCombineDimension */
    "bf16[123,456,789]{2,1,0:T(2,*,128)(2,1)}",
    "(f32[1], f32[2], f32[3], f32[4], f32[5], /*index=5*/f32[6], f32[7])",
    ("(s32[]{:T(256)}, s32[]{:T(256)}, s32[]{:T(256)}, s32[]{:T(256)}, s32[]{:T(256)}, "
     "/*index=5*/bf16[8,128]{1,0:T(8,128)(2,1)}, f32[], f32[], f32[], f32[], /*index=10*/u8[1])"),
};

static void test_canonical_shapes_print_back_unchanged(void **state)
{
    char buf[SHAPE_MAX_TEXT * 4];
    struct shape_list l;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(canonical) / sizeof(canonical[0]); i++) {
        const char *s = canonical[i];
        err_clear(&e);
        if (shape_list_parse(s, strlen(s), &l, &e) != 0)
            fail_msg("%s: %s", s, e.msg);
        assert_int_equal(shape_list_print(&l, buf, sizeof(buf)), (int)strlen(s));
        assert_string_equal(buf, s);
        if (s[0] != '(') {
            struct shape sh;
            assert_int_equal(shape_parse(s, strlen(s), &sh, &e), 0);
            assert_int_equal(shape_print(&sh, buf, sizeof(buf)), (int)strlen(s));
            assert_string_equal(buf, s);
        }
    }
}

/* XLA's lexer lets white space stand between the tokens of a shape (hlo_parser_test.cc
 * ParseShapeStringWithTilingLayout writes "T(2, * , 128)"; HloSchedulingTest writes
 * "f32[1000, 1000]"): they parse to the canonical shape. */
static void test_blanks_between_tokens_parse_to_the_canonical_shape(void **state)
{
    static const char *const pairs[][2] = {
        {"f32[123,456,789]{0,1,2:T(2, * , 128)}", "f32[123,456,789]{0,1,2:T(2,*,128)}"},
        {"f32[1000, 1000]", "f32[1000,1000]"},
        {"f32[ 8 ,\n 128 ] { 1 , 0 : T( 8 , 128 ) S( 1 ) }", "f32[8,128]{1,0:T(8,128)S(1)}"},
        {"bf16[4,1024] {1,0:T(8,128) (2,1)}", "bf16[4,1024]{1,0:T(8,128)(2,1)}"},
    };
    char buf[SHAPE_MAX_TEXT];
    struct shape sh;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        if (shape_parse(pairs[i][0], strlen(pairs[i][0]), &sh, &e) != 0)
            fail_msg("%s: %s", pairs[i][0], e.msg);
        assert_int_equal(shape_print(&sh, buf, sizeof(buf)), (int)strlen(pairs[i][1]));
        assert_string_equal(buf, pairs[i][1]);
    }
    assert_int_equal(shape_parse("f32[2,3]{1,0:T(8,*)}", 20, &sh, &e), 0);
    assert_int_equal(sh.tiles[0].dims[1], SHAPE_TILE_COMBINE);
}

static void test_parse_fills_every_field(void **state)
{
    struct shape sh;
    struct err e;
    const char *s = "s4[8,32768,1,256]{3,1,0,2:T(64,128)(8,1)E(4)S(1)}";

    (void)state;
    assert_int_equal(shape_parse(s, strlen(s), &sh, &e), 0);
    assert_int_equal(sh.dtype, DT_S4);
    assert_int_equal(sh.rank, 4);
    assert_int_equal(sh.dims[1], 32768);
    assert_true(sh.has_layout);
    assert_int_equal(sh.minor_to_major[0], 3);
    assert_int_equal(sh.minor_to_major[3], 2);
    assert_int_equal(sh.ntiles, 2);
    assert_int_equal(sh.tiles[0].rank, 2);
    assert_int_equal(sh.tiles[0].dims[0], 64);
    assert_int_equal(sh.tiles[0].dims[1], 128);
    assert_int_equal(sh.tiles[1].dims[0], 8);
    assert_int_equal(sh.element_size_bits, 4);
    assert_int_equal(sh.memory_space, 1);

    s = "pred[64]{0:T(1024)(128)(4,1)}";
    assert_int_equal(shape_parse(s, strlen(s), &sh, &e), 0);
    assert_int_equal(sh.ntiles, 3);
    assert_int_equal(sh.tiles[0].rank, 1);
    assert_int_equal(sh.tiles[1].rank, 1);
    assert_int_equal(sh.tiles[1].dims[0], 128);
    assert_int_equal(sh.tiles[2].rank, 2);

    s = "f32[2,3]";
    assert_int_equal(shape_parse(s, strlen(s), &sh, &e), 0);
    assert_false(sh.has_layout);
    uint64_t n;
    assert_int_equal(shape_elements(&sh, &n, &e), 0);
    assert_int_equal(n, 6);
}

/* Non-canonical but accepted input, and what it prints as. */
static void test_noncanonical_input_prints_canonical(void **state)
{
    static const char *pairs[][2] = {
        {"f32[]{}", "f32[]"},                    /* XLA omits "{}" on scalars */
        {"  f32[007,8]  \n", "f32[7,8]"},        /* spaces, leading zeros */
        {"(f32[1],s32[2])", "(f32[1], s32[2])"}, /* XLA's ", " separator */
        {"( f32[1] , s32[2] )", "(f32[1], s32[2])"},
        {"(/*index=0*/f32[1], /* x */ s32[2])", "(f32[1], s32[2])"}, /* comments skipped */
        {"(f32[1],f32[2],f32[3],f32[4],f32[5],f32[6])",
         "(f32[1], f32[2], f32[3], f32[4], f32[5], /*index=5*/f32[6])"},
        {"f32[8,128]{1,0:S(1)T(8,128)}", "f32[8,128]{1,0:T(8,128)S(1)}"}, /* XLA order */
        {"f32[8,128]{1,0:T(8,128)S(0)}", "f32[8,128]{1,0:T(8,128)S(0)}"}, /* kept as given */
    };
    char buf[512];
    struct shape_list l;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        if (shape_list_parse(pairs[i][0], strlen(pairs[i][0]), &l, &e) != 0)
            fail_msg("%s: %s", pairs[i][0], e.msg);
        assert_int_equal(shape_list_print(&l, buf, sizeof(buf)), (int)strlen(pairs[i][1]));
        assert_string_equal(buf, pairs[i][1]);
    }
}

static void test_every_dtype_parses_prints_and_sizes(void **state)
{
    struct err e;
    struct shape sh;
    char in[64], out[64];

    (void)state;
    for (int t = DT_INVALID + 1; t < DT_COUNT; t++) {
        const char *name = dtype_name((enum dtype)t);
        assert_int_equal(dtype_parse(name, strlen(name)), t);
        snprintf(in, sizeof(in), "%s[2]", name);
        assert_int_equal(shape_parse(in, strlen(in), &sh, &e), 0);
        assert_int_equal(shape_print(&sh, out, sizeof(out)), (int)strlen(in));
        assert_string_equal(in, out);
        assert_true(dtype_bytes((enum dtype)t) * 8 >= dtype_bits((enum dtype)t));
    }
    assert_int_equal(dtype_bits(DT_PRED), 8);
    assert_int_equal(dtype_bits(DT_S4), 4);
    assert_int_equal(dtype_bytes(DT_S4), 1);
    assert_int_equal(dtype_bytes(DT_BF16), 2);
    assert_int_equal(dtype_bytes(DT_C128), 16);
    assert_int_equal(dtype_bytes(DT_TOKEN), 0);
    assert_string_equal(dtype_name(DT_INVALID), "invalid");
    assert_string_equal(dtype_name((enum dtype)999), "invalid");
    assert_int_equal(dtype_parse("F32", 3), DT_INVALID); /* XLA spells types lower-case */
    assert_int_equal(dtype_parse("f3", 2), DT_INVALID);
}

/* The names people write (NumPy, JAX, PyTorch) are XLA's types; an HLO text's stay XLA's. */
static void test_dtype_aliases_are_the_types_people_write(void **state)
{
    static const struct {
        const char *name;
        enum dtype want;
    } cases[] = {
        {"bf16", DT_BF16},
        {"bfloat16", DT_BF16},
        {"jnp.bfloat16", DT_BF16},
        {"torch.bfloat16", DT_BF16},
        {"jax.numpy.bfloat16", DT_BF16},
        {"float32", DT_F32},
        {"np.float32", DT_F32},
        {"float16", DT_F16},
        {"torch.half", DT_F16},
        {"int8", DT_S8},
        {"torch.int8", DT_S8},
        {"uint8", DT_U8},
        {"torch.long", DT_S64},
        {"bool", DT_PRED},
        {"jnp.float8_e4m3fn", DT_F8E4M3FN},
        {"fp8", DT_F8E4M3FN},
        {"int4", DT_S4},
        {"float64", DT_F64},
        /* refused: ambiguous (torch.float is f32, NumPy's float f64), unknown, misspelt */
        {"float", DT_INVALID},
        {"torch.float", DT_INVALID},
        {"int", DT_INVALID},
        {"Bfloat16", DT_INVALID},
        {"jnp.", DT_INVALID},
        {"jnp.jnp.bfloat16", DT_INVALID},
        {"tf.bfloat16", DT_INVALID},
        {"", DT_INVALID},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (dtype_parse_alias(cases[i].name, strlen(cases[i].name)) != cases[i].want)
            fail_msg("%s: %s, wanted %s", cases[i].name,
                     dtype_name(dtype_parse_alias(cases[i].name, strlen(cases[i].name))),
                     dtype_name(cases[i].want));
    assert_int_equal(dtype_parse("bfloat16", 8), DT_INVALID); /* HLO's types: XLA's only */
}

struct bad {
    const char *text;
    int code;
    const char *needle; /* must appear in the message */
};

static const struct bad bad[] = {
    {"", ERR_INVALID,
     "expected an element type (f32, bf16, s8, ...) at offset 0, found end of input"},
    {"f33[2]", ERR_NOTFOUND, "unknown element type 'f33' at offset 0"},
    {"float32[2]", ERR_NOTFOUND, "unknown element type 'float32'"},
    {"f32", ERR_INVALID, "expected '[' at offset 3"},
    {"f32[", ERR_INVALID, "expected dimension at offset 4, found end of input"},
    {"f32[2", ERR_INVALID, "expected ',' or ']' after a dimension at offset 5"},
    {"f32[2,]", ERR_INVALID, "expected dimension at offset 6, found ']'"},
    {"f32[-2]", ERR_INVALID, "negative dimension at offset 4"},
    {"f32[2,-1]", ERR_INVALID, "negative dimension at offset 6"},
    {"f32[+2]", ERR_INVALID, "expected dimension at offset 4, found '+'"},
    {"f32[2x3]", ERR_INVALID, "offset 5, found 'x'"},
    {"f32[99999999999999999999]", ERR_OVERFLOW, "dimension at offset 4 is larger than 2^63-1"},
    {"f32[9223372036854775808]", ERR_OVERFLOW, "larger than 2^63-1"},
    {"f32[<=8]", ERR_INVALID, "dimension 0 at offset 4 is dynamic ('<=')"},
    {"f32[2,?]", ERR_INVALID, "dimension 1 at offset 6 is dynamic ('?')"},
    {"f32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", ERR_LIMIT,
     "rank above the limit of 32"},
    {"f32[2,3]{1}", ERR_INVALID, "lists 1 dimensions but the rank is 2"},
    {"f32[2,3]{2,0}", ERR_INVALID, "layout dimension 2 at offset 9 is not a dimension"},
    {"f32[2,3,4]{1,1,0}", ERR_INVALID, "layout dimension 1 at offset 13 is repeated"},
    {"f32[2,3]{0,1,0}", ERR_INVALID, "more dimensions than the rank 2"},
    {"f32[2,3]{1,0", ERR_INVALID, "expected '}' to close the layout at offset 12"},
    {"f32[2,3]{1,0:}", ERR_INVALID, "expected a layout attribute after ':' at offset 13"},
    {"f32[2,3]{1,0:X(1)}", ERR_INVALID, "expected a layout attribute T(..), L(n), E(n) or S(n)"},
    {"f32[2,3]{1,0:T()}", ERR_INVALID, "expected tile dimension at offset 15"},
    {"f32[2,3]{1,0:T(0,128)}", ERR_INVALID, "tile dimension 0 at offset 15 is outside"},
    {"f32[2,3]{1,0:T(8,128}", ERR_INVALID, "expected ',' or ')' in a tile at offset 20"},
    {"f32[2,3]{1,0:T(1,1,1,1,1)}", ERR_LIMIT, "more than 4 dimensions"},
    {"f32[2,3]{1,0:T(1)(1)(1)(1)(1)}", ERR_LIMIT, "more than 4 tiles"},
    {"f32[2,3]{1,0:T(2,8,128)}", ERR_INVALID, "tile 0 has 3 dimensions, more than the rank-2"},
    {"f32[]{:T(2,8,128)}", ERR_INVALID, "more than the rank-0 shape can take"},
    {"f32[2,3]{1,0:T(8,128)T(8,128)}", ERR_INVALID, "layout attribute 'T' repeated"},
    {"f32[2,3]{1,0:E(0)}", ERR_INVALID, "element size in bits 0 at offset 15 is outside 1..128"},
    {"f32[2,3]{1,0:E(16)}", ERR_INVALID, "E(16) is narrower than the 32-bit element type f32"},
    {"f32[2,3]{1,0:S(300)}", ERR_INVALID, "memory space 300"},
    {"f32[2,3]{1,0:S(1}", ERR_INVALID, "expected ')' at offset 16"},
    {"f32[2,3]{1,0:L(0)}", ERR_INVALID, "tail padding alignment 0"},
    {"f32[2,3]{1,0:D(D,C)}", ERR_INVALID, "layout attribute 'D' at offset 13 is not supported"},
    {"f32[2,3]{1,0:#(s32)}", ERR_INVALID, "layout attribute '#'"},
    {"f32[2,3]{1,0:SC(0:1)}", ERR_INVALID, "'SC' (split configs)"},
    {"f32[2,3]{1,0:P(f32[2,3])}", ERR_INVALID, "layout attribute 'P'"},
    {"f32[2,3]{1,0:M(8)}", ERR_INVALID, "layout attribute 'M'"},
    {"f32[2,3] junk", ERR_INVALID, "expected end of the shape at offset 9, found 'j'"},
    {"f32[2,3]{1,0}x", ERR_INVALID, "expected end of the shape at offset 13"},
    {"f32[2]\x01", ERR_INVALID, "found byte 0x01"},
    {"(f32[2], ", ERR_INVALID,
     "tuple element 1: expected an element type (f32, bf16, s8, ...) at offset 9"},
    {"(f32[2] s32[]", ERR_INVALID, "expected ',' or ')' in a tuple at offset 8"},
    {"(f32[2], f33[])", ERR_NOTFOUND, "tuple element 1: unknown element type 'f33' at offset 9"},
    {"(f32[2], (s32[]))", ERR_LIMIT, "nested tuple at offset 9"},
    {"(f32[2]) x", ERR_INVALID, "expected end of the shape at offset 9"},
    {"(f32[2], /*index=1 f32[3])", ERR_INVALID, "unterminated comment at offset 9"},
    {"(f32[2], /index f32[3])", ERR_INVALID, "expected a shape or a /*...*/ comment"},
};

/* Every malformed shape text is rejected with its code, where "shape", and a message naming
 * what is wrong (and at which byte offset, where there is one). */
static void test_malformed_shapes_are_rejected_with_code_and_reason(void **state)
{
    struct shape_list l;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err_clear(&e);
        int rc = shape_list_parse(bad[i].text, strlen(bad[i].text), &l, &e);
        print_message("%-40s -> %d %s\n", bad[i].text, rc, e.msg);
        assert_int_equal(rc, bad[i].code);
        assert_int_equal(e.code, bad[i].code);
        assert_string_equal(e.where, "shape");
        if (strstr(e.msg, bad[i].needle) == NULL)
            fail_msg("%s: message \"%s\" lacks \"%s\"", bad[i].text, e.msg, bad[i].needle);
    }
}

static void test_tuples_hold_at_most_the_list_limit(void **state)
{
    static char big[64 * 8 + 8];
    struct shape_list l;
    struct shape sh;
    struct err e;
    size_t n = 0;

    (void)state;
    big[n++] = '(';
    for (int i = 0; i < SHAPE_LIST_MAX + 1; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, i ? ", f32[]" : "f32[]");
    big[n++] = ')';
    assert_int_equal(shape_list_parse(big, n, &l, &e), ERR_LIMIT);
    assert_non_null(strstr(e.msg, "more than 64 elements"));
    /* exactly the limit is fine */
    n = 0;
    big[n++] = '(';
    for (int i = 0; i < SHAPE_LIST_MAX; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, i ? ", f32[]" : "f32[]");
    big[n++] = ')';
    assert_int_equal(shape_list_parse(big, n, &l, &e), 0);
    assert_int_equal(l.n, SHAPE_LIST_MAX);
    /* shape_parse refuses tuples */
    assert_int_equal(shape_parse("(f32[])", 7, &sh, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "tuple"));
    /* the length bounds the parse: no read past len */
    assert_int_equal(shape_parse("f32[2]garbage", 6, &sh, &e), 0);
    assert_int_equal(sh.dims[0], 2);
}

static void test_print_refuses_short_buffers(void **state)
{
    struct shape sh;
    struct shape_list l;
    struct err e;
    char buf[64];
    const char *s = "bf16[2048,1,2048,128]{0,1,3,2:T(4,128)(2,1)}";

    (void)state;
    assert_int_equal(shape_parse(s, strlen(s), &sh, &e), 0);
    assert_int_equal(shape_print(&sh, buf, strlen(s) + 1), (int)strlen(s));
    assert_int_equal(shape_print(&sh, buf, strlen(s)), ERR_LIMIT);
    assert_string_equal(buf, "");
    assert_int_equal(shape_print(&sh, buf, 0), ERR_LIMIT);
    assert_int_equal(shape_list_parse("(f32[1], f32[2])", 16, &l, &e), 0);
    assert_int_equal(shape_list_print(&l, buf, 10), ERR_LIMIT);

    /* the longest shape still prints within SHAPE_MAX_TEXT */
    memset(&sh, 0, sizeof(sh));
    sh.dtype = DT_F8E4M3B11FNUZ;
    sh.rank = SHAPE_MAX_RANK;
    sh.has_layout = true;
    for (int i = 0; i < SHAPE_MAX_RANK; i++) {
        sh.dims[i] = INT64_MAX;
        sh.minor_to_major[i] = (uint8_t)(SHAPE_MAX_RANK - 1 - i);
    }
    sh.ntiles = SHAPE_MAX_TILES;
    for (int t = 0; t < SHAPE_MAX_TILES; t++) {
        sh.tiles[t].rank = 2;
        sh.tiles[t].dims[0] = INT32_MAX;
        sh.tiles[t].dims[1] = INT32_MAX;
    }
    sh.tail_align = INT32_MAX;
    sh.element_size_bits = 128;
    sh.memory_space = 127;
    char big[SHAPE_MAX_TEXT];
    int n = shape_print(&sh, big, sizeof(big));
    assert_true(n > 0);
    struct shape back;
    assert_int_equal(shape_parse(big, (size_t)n, &back, &e), 0);
    char again[SHAPE_MAX_TEXT];
    assert_int_equal(shape_print(&back, again, sizeof(again)), n);
    assert_string_equal(big, again);
}

static void test_validate_refuses_out_of_range_fields(void **state)
{
    struct shape sh;
    struct err e;
    uint64_t n;

    (void)state;
    assert_int_equal(shape_parse("f32[8,128]{1,0:T(8,128)}", 24, &sh, &e), 0);
    assert_int_equal(shape_validate(&sh, &e), 0);
    sh.rank = SHAPE_MAX_RANK + 1;
    assert_int_equal(shape_validate(&sh, &e), ERR_LIMIT);
    sh.rank = 2;
    sh.ntiles = SHAPE_MAX_TILES + 1;
    assert_int_equal(shape_validate(&sh, &e), ERR_LIMIT);
    sh.ntiles = 1;
    sh.tiles[0].dims[0] = 0;
    assert_int_equal(shape_validate(&sh, &e), ERR_INVALID);
    sh.tiles[0].dims[0] = 8;
    sh.tail_align = -1;
    assert_int_equal(shape_validate(&sh, &e), ERR_INVALID);
    assert_int_equal(shape_parse("u8[4294967296,4294967296,2]", 27, &sh, &e), 0);
    assert_int_equal(shape_elements(&sh, &n, &e), ERR_OVERFLOW);
    assert_non_null(strstr(e.msg, "overflows"));
}

/* Mutated canonical strings: the parser either accepts (and then print is a fixed point)
 * or fails with a code and a message; it never reads past len (ASan run checks that). */
static void test_mutated_shapes_parse_or_fail_cleanly(void **state)
{
    uint64_t r = 0x853c49e6748fea9bull;
    static const char alphabet[] = "0123456789[](){},:TSELfsbu*/-<?# \x01";

    (void)state;
    for (int it = 0; it < 200000; it++) {
        const char *base = canonical[it % (sizeof(canonical) / sizeof(canonical[0]))];
        char buf[512], out[SHAPE_MAX_TEXT * 4], out2[SHAPE_MAX_TEXT * 4];
        size_t len = strlen(base);
        struct shape_list l, l2;
        struct err e;

        memcpy(buf, base, len + 1); /* canonical strings are far shorter than buf */
        for (int k = 0; k < 3; k++) {
            rng_xorshift64(&r);
            size_t pos = (size_t)(r % (len + 1));
            switch ((r >> 20) % 3) {
            case 0: /* overwrite */
                if (pos < len)
                    buf[pos] = alphabet[(r >> 32) % (sizeof(alphabet) - 1)];
                break;
            case 1: /* truncate */
                len = pos;
                break;
            default: /* insert */
                if (len + 1 < sizeof(buf)) {
                    memmove(buf + pos + 1, buf + pos, len - pos);
                    buf[pos] = alphabet[(r >> 32) % (sizeof(alphabet) - 1)];
                    len++;
                }
            }
        }
        err_clear(&e);
        int rc = shape_list_parse(buf, len, &l, &e);
        if (rc != 0) {
            assert_true(rc < 0);
            assert_int_equal(e.code, rc);
            assert_true(strlen(e.msg) > 0);
            continue;
        }
        int n = shape_list_print(&l, out, sizeof(out));
        assert_true(n >= 0);
        assert_int_equal(shape_list_parse(out, (size_t)n, &l2, &e), 0);
        assert_int_equal(shape_list_print(&l2, out2, sizeof(out2)), n);
        assert_string_equal(out, out2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_shapes_print_back_unchanged),
        cmocka_unit_test(test_blanks_between_tokens_parse_to_the_canonical_shape),
        cmocka_unit_test(test_parse_fills_every_field),
        cmocka_unit_test(test_noncanonical_input_prints_canonical),
        cmocka_unit_test(test_every_dtype_parses_prints_and_sizes),
        cmocka_unit_test(test_dtype_aliases_are_the_types_people_write),
        cmocka_unit_test(test_malformed_shapes_are_rejected_with_code_and_reason),
        cmocka_unit_test(test_tuples_hold_at_most_the_list_limit),
        cmocka_unit_test(test_print_refuses_short_buffers),
        cmocka_unit_test(test_validate_refuses_out_of_range_fields),
        cmocka_unit_test(test_mutated_shapes_parse_or_fail_cleanly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
