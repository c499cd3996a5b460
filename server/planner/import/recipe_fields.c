/*
 * recipe_fields.c - the recipe's run fields, one table per section: "train" (with its
 * "precision" and "optimizer"), "serve", "parallelism.pipeline"; then "mesh" and
 * "parallelism.rules". Each row names its key, its type and range, where it is stored and
 * its default; reading (errors name the field: "train.batch") and the result's echo (every
 * field with the value planned, defaults filled) both walk the same rows.
 */
#include <json-c/json.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "planner/base/jsonr.h"
#include "planner/import/recipe_int.h"

enum ftype { FT_INT, FT_REAL, FT_BOOL, FT_DTYPE, FT_ENUM, FT_POLICY, FT_OBJECT };

#define DERIVED (-1) /* a default that depends on another field (derive below) */

struct rsection;

struct rfield {
    const char *key;
    uint8_t type;
    bool required;
    size_t off; /* in struct recipe */
    int64_t lo, hi;
    const char *const *names;   /* FT_ENUM: the values (stored as uint8_t index) */
    int64_t dint;               /* the default: INT, BOOL, ENUM index, DTYPE (DERIVED) */
    double dreal;               /* the default: REAL */
    const struct rsection *sub; /* FT_OBJECT */
};

struct rsection {
    const char *path; /* "train.precision" */
    const struct rfield *f;
    size_t n;
};

#define OFF(x) offsetof(struct recipe, x)
#define N(a)   (sizeof(a) / sizeof((a)[0]))

static const char *const attention_names[] = {"flash", "dot_product", NULL};
static const char *const logits_names[] = {"whole", "chunked", NULL};
static const char *const opt_names[] = {"adamw", "adafactor", "sgd", "lion", NULL};
static const char *const schedule_names[] = {"1f1b", "gpipe", NULL};
/* serve.weights: the storage, the dtype at which it stays, and the quantization */
static const char *const weights_names[] = {"bf16", "f16", "f32", "int8", "int4", "fp8", NULL};
static const uint8_t weights_dtype[] = {DT_BF16, DT_F16, DT_F32, DT_BF16, DT_BF16, DT_BF16};
static const uint8_t weights_quant[] = {Q_NONE, Q_NONE, Q_NONE, Q_INT8, Q_INT4, Q_FP8};

#define MAXSIZE RECIPE_MAX_SIZE

static const struct rfield precision_f[] = {
    {"param", FT_DTYPE, false, OFF(t.param), 0, 0, NULL, DT_BF16, 0, NULL},
    {"compute", FT_DTYPE, false, OFF(t.compute), 0, 0, NULL, DT_BF16, 0, NULL},
    {"master", FT_DTYPE, false, OFF(t.master), 1, 0, NULL, DERIVED, 0, NULL}, /* lo 1: "none" */
    {"grad", FT_DTYPE, false, OFF(t.grad), 0, 0, NULL, DERIVED, 0, NULL},
};
static const struct rsection precision = {"train.precision", precision_f, N(precision_f)};

static const struct rfield optimizer_f[] = {
    {"name", FT_ENUM, false, OFF(t.opt.kind), 0, 0, opt_names, OPT_ADAMW, 0, NULL},
    {"state_dtype", FT_DTYPE, false, OFF(t.opt.state), 0, 0, NULL, DT_F32, 0, NULL},
    {"momentum", FT_REAL, false, OFF(t.opt.momentum), 0, 1, NULL, 0, DERIVED, NULL},
};
static const struct rsection optimizer = {"train.optimizer", optimizer_f, N(optimizer_f)};

