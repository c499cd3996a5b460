/*
 * model_find.h - what the importer tests (test_model.c, test_hlo.c, test_stablehlo.c) ask of an
 * imported model: a tensor by name, its lifetime, a table of what several tensors must be, a
 * warning, and the peak of the text planned end to end; each fails the test (cmocka's
 * fail_msg) when the model is not what it should be. Header-only, for tests/unit; include
 * after cmocka.h. Returned pointers are owned by the model.
 */
#ifndef TPUPLAN_TESTS_MODEL_FIND_H
#define TPUPLAN_TESTS_MODEL_FIND_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/model.h"
#include "planner/plan.h"

#include "plan_doc.h"

/* The tensor called name; fails the test when there is none. */
static inline const struct model_tensor *tensor(const struct model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->tensors[i].name, name) == 0)
            return &m->tensors[i];
    fail_msg("no tensor %s", name);
    return NULL;
}

/* t is live over steps [s, e). */
static inline void assert_live(const struct model_tensor *t, int64_t s, int64_t e)
{
    if (t->live_start != s || t->live_end != e)
        fail_msg("%s: live [%lld, %lld), wanted [%lld, %lld)", t->name, (long long)t->live_start,
                 (long long)t->live_end, (long long)s, (long long)e);
}

/* What a test asks of one tensor: each field that is set is asked, one left 0 (NULL, false)
 * is not. */
struct want_tensor {
    const char *name;
    const char *kind;     /* tensor_kind_name's: "input", "output", "temp", "constant" */
    const char *in_place; /* the values written into it in place, as model.h lists them;
                           * IN_PLACE_NONE: none (in_place NULL) */
    int64_t start, end;   /* live over [start, end) (end 0: not asked) */
    uint64_t padded;      /* padded_bytes */
    int64_t dim0, dim1;   /* shape.dims[0] and [1] (per device) */
    const char *op_name;
    bool donated; /* true: donated */
};

#define IN_PLACE_NONE ""

/* Each of want[] up to the entry without a name, in m; title names the case in a failure. */
static inline void assert_tensors(const char *title, const struct model *m,
                                  const struct want_tensor *want)
{
    for (const struct want_tensor *w = want; w->name != NULL; w++) {
        const struct model_tensor *t = tensor(m, w->name);
        const char *in_place = t->in_place != NULL ? t->in_place : "(none)";
        if (w->kind != NULL && strcmp(tensor_kind_name(t->kind), w->kind) != 0)
            fail_msg("%s: %s is %s, wanted %s", title, w->name, tensor_kind_name(t->kind), w->kind);
        if (w->in_place != NULL &&
            (w->in_place[0] == '\0' ? t->in_place != NULL : strcmp(in_place, w->in_place) != 0))
            fail_msg("%s: %s holds \"%s\" in place, wanted \"%s\"", title, w->name, in_place,
                     w->in_place);
        if (w->end != 0)
            assert_live(t, w->start, w->end);
        if (w->padded != 0 && t->padded_bytes != w->padded)
            fail_msg("%s: %s is %llu bytes, wanted %llu", title, w->name,
                     (unsigned long long)t->padded_bytes, (unsigned long long)w->padded);
        if ((w->dim0 != 0 && t->shape.dims[0] != w->dim0) ||
            (w->dim1 != 0 && t->shape.dims[1] != w->dim1))
            fail_msg("%s: %s is [%lld, %lld, ..], wanted [%lld, %lld, ..] (0: any)", title, w->name,
                     (long long)t->shape.dims[0], (long long)t->shape.dims[1], (long long)w->dim0,
                     (long long)w->dim1);
        if (w->op_name != NULL && (t->op_name == NULL || strcmp(t->op_name, w->op_name) != 0))
            fail_msg("%s: %s has op_name \"%s\", wanted \"%s\"", title, w->name,
                     t->op_name != NULL ? t->op_name : "(none)", w->op_name);
        if (w->donated && !t->donated)
            fail_msg("%s: %s is not donated", title, w->name);
    }
}

/* One of m's warnings says what. */
static inline void assert_warned(const struct model *m, const char *what)
{
    for (size_t k = 0; k < m->warnings.n; k++)
        if (strstr(m->warnings.lines[k], what) != NULL)
            return;
    fail_msg("no warning says \"%s\"", what);
}

/* The peak of text planned end to end (plan_doc, xla-default), its format detected as
 * format. */
static inline uint64_t plan_peak(const char *text, const char *format)
{
    struct plan_summary s;
    /* a before-optimization program as written: the hand counts follow its text */
    struct plan_opts o = {.strategies = "xla-default", .reading = PLAN_READING_WRITTEN};

    json_object_put(plan_doc(text, strlen(text), &o, &s));
    assert_string_equal(s.source_format, format);
    return s.peak_bytes;
}

#endif
