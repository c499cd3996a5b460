/*
 * whatif.h - a what-if on a model description: overrides applied to its JSON text, giving
 * the model a new plan is made of (POST /api/v1/plans/{id}/whatif; the result is then
 * compared with its parent's by diff.h).
 *
 * Overrides (a JSON object; an unknown key is an error naming it):
 *   "chip": "v6e"                        the chip (the model's "chip")
 *   "strategies": "best"                 packing strategies (the model's options.strategies)
 *   "budget": "0.9"                      the budget gate (budget.h)
 *   "name": "..."                        the new plan's name (default: "<model> (what-if)")
 *   "dtype": {"activation": "bf16", "attn.*": "f32"}
 *   "mesh": {"data": 8}                  mesh axis sizes, set or added
 *   "sharding": {"*.wq": [null, "model"]}
 *   "remat": "layers.*.h" or [...]       activations recomputed in the backward pass, not
 *                                        saved
 *   "xla_shape": {"token_ids": "u32[98304,128]"}
 *                                        a tensor stored as another shape (its dims, dtype
 *                                        and layout replaced: a layout fix, suggest.h)
 *   "memory_space": {"optimizer": "host"}
 *                                        where the tensors live: "device" (HBM) or "host"
 *                                        (pinned_host, unpinned_host): a tensor in host memory
 *                                        is planned apart from HBM (lifetime.h), the model's
 *                                        "memory_space"; the last pattern that selects a tensor
 *                                        decides. An activation live over [s, e) with e - s > 2
 *                                        is offloaded: it keeps [s, s + 1) in HBM (where it is
 *                                        made), "<name>/host" holds it in host memory over
 *                                        [s, e) and "<name>/from_host" is it back in HBM over
 *                                        [e - 1, e) (its last use); a shorter activation stays
 *                                        in HBM. Any other tensor moves whole: as ZeRO-Offload
 *                                        keeps optimizer state in host memory; a copy into HBM
 *                                        before a weight is read is not modelled
 *   "recipe": {"train": {"batch": 16}}   a recipe's plan: a JSON Merge Patch (RFC 7386) of
 *                                        the recipe (recipe.h), checked as a whole; dtype,
 *                                        sharding, xla_shape and remat do not apply to a
 *                                        recipe (its tensors follow from its fields)
 * A pattern is a tensor kind (param, grad, optimizer, activation, temp, input, output) or a
 * glob on tensor names (fnmatch: *, ?, [...]); patterns apply in the order given, so a
 * later one wins. A new dtype drops a tensor's given layout (its tiling is per dtype) and
 * tpuplan picks the default for the new dtype; an "xla_shape" keeps its dims. A
 * rematerialised activation live over [s, e) with e - s > 2 is modelled as live over
 * [s, s + 1) (its producing step) and, as a second tensor "<name>/remat", over [e - 1, e)
 * (recomputed for its last use): an assumption the plan states in its warnings; the
 * recompute's own temporaries are not modelled. An activation is split once, however many
 * remat patterns select it.
 *
 * Bounds, so that no what-if makes the planner allocate without a bound:
 *   - the overrides: 64 KiB of JSON, depth 8, at most limits->max_patterns patterns in all
 *     (dtype, sharding, remat, xla_shape and memory_space together; ERR_LIMIT naming
 *     "overrides");
 *   - every pattern selects something: a dtype, sharding, xla_shape or memory_space pattern
 *     a tensor, a remat pattern an activation (ERR_INVALID naming it: overrides.remat[3],
 *     overrides.dtype.<pattern>, overrides.memory_space.<pattern>);
 *   - the new model is held to the limits a submission is: the tensors remat and an offload
 *     add are counted before any is made (ERR_LIMIT naming "overrides.remat" or
 *     "overrides.memory_space" past limits->max_tensors), and its text to
 *     limits->max_input_bytes (ERR_LIMIT).
 * Keys apply in the order written, each to the model as the ones before left it.
 *
 * Pure: no I/O, no global state. The new model is then planned and checked as any input.
 */
#ifndef TPUPLAN_WHATIF_H
#define TPUPLAN_WHATIF_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/budget.h"
#include "planner/err.h"
#include "planner/plan.h"

struct whatif_result {
    char *model; /* the new model description (malloc'd, NUL-terminated; caller frees) */
    size_t model_len;
    bool chip_set, strategies_set;    /* the model's own now: a caller's plan_opts chip or
                                       * strategies must not override them */
    char budget[BUDGET_MAX_TEXT + 1]; /* "" when not overridden */
    char name[128];                   /* the new plan's name */
    size_t matched;                   /* tensors an override changed */
    bool recipe;                      /* the input and the new model are recipes: plan them
                                       * with format "recipe" */
};

/* Checks overrides (olen bytes) without a model: the JSON, each key and value, the patterns
 * counted against l->max_patterns (l NULL: plan_limits_default). What whatif_apply checks
 * first; cheap (linear in olen), so a service can refuse bad overrides before it queues them.
 * out (may be NULL) receives what the overrides alone say: chip_set, strategies_set, budget
 * and name ("" when not overridden); its model stays NULL. Errors name "overrides.<key>". */
ERR_MUST_CHECK int whatif_check(const char *overrides, size_t olen, const struct plan_limits *l,
                                struct whatif_result *out, struct err *e);

/* Applies overrides (olen bytes) to the native JSON model (len bytes) within limits l
 * (NULL: plan_limits_default). Errors name "overrides.<key>" or the model's field. */
ERR_MUST_CHECK int whatif_apply(const char *model, size_t len, const char *overrides, size_t olen,
                                const struct plan_limits *l, struct whatif_result *out,
                                struct err *e);

#endif