static const struct rfield train_f[] = {
    {"batch", FT_INT, true, OFF(t.batch), 1, MAXSIZE, NULL, 0, 0, NULL},
    {"seq", FT_INT, true, OFF(t.seq), 1, MAXSIZE, NULL, 0, 0, NULL},
    {"microbatches", FT_INT, false, OFF(t.microbatches), 1, MAXSIZE, NULL, 1, 0, NULL},
    {"precision", FT_OBJECT, false, 0, 0, 0, NULL, 0, 0, &precision},
    {"optimizer", FT_OBJECT, false, 0, 0, 0, NULL, 0, 0, &optimizer},
    {"remat", FT_POLICY, false, OFF(t.policy), 0, 0, NULL, 0, 0, NULL},
    {"attention", FT_ENUM, false, OFF(t.attention), 0, 0, attention_names, ATT_FLASH, 0, NULL},
    {"logits", FT_ENUM, false, OFF(t.logits), 0, 0, logits_names, LG_WHOLE, 0, NULL},
    {"logits_chunk", FT_INT, false, OFF(t.logits_chunk), 1, MAXSIZE, NULL, 2048, 0, NULL},
    {"scan", FT_BOOL, false, OFF(t.scan), 0, 0, NULL, 1, 0, NULL},
    {"capacity_factor", FT_REAL, false, OFF(t.capacity_factor), 0, 64, NULL, 0, 1.25, NULL},
};
static const struct rsection train = {"train", train_f, N(train_f)};

static const struct rfield serve_f[] = {
    {"sequences", FT_INT, true, OFF(s.sequences), 1, MAXSIZE, NULL, 0, 0, NULL},
    {"context", FT_INT, true, OFF(s.context), 1, MAXSIZE, NULL, 0, 0, NULL},
    {"prefill_chunk", FT_INT, false, OFF(s.prefill_chunk), 0, MAXSIZE, NULL, DERIVED, 0, NULL},
    {"page_size", FT_INT, false, OFF(s.page_size), 1, 65536, NULL, 16, 0, NULL},
    {"weights", FT_ENUM, false, OFF(s.weights), 0, 0, weights_names, 0, 0, NULL},
    {"compute", FT_DTYPE, false, OFF(s.compute), 0, 0, NULL, DT_BF16, 0, NULL},
    {"kv_dtype", FT_DTYPE, false, OFF(s.kv), 0, 0, NULL, DERIVED, 0, NULL},
    {"group", FT_INT, false, OFF(s.group), 1, MAXSIZE, NULL, 128, 0, NULL},
    {"scan", FT_BOOL, false, OFF(s.scan), 0, 0, NULL, 1, 0, NULL},
    {"capacity_factor", FT_REAL, false, OFF(s.capacity_factor), 0, 64, NULL, 0, 0, NULL},
};
static const struct rsection serve = {"serve", serve_f, N(serve_f)};

static const struct rfield pipeline_f[] = {
    {"microbatches", FT_INT, false, OFF(pp_microbatches), 1, MAXSIZE, NULL, DERIVED, 0, NULL},
    {"schedule", FT_ENUM, false, OFF(schedule), 0, 0, schedule_names, 0, 0, NULL},
};
static const struct rsection pipeline = {"parallelism.pipeline", pipeline_f, N(pipeline_f)};

/* ---- dtypes ---------------------------------------------------------------------------------- */

static bool dtype_read(const char *s, uint8_t *out)
{
    enum dtype d = dtype_parse_alias(s, strlen(s));

    if (d == DT_INVALID || d == DT_TOKEN || d == DT_PRED || d == DT_C64 || d == DT_C128)
        return false;
    *out = (uint8_t)d;
    return true;
}

/* ---- reading -------------------------------------------------------------------------------- */

static int bad(struct err *e, const char *path, const char *key, const char *fmt, const char *got)
{
    char where[96];

    snprintf(where, sizeof(where), "%s.%s", path, key);
    return err_set(e, ERR_INVALID, where, "%s: %s, got %.80s", where, fmt, got);
}

static int enum_read(const struct rsection *sec, const struct rfield *f, const char *s,
                     uint8_t *out, struct err *e)
{
    char known[256];
    size_t n = 0;

    for (uint8_t i = 0; f->names[i] != NULL; i++) {
        if (strcmp(s, f->names[i]) == 0) {
            *out = i;
            return ERR_OK;
        }
        n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", f->names[i]);
    }
    return err_set(e, ERR_INVALID, sec->path, "%s.%s: \"%.60s\" is none of %s", sec->path, f->key,
                   s, known);
}

