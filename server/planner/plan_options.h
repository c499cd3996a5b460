/*
 * plan_options.h - the plan's options (struct plan_opts, plan.h), one table.
 *
 * Every surface that takes an option sets it here: the CLI's flags (`tpuplan plan`, `diff`,
 * `pack`), the API's query parameters and form fields (POST /api/v1/plans), the options the
 * service stores with a plan and its worker reads back, and a model description's "options"
 * object. So an option has one name, one grammar, one range and one default everywhere, and
 * is refused with the same message, which names it as the caller spelled it (its flag, its
 * parameter, its stored key or "options.<name>").
 *
 * The grammars (each type below):
 *   bytes      bytes.h: 12, 64M, 1.5GiB (K, M, G, T: powers of 1024; whole bytes)
 *   duration   duration.h: 2, 2s, 500ms, 1.5m, 1h (seconds without a unit)
 *   fraction   a decimal: 0.75, .5, 1 (bytes.h's number: at most 6 decimals, no exponent)
 *   count      a whole number in decimal
 *   bool       true or false
 *   enum       one of the names listed in the option's range
 * A JSON value (the stored options, a model's "options") is read as the same text: a string
 * as it is, an integer as its decimal digits, true or false; a real number only for the
 * duration and fraction options, taken as is in the same range (seconds for a duration).
 * The options that keep text (chip, strategies, name, budget, XLA's dumps) take strings.
 *
 * Pure: no I/O, no state; the table is static and read-only.
 */
#ifndef TPUPLAN_PLAN_OPTIONS_H
#define TPUPLAN_PLAN_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/plan.h"

struct json_object;

/* Where an option may be given (struct plan_opt.surfaces). */
enum plan_opt_surface {
    PLAN_OPT_PLAN = 1u << 0,   /* `tpuplan plan FILE --flag VALUE` */
    PLAN_OPT_DIFF = 1u << 1,   /* `tpuplan diff A B --flag VALUE`: each model input planned */
    PLAN_OPT_PACK = 1u << 2,   /* `tpuplan pack FILE --flag VALUE` */
    PLAN_OPT_API = 1u << 3,    /* POST /api/v1/plans?name=VALUE, or a form field */
    PLAN_OPT_STORED = 1u << 4, /* the document stored with a plan: {"key": value} */
    PLAN_OPT_MODEL = 1u << 5,  /* a model description's "options": {"name": value} */
};
#define PLAN_OPT_CLI (PLAN_OPT_PLAN | PLAN_OPT_DIFF | PLAN_OPT_PACK)

enum plan_opt_type {
    PLAN_OPT_BYTES,
    PLAN_OPT_DURATION,
    PLAN_OPT_FRACTION,
    PLAN_OPT_COUNT,
    PLAN_OPT_BOOL,
    PLAN_OPT_ENUM,
    PLAN_OPT_FORMAT,     /* auto, or an input format's name or alias (import.h) */
    PLAN_OPT_CHIP,       /* a chip's name or alias (chip.h, `tpuplan chips`) */
    PLAN_OPT_STRATEGIES, /* best, all, or a comma-separated list of pack.h's strategies */
    PLAN_OPT_BUDGET,     /* budget.h: bytes or a fraction of the capacity */
    PLAN_OPT_TEXT,       /* text of bounded length */
    PLAN_OPT_FILE,       /* a file's text (the CLI takes its path; the caller reads it) */
};

/* One row of the table. Every string is static. */
struct plan_opt {
    const char *name;    /* the API's parameter and the model's key: "time_limit" */
    const char *flag;    /* the CLI's: "--time-limit"; NULL: none */
    const char *key;     /* the stored document's: "time_limit_s"; NULL: not stored */
    const char *metavar; /* the value in help text: "SECONDS", "true|false" */
    enum plan_opt_type type;
    unsigned surfaces; /* enum plan_opt_surface bits */
    const char *range; /* the values accepted, in words: "above 0 and at most 3600 s"; NULL
                        * when plan_opt_range lists them from another table (the formats) */
    const char *dflt;  /* the default, in words: "2 s" */
    const char *doc;   /* one line */
};

/* The table in its order (the stored document's and the help text's), i < plan_opt_count(). */
size_t plan_opt_count(void);
const struct plan_opt *plan_opt_at(size_t i);

/* The option spelled `name` on one of the surfaces: its flag on the CLI's, its key on
 * PLAN_OPT_STORED, its name on the API's and the model's. NULL when none is. */
const struct plan_opt *plan_opt_find(unsigned surfaces, const char *name);

