/*
 * test_import.c - the input formats' table (import.h): every row detects its own sample
 * from tests/data and no earlier row takes it, every name and alias finds its row, the
 * names list, and import_run on each sample (the model's source_format is the row's name,
 * the tensor counts those of the files), a byte order mark, a forced format, an input no
 * row knows, and the XLA assignment kept for the plan. Run from the repository root (as
 * tests/run.sh does): the samples are read from tests/data.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "planner/import.h"
#include "planner/model.h"

#include "slurp.h"

/* One sample per row, in the table's order: its file, the model's name and tensor count. */
static const struct {
    const char *format;
    const char *path;
    const char *model_name;
    size_t tensors; /* 0: not checked here (the HLO rules' count: test_hlo, test_stablehlo) */
} samples[] = {
    /* the header lists 6 tensors besides __metadata__ */
    {"safetensors", "tests/data/tiny-llama.safetensors-header", "safetensors", 6},
    /* one layer's worth of a scanned training step (test_recipe.c has the tensors) */
    {"recipe", "tests/data/recipes/llama-3.1-8b-fsdp16.json", "llama-3.1-8b-fsdp16", 129},
    {"json", "tests/data/models/tiny-lm-train.json", "tiny-lm-train", 91},
    {"minimalloc-csv", "tests/data/minimalloc-small.csv", "minimalloc", 5}, /* b1..b5 */
    /* 7 values in 6 allocations (test_xla_assign.c's small) */
    {"xla-buffer-assignment", "tests/data/xla/small.buffer-assignment.txt", "xla-buffer-assignment",
     7},
    {"hlo", "tests/data/hlo/while.hlo", "jit_loop", 0},              /* HloModule jit_loop */
    {"stablehlo", "tests/data/hlo/jax_while_call.mlir", "jit_f", 0}, /* module @jit_f */
    /* one listed allocation (test_xla_oom.c) */
    {"xla-oom", "tests/data/xla/oom/easydel-142.txt", "xla-oom", 1},
};

#define NSAMPLES (sizeof(samples) / sizeof(samples[0]))

static void limits(struct model_limits *ml)
{
    *ml = (struct model_limits){256u << 20, 32, 1000000, 1000000, 1};
}

/* The samples cover the table, row by row: adding a format means adding its sample. */
static void test_one_sample_per_row(void **state)
{
    (void)state;
    assert_int_equal(import_count(), NSAMPLES);
    for (size_t i = 0; i < NSAMPLES; i++)
        assert_string_equal(import_at(i)->name, samples[i].format);
    assert_null(import_at(NSAMPLES));
}

/* Row i's detect accepts sample i, and import_detect answers row i: no earlier row steals
 * it. Each later row's detect refuses it too, so the order is not what tells them apart. */
static void test_each_row_detects_its_own_sample_first(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSAMPLES; i++) {
        size_t len;
        char *s = slurp(samples[i].path, &len);
        const struct importer *got = import_detect(s, len);
        size_t at = 0; /* where a text format's detect starts: the first non-blank */
        while (at < len && strchr(" \t\r\n", s[at]) != NULL)
            at++;
        if (got != import_at(i))
            fail_msg("%s: detected as %s", samples[i].path, got ? got->name : "nothing");
        for (size_t k = 0; k < NSAMPLES; k++) {
            const struct importer *r = import_at(k);
            bool takes = r->binary ? r->detect(s, len) : r->detect(s + at, len - at);
            if (takes != (k == i))
                fail_msg("%s: %s's detect %s it", samples[i].path, r->name,
                         takes ? "takes" : "refuses");
        }
        free(s);
    }
}

