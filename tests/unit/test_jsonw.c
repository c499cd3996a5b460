/*
 * test_jsonw.c - the streaming JSON writer: numbers exactly as printf prints them (the
 * hand-written integer path against %llu/%lld, whole doubles against %.6g), keys that need
 * escapes and long keys (the slow path) against short plain ones (one append), the limit
 * at its exact byte, the sink's pieces, a failing sink, and the pretty layout against
 * json-c's pretty printer; and the output always UTF-8: well-formed sequences copied, every
 * other byte U+FFFD (worked cases, and random strings json-c's strict UTF-8 parser must read
 * back, identical when they were UTF-8).
 */
#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/jsonw.h"

#include "jsonw_pieces.h"
#include "rng.h"

static uint64_t rng = 0x2545f4914f6cdd1dull; /* rng_xorshift64's stream */

/* A number to write alone: its writer's type, and its value in that field. */
struct num {
    enum { NUM_U64, NUM_I64, NUM_DOUBLE } type;
    uint64_t u;
    int64_t i;
    double d;
};

#define U64(v)    ((struct num){.type = NUM_U64, .u = (v)})
#define I64(v)    ((struct num){.type = NUM_I64, .i = (v)})
#define DOUBLE(v) ((struct num){.type = NUM_DOUBLE, .d = (v)})

/* v written alone (compact) is want; without want, v as printf prints it (%llu, %lld,
 * %.6g). */
static void check_num(struct num v, const char *want)
{
    struct jsonw w;
    char printed[32], *out = NULL;
    size_t len = 0;

    jsonw_init(&w, 1 << 20);
    if (v.type == NUM_U64) {
        jsonw_u64(&w, NULL, v.u);
        snprintf(printed, sizeof(printed), "%" PRIu64, v.u);
    } else if (v.type == NUM_I64) {
        jsonw_i64(&w, NULL, v.i);
        snprintf(printed, sizeof(printed), "%" PRId64, v.i);
    } else {
        jsonw_double(&w, NULL, v.d);
        snprintf(printed, sizeof(printed), "%.6g", v.d);
    }
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    assert_int_equal(strlen(out), len);
    assert_string_equal(out, want != NULL ? want : printed);
    free(out);
}

static void check_u64(uint64_t v)
{
    check_num(U64(v), NULL);
}

static void check_i64(int64_t v)
{
    check_num(I64(v), NULL);
}

static void check_double(double v)
{
    check_num(DOUBLE(v), NULL);
}

/* Integers: the edges, every power of ten and its neighbours, and random values of every
 * width, each as printf prints it. */
static void test_integers_print_as_printf(void **state)
{
    static const uint64_t edges[] = {0,
                                     1,
                                     9,
                                     10,
                                     99,
                                     100,
                                     UINT32_MAX,
                                     (uint64_t)INT64_MAX,
                                     (uint64_t)INT64_MAX + 1,
                                     UINT64_MAX - 1,
                                     UINT64_MAX};
    uint64_t p = 1;
    (void)state;

    for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
        check_u64(edges[i]);
        check_i64((int64_t)edges[i]);
    }
    check_i64(INT64_MIN);
    check_i64(INT64_MIN + 1);
    check_i64(-1);
    for (int d = 0; d < 19; d++, p *= 10) {
        check_u64(p - 1);
        check_u64(p);
        check_u64(p + 1);
        check_i64(-(int64_t)p);
        check_i64(-(int64_t)p + 1);
    }
    for (int i = 0; i < 20000; i++) {
        uint64_t v = rng_xorshift64(&rng);
        v >>= rng_xorshift64(&rng) % 64; /* every magnitude */
        check_u64(v);
        check_i64((int64_t)v);
        check_i64(-(int64_t)(v >> 1));
    }
}

/* Doubles: whole numbers below 10^6 take the digit path, everything else %.6g; both must
 * read as %.6g prints them, at and around the 10^6 edge, signed zero included. */
static void test_doubles_read_as_printf_g6_prints_them(void **state)
{
    static const double vals[] = {0.0,
                                  -0.0,
                                  1.0,
                                  -1.0,
                                  512.0,
                                  8.60504201,
                                  0.5,
                                  -0.25,
                                  999999.0,
                                  -999999.0,
                                  1e6,
                                  -1e6,
                                  1000001.0,
                                  999999.5,
                                  123456.5,
                                  1e-7,
                                  9007199254740992.0,
                                  1e300,
                                  65536.0,
                                  2.5e-5};
    (void)state;

    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
        check_double(vals[i]);
    check_num(DOUBLE(-0.0), "-0");
    check_num(DOUBLE(512.0), "512");
    check_num(DOUBLE(1e6), "1e+06");
    check_num(DOUBLE(NAN), "null");
    check_num(DOUBLE(-INFINITY), "null");
    for (int i = 0; i < 20000; i++) {
        int64_t whole = (int64_t)(rng_xorshift64(&rng) % 2200000) - 1100000;
        check_double((double)whole);
        check_double((double)whole / 7.0);
        check_double((double)(rng_xorshift64(&rng) >> 11) * 0x1p-20);
    }
}

