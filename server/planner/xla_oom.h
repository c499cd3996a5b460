/*
 * xla_oom.h - XLA:TPU's out-of-memory report, as users paste it from a failed compile.
 *
 * The printer is in the closed TPU compiler (libtpu), not in openxla/xla: no grammar can be
 * cited for it. The one here is inferred from real pastes in public issues (listed with the
 * tests, server/planner/INPUT.md#xlas-out-of-memory-report); openxla/xla's
 * docs/errors/error_1000.md and error_1001.md show only the first lines. The headers (the
 * form each is read as in parentheses):
 *
 *   [prefix] ... [E1000: CompileTimeHbmOom: ] ... Ran out of memory in memory space hbm.
 *     Used 30.21G of 15.48G hbm. Exceeded hbm capacity by 14.73G.               (CAPACITY)
 *     (2019 also printed "... space vmem. Please file a bug against XLA.", no figures)
 *   ... Ran out of memory in memory space vmem while allocating on stack for %k = ...
 *     [Scoped allocation with size 31.07M and limit 16.00M exceeded scoped vmem limit by
 *     15.07M.]                                                             (STACK, E1001)
 *   ... Aborting compilation early because it's unlikely to have enough memory.
 *     Requires 3.84T, has 90.96G available.                                     (EARLY)
 *   ... Allocation (size=134217728) would exceed memory (size=67108864) :: #allocation25
 *     [shape = 'u8[134217728]{0}', space=vmem, size = 0x8000000, tag = 'T'] :: NAME
 *                                                                     (ALLOCATION, E1001)
 *   ... TPU TensorCore Hbm usage: 34.82G, SparseCore Hbm usage 174.10G, exceeding
 *     available bytes: 95.74G                                              (SPARSECORE)
 *
 * then, each part optional and in this order:
 *
 *   Total hbm usage >= 30.73G:                        usage: reserved, program, arguments
 *       reserved        530.00M                       ("unknown size" for arguments in 2019)
 *       program          14.31G
 *       arguments        15.90G [(99.9% utilization)]
 *   Output size 1.0K; shares 0B with arguments.       or "Output size unknown."
 *   Program hbm requirement 14.31G:                   reserved, global, scoped, HLO temp
 *       HLO temp 14.31G (100.0% utilization: Unpadded (14.25G) Padded (14.25G),
 *                        0.4% fragmentation (62.60M))
 *     Largest program allocations in hbm:
 *     1. Size: 1.46G
 *        Operator: op_name="..." source_file="..." source_line=3     (each line optional
 *        Shape: bf16[256000,3072]{1,0:T(8,128)(2,1)}                  but Size)
 *        Unpadded size: 1.46G
 *        Extra memory due to padding: 1.50M (1.0x expansion)
 *        XLA label: convert.15982 = convert(param.72)
 *        Allocation type: HLO temp
 *        ==========================
 *
 * Sizes are binary with a bare suffix: `0B`, `420.0K`, `530.00M`, `21.95G`, `3.47E`
 * (TSL's HumanReadableNumBytes without "iB": layout_format_bytes prints them).
 *
 * What a paste adds is read past: a log prefix on every line (glog `E1111 07:35:00.272763
 * 1404 file.cc:81] `, TensorFlow's `2020-05-04 09:05:40.719758: E 1578 file.cc:76] `,
 * vLLM's `(EngineCore pid=1) ERROR 06-03 07:41:11 [core.py:1184] `, a `# ` comment), any
 * indentation, the traceback before the report, and whatever follows it (the first line
 * that is no part of it ends the report). The second half of the header may be on the
 * next line. An entry cut off by the end of the paste (or a "..." line) is kept, marked.
 *
 * Pure and bounded: at most max_allocs entries (ERR_LIMIT beyond), checked arithmetic, and
 * every error is "line L:C: expected ..." with where "line L:C" (column in bytes, the log
 * prefix included).
 */
#ifndef TPUPLAN_XLA_OOM_H
#define TPUPLAN_XLA_OOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

#define XLA_OOM_TEXT_MAX 24 /* a size as printed, NUL included ("1023.99E" fits) */
#define XLA_OOM_WORD_MAX 48 /* a memory space, an error name */

/* A size as the report prints it; absent when text is "". bytes is the printed value in
 * bytes, rounded (the printer truncates, so the true size is within a unit of the last
 * digit). */
struct xla_oom_size {
    uint64_t bytes;
    char text[XLA_OOM_TEXT_MAX];
};

