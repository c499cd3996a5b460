/*
 * whatif.c - overrides applied to a model description's JSON (whatif.h): the document is
 * parsed with json-c, edited in place and printed again, so every field the overrides do
 * not touch reaches the new plan exactly as written.
 *
 * Each override key is a row of one table: how its value is checked without the model
 * (whatif_check: types, grammars, patterns counted) and how it is applied to the model.
 * whatif_apply checks everything first, so the application never meets a malformed value
 * and no pattern list longer than the limit is ever walked.
 */
#include "planner/model_json.h"
#include "planner/whatif.h"

#include <fnmatch.h>
#include <stdint.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/dtype.h"
#include "planner/lifetime.h"
#include "planner/model.h"
#include "planner/plan_options.h"
#include "planner/recipe.h"
#include "planner/base/jsonr.h"

#define WHATIF_MAX_OVERRIDES (64 * 1024) /* bytes of overrides */
#define WHATIF_MAX_DEPTH     8

#define WHATIF_HOST_SUFFIX  "/host"      /* an offloaded activation's copy in host memory */
#define WHATIF_FETCH_SUFFIX "/from_host" /* ... and back in HBM for its last use */

/* One what-if being applied. */
struct edit {
    const struct plan_limits *lim;
    json_object *root, *tensors; /* tensors NULL: the input is a recipe (recipe.h) */
    struct whatif_result *out;
    const char *grew; /* the key that added tensors ("remat", "memory_space"): a model too
                       * long is its doing; NULL when none did */
};

static int bad(struct err *e, const char *key, const char *sub, const char *what)
{
    char where[ERR_WHERE_MAX];

    if (sub != NULL)
        snprintf(where, sizeof(where), "overrides.%s.%.100s", key, sub);
    else
        snprintf(where, sizeof(where), "overrides.%s", key);
    return err_set(e, ERR_INVALID, where, "%s: %s", where, what);
}

/* A pattern that selects nothing (where: "overrides.remat[3]", "overrides.dtype.<p>"). */
static int no_match(struct err *e, const char *where, const char *pattern, const char *what)
{
    return err_set(e, ERR_INVALID, where, "%s: \"%.100s\" matches no %s", where, pattern, what);
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;

    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* Whether tensor t is selected by pattern: a kind name selects that kind, anything else is
 * a glob on the tensor's name. */
static bool selects(json_object *t, const char *pattern)
{
    json_object *kind = member(t, "kind"), *name = member(t, "name");

    if (tensor_kind_parse(pattern) != TENSOR_KIND_COUNT)
        return strcmp(json_object_is_type(kind, json_type_string) ? json_object_get_string(kind)
                                                                  : "temp",
                      pattern) == 0;
    return json_object_is_type(name, json_type_string) &&
           fnmatch(pattern, json_object_get_string(name), 0) == 0;
}

/* ---- checks: the overrides alone ---- */

/* chip, strategies, budget, name: a plan option's value (plan_options.h), its grammar and
 * range the table's; budget and name also fit whatif_result's fields. */
static int check_option(json_object *v, const char *key, size_t *patterns, struct err *e)
{
    char label[32];
    struct plan_opts o;
    size_t cap = strcmp(key, "budget") == 0 ? BUDGET_MAX_TEXT + 1
                 : strcmp(key, "name") == 0 ? sizeof(((struct whatif_result *)NULL)->name)
                                            : SIZE_MAX;

    (void)patterns;
    memset(&o, 0, sizeof(o));
    snprintf(label, sizeof(label), "overrides.%s", key);
    if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 ||
        (size_t)json_object_get_string_len(v) >= cap)
        return bad(e, key, NULL, "must be a non-empty string (and not too long)");
    return plan_opt_set_json(&o, plan_opt_find(PLAN_OPT_API, key), label, v, NULL, 0, NULL, e);
}

