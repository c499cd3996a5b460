/*
 * plan_int.h - what the planner's front door shares between its modules, private to
 * server/planner (plan.h is the public contract):
 *
 *   plan.c            preparation (the input imported through import.h, options, the
 *                     packing problem, the strategy list) and plan_run, which calls the
 *                     others
 *   plan_portfolio.c  runs the chosen strategies and keeps the best packing
 *   plan_result.c     the result document (server/planner/RESULT.md), section by section
 *   plan_views.c      the summary and layout views (server/planner/RESULT.md#views)
 *   plan_runtime.c    the runtime allocator replay (bfc.h) and its part of the result
 *   plan_report.c     XLA's own reports beside the plan (packing.xla_report)
 *   plan_series.c     the number writers the result's sections share
 *   plan_xla.c        XLA's own buffer assignment beside the plan (packing.xla)
 *   plan_advice.c     what to change when it does not fit: changes planned for real
 *
 * Data flows one way: plan.c fills a plan_ctx, the portfolio a plan_packing, and the
 * writers only read both.
 */
#ifndef TPUPLAN_PLAN_INT_H
#define TPUPLAN_PLAN_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/bfc.h"
#include "planner/chip.h"
#include "planner/err.h"
#include "planner/kernel.h"
#include "planner/model.h"
#include "planner/pack.h"
#include "planner/peak.h"
#include "planner/plan.h"
#include "planner/suggest.h"
#include "planner/xla_assign.h"
#include "planner/xla_memstats.h"
#include "planner/xla_oom.h"

#define PLAN_MAX_STRATEGIES 16

/* XLA's buffer assignment of the plan (plan_xla.c): the input itself (standalone) or
 * attached to it (plan_opts.xla_assignment), matched to the model's tensors by name. */
struct plan_xla {
    bool have;       /* an assignment: the input, or attached */
    bool standalone; /* the input is the assignment: tensor i is value i */
    struct xla_assign a;
    bool have_report; /* a memory-usage report came with it */
    struct xla_report r;
    int64_t *tensor_value; /* per tensor: its value in a, or -1; malloc'd */
    size_t matched;        /* tensors with a value */
    bool *in_place;        /* per value: not matched by its own name, but named in a tensor's
                            * in_place (our model writes it into that tensor's buffer);
                            * malloc'd, NULL when no tensor has in_place */
    size_t nin_place;      /* values marked in in_place */
};

/* XLA's own report beside the plan (plan_report.c; packing.xla_report): an out-of-memory
 * report (the input itself, standalone: tensor i is its allocation i; or attached,
 * plan_opts.xla_report, its allocations matched to tensors by name), or XLA's memory figures
 * (CompiledMemoryStats, MaxText's line; attached). */
struct plan_report {
    bool have_oom;
    bool standalone;
    struct xla_oom oom; /* released by plan_report_free */
    bool have_stats;
    struct xla_memstats ms;
};

/* The first kernel over its VMEM limit (plan_kernels_check): its index in the kernel set,
 * what it needs (VMEM plus margin) and the limit it is over (the smaller of its limit and
 * physical VMEM). */
struct plan_kernel_over {
    size_t kernel;
    uint64_t need, limit;
};

/* A prepared plan: the model, its options settled, totals, the packing problem. */
struct plan_ctx {
    struct model m;
    const struct chip *chip; /* NULL only for CSV inputs without --chip */
    uint64_t capacity;       /* 0 = none */
    bool capacity_from_chip;
    uint64_t alignment;
    bool alignment_default;
    double time_limit_s;
    bool time_limit_given; /* by the caller or the model: kept; else budgeted by size */
    enum pack_goal goal;
    char name[128];
    bool runtime_bfc;    /* the runtime simulation was asked for (plan_opts.runtime) */
    double mem_fraction; /* runtime simulation: share of the capacity, (0, 1] */
    bool preallocate;
    bool runtime_defaults; /* both are JAX's GPU defaults */
    bool program;          /* the input is a compiled program (import.h) */
    bool has_budget;       /* plan_opts.budget given: budget_bytes resolved (budget.h) */
    uint64_t budget_bytes;
    size_t nstrategies;
    char strategies[PLAN_MAX_STRATEGIES][32];
    bool best_only;   /* "best" asked for: search strategies may stop at the lower bound */
    unsigned threads; /* plan_opts.threads: 1 keeps every stage on the caller's thread */
    /* totals */
    uint64_t logical, padded;
    size_t count[TENSOR_KIND_COUNT];
    uint64_t kind_logical[TENSOR_KIND_COUNT], kind_padded[TENSOR_KIND_COUNT];
    size_t assumed_layouts;
    /* packing problem: only tensors with bytes > 0 */
    size_t nbufs;
    struct pack_buffer *bufs; /* malloc'd */
    uint32_t *buf_tensor;     /* pack id -> tensor id, malloc'd */
    /* Pallas kernels (plan_kernels.c): the parsed set, how many do not fit, and one
     * scratch row per operand of the largest kernel, for the writers (malloc'd). */
    struct kernel_set ks;
    size_t kernels_over;
    struct plan_kernel_over kernel_over; /* the first, when kernels_over > 0 */
    struct kernel_operand_plan *kops;
    struct plan_xla xla;       /* released by plan_xla_free */
    struct plan_report report; /* released by plan_report_free */
};

