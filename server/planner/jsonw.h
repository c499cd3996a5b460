/*
 * jsonw.h - a bounded, streaming JSON writer for the plan result.
 *
 * The result of a million-tensor plan is hundreds of megabytes of JSON; building it as a
 * json-c DOM first would cost several times that in small allocations. jsonw appends text
 * to one growing buffer instead. Errors are sticky: after the first failure (ERR_NOMEM, or
 * ERR_LIMIT past max_bytes) every call is a no-op and jsonw_finish() reports it, so callers
 * write a whole document and check once.
 *
 * Keys are passed with each value; inside arrays pass key = NULL. Strings are escaped as
 * RFC 8259 requires (control characters as \u00XX), and the output is always UTF-8: a byte
 * that does not start a well-formed UTF-8 sequence (text.h) is written as \ufffd, U+FFFD,
 * as CSV names and URLs in log lines are bytes. The writer never emits NaN or infinities
 * (they become null).
 */
#ifndef TPUPLAN_JSONW_H
#define TPUPLAN_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

#define JSONW_MAX_DEPTH 32

/*
 * A sink takes the text in pieces as it is written: 0, or an ERR_* code that stops the
 * document (it becomes the writer's sticky error). ctx is the caller's.
 */
typedef int (*jsonw_sink_fn)(void *ctx, const char *buf, size_t n);

struct jsonw {
    char *buf; /* malloc'd; owned by the writer until jsonw_finish() hands it over */
    size_t len;
    size_t cap;
    size_t max_bytes; /* ERR_LIMIT past this many bytes of output (buffered mode) */
    size_t fast;      /* len + n < fast: n more bytes need no flush, realloc or limit
                       * check (0 before the first append and after an error) */
    int err;          /* first error (ERR_OK while none) */
    unsigned depth;
    bool first[JSONW_MAX_DEPTH]; /* no element written yet at this depth */
    jsonw_sink_fn sink;          /* NULL: buffer the whole document */
    size_t total;                /* bytes handed to the sink so far */
    void *sink_ctx;
    bool pretty;
};

void jsonw_init(struct jsonw *w, size_t max_bytes);

/*
 * Streams the document to sink in pieces of exactly JSONW_SINK_CHUNK bytes instead (the
 * last one shorter), however the text was appended: memory
 * stays bounded whatever the document's size (no max_bytes). pretty lays it out exactly as
 * json-c's JSON_C_TO_STRING_PRETTY | SPACED | NOSLASHESCAPE prints the same document (two
 * spaces per level, "key": value, \b \f \r short escapes), which `tpuplan plan` has always
 * printed; otherwise the text is the compact form jsonw_init writes.
 */
#define JSONW_SINK_CHUNK ((size_t)64 << 10)
void jsonw_init_sink(struct jsonw *w, jsonw_sink_fn sink, void *ctx, bool pretty);
void jsonw_obj_begin(struct jsonw *w, const char *key);
void jsonw_obj_end(struct jsonw *w);
void jsonw_arr_begin(struct jsonw *w, const char *key);
void jsonw_arr_end(struct jsonw *w);
void jsonw_str(struct jsonw *w, const char *key, const char *s); /* s NULL writes null */
void jsonw_strn(struct jsonw *w, const char *key, const char *s, size_t n);
void jsonw_u64(struct jsonw *w, const char *key, uint64_t v);
void jsonw_i64(struct jsonw *w, const char *key, int64_t v);
void jsonw_double(struct jsonw *w, const char *key, double v);
void jsonw_bool(struct jsonw *w, const char *key, bool v);
void jsonw_null(struct jsonw *w, const char *key);

/*
 * Ends the document. On success *out is the NUL-terminated text (malloc'd, the caller
 * frees) of *out_len bytes and ERR_OK is returned; on failure the buffer is freed and the
 * sticky error code is returned. With a sink, the rest is flushed to it, *out is NULL and
 * *out_len the document's length.
 */
ERR_MUST_CHECK int jsonw_finish(struct jsonw *w, char **out, size_t *out_len);

/* Frees the buffer without producing a document (error paths). */
void jsonw_discard(struct jsonw *w);

/*
 * A fragment: text written apart (on another thread) and spliced into a document later.
 * jsonw_fragment_init makes *f a buffered writer that continues w's document where w stands
 * now: at its depth, in its layout, after a value (f's first value gets its separator),
 * within w's max_bytes. *f shares nothing with w; release it with jsonw_discard.
 *
 * jsonw_fragment_append appends f's text to w exactly as if it had been written to w: the
 * same bytes, the same pieces to w's sink, the same limit. An error f met (the sticky
 * code) becomes w's after the text f held before it, as it would have been w's own. f must
 * be back at the depth it started at (else ERR_INTERNAL). f is then empty, ready for the
 * next fragment at the same place (its buffer kept).
 */
void jsonw_fragment_init(struct jsonw *f, const struct jsonw *w);
void jsonw_fragment_append(struct jsonw *w, struct jsonw *f);

#endif
