/*
 * plan_advice.c - what to change when a plan does not fit, is over its budget, or is within
 * 10 % of either (server/planner/RESULT.md#advice).
 *
 * Each candidate change is a what-if of the model (whatif.h): overrides that the plan page
 * posts to /api/v1/plans/{id}/whatif, so each item links to its what-if plan. The changed
 * model is planned for real (plan_measure), never estimated: `peak_after` is that plan's
 * peak. The items are ranked (those that fit first, then by the bytes they save), and the
 * smallest set that fits is found greedily: at each step the item whose addition gives the
 * lowest peak, planned with the ones before it. Every plan counts against a budget of
 * PLAN_ADVICE_MAX_REPLANS plans and PLAN_ADVICE_MAX_WORK tensors planned in all, so advice
 * costs a bounded number of plans of the model's size (none past 200,000 tensors).
 *
 * Re-plans run the greedy strategies (or the ones the plan named), one pass each: the
 * exact and search strategies would spend their time limit on every candidate.
 */
#include "planner/plan/plan_int.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/chip.h"
#include "planner/jsonw.h"
#include "planner/layout.h"
#include "planner/model.h"
#include "planner/pack.h"
#include "planner/peak.h"
#include "planner/recipe.h"
#include "planner/suggest.h"
#include "planner/whatif.h"
#include "planner/base/jsonr.h"

#define NEAR_NUM      9 /* within 10 %: a peak above 9/10 of the capacity or budget */
#define NEAR_DEN      10
#define REMAT_LAYERS  3 /* per-layer remat candidates, the largest layers first */
#define OVERRIDES_MAX 4096
#define NO_FLOPS      "recompute_flops unknown: a model description's ops carry no FLOPs"

static const char *const cost_names[] = {
    [PLAN_COST_NONE] = "none",           [PLAN_COST_RECOMPUTE] = "recompute",
    [PLAN_COST_PRECISION] = "precision", [PLAN_COST_COMMUNICATION] = "communication",
    [PLAN_COST_CHIPS] = "chips",         [PLAN_COST_HOST] = "host",
    [PLAN_COST_STEPS] = "steps",         [PLAN_COST_RESHAPE] = "reshape",
};

#define MESH_MAX_CHIPS 4096 /* the mesh search never plans past this many chips */

/* What the advisor works with: the input and the options it was planned with. */
struct advisor {
    const struct plan_ctx *c;
    const char *input;
    size_t len;
    struct plan_opts o; /* the caller's, strategies set to the re-plans' */
    const struct plan_limits *lim;
    struct plan_advice *a;
    bool recipe;           /* the input is a recipe: its changes are a merge patch of it */
    char mesh_axis[64];    /* the axis the mesh search multiplies; "" none */
    int64_t mesh_size;     /* its size now */
    int mesh_rank;         /* fsdp 2, data 1, another 0 (pick_axis) */
    uint64_t mesh_devices; /* the chips of the mesh now */
};

/* Whether a plan with this peak and verdict is what the advice aims for: it fits and is
 * within its budget. */
static bool good(const struct plan_summary *s)
{
    return s->verdict == PLAN_FIT_FITS || s->verdict == PLAN_FIT_NO_CAPACITY;
}

/* Why advice is given for c with peak, or NULL: it does not fit, is over budget, or is
 * within 10 % of either. */
static const char *reason(const struct plan_ctx *c, uint64_t peak, char *buf, size_t cap)
{
    struct plan_verdict v;

    plan_verdict_compose(c, peak, &v);
    if (v.status == PLAN_FIT_DOES_NOT_FIT)
        return "does not fit";
    if (v.status == PLAN_FIT_OVER_BUDGET)
        return "over budget";
    if (c->capacity > 0 && peak / NEAR_NUM * NEAR_DEN >= c->capacity / NEAR_NUM * NEAR_NUM) {
        snprintf(buf, cap, "within 10%% of the capacity");
        return buf;
    }
    if (c->has_budget && peak / NEAR_NUM * NEAR_DEN >= c->budget_bytes / NEAR_NUM * NEAR_NUM) {
        snprintf(buf, cap, "within 10%% of the budget");
        return buf;
    }
    return NULL;
}

/* ---- candidates: each a what-if, as its pieces ---- */

static struct plan_advice_item *item_new(struct plan_advice *a, const char *kind)
{
    struct plan_advice_item *it;

    if (a->n == PLAN_ADVICE_MAX_ITEMS)
        return NULL;
    it = &a->items[a->n++];
    memset(it, 0, sizeof(*it));
    snprintf(it->kind, sizeof(it->kind), "%s", kind);
    it->flops_fraction = -1;
    return it;
}

/* A piece of a what-if: a remat pattern (name), a dtype (name: pattern, text: the dtype), a
 * sharding (name: a tensor, text: the mesh axis on dim `dim` of `rank`) or a chip (text). */
static struct plan_advice_frag *frag_add(struct plan_advice_item *it, enum plan_frag_key key,
                                         const char *name, const char *text)
{
    struct plan_advice_frag *f;

    if (it->nfrags == PLAN_ADVICE_MAX_FRAGS)
        return NULL;
    f = &it->frags[it->nfrags++];
    memset(f, 0, sizeof(*f));
    f->key = key;
    snprintf(f->name, sizeof(f->name), "%s", name != NULL ? name : "");
    snprintf(f->text, sizeof(f->text), "%s", text != NULL ? text : "");
    return f;
}

/* A name fnmatch would read as a pattern (*, ?, [) cannot be selected by itself. */
static bool plain_name(const char *s)
{
    return strpbrk(s, "*?[]\\") == NULL;
}

/* An activation remat splits: saved over more than two steps (whatif.h). */
static bool remat_target(const struct model_tensor *t)
{
    return t->kind == TENSOR_ACTIVATION && t->live_end - t->live_start > 2 && t->padded_bytes > 0;
}

/* Remat of every saved activation, and of the largest layers' one by one (the layers of the
 * first REMAT_TABLE met are summed; a model with more is offered the largest of those). */
#define REMAT_TABLE 64
static void cand_remat(struct advisor *ad)
{
    const struct model *m = &ad->c->m;
    struct layer_sum {
        const char *name;
        size_t len;
        uint64_t bytes;
    } layers[REMAT_TABLE];
    size_t nlayers = 0, nall = 0;
    uint64_t all = 0;
    struct plan_advice_item *it;

    for (size_t i = 0; i < m->n; i++) {
        const struct model_tensor *t = &m->tensors[i];
        size_t len, k = 0;
        if (!remat_target(t))
            continue;
        all += t->padded_bytes;
        nall++;
        if (!peak_layer_prefix(t->name, &len) || !plain_name(t->name))
            continue;
        while (k < nlayers && !(layers[k].len == len && strncmp(layers[k].name, t->name, len) == 0))
            k++;
        if (k == nlayers) {
            if (nlayers == REMAT_TABLE)
                continue;
            layers[nlayers++] = (struct layer_sum){t->name, len, 0};
        }
        layers[k].bytes += t->padded_bytes;
    }
    if (nall == 0)
        return;
    if ((it = item_new(ad->a, "remat")) != NULL) {
        frag_add(it, PLAN_FRAG_REMAT, "activation", 0);
        snprintf(it->change, sizeof(it->change),
                 "rematerialise every saved activation (%zu): recompute them in the backward "
                 "instead of keeping them",
                 nall);
        it->cost = PLAN_COST_RECOMPUTE;
        it->cost_bytes = all;
        snprintf(it->note, sizeof(it->note), NO_FLOPS);
    }
    if (nlayers < 2)
        return;
    for (size_t r = 0; r < REMAT_LAYERS && r < nlayers; r++) {
        size_t best = r;
        char pattern[PLAN_ADVICE_NAME];
        for (size_t q = r + 1; q < nlayers; q++)
            best = layers[q].bytes > layers[best].bytes ? q : best;
        struct layer_sum tmp = layers[r];
        layers[r] = layers[best];
        layers[best] = tmp;
        if ((size_t)snprintf(pattern, sizeof(pattern), "%.*s%c*", (int)layers[r].len,
                             layers[r].name,
                             layers[r].name[layers[r].len] == '/' ? '/' : '.') >= sizeof(pattern) ||
            (it = item_new(ad->a, "remat")) == NULL)
            return;
        frag_add(it, PLAN_FRAG_REMAT, pattern, 0);
        snprintf(it->change, sizeof(it->change), "rematerialise the saved activations of %.*s",
                 (int)layers[r].len, layers[r].name);
        it->cost = PLAN_COST_RECOMPUTE;
        it->cost_bytes = layers[r].bytes;
        snprintf(it->note, sizeof(it->note), NO_FLOPS);
    }
}

