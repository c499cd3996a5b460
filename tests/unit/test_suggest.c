/*
 * test_suggest.c - padding fixes (suggest.h): one tensor's reshape, a sharded tensor's
 * reshard, and suggest_model's policy over a model (most padding first, one fix per
 * shape, the count of tensors each fix applies to, the cap). Byte counts are worked out
 * from the v5e default layout of f32, {1,0:T(8,128)}: the minor dim pads to 128, the
 * second-minor to 8.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/chip.h"
#include "planner/model.h"
#include "planner/model_json.h"
#include "planner/suggest.h"

static const struct model_limits limits = {64u << 20, 32, 1000, 1000, 0};

/* Parses json and resolves it on v5e. */
/* Tensor i's shape, expanded (model_tensor_shape). */
static const struct shape *shape_of(const struct model *m, size_t i)
{
    static struct shape sh;

    model_tensor_shape(&m->tensors[i], &sh);
    return &sh;
}

static void load(const char *json, struct model *m)
{
    struct err e;

    err_clear(&e);
    if (model_parse_json(json, strlen(json), &limits, m, &e) != ERR_OK ||
        model_resolve(m, chip_find("v5e"), 0, &e) != ERR_OK)
        fail_msg("load: %s (%s)", e.msg, e.where);
}

/* f32[1024,1]: the size-1 minor dim pads to 128 lanes (1024 x 128 x 4 B); folded into
 * [8,128] it does not pad at all (the better of the reshapes: reordering pads 1 to 8). */
static void test_size_1_minor_dim_folds_into_whole_tiles(void **state)
{
    struct model m;
    struct suggestion s;
    struct err e;

    (void)state;
    load("{\"tensors\":[{\"name\":\"t\",\"shape\":[1024,1],\"dtype\":\"f32\"}]}", &m);
    assert_int_equal(suggest_tensor(shape_of(&m, 0), chip_find("v5e"), &s, &e), 1);
    assert_string_equal(s.action, "fold-minor");
    assert_int_equal(s.padded_bytes, 1024 * 128 * 4);
    assert_int_equal(s.suggested_padded_bytes, 8 * 128 * 4);
    assert_int_equal(s.saves_bytes, 1024 * 128 * 4 - 8 * 128 * 4);
    assert_string_equal(s.suggested_shape, "f32[8,128]{1,0:T(8,128)}");
    assert_non_null(strstr(s.text, "minor dim 1 (size 1) pads to 128 under T(8,128)"));
    assert_non_null(strstr(s.text, "storing it as f32[8,128] saves"));
    model_free(&m);
}

/* A shape that fills its tiles has nothing to fix. */
static void test_tensor_filling_its_tiles_gets_no_fix(void **state)
{
    struct model m;
    struct suggestion s;
    struct err e;

    (void)state;
    load("{\"tensors\":[{\"name\":\"t\",\"shape\":[16,256],\"dtype\":\"f32\"}]}", &m);
    assert_int_equal(suggest_tensor(shape_of(&m, 0), chip_find("v5e"), &s, &e), 0);
    model_free(&m);
}

/*
 * f32[1024,256] with its minor dim over 4 devices: 64 per device, which pads to 128.
 * Sharding dim 0 instead gives [256,256] per device, no padding: it saves the same as
 * folding the local shape into [512,128], and on a tie the reshard wins (it keeps the
 * program's shapes).
 */
