/*
 * model_json_fast.c - the usual tensor element of a model description read straight from the
 * text (model_build.h). A million-tensor model spends most of its parse in json-c building,
 * querying and freeing one small object per element; the elements a generator or a
 * framework writes are almost all of one plain form, which this reader takes in one pass.
 *
 * It accepts a strict subset of JSON whose meaning cannot differ from json-c's: whitespace,
 * an object whose keys are name, dtype, shape, kind, live, description (each once), strings
 * of printable ASCII without escapes, unsigned integers of at most 18 digits without a
 * leading zero, fraction or exponent, and only values parse_tensor accepts. Everything
 * else, including every error, is left to json-c and parse_tensor, so the messages stay
 * theirs.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "planner/dtype.h"
#include "planner/model.h"
#include "planner/import/model_json_int.h"
#include "planner/shape.h"

#define FAST_MAX_DIGITS 18 /* below 10^18 < 2^63 - 1: no overflow, never json-c's clamp */

/* JSON's whitespace (RFC 8259: space, tab, line feed, carriage return). */
static size_t fast_ws(const char *s, size_t len, size_t p)
{
    while (p < len && (s[p] == ' ' || s[p] == '\n' || s[p] == '\t' || s[p] == '\r'))
        p++;
    return p;
}

/* A string at s[*p] == '"' of printable ASCII without escapes: its bytes [*b, *b + *n)
 * and *p past the closing quote; false otherwise. */
static bool fast_str(const char *s, size_t len, size_t *p, size_t *b, size_t *n)
{
    size_t q = *p + 1;

    if (*p >= len || s[*p] != '"')
        return false;
    while (q < len && (unsigned char)s[q] >= 0x20 && (unsigned char)s[q] < 0x7f && s[q] != '"' &&
           s[q] != '\\')
        q++;
    if (q >= len || s[q] != '"')
        return false;
    *b = *p + 1;
    *n = q - *b;
    *p = q + 1;
    return true;
}

/* An unsigned integer at s[*p] (see the file comment); *p past it. */
static bool fast_int(const char *s, size_t len, size_t *p, int64_t *v)
{
    size_t q = *p;
    int64_t x = 0;

    while (q < len && s[q] >= '0' && s[q] <= '9' && q - *p < FAST_MAX_DIGITS)
        x = x * 10 + (s[q++] - '0');
    if (q == *p || (s[*p] == '0' && q - *p > 1))
        return false;
    if (q < len && ((s[q] >= '0' && s[q] <= '9') || s[q] == '.' || s[q] == 'e' || s[q] == 'E'))
        return false; /* a 19th digit, a fraction or an exponent */
    *p = q;
    *v = x;
    return true;
}

/* An array of at most max integers at s[*p] == '['; *n of them, *p past the ']'. */
static bool fast_ints(const char *s, size_t len, size_t *p, int64_t *v, size_t max, size_t *n)
{
    size_t q = fast_ws(s, len, *p + 1);

    *n = 0;
    if (*p >= len || s[*p] != '[')
        return false;
    if (q < len && s[q] == ']') {
        *p = q + 1;
        return true;
    }
    for (;;) {
        if (*n == max || !fast_int(s, len, &q, &v[*n]))
            return false;
        (*n)++;
        q = fast_ws(s, len, q);
        if (q < len && s[q] == ']') {
            *p = q + 1;
            return true;
        }
        if (q >= len || s[q] != ',')
            return false;
        q = fast_ws(s, len, q + 1);
    }
}

enum { K_NAME, K_DTYPE, K_SHAPE, K_KIND, K_LIVE, K_DESCRIPTION, K_COUNT };

static int fast_key(const char *k, size_t n)
{
    static const char *const keys[K_COUNT] = {"name", "dtype", "shape",
                                              "kind", "live",  "description"};

    for (int i = 0; i < K_COUNT; i++)
        if (strlen(keys[i]) == n && memcmp(k, keys[i], n) == 0)
            return i;
    return -1;
}

/* The value of key k at s[*p] into *t; false when it is not of the plain form or
 * parse_tensor would refuse it. */
static bool fast_value(const char *s, size_t len, size_t *p, int k, struct model_fast_tensor *t)
{
    int64_t v[SHAPE_MAX_RANK];
    char kind[33];
    size_t b, n;

    switch (k) {
    case K_SHAPE:
        if (!fast_ints(s, len, p, v, SHAPE_MAX_RANK, &n))
            return false;
        t->rank = (uint8_t)n;
        memcpy(t->dims, v, n * sizeof(v[0]));
        return true;
    case K_LIVE:
        if (!fast_ints(s, len, p, v, 2, &n) || n != 2 || v[0] > MODEL_MAX_STEP ||
            v[1] > MODEL_MAX_STEP || v[0] >= v[1])
            return false;
        t->live_given = true;
        t->live_start = v[0];
        t->live_end = v[1];
        return true;
    default:
        break;
    }
    if (!fast_str(s, len, p, &b, &n))
        return false;
    switch (k) {
    case K_NAME:
        t->name = s + b;
        t->name_len = n;
        return n >= 1 && n <= MODEL_MAX_NAME;
    case K_DTYPE:
        t->dtype = n >= 1 && n <= 32 ? dtype_parse_alias(s + b, n) : DT_INVALID;
        return t->dtype != DT_INVALID;
    case K_KIND:
        if (n < 1 || n > 32)
            return false;
        memcpy(kind, s + b, n);
        kind[n] = '\0';
        t->kind = tensor_kind_parse(kind);
        return t->kind != TENSOR_KIND_COUNT;
    default: /* description: any string, ignored */
        return true;
    }
}

bool model_fast_tensor(const char *s, size_t len, size_t *pos, struct model_fast_tensor *t,
                       bool *last)
{
    unsigned seen = 0;
    size_t p = fast_ws(s, len, *pos);

    memset(t, 0, sizeof(*t));
    t->kind = TENSOR_TEMP;
    if (p >= len || s[p] != '{')
        return false;
    p = fast_ws(s, len, p + 1);
    for (;;) {
        size_t b, n;
        int k;
        if (!fast_str(s, len, &p, &b, &n) || (k = fast_key(s + b, n)) < 0 || (seen >> k) & 1)
            return false;
        seen |= 1u << k;
        p = fast_ws(s, len, p);
        if (p >= len || s[p] != ':')
            return false;
        p = fast_ws(s, len, p + 1);
        if (!fast_value(s, len, &p, k, t))
            return false;
        p = fast_ws(s, len, p);
        if (p < len && s[p] == ',') {
            p = fast_ws(s, len, p + 1);
            continue;
        }
        if (p < len && s[p] == '}')
            break;
        return false;
    }
    /* name, shape and dtype are required (parse_tensor reports them missing) */
    if (!((seen >> K_NAME) & (seen >> K_SHAPE) & (seen >> K_DTYPE) & 1))
        return false;
    p = fast_ws(s, len, p + 1);
    if (p >= len || (s[p] != ',' && s[p] != ']'))
        return false;
    *last = s[p] == ']';
    *pos = p + 1;
    return true;
}