/* Bytes of the tensors of kind k stored as dtype d (padded). */
static uint64_t kind_dtype_bytes(const struct model *m, enum tensor_kind k, enum dtype d)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < m->n; i++)
        if (m->tensors[i].kind == k && !m->tensors[i].raw && m->tensors[i].shape.dtype == d)
            sum += m->tensors[i].padded_bytes;
    return sum;
}

/* Lower precision for a category: f32 activations in bf16, f32 or bf16 optimizer state in
 * 8 bits. */
static void cand_precision(struct advisor *ad)
{
    const struct model *m = &ad->c->m;
    struct plan_advice_item *it;
    uint64_t act = kind_dtype_bytes(m, TENSOR_ACTIVATION, DT_F32);
    uint64_t opt = kind_dtype_bytes(m, TENSOR_OPTIMIZER, DT_F32) +
                   kind_dtype_bytes(m, TENSOR_OPTIMIZER, DT_BF16);

    if (act > 0 && (it = item_new(ad->a, "precision")) != NULL) {
        frag_add(it, PLAN_FRAG_DTYPE, "activation", "bf16");
        snprintf(it->change, sizeof(it->change), "keep the activations in bf16, not f32");
        it->cost = PLAN_COST_PRECISION;
    }
    if (opt > 0 && (it = item_new(ad->a, "precision")) != NULL) {
        frag_add(it, PLAN_FRAG_DTYPE, "optimizer", "s8");
        snprintf(it->change, sizeof(it->change),
                 "keep the optimizer state in 8 bits (s8, as 8-bit optimizers do)");
        it->cost = PLAN_COST_PRECISION;
    }
}

/* Host offload (whatif.h's memory_space): every saved activation (out after its producing
 * step, back for its last use), the largest of them by name when there are more than a
 * what-if's pieces, and the optimizer state, whole (as ZeRO-Offload keeps it:
 * server/planner/SOURCES.md#zero-offload). The traffic a step is found from the changed
 * plan's host bytes (plan_item). */
static void cand_offload(struct advisor *ad)
{
    const struct model *m = &ad->c->m;
    struct plan_advice_item *it;
    size_t nall = 0;

    for (size_t i = 0; i < m->n; i++)
        nall += remat_target(&m->tensors[i]);
    if (nall > 0 && (it = item_new(ad->a, "offload")) != NULL) {
        frag_add(it, PLAN_FRAG_SPACE, "activation", "host");
        snprintf(it->change, sizeof(it->change),
                 "offload every saved activation (%zu) to host memory: copied out after the "
                 "step that makes it, back for its last use",
                 nall);
        it->cost = PLAN_COST_HOST;
    }
    if (nall > PLAN_ADVICE_MAX_FRAGS && (it = item_new(ad->a, "offload")) != NULL) {
        uint64_t under = UINT64_MAX; /* the next is the largest below the last taken */
        while (it->nfrags < PLAN_ADVICE_MAX_FRAGS) {
            size_t best = m->n;
            for (size_t i = 0; i < m->n; i++) {
                const struct model_tensor *t = &m->tensors[i];
                if (remat_target(t) && plain_name(t->name) && strlen(t->name) < PLAN_ADVICE_NAME &&
                    t->padded_bytes <= under &&
                    (best == m->n || t->padded_bytes > m->tensors[best].padded_bytes)) {
                    bool taken = false;
                    for (size_t q = 0; q < it->nfrags && !taken; q++)
                        taken = strcmp(it->frags[q].name, t->name) == 0;
                    best = taken ? best : i;
                }
            }
            if (best == m->n)
                break;
            frag_add(it, PLAN_FRAG_SPACE, m->tensors[best].name, "host");
            under = m->tensors[best].padded_bytes;
        }
        snprintf(it->change, sizeof(it->change),
                 "offload the %zu largest saved activations to host memory", it->nfrags);
        it->cost = PLAN_COST_HOST;
        if (it->nfrags == 0)
            ad->a->n--;
    }
    for (size_t i = 0; i < m->n; i++)
        if (m->tensors[i].kind == TENSOR_OPTIMIZER && m->tensors[i].padded_bytes > 0) {
            if ((it = item_new(ad->a, "offload")) == NULL)
                return;
            frag_add(it, PLAN_FRAG_SPACE, "optimizer", "host");
            snprintf(it->change, sizeof(it->change),
                     "keep the optimizer state in host memory (as ZeRO-Offload does): read and "
                     "written once a step");
            it->cost = PLAN_COST_HOST;
            return;
        }
}

/* Whether t's dim d is sharded over mesh axis x. */
static bool on_axis(const struct model_tensor *t, uint8_t d, size_t x)
{
    return t->shard_mask != NULL && (t->shard_mask[d] >> x) & 1u;
}

/* The first dim of t that can take mesh axis y too: its global extent divided evenly by the
 * axes it is sharded over and y; -1 when none can, or t is sharded over y already. */
static int shardable_dim(const struct model *m, const struct model_tensor *t, size_t y)
{
    int found = -1;

    for (uint8_t d = 0; d < t->shape.rank; d++) {
        int64_t dim = t->global_dims != NULL ? t->global_dims[d] : t->shape.dims[d], n = 1;
        if (on_axis(t, d, y))
            return -1;
        for (size_t x = 0; x < m->naxes; x++)
            n *= on_axis(t, d, x) || x == y ? m->axis_sizes[x] : 1; /* <= devices: no overflow */
        if (found < 0 && dim >= n && dim % n == 0)
            found = d;
    }
    return found;
}

/* Appends printf output to buf at *n (cap bytes); *n past cap once it no longer fits. */
static void put(char *buf, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (*n >= cap)
        return;
    va_start(ap, fmt);
    k = vsnprintf(buf + *n, cap - *n, fmt, ap);
    va_end(ap);
    *n += k > 0 ? (size_t)k : 0;
}

/* t's sharding with mesh axis y added on dim dy, as the what-if's JSON array (one entry per
 * dim: null, an axis or a list of them, in mesh order) into buf; false when it does not fit. */
static bool sharding_spec(const struct model *m, const struct model_tensor *t, int dy, size_t y,
                          char *buf, size_t cap)
{
    size_t n = 0;

    put(buf, cap, &n, "[");
    for (uint8_t d = 0; d < t->shape.rank; d++) {
        size_t axes = 0, k = 0;
        for (size_t x = 0; x < m->naxes; x++)
            axes += on_axis(t, d, x) || (d == dy && x == y);
        put(buf, cap, &n, "%s%s", d > 0 ? "," : "", axes == 0 ? "null" : axes > 1 ? "[" : "");
        for (size_t x = 0; x < m->naxes; x++)
            if (on_axis(t, d, x) || (d == dy && x == y))
                put(buf, cap, &n, "%s\"%s\"", k++ > 0 ? "," : "", m->axis_names[x]);
        put(buf, cap, &n, "%s", axes > 1 ? "]" : "");
    }
    put(buf, cap, &n, "]");
    return n < cap;
}

/* Whether t is sharded over some mesh axis. */
static bool sharded_somewhere(const struct model_tensor *t)
{
    for (uint8_t d = 0; t->sharded && d < t->shape.rank; d++)
        if (t->shard_mask != NULL && t->shard_mask[d] != 0)
            return true;
    return false;
}

/*
 * Passes of a tensor's bytes over the interconnect a step once it is sharded (ZeRO's
 * accounting: Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion
 * Parameter Models", section 7, server/planner/SOURCES.md#zero): a sharded parameter is
 * all-gathered before its forward and again before its backward (2 passes), a sharded
 * gradient reduce-scattered once (1 pass), each pass moving (n - 1) / n of the bytes through
 * every device of an n-device axis (a ring). Sharded optimizer state is updated where it is
 * and adds none: ZeRO counts P_os and P_g at data parallelism's own volume.
 *   comm_bytes_per_step = sum over the tensors sharded of passes(kind) * B * (n - 1) / n,
 * B the tensor's bytes on a device before the change.
 */
