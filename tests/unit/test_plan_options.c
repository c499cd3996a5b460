/*
 * test_plan_options.c - the plan options' table (plan_options.h) and the duration grammar
 * (duration.h): every row with a good value, a malformed one and one out of range, each
 * refusal with its exact message; the spellings per surface; JSON values; values read back;
 * the struct checked as plan_run's callers fill it. Values worked out by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/chip.h"
#include "planner/duration.h"
#include "planner/pack.h"
#include "planner/plan_options.h"

/* name=value accepted; the options it leaves in *o. */
static void good(struct plan_opts *o, const char *name, const char *value)
{
    struct err e;

    err_clear(&e);
    if (plan_opts_set(o, name, value, &e) != ERR_OK)
        fail_msg("%s=%s refused: %s", name, value, e.msg);
}

/* name=value accepted, and the field it sets (*field, in *o) is then want. */
static void good_u64(struct plan_opts *o, const char *name, const char *value,
                     const uint64_t *field, uint64_t want)
{
    good(o, name, value);
    if (*field != want)
        fail_msg("%s=%s: %llu, wanted %llu", name, value, (unsigned long long)*field,
                 (unsigned long long)want);
}

static void good_real(struct plan_opts *o, const char *name, const char *value, const double *field,
                      double want)
{
    good(o, name, value);
    if (*field != want)
        fail_msg("%s=%s: %g, wanted %g", name, value, *field, want);
}

/* name=value refused with code and exactly msg, naming the option. */
static void bad(const char *name, const char *value, int code, const char *msg)
{
    struct plan_opts o = {0}, zero = {0};
    struct err e;
    int rc;

    err_clear(&e);
    rc = plan_opts_set(&o, name, value, &e);
    if (rc != code || strcmp(e.msg, msg) != 0)
        fail_msg("%s=%s: got %d \"%s\", expected %d \"%s\"", name, value, rc, e.msg, code, msg);
    assert_string_equal(e.where, name);
    assert_memory_equal(&o, &zero, sizeof(o)); /* nothing set */
}

/* What a duration that does not parse is told. */
#define NOT_DURATION                                                                               \
    "is not a duration (2, 2s, 500ms, 1.5m: seconds unless ms, s, m or h follows; at most 6 "      \
    "decimals)"

