/*
 * recipe.h - from a model config to a plan: a recipe (a Hugging Face config.json, or a
 * preset, plus what to run: a training step or a serving step, on a mesh) becomes an
 * ordinary model (model.h): tensors with kind, shape, dtype, sharding and tags, and the
 * ops of one step in program order. The planner then pads, packs and fits it like any
 * input (server/planner/INPUT.md#from-a-model-config-recipes has the fields, the families,
 * the remat policies and what each saves; static/schema/recipe.schema.json the schema).
 *
 * A recipe is also a thing to edit: the dashboard's form and a search for the largest
 * batch that fits change one field and build again (recipe_set, then recipe_model or
 * recipe_text). Every edit is checked as the whole recipe is: the recipe stays valid.
 * A search over a recipe reads a field as planned (recipe_get_int, recipe_get), sets it
 * (recipe_set), and plans recipe_text's output with plan_run (plan.h), format "recipe":
 *
 *   what                        path                          value
 *   global batch, sequence      train.batch, train.seq        a whole number
 *   gradient accumulation       train.microbatches            divides train.batch (with
 *                                                             parallelism.pipeline.microbatches)
 *   remat policy                train.remat                   "dots_saveable", ...
 *   optimizer, its state dtype  train.optimizer.name,         "adamw", ...; "bf16", "s8"
 *                               train.optimizer.state_dtype   (a bare "optimizer": "adamw" is
 *                                                             made {"name": "adamw"})
 *   precision                   train.precision.param, ...    a dtype
 *   concurrent sequences        serve.sequences               a whole number
 *   max context                 serve.context                 a whole number
 *   KV cache, weights           serve.kv_dtype, serve.weights a dtype; "int8", "int4", "fp8"
 *   a mesh axis                 mesh.data, mesh.fsdp, mesh.tensor, mesh.sequence (context),
 *                               mesh.expert, mesh.pipeline (stage): a size; null removes it
 *   a rule                      parallelism.rules.<logical>   ["fsdp", "tensor"]
 *   the chip                    chip                          "v5p"
 *   a config field              model.num_hidden_layers       as config.json has it
 *
 * Pure: no I/O, no global state; every allocation is bounded by the input (a recipe is at
 * most RECIPE_MAX_INPUT bytes) and by struct model_limits.
 */
#ifndef TPUPLAN_RECIPE_H
#define TPUPLAN_RECIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/chip.h"
#include "planner/err.h"
#include "planner/import.h"
#include "planner/model.h"

#define RECIPE_MAX_INPUT (1u << 20) /* bytes of a recipe or a config.json */
#define RECIPE_MAX_DEPTH 16         /* JSON nesting */

/* A well-known model: its config.json copied exactly, where it is published, and its
 * published parameter count (what the importer's count is tested against). */
struct recipe_preset {
    const char *name;             /* "llama-3.1-8b" */
    const char *url;              /* the config.json it copies */
    const char *config;           /* the config.json's text */
    uint64_t published_params;    /* 0: none published */
    const char *published_source; /* where that count is published */
};

/* The presets' table, in order: recipe_preset_at(i) for i < recipe_preset_count(). */
size_t recipe_preset_count(void);
const struct recipe_preset *recipe_preset_at(size_t i);

/*
 * What a recipe may name, as JSON (GET /api/v1/recipes; the dashboard's form is made from
 * it): {"presets": [{name, url, family, architecture, parameters, layers, hidden_size}],
 * "families": [{model_type, architecture, label}], "remat_policies": [{name, aliases, doc}],
 * "choices": {"train.attention": ["flash", "dot_product"], ...: every field whose value is one
 * of a list of names}}. *text is malloc'd, NUL-terminated (caller frees).
 */
ERR_MUST_CHECK int recipe_catalog(char **text, size_t *len, struct err *e);

/* A parsed, checked recipe; owned by its caller (recipe_free). */
struct recipe;

/* Parses and checks a recipe (len bytes of JSON). Errors name the field ("train.batch",
 * "model.num_hidden_layers"). On failure *out is NULL. */
ERR_MUST_CHECK int recipe_parse(const char *text, size_t len, struct recipe **out, struct err *e);