/* One strategy's run: runs[k] belongs to ctx->strategies[k]. */
struct plan_strat_run {
    struct pack_result r; /* r.offsets owned (plan_portfolio_free) */
    int rc;
    bool ran; /* run ahead of the main loop (the greedy passes) */
    char error[ERR_MSG_MAX];
};

/* The runtime allocator replay of the plan's buffers (plan_runtime.c). */
struct plan_runtime {
    bool ran; /* false: no capacity to take a fraction of, or no buffers */
    struct bfc_opts o;
    struct bfc_replay r; /* owned (plan_runtime_free) */
    double seconds;
};

/* The advice (plan_advice.c; server/planner/RESULT.md#advice): candidate changes, each a
 * what-if of the model (whatif.h) made of pieces. */
#define PLAN_ADVICE_MAX_ITEMS   12
#define PLAN_ADVICE_MAX_FRAGS   8
#define PLAN_ADVICE_MAX_REPLANS 24
#define PLAN_ADVICE_MAX_WORK    400000 /* tensors planned in all: re-plans x the model's */
#define PLAN_ADVICE_NAME        192
enum plan_frag_key {
    PLAN_FRAG_REMAT,
    PLAN_FRAG_DTYPE,
    PLAN_FRAG_SHARDING,
    PLAN_FRAG_CHIP,
    PLAN_FRAG_MESH,   /* name: the axis, text: its size */
    PLAN_FRAG_RECIPE, /* name: a recipe field's path, text: its value as recipe_set reads it */
    PLAN_FRAG_SHAPE,  /* name: a tensor, text: the XLA shape it is stored as */
    PLAN_FRAG_SPACE,  /* name: a pattern, text: the memory space ("host") */
    PLAN_FRAG_KEYS
};
enum plan_cost {
    PLAN_COST_NONE,
    PLAN_COST_RECOMPUTE,     /* cost_bytes: the activations made again */
    PLAN_COST_PRECISION,     /* numerics only */
    PLAN_COST_COMMUNICATION, /* cost_bytes: gathered per step per device */
    PLAN_COST_CHIPS,         /* another chip, or more of them */
    PLAN_COST_HOST,          /* cost_bytes: host memory traffic a step (an offload) */
    PLAN_COST_STEPS,         /* more passes a step (gradient accumulation), fewer examples */
    PLAN_COST_RESHAPE,       /* the program reshapes the tensor (a layout fix) */
};
struct plan_advice_frag {
    enum plan_frag_key key;
    char name[PLAN_ADVICE_NAME]; /* remat: the pattern; dtype: the pattern; sharding: a tensor */
    char text[128]; /* dtype: the dtype; sharding: the tensor's sharding as the what-if's JSON
                     * array (one entry per dim); chip: its name; recipe: the value */
};
struct plan_advice_item {
    char kind[16]; /* "remat", "offload", "precision", "sharding", "microbatch", "logits",
                    * "layout", "mesh", "chip" */
    char change[256];
    struct plan_advice_frag frags[PLAN_ADVICE_MAX_FRAGS];
    size_t nfrags;
    enum plan_cost cost;
    uint64_t cost_bytes;      /* 0: not known */
    uint64_t recompute_flops; /* when flops_known (a model description has no FLOPs) */
    bool flops_known;
    double flops_fraction; /* recompute_flops of the step's FLOPs; < 0: not known */
    char note[200];        /* how the cost was found, or why it is not known; "" none */
    bool planned;          /* false: the change could not be made (error) or was not planned */
    char error[ERR_MSG_MAX];
    uint64_t peak_after, host_after; /* host_after: the changed plan's bytes in host memory */
    bool fits_after, within_budget_after, good_after; /* good: fits and within budget */
};
struct plan_advice {
    bool given; /* the plan does not fit, is over budget or within 10 % of either */
    char reason[64];
    char unavailable[160]; /* why no change could be planned; "" when they were */
    uint64_t peak;
    const struct chip *chip; /* the plan's (the chip table's), NULL without one */
    char strategies[256];    /* the re-plans' */
    size_t n;                /* items made */
    struct plan_advice_item items[PLAN_ADVICE_MAX_ITEMS];
    size_t nranked, ranked[PLAN_ADVICE_MAX_ITEMS]; /* the planned ones, best first */
    size_t ncombo, combo[PLAN_ADVICE_MAX_ITEMS];   /* items[] indices, in the order added */
    uint64_t combo_peak;
    bool combo_good;
    size_t replans, max_replans;
    bool out_of_replans;
};