/* A document with short plain keys, a 64-byte key (the longest one append takes), a
 * 65-byte one, keys that need escapes, and nested empty containers. */
static void write_doc(struct jsonw *w)
{
    char k64[65], k65[66];

    memset(k64, 'a', 64);
    k64[64] = '\0';
    memset(k65, 'b', 65);
    k65[65] = '\0';
    jsonw_obj_begin(w, NULL);
    jsonw_u64(w, "id", 7);
    jsonw_str(w, "name", "t\"0\\\n\x01");
    jsonw_i64(w, k64, -5);
    jsonw_i64(w, k65, 6);
    jsonw_bool(w, "q\"uote", true);
    jsonw_null(w, "ctl\x02\t");
    jsonw_arr_begin(w, "dims");
    jsonw_arr_end(w);
    jsonw_obj_begin(w, "nest");
    jsonw_arr_begin(w, "live");
    jsonw_i64(w, NULL, 0);
    jsonw_i64(w, NULL, 46);
    jsonw_arr_end(w);
    jsonw_double(w, "expansion", 8.60504);
    jsonw_obj_end(w);
    jsonw_obj_end(w);
}

static void test_keys_and_strings_are_escaped(void **state)
{
    struct jsonw w;
    char *out = NULL, k64[65], k65[66], want[512];
    size_t len = 0;
    (void)state;

    memset(k64, 'a', 64);
    k64[64] = '\0';
    memset(k65, 'b', 65);
    k65[65] = '\0';
    jsonw_init(&w, 1 << 20);
    write_doc(&w);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    snprintf(want, sizeof(want),
             "{\"id\":7,\"name\":\"t\\\"0\\\\\\n\\u0001\",\"%s\":-5,\"%s\":6,\"q\\\"uote\":true,"
             "\"ctl\\u0002\\t\":null,\"dims\":[],\"nest\":{\"live\":[0,46],\"expansion\":8.60504}}",
             k64, k65);
    assert_string_equal(out, want);
    assert_int_equal(len, strlen(want));
    free(out);
}

/* s (n bytes) written as a compact string value and as a key: the malloc'd document. */
static char *str_doc(const char *s, size_t n)
{
    struct jsonw w;
    char *out = NULL, *z = malloc(n + 1);
    size_t len = 0;

    assert_non_null(z);
    memcpy(z, s, n);
    z[n] = '\0';
    jsonw_init(&w, 1 << 20);
    jsonw_obj_begin(&w, NULL);
    jsonw_str(&w, z, z);
    jsonw_obj_end(&w);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    free(z);
    return out;
}

