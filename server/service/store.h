/*
 * store.h - plans, jobs, idempotency keys and API keys in PostgreSQL (libpq).
 *
 * One struct store wraps one PGconn and its prepared statements; it is used by exactly one
 * thread at a time (each request-executor and planner worker thread owns one). Every call
 * that fails because the database is unreachable returns STORE_UNAVAILABLE; the HTTP layer
 * maps that to 503 with Retry-After. A call whose connection turns out dead before anything
 * was sent reconnects (PQreset, statements re-prepared lazily, LISTEN re-issued) and retries
 * once; while the database stays down, reconnects back off from 100 ms to 5 s so a request
 * never waits on a dead server more than one connect attempt. Writes are single
 * transactions: nothing is half-written.
 *
 * Schema: migrations/NNNN_*.sql. main.c calls store_migrate() once at startup (before
 * starting the HTTP daemon and jobs_start()) and for `tpuplan-server migrate` alone; several
 * servers starting together serialise on the advisory lock.
 *
 * All SQL is PQexecParams/PQexecPrepared with parameters; migration files are the only
 * text sent verbatim.
 *
 * This header is the one public contract of the store modules: store.c (the connection,
 * the prepared statements, reconnects, LISTEN/NOTIFY), store_migrate.c, store_plans.c,
 * store_keys.c, store_jobs.c and store_frontiers.c; their shared internals are in
 * store_int.h. Every call that returns an int returns a STORE_* code (store_wait_notify: a
 * count or one) that must be checked (ERR_MUST_CHECK).
 */
#ifndef TPUPLAN_STORE_H
#define TPUPLAN_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"
#include "planner/plan.h"
#include "service/apikey.h"
#include "service/ids.h"
#include "service/sha256.h"

enum store_rc {
    STORE_OK = 0,
    STORE_NOTFOUND = -1,
    STORE_CONFLICT = -2,    /* idempotency key reused with another body (HTTP 422); an API
                               key name already in use */
    STORE_UNAVAILABLE = -4, /* database down or unreachable (HTTP 503) */
    STORE_ERROR = -5,       /* anything else (HTTP 500); message logged */
    STORE_INVALID = -6,     /* malformed argument: cursor, limit, id (HTTP 400) */
    STORE_GONE = -7,        /* the plan expired (HTTP 410) */
};

/* "ok", "notfound", ... for logs. */
const char *store_rc_name(int rc);

/* ---- The connection (store.c) ---- */

struct store;

/* Opens a connection (conninfo: a libpq URI or key=value string; connect_timeout defaults
 * to 5 s and application_name to "tpuplan" unless conninfo sets them). NULL on failure
 * with a message in errbuf. The store is owned by the caller: store_close() it. Statements
 * are prepared on first use, so a store may be opened before store_migrate(). */
struct store *store_open(const char *conninfo, char *errbuf, size_t cap);
void store_close(struct store *s);

/* libpq keeps the buffers a connection grew to (a 361 MB plan read, a result written)
 * until it closes. Once STORE_SHED_BYTES have passed over s's connection, and it is idle,
 * store_shed replaces it with a new one, so that memory goes back (a few ms; the old one
 * stays when no new one can be had): true when it did. For threads between requests or jobs
 * (cheap when there is nothing to shed); a listening store is left alone. */
#define STORE_SHED_BYTES (16u << 20)
bool store_shed(struct store *s);

/* LISTENs on tpuplan_jobs (new work), tpuplan_done (payload: a finished plan id) and
 * tpuplan_deleted (payload: a deleted plan's id, sent by the plans table's trigger in the
 * deleting transaction, migrations/0009_plan_deleted_notify.sql); kept across reconnects. */
ERR_MUST_CHECK int store_listen(struct store *s);

/* How many times s has reconnected. Notifications sent while a connection was down are
 * lost, so a listener that sees this change must assume it missed some. */
unsigned long store_connections(const struct store *s);

/* Waits up to timeout_ms for notifications and calls cb(channel, payload, arg) for each.
 * Returns how many arrived (0 on timeout) or STORE_UNAVAILABLE. */
ERR_MUST_CHECK int
store_wait_notify(struct store *s, int timeout_ms,
                  void (*cb)(const char *channel, const char *payload, void *arg), void *arg);

/* ---- Migrations (store_migrate.c) ---- */

/* Applies migrations/NNNN_*.sql from dir in order, each in one transaction, under
 * pg_advisory_lock, recording them in schema_migrations (version = file name without
 * ".sql"). Files must not contain BEGIN/COMMIT. 0, or a STORE_* code with the failing file
 * and PostgreSQL's message in errbuf. */