/* name=value refused: code and the exact message, naming the option as it was given. */
static const struct refusal {
    const char *name, *value;
    int code;
    const char *msg;
} refusals[] = {
    /* format */
    {"format", "xml", ERR_NOTFOUND,
     "format: unknown input format \"xml\" (known: auto, safetensors, recipe, json, "
     "minimalloc-csv (csv), xla-buffer-assignment, hlo, stablehlo (mlir), xla-oom (oom))"},
    {"format", "JSON", ERR_NOTFOUND,
     "format: unknown input format \"JSON\" (known: auto, safetensors, recipe, json, "
     "minimalloc-csv (csv), xla-buffer-assignment, hlo, stablehlo (mlir), xla-oom (oom))"},
    /* chip and strategies */
    {"strategies", "first-fit,,exact", ERR_INVALID,
     "strategies: empty or overlong name in \"first-fit,,exact\""},
    {"strategies", "", ERR_INVALID, "strategies: empty or overlong name in \"\""},
    /* byte counts */
    {"capacity", "lots", ERR_INVALID,
     "capacity: \"lots\" is not a byte count (12, 64M, 1.5GiB: K/M/G/T are powers of 1024)"},
    {"capacity", "0", ERR_INVALID, "capacity: must be above 0 bytes, got \"0\""},
    {"capacity", "16777216T", ERR_OVERFLOW, "capacity: \"16777216T\" passes 2^64-1 bytes"},
    {"alignment", "3", ERR_INVALID,
     "alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"3\""},
    {"alignment", "2G", ERR_INVALID,
     "alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"2G\""},
    {"alignment", "0", ERR_INVALID,
     "alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"0\""},
    {"alignment", "4k2", ERR_INVALID,
     "alignment: \"4k2\" is not a byte count (12, 64M, 1.5GiB: K/M/G/T are powers of 1024)"},
    /* time limit */
    {"time_limit", "2 s", ERR_INVALID, "time_limit: \"2 s\" " NOT_DURATION},
    {"time_limit", "1e3", ERR_INVALID, "time_limit: \"1e3\" " NOT_DURATION},
    {"time_limit", "-1", ERR_INVALID, "time_limit: \"-1\" " NOT_DURATION},
    {"time_limit", "3601", ERR_INVALID,
     "time_limit: must be above 0 and at most 3600 s, got \"3601\""},
    {"time_limit", "61m", ERR_INVALID,
     "time_limit: must be above 0 and at most 3600 s, got \"61m\""},
    {"time_limit", "0ms", ERR_INVALID,
     "time_limit: must be above 0 and at most 3600 s, got \"0ms\""},
    /* name and budget */
    {"name", "", ERR_INVALID, "name: must be 1 to 127 bytes, got 0"},
    {"budget", "lots", ERR_INVALID,
     "budget: \"lots\" is not a byte count (14000000000, 14G, 14GiB: K/M/G/T are powers of "
     "1024) or a fraction of the capacity (90%, 0.9)"},
    {"budget", "1.5", ERR_INVALID,
     "budget: a fraction of the capacity must be above 0 and at most 1, got \"1.5\""},
    /* the runtime, the goal, the threads, unknown options */
    {"mem_fraction", "half", ERR_INVALID,
     "mem_fraction: \"half\" is not a decimal number (0.75, .5, 1: at most 6 decimals)"},
    {"mem_fraction", "5e-1", ERR_INVALID,
     "mem_fraction: \"5e-1\" is not a decimal number (0.75, .5, 1: at most 6 decimals)"},
    {"mem_fraction", "1.5", ERR_INVALID,
     "mem_fraction: must be above 0 and at most 1, got \"1.5\""},
    {"mem_fraction", "0", ERR_INVALID, "mem_fraction: must be above 0 and at most 1, got \"0\""},
    {"preallocate", "yes", ERR_INVALID, "preallocate: must be true or false, got \"yes\""},
    {"preallocate", "TRUE", ERR_INVALID, "preallocate: must be true or false, got \"TRUE\""},
    {"goal", "most", ERR_INVALID, "goal: must be min or fit, got \"most\""},
    {"threads", "four", ERR_INVALID, "threads: must be a whole number from 1 to 64, got \"four\""},
    {"threads", "0", ERR_INVALID, "threads: must be a whole number from 1 to 64, got \"0\""},
    {"threads", "65", ERR_INVALID, "threads: must be a whole number from 1 to 64, got \"65\""},
    {"threads", "99999999999999999999999", ERR_INVALID,
     "threads: must be a whole number from 1 to 64, got \"99999999999999999999999\""},
    {"colour", "red", ERR_NOTFOUND, "colour: unknown option"},
    {"time-limit", "2", ERR_NOTFOUND, "time-limit: unknown option"}, /* the flag's spelling */
};

/* The format is resolved by the input formats' table (import.h): an alias is stored as its
 * format's name, auto as unset, and the refusal lists the table's names. */
static void test_format(void **state)
{
    struct plan_opts o = {0};
    (void)state;
    good(&o, "format", "csv");
    assert_string_equal(o.format, "minimalloc-csv");
    good(&o, "format", "minimalloc-csv");
    assert_string_equal(o.format, "minimalloc-csv");
    good(&o, "format", "mlir");
    assert_string_equal(o.format, "stablehlo");
    good(&o, "format", "xla-buffer-assignment");
    assert_string_equal(o.format, "xla-buffer-assignment");
    good(&o, "format", "auto");
    assert_null(o.format);
}