static uint64_t zero_passes(enum tensor_kind k)
{
    return k == TENSOR_PARAM ? 2 : k == TENSOR_GRAD ? 1 : 0;
}

/* The largest weights, gradients and optimizer states sharded over mesh axis y (ZeRO /
 * FSDP): those replicated over every axis, or (under) those sharded over some axes but
 * replicated over y, each on its first dim that takes y (shardable_dim). */
static void shard_over(struct advisor *ad, size_t y, bool under)
{
    const struct model *m = &ad->c->m;
    struct plan_advice_item *it;
    uint64_t n = (uint64_t)m->axis_sizes[y], comm = 0;

    if ((it = item_new(ad->a, "sharding")) == NULL)
        return;
    while (it->nfrags < PLAN_ADVICE_MAX_FRAGS) {
        size_t best = m->n;
        for (size_t i = 0; i < m->n; i++) {
            const struct model_tensor *t = &m->tensors[i];
            bool taken = false;
            if (sharded_somewhere(t) != under || t->raw || !plain_name(t->name) ||
                strlen(t->name) >= PLAN_ADVICE_NAME ||
                (t->kind != TENSOR_PARAM && t->kind != TENSOR_GRAD &&
                 t->kind != TENSOR_OPTIMIZER) ||
                shardable_dim(m, t, y) < 0)
                continue;
            for (size_t q = 0; q < it->nfrags && !taken; q++)
                taken = strcmp(it->frags[q].name, t->name) == 0;
            if (!taken && (best == m->n || t->padded_bytes > m->tensors[best].padded_bytes))
                best = i;
        }
        if (best == m->n)
            break;
        const struct model_tensor *t = &m->tensors[best];
        char spec[sizeof(it->frags[0].text)];
        if (!sharding_spec(m, t, shardable_dim(m, t, y), y, spec, sizeof(spec)) ||
            frag_add(it, PLAN_FRAG_SHARDING, t->name, spec) == NULL)
            break;
        comm += zero_passes(t->kind) * (t->padded_bytes / n * (n - 1)); /* < 3x the bytes */
    }
    if (it->nfrags == 0) {
        ad->a->n--;
        return;
    }
    if (under)
        snprintf(it->change, sizeof(it->change),
                 "shard the %zu largest weights, gradients and optimizer states sharded over "
                 "other axes over mesh axis %s (%lld devices) too, as FSDP over more axes does",
                 it->nfrags, m->axis_names[y], (long long)n);
    else
        snprintf(it->change, sizeof(it->change),
                 "shard the %zu largest replicated weights, gradients and optimizer states over "
                 "mesh axis %s (%lld devices), as ZeRO / FSDP do",
                 it->nfrags, m->axis_names[y], (long long)n);
    it->cost = PLAN_COST_COMMUNICATION;
    it->cost_bytes = comm;
    snprintf(it->note, sizeof(it->note),
             "ZeRO's accounting: parameters all-gathered twice, gradients reduce-scattered "
             "once a step, (n - 1) / n of their bytes a pass");
}

/* Sharding candidates (ZeRO / FSDP): replicated state over the largest mesh axis, and state
 * sharded over some axes but replicated over another, over each of the UNDER_AXES largest. */
#define UNDER_AXES 2
static void cand_sharding(struct advisor *ad)
{
    const struct model *m = &ad->c->m;
    bool used[MODEL_MAX_AXES] = {false};
    size_t largest = m->naxes;

    for (size_t made = 0; made <= UNDER_AXES; made++) {
        size_t y = m->naxes;
        for (size_t x = 0; x < m->naxes; x++)
            if (!used[x] && m->axis_sizes[x] >= 2 &&
                (y == m->naxes || m->axis_sizes[x] > m->axis_sizes[y]))
                y = x;
        if (y == m->naxes)
            break;
        used[y] = true;
        largest = largest == m->naxes ? y : largest;
        if (made < UNDER_AXES)
            shard_over(ad, y, true);
    }
    if (largest < m->naxes)
        shard_over(ad, largest, false);
}

/* Whether tensors a and b have one shape (dtype, dims and layout), unsharded. */
static bool same_shape(const struct model_tensor *a, const struct model_tensor *b)
{
    if (a->sharded || b->sharded || a->raw || b->raw || a->shape.dtype != b->shape.dtype ||
        a->shape.rank != b->shape.rank || a->padded_bytes != b->padded_bytes)
        return false;
    for (uint8_t d = 0; d < a->shape.rank; d++)
        if (a->shape.dims[d] != b->shape.dims[d])
            return false;
    return true;
}

/* The layout fixes tpuplan suggests (suggest.h), the largest LAYOUT_FIXES: each tensor of
 * the shape stored as the suggested one. Sharded tensors' fixes (a per-device shape) are
 * left to the suggestions. */
#define LAYOUT_FIXES 3
static int cand_layout(struct advisor *ad, struct err *e)
{
    const struct model *m = &ad->c->m;
    struct suggest_fix sg[SUGGEST_MAX_FIXES];
    size_t nsg = 0, made = 0;
    int rc;

    if (ad->c->chip == NULL)
        return ERR_OK;
    if ((rc = suggest_model(m, ad->c->chip, sg, &nsg, e)) != ERR_OK)
        return rc;
    for (size_t k = 0; k < nsg && made < LAYOUT_FIXES; k++) {
        const struct model_tensor *t = &m->tensors[sg[k].tensor];
        struct plan_advice_item *it;
        char shape[SHAPE_MAX_TEXT];
        size_t n = strcspn(sg[k].s.suggested_shape, "{");
        if (t->sharded || n >= sizeof(((struct plan_advice_frag *)NULL)->text) ||
            !plain_name(t->name) || strlen(t->name) >= PLAN_ADVICE_NAME ||
            (it = item_new(ad->a, "layout")) == NULL)
            continue;
        snprintf(shape, sizeof(shape), "%.*s", (int)n, sg[k].s.suggested_shape);
        for (size_t i = 0; i < m->n; i++)
            if ((i == sg[k].tensor || same_shape(&m->tensors[i], t)) &&
                plain_name(m->tensors[i].name) && strlen(m->tensors[i].name) < PLAN_ADVICE_NAME)
                frag_add(it, PLAN_FRAG_SHAPE, m->tensors[i].name, shape);
        char before[32], after[32];
        snprintf(it->change, sizeof(it->change), "store %.60s%s as %.60s: %s padded, %s instead",
                 t->name, it->nfrags > 1 ? " (and the tensors of its shape)" : "", shape,
                 layout_format_bytes(sg[k].s.padded_bytes, before, sizeof(before)),
                 layout_format_bytes(sg[k].s.suggested_padded_bytes, after, sizeof(after)));
        it->cost = PLAN_COST_RESHAPE;
        made++;
    }
    return ERR_OK;
}

/* ---- a recipe's candidates: its fields changed ---- */

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;

    return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

/* A string member of o, or dflt. */
static const char *str_or(json_object *o, const char *key, const char *dflt)
{
    json_object *v = member(o, key);

    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : dflt;
}

static int64_t int_or(json_object *o, const char *key, int64_t dflt)
{
    int64_t v;

    return jsonr_int(member(o, key), &v) == 0 ? v : dflt;
}

/* One recipe field changed: kind, the field's path and value, in words, at cost. */
static void recipe_item(struct advisor *ad, const char *kind, const char *path, const char *value,
                        enum plan_cost cost, const char *change)
{
    struct plan_advice_item *it = item_new(ad->a, kind);

    if (it == NULL)
        return;
    frag_add(it, PLAN_FRAG_RECIPE, path, value);
    snprintf(it->change, sizeof(it->change), "%s", change);
    it->cost = cost;
}

/* Whether a remat policy keeps no more than the layer input in HBM. */
static bool keeps_input_only(const char *p)
{
    return strcmp(p, "nothing_saveable") == 0 || strcmp(p, "full") == 0 ||
           strcmp(p, "layer_input") == 0 || strcmp(p, "layer_input_offloaded") == 0;
}

