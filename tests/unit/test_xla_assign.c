/*
 * test_xla_assign.c - XLA's buffer-assignment and memory-usage-report dumps: the printer's
 * exact forms (xla_assign.h cites them) parsed to values worked out by hand, tuple and phi
 * values named by the model contract, every error with its line:column, the limits, and
 * plan_run on an assignment alone and attached to a model (packing.xla, xla_offset).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "planner/plan.h"
#include "planner/xla_assign.h"

#include "slurp.h"

/* tests/data/xla/small.buffer-assignment.txt, as XLA prints it: 7 HLO values in 6
 * allocations, the "Used values" blocks (shortened) and the HloLiveRange part. */
static const char small[] =
    "BufferAssignment:\n"
    "allocation 0: size 1024, parameter 0, shape |f32[16,16]| at ShapeIndex {}:\n"
    " value: <0 p0 @0> (size=1024,offset=0): f32[16,16]{1,0}\n"
    "allocation 1: size 64, parameter 1, shape |f32[16]| at ShapeIndex {}:\n"
    " value: <1 p1 @0> (size=64,offset=0): f32[16]{0}\n"
    "allocation 2: size 16, output shape is |(f32[16,16], f32[16])|, maybe-live-out:\n"
    " value: <6 tuple.5{} @0> (size=16,offset=0): (f32[16,16]{1,0}, f32[16]{0})\n"
    "allocation 3: size 1024, maybe-live-out:\n"
    " value: <5 multiply.4 @0> (size=1024,offset=0): f32[16,16]{1,0}\n"
    "allocation 4: size 64, maybe-live-out:\n"
    " value: <4 fusion.3 @0> (size=64,offset=0): f32[16]{0}\n"
    "allocation 5: size 2048, preallocated-temp:\n"
    " value: <2 broadcast.1 @0> (size=1024,offset=0): f32[16,16]{1,0}\n"
    " value: <3 add.2 @0> (size=1024,offset=1024): f32[16,16]{1,0}\n"
    "\n"
    "Total bytes used: 4240 (4.14KiB)\n"
    "\n"
    "Used values:\n"
    "<0 p0 @0>\n"
    " positions:\n"
    "  p0\n"
    " uses:\n"
    "  add.2, operand 0\n"
    " from instruction: %p0 = f32[16,16]{1,0} parameter(0)\n"
    "<6 tuple.5{} @0>\n"
    " positions:\n"
    "  tuple.5 {}\n"
    " uses:\n"
    " from instruction: %tuple.5 = (f32[16,16]{1,0}, f32[16]{0}) tuple(%multiply.4, %fusion.3)\n"
    "\n"
    "\n"
    "HloLiveRange (max 7):\n"
    "  InstructionSequence:\n"
    "    0:p0\n"
    "    1:p1\n"
    "    2:broadcast.1\n"
    "    3:add.2\n"
    "    4:fusion.3\n"
    "    5:multiply.4\n"
    "    6:tuple.5\n"
    "  BufferLiveRange:\n"
    "    p0{}:0-7\n"
    "    p1{}:0-7\n"
    "    broadcast.1{}:2-3\n"
    "    add.2{}:3-5\n"
    "    fusion.3{}:4-7\n"
    "    multiply.4{}:5-7\n"
    "    tuple.5{}:6-7\n"
    "  Live ranges at 5 (peak):\n"
    "    p0: 1024 bytes\n"
    "    add.2: 1024 bytes\n";

static int parse(const char *s, size_t max, struct xla_assign *a, struct err *e)
{
    err_clear(e);
    return xla_assign_parse(s, strlen(s), max, a, e);
}