/* Every name and alias finds its row; "auto" and NULL are detection; nothing else is. */
static void test_find_names_and_aliases(void **state)
{
    static const struct {
        const char *name, *row;
    } known[] = {
        {"safetensors", "safetensors"},
        {"recipe", "recipe"},
        {"json", "json"},
        {"minimalloc-csv", "minimalloc-csv"},
        {"csv", "minimalloc-csv"},
        {"xla-buffer-assignment", "xla-buffer-assignment"},
        {"hlo", "hlo"},
        {"stablehlo", "stablehlo"},
        {"mlir", "stablehlo"},
        {"xla-oom", "xla-oom"},
        {"oom", "xla-oom"},
    };
    static const char *const unknown[] = {"", "JSON", "yaml", "stablehlo ", "mhlo", "Auto"};
    const struct importer *imp;
    struct err e;

    (void)state;
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        imp = NULL;
        assert_true(import_find(known[i].name, &imp));
        assert_non_null(imp);
        assert_string_equal(imp->name, known[i].row);
    }
    imp = import_at(0);
    assert_true(import_find("auto", &imp));
    assert_null(imp);
    imp = import_at(0);
    assert_true(import_find(NULL, &imp));
    assert_null(imp);
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        imp = import_at(0);
        assert_false(import_find(unknown[i], &imp));
        assert_ptr_equal(imp, import_at(0)); /* untouched */
    }
    assert_int_equal(import_lookup("format", "mlir", &imp, &e), ERR_OK);
    assert_string_equal(imp->name, "stablehlo");
    assert_int_equal(import_lookup("--input", "yaml", &imp, &e), ERR_NOTFOUND);
    assert_string_equal(e.where, "--input");
    assert_string_equal(e.msg, "--input: unknown input format \"yaml\" (known: auto, safetensors, "
                               "recipe, json, minimalloc-csv (csv), xla-buffer-assignment, hlo, "
                               "stablehlo (mlir), xla-oom (oom))");
}

/* Only the formats of byte sizes (CSV rows, XLA's values) are raw; only safetensors is
 * binary. */
static void test_flags(void **state)
{
    (void)state;
    for (size_t i = 0; i < import_count(); i++) {
        const struct importer *r = import_at(i);
        assert_int_equal(r->raw_sizes, strcmp(r->name, "minimalloc-csv") == 0 ||
                                           strcmp(r->name, "xla-buffer-assignment") == 0);
        assert_int_equal(r->binary, strcmp(r->name, "safetensors") == 0);
    }
}

/* The list for error messages, whole and cut short. */
static void test_names(void **state)
{
    static const char all[] = "auto, safetensors, recipe, json, minimalloc-csv (csv), "
                              "xla-buffer-assignment, hlo, stablehlo (mlir), xla-oom (oom)";
    char buf[IMPORT_NAMES_MAX];

    (void)state;
    assert_int_equal(import_names(buf, sizeof(buf)), strlen(all));
    assert_string_equal(buf, all);
    assert_int_equal(import_names(buf, 10), 9);
    assert_string_equal(buf, "auto, saf");
    assert_int_equal(import_names(buf, 1), 0);
    assert_string_equal(buf, "");
}

/* Each sample imported by detection: the model says the row's name as its source_format
 * (what the result reports), its name and tensor count are the file's. */
static void test_import_each_sample(void **state)
{
    struct model_limits ml;

    (void)state;
    limits(&ml);
    for (size_t i = 0; i < NSAMPLES; i++) {
        size_t len;
        char *s = slurp(samples[i].path, &len);
        struct import_ctx c = {.limits = &ml};
        const struct importer *used = NULL;
        struct model m;
        struct err e;
        if (import_run(NULL, s, len, &c, &m, &used, &e) != ERR_OK)
            fail_msg("%s: %s", samples[i].path, e.msg);
        assert_ptr_equal(used, import_at(i));
        assert_string_equal(m.source_format, samples[i].format);
        assert_string_equal(m.name, samples[i].model_name);
        if (samples[i].tensors != 0)
            assert_int_equal(m.n, samples[i].tensors);
        assert_false(c.xla_kept); /* no place to keep it given */
        model_free(&m);
        free(s);
    }
}

/* The XLA assignment's importer hands over what it parsed when given a place: the same
 * values as the model's tensors, in order. */
static void test_xla_assignment_kept(void **state)
{
    struct model_limits ml;
    struct xla_assign a;
    struct model m;
    struct err e;
    size_t len;
    char *s = slurp("tests/data/xla/small.buffer-assignment.txt", &len);
    struct import_ctx c = {.limits = &ml, .xla = &a};

    (void)state;
    limits(&ml);
    memset(&a, 0, sizeof(a));
    assert_int_equal(import_run(NULL, s, len, &c, &m, NULL, &e), ERR_OK);
    assert_true(c.xla_kept);
    assert_int_equal(a.nvalues, 7);
    assert_int_equal(a.nallocs, 6);
    assert_int_equal(a.total_bytes, 4240); /* "Total bytes used: 4240" */
    for (size_t i = 0; i < m.n; i++)
        assert_int_equal(m.tensors[i].padded_bytes, a.values[i].size);
    xla_assign_free(&a);
    model_free(&m);
    free(s);
}

