/*
 * jsonr.c - json-c reading helpers (jsonr.h): the strict bounded load and typed getters.
 */
#include "planner/base/jsonr.h"

#include <json-c/json.h>
#include <limits.h>
#include <string.h>

#include "planner/jsonw.h"

void jsonr_write(struct jsonw *w, const char *key, const json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_boolean:
        jsonw_bool(w, key, json_object_get_boolean(v));
        return;
    case json_type_double:
        jsonw_double(w, key, json_object_get_double(v));
        return;
    case json_type_int:
        jsonw_i64(w, key, json_object_get_int64(v));
        return;
    case json_type_string:
        jsonw_strn(w, key, json_object_get_string((json_object *)v),
                   (size_t)json_object_get_string_len(v));
        return;
    case json_type_object:
        if (w->depth + 1 >= JSONW_MAX_DEPTH)
            break;
        jsonw_obj_begin(w, key);
        JSONR_FOREACH((json_object *)v, it, end)
        jsonr_write(w, JSONR_KEY(it), JSONR_VAL(it));
        jsonw_obj_end(w);
        return;
    case json_type_array:
        if (w->depth + 1 >= JSONW_MAX_DEPTH)
            break;
        jsonw_arr_begin(w, key);
        for (size_t i = 0; i < json_object_array_length(v); i++)
            jsonr_write(w, NULL, json_object_array_get_idx(v, i));
        jsonw_arr_end(w);
        return;
    default:
        break;
    }
    jsonw_null(w, key);
}

const char *jsonr_type_name(const json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "a boolean";
    case json_type_double:
        return "a non-integer number";
    case json_type_int:
        return "an integer";
    case json_type_object:
        return "an object";
    case json_type_array:
        return "an array";
    case json_type_string:
        return "a string";
    }
    return "unknown";
}

int jsonr_int(const json_object *v, int64_t *out)
{
    if (!json_object_is_type(v, json_type_int))
        return 1;
    *out = json_object_get_int64(v);
    return (*out == INT64_MAX || *out == INT64_MIN) ? 2 : 0;
}

int jsonr_str(const json_object *v, size_t max, const char **s, size_t *n)
{
    if (!json_object_is_type(v, json_type_string))
        return 1;
    *s = json_object_get_string((json_object *)v);
    *n = (size_t)json_object_get_string_len(v);
    return (*n == 0 || *n > max || strlen(*s) != *n) ? 2 : 0;
}

bool jsonr_key_allowed(const char *key, const char *const *allowed)
{
    for (; *allowed != NULL; allowed++)
        if (strcmp(key, *allowed) == 0)
            return true;
    return false;
}

/* Line and column (1-based) of byte offset off, for JSON syntax errors. */
static void line_col(const char *s, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off; i++) {
        if (s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

int jsonr_load(const char *input, size_t len, unsigned max_depth, const char *what,
               json_object **root, struct err *e)
{
    struct json_tokener *tok = NULL;
    enum json_tokener_error jerr;
    size_t line, col;
    int rc = ERR_OK;

    *root = NULL;
    if (len > INT_MAX)
        return err_set(e, ERR_LIMIT, NULL, "%s: %zu bytes is more than the JSON parser accepts",
                       what, len);
    if (max_depth < 2 || max_depth > INT_MAX)
        return err_set(e, ERR_INVALID, NULL, "%s: JSON depth limit %u is out of range", what,
                       max_depth);
    tok = json_tokener_new_ex((int)max_depth);
    if (tok == NULL)
        return err_set(e, ERR_NOMEM, NULL, "%s: out of memory", what);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    *root = json_tokener_parse_ex(tok, input, (int)len);
    jerr = json_tokener_get_error(tok);
    if (jerr == json_tokener_success && json_tokener_get_parse_end(tok) < len) {
        /* json-c stops at the first NUL; anything left is an error. */
        line_col(input, json_tokener_get_parse_end(tok), &line, &col);
        rc = err_set(e, ERR_INVALID, "",
                     "%s: unexpected data after the JSON value at line %zu "
                     "column %zu",
                     what, line, col);
        goto out;
    }
    if (jerr == json_tokener_continue) {
        rc = err_set(e, ERR_INVALID, "", "%s: the JSON text ends early (truncated input?)", what);
        goto out;
    }
    if (jerr == json_tokener_error_depth) {
        rc = err_set(e, ERR_LIMIT, "", "%s: JSON nesting is deeper than the limit of %u levels",
                     what, max_depth);
        goto out;
    }
    if (jerr != json_tokener_success) {
        line_col(input, json_tokener_get_parse_end(tok), &line, &col);
        rc = err_set(e, ERR_INVALID, "", "%s: invalid JSON at line %zu column %zu: %s", what, line,
                     col, json_tokener_error_desc(jerr));
        goto out;
    }
out:
    if (rc != ERR_OK && *root != NULL) {
        json_object_put(*root);
        *root = NULL;
    }
    json_tokener_free(tok);
    return rc;
}
