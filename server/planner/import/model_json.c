/*
 * model_json.c - the native JSON model description (model_json.h): the document read with
 * json-c (a long tensors array streamed, its plain elements read without json-c by
 * model_json_fast.c and, past SPLIT_MIN, on two threads), sharding checked against the
 * mesh, ops resolved to tensors, the options and kernels handed on.
 *
 * Every error names the tensor (index and name) and the field, as a JSON path in
 * err.where and a full sentence in err.msg. Memory is bounded by the input: the tensor
 * array by max_tensors, strings by the input length (they are copies of input text).
 */
#include "planner/model_json.h"

#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/base/jsonr.h"
#include "planner/import/model_json_int.h"
#include "planner/model/model_build.h"

/* ---- context and errors ------------------------------------------------------------ */

struct ctx {
    struct model *m;
    struct err *e;
    const struct model_limits *l;
    /* sharding statistics, reported as a few aggregated warnings */
    size_t replicated[MODEL_MAX_AXES];
    size_t replicated_example[MODEL_MAX_AXES];
    size_t uneven;
    char uneven_example[256];
};

/* Error about field `field` of tensors[i] (name may be NULL before it is known). */
static int terr(struct ctx *c, int code, size_t i, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int terr(struct ctx *c, int code, size_t i, const char *field, const char *fmt, ...)
{
    char where[ERR_WHERE_MAX], what[ERR_MSG_MAX];
    const char *name = c->m->tensors != NULL ? c->m->tensors[i].name : NULL;
    va_list ap;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): a false positive (see err.c) */
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(where, sizeof(where), "tensors[%zu]%s%s", i, field[0] ? "." : "", field);
    if (name != NULL)
        return err_set(c->e, code, where, "tensors[%zu] \"%.200s\": %s%s%s", i, name, field,
                       field[0] ? ": " : "", what);
    return err_set(c->e, code, where, "tensors[%zu]: %s%s%s", i, field, field[0] ? ": " : "", what);
}

/* ---- tensors --------------------------------------------------------------------- */

static const char *const tensor_keys[] = {
    "name",     "shape", "dtype",   "layout",       "xla_shape",   "kind", "live",
    "sharding", "tags",  "donated", "memory_space", "description", NULL,
};

/* "memory_space": where the tensor lives. "device" (HBM, the default) or "host" (planned
 * apart from HBM: lifetime.h); JAX's memory kinds pinned_host and unpinned_host are host. */
static int parse_space(struct ctx *c, size_t i, json_object *v, struct model_tensor *t)
{
    static const char *const host[] = {"host", "pinned_host", "unpinned_host", NULL};
    const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";

    if (strcmp(s, "device") == 0)
        return ERR_OK;
    for (size_t k = 0; host[k] != NULL; k++)
        if (strcmp(s, host[k]) == 0) {
            t->host = true;
            return ERR_OK;
        }
    return terr(c, ERR_INVALID, i, "memory_space",
                "must be \"device\" (HBM) or \"host\" (pinned_host, unpinned_host), got "
                "%s%.40s%s",
                s[0] != '\0' ? "\"" : "", s[0] != '\0' ? s : jsonr_type_name(v),
                s[0] != '\0' ? "\"" : "");
}

/* Field of tensor i as a JSON array (of what: "dims"), its length in *n. */
static int tensor_array(struct ctx *c, size_t i, json_object *js, const char *field,
                        const char *what, size_t *n)
{
    if (!json_object_is_type(js, json_type_array))
        return terr(c, ERR_INVALID, i, field, "must be an array of %s, got %s", what,
                    jsonr_type_name(js));
    *n = json_object_array_length(js);
    return ERR_OK;
}

static int parse_dims(struct ctx *c, size_t i, json_object *js, struct shape *sh)
{
    size_t rank = 0;
    int rc;

    if ((rc = tensor_array(c, i, js, "shape", "dims", &rank)) != ERR_OK)
        return rc;
    if (rank > SHAPE_MAX_RANK)
        return terr(c, ERR_LIMIT, i, "shape", "rank %zu is above the limit of %d", rank,
                    SHAPE_MAX_RANK);
    sh->rank = (uint8_t)rank;
    for (size_t d = 0; d < rank; d++) {
        json_object *v = json_object_array_get_idx(js, d);
        char field[32];
        int64_t x;
        int r = jsonr_int(v, &x);
        if (r == 0 && x >= 0) { /* the usual case: no field name to format */
            sh->dims[d] = x;
            continue;
        }
        snprintf(field, sizeof(field), "shape[%zu]", d);
        if (r == 1)
            return terr(c, ERR_INVALID, i, field, "must be an integer, got %s", jsonr_type_name(v));
        if (r == 2)
            return terr(c, ERR_OVERFLOW, i, field, "out of range (|dim| must be below 2^63-1)");
        if (x < 0)
            return terr(c, ERR_INVALID, i, field, "must be >= 0, got %lld", (long long)x);
        sh->dims[d] = x;
    }
    return ERR_OK;
}

/* shape + dtype (+ layout): the layout text goes through shape_parse, the one parser of
 * XLA syntax, so "{1,0:T(8,128)}" means exactly what it means in an xla_shape. */
