/*
 * model_json_int.h - what the native JSON importer's files share, private to import/.
 */
#ifndef TPUPLAN_MODEL_JSON_INT_H
#define TPUPLAN_MODEL_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/dtype.h"
#include "planner/model.h"
#include "planner/shape.h"

/*
 * model_json_fast.c: a tensor element of the plain form (model_json_fast.c's comment: keys
 * name, dtype, shape, kind, live, description; printable ASCII strings without escapes;
 * small unsigned integers) read from s[*pos] (after whitespace) through the ',' or ']'
 * after it, with only values parse_tensor accepts. true: *t filled (t->name points into s,
 * not NUL-terminated), *last set when the element ended the array, *pos past it. false:
 * nothing consumed; the caller parses the element with json-c.
 */
struct model_fast_tensor {
    const char *name;
    size_t name_len;
    enum dtype dtype;
    enum tensor_kind kind; /* TENSOR_TEMP when not given */
    uint8_t rank;
    int64_t dims[SHAPE_MAX_RANK];
    bool live_given;
    int64_t live_start, live_end;
};
bool model_fast_tensor(const char *s, size_t len, size_t *pos, struct model_fast_tensor *t,
                       bool *last);

#endif
