/*
 * test_jsonw_blocks.c - a run of values written on two threads (jsonw_blocks.h) is the run
 * written on one, byte for byte and piece for piece to the sink: run lengths around the
 * block size and many blocks, compact and pretty, buffered and streamed; an error inside a
 * block written by either thread, a sink that fails, and the buffered limit end the document
 * exactly as the one-thread run ends it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "planner/jsonw.h"
#include "planner/jsonw_blocks.h"

#include "jsonw_pieces.h"

#define BLOCK    7
#define MAX_RUN  4000
#define NO_ERROR SIZE_MAX

struct run {
    size_t bad;       /* the element that nests too deep (ERR_INTERNAL), or NO_ERROR */
    pthread_t caller; /* the thread that called jsonw_blocks_write */
    bool slow_first;  /* block 0 sleeps 50 ms, so the helper takes the next ones */
    bool *by_helper;  /* [MAX_RUN]: element i was written on the helper's thread */
    size_t *blocks;   /* [MAX_RUN]: calls starting at element i */
};

static bool by_helper[MAX_RUN];
static size_t blocks[MAX_RUN];

/* A run writing nothing wrong (bad NO_ERROR) or failing at bad, its records cleared. */
static struct run run_new(size_t bad, bool slow_first)
{
    memset(by_helper, 0, sizeof(by_helper));
    memset(blocks, 0, sizeof(blocks));
    return (struct run){
        .bad = bad, .slow_first = slow_first, .by_helper = by_helper, .blocks = blocks};
}

static void elem(struct jsonw *w, size_t i, size_t bad)
{
    jsonw_obj_begin(w, NULL);
    jsonw_u64(w, "id", i);
    jsonw_str(w, "name", i % 5 == 0 ? "t\"\n\xc3\xa9" : "tensor");
    jsonw_arr_begin(w, "dims");
    for (size_t d = 0; d < i % 3; d++)
        jsonw_i64(w, NULL, (int64_t)(i * 128 + d));
    jsonw_arr_end(w);
    for (int k = 0; i == bad && k < JSONW_MAX_DEPTH; k++)
        jsonw_obj_begin(w, "deep");
    jsonw_double(w, "expansion", 1.0 + (double)i / 7);
    jsonw_obj_end(w);
}

/* The jsonw_block_fn: records which thread wrote which range (each index by one thread
 * only, so the writes do not race). */
static void block_fn(struct jsonw *w, const void *ctx, size_t lo, size_t hi)
{
    const struct run *r = ctx;
    bool helper = !pthread_equal(pthread_self(), r->caller);

    if (lo == 0 && r->slow_first)
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    r->blocks[lo]++;
    for (size_t i = lo; i < hi; i++) {
        r->by_helper[i] = helper;
        elem(w, i, r->bad);
    }
}

/* {"head": 1, "run": [n elements], "tail": "end"}: one element at a time on this thread
 * (mode 0), or through jsonw_blocks_write unthreaded (1) or threaded (2). */
static void write_doc(struct jsonw *w, size_t n, int mode, struct run *r)
{
    jsonw_obj_begin(w, NULL);
    jsonw_u64(w, "head", 1);
    jsonw_arr_begin(w, "run");
    r->caller = pthread_self();
    if (mode == 0)
        for (size_t i = 0; i < n; i++)
            elem(w, i, r->bad);
    else
        jsonw_blocks_write(w, n, BLOCK, block_fn, r, mode == 2);
    jsonw_arr_end(w);
    jsonw_str(w, "tail", "end");
    jsonw_obj_end(w);
}

struct outcome {
    int rc;
    size_t total; /* bytes handed to the sink (w.total) */
    struct pieces p;
    char *doc; /* the buffered document (ERR_OK only) */
    size_t len;
};

static void outcome_free(struct outcome *o)
{
    free(o->p.buf);
    free(o->doc);
}

/* Writes the document streamed (pretty or not, the sink failing at fail_at) and, compact,
 * buffered under max_bytes. */
static void produce(struct outcome *o, size_t n, int mode, struct run *r, bool pretty,
                    size_t fail_at, size_t max_bytes)
{
    struct jsonw w;
    char *none = NULL;
    size_t len = 0;

    memset(o, 0, sizeof(*o));
    o->p.fail_at = fail_at;
    jsonw_init_sink(&w, collect, &o->p, pretty);
    write_doc(&w, n, mode, r);
    o->rc = jsonw_finish(&w, &none, &len);
    o->total = w.total;
    assert_null(none);
    jsonw_init(&w, max_bytes);
    write_doc(&w, n, mode, r);
    if (jsonw_finish(&w, &o->doc, &o->len) != ERR_OK)
        o->doc = NULL;
}