static int parse_shape_fields(struct ctx *c, size_t i, json_object *jt,
                              const struct model_tensor *t, struct shape *sh)
{
    json_object *js = NULL, *jd = NULL, *jl = NULL;
    const char *s;
    size_t n;
    int rc, r;

    if (!json_object_object_get_ex(jt, "shape", &js))
        return terr(c, ERR_INVALID, i, "shape",
                    "missing (give \"shape\" and \"dtype\", or "
                    "\"xla_shape\")");
    if (!json_object_object_get_ex(jt, "dtype", &jd))
        return terr(c, ERR_INVALID, i, "dtype", "missing");
    if ((r = jsonr_str(jd, 32, &s, &n)) != 0)
        return terr(c, ERR_INVALID, i, "dtype",
                    "must be an XLA type name such as \"f32\" or "
                    "\"bf16\", got %s",
                    r == 1 ? jsonr_type_name(jd) : "an empty or overlong string");
    memset(sh, 0, sizeof(*sh));
    sh->dtype = dtype_parse_alias(s, n);
    if (sh->dtype == DT_INVALID)
        return terr(c, ERR_NOTFOUND, i, "dtype",
                    "unknown dtype \"%s\" (XLA names: pred, s8, u8, s16, s32, s64, u32, bf16, "
                    "f16, f32, f64, f8e4m3fn, f8e5m2, ...; or bfloat16, float32, int8, "
                    "jnp.bfloat16, torch.float16, ...)",
                    s);
    if ((rc = parse_dims(c, i, js, sh)) != ERR_OK)
        return rc;
    if (!json_object_object_get_ex(jt, "layout", &jl))
        return ERR_OK;
    if ((r = jsonr_str(jl, SHAPE_MAX_TEXT, &s, &n)) != 0 || s[0] != '{')
        return terr(c, ERR_INVALID, i, "layout",
                    "must be an XLA layout string such as "
                    "\"{1,0:T(8,128)}\", got %s",
                    r == 1 ? jsonr_type_name(jl) : "\"\"");

    /* Compose "dtype[d0,d1,...]{layout}" and parse it. */
    char text[SHAPE_MAX_TEXT * 2];
    int len = snprintf(text, sizeof(text), "%s[", dtype_name(sh->dtype));
    for (unsigned d = 0; d < sh->rank && len < (int)sizeof(text); d++)
        len += snprintf(text + len, sizeof(text) - (size_t)len, "%s%lld", d ? "," : "",
                        (long long)sh->dims[d]);
    if (len < (int)sizeof(text))
        len += snprintf(text + len, sizeof(text) - (size_t)len, "]%s", s);
    if (len >= (int)sizeof(text))
        return terr(c, ERR_LIMIT, i, "layout", "shape text is longer than %zu bytes",
                    sizeof(text) - 1);
    struct shape parsed;
    if (shape_parse(text, (size_t)len, &parsed, c->e) != ERR_OK) {
        char where[48], msg[ERR_MSG_MAX];
        snprintf(where, sizeof(where), "tensors[%zu].layout", i);
        snprintf(msg, sizeof(msg), "tensors[%zu] \"%.200s\": layout \"%.100s\" of %.100s: ", i,
                 t->name, s, text);
        c->e->where[0] = '\0';
        return err_prefix(c->e, where, msg);
    }
    *sh = parsed;
    return ERR_OK;
}

static int parse_xla_shape(struct ctx *c, size_t i, json_object *jx, const struct model_tensor *t,
                           struct shape *sh)
{
    const char *s;
    size_t n;
    int r;

    if ((r = jsonr_str(jx, SHAPE_MAX_TEXT, &s, &n)) != 0)
        return terr(c, ERR_INVALID, i, "xla_shape",
                    "must be an XLA shape string such as "
                    "\"f32[8,128]{1,0:T(8,128)}\", got %s",
                    r == 1 ? jsonr_type_name(jx) : "an empty or overlong string");
    if (shape_parse(s, n, sh, c->e) != ERR_OK) {
        char where[48], msg[ERR_MSG_MAX];
        snprintf(where, sizeof(where), "tensors[%zu].xla_shape", i);
        snprintf(msg, sizeof(msg), "tensors[%zu] \"%.200s\": xla_shape: ", i, t->name);
        c->e->where[0] = '\0';
        return err_prefix(c->e, where, msg);
    }
    for (unsigned d = 0; d < sh->rank; d++)
        if (sh->dims[d] < 0)
            return terr(c, ERR_INVALID, i, "xla_shape", "dim %u must be >= 0, got %lld", d,
                        (long long)sh->dims[d]);
    return ERR_OK;
}

static int find_axis(const struct model *m, const char *s)
{
    for (size_t a = 0; a < m->naxes; a++)
        if (strcmp(m->axis_names[a], s) == 0)
            return (int)a;
    return -1;
}

/* One sharding entry: a single axis name. Adds it to *mask and multiplies *parts. */
static int shard_axis(struct ctx *c, size_t i, const char *field, json_object *v, uint16_t *used,
                      uint16_t *mask, uint64_t *parts)
{
    const char *s;
    size_t n;
    int a;

    if (jsonr_str(v, MODEL_MAX_NAME, &s, &n) != 0)
        return terr(c, ERR_INVALID, i, field,
                    "must be null, a mesh axis name or a list of "
                    "names, got %s",
                    jsonr_type_name(v));
    if ((a = find_axis(c->m, s)) < 0)
        return terr(c, ERR_NOTFOUND, i, field, "unknown mesh axis \"%.100s\"%s", s,
                    c->m->naxes == 0 ? " (the model has no \"mesh\")" : "");
    if (*used & (1u << a))
        return terr(c, ERR_INVALID, i, field,
                    "mesh axis \"%.100s\" is used twice (an axis can "
                    "shard only one dim)",
                    s);
    *used |= (uint16_t)(1u << a);
    *mask |= (uint16_t)(1u << a);
    /* Mesh products were checked when the mesh was parsed, so this cannot overflow. */
    *parts *= (uint64_t)c->m->axis_sizes[a];
    return ERR_OK;
}

static int parse_sharding(struct ctx *c, size_t i, json_object *js, struct model_tensor *t,
                          struct shape *sh)
{
    uint16_t used = 0;
    int rc;