/*
 * A training step's FLOPs, per token (server/planner/SOURCES.md#kaplan-flops): Kaplan et al. 2020,
 * "Scaling Laws for Neural Language Models", Table 1: the forward pass is 2 N + 2 n_layer n_ctx
 * d_attn FLOPs a token (N the non-embedding parameters: each a multiply-add of a matmul; the second
 * term QK^T and AV over the whole context), the backward twice that. Norms and biases count
 * with N (under 0.1 % of it); the logits matmul, 2 d_model n_vocab, is added as its own term.
 * Dense layers only: an MoE layer's active parameters and MLA's latent attention are not
 * modelled, and neither is a sliding window (the full context is counted).
 */
struct step_flops {
    double layers;     /* 2 N: the layers' matmuls, a token */
    double attn;       /* 2 n_layer n_ctx d_attn: QK^T and AV, a token */
    double logits;     /* 2 d_model n_vocab */
    double tokens;     /* a step's */
    const char *remat; /* the policy now, canonical (borrowed from the plan's echo) */
    bool known;
    const char *why; /* when not known */
};

/* What each remat policy recomputes in the backward, of a layer's forward (recipe_layer.c's
 * policies): the layers' matmuls and the attention's, or the attention's (QK^T and AV have
 * batch dimensions), or none (their outputs are kept). Elementwise work is not counted. */
static const struct {
    const char *policy;
    bool layers, attn;
} remat_recompute[] = {
    {"nothing_saveable", true, true},
    {"layer_input_offloaded", true, true},
    {"dots_with_no_batch_dims_saveable", false, true},
    {"offload_dot_with_no_batch_dims", false, true},
    {"dots_saveable", false, false},
    {"everything_saveable", false, false},
};

/* The FLOPs a token that policy recomputes; < 0: a policy the table does not know. */
static double recomputed(const struct step_flops *f, const char *policy)
{
    for (size_t i = 0; i < sizeof(remat_recompute) / sizeof(remat_recompute[0]); i++)
        if (strcmp(remat_recompute[i].policy, policy) == 0)
            return (remat_recompute[i].layers ? f->layers : 0) +
                   (remat_recompute[i].attn ? f->attn : 0);
    return -1;
}

/* The FLOPs a token policy recomputes beyond the policy now; < 0: either not in the table. */
static double more(const struct step_flops *f, const char *policy)
{
    double now = recomputed(f, f->remat), then = recomputed(f, policy);

    return now < 0 || then < 0 ? -1 : then - now;
}

/* The recipe's step as planned: the plan's recipe echo
 * (server/planner/RESULT.md#the-recipe-section: a preset's sizes, the policy by its canonical
 * name). */
static void step_flops_read(const struct advisor *ad, struct step_flops *f)
{
    static const char *const keys[] = {"layers",   "hidden_size", "heads",
                                       "head_dim", "vocab_size",  "parameters"};
    json_object *echo = ad->c->m.recipe_json, *model = member(echo, "model"),
                *train = member(echo, "train");
    int64_t v[6], tokens = int_or(echo, "tokens_per_step", 0), seq = int_or(train, "seq", 0);
    double embed;

    memset(f, 0, sizeof(*f));
    f->why = "recompute_flops unknown: the recipe's sizes could not be read";
    f->remat = str_or(train, "remat", "");
    for (size_t i = 0; i < 6; i++)
        if ((v[i] = int_or(model, keys[i], 0)) <= 0)
            return;
    if (tokens <= 0 || seq <= 0)
        return;
    if (member(model, "experts") != NULL) {
        f->why = "recompute_flops unknown: an MoE layer's active FLOPs are not modelled";
        return;
    }
    embed = (double)v[4] * (double)v[1] *
            (json_object_get_boolean(member(model, "tied_embeddings")) ? 1 : 2);
    if ((double)v[5] <= embed)
        return;
    f->layers = 2 * ((double)v[5] - embed);
    f->attn = 2 * (double)v[0] * (double)seq * (double)v[2] * (double)v[3];
    f->logits = 2 * (double)v[1] * (double)v[4];
    f->tokens = (double)tokens;
    f->known = true;
}

/* Sets the last item's recompute FLOPs (kind: its kind) to per_token a token of the step,
 * and their share of the step's FLOPs without remat (3 x the forward). */
static void set_flops(struct advisor *ad, const char *kind, const struct step_flops *f,
                      double per_token)
{
    struct plan_advice_item *it = ad->a->n > 0 ? &ad->a->items[ad->a->n - 1] : NULL;
    double total = per_token * f->tokens, step = 3 * (f->layers + f->attn + f->logits) * f->tokens;

    if (it == NULL || strcmp(it->kind, kind) != 0)
        return;
    if (!f->known || per_token < 0 || total >= 1.8e19) {
        snprintf(it->note, sizeof(it->note), "%s",
                 f->known ? "recompute_flops unknown: a remat policy without a FLOPs row" : f->why);
        return;
    }
    it->recompute_flops = (uint64_t)(total + 0.5);
    it->flops_known = true;
    it->flops_fraction = step > 0 ? total / step : -1;
}

/* A training step's: remat, host offload, microbatches, chunked logits, 8-bit optimizer
 * state (server/planner/INPUT.md#training-step). */
static void cand_train(struct advisor *ad, json_object *train)
{
    const char *remat = str_or(train, "remat", "nothing_saveable");
    int64_t batch = int_or(train, "batch", 0), mb = int_or(train, "microbatches", 1);
    json_object *opt = member(train, "optimizer");
    char v[96], words[256];
    struct step_flops f;

    step_flops_read(ad, &f);
    if (!keeps_input_only(remat)) {
        snprintf(words, sizeof(words),
                 "remat policy nothing_saveable instead of %.60s: keep only each layer's input, "
                 "recompute the rest in the backward",
                 remat);
        recipe_item(ad, "remat", "train.remat", "nothing_saveable", PLAN_COST_RECOMPUTE, words);
        set_flops(ad, "remat", &f, more(&f, "nothing_saveable"));
    }
    if (strcmp(remat, "layer_input_offloaded") != 0) {
        recipe_item(ad, "offload", "train.remat", "layer_input_offloaded", PLAN_COST_HOST,
                    "offload each layer's input to host memory (remat policy "
                    "layer_input_offloaded), copied back for the backward");
        set_flops(ad, "offload", &f, more(&f, "layer_input_offloaded"));
    }
    if (batch > 0 && mb > 0 && mb < INT32_MAX && batch % (mb * 2) == 0) {
        long long twice = (long long)mb * 2, per = (long long)batch / twice;
        snprintf(v, sizeof(v), "%lld", twice);
        snprintf(words, sizeof(words),
                 "%lld microbatches instead of %lld: %lld examples a pass, gradients accumulated",
                 twice, (long long)mb, per);
        recipe_item(ad, "microbatch", "train.microbatches", v, PLAN_COST_STEPS, words);
    }
    if (strcmp(str_or(train, "logits", "whole"), "chunked") != 0) {
        recipe_item(ad, "logits", "train.logits", "chunked", PLAN_COST_RECOMPUTE,
                    "chunked logits: the cross-entropy a chunk of tokens at a time, made again "
                    "in the backward, instead of the whole [batch, seq, vocab] logits");
        set_flops(ad, "logits", &f, f.logits);
    }
    if (!json_object_is_type(opt, json_type_object)) {
        /* a name becomes {name, state_dtype}: the merge patch replaces the string */
        recipe_item(ad, "precision", "train.optimizer.name",
                    json_object_is_type(opt, json_type_string) ? json_object_get_string(opt)
                                                               : "adamw",
                    PLAN_COST_PRECISION, "keep the optimizer state in 8 bits (state_dtype s8)");
        if (ad->a->n > 0 && strcmp(ad->a->items[ad->a->n - 1].kind, "precision") == 0)
            frag_add(&ad->a->items[ad->a->n - 1], PLAN_FRAG_RECIPE, "train.optimizer.state_dtype",
                     "s8");
    } else if (strcmp(str_or(opt, "state_dtype", "f32"), "s8") != 0) {
        recipe_item(ad, "precision", "train.optimizer.state_dtype", "s8", PLAN_COST_PRECISION,
                    "keep the optimizer state in 8 bits (state_dtype s8)");
    }
}

