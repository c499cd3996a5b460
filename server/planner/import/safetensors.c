/*
 * safetensors.c - safetensors header importer (see safetensors.h).
 */
#include "planner/safetensors.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/base/jsonr.h"
#include "planner/model/model_build.h"

uint64_t safetensors_header_length(const char *buf)
{
    const unsigned char *p = (const unsigned char *)buf;
    uint64_t v = 0;

    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

bool safetensors_detect(const char *buf, size_t len)
{
    if (len < 9)
        return false;
    uint64_t n = safetensors_header_length(buf);
    return n >= 2 && n <= SAFETENSORS_MAX_HEADER && buf[8] == '{';
}

/* Names from the safetensors Rust Dtype enum (safetensors/src/tensor.rs, listed in
 * server/planner/SOURCES.md#safetensors). F8_E4M3 is torch's float8_e4m3fn; F8_E8M0 is the MX scale
 * type XLA calls f8e8m0fnu; F4 is float4_e2m1fn. */
static const struct {
    const char *name;
    enum dtype dt;
    unsigned bits;
} st_types[] = {
    {"F64", DT_F64, 64},
    {"F32", DT_F32, 32},
    {"F16", DT_F16, 16},
    {"BF16", DT_BF16, 16},
    {"I64", DT_S64, 64},
    {"I32", DT_S32, 32},
    {"I16", DT_S16, 16},
    {"I8", DT_S8, 8},
    {"U64", DT_U64, 64},
    {"U32", DT_U32, 32},
    {"U16", DT_U16, 16},
    {"U8", DT_U8, 8},
    {"BOOL", DT_PRED, 8},
    {"F8_E4M3", DT_F8E4M3FN, 8},
    {"F8_E5M2", DT_F8E5M2, 8},
    {"F8_E8M0", DT_F8E8M0FNU, 8},
    {"F8_E4M3FNUZ", DT_F8E4M3FNUZ, 8},
    {"F8_E5M2FNUZ", DT_F8E5M2FNUZ, 8},
    {"F4", DT_F4E2M1FN, 4},
    {"C64", DT_C64, 64},
};

enum dtype safetensors_dtype(const char *s, unsigned *bits)
{
    for (size_t i = 0; i < sizeof(st_types) / sizeof(st_types[0]); i++)
        if (strcmp(s, st_types[i].name) == 0) {
            *bits = st_types[i].bits;
            return st_types[i].dt;
        }
    *bits = 0;
    return DT_INVALID;
}

struct range {
    uint64_t begin, end;
    size_t tensor;
};

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    if (x->begin != y->begin)
        return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return 0;
}

/* Error about tensors[i] (header key name). */
static int terr(struct err *e, int code, size_t i, const char *name, const char *field,
                const char *what)
{
    char where[48];
    snprintf(where, sizeof(where), "tensors[%zu]%s%s", i, field[0] ? "." : "", field);
    return err_set(e, code, where, "safetensors header: tensors[%zu] \"%.200s\": %s%s%s", i, name,
                   field, field[0] ? ": " : "", what);
}

static int parse_entry(struct model *m, size_t i, const char *key, json_object *v, struct range *r,
                       struct err *e)
{
    struct model_tensor *t = &m->tensors[i];
    struct shape sh;
    json_object *jd, *js, *jo;
    char what[256];
    unsigned bits;
    uint64_t elems = 1, bytes;