static void test_chip_and_strategies(void **state)
{
    struct plan_opts o = {0};
    char want[ERR_MSG_MAX];
    (void)state;
    good(&o, "chip", "v6e");
    assert_string_equal(o.chip, "v6e");
    good(&o, "chip", "TPU v4"); /* a JAX device_kind alias */
    assert_string_equal(o.chip, "TPU v4");
    snprintf(want, sizeof(want), "chip: unknown chip \"v9\" (known: %s)", chip_names());
    bad("chip", "v9", ERR_NOTFOUND, want);
    good(&o, "strategies", "xla-spatial,first-fit");
    assert_string_equal(o.strategies, "xla-spatial,first-fit");
    good(&o, "strategies", "best");
    good(&o, "strategies", "all,exact");
    snprintf(want, sizeof(want), "strategies: unknown strategy \"magic\" (known: %s, best, all)",
             pack_strategy_names());
    bad("strategies", "first-fit,magic", ERR_NOTFOUND, want);
}

static void test_bytes(void **state)
{
    struct plan_opts o = {0};
    (void)state;
    good_u64(&o, "capacity", "1.5GiB", &o.capacity, 1610612736ull);
    good_u64(&o, "capacity", "17179869184", &o.capacity, 17179869184ull);
    good_u64(&o, "alignment", "4K", &o.alignment, 4096);
    good_u64(&o, "alignment", "1", &o.alignment, 1);
    good_u64(&o, "alignment", "1G", &o.alignment, 1073741824ull);
}

static void test_time_limit(void **state)
{
    struct plan_opts o = {0};
    (void)state;
    good_real(&o, "time_limit", "2", &o.time_limit_s, 2);
    good_real(&o, "time_limit", "500ms", &o.time_limit_s, 0.5);
    good_real(&o, "time_limit", "1.5m", &o.time_limit_s, 90);
    good_real(&o, "time_limit", "1h", &o.time_limit_s, 3600);
    good_real(&o, "time_limit", ".25s", &o.time_limit_s, 0.25);
}

static void test_name_and_budget(void **state)
{
    struct plan_opts o = {0};
    char longest[128], over[129];
    (void)state;
    memset(longest, 'n', 127);
    longest[127] = '\0';
    memset(over, 'n', 128);
    over[128] = '\0';
    good(&o, "name", longest);
    assert_ptr_equal(o.name, longest); /* borrowed */
    bad("name", over, ERR_INVALID, "name: must be 1 to 127 bytes, got 128");
    /* stored as PostgreSQL text: UTF-8 or refused (a 400, not a failed INSERT) */
    good(&o, "name", "Z\xc3\xbcrich \xe6\x97\xa5");
    bad("name", "n\xff", ERR_INVALID, "name: must be UTF-8 text");
    bad("name", "n\xc3", ERR_INVALID, "name: must be UTF-8 text");
    bad("name", "\xed\xa0\x80", ERR_INVALID, "name: must be UTF-8 text");
    good(&o, "budget", "0.9");
    assert_string_equal(o.budget, "0.9");
    good(&o, "budget", "14GiB");
}

static void test_runtime_goal_threads(void **state)
{
    struct plan_opts o = {0};
    (void)state;
    good_real(&o, "mem_fraction", "0.5", &o.mem_fraction, 0.5);
    good_real(&o, "mem_fraction", ".25", &o.mem_fraction, 0.25);
    good_real(&o, "mem_fraction", "1", &o.mem_fraction, 1);
    good(&o, "preallocate", "false");
    assert_int_equal(o.preallocate, PLAN_PREALLOC_OFF);
    good(&o, "preallocate", "true");
    assert_int_equal(o.preallocate, PLAN_PREALLOC_ON);
    good(&o, "goal", "fit");
    assert_int_equal(o.goal, PACK_GOAL_FIT);
    good(&o, "goal", "min");
    assert_int_equal(o.goal, PACK_GOAL_MIN);
    good(&o, "threads", "4");
    assert_int_equal(o.threads, 4);
    good(&o, "threads", "64");
    good(&o, "xla_assignment", "BufferAssignment:\n");
    assert_true(o.xla_assignment_len == 18);
    good(&o, "xla_report", "");
    assert_true(o.xla_report != NULL && o.xla_report_len == 0);
}

static void test_refusals(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
        bad(refusals[i].name, refusals[i].value, refusals[i].code, refusals[i].msg);
}

