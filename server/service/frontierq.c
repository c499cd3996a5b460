/*
 * frontierq.c - a frontier search's query read from and written as JSON (frontierq.h).
 */
#include "service/frontierq.h"

#include "planner/recipe.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* A string member of at most max bytes into buf. */
static int str_member(json_object *v, const char *where, char *buf, size_t max, struct err *e)
{
    size_t n;

    if (!json_object_is_type(v, json_type_string))
        return err_set(e, ERR_INVALID, where, "%s: must be a string", where);
    n = (size_t)json_object_get_string_len(v);
    if (n == 0 || n > max || strlen(json_object_get_string(v)) != n)
        return err_set(e, ERR_INVALID, where, "%s: must be 1 to %zu bytes of text", where, max);
    memcpy(buf, json_object_get_string(v), n + 1);
    return ERR_OK;
}

/* min, max or step: a whole number from 1. */
static int int_member(json_object *v, const char *where, int64_t *out, struct err *e)
{
    if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1)
        return err_set(e, ERR_INVALID, where, "%s: must be a whole number from 1", where);
    *out = json_object_get_int64(v);
    return ERR_OK;
}

/* {"field": PATH, "values": [V, ...]}, or null. */
static int sweep_member(json_object *v, struct frontierq *out, struct err *e)
{
    json_object *field = NULL, *values = NULL;
    char where[32];
    size_t n;
    int rc;

    if (json_object_is_type(v, json_type_null))
        return ERR_OK;
    if (!json_object_is_type(v, json_type_object))
        return err_set(e, ERR_INVALID, "sweep",
                       "sweep: must be {\"field\": PATH, \"values\": [...]} or null");
    json_object_object_foreach(v, key, val)
    {
        (void)val;
        if (strcmp(key, "field") != 0 && strcmp(key, "values") != 0)
            return err_set(e, ERR_INVALID, "sweep",
                           "sweep: \"%.64s\" is not a member: field, values", key);
    }
    if (!json_object_object_get_ex(v, "field", &field) ||
        !json_object_object_get_ex(v, "values", &values))
        return err_set(e, ERR_INVALID, "sweep", "sweep: needs both field and values");
    if ((rc = str_member(field, "sweep.field", out->sweep, FRONTIERQ_FIELD_MAX, e)) != ERR_OK)
        return rc;
    if (!json_object_is_type(values, json_type_array) ||
        (n = json_object_array_length(values)) < 1 || n > FRONTIER_MAX_SWEEP)
        return err_set(e, ERR_INVALID, "sweep.values",
                       "sweep.values: must be an array of 1 to %d strings", FRONTIER_MAX_SWEEP);
    for (size_t i = 0; i < n; i++) {
        snprintf(where, sizeof(where), "sweep.values[%zu]", i);
        if ((rc = str_member(json_object_array_get_idx(values, i), where, out->values[i],
                             FRONTIERQ_VALUE_MAX, e)) != ERR_OK)
            return rc;
        out->value_ptrs[i] = out->values[i];
    }
    out->q.sweep = out->sweep;
    out->q.sweep_values = out->value_ptrs;
    out->q.n_sweep = n;
    return ERR_OK;
}

/* The members of the query object, each read by its own rule. */
static int members(json_object *d, struct frontierq *out, struct err *e)
{
    int rc = ERR_OK;
    bool has_maximize = false;

    json_object_object_foreach(d, key, val)
    {
        if (strcmp(key, "maximize") == 0) {
            rc = str_member(val, "maximize", out->maximize, FRONTIERQ_FIELD_MAX, e);
            has_maximize = true;
        } else if (strcmp(key, "min") == 0) {
            rc = int_member(val, "min", &out->q.lo, e);
        } else if (strcmp(key, "max") == 0) {
            rc = int_member(val, "max", &out->q.hi, e);
        } else if (strcmp(key, "step") == 0) {
            rc = int_member(val, "step", &out->q.step, e);
        } else if (strcmp(key, "sweep") == 0) {
            rc = sweep_member(val, out, e);
        } else {
            char where[72];
            snprintf(where, sizeof(where), "%.64s", key);
            rc = err_set(e, ERR_INVALID, where,
                         "%s: not a member of a frontier query: maximize, min, max, step, sweep",
                         where);
        }
        if (rc != ERR_OK)
            return rc;
    }
    if (!has_maximize)
        return err_set(e, ERR_INVALID, "maximize",
                       "maximize: required (batch, seq, microbatches, context, sequences or a "
                       "recipe path)");
    out->q.maximize = out->maximize;
    return ERR_OK;
}

