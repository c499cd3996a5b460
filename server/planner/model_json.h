/*
 * model_json.h - the native model description, JSON (import/model_json.c).
 *
 * Format (JSON; full schema: static/schema/model.schema.json):
 *
 *   {
 *     "name": "tiny-lm-train",                 optional, default "model"
 *     "chip": "v5e",                           optional; plan_opts.chip overrides it
 *     "mesh": {"data": 4, "model": 2},         optional: mesh axis -> size
 *     "tensors": [
 *       {"name": "wq", "shape": [1024, 1024], "dtype": "bf16", "kind": "param",
 *        "sharding": [null, "model"]},
 *       {"name": "ids", "xla_shape": "s32[8,512]{1,0:T(8,128)}", "kind": "input",
 *        "donated": true},
 *       {"name": "h", "shape": [8, 512, 1024], "dtype": "bf16", "layout": "{2,1,0}",
 *        "kind": "activation", "live": [1, 3], "tags": ["layer0"]}
 *     ],
 *     "ops": [{"name": "embed", "inputs": ["ids"], "outputs": ["h"]}],
 *     "options": {"strategies": "best", "capacity": 16000000000, "time_limit": 2,
 *                 "alignment": 512}
 *   }
 *
 * Tensor fields: "name" (unique, required); either "shape" (dims, each >= 0) + "dtype" (XLA
 * spelling: f32, bf16, s8, pred, ...) + optional "layout" ("{1,0:T(8,128)}"), or
 * "xla_shape" (a full XLA shape string); "kind": param, grad, optimizer, activation, temp,
 * input, output or constant (default temp); "live": [start, end) in program steps; "sharding": one
 * entry per dim, each null, a mesh axis name or a list of axis names; "tags": strings;
 * "donated": true lets an argument die after its last use; "description": ignored.
 * Unknown fields are errors (they are usually typos).
 *
 * Sharding: as model.h says.
 *
 * Integers must lie strictly between -2^63 and 2^63-1: json-c clamps out-of-range
 * numbers to those two values without an error, so both are rejected as "out of range".
 *
 * Every error names the tensor (index and name) and the field, as a JSON path in
 * err.where and a full sentence in err.msg. Memory is bounded by the input: the tensor
 * array by max_tensors, strings by the input length (they are copies of input text).
 */
#ifndef TPUPLAN_MODEL_JSON_H
#define TPUPLAN_MODEL_JSON_H

#include <stddef.h>

#include "planner/err.h"
#include "planner/kernel.h"
#include "planner/model.h"

/* Parses a native JSON description. On failure *m is left empty (nothing to free). */
ERR_MUST_CHECK int model_parse_json(const char *input, size_t len, const struct model_limits *l,
                                    struct model *m, struct err *e);

/*
 * Parses a model's "kernels" array (a json-c array, model.kernels_json; NULL: no kernels)
 * into *ks. Errors name the field ("kernels[2].inputs[0].block[1]"). On failure *ks is
 * empty. *ks owns all its memory until kernel_set_free (kernel.h). max_kernels bounds the
 * array.
 */
struct json_object;
ERR_MUST_CHECK int kernel_set_parse(struct json_object *arr, size_t max_kernels,
                                    struct kernel_set *ks, struct err *e);

#endif
