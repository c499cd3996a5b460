/*
 * problem.c - RFC 9457 problem details built with json-c.
 */
#include "service/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

static void obj_add_str(struct json_object *o, const char *key, const char *val)
{
    if (val != NULL && val[0] != '\0')
        json_object_object_add(o, key, json_object_new_string(val));
}

char *problem_json(int status, const char *slug, const char *title, const char *detail,
                   const char *where, const char *instance, size_t *len)
{
    struct json_object *o = json_object_new_object();
    char type[96];
    char *out = NULL;
    const char *txt;
    size_t n = 0;

    if (o == NULL)
        goto out;
    snprintf(type, sizeof(type), "/problems/%s", slug != NULL ? slug : "error");
    obj_add_str(o, "type", type);
    obj_add_str(o, "title", title != NULL ? title : "Error");
    json_object_object_add(o, "status", json_object_new_int(status));
    obj_add_str(o, "detail", detail);
    obj_add_str(o, "where", where);
    obj_add_str(o, "instance", instance);
    txt = json_object_to_json_string_length(
        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    if (txt == NULL)
        goto out;
    out = malloc(n + 1);
    if (out == NULL)
        goto out;
    memcpy(out, txt, n + 1);
    if (len != NULL)
        *len = n;
out:
    json_object_put(o);
    return out;
}

void problem_for_err(int code, int *status, const char **slug, const char **title)
{
    int st = 422;
    const char *sl = "invalid-model";
    const char *ti = "The model description is invalid";

    switch (code) {
    case ERR_INVALID:
        break;
    case ERR_LIMIT:
        sl = "limit-exceeded";
        ti = "The input exceeds a configured limit";
        break;
    case ERR_OVERFLOW:
        sl = "size-overflow";
        ti = "A size computation overflows 64 bits";
        break;
    case ERR_NOTFOUND:
        sl = "unknown-name";
        ti = "Unknown chip, dtype or strategy";
        break;
    case ERR_INFEASIBLE:
        sl = "infeasible";
        ti = "The buffers cannot fit in the capacity";
        break;
    case ERR_TIMEOUT:
        st = 503;
        sl = "planner-timeout";
        ti = "The planner ran out of time";
        break;
    case ERR_NOMEM:
        st = 503;
        sl = "out-of-memory";
        ti = "The planner ran out of memory";
        break;
    default:
        st = 500;
        sl = "internal";
        ti = "Internal error";
        break;
    }
    if (status != NULL)
        *status = st;
    if (slug != NULL)
        *slug = sl;
    if (title != NULL)
        *title = ti;
}

char *problem_from_err(const struct err *e, const char *instance, int *status, size_t *len)
{
    int st;
    const char *slug, *title;

    problem_for_err(e->code, &st, &slug, &title);
    /* The planner reports syntax errors (JSON, CSV, safetensors framing) without a location
     * inside the model; those are 400, while errors tied to a field are 422. */
    if (e->code == ERR_INVALID && e->where[0] == '\0') {
        st = 400;
        slug = "malformed-input";
        title = "The input could not be parsed";
    }
    if (status != NULL)
        *status = st;
    return problem_json(st, slug, title, e->msg, e->where, instance, len);
}
