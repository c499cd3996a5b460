/*
 * problem.c - RFC 9457 problem details built with json-c.
 */
#include "service/problem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

const struct problem_type problem_types[PROBLEM_COUNT] = {
    [PROBLEM_NOT_FOUND] = {"not-found", "Not found", 404, NULL},
    [PROBLEM_METHOD_NOT_ALLOWED] = {"method-not-allowed", "Method not allowed", 405, NULL},
    [PROBLEM_SHUTTING_DOWN] = {"shutting-down", "The server is shutting down", 503, "1"},
    [PROBLEM_BODY_TOO_LARGE] = {"body-too-large", "The request body is too large", 413, NULL},
    [PROBLEM_UNSUPPORTED_MEDIA_TYPE] = {"unsupported-media-type", "Unsupported media type", 415,
                                        NULL},
    [PROBLEM_MALFORMED_MULTIPART] = {"malformed-multipart", "Malformed multipart body", 400, NULL},
    [PROBLEM_MISSING_FILE] = {"missing-file", "The form has no file", 400, NULL},
    [PROBLEM_EMPTY_BODY] = {"empty-body", "The request body is empty", 400, NULL},
    [PROBLEM_TRUNCATED_SAFETENSORS] = {"truncated-safetensors", "Truncated safetensors header", 400,
                                       NULL},
    [PROBLEM_SERVER_BUSY] = {"server-busy", "The server is busy", 503, "1"},
    [PROBLEM_OUT_OF_MEMORY] = {"out-of-memory", "Out of memory", 503, "1"},
    [PROBLEM_CLIENT_BUSY] = {"too-many-requests", "Too many concurrent requests from this client",
                             429, "1"},
    /* No fixed Retry-After: http.c sends the seconds until the client's bucket refills. */
    [PROBLEM_RATE_LIMITED] = {"rate-limited", "Too many plan submissions", 429, NULL},
    [PROBLEM_WRONG_HOST] = {"wrong-host", "The Host header names another server", 421, NULL},
    [PROBLEM_CROSS_SITE] = {"cross-site",
                            "A form body needs the TPUplan-Client header or an API key", 403, NULL},
    [PROBLEM_INVALID_PARAMETER] = {"invalid-parameter", "A request parameter is invalid", 400,
                                   NULL},
    [PROBLEM_NO_SUCH_PLAN] = {"not-found", "No such plan", 404, NULL},
    [PROBLEM_NO_SUCH_FRONTIER] = {"not-found", "No such frontier search", 404, NULL},
    [PROBLEM_UNAUTHORIZED] = {"unauthorized", "A manage token is required", 401, NULL},
    [PROBLEM_FORBIDDEN] = {"forbidden", "Wrong manage token", 403, NULL},
    [PROBLEM_KEY_REQUIRED] = {"key-required", "A valid API key is required", 401, NULL},
    [PROBLEM_KEY_REVOKED] = {"key-revoked", "The API key was revoked", 403, NULL},
    [PROBLEM_PLAN_EXPIRED] = {"expired", "The plan has expired", 410, NULL},
    [PROBLEM_IDEMPOTENCY_KEY_REUSED] = {"idempotency-key-reused",
                                        "The Idempotency-Key was used with another request", 422,
                                        NULL},
    /* Longer than the others: a restarting PostgreSQL takes seconds, not one. */
    [PROBLEM_DATABASE_UNAVAILABLE] = {"database-unavailable", "The database is unavailable", 503,
                                      "5"},
    [PROBLEM_QUEUE_FULL] = {"queue-full", "The plan queue is full", 503, "5"},
    [PROBLEM_NOT_READY] = {"not-ready", "Not ready", 503, NULL},
    [PROBLEM_NO_RESULT] = {"no-result", "The plan has no result to export", 409, NULL},
    [PROBLEM_INTERNAL] = {"internal", "Internal error", 500, NULL},
    [PROBLEM_MALFORMED_INPUT] = {"malformed-input", "The input could not be parsed", 400, NULL},
    [PROBLEM_INVALID_MODEL] = {"invalid-model", "The model description is invalid", 422, NULL},
    [PROBLEM_LIMIT_EXCEEDED] = {"limit-exceeded", "The input exceeds a configured limit", 422,
                                NULL},
    [PROBLEM_SIZE_OVERFLOW] = {"size-overflow", "A size computation overflows 64 bits", 422, NULL},
    [PROBLEM_UNKNOWN_NAME] = {"unknown-name", "Unknown chip, dtype or strategy", 422, NULL},
    [PROBLEM_INFEASIBLE] = {"infeasible", "The buffers cannot fit in the capacity", 422, NULL},
    [PROBLEM_PLANNER_TIMEOUT] = {"planner-timeout", "The planner ran out of time", 503, NULL},
    [PROBLEM_PLANNER_OUT_OF_MEMORY] = {"out-of-memory", "The planner ran out of memory", 503, NULL},
};

