/*
 * recipe.c - a recipe (recipe.h): the document parsed, its model config resolved (a
 * config.json, or a preset with overrides), its fields checked (recipe_fields.c), edited
 * (a path set, a JSON Merge Patch) and written back; detection and the importer; and the
 * result's "recipe" section: the recipe as planned, bytes per category, every pipeline
 * stage's figures.
 *
 * An edit is made on a copy of the document, which is then read as a whole: the recipe a
 * caller holds is always one that read without error.
 */
#include "planner/recipe.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/jsonr.h"
#include "planner/import/recipe_int.h"
#include "planner/model/model_build.h"

#define RECIPE_MAX_PATH 8 /* components of a recipe_set path */

static const char *const top_keys[] = {"name", "chip",        "model",   "train", "serve",
                                       "mesh", "parallelism", "options", NULL};

/* ---- reading a document ------------------------------------------------------------------------
 */

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;

    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v
                                                                                             : NULL;
}

static int preset_config(json_object *model, const char *name, json_object **config,
                         const struct recipe_preset **preset, struct err *e)
{
    char known[1024];
    size_t n = 0;
    int rc;

    if ((*preset = recipe_preset_find(name)) == NULL) {
        for (size_t i = 0; i < recipe_preset_count(); i++)
            n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "",
                                  recipe_preset_at(i)->name);
        return err_set(e, ERR_NOTFOUND, "model.preset",
                       "model.preset: unknown preset \"%.60s\" (known: %s)", name, known);
    }
    if ((rc = jsonr_load((*preset)->config, strlen((*preset)->config), RECIPE_MAX_DEPTH, "preset",
                         config, e)) != ERR_OK)
        return rc;
    /* the model's other keys override the preset's config */
    if (json_object_is_type(model, json_type_object)) {
        JSONR_FOREACH(model, it, end)
        if (strcmp(JSONR_KEY(it), "preset") != 0)
            json_object_object_add(*config, JSONR_KEY(it), json_object_get(JSONR_VAL(it)));
    }
    return ERR_OK;
}

/* The config the model's sizes are read from: the preset's with overrides, or the model
 * object itself; a multimodal wrapper's text_config when it has no sizes of its own. */
static int resolve_config(json_object *root, struct recipe *r, struct err *e)
{
    json_object *model = member(root, "model"), *p = member(model, "preset"), *text;

    if (model == NULL)
        return err_set(e, ERR_INVALID, "model",
                       "recipe: \"model\" is required: a Hugging Face config.json object, or "
                       "{\"preset\": NAME}");
    if (json_object_is_type(model, json_type_string))
        return preset_config(NULL, json_object_get_string(model), &r->config, &r->preset, e);
    if (p != NULL) {
        if (!json_object_is_type(p, json_type_string))
            return err_set(e, ERR_INVALID, "model.preset", "model.preset: must be a name");
        return preset_config(model, json_object_get_string(p), &r->config, &r->preset, e);
    }
    text = member(model, "text_config");
    if (member(model, "hidden_size") == NULL && member(model, "n_embd") == NULL &&
        json_object_is_type(text, json_type_object)) {
        r->config = json_object_get(text);
        return ERR_OK;
    }
    r->config = json_object_get(model);
    return ERR_OK;
}

static int read_strings(json_object *root, struct recipe *r, struct err *e)
{
    json_object *v;

    JSONR_FOREACH(root, it, end)
    if (!jsonr_key_allowed(JSONR_KEY(it), top_keys))
        return err_set(e, ERR_INVALID, "recipe",
                       "recipe: unknown field \"%.60s\" (known: name, chip, model, train, serve, "
                       "mesh, parallelism, options)",
                       JSONR_KEY(it));
    if ((v = member(root, "name")) != NULL) {
        if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 ||
            json_object_get_string_len(v) >= (int)sizeof(r->name))
            return err_set(e, ERR_INVALID, "name", "name: must be a string of 1 to %zu bytes",
                           sizeof(r->name) - 1);
        snprintf(r->name, sizeof(r->name), "%s", json_object_get_string(v));
    }
    if ((v = member(root, "chip")) != NULL) {
        if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 ||
            json_object_get_string_len(v) >= (int)sizeof(r->chip))
            return err_set(e, ERR_INVALID, "chip", "chip: must be a chip's name");
        snprintf(r->chip, sizeof(r->chip), "%s", json_object_get_string(v));
    }
    return ERR_OK;
}

static void default_name(struct recipe *r)
{
    const char *who = r->preset != NULL ? r->preset->name : r->arch.family->model_type;

    if (r->name[0] != '\0')
        return;
    if (r->is_train)
        snprintf(r->name, sizeof(r->name), "%s train b%lld s%lld", who, (long long)r->t.batch,
                 (long long)r->t.seq);
    else
        snprintf(r->name, sizeof(r->name), "%s serve %lldx%lld", who, (long long)r->s.sequences,
                 (long long)r->s.context);
}