/* dtype and sharding: {pattern: value}, a dtype's name or an array. */
/* Whether v is an XLA array shape ("u32[98304,128]", with or without a layout). */
static bool is_shape(json_object *v)
{
    struct shape sh;
    struct err e;

    return json_object_is_type(v, json_type_string) &&
           shape_parse(json_object_get_string(v), (size_t)json_object_get_string_len(v), &sh, &e) ==
               ERR_OK;
}

/* A memory_space override's value: where the selected tensors live (whatif.h); the
 * model's own grammar (INPUT.md: device, host, and JAX's pinned_host / unpinned_host). */
static const char *const space_names[] = {"device", "host", "pinned_host", "unpinned_host", NULL};

static bool is_space(json_object *v)
{
    for (size_t k = 0; json_object_is_type(v, json_type_string) && space_names[k] != NULL; k++)
        if (strcmp(json_object_get_string(v), space_names[k]) == 0)
            return true;
    return false;
}

static int check_map(json_object *v, const char *key, size_t *patterns, struct err *e)
{
    bool is_dtype = strcmp(key, "dtype") == 0, is_shape_key = strcmp(key, "xla_shape") == 0,
         is_space_key = strcmp(key, "memory_space") == 0;

    if (!json_object_is_type(v, json_type_object))
        return bad(e, key, NULL, "must be an object of pattern: value");
    JSONR_FOREACH(v, it, end)
    {
        json_object *val = JSONR_VAL(it);
        if (is_dtype && (!json_object_is_type(val, json_type_string) ||
                         dtype_parse_alias(json_object_get_string(val),
                                           (size_t)json_object_get_string_len(val)) == DT_INVALID))
            return bad(e, key, JSONR_KEY(it),
                       "must be a dtype name (f32, bf16, s8, ...; bfloat16, jnp.bfloat16, ...)");
        if (is_shape_key && !is_shape(val))
            return bad(e, key, JSONR_KEY(it),
                       "must be an XLA array shape (u32[98304,128], f32[8,128]{1,0:T(8,128)})");
        if (is_space_key && !is_space(val))
            return bad(e, key, JSONR_KEY(it),
                       "must be \"device\" (HBM) or \"host\" (pinned_host, unpinned_host)");
        if (!is_dtype && !is_shape_key && !is_space_key &&
            !json_object_is_type(val, json_type_array))
            return bad(e, key, JSONR_KEY(it), "must be an array");
    }
    *patterns += (size_t)json_object_object_length(v);
    return ERR_OK;
}

static int check_mesh(json_object *v, const char *key, size_t *patterns, struct err *e)
{
    int64_t size;

    (void)patterns;
    if (!json_object_is_type(v, json_type_object))
        return bad(e, key, NULL, "must be an object of axis: size");
    JSONR_FOREACH(v, it, end)
    {
        if (jsonr_int(JSONR_VAL(it), &size) != 0 || size < 1)
            return bad(e, key, JSONR_KEY(it), "must be a whole number of devices >= 1");
    }
    return ERR_OK;
}

/* The k-th remat pattern of v (a string, or an array of them). */
static json_object *remat_at(json_object *v, size_t k)
{
    return json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, k) : v;
}

static size_t remat_count(json_object *v)
{
    return json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
}

/* Where the k-th remat pattern is: "overrides.remat" for a lone one, else indexed. */
static void remat_where(json_object *v, size_t k, char *where, size_t cap)
{
    if (json_object_is_type(v, json_type_array))
        snprintf(where, cap, "overrides.remat[%zu]", k);
    else
        snprintf(where, cap, "overrides.remat");
}

static int check_remat(json_object *v, const char *key, size_t *patterns, struct err *e)
{
    char where[ERR_WHERE_MAX];

    if (!json_object_is_type(v, json_type_string) && !json_object_is_type(v, json_type_array))
        return bad(e, key, NULL, "must be a pattern or a list of patterns");
    for (size_t k = 0; k < remat_count(v); k++) {
        if (!json_object_is_type(remat_at(v, k), json_type_string)) {
            remat_where(v, k, where, sizeof(where));
            return err_set(e, ERR_INVALID, where, "%s: must be a pattern (a string)", where);
        }
    }
    *patterns += remat_count(v);
    return ERR_OK;
}

