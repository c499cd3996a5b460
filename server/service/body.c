/*
 * body.c - bounded request-body accumulation.
 */
#include "service/body.h"

#include <stdlib.h>
#include <string.h>

void body_init(struct body *b, uint64_t limit, bool safetensors)
{
    memset(b, 0, sizeof(*b));
    b->limit = limit;
    b->safetensors = safetensors;
}

static int body_keep(struct body *b, const char *data, size_t n)
{
    size_t need;

    if (__builtin_add_overflow(b->len, n, &need) || need > b->limit) {
        b->over = true;
        return -1;
    }
    if (need + 1 > b->cap) {
        size_t ncap = b->cap < 4096 ? 4096 : b->cap;
        while (ncap < need + 1)
            ncap = ncap > SIZE_MAX / 2 ? need + 1 : ncap * 2;
        if (ncap > b->limit + 1)
            ncap = (size_t)b->limit + 1;
        char *np = realloc(b->p, ncap);
        if (np == NULL) {
            b->nomem = true;
            return -1;
        }
        b->p = np;
        b->cap = ncap;
    }
    memcpy(b->p + b->len, data, n);
    b->len = need;
    b->p[b->len] = '\0'; /* parsers may treat the body as a C string */
    return 0;
}

int body_append(struct body *b, const char *data, size_t n)
{
    if (b->over || b->nomem)
        return -1;
    b->seen += n;
    if (!b->safetensors)
        return body_keep(b, data, n);
    if (b->len < 8) {
        size_t take = 8 - b->len < n ? 8 - b->len : n;
        if (body_keep(b, data, take) != 0)
            return -1;
        data += take;
        n -= take;
        if (b->len == 8) {
            uint64_t hl = 0;
            int i;
            for (i = 7; i >= 0; i--)
                hl = hl << 8 | (unsigned char)b->p[i];
            if (hl > b->limit || 8 + hl > b->limit) {
                b->over = true;
                return -1;
            }
            b->want = 8 + hl;
        }
    }
    if (b->want > 0 && b->len < b->want && n > 0) {
        size_t take = b->want - b->len < n ? (size_t)(b->want - b->len) : n;
        return body_keep(b, data, take);
    }
    return 0;
}

bool body_header_complete(const struct body *b)
{
    return b->want > 0 && b->len == b->want;
}

void body_free(struct body *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