int frontierq_parse(const char *json, size_t len, struct frontierq *out, struct err *e)
{
    struct json_tokener *tok = json_tokener_new();
    struct frontier_result checked;
    json_object *d = NULL;
    int rc;

    memset(out, 0, sizeof(*out));
    if (tok == NULL)
        return err_set(e, ERR_NOMEM, "", "out of memory reading the query");
    d = json_tokener_parse_ex(tok, json, (int)len);
    if (d == NULL || json_tokener_get_parse_end(tok) != len) {
        rc = err_set(e, ERR_INVALID, "", "the query is not one JSON object");
        goto out;
    }
    if (!json_object_is_type(d, json_type_object)) {
        rc = err_set(e, ERR_INVALID, "", "the query must be a JSON object ({\"maximize\": ...})");
        goto out;
    }
    if ((rc = members(d, out, e)) != ERR_OK)
        goto out;
    if ((rc = frontier_check(&out->q, &checked, e)) != ERR_OK)
        goto out;
    /* the range as it will be searched: what the normalised form says */
    snprintf(out->maximize, sizeof(out->maximize), "%s", checked.path);
    out->q.lo = checked.lo;
    out->q.hi = checked.hi;
    out->q.step = checked.step;
out:
    json_object_put(d);
    json_tokener_free(tok);
    return rc;
}

int frontierq_check_recipe(const struct frontierq *q, const char *recipe, size_t len, struct err *e)
{
    struct recipe *r = NULL;
    struct err why;
    char *text = NULL, buf[256];
    size_t text_len = 0;
    int64_t v;
    int rc = ERR_OK;

    if (recipe_compose(recipe, len, NULL, 0, &text, &text_len, &why) != ERR_OK ||
        recipe_parse(text, text_len, &r, &why) != ERR_OK)
        goto out;
    if (recipe_get_int(r, q->maximize, &v, &why) != ERR_OK)
        rc = err_set(e, ERR_INVALID, "maximize", "maximize: %s", why.msg);
    else if (q->q.n_sweep > 0 && (rc = recipe_get(r, q->sweep, buf, sizeof(buf), &why)) != ERR_OK)
        /* ERR_LIMIT: there is a value, longer than buf */
        rc = rc == ERR_LIMIT ? ERR_OK
                             : err_set(e, ERR_INVALID, "sweep.field", "sweep.field: %s", why.msg);
out:
    recipe_free(r);
    free(text);
    return rc;
}

char *frontierq_json(const struct frontierq *q)
{
    json_object *o = json_object_new_object(), *sw = NULL;
    const char *t;
    char *text = NULL;

    json_object_object_add(o, "maximize", json_object_new_string(q->maximize));
    json_object_object_add(o, "min", json_object_new_int64(q->q.lo));
    json_object_object_add(o, "max", json_object_new_int64(q->q.hi));
    json_object_object_add(o, "step", json_object_new_int64(q->q.step));
    if (q->q.n_sweep > 0) {
        json_object *vals = json_object_new_array();
        sw = json_object_new_object();
        json_object_object_add(sw, "field", json_object_new_string(q->sweep));
        for (size_t i = 0; i < q->q.n_sweep; i++)
            json_object_array_add(vals, json_object_new_string(q->values[i]));
        json_object_object_add(sw, "values", vals);
    }
    json_object_object_add(o, "sweep", sw);
    t = json_object_to_json_string_ext(o, JSON_FLAGS);
    if (t != NULL)
        text = strdup(t);
    json_object_put(o);
    return text;
}