/* Each surface's spelling, and the surfaces an option is not on. */
static void test_surfaces(void **state)
{
    char names[512];
    (void)state;
    assert_string_equal(plan_opt_find(PLAN_OPT_PLAN, "--time-limit")->name, "time_limit");
    assert_string_equal(plan_opt_find(PLAN_OPT_API, "time_limit")->name, "time_limit");
    assert_string_equal(plan_opt_find(PLAN_OPT_STORED, "time_limit_s")->name, "time_limit");
    assert_string_equal(plan_opt_find(PLAN_OPT_MODEL, "time_limit")->name, "time_limit");
    assert_string_equal(plan_opt_find(PLAN_OPT_PLAN, "--input")->name, "format");
    assert_string_equal(plan_opt_find(PLAN_OPT_PACK, "--capacity")->name, "capacity");
    assert_string_equal(plan_opt_find(PLAN_OPT_PLAN, "--goal")->name, "goal");
    assert_null(plan_opt_find(PLAN_OPT_PLAN, "--format")); /* the output's: cli_plan's own */
    assert_null(plan_opt_find(PLAN_OPT_PLAN, "time_limit"));
    assert_null(plan_opt_find(PLAN_OPT_API, "time_limit_s"));
    assert_null(plan_opt_find(PLAN_OPT_PACK, "--budget"));
    assert_null(plan_opt_find(PLAN_OPT_API, "threads"));
    assert_null(plan_opt_find(PLAN_OPT_API, "xla_assignment")); /* a form field: http.c's */
    assert_null(plan_opt_find(PLAN_OPT_MODEL, "chip"));         /* the model's own "chip" */
    assert_null(plan_opt_find(PLAN_OPT_STORED, "threads"));
    plan_opt_names(PLAN_OPT_PACK, names, sizeof(names));
    assert_string_equal(names, "--capacity, --time-limit, --goal, --threads");
    plan_opt_names(PLAN_OPT_API, names, sizeof(names));
    assert_string_equal(names,
                        "format, chip, strategies, capacity, time_limit, alignment, name, "
                        "budget, runtime, mem_fraction, preallocate, goal, reading, order, bind");
    plan_opt_names(PLAN_OPT_MODEL, names, sizeof(names));
    assert_string_equal(
        names, "strategies, capacity, time_limit, alignment, budget, runtime, mem_fraction, "
               "preallocate, reading, order");
    plan_opt_names(PLAN_OPT_STORED, names, sizeof(names));
    assert_string_equal(names, "format, chip, strategies, capacity, time_limit_s, alignment, "
                               "name, budget, runtime, mem_fraction, xla_assignment, xla_report, "
                               "preallocate, goal, reading, order, bind");
    plan_opt_names(PLAN_OPT_API, names, 16); /* cut at a name: never half of one */
    assert_string_equal(names, "format, chip");
    /* every row has its words: the help text and the errors are made of them */
    for (size_t i = 0; i < plan_opt_count(); i++) {
        const struct plan_opt *opt = plan_opt_at(i);
        assert_non_null(opt->name);
        assert_non_null(opt->metavar);
        char range[256];
        /* the format's range is the input formats' table's names, nobody else's */
        assert_true((opt->range == NULL) == (opt->type == PLAN_OPT_FORMAT));
        assert_true(strlen(plan_opt_range(opt, range, sizeof(range))) > 0);
        assert_non_null(opt->dflt);
        assert_non_null(opt->doc);
        assert_true((opt->flag != NULL) == ((opt->surfaces & PLAN_OPT_CLI) != 0));
        assert_true((opt->key != NULL) == ((opt->surfaces & PLAN_OPT_STORED) != 0));
    }
    assert_null(plan_opt_at(plan_opt_count()));
}

/* A label names the option as its caller spells it. */
static void test_label(void **state)
{
    struct plan_opts o = {0};
    struct err e;
    (void)state;
    err_clear(&e);
    assert_int_equal(
        plan_opt_set(&o, plan_opt_find(PLAN_OPT_PACK, "--capacity"), "--capacity", "-3", &e),
        ERR_INVALID);
    assert_string_equal(e.where, "--capacity");
    assert_string_equal(
        e.msg,
        "--capacity: \"-3\" is not a byte count (12, 64M, 1.5GiB: K/M/G/T are powers of 1024)");
    assert_int_equal(
        plan_opt_set(&o, plan_opt_find(PLAN_OPT_API, "budget"), "options.budget", "0B", &e),
        ERR_INVALID);
    assert_string_equal(e.msg, "options.budget: must be above 0 bytes, got \"0B\"");
    assert_int_equal(plan_opt_set(&o, plan_opt_find(PLAN_OPT_API, "goal"), "goal", NULL, &e),
                     ERR_INVALID);
    assert_string_equal(e.msg, "goal: needs a value");
}

