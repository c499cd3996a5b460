/*
 * jsonw_pieces.h - a sink for the JSON writer's tests (test_jsonw.c, test_jsonw_blocks.c):
 * it puts the pieces the writer hands over back together, counts them, notes the largest
 * and the ones shorter than a chunk that are not the last, and can fail at a given call.
 * Header-only, for tests/unit; include after cmocka.h. The caller frees buf.
 */
#ifndef TPUPLAN_TESTS_JSONW_PIECES_H
#define TPUPLAN_TESTS_JSONW_PIECES_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "planner/jsonw.h"

struct pieces {
    char *buf;                         /* the pieces so far, NUL-terminated (malloc'd) */
    size_t len, n, max_piece, fail_at; /* fail_at: the call that fails (0: none) */
    size_t last_piece, uneven;         /* uneven: pieces shorter than a chunk, not last */
};

/* The jsonw sink (ctx a struct pieces): ERR_LIMIT at call fail_at, and after. */
static inline int collect(void *ctx, const char *buf, size_t n)
{
    struct pieces *p = ctx;

    if (p->n > 0 && p->last_piece != JSONW_SINK_CHUNK)
        p->uneven++;
    p->last_piece = n;
    if (p->fail_at != 0 && ++p->n >= p->fail_at)
        return ERR_LIMIT;
    if (p->fail_at == 0)
        p->n++;
    p->buf = realloc(p->buf, p->len + n + 1);
    assert_non_null(p->buf);
    memcpy(p->buf + p->len, buf, n);
    p->len += n;
    p->buf[p->len] = '\0';
    if (n > p->max_piece)
        p->max_piece = n;
    return ERR_OK;
}

#endif
