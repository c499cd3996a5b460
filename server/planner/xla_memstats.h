/*
 * xla_memstats.h - XLA's compile-time memory figures as JAX and MaxText print them: one
 * program's totals, no buffers.
 *
 * - CompiledMemoryStats(...), what `print(compiled.memory_analysis())` writes: the printer is
 *   CompiledMemoryStats::DebugString (openxla/xla xla/pjrt/pjrt_client.cc), bound as
 *   Python's __str__ in jaxlib. `NAME=INT` fields separated by ", ": five until 2024-02
 *   (generated_code, argument, output, alias, temp, each `_size_in_bytes`), the five `host_*`
 *   ones after them since. Read in any order, any subset, over several lines (users reflow
 *   it, sometimes as `#` comments); -1 (a backend that does not fill a field) is absent.
 *   `peak_memory_in_bytes` is an attribute the printer leaves out; read when written.
 * - MaxText's line (AI-Hypercomputer/maxtext, max_utils.py): `Total memory size: 100.4 GB,
 *   Output size: 44.5 GB, Temp size: 55.9 GB, Argument size: 44.5 GB, Host temp size: 0.0
 *   GB.` (2025-06 to 2026-07), `Total estimated memory size: ..., estimated output size: ...`
 *   since; GB there is 2^30 bytes printed with one decimal. The older `Argument size: N,
 *   output size: N, temp size: N, host temp size: N, in bytes.` (2024-10 to 2025-06) too.
 *
 * Pure; errors are "line L:C: expected ..." with where "line L:C".
 */
#ifndef TPUPLAN_XLA_MEMSTATS_H
#define TPUPLAN_XLA_MEMSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

enum xla_memstats_field {
    XLA_MS_GENERATED_CODE,
    XLA_MS_ARGUMENT,
    XLA_MS_OUTPUT,
    XLA_MS_ALIAS,
    XLA_MS_TEMP,
    XLA_MS_HOST_GENERATED_CODE,
    XLA_MS_HOST_ARGUMENT,
    XLA_MS_HOST_OUTPUT,
    XLA_MS_HOST_ALIAS,
    XLA_MS_HOST_TEMP,
    XLA_MS_PEAK,  /* peak_memory_in_bytes, when a user prints it */
    XLA_MS_TOTAL, /* MaxText's total: output + temp + argument - alias */
    XLA_MS_COUNT
};

enum xla_memstats_form {
    XLA_MS_COMPILED, /* CompiledMemoryStats(...) */
    XLA_MS_MAXTEXT,  /* MaxText's GB line (or its older byte line) */
};

struct xla_memstats {
    enum xla_memstats_form form;
    bool have[XLA_MS_COUNT];
    uint64_t bytes[XLA_MS_COUNT];
    uint64_t precision; /* the printed figures are within this many bytes of the truth: 0
                         * for byte counts, 2^30 / 20 for MaxText's one-decimal GB */
    size_t line;        /* where the figures start */
};

/* The field's name in the result: XLA's ("temp_size_in_bytes"); "total_size_in_bytes" for
 * MaxText's total. */
const char *xla_memstats_field_name(enum xla_memstats_field f);

/* True when text holds "CompiledMemoryStats(" or a MaxText memory line. */
bool xla_memstats_detect(const char *text, size_t len);

/* The first such figures in text[0..len). ERR_INVALID (line L:C) when malformed or absent. */
ERR_MUST_CHECK int xla_memstats_parse(const char *text, size_t len, struct xla_memstats *out,
                                      struct err *e);

#endif