static int policy_read(const char *s, uint8_t *out, struct err *e)
{
    char known[512];
    size_t n = 0;

    for (size_t i = 0; i < recipe_policy_count(); i++) {
        const struct recipe_policy *p = recipe_policy_at(i);
        bool hit = strcmp(s, p->name) == 0;
        for (size_t a = 0; !hit && a < 3 && p->aliases[a] != NULL; a++)
            hit = strcmp(s, p->aliases[a]) == 0;
        if (hit) {
            *out = (uint8_t)i;
            return ERR_OK;
        }
        n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", p->name);
    }
    return err_set(e, ERR_INVALID, "train.remat",
                   "train.remat: unknown policy \"%.60s\" (known: %s; aliases: full, "
                   "layer_input, minimal, checkpoint_dots, minimal_offloaded)",
                   s, known);
}

static int read_section(json_object *obj, const struct rsection *sec, struct recipe *r,
                        struct err *e);

static int read_field(json_object *v, const struct rsection *sec, const struct rfield *f,
                      struct recipe *r, struct err *e)
{
    char *p = (char *)r + f->off;
    const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
    int64_t i;
    char range[96];

    switch (f->type) {
    case FT_INT:
        snprintf(range, sizeof(range), "must be a whole number from %lld to %lld", (long long)f->lo,
                 (long long)f->hi);
        if (jsonr_int(v, &i) != 0 || i < f->lo || i > f->hi)
            return bad(e, sec->path, f->key, range, json_object_to_json_string(v));
        memcpy(p, &i, sizeof(i));
        return ERR_OK;
    case FT_REAL: {
        double d = json_object_get_double(v);
        snprintf(range, sizeof(range), "must be a number from %lld to %lld", (long long)f->lo,
                 (long long)f->hi);
        if ((!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)) ||
            d < (double)f->lo || d > (double)f->hi)
            return bad(e, sec->path, f->key, range, json_object_to_json_string(v));
        memcpy(p, &d, sizeof(d));
        return ERR_OK;
    }
    case FT_BOOL:
        if (!json_object_is_type(v, json_type_boolean))
            return bad(e, sec->path, f->key, "must be true or false",
                       json_object_to_json_string(v));
        *(bool *)p = json_object_get_boolean(v);
        return ERR_OK;
    case FT_DTYPE:
        if (s != NULL && f->lo == 1 && strcmp(s, "none") == 0) {
            *(uint8_t *)p = DT_INVALID;
            return ERR_OK;
        }
        if (s == NULL || !dtype_read(s, (uint8_t *)p))
            return bad(e, sec->path, f->key,
                       "must be a dtype (bf16, f32, f16, f8e4m3fn, s8, s4 or their names "
                       "bfloat16, float32, fp8, int8, int4)",
                       json_object_to_json_string(v));
        return ERR_OK;
    case FT_ENUM:
        if (s == NULL)
            return bad(e, sec->path, f->key, "must be a string", json_object_to_json_string(v));
        return enum_read(sec, f, s, (uint8_t *)p, e);
    case FT_POLICY:
        if (s == NULL)
            return bad(e, sec->path, f->key, "must be a policy name",
                       json_object_to_json_string(v));
        return policy_read(s, (uint8_t *)p, e);
    default:
        return read_section(v, f->sub, r, e);
    }
}

static void set_default(const struct rfield *f, struct recipe *r)
{
    char *p = (char *)r + f->off;

    switch (f->type) {
    case FT_INT:
        memcpy(p, &f->dint, sizeof(f->dint));
        break;
    case FT_REAL:
        memcpy(p, &f->dreal, sizeof(f->dreal));
        break;
    case FT_BOOL:
        *(bool *)p = f->dint != 0;
        break;
    case FT_DTYPE:
    case FT_ENUM:
    case FT_POLICY:
        *(uint8_t *)p = (uint8_t)(f->dint == DERIVED ? 0xff : f->dint);
        break;
    default:
        break;
    }
}

static int unknown_key(const struct rsection *sec, const char *key, struct err *e)
{
    char known[256], where[96];
    size_t n = 0;

    for (size_t i = 0; i < sec->n; i++)
        n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", sec->f[i].key);
    snprintf(where, sizeof(where), "%s.%.40s", sec->path, key);
    return err_set(e, ERR_INVALID, where, "%s: unknown field (known: %s)", where, known);
}

static int read_section(json_object *obj, const struct rsection *sec, struct recipe *r,
                        struct err *e)
{
    json_object *named = NULL;
    int rc;