/* Reads root (a reference is taken) into *r, from scratch. */
static int load(json_object *root, struct recipe *r, struct err *e)
{
    int rc;

    memset(r, 0, sizeof(*r));
    if (!json_object_is_type(root, json_type_object))
        return err_set(e, ERR_INVALID, "", "recipe: must be a JSON object, got %s",
                       jsonr_type_name(root));
    r->root = json_object_get(root);
    if ((rc = read_strings(root, r, e)) != ERR_OK || (rc = resolve_config(root, r, e)) != ERR_OK ||
        (rc = recipe_arch_read(r->config, &r->arch, e)) != ERR_OK ||
        (rc = recipe_arch_params(&r->arch, &r->params, e)) != ERR_OK ||
        (rc = recipe_fields_read(root, r, e)) != ERR_OK)
        return rc;
    default_name(r);
    return ERR_OK;
}

static void release(struct recipe *r)
{
    json_object_put(r->root);
    json_object_put(r->config);
    r->root = r->config = NULL;
}

void recipe_free(struct recipe *r)
{
    if (r == NULL)
        return;
    release(r);
    free(r);
}

int recipe_parse(const char *text, size_t len, struct recipe **out, struct err *e)
{
    json_object *root = NULL;
    struct recipe *r;
    int rc;

    *out = NULL;
    if (len > RECIPE_MAX_INPUT)
        return err_set(e, ERR_LIMIT, "", "recipe: %zu bytes; the limit is %u", len,
                       RECIPE_MAX_INPUT);
    if ((rc = jsonr_load(text, len, RECIPE_MAX_DEPTH, "recipe", &root, e)) != ERR_OK)
        return rc;
    if ((r = calloc(1, sizeof(*r))) == NULL) {
        json_object_put(root);
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    }
    rc = load(root, r, e);
    json_object_put(root);
    if (rc != ERR_OK) {
        recipe_free(r);
        return rc;
    }
    *out = r;
    return ERR_OK;
}

uint64_t recipe_param_count(const struct recipe *r)
{
    return r->params;
}

/* ---- edits
 * ---------------------------------------------------------------------------------------- */

/* Splits path ("train.optimizer.name") into parts[*n] inside buf (cap bytes); false when it
 * is not dot-separated names at most RECIPE_MAX_PATH deep. */
static bool path_split(const char *path, char *buf, size_t cap, char **parts, size_t *n)
{
    char *save = NULL;

    *n = 0;
    if (snprintf(buf, cap, "%s", path) >= (int)cap || path[0] == '\0' || path[0] == '.' ||
        path[strlen(path) - 1] == '.' || strstr(path, "..") != NULL)
        return false;
    for (char *p = strtok_r(buf, ".", &save); p != NULL; p = strtok_r(NULL, ".", &save)) {
        if (*n == RECIPE_MAX_PATH)
            return false;
        parts[(*n)++] = p;
    }
    return *n > 0;
}

static int bad_path(const char *path, struct err *e)
{
    return err_set(e, ERR_INVALID, "path",
                   "path: \"%.100s\" must be dot-separated field names (\"train.batch\"), at most "
                   "%d deep",
                   path, RECIPE_MAX_PATH);
}

/* Fields a string may stand for: "model": "gpt2" is {"preset": "gpt2"}, "optimizer": "lion"
 * is {"name": "lion"}. An edit below one makes it the object it stands for. */
static const struct {
    const char *path, *key;
} shorthands[] = {
    {"model", "preset"},
    {"train.optimizer", "name"},
};

/* The object a string at prefix (the path up to and including it) stands for; NULL when
 * prefix is no shorthand's. */
static json_object *shorthand_object(const char *prefix, json_object *str)
{
    for (size_t i = 0; i < sizeof(shorthands) / sizeof(shorthands[0]); i++)
        if (strcmp(prefix, shorthands[i].path) == 0) {
            json_object *o = json_object_new_object();
            if (o != NULL)
                json_object_object_add(o, shorthands[i].key, json_object_get(str));
            return o;
        }
    return NULL;
}

/* A mesh axis is one key whatever its name: setting "mesh.sequence" drops a "context". */
static void mesh_drop_aliases(json_object *mesh, const char *axis)
{
    int a = recipe_axis_find(axis);
    const char *other = NULL;

    if (a < 0)
        return;
    JSONR_FOREACH(mesh, it, end)
    if (strcmp(JSONR_KEY(it), axis) != 0 && recipe_axis_find(JSONR_KEY(it)) == a)
        other = JSONR_KEY(it);
    if (other != NULL)
        json_object_object_del(mesh, other);
}