enum xla_oom_form {
    XLA_OOM_CAPACITY,   /* "Used U of C space. Exceeded space capacity by X." */
    XLA_OOM_STACK,      /* "while allocating on stack for ..." (E1001) */
    XLA_OOM_EARLY,      /* "Aborting compilation early ... Requires R, has H available." */
    XLA_OOM_ALLOCATION, /* "Allocation (size=N) would exceed memory (size=M)" (E1001) */
    XLA_OOM_LIST,       /* no header line: the paste starts at the usage, program or list */
    XLA_OOM_SPARSECORE, /* the TensorCore's and the SparseCores' usage (E1000) */
};

struct xla_oom_alloc {
    int64_t rank; /* the list's number */
    struct xla_oom_size size, unpadded, extra;
    char expansion[XLA_OOM_TEXT_MAX]; /* "32.0" of "(32.0x expansion)"; "" */
    /* In the report's strings (NULL when the entry has no such line): */
    const char *shape;       /* as printed, layout and all */
    const char *op_type;     /* of the Operator line */
    const char *op_name;     /* of the Operator line, \" and \\ unescaped */
    const char *source_file; /* of the Operator line */
    int64_t source_line;     /* -1 when none */
    const char *label;       /* the XLA label line, as printed (may end "...") */
    const char *name;        /* the instruction it names, without '%' ("convert.15982") */
    const char *type;        /* "HLO temp", "scoped", ... */
    bool cut;                /* the paste ends (or says "...") before the entry's "=====" */
    size_t line;             /* of its "N. Size:" line */
};

struct xla_oom {
    enum xla_oom_form form;
    int code;                         /* 1000 for "E1000:", 0 when not printed */
    char code_name[XLA_OOM_WORD_MAX]; /* "CompileTimeHbmOom"; "" */
    char space[XLA_OOM_WORD_MAX];     /* "hbm", "vmem", "smem"; "hbm" for EARLY */
    /* CAPACITY: used, capacity, exceeded. STACK: the scoped allocation's size, limit and
     * excess when printed. EARLY: used = required, capacity = available. ALLOCATION:
     * used = the allocation, capacity = the memory, exceeded their difference. */
    struct xla_oom_size used, capacity, exceeded;
    struct xla_oom_size tensorcore, sparsecore; /* SPARSECORE: the two usages (used: both) */
    const char *stack_for; /* STACK: what was being allocated ("%k = bf16[...] ..."); NULL */
    struct xla_oom_size total, reserved, program, arguments; /* Total ... usage >= */
    bool arguments_unknown;                                  /* "arguments unknown size" */
    struct xla_oom_size output, output_shared;               /* Output size ...; shares ... */
    bool output_unknown;                                     /* "Output size unknown." */
    struct xla_oom_size requirement, program_reserved, global, scoped, temp;
    struct xla_oom_size temp_unpadded, temp_padded, fragmentation; /* HLO temp's (...) */
    char temp_utilization[XLA_OOM_TEXT_MAX];                       /* "100.0" (percent); "" */
    size_t nallocs;
    struct xla_oom_alloc *allocs; /* malloc'd, owned, in the report's order */
    char *strings;                /* malloc'd, owned: every string the entries point at */
    size_t cut;                   /* entries marked cut */
    size_t header_line;           /* the first line of the report */
};

/* True when text holds an out-of-memory report: a header's marker ("Ran out of memory in
 * memory space ", "Aborting compilation early because", "Allocation (size=", "TensorCore Hbm
 * usage: "), a "Largest program allocations in " list, or entries of one ("N. Size: " and
 * "Unpadded size: "). */
bool xla_oom_detect(const char *text, size_t len);

/* Parses text[0..len) (need not be NUL-terminated) into *out. ERR_INVALID with "line L:C"
 * for a malformed line of the report or when there is none, ERR_LIMIT past max_allocs
 * entries. On failure *out is left empty (nothing to free). */
ERR_MUST_CHECK int xla_oom_parse(const char *text, size_t len, size_t max_allocs,
                                 struct xla_oom *out, struct err *e);
void xla_oom_free(struct xla_oom *r);

/* "out-of-memory", "stack", "early-abort", "allocation", "list", "sparsecore": the result's
 * form. */
const char *xla_oom_form_name(enum xla_oom_form f);

/* Whether bytes prints as s->text does (layout_format_bytes): how an allocation's sizes
 * are checked against ours. False when s is absent. */
bool xla_oom_size_matches(const struct xla_oom_size *s, uint64_t bytes);

#endif