struct plan_packing {
    struct pack_problem p; /* borrows ctx->bufs */
    struct plan_strat_run runs[PLAN_MAX_STRATEGIES];
    int chosen; /* index into runs, -1 when nothing was packed */
    uint64_t lb;
    struct pack_metrics mt; /* of the chosen packing, when have_metrics */
    bool have_metrics;
    struct plan_runtime rt;   /* filled by plan_runtime_run after the portfolio */
    struct peak_explain peak; /* the chosen packing's peak, when have_peak (plan_peak_run) */
    bool have_peak;
    struct plan_advice *advice; /* malloc'd by plan.c's run(); NULL: none asked */
};

/* The chosen packing, or NULL when nothing was packed (no buffers). */
static inline const struct pack_result *plan_chosen(const struct plan_packing *pk)
{
    return pk->chosen >= 0 ? &pk->runs[pk->chosen].r : NULL;
}

/*
 * plan_portfolio.c: runs c's strategies on its packing problem into *pk (zeroed first) and
 * chooses the lowest peak. May drop search strategies from c->strategies (with a warning)
 * once a packing reaches the lower bound under "best". *pk is released with
 * plan_portfolio_free(pk, c->nstrategies) whatever this returns.
 */
ERR_MUST_CHECK int plan_portfolio_run(struct plan_ctx *c, struct plan_packing *pk, struct err *e);
void plan_portfolio_free(struct plan_packing *pk, size_t nruns);

/* The chosen packing (if any) checked independently (pack_check: ERR_INTERNAL when it
 * fails), and measured into pk->mt (pack_metrics_compute; sets have_metrics). Each reads
 * only pk->p and the chosen offsets, so plan.c runs them beside the other stages. */
ERR_MUST_CHECK int plan_portfolio_check(struct plan_packing *pk, struct err *e);
ERR_MUST_CHECK int plan_portfolio_metrics(struct plan_packing *pk, struct err *e);

/*
 * A stage run beside the caller's own work: on a second thread when plan_side_start is
 * told threaded and one starts, else on the caller's thread inside plan_side_join. Only
 * stages that share nothing writable with what the caller does meanwhile are run this way,
 * so a plan's result never depends on which (test_plan checks it with plan_opts.threads).
 * plan_side_join returns fn's code, its error copied into *e (e may be NULL); a side that
 * was never started joins as ERR_OK. Zero-initialise a plan_side before either call.
 */
struct plan_side {
    int (*fn)(void *arg, struct err *e); /* NULL: nothing to join */
    void *arg;                           /* borrowed */
    int rc;
    struct err e;
    bool started; /* on its own thread */
    pthread_t tid;
};
void plan_side_start(struct plan_side *s, int (*fn)(void *arg, struct err *e), void *arg,
                     bool threaded);
ERR_MUST_CHECK int plan_side_join(struct plan_side *s, struct err *e);

/* Whether a second thread pays for c: more than one core, buffers enough that a stage
 * costs more than starting a thread, and plan_opts.threads not 1. */
bool plan_side_worth(const struct plan_ctx *c);

/*
 * plan_result.c: the result document, malloc'd into *json (caller frees), at most
 * max_bytes (ERR_LIMIT beyond); or, when sink is not NULL, streamed to it (*json NULL,
 * *json_len the length written, max_bytes unused). Without the tensors array it is the
 * summary view.
 *
 * plan_result_write is plan_result_begin then plan_result_end. The head (schema_version,
 * model, chip, summary and tensors) needs only the chosen packing's offsets and peak; the
 * rest (suggestions, kernels, packing, warnings) needs pk->mt and pk->rt too, so plan_run
 * writes the head while the metrics are computed beside it. *w is the writer in between:
 * plan_result_end finishes (or discards) it whatever happens.
 */