/* Sets path in the tree root (objects made as needed; value NULL removes). value is taken
 * (its reference moves to the tree). */
static int tree_set(json_object *root, const char *path, json_object *value, struct err *e)
{
    char buf[256], prefix[256], *parts[RECIPE_MAX_PATH];
    size_t n = 0;
    json_object *o = root;

    if (!path_split(path, buf, sizeof(buf), parts, &n)) {
        json_object_put(value);
        return bad_path(path, e);
    }
    for (size_t i = 0; i + 1 < n; i++) {
        json_object *next = member(o, parts[i]), *full;
        /* the path up to parts[i], as given */
        snprintf(prefix, sizeof(prefix), "%.*s", (int)(parts[i] - buf + strlen(parts[i])), path);
        if (next == NULL || json_object_is_type(next, json_type_null)) {
            next = json_object_new_object();
            json_object_object_add(o, parts[i], next);
        } else if (json_object_is_type(next, json_type_string) &&
                   (full = shorthand_object(prefix, next)) != NULL) {
            json_object_object_add(o, parts[i], full);
            next = full;
        }
        if (!json_object_is_type(next, json_type_object)) {
            json_object_put(value);
            return err_set(e, ERR_INVALID, path, "%s: \"%s\" is not an object", path, parts[i]);
        }
        o = next;
    }
    if (n == 2 && strcmp(parts[0], "mesh") == 0)
        mesh_drop_aliases(o, parts[1]);
    if (value == NULL)
        json_object_object_del(o, parts[n - 1]);
    else
        json_object_object_add(o, parts[n - 1], value);
    return ERR_OK;
}

/* value as JSON when it is JSON, else as a string. *v NULL for null. The text is read
 * inside brackets: json-c's tokener cannot tell a bare number at the end of its input from
 * one cut short. */
static int edit_value(const char *value, json_object **v, struct err *e)
{
    struct err ignored;
    json_object *j = NULL;
    char buf[4100];

    if (strlen(value) > 4096)
        return err_set(e, ERR_LIMIT, "value", "value: more than 4096 bytes");
    snprintf(buf, sizeof(buf), "[%s]", value);
    if (jsonr_load(buf, strlen(buf), 8, "value", &j, &ignored) == ERR_OK &&
        json_object_array_length(j) == 1) {
        *v = json_object_get(json_object_array_get_idx(j, 0));
        json_object_put(j);
        return ERR_OK;
    }
    json_object_put(j);
    *v = json_object_new_string(value);
    return *v != NULL ? ERR_OK : err_set(e, ERR_NOMEM, "value", "value: out of memory");
}

/* Reads the edited tree into *r, replacing it only when it reads. Takes root's reference. */
static int replace(struct recipe *r, json_object *root, struct err *e)
{
    struct recipe next;
    int rc = load(root, &next, e);

    json_object_put(root);
    if (rc != ERR_OK) {
        release(&next);
        return rc;
    }
    release(r);
    *r = next;
    return ERR_OK;
}

int recipe_set(struct recipe *r, const char *path, const char *value, struct err *e)
{
    json_object *copy = NULL, *v = NULL;
    int rc;

    if ((rc = edit_value(value, &v, e)) != ERR_OK)
        return rc;
    if (json_object_deep_copy(r->root, &copy, NULL) != 0) {
        json_object_put(v);
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    }
    if ((rc = tree_set(copy, path, v, e)) != ERR_OK) {
        json_object_put(copy);
        return rc;
    }
    return replace(r, copy, e);
}

/* RFC 7386: an object patch merges member by member (null removes), anything else
 * replaces. Returns the merged value (target's reference is consumed). */
static json_object *merge_patch(json_object *target, json_object *patch)
{
    if (!json_object_is_type(patch, json_type_object)) {
        json_object_put(target);
        return json_object_get(patch);
    }
    if (!json_object_is_type(target, json_type_object)) {
        json_object_put(target);
        target = json_object_new_object();
    }
    JSONR_FOREACH(patch, it, end)
    {
        json_object *v = JSONR_VAL(it), *cur = member(target, JSONR_KEY(it));
        if (json_object_is_type(v, json_type_null)) {
            json_object_object_del(target, JSONR_KEY(it));
            continue;
        }
        json_object_object_add(target, JSONR_KEY(it), merge_patch(json_object_get(cur), v));
    }
    return target;
}

