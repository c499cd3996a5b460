/*
 * test_request.c - a handler's answers on the MHD thread (request.h): request_reply() keeps the
 * response for the dispatch to queue, with a body-less 500 when there is none, and
 * request_reply_not_modified() answers 304 with the ETag exactly when If-None-Match matches.
 *
 * A request that was never handed to the executor (phase REQ_NEW) is answered without its
 * connection, so these run without a daemon; the executor's side (resuming) is covered end to
 * end by tests/integration/api.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/request.h"

/* A request as the transport has it before any handler ran, with If-None-Match inm. */
static struct request *request_with(const char *inm)
{
    struct request *r = calloc(1, sizeof(*r));

    assert_non_null(r);
    r->if_none_match = inm != NULL ? strdup(inm) : NULL;
    return r;
}

static void test_reply_not_modified(void **state)
{
    static const struct {
        const char *inm;
        bool match;
    } cases[] = {
        {"\"p-3\"", true},
        {"W/\"p-3\"", true},         /* weak comparison (RFC 9110 13.1.2) */
        {"\"zz\", W/\"p-3\"", true}, /* a list */
        {"*", true},
        {"\"p-3-summary\"", false}, /* another view of the same plan */
        {"\"p-4\"", false},
        {NULL, false}, /* no If-None-Match */
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct request *r = request_with(cases[i].inm);
        bool answered = request_reply_not_modified(r, "\"p-3\"");
        assert_int_equal(answered, cases[i].match);
        if (answered) {
            assert_int_equal(r->status, 304);
            assert_int_equal(r->http.phase, REQ_READY);
            assert_non_null(r->resp);
            assert_string_equal(MHD_get_response_header(r->resp, MHD_HTTP_HEADER_ETAG), "\"p-3\"");
            assert_string_equal(MHD_get_response_header(r->resp, "X-Content-Type-Options"),
                                "nosniff");
        } else {
            /* nothing answered: the handler goes on to its 200 */
            assert_int_equal(r->status, 0);
            assert_int_equal(r->http.phase, REQ_NEW);
            assert_null(r->resp);
        }
        request_free(r);
    }
}

static void test_reply_on_mhd_thread(void **state)
{
    struct request *r = request_with(NULL);

    (void)state;
    /* out of memory building the answer: a 500 that needs no allocation */
    request_reply(r, 200, NULL);
    assert_int_equal(r->status, 500);
    assert_int_equal(r->http.phase, REQ_READY);
    assert_non_null(r->resp);
    request_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reply_not_modified),
        cmocka_unit_test(test_reply_on_mhd_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