/* JSON values: strings in the text grammar, integers as their digits, reals only for a
 * duration or a fraction, strings an option keeps copied into the caller's buffer. */
static void test_json(void **state)
{
    struct plan_opts o = {0};
    char buf[32];
    size_t used = 0;
    struct err e;
    json_object *v;
    (void)state;
    err_clear(&e);
#define SET(name, text, rc)                                                                        \
    do {                                                                                           \
        v = json_tokener_parse(text);                                                              \
        assert_int_equal(plan_opt_set_json(&o, plan_opt_find(PLAN_OPT_STORED, name), name, v, buf, \
                                           sizeof(buf), &used, &e),                                \
                         rc);                                                                      \
        json_object_put(v);                                                                        \
    } while (0)
    SET("capacity", "17179869184", ERR_OK);
    assert_true(o.capacity == 17179869184ull);
    SET("capacity", "\"16GiB\"", ERR_OK);
    assert_true(o.capacity == 17179869184ull);
    SET("capacity", "18446744073709551615", ERR_OK); /* json-c keeps it as a uint64 */
    assert_true(o.capacity == UINT64_MAX);
    SET("capacity", "16.0", ERR_INVALID);
    assert_string_equal(e.msg, "capacity: must be a whole number or a string, got a non-integer "
                               "number");
    SET("capacity", "-1", ERR_INVALID);
    assert_string_equal(
        e.msg,
        "capacity: \"-1\" is not a byte count (12, 64M, 1.5GiB: K/M/G/T are powers of 1024)");
    SET("time_limit_s", "2.5", ERR_OK);
    assert_true(o.time_limit_s == 2.5);
    SET("time_limit_s", "0.000123", ERR_OK); /* a real as is, not through the 6 decimals */
    assert_true(o.time_limit_s == 0.000123);
    SET("time_limit_s", "\"500ms\"", ERR_OK);
    assert_true(o.time_limit_s == 0.5);
    SET("time_limit_s", "4000.5", ERR_INVALID);
    assert_string_equal(e.msg, "time_limit_s: must be above 0 and at most 3600 s, got \"4000.5\"");
    SET("mem_fraction", "0.9", ERR_OK);
    assert_true(o.mem_fraction == 0.9);
    SET("preallocate", "false", ERR_OK);
    assert_int_equal(o.preallocate, PLAN_PREALLOC_OFF);
    SET("preallocate", "1", ERR_INVALID);
    assert_string_equal(e.msg, "preallocate: must be true or false, got \"1\"");
    SET("budget", "\"0.9\"", ERR_OK);
    assert_ptr_equal(o.budget, buf); /* copied */
    assert_string_equal(o.budget, "0.9");
    assert_int_equal(used, 4);
    SET("budget", "14000000000", ERR_INVALID);
    assert_string_equal(e.msg, "budget: must be a string, got an integer");
    SET("chip", "null", ERR_INVALID);
    assert_string_equal(e.msg, "chip: must be a string, got null");
    SET("goal", "[\"fit\"]", ERR_INVALID);
    assert_string_equal(e.msg, "goal: must be a string, got an array");
    SET("name", "\"a name longer than the rest of buf\"", ERR_LIMIT);
    assert_string_equal(e.msg, "name: no room for its 34 bytes");
#undef SET
}