/* A text input after a UTF-8 byte order mark is read past it; a forced format reads the
 * input as that format whatever it looks like; an input nothing detects says what each
 * format looks like, a memory-usage report alone what to send with it. */
static void test_run_bom_forced_and_unrecognized(void **state)
{
    static const char csv[] = "\xEF\xBB\xBFid,lower,upper,size\nb1,0,3,4\n";
    struct model_limits ml;
    struct import_ctx c = {.limits = &ml};
    const struct importer *used = NULL, *json = NULL;
    struct model m;
    struct err e;

    (void)state;
    limits(&ml);
    assert_int_equal(import_run(NULL, csv, sizeof(csv) - 1, &c, &m, &used, &e), ERR_OK);
    assert_string_equal(used->name, "minimalloc-csv");
    assert_int_equal(m.n, 1);
    assert_int_equal(m.tensors[0].padded_bytes, 4);
    model_free(&m);

    assert_true(import_find("json", &json));
    assert_int_equal(import_run(json, csv, sizeof(csv) - 1, &c, &m, &used, &e), ERR_INVALID);
    assert_ptr_equal(used, json);
    assert_int_equal(m.n, 0); /* empty on failure */

    assert_int_equal(import_run(NULL, "hello\n", 6, &c, &m, NULL, &e), ERR_INVALID);
    assert_string_equal(e.msg,
                        "unrecognized input: expected a safetensors file or header (8-byte "
                        "length then '{'), a recipe (a JSON object with \"model\" and "
                        "\"train\" or \"serve\"), a JSON model description (an object), a "
                        "MiniMalloc "
                        "CSV (header id,lower,upper,size), an XLA buffer assignment "
                        "(BufferAssignment:), XLA HLO text (HloModule ...), StableHLO text "
                        "(module @... { func.func ...) or an XLA out-of-memory report (Ran out "
                        "of memory in memory space ...)");
    assert_int_equal(import_run(NULL, " \n\t", 3, &c, &m, NULL, &e), ERR_INVALID);
    assert_non_null(strstr(e.msg, "unrecognized input"));
    assert_int_equal(import_run(NULL, "Total bytes used: 8 (8B)\n", 25, &c, &m, NULL, &e),
                     ERR_INVALID);
    assert_non_null(strstr(e.msg, "holds XLA's totals only"));
    assert_int_equal(
        import_run(NULL, "CompiledMemoryStats(temp_size_in_bytes=8)", 42, &c, &m, NULL, &e),
        ERR_INVALID);
    assert_non_null(strstr(e.msg, "are totals only: attach them to their program"));
}

/* The out-of-memory report's importer hands over what it parsed when given a place: one
 * allocation per tensor, in order. */
static void test_oom_report_kept(void **state)
{
    struct model_limits ml;
    struct xla_oom r;
    struct model m;
    struct err e;
    size_t len;
    char *s = slurp("tests/data/xla/oom/trax-1343.txt", &len);
    struct import_ctx c = {.limits = &ml, .oom = &r};

    (void)state;
    limits(&ml);
    memset(&r, 0, sizeof(r));
    assert_int_equal(import_run(NULL, s, len, &c, &m, NULL, &e), ERR_OK);
    assert_true(c.oom_kept);
    assert_int_equal(r.nallocs, 2);
    assert_int_equal(m.n, 2);
    assert_string_equal(m.tensors[0].name, "fusion.6043");
    assert_string_equal(m.tensors[1].name, "fusion.6047");
    assert_string_equal(m.tensors[1].op_name, "DUMMY_47");
    xla_oom_free(&r);
    model_free(&m);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_sample_per_row),
        cmocka_unit_test(test_each_row_detects_its_own_sample_first),
        cmocka_unit_test(test_find_names_and_aliases),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_import_each_sample),
        cmocka_unit_test(test_xla_assignment_kept),
        cmocka_unit_test(test_run_bom_forced_and_unrecognized),
        cmocka_unit_test(test_oom_report_kept),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