    /* a string stands for an object of its first field ("optimizer": "adamw") */
    if (json_object_is_type(obj, json_type_string)) {
        named = json_object_new_object();
        if (named == NULL)
            return err_set(e, ERR_NOMEM, sec->path, "%s: out of memory", sec->path);
        json_object_object_add(named, sec->f[0].key, json_object_get((json_object *)obj));
        obj = named;
    }
    if (obj != NULL && !json_object_is_type(obj, json_type_object)) {
        rc = err_set(e, ERR_INVALID, sec->path, "%s: must be an object, got %s", sec->path,
                     jsonr_type_name(obj));
        goto out;
    }
    rc = ERR_OK;
    if (obj != NULL) {
        JSONR_FOREACH(obj, it, end)
        {
            size_t i = 0;
            while (i < sec->n && strcmp(sec->f[i].key, JSONR_KEY(it)) != 0)
                i++;
            if (i == sec->n) {
                rc = unknown_key(sec, JSONR_KEY(it), e);
                goto out;
            }
        }
    }
    for (size_t i = 0; i < sec->n && rc == ERR_OK; i++) {
        const struct rfield *f = &sec->f[i];
        json_object *v = NULL;
        if (obj != NULL && json_object_object_get_ex(obj, f->key, &v) &&
            !json_object_is_type(v, json_type_null))
            rc = read_field(v, sec, f, r, e);
        else if (f->required)
            rc = err_set(e, ERR_INVALID, sec->path, "%s: \"%s\" is required", sec->path, f->key);
        else if (f->type == FT_OBJECT)
            rc = read_section(NULL, f->sub, r, e);
        else
            set_default(f, r);
    }
out:
    json_object_put(named);
    return rc;
}

/* ---- mesh and rules ------------------------------------------------------------------------- */

static const struct {
    const char *name;
    uint8_t axis;
} axis_aliases[] = {
    {"data", AX_DATA},         {"fsdp", AX_FSDP},      {"sequence", AX_SEQUENCE},
    {"context", AX_SEQUENCE},  {"tensor", AX_TENSOR},  {"expert", AX_EXPERT},
    {"pipeline", AX_PIPELINE}, {"stage", AX_PIPELINE},
};

int recipe_axis_find(const char *s)
{
    for (size_t i = 0; i < N(axis_aliases); i++)
        if (strcmp(s, axis_aliases[i].name) == 0)
            return axis_aliases[i].axis;
    return -1;
}

static int read_mesh(json_object *mesh, struct recipe *r, struct err *e)
{
    int64_t devices = 1;

    if (mesh == NULL)
        return ERR_OK;
    if (!json_object_is_type(mesh, json_type_object))
        return err_set(e, ERR_INVALID, "mesh", "mesh: must be an object of axis: size, got %s",
                       jsonr_type_name(mesh));
    JSONR_FOREACH(mesh, it, end)
    {
        int a = recipe_axis_find(JSONR_KEY(it));
        int64_t n;
        char where[64];
        snprintf(where, sizeof(where), "mesh.%.40s", JSONR_KEY(it));
        if (a < 0)
            return err_set(e, ERR_INVALID, where,
                           "%s: unknown mesh axis (known: data, fsdp, tensor, sequence or "
                           "context, expert, pipeline or stage)",
                           where);
        if (jsonr_int(JSONR_VAL(it), &n) != 0 || n < 1 || n > 65536)
            return err_set(e, ERR_INVALID, where, "%s: must be a whole number from 1 to 65536",
                           where);
        if (r->mesh[a] != 0)
            return err_set(e, ERR_INVALID, where, "%s: the axis is given twice (an alias?)", where);
        r->mesh[a] = n;
        devices *= n;
        if (devices > 65536)
            return err_set(e, ERR_LIMIT, "mesh", "mesh: more than 65536 devices");
    }
    return ERR_OK;
}