static void test_small_dump_parses_every_allocation(void **state)
{
    struct xla_assign a;
    struct err e;

    (void)state;
    assert_true(xla_assign_detect(small, strlen(small)));
    assert_false(xla_report_detect(small, strlen(small)));
    assert_int_equal(parse(small, 100, &a, &e), ERR_OK);
    assert_int_equal(a.nallocs, 6);
    assert_int_equal(a.nvalues, 7);
    /* 1024 + 64 + 16 + 1024 + 64 + 2048 */
    assert_int_equal(a.total_bytes, 4240);
    assert_true(a.have_total_line);
    assert_true(a.have_live_ranges);
    assert_int_equal(a.schedule_end, 7);
    assert_int_equal(a.live_unknown, 0);
    assert_string_equal(a.ignored, "");
    assert_int_equal(a.allocs[0].flags, XLA_ALLOC_PARAMETER);
    assert_int_equal(a.allocs[1].parameter, 1);
    assert_int_equal(a.allocs[2].flags, XLA_ALLOC_OUTPUT | XLA_ALLOC_LIVE_OUT);
    assert_int_equal(a.allocs[2].parameter, -1);
    assert_int_equal(a.allocs[5].flags, XLA_ALLOC_TEMP);
    /* laid end to end: 0, 1024, 1088, 1104, 2128, 2192 */
    assert_int_equal(a.allocs[3].base, 1104);
    assert_int_equal(a.allocs[5].base, 2192);
    assert_int_equal(a.allocs[5].first, 5);
    assert_int_equal(a.allocs[5].count, 2);
    /* the tuple's own buffer is the tensor "tuple.5"; its key keeps the index */
    assert_string_equal(a.values[2].key, "tuple.5{}");
    assert_int_equal(a.values[2].name_len, strlen("tuple.5"));
    assert_int_equal(a.values[2].id, 6);
    assert_string_equal(a.values[6].key, "add.2{}");
    assert_int_equal(a.values[6].offset, 1024);
    assert_int_equal(a.values[6].alloc, 5);
    assert_int_equal(a.values[6].line, 14);
    /* HloLiveRange's ranges are inclusive: add.2{}:3-5 is [3, 6) */
    assert_true(a.values[6].live_given);
    assert_int_equal(a.values[6].live_start, 3);
    assert_int_equal(a.values[6].live_end, 6);
    assert_int_equal(a.values[0].live_end, 8);
    xla_assign_free(&a);
}

/* Tuple elements, nested indices, phis, colors, an unknown attribute, no live ranges. */
static void test_tuples_colors_and_no_ranges(void **state)
{
    const char *s = "allocation 0: size 4096, color 1, thread-local, future-thing 3:\n"
                    " value: <9 while.2{1} @1> (size=512,offset=0): f32[128]{0:S(1)}\n"
                    " value: <10 while.2{0,1} (phi) @1> (size=512,offset=512): s32[128]{0}\n"
                    " value: <11 c.1> (size=4,offset=1024): s32[]\n"
                    "allocation 1: size 8, constant:\n"
                    " value: <12 constant.7 @0> (size=8,offset=0): s32[2]{0}\n";
    struct xla_assign a;
    struct err e;

    (void)state;
    assert_true(xla_assign_detect(s, strlen(s)));
    assert_int_equal(parse(s, 100, &a, &e), ERR_OK);
    assert_int_equal(a.allocs[0].color, 1);
    assert_int_equal(a.allocs[0].flags, XLA_ALLOC_THREAD_LOCAL);
    assert_string_equal(a.ignored, "future-thing 3");
    assert_int_equal(a.allocs[1].flags, XLA_ALLOC_CONSTANT);
    assert_string_equal(a.values[0].key, "while.2{1}");
    assert_int_equal(a.values[0].name_len, strlen("while.2{1}"));
    assert_int_equal(a.values[0].color, 1);
    assert_string_equal(a.values[1].key, "while.2{0,1}");
    assert_int_equal(a.values[1].name_len, strlen("while.2{0,1}"));
    assert_string_equal(a.values[2].key, "c.1{}"); /* older XLA: no "@color" */
    assert_int_equal(a.values[2].name_len, 3);
    assert_int_equal(a.values[2].color, 0);
    assert_false(a.have_live_ranges);
    assert_false(a.have_total_line);
    assert_false(a.values[0].live_given);
    assert_int_equal(a.total_bytes, 4104);
    xla_assign_free(&a);
}

/* small's program as each older printer wrote it (tests/data/xla/small.*.buffer-assignment.txt,
 * written from the printers' format strings in openxla/xla's history, xla_assign.h):
 * - 2019-09: "allocation N: 0xADDRESS, size S", "parameter N at ShapeIndex {}" without its
 *   shape, each value as "  <ID NAME @C>, positions:" ... " [OFFSET,SIZE]: SHAPE" (the parent
 *   of 4ef42a940e, BufferAllocation::ToString's "  %s [%d,%d]: %s");
 * - 2019-10: " value: <..> (size=S,offset=O)" lines and "Used values:", still with the
 *   address and no shapes, no total (4ef42a940e; the total came with 062db392c2);
 * - 2020: the shapes between pipes and "Total bytes used: N" without the human-readable
 *   size (cba0905e36, 062db392c2), the address still printed (until d35412bdbd, 2022-09).
 * Each is the same 6 allocations and 7 values as small: 4240 bytes, add.2 at offset 1024
 * of allocation 5, none with a live range. */