/* A serving step's: half the concurrent sequences, int8 weights
 * (server/planner/INPUT.md#serving-step). */
static void cand_serve(struct advisor *ad, json_object *serve)
{
    int64_t seqs = int_or(serve, "sequences", 0);
    char v[32], words[256];

    if (seqs >= 2) {
        snprintf(v, sizeof(v), "%lld", (long long)(seqs / 2));
        snprintf(words, sizeof(words), "serve %lld sequences at once instead of %lld",
                 (long long)(seqs / 2), (long long)seqs);
        recipe_item(ad, "microbatch", "serve.sequences", v, PLAN_COST_STEPS, words);
    }
    if (strcmp(str_or(serve, "weights", "bf16"), "int8") != 0 &&
        strcmp(str_or(serve, "weights", "bf16"), "int4") != 0)
        recipe_item(ad, "precision", "serve.weights", "int8", PLAN_COST_PRECISION,
                    "quantize the weights to int8");
}

/* The mesh axis whose chips the search multiplies: fsdp, else data, else the largest (the
 * axes a step's batch and state are split over); kept in ad for search_mesh. */
static void pick_axis(struct advisor *ad, const char *name, int64_t size)
{
    int rank = strcmp(name, "fsdp") == 0 ? 2 : strcmp(name, "data") == 0 ? 1 : 0;

    if (size < 1 || size > INT32_MAX)
        return;
    ad->mesh_devices =
        ad->mesh_devices > MESH_MAX_CHIPS ? ad->mesh_devices : ad->mesh_devices * (uint64_t)size;
    if (ad->mesh_axis[0] != '\0' &&
        (rank < ad->mesh_rank || (rank == ad->mesh_rank && size <= ad->mesh_size)))
        return;
    snprintf(ad->mesh_axis, sizeof(ad->mesh_axis), "%s", name);
    ad->mesh_size = size;
    ad->mesh_rank = rank;
}

static void cand_mesh(struct advisor *ad, json_object *mesh)
{
    int64_t v;

    ad->mesh_devices = 1;
    JSONR_FOREACH(mesh, m, end)
    {
        if (jsonr_int(JSONR_VAL(m), &v) == 0 && strlen(JSONR_KEY(m)) < sizeof(ad->mesh_axis))
            pick_axis(ad, JSONR_KEY(m), v);
    }
}

/* A recipe's candidates, from its own text. */
static void cand_recipe(struct advisor *ad)
{
    json_object *root = NULL, *train, *serve;
    struct err e;

    if (jsonr_load(ad->input, ad->len, RECIPE_MAX_DEPTH, "recipe", &root, &e) != ERR_OK ||
        !json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return;
    }
    if (json_object_is_type(train = member(root, "train"), json_type_object))
        cand_train(ad, train);
    if (json_object_is_type(serve = member(root, "serve"), json_type_object))
        cand_serve(ad, serve);
    if (json_object_is_type(member(root, "mesh"), json_type_object))
        cand_mesh(ad, member(root, "mesh"));
    json_object_put(root);
}

/* ---- planning a change ---- */

/* Whether text is a whole number (written as one, not as a string). */
static bool is_count(const char *text)
{
    return text[0] != '\0' && strspn(text, "0123456789") == strlen(text) && strlen(text) < 19;
}

/* The recipe pieces in f[0..n) under prefix (plen bytes: "" or "train.") as nested members
 * of w's open object: each path component once, in the order first met (a merge patch,
 * RFC 7386, of the recipe). */
static void write_paths(struct jsonw *w, const struct plan_advice_frag *const *f, size_t n,
                        const char *prefix, size_t plen)
{
    for (size_t i = 0; i < n; i++) {
        const char *rest = f[i]->name + plen;
        size_t clen = strcspn(rest, ".");
        bool seen = false;
        char key[PLAN_ADVICE_NAME], sub[PLAN_ADVICE_NAME];
        if (strncmp(f[i]->name, prefix, plen) != 0 || clen == 0)
            continue;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strncmp(f[j]->name, f[i]->name, plen + clen) == 0 &&
                   (f[j]->name[plen + clen] == '.' || f[j]->name[plen + clen] == '\0');
        if (seen)
            continue;
        snprintf(key, sizeof(key), "%.*s", (int)clen, rest);
        if (rest[clen] == '\0') {
            if (is_count(f[i]->text))
                jsonw_i64(w, key, strtoll(f[i]->text, NULL, 10));
            else
                jsonw_str(w, key, f[i]->text);
            continue;
        }
        snprintf(sub, sizeof(sub), "%.*s.", (int)(plen + clen), f[i]->name);
        jsonw_obj_begin(w, key);
        write_paths(w, f, n, sub, plen + clen + 1);
        jsonw_obj_end(w);
    }
}

/* The recipe pieces of the items in set[0..n), in order, into out (at most cap). */
static size_t recipe_frags(const struct plan_advice *a, const size_t *set, size_t n,
                           const struct plan_advice_frag **out, size_t cap)
{
    size_t k = 0;

    for (size_t s = 0; s < n; s++)
        for (size_t f = 0; f < a->items[set[s]].nfrags && k < cap; f++)
            if (a->items[set[s]].frags[f].key == PLAN_FRAG_RECIPE)
                out[k++] = &a->items[set[s]].frags[f];
    return k;
}

/* The overrides of the items in set[0..n) as one what-if object (remat patterns
 * concatenated, dtype and sharding maps merged, the last chip), as w's member key. */
static void write_overrides(struct jsonw *w, const char *key, const struct plan_advice *a,
                            const size_t *set, size_t n)
{
    static const char *const keys[] = {
        [PLAN_FRAG_REMAT] = "remat",       [PLAN_FRAG_DTYPE] = "dtype",
        [PLAN_FRAG_SHARDING] = "sharding", [PLAN_FRAG_CHIP] = "chip",
        [PLAN_FRAG_MESH] = "mesh",         [PLAN_FRAG_RECIPE] = "recipe",
        [PLAN_FRAG_SHAPE] = "xla_shape",   [PLAN_FRAG_SPACE] = "memory_space"};
    _Static_assert(sizeof(keys) / sizeof(keys[0]) == PLAN_FRAG_KEYS, "a key per piece");

    jsonw_obj_begin(w, key);
    for (int k = 0; k < PLAN_FRAG_KEYS; k++) {
        bool open = false;
        for (size_t s = 0; s < n; s++) {
            const struct plan_advice_item *it = &a->items[set[s]];
            for (size_t f = 0; f < it->nfrags; f++) {
                const struct plan_advice_frag *fr = &it->frags[f];
                if ((int)fr->key != k)
                    continue;
                if (k == PLAN_FRAG_CHIP) {
                    jsonw_str(w, keys[k], fr->text);
                    continue;
                }
                if (k == PLAN_FRAG_RECIPE) { /* all of them at once, nested */
                    if (!open) {
                        const struct plan_advice_frag
                            *rf[PLAN_ADVICE_MAX_ITEMS * PLAN_ADVICE_MAX_FRAGS];
                        jsonw_obj_begin(w, keys[k]);
                        size_t nrf = recipe_frags(a, set, n, rf, sizeof(rf) / sizeof(rf[0]));
                        write_paths(w, rf, nrf, "", 0);
                    }
                    open = true;
                    continue;
                }
                if (!open && k == PLAN_FRAG_REMAT)
                    jsonw_arr_begin(w, keys[k]);
                else if (!open)
                    jsonw_obj_begin(w, keys[k]);
                open = true;
                if (k == PLAN_FRAG_REMAT) {
                    jsonw_str(w, NULL, fr->name);
                } else if (k == PLAN_FRAG_DTYPE || k == PLAN_FRAG_RECIPE || k == PLAN_FRAG_SHAPE ||
                           k == PLAN_FRAG_SPACE) {
                    jsonw_str(w, fr->name, fr->text);
                } else if (k == PLAN_FRAG_MESH) {
                    jsonw_i64(w, fr->name, strtoll(fr->text, NULL, 10));
                } else { /* a sharding, its JSON array made by sharding_spec */
                    json_object *v = json_tokener_parse(fr->text);
                    jsonr_write(w, fr->name, v);
                    json_object_put(v);
                }
            }
        }
        if (open && k == PLAN_FRAG_REMAT)
            jsonw_arr_end(w);
        else if (open)
            jsonw_obj_end(w);
    }
    jsonw_obj_end(w);
}