static int read_rule(const char *la_name, json_object *v, struct recipe *r, struct err *e)
{
    char where[80];
    int la = -1;
    size_t n;

    snprintf(where, sizeof(where), "parallelism.rules.%.40s", la_name);
    for (int i = 1; i < LA_COUNT; i++)
        if (strcmp(la_name, recipe_laxis_name((enum recipe_laxis)i)) == 0)
            la = i;
    if (la < 0)
        return err_set(e, ERR_INVALID, where,
                       "%s: unknown logical axis (known: exp, batch, length, heads, kv_heads, "
                       "mlp, vocab, embed, act_embed, head_dim, kv_length, norm, layers, "
                       "cache_pages, cache_heads)",
                       where);
    n = json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 1;
    if (n > RECIPE_MAX_RULE)
        return err_set(e, ERR_INVALID, where, "%s: at most %d mesh axes", where, RECIPE_MAX_RULE);
    r->rules[la].n = 0;
    r->rule_given[la] = true;
    for (size_t k = 0; k < n; k++) {
        json_object *a =
            json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, k) : v;
        int ax = json_object_is_type(a, json_type_string)
                     ? recipe_axis_find(json_object_get_string(a))
                     : -1;
        if (ax < 0)
            return err_set(e, ERR_INVALID, where,
                           "%s: must be a mesh axis name or a list of them (data, fsdp, tensor, "
                           "sequence, expert)",
                           where);
        r->rules[la].axes[r->rules[la].n++] = (uint8_t)ax;
    }
    return ERR_OK;
}