int recipe_merge(struct recipe *r, const char *patch, size_t len, struct err *e)
{
    json_object *p = NULL, *copy = NULL;
    int rc;

    if (len > RECIPE_MAX_INPUT)
        return err_set(e, ERR_LIMIT, "recipe", "recipe: the patch is more than %u bytes",
                       RECIPE_MAX_INPUT);
    if ((rc = jsonr_load(patch, len, RECIPE_MAX_DEPTH, "recipe", &p, e)) != ERR_OK)
        return rc;
    if (json_object_deep_copy(r->root, &copy, NULL) != 0) {
        json_object_put(p);
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    }
    copy = merge_patch(copy, p);
    json_object_put(p);
    return replace(r, copy, e);
}

static int to_text(json_object *root, char **text, size_t *len, struct err *e)
{
    const char *s = json_object_to_json_string_ext(
        (json_object *)root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

    *len = s != NULL ? strlen(s) : 0;
    if (s == NULL || (*text = strdup(s)) == NULL)
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory writing it");
    return ERR_OK;
}

int recipe_text(const struct recipe *r, char **text, size_t *len, struct err *e)
{
    *text = NULL;
    return to_text(r->root, text, len, e);
}

/* ---- detection ---------------------------------------------------------------------------------
 */

enum { K_MODEL = 1, K_TRAIN = 2, K_SERVE = 4, K_ARCH = 8, K_TENSORS = 16 };

/* Skips a JSON string at s[*i] == '"'. */
static bool skip_string(const char *s, size_t len, size_t *i)
{
    for ((*i)++; *i < len; (*i)++) {
        if (s[*i] == '\\')
            (*i)++;
        else if (s[*i] == '"') {
            (*i)++;
            return true;
        }
    }
    return false;
}

/* Skips one value (bracket depth counted, strings skipped) to the ',' or '}' after it. */
static bool skip_value(const char *s, size_t len, size_t *i)
{
    int depth = 0;

    while (*i < len) {
        char ch = s[*i];
        if (ch == '"') {
            if (!skip_string(s, len, i))
                return false;
            continue;
        }
        if (depth == 0 && (ch == ',' || ch == '}'))
            return true;
        depth += (ch == '{' || ch == '[') - (ch == '}' || ch == ']');
        if (depth < 0)
            return false;
        (*i)++;
    }
    return false;
}

static unsigned key_bit(const char *k, size_t n)
{
    static const struct {
        const char *key;
        unsigned bit;
    } keys[] = {{"model", K_MODEL},        {"train", K_TRAIN},     {"serve", K_SERVE},
                {"architectures", K_ARCH}, {"model_type", K_ARCH}, {"tensors", K_TENSORS}};

    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strlen(keys[i].key) == n && memcmp(keys[i].key, k, n) == 0)
            return keys[i].bit;
    return 0;
}

/* The top-level keys of a JSON object, read without parsing it (a native model's long tensors
 * array is never walked: its key ends the scan). */
static unsigned scan_keys(const char *s, size_t len)
{
    size_t i = 0;
    unsigned found = 0;

    if (len > RECIPE_MAX_INPUT)
        len = RECIPE_MAX_INPUT;
#define WS()                                                                                       \
    while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))               \
    i++
    WS();
    if (i >= len || s[i++] != '{')
        return 0;
    for (;;) {
        size_t k0;
        WS();
        if (i >= len || s[i] != '"')
            return found;
        k0 = i + 1;
        if (!skip_string(s, len, &i))
            return found;
        found |= key_bit(s + k0, i - 1 - k0);
        if (found & K_TENSORS)
            return found;
        WS();
        if (i >= len || s[i++] != ':' || !skip_value(s, len, &i) || s[i] == '}')
            return found;
        i++; /* the comma */
    }
#undef WS
}

bool recipe_detect(const char *s, size_t len)
{
    unsigned k = scan_keys(s, len);

    if (k & K_TENSORS)
        return false;
    return ((k & K_MODEL) && (k & (K_TRAIN | K_SERVE))) || (!(k & K_MODEL) && (k & K_ARCH));
}

/* ---- composing
 * ------------------------------------------------------------------------------------ */

static int as_recipe(const char *input, size_t len, json_object **root, struct err *e)
{
    json_object *in = NULL;
    int rc;

    if (len > RECIPE_MAX_INPUT)
        return err_set(e, ERR_LIMIT, "", "recipe: %zu bytes; the limit is %u", len,
                       RECIPE_MAX_INPUT);
    if ((rc = jsonr_load(input, len, RECIPE_MAX_DEPTH, "recipe", &in, e)) != ERR_OK)
        return rc;
    if (member(in, "model") != NULL) {
        *root = in;
        return ERR_OK;
    }
    if (member(in, "architectures") == NULL && member(in, "model_type") == NULL) {
        json_object_put(in);
        return err_set(e, ERR_INVALID, "",
                       "recipe: the input is neither a recipe (with \"model\") nor a Hugging Face "
                       "config.json (with \"architectures\" or \"model_type\")");
    }
    *root = json_object_new_object();
    json_object_object_add(*root, "model", in);
    return ERR_OK;
}

