/*
 * recipe_gen.c - the emitter the step programs write with (recipe_int.h): tensors by
 * logical axes, ops in program order, then the finished struct model with each tensor's
 * sharding from the logical axis rules; a pipeline stage's layers and microbatches in flight.
 * It calls none of the step programs (recipe_stage.c runs them).
 *
 * The rules are MaxText's logical axis rules in spirit (MaxText/configs/base.yml,
 * logical_axis_rules): each logical axis names the mesh axes that shard it, in order; a
 * mesh axis of size 1, absent, or already used by an earlier dim of the same tensor is
 * skipped, and the rules are applied in the table's order (experts before batch before
 * heads ... before embed), so an expert weight's expert dim takes the expert axis before
 * its embed dim could. A recipe overrides any row (parallelism.rules).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/arith.h"
#include "planner/import/recipe_int.h"
#include "planner/model/model_build.h"

/* ---- names ----------------------------------------------------------------------------- */

static const char *const axis_names[AX_COUNT] = {"data",   "fsdp",   "sequence",
                                                 "tensor", "expert", "pipeline"};
static const char *const laxis_names[LA_COUNT] = {
    "none", "exp",    "batch",       "length",     "heads",    "kv_heads",
    "mlp",  "vocab",  "embed",       "act_embed",  "head_dim", "kv_length",
    "norm", "layers", "cache_pages", "cache_heads"};
static const char *const cat_names[CAT_COUNT] = {
    "weights",   "quant_scales",      "master_weights", "optimizer_state",
    "gradients", "saved_activations", "temporaries",    "gathered_weights",
    "inputs",    "outputs",           "kv_cache"};
static const char *const block_tags[] = {"block:embed", "block:attn", "block:mlp", "block:head"};

const char *recipe_axis_name(enum recipe_axis a)
{
    return (unsigned)a < AX_COUNT ? axis_names[a] : "?";
}

const char *recipe_laxis_name(enum recipe_laxis a)
{
    return (unsigned)a < LA_COUNT ? laxis_names[a] : "?";
}

const char *recipe_cat_name(enum recipe_cat c)
{
    return (unsigned)c < CAT_COUNT ? cat_names[c] : "?";
}

/* ---- the default rules ------------------------------------------------------------------ */

void recipe_rules_default(struct recipe_rule *r)
{
    static const struct {
        uint8_t la, n, axes[RECIPE_MAX_RULE];
    } rows[] = {
        {LA_EXP, 1, {AX_EXPERT}},
        {LA_BATCH, 3, {AX_DATA, AX_FSDP, AX_EXPERT}},
        {LA_LENGTH, 1, {AX_SEQUENCE}},
        {LA_HEADS, 1, {AX_TENSOR}},
        {LA_KV_HEADS, 1, {AX_TENSOR}},
        {LA_MLP, 1, {AX_TENSOR}},
        {LA_VOCAB, 1, {AX_TENSOR}},
        {LA_EMBED, 3, {AX_FSDP, AX_SEQUENCE, AX_EXPERT}},
        {LA_CACHE_PAGES, 2, {AX_DATA, AX_FSDP}},
        {LA_CACHE_HEADS, 1, {AX_TENSOR}},
    };

    memset(r, 0, LA_COUNT * sizeof(*r));
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        r[rows[i].la].n = rows[i].n;
        memcpy(r[rows[i].la].axes, rows[i].axes, rows[i].n);
    }
}

/* ---- the emitter ------------------------------------------------------------------------ */

#define RG_MAX_NAMES ((size_t)256 << 20) /* bytes of tensor and op names */
#define RG_OP_REFS   4096                /* inputs and outputs of one op */

static void fail(struct rg *g, int rc, const char *what)
{
    if (g->rc == ERR_OK)
        g->rc = err_set(g->e, rc, "", "recipe: %s", what);
}

static uint32_t add_name(struct rg *g, const char *fmt, va_list ap)
{
    char buf[MODEL_MAX_NAME];
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    size_t at = g->names.n;

    if (n < 0 || (size_t)n >= sizeof(buf)) {
        fail(g, ERR_LIMIT, "a tensor name is too long");
        return 0;
    }
    if (vec_reserve(&g->names, at + (size_t)n + 1) != ERR_OK) {
        fail(g, ERR_LIMIT, "the names take too much memory");
        return 0;
    }
    memcpy(vec_at(&g->names, at), buf, (size_t)n + 1);
    g->names.n = at + (size_t)n + 1;
    return (uint32_t)at;
}