/* write_overrides as a document into buf (cap bytes). */
static int render(const struct plan_advice *a, const size_t *set, size_t n, char *buf, size_t cap)
{
    struct jsonw w;
    char *out = NULL;
    size_t len = 0;

    jsonw_init(&w, cap);
    write_overrides(&w, NULL, a, set, n);
    if (jsonw_finish(&w, &out, &len) != ERR_OK || len >= cap) {
        free(out);
        return ERR_LIMIT;
    }
    memcpy(buf, out, len + 1);
    free(out);
    return ERR_OK;
}

/* A recipe's what-if, ov, planned: its "recipe" member, its "mesh" and its "chip" are one
 * merge patch of the recipe (recipe_merge), as the what-if of a recipe's plan applies them. */
static int replan_recipe(struct advisor *ad, const char *ov, struct plan_summary *s, char *why,
                         size_t cap)
{
    json_object *doc = NULL, *patch = NULL, *v;
    struct recipe *r = NULL;
    struct plan_opts o = ad->o;
    char *text = NULL;
    size_t len = 0;
    struct err e;
    int rc;

    err_clear(&e);
    if ((rc = jsonr_load(ov, strlen(ov), RECIPE_MAX_DEPTH, "overrides", &doc, &e)) != ERR_OK)
        goto out;
    patch = json_object_is_type(v = member(doc, "recipe"), json_type_object)
                ? json_object_get(v)
                : json_object_new_object();
    if (patch == NULL) {
        rc = err_set(&e, ERR_NOMEM, "", "out of memory");
        goto out;
    }
    if ((v = member(doc, "mesh")) != NULL)
        json_object_object_add(patch, "mesh", json_object_get(v));
    if ((v = member(doc, "chip")) != NULL) {
        json_object_object_add(patch, "chip", json_object_get(v));
        o.chip = NULL; /* the recipe's chip now */
    }
    const char *p = json_object_to_json_string_ext(patch, JSON_C_TO_STRING_PLAIN);
    if ((rc = recipe_parse(ad->input, ad->len, &r, &e)) != ERR_OK ||
        (rc = recipe_merge(r, p, strlen(p), &e)) != ERR_OK ||
        (rc = recipe_text(r, &text, &len, &e)) != ERR_OK)
        goto out;
    rc = plan_measure(text, len, &o, ad->lim, s, &e);
out:
    if (rc != ERR_OK)
        snprintf(why, cap, "%s", e.msg);
    free(text);
    recipe_free(r);
    json_object_put(patch);
    json_object_put(doc);
    return rc != ERR_OK ? ERR_INVALID : ERR_OK;
}

/* Plans the model with the items of set[0..n) applied into *s; ERR_LIMIT once the re-plans
 * are spent. The error of a change that cannot be made goes to why. */
static int replan(struct advisor *ad, const size_t *set, size_t n, struct plan_summary *s,
                  char *why, size_t cap)
{
    struct plan_advice *a = ad->a;
    char ov[OVERRIDES_MAX];
    struct whatif_result wr;
    struct plan_opts o = ad->o;
    struct err e;
    int rc;

    if (a->replans >= a->max_replans)
        return ERR_LIMIT;
    a->replans++;
    err_clear(&e);
    if (render(a, set, n, ov, sizeof(ov)) != ERR_OK) {
        snprintf(why, cap, "the change is too long to write");
        return ERR_INVALID;
    }
    memset(&wr, 0, sizeof(wr));
    if (ad->recipe)
        return replan_recipe(ad, ov, s, why, cap);
    if (whatif_apply(ad->input, ad->len, ov, strlen(ov), ad->lim, &wr, &e) != ERR_OK) {
        snprintf(why, cap, "%s", e.msg);
        return ERR_INVALID;
    }
    if (wr.chip_set)
        o.chip = NULL; /* the model's chip now */
    rc = plan_measure(wr.model, wr.model_len, &o, ad->lim, s, &e);
    free(wr.model);
    if (rc != ERR_OK) {
        snprintf(why, cap, "%s", e.msg);
        return ERR_INVALID;
    }
    return ERR_OK;
}

/* The host link's bandwidth per chip, for the time an offload's traffic takes: the Scaling
 * Book's "PCIe is about 1.6e10 B/s per TPU (3.2e10 on v6e)"
 * (server/planner/SOURCES.md#scaling-book), for the generations of its table; the other chips have
 * no cited figure. */
static const struct host_link {
    const char *chip;
    double bytes_per_s;
} host_links[] = {
    {"v3", 1.6e10}, {"v4", 1.6e10}, {"v5p", 1.6e10}, {"v5e", 1.6e10}, {"v6e", 3.2e10},
};
#define HOST_LINK_SOURCE "Scaling Book: PCIe about 1.6e10 B/s per TPU, 3.2e10 on v6e"

static const struct host_link *host_link_of(const struct chip *ch)
{
    for (size_t k = 0; ch != NULL && k < sizeof(host_links) / sizeof(host_links[0]); k++)
        if (strcmp(host_links[k].chip, ch->name) == 0)
            return &host_links[k];
    return NULL;
}

/* An offload's traffic a step, from what its plan moved to host memory: each byte goes out
 * once and comes back once a step (an activation after its forward and for its backward;
 * optimizer state read and written by the update), so 2x the bytes added to host memory. */
static void host_cost(const struct advisor *ad, struct plan_advice_item *it)
{
    uint64_t before = plan_host_bytes(ad->c);

    if (it->cost != PLAN_COST_HOST)
        return;
    if (it->host_after <= before) {
        snprintf(it->note, sizeof(it->note), "the changed plan holds no more in host memory");
        return;
    }
    it->cost_bytes = (it->host_after - before) * 2; /* < 2^64: both are sums that fit */
    if (host_link_of(ad->c->chip) == NULL)
        snprintf(it->note, sizeof(it->note), "bytes only: no cited host-link bandwidth for %s",
                 ad->c->chip != NULL ? ad->c->chip->name : "a plan without a chip");
}

/* Plans item i alone into its figures. */
static int plan_item(struct advisor *ad, size_t i)
{
    struct plan_advice_item *it = &ad->a->items[i];
    struct plan_summary s = {0};
    int rc = replan(ad, &i, 1, &s, it->error, sizeof(it->error));

    if (rc == ERR_LIMIT)
        return rc;
    it->planned = rc == ERR_OK;
    if (it->planned) {
        it->peak_after = s.peak_bytes;
        it->host_after = s.host_bytes;
        it->fits_after = s.fits;
        it->within_budget_after = s.within_budget;
        it->good_after = good(&s);
        host_cost(ad, it);
    }
    return ERR_OK;
}

/* The smallest chip with more usable HBM than c's that fits the model, trying at most
 * every chip of the table with more usable HBM, smallest first (one of each size: the table
 * has no prices, and a chip with the same HBM as one that did not fit is not tried). Only
 * when the capacity is the chip's. */
static int cand_chip(struct advisor *ad)
{
    const struct plan_ctx *c = ad->c;
    uint64_t above = c->chip != NULL ? c->chip->usable_hbm_bytes : 0;

    if (!c->capacity_from_chip || c->chip == NULL)
        return ERR_OK;
    for (size_t tries = 0; tries < chip_count(); tries++) {
        const struct chip *next = NULL;
        for (size_t k = 0; k < chip_count(); k++) {
            const struct chip *ch = chip_at(k);
            if (ch->usable_hbm_bytes > above &&
                (next == NULL || ch->usable_hbm_bytes < next->usable_hbm_bytes))
                next = ch;
        }
        struct plan_advice_item *it;
        if (next == NULL || (it = item_new(ad->a, "chip")) == NULL)
            return ERR_OK;
        frag_add(it, PLAN_FRAG_CHIP, NULL, next->name);
        snprintf(it->change, sizeof(it->change),
                 "plan for %s (%llu bytes of usable HBM) instead of %s", next->name,
                 (unsigned long long)next->usable_hbm_bytes, c->chip->name);
        it->cost = PLAN_COST_CHIPS;
        int rc = plan_item(ad, ad->a->n - 1);
        if (rc != ERR_OK)
            return rc;
        if (!it->planned || it->good_after)
            return ERR_OK;
        ad->a->n--; /* too small too: try the next */
        above = next->usable_hbm_bytes;
    }
    return ERR_OK;
}

