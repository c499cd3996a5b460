/*
 * model_json_kernels.c - a model's "kernels" array (model.schema.json) into a kernel_set
 * (kernel.h). Takes the json-c value the model importer found, so the importer only hands
 * it over; errors name the field: kernels[2].inputs[0].index_map[1].
 *
 * Memory: one pass counts the operands and name bytes, then three allocations hold
 * everything (kernels, operands, names), so a kernel set is bounded by its input.
 */
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/kernel.h"
#include "planner/base/jsonr.h"
#include "planner/model_json.h"

#define NAME_MAX_BYTES 512 /* as MODEL_MAX_NAME */

struct kctx {
    struct kernel_set *ks;
    struct err *e;
    size_t i;          /* kernel index */
    const char *kname; /* NULL until known */
    size_t ops_used;   /* operands handed out */
    size_t str_used;   /* name bytes handed out */
};

/* An error about field `field` ("inputs[0].block[1]", or "" for the kernel itself). */
static int kerr(struct kctx *c, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int kerr(struct kctx *c, int code, const char *field, const char *fmt, ...)
{
    char where[ERR_WHERE_MAX], what[ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): a false positive (see err.c) */
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    snprintf(where, sizeof(where), "kernels[%zu]%s%s", c->i, field[0] ? "." : "", field);
    if (c->kname != NULL)
        return err_set(c->e, code, where, "kernels[%zu] \"%.200s\": %s%s%s", c->i, c->kname, field,
                       field[0] ? ": " : "", what);
    return err_set(c->e, code, where, "kernels[%zu]: %s%s%s", c->i, field, field[0] ? ": " : "",
                   what);
}

static bool key_in(const char *key, const char *const *keys)
{
    for (; *keys != NULL; keys++)
        if (strcmp(key, *keys) == 0)
            return true;
    return false;
}

/* Unknown members are errors (usually typos). */
static int check_keys(struct kctx *c, json_object *o, const char *field, const char *const *keys,
                      const char *known)
{
    JSONR_FOREACH(o, it, end)
    {
        const char *key = JSONR_KEY(it);
        if (!key_in(key, keys))
            return kerr(c, ERR_INVALID, field, "unknown field \"%.100s\" (known: %s)", key, known);
    }
    return ERR_OK;
}

static const char *copy_name(struct kctx *c, json_object *v)
{
    size_t n = (size_t)json_object_get_string_len(v);
    char *s = c->ks->strings + c->str_used;

    memcpy(s, json_object_get_string(v), n);
    s[n] = '\0';
    c->str_used += n + 1;
    return s;
}

/* A name: a string of 1..512 bytes without NULs. */
static int get_name(struct kctx *c, json_object *o, const char *field, const char **out)
{
    json_object *v;
    size_t n;

    if (!json_object_object_get_ex(o, "name", &v))
        return kerr(c, ERR_INVALID, field, "\"name\" is required");
    n = json_object_is_type(v, json_type_string) ? (size_t)json_object_get_string_len(v) : 0;
    if (n == 0 || n > NAME_MAX_BYTES || strlen(json_object_get_string(v)) != n)
        return kerr(c, ERR_INVALID, field, "name: must be a string of 1 to %d bytes",
                    NAME_MAX_BYTES);
    *out = copy_name(c, v);
    return ERR_OK;
}

/* An array of at most max integers from lo up (null entries allowed when nulls is set:
 * stored as -1). */
static int get_ints(struct kctx *c, json_object *v, const char *field, unsigned max, int64_t lo,
                    int64_t hi, bool nulls, int64_t *out, uint8_t *n)
{
    char f[96];
    size_t len;

    if (!json_object_is_type(v, json_type_array))
        return kerr(c, ERR_INVALID, field, "must be an array of integers");
    len = json_object_array_length(v);
    if (len > max)
        return kerr(c, ERR_LIMIT, field, "%zu entries; the limit is %u", len, max);
    for (size_t d = 0; d < len; d++) {
        json_object *x = json_object_array_get_idx(v, d);
        int64_t val;
        int r;
        snprintf(f, sizeof(f), "%s[%zu]", field, d);
        if (nulls && x == NULL) {
            out[d] = -1;
            continue;
        }
        r = jsonr_int(x, &val);
        if (r != 0 || val < lo || val > hi)
            return kerr(c, r == 2 ? ERR_OVERFLOW : ERR_INVALID, f,
                        "must be %san integer from %lld to %lld", nulls ? "null or " : "",
                        (long long)lo, (long long)hi);
        out[d] = val;
    }
    *n = (uint8_t)len;
    return ERR_OK;
}

static int get_dtype(struct kctx *c, json_object *o, const char *field, struct kernel_operand *op)
{
    char f[96];
    json_object *v;

    snprintf(f, sizeof(f), "%s.dtype", field);
    if (!json_object_object_get_ex(o, "dtype", &v)) {
        if (op->space == KSPACE_SEMAPHORE) {
            op->dtype = DT_S32;
            return ERR_OK;
        }
        return kerr(c, ERR_INVALID, f, "\"dtype\" is required");
    }
    op->dtype =
        json_object_is_type(v, json_type_string)
            ? dtype_parse_alias(json_object_get_string(v), (size_t)json_object_get_string_len(v))
            : DT_INVALID;
    if (op->dtype == DT_INVALID)
        return kerr(c, ERR_INVALID, f, "unknown dtype (XLA spelling: f32, bf16, s8, s4, ...)");
    if (kernel_dtype_bits(op->dtype) == 0)
        return kerr(c, ERR_INVALID, f,
                    "%s: Pallas TPU kernels take 32-bit and narrower types (f32, bf16, int*, "
                    "bool; server/planner/SOURCES.md#block-shapes)",
                    dtype_name(op->dtype));
    return ERR_OK;
}

static int get_space(struct kctx *c, json_object *o, const char *field, struct kernel_operand *op)
{
    char f[96];
    json_object *v;
    const char *s;
    bool scratch = op->role == KERNEL_SCRATCH;

    op->space = KSPACE_VMEM;
    if (!json_object_object_get_ex(o, "memory_space", &v))
        return ERR_OK;
    snprintf(f, sizeof(f), "%s.memory_space", field);
    s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
    if (strcmp(s, "vmem") == 0)
        op->space = KSPACE_VMEM;
    else if (strcmp(s, "smem") == 0)
        op->space = KSPACE_SMEM;
    else if (scratch && strcmp(s, "semaphore") == 0)
        op->space = KSPACE_SEMAPHORE;
    else if (!scratch && (strcmp(s, "any") == 0 || strcmp(s, "hbm") == 0))
        op->space = KSPACE_ANY;
    else
        return kerr(c, ERR_INVALID, f, "must be %s",
                    scratch ? "vmem, smem or semaphore" : "vmem, smem, any or hbm");
    return ERR_OK;
}

/* index_map, buffers and array of a pipelined operand. */
static int get_pipelined(struct kctx *c, json_object *o, const char *field, unsigned grid_rank,
                         struct kernel_operand *op)
{
    char f[96];
    json_object *v;
    int64_t tmp[KERNEL_MAX_RANK];
    uint8_t n;
    int rc;

    if (json_object_object_get_ex(o, "array", &v)) {
        snprintf(f, sizeof(f), "%s.array", field);
        if ((rc = get_ints(c, v, f, KERNEL_MAX_RANK, 1, INT64_MAX - 1, false, op->array, &n)) !=
            ERR_OK)
            return rc;
        if (n != op->rank)
            return kerr(c, ERR_INVALID, f, "has %u dims but the block has %u", n, op->rank);
        op->has_array = true;
    }
    if (json_object_object_get_ex(o, "index_map", &v)) {
        snprintf(f, sizeof(f), "%s.index_map", field);
        if ((rc = get_ints(c, v, f, KERNEL_MAX_RANK, 0, (int64_t)grid_rank - 1, true, tmp, &n)) !=
            ERR_OK)
            return rc;
        if (n != op->rank)
            return kerr(c, ERR_INVALID, f,
                        "needs one entry per block dim (%u): a grid axis index, or null for a "
                        "dim whose block index does not change",
                        op->rank);
        for (unsigned d = 0; d < n; d++)
            op->index_map[d] = (int16_t)tmp[d];
        op->has_index_map = true;
    }
    if (json_object_object_get_ex(o, "buffers", &v)) {
        /* pallas_call buffers 1 or 2; emit_pipeline allows more on inputs, never on outputs
         * ("Buffer count >2 not supported for output buffered refs",
         * server/planner/SOURCES.md#buffering). */
        unsigned max = op->role == KERNEL_OUTPUT ? 2 : KERNEL_MAX_BUFFERS;
        int64_t b;
        snprintf(f, sizeof(f), "%s.buffers", field);
        if (jsonr_int(v, &b) != 0 || b < 1 || b > max)
            return kerr(c, ERR_INVALID, f, "must be an integer from 1 to %u%s", max,
                        op->role == KERNEL_OUTPUT
                            ? " (outputs take at most 2, server/planner/SOURCES.md#buffering)"
                            : "");
        op->buffers = (unsigned)b;
    }
    return ERR_OK;
}

static int parse_operand(struct kctx *c, json_object *o, enum kernel_role role, const char *field,
                         unsigned grid_rank)
{
    static const char *const io_keys[] = {"name",         "block",       "dtype",
                                          "buffers",      "array",       "index_map",
                                          "memory_space", "description", NULL};
    static const char *const scratch_keys[] = {"name",         "shape",       "dtype",
                                               "memory_space", "description", NULL};
    struct kernel_operand *op = &c->ks->ops[c->ops_used++];
    const char *dims_key = role == KERNEL_SCRATCH ? "shape" : "block";
    char f[96];
    json_object *v;
    int rc;

    memset(op, 0, sizeof(*op));
    op->role = role;
    if (!json_object_is_type(o, json_type_object))
        return kerr(c, ERR_INVALID, field, "must be an object");
    if ((rc = check_keys(c, o, field, role == KERNEL_SCRATCH ? scratch_keys : io_keys,
                         role == KERNEL_SCRATCH
                             ? "name, shape, dtype, memory_space, description"
                             : "name, block, dtype, buffers, array, index_map, memory_space, "
                               "description")) != ERR_OK ||
        (rc = get_name(c, o, field, &op->name)) != ERR_OK ||
        (rc = get_space(c, o, field, op)) != ERR_OK || (rc = get_dtype(c, o, field, op)) != ERR_OK)
        return rc;
    snprintf(f, sizeof(f), "%s.%s", field, dims_key);
    if (json_object_object_get_ex(o, dims_key, &v)) {
        if ((rc = get_ints(c, v, f, KERNEL_MAX_RANK, 1, INT64_C(1) << 40, false, op->block,
                           &op->rank)) != ERR_OK)
            return rc;
    } else if (op->space != KSPACE_SEMAPHORE) {
        return kerr(c, ERR_INVALID, f, "\"%s\" is required", dims_key);
    }
    /* "only blocks with rank at least 1 are supported" (Pallas-details,
     * server/planner/SOURCES.md#block-shapes) */
    if (role != KERNEL_SCRATCH && op->rank == 0 && op->space == KSPACE_VMEM)
        return kerr(c, ERR_INVALID, f,
                    "a VMEM block needs at least one dim (server/planner/SOURCES.md#block-shapes)");
    if (role != KERNEL_SCRATCH)
        return get_pipelined(c, o, field, grid_rank, op);
    return ERR_OK;
}

static int parse_operands(struct kctx *c, json_object *k, const char *key, enum kernel_role role,
                          unsigned grid_rank)
{
    json_object *arr;
    char f[64];
    int rc;

    if (!json_object_object_get_ex(k, key, &arr))
        return ERR_OK;
    if (!json_object_is_type(arr, json_type_array))
        return kerr(c, ERR_INVALID, key, "must be an array of objects");
    for (size_t j = 0; j < json_object_array_length(arr); j++) {
        snprintf(f, sizeof(f), "%s[%zu]", key, j);
        if ((rc = parse_operand(c, json_object_array_get_idx(arr, j), role, f, grid_rank)) !=
            ERR_OK)
            return rc;
    }
    return ERR_OK;
}

/* vmem_limit_bytes, internal_scratch_bytes and flops. */
static int parse_numbers(struct kctx *c, json_object *k, struct kernel_spec *s)
{
    json_object *v;
    int64_t x;

    if (json_object_object_get_ex(k, "vmem_limit_bytes", &v)) {
        if (jsonr_int(v, &x) != 0 || x < 1)
            return kerr(c, ERR_INVALID, "vmem_limit_bytes", "must be a positive integer");
        s->vmem_limit = (uint64_t)x;
    }
    if (json_object_object_get_ex(k, "internal_scratch_bytes", &v)) {
        if (jsonr_int(v, &x) != 0 || x < 0)
            return kerr(c, ERR_INVALID, "internal_scratch_bytes", "must be an integer >= 0");
        s->internal_scratch = (uint64_t)x;
    }
    if (json_object_object_get_ex(k, "flops", &v)) {
        double d = json_object_get_double(v);
        if (!(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)) ||
            !(d >= 0 && d < 1e300))
            return kerr(c, ERR_INVALID, "flops", "must be a number >= 0 (flops per grid step)");
        s->has_flops = true;
        s->flops = d;
    }
    return ERR_OK;
}