    if (!json_object_is_type(v, json_type_object))
        return terr(e, ERR_INVALID, i, key, "",
                    "must be an object with dtype, shape and "
                    "data_offsets");
    JSONR_FOREACH(v, it_k, end_k)
    {
        const char *k = JSONR_KEY(it_k);
        if (strcmp(k, "dtype") != 0 && strcmp(k, "shape") != 0 && strcmp(k, "data_offsets") != 0) {
            snprintf(what, sizeof(what), "unknown field \"%.100s\"", k);
            return terr(e, ERR_INVALID, i, key, "", what);
        }
    }
    if (!json_object_object_get_ex(v, "dtype", &jd) || !json_object_is_type(jd, json_type_string))
        return terr(e, ERR_INVALID, i, key, "dtype", "missing or not a string");
    memset(&sh, 0, sizeof(sh));
    sh.dtype = safetensors_dtype(json_object_get_string(jd), &bits);
    if (sh.dtype == DT_INVALID) {
        snprintf(what, sizeof(what),
                 "unsupported dtype \"%.40s\" (known: F64 F32 F16 BF16 I64 "
                 "I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 F8_E5M2 F8_E8M0 F8_E4M3FNUZ "
                 "F8_E5M2FNUZ F4 C64)",
                 json_object_get_string(jd));
        return terr(e, ERR_NOTFOUND, i, key, "dtype", what);
    }
    if (!json_object_object_get_ex(v, "shape", &js) || !json_object_is_type(js, json_type_array))
        return terr(e, ERR_INVALID, i, key, "shape", "missing or not an array");
    size_t rank = json_object_array_length(js);
    if (rank > SHAPE_MAX_RANK) {
        snprintf(what, sizeof(what), "rank %zu is above the limit of %d", rank, SHAPE_MAX_RANK);
        return terr(e, ERR_LIMIT, i, key, "shape", what);
    }
    sh.rank = (uint8_t)rank;
    for (size_t d = 0; d < rank; d++) {
        int64_t x;
        char field[24];
        snprintf(field, sizeof(field), "shape[%zu]", d);
        if (jsonr_int(json_object_array_get_idx(js, d), &x) != 0 || x < 0)
            return terr(e, ERR_INVALID, i, key, field, "must be an integer >= 0 and below 2^63-1");
        sh.dims[d] = x;
        if (__builtin_mul_overflow(elems, (uint64_t)x, &elems))
            return terr(e, ERR_OVERFLOW, i, key, "shape", "element count overflows 64 bits");
    }
    if (!json_object_object_get_ex(v, "data_offsets", &jo) ||
        !json_object_is_type(jo, json_type_array) || json_object_array_length(jo) != 2)
        return terr(e, ERR_INVALID, i, key, "data_offsets", "missing or not [begin, end]");
    int64_t b, en;
    if (jsonr_int(json_object_array_get_idx(jo, 0), &b) != 0 ||
        jsonr_int(json_object_array_get_idx(jo, 1), &en) != 0 || b < 0 || en < b)
        return terr(e, ERR_INVALID, i, key, "data_offsets",
                    "must be two integers with 0 <= "
                    "begin <= end");
    if (__builtin_mul_overflow(elems, (uint64_t)bits, &bytes))
        return terr(e, ERR_OVERFLOW, i, key, "shape", "byte size overflows 64 bits");
    if (bytes % 8 != 0)
        return terr(e, ERR_INVALID, i, key, "shape", "sub-byte tensor does not fill whole bytes");
    bytes /= 8;
    if ((uint64_t)(en - b) != bytes) {
        snprintf(what, sizeof(what), "[%lld, %lld) holds %llu bytes but shape x dtype needs %llu",
                 (long long)b, (long long)en, (unsigned long long)(en - b),
                 (unsigned long long)bytes);
        return terr(e, ERR_INVALID, i, key, "data_offsets", what);
    }
    r->begin = (uint64_t)b;
    r->end = (uint64_t)en;
    r->tensor = i;
    t->kind = TENSOR_PARAM;
    if (model_tensor_set_shape(m, t, &sh) != ERR_OK)
        return terr(e, ERR_NOMEM, i, key, "shape", "out of memory");
    return ERR_OK;
}

/* The header length, checked against the format's cap and the input. */
static int header_length(const char *input, size_t len, uint64_t *hlen, struct err *e)
{
    if (len < 8)
        return err_set(e, ERR_INVALID, "header",
                       "safetensors: %zu bytes is too short for the "
                       "8-byte header length",
                       len);
    *hlen = safetensors_header_length(input);
    if (*hlen > SAFETENSORS_MAX_HEADER)
        return err_set(e, ERR_LIMIT, "header",
                       "safetensors: header length %llu is above the "
                       "format's cap of %u bytes",
                       (unsigned long long)*hlen, SAFETENSORS_MAX_HEADER);
    if (*hlen > len - 8)
        return err_set(e, ERR_INVALID, "header",
                       "safetensors: header length %llu is larger "
                       "than the %zu bytes that follow it (truncated header?)",
                       (unsigned long long)*hlen, len - 8);
    return ERR_OK;
}

/* Counts the tensors of the header object root, checking __metadata__ on the way. */
static int count_tensors(json_object *root, size_t *n, struct err *e)
{
    *n = 0;
    if (!json_object_is_type(root, json_type_object))
        return err_set(e, ERR_INVALID, "header", "safetensors header: must be a JSON object");
    JSONR_FOREACH(root, it_k0, end_k0)
    {
        const char *k0 = JSONR_KEY(it_k0);
        json_object *v0 = JSONR_VAL(it_k0);
        if (strcmp(k0, "__metadata__") != 0) {
            (*n)++;
            continue;
        }
        if (!json_object_is_type(v0, json_type_object))
            return err_set(e, ERR_INVALID, "header.__metadata__",
                           "safetensors header: "
                           "__metadata__ must be an object of strings");
        JSONR_FOREACH(v0, it_mk, end_mk)
        {
            const char *mk = JSONR_KEY(it_mk);
            json_object *mv = JSONR_VAL(it_mk);
            if (!json_object_is_type(mv, json_type_string))
                return err_set(e, ERR_INVALID, "header.__metadata__",
                               "safetensors header: "
                               "__metadata__ \"%.100s\" must be a string",
                               mk);
        }
    }
    return ERR_OK;
}