/* Item i planned with its mesh axis at mesh_size << k; ERR_LIMIT once the re-plans are
 * spent. */
static int probe_mesh(struct advisor *ad, size_t i, int k)
{
    struct plan_advice_item *it = &ad->a->items[i];

    int64_t size = ad->mesh_size << k; /* <= INT32_MAX: search_mesh bounds k */

    snprintf(it->frags[0].text, sizeof(it->frags[0].text), "%lld", (long long)size);
    return plan_item(ad, i);
}

/*
 * The smallest chip count that fits, searched: the mesh axis ad->mesh_axis at the smallest
 * power-of-two multiple of its size that fits, by re-plans: x2 first; if that does not fit,
 * the largest multiple within MESH_MAX_CHIPS chips, then a binary search over the doublings
 * between. At most 2 + ceil(log2(12)) = 6 plans (4096 chips from one is 12 doublings). The
 * item keeps the smallest that fits (or the largest tried when none does); its note the
 * multiple below it, which does not fit.
 */
static int search_mesh(struct advisor *ad)
{
    struct plan_advice_item *it, lo_it;
    int kmax = 0, lo = 0, hi, plans = 0, rc;
    size_t i;

    if (ad->mesh_axis[0] == '\0')
        return ERR_OK;
    while (kmax < 12 && ad->mesh_devices << (kmax + 1) <= MESH_MAX_CHIPS &&
           ad->mesh_size << (kmax + 1) <= INT32_MAX)
        kmax++;
    if (kmax == 0 || (it = item_new(ad->a, "mesh")) == NULL)
        return ERR_OK;
    i = ad->a->n - 1;
    frag_add(it, PLAN_FRAG_MESH, ad->mesh_axis, "");
    it->cost = PLAN_COST_CHIPS;
    memset(&lo_it, 0, sizeof(lo_it)); /* k = 0: the plan itself, which does not fit */
    lo_it.peak_after = ad->a->peak;
    if ((rc = probe_mesh(ad, i, hi = 1)) != ERR_OK)
        return rc;
    plans++;
    if (it->planned && !it->good_after && kmax > 1) {
        lo = 1;
        lo_it = *it;
        if ((rc = probe_mesh(ad, i, hi = kmax)) != ERR_OK)
            return rc;
        plans++;
        while (it->planned && it->good_after && hi - lo > 1) {
            struct plan_advice_item hi_it = *it;
            int mid = (lo + hi) / 2;
            if ((rc = probe_mesh(ad, i, mid)) != ERR_OK)
                return rc;
            plans++;
            if (it->planned && it->good_after) {
                hi = mid;
            } else {
                lo = mid;
                lo_it = *it;
                *it = hi_it;
            }
        }
    }
    if (!it->planned) {
        ad->a->n--;
        return ERR_OK;
    }
    long long chips = (long long)ad->mesh_devices, now = (long long)ad->mesh_size;
    snprintf(it->change, sizeof(it->change),
             "%lldx the chips (%lld): mesh axis %.60s %lld instead of %lld, the smallest "
             "power-of-two multiple that fits, searched in %d plan%s%s",
             1LL << hi, chips << hi, ad->mesh_axis, now << hi, now, plans, plans == 1 ? "" : "s",
             it->good_after ? "" : " (none up to 4096 chips fits)");
    if (it->good_after)
        snprintf(it->note, sizeof(it->note),
                 "the next smaller, %s %lld (%lldx): peak %llu bytes, %s", ad->mesh_axis, now << lo,
                 1LL << lo, (unsigned long long)lo_it.peak_after,
                 lo == 0 ? "the plan itself" : "does not fit");
    else
        snprintf(it->note, sizeof(it->note), "the largest tried: %d chips at most", MESH_MAX_CHIPS);
    return ERR_OK;
}

/* Ranks the planned items: those that reach the goal first, then the most bytes saved,
 * then the order they were made in. */
static void rank(struct plan_advice *a, uint64_t peak)
{
    a->nranked = 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->items[i].planned)
            a->ranked[a->nranked++] = i;
    for (size_t i = 1; i < a->nranked; i++)
        for (size_t k = i; k > 0; k--) {
            const struct plan_advice_item *x = &a->items[a->ranked[k]],
                                          *y = &a->items[a->ranked[k - 1]];
            bool before = x->good_after != y->good_after
                              ? x->good_after
                              : (x->peak_after < peak ? peak - x->peak_after : 0) >
                                    (y->peak_after < peak ? peak - y->peak_after : 0);
            if (!before)
                break;
            size_t t = a->ranked[k];
            a->ranked[k] = a->ranked[k - 1];
            a->ranked[k - 1] = t;
        }
}

/* Two items that set the same thing (two chips, the same remat) do not combine. */
static bool conflicts(const struct plan_advice *a, const size_t *set, size_t n, size_t i)
{
    const struct plan_advice_item *it = &a->items[i];

    for (size_t s = 0; s < n; s++) {
        const struct plan_advice_item *x = &a->items[set[s]];
        if (strcmp(x->kind, it->kind) == 0 &&
            (strcmp(it->kind, "chip") == 0 || strcmp(it->kind, "remat") == 0))
            return true;
        /* two values for one recipe field (remat and offload both set train.remat) */
        for (size_t f = 0; f < x->nfrags; f++)
            for (size_t g = 0; g < it->nfrags; g++)
                if (x->frags[f].key == PLAN_FRAG_RECIPE && it->frags[g].key == PLAN_FRAG_RECIPE &&
                    strcmp(x->frags[f].name, it->frags[g].name) == 0)
                    return true;
    }
    return false;
}

/* The smallest combination that reaches the goal, greedily: each step adds the item whose
 * addition plans the lowest peak. */
static int combine(struct advisor *ad)
{
    struct plan_advice *a = ad->a;
    size_t set[PLAN_ADVICE_MAX_ITEMS];
    struct plan_summary s;
    char why[ERR_MSG_MAX];

    /* one item that reaches it alone is the combination */
    for (size_t r = 0; r < a->nranked; r++)
        if (a->items[a->ranked[r]].good_after) {
            a->combo[0] = a->ranked[r];
            a->ncombo = 1;
            a->combo_peak = a->items[a->ranked[r]].peak_after;
            a->combo_good = true;
            return ERR_OK;
        }
    for (size_t n = 0; n < a->nranked; n++) {
        size_t best = a->n;
        uint64_t best_peak = 0;
        bool best_good = false;
        for (size_t r = 0; r < a->nranked; r++) {
            size_t i = a->ranked[r];
            bool in = false;
            for (size_t q = 0; q < n; q++)
                in |= set[q] == i;
            if (in || conflicts(a, set, n, i))
                continue;
            set[n] = i;
            int rc = replan(ad, set, n + 1, &s, why, sizeof(why));
            if (rc == ERR_LIMIT)
                return rc;
            if (rc == ERR_OK && (best == a->n || s.peak_bytes < best_peak)) {
                best = i;
                best_peak = s.peak_bytes;
                best_good = good(&s);
            }
        }
        if (best == a->n)
            return ERR_OK;
        set[n] = best;
        memcpy(a->combo, set, (n + 1) * sizeof(set[0]));
        a->ncombo = n + 1;
        a->combo_peak = best_peak;
        a->combo_good = best_good;
        if (best_good)
            return ERR_OK;
    }
    return ERR_OK;
}

/* The re-plans' strategies: the plan's own when it named them, else the greedy ones. */
static void replan_strategies(const struct plan_ctx *c, const struct plan_opts *o, char *buf,
                              size_t cap)
{
    size_t n = 0;

    buf[0] = '\0';
    if (o->strategies != NULL && strcmp(o->strategies, "best") != 0 &&
        strcmp(o->strategies, "all") != 0) {
        snprintf(buf, cap, "%s", o->strategies);
        return;
    }
    for (size_t k = 0; k < c->nstrategies; k++) {
        const struct pack_strategy *ps = NULL;
        for (size_t q = 0; q < pack_strategy_count(); q++)
            if (strcmp(pack_strategy_at(q)->name, c->strategies[k]) == 0)
                ps = pack_strategy_at(q);
        if (ps == NULL || ps->cls == PACK_CLASS_SEARCH || n >= cap)
            continue;
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", n > 0 ? "," : "", ps->name);
    }
    if (n == 0 || n >= cap)
        snprintf(buf, cap, "xla-spatial");
}