static int parse_kernel(struct kctx *c, json_object *k, struct kernel_spec *s)
{
    static const char *const keys[] = {"name",        "grid",
                                       "inputs",      "outputs",
                                       "scratch",     "vmem_limit_bytes",
                                       "flops",       "internal_scratch_bytes",
                                       "description", NULL};
    json_object *v;
    int rc;

    c->kname = NULL;
    if (!json_object_is_type(k, json_type_object))
        return kerr(c, ERR_INVALID, "", "must be an object");
    if ((rc = check_keys(c, k, "", keys,
                         "name, grid, inputs, outputs, scratch, vmem_limit_bytes, flops, "
                         "internal_scratch_bytes, description")) != ERR_OK ||
        (rc = get_name(c, k, "", &s->name)) != ERR_OK)
        return rc;
    c->kname = s->name;
    if (json_object_object_get_ex(k, "grid", &v) &&
        (rc = get_ints(c, v, "grid", KERNEL_MAX_GRID, 1, INT64_C(1) << 40, false, s->grid,
                       &s->grid_rank)) != ERR_OK)
        return rc;
    s->ops = &c->ks->ops[c->ops_used];
    if ((rc = parse_operands(c, k, "inputs", KERNEL_INPUT, s->grid_rank)) != ERR_OK ||
        (rc = parse_operands(c, k, "outputs", KERNEL_OUTPUT, s->grid_rank)) != ERR_OK ||
        (rc = parse_operands(c, k, "scratch", KERNEL_SCRATCH, s->grid_rank)) != ERR_OK)
        return rc;
    s->nops = (size_t)(&c->ks->ops[c->ops_used] - s->ops);
    return parse_numbers(c, k, s);
}

