/*
 * planopts.c - plan options as stored in plans.options (see planopts.h): the planner's table
 * of options (planner/plan_options.h) written out and read back with json-c.
 */
#include "service/planopts.h"

#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "planner/plan_options.h"

/* An option's value as JSON: text as a string, a count as an integer, seconds and fractions
 * as numbers, a boolean as one. NULL when out of memory. */
static json_object *value_json(const struct plan_opt_value *v)
{
    switch (v->kind) {
    case PLAN_OPT_V_TEXT:
        return json_object_new_string_len(v->text, (int)v->len);
    case PLAN_OPT_V_UINT:
        return json_object_new_uint64(v->u);
    case PLAN_OPT_V_REAL:
        return json_object_new_double(v->d);
    case PLAN_OPT_V_BOOL:
        return json_object_new_boolean(v->b);
    }
    return NULL;
}

char *planopts_json(const struct plan_opts *o)
{
    json_object *j = json_object_new_object();
    struct plan_opt_value v;
    char *out = NULL;

    if (j == NULL)
        return NULL;
    /* the table's order: the text is compared when an Idempotency-Key is replayed */
    for (size_t i = 0; i < plan_opt_count(); i++) {
        const struct plan_opt *opt = plan_opt_at(i);
        json_object *jv;
        if (!(opt->surfaces & PLAN_OPT_STORED) || !plan_opt_get(o, opt, &v))
            continue;
        if ((jv = value_json(&v)) == NULL || json_object_object_add(j, opt->key, jv) != 0) {
            json_object_put(jv);
            goto out;
        }
    }
    out = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
out:
    json_object_put(j);
    return out;
}

int planopts_parse(const char *json, struct plan_opts *o, char *buf, size_t cap, struct err *e)
{
    json_object *j = json_tokener_parse(json);
    size_t used = 0;
    int rc = -1;

    memset(o, 0, sizeof *o);
    if (j == NULL)
        err_set(e, ERR_INVALID, "options", "options: not JSON");
    else if (plan_opts_set_object(o, PLAN_OPT_STORED, j, buf, cap, &used, e) == ERR_OK)
        rc = 0;
    json_object_put(j);
    return rc;
}