static void test_older_printers_give_the_same_assignment(void **state)
{
    static const struct {
        const char *path;
        bool total_line, output_flag;
    } eras[] = {
        {"tests/data/xla/small.2019-09.buffer-assignment.txt", false, false},
        {"tests/data/xla/small.2019-10.buffer-assignment.txt", false, false},
        {"tests/data/xla/small.2020.buffer-assignment.txt", true, true},
    };
    (void)state;
    for (size_t k = 0; k < sizeof(eras) / sizeof(eras[0]); k++) {
        struct xla_assign a;
        struct err e;
        size_t len;
        char *text = slurp(eras[k].path, &len);
        assert_true(xla_assign_detect(text, len));
        err_clear(&e);
        if (xla_assign_parse(text, len, 100, &a, &e) != ERR_OK)
            fail_msg("%s: %s", eras[k].path, e.msg);
        assert_int_equal(a.nallocs, 6);
        assert_int_equal(a.nvalues, 7);
        assert_int_equal(a.total_bytes, 4240);
        assert_int_equal(a.have_total_line, eras[k].total_line);
        assert_false(a.have_live_ranges);
        assert_string_equal(a.ignored, "");
        assert_int_equal(a.allocs[0].flags, XLA_ALLOC_PARAMETER);
        assert_int_equal(a.allocs[1].parameter, 1);
        assert_int_equal(a.allocs[2].flags,
                         XLA_ALLOC_LIVE_OUT | (eras[k].output_flag ? XLA_ALLOC_OUTPUT : 0));
        assert_int_equal(a.allocs[5].flags, XLA_ALLOC_TEMP);
        assert_int_equal(a.allocs[5].base, 2192);
        assert_string_equal(a.values[2].key, "tuple.5{}");
        assert_int_equal(a.values[2].name_len, strlen("tuple.5"));
        assert_string_equal(a.values[6].key, "add.2{}");
        assert_int_equal(a.values[6].id, 3);
        assert_int_equal(a.values[6].offset, 1024);
        assert_int_equal(a.values[6].size, 1024);
        assert_int_equal(a.values[6].alloc, 5);
        xla_assign_free(&a);
        /* planned alone: every value live throughout, so the peak is their sum */
        struct plan_summary ps;
        struct plan_opts o = {.strategies = "xla-spatial"};
        char *json = NULL;
        size_t jlen = 0;
        if (plan_run(text, len, &o, NULL, &json, &jlen, NULL, &ps, &e) != ERR_OK)
            fail_msg("%s: %s", eras[k].path, e.msg);
        assert_int_equal(ps.tensors, 7);
        assert_int_equal(ps.peak_bytes, 4240);
        free(json);
        free(text);
    }
}

/* Verbatim from openxla/xla 4ef42a940e's commit message ("Make buffer assignment output more
 * readable"), its "Before" and "After" (the lines up to its "(...)"), and the example in
 * xla/tools/driver.cc:300-316 joined where its comment wraps, which writes the shapes
 * without pipes (tests/data/xla/driver.buffer-assignment.txt). */
