/*
 * store.h - plans, jobs and idempotency keys in PostgreSQL (libpq).
 *
 * One struct store wraps one PGconn and its prepared statements; it is used by exactly one
 * thread at a time (each request-executor and planner worker thread owns one). Every call
 * that fails because the database is unreachable returns STORE_UNAVAILABLE after trying to
 * reconnect once (PQreset, then re-prepare every statement); the HTTP layer maps that to
 * 503 with Retry-After. Writes are single transactions: nothing is half-written.
 */
#ifndef TPUPLAN_STORE_H
#define TPUPLAN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/plan.h"

enum store_rc {
    STORE_OK = 0,
    STORE_NOTFOUND = -1,
    STORE_CONFLICT = -2,    /* idempotency key reused with another body (HTTP 422) */
    STORE_FORBIDDEN = -3,   /* wrong manage token */
    STORE_UNAVAILABLE = -4, /* database down or unreachable (HTTP 503) */
    STORE_ERROR = -5,       /* anything else (HTTP 500); message logged */
};

struct store;

/* Opens a connection (conninfo: a libpq URI or key=value string). NULL on failure with a
 * message in errbuf. The store is owned by the caller: store_close() it. */
struct store *store_open(const char *conninfo, char *errbuf, size_t cap);
void store_close(struct store *s);

/* Applies migrations/NNNN_*.sql from dir in order, each in one transaction, under
 * pg_advisory_lock, recording them in schema_migrations. */
int store_migrate(struct store *s, const char *dir, char *errbuf, size_t cap);

/* 1 when the database answers and every migration in dir is applied, else 0. */
int store_ready(struct store *s, const char *dir);

/* A new plan: the validated input and its options. Strings are borrowed. */
struct store_new_plan {
    const char *name;
    const char *chip;
    const char *source_format; /* plan_format_name() */
    const char *options_json;  /* the plan_opts as a JSON object */
    const char *input;         /* raw input bytes (may contain NULs: stored as bytea) */
    size_t input_len;
    const char *idempotency_key;        /* NULL when none */
    const char *body_sha256_hex;        /* hash of input+options, for idempotency comparison */
    const struct plan_summary *summary; /* from plan_validate */
};

/* Ids are 22 URL-safe base64 characters of 128 random bits (getrandom); manage tokens are
 * 43 characters of 256 random bits, stored only as a SHA-256 hash. */
#define STORE_ID_LEN    22
#define STORE_TOKEN_LEN 43

struct store_created {
    char id[STORE_ID_LEN + 1];
    char manage_token[STORE_TOKEN_LEN + 1]; /* "" when replayed by an idempotency key */
    bool replayed;                          /* the key matched an existing plan */
};

/* Inserts plan + job (+ idempotency key) in one transaction and NOTIFYs the workers. */
int store_plan_create(struct store *s, const struct store_new_plan *np, struct store_created *out);

/* One plan as the API returns it. Strings are malloc'd, owned by the struct until
 * store_plan_free(). */
struct store_plan {
    char id[STORE_ID_LEN + 1];
    char *name;
    char *chip;
    char *source_format;
    char *status;      /* "queued" "running" "done" "failed" */
    char *error_json;  /* problem details object when failed, else NULL */
    char *result_json; /* the planner's result when done, else NULL */
    char *created_at;  /* RFC 3339 */
    char *updated_at;
    int64_t version; /* bumps on every change; the ETag is derived from id+version */
    struct plan_summary summary;
};
void store_plan_free(struct store_plan *p);

int store_plan_get(struct store *s, const char *id, struct store_plan *out);

/* Newest first. cursor: NULL or an opaque string from a previous page; name_filter: NULL or a
 * substring. Returns a JSON array text of summaries (malloc'd) and *next_cursor (malloc'd or
 * NULL at the end). */
int store_plan_list(struct store *s, int limit, const char *cursor, const char *name_filter,
                    char **items_json, char **next_cursor);

/* Deletes when token matches the stored hash: STORE_OK, STORE_NOTFOUND, STORE_FORBIDDEN. */
int store_plan_delete(struct store *s, const char *id, const char *manage_token);

/* Job counts by state, for /metrics. */
struct store_job_counts {
    int64_t queued, running, done, failed;
};
int store_job_counts(struct store *s, struct store_job_counts *out);

#endif