static void obj_add_str(struct json_object *o, const char *key, const char *val)
{
    if (val != NULL && val[0] != '\0')
        json_object_object_add(o, key, json_object_new_string(val));
}

/* Adds key: base + path (both may be NULL; nothing when path is). 0, or -1 out of memory. */
static int obj_add_path(struct json_object *o, const char *key, const char *base, const char *path)
{
    char *s;

    if (path == NULL || path[0] == '\0')
        return 0;
    if (asprintf(&s, "%s%s", base != NULL ? base : "", path) < 0)
        return -1;
    obj_add_str(o, key, s);
    free(s);
    return 0;
}

/* Adds "errors": [{"name", "detail"}, ...] for n > 0. 0, or -1 out of memory. */
static int obj_add_errors(struct json_object *o, const struct problem_param *errs, size_t n)
{
    struct json_object *a;

    if (n == 0)
        return 0;
    if ((a = json_object_new_array()) == NULL)
        return -1;
    json_object_object_add(o, "errors", a);
    for (size_t i = 0; i < n; i++) {
        struct json_object *e = json_object_new_object();
        if (e == NULL || json_object_array_add(a, e) != 0) {
            json_object_put(e);
            return -1;
        }
        json_object_object_add(e, "name", json_object_new_string(errs[i].name));
        json_object_object_add(e, "detail", json_object_new_string(errs[i].detail));
    }
    return 0;
}

char *problem_json(enum problem_id id, const char *base, const char *detail, const char *where,
                   const char *instance, size_t *len)
{
    return problem_json_errors(id, base, detail, where, instance, NULL, 0, len);
}

char *problem_json_errors(enum problem_id id, const char *base, const char *detail,
                          const char *where, const char *instance, const struct problem_param *errs,
                          size_t nerrs, size_t *len)
{
    const struct problem_type *t = &problem_types[id];
    struct json_object *o = json_object_new_object();
    char type[64];
    char *out = NULL;
    const char *txt;
    size_t n = 0;

    if (o == NULL)
        goto out;
    snprintf(type, sizeof(type), "/problems/%s", t->slug);
    if (obj_add_path(o, "type", base, type) != 0)
        goto out;
    obj_add_str(o, "title", t->title);
    json_object_object_add(o, "status", json_object_new_int(t->status));
    obj_add_str(o, "detail", detail);
    obj_add_str(o, "where", where);
    if (obj_add_path(o, "instance", base, instance) != 0 || obj_add_errors(o, errs, nerrs) != 0)
        goto out;
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

enum problem_id problem_for_err(int code)
{
    switch (code) {
    case ERR_INVALID:
        return PROBLEM_INVALID_MODEL;
    case ERR_LIMIT:
        return PROBLEM_LIMIT_EXCEEDED;
    case ERR_OVERFLOW:
        return PROBLEM_SIZE_OVERFLOW;
    case ERR_NOTFOUND:
        return PROBLEM_UNKNOWN_NAME;
    case ERR_INFEASIBLE:
        return PROBLEM_INFEASIBLE;
    case ERR_TIMEOUT:
        return PROBLEM_PLANNER_TIMEOUT;
    case ERR_NOMEM:
        return PROBLEM_PLANNER_OUT_OF_MEMORY;
    default:
        return PROBLEM_INTERNAL;
    }
}

char *problem_from_err(const struct err *e, const char *base, const char *instance, int *status,
                       size_t *len)
{
    enum problem_id id = problem_for_err(e->code);

    /* The planner reports syntax errors (JSON, CSV, safetensors framing) without a location
     * inside the model; those are 400, while errors tied to a field are 422. */
    if (e->code == ERR_INVALID && e->where[0] == '\0')
        id = PROBLEM_MALFORMED_INPUT;
    if (status != NULL)
        *status = problem_types[id].status;
    return problem_json(id, base, e->msg, e->where, instance, len);
}
