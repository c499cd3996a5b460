/*
 * xla_assign.h - XLA's own buffer assignment, read from the text files an XLA compile dumps
 * with --xla_dump_to: `*.buffer-assignment.txt` and `*.memory-usage-report.txt`.
 *
 * The grammar is the printer's, openxla/xla (cited per line below; the files are
 * BufferAssignment::ToString(), "\n\n", then HloLiveRange::ToString(), written by
 * DumpHloModuleImpl in xla/service/dump.cc):
 *
 *   BufferAssignment:                                  BufferAssignment::ToString
 *   allocation 0: size 1024, parameter 0, shape |f32[16,16]| at ShapeIndex {}:
 *    value: <0 p0 @0> (size=1024,offset=0): f32[16,16]{1,0}
 *   allocation 1: size 64, output shape is |(f32[4], f32[8])|, maybe-live-out:
 *    value: <5 tuple.3{} @0> (size=16,offset=0): (f32[4]{0}, f32[8]{0})
 *   ...                                                BufferAllocation::ToString
 *
 *   Total bytes used: 1104 (1.08KiB)
 *
 *   Used values:                                       HloValue::ToString, each value
 *   <0 p0 @0>                                          (read past)
 *    positions: ...
 *
 *   HloLiveRange (max 7):                              HloLiveRange::ToString
 *     InstructionSequence:
 *       0:p0
 *     BufferLiveRange:
 *       p0{}:0-7                                       [start, end], both inclusive
 *     Live ranges at 3 (peak):
 *       p0: 1024 bytes
 *
 * An allocation line is `allocation N: size S` then, in this order and each optional,
 * `, color C`, `, parameter P, shape |SHAPE| at ShapeIndex {I}`, `, output shape is |SHAPE|`,
 * `, constant`, `, thread-local`, `, maybe-live-out`, `, preallocated-temp`, and `:`
 * (BufferAllocation::ToShortString). A value is HloValue::ToShortString:
 * `<ID NAME[INDEX][ (phi)][ @COLOR]>`, INDEX a ShapeIndex (`{}`, `{1}`, `{0,2}`) printed only
 * when the instruction's shape is a tuple, and @COLOR the memory space (not a tuple index).
 *
 * The older printers' forms are read too (openxla/xla history of buffer_assignment.cc):
 * - until 2022-09 (d35412bdbd) the allocation's address followed its index:
 *   `allocation 0: 0x7fb2bfd3ac00, size 2147483648, ...`;
 * - until 2019-12 (cba0905e36) no shapes: `, parameter 0 at ShapeIndex {}` and no
 *   `output shape is`; xla/tools/driver.cc's example writes the shapes without the pipes
 *   (`, shape f32[256,32] at ShapeIndex {}`, `, output shape is f32[32]`), also read;
 * - until 2019-09 (4ef42a940e) a value took several lines, HloValue::ToString then its place:
 *   `  <5 custom-call.10{0} @0>, positions:`, `  POSITION` lines, ` uses:`, `  USE` lines,
 *   ` [OFFSET,SIZE]: SHAPE`; and there was no "Used values:" part;
 * - "Total bytes used: N" came in 2019-10 (062db392c2), its " (4.14KiB)" in 2021-08, the
 *   HloLiveRange part in 2021-04 (027c7fdfcd): each is optional.
 *
 * Names follow the model contract every importer shares: a value is the model tensor named
 * by its instruction, `NAME` for an array-shaped instruction and for a tuple's own top-level
 * buffer (`NAME{}`), `NAME{i}` / `NAME{i,j}` for element i (nested i, j) of a tuple result.
 *
 * The memory-usage report is BufferAssignment::MemoryUsageReport: the text form starts
 * `Total bytes used: N (H)`; newer XLA prints MemoryUsageReportProto::DebugString, with one
 * `memory_space_allocation_entries { total_bytes: N memory_space_color: C ... }` block per
 * memory space. Only the totals are read.
 *
 * Pure and bounded: every count is limited by the caller, every size is checked 64-bit
 * arithmetic, and errors give `line L:C` (1-based line and column) and what was expected.
 */
#ifndef TPUPLAN_XLA_ASSIGN_H
#define TPUPLAN_XLA_ASSIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

