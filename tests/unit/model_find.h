/*
 * model_find.h - what the importer tests (test_model.c, test_hlo.c, test_stablehlo.c) ask of an
 * imported model: a tensor by name and its lifetime, failing the test (cmocka's fail_msg) when
 * either is not what it should be. Header-only, for tests/unit; include after cmocka.h and
 * planner/model.h. Returned pointers are owned by the model.
 */
#ifndef TPUPLAN_TESTS_MODEL_FIND_H
#define TPUPLAN_TESTS_MODEL_FIND_H

#include <stdint.h>
#include <string.h>

#include "planner/model.h"

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

#endif