static int read_parallelism(json_object *par, struct recipe *r, struct err *e)
{
    json_object *v = NULL;
    int rc;

    if (par != NULL && !json_object_is_type(par, json_type_object))
        return err_set(e, ERR_INVALID, "parallelism", "parallelism: must be an object, got %s",
                       jsonr_type_name(par));
    if (par != NULL) {
        JSONR_FOREACH(par, it, end)
        if (strcmp(JSONR_KEY(it), "pipeline") != 0 && strcmp(JSONR_KEY(it), "rules") != 0)
            return err_set(e, ERR_INVALID, "parallelism",
                           "parallelism.%.40s: unknown field (known: pipeline, rules)",
                           JSONR_KEY(it));
        json_object_object_get_ex(par, "pipeline", &v);
    }
    if ((rc = read_section(v, &pipeline, r, e)) != ERR_OK)
        return rc;
    v = NULL;
    if (par != NULL && json_object_object_get_ex(par, "rules", &v)) {
        if (!json_object_is_type(v, json_type_object))
            return err_set(e, ERR_INVALID, "parallelism.rules",
                           "parallelism.rules: must be an object of logical axis: mesh axes");
        JSONR_FOREACH(v, it, end)
        if ((rc = read_rule(JSONR_KEY(it), JSONR_VAL(it), r, e)) != ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* ---- derived defaults and checks across fields ------------------------------------------------
 */

static int derive_train(struct recipe *r, struct err *e)
{
    struct recipe_train *t = &r->t;
    int64_t pp = r->stages > 1 ? r->pp_microbatches : 1;

    if (t->master == 0xff)
        t->master = dtype_bits((enum dtype)t->param) < 32 ? DT_F32 : DT_INVALID;
    if (t->grad == 0xff)
        t->grad = t->param;
    if (t->opt.momentum < 0)
        t->opt.momentum = t->opt.kind == OPT_SGD ? 0.9 : 0;
    if (t->batch % (t->microbatches * pp) != 0)
        return err_set(e, ERR_INVALID, "train.batch",
                       "train.batch: %lld sequences do not split evenly into %lld microbatches x "
                       "%lld pipeline microbatches",
                       (long long)t->batch, (long long)t->microbatches, (long long)pp);
    return ERR_OK;
}

static int derive_serve(struct recipe *r, struct err *e)
{
    struct recipe_serve *s = &r->s;

    if (s->kv == 0xff)
        s->kv = s->compute;
    if (s->prefill_chunk == DERIVED) /* 512 tokens, or the whole context when shorter */
        s->prefill_chunk = s->context < 512 ? s->context : 512;
    s->param = weights_dtype[s->weights];
    s->quant = weights_quant[s->weights];
    if (s->prefill_chunk > s->context)
        return err_set(e, ERR_INVALID, "serve.prefill_chunk",
                       "serve.prefill_chunk: %lld tokens is more than the context of %lld",
                       (long long)s->prefill_chunk, (long long)s->context);
    if (r->stages > 1)
        return err_set(e, ERR_INVALID, "mesh.pipeline",
                       "mesh.pipeline: pipeline stages are planned for training only; shard a "
                       "served model with tensor, data or expert");
    return ERR_OK;
}

int recipe_fields_read(json_object *root, struct recipe *r, struct err *e)
{
    json_object *tr = NULL, *sv = NULL, *mesh = NULL, *par = NULL;
    int rc;

    json_object_object_get_ex(root, "train", &tr);
    json_object_object_get_ex(root, "serve", &sv);
    json_object_object_get_ex(root, "mesh", &mesh);
    json_object_object_get_ex(root, "parallelism", &par);
    if ((tr != NULL) == (sv != NULL))
        return err_set(e, ERR_INVALID, "train",
                       "recipe: give exactly one of \"train\" (a training step) and \"serve\" (a "
                       "serving step)");
    recipe_rules_default(r->rules);
    if ((rc = read_mesh(mesh, r, e)) != ERR_OK || (rc = read_parallelism(par, r, e)) != ERR_OK)
        return rc;
    r->stages = r->mesh[AX_PIPELINE] > 0 ? r->mesh[AX_PIPELINE] : 1;
    if (r->pp_microbatches == DERIVED)
        r->pp_microbatches = r->stages;
    r->gpipe = r->schedule == 1;
    if (r->stages > r->arch.layers)
        return err_set(e, ERR_INVALID, "mesh.pipeline",
                       "mesh.pipeline: %lld stages for %lld layers; a stage needs a layer",
                       (long long)r->stages, (long long)r->arch.layers);
    if (r->stages > RECIPE_MAX_STAGES || r->pp_microbatches > RECIPE_MAX_INFLIGHT * 64)
        return err_set(e, ERR_LIMIT, "mesh.pipeline", "mesh.pipeline: at most %d stages",
                       RECIPE_MAX_STAGES);
    r->is_train = tr != NULL;
    if (r->is_train)
        return (rc = read_section(tr, &train, r, e)) != ERR_OK ? rc : derive_train(r, e);
    return (rc = read_section(sv, &serve, r, e)) != ERR_OK ? rc : derive_serve(r, e);
}

/* ---- the echo
 * ------------------------------------------------------------------------------------ */

static json_object *echo_field(const struct recipe *r, const struct rfield *f);

static json_object *echo_section(const struct recipe *r, const struct rsection *sec)
{
    json_object *o = json_object_new_object();

    for (size_t i = 0; o != NULL && i < sec->n; i++)
        json_object_object_add(o, sec->f[i].key, echo_field(r, &sec->f[i]));
    return o;
}

static json_object *echo_field(const struct recipe *r, const struct rfield *f)
{
    const char *p = (const char *)r + f->off;
    int64_t i;
    double d;

    switch (f->type) {
    case FT_INT:
        memcpy(&i, p, sizeof(i));
        return json_object_new_int64(i);
    case FT_REAL:
        memcpy(&d, p, sizeof(d));
        return json_object_new_double(d);
    case FT_BOOL:
        return json_object_new_boolean(*(const bool *)p);
    case FT_DTYPE:
        return *(const uint8_t *)p == DT_INVALID
                   ? json_object_new_string("none")
                   : json_object_new_string(dtype_name((enum dtype) * (const uint8_t *)p));
    case FT_ENUM:
        return json_object_new_string(f->names[*(const uint8_t *)p]);
    case FT_POLICY:
        return json_object_new_string(recipe_policy_at(*(const uint8_t *)p)->name);
    default:
        return echo_section(r, f->sub);
    }
}

json_object *recipe_choices_echo(void)
{
    static const struct rsection *const sections[] = {&train, &precision, &optimizer, &serve,
                                                      &pipeline};
    json_object *o = json_object_new_object();
    char key[64];

    for (size_t i = 0; o != NULL && i < N(sections); i++)
        for (size_t k = 0; k < sections[i]->n; k++) {
            const struct rfield *f = &sections[i]->f[k];
            json_object *names;
            if (f->type != FT_ENUM)
                continue;
            names = json_object_new_array();
            for (size_t j = 0; names != NULL && f->names[j] != NULL; j++)
                json_object_array_add(names, json_object_new_string(f->names[j]));
            snprintf(key, sizeof(key), "%s.%s", sections[i]->path, f->key);
            json_object_object_add(o, key, names);
        }
    return o;
}

json_object *recipe_fields_echo(const struct recipe *r)
{
    return echo_section(r, r->is_train ? &train : &serve);
}

json_object *recipe_pipeline_echo(const struct recipe *r)
{
    return echo_section(r, &pipeline);
}