ERR_MUST_CHECK int store_migrate(struct store *s, const char *dir, char *errbuf, size_t cap);

/* 1 when the database answers and every migration in dir is applied, else 0. */
ERR_MUST_CHECK int store_ready(struct store *s, const char *dir);

/* ---- Plans and idempotency keys (store_plans.c) ---- */

/* A new plan: the validated input and its options. Strings are borrowed. */
struct store_new_plan {
    const char *name;
    const char *chip;
    const char *source_format; /* an input format's name (import.h) */
    const char *options_json;  /* planopts_json(); NULL means {} */
    const char *input;         /* raw input bytes (may contain NULs: stored as bytea) */
    size_t input_len;
    const char *idempotency_key;        /* NULL when none; 1..STORE_KEY_MAX bytes */
    const char *idempotency_scope;      /* whose key it is (api.c: the API key, the client
                                         * token or the client address); NULL: "" */
    const char *body_sha256_hex;        /* hash of input+options; required with a key */
    const struct plan_summary *summary; /* from plan_validate */
    int64_t api_key_id;                 /* the key that sent it (store_apikey.id); 0: none */
    const unsigned char *client_hash;   /* SHA-256 of the client token (auth.h); NULL: none */
    uint64_t retain_s;                  /* expires this long after creation; 0: never */
    const char *parent_id;              /* a what-if's parent plan; NULL for none */
    /* A what-if planned by the worker pool: {"parent": ID, "overrides": {...}} (json text).
     * Its input and options are then the parent's, copied in SQL (input and options_json
     * are not read); name NULL or "" is the parent's name + " (what-if)", chip NULL or ""
     * the parent's; the summary is filled in when it is planned. STORE_NOTFOUND when the
     * parent is gone, also when a DELETE of it commits first. NULL: not a what-if. */
    const char *whatif_json;
};

/* Ids and manage tokens come from ids.h (IDS_ID_LEN, IDS_TOKEN_LEN); tokens are stored
 * only as their SHA-256, computed here: the token itself is never sent to the database. */
#define STORE_KEY_MAX 255 /* Idempotency-Key length limit (STORE_INVALID above) */

struct store_created {
    char id[IDS_ID_LEN + 1];
    char manage_token[IDS_TOKEN_LEN + 1]; /* "" when replayed by an idempotency key */
    bool replayed;                        /* the key matched an existing plan */
};

/* Inserts plan + job (+ idempotency key) in one transaction and NOTIFYs the workers.
 * An idempotency key names a plan within its scope only: the row holds the hex SHA-256 of
 * scope, a NUL and the key, so the same key in another scope is another key, and neither
 * text reaches SQL. STORE_CONFLICT: the key exists in this scope with another body hash.
 * STORE_INVALID: a key without a body hash, an empty or too long key or one that is not
 * UTF-8, or options containing \u0000. STORE_NOTFOUND: parent_id names no plan (deleted
 * meanwhile). */
ERR_MUST_CHECK int store_plan_create(struct store *s, const struct store_new_plan *np,
                                     struct store_created *out);

/* Which form of the result store_plan_get_view() reads (the views: plan_views, planner/plan.h):
 * the whole result, the result without its tensors, or the tensors as columns. */
enum store_view {
    STORE_VIEW_FULL = 0,
    STORE_VIEW_SUMMARY = 1,
    STORE_VIEW_LAYOUT = 2,
};

/* One plan as the API returns it. Strings are malloc'd, owned by the struct until
 * store_plan_free(). */
struct store_plan {
    char id[IDS_ID_LEN + 1];
    char *name;
    char *chip;
    char *source_format;
    char *status;      /* "queued" "running" "done" "failed" */
    char *error_json;  /* problem details object when failed, else NULL */
    char *result_json; /* when done: the planner's result, or the view asked for; else NULL */
    char *created_at;  /* RFC 3339, UTC, microseconds */
    char *updated_at;
    int64_t version;                /* bumps on every change; the ETag is derived from id+version */
    char parent_id[IDS_ID_LEN + 1]; /* a what-if's parent plan, "" for none */
    struct plan_summary summary;
    char *expires_at;    /* RFC 3339 like created_at; NULL: never expires */
    double expires_in_s; /* seconds from the read to expires_at; HUGE_VAL: never */
    char *whatif_json;   /* a what-if's {"parent", "overrides"} (store_new_plan); else NULL */
    void *res;           /* when not NULL, result_json is not malloc'd but points into the
                          * read it came in (store_plan_get_view: no copy of a document of
                          * hundreds of MB), released with it by store_plan_free */
};
void store_plan_free(struct store_plan *p);