static void test_reshard_wins_a_tie_with_a_reshape(void **state)
{
    struct model m;
    struct suggest_fix fx[SUGGEST_MAX_FIXES];
    struct suggestion alt;
    size_t n = 0;
    struct err e;

    (void)state;
    load("{\"mesh\":{\"d\":4},\"tensors\":[{\"name\":\"s\",\"shape\":[1024,256],"
         "\"dtype\":\"f32\",\"sharding\":[null,\"d\"]}]}",
         &m);
    assert_int_equal(suggest_model(&m, chip_find("v5e"), fx, &n, &e), ERR_OK);
    assert_int_equal(n, 1);
    assert_string_equal(fx[0].s.action, "reshard");
    assert_int_equal(fx[0].s.padded_bytes, 1024 * 128 * 4);
    assert_int_equal(fx[0].s.suggested_padded_bytes, 256 * 256 * 4);
    assert_string_equal(fx[0].s.suggested_shape, "f32[256,256]{1,0:T(8,128)}");
    assert_non_null(strstr(fx[0].s.text, "minor dim 1 is sharded 4 ways (256 -> 64 per device)"));
    assert_int_equal(fx[0].same_shape, 1);
    /* the tie: the local shape's best reshape saves exactly as much */
    assert_int_equal(suggest_tensor(shape_of(&m, 0), chip_find("v5e"), &alt, &e), 1);
    assert_string_equal(alt.action, "fold-minor");
    assert_int_equal(alt.saves_bytes, fx[0].s.saves_bytes);
    model_free(&m);
}

/* Most padding first, one fix per shape, counted over every tensor of that shape; tensors
 * that do not pad get none. */
static void test_fixes_one_per_shape_most_padding_first(void **state)
{
    struct model m;
    struct suggest_fix fx[SUGGEST_MAX_FIXES];
    size_t n = 0;
    struct err e;

    (void)state;
    load("{\"tensors\":["
         "{\"name\":\"full\",\"shape\":[16,256],\"dtype\":\"f32\"},"
         "{\"name\":\"two\",\"shape\":[1024,2],\"dtype\":\"f32\"},"
         "{\"name\":\"one_a\",\"shape\":[1024,1],\"dtype\":\"f32\"},"
         "{\"name\":\"one_b\",\"shape\":[1024,1],\"dtype\":\"f32\"}]}",
         &m);
    assert_int_equal(suggest_model(&m, chip_find("v5e"), fx, &n, &e), ERR_OK);
    assert_int_equal(n, 2);
    /* [1024,1] pads more than [1024,2]; of the two [1024,1] the first is named. */
    assert_int_equal(fx[0].tensor, 2);
    assert_int_equal(fx[0].same_shape, 2);
    assert_int_equal(fx[0].total_saves, 2 * fx[0].s.saves_bytes);
    assert_int_equal(fx[1].tensor, 1);
    assert_int_equal(fx[1].same_shape, 1);
    assert_int_equal(fx[1].total_saves, fx[1].s.saves_bytes);
    assert_true(fx[0].s.saves_bytes > fx[1].s.saves_bytes);
    model_free(&m);
}

/* Twelve distinct padded shapes: only the SUGGEST_MAX_FIXES with the most padding. */
static void test_only_max_fixes_with_the_most_padding_are_kept(void **state)
{
    char json[2048];
    size_t used = 0, n = 0;
    struct model m;
    struct suggest_fix fx[SUGGEST_MAX_FIXES];
    struct err e;

    (void)state;
    used += (size_t)snprintf(json, sizeof(json), "{\"tensors\":[");
    for (int k = 1; k <= 12; k++)
        used += (size_t)snprintf(json + used, sizeof(json) - used,
                                 "%s{\"name\":\"t%d\",\"shape\":[1024,%d],\"dtype\":\"f32\"}",
                                 k > 1 ? "," : "", k, k);
    snprintf(json + used, sizeof(json) - used, "]}");
    load(json, &m);
    assert_int_equal(suggest_model(&m, chip_find("v5e"), fx, &n, &e), ERR_OK);
    assert_int_equal(n, SUGGEST_MAX_FIXES);
    for (size_t q = 0; q < n; q++)
        assert_int_equal(fx[q].tensor, q); /* [1024,k] pads less as k grows */
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_1_minor_dim_folds_into_whole_tiles),
        cmocka_unit_test(test_tensor_filling_its_tiles_gets_no_fix),
        cmocka_unit_test(test_reshard_wins_a_tie_with_a_reshape),
        cmocka_unit_test(test_fixes_one_per_shape_most_padding_first),
        cmocka_unit_test(test_only_max_fixes_with_the_most_padding_are_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