/* Fills m's tensors (m->n of them) from the header's entries, in header order. */
static int parse_entries(json_object *root, struct model *m, struct range *ranges, struct err *e)
{
    size_t i = 0;
    int rc;

    JSONR_FOREACH(root, it_key, end_key)
    {
        const char *key = JSONR_KEY(it_key);
        json_object *val = JSONR_VAL(it_key);
        if (strcmp(key, "__metadata__") == 0)
            continue;
        size_t klen = strlen(key);
        if (klen == 0 || klen > MODEL_MAX_NAME)
            return err_set(e, ERR_INVALID, "header",
                           "safetensors header: tensors[%zu]: name must "
                           "be 1 to %d bytes",
                           i, MODEL_MAX_NAME);
        if ((m->tensors[i].name = model_strdup(m, key, klen)) == NULL)
            return err_set(e, ERR_NOMEM, "header", "out of memory");
        if ((rc = parse_entry(m, i, key, val, &ranges[i], e)) != ERR_OK)
            return rc;
        i++;
    }
    return ERR_OK;
}

/* The data ranges must tile [0, total): sorted, each begins where the previous ends. */
static int check_ranges(const struct model *m, struct range *ranges, uint64_t *total, struct err *e)
{
    *total = 0;
    if (m->n > 0)
        qsort(ranges, m->n, sizeof(*ranges), cmp_range);
    for (size_t k = 0; k < m->n; k++) {
        if (ranges[k].begin != *total) {
            size_t t = ranges[k].tensor;
            char what[160];
            snprintf(what, sizeof(what),
                     "begins at %llu but the previous tensor ends at %llu "
                     "(%s)",
                     (unsigned long long)ranges[k].begin, (unsigned long long)*total,
                     ranges[k].begin > *total ? "a gap: a duplicate key?" : "overlapping data");
            return terr(e, ERR_INVALID, t, m->tensors[t].name, "data_offsets", what);
        }
        *total = ranges[k].end;
    }
    return ERR_OK;
}

int safetensors_parse(const char *input, size_t len, const struct model_limits *l, struct model *m,
                      struct err *e)
{
    json_object *root = NULL;
    struct range *ranges = NULL;
    uint64_t hlen = 0, total = 0;
    size_t n;
    int rc;

    memset(m, 0, sizeof(*m));
    if (len > l->max_input_bytes)
        return err_set(e, ERR_LIMIT, "", "input is %zu bytes; the limit is %zu", len,
                       l->max_input_bytes);
    if ((rc = header_length(input, len, &hlen, e)) != ERR_OK)
        return rc;
    if ((rc = jsonr_load(input + 8, (size_t)hlen, l->max_json_depth, "safetensors header", &root,
                         e)) != ERR_OK)
        return rc;
    if ((rc = count_tensors(root, &n, e)) != ERR_OK)
        goto out;
    if (n > l->max_tensors) {
        rc = err_set(e, ERR_LIMIT, "header", "safetensors header: %zu tensors; the limit is %zu", n,
                     l->max_tensors);
        goto out;
    }
    if (model_init(m, "safetensors", n) != ERR_OK ||
        (ranges = malloc((n > 0 ? n : 1) * sizeof(*ranges))) == NULL) {
        rc = err_set(e, ERR_NOMEM, "header", "out of memory for %zu tensors", n);
        goto out;
    }
    m->name = "safetensors";
    if ((rc = parse_entries(root, m, ranges, e)) != ERR_OK ||
        (rc = check_ranges(m, ranges, &total, e)) != ERR_OK)
        goto out;
    if (len > 8 + hlen && len - 8 - hlen != total) {
        rc = err_set(e, ERR_INVALID, "data",
                     "safetensors: the file has %llu data bytes after "
                     "the header but the header describes %llu (truncated file?)",
                     (unsigned long long)(len - 8 - hlen), (unsigned long long)total);
    }
out:
    free(ranges);
    json_object_put(root);
    if (rc != ERR_OK)
        model_free(m);
    return rc;
}