int plan_advice_run(const struct plan_ctx *c, uint64_t peak, const char *input, size_t len,
                    const struct plan_opts *o, const struct plan_limits *lim, struct plan_advice *a,
                    struct err *e)
{
    struct advisor ad = {c, input, len, {0}, lim, a, false, "", 0, 0, 0};
    struct plan_opts none = {0};
    const char *why;
    bool near, recipe;
    int rc = ERR_OK;

    (void)e;
    memset(a, 0, sizeof(*a));
    if ((why = reason(c, peak, a->reason, sizeof(a->reason))) == NULL)
        return ERR_OK;
    a->given = true;
    near = why == a->reason;
    if (!near)
        snprintf(a->reason, sizeof(a->reason), "%s", why);
    a->peak = peak;
    a->chip = c->chip;
    recipe = strcmp(c->m.source_format, "recipe") == 0;
    ad.recipe = recipe;
    if (!recipe && strcmp(c->m.source_format, "json") != 0) {
        snprintf(a->unavailable, sizeof(a->unavailable),
                 "changes are made as what-ifs of a JSON model description or a recipe; this is "
                 "a %s input",
                 c->m.source_format);
        return ERR_OK;
    }
    /* a budget of work: re-plans x tensors */
    a->max_replans = PLAN_ADVICE_MAX_REPLANS;
    if (c->m.n > 0 && PLAN_ADVICE_MAX_WORK / c->m.n < a->max_replans)
        a->max_replans = PLAN_ADVICE_MAX_WORK / c->m.n;
    if (a->max_replans < 2) {
        snprintf(a->unavailable, sizeof(a->unavailable),
                 "the model has %zu tensors: advice plans each change of models up to %zu "
                 "tensors",
                 c->m.n, (size_t)PLAN_ADVICE_MAX_WORK / 2);
        return ERR_OK;
    }
    ad.o = o != NULL ? *o : none;
    replan_strategies(c, &ad.o, a->strategies, sizeof(a->strategies));
    ad.o.strategies = a->strategies;
    ad.o.threads = 1;
    ad.o.runtime = PLAN_RUNTIME_NONE; /* the replay changes no peak */
    ad.o.mem_fraction = 0;
    ad.o.preallocate = PLAN_PREALLOC_DEFAULT;
    ad.o.xla_assignment = ad.o.xla_report = NULL;
    ad.o.xla_assignment_len = ad.o.xla_report_len = 0;
    if (recipe) {
        cand_recipe(&ad);
    } else {
        cand_remat(&ad);
        cand_precision(&ad);
        cand_offload(&ad);
        cand_sharding(&ad);
        ad.mesh_devices = 1;
        for (size_t x = 0; x < c->m.naxes; x++)
            if (strlen(c->m.axis_names[x]) < sizeof(ad.mesh_axis))
                pick_axis(&ad, c->m.axis_names[x], c->m.axis_sizes[x]);
        if ((rc = cand_layout(&ad, e)) != ERR_OK)
            return rc;
    }
    for (size_t i = 0; i < a->n && rc == ERR_OK; i++)
        rc = plan_item(&ad, i);
    if (rc == ERR_OK)
        rc = cand_chip(&ad);
    if (rc == ERR_OK)
        rc = search_mesh(&ad);
    rank(a, peak);
    if (rc == ERR_OK && !near) /* a plan that only comes near already fits: nothing to combine */
        rc = combine(&ad);
    a->out_of_replans = rc == ERR_LIMIT;
    return ERR_OK;
}

/* An item's cost (server/planner/RESULT.md#advice): every field always written, null where
 * the change has no such cost or it is not known (note says why). */
static void write_cost(struct jsonw *w, const struct plan_advice *a,
                       const struct plan_advice_item *it)
{
    const struct host_link *hl =
        it->cost == PLAN_COST_HOST && it->cost_bytes > 0 ? host_link_of(a->chip) : NULL;

    jsonw_obj_begin(w, "cost");
    jsonw_str(w, "kind", cost_names[it->cost]);
    if (it->cost == PLAN_COST_RECOMPUTE && it->cost_bytes > 0)
        jsonw_u64(w, "recompute_bytes", it->cost_bytes);
    else
        jsonw_null(w, "recompute_bytes");
    if (it->flops_known)
        jsonw_u64(w, "recompute_flops", it->recompute_flops);
    else
        jsonw_null(w, "recompute_flops");
    if (it->flops_fraction >= 0)
        jsonw_double(w, "recompute_flops_fraction", it->flops_fraction);
    else
        jsonw_null(w, "recompute_flops_fraction");
    if (it->cost == PLAN_COST_HOST && it->cost_bytes > 0)
        jsonw_u64(w, "host_bytes_per_step", it->cost_bytes);
    else if (it->cost == PLAN_COST_HOST)
        jsonw_null(w, "host_bytes_per_step");
    else
        jsonw_u64(w, "host_bytes_per_step", 0);
    if (hl != NULL) {
        jsonw_double(w, "host_seconds_per_step", (double)it->cost_bytes / hl->bytes_per_s);
        jsonw_double(w, "host_link_bytes_per_s", hl->bytes_per_s);
        jsonw_str(w, "host_link_source", HOST_LINK_SOURCE);
    } else {
        jsonw_null(w, "host_seconds_per_step");
        jsonw_null(w, "host_link_bytes_per_s");
        jsonw_null(w, "host_link_source");
    }
    jsonw_u64(w, "comm_bytes_per_step", it->cost == PLAN_COST_COMMUNICATION ? it->cost_bytes : 0);
    jsonw_str(w, "note", it->note[0] != '\0' ? it->note : NULL);
    jsonw_obj_end(w);
}

static void write_item(struct jsonw *w, const struct plan_advice *a, size_t i)
{
    const struct plan_advice_item *it = &a->items[i];

    jsonw_obj_begin(w, NULL);
    jsonw_str(w, "kind", it->kind);
    jsonw_str(w, "change", it->change);
    write_overrides(w, "overrides", a, &i, 1);
    jsonw_i64(w, "saves_bytes", (int64_t)a->peak - (int64_t)it->peak_after);
    jsonw_u64(w, "peak_after", it->peak_after);
    jsonw_bool(w, "fits_after", it->fits_after);
    jsonw_bool(w, "within_budget_after", it->within_budget_after);
    write_cost(w, a, it);
    jsonw_obj_end(w);
}

void plan_advice_write(struct jsonw *w, const struct plan_advice *a)
{
    if (a == NULL || !a->given) {
        jsonw_null(w, "advice");
        return;
    }
    jsonw_obj_begin(w, "advice");
    jsonw_str(w, "reason", a->reason);
    jsonw_u64(w, "peak", a->peak);
    jsonw_str(w, "unavailable", a->unavailable[0] != '\0' ? a->unavailable : NULL);
    jsonw_str(w, "strategies", a->strategies[0] != '\0' ? a->strategies : NULL);
    jsonw_u64(w, "replans", a->replans);
    jsonw_u64(w, "max_replans", a->max_replans);
    jsonw_bool(w, "out_of_replans", a->out_of_replans);
    jsonw_arr_begin(w, "items");
    for (size_t r = 0; r < a->nranked; r++)
        write_item(w, a, a->ranked[r]);
    jsonw_arr_end(w);
    if (a->ncombo > 0) {
        jsonw_obj_begin(w, "combination");
        jsonw_arr_begin(w, "items");
        for (size_t q = 0; q < a->ncombo; q++)
            for (size_t r = 0; r < a->nranked; r++)
                if (a->ranked[r] == a->combo[q])
                    jsonw_u64(w, NULL, r);
        jsonw_arr_end(w);
        write_overrides(w, "overrides", a, a->combo, a->ncombo);
        jsonw_u64(w, "peak_after", a->combo_peak);
        jsonw_bool(w, "fits_after", a->combo_good);
        jsonw_obj_end(w);
    } else {
        jsonw_null(w, "combination");
    }
    jsonw_obj_end(w);
}