/* opt's range in words into buf (cap bytes, always NUL-terminated): its range, or the
 * names of the table it takes them from (import_names for the input format). Returns buf. */
const char *plan_opt_range(const struct plan_opt *opt, char *buf, size_t cap);

/* The options of one surface as spelled there, comma-separated ("--input, --chip, ...") into
 * buf (cap bytes, always NUL-terminated; cut short when it does not fit), for errors. */
void plan_opt_names(enum plan_opt_surface surface, char *buf, size_t cap);

/*
 * Sets option `name` (its name: "time_limit", "mem_fraction") of *o from its text. value is
 * borrowed: the options that keep text (type CHIP, STRATEGIES, BUDGET, TEXT, FILE) point at
 * it, so it must outlive *o's use. An unknown name is ERR_NOTFOUND naming it; a malformed
 * value or one out of range ERR_INVALID (ERR_NOTFOUND for an unknown chip or strategy, as
 * the planner answers them), the message naming the option and quoting the value.
 */
ERR_MUST_CHECK int plan_opts_set(struct plan_opts *o, const char *name, const char *value,
                                 struct err *e);

/* plan_opts_set for a row already found, its errors naming it as `label` (the flag, the
 * stored key, "options.time_limit"). */
ERR_MUST_CHECK int plan_opt_set(struct plan_opts *o, const struct plan_opt *opt, const char *label,
                                const char *value, struct err *e);

/* plan_opt_set for text a person typed on surface (a CLI command's flag, an API parameter):
 * also refuses what is likely a slip there, a capacity without a unit below 1 MiB
 * ("--capacity 16": bytes.h, bytes_check_slip), except on `tpuplan pack`, whose CSV sizes
 * have no unit. Stored options and a model's own are read with plan_opt_set. */
ERR_MUST_CHECK int plan_opt_set_typed(struct plan_opts *o, const struct plan_opt *opt,
                                      unsigned surface, const char *label, const char *value,
                                      struct err *e);

/*
 * plan_opt_set from a json-c value v (the header's JSON rules). A string an option keeps is
 * copied into buf at *used (cap bytes; *used advances; ERR_LIMIT when it does not fit), so it
 * lives as long as buf; with buf NULL it is borrowed from v, which must then outlive *o's use.
 */
ERR_MUST_CHECK int plan_opt_set_json(struct plan_opts *o, const struct plan_opt *opt,
                                     const char *label, const struct json_object *v, char *buf,
                                     size_t cap, size_t *used, struct err *e);

/* Every member of obj (a json-c object of options: a model's "options" on PLAN_OPT_MODEL,
 * the stored options on PLAN_OPT_STORED) through plan_opt_set_json as the option spelled so
 * on surface, its errors naming "options.<key>"; a key that is none of them is ERR_INVALID
 * naming "options" and listing the ones there are. buf, cap and used as plan_opt_set_json's
 * (buf NULL: strings borrowed from obj). */
ERR_MUST_CHECK int plan_opts_set_object(struct plan_opts *o, enum plan_opt_surface surface,
                                        const struct json_object *obj, char *buf, size_t cap,
                                        size_t *used, struct err *e);

/* An option's value as set in a struct plan_opts, to write it back out. */
enum plan_opt_kind { PLAN_OPT_V_TEXT, PLAN_OPT_V_UINT, PLAN_OPT_V_REAL, PLAN_OPT_V_BOOL };
struct plan_opt_value {
    enum plan_opt_kind kind;
    const char *text; /* V_TEXT: borrowed from *o or static (an enum's name), len bytes */
    size_t len;
    uint64_t u; /* V_UINT */
    double d;   /* V_REAL */
    bool b;     /* V_BOOL */
};

/* Whether opt is set in *o (not its "unset" zero: NULL, 0, PLAN_PREALLOC_DEFAULT,
 * PACK_GOAL_MIN), and its value in *v when it is. */
bool plan_opt_get(const struct plan_opts *o, const struct plan_opt *opt, struct plan_opt_value *v);

/* Every option unset in *o (plan_opt_get) and set in *from, copied from it (strings stay
 * from's): the caller's options over a model's own. */
void plan_opts_fill(struct plan_opts *o, const struct plan_opts *from);

/* The numeric fields of *o however they were set (plan_run's callers fill the struct too),
 * against the table's ranges: 0 is "unset" and passes. ERR_INVALID naming the option. */
ERR_MUST_CHECK int plan_opts_check(const struct plan_opts *o, struct err *e);

#endif
