/*
 * body.h - bounded request-body accumulation.
 *
 * A body buffer grows up to a limit; past it the buffer is marked `over` and stops
 * growing (the HTTP layer keeps swallowing bytes and answers 413 at the end of the
 * request, since MHD cannot queue a reply while the upload is in progress).
 *
 * In safetensors mode only the header is kept: the first 8 bytes give the header length N
 * (little-endian u64) and the buffer stops at 8 + N bytes; the tensor data that follows is
 * counted and discarded, so uploading a whole multi-GB checkpoint costs no memory.
 * The buffer (p) is owned by struct body until body_free().
 */
#ifndef TPUPLAN_BODY_H
#define TPUPLAN_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

struct body {
    char *p;
    size_t len;       /* bytes kept */
    size_t cap;       /* bytes allocated */
    uint64_t limit;   /* most bytes kept */
    uint64_t seen;    /* bytes received in total */
    uint64_t want;    /* safetensors: 8 + header length, once known; else 0 */
    bool safetensors; /* keep only the header */
    bool over;        /* the limit was exceeded: answer 413 */
    bool nomem;
};

void body_init(struct body *b, uint64_t limit, bool safetensors);

/* Appends n bytes (keeps what the mode and limit allow). 0, or -1 when over or out of memory. */
ERR_MUST_CHECK int body_append(struct body *b, const char *data, size_t n);

/* Safetensors mode: true when the whole header arrived (8 + N bytes). */
bool body_header_complete(const struct body *b);

void body_free(struct body *b);

#endif