static void test_xla_history_examples_parse(void **state)
{
    static const char before[] = "allocation 0: 0x7f322b1bf600, size 2147483648, maybe-live-out:\n"
                                 "  <5 custom-call.10{0} @0>, positions:\n"
                                 "  custom-call.10 {0}\n"
                                 "  get-tuple-element.12\n"
                                 " uses:\n"
                                 "  custom-call.11, operand 0\n"
                                 " [0,2147483648]: f32[524288,32,32,1]{2,1,3,0}\n";
    static const char after[] =
        "BufferAssignment:\n"
        "allocation 0: 0x7fb2bfd3ac00, size 2147483648, maybe-live-out:\n"
        " value: <4 custom-call{0} @0> (size=2147483648,offset=0): f32[524288,32,32,1]{2,1,3,0}\n"
        " value: <10 custom-call.2{0} @0> (size=2147483648,offset=0): "
        "f32[524288,32,32,1]{2,1,3,0}\n"
        " value: <29 custom-call.8{1} @0> (size=0,offset=0): u8[0]{0}\n"
        "allocation 1: 0x7fb2bfd3acb0, size 2147483648, parameter 0 at ShapeIndex {}:\n"
        " value: <0 parameter.21 @0> (size=2147483648,offset=0): f32[524288,32,32,1]{3,2,1,0}\n"
        "allocation 2: 0x7fb2bfd3ad60, size 4, constant:\n"
        " value: <1 constant_5 @0> (size=4,offset=0): f32[]\n"
        "allocation 3: 0x7fb2bfd3ae10, size 8, maybe-live-out:\n"
        " value: <33 tuple.1{} @0> (size=8,offset=0): (f32[524288,32,32,1]{3,2,1,0})\n";
    struct xla_assign a;
    struct err e;
    size_t len;
    char *driver = slurp("tests/data/xla/driver.buffer-assignment.txt", &len);
    (void)state;

    assert_true(xla_assign_detect(before, strlen(before)));
    assert_int_equal(parse(before, 10, &a, &e), ERR_OK);
    assert_int_equal(a.nvalues, 1);
    assert_string_equal(a.values[0].key, "custom-call.10{0}");
    assert_int_equal(a.values[0].size, 2147483648);
    assert_int_equal(a.allocs[0].flags, XLA_ALLOC_LIVE_OUT);
    xla_assign_free(&a);

    assert_int_equal(parse(after, 10, &a, &e), ERR_OK);
    assert_int_equal(a.nallocs, 4);
    assert_int_equal(a.nvalues, 6);
    /* 2147483648 + 2147483648 + 4 + 8 */
    assert_int_equal(a.total_bytes, 4294967308);
    assert_int_equal(a.allocs[1].parameter, 0);
    assert_int_equal(a.allocs[2].flags, XLA_ALLOC_CONSTANT);
    assert_string_equal(a.values[2].key, "custom-call.8{1}");
    assert_int_equal(a.values[2].size, 0);
    assert_int_equal(a.values[5].name_len, strlen("tuple.1"));
    xla_assign_free(&a);

    assert_true(xla_assign_detect(driver, len));
    assert_int_equal(xla_assign_parse(driver, len, 10, &a, &e), ERR_OK);
    assert_int_equal(a.nallocs, 3);
    assert_int_equal(a.total_bytes, 32768 + 128 + 4);
    assert_int_equal(a.allocs[0].flags, XLA_ALLOC_PARAMETER);
    assert_int_equal(a.allocs[1].flags, XLA_ALLOC_OUTPUT | XLA_ALLOC_LIVE_OUT);
    assert_int_equal(a.allocs[2].flags, XLA_ALLOC_CONSTANT);
    assert_string_equal(a.values[1].key, "reduce{}");
    xla_assign_free(&a);
    free(driver);
    /* a tuple shape without pipes runs past its commas */
    assert_int_equal(parse("allocation 0: size 8, parameter 0, shape (f32[1], (s32[], u8[2])) at "
                           "ShapeIndex {1,0}:\nallocation 1: size 4, output shape is (f32[1], "
                           "s32[]), maybe-live-out:\n",
                           10, &a, &e),
                     ERR_OK);
    assert_int_equal(a.allocs[1].flags, XLA_ALLOC_OUTPUT | XLA_ALLOC_LIVE_OUT);
    xla_assign_free(&a);
}

static void expect_error(const char *s, size_t max, int code, const char *where, const char *msg)
{
    struct xla_assign a;
    struct err e;

    assert_int_equal(parse(s, max, &a, &e), code);
    assert_string_equal(e.where, where);
    if (strstr(e.msg, msg) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, msg);
    assert_null(a.allocs);
    assert_null(a.values);
}