static void test_invalid_utf8_becomes_replacement_characters(void **state)
{
    static const struct {
        const char *in, *val; /* in; the string value written (between the quotes) */
    } cases[] = {
        {"a\xff"
         "b",
         "a\\ufffdb"},
        {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
         "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"},             /* é € U+1F600 */
        {"\xc0\xaf", "\\ufffd\\ufffd"},                       /* overlong '/' */
        {"\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd"},            /* overlong, three bytes */
        {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},            /* a surrogate, U+D800 */
        {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* U+110000 */
        {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},             /* U+10FFFF, the last */
        {"ab\xe2\x82", "ab\\ufffd\\ufffd"},                   /* cut short at the end */
        {"\xe2\x82"
         "c",
         "\\ufffd\\ufffdc"},       /* cut short by ASCII */
        {"\x80\"", "\\ufffd\\\""}, /* a lone continuation byte */
    };
    char want[256];
    (void)state;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = str_doc(cases[i].in, strlen(cases[i].in));
        snprintf(want, sizeof(want), "{\"%s\":\"%s\"}", cases[i].val, cases[i].val);
        assert_string_equal(out, want);
        free(out);
    }
    /* Random strings of code points (1 to 4 bytes, no NUL) and stray bytes: json-c in strict
     * UTF-8 mode reads every document back, the value equal to the input when it was all
     * code points. */
    for (int round = 0; round < 20000; round++) {
        unsigned char buf[64] = {0};
        size_t n = 0;
        bool valid = true;
        while (n + 4 < sizeof(buf) && rng_xorshift64(&rng) % 8 != 0) {
            uint32_t cp;
            if (rng_xorshift64(&rng) % 5 == 0) {
                buf[n++] =
                    (unsigned char)(0x80 + rng_xorshift64(&rng) % 0x80); /* a byte >= 0x80 alone */
                valid = false;
                continue;
            }
            do
                cp = (uint32_t)(1 + rng_xorshift64(&rng) % 0x10FFFF);
            while (cp >= 0xD800 && cp <= 0xDFFF);
            if (cp < 0x80) {
                buf[n++] = (unsigned char)cp;
            } else if (cp < 0x800) {
                buf[n++] = (unsigned char)(0xC0 | cp >> 6);
                buf[n++] = (unsigned char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                buf[n++] = (unsigned char)(0xE0 | cp >> 12);
                buf[n++] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
                buf[n++] = (unsigned char)(0x80 | (cp & 0x3F));
            } else {
                buf[n++] = (unsigned char)(0xF0 | cp >> 18);
                buf[n++] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
                buf[n++] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
                buf[n++] = (unsigned char)(0x80 | (cp & 0x3F));
            }
        }
        char *out = str_doc((const char *)buf, n);
        struct json_tokener *tok = json_tokener_new();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        struct json_object *o = json_tokener_parse_ex(tok, out, (int)strlen(out));
        assert_non_null(o);
        if (valid) {
            struct json_object *v = NULL;
            buf[n] = '\0';
            assert_true(json_object_object_get_ex(o, (const char *)buf, &v));
            assert_string_equal(json_object_get_string(v), (const char *)buf);
        }
        json_object_put(o);
        json_tokener_free(tok);
        free(out);
    }
}

/* text is json-c's pretty print of itself (json-c's own document spacing). */
static void assert_json_c_pretty(const char *text)
{
    json_object *doc = json_tokener_parse(text);
    assert_non_null(doc);
    assert_string_equal(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE),
                        text);
    json_object_put(doc);
}

/* Pretty: exactly json-c's pretty printer on the same document. */
static void test_pretty_is_json_c(void **state)
{
    struct jsonw w;
    struct pieces p = {0};
    char *out = NULL;
    size_t len = 0;
    (void)state;

    jsonw_init_sink(&w, collect, &p, true);
    write_doc(&w);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    assert_null(out);
    assert_int_equal(len, p.len);
    assert_json_c_pretty(p.buf);
    free(p.buf);
}

/* A long document: many small values, and strings longer than a piece. */
static void write_long(struct jsonw *w, const char *big)
{
    jsonw_arr_begin(w, NULL);
    for (int i = 0; i < 100000; i++) {
        jsonw_obj_begin(w, NULL);
        jsonw_u64(w, "offset", (uint64_t)i * 512);
        jsonw_str(w, "name", i % 25000 == 0 ? big : "t");
        jsonw_obj_end(w);
    }
    jsonw_arr_end(w);
}

/* The sink gets pieces of exactly JSONW_SINK_CHUNK bytes, the last one shorter, even where
 * a string is longer than a piece; put together they are the buffered document byte for
 * byte. */
static void test_sink_gets_whole_chunks_making_up_the_document(void **state)
{
    struct jsonw w;
    struct pieces p = {0};
    char *out = NULL, *big = malloc(3 * JSONW_SINK_CHUNK + 1);
    size_t len = 0;
    (void)state;

    assert_non_null(big);
    memset(big, 'x', 3 * JSONW_SINK_CHUNK);
    big[3 * JSONW_SINK_CHUNK] = '\0';
    jsonw_init(&w, SIZE_MAX);
    write_long(&w, big);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    jsonw_init_sink(&w, collect, &p, false);
    write_long(&w, big);
    char *none = NULL;
    size_t total = 0;
    assert_int_equal(jsonw_finish(&w, &none, &total), ERR_OK);
    assert_int_equal(total, len);
    assert_int_equal(p.len, len);
    assert_memory_equal(p.buf, out, len);
    assert_int_equal(p.n, (len + JSONW_SINK_CHUNK - 1) / JSONW_SINK_CHUNK);
    assert_int_equal(p.max_piece, JSONW_SINK_CHUNK);
    assert_int_equal(p.uneven, 0);
    free(p.buf);

    /* A sink that fails stops the document with its code; nothing is written after, and
     * the writer counts the three whole pieces it handed over. */
    p = (struct pieces){.fail_at = 3};
    jsonw_init_sink(&w, collect, &p, false);
    write_long(&w, big);
    assert_int_equal(jsonw_finish(&w, &none, &total), ERR_LIMIT);
    assert_int_equal(p.n, 3);
    assert_int_equal(p.len, 2 * JSONW_SINK_CHUNK);
    assert_int_equal(w.total, 3 * JSONW_SINK_CHUNK);
    free(p.buf);
    free(out);
    free(big);
}

