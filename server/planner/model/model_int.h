/*
 * model_int.h - what the model importers share, private to server/planner.
 *
 * The importers (model.c's native JSON parser, safetensors.c, plan.c's MiniMalloc CSV
 * path, and a future HLO importer) build a struct model from these pieces; callers outside
 * the planner only read a finished model (model.h) and never need them.
 */
#ifndef TPUPLAN_MODEL_INT_H
#define TPUPLAN_MODEL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/model.h"

/*
 * Starts an empty model: ntensors zeroed tensors (m->n = ntensors), one device, an empty
 * string arena. source_format is static. On failure (ERR_NOMEM) model_free(m) releases
 * what was allocated.
 */
ERR_MUST_CHECK int model_init(struct model *m, const char *source_format, size_t ntensors);

/* Copies s[0..n) into the model's arena and NUL-terminates it; NULL on allocation failure.
 * The copy lives until model_free(m). */
const char *model_strdup(struct model *m, const char *s, size_t n);

/* Stores *s as t's compact shape (model.h), its arrays in m's arena; arrays t already
 * holds are reused when the new ones fit them (model_resolve keeps a tensor's dims).
 * ERR_NOMEM, or ERR_OK. */
ERR_MUST_CHECK int model_tensor_set_shape(struct model *m, struct model_tensor *t,
                                          const struct shape *s);

/*
 * JSON helpers. model_json_load parses text with json-c in strict mode (UTF-8 validated,
 * depth bounded); *root is owned by the caller (json_object_put). model_json_int: 0 ok,
 * 1 not an integer, 2 out of range (json-c clamps silently, so the two clamp values are
 * rejected).
 */
struct json_object;
ERR_MUST_CHECK int model_json_load(const char *input, size_t len, unsigned max_depth,
                                   const char *what, struct json_object **root, struct err *e);
ERR_MUST_CHECK int model_json_int(const struct json_object *v, int64_t *out);

/*
 * Iterates the members of a json-c object (include <json-c/json.h> first) with the public
 * iterator API: a plain for loop, unlike json_object_object_foreach, so static analysers
 * that do not read json-c's headers can parse it. KEY and VAL are expressions to use in the
 * body: MODEL_JSON_KEY(it) and MODEL_JSON_VAL(it).
 */
/* NOLINTBEGIN(bugprone-macro-parentheses): it and end are declared names */
#define MODEL_JSON_FOREACH(obj, it, end)                                                           \
    for (struct json_object_iterator it = json_object_iter_begin(obj),                             \
                                     end = json_object_iter_end(obj);                              \
         !json_object_iter_equal(&(it), &(end)); json_object_iter_next(&(it)))
/* NOLINTEND(bugprone-macro-parentheses) */
#define MODEL_JSON_KEY(it) json_object_iter_peek_name(&(it))
#define MODEL_JSON_VAL(it) json_object_iter_peek_value(&(it))

/*
 * Name index over m->tensors, for duplicate detection and op references: an
 * open-addressing table of tensor indices (malloc'd, owned by the caller through
 * model_index_free).
 */
struct model_index {
    uint32_t *slots; /* UINT32_MAX = empty */
    size_t mask;
};
ERR_MUST_CHECK int model_index_build(const struct model *m, struct model_index *ix, struct err *e);
/* Index of the tensor called name[0..n), or -1. */
int64_t model_index_find(const struct model *m, const struct model_index *ix, const char *name,
                         size_t n);
void model_index_free(struct model_index *ix);

/*
 * model_fast.c: a tensor element of the plain form (model_fast.c's comment: keys name,
 * dtype, shape, kind, live, description; printable ASCII strings without escapes; small
 * unsigned integers) read from s[*pos] (after whitespace) through the ',' or ']' after it,
 * with only values parse_tensor accepts. true: *t filled (t->name points into s, not
 * NUL-terminated), *last set when the element ended the array, *pos past it. false:
 * nothing consumed; the caller parses the element with json-c.
 */
struct model_fast_tensor {
    const char *name;
    size_t name_len;
    enum dtype dtype;
    enum tensor_kind kind; /* TENSOR_TEMP when not given */
    uint8_t rank;
    int64_t dims[SHAPE_MAX_RANK];
    bool live_given;
    int64_t live_start, live_end;
};
bool model_fast_tensor(const char *s, size_t len, size_t *pos, struct model_fast_tensor *t,
                       bool *last);

#endif