static void test_errors_give_line_and_column(void **state)
{
    (void)state;
    expect_error(" value: <0 p0 @0> (size=4,offset=0): f32[]\n", 10, ERR_INVALID, "line 1:1",
                 "a value before any allocation line");
    expect_error("allocation 0: size x:\n", 10, ERR_INVALID, "line 1:20",
                 "expected the allocation's size");
    expect_error("allocation 0: size 8\n", 10, ERR_INVALID, "line 1:21", "the final ':'");
    expect_error("allocation 0: size 8:\n value: <0 p0 @0> (size=8,offset=4): f32[2]\n", 10,
                 ERR_INVALID, "line 2:37", "does not fit in allocation 0 of 8 bytes");
    expect_error("allocation 0: size 8:\n value: <0 p0 @0> (size=8 offset=0): f32[2]\n", 10,
                 ERR_INVALID, "line 2:26", "expected the value's size in bytes");
    expect_error("allocation 0: size 8:\n value: <0 p0{1 @0> (size=8,offset=0): f32[2]\n", 10,
                 ERR_INVALID, "line 2:16", "closed by '}'");
    expect_error("allocation 1: size 8:\nallocation 1: size 8:\n", 10, ERR_INVALID, "line 2:13",
                 "indices must increase");
    expect_error("allocation 0: size 8:\n value: <0 p0 @0> (size=8,offset=0): f32[2]\n"
                 "allocation 1: size 8:\n value: <1 p0 @0> (size=8,offset=0): f32[2]\n",
                 10, ERR_INVALID, "line 4:1", "p0{} is assigned twice (first on line 2)");
    expect_error("allocation 0: size 8:\n\nTotal bytes used: 9 (9B)\n", 10, ERR_INVALID,
                 "line 3:20", "not the sum of the allocations above (8)");
    expect_error("allocation 0: size 8:\nsomething else\n", 10, ERR_INVALID, "line 2:1",
                 "expected \"allocation N: size S...:\"");
    expect_error("allocation 0: size 8:\n value: <0 p0 @0> (size=8,offset=0): f32[2]\n"
                 "HloLiveRange (max 3):\n  BufferLiveRange:\n    p0{}:3-1\n",
                 10, ERR_INVALID, "line 5:10", "ends before it starts");
    expect_error("allocation 0: size 8:\nHloLiveRange (max 3):\n  BufferLiveRange:\n    p0{}\n", 10,
                 ERR_INVALID, "line 4:5", "expected NAME{INDEX}:START-END");
    expect_error("allocation 0: size 8:\nHloLiveRange (max 3):\nstray\n", 10, ERR_INVALID,
                 "line 3:1", "expected an HloLiveRange line");
    expect_error("allocation 0: size 9223372036854775807:\nallocation 1: size "
                 "9223372036854775807:\nallocation 2: size 9223372036854775807:\n",
                 10, ERR_INVALID, "line 3:39", "add up past 2^64-1");
    expect_error("allocation 0: size 99999999999999999999:\n", 10, ERR_INVALID, "line 1:20",
                 "size in bytes");
    expect_error("\n\n", 10, ERR_INVALID, "line 1:1", "not a buffer assignment");
    /* limits: values and allocations each at most max */
    expect_error("allocation 0: size 8:\n value: <0 a @0> (size=4,offset=0): f32[1]\n"
                 " value: <1 b @0> (size=4,offset=4): f32[1]\n",
                 1, ERR_LIMIT, "", "line 3: more than 1 values");
    expect_error("allocation 0: size 8:\nallocation 1: size 8:\n", 1, ERR_LIMIT, "",
                 "more than 1 allocations");
    /* the older forms */
    expect_error("allocation 0: 0x7f, size:\n", 10, ERR_INVALID, "line 1:21",
                 "expected \": size \" after the allocation index");
    expect_error("allocation 0: 0x7f size 8:\n", 10, ERR_INVALID, "line 1:19",
                 "after the allocation's address");
    expect_error("allocation 0: size 8, parameter 0, shape |f32[2] at ShapeIndex {}:\n", 10,
                 ERR_INVALID, "line 1:43", "the '|' closing the shape");
    expect_error("allocation 0: size 8, parameter 0 ShapeIndex {}:\n", 10, ERR_INVALID, "line 1:34",
                 "at ShapeIndex");
    expect_error("allocation 0: size 8, output shape is (f32[2]:\n", 10, ERR_INVALID, "line 1:39",
                 "expected a shape and");
    expect_error("allocation 0: size 8:\n  <0 p0 @0>, positions:\n  p0\n uses:\n", 10, ERR_INVALID,
                 "line 2:1", "has no \" [OFFSET,SIZE]: SHAPE\" line");
    expect_error("allocation 0: size 8:\n  <0 p0 @0>, positions:\nallocation 1: size 8:\n", 10,
                 ERR_INVALID, "line 3:1", "of the value on line 2");
    expect_error("allocation 0: size 8:\n  <0 p0 @0>, positions:\n [0,9]: f32[2]\n", 10,
                 ERR_INVALID, "line 3:8", "does not fit in allocation 0 of 8 bytes");
    expect_error("allocation 0: size 8:\n  <0 p0 @0>, positions:\n [0 8]: f32[2]\n", 10,
                 ERR_INVALID, "line 3:4", "expected \" [OFFSET,SIZE]: SHAPE\"");
    expect_error("allocation 0: size 8:\n  <0 p0 @0>\n", 10, ERR_INVALID, "line 2:12",
                 "expected \", positions:\"");
    expect_error("allocation 0: size 8:\n uses:\n", 10, ERR_INVALID, "line 2:1",
                 "without its value");
}

/* A live range naming no allocated value (XLA allocates no buffer for some) is counted. */
static void test_live_range_of_unallocated_value(void **state)
{
    const char *s = "allocation 0: size 8:\n value: <0 p0 @0> (size=8,offset=0): f32[2]\n"
                    "HloLiveRange (max 2):\n  BufferLiveRange:\n    p0{}:0-2\n    gone{}:1-1\n";
    struct xla_assign a;
    struct err e;

    (void)state;
    assert_int_equal(parse(s, 10, &a, &e), ERR_OK);
    assert_int_equal(a.live_unknown, 1);
    assert_int_equal(a.values[0].live_end, 3);
    xla_assign_free(&a);
}