static void assert_same(const struct outcome *a, const struct outcome *b)
{
    assert_int_equal(a->rc, b->rc);
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->p.n, b->p.n);
    assert_int_equal(a->p.len, b->p.len);
    if (a->p.len > 0)
        assert_memory_equal(a->p.buf, b->p.buf, a->p.len);
    assert_int_equal(a->len, b->len);
    assert_true((a->doc == NULL) == (b->doc == NULL));
    if (a->doc != NULL)
        assert_string_equal(a->doc, b->doc);
}

/* Every run length around the block size, and long runs: the three ways give the same
 * text, each range is written once, and on long runs the helper wrote some of it. */
static void test_blocks_write_the_same_text_as_one_thread(void **state)
{
    static const size_t lens[] = {
        0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK, 2 * BLOCK + 1, 50 * BLOCK + 3, MAX_RUN};
    struct run r;
    (void)state;

    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
        for (int pretty = 0; pretty < 2; pretty++) {
            struct outcome o[3];
            for (int mode = 0; mode < 3; mode++) {
                r = run_new(NO_ERROR, lens[k] == MAX_RUN);
                produce(&o[mode], lens[k], mode, &r, pretty, 0, SIZE_MAX);
                assert_int_equal(o[mode].rc, ERR_OK);
                if (mode == 2) {
                    size_t helper = 0;
                    for (size_t i = 0; i < lens[k]; i++) {
                        helper += r.by_helper[i];
                        /* twice: the streamed and the buffered document */
                        assert_int_equal(r.blocks[i], i % BLOCK == 0 ? 2 : 0);
                    }
                    if (lens[k] == MAX_RUN)
                        assert_true(helper > 0);
                    for (size_t i = 0; i < BLOCK && i < lens[k]; i++)
                        assert_false(r.by_helper[i]); /* block 0 is the caller's */
                }
            }
            assert_non_null(o[0].doc);
            assert_int_equal(o[0].p.len, o[0].total);
            assert_same(&o[0], &o[1]);
            assert_same(&o[0], &o[2]);
            for (int mode = 0; mode < 3; mode++)
                outcome_free(&o[mode]);
        }
    }
}

/* An element that nests too deep, in block 0 (the caller's), in block 1 (the helper's while
 * the caller sleeps in block 0) and far on (either's): the document ends with ERR_INTERNAL
 * after the same pieces as on one thread. */
static void test_error_in_any_block_ends_as_on_one_thread(void **state)
{
    static const size_t bads[] = {3, BLOCK + 2, 301 * BLOCK + 1, MAX_RUN - 1};
    struct run r;
    (void)state;

    for (size_t k = 0; k < sizeof(bads) / sizeof(bads[0]); k++) {
        struct outcome o[2];
        for (int m = 0; m < 2; m++) {
            r = run_new(bads[k], true);
            produce(&o[m], MAX_RUN, m == 0 ? 0 : 2, &r, true, 0, SIZE_MAX);
            if (m == 1 && bads[k] == BLOCK + 2)
                assert_true(r.by_helper[bads[k]]);
            if (m == 1 && bads[k] == 3)
                assert_false(r.by_helper[bads[k]]);
        }
        assert_int_equal(o[0].rc, ERR_INTERNAL);
        assert_null(o[0].doc);
        if (bads[k] > 1000)
            assert_true(o[0].p.n >= 2); /* pieces went out before the error */
        assert_same(&o[0], &o[1]);
        outcome_free(&o[0]);
        outcome_free(&o[1]);
    }
}

/* A sink failing at its first, second or fifth piece, and the buffered document one byte
 * over its limit: the same code after the same pieces. */
static void test_failing_sink_ends_as_on_one_thread(void **state)
{
    struct run r = run_new(NO_ERROR, false);
    struct outcome whole, o[2];
    (void)state;

    produce(&whole, MAX_RUN, 0, &r, true, 0, SIZE_MAX);
    assert_true(whole.p.n >= 6);
    for (size_t fail_at = 1; fail_at <= 5; fail_at += fail_at < 2 ? 1 : 3) {
        for (int m = 0; m < 2; m++) {
            r = run_new(NO_ERROR, false);
            produce(&o[m], MAX_RUN, m == 0 ? 0 : 2, &r, true, fail_at, whole.len - 1);
        }
        assert_int_equal(o[0].rc, ERR_LIMIT);
        assert_int_equal(o[0].total, fail_at * JSONW_SINK_CHUNK);
        assert_int_equal(o[0].p.len, (fail_at - 1) * JSONW_SINK_CHUNK);
        assert_null(o[0].doc); /* one byte over the limit */
        assert_same(&o[0], &o[1]);
        outcome_free(&o[0]);
        outcome_free(&o[1]);
    }
    outcome_free(&whole);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_write_the_same_text_as_one_thread),
        cmocka_unit_test(test_error_in_any_block_ends_as_on_one_thread),
        cmocka_unit_test(test_failing_sink_ends_as_on_one_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