/*
 * Sets the field at path ("train.batch", "mesh.fsdp", "train.precision.master",
 * "model.num_hidden_layers") to value: value is JSON when it parses as JSON ("16", "true",
 * "null", "[\"fsdp\"]"), else a string ("bf16", "dots_saveable"); null removes the field.
 * Objects on the path are made as needed; a string that stands for an object ("model":
 * "gpt2", "optimizer": "lion") becomes it. Setting a mesh axis replaces its alias ("mesh.
 * sequence" drops "context"). The recipe is checked again; on any error it is left as it was.
 */
ERR_MUST_CHECK int recipe_set(struct recipe *r, const char *path, const char *value, struct err *e);

/*
 * The value at path as planned, as JSON text into buf (cap bytes, NUL-terminated): a field
 * the recipe leaves out reads as its default ("train.microbatches" -> "1", "train.remat" ->
 * "\"nothing_saveable\""), a mesh axis not given as 1 ("mesh.context" is "mesh.sequence"),
 * "model.<key>" as the config read has it (a preset's, with the recipe's overrides),
 * "parallelism.rules.<logical>" the mesh axes it maps to. ERR_NOTFOUND for a path that names
 * nothing (a "serve." path of a training recipe); ERR_LIMIT when the text needs more than cap
 * bytes (buf is then ""). Does not change r.
 */
ERR_MUST_CHECK int recipe_get(const struct recipe *r, const char *path, char *buf, size_t cap,
                              struct err *e);

/* recipe_get of a whole number ("train.batch", "mesh.fsdp"): ERR_INVALID when the value is
 * not one. *v is 0 on failure. */
ERR_MUST_CHECK int recipe_get_int(const struct recipe *r, const char *path, int64_t *v,
                                  struct err *e);

/* Applies a JSON Merge Patch (RFC 7386: objects merge, null removes, anything else
 * replaces) of len bytes to the recipe, checked as recipe_set is. */
ERR_MUST_CHECK int recipe_merge(struct recipe *r, const char *patch, size_t len, struct err *e);

/* The recipe as JSON text (malloc'd, NUL-terminated; caller frees): what recipe_parse
 * reads back to the same recipe, and what plan_run plans. */
ERR_MUST_CHECK int recipe_text(const struct recipe *r, char **text, size_t *len, struct err *e);

/* The model of the recipe's step (the worst pipeline stage when there is a pipeline),
 * laid out on chip (NULL: the recipe's chip, else chip_default()) as the planner does. *m
 * is the caller's (model_free) on success, empty on failure. */
ERR_MUST_CHECK int recipe_model(const struct recipe *r, const struct chip *chip,
                                const struct model_limits *l, struct model *m, struct err *e);

/* The model's parameter count (every weight's elements, global). */
uint64_t recipe_param_count(const struct recipe *r);

void recipe_free(struct recipe *r);

/*
 * A recipe from input and edits, as text (the CLI's quick case: `tpuplan plan config.json
 * --train batch=8,seq=4096 --mesh fsdp=16`): input is a recipe, or a bare config.json that
 * becomes {"model": <it>}; each edit is recipe_set's path and value, applied in order, and
 * the result checked. *text is malloc'd (caller frees); NULL on failure.
 */
struct recipe_edit {
    const char *path;
    const char *value;
};
ERR_MUST_CHECK int recipe_compose(const char *input, size_t len, const struct recipe_edit *edits,
                                  size_t n, char **text, size_t *text_len, struct err *e);

/* Whether s[0..len) (from its first non-blank) is a recipe: a JSON object whose top-level
 * keys include "model" and "train" or "serve", or a bare config.json ("architectures" or
 * "model_type", no "tensors"), which the importer answers with how to make it a recipe. */
bool recipe_detect(const char *s, size_t len);

/* The importer (import.h's row "recipe"): the worst stage's model, source_format
 * "recipe", with its result section (model.h recipe_json). */
ERR_MUST_CHECK int recipe_import(const char *s, size_t len, struct import_ctx *c, struct model *m,
                                 struct err *e);

#endif