    if (json_object_is_type(js, json_type_null))
        goto replication;
    if (!json_object_is_type(js, json_type_array))
        return terr(c, ERR_INVALID, i, "sharding",
                    "must be an array with one entry per dim, "
                    "got %s",
                    jsonr_type_name(js));
    if (json_object_array_length(js) != sh->rank)
        return terr(c, ERR_INVALID, i, "sharding", "has %zu entries but the shape has rank %u",
                    json_object_array_length(js), sh->rank);
    t->global_dims = model_alloc(c->m, sizeof(int64_t) * (sh->rank ? sh->rank : 1));
    if (t->global_dims == NULL)
        return terr(c, ERR_NOMEM, i, "sharding", "out of memory");
    memcpy(t->global_dims, sh->dims, sizeof(int64_t) * sh->rank);
    t->shard_mask = model_alloc(c->m, sizeof(uint16_t) * (sh->rank ? sh->rank : 1));
    if (t->shard_mask == NULL)
        return terr(c, ERR_NOMEM, i, "sharding", "out of memory");
    memset(t->shard_mask, 0, sizeof(uint16_t) * (sh->rank ? sh->rank : 1));
    t->sharded = true;
    for (unsigned d = 0; d < sh->rank; d++) {
        json_object *v = json_object_array_get_idx(js, d);
        uint64_t parts = 1;
        char field[40];
        snprintf(field, sizeof(field), "sharding[%u]", d);
        if (v == NULL || json_object_is_type(v, json_type_null))
            continue;
        if (json_object_is_type(v, json_type_array)) {
            size_t k = json_object_array_length(v);
            for (size_t j = 0; j < k; j++) {
                char sub[48];
                snprintf(sub, sizeof(sub), "sharding[%u][%zu]", d, j);
                rc = shard_axis(c, i, sub, json_object_array_get_idx(v, j), &used,
                                &t->shard_mask[d], &parts);
                if (rc != ERR_OK)
                    return rc;
            }
        } else if ((rc = shard_axis(c, i, field, v, &used, &t->shard_mask[d], &parts)) != ERR_OK) {
            return rc;
        }
        /* Per-device extent: XLA gives every shard ceil(d/p)
         * (server/planner/SOURCES.md#uneven-sharding). */
        int64_t g = sh->dims[d];
        if (g % (int64_t)parts != 0) {
            if (c->uneven++ == 0)
                snprintf(c->uneven_example, sizeof(c->uneven_example),
                         "tensors[%zu] \"%.100s\" dim %u: %lld over %llu devices -> %lld", i,
                         t->name, d, (long long)g, (unsigned long long)parts,
                         (long long)(g == 0 ? 0 : (g - 1) / (int64_t)parts + 1));
        }
        sh->dims[d] = g == 0 ? 0 : (g - 1) / (int64_t)parts + 1;
    }
replication:
    if (t->kind == TENSOR_PARAM || t->kind == TENSOR_OPTIMIZER || t->kind == TENSOR_GRAD)
        for (size_t a = 0; a < c->m->naxes; a++)
            if (!(used & (1u << a)) && c->m->axis_sizes[a] > 1 && c->replicated[a]++ == 0)
                c->replicated_example[a] = i;
    return ERR_OK;
}

static int parse_live(struct ctx *c, size_t i, json_object *jl, struct model_tensor *t)
{
    int64_t v[2];

    if (!json_object_is_type(jl, json_type_array) || json_object_array_length(jl) != 2)
        return terr(c, ERR_INVALID, i, "live", "must be [start, end), two integers");
    for (size_t k = 0; k < 2; k++) {
        json_object *x = json_object_array_get_idx(jl, k);
        int r = jsonr_int(x, &v[k]);
        char field[16];
        if (r == 0 && v[k] >= 0 && v[k] <= MODEL_MAX_STEP)
            continue;
        snprintf(field, sizeof(field), "live[%zu]", k);
        if (r == 1)
            return terr(c, ERR_INVALID, i, field, "must be an integer, got %s", jsonr_type_name(x));
        if (r == 2 || v[k] < 0 || v[k] > MODEL_MAX_STEP)
            return terr(c, ERR_INVALID, i, field, "must be between 0 and 2^53");
    }
    if (v[0] >= v[1])
        return terr(c, ERR_INVALID, i, "live",
                    "start %lld must be below end %lld (the interval "
                    "is half-open)",
                    (long long)v[0], (long long)v[1]);
    t->live_given = true;
    t->live_start = v[0];
    t->live_end = v[1];
    return ERR_OK;
}

static int parse_tags(struct ctx *c, size_t i, json_object *jt, struct model_tensor *t)
{
    size_t k = 0;
    int rc;

    if ((rc = tensor_array(c, i, jt, "tags", "strings", &k)) != ERR_OK)
        return rc;
    if (k > MODEL_MAX_TAGS)
        return terr(c, ERR_LIMIT, i, "tags", "%zu tags; the limit is %d", k, MODEL_MAX_TAGS);
    if (k == 0)
        return ERR_OK;
    t->tags = model_alloc(c->m, k * sizeof(*t->tags));
    if (t->tags == NULL)
        return terr(c, ERR_NOMEM, i, "tags", "out of memory");
    for (size_t j = 0; j < k; j++) {
        json_object *v = json_object_array_get_idx(jt, j);
        const char *s;
        size_t n;
        char field[32];
        snprintf(field, sizeof(field), "tags[%zu]", j);
        if (jsonr_str(v, MODEL_MAX_NAME, &s, &n) != 0)
            return terr(c, ERR_INVALID, i, field,
                        "must be a non-empty string of at most %d "
                        "bytes, got %s",
                        MODEL_MAX_NAME, jsonr_type_name(v));
        if ((t->tags[j] = model_strdup(c->m, s, n)) == NULL)
            return terr(c, ERR_NOMEM, i, field, "out of memory");
    }
    t->ntags = (uint8_t)k;
    return ERR_OK;
}

