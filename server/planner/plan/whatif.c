/*
 * whatif.c - overrides applied to a model description's JSON (whatif.h): the document is
 * parsed with json-c, edited in place and printed again, so every field the overrides do
 * not touch reaches the new plan exactly as written.
 */
#include "planner/model_json.h"
#include "planner/whatif.h"

#include <fnmatch.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/lifetime.h"
#include "planner/model.h"
#include "planner/base/jsonr.h"

#define WHATIF_MAX_OVERRIDES (64 * 1024) /* bytes of overrides */
#define WHATIF_MAX_DEPTH     8

static int bad(struct err *e, const char *key, const char *sub, const char *what)
{
    char where[ERR_WHERE_MAX];

    if (sub != NULL)
        snprintf(where, sizeof(where), "overrides.%s.%.100s", key, sub);
    else
        snprintf(where, sizeof(where), "overrides.%s", key);
    return err_set(e, ERR_INVALID, where, "%s: %s", where, what);
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

/* "dtype" and "sharding": {pattern: value} applied to every tensor selected, in order. */
static int apply_map(json_object *tensors, json_object *map, const char *key,
                     struct whatif_result *out, struct err *e)
{
    size_t n = json_object_array_length(tensors);
    int rc;

    if (!json_object_is_type(map, json_type_object))
        return bad(e, key, NULL, "must be an object of pattern: value");
    JSONR_FOREACH(map, it, end)
    {
        const char *pattern = JSONR_KEY(it);
        json_object *v = JSONR_VAL(it);
        bool is_dtype = strcmp(key, "dtype") == 0;
        if (is_dtype ? !json_object_is_type(v, json_type_string)
                     : !json_object_is_type(v, json_type_array))
            return bad(e, key, pattern, is_dtype ? "must be a dtype name" : "must be an array");
        for (size_t i = 0; i < n; i++) {
            json_object *t = json_object_array_get_idx(tensors, i);
            if (!selects(t, pattern))
                continue;
            out->matched++;
            if (is_dtype && (rc = set_dtype(t, json_object_get_string(v), e)) != ERR_OK)
                return rc;
            if (!is_dtype)
                json_object_object_add(t, "sharding", json_object_get(v));
        }
    }
    return ERR_OK;
}

static int apply_mesh(json_object *root, json_object *map, struct err *e)
{
    json_object *mesh = member(root, "mesh");
    int64_t size;

    if (!json_object_is_type(map, json_type_object))
        return bad(e, "mesh", NULL, "must be an object of axis: size");
    if (!json_object_is_type(mesh, json_type_object)) {
        mesh = json_object_new_object();
        json_object_object_add(root, "mesh", mesh);
    }
    JSONR_FOREACH(map, it, end)
    {
        if (jsonr_int(JSONR_VAL(it), &size) != 0 || size < 1)
            return bad(e, "mesh", JSONR_KEY(it), "must be a whole number of devices >= 1");
        json_object_object_add(mesh, JSONR_KEY(it), json_object_new_int64(size));
    }
    return ERR_OK;
}

/* A live pair [a, b) as a JSON array. */
static json_object *live_new(int64_t a, int64_t b)
{
    json_object *l = json_object_new_array();

    json_object_array_add(l, json_object_new_int64(a));
    json_object_array_add(l, json_object_new_int64(b));
    return l;
}

/* Splits each selected activation (see whatif.h); m holds the lifetimes of the original. */
static int remat_one(json_object *tensors, const struct model *m, const char *pattern,
                     struct whatif_result *out, struct err *e)
{
    size_t n = m->n; /* only the original tensors: the copies are not split again */
    char name[MODEL_MAX_NAME + 16];

    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(tensors, i), *copy = NULL;
        const struct model_tensor *mt = &m->tensors[i];
        if (mt->kind != TENSOR_ACTIVATION || !selects(t, pattern) ||
            mt->live_end - mt->live_start <= 2)
            continue;
        if (json_object_deep_copy(t, &copy, NULL) != 0)
            return err_set(e, ERR_NOMEM, "", "out of memory");
        snprintf(name, sizeof(name), "%s/remat", mt->name);
        json_object_object_add(copy, "name", json_object_new_string(name));
        json_object_object_add(copy, "live", live_new(mt->live_end - 1, mt->live_end));
        json_object_object_add(t, "live", live_new(mt->live_start, mt->live_start + 1));
        json_object_array_add(tensors, copy);
        out->matched++;
    }
    return ERR_OK;
}

static int apply_remat(const char *text, size_t len, const struct plan_limits *l,
                       json_object *tensors, json_object *v, struct whatif_result *out,
                       struct err *e)
{
    struct model_limits ml = {l->max_input_bytes, l->max_json_depth, l->max_tensors, l->max_ops, 0};
    struct model m;
    size_t np;
    int rc;

