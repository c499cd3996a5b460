/*
 * plan.h - the planner's front door: input bytes in, result JSON out.
 *
 * The CLI (`tpuplan plan`), the service's worker pool and the tests all call these two
 * functions. The input format is detected from content (a JSON model description, a
 * safetensors file or header, a MiniMalloc CSV, XLA's buffer assignment, HLO or StableHLO
 * text: import.h's table) unless opts->format names one. The result is the JSON document
 * described by static/schema/result.schema.json, which the service stores and the dashboard
 * draws.
 *
 * Thread-safe: no global state; every allocation is bounded by struct plan_limits. plan_run
 * may start threads of its own (greedy strategies side by side, the search strategies'),
 * all joined before it returns.
 */
#ifndef TPUPLAN_PLAN_H
#define TPUPLAN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/pack.h"

/* The planner's version (`tpuplan --version`) and the version of the result document it
 * writes (its schema_version: server/planner/RESULT.md). */
#define TPUPLAN_VERSION        "0.1.0"
#define TPUPLAN_SCHEMA_VERSION 1

/* Whether the simulated runtime allocator reserves its memory up front (JAX's GPU
 * preallocation) or grows region by region (XLA_PYTHON_CLIENT_PREALLOCATE=false). */
enum plan_prealloc { PLAN_PREALLOC_DEFAULT = 0, PLAN_PREALLOC_ON, PLAN_PREALLOC_OFF };

/* Whether the plan is replayed through the BFC allocator model (bfc.h), XLA's runtime
 * allocator on GPU: only when asked, since a TPU program's offsets are fixed at compile time
 * (server/planner/RESULT.md#the-runtime-replay). Unset: none, unless mem_fraction or
 * preallocate is given (they only mean something to the replay). */
enum plan_runtime_opt { PLAN_RUNTIME_DEFAULT = 0, PLAN_RUNTIME_NONE, PLAN_RUNTIME_BFC };

/* How a before-optimization program (StableHLO, HLO without fusions, tiles or a schedule) is
 * read (server/planner/RESULT.md#the-compile-estimate): as XLA will compile it, fused and
 * ordered by XLA's memory scheduler (the default), or as written (every value a buffer, the
 * text order, the written layouts). Either way the result shows both figures. */
enum plan_reading { PLAN_READING_DEFAULT = 0, PLAN_READING_COMPILER, PLAN_READING_WRITTEN };

/* The compiler reading's order: XLA's scheduler's choice (the default) or the text's. */
enum plan_order { PLAN_ORDER_DEFAULT = 0, PLAN_ORDER_SCHEDULER, PLAN_ORDER_TEXT };

/*
 * Every field overrides the model's own "options" (model.schema.json); 0 / NULL means
 * "use the model's value, else the default". Strings are borrowed for the call only. The
 * options' names, grammars and ranges are one table (plan_options.h): the CLI, the API and
 * the stored options set them through it, and plan_run holds a filled-in struct to the
 * same ranges (plan_opts_check).
 */
struct plan_opts {
    const char *format;     /* the input format, a name or alias import_find (import.h) knows:
                             * "json", "csv", "mlir", ...; NULL or "auto": detected */
    const char *chip;       /* NULL: the model's own chip, else chip_default() (CSV: none) */
    const char *strategies; /* NULL: "best" (every heuristic, plus exact up to 2000
                             * buffers); or "all", or a comma list (pack.h names) */
    uint64_t capacity;      /* 0: the chip's usable HBM (CSV inputs without a chip: none) */
    double time_limit_s;    /* search budget per strategy, (0, 3600] s; 0: 2 s */
    uint64_t alignment;     /* offset alignment in bytes, a power of two up to 2^30; 0: 512
                             * for models (an assumption, labelled in the result), 1 for CSV */
    const char *name;       /* overrides the model name; NULL: keep */
    /* The runtime allocator simulation (bfc.h; server/planner/RESULT.md#the-runtime-replay),
     * when runtime asks for it: the fraction of the capacity the allocator may hold, in (0, 1], 0:
     * 0.75; and whether it reserves it all up front. Both default to JAX's GPU defaults
     * (XLA_PYTHON_CLIENT_MEM_FRACTION, XLA_PYTHON_CLIENT_PREALLOCATE). */
    enum plan_runtime_opt runtime;
    double mem_fraction;
    enum plan_prealloc preallocate;
    /* The budget the plan is gated on (budget.h): bytes ("14G", "14GiB") or a fraction of
     * the capacity ("0.9"); NULL: none. Gives summary.budget_bytes and within_budget. */
    const char *budget;
    /* XLA's own buffer assignment of the same program (`*.buffer-assignment.txt`) and its
     * `*.memory-usage-report.txt`, both optional (NULL: none; the report needs an
     * assignment, attached or as the input). Borrowed for the call. Values are matched to
     * the model's tensors by name; the result's packing.xla compares XLA's layout with ours
     * (server/planner/RESULT.md#fields). */
    const char *xla_assignment;
    size_t xla_assignment_len;
    const char *xla_report;
    size_t xla_report_len;
    /* StableHLO's dynamic dims bound: "NAME=VALUE,.." (stablehlo_to_hlo_bound, stablehlo.h);
     * NULL: none. Borrowed for the call. */
    const char *bind;
    enum pack_goal goal; /* the search strategies' (pack.h): PACK_GOAL_MIN by default */
    /* Threads the plan may use, at most 64: 0, as the machine allows (the greedy passes and
     * the stages after packing two side by side, the search strategies one per core:
     * pack_opts); 1, every stage on the caller's thread. The result is the same either way. */
    unsigned threads;
    enum plan_reading reading;
    enum plan_order order;
};