static int parse_tensor(struct ctx *c, size_t i, json_object *jt)
{
    struct model_tensor *t = &c->m->tensors[i];
    struct shape sh; /* stored compactly once sharding has made it per device */
    json_object *v;
    const char *s;
    size_t n;
    int rc, r;

    memset(&sh, 0, sizeof(sh));
    if (!json_object_is_type(jt, json_type_object))
        return terr(c, ERR_INVALID, i, "", "must be an object, got %s", jsonr_type_name(jt));
    if (!json_object_object_get_ex(jt, "name", &v))
        return terr(c, ERR_INVALID, i, "name", "missing");
    if ((r = jsonr_str(v, MODEL_MAX_NAME, &s, &n)) != 0)
        return terr(c, ERR_INVALID, i, "name",
                    "must be a non-empty string of at most %d bytes "
                    "without NUL, got %s",
                    MODEL_MAX_NAME, r == 1 ? jsonr_type_name(v) : "another");
    if ((t->name = model_strdup(c->m, s, n)) == NULL)
        return terr(c, ERR_NOMEM, i, "name", "out of memory");
    JSONR_FOREACH(jt, it_key, end_key)
    {
        const char *key = JSONR_KEY(it_key);
        if (!jsonr_key_allowed(key, tensor_keys))
            return terr(c, ERR_INVALID, i, "",
                        "unknown field \"%.100s\" (known: name, shape, "
                        "dtype, layout, xla_shape, kind, live, sharding, tags, donated, "
                        "memory_space, description)",
                        key);
    }

    t->kind = TENSOR_TEMP;
    if (json_object_object_get_ex(jt, "kind", &v)) {
        if (jsonr_str(v, 32, &s, &n) != 0 || (t->kind = tensor_kind_parse(s)) == TENSOR_KIND_COUNT)
            return terr(c, ERR_INVALID, i, "kind",
                        "must be one of param, grad, optimizer, "
                        "activation, temp, input, output, constant, kv_cache; got %s%.40s%s",
                        json_object_is_type(v, json_type_string) ? "\"" : "",
                        json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                 : jsonr_type_name(v),
                        json_object_is_type(v, json_type_string) ? "\"" : "");
    }

    if (json_object_object_get_ex(jt, "xla_shape", &v)) {
        if (json_object_object_get_ex(jt, "shape", NULL) ||
            json_object_object_get_ex(jt, "dtype", NULL) ||
            json_object_object_get_ex(jt, "layout", NULL))
            return terr(c, ERR_INVALID, i, "xla_shape",
                        "give either \"xla_shape\" or "
                        "\"shape\" + \"dtype\" (+ \"layout\"), not both");
        rc = parse_xla_shape(c, i, v, t, &sh);
    } else {
        rc = parse_shape_fields(c, i, jt, t, &sh);
    }
    if (rc != ERR_OK)
        return rc;

    if ((rc = parse_sharding(c, i, json_object_object_get_ex(jt, "sharding", &v) ? v : NULL, t,
                             &sh)) != ERR_OK)
        return rc;
    if (model_tensor_set_shape(c->m, t, &sh) != ERR_OK)
        return terr(c, ERR_NOMEM, i, "shape", "out of memory");
    if (json_object_object_get_ex(jt, "live", &v) && (rc = parse_live(c, i, v, t)) != ERR_OK)
        return rc;
    if (json_object_object_get_ex(jt, "tags", &v) && (rc = parse_tags(c, i, v, t)) != ERR_OK)
        return rc;
    if (json_object_object_get_ex(jt, "donated", &v)) {
        if (!json_object_is_type(v, json_type_boolean))
            return terr(c, ERR_INVALID, i, "donated", "must be true or false, got %s",
                        jsonr_type_name(v));
        t->donated = json_object_get_boolean(v);
    }
    if (json_object_object_get_ex(jt, "memory_space", &v) &&
        (rc = parse_space(c, i, v, t)) != ERR_OK)
        return rc;
    if (json_object_object_get_ex(jt, "description", &v) &&
        !json_object_is_type(v, json_type_string))
        return terr(c, ERR_INVALID, i, "description", "must be a string, got %s",
                    jsonr_type_name(v));
    return ERR_OK;
}

/* ---- mesh, options, ops ---------------------------------------------------------- */

static int parse_mesh(struct ctx *c, json_object *jm)
{
    struct model *m = c->m;

    if (!json_object_is_type(jm, json_type_object))
        return err_set(c->e, ERR_INVALID, "mesh",
                       "mesh: must be an object mapping axis names "
                       "to sizes, got %s",
                       jsonr_type_name(jm));
    JSONR_FOREACH(jm, it_key, end_key)
    {
        const char *key = JSONR_KEY(it_key);
        json_object *val = JSONR_VAL(it_key);
        char where[MODEL_MAX_NAME + 16];
        int64_t size;
        int r = jsonr_int(val, &size);
        size_t klen = strlen(key);
        snprintf(where, sizeof(where), "mesh.%.100s", key);
        if (m->naxes == MODEL_MAX_AXES)
            return err_set(c->e, ERR_LIMIT, "mesh", "mesh: more than %d axes", MODEL_MAX_AXES);
        if (klen == 0 || klen > MODEL_MAX_NAME)
            return err_set(c->e, ERR_INVALID, "mesh", "mesh: axis names must be 1 to %d bytes",
                           MODEL_MAX_NAME);
        if (r != 0 || size < 1 || size > (INT64_C(1) << 32))
            return err_set(c->e, ERR_INVALID, where,
                           "mesh: axis \"%.100s\": size must be an "
                           "integer from 1 to 2^32, got %s",
                           key, r == 1 ? jsonr_type_name(val) : "an out-of-range value");
        if (__builtin_mul_overflow(m->devices, (uint64_t)size, &m->devices) ||
            m->devices > (UINT64_C(1) << 53))
            return err_set(c->e, ERR_OVERFLOW, where,
                           "mesh: the product of the axis sizes is "
                           "above 2^53");
        if ((m->axis_names[m->naxes] = model_strdup(m, key, klen)) == NULL)
            return err_set(c->e, ERR_NOMEM, where, "out of memory");
        m->axis_sizes[m->naxes++] = size;
    }
    return ERR_OK;
}

/* The "options" object, kept as it is: plan.c reads it through the plan options' table
 * (plan_options.h), the one place that knows the options, their grammars and ranges. */
static int parse_options(struct ctx *c, json_object *jo)
{
    if (!json_object_is_type(jo, json_type_object))
        return err_set(c->e, ERR_INVALID, "options", "options: must be an object, got %s",
                       jsonr_type_name(jo));
    c->m->options_json = json_object_get(jo);
    return ERR_OK;
}

static int op_refs(struct ctx *c, const struct model_index *ix, size_t k, const char *field,
                   json_object *ja, uint32_t **out, uint32_t *nout)
{
    struct model *m = c->m;
    const char *opname = m->ops[k].name;
    size_t cnt;

    *nout = 0;
    if (ja == NULL)
        return ERR_OK;
    if (!json_object_is_type(ja, json_type_array))
        return err_set(c->e, ERR_INVALID, field,
                       "ops[%zu] \"%.200s\": %s: must be an array of "
                       "tensor names, got %s",
                       k, opname, strchr(field, '.') + 1, jsonr_type_name(ja));
    cnt = json_object_array_length(ja);
    if (cnt > UINT32_MAX)
        return err_set(c->e, ERR_LIMIT, field, "ops[%zu]: too many references", k);
    if (cnt == 0)
        return ERR_OK;
    *out = model_alloc(m, cnt * sizeof(**out));
    if (*out == NULL)
        return err_set(c->e, ERR_NOMEM, field, "out of memory");
    for (size_t j = 0; j < cnt; j++) {
        json_object *v = json_object_array_get_idx(ja, j);
        const char *s;
        size_t n;
        int64_t t;
        char where[64];
        snprintf(where, sizeof(where), "%s[%zu]", field, j);
        if (jsonr_str(v, MODEL_MAX_NAME, &s, &n) != 0)
            return err_set(c->e, ERR_INVALID, where,
                           "ops[%zu] \"%.200s\": %s[%zu]: must be a "
                           "tensor name, got %s",
                           k, opname, strchr(field, '.') + 1, j, jsonr_type_name(v));
        if ((t = model_index_find(ix, s, n)) < 0)
            return err_set(c->e, ERR_NOTFOUND, where,
                           "ops[%zu] \"%.200s\": %s[%zu]: unknown "
                           "tensor \"%.200s\"",
                           k, opname, strchr(field, '.') + 1, j, s);
        (*out)[j] = (uint32_t)t;
    }
    *nout = (uint32_t)cnt;
    return ERR_OK;
}