int recipe_compose(const char *input, size_t len, const struct recipe_edit *edits, size_t n,
                   char **text, size_t *text_len, struct err *e)
{
    json_object *root = NULL, *v = NULL;
    struct recipe r;
    int rc;

    *text = NULL;
    *text_len = 0;
    if ((rc = as_recipe(input, len, &root, e)) != ERR_OK)
        return rc;
    for (size_t i = 0; i < n && rc == ERR_OK; i++)
        if ((rc = edit_value(edits[i].value, &v, e)) == ERR_OK)
            rc = tree_set(root, edits[i].path, v, e);
    if (rc == ERR_OK)
        rc = load(root, &r, e);
    else
        memset(&r, 0, sizeof(r));
    if (rc == ERR_OK)
        rc = to_text(root, text, text_len, e);
    release(&r);
    json_object_put(root);
    return rc;
}

/* ---- the model and the result's section ---------------------------------------------------------
 */

static void add_i64(json_object *o, const char *k, int64_t v)
{
    json_object_object_add(o, k, json_object_new_int64(v));
}

static json_object *model_echo(const struct recipe *r)
{
    const struct recipe_arch *a = &r->arch;
    json_object *o = json_object_new_object();
    int64_t moe = 0, sliding = 0;

    for (int64_t l = 0; l < a->layers; l++) {
        moe += (a->layer[l] & RL_MOE) != 0;
        sliding += (a->layer[l] & RL_SLIDING) != 0;
    }
    json_object_object_add(o, "preset",
                           r->preset != NULL ? json_object_new_string(r->preset->name) : NULL);
    json_object_object_add(o, "family", json_object_new_string(a->family->model_type));
    json_object_object_add(o, "architecture", json_object_new_string(a->family->architecture));
    json_object_object_add(o, "parameters", json_object_new_int64((int64_t)r->params));
    json_object_object_add(o, "published_parameters",
                           r->preset != NULL && r->preset->published_params != 0
                               ? json_object_new_int64((int64_t)r->preset->published_params)
                               : NULL);
    add_i64(o, "layers", a->layers);
    add_i64(o, "hidden_size", a->dim[RD_HIDDEN]);
    add_i64(o, "heads", a->dim[RD_HEADS]);
    if (a->features & RF_GQA) {
        add_i64(o, "kv_heads", a->dim[RD_KV_HEADS]);
        add_i64(o, "head_dim", a->dim[RD_HEAD_DIM]);
    }
    add_i64(o, "intermediate_size", a->dim[RD_INTER]);
    add_i64(o, "vocab_size", a->dim[RD_VOCAB]);
    json_object_object_add(o, "tied_embeddings", json_object_new_boolean(a->features & RF_TIED));
    if (a->features & RF_MOE) {
        add_i64(o, "experts", a->dim[RD_EXPERTS]);
        add_i64(o, "experts_per_token", a->top_k);
        add_i64(o, "moe_layers", moe);
    }
    if (a->sliding_window > 0) {
        add_i64(o, "sliding_window", a->sliding_window);
        add_i64(o, "sliding_layers", sliding);
    }
    return o;
}

static json_object *mesh_echo(const struct recipe *r, int64_t *devices)
{
    json_object *o = json_object_new_object();

    *devices = 1;
    for (unsigned ax = 0; ax < AX_COUNT; ax++)
        if (r->mesh[ax] > 0) {
            add_i64(o, recipe_axis_name((enum recipe_axis)ax), r->mesh[ax]);
            if (ax != AX_PIPELINE)
                *devices *= r->mesh[ax];
        }
    return o;
}

static json_object *parallelism_echo(const struct recipe *r)
{
    json_object *o = json_object_new_object(), *rules = json_object_new_object();

    json_object_object_add(o, "pipeline", r->stages > 1 ? recipe_pipeline_echo(r) : NULL);
    for (unsigned la = 1; la < LA_COUNT; la++) {
        json_object *axes = json_object_new_array();
        for (unsigned k = 0; k < r->rules[la].n; k++)
            json_object_array_add(axes, json_object_new_string(recipe_axis_name(
                                            (enum recipe_axis)r->rules[la].axes[k])));
        json_object_object_add(rules, recipe_laxis_name((enum recipe_laxis)la), axes);
    }
    json_object_object_add(o, "rules", rules);
    return o;
}