static void test_report_totals_are_read_from_text_and_proto(void **state)
{
    const char *text = "Total bytes used: 4240 (4.14KiB)\n\nAllocations sorted by size:\n\n";
    const char *proto = "memory_space_allocation_entries {\n  total_bytes: 4240\n"
                        "  memory_space_color: 0\n  allocation_entries {\n    index: 5\n"
                        "    size: 2048\n    defining_positions: \"add.2\"\n  }\n}\n"
                        "memory_space_allocation_entries {\n  total_bytes: 512\n"
                        "  memory_space_color: 1\n}\n";
    struct xla_report r;
    struct err e;

    (void)state;
    assert_true(xla_report_detect(text, strlen(text)));
    assert_false(xla_assign_detect(text, strlen(text)));
    assert_int_equal(xla_report_parse(text, strlen(text), &r, &e), ERR_OK);
    assert_false(r.proto);
    assert_int_equal(r.total_bytes, 4240);
    assert_int_equal(r.nspaces, 0);
    assert_true(xla_report_detect(proto, strlen(proto)));
    assert_int_equal(xla_report_parse(proto, strlen(proto), &r, &e), ERR_OK);
    assert_true(r.proto);
    assert_int_equal(r.total_bytes, 4752);
    assert_int_equal(r.nspaces, 2);
    assert_int_equal(r.spaces[1].color, 1);
    assert_int_equal(r.spaces[1].total_bytes, 512);
    assert_int_equal(xla_report_parse("Total bytes used: x\n", 20, &r, &e), ERR_INVALID);
    assert_string_equal(e.where, "line 1:19");
    assert_int_equal(xla_report_parse("hello\n", 6, &r, &e), ERR_INVALID);
    assert_string_equal(e.where, "line 1:1");
}

/* ---- plan_run -------------------------------------------------------------------- */

static json_object *jget(json_object *o, const char *k1, const char *k2)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(o, k1, &v))
        fail_msg("no %s", k1);
    if (k2 != NULL && !json_object_object_get_ex(v, k2, &v))
        fail_msg("no %s.%s", k1, k2);
    return v;
}

static json_object *run(const char *input, const struct plan_opts *o, struct plan_views *views)
{
    char *json = NULL;
    size_t len = 0;
    struct err e;
    json_object *r;

    err_clear(&e);
    if (plan_run(input, strlen(input), o, NULL, &json, &len, views, NULL, &e) != ERR_OK)
        fail_msg("plan_run: %s", e.msg);
    r = json_tokener_parse(json);
    free(json);
    assert_non_null(r);
    return r;
}

static int64_t tensor_int(json_object *r, size_t i, const char *key)
{
    json_object *t = json_object_array_get_idx(jget(r, "tensors", NULL), i), *v = NULL;
    if (!json_object_object_get_ex(t, key, &v))
        return -1;
    return json_object_get_int64(v);
}

/* Alone: one raw tensor per value, XLA's live ranges, and XLA's offsets beside ours. */
static void test_standalone_dump_plans_one_tensor_per_value(void **state)
{
    struct plan_opts o = {.strategies = "xla-spatial"};
    struct plan_views views;
    json_object *r = run(small, &o, &views), *x = jget(r, "packing", "xla");
    json_object *lay;

    (void)state;
    assert_string_equal(json_object_get_string(jget(r, "model", "source_format")),
                        "xla-buffer-assignment");
    assert_int_equal(json_object_get_int64(jget(r, "model", "steps")), 8);
    assert_true(json_object_is_type(jget(r, "chip", NULL), json_type_null));
    assert_int_equal(json_object_get_int64(jget(r, "packing", "alignment")), 1);
    /* Live bytes per step: 1088 1088 2112 3136 2176 3200 2192 2192; the most is at step 5:
     * p0 + p1 + add.2 + fusion.3 + multiply.4 = 1024 + 64 + 1024 + 64 + 1024. */
    assert_int_equal(json_object_get_int64(jget(x, "lower_bound_bytes", NULL)), 3200);
    assert_int_equal(json_object_get_int64(jget(x, "peak_bytes", NULL)), 4240);
    assert_int_equal(json_object_get_int64(jget(x, "fragmentation_bytes", NULL)), 1040);
    assert_string_equal(json_object_get_string(jget(x, "name", NULL)), "xla-actual");
    assert_string_equal(json_object_get_string(jget(x, "source", NULL)), "standalone");
    assert_int_equal(json_object_get_int64(jget(x, "matched_values", NULL)), 7);
    assert_int_equal(json_object_get_int64(jget(x, "unmatched_tensors", NULL)), 0);
    assert_true(json_object_get_boolean(jget(x, "live_ranges", NULL)));
    assert_true(json_object_is_type(jget(x, "report", NULL), json_type_null));
    assert_int_equal(json_object_array_length(jget(x, "allocation_list", NULL)), 6);
    /* tensors in file order: p0 p1 tuple.5 multiply.4 fusion.3 broadcast.1 add.2 */
    assert_int_equal(tensor_int(r, 2, "xla_offset"), 1088);
    assert_int_equal(tensor_int(r, 6, "xla_offset"), 2192 + 1024);
    assert_int_equal(tensor_int(r, 6, "padded_bytes"), 1024);
    assert_string_equal(json_object_get_string(json_object_object_get(
                            json_object_array_get_idx(jget(r, "tensors", NULL), 2), "name")),
                        "tuple.5");
    assert_string_equal(json_object_get_string(json_object_object_get(
                            json_object_array_get_idx(jget(r, "tensors", NULL), 0), "kind")),
                        "input");
    assert_int_equal(json_object_get_int64(jget(jget(r, "packing", "peak"), "bytes", NULL)), 3200);
    json_object_put(r);
    lay = json_tokener_parse(views.layout);
    assert_non_null(lay);
    assert_int_equal(
        json_object_get_int64(json_object_array_get_idx(jget(lay, "xla_offset", NULL), 3)), 1104);
    json_object_put(lay);
    plan_views_free(&views);
}