/* A deep copy of src into dst (dst's own strings, result_json too, freed with
 * store_plan_free()).
 * STORE_ERROR (dst left empty) when out of memory. */
ERR_MUST_CHECK int store_plan_copy(const struct store_plan *src, struct store_plan *dst);

/* Plan id's input format into fmt (cap bytes): STORE_OK, STORE_NOTFOUND when it does not
 * exist, STORE_GONE when it expired (as store_plan_get). One indexed read: the input itself
 * is not read (a what-if copies it in SQL, store_new_plan). */
ERR_MUST_CHECK int store_plan_format(struct store *s, const char *id, char *fmt, size_t cap);

/* store_plan_format() and, when the plan's input is a recipe of at most max bytes, that input
 * into *input (malloc'd, *len bytes and a NUL; the caller frees), else *input NULL. For a
 * check of a recipe's fields before work on it is queued (a recipe is small: RECIPE_MAX_INPUT). */
ERR_MUST_CHECK int store_plan_recipe(struct store *s, const char *id, size_t max, char *fmt,
                                     size_t cap, char **input, size_t *len);

/* Plan id's tensor count into *tensors (0 when there is no such plan: the caller's own read
 * then answers it); one indexed read. STORE_OK or a database failure. */
ERR_MUST_CHECK int store_plan_tensors(struct store *s, const char *id, uint64_t *tensors);

/* STORE_NOTFOUND also for ids that cannot exist (wrong length or alphabet). STORE_GONE when
 * the plan expired: its expires_at has passed, or the sweep already deleted it. */
ERR_MUST_CHECK int store_plan_get(struct store *s, const char *id, struct store_plan *out);

/* store_plan_get() with result_json in another form: STORE_VIEW_SUMMARY is the result
 * without `tensors`; STORE_VIEW_LAYOUT is {"tensors": N, "id": [...], "name": [...], ...},
 * one array per tensor field in tensor order. Both are read as stored, never rebuilt. */
ERR_MUST_CHECK int store_plan_get_view(struct store *s, const char *id, enum store_view view,
                                       struct store_plan *out);

/* Whose plans store_plan_list() lists: every plan (all), or those created with API key
 * key_id (0: none) or by the client whose token's digest is client_hash (NULL: none). With
 * neither, nothing. */
struct store_list_owner {
    bool all;
    int64_t key_id;
    const unsigned char *client_hash; /* SHA256_LEN bytes, borrowed */
};

/* owner's plans, newest first. limit: 1..1000; cursor: NULL or an opaque string from a
 * previous page (STORE_INVALID when malformed, or naming a time past year 9999);
 * name_filter: NULL or a case-insensitive substring, UTF-8 (STORE_INVALID otherwise; % _ and
 * \ match literally). *items_json (malloc'd) is a JSON array of objects {id, name, chip,
 * source_format, status, created_at, updated_at, tensors, logical_bytes, padded_bytes,
 * peak_bytes, lower_bound_bytes, capacity_bytes, fits}; *next_cursor is malloc'd, or NULL
 * on the last page. */
ERR_MUST_CHECK int store_plan_list(struct store *s, const struct store_list_owner *owner, int limit,
                                   const char *cursor, const char *name_filter, char **items_json,
                                   char **next_cursor);

/* Who may delete plan id: the API key that created it (0: none) and its manage token's
 * SHA-256 (the API compares a presented token's digest with it in constant time).
 * STORE_OK, or STORE_NOTFOUND (also for ids that cannot exist). */
struct store_plan_owner {
    int64_t api_key_id;
    unsigned char token_hash[SHA256_LEN];
};
ERR_MUST_CHECK int store_plan_owner(struct store *s, const char *id, struct store_plan_owner *out);

/* Deletes plan id when its manage-token digest is still token_hash (32 bytes, as
 * store_plan_owner read it): STORE_OK or STORE_NOTFOUND. The plan's job goes with it; a
 * worker still planning it discards its result. */
ERR_MUST_CHECK int store_plan_delete(struct store *s, const char *id,
                                     const unsigned char *token_hash);

/* ---- API keys and retention (store_keys.c) ---- */