static json_object *bytes_echo(const struct recipe_stage *st)
{
    json_object *o = json_object_new_object();

    for (unsigned c = 0; c < CAT_COUNT; c++) {
        json_object *b;
        if (st->cat[c].count == 0)
            continue;
        b = json_object_new_object();
        add_i64(b, "count", (int64_t)st->cat[c].count);
        add_i64(b, "logical_bytes", (int64_t)st->cat[c].logical);
        add_i64(b, "padded_bytes", (int64_t)st->cat[c].padded);
        json_object_object_add(o, recipe_cat_name((enum recipe_cat)c), b);
    }
    return o;
}

static json_object *stages_echo(const struct recipe *r, const struct recipe_stage *st,
                                int64_t worst)
{
    json_object *o = json_object_new_object(), *arr = json_object_new_array();

    add_i64(o, "planned_stage", worst);
    for (int64_t k = 0; k < r->stages; k++) {
        json_object *s = json_object_new_object(), *layers = json_object_new_array();
        json_object_array_add(layers, json_object_new_int64(st[k].first_layer));
        json_object_array_add(layers, json_object_new_int64(st[k].first_layer + st[k].layers));
        add_i64(s, "stage", k);
        json_object_object_add(s, "layers", layers);
        add_i64(s, "in_flight_microbatches", st[k].in_flight);
        add_i64(s, "live_peak_bytes", (int64_t)st[k].live_peak);
        add_i64(s, "padded_bytes", (int64_t)st[k].total_padded);
        add_i64(s, "host_offloaded_bytes", (int64_t)st[k].host_bytes);
        add_i64(s, "tensors", (int64_t)st[k].tensors);
        json_object_array_add(arr, s);
    }
    json_object_object_add(o, "stages", arr);
    return o;
}

static json_object *section(const struct recipe *r, const struct recipe_stage *st, int64_t worst)
{
    json_object *o = json_object_new_object();
    int64_t devices;

    json_object_object_add(o, "model", model_echo(r));
    json_object_object_add(o, r->is_train ? "train" : "serve", recipe_fields_echo(r));
    json_object_object_add(o, "mesh", mesh_echo(r, &devices));
    add_i64(o, "devices", devices);
    json_object_object_add(o, "parallelism", parallelism_echo(r));
    if (r->is_train)
        add_i64(o, "tokens_per_step", r->t.batch * r->t.seq);
    json_object_object_add(o, "bytes", bytes_echo(&st[worst]));
    add_i64(o, "host_offloaded_bytes", (int64_t)st[worst].host_bytes);
    add_i64(o, "live_peak_bytes", (int64_t)st[worst].live_peak);
    json_object_object_add(o, "pipeline", r->stages > 1 ? stages_echo(r, st, worst) : NULL);
    return o;
}

/* ---- the catalog --------------------------------------------------------------------------------
 */

/* A preset's entry: its name, URL and the figures of its config as read. */
static int preset_entry(const struct recipe_preset *p, json_object **out, struct err *e)
{
    json_object *config = NULL, *o;
    struct recipe_arch *a = calloc(1, sizeof(*a)); /* a layer table: too big for the stack */
    uint64_t params = 0;
    int rc;

    *out = NULL;
    if (a == NULL)
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    if ((rc = jsonr_load(p->config, strlen(p->config), RECIPE_MAX_DEPTH, "preset", &config, e)) !=
            ERR_OK ||
        (rc = recipe_arch_read(config, a, e)) != ERR_OK ||
        (rc = recipe_arch_params(a, &params, e)) != ERR_OK)
        goto out;
    if ((o = json_object_new_object()) == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "recipe: out of memory");
        goto out;
    }
    json_object_object_add(o, "name", json_object_new_string(p->name));
    json_object_object_add(o, "url", json_object_new_string(p->url));
    json_object_object_add(o, "family", json_object_new_string(a->family->model_type));
    json_object_object_add(o, "architecture", json_object_new_string(a->family->architecture));
    add_i64(o, "parameters", (int64_t)params);
    add_i64(o, "layers", a->layers);
    add_i64(o, "hidden_size", a->dim[RD_HIDDEN]);
    *out = o;
out:
    json_object_put(config);
    free(a);
    return rc;
}

static json_object *families_echo(void)
{
    json_object *arr = json_object_new_array();

    for (size_t i = 0; arr != NULL && i < recipe_family_count(); i++) {
        const struct recipe_family *f = recipe_family_at(i);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "model_type", json_object_new_string(f->model_type));
        json_object_object_add(o, "architecture", json_object_new_string(f->architecture));
        json_object_object_add(o, "label", json_object_new_string(f->label));
        json_object_array_add(arr, o);
    }
    return arr;
}