/* Operands and name bytes of one kernel, counted before anything is checked. */
static int count_kernel(struct kctx *c, json_object *k, size_t *ops, size_t *bytes)
{
    static const char *const lists[] = {"inputs", "outputs", "scratch"};
    json_object *v;
    size_t n = 0;

    if (!json_object_is_type(k, json_type_object))
        return ERR_OK; /* parse_kernel says why */
    if (json_object_object_get_ex(k, "name", &v) && json_object_is_type(v, json_type_string))
        *bytes += (size_t)json_object_get_string_len(v) + 1;
    for (int l = 0; l < 3; l++) {
        if (!json_object_object_get_ex(k, lists[l], &v) || !json_object_is_type(v, json_type_array))
            continue;
        for (size_t j = 0; j < json_object_array_length(v); j++) {
            json_object *o = json_object_array_get_idx(v, j), *nm;
            if (json_object_is_type(o, json_type_object) &&
                json_object_object_get_ex(o, "name", &nm) &&
                json_object_is_type(nm, json_type_string))
                *bytes += (size_t)json_object_get_string_len(nm) + 1;
        }
        n += json_object_array_length(v);
    }
    if (n > KERNEL_MAX_OPERANDS)
        return kerr(c, ERR_LIMIT, "", "%zu operands; the limit is %d", n, KERNEL_MAX_OPERANDS);
    *ops += n;
    return ERR_OK;
}

