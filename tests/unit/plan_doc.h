/*
 * plan_doc.h - a plan run end to end for the unit tests (test_plan.c, test_kernel.c and, through
 * model_find.h, the importer tests): the result document, parsed and checked to be JSON of
 * schema_version 1, and the summary. Fails the test (cmocka's fail_msg) on any error.
 * Header-only, for tests/unit; include after cmocka.h. The caller puts the document.
 */
#ifndef TPUPLAN_TESTS_PLAN_DOC_H
#define TPUPLAN_TESTS_PLAN_DOC_H

#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan.h"

#include "jpath.h"

/* text (len bytes) planned with o (NULL: the defaults) under the default limits: the result
 * document, and its summary in *s (s may be NULL). */
static inline json_object *plan_doc(const char *text, size_t len, const struct plan_opts *o,
                                    struct plan_summary *s)
{
    struct plan_limits l;
    struct err e;
    char *out = NULL;
    size_t out_len = 0;
    json_object *doc;

    plan_limits_default(&l);
    err_clear(&e);
    if (plan_run(text, len, o, &l, &out, &out_len, NULL, s, &e) != ERR_OK)
        fail_msg("plan_run: %s (%s)", e.msg, e.where);
    assert_int_equal(strlen(out), out_len);
    struct json_tokener *tok = json_tokener_new_ex(64);
    doc = json_tokener_parse_ex(tok, out, (int)out_len);
    assert_int_equal(json_tokener_get_error(tok), json_tokener_success);
    json_tokener_free(tok);
    free(out);
    assert_non_null(doc);
    assert_int_equal(jint(doc, "schema_version"), 1);
    return doc;
}

#endif