/* Element i of the fragment tests' array: an object with nested values, about 100 bytes;
 * at bad (if not SIZE_MAX) it nests past JSONW_MAX_DEPTH, an ERR_INTERNAL. */
static void write_elem(struct jsonw *w, size_t i, size_t bad)
{
    jsonw_obj_begin(w, NULL);
    jsonw_u64(w, "id", i);
    jsonw_str(w, "name", i % 7 == 0 ? "q\"\\\x01\xc3\xa9" : "tensor");
    jsonw_arr_begin(w, "dims");
    for (size_t d = 0; d < i % 4; d++)
        jsonw_i64(w, NULL, -(int64_t)(i * d));
    jsonw_arr_end(w);
    for (int k = 0; i == bad && k < JSONW_MAX_DEPTH; k++)
        jsonw_arr_begin(w, NULL);
    jsonw_double(w, "ratio", (double)i / 3);
    jsonw_obj_end(w);
}

#define FRAG_N 3000

/* {"a": [elements 0..FRAG_N-1], "z": true}: one element at a time into w, or with the
 * ranges [3, 10) and [13, FRAG_N) written into one fragment (reused) and spliced in. */
static void write_frag_doc(struct jsonw *w, bool fragments, size_t bad)
{
    struct jsonw f;

    jsonw_obj_begin(w, NULL);
    jsonw_arr_begin(w, "a");
    if (!fragments) {
        for (size_t i = 0; i < FRAG_N; i++)
            write_elem(w, i, bad);
    } else {
        for (size_t i = 0; i < 3; i++)
            write_elem(w, i, bad);
        jsonw_fragment_init(&f, w);
        for (size_t i = 3; i < 10; i++)
            write_elem(&f, i, bad);
        jsonw_fragment_append(w, &f);
        for (size_t i = 10; i < 13; i++)
            write_elem(w, i, bad);
        for (size_t i = 13; i < FRAG_N; i++)
            write_elem(&f, i, bad);
        jsonw_fragment_append(w, &f);
        jsonw_discard(&f);
    }
    jsonw_arr_end(w);
    jsonw_bool(w, "z", true);
    jsonw_obj_end(w);
}

/* Fragments spliced in are the document written in one go, byte for byte and piece for
 * piece, compact and pretty, buffered and streamed; an error inside a fragment ends the
 * document as the same error at the same place does (the same pieces before it). */
static void test_fragments_write_the_same_document(void **state)
{
    (void)state;
    for (int pretty = 0; pretty < 2; pretty++) {
        for (size_t bad = SIZE_MAX, round = 0; round < 4; round++) {
            struct pieces p[2] = {{0}, {0}};
            char *out[2] = {NULL, NULL};
            size_t len[2] = {0, 0}, total[2] = {0, 0};
            int rc[2];
            bad = round == 0 ? SIZE_MAX : round == 1 ? 1 : round == 2 ? 5 : 2500;
            for (int k = 0; k < 2; k++) {
                struct jsonw w;
                char *none = NULL;
                jsonw_init_sink(&w, collect, &p[k], pretty);
                write_frag_doc(&w, k == 1, bad);
                rc[k] = jsonw_finish(&w, &none, &total[k]);
                total[k] = w.total;
                if (pretty == 0) { /* the buffered document too */
                    jsonw_init(&w, SIZE_MAX);
                    write_frag_doc(&w, k == 1, bad);
                    assert_int_equal(jsonw_finish(&w, &out[k], &len[k]), rc[k]);
                }
            }
            assert_int_equal(rc[0], bad == SIZE_MAX ? ERR_OK : ERR_INTERNAL);
            assert_int_equal(rc[1], rc[0]);
            assert_int_equal(total[1], total[0]);
            assert_int_equal(p[1].n, p[0].n);
            assert_int_equal(p[1].len, p[0].len);
            assert_int_equal(p[0].uneven, 0);
            assert_int_equal(p[1].uneven, 0);
            if (p[0].len > 0)
                assert_memory_equal(p[1].buf, p[0].buf, p[0].len);
            if (bad == 2500)
                assert_true(p[0].n >= 2); /* pieces went out before the error */
            if (bad == SIZE_MAX && pretty == 0) {
                assert_int_equal(len[1], len[0]);
                assert_string_equal(out[1], out[0]);
                assert_int_equal(p[0].len, len[0]);
            }
            for (int k = 0; k < 2; k++) {
                free(p[k].buf);
                free(out[k]);
            }
        }
    }
}