static json_object *policies_echo(void)
{
    json_object *arr = json_object_new_array();

    for (size_t i = 0; arr != NULL && i < recipe_policy_count(); i++) {
        const struct recipe_policy *p = recipe_policy_at(i);
        json_object *o = json_object_new_object(), *aliases = json_object_new_array();
        for (size_t k = 0; k < 3 && p->aliases[k] != NULL; k++)
            json_object_array_add(aliases, json_object_new_string(p->aliases[k]));
        json_object_object_add(o, "name", json_object_new_string(p->name));
        json_object_object_add(o, "aliases", aliases);
        json_object_object_add(o, "doc", json_object_new_string(p->doc));
        json_object_array_add(arr, o);
    }
    return arr;
}

int recipe_catalog(char **text, size_t *len, struct err *e)
{
    json_object *o = json_object_new_object(), *presets = json_object_new_array(), *p;
    int rc = ERR_OK;

    *text = NULL;
    *len = 0;
    if (o == NULL || presets == NULL) {
        json_object_put(presets);
        rc = err_set(e, ERR_NOMEM, "", "recipe: out of memory");
        goto out;
    }
    json_object_object_add(o, "presets", presets);
    for (size_t i = 0; i < recipe_preset_count(); i++) {
        if ((rc = preset_entry(recipe_preset_at(i), &p, e)) != ERR_OK)
            goto out;
        json_object_array_add(presets, p);
    }
    json_object_object_add(o, "families", families_echo());
    json_object_object_add(o, "remat_policies", policies_echo());
    json_object_object_add(o, "choices", recipe_choices_echo());
    rc = to_text(o, text, len, e);
out:
    json_object_put(o);
    return rc;
}

/* ---- a field as planned ------------------------------------------------------------------------
 */

/* The recipe as planned, one document: the config read, the run's fields with their defaults,
 * every mesh axis (1 when not given), the rules and the pipeline's fields. */
static json_object *planned(const struct recipe *r)
{
    json_object *o = json_object_new_object(), *mesh = json_object_new_object();
    json_object *par = parallelism_echo(r);

    if (o == NULL || mesh == NULL || par == NULL) {
        json_object_put(o);
        json_object_put(mesh);
        json_object_put(par);
        return NULL;
    }
    json_object_object_add(o, "name", json_object_new_string(r->name));
    json_object_object_add(o, "chip", r->chip[0] != '\0' ? json_object_new_string(r->chip) : NULL);
    json_object_object_add(o, "model", json_object_get(r->config));
    json_object_object_add(o, r->is_train ? "train" : "serve", recipe_fields_echo(r));
    for (unsigned ax = 0; ax < AX_COUNT; ax++)
        add_i64(mesh, recipe_axis_name((enum recipe_axis)ax), r->mesh[ax] > 0 ? r->mesh[ax] : 1);
    json_object_object_add(o, "mesh", mesh);
    json_object_object_add(par, "pipeline", recipe_pipeline_echo(r));
    json_object_object_add(o, "parallelism", par);
    json_object_object_add(o, "options", json_object_get(member(r->root, "options")));
    return o;
}

int recipe_get(const struct recipe *r, const char *path, char *buf, size_t cap, struct err *e)
{
    char copy[256], *parts[RECIPE_MAX_PATH];
    size_t n = 0, len;
    json_object *doc, *v;
    const char *text;
    int rc = ERR_OK;

    if (cap > 0)
        buf[0] = '\0';
    if (!path_split(path, copy, sizeof(copy), parts, &n))
        return bad_path(path, e);
    if ((doc = planned(r)) == NULL)
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    if (n == 2 && strcmp(parts[0], "mesh") == 0 && recipe_axis_find(parts[1]) >= 0)
        parts[1] = (char *)recipe_axis_name((enum recipe_axis)recipe_axis_find(parts[1]));
    v = doc;
    for (size_t i = 0; i < n && v != NULL; i++)
        v = member(v, parts[i]);
    if (v == NULL) {
        rc = err_set(e, ERR_NOTFOUND, path, "%.100s: no such field in this recipe", path);
        goto out;
    }
    text =
        json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    len = text != NULL ? strlen(text) : 0;
    if (text == NULL)
        rc = err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    else if (len >= cap)
        rc = err_set(e, ERR_LIMIT, path, "%.100s: its value is %zu bytes, more than the %zu given",
                     path, len, cap);
    else
        memcpy(buf, text, len + 1);
out:
    json_object_put(doc);
    return rc;
}

int recipe_get_int(const struct recipe *r, const char *path, int64_t *v, struct err *e)
{
    char buf[32], *end = buf;
    long long x = 0;
    int rc = recipe_get(r, path, buf, sizeof(buf), e);

    *v = 0;
    if (rc != ERR_OK && rc != ERR_LIMIT) /* a value over 31 bytes is no int64 */
        return rc;
    errno = 0;
    if (rc == ERR_OK)
        x = strtoll(buf, &end, 10);
    if (end == buf || *end != '\0' || errno != 0)
        return err_set(e, ERR_INVALID, path, "%.100s: not a whole number", path);
    *v = x;
    return ERR_OK;
}