/* recipe: a JSON Merge Patch of the recipe (checked with the recipe it makes). */
static int check_recipe(json_object *v, const char *key, size_t *patterns, struct err *e)
{
    (void)patterns;
    if (!json_object_is_type(v, json_type_object))
        return bad(e, key, NULL, "must be an object merged into the recipe (RFC 7386)");
    return ERR_OK;
}

/* ---- applications: the model edited ---- */

/* The keys that select tensors by pattern need tensors: a recipe's follow from its fields. */
static int need_tensors(const struct edit *ed, const char *key, struct err *e)
{
    if (ed->tensors != NULL)
        return ERR_OK;
    return bad(e, key, NULL,
               "a recipe's tensors follow from its fields: change them through overrides.recipe "
               "(train.remat, train.precision, parallelism.rules, ...)");
}

/* The recipe merged with the patch v: through recipe_merge, so its errors name the recipe's
 * field under overrides.recipe. */
static int apply_recipe(struct edit *ed, const char *key, json_object *v, struct err *e)
{
    const char *text = json_object_to_json_string_ext(ed->root, JSON_C_TO_STRING_PLAIN);
    const char *patch = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    struct recipe *r = NULL;
    char *merged = NULL;
    size_t n = 0;
    json_object *root = NULL;
    int rc;

    if (ed->tensors != NULL)
        return bad(e, key, NULL, "the plan's input is a model description, not a recipe");
    if (text == NULL || patch == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    if ((rc = recipe_parse(text, strlen(text), &r, e)) != ERR_OK ||
        (rc = recipe_merge(r, patch, strlen(patch), e)) != ERR_OK ||
        (rc = recipe_text(r, &merged, &n, e)) != ERR_OK ||
        (rc = jsonr_load(merged, n, ed->lim->max_json_depth, "recipe", &root, e)) != ERR_OK) {
        if (rc == ERR_INVALID || rc == ERR_NOTFOUND)
            err_prefix(e, "overrides.recipe", "overrides.recipe: ");
    } else {
        json_object_put(ed->root);
        ed->root = root;
    }
    recipe_free(r);
    free(merged);
    return rc;
}

/* A new dtype for tensor t: "dtype" replaced and a given "layout" dropped, or an
 * "xla_shape" rewritten as dtype + its dims. */
static int set_dtype(json_object *t, const char *dtype, struct err *e)
{
    json_object *xs = member(t, "xla_shape");
    char buf[SHAPE_MAX_TEXT];

    if (json_object_is_type(xs, json_type_string)) {
        const char *s = json_object_get_string(xs), *open = strchr(s, '['),
                   *close = strrchr(s, ']');
        if (open == NULL || close == NULL || close < open ||
            snprintf(buf, sizeof(buf), "%s%.*s", dtype, (int)(close - open + 1), open) >=
                (int)sizeof(buf))
            return bad(e, "dtype", dtype, "cannot rewrite this tensor's xla_shape");
        json_object_object_add(t, "xla_shape", json_object_new_string(buf));
        return ERR_OK;
    }
    json_object_object_add(t, "dtype", json_object_new_string(dtype));
    json_object_object_del(t, "layout");
    return ERR_OK;
}

/* What chip, strategies, budget and name say, noted in out (whatif_check's part: no model
 * needed); budget and name were checked to fit. */
static void note_option(struct whatif_result *out, const char *key, json_object *v)
{
    if (strcmp(key, "chip") == 0)
        out->chip_set = true;
    else if (strcmp(key, "strategies") == 0)
        out->strategies_set = true;
    else if (strcmp(key, "budget") == 0)
        snprintf(out->budget, sizeof(out->budget), "%s", json_object_get_string(v));
    else
        snprintf(out->name, sizeof(out->name), "%s", json_object_get_string(v));
}

/* chip and strategies become the model's own (budget and name stay notes, for the caller's
 * options and the model's name). */
static int apply_option(struct edit *ed, const char *key, json_object *v, struct err *e)
{
    json_object *opts;

    (void)e;
    if (strcmp(key, "chip") == 0) {
        json_object_object_add(ed->root, key, json_object_get(v));
    } else if (strcmp(key, "strategies") == 0) {
        if (!json_object_is_type(opts = member(ed->root, "options"), json_type_object)) {
            opts = json_object_new_object();
            json_object_object_add(ed->root, "options", opts);
        }
        json_object_object_add(opts, key, json_object_get(v));
    }
    return ERR_OK;
}

/* "dtype", "sharding" and "xla_shape": {pattern: value} applied to every tensor selected, in
 * order; a pattern that selects none is refused. */
static int apply_map(struct edit *ed, const char *key, json_object *map, struct err *e)
{
    bool is_dtype = strcmp(key, "dtype") == 0;
    size_t n;
    int rc;

    if ((rc = need_tensors(ed, key, e)) != ERR_OK)
        return rc;
    n = json_object_array_length(ed->tensors);
    JSONR_FOREACH(map, it, end)
    {
        const char *pattern = JSONR_KEY(it);
        json_object *v = JSONR_VAL(it);
        /* checked: a dtype's name, written in XLA's spelling (bfloat16 -> bf16) */
        const char *dtype =
            is_dtype ? dtype_name(dtype_parse_alias(json_object_get_string(v),
                                                    (size_t)json_object_get_string_len(v)))
                     : NULL;
        size_t hits = 0;
        for (size_t i = 0; i < n; i++) {
            json_object *t = json_object_array_get_idx(ed->tensors, i);
            if (!selects(t, pattern))
                continue;
            hits++;
            if (is_dtype && (rc = set_dtype(t, dtype, e)) != ERR_OK)
                return rc;
            if (strcmp(key, "sharding") == 0)
                json_object_object_add(t, "sharding", json_object_get(v));
            if (strcmp(key, "xla_shape") == 0) { /* a new shape: dims, dtype and layout */
                json_object_object_del(t, "shape");
                json_object_object_del(t, "dtype");
                json_object_object_del(t, "layout");
                json_object_object_add(t, "xla_shape", json_object_get(v));
            }
        }
        if (hits == 0) {
            char where[ERR_WHERE_MAX];
            snprintf(where, sizeof(where), "overrides.%s.%.100s", key, pattern);
            return no_match(e, where, pattern, "tensor");
        }
        ed->out->matched += hits;
    }
    return ERR_OK;
}

static int apply_mesh(struct edit *ed, const char *key, json_object *map, struct err *e)
{
    json_object *mesh = member(ed->root, "mesh");
    int64_t size;

    (void)e;
    if (!json_object_is_type(mesh, json_type_object)) {
        mesh = json_object_new_object();
        json_object_object_add(ed->root, key, mesh);
    }
    JSONR_FOREACH(map, it, end)
    {
        if (jsonr_int(JSONR_VAL(it), &size) == 0) /* checked: always */
            json_object_object_add(mesh, JSONR_KEY(it), json_object_new_int64(size));
    }
    return ERR_OK;
}

/* A live pair [a, b) as a JSON array. */
static json_object *live_new(int64_t a, int64_t b)
{
    json_object *l = json_object_new_array_ext(2);

    if (l != NULL && (json_object_array_add(l, json_object_new_int64(a)) != 0 ||
                      json_object_array_add(l, json_object_new_int64(b)) != 0)) {
        json_object_put(l);
        return NULL;
    }
    return l;
}

/* Marks in split[] the activations of m the remat patterns v select and that are long
 * enough to split (each at most once), counting them in *nsplit; a pattern that selects no
 * activation is refused. */
static int remat_select(struct edit *ed, const struct model *m, json_object *v, uint8_t *split,
                        size_t *nsplit, struct err *e)
{
    char where[ERR_WHERE_MAX];

    for (size_t k = 0; k < remat_count(v); k++) {
        const char *pattern = json_object_get_string(remat_at(v, k));
        size_t hits = 0;
        for (size_t i = 0; i < m->n; i++) {
            const struct model_tensor *mt = &m->tensors[i];
            if (mt->kind != TENSOR_ACTIVATION ||
                !selects(json_object_array_get_idx(ed->tensors, i), pattern))
                continue;
            hits++;
            if (!split[i] && mt->live_end - mt->live_start > 2) {
                split[i] = true;
                (*nsplit)++;
            }
        }
        if (hits == 0) {
            remat_where(v, k, where, sizeof(where));
            return no_match(e, where, pattern, "activation");
        }
    }
    return ERR_OK;
}

/* A copy of tensors[i] (mt: as the model read it) named "<name><suffix>", live over [a, b),
 * appended to the tensors: in host memory when space is "host", in HBM when "device", where
 * the original is when NULL. */
static int add_copy(struct edit *ed, const struct model_tensor *mt, size_t i, const char *suffix,
                    int64_t a, int64_t b, const char *space, struct err *e)
{
    json_object *t = json_object_array_get_idx(ed->tensors, i), *copy = NULL;
    json_object *l = live_new(a, b);
    char name[MODEL_MAX_NAME + 16];

    snprintf(name, sizeof(name), "%s%s", mt->name, suffix);
    if (l == NULL || json_object_deep_copy(t, &copy, NULL) != 0 ||
        json_object_array_add(ed->tensors, copy) != 0) {
        json_object_put(l);
        json_object_put(copy);
        return err_set(e, ERR_NOMEM, "", "out of memory");
    }
    json_object_object_add(copy, "name", json_object_new_string(name));
    json_object_object_add(copy, "live", l);
    if (space != NULL && strcmp(space, "host") == 0)
        json_object_object_add(copy, "memory_space", json_object_new_string(space));
    else if (space != NULL)
        json_object_object_del(copy, "memory_space");
    return ERR_OK;
}

/* Tensors[i] keeps only its producing step, [s, s + 1). */
static int keep_first_step(struct edit *ed, const struct model_tensor *mt, size_t i, struct err *e)
{
    json_object *l = live_new(mt->live_start, mt->live_start + 1);

    if (l == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    json_object_object_add(json_object_array_get_idx(ed->tensors, i), "live", l);
    return ERR_OK;
}

/* Tensor i of m split in two (whatif.h): the original keeps its producing step, a copy
 * "<name>/remat" its last use. */
static int remat_split(struct edit *ed, const struct model *m, size_t i, struct err *e)
{
    const struct model_tensor *mt = &m->tensors[i];
    int rc = add_copy(ed, mt, i, MODEL_REMAT_SUFFIX, mt->live_end - 1, mt->live_end, NULL, e);

    return rc != ERR_OK ? rc : keep_first_step(ed, mt, i, e);
}

/* The model as edited so far, parsed, its lifetimes derived (remat and memory_space read
 * them), tensor i of it the document's tensors[i]: what an earlier key changed composes.
 * *marks: a zeroed byte per tensor (malloc'd; the caller frees it and the model). */
static int current_model(struct edit *ed, const char *key, struct model *m, uint8_t **marks,
                         struct err *e)
{
    const struct plan_limits *l = ed->lim;
    struct model_limits ml = {l->max_input_bytes, l->max_json_depth, l->max_tensors, l->max_ops, 0};
    size_t n = 0;
    const char *text;
    int rc;

    memset(m, 0, sizeof(*m));
    *marks = NULL;
    if ((rc = need_tensors(ed, key, e)) != ERR_OK)
        return rc;
    text = json_object_to_json_string_length(
        ed->root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    if (text == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory");
    if ((rc = model_parse_json(text, n, &ml, m, e)) != ERR_OK)
        return rc;
    if ((rc = lifetime_derive(m, e)) == ERR_OK && json_object_array_length(ed->tensors) != m->n)
        rc = err_set(e, ERR_INTERNAL, "tensors", "the model's tensors read twice differ");
    if (rc == ERR_OK && (*marks = calloc(m->n > 0 ? m->n : 1, 1)) == NULL)
        rc = err_set(e, ERR_NOMEM, "", "out of memory");
    return rc;
}

/* Splits each activation the patterns select (whatif.h), once, after counting the tensors
 * it adds against the limit; m holds the lifetimes of the original. */
static int apply_remat(struct edit *ed, const char *key, json_object *v, struct err *e)
{
    const struct plan_limits *l = ed->lim;
    struct model m;
    uint8_t *split = NULL;
    size_t nsplit = 0, n;
    int rc;

    if ((rc = current_model(ed, key, &m, &split, e)) != ERR_OK)
        goto out;
    n = m.n;
    if ((rc = remat_select(ed, &m, v, split, &nsplit, e)) != ERR_OK)
        goto out;
    if (nsplit > l->max_tensors - n) { /* n <= max_tensors: the parse held it there */
        rc = err_set(e, ERR_LIMIT, "overrides.remat",
                     "overrides.%s: rematerialising %zu activations makes %zu tensors; the "
                     "limit is %zu",
                     key, nsplit, n + nsplit, l->max_tensors);
        goto out;
    }
    for (size_t i = 0; i < n && rc == ERR_OK; i++)
        if (split[i])
            rc = remat_split(ed, &m, i, e);
    ed->out->matched += nsplit;
    ed->grew = nsplit > 0 ? "remat" : ed->grew;
out:
    free(split);
    model_free(&m);
    return rc;
}

enum { SPACE_KEEP, SPACE_DEVICE, SPACE_HOST };

/* Whether mt, in host memory, is offloaded (split in three) rather than moved whole: an
 * activation saved past the step after its producer's (whatif.h). */
static bool offloads(const struct model_tensor *mt)
{
    return mt->kind == TENSOR_ACTIVATION && mt->live_end - mt->live_start > 2;
}

/* Activation i of m offloaded (whatif.h): in HBM at its producing step, "<name>/host" in host
 * memory over its life, "<name>/from_host" back in HBM for its last use. */
static int offload_split(struct edit *ed, const struct model *m, size_t i, struct err *e)
{
    const struct model_tensor *mt = &m->tensors[i];
    int rc;

    if ((rc = add_copy(ed, mt, i, WHATIF_HOST_SUFFIX, mt->live_start, mt->live_end, "host", e)) !=
            ERR_OK ||
        (rc = add_copy(ed, mt, i, WHATIF_FETCH_SUFFIX, mt->live_end - 1, mt->live_end, "device",
                       e)) != ERR_OK)
        return rc;
    json_object_object_del(json_object_array_get_idx(ed->tensors, i), "memory_space");
    return keep_first_step(ed, mt, i, e);
}

/* Marks in to[] the space each tensor of m takes: the last pattern of map that selects it
 * wins; a pattern that selects no tensor is refused. */
static int space_select(struct edit *ed, const struct model *m, json_object *map, uint8_t *to,
                        struct err *e)
{
    JSONR_FOREACH(map, it, end)
    {
        const char *pattern = JSONR_KEY(it);
        uint8_t sp = strcmp(json_object_get_string(JSONR_VAL(it)), "device") == 0 ? SPACE_DEVICE
                                                                                  : SPACE_HOST;
        size_t hits = 0;
        for (size_t i = 0; i < m->n; i++)
            if (selects(json_object_array_get_idx(ed->tensors, i), pattern)) {
                to[i] = sp;
                hits++;
            }
        if (hits == 0) {
            char where[ERR_WHERE_MAX];
            snprintf(where, sizeof(where), "overrides.memory_space.%.100s", pattern);
            return no_match(e, where, pattern, "tensor");
        }
        ed->out->matched += hits;
    }
    return ERR_OK;
}

/* memory_space: {pattern: space} (whatif.h). The tensors an offload adds are counted
 * against the limit before any is made. */
static int apply_space(struct edit *ed, const char *key, json_object *map, struct err *e)
{
    const struct plan_limits *l = ed->lim;
    struct model m;
    uint8_t *to = NULL;
    size_t nsplit = 0, n;
    int rc;

    if ((rc = current_model(ed, key, &m, &to, e)) != ERR_OK)
        goto out;
    n = m.n;
    if ((rc = space_select(ed, &m, map, to, e)) != ERR_OK)
        goto out;
    for (size_t i = 0; i < n; i++)
        nsplit += to[i] == SPACE_HOST && offloads(&m.tensors[i]);
    if (nsplit > (l->max_tensors - n) / 2) { /* n <= max_tensors: the parse held it there */
        rc = err_set(e, ERR_LIMIT, "overrides.memory_space",
                     "overrides.%s: offloading %zu activations makes %zu tensors; the limit is "
                     "%zu",
                     key, nsplit, n + 2 * nsplit, l->max_tensors);
        goto out;
    }
    for (size_t i = 0; i < n && rc == ERR_OK; i++) {
        json_object *t = json_object_array_get_idx(ed->tensors, i);
        if (to[i] == SPACE_DEVICE)
            json_object_object_del(t, "memory_space");
        else if (to[i] == SPACE_HOST && offloads(&m.tensors[i]))
            rc = offload_split(ed, &m, i, e);
        else if (to[i] == SPACE_HOST && m.tensors[i].kind != TENSOR_ACTIVATION)
            json_object_object_add(t, "memory_space", json_object_new_string("host"));
        /* an activation used only where it is made stays in HBM */
    }
    ed->grew = nsplit > 0 ? "memory_space" : ed->grew;
out:
    free(to);
    model_free(&m);
    return rc;
}

/* ---- the table ---- */

static const struct rule {
    const char *key;
    int (*check)(json_object *v, const char *key, size_t *patterns, struct err *e);
    int (*apply)(struct edit *ed, const char *key, json_object *v, struct err *e);
} rules[] = {
    {"chip", check_option, apply_option},     {"strategies", check_option, apply_option},
    {"budget", check_option, apply_option},   {"name", check_option, apply_option},
    {"dtype", check_map, apply_map},          {"mesh", check_mesh, apply_mesh},
    {"sharding", check_map, apply_map},       {"remat", check_remat, apply_remat},
    {"xla_shape", check_map, apply_map},      {"recipe", check_recipe, apply_recipe},
    {"memory_space", check_map, apply_space},
};

static const struct rule *rule_find(const char *key)
{
    for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        if (strcmp(rules[i].key, key) == 0)
            return &rules[i];
    return NULL;
}

/* Parses and checks the overrides into *ov (the caller puts it, whatever this returns),
 * noting in out what the options among them say. */
static int load_overrides(const char *overrides, size_t olen, const struct plan_limits *lim,
                          struct whatif_result *out, json_object **ov, struct err *e)
{
    size_t patterns = 0;
    int rc;

    *ov = NULL;
    if (olen > WHATIF_MAX_OVERRIDES)
        return err_set(e, ERR_LIMIT, "overrides", "overrides: more than %d bytes",
                       WHATIF_MAX_OVERRIDES);
    if ((rc = jsonr_load(overrides, olen, WHATIF_MAX_DEPTH, "overrides", ov, e)) != ERR_OK)
        return rc;
    if (!json_object_is_type(*ov, json_type_object))
        return err_set(e, ERR_INVALID, "overrides", "overrides: must be a JSON object");
    JSONR_FOREACH(*ov, it, end)
    {
        const struct rule *r = rule_find(JSONR_KEY(it));
        if (r == NULL)
            return bad(e, JSONR_KEY(it), NULL,
                       "unknown override (known: chip, strategies, budget, name, dtype, mesh, "
                       "sharding, remat, xla_shape, memory_space, recipe)");
        if ((rc = r->check(JSONR_VAL(it), r->key, &patterns, e)) != ERR_OK)
            return rc;
        if (r->check == check_option)
            note_option(out, r->key, JSONR_VAL(it));
    }
    if (patterns > lim->max_patterns)
        return err_set(e, ERR_LIMIT, "overrides",
                       "overrides: %zu patterns; the limit is %zu in all (dtype, sharding, "
                       "remat, xla_shape and memory_space together)",
                       patterns, lim->max_patterns);
    return ERR_OK;
}

static const struct plan_limits *limits_or_default(const struct plan_limits *lim,
                                                   struct plan_limits *defaults)
{
    if (lim != NULL)
        return lim;
    plan_limits_default(defaults);
    return defaults;
}

int whatif_check(const char *overrides, size_t olen, const struct plan_limits *lim,
                 struct whatif_result *out, struct err *e)
{
    struct plan_limits defaults;
    struct whatif_result none;
    json_object *ov = NULL;
    int rc;

    if (out == NULL)
        out = &none;
    memset(out, 0, sizeof(*out));
    rc = load_overrides(overrides, olen, limits_or_default(lim, &defaults), out, &ov, e);
    json_object_put(ov);
    return rc;
}

/* The edited model printed into out->model, held to the input limit. */
static int print_model(struct edit *ed, struct err *e)
{
    struct whatif_result *out = ed->out;
    size_t n = 0;
    const char *text;

    json_object_object_add(ed->root, "name", json_object_new_string(out->name));
    text = json_object_to_json_string_length(
        ed->root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    if (text == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory writing the model");
    if (n > ed->lim->max_input_bytes) {
        char where[32];
        snprintf(where, sizeof(where), "overrides%s%s", ed->grew != NULL ? "." : "",
                 ed->grew != NULL ? ed->grew : "");
        return err_set(e, ERR_LIMIT, where, "%s: the new model is %zu bytes; the limit is %zu",
                       where, n, ed->lim->max_input_bytes);
    }
    if ((out->model = malloc(n + 1)) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory writing the model");
    memcpy(out->model, text, n + 1);
    out->model_len = n;
    return ERR_OK;
}

/* The new recipe read as a whole (a mesh or a name an override set is checked with the rest):
 * an error names overrides, and the model is dropped. */
static int check_recipe_text(struct whatif_result *out, struct err *e)
{
    struct recipe *r = NULL;
    int rc = recipe_parse(out->model, out->model_len, &r, e);

    recipe_free(r);
    if (rc == ERR_OK)
        return ERR_OK;
    err_prefix(e, "overrides", "overrides: the new recipe: ");
    free(out->model);
    out->model = NULL;
    out->model_len = 0;
    return rc;
}

int whatif_apply(const char *model, size_t len, const char *overrides, size_t olen,
                 const struct plan_limits *lim, struct whatif_result *out, struct err *e)
{
    struct plan_limits defaults;
    struct edit ed;
    json_object *ov = NULL, *name;
    int rc;

    memset(out, 0, sizeof(*out));
    ed = (struct edit){limits_or_default(lim, &defaults), NULL, NULL, out, NULL};
    if ((rc = load_overrides(overrides, olen, ed.lim, out, &ov, e)) != ERR_OK)
        goto out;
    if ((rc = jsonr_load(model, len, ed.lim->max_json_depth, "model", &ed.root, e)) != ERR_OK)
        goto out;
    ed.tensors = member(ed.root, "tensors");
    out->recipe = ed.tensors == NULL && member(ed.root, "model") != NULL;
    if (!json_object_is_type(ed.root, json_type_object) ||
        (!out->recipe && !json_object_is_type(ed.tensors, json_type_array))) {
        rc = err_set(e, ERR_INVALID, "tensors",
                     "a what-if needs a native JSON model description with a tensors array, "
                     "or a recipe");
        goto out;
    }
    name = member(ed.root, "name");
    if (out->name[0] == '\0')
        snprintf(out->name, sizeof(out->name), "%.100s (what-if)",
                 json_object_is_type(name, json_type_string) ? json_object_get_string(name)
                                                             : "model");
    JSONR_FOREACH(ov, it, end)
    {
        const struct rule *r = rule_find(JSONR_KEY(it));
        if ((rc = r->apply(&ed, r->key, JSONR_VAL(it), e)) != ERR_OK)
            goto out;
    }
    if ((rc = print_model(&ed, e)) == ERR_OK && out->recipe)
        rc = check_recipe_text(out, e);
out:
    json_object_put(ed.root);
    json_object_put(ov);
    return rc;
}