    if (!json_object_is_type(v, json_type_string) && !json_object_is_type(v, json_type_array))
        return bad(e, "remat", NULL, "must be a pattern or a list of patterns");
    np = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    if ((rc = model_parse_json(text, len, &ml, &m, e)) != ERR_OK)
        return rc;
    if ((rc = lifetime_derive(&m, e)) != ERR_OK)
        goto out;
    for (size_t k = 0; k < np && rc == ERR_OK; k++) {
        json_object *p =
            json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, k) : v;
        if (!json_object_is_type(p, json_type_string)) {
            rc = bad(e, "remat", NULL, "patterns must be strings");
            break;
        }
        rc = remat_one(tensors, &m, json_object_get_string(p), out, e);
    }
out:
    model_free(&m);
    return rc;
}

/* A string override into *dst (cap bytes) or, when dst is NULL, into the model at key. */
static int apply_string(json_object *root, json_object *v, const char *key, char *dst, size_t cap,
                        struct err *e)
{
    if (!json_object_is_type(v, json_type_string) || json_object_get_string_len(v) == 0 ||
        (dst != NULL && (size_t)json_object_get_string_len(v) >= cap))
        return bad(e, key, NULL, "must be a non-empty string (and not too long)");
    if (dst != NULL)
        snprintf(dst, cap, "%s", json_object_get_string(v));
    else
        json_object_object_add(root, key, json_object_get(v));
    return ERR_OK;
}

/* One override key. */
static int apply_key(const char *text, size_t len, const struct plan_limits *l, json_object *root,
                     const char *key, json_object *v, struct whatif_result *out, struct err *e)
{
    json_object *tensors = member(root, "tensors"), *opts;
    struct budget b;

    if (strcmp(key, "chip") == 0) {
        out->chip_set = true;
        return apply_string(root, v, key, NULL, 0, e);
    }
    if (strcmp(key, "strategies") == 0) {
        out->strategies_set = true;
        if (!json_object_is_type(opts = member(root, "options"), json_type_object)) {
            opts = json_object_new_object();
            json_object_object_add(root, "options", opts);
        }
        return apply_string(opts, v, key, NULL, 0, e);
    }
    if (strcmp(key, "budget") == 0)
        return apply_string(root, v, key, out->budget, sizeof(out->budget), e) != ERR_OK
                   ? ERR_INVALID
                   : budget_parse("budget", out->budget, &b, e);
    if (strcmp(key, "name") == 0)
        return apply_string(root, v, key, out->name, sizeof(out->name), e);
    if (strcmp(key, "dtype") == 0 || strcmp(key, "sharding") == 0)
        return apply_map(tensors, v, key, out, e);
    if (strcmp(key, "mesh") == 0)
        return apply_mesh(root, v, e);
    if (strcmp(key, "remat") == 0)
        return apply_remat(text, len, l, tensors, v, out, e);
    return bad(e, key, NULL,
               "unknown override (known: chip, strategies, budget, name, dtype, mesh, sharding, "
               "remat)");
}

int whatif_apply(const char *model, size_t len, const char *overrides, size_t olen,
                 const struct plan_limits *lim, struct whatif_result *out, struct err *e)
{
    struct plan_limits defaults;
    json_object *root = NULL, *ov = NULL, *name;
    const char *text;
    int rc;

    memset(out, 0, sizeof(*out));
    if (lim == NULL) {
        plan_limits_default(&defaults);
        lim = &defaults;
    }
    if (olen > WHATIF_MAX_OVERRIDES)
        return err_set(e, ERR_LIMIT, "overrides", "overrides: more than %d bytes",
                       WHATIF_MAX_OVERRIDES);
    if ((rc = jsonr_load(overrides, olen, WHATIF_MAX_DEPTH, "overrides", &ov, e)) != ERR_OK)
        goto out;
    if (!json_object_is_type(ov, json_type_object)) {
        rc = err_set(e, ERR_INVALID, "overrides", "overrides: must be a JSON object");
        goto out;
    }
    if ((rc = jsonr_load(model, len, lim->max_json_depth, "model", &root, e)) != ERR_OK)
        goto out;
    if (!json_object_is_type(root, json_type_object) ||
        !json_object_is_type(member(root, "tensors"), json_type_array)) {
        rc = err_set(e, ERR_INVALID, "tensors",
                     "a what-if needs a native JSON model description with a tensors array");
        goto out;
    }
    name = member(root, "name");
    snprintf(out->name, sizeof(out->name), "%.100s (what-if)",
             json_object_is_type(name, json_type_string) ? json_object_get_string(name) : "model");
    JSONR_FOREACH(ov, it, end)
    {
        if ((rc = apply_key(model, len, lim, root, JSONR_KEY(it), JSONR_VAL(it), out, e)) != ERR_OK)
            goto out;
    }
    json_object_object_add(root, "name", json_object_new_string(out->name));
    text = json_object_to_json_string_ext(root,
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    out->model_len = text != NULL ? strlen(text) : 0;
    if (text == NULL || (out->model = strdup(text)) == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory writing the model");
        goto out;
    }
    if (out->model_len > lim->max_input_bytes) {
        free(out->model);
        out->model = NULL;
        rc = err_set(e, ERR_LIMIT, "", "the new model is %zu bytes; the limit is %zu",
                     out->model_len, lim->max_input_bytes);
    }
out:
    json_object_put(root);
    json_object_put(ov);
    return rc;
}
