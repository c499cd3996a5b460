/*
 * jpath.h - the unit tests' reads of a JSON document by dotted path, with [i] for array
 * elements: jint(r, "kernels[0].operands[1].vmem_bytes"). A missing member fails the test
 * (cmocka's fail_msg), so an assertion never silently reads a default. Header-only, for
 * tests/unit; include after cmocka.h. Returned pointers are owned by the document.
 */
#ifndef TPUPLAN_TESTS_JPATH_H
#define TPUPLAN_TESTS_JPATH_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NULL when a member or element along the path is missing. */
static inline json_object *jget(json_object *root, const char *path)
{
    char key[128];
    json_object *cur = root;
    const char *p = path;

    while (*p != '\0' && cur != NULL) {
        size_t n = strcspn(p, ".[");
        if (n > 0) {
            snprintf(key, sizeof(key), "%.*s", (int)n, p);
            if (!json_object_object_get_ex(cur, key, &cur))
                return NULL;
            p += n;
        }
        if (*p == '[') {
            char *end;
            long i = strtol(p + 1, &end, 10);
            cur = json_object_array_get_idx(cur, (size_t)i);
            p = end + 1;
        }
        if (*p == '.')
            p++;
    }
    return cur;
}

static inline int64_t jint(json_object *root, const char *path)
{
    json_object *v = jget(root, path);
    if (v == NULL)
        fail_msg("no %s", path);
    return json_object_get_int64(v);
}

static inline const char *jstr(json_object *root, const char *path)
{
    json_object *v = jget(root, path);
    if (v == NULL || !json_object_is_type(v, json_type_string))
        fail_msg("no string %s", path);
    return json_object_get_string(v);
}

static inline bool jbool(json_object *root, const char *path)
{
    json_object *v = jget(root, path);
    if (v == NULL)
        fail_msg("no %s", path);
    return json_object_get_boolean(v);
}

#endif