/* One API key row. */
struct store_apikey {
    int64_t id;
    char name[APIKEY_NAME_MAX + 1];
    char prefix[APIKEY_PREFIX_LEN + 1];
    unsigned char hash[APIKEY_HASH_LEN]; /* store_apikey_find only */
    bool revoked;
    char created_at[40], revoked_at[40]; /* store_apikey_list only; "" when NULL */
    int64_t plans;                       /* store_apikey_list only: plans it created */
};

/* A new key: its name, prefix and hash (apikey.h; borrowed). STORE_CONFLICT when a key
 * not revoked has that name (or, never in practice, that prefix); STORE_INVALID for a bad
 * name. */
ERR_MUST_CHECK int store_apikey_create(struct store *s, const char *name, const char *prefix,
                                       const unsigned char *hash);

/* The key with this prefix, revoked or not: STORE_OK or STORE_NOTFOUND. */
ERR_MUST_CHECK int store_apikey_find(struct store *s, const char *prefix, struct store_apikey *out);

/* Every key, oldest first, into *out (malloc'd array of *n; caller frees). */
ERR_MUST_CHECK int store_apikey_list(struct store *s, struct store_apikey **out, size_t *n);

/* Revokes the key not yet revoked that has this name: STORE_OK or STORE_NOTFOUND. */
ERR_MUST_CHECK int store_apikey_revoke(struct store *s, const char *name);

/* The expiry sweep: deletes plans whose expires_at passed, batch rows per statement (each
 * its own short transaction, rows locked with SKIP LOCKED so concurrent sweeps by several
 * servers pass each other), at most max_batches statements; leaves their ids in
 * expired_plans (GET answers 410) and drops ids older than 90 days from there. *expired
 * receives how many plans were deleted. */
ERR_MUST_CHECK int store_plan_expire(struct store *s, int batch, int max_batches, long *expired);

/*
 * ---- Planner jobs (store_jobs.c; used by jobs.c) ----
 *
 * A claim hands out a lease: a random lease_token and an expiry. Only the holder of the
 * current token can renew, finish or release the job, so a worker whose lease expired and
 * was re-claimed elsewhere can never complete it a second time.
 */
#define STORE_LEASE_LEN 36 /* uuid text */

/* Job counts by state, for /metrics. */
struct store_job_counts {
    int64_t queued, running, done, failed;
};
ERR_MUST_CHECK int store_job_counts(struct store *s, struct store_job_counts *out);

/* The number of queued jobs (plans' and frontier searches'), counted up to limit (so the cost is
 * bounded by limit): *out is min(queued, limit). For the bounded queue (--max-queue). STORE_OK or
 * an error. */
ERR_MUST_CHECK int store_jobs_queued(struct store *s, unsigned limit, int64_t *out);

struct store_job {
    char plan_id[IDS_ID_LEN + 1];
    char lease_token[STORE_LEASE_LEN + 1];
    int attempts; /* including this one */
    char *input;  /* malloc'd, input_len bytes (+ a NUL not counted) */
    size_t input_len;
    char *options_json; /* malloc'd */
    char *whatif_json;  /* a what-if's {"parent", "overrides"} (malloc'd); NULL: not one */
    char *name;         /* the plan's name (malloc'd) */
};
void store_job_free(struct store_job *j);

/* Claims the oldest runnable queued job for worker (a name for locked_by) with a lease of
 * lease_ms, marks its plan running and loads its input. STORE_NOTFOUND when none. */
ERR_MUST_CHECK int store_job_claim(struct store *s, const char *worker, int lease_ms,
                                   struct store_job *out);

/* Extends the leases given by n tokens (uuid text) to now + lease_ms. *renewed (may be NULL)
 * receives how many were still held. */
ERR_MUST_CHECK int store_job_renew(struct store *s, const char *const *tokens, size_t n,
                                   int lease_ms, size_t *renewed);

/* What a what-if's worker made (borrowed): the model it planned, which becomes the plan's
 * input (so a what-if of it starts there), the options it planned it with (planopts.h) and
 * the chip (NULL: unchanged). */
struct store_made {
    const char *input;
    size_t input_len;
    const char *options_json;
    const char *chip;
};