/* Attached to a model: values matched by name, the rest counted; the report's totals. */
static void test_attached_dump_matches_values_by_name(void **state)
{
    static const char model[] =
        "{\"name\": \"small-with-xla\", \"tensors\": ["
        "{\"name\": \"p0\", \"shape\": [16, 16], \"dtype\": \"f32\", \"kind\": \"input\", "
        "\"live\": [0, 8]},"
        "{\"name\": \"add.2\", \"shape\": [16, 16], \"dtype\": \"f32\", \"live\": [3, 6]},"
        "{\"name\": \"fusion.3\", \"shape\": [16], \"dtype\": \"f32\", \"kind\": \"output\", "
        "\"live\": [4, 8]},"
        "{\"name\": \"scratch\", \"shape\": [8], \"dtype\": \"f32\", \"live\": [1, 2]}]}";
    static const char report[] = "Total bytes used: 4240 (4.14KiB)\n";
    struct plan_opts o = {.strategies = "xla-spatial",
                          .xla_assignment = small,
                          .xla_assignment_len = sizeof(small) - 1,
                          .xla_report = report,
                          .xla_report_len = sizeof(report) - 1};
    json_object *r = run(model, &o, NULL), *x = jget(r, "packing", "xla"), *names;

    (void)state;
    assert_string_equal(json_object_get_string(jget(x, "source", NULL)), "with-model");
    assert_int_equal(json_object_get_int64(jget(x, "matched_values", NULL)), 3);
    assert_int_equal(json_object_get_int64(jget(x, "unmatched_values", NULL)), 4);
    assert_int_equal(json_object_get_int64(jget(x, "unmatched_tensors", NULL)), 1);
    names = jget(x, "unmatched_tensor_names", NULL);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(names, 0)), "scratch");
    names = jget(x, "unmatched_value_names", NULL);
    assert_int_equal(json_object_array_length(names), 4);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(names, 1)), "tuple.5");
    assert_int_equal(json_object_get_int64(jget(jget(x, "report", NULL), "total_bytes", NULL)),
                     4240);
    assert_int_equal(tensor_int(r, 0, "xla_offset"), 0);
    assert_int_equal(tensor_int(r, 1, "xla_offset"), 3216);
    assert_int_equal(tensor_int(r, 2, "xla_offset"), 2128);
    assert_int_equal(tensor_int(r, 3, "xla_offset"), -1); /* absent: no value */
    json_object_put(r);
}

/* The HLO module of small's dump (tests/data/xla/small.hlo): the importer writes add.2 into
 * broadcast.1, which dies there, and multiply.4 into add.2 (elementwise, same shape), so
 * tensor broadcast.1 lists both in in_place. XLA's values add.2 and multiply.4 name no
 * tensor but are in place, not unmatched; tuple.5's own index table is a value no tensor
 * holds (the importer does not count tuple tables). */