static void warnings(const struct recipe *r, const struct recipe_stage *st, int64_t worst,
                     struct model *m)
{
    if (st[worst].host_bytes > 0)
        model_warn(m,
                   "remat policy %s keeps %llu bytes per device of saved activations in host "
                   "memory: not in HBM, so not in this plan (recipe.host_offloaded_bytes); each is "
                   "copied back for its layer's backward",
                   recipe_policy_at(r->t.policy)->name, (unsigned long long)st[worst].host_bytes);
    if (r->stages > 1)
        model_warn(m,
                   "pipeline of %lld stages: planned stage %lld (layers %lld to %lld), the one "
                   "with the most bytes live at once; every stage's figures are in "
                   "recipe.pipeline.stages",
                   (long long)r->stages, (long long)worst, (long long)st[worst].first_layer,
                   (long long)(st[worst].first_layer + st[worst].layers - 1));
    if (r->config != member(r->root, "model") && r->preset == NULL)
        model_warn(m, "the model's text_config was planned; its other towers are not");
}

/* The model's own fields from the recipe: name, chip, options, section. */
static int finish_model(const struct recipe *r, const struct recipe_stage *st, int64_t worst,
                        struct model *m, struct err *e)
{
    char name[sizeof(r->name) + 64];
    json_object *opts = member(r->root, "options");

    if (r->stages > 1)
        snprintf(name, sizeof(name), "%s (stage %lld of %lld)", r->name, (long long)worst,
                 (long long)r->stages);
    else
        snprintf(name, sizeof(name), "%s", r->name);
    m->name = model_strdup(m, name, strlen(name));
    m->chip = r->chip[0] != '\0' ? model_strdup(m, r->chip, strlen(r->chip)) : NULL;
    m->options_json = opts != NULL ? json_object_get(opts) : NULL;
    m->recipe_json = section(r, st, worst);
    if (m->name == NULL || (r->chip[0] != '\0' && m->chip == NULL) || m->recipe_json == NULL)
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    warnings(r, st, worst, m);
    return ERR_OK;
}

int recipe_model(const struct recipe *r, const struct chip *chip, const struct model_limits *l,
                 struct model *m, struct err *e)
{
    struct recipe_stage *st;
    struct model scratch;
    int64_t worst = 0;
    int rc = ERR_OK;

    memset(m, 0, sizeof(*m));
    if (chip == NULL && r->chip[0] != '\0' && (chip = chip_find(r->chip)) == NULL)
        return err_set(e, ERR_NOTFOUND, "chip", "chip: unknown chip \"%.40s\" (known: %s)", r->chip,
                       chip_names());
    if (chip == NULL)
        chip = chip_default();
    if ((st = calloc((size_t)(r->stages > 0 ? r->stages : 1), sizeof(*st))) == NULL)
        return err_set(e, ERR_NOMEM, "", "recipe: out of memory");
    /* every stage made and measured; the one with the most bytes live at once is planned */
    for (int64_t k = 0; k < r->stages && rc == ERR_OK; k++) {
        rc = recipe_stage_model(r, k, chip, l, &scratch, &st[k], e);
        model_free(&scratch);
        if (rc == ERR_OK && st[k].live_peak > st[worst].live_peak)
            worst = k;
    }
    if (rc == ERR_OK)
        rc = recipe_stage_model(r, worst, chip, l, m, NULL, e);
    if (rc == ERR_OK && (rc = finish_model(r, st, worst, m, e)) != ERR_OK)
        model_free(m);
    free(st);
    return rc;
}

int recipe_import(const char *s, size_t len, struct import_ctx *c, struct model *m, struct err *e)
{
    const struct chip *chip = c->chip_given ? c->chip : NULL;
    unsigned k = scan_keys(s, len);
    struct recipe *r = NULL;
    int rc;

    memset(m, 0, sizeof(*m));
    if (!(k & K_MODEL) && (k & K_ARCH))
        return err_set(e, ERR_INVALID, "model",
                       "a Hugging Face config.json alone does not say what to run: wrap it as "
                       "{\"model\": <the config>, \"train\": {\"batch\": 8, \"seq\": 4096}} (or "
                       "\"serve\": {\"sequences\": 64, \"context\": 8192}), or run `tpuplan plan "
                       "config.json --train batch=8,seq=4096` (server/planner/INPUT.md, "
                       "recipes)");
    if ((rc = recipe_parse(s, len, &r, e)) != ERR_OK || r == NULL)
        return rc;
    if (chip == NULL && r->chip[0] == '\0')
        chip = c->chip;
    rc = recipe_model(r, chip, c->limits, m, e);
    recipe_free(r);
    return rc;
}