static int parse_ops(struct ctx *c, json_object *ja, const struct model_index *ix)
{
    struct model *m = c->m;
    size_t n;

    if (!json_object_is_type(ja, json_type_array))
        return err_set(c->e, ERR_INVALID, "ops", "ops: must be an array, got %s",
                       jsonr_type_name(ja));
    n = json_object_array_length(ja);
    if (n > c->l->max_ops)
        return err_set(c->e, ERR_LIMIT, "ops", "ops: %zu ops; the limit is %zu", n, c->l->max_ops);
    if (n == 0)
        return ERR_OK;
    m->ops = calloc(n, sizeof(*m->ops));
    if (m->ops == NULL)
        return err_set(c->e, ERR_NOMEM, "ops", "out of memory for %zu ops", n);
    m->nops = n;
    for (size_t k = 0; k < n; k++) {
        json_object *jo = json_object_array_get_idx(ja, k), *v = NULL;
        struct model_op *op = &m->ops[k];
        char where[40], fin[48], fout[48];
        const char *s;
        size_t len;
        int rc;
        snprintf(where, sizeof(where), "ops[%zu]", k);
        if (!json_object_is_type(jo, json_type_object))
            return err_set(c->e, ERR_INVALID, where, "ops[%zu]: must be an object, got %s", k,
                           jsonr_type_name(jo));
        JSONR_FOREACH(jo, it_key, end_key)
        {
            const char *key = JSONR_KEY(it_key);
            if (strcmp(key, "name") != 0 && strcmp(key, "inputs") != 0 &&
                strcmp(key, "outputs") != 0)
                return err_set(c->e, ERR_INVALID, where,
                               "ops[%zu]: unknown field \"%.100s\" "
                               "(known: name, inputs, outputs)",
                               k, key);
        }
        op->name = "";
        if (json_object_object_get_ex(jo, "name", &v)) {
            if (jsonr_str(v, MODEL_MAX_NAME, &s, &len) != 0)
                return err_set(c->e, ERR_INVALID, where,
                               "ops[%zu]: name: must be a non-empty "
                               "string, got %s",
                               k, jsonr_type_name(v));
            if ((op->name = model_strdup(m, s, len)) == NULL)
                return err_set(c->e, ERR_NOMEM, where, "out of memory");
        }
        snprintf(fin, sizeof(fin), "ops[%zu].inputs", k);
        snprintf(fout, sizeof(fout), "ops[%zu].outputs", k);
        v = NULL;
        json_object_object_get_ex(jo, "inputs", &v);
        if ((rc = op_refs(c, ix, k, fin, v, &op->inputs, &op->ninputs)) != ERR_OK)
            return rc;
        v = NULL;
        json_object_object_get_ex(jo, "outputs", &v);
        if ((rc = op_refs(c, ix, k, fout, v, &op->outputs, &op->noutputs)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* ---- top level ------------------------------------------------------------------- */

static void sharding_warnings(struct ctx *c)
{
    struct model *m = c->m;

    for (size_t a = 0; a < m->naxes; a++)
        if (c->replicated[a] > 0)
            model_warn(m,
                       "%zu param/grad/optimizer tensors are replicated over mesh axis "
                       "\"%.100s\" (size %lld): every device holds a full copy along it (e.g. "
                       "tensors[%zu] \"%.100s\"); XLA defaults to replication when sharding is "
                       "missing",
                       c->replicated[a], m->axis_names[a], (long long)m->axis_sizes[a],
                       c->replicated_example[a], m->tensors[c->replicated_example[a]].name);
    if (c->uneven > 0)
        model_warn(m,
                   "%zu sharded dims do not divide evenly; each device allocates the "
                   "ceil-divided extent and the last shard holds padding (e.g. %s)",
                   c->uneven, c->uneven_example);
}

/*
 * Where the tensor objects come from: the DOM's array, or the input text, one element at a
 * time. Streaming keeps a million-tensor document from becoming a million json-c objects
 * at once (several GB): each element is parsed by json-c on its own, converted, and freed.
 */
struct tensor_src {
    bool streaming;           /* else the DOM's array */
    json_object *arr;         /* DOM: the "tensors" array */
    const char *text;         /* streaming: the whole input */
    size_t len, pos;          /* the next element (or the closing bracket) is at or after pos */
    size_t count;             /* streaming: the elements array_skip counted */
    size_t split_pos;         /* streaming: just past the top-level comma after the middle */
    size_t split_index;       /* streaming: the element that starts there (0: none) */
    struct json_tokener *tok; /* streaming: reset for every element */
    json_object *cur;         /* streaming: the element last returned (owned) */
    bool done;                /* streaming: the closing bracket has been read */
};

/* A stream anomaly: anything the walker does not expect (a syntax error, an odd corner of
 * JSON). The caller then parses the whole document as a DOM, which reports exactly what
 * the non-streaming parser reports. Positive, so it is never an ERR_* code. */
#define STREAM_FALLBACK 1

static bool is_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

static size_t skip_ws(const char *s, size_t len, size_t pos)
{
    while (pos < len && is_ws(s[pos]))
        pos++;
    return pos;
}

/* One JSON value at s[*pos] with json-c, the tokener's depth limit already set; the value
 * must end before len. NULL on any error (the DOM parse reports it). */
static json_object *value_at(struct json_tokener *tok, const char *s, size_t len, size_t *pos)
{
    json_object *v;

    json_tokener_reset(tok);
    v = json_tokener_parse_ex(tok, s + *pos, (int)(len - *pos));
    if (v == NULL)
        return NULL;
    if (json_tokener_get_error(tok) != json_tokener_success) {
        json_object_put(v);
        return NULL;
    }
    *pos += json_tokener_get_parse_end(tok);
    return v;
}

/*
 * Skips the array at s[*pos] == '[' without parsing it: strings and brackets only, so the
 * walker can read the members after "tensors" (mesh, options) first and size the tensor
 * table. ts->count: its elements (top-level commas + 1); ts->split_*: the first element
 * past the middle of its text, where a second thread may start (split_parse). 0, or
 * STREAM_FALLBACK when the brackets do not balance before the end (the element parses find
 * finer faults).
 */
static int array_skip(const char *s, size_t len, size_t *pos, struct tensor_src *ts)
{
    size_t depth = 0, commas = 0, mid = *pos + (len - *pos) / 2;
    bool any = false;

    for (size_t i = *pos; i < len; i++) {
        char ch = s[i];
        if (ch == '"') {
            for (i++; i < len && s[i] != '"'; i++)
                if (s[i] == '\\')
                    i++;
            if (i >= len)
                return STREAM_FALLBACK;
            any = true;
        } else if (ch == '[' || ch == '{') {
            any |= depth > 0;
            depth++;
        } else if (ch == ']' || ch == '}') {
            if (--depth == 0) {
                *pos = i + 1;
                ts->count = any ? commas + 1 : 0;
                return 0;
            }
        } else if (ch == ',') {
            commas += depth == 1;
            if (depth == 1 && i >= mid && ts->split_index == 0) {
                ts->split_pos = i + 1;
                ts->split_index = commas;
            }
        } else if (ch == '\0') {
            return STREAM_FALLBACK;
        } else if (!is_ws(ch)) {
            any = true;
        }
    }
    return STREAM_FALLBACK;
}

/*
 * Walks the top-level object: every member but an array-valued "tensors" is parsed by
 * json-c into *root (a duplicate key replaces the earlier value, as json-c does); the
 * tensors array is skipped and counted, and stands in *root as an empty array. 0 with
 * ts->pos at the array (ts->arr NULL), STREAM_FALLBACK, or ERR_NOMEM.
 */
static int stream_top(const char *s, size_t len, unsigned max_depth, json_object **root,
                      struct tensor_src *ts)
{
    struct json_tokener *mtok = NULL;
    size_t pos = skip_ws(s, len, 0), tpos = 0;
    bool streamed = false;
    int rc = STREAM_FALLBACK;

    *root = NULL;
    if (len > INT_MAX || max_depth < 3 || max_depth > INT_MAX || pos >= len || s[pos] != '{')
        return STREAM_FALLBACK;
    mtok = json_tokener_new_ex((int)max_depth - 1);    /* a member's value sits at depth 1 */
    ts->tok = json_tokener_new_ex((int)max_depth - 2); /* an element's at depth 2 */
    *root = json_object_new_object();
    if (mtok == NULL || ts->tok == NULL || *root == NULL) {
        rc = ERR_NOMEM;
        goto out;
    }
    json_tokener_set_flags(mtok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8 |
                                     JSON_TOKENER_ALLOW_TRAILING_CHARS);
    json_tokener_set_flags(ts->tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8 |
                                        JSON_TOKENER_ALLOW_TRAILING_CHARS);
    pos = skip_ws(s, len, pos + 1);
    if (pos < len && s[pos] == '}') {
        pos++;
        goto end;
    }
    for (;;) {
        json_object *key, *val;
        pos = skip_ws(s, len, pos);
        if (pos >= len || s[pos] != '"' || (key = value_at(mtok, s, len, &pos)) == NULL)
            goto out;
        pos = skip_ws(s, len, pos);
        if (pos >= len || s[pos] != ':') {
            json_object_put(key);
            goto out;
        }
        pos = skip_ws(s, len, pos + 1);
        bool tensors =
            strcmp(json_object_get_string(key), "tensors") == 0 && pos < len && s[pos] == '[';
        if (tensors) {
            if (tpos != 0) { /* a second "tensors": the DOM parser keeps the last one */
                json_object_put(key);
                goto out;
            }
            tpos = pos;
            streamed = true;
            val = array_skip(s, len, &pos, ts) == 0 ? json_object_new_array() : NULL;
        } else {
            streamed &= strcmp(json_object_get_string(key), "tensors") != 0;
            val = value_at(mtok, s, len, &pos);
        }
        if (val == NULL || json_object_object_add(*root, json_object_get_string(key), val) != 0) {
            json_object_put(key);
            json_object_put(val);
            goto out;
        }
        json_object_put(key);
        pos = skip_ws(s, len, pos);
        if (pos < len && s[pos] == ',') {
            pos++;
            continue;
        }
        if (pos < len && s[pos] == '}') {
            pos++;
            break;
        }
        goto out;
    }
end:
    if (skip_ws(s, len, pos) != len)
        goto out;
    rc = 0;
    ts->text = s;
    ts->len = len;
    ts->pos = tpos + 1;
    ts->done = !streamed;
    ts->streaming = true;
out:
    if (mtok != NULL)
        json_tokener_free(mtok);
    if (rc != 0) {
        json_object_put(*root);
        *root = NULL;
    }
    return rc;
}

/* The next element of a streamed array; NULL at an anomaly (see STREAM_FALLBACK) or past
 * the end. The previous element is freed. */
static json_object *stream_next(struct tensor_src *ts)
{
    size_t pos = skip_ws(ts->text, ts->len, ts->pos);

    json_object_put(ts->cur);
    ts->cur = NULL;
    if (ts->done || pos >= ts->len)
        return NULL;
    if ((ts->cur = value_at(ts->tok, ts->text, ts->len, &pos)) == NULL)
        return NULL;
    pos = skip_ws(ts->text, ts->len, pos);
    if (pos < ts->len && ts->text[pos] == ',') {
        ts->pos = pos + 1;
    } else if (pos < ts->len && ts->text[pos] == ']') {
        ts->pos = pos + 1;
        ts->done = true;
    } else {
        json_object_put(ts->cur);
        ts->cur = NULL;
    }
    return ts->cur;
}

/* Whether the rest of a streamed array is valid JSON (checked before reporting an error
 * found earlier: the DOM parser reports syntax errors first, and so must the stream). */
static bool stream_rest_valid(struct tensor_src *ts)
{
    while (!ts->done)
        if (stream_next(ts) == NULL)
            return false;
    return true;
}

static void tensor_src_free(struct tensor_src *ts)
{
    json_object_put(ts->cur);
    if (ts->tok != NULL) /* json_tokener_free does not take NULL */
        json_tokener_free(ts->tok);
    memset(ts, 0, sizeof(*ts));
}

/* Tensor i from its plain element f, as parse_tensor converts it. */
static int fast_fill(struct ctx *c, size_t i, const struct model_fast_tensor *f)
{
    struct model_tensor *t = &c->m->tensors[i];
    struct shape sh;
    int rc;

    if ((t->name = model_strdup(c->m, f->name, f->name_len)) == NULL)
        return terr(c, ERR_NOMEM, i, "name", "out of memory");
    t->kind = f->kind;
    memset(&sh, 0, sizeof(sh));
    sh.dtype = f->dtype;
    sh.rank = f->rank;
    memcpy(sh.dims, f->dims, f->rank * sizeof(f->dims[0]));
    t->live_given = f->live_given;
    t->live_start = f->live_start;
    t->live_end = f->live_end;
    if ((rc = parse_sharding(c, i, NULL, t, &sh)) == ERR_OK &&
        model_tensor_set_shape(c->m, t, &sh) != ERR_OK)
        rc = terr(c, ERR_NOMEM, i, "shape", "out of memory");
    return rc;
}

/*
 * Element i of a stream read by model_fast_tensor (model_json_int.h) and converted as
 * parse_tensor converts it. false: not of the plain form, nothing consumed (the element is
 * json-c's); *rc then untouched. The json-c path below stays the one that reports errors.
 */
static bool fast_tensor(struct ctx *c, struct tensor_src *ts, size_t i, int *rc)
{
    struct model_fast_tensor f;
    size_t pos = ts->pos;
    bool last = false;

    /* an element's arrays sit at depth 3 of the document: json-c's limit must allow them */
    if (!ts->streaming || ts->done || c->l->max_json_depth < 5 ||
        !model_fast_tensor(ts->text, ts->len, &pos, &f, &last))
        return false;
    json_object_put(ts->cur); /* as stream_next: the previous element is done with */
    ts->cur = NULL;
    ts->pos = pos;
    ts->done = last;
    *rc = fast_fill(c, i, &f);
    return true;
}

/* ---- the tensors array on two threads -------------------------------------------- */

#define SPLIT_MIN 4096 /* elements from which the second half is read on a second thread */

/*
 * The second half of a streamed tensors array, read ahead on a helper thread while the
 * caller reads the first: from ts->split_index on, the plain elements (model_fast_tensor)
 * in order, into the shared tensor table, with their own arena and sharding statistics,
 * until the end or the first element that is not plain or fails (left, untouched, to the
 * caller). When the caller reaches the split where the helper started (as it does unless
 * the stream is odd), it takes the helper's elements as read and goes on from where the
 * helper stopped, so every element, error and fallback is the one reading in order meets.
 */
struct split {
    struct ctx c;   /* the helper's; c.m is m below, c.e e below */
    struct model m; /* shares the caller's tensor table and mesh; its own arena */
    struct model_arena arena;
    struct err e;
    const struct tensor_src *ts; /* read only: text, len, split_* */
    size_t from, to;             /* elements [from, to) read */
    size_t pos;                  /* where element `to` begins */
    bool last;                   /* the closing bracket was read */
    bool started;
    pthread_t tid;
};

static void *split_main(void *arg)
{
    struct split *sp = arg;
    size_t i = sp->from, pos = sp->ts->split_pos;

    for (; i < sp->m.n; i++) {
        struct model_fast_tensor f;
        size_t p = pos;
        bool last = false;
        if (!model_fast_tensor(sp->ts->text, sp->ts->len, &p, &f, &last) ||
            (last && i + 1 < sp->m.n))
            break;
        if (fast_fill(&sp->c, i, &f) != ERR_OK) {
            memset(&sp->m.tensors[i], 0, sizeof(sp->m.tensors[i]));
            break;
        }
        pos = p;
        sp->last = last;
    }
    sp->to = i;
    sp->pos = pos;
    return NULL;
}

/* Starts the helper when the array is long, split and streamed, and threads are allowed. */
static void split_start(struct ctx *c, const struct tensor_src *ts, struct split *sp)
{
    memset(sp, 0, sizeof(*sp));
    if (!ts->streaming || c->l->threads == 1 || c->l->max_json_depth < 5 || c->m->n < SPLIT_MIN ||
        ts->split_index == 0 || ts->split_index >= c->m->n || sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return;
    sp->m = *c->m;
    sp->m.arena = &sp->arena;
    sp->c = (struct ctx){.m = &sp->m, .e = &sp->e, .l = c->l};
    sp->ts = ts;
    sp->from = sp->to = ts->split_index;
    sp->started = pthread_create(&sp->tid, NULL, split_main, sp) == 0;
}

/* Joins the helper; returns the next element for the caller: past the helper's elements
 * when the caller stands where the helper started (at element i), else i (the helper's
 * elements are cleared and read again in order). */
static size_t split_join(struct ctx *c, struct tensor_src *ts, struct split *sp, size_t i)
{
    if (!sp->started)
        return i;
    pthread_join(sp->tid, NULL);
    sp->started = false;
    model_arena_adopt(c->m->arena, &sp->arena);
    if (i != sp->from || ts->done || ts->pos != ts->split_pos) {
        memset(&c->m->tensors[sp->from], 0, (sp->to - sp->from) * sizeof(c->m->tensors[0]));
        return i;
    }
    for (size_t a = 0; a < MODEL_MAX_AXES; a++) {
        if (c->replicated[a] == 0)
            c->replicated_example[a] = sp->c.replicated_example[a];
        c->replicated[a] += sp->c.replicated[a];
    }
    if (sp->to > sp->from) {
        json_object_put(ts->cur); /* as fast_tensor: the previous element is done with */
        ts->cur = NULL;
        ts->pos = sp->pos;
        ts->done = sp->last;
    }
    return sp->to;
}

/* Element i of the tensors (in order); NULL when a stream meets an anomaly. */
static json_object *tensor_src_get(struct tensor_src *ts, size_t i)
{
    return ts->streaming ? stream_next(ts) : json_object_array_get_idx(ts->arr, i);
}

static int check_keys(struct ctx *c, json_object *root)
{
    static const char *const keys[] = {"name",    "chip",    "tensors",     "mesh",    "ops",
                                       "options", "$schema", "description", "kernels", NULL};

    JSONR_FOREACH(root, it_key, end_key)
    {
        const char *key = JSONR_KEY(it_key);
        if (!jsonr_key_allowed(key, keys))
            return err_set(c->e, ERR_INVALID, key,
                           "model: unknown top-level field \"%.100s\" (known: "
                           "name, chip, mesh, tensors, ops, options, kernels, description)",
                           key);
    }
    return ERR_OK;
}

/* The top-level fields but the tensors and ops, in the order the DOM parser always used;
 * sizes the tensor table for n tensors. */
static int parse_head(struct ctx *c, json_object *root, size_t n)
{
    struct model *m = c->m;
    json_object *v;
    const char *s;
    size_t len;
    int rc;

    if (n > c->l->max_tensors)
        return err_set(c->e, ERR_LIMIT, "tensors", "model: %zu tensors; the limit is %zu", n,
                       c->l->max_tensors);
    if (n > UINT32_MAX - 1)
        return err_set(c->e, ERR_LIMIT, "tensors", "model: too many tensors");
    if (model_init(m, "json", n) != ERR_OK)
        return err_set(c->e, ERR_NOMEM, "tensors", "out of memory for %zu tensors", n);
    m->name = "model";
    if (json_object_object_get_ex(root, "name", &v)) {
        if (jsonr_str(v, 127, &s, &len) != 0)
            return err_set(c->e, ERR_INVALID, "name", "name: must be a string of 1 to 127 bytes");
        if ((m->name = model_strdup(m, s, len)) == NULL)
            return err_set(c->e, ERR_NOMEM, "", "out of memory");
    }
    if (json_object_object_get_ex(root, "chip", &v)) {
        if (jsonr_str(v, 32, &s, &len) != 0)
            return err_set(c->e, ERR_INVALID, "chip", "chip: must be a chip name such as \"v5e\"");
        if ((m->chip = model_strdup(m, s, len)) == NULL)
            return err_set(c->e, ERR_NOMEM, "", "out of memory");
    }
    if (json_object_object_get_ex(root, "mesh", &v) && (rc = parse_mesh(c, v)) != ERR_OK)
        return rc;
    if (json_object_object_get_ex(root, "options", &v) && (rc = parse_options(c, v)) != ERR_OK)
        return rc;
    return ERR_OK;
}

/* The model from its top level and its tensors (either source). STREAM_FALLBACK when the
 * stream met an anomaly; *m is then to be freed and the document parsed as a DOM. */
static int parse_root(struct ctx *c, json_object *root, struct tensor_src *ts)
{
    struct split sp = {0};
    struct model_index ix = {0};
    json_object *v, *jt;
    size_t n;
    int rc;

    if (!json_object_is_type(root, json_type_object))
        return err_set(c->e, ERR_INVALID, "", "model: the top level must be an object, got %s",
                       jsonr_type_name(root));
    if ((rc = check_keys(c, root)) != ERR_OK)
        goto out;
    if (!json_object_object_get_ex(root, "tensors", &jt) ||
        !json_object_is_type(jt, json_type_array)) {
        rc = err_set(c->e, ERR_INVALID, "tensors",
                     "model: \"tensors\" must be an array of tensor objects");
        goto out;
    }
    n = ts->streaming ? ts->count : json_object_array_length(ts->arr);
    if ((rc = parse_head(c, root, n)) != ERR_OK)
        goto out;
    split_start(c, ts, &sp);
    for (size_t i = 0; i < c->m->n; i++) {
        if (sp.started && i == sp.from && (i = split_join(c, ts, &sp, i)) >= c->m->n)
            break;
        if (fast_tensor(c, ts, i, &rc)) {
            if (rc != ERR_OK)
                goto out;
            continue;
        }
        json_object *el = tensor_src_get(ts, i);
        if (el == NULL) {
            rc = STREAM_FALLBACK;
            goto out;
        }
        if ((rc = parse_tensor(c, i, el)) != ERR_OK)
            goto out;
    }
    if (ts->streaming && !ts->done) { /* the skip counted differently: an anomaly */
        rc = STREAM_FALLBACK;
        goto out;
    }
    if ((rc = model_index_build(c->m, &ix, c->e)) != ERR_OK)
        goto out;
    if (json_object_object_get_ex(root, "ops", &v) && (rc = parse_ops(c, v, &ix)) != ERR_OK)
        goto out;
    sharding_warnings(c);
    if (json_object_object_get_ex(root, "kernels", &v))
        c->m->kernels_json = json_object_get(v); /* kernel_set_parse reads it (plan.c) */
out:
    (void)split_join(c, ts, &sp, SIZE_MAX); /* an early end: the helper's elements cleared */
    if (rc < 0 && ts->streaming && !stream_rest_valid(ts))
        rc = STREAM_FALLBACK;
    model_index_free(&ix);
    return rc;
}

int model_parse_json(const char *input, size_t len, const struct model_limits *l, struct model *m,
                     struct err *e)
{
    struct ctx c = {.m = m, .e = e, .l = l};
    struct tensor_src ts = {0};
    json_object *root = NULL, *jt;
    int rc;

    memset(m, 0, sizeof(*m));
    if (len > l->max_input_bytes)
        return err_set(e, ERR_LIMIT, "", "input is %zu bytes; the limit is %zu", len,
                       l->max_input_bytes);
    rc = stream_top(input, len, l->max_json_depth, &root, &ts);
    if (rc == 0)
        rc = parse_root(&c, root, &ts);
    if (rc == ERR_NOMEM)
        goto nomem;
    if (rc != STREAM_FALLBACK)
        goto out;
    /* The stream met something it does not handle: parse the whole document as before. */
    model_free(m);
    c = (struct ctx){.m = m, .e = e, .l = l};
    tensor_src_free(&ts);
    json_object_put(root);
    root = NULL;
    if ((rc = jsonr_load(input, len, l->max_json_depth, "model", &root, e)) != ERR_OK)
        return rc;
    if (json_object_object_get_ex(root, "tensors", &jt) && json_object_is_type(jt, json_type_array))
        ts.arr = jt;
    rc = parse_root(&c, root, &ts);
    goto out;
nomem:
    rc = err_set(e, ERR_NOMEM, "", "out of memory");
out:
    tensor_src_free(&ts);
    json_object_put(root);
    if (rc != ERR_OK)
        model_free(m);
    return rc;
}
