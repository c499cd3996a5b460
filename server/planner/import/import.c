/*
 * import.c - the input formats' table (import.h): names, detection, the import itself.
 *
 * The order is detection's. Safetensors comes first: its 8-byte length prefix is binary, and
 * a header 123 bytes long starts with '{', which the JSON test would take. A recipe comes
 * before the JSON model: both are objects, told apart by their top-level keys (a recipe has
 * "model" and "train" or "serve"; a model has "tensors"). The text formats after them are told
 * apart by their first non-blank characters, none of which two share. An out-of-memory report
 * comes last: a paste starts wherever the user's selection did (a traceback, a log prefix),
 * so it is found by its header's words anywhere in the text, which only a text no other row
 * took is searched for.
 */
#include "planner/import.h"

#include <stdio.h>
#include <string.h>

#include "planner/hlo_model.h"
#include "planner/import/import_int.h"
#include "planner/mmcsv.h"
#include "planner/model_json.h"
#include "planner/recipe.h"
#include "planner/safetensors.h"
#include "planner/stablehlo.h"
#include "planner/text.h"
#include "planner/xla_memstats.h"
#include "planner/xla_oom.h"

/* A JSON model description is an object; an array is taken too, so that the model parser
 * answers it with "must be an object" rather than detection with "unrecognized input". A
 * recipe is an object too, told apart by its top-level keys (recipe_detect). */
static bool json_detect(const char *s, size_t len)
{
    return len > 0 && (s[0] == '{' || s[0] == '[') && !recipe_detect(s, len);
}

/* The importers whose functions take no import_ctx, each given what it reads of one. */
static int json_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                       struct err *e)
{
    return model_parse_json(s, len, c->limits, m, e);
}

static int safetensors_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                              struct err *e)
{
    return safetensors_parse(s, len, c->limits, m, e);
}

static int hlo_text_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                           struct err *e)
{
    return hlo_import_opts(s, len, c->chip, c->limits, &c->hlo, m, e);
}

static int stablehlo_text_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                                 struct err *e)
{
    return stablehlo_import_opts(s, len, c->chip, c->limits, &c->hlo, m, e);
}

static const struct importer importers[] = {
    {
        .name = "safetensors",
        .what = "a safetensors file or header (8-byte length then '{')",
        .binary = true,
        .detect = safetensors_detect,
        .import = safetensors_import,
    },
    {
        .name = "recipe",
        .what = "a recipe (a JSON object with \"model\" and \"train\" or \"serve\")",
        .detect = recipe_detect,
        .import = recipe_import,
    },
    {
        .name = "json",
        .what = "a JSON model description (an object)",
        .detect = json_detect,
        .import = json_import,
    },
    {
        .name = "minimalloc-csv",
        .aliases = {"csv"},
        .what = "a MiniMalloc CSV (header id,lower,upper,size)",
        .raw_sizes = true,
        .detect = mmcsv_detect,
        .import = mmcsv_import,
    },
    {
        .name = "xla-buffer-assignment",
        .what = "an XLA buffer assignment (BufferAssignment:)",
        .raw_sizes = true,
        .program = true,
        .detect = xla_assign_detect,
        .import = xla_assign_import,
    },
    {
        .name = "hlo",
        .what = "XLA HLO text (HloModule ...)",
        .program = true,
        .detect = hlo_detect,
        .import = hlo_text_import,
    },
    {
        .name = "stablehlo",
        .aliases = {"mlir"},
        .what = "StableHLO text (module @... { func.func ...)",
        .program = true,
        .detect = stablehlo_detect,
        .import = stablehlo_text_import,
    },
    {
        .name = "xla-oom",
        .aliases = {"oom"},
        .what = "an XLA out-of-memory report (Ran out of memory in memory space ...)",
        .detect = xla_oom_detect,
        .import = xla_oom_import,
    },
};

#define NIMPORTERS (sizeof(importers) / sizeof(importers[0]))

size_t import_count(void)
{
    return NIMPORTERS;
}

const struct importer *import_at(size_t i)
{
    return i < NIMPORTERS ? &importers[i] : NULL;
}