/* Finishes a claimed job in one transaction, only while j->lease_token still holds it:
 * done with result_json, its views (GET ?view=summary|layout; NULL: none stored) and the
 * summary (error_json NULL), or failed with error_json (result_json, views and summary
 * NULL); with made (may be NULL) the plan's input, options and chip become those a what-if
 * made. All borrowed. Bumps the completion counter and NOTIFYs tpuplan_done.
 * STORE_NOTFOUND when the lease was lost or the plan deleted (the result is dropped).
 * done (may be NULL) receives the finished plan as store_plan_get() would read it, except
 * result_json (NULL: the caller holds it); all-zero if it could not be read back. The
 * caller frees it with store_plan_free(). */
ERR_MUST_CHECK int store_job_finish(struct store *s, const struct store_job *j,
                                    const char *result_json, const struct plan_views *views,
                                    const char *error_json, const struct plan_summary *summary,
                                    const struct store_made *made, struct store_plan *done);

/* Gives running jobs back to the queue (graceful stop), by lease token. */
ERR_MUST_CHECK int store_job_release(struct store *s, const char *const *tokens, size_t n);

/* Requeues jobs whose lease expired (their server died), plans' and frontier searches';
 * those already claimed max_attempts times fail with error_json instead. *requeued (may be
 * NULL) gets the count put back in the queue. */
ERR_MUST_CHECK int store_job_reap(struct store *s, int max_attempts, const char *error_json,
                                  int *requeued);

/*
 * ---- Frontier searches (store_frontiers.c; migrations/0010_frontiers.sql) ----
 *
 * A search of a plan's recipe (planner/frontier.h) queued by the API and run by the worker
 * pool. Its job is its own row, leased like a plan's job: store_job_renew, store_job_release
 * and store_job_reap take its lease token too. A search waits for its plan to finish and is
 * deleted with it.
 */

/* One search as the API returns it. Strings are malloc'd (NULL: SQL NULL), owned until
 * store_frontier_free(). */
struct store_frontier {
    char id[IDS_ID_LEN + 1];
    char plan_id[IDS_ID_LEN + 1];
    char *status;      /* "queued" "running" "done" "failed" */
    char *query_json;  /* the normalised query, as stored */
    char *result_json; /* when done: frontier_json's "frontier" object */
    char *error_json;  /* when failed: the problem document */
    char *created_at;  /* RFC 3339, UTC, microseconds, like a plan's */
    char *started_at;
    char *finished_at;
    int64_t version; /* bumps on every change; the ETag is derived from id+version */
};
void store_frontier_free(struct store_frontier *f);

/* Queues a search of plan plan_id with query_json (valid JSON text, borrowed) under a new
 * id and NOTIFYs the workers; out receives its id and created_at (status "queued").
 * STORE_NOTFOUND when the plan is gone (also when a DELETE of it commits first). */
ERR_MUST_CHECK int store_frontier_create(struct store *s, const char *plan_id,
                                         const char *query_json, struct store_frontier *out);

/* STORE_NOTFOUND also for ids that cannot exist; STORE_GONE when its plan expired. */
ERR_MUST_CHECK int store_frontier_get(struct store *s, const char *id, struct store_frontier *out);

/* Plan plan_id's newest `limit` searches (1..1000) as a JSON array (*items_json, malloc'd) of
 * {id, status, query, created, finished}, newest first. STORE_NOTFOUND or STORE_GONE for the
 * plan as store_plan_get. */
ERR_MUST_CHECK int store_frontier_list(struct store *s, const char *plan_id, int limit,
                                       char **items_json);

/* A claimed search: its query and its plan's input and options. */
struct store_frontier_job {
    char id[IDS_ID_LEN + 1];
    char plan_id[IDS_ID_LEN + 1];
    char lease_token[STORE_LEASE_LEN + 1];
    int attempts;     /* including this one */
    char *query_json; /* malloc'd */
    char *input;      /* the plan's input, malloc'd, input_len bytes (+ a NUL) */
    size_t input_len;
    char *options_json; /* the plan's options (planopts.h), malloc'd */
};
void store_frontier_job_free(struct store_frontier_job *j);

/* Claims the oldest queued search whose plan is finished, with a lease of lease_ms, and
 * loads it. STORE_NOTFOUND when none. */
ERR_MUST_CHECK int store_frontier_claim(struct store *s, const char *worker, int lease_ms,
                                        struct store_frontier_job *out);

/* Finishes a claimed search in one statement, only while j->lease_token still holds it:
 * done with result_json (JSON text) or failed with error_json (a problem document), the
 * other NULL. STORE_NOTFOUND when the lease was lost or the search deleted. */
ERR_MUST_CHECK int store_frontier_finish(struct store *s, const struct store_frontier_job *j,
                                         const char *result_json, const char *error_json);

#endif