int kernel_set_parse(json_object *arr, size_t max_kernels, struct kernel_set *ks, struct err *e)
{
    struct kctx c = {.ks = ks, .e = e};
    size_t n, nops = 0, bytes = 0;
    int rc = ERR_OK;

    memset(ks, 0, sizeof(*ks));
    if (arr == NULL)
        return ERR_OK;
    if (!json_object_is_type(arr, json_type_array))
        return err_set(e, ERR_INVALID, "kernels", "kernels: must be an array of kernel objects");
    n = json_object_array_length(arr);
    if (n > max_kernels)
        return err_set(e, ERR_LIMIT, "kernels", "kernels: %zu kernels; the limit is %zu", n,
                       max_kernels);
    for (c.i = 0; c.i < n; c.i++)
        if ((rc = count_kernel(&c, json_object_array_get_idx(arr, c.i), &nops, &bytes)) != ERR_OK)
            return rc;
    ks->k = calloc(n ? n : 1, sizeof(*ks->k));
    ks->ops = calloc(nops ? nops : 1, sizeof(*ks->ops));
    ks->strings = malloc(bytes ? bytes : 1);
    if (ks->k == NULL || ks->ops == NULL || ks->strings == NULL) {
        rc = err_set(e, ERR_NOMEM, "kernels", "kernels: out of memory for %zu kernels", n);
        goto out;
    }
    ks->n = n;
    for (c.i = 0; c.i < n; c.i++)
        if ((rc = parse_kernel(&c, json_object_array_get_idx(arr, c.i), &ks->k[c.i])) != ERR_OK)
            goto out;
out:
    if (rc != ERR_OK)
        kernel_set_free(ks);
    return rc;
}
