/*
 * peak.c - a plan's peak explained (peak.h): the op at the peak step, and the live bytes
 * there by kind and by three groupings (first tag, layer from the name, op_name scope),
 * each a partition of the live tensors counted with the base/names table.
 */
#include "planner/peak.h"

#include <stdlib.h>
#include <string.h>

#include "planner/base/names.h"

const char *peak_op_source_name(enum peak_op_source s)
{
    return s == PEAK_OP_OPS ? "ops" : s == PEAK_OP_INSTRUCTION ? "instruction" : NULL;
}

/* A tensor's group under one grouping: name[0, len), or false when it is in none. */
typedef bool group_key_fn(const struct model_tensor *t, const char **name, size_t *len);

static bool tag_key(const struct model_tensor *t, const char **name, size_t *len)
{
    if (t->ntags == 0)
        return false;
    *name = t->tags[0];
    *len = strlen(t->tags[0]);
    return true;
}

static bool is_digits(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* A layer index: a number after another component, or "layer" / "block" (any case), an
 * optional '_', a number. */
static bool is_layer_index(const char *s, size_t n, bool first)
{
    static const char *const words[] = {"layer", "block"};

    if (is_digits(s, n))
        return !first;
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        size_t k = strlen(words[w]);
        if (n <= k || strncasecmp(s, words[w], k) != 0)
            continue;
        k += s[k] == '_';
        if (is_digits(s + k, n - k))
            return true;
    }
    return false;
}

bool peak_layer_prefix(const char *s, size_t *len)
{
    for (size_t at = 0;;) {
        size_t n = strcspn(s + at, "./");
        if (is_layer_index(s + at, n, at == 0)) {
            *len = at + n;
            return true;
        }
        if (s[at + n] == '\0')
            return false;
        at += n + 1;
    }
}

static bool layer_key(const struct model_tensor *t, const char **name, size_t *len)
{
    *name = t->name;
    return peak_layer_prefix(t->name, len);
}

static bool scope_key(const struct model_tensor *t, const char **name, size_t *len)
{
    const char *cut;

    if (t->op_name == NULL || t->op_name[0] == '\0')
        return false;
    cut = strrchr(t->op_name, '/');
    *name = t->op_name;
    *len = cut != NULL && cut != t->op_name ? (size_t)(cut - t->op_name) : strlen(t->op_name);
    return true;
}

/* A program's buffers are named by instructions (fusion.3): no layers there. */
static bool no_key(const struct model_tensor *t, const char **name, size_t *len)
{
    (void)t;
    (void)name;
    (void)len;
    return false;
}

static group_key_fn *const groupings[PEAK_GROUPINGS] = {tag_key, layer_key, scope_key};
static const char *const grouping_names[PEAK_GROUPINGS] = {"tag", "layer", "scope"};

const char *peak_grouping_name(size_t g)
{
    return g < PEAK_GROUPINGS ? grouping_names[g] : NULL;
}

const struct peak_groups *peak_grouping(const struct peak_explain *p, size_t g)
{
    const struct peak_groups *all[PEAK_GROUPINGS] = {&p->by_tag, &p->by_layer, &p->by_scope};

    return g < PEAK_GROUPINGS ? all[g] : NULL;
}

static struct names_key group_name(const void *ctx, uint32_t idx)
{
    const struct peak_group *g = (const struct peak_group *)ctx + idx;

    return (struct names_key){g->name, g->len, 0};
}

/* Most bytes first, then by name. */
static int group_order(const void *pa, const void *pb)
{
    const struct peak_group *a = pa, *b = pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c;

    if (a->bytes != b->bytes)
        return a->bytes > b->bytes ? -1 : 1;
    if ((c = memcmp(a->name, b->name, n)) != 0)
        return c;
    return a->len < b->len ? -1 : a->len > b->len;
}

/* One grouping of the live set into *out; acc has room for n groups. */
static int group(const struct model *m, group_key_fn *key, const struct peak_live *live, size_t n,
                 struct peak_group *acc, struct peak_groups *out, struct err *e)
{
    struct names t;
    size_t ng = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if ((rc = names_init(&t, n, group_name, acc)) != ERR_OK)
        return err_set(e, rc, "", "out of memory grouping %zu tensors at the peak", n);
    for (size_t i = 0; i < n; i++) {
        const char *name;
        size_t len;
        uint32_t at;
        if (!key(&m->tensors[live[i].tensor], &name, &len)) {
            out->none_bytes += live[i].bytes;
            out->none_tensors++;
            continue;
        }
        acc[ng] = (struct peak_group){name, len, 0, 0};
        if ((rc = names_add(&t, (uint32_t)ng, &at)) != ERR_OK) {
            names_free(&t);
            return err_set(e, rc, "", "out of memory grouping %zu tensors at the peak", n);
        }
        if (at == NAMES_NONE)
            at = (uint32_t)ng++;
        acc[at].bytes += live[i].bytes;
        acc[at].tensors++;
    }
    names_free(&t);
    qsort(acc, ng, sizeof(*acc), group_order);
    out->groups = ng;
    for (size_t g = 0; g < ng; g++) {
        if (g < PEAK_TOP) {
            out->top[out->ntop++] = acc[g];
            continue;
        }
        out->rest_bytes += acc[g].bytes;
        out->rest_tensors += acc[g].tensors;
    }
    return ERR_OK;
}

