/*
 * model_build.h - how a model is built: what the importers (import/ and the loaders the plan
 * still holds) use to fill a struct model, and the name index over its tensors. Callers
 * outside the planner only read a finished model (model.h) and never need it.
 */
#ifndef TPUPLAN_MODEL_BUILD_H
#define TPUPLAN_MODEL_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/base/names.h"
#include "planner/err.h"
#include "planner/model.h"

/*
 * Starts an empty model: ntensors zeroed tensors (m->n = ntensors), one device, an empty
 * string arena. source_format is static. On failure (ERR_NOMEM) model_free(m) releases
 * what was allocated.
 */
ERR_MUST_CHECK int model_init(struct model *m, const char *source_format, size_t ntensors);

/* The model's string arena: blocks of copies that live until model_free. A helper thread
 * fills an arena of its own (zeroed) and hands it over with model_arena_adopt. */
struct arena_block;
struct model_arena {
    struct arena_block *head;
};

/* Moves every block of src to dst (src ends empty): what a helper thread wrote into its
 * own arena then lives as long as dst's model. */
void model_arena_adopt(struct model_arena *dst, struct model_arena *src);

/* n bytes (8-byte aligned) from the model's arena, living until model_free(m); NULL on
 * allocation failure. */
void *model_alloc(struct model *m, size_t n);

/* Copies s[0..n) into the model's arena and NUL-terminates it; NULL on allocation failure.
 * The copy lives until model_free(m). */
const char *model_strdup(struct model *m, const char *s, size_t n);

/* Stores *s as t's compact shape (model.h), its arrays in m's arena; arrays t already
 * holds are reused when the new ones fit them (model_resolve keeps a tensor's dims).
 * ERR_NOMEM, or ERR_OK. */
ERR_MUST_CHECK int model_tensor_set_shape(struct model *m, struct model_tensor *t,
                                          const struct shape *s);

/*
 * Name index over m->tensors, for duplicate detection and op references (a base/names.h
 * table of tensor indices, which reads the names from the model it was built over: m must
 * stay at its address, its tensors' names unchanged, while the index is used). Owned by the
 * caller through model_index_free.
 */
struct model_index {
    struct names names;
};

/* Builds the index; a repeated name is ERR_INVALID at the second tensor's name, naming the
 * first. On failure the index holds nothing (model_index_free is still fine). */
ERR_MUST_CHECK int model_index_build(const struct model *m, struct model_index *ix, struct err *e);

/* Index of the tensor called name[0..n), or -1. */
int64_t model_index_find(const struct model_index *ix, const char *name, size_t n);

void model_index_free(struct model_index *ix);

#endif