void rg_init(struct rg *g, const struct recipe *r, int64_t stage, const struct model_limits *l,
             struct err *e)
{
    memset(g, 0, sizeof(*g));
    g->r = r;
    g->e = e;
    g->stage = stage;
    g->mb = -1;
    vec_init(&g->tensors, sizeof(struct rg_tensor), l->max_tensors);
    vec_init(&g->ops, sizeof(struct rg_op), l->max_ops);
    vec_init(&g->refs, sizeof(uint32_t), (size_t)RG_OP_REFS * (l->max_ops ? l->max_ops : 1));
    vec_init(&g->names, 1, RG_MAX_NAMES);
    memcpy(g->dim, r->arch.dim, sizeof(r->arch.dim));
}

void rg_free(struct rg *g)
{
    vec_free(&g->tensors);
    vec_free(&g->ops);
    vec_free(&g->refs);
    vec_free(&g->names);
}

/* The open op's refs are kept in refs from its `first`: inputs are inserted before the
 * outputs, so each op's inputs then outputs stay contiguous. */
void rg_op(struct rg *g, const char *fmt, ...)
{
    struct rg_op op = {0};
    va_list ap;

    if (g->rc != ERR_OK)
        return;
    va_start(ap, fmt);
    op.name = add_name(g, fmt, ap);
    va_end(ap);
    op.first = (uint32_t)g->refs.n;
    if (g->rc == ERR_OK && vec_push(&g->ops, &op) != ERR_OK)
        fail(g, ERR_LIMIT, "more ops than the model limit");
    g->op_open = g->rc == ERR_OK;
}

static void add_ref(struct rg *g, uint32_t t, bool input)
{
    struct rg_op *op;
    uint32_t *refs;

    if (g->rc != ERR_OK || t == RG_NONE || !g->op_open)
        return;
    op = vec_at(&g->ops, g->ops.n - 1);
    if (op->n_in + op->n_out >= RG_OP_REFS || vec_reserve(&g->refs, g->refs.n + 1) != ERR_OK) {
        fail(g, ERR_LIMIT, "an op with too many tensors");
        return;
    }
    refs = vec_at(&g->refs, op->first);
    /* made by this op already: reading it within the op adds nothing to its lifetime (and
     * an op may not both read and make a tensor) */
    for (uint32_t k = 0; input && k < op->n_out; k++)
        if (refs[op->n_in + k] == t)
            return;
    if (input) {
        memmove(refs + op->n_in + 1, refs + op->n_in, op->n_out * sizeof(*refs));
        refs[op->n_in++] = t;
    } else {
        refs[op->n_in + op->n_out++] = t;
    }
    g->refs.n++;
}

void rg_use(struct rg *g, uint32_t t)
{
    add_ref(g, t, true);
}

static bool is_argument(uint8_t kind)
{
    return kind == TENSOR_PARAM || kind == TENSOR_OPTIMIZER || kind == TENSOR_INPUT ||
           kind == TENSOR_KV_CACHE;
}

uint32_t rg_tensor(struct rg *g, const struct rg_spec *s, const char *fmt, ...)
{
    struct rg_tensor t = {0};
    va_list ap;
    unsigned d = 0;

    if (g->rc != ERR_OK)
        return RG_NONE;
    va_start(ap, fmt);
    t.name = add_name(g, fmt, ap);
    va_end(ap);
    t.kind = s->kind;
    t.cat = s->cat;
    t.dtype = s->dtype;
    t.layer = s->layer;
    t.block = s->block;
    t.gathered = s->gathered;
    t.mb = g->mb;
    if (s->lead > 0) {
        t.dims[d] = s->lead;
        t.axes[d++] = LA_LAYERS;
    }
    for (unsigned i = 0; i < s->rank && d < RECIPE_MAX_RANK; i++, d++) {
        t.dims[d] = g->dim[s->dims[i]];
        t.axes[d] = s->axes[i];
    }
    t.rank = (uint8_t)d;
    if (g->rc == ERR_OK && vec_push(&g->tensors, &t) != ERR_OK)
        fail(g, ERR_LIMIT, "more tensors than the model limit");
    if (g->rc != ERR_OK)
        return RG_NONE;
    if (!is_argument(s->kind))
        add_ref(g, (uint32_t)(g->tensors.n - 1), false);
    return (uint32_t)(g->tensors.n - 1);
}

/* ---- sharding ------------------------------------------------------------------------------ */