#define XLA_LINE_MAX (4u << 20) /* bytes in one line ("from instruction:" lines are long) */

enum xla_alloc_flag {
    XLA_ALLOC_PARAMETER = 1u << 0,
    XLA_ALLOC_OUTPUT = 1u << 1, /* "output shape is |...|": holds the entry ROOT */
    XLA_ALLOC_CONSTANT = 1u << 2,
    XLA_ALLOC_THREAD_LOCAL = 1u << 3,
    XLA_ALLOC_LIVE_OUT = 1u << 4, /* maybe-live-out */
    XLA_ALLOC_TEMP = 1u << 5,     /* preallocated-temp */
};

struct xla_alloc {
    int64_t index;       /* as printed */
    uint64_t size;       /* bytes */
    int64_t color;       /* memory space; 0 when not printed */
    int64_t parameter;   /* entry parameter number, -1 when none */
    unsigned flags;      /* enum xla_alloc_flag */
    uint64_t base;       /* where the allocation starts when all are laid end to end in file
                          * order (the sum of the sizes before it) */
    size_t first, count; /* its values: values[first .. first + count) */
    size_t line;
};

struct xla_value {
    int64_t id;
    const char *key;    /* NAME{INDEX}, the index always written ("p0{}"), in the strings
                         * buffer; the HloLiveRange key */
    size_t name_len;    /* key[0..name_len) is the model tensor name (the contract above) */
    size_t alloc;       /* index into allocs */
    uint64_t size;      /* bytes */
    uint64_t offset;    /* within its allocation */
    int64_t color;      /* memory space; 0 when not printed */
    bool live_given;    /* the HloLiveRange section names it */
    int64_t live_start; /* [live_start, live_end) in schedule steps when live_given */
    int64_t live_end;
    size_t line;
    size_t key_at; /* the key's offset in strings (the parser's, while strings grows) */
};

struct xla_assign {
    size_t nallocs;
    struct xla_alloc *allocs; /* malloc'd, owned */
    size_t nvalues;
    struct xla_value *values; /* malloc'd, owned, in file order */
    char *strings;            /* malloc'd, owned: every value's key */
    uint64_t total_bytes;     /* the sum of the allocation sizes (checked) */
    bool have_total_line;     /* "Total bytes used: N" was read; it equals total_bytes */
    bool have_live_ranges;    /* an HloLiveRange section was read */
    int64_t schedule_end;     /* its "max": the last step; 0 without live ranges */
    size_t live_unknown;      /* BufferLiveRange lines naming no value of an allocation */
    char ignored[128];        /* allocation attributes read past, "" when none */
};

/* True when text is a buffer assignment: its first non-blank line is "BufferAssignment:",
 * or is an allocation line ("allocation 0: size ...", "allocation 0: 0x7f32.., size ..."). */
bool xla_assign_detect(const char *text, size_t len);

/*
 * Parses len bytes of text (need not be NUL-terminated) into *out: at most max_values values
 * and as many allocations (ERR_LIMIT beyond). Checks what XLA guarantees: allocation indices
 * unique, every value inside its allocation (offset + size <= size), value ids and keys
 * unique, totals that fit in 64 bits, and a "Total bytes used" line (when present) that
 * equals the sum. On failure *out is left empty (nothing to free).
 */
ERR_MUST_CHECK int xla_assign_parse(const char *text, size_t len, size_t max_values,
                                    struct xla_assign *out, struct err *e);
void xla_assign_free(struct xla_assign *a);

#define XLA_REPORT_SPACES_MAX 16 /* memory spaces listed; more are summed, not listed */

struct xla_report {
    bool proto;           /* MemoryUsageReportProto form (else the text form) */
    uint64_t total_bytes; /* all memory spaces together */
    size_t nspaces;
    struct {
        int64_t color;
        uint64_t total_bytes;
    } spaces[XLA_REPORT_SPACES_MAX]; /* proto form: one per memory space block */
};

/* True when text is a memory-usage report (either form). */
bool xla_report_detect(const char *text, size_t len);

/* Reads a report's totals. ERR_INVALID (with line L:C) when it has none. */
ERR_MUST_CHECK int xla_report_parse(const char *text, size_t len, struct xla_report *out,
                                    struct err *e);

#endif
