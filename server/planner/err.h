/*
 * err.h - error reporting for the planner library.
 *
 * Every planner function that can fail returns an int: 0 (ERR_OK) on success or a
 * negative ERR_* code, and fills a caller-owned struct err with a message that says
 * where the problem is.  No function keeps error state anywhere else, so the library
 * stays thread-safe: each caller (CLI, worker thread, test) owns its own struct err.
 *
 * The `where` field is a machine-readable location in the input, written like a JSON
 * path: "tensors[3].shape[1]", "line 17", "header". The `msg` field is the full human
 * sentence and always repeats the location, so it can be printed alone. The service
 * copies both into RFC 9457 problem details; the dashboard puts `msg` next to the field
 * that `where` names.
 */
#ifndef TPUPLAN_ERR_H
#define TPUPLAN_ERR_H

#include <stddef.h>

enum err_code {
    ERR_OK = 0,
    ERR_INVALID = -1,    /* malformed or semantically invalid input */
    ERR_LIMIT = -2,      /* input exceeds a configured bound (size, count, depth) */
    ERR_OVERFLOW = -3,   /* a size computation overflows 64 bits */
    ERR_NOMEM = -4,      /* allocation failed */
    ERR_NOTFOUND = -5,   /* unknown name (chip, dtype, strategy) */
    ERR_INFEASIBLE = -6, /* proven: no solution within the capacity */
    ERR_TIMEOUT = -7,    /* deadline reached before an answer */
    ERR_INTERNAL = -8,   /* a bug: an invariant did not hold */
};

#define ERR_WHERE_MAX 160
#define ERR_MSG_MAX   512

struct err {
    int code;                  /* one of enum err_code */
    char where[ERR_WHERE_MAX]; /* location in the input, "" when not tied to one */
    char msg[ERR_MSG_MAX];     /* full sentence, includes the location */
};

/*
 * On every fallible planner function: ignoring its code is a compile error under -Werror
 * (an unchecked failure would carry on with half-filled output).
 */
#define ERR_MUST_CHECK __attribute__((warn_unused_result))

/* Clears *e to ERR_OK with empty strings. */
void err_clear(struct err *e);

/*
 * Sets *e (when e is not NULL) and returns code, so callers can write
 * `return err_set(e, ERR_INVALID, "tensors[3].dtype", "tensors[3] \"w\": unknown dtype %s", d);`.
 * Both strings are truncated to their buffers; `where` may be NULL.
 */
int err_set(struct err *e, int code, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * Prefixes the existing location and message with a context, for errors raised deep
 * inside a parser: err_prefix(e, "tensors[3]", "tensors[3] \"w\": ") turns where "dims[1]"
 * into "tensors[3].dims[1]". Returns e->code.
 */
int err_prefix(struct err *e, const char *where_prefix, const char *msg_prefix);

/* Stable short name of a code ("invalid", "limit", ...), for logs and problem types. */
const char *err_code_name(int code);

#endif
