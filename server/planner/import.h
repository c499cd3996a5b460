/*
 * import.h - the input formats: one table, one row per format, in the order detection
 * tries them. A row holds the format's name (the options' value and the model's
 * source_format), the other names it answers to, what the "unrecognized input" error says
 * it looks like, whether it carries byte sizes instead of shapes, and its detect and import
 * functions. Every surface that names a format (the CLI's --input, the API's ?format=, the
 * options stored with a plan, plan_opts.format) resolves the name here, so they accept the
 * same names; a new format is a row here and a file in import/.
 *
 * Pure: the table is constant, nothing here keeps state between calls.
 */
#ifndef TPUPLAN_IMPORT_H
#define TPUPLAN_IMPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/chip.h"
#include "planner/err.h"
#include "planner/hlo_model.h"
#include "planner/model.h"
#include "planner/xla_assign.h"
#include "planner/xla_oom.h"

#define IMPORT_MAX_ALIASES 2
#define IMPORT_NAMES_MAX   256 /* import_names always fits a buffer this long */

/* What an importer is handed besides the bytes; everything borrowed for the call. */
struct import_ctx {
    const struct model_limits *limits;
    const struct chip *chip; /* sizes HLO's called computations' temporaries; NULL: the v4
                              * rules (hlo_model.h) */
    /* The XLA buffer-assignment importer keeps what it parsed here (the plan draws XLA's own
     * layout from it, "xla-actual") and sets xla_kept; the caller frees it with
     * xla_assign_free whatever the import returns. NULL: parsed, used and freed. */
    struct xla_assign *xla;
    bool xla_kept;
    /* chip is the caller's choice (--chip, ?chip=): a recipe naming its own chip yields to
     * it; false: chip is a default, and a recipe's own chip wins. */
    bool chip_given;
    /* How HLO and StableHLO before optimization are read (hlo_model.h). */
    struct hlo_model_opts hlo;
    /* The out-of-memory report importer keeps what it parsed here (the plan checks each
     * allocation against ours: packing.xla_report) and sets oom_kept; the caller frees it
     * with xla_oom_free whatever the import returns. NULL: parsed, used and freed. */
    struct xla_oom *oom;
    bool oom_kept;
};

/* Builds *m from s[0..len) (not NUL-terminated); on failure *m is empty (nothing to free). */
typedef int (*import_fn)(const char *s, size_t len, struct import_ctx *c, struct model *m,
                         struct err *e);

struct importer {
    const char *name;                            /* "json", "minimalloc-csv", ...: static */
    const char *aliases[IMPORT_MAX_ALIASES + 1]; /* other names it answers to, NULL-ended */
    const char *what;                            /* "a MiniMalloc CSV (header id,lower,...)" */
    bool binary;    /* detect sees the bytes from the first; a text format's detect sees them
                     * from the first non-blank (space, tab, CR, LF) */
    bool raw_sizes; /* buffers with byte sizes and lifetimes as given, no shapes or dtypes: no
                     * chip unless one is asked for, alignment 1 */
    bool program;   /* a compiled program: each step an instruction, each buffer named by the
                     * instruction that defines it (peak.h names the op at the peak so) */
    bool (*detect)(const char *s, size_t len);
    import_fn import;
};

/* The table, in detection order: import_at(i) for i < import_count(). */
size_t import_count(void);
const struct importer *import_at(size_t i);

/*
 * A format as a caller names it: NULL or "auto" is detection from content (*imp = NULL),
 * an importer's name or alias its row. False, *imp untouched, for any other name.
 */
bool import_find(const char *name, struct importer const **imp);

/* Every name import_find accepts, for error messages: "auto, safetensors, json,
 * minimalloc-csv (csv), ...", aliases in parentheses. Writes at most cap bytes
 * (NUL-terminated; IMPORT_NAMES_MAX is always enough) and returns strlen. */
size_t import_names(char *buf, size_t cap);

/* import_find, with the planner's error when the name is unknown: ERR_NOTFOUND, where label
 * (the option as its caller spells it: "format", "--input"), listing import_names. */
ERR_MUST_CHECK int import_lookup(const char *label, const char *name, struct importer const **imp,
                                 struct err *e);

/* The first row whose detect accepts s[0..len); NULL when none does. */
const struct importer *import_detect(const char *s, size_t len);

/*
 * Builds *m from input[0..len) with imp, or with the detected format when imp is NULL;
 * *used (may be NULL) gets the row that ran. A text input is read past a UTF-8 byte order
 * mark. An input no row detects is ERR_INVALID saying what each format looks like. On
 * failure *m is empty.
 */
ERR_MUST_CHECK int import_run(const struct importer *imp, const char *input, size_t len,
                              struct import_ctx *c, struct model *m, struct importer const **used,
                              struct err *e);

#endif
