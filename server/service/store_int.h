/*
 * store_int.h - internals shared by the store*.c modules (not part of the public contract).
 *
 * store.c owns struct store (one PGconn), the table of prepared statements and the one way
 * to run them (store_run, store_run_plain: classify failures, reconnect within the backoff,
 * retry once when nothing was sent yet); store_migrate.c, store_plans.c, store_keys.c,
 * store_jobs.c and store_frontiers.c build their calls on those. A struct store is used by one
 * thread at a time (store.h).
 */
#ifndef TPUPLAN_STORE_INT_H
#define TPUPLAN_STORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "service/store.h"

/* The prepared statements (store.c's store_stmts[] holds their SQL). */
enum store_stmt {
    STORE_STMT_KEY_INSERT,
    STORE_STMT_KEY_LOOKUP,
    STORE_STMT_PLAN_INSERT,
    STORE_STMT_PLAN_GET,
    STORE_STMT_PLAN_LIST,
    STORE_STMT_PLAN_DELETE,
    STORE_STMT_PLAN_OWNER,
    STORE_STMT_JOB_COUNTS,
    STORE_STMT_JOBS_QUEUED,
    STORE_STMT_JOB_CLAIM,
    STORE_STMT_JOB_INPUT,
    STORE_STMT_PLAN_FORMAT,
    STORE_STMT_PLAN_TENSORS,
    STORE_STMT_JOB_RENEW,
    STORE_STMT_JOB_FINISH,
    STORE_STMT_JOB_RELEASE,
    STORE_STMT_JOB_REAP,
    STORE_STMT_APIKEY_INSERT,
    STORE_STMT_APIKEY_FIND,
    STORE_STMT_APIKEY_LIST,
    STORE_STMT_APIKEY_REVOKE,
    STORE_STMT_PLAN_GONE,
    STORE_STMT_PLAN_EXPIRE,
    STORE_STMT_TOMBSTONE_PURGE,
    STORE_STMT_FRONTIER_INSERT,
    STORE_STMT_FRONTIER_GET,
    STORE_STMT_FRONTIER_LIST,
    STORE_STMT_FRONTIER_CLAIM,
    STORE_STMT_FRONTIER_FINISH,
    STORE_STMT_PLAN_RECIPE,
    STORE_STMT_COUNT
};

struct store_stmt_def {
    const char *name; /* server-side statement name */
    const char *sql;
};

extern const struct store_stmt_def store_stmts[STORE_STMT_COUNT];

struct store {
    PGconn *conn;
    char *conninfo;     /* store_open's, for store_shed */
    uint64_t exchanged; /* bytes sent and read on conn (store_run), for store_shed */
    bool prepared[STORE_STMT_COUNT];
    bool listening;
    unsigned long connections; /* reconnects so far (store_connections) */
    unsigned backoff_ms;
    int64_t retry_at_ms; /* no reconnect attempt before this (monotonic) */
};

/* Re-establishes a dead connection, at most once per backoff interval: STORE_OK or
 * STORE_UNAVAILABLE. Re-issues LISTEN when the store was listening. */
ERR_MUST_CHECK int store_reconnect(struct store *s);

/* Maps a failed result (r may be NULL) to a store code: STORE_UNAVAILABLE for a lost
 * connection or a server shutting down or starting up, STORE_NOTFOUND for a foreign key
 * violation (a row it names was deleted meanwhile), else STORE_ERROR (the only one logged). */
ERR_MUST_CHECK int store_classify(struct store *s, const PGresult *r);

/*
 * Runs prepared statement id with n text parameters (binary where fmts says so; lens and
 * fmts may be NULL) and returns the result (caller PQclear()s it) when its status is
 * PGRES_TUPLES_OK or PGRES_COMMAND_OK, else NULL with *rc set (the error logged unless the
 * database is unavailable). first: nothing has been sent in this transaction yet, so a
 * dead connection may be reset and the statement retried once.
 */
PGresult *store_run(struct store *s, enum store_stmt id, int n, const char *const *vals,
                    const int *lens, const int *fmts, int result_fmt, bool first, int *rc);

/* store_run() for transaction control and other constant SQL without parameters. */
ERR_MUST_CHECK int store_run_plain(struct store *s, const char *sql, bool first);

/* Rolls back the open transaction, if any, on a live connection. */
void store_rollback(struct store *s);

/* Column col of row: a malloc'd copy (NULL for SQL NULL or out of memory); or as an
 * unsigned integer (0 for NULL). */
char *store_col_str(const PGresult *r, int row, int col);
uint64_t store_col_u64(const PGresult *r, int row, int col);
/* Column col of row, lower-case hex text of n bytes (encode(..., 'hex')), into out: 0, or -1
 * when it is NULL or not that. */
ERR_MUST_CHECK int store_col_hex(const PGresult *r, int row, int col, unsigned char *out, size_t n);
/* Row 0's columns 0 and 1, read in binary: the plan's input (raw bytes, NUL added) and its
 * options JSON, as malloc'd copies into *input and *options_json, which the caller frees
 * also on failure (-1: out of memory). */
ERR_MUST_CHECK int store_input_from_row(const PGresult *r, char **input, size_t *input_len,
                                        char **options_json);

/* Decimal text of v for a statement parameter. */
void store_fmt_u64(char *buf, size_t cap, uint64_t v);

/* True when JSON text contains the escape \u0000, which jsonb refuses. */
bool store_json_has_nul(const char *j);

/* Row 0 of a plan_get-shaped result (also job_finish's RETURNING) into *out: STORE_OK, or
 * STORE_ERROR with *out freed (store_plans.c). With keep, the result column is not copied:
 * out->result_json points into r and out->res takes r (store_plan_free clears it; the
 * caller then must not), also on failure. */
ERR_MUST_CHECK int store_plan_from_row(PGresult *r, bool keep, struct store_plan *out);

#endif