/* The tensors beginning at the step: counted, summed, the largest PEAK_TOP kept in order
 * (most bytes first, then the lowest id). */
static void begin_at(const struct model *m, int64_t step, const struct peak_live *live, size_t n,
                     struct peak_explain *out)
{
    uint64_t kept[PEAK_TOP] = {0};

    for (size_t i = 0; i < n; i++) {
        uint32_t id = live[i].tensor;
        uint64_t b = live[i].bytes;
        size_t k;
        if (m->tensors[id].live_start != step)
            continue;
        out->begin_tensors++;
        out->begin_bytes += b;
        for (k = out->nbegin; k > 0; k--)
            if (kept[k - 1] > b || (kept[k - 1] == b && out->begin[k - 1] < id))
                break;
        if (k == PEAK_TOP)
            continue;
        if (out->nbegin < PEAK_TOP)
            out->nbegin++;
        for (size_t j = out->nbegin - 1; j > k; j--) {
            kept[j] = kept[j - 1];
            out->begin[j] = out->begin[j - 1];
        }
        kept[k] = b;
        out->begin[k] = id;
    }
}

/* A program's instruction named by its buffer: without "{i}" (a tuple element) or
 * "/temps" (a call's temporaries). */
static size_t instruction_len(const char *name)
{
    size_t n = strlen(name);
    const char *brace;

    if (n > 6 && strcmp(name + n - 6, "/temps") == 0)
        return n - 6;
    if (n > 0 && name[n - 1] == '}' && (brace = strrchr(name, '{')) != NULL && brace != name)
        return (size_t)(brace - name);
    return n;
}

static void find_op(const struct model *m, bool program, const struct peak_live *live, size_t n,
                    struct peak_explain *out)
{
    const struct model_tensor *first = NULL;

    if (out->step >= 0 && (uint64_t)out->step < m->nops) {
        out->op_source = PEAK_OP_OPS;
        out->op = m->ops[out->step].name;
        out->op_len = strlen(out->op);
        return;
    }
    if (!program)
        return;
    for (size_t i = 0; i < n; i++) {
        const struct model_tensor *t = &m->tensors[live[i].tensor];
        if (t->live_start == out->step && (first == NULL || t < first))
            first = t;
    }
    if (first == NULL)
        return;
    out->op_source = PEAK_OP_INSTRUCTION;
    out->op = first->name;
    out->op_len = instruction_len(first->name);
    out->op_name = first->op_name;
}

int peak_explain(const struct model *m, bool program, int64_t step, int64_t end, uint64_t bytes,
                 const struct peak_live *live, size_t n, struct peak_explain *out, struct err *e)
{
    struct peak_groups *dst[PEAK_GROUPINGS];
    struct peak_group *acc;
    int rc = ERR_OK;

    memset(out, 0, sizeof(*out));
    out->step = step;
    out->end = end;
    out->bytes = bytes;
    out->tensors = n;
    for (size_t i = 0; i < n; i++) {
        if (live[i].tensor >= m->n || live[i].bytes > bytes - out->live_bytes)
            return err_set(e, ERR_INVALID, "live", "live[%zu]: %s", i,
                           live[i].tensor >= m->n ? "no such tensor"
                                                  : "the live bytes pass the peak");
        out->live_bytes += live[i].bytes;
        out->kind_bytes[m->tensors[live[i].tensor].kind] += live[i].bytes;
        out->kind_tensors[m->tensors[live[i].tensor].kind]++;
    }
    out->gap_bytes = bytes - out->live_bytes;
    find_op(m, program, live, n, out);
    begin_at(m, step, live, n, out);
    if ((acc = malloc((n ? n : 1) * sizeof(*acc))) == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory grouping %zu tensors at the peak", n);
    dst[0] = &out->by_tag;
    dst[1] = &out->by_layer;
    dst[2] = &out->by_scope;
    for (size_t g = 0; g < PEAK_GROUPINGS && rc == ERR_OK; g++)
        rc = group(m, program && groupings[g] == layer_key ? no_key : groupings[g], live, n, acc,
                   dst[g], e);
    free(acc);
    return rc;
}