/* Per dim, the recipe mesh axes (bit per enum recipe_axis) sharding it. */
static void shard(const struct recipe *r, uint8_t rank, const uint8_t *axes, uint16_t gathered,
                  uint16_t *mask)
{
    uint16_t used = 0;

    memset(mask, 0, rank * sizeof(*mask));
    for (unsigned la = 1; la < LA_COUNT; la++) {
        const struct recipe_rule *rule = &r->rules[la];
        if (gathered & (1u << la))
            continue;
        for (unsigned d = 0; d < rank; d++) {
            if (axes[d] != la)
                continue;
            for (unsigned k = 0; k < rule->n; k++) {
                unsigned ax = rule->axes[k];
                if (ax == AX_PIPELINE || r->mesh[ax] <= 1 || (used & (1u << ax)))
                    continue;
                used |= (uint16_t)(1u << ax);
                mask[d] |= (uint16_t)(1u << ax);
            }
        }
    }
}

static int64_t local_dim(const struct recipe *r, int64_t dim, uint16_t mask)
{
    int64_t parts = 1;

    for (unsigned ax = 0; ax < AX_COUNT; ax++)
        if (mask & (1u << ax))
            parts *= r->mesh[ax];
    return dim == 0 ? 0 : (dim - 1) / parts + 1;
}

uint64_t rg_local_bytes(const struct rg *g, const struct rg_spec *s)
{
    uint8_t axes[RECIPE_MAX_RANK];
    int64_t dims[RECIPE_MAX_RANK];
    uint16_t mask[RECIPE_MAX_RANK];
    unsigned n = 0;
    uint64_t bytes = dtype_bits((enum dtype)s->dtype);
    bool ovf = false;

    if (s->lead > 0) {
        dims[n] = s->lead;
        axes[n++] = LA_LAYERS;
    }
    for (unsigned i = 0; i < s->rank && n < RECIPE_MAX_RANK; i++, n++) {
        dims[n] = g->dim[s->dims[i]];
        axes[n] = s->axes[i];
    }
    shard(g->r, (uint8_t)n, axes, s->gathered, mask);
    for (unsigned d = 0; d < n; d++)
        ovf |= arith_mul(bytes, (uint64_t)local_dim(g->r, dims[d], mask[d]), &bytes);
    return ovf ? UINT64_MAX : (bytes + 7) / 8;
}

bool rg_sharded_on(const struct rg *g, const struct rg_spec *s, uint8_t la)
{
    uint16_t mask[RECIPE_MAX_RANK];

    shard(g->r, s->rank, s->axes, s->gathered, mask);
    for (unsigned d = 0; d < s->rank; d++)
        if (s->axes[d] == la && mask[d] != 0)
            return true;
    return false;
}

/* ---- the finished model --------------------------------------------------------------------- */

static int set_mesh(const struct recipe *r, struct model *m, int8_t *index)
{
    for (unsigned ax = 0; ax < AX_COUNT; ax++) {
        index[ax] = -1;
        if (ax == AX_PIPELINE || r->mesh[ax] == 0)
            continue;
        index[ax] = (int8_t)m->naxes;
        m->axis_names[m->naxes] = axis_names[ax];
        m->axis_sizes[m->naxes++] = r->mesh[ax];
        m->devices *= (uint64_t)r->mesh[ax];
    }
    return ERR_OK;
}

static const char *tag(struct model *m, const char *fmt, long long v)
{
    char buf[48];
    int n = snprintf(buf, sizeof(buf), fmt, v);

    return model_strdup(m, buf, (size_t)n);
}

static int set_tags(const struct rg *g, const struct rg_tensor *t, struct model_tensor *mt,
                    struct model *m)
{
    const char *tags[5];
    uint8_t n = 0;

    if (t->layer >= 0)
        tags[n++] = tag(m, "layer:%lld", t->layer);
    else if (t->layer == -2)
        tags[n++] = "layer:stacked";
    tags[n++] = block_tags[t->block & 3];
    tags[n++] = cat_names[t->cat];
    if (t->mb >= 0)
        tags[n++] = tag(m, "microbatch:%lld", t->mb);
    if (g->r->stages > 1)
        tags[n++] = tag(m, "stage:%lld", g->stage);
    mt->tags = model_alloc(m, n * sizeof(*mt->tags));
    if (mt->tags == NULL)
        return ERR_NOMEM;
    for (uint8_t i = 0; i < n; i++)
        if ((mt->tags[i] = tags[i]) == NULL)
            return ERR_NOMEM;
    mt->ntags = n;
    return ERR_OK;
}

