/*
 * jsonr.h - reading JSON with json-c: the strict, bounded load and the typed getters every
 * reader of a JSON document shares (the model importer, the what-if, the result readers).
 *
 * Nothing here allocates except jsonr_load, whose *root the caller owns (json_object_put).
 * Returned strings point into the json-c value and live as long as it does.
 */
#ifndef TPUPLAN_JSONR_H
#define TPUPLAN_JSONR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

struct json_object;

/*
 * Parses input[0..len) with json-c in strict mode (UTF-8 validated, depth bounded by
 * max_depth, 2..INT_MAX). Errors name the line and column and start with `what` ("model",
 * "options"). On success *root is the caller's (json_object_put); on failure NULL.
 */
ERR_MUST_CHECK int jsonr_load(const char *input, size_t len, unsigned max_depth, const char *what,
                              struct json_object **root, struct err *e);

/* v as an int64: 0 ok, 1 not an integer, 2 out of range (json-c clamps silently, so the
 * two clamp values are rejected). */
ERR_MUST_CHECK int jsonr_int(const struct json_object *v, int64_t *out);

/* v as a string without embedded NULs of 1..max bytes: 0 ok (*s, *n set; *s is
 * NUL-terminated and lives as long as v), 1 not a string, 2 empty, too long or holding a NUL. */
ERR_MUST_CHECK int jsonr_str(const struct json_object *v, size_t max, const char **s, size_t *n);

/* "an integer", "a string", "null", ...: v's JSON type for an error message. */
const char *jsonr_type_name(const struct json_object *v);

/* Writes v (any JSON value, NULL as null) through the writer, as key's value (key NULL inside
 * an array): objects' members in their order. For a section built with json-c and written
 * into a document jsonw streams (the result's recipe section). Depth is bounded by the
 * writer's (JSONW_MAX_DEPTH); deeper values are written as null. */
struct jsonw;
void jsonr_write(struct jsonw *w, const char *key, const struct json_object *v);

/* true when key is one of allowed[] (a NULL-terminated list). */
bool jsonr_key_allowed(const char *key, const char *const *allowed);

/*
 * Iterates the members of a json-c object (include <json-c/json.h> first) with the public
 * iterator API: a plain for loop, unlike json_object_object_foreach, so static analysers
 * that do not read json-c's headers can parse it. KEY and VAL are expressions to use in the
 * body: JSONR_KEY(it) and JSONR_VAL(it).
 */
/* NOLINTBEGIN(bugprone-macro-parentheses): it and end are declared names */
#define JSONR_FOREACH(obj, it, end)                                                                \
    for (struct json_object_iterator it = json_object_iter_begin(obj),                             \
                                     end = json_object_iter_end(obj);                              \
         !json_object_iter_equal(&(it), &(end)); json_object_iter_next(&(it)))
/* NOLINTEND(bugprone-macro-parentheses) */
#define JSONR_KEY(it) json_object_iter_peek_name(&(it))
#define JSONR_VAL(it) json_object_iter_peek_value(&(it))

#endif
