/*
 * model.c - the model core: its lifecycle, the string arena and compact shapes the
 * importers build it with (model_build.h), warnings, kind names, the name index, and the
 * layouts resolved on a chip (model_resolve). The formats that make a model live in
 * import/.
 */
#include "planner/model.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/base/names.h"
#include "planner/layout.h"
#include "planner/model/model_build.h"

/* ---- string arena ---------------------------------------------------------------- */

struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(8) char data[];
};

#define ARENA_BLOCK (256u * 1024u)

void *model_alloc(struct model *m, size_t n)
{
    struct model_arena *a = m->arena;
    struct arena_block *b = a->head;

    n = (n + 7) & ~(size_t)7;
    if (b == NULL || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        b = malloc(sizeof(*b) + cap);
        if (b == NULL)
            return NULL;
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void model_arena_adopt(struct model_arena *dst, struct model_arena *src)
{
    struct arena_block *b = src->head;

    if (b == NULL)
        return;
    while (b->next != NULL)
        b = b->next;
    b->next = dst->head;
    dst->head = src->head;
    src->head = NULL;
}

const char *model_strdup(struct model *m, const char *s, size_t n)
{
    char *p = model_alloc(m, n + 1);
    if (p == NULL)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* ---- compact shapes (model.h struct model_shape) ---------------------------------- */

/* The fields a compact shape holds as struct shape does (all but its arrays), copied from
 * src to dst, each an lvalue of either kind: one list for both ways. */
#define SHAPE_COPY_SCALARS(dst, src)                                                               \
    do {                                                                                           \
        (dst)->dtype = (src)->dtype;                                                               \
        (dst)->rank = (src)->rank;                                                                 \
        (dst)->has_layout = (src)->has_layout;                                                     \
        (dst)->ntiles = (src)->ntiles;                                                             \
        (dst)->element_size_bits = (src)->element_size_bits;                                       \
        (dst)->memory_space = (src)->memory_space;                                                 \
        (dst)->memory_space_given = (src)->memory_space_given;                                     \
        (dst)->tail_align = (src)->tail_align;                                                     \
    } while (0)

void model_tensor_shape(const struct model_tensor *t, struct shape *out)
{
    const struct model_shape *ms = &t->shape;

    memset(out, 0, sizeof(*out));
    SHAPE_COPY_SCALARS(out, ms);
    if (ms->rank > 0) {
        memcpy(out->dims, ms->dims, ms->rank * sizeof(*ms->dims));
        memcpy(out->minor_to_major, ms->minor_to_major, ms->rank);
    }
    if (ms->ntiles > 0)
        memcpy(out->tiles, ms->tiles, ms->ntiles * sizeof(*ms->tiles));
}

/* The dims in one arena piece, the tiles then minor_to_major in another: model_resolve
 * changes the layout of a shape, never its dims, so the first piece is kept, and the second
 * too when the new tiles fit it. */
int model_tensor_set_shape(struct model *m, struct model_tensor *t, const struct shape *s)
{
    struct model_shape *ms = &t->shape;
    bool keep_layout = ms->minor_to_major != NULL && ms->rank == s->rank && ms->ntiles >= s->ntiles;
    int64_t *dims = NULL;
    struct tile *tiles = NULL;
    uint8_t *m2m = NULL;

    if (s->rank > 0) {
        dims = ms->dims != NULL && ms->rank == s->rank ? ms->dims
                                                       : model_alloc(m, s->rank * sizeof(*dims));
        if (dims == NULL)
            return ERR_NOMEM;
        memcpy(dims, s->dims, s->rank * sizeof(*dims));
    }
    if (s->rank + s->ntiles > 0) {
        /* tiles first: they need 8-byte alignment, minor_to_major none */
        char *base = keep_layout ? (char *)ms->minor_to_major - ms->ntiles * sizeof(*tiles)
                                 : model_alloc(m, s->ntiles * sizeof(*tiles) + s->rank);
        if (base == NULL)
            return ERR_NOMEM;
        if (s->ntiles > 0) {
            tiles = (struct tile *)(void *)base;
            memcpy(tiles, s->tiles, s->ntiles * sizeof(*tiles));
        }
        if (s->rank > 0) {
            m2m = (uint8_t *)base + s->ntiles * sizeof(*tiles);
            memcpy(m2m, s->minor_to_major, s->rank);
        }
    }
    ms->dims = dims;
    ms->minor_to_major = m2m;
    ms->tiles = tiles;
    SHAPE_COPY_SCALARS(ms, s);
    return ERR_OK;
}

/* ---- lifecycle ------------------------------------------------------------------- */

int model_init(struct model *m, const char *source_format, size_t ntensors)
{
    memset(m, 0, sizeof(*m));
    m->source_format = source_format;
    m->devices = 1;
    m->arena = calloc(1, sizeof(*m->arena));
    if (m->arena == NULL)
        return ERR_NOMEM;
    if (ntensors > 0) {
        m->tensors = calloc(ntensors, sizeof(*m->tensors));
        if (m->tensors == NULL)
            return ERR_NOMEM;
    }
    m->n = ntensors;
    return ERR_OK;
}

void model_free(struct model *m)
{
    if (m == NULL)
        return;
    if (m->arena != NULL) {
        struct arena_block *b = m->arena->head;
        while (b != NULL) {
            struct arena_block *next = b->next;
            free(b);
            b = next;
        }
        free(m->arena);
    }
    for (size_t i = 0; i < m->warnings.n; i++)
        free(m->warnings.lines[i]);
    free(m->tensors);
    free(m->ops);
    json_object_put(m->kernels_json);
    json_object_put(m->options_json);
    json_object_put(m->recipe_json);
    memset(m, 0, sizeof(*m));
}

void model_warn(struct model *m, const char *fmt, ...)
{
    char buf[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): a false positive (see err.c) */
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (m->warnings.n == MODEL_MAX_WARNINGS) {
        m->warnings.dropped++;
        return;
    }
    char *line = strdup(buf);
    if (line == NULL) {
        m->warnings.dropped++;
        return;
    }
    m->warnings.lines[m->warnings.n++] = line;
}

/* ---- kinds ----------------------------------------------------------------------- */

static const char *const kind_names[TENSOR_KIND_COUNT] = {
    "param", "grad", "optimizer", "activation", "temp", "input", "output", "constant", "kv_cache",
};

const char *tensor_kind_name(enum tensor_kind k)
{
    return (unsigned)k < TENSOR_KIND_COUNT ? kind_names[k] : "invalid";
}

enum tensor_kind tensor_kind_parse(const char *s)
{
    for (int k = 0; k < TENSOR_KIND_COUNT; k++)
        if (strcmp(s, kind_names[k]) == 0)
            return (enum tensor_kind)k;
    return TENSOR_KIND_COUNT;
}

/* ---- an XLA program's stage and memory spaces ------------------------------------ */

const char *model_stage_name(enum model_stage s)
{
    return s == MODEL_STAGE_BEFORE  ? "before-optimization"
           : s == MODEL_STAGE_AFTER ? "after-optimization"
                                    : NULL;
}

const char *model_space_name(enum model_space s)
{
    static const char *const names[MODEL_SPACE_COUNT] = {"host", "vmem", "other"};

    return (unsigned)s < MODEL_SPACE_COUNT ? names[s] : "invalid";
}

/* ---- name index ------------------------------------------------------------------ */

static struct names_key tensor_name(const void *ctx, uint32_t i)
{
    const struct model *m = ctx;

    return (struct names_key){m->tensors[i].name, strlen(m->tensors[i].name), 0};
}

int model_index_build(const struct model *m, struct model_index *ix, struct err *e)
{
    int rc;

    if ((rc = names_init(&ix->names, m->n, tensor_name, m)) != ERR_OK) {
        rc = err_set(e, rc, NULL,
                     rc == ERR_NOMEM ? "out of memory indexing %zu tensor names"
                                     : "%zu tensor names: too many to index",
                     m->n);
        goto out;
    }
    for (size_t i = 0; i < m->n; i++) {
        uint32_t j;
        if ((rc = names_add(&ix->names, (uint32_t)i, &j)) != ERR_OK) {
            rc = err_set(e, rc, NULL, "%zu tensor names: too many to index", m->n);
            goto out;
        }
        if (j != NAMES_NONE) {
            char where[48];
            snprintf(where, sizeof(where), "tensors[%zu].name", i);
            rc = err_set(e, ERR_INVALID, where,
                         "tensors[%zu] \"%s\": name: duplicate tensor name (first used by "
                         "tensors[%u])",
                         i, m->tensors[i].name, j);
            goto out;
        }
    }
out:
    if (rc != ERR_OK)
        names_free(&ix->names);
    return rc;
}

int64_t model_index_find(const struct model_index *ix, const char *name, size_t n)
{
    uint32_t i = names_find(&ix->names, (struct names_key){name, n, 0});

    return i != NAMES_NONE ? (int64_t)i : -1;
}

void model_index_free(struct model_index *ix)
{
    names_free(&ix->names);
}

/* ---- layouts on a chip ------------------------------------------------------------ */

/* tensors from which the second half is resolved on a second thread */
#define RESOLVE_SPLIT_MIN 4096

/* Tensors [lo, hi) of model_resolve: the first error, in order. */
static int resolve_range(struct model *m, const struct chip *chip, size_t lo, size_t hi,
                         struct err *e)
{
    for (size_t i = lo; i < hi; i++) {
        struct model_tensor *t = &m->tensors[i];
        struct layout_info info;
        struct shape given, resolved;

        if (t->raw)
            continue;
        model_tensor_shape(t, &given);
        if (layout_resolve(&given, chip, &resolved, &info, e) != ERR_OK) {
            char where[32], msg[ERR_MSG_MAX];
            snprintf(where, sizeof(where), "tensors[%zu]", i);
            snprintf(msg, sizeof(msg), "tensors[%zu] \"%.200s\": ", i, t->name);
            return err_prefix(e, where, msg);
        }
        if (info.padded_bytes < info.logical_bytes) {
            char where[32];
            snprintf(where, sizeof(where), "tensors[%zu]", i);
            return err_set(e, ERR_INVALID, where,
                           "tensors[%zu] \"%.200s\": the layout stores %llu "
                           "bytes, fewer than the %llu the data needs (an E(n) narrower than the "
                           "dtype?)",
                           i, t->name, (unsigned long long)info.padded_bytes,
                           (unsigned long long)info.logical_bytes);
        }
        if (model_tensor_set_shape(m, t, &resolved) != ERR_OK)
            return err_set(e, ERR_NOMEM, "", "out of memory");
        t->logical_bytes = info.logical_bytes;
        t->padded_bytes = info.padded_bytes;
        t->layout_rule = info.rule;
        t->layout_assumption = info.assumption;
        t->confidence = info.confidence;
    }
    return ERR_OK;
}

/* The second half of model_resolve on a helper thread: its own arena, its own error. */
struct resolve_half {
    struct model m; /* shares the tensor table */
    struct model_arena arena;
    const struct chip *chip;
    struct err e;
    int rc;
};

static void *resolve_main(void *arg)
{
    struct resolve_half *h = arg;

    err_clear(&h->e);
    h->rc = resolve_range(&h->m, h->chip, h->m.n / 2, h->m.n, &h->e);
    return NULL;
}

int model_resolve(struct model *m, const struct chip *chip, unsigned threads, struct err *e)
{
    struct resolve_half h = {.m = *m, .chip = chip};
    pthread_t tid;
    int rc;

    /* Two threads on a long model (threads not 1): each half in order, the first half's
     * error first, so the error is the one resolving in order meets. */
    if (threads == 1 || m->n < RESOLVE_SPLIT_MIN || sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return resolve_range(m, chip, 0, m->n, e);
    h.m.arena = &h.arena;
    if (pthread_create(&tid, NULL, resolve_main, &h) != 0)
        return resolve_range(m, chip, 0, m->n, e);
    rc = resolve_range(m, chip, 0, m->n / 2, e);
    pthread_join(tid, NULL);
    model_arena_adopt(m->arena, &h.arena);
    if (rc == ERR_OK && h.rc != ERR_OK) {
        *e = h.e;
        rc = h.rc;
    }
    return rc;
}