struct plan_limits {
    size_t max_input_bytes; /* whole input */
    unsigned max_json_depth;
    size_t max_tensors;
    size_t max_ops;
    double max_time_limit_s; /* the search strategies' time limit, however it is set (the
                              * caller's options or the model's): ERR_LIMIT above; 0: the
                              * options table's range alone (plan_options.h) */
    size_t max_patterns;     /* a what-if's override patterns, in all (whatif.h) */
};

/* Defaults: 256 MiB input (a 1,000,000-tensor model is about 90 MB), depth 32, 1,000,000
 * tensors, 1,000,000 ops, the time limit as the options table allows, 256 what-if
 * patterns. The service caps the input at its --max-body, the tensors at its --max-tensors,
 * the time limit at its --max-time-limit and the patterns at its --max-patterns. */
void plan_limits_default(struct plan_limits *l);

/*
 * The plan's one verdict, composed from the HBM peak against the capacity, every Pallas
 * kernel's VMEM against its limit and the peak against the budget (the result's
 * summary.verdict words it: server/planner/RESULT.md#the-verdict). In order of precedence:
 * does not fit (HBM or a kernel's VMEM), over the budget, fits; "no capacity" when nothing
 * else fails but there is no capacity to check the peak against (a CSV without a chip).
 */
enum plan_fit {
    PLAN_FIT_FITS = 0,
    PLAN_FIT_NO_CAPACITY,
    PLAN_FIT_OVER_BUDGET,
    PLAN_FIT_DOES_NOT_FIT,
};

/* "fits", "no-capacity", "over-budget", "does-not-fit" (summary.verdict.status). */
const char *plan_fit_name(enum plan_fit f);

/* Summary columns the service stores for listing plans. */
struct plan_summary {
    char name[128];
    char chip[16];
    char source_format[24];
    size_t tensors;
    uint64_t logical_bytes;
    uint64_t padded_bytes;
    uint64_t peak_bytes;        /* 0 until packed (plan_validate) */
    uint64_t lower_bound_bytes; /* 0 until packed */
    uint64_t capacity_bytes;
    bool fits;
    bool has_budget;       /* plan_opts.budget was given */
    uint64_t budget_bytes; /* resolved against the capacity */
    bool within_budget;    /* peak <= budget (before packing: padded_bytes <= budget) */
    enum plan_fit verdict; /* fits and within_budget, with "no capacity" told apart */
    uint64_t host_bytes;   /* in host memory, apart from HBM (never in peak_bytes) */
};

/*
 * Parses and validates the input completely (format, every tensor, every layout, the
 * lifetimes, the strategy names) without packing: fast enough to run inside a request.
 * Fills *s (may be NULL); before packing s->fits is the conservative test "everything live
 * at once fits" (padded_bytes <= capacity), and peak/lower bound are 0.
 */
ERR_MUST_CHECK int plan_validate(const char *input, size_t len, const struct plan_opts *o,
                                 const struct plan_limits *l, struct plan_summary *s,
                                 struct err *e);

/*
 * The two small views of a result that the service stores beside it and the dashboard
 * reads instead of the whole document (server/planner/RESULT.md#views): summary is the
 * result without its tensors array, layout the tensors as columns. Both malloc'd and
 * NUL-terminated, owned by the caller until plan_views_free().
 */
struct plan_views {
    char *summary;
    size_t summary_len;
    char *layout;
    size_t layout_len;
};
void plan_views_free(struct plan_views *v);

/*
 * Full plan. On success *json is a malloc'd NUL-terminated document (caller frees) of
 * *json_len bytes (server/planner/RESULT.md), *views (may be NULL: not wanted) holds the
 * views, and *s (may be NULL) the summary, with fits = peak <= capacity. On failure *json
 * is NULL, *views empty, and *e names the input location. o and l may be NULL (defaults).
 */
ERR_MUST_CHECK int plan_run(const char *input, size_t len, const struct plan_opts *o,
                            const struct plan_limits *l, char **json, size_t *json_len,
                            struct plan_views *views, struct plan_summary *s, struct err *e);

/*
 * plan_run, with the result document streamed to sink->write in pieces (about 64 KiB) as
 * it is written, instead of one malloc'd buffer: a million-tensor result is hundreds of
 * megabytes. pretty lays it out as json-c's pretty printer does (what `tpuplan plan`
 * prints). write returns 0, or an ERR_* code that stops the plan with that code; on any
 * failure part of the document may already have been written. summary_only: *views gets
 * the summary view alone (layout stays NULL), all the CLI reads of them: a million-tensor
 * layout view costs seconds. sink is borrowed.
 */
struct plan_sink {
    int (*write)(void *ctx, const char *buf, size_t n);
    void *ctx;
    bool pretty;
    bool summary_only;
};
ERR_MUST_CHECK int plan_run_stream(const char *input, size_t len, const struct plan_opts *o,
                                   const struct plan_limits *l, const struct plan_sink *sink,
                                   struct plan_views *views, struct plan_summary *s, struct err *e);

/*
 * The packing problem of an input, for `tpuplan pack` on a model description: one buffer
 * per tensor (padded bytes rounded up to the alignment) with its lifetime, and its name.
 * out->bufs and out->names (and each name) are malloc'd and owned by *out until
 * plan_buffers_free(). For CSV inputs the sizes are used as given (no alignment).
 */
struct plan_buffers {
    size_t n;
    struct pack_buffer *bufs;
    char **names;
    uint64_t capacity;  /* the chip's usable HBM, or 0 for CSV inputs */
    uint64_t alignment; /* the alignment applied */
};

ERR_MUST_CHECK int plan_buffers(const char *input, size_t len, const struct plan_opts *o,
                                const struct plan_limits *l, struct plan_buffers *out,
                                struct err *e);
void plan_buffers_free(struct plan_buffers *b);

#endif