struct plan_sink;
struct jsonw;
ERR_MUST_CHECK int plan_result_write(const struct plan_ctx *c, const struct plan_packing *pk,
                                     const struct suggest_fix *sg, size_t nsg, bool with_tensors,
                                     const struct plan_sink *sink, size_t max_bytes, char **json,
                                     size_t *json_len, struct err *e);
void plan_result_begin(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk,
                       bool with_tensors, const struct plan_sink *sink, size_t max_bytes);
ERR_MUST_CHECK int plan_result_end(struct jsonw *w, const struct plan_ctx *c,
                                   const struct plan_packing *pk, const struct suggest_fix *sg,
                                   size_t nsg, const struct plan_sink *sink, size_t max_bytes,
                                   char **json, size_t *json_len, struct err *e);

/* The offset of tensor i, walking the tensors in order with *b the next packed buffer
 * (start at 0): tensors with no bytes are not packed and sit at 0. offsets may be NULL. */
uint64_t plan_tensor_offset(const struct plan_ctx *c, const uint64_t *offsets, size_t i, size_t *b);

#define PLAN_TIMELINE_MAX 4096 /* timeline points; longer programs are downsampled */

/* plan_series.c: series of the timeline's length n, written as packing.timeline writes its
 * own: "step" holds the first step of each point, and beyond PLAN_TIMELINE_MAX points each
 * point of a series is the maximum of a group of them. */
void plan_write_steps(struct jsonw *w, const int64_t *steps, size_t n);
void plan_write_series(struct jsonw *w, const char *key, const uint64_t *v, size_t n);
void plan_write_series_double(struct jsonw *w, const char *key, const double *v, size_t n);

/* A packing's peak against the lower bound, what is lost to fragmentation: peak_bytes,
 * lower_bound_bytes, fragmentation_bytes, fragmentation. */
void plan_write_peak_figures(struct jsonw *w, uint64_t peak, uint64_t lb);

/*
 * plan_runtime.c: replays the plan's buffers (their padded sizes, before the packing's
 * alignment) through the BFC model into pk->rt, when the plan has a capacity and buffers.
 * pk->rt is released with plan_runtime_free whatever this returns.
 */
ERR_MUST_CHECK int plan_runtime_run(const struct plan_ctx *c, struct plan_packing *pk,
                                    struct err *e);
void plan_runtime_free(struct plan_runtime *rt);

/* packing.runtime (null when it did not run), with the figures of its "bfc-runtime"
 * comparison row. */
void plan_runtime_write(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk);

/*
 * plan_advice.c: when c with this peak does not fit, is over its budget or within 10 % of
 * either, candidate changes of input (a JSON model) planned for real with o's options
 * (plan_measure), ranked, and the smallest set that fits, into *a; at most
 * PLAN_ADVICE_MAX_REPLANS plans. A change that cannot be made is left out, never an error.
 * plan_advice_write writes the result's "advice" section (null when none is given).
 */
ERR_MUST_CHECK int plan_advice_run(const struct plan_ctx *c, uint64_t peak, const char *input,
                                   size_t len, const struct plan_opts *o,
                                   const struct plan_limits *lim, struct plan_advice *a,
                                   struct err *e);
void plan_advice_write(struct jsonw *w, const struct plan_advice *a);

/* plan.c: c's bytes in host memory, apart from HBM: its tensors there (a JSON model's
 * memory_space "host", an XLA program's S(5)) and a recipe's offloaded bytes. */
uint64_t plan_host_bytes(const struct plan_ctx *c);

/* plan.c: input planned as plan_run does up to the chosen packing, into *s alone: what the
 * advice's re-plans need, without the result document. */
ERR_MUST_CHECK int plan_measure(const char *input, size_t len, const struct plan_opts *o,
                                const struct plan_limits *l, struct plan_summary *s, struct err *e);

/* plan_verdict.c: the verdict (plan.h: enum plan_fit) and its words, each check a sentence. */
enum plan_check_id { PLAN_CHECK_HBM, PLAN_CHECK_VMEM, PLAN_CHECK_BUDGET, PLAN_CHECKS };
enum plan_check_ok { PLAN_CHECK_OK, PLAN_CHECK_FAILS, PLAN_CHECK_UNKNOWN };
struct plan_check {
    bool applies; /* hbm always; vmem with kernels; budget with a budget */
    enum plan_check_ok ok;
    char text[ERR_MSG_MAX];
};
struct plan_verdict {
    enum plan_fit status;
    bool fits;          /* HBM (or no capacity) and every kernel */
    bool within_budget; /* no budget, or the peak within it */
    struct plan_check checks[PLAN_CHECKS];
    char text[3 * ERR_MSG_MAX];
};