static int finish_tensor(const struct rg *g, size_t i, struct model *m, const int8_t *index)
{
    const struct rg_tensor *t = vec_at(&g->tensors, i);
    struct model_tensor *mt = &m->tensors[i];
    const char *name = vec_at(&g->names, t->name);
    uint16_t mask[RECIPE_MAX_RANK];
    struct shape sh;
    bool sharded = false;

    memset(&sh, 0, sizeof(sh));
    sh.dtype = (enum dtype)t->dtype;
    sh.rank = t->rank;
    shard(g->r, t->rank, t->axes, t->gathered, mask);
    for (unsigned d = 0; d < t->rank; d++) {
        sh.dims[d] = local_dim(g->r, t->dims[d], mask[d]);
        sharded |= mask[d] != 0;
    }
    mt->kind = (enum tensor_kind)t->kind;
    if ((mt->name = model_strdup(m, name, strlen(name))) == NULL ||
        model_tensor_set_shape(m, mt, &sh) != ERR_OK || set_tags(g, t, mt, m) != ERR_OK)
        return ERR_NOMEM;
    if (!sharded)
        return ERR_OK;
    mt->sharded = true;
    mt->global_dims = model_alloc(m, t->rank * sizeof(*mt->global_dims));
    mt->shard_mask = model_alloc(m, t->rank * sizeof(*mt->shard_mask));
    if (mt->global_dims == NULL || mt->shard_mask == NULL)
        return ERR_NOMEM;
    for (unsigned d = 0; d < t->rank; d++) {
        mt->global_dims[d] = t->dims[d];
        mt->shard_mask[d] = 0;
        for (unsigned ax = 0; ax < AX_COUNT; ax++)
            if ((mask[d] & (1u << ax)) && index[ax] >= 0)
                mt->shard_mask[d] |= (uint16_t)(1u << index[ax]);
    }
    return ERR_OK;
}

static int finish_ops(const struct rg *g, struct model *m)
{
    const uint32_t *refs = g->refs.data;

    m->ops = calloc(g->ops.n ? g->ops.n : 1, sizeof(*m->ops));
    if (m->ops == NULL)
        return ERR_NOMEM;
    m->nops = g->ops.n;
    for (size_t k = 0; k < g->ops.n; k++) {
        const struct rg_op *o = vec_at(&g->ops, k);
        struct model_op *mo = &m->ops[k];
        const char *name = vec_at(&g->names, o->name);
        if ((mo->name = model_strdup(m, name, strlen(name))) == NULL)
            return ERR_NOMEM;
        mo->ninputs = o->n_in;
        mo->noutputs = o->n_out;
        mo->inputs = model_alloc(m, (o->n_in + o->n_out + 1) * sizeof(uint32_t));
        if (mo->inputs == NULL)
            return ERR_NOMEM;
        memcpy(mo->inputs, refs + o->first, (o->n_in + o->n_out) * sizeof(uint32_t));
        mo->outputs = mo->inputs + o->n_in;
    }
    return ERR_OK;
}

int rg_finish(struct rg *g, struct model *m, uint8_t **cats, struct err *e)
{
    int8_t index[AX_COUNT];

    if (cats != NULL)
        *cats = NULL;
    if (g->rc != ERR_OK)
        return g->rc;
    if (model_init(m, "recipe", g->tensors.n) != ERR_OK)
        goto nomem;
    set_mesh(g->r, m, index);
    for (size_t i = 0; i < g->tensors.n; i++)
        if (finish_tensor(g, i, m, index) != ERR_OK)
            goto nomem;
    if (finish_ops(g, m) != ERR_OK)
        goto nomem;
    if (cats != NULL) {
        if ((*cats = calloc(g->tensors.n ? g->tensors.n : 1, 1)) == NULL)
            goto nomem;
        for (size_t i = 0; i < g->tensors.n; i++)
            (*cats)[i] = ((const struct rg_tensor *)vec_at(&g->tensors, i))->cat;
    }
    return ERR_OK;
nomem:
    model_free(m);
    return err_set(e, ERR_NOMEM, "", "recipe: out of memory building the model");
}

/* ---- stages ---------------------------------------------------------------------------------- */

void recipe_body_name(char *buf, size_t cap, bool scan, size_t nbodies, int64_t first,
                      int64_t count)
{
    if (!scan)
        snprintf(buf, cap, "layers.%lld", (long long)first);
    else if (nbodies == 1)
        snprintf(buf, cap, "layers");
    else
        snprintf(buf, cap, "layers[%lld:%lld]", (long long)first,
                 (long long)first + (long long)count);
}

void recipe_stage_layers(const struct recipe *r, int64_t k, int64_t *first, int64_t *n)
{
    int64_t per = r->arch.layers / r->stages, extra = r->arch.layers % r->stages;

    /* the first `extra` stages take one layer more */
    *n = per + (k < extra);
    *first = k * per + (k < extra ? k : extra);
}

int64_t recipe_in_flight(const struct recipe *r, int64_t k)
{
    int64_t m = r->pp_microbatches;

    if (r->stages <= 1 || !r->is_train)
        return 1;
    if (r->gpipe)
        return m;
    return r->stages - k < m ? r->stages - k : m;
}