/* A long pretty document (about 400 KB: six pieces, so the in-place prefixes and closes
 * meet the pieces' edges and take the slow way there) is json-c's pretty print of it,
 * written whole or with fragments. */
static void test_long_pretty_is_json_c(void **state)
{
    (void)state;
    for (int fragments = 0; fragments < 2; fragments++) {
        struct jsonw w;
        struct pieces p = {0};
        char *none = NULL;
        size_t len = 0;
        jsonw_init_sink(&w, collect, &p, true);
        write_frag_doc(&w, fragments, SIZE_MAX);
        assert_int_equal(jsonw_finish(&w, &none, &len), ERR_OK);
        assert_true(p.n >= 5);
        assert_json_c_pretty(p.buf);
        free(p.buf);
    }
}

/* write (a document out, len bytes, written another way or the same) under max_bytes len is out
 * byte for byte; under len - 1 it is ERR_LIMIT, and nothing is kept. */
static void assert_limit_exact(const char *out, size_t len, void (*write)(struct jsonw *w))
{
    struct jsonw w;
    char *again = NULL;
    size_t len2 = 0;

    jsonw_init(&w, len);
    write(&w);
    assert_int_equal(jsonw_finish(&w, &again, &len2), ERR_OK);
    assert_int_equal(len2, len);
    assert_string_equal(again, out);
    free(again);
    again = NULL;
    jsonw_init(&w, len - 1);
    write(&w);
    assert_int_equal(jsonw_finish(&w, &again, &len2), ERR_LIMIT);
    assert_null(again);
}

/* The fragment test's document, written with fragments. */
static void write_fragmented(struct jsonw *w)
{
    write_frag_doc(w, true, SIZE_MAX);
}

/* write_long with a short string for the long one. */
static void write_long_plain(struct jsonw *w)
{
    write_long(w, "big");
}

/* A fragment must end at the depth it began (else ERR_INTERNAL), and its text counts
 * against the document's max_bytes exactly as if written there. */
static void test_fragment_must_close_its_depth_and_counts_to_limit(void **state)
{
    struct jsonw w, f;
    char *out = NULL;
    size_t len = 0;
    (void)state;

    jsonw_init(&w, 1024);
    jsonw_arr_begin(&w, NULL);
    jsonw_u64(&w, NULL, 1);
    jsonw_fragment_init(&f, &w);
    jsonw_arr_begin(&f, NULL);
    jsonw_fragment_append(&w, &f);
    jsonw_discard(&f);
    jsonw_arr_end(&w);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_INTERNAL);
    assert_null(out);

    jsonw_init(&w, SIZE_MAX);
    write_frag_doc(&w, false, SIZE_MAX);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    assert_limit_exact(out, len, write_fragmented);
    free(out);
}

/* max_bytes is exact: a document of exactly that many bytes is written, one byte less
 * fails with ERR_LIMIT (and frees what was written). */
static void test_max_bytes_is_exact(void **state)
{
    struct jsonw w;
    char *out = NULL;
    size_t len = 0;
    (void)state;

    jsonw_init(&w, SIZE_MAX);
    write_long(&w, "big");
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    assert_limit_exact(out, len, write_long_plain);
    free(out);

    /* An empty writer finishes as an empty document; an unbalanced one is an error. */
    jsonw_init(&w, 16);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_OK);
    assert_string_equal(out, "");
    assert_int_equal(len, 0);
    free(out);
    jsonw_init(&w, 16);
    jsonw_arr_begin(&w, NULL);
    assert_int_equal(jsonw_finish(&w, &out, &len), ERR_INTERNAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers_print_as_printf),
        cmocka_unit_test(test_doubles_read_as_printf_g6_prints_them),
        cmocka_unit_test(test_keys_and_strings_are_escaped),
        cmocka_unit_test(test_pretty_is_json_c),
        cmocka_unit_test(test_sink_gets_whole_chunks_making_up_the_document),
        cmocka_unit_test(test_max_bytes_is_exact),
        cmocka_unit_test(test_invalid_utf8_becomes_replacement_characters),
        cmocka_unit_test(test_fragments_write_the_same_document),
        cmocka_unit_test(test_fragment_must_close_its_depth_and_counts_to_limit),
        cmocka_unit_test(test_long_pretty_is_json_c),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
