/*
 * planopts.c - plan options as stored in plans.options (see planopts.h).
 */
#include "service/planopts.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

char *planopts_json(const struct plan_opts *o)
{
    json_object *j = json_object_new_object();
    char *out = NULL;
    if (j == NULL)
        return NULL;
    if (o->format != PLAN_FMT_AUTO)
        json_object_object_add(j, "format", json_object_new_string(plan_format_name(o->format)));
    if (o->chip)
        json_object_object_add(j, "chip", json_object_new_string(o->chip));
    if (o->strategies)
        json_object_object_add(j, "strategies", json_object_new_string(o->strategies));
    if (o->capacity)
        json_object_object_add(j, "capacity", json_object_new_uint64(o->capacity));
    if (o->time_limit_s > 0)
        json_object_object_add(j, "time_limit_s", json_object_new_double(o->time_limit_s));
    if (o->alignment)
        json_object_object_add(j, "alignment", json_object_new_uint64(o->alignment));
    if (o->name)
        json_object_object_add(j, "name", json_object_new_string(o->name));
    if (o->budget)
        json_object_object_add(j, "budget", json_object_new_string(o->budget));
    if (o->mem_fraction > 0)
        json_object_object_add(j, "mem_fraction", json_object_new_double(o->mem_fraction));
    if (o->xla_assignment)
        json_object_object_add(
            j, "xla_assignment",
            json_object_new_string_len(o->xla_assignment, (int)o->xla_assignment_len));
    if (o->xla_report)
        json_object_object_add(j, "xla_report",
                               json_object_new_string_len(o->xla_report, (int)o->xla_report_len));
    if (o->preallocate != PLAN_PREALLOC_DEFAULT)
        json_object_object_add(j, "preallocate",
                               json_object_new_boolean(o->preallocate == PLAN_PREALLOC_ON));
    if (o->goal != PACK_GOAL_MIN) /* left out by default: stored options stay as they were */
        json_object_object_add(j, "goal", json_object_new_string(pack_goal_name(o->goal)));
    out = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
    json_object_put(j);
    return out;
}

/* Copies string member key of j into buf at *used; *dst points at the copy. */
static int opt_str(json_object *j, const char *key, const char **dst, char *buf, size_t cap,
                   size_t *used)
{
    json_object *v;
    if (!json_object_object_get_ex(j, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_string))
        return -1;
    size_t n = (size_t)json_object_get_string_len(v);
    if (n + 1 > cap - *used)
        return -1;
    memcpy(buf + *used, json_object_get_string(v), n + 1);
    *dst = buf + *used;
    *used += n + 1;
    return 0;
}

static int opt_u64(json_object *j, const char *key, uint64_t *dst)
{
    json_object *v;
    if (!json_object_object_get_ex(j, key, &v))
        return 0;
    if (!json_object_is_type(v, json_type_int))
        return -1;
    errno = 0;
    int64_t i = json_object_get_int64(v);
    if (i < 0)
        return -1;
    *dst = json_object_get_uint64(v);
    return errno ? -1 : 0;
}

int planopts_parse(const char *json, struct plan_opts *o, char *buf, size_t cap)
{
    json_object *j = json_tokener_parse(json);
    json_object *v;
    const char *fmt = NULL, *goal = NULL;
    size_t used = 0;
    int rc = -1;
    memset(o, 0, sizeof *o);
    if (j == NULL || !json_object_is_type(j, json_type_object))
        goto out;
    if (opt_str(j, "format", &fmt, buf, cap, &used) < 0 ||
        opt_str(j, "chip", &o->chip, buf, cap, &used) < 0 ||
        opt_str(j, "strategies", &o->strategies, buf, cap, &used) < 0 ||
        opt_str(j, "name", &o->name, buf, cap, &used) < 0 ||
        opt_str(j, "budget", &o->budget, buf, cap, &used) < 0 ||
        opt_str(j, "xla_assignment", &o->xla_assignment, buf, cap, &used) < 0 ||
        opt_str(j, "xla_report", &o->xla_report, buf, cap, &used) < 0 ||
        opt_str(j, "goal", &goal, buf, cap, &used) < 0 ||
        opt_u64(j, "capacity", &o->capacity) < 0 || opt_u64(j, "alignment", &o->alignment) < 0)
        goto out;
    if (json_object_object_get_ex(j, "time_limit_s", &v)) {
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
            goto out;
        o->time_limit_s = json_object_get_double(v);
    }
    if (json_object_object_get_ex(j, "mem_fraction", &v)) {
        if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
            goto out;
        o->mem_fraction = json_object_get_double(v);
    }
    if (json_object_object_get_ex(j, "preallocate", &v)) {
        if (!json_object_is_type(v, json_type_boolean))
            goto out;
        o->preallocate = json_object_get_boolean(v) ? PLAN_PREALLOC_ON : PLAN_PREALLOC_OFF;
    }
    o->xla_assignment_len = o->xla_assignment != NULL ? strlen(o->xla_assignment) : 0;
    o->xla_report_len = o->xla_report != NULL ? strlen(o->xla_report) : 0;
    if (goal != NULL && pack_goal_parse(goal, &o->goal) != 0)
        goto out;
    if (fmt != NULL) {
        /* Every format's name, however many there are: past the last one the names
         * fall back to "auto". */
        int f = PLAN_FMT_AUTO + 1;
        while (strcmp(plan_format_name((enum plan_format)f), "auto") != 0 &&
               strcmp(fmt, plan_format_name((enum plan_format)f)) != 0)
            f++;
        if (strcmp(plan_format_name((enum plan_format)f), "auto") == 0) {
            if (strcmp(fmt, "auto") != 0)
                goto out;
            f = PLAN_FMT_AUTO;
        }
        o->format = (enum plan_format)f;
    }
    rc = 0;
out:
    json_object_put(j);
    return rc;
}