static void test_plan_in_place_values(void **state)
{
    static const char hlo[] =
        "HloModule small\n\n"
        "%add_f32 (x: f32[], y: f32[]) -> f32[] {\n"
        "  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
        "  ROOT %sum = f32[] add(f32[] %x, f32[] %y)\n}\n\n"
        "%fused_reduce (param_0: f32[16,16]) -> f32[16] {\n"
        "  %param_0 = f32[16,16]{1,0} parameter(0)\n  %zero = f32[] constant(0)\n"
        "  ROOT %reduce.0 = f32[16]{0} reduce(f32[16,16]{1,0} %param_0, f32[] %zero), "
        "dimensions={0}, to_apply=%add_f32\n}\n\n"
        "ENTRY %main (p0: f32[16,16], p1: f32[16]) -> (f32[16,16], f32[16]) {\n"
        "  %p0 = f32[16,16]{1,0} parameter(0)\n  %p1 = f32[16]{0} parameter(1)\n"
        "  %broadcast.1 = f32[16,16]{1,0} broadcast(f32[16]{0} %p1), dimensions={1}\n"
        "  %add.2 = f32[16,16]{1,0} add(f32[16,16]{1,0} %p0, f32[16,16]{1,0} %broadcast.1)\n"
        "  %fusion.3 = f32[16]{0} fusion(f32[16,16]{1,0} %add.2), kind=kInput, "
        "calls=%fused_reduce\n"
        "  %multiply.4 = f32[16,16]{1,0} multiply(f32[16,16]{1,0} %add.2, f32[16,16]{1,0} "
        "%add.2)\n"
        "  ROOT %tuple.5 = (f32[16,16]{1,0}, f32[16]{0}) tuple(f32[16,16]{1,0} %multiply.4, "
        "f32[16]{0} %fusion.3)\n}\n";
    struct plan_opts o = {.strategies = "xla-spatial",
                          .xla_assignment = small,
                          .xla_assignment_len = sizeof(small) - 1};
    json_object *r = run(hlo, &o, NULL), *x = jget(r, "packing", "xla"), *names;

    (void)state;
    assert_string_equal(json_object_get_string(jget(x, "source", NULL)), "with-model");
    assert_int_equal(json_object_get_int64(jget(x, "values", NULL)), 7);
    assert_int_equal(json_object_get_int64(jget(x, "matched_values", NULL)), 4);
    assert_int_equal(json_object_get_int64(jget(x, "in_place_values", NULL)), 2);
    assert_int_equal(json_object_get_int64(jget(x, "unmatched_values", NULL)), 1);
    assert_int_equal(json_object_get_int64(jget(x, "unmatched_tensors", NULL)), 0);
    names = jget(x, "unmatched_value_names", NULL);
    assert_int_equal(json_object_array_length(names), 1);
    assert_string_equal(json_object_get_string(json_object_array_get_idx(names, 0)), "tuple.5");
    json_object_put(r);
    /* A model without in_place: none in place, as before. */
    r = run(small, &(struct plan_opts){.strategies = "xla-spatial"}, NULL);
    assert_int_equal(
        json_object_get_int64(jget(jget(r, "packing", "xla"), "in_place_values", NULL)), 0);
    json_object_put(r);
}

static void expect_plan_error(const char *input, const struct plan_opts *o, const char *where,
                              const char *msg)
{
    char *json = NULL;
    size_t len = 0;
    struct err e;

    assert_int_not_equal(plan_run(input, strlen(input), o, NULL, &json, &len, NULL, NULL, &e),
                         ERR_OK);
    assert_null(json);
    assert_string_equal(e.where, where);
    if (strstr(e.msg, msg) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", e.msg, msg);
}

static void test_bad_attachments_are_errors_naming_them(void **state)
{
    static const char model[] = "{\"tensors\": [{\"name\": \"a\", \"shape\": [4], \"dtype\": "
                                "\"f32\"}]}";
    struct plan_opts o = {.xla_assignment = "allocation 0: size 4:\nbad\n",
                          .xla_assignment_len = 26};

    (void)state;
    expect_plan_error(model, &o, "xla_assignment.line 2:1", "xla_assignment: line 2:1: expected");
    o = (struct plan_opts){.xla_report = "Total bytes used: 4 (4B)\n", .xla_report_len = 25};
    expect_plan_error(model, &o, "xla_report", "comes with its buffer assignment");
    o = (struct plan_opts){.xla_assignment = small, .xla_assignment_len = sizeof(small) - 1};
    expect_plan_error(small, &o, "xla_assignment", "the input is a buffer assignment already");
    expect_plan_error("Total bytes used: 4 (4B)\n", NULL, "", "holds XLA's totals only");
    expect_plan_error("allocation 0: size 4:\n value: <0 a @0> (size=8,offset=0): f32[2]\n", NULL,
                      "line 2:36", "does not fit in allocation 0");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_dump_parses_every_allocation),
        cmocka_unit_test(test_tuples_colors_and_no_ranges),
        cmocka_unit_test(test_older_printers_give_the_same_assignment),
        cmocka_unit_test(test_xla_history_examples_parse),
        cmocka_unit_test(test_errors_give_line_and_column),
        cmocka_unit_test(test_live_range_of_unallocated_value),
        cmocka_unit_test(test_report_totals_are_read_from_text_and_proto),
        cmocka_unit_test(test_standalone_dump_plans_one_tensor_per_value),
        cmocka_unit_test(test_attached_dump_matches_values_by_name),
        cmocka_unit_test(test_plan_in_place_values),
        cmocka_unit_test(test_bad_attachments_are_errors_naming_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