/* The verdict of c with this peak (before packing, the padded bytes stand in for it). */
void plan_verdict_compose(const struct plan_ctx *c, uint64_t peak, struct plan_verdict *v);

/* summary.verdict: status, headline, text and the checks that apply. */
void plan_verdict_write(struct jsonw *w, const struct plan_verdict *v);

/*
 * plan_peak.c: the chosen packing's peak explained (peak.h) into pk->peak, from its metrics
 * (have_peak stays false without them: nothing packed); its strings are borrowed from c->m.
 * plan_peak_write writes the result's "peak" section (null without one).
 */
ERR_MUST_CHECK int plan_peak_run(const struct plan_ctx *c, struct plan_packing *pk, struct err *e);
void plan_peak_write(struct jsonw *w, const struct plan_packing *pk);

/*
 * plan_views.c: both views into *v (plan.h), each at most max_bytes; the summary alone
 * when summary_only. On failure *v is empty.
 */
ERR_MUST_CHECK int plan_views_write(const struct plan_ctx *c, const struct plan_packing *pk,
                                    const struct suggest_fix *sg, size_t nsg, bool summary_only,
                                    size_t max_bytes, struct plan_views *v, struct err *e);

/*
 * plan_kernels.c: plans every kernel of c->ks once (the figures and the fit, counting
 * kernels_over) and sizes c->kops; errors name the kernel. plan_kernels_free releases
 * c->ks and c->kops.
 */
ERR_MUST_CHECK int plan_kernels_check(struct plan_ctx *c, struct err *e);
void plan_kernels_free(struct plan_ctx *c);

/* The result's "kernels" array (each kernel planned again, with its suggestions) and the
 * assumptions kernels rest on (lines for chip.assumptions). */
void plan_kernels_write(struct jsonw *w, const struct plan_ctx *c);
void plan_kernels_assumptions(struct jsonw *w, const struct plan_ctx *c);

/* XLA's error for a kernel that does not fit (E1001's scoped form, or the total-capacity
 * form when even physical VMEM is short) into buf; "" when it fits. Returns the length. */
size_t plan_kernels_oom(const struct kernel_spec *k, const struct kernel_plan *p, char *buf,
                        size_t cap);

/*
 * plan_xla.c: plan_xla_attach attaches XLA's own report (plan_report_attach, then
 * plan_report_check), parses opts' attached assignment and memory-usage report (errors
 * name "xla_assignment" / "xla_report"), bounded by max_values, and matches the assignment's
 * values to c->m's tensors: the attached one, or the input's own (standalone: plan.c's
 * import left it in c->xla.a). plan_xla_free releases c->xla whatever it returns.
 */
ERR_MUST_CHECK int plan_xla_attach(struct plan_ctx *c, const struct plan_opts *o, size_t max_values,
                                   struct err *e);
void plan_xla_free(struct plan_xla *x);

/* Tensor i's offset in XLA's layout; false when no value of the assignment is tensor i. */
bool plan_xla_offset(const struct plan_ctx *c, size_t i, uint64_t *off);

/* packing.xla: null without an assignment, else the "xla-actual" comparison row. */
void plan_xla_write(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk);

/*
 * plan_report.c: whether an attached report (plan_opts.xla_report) is one of XLA's own
 * reports this module reads (an out-of-memory report, CompiledMemoryStats, MaxText's line)
 * rather than a memory-usage report for plan_xla.c; plan_report_attach parses it (errors
 * name "xla_report"); plan_report_free releases c->report whatever they return.
 */
bool plan_report_takes(const char *text, size_t len);
ERR_MUST_CHECK int plan_report_attach(struct plan_ctx *c, const struct plan_opts *o,
                                      size_t max_allocs, struct err *e);
void plan_report_free(struct plan_report *r);

/* Warns (a model warning) when allocations of an out-of-memory report are not the size our
 * layout rules give their tensors: c->m resolved, the report attached. */
void plan_report_check(struct plan_ctx *c);

/* packing.xla_report: null without a report, else XLA's figures beside ours. */
void plan_report_write(struct jsonw *w, const struct plan_ctx *c, const struct plan_packing *pk);

#endif