bool import_find(const char *name, struct importer const **imp)
{
    if (name == NULL || strcmp(name, "auto") == 0) {
        *imp = NULL;
        return true;
    }
    for (size_t i = 0; i < NIMPORTERS; i++) {
        bool hit = strcmp(name, importers[i].name) == 0;
        for (size_t a = 0; !hit && importers[i].aliases[a] != NULL; a++)
            hit = strcmp(name, importers[i].aliases[a]) == 0;
        if (hit) {
            *imp = &importers[i];
            return true;
        }
    }
    return false;
}

/* Appends text to buf[0..cap) at *n, truncating (snprintf's rules); *n keeps counting. */
static void append(char *buf, size_t cap, size_t *n, const char *text)
{
    size_t len = strlen(text);

    if (*n < cap) {
        size_t room = cap - *n - 1;
        memcpy(buf + *n, text, len < room ? len : room);
        buf[*n + (len < room ? len : room)] = '\0';
    }
    *n += len;
}

size_t import_names(char *buf, size_t cap)
{
    size_t n = 0;

    if (cap > 0)
        buf[0] = '\0';
    append(buf, cap, &n, "auto");
    for (size_t i = 0; i < NIMPORTERS; i++) {
        append(buf, cap, &n, ", ");
        append(buf, cap, &n, importers[i].name);
        for (size_t a = 0; importers[i].aliases[a] != NULL; a++) {
            append(buf, cap, &n, a == 0 ? " (" : ", ");
            append(buf, cap, &n, importers[i].aliases[a]);
        }
        if (importers[i].aliases[0] != NULL)
            append(buf, cap, &n, ")");
    }
    return n < cap ? n : (cap > 0 ? cap - 1 : 0);
}

int import_lookup(const char *label, const char *name, struct importer const **imp, struct err *e)
{
    char names[IMPORT_NAMES_MAX];

    if (import_find(name, imp))
        return ERR_OK;
    import_names(names, sizeof(names));
    return err_set(e, ERR_NOTFOUND, label, "%s: unknown input format \"%.40s\" (known: %s)", label,
                   name, names);
}

const struct importer *import_detect(const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n'))
        i++;
    for (size_t k = 0; k < NIMPORTERS; k++) {
        const struct importer *r = &importers[k];
        if (r->binary ? r->detect(s, len) : r->detect(s + i, len - i))
            return r;
    }
    return NULL;
}

/* What no row recognised: a memory-usage report alone gets its own answer, anything else
 * the list of what each format looks like. */
static int unrecognized(const char *input, size_t len, struct err *e)
{
    char expected[ERR_MSG_MAX];
    size_t n = 0;

    if (xla_report_detect(input, len))
        return err_set(e, ERR_INVALID, "",
                       "a memory-usage report holds XLA's totals only: send it with its "
                       "buffer assignment (*.buffer-assignment.txt) or its HLO module");
    if (xla_memstats_detect(input, len))
        return err_set(e, ERR_INVALID, "",
                       "XLA's memory figures (CompiledMemoryStats, MaxText's memory line) are "
                       "totals only: attach them to their program (--xla-report, the form "
                       "field xla_report)");
    expected[0] = '\0';
    for (size_t k = 0; k < NIMPORTERS; k++) {
        append(expected, sizeof(expected), &n, k == 0 ? "" : (k + 1 == NIMPORTERS ? " or " : ", "));
        append(expected, sizeof(expected), &n, importers[k].what);
    }
    return err_set(e, ERR_INVALID, "", "unrecognized input: expected %s", expected);
}

int import_run(const struct importer *imp, const char *input, size_t len, struct import_ctx *c,
               struct model *m, struct importer const **used, struct err *e)
{
    bool binary = false;

    memset(m, 0, sizeof(*m));
    for (size_t k = 0; k < NIMPORTERS && !binary; k++)
        binary = importers[k].binary && importers[k].detect(input, len);
    if (!binary)
        text_skip_bom(&input, &len);
    if (imp == NULL && (imp = import_detect(input, len)) == NULL)
        return unrecognized(input, len, e);
    if (used != NULL)
        *used = imp;
    return imp->import(input, len, c, m, e);
}