/* Every option set reads back as it was given; unset ones read as unset. */
static void test_get(void **state)
{
    struct plan_opts o = {0};
    struct plan_opt_value v;
    (void)state;
    for (size_t i = 0; i < plan_opt_count(); i++)
        assert_false(plan_opt_get(&o, plan_opt_at(i), &v));
    good(&o, "format", "csv");
    good(&o, "capacity", "1K");
    good(&o, "time_limit", "1.5m");
    good(&o, "preallocate", "false");
    good(&o, "goal", "fit");
    good(&o, "strategies", "best");
    assert_true(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "format"), &v));
    assert_int_equal(v.kind, PLAN_OPT_V_TEXT);
    assert_string_equal(v.text, "minimalloc-csv"); /* the format's own name */
    assert_true(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "capacity"), &v));
    assert_true(v.kind == PLAN_OPT_V_UINT && v.u == 1024);
    assert_true(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "time_limit"), &v));
    assert_true(v.kind == PLAN_OPT_V_REAL && v.d == 90);
    assert_true(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "preallocate"), &v));
    assert_true(v.kind == PLAN_OPT_V_BOOL && !v.b);
    assert_true(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "goal"), &v));
    assert_true(v.kind == PLAN_OPT_V_TEXT && strcmp(v.text, "fit") == 0 && v.len == 3);
    assert_true(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "strategies"), &v));
    assert_string_equal(v.text, "best");
    assert_false(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "chip"), &v));
    good(&o, "goal", "min"); /* min is the default: left out when written */
    assert_false(plan_opt_get(&o, plan_opt_find(PLAN_OPT_API, "goal"), &v));
}

/* The struct as plan_run's callers fill it, against the same ranges. */
static void test_check(void **state)
{
    struct err e;
    struct {
        struct plan_opts o;
        const char *msg; /* NULL: passes */
    } cases[] = {
        {{0}, NULL},
        {{.time_limit_s = 3600, .mem_fraction = 1, .alignment = 1u << 30, .threads = 64}, NULL},
        {{.time_limit_s = 5000}, "time_limit: must be above 0 and at most 3600 s, got \"5000\""},
        {{.time_limit_s = -1}, "time_limit: must be above 0 and at most 3600 s, got \"-1\""},
        {{.mem_fraction = 1.25}, "mem_fraction: must be above 0 and at most 1, got \"1.25\""},
        {{.alignment = 96},
         "alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"96\""},
        {{.threads = 100}, "threads: must be a whole number from 1 to 64, got 100"},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err_clear(&e);
        int rc = plan_opts_check(&cases[i].o, &e);
        if (cases[i].msg == NULL)
            assert_int_equal(rc, ERR_OK);
        else if (rc != ERR_INVALID || strcmp(e.msg, cases[i].msg) != 0)
            fail_msg("case %zu: %d \"%s\"", i, rc, e.msg);
    }
}

/* duration.h on its own: units, decimals, and what is refused. */
static void test_duration(void **state)
{
    static const struct {
        const char *s;
        double seconds;
    } ok[] = {{"0", 0},     {"2", 2},    {"2s", 2},          {"2000ms", 2}, {"1.5m", 90},
              {"1h", 3600}, {".5", 0.5}, {"0.000001", 1e-6}, {"90m", 5400}, {"0.5h", 1800}};
    static const char *const no[] = {"",   "s",  "1.", "1e3",  "-1",        "+1",   "2 s",
                                     "2S", "2M", "2d", "2sec", "0.1234567", "1..5", NULL};
    struct err e;
    double d;
    (void)state;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (duration_parse("t", ok[i].s, &d, &e) != ERR_OK)
            fail_msg("\"%s\" refused: %s", ok[i].s, e.msg);
        if (d != ok[i].seconds)
            fail_msg("\"%s\": %g s, expected %g", ok[i].s, d, ok[i].seconds);
    }
    for (size_t i = 0; no[i] != NULL; i++) {
        err_clear(&e);
        if (duration_parse("t", no[i], &d, &e) != ERR_INVALID)
            fail_msg("\"%s\" accepted", no[i]);
        assert_string_equal(e.where, "t");
    }
    assert_int_equal(duration_parse("t", NULL, &d, &e), ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_chip_and_strategies),
        cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_name_and_budget),
        cmocka_unit_test(test_runtime_goal_threads),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_surfaces),
        cmocka_unit_test(test_label),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_get),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_duration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
