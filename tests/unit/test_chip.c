/*
 * test_chip.c - the chip table: lookup by name and alias, the figures the docs give (with
 * their sources), and the uncertainty flags the docs require.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "planner/chip.h"
#include "planner/layout.h"

#define GIB (1024ull * 1024ull * 1024ull)
#define MIB (1024ull * 1024ull)

static void test_lookup_accepts_aliases_in_any_case(void **state)
{
    static const char *names[][2] = {
        {"v2", "v2"},         {"v3", "v3"},           {"V4", "v4"},           {"v5e", "v5e"},
        {"v5litepod", "v5e"}, {"V5LITEPOD", "v5e"},   {"v5p", "v5p"},         {"v6e", "v6e"},
        {"trillium", "v6e"},  {"Trillium", "v6e"},    {"v7", "v7"},           {"tpu7x", "v7"},
        {"TPU7X", "v7"},      {"ironwood", "v7"},     {"TPU v5 lite", "v5e"}, {"TPU v4", "v4"},
        {"tpu v5", "v5p"},    {"TPU v6 lite", "v6e"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const struct chip *c = chip_find(names[i][0]);
        assert_non_null(c);
        assert_string_equal(c->name, names[i][1]);
    }
    assert_null(chip_find("v8"));
    assert_null(chip_find(""));
    assert_null(chip_find(NULL));
    assert_string_equal(chip_find("tpuv5")->name, "v5p"); /* jax device_kind "TPU v5" */
    assert_null(chip_find("v5e,v5litepod"));              /* a list is not a name */
    assert_null(chip_find("v5lite,"));                    /* nor a prefix of the alias list */
}

static void test_table_is_ordered_and_self_consistent(void **state)
{
    static const char *order[] = {"v2", "v3", "v4", "v5e", "v5p", "v6e", "v7"};

    (void)state;
    assert_int_equal(chip_count(), 7);
    for (size_t i = 0; i < chip_count(); i++) {
        const struct chip *c = chip_at(i);
        assert_string_equal(c->name, order[i]);
        assert_true(c->generation >= 2 && c->generation <= 7);
        assert_true(c->hbm_bytes_per_device <= c->hbm_bytes_per_chip);
        assert_true(c->usable_hbm_bytes <= c->hbm_bytes_per_device);
        assert_true(c->tensorcores_per_device <= c->tensorcores_per_chip);
        assert_true(c->mxu_dim == 128 || c->mxu_dim == 256);
        assert_true(c->vmem_bytes >= 16 * MIB);
        assert_non_null(c->notes);
        assert_non_null(c->ici_topology);
        assert_ptr_equal(chip_find(c->name), c);
        assert_non_null(strstr(chip_names(), c->name));
        /* every uncertain figure is explained */
        if (c->uncertain != 0)
            assert_true(strlen(c->notes) > 20);
    }
    assert_null(chip_at(chip_count()));
    assert_string_equal(chip_default()->name, "v5e");
}

/* The figures the issue names, from server/planner/SOURCES.md#usable-hbm and the chip
 * entries of server/planner/SOURCES.md#cloud-specs, #tpu_info and #scaling-book there. */
static void test_figures_match_their_cited_sources(void **state)
{
    const struct chip *c;

    (void)state;
    c = chip_find("v5e");
    assert_int_equal(c->usable_hbm_bytes, 1575 * GIB / 100); /* "15.75G" */
    assert_int_equal(c->hbm_bytes_per_chip, 16 * GIB);
    assert_int_equal(c->vmem_bytes, 128 * MIB);
    assert_int_equal(c->scoped_vmem_default, 16 * MIB);
    assert_int_equal(c->tensorcores_per_chip, 1);
    assert_true(c->uncertain & CHIP_F_LAYOUT);
    assert_false(c->uncertain & CHIP_F_USABLE_HBM);

    c = chip_find("v4");
    assert_int_equal(c->usable_hbm_bytes, 3075 * GIB / 100); /* "30.75G" */
    assert_int_equal(c->tensorcores_per_device, 2);          /* megacore */
    assert_false(c->uncertain & CHIP_F_LAYOUT);

    c = chip_find("v3");
    assert_int_equal(c->hbm_bytes_per_device, 16 * GIB);
    assert_true(c->uncertain & CHIP_F_BF16); /* 123 vs 140 TFLOP/s */

    c = chip_find("v5p");
    assert_true(c->uncertain & CHIP_F_USABLE_HBM); /* 95.74G, generation inferred */
    assert_true(c->uncertain & CHIP_F_HBM);
    assert_int_equal(c->vmem_bytes, 64 * MIB);

    c = chip_find("v6e");
    assert_int_equal(c->usable_hbm_bytes, 3125 * GIB / 100); /* "31.25G" */
    assert_int_equal(c->mxu_dim, 256);
    assert_int_equal(c->scoped_vmem_default, 32 * MIB);

    c = chip_find("v7");
    assert_int_equal(c->vmem_bytes, 64 * MIB); /* the docs' "safe value" */
    assert_true(c->uncertain & CHIP_F_VMEM);
    assert_int_equal(c->hbm_bytes_per_device, 96 * GIB);
    assert_true(c->uncertain & CHIP_F_USABLE_HBM);
    assert_int_equal(c->tensorcores_per_device, 1);
}

/* The printed capacities reproduce through XLA's formatter. */
static void test_capacities_print_as_xla_formats_them(void **state)
{
    static const char *want[][2] = {
        {"v2", "7.48G"},   {"v3", "15.48G"},  {"v4", "30.75G"}, {"v5e", "15.75G"},
        {"v5p", "95.74G"}, {"v6e", "31.25G"}, {"v7", "96.00G"},
    };
    char buf[32];

    (void)state;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(
            layout_format_bytes(chip_find(want[i][0])->usable_hbm_bytes, buf, sizeof(buf)),
            want[i][1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup_accepts_aliases_in_any_case),
        cmocka_unit_test(test_table_is_ordered_and_self_consistent),
        cmocka_unit_test(test_figures_match_their_cited_sources),
        cmocka_unit_test(test_capacities_print_as_xla_formats_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
