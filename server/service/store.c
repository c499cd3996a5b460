/*
 * store.c - the connection: opening, closing, reconnecting, the prepared statements and
 * the one way to run them; LISTEN/NOTIFY. The statements themselves are used by
 * store_plans.c, store_jobs.c and store_migrate.c (store_int.h).
 *
 * Every statement with values is a prepared statement from the table below, prepared on a
 * connection the first time it is used there (a reconnect forgets them all, as PQreset
 * drops server-side statements). Connection failures are classified once, in store_run(): a
 * dead connection is reset and the statement retried only when the caller says nothing was
 * sent in the current transaction yet, so a retry can never apply a write twice.
 */
#include "service/store.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/clock.h"
#include "service/backoff.h"
#include "service/log.h"
#include "service/store_int.h"

/* RFC 3339 in UTC with microseconds. */
#define TS_CREATED "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define TS_UPDATED "to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define TS_EXPIRES "to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
/* The channels a listening store hears (store_listen). */
#define LISTEN_SQL "LISTEN tpuplan_jobs; LISTEN tpuplan_done; LISTEN tpuplan_deleted"

#define TS_OF(col) "to_char(" col " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

const struct store_stmt_def store_stmts[STORE_STMT_COUNT] = {
    /* API keys and retention (store_keys.c). ON CONFLICT without a target also covers the
     * partial unique index on the names of keys not revoked. */
    [STORE_STMT_APIKEY_INSERT] = {"apikey_insert",
                                  "INSERT INTO api_keys (name, prefix, key_hash) VALUES ($1, $2,"
                                  " $3) ON CONFLICT DO NOTHING RETURNING id"},
    [STORE_STMT_APIKEY_FIND] = {"apikey_find",
                                "SELECT id, name, encode(key_hash, 'hex'), revoked_at IS NOT NULL"
                                " FROM api_keys WHERE prefix = $1"},
    [STORE_STMT_APIKEY_LIST] =
        {"apikey_list",
         "SELECT k.name, k.prefix, " TS_OF(
             "k.created_at") ","
                             " " TS_OF("k.revoked_at") ", coalesce(c.n, 0) FROM api_keys k"
                                                       " LEFT JOIN (SELECT api_key_id, count(*) AS "
                                                       "n FROM plans"
                                                       " WHERE api_key_id IS NOT NULL GROUP BY "
                                                       "api_key_id) c"
                                                       " ON c.api_key_id = k.id ORDER BY "
                                                       "k.created_at, k.id"},
    [STORE_STMT_APIKEY_REVOKE] = {"apikey_revoke",
                                  "UPDATE api_keys SET revoked_at = now() WHERE name = $1"
                                  " AND revoked_at IS NULL RETURNING 1"},
    [STORE_STMT_PLAN_GONE] = {"plan_gone", "SELECT 1 FROM expired_plans WHERE id = $1"},
    [STORE_STMT_PLAN_EXPIRE] =
        {"plan_expire",
         "WITH d AS (DELETE FROM plans WHERE id IN (SELECT id FROM plans WHERE expires_at <="
         " now() ORDER BY expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED) RETURNING id),"
         " t AS (INSERT INTO expired_plans (id) SELECT id FROM d ON CONFLICT DO NOTHING)"
         " SELECT count(*) FROM d"},
    [STORE_STMT_TOMBSTONE_PURGE] =
        {"tombstone_purge",
         "WITH d AS (DELETE FROM expired_plans WHERE id IN (SELECT id FROM expired_plans"
         " WHERE expired_at < now() - interval '90 days' LIMIT $1::int) RETURNING 1)"
         " SELECT count(*) FROM d"},
    [STORE_STMT_KEY_INSERT] =
        {"key_insert",
         "INSERT INTO idempotency_keys (key, body_sha256, plan_id) VALUES ($1, $2, $3)"
         " ON CONFLICT (key) DO NOTHING RETURNING 1"},
    [STORE_STMT_KEY_LOOKUP] =
        {"key_lookup", "SELECT plan_id, body_sha256 = $2 FROM idempotency_keys WHERE key = $1"},
    /* A what-if ($19 its {"parent", "overrides"}) copies its parent's input and options in
     * the statement, so they never pass through the request; FOR KEY SHARE holds the parent
     * until the insert commits, and a parent deleted first inserts nothing (STORE_NOTFOUND)
     * rather than failing the foreign key. */
    [STORE_STMT_PLAN_INSERT] =
        {"plan_insert",
         "WITH par AS (SELECT name, chip, input, options FROM plans WHERE $19::json IS NOT NULL"
         " AND id = $17 FOR KEY SHARE),"
         " p AS (INSERT INTO plans (id, name, chip, source_format, input, options, tensors,"
         " logical_bytes, padded_bytes, peak_bytes, lower_bound_bytes, capacity_bytes, fits,"
         " manage_token_hash, api_key_id, expires_at, parent_id, client_hash, whatif)"
         " SELECT $1, CASE WHEN $19::json IS NULL THEN $2 ELSE coalesce(nullif($2, ''),"
         " left(par.name, 100) || ' (what-if)') END, CASE WHEN $19::json IS NULL THEN $3"
         " ELSE coalesce(nullif($3, ''), par.chip) END, $4, coalesce(par.input, $5),"
         " coalesce(par.options, $6::jsonb), $7, $8, $9, $10, $11, $12, $13,"
         " $14::bytea, nullif($15::bigint, 0),"
         " CASE WHEN $16::bigint > 0 THEN now() + $16::bigint * interval '1 second' END,"
         " nullif($17, ''), $18::bytea, $19::json FROM (VALUES (1)) AS one (x)"
         " LEFT JOIN par ON true WHERE $19::json IS NULL OR par.input IS NOT NULL RETURNING id),"
         " j AS (INSERT INTO jobs (plan_id) SELECT id FROM p RETURNING plan_id)"
         " SELECT pg_notify('tpuplan_jobs', plan_id) FROM j"},
    /* $2 is an enum store_view. CASE evaluates one branch, so only that column is
     * detoasted; the views are json (stored text) and cost no re-serialisation. */
    [STORE_STMT_PLAN_GET] = {"plan_get",
                             "SELECT id, name, chip, source_format, status, error::text,"
                             " CASE $2::int WHEN 1 THEN result_summary::text"
                             " WHEN 2 THEN result_layout::text ELSE result::text END,"
                             " " TS_CREATED ", " TS_UPDATED ", version, tensors, logical_bytes,"
                             " padded_bytes, peak_bytes, lower_bound_bytes, capacity_bytes, fits,"
                             " " TS_EXPIRES ", extract(epoch FROM expires_at - now())::float8,"
                             " parent_id, whatif::text FROM plans WHERE id = $1"},
    /* Keyset pagination: $2/$3 are the (created_at in epoch microseconds, id) of the last
     * row of the previous page; one extra row tells whether another page exists. Whose
     * plans: every one ($5), or those of API key $6 or client digest $7 (NULL: none). */
    [STORE_STMT_PLAN_LIST] =
        {"plan_list", "WITH page AS (SELECT id, name, chip, source_format, status, created_at,"
                      " updated_at, tensors, logical_bytes, padded_bytes, peak_bytes,"
                      " lower_bound_bytes, capacity_bytes, fits, expires_at,"
                      " row_number() OVER (ORDER BY created_at DESC, id DESC) AS rn FROM plans"
                      " WHERE (expires_at IS NULL OR expires_at > now())"
                      " AND ($2::bigint IS NULL OR (created_at, id) <"
                      " ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::text))"
                      " AND ($4::text IS NULL OR name ILIKE $4 ESCAPE '\\')"
                      " AND ($5::bool OR api_key_id = $6::bigint OR client_hash = $7::bytea)"
                      " ORDER BY created_at DESC, id DESC LIMIT $1::int + 1)"
                      " SELECT coalesce(json_agg(json_build_object('id', id, 'name', name,"
                      " 'chip', chip, 'source_format', source_format, 'status', status,"
                      " 'created_at', " TS_CREATED ", 'updated_at', " TS_UPDATED ","
                      " 'tensors', tensors, 'logical_bytes', logical_bytes,"
                      " 'padded_bytes', padded_bytes, 'peak_bytes', peak_bytes,"
                      " 'lower_bound_bytes', lower_bound_bytes, 'capacity_bytes', capacity_bytes,"
                      " 'fits', fits, 'expires_at', " TS_EXPIRES ")"
                      " ORDER BY rn) FILTER (WHERE rn <= $1::int), '[]')::text,"
                      " (SELECT (extract(epoch FROM created_at) * 1000000)::bigint || '.' || id"
                      " FROM page WHERE rn = $1::int AND EXISTS (SELECT 1 FROM page"
                      " WHERE rn > $1::int)) FROM page"},
    /* $2 is the digest plan_owner read, once the API (api.c) has compared it in constant
     * time with the presented token's; the DELETE still names it, so a plan deleted and
     * recreated meanwhile (ids are random: never) could not be hit. Digests only: the token
     * itself never reaches SQL (or a statement log). */
    [STORE_STMT_PLAN_DELETE] = {"plan_delete", "DELETE FROM plans WHERE id = $1 AND"
                                               " manage_token_hash = $2::bytea RETURNING 1"},
    [STORE_STMT_PLAN_OWNER] = {"plan_owner", "SELECT encode(manage_token_hash, 'hex'),"
                                             " coalesce(api_key_id, 0) FROM plans WHERE id = $1"},
    [STORE_STMT_JOB_COUNTS] = {"job_counts", "SELECT count(*) FILTER (WHERE state = 'queued'),"
                                             " count(*) FILTER (WHERE state = 'running'),"
                                             " count(*) FILTER (WHERE state = 'done'),"
                                             " count(*) FILTER (WHERE state = 'failed') FROM jobs"},
    /* Counts through the partial indexes jobs_queue and frontiers_queue and stops at $1:
     * O(limit), not O(jobs). */
    [STORE_STMT_JOBS_QUEUED] = {"jobs_queued",
                                "SELECT count(*) FROM ((SELECT 1 FROM jobs WHERE state = 'queued')"
                                " UNION ALL (SELECT 1 FROM frontiers WHERE status = 'queued')"
                                " LIMIT $1::int) q"},
    /* The sub-select is an InitPlan, evaluated once; SKIP LOCKED lets concurrent claimers
     * (threads or servers) pass over each other's rows instead of queueing on them. */
    [STORE_STMT_JOB_CLAIM] =
        {"job_claim",
         "WITH c AS (UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = $1,"
         " lease_token = gen_random_uuid(), lease_expires_at = now() + $2::int * interval '1"
         " millisecond', started_at = now() WHERE plan_id = (SELECT plan_id FROM jobs WHERE state"
         " = 'queued' AND run_at <= now() ORDER BY run_at, plan_id FOR UPDATE SKIP LOCKED LIMIT"
         " 1) RETURNING plan_id, lease_token, attempts),"
         " p AS (UPDATE plans SET status = 'running', version = version + 1, updated_at = now()"
         " FROM c WHERE plans.id = c.plan_id RETURNING plans.id)"
         " SELECT plan_id, lease_token, attempts FROM c"},
    [STORE_STMT_JOB_INPUT] = {"job_input", "SELECT input, options::text, whatif::text, name"
                                           " FROM plans WHERE id = $1"},
    [STORE_STMT_PLAN_FORMAT] = {"plan_format", "SELECT source_format,"
                                               " coalesce(expires_at <= now(), false)"
                                               " FROM plans WHERE id = $1"},
    [STORE_STMT_PLAN_TENSORS] = {"plan_tensors", "SELECT tensors FROM plans WHERE id = $1"},
    /* A lease token is a plan's job's or a frontier search's (frontiers, store_frontiers.c):
     * renew, release and reap cover both tables. */
    [STORE_STMT_JOB_RENEW] =
        {"job_renew",
         "WITH a AS (UPDATE jobs SET lease_expires_at = now() + $2::int * interval '1 millisecond'"
         " WHERE lease_token = ANY($1::uuid[]) AND state = 'running' RETURNING 1),"
         " b AS (UPDATE frontiers SET lease_expires_at = now() + $2::int * interval '1 millisecond'"
         " WHERE lease_token = ANY($1::uuid[]) AND status = 'running' RETURNING 1)"
         " SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)"},
    [STORE_STMT_JOB_FINISH] =
        {"job_finish",
         "WITH j AS (UPDATE jobs SET state = $3, finished_at = now(), completions = completions"
         " + 1, lease_token = NULL, lease_expires_at = NULL WHERE plan_id = $1 AND lease_token ="
         " $2::uuid AND state = 'running' RETURNING plan_id),"
         " p AS (UPDATE plans SET status = $3, result = $4::json, result_summary = $13::json,"
         " result_layout = $14::json, error = $5::jsonb,"
         " tensors = coalesce($6, tensors), logical_bytes = coalesce($7, logical_bytes),"
         " padded_bytes = coalesce($8, padded_bytes), peak_bytes = coalesce($9, peak_bytes),"
         " lower_bound_bytes = coalesce($10, lower_bound_bytes),"
         " capacity_bytes = coalesce($11, capacity_bytes), fits = coalesce($12, fits),"
         " input = coalesce($15, input), options = coalesce($16::jsonb, options),"
         " chip = coalesce($17, chip),"
         " version = version + 1, updated_at = now() FROM j WHERE plans.id = j.plan_id"
         " RETURNING plans.id, name, chip, source_format, status, error::text, NULL::text,"
         " " TS_CREATED ", " TS_UPDATED ", version, tensors, logical_bytes, padded_bytes,"
         " peak_bytes, lower_bound_bytes, capacity_bytes, fits, " TS_EXPIRES ","
         " extract(epoch FROM expires_at - now())::float8, parent_id, whatif::text)"
         /* The plan as plan_get reads it (the result column left NULL: the caller has
          * it), so a waiting request needs no second read. */
         " SELECT p.*, pg_notify('tpuplan_done', id) FROM p"},
    [STORE_STMT_JOB_RELEASE] =
        {"job_release",
         "WITH r AS (UPDATE jobs SET state = 'queued', attempts = greatest(attempts - 1, 0),"
         " lease_token = NULL, lease_expires_at = NULL, locked_by = NULL"
         " WHERE lease_token = ANY($1::uuid[]) AND state = 'running' RETURNING plan_id),"
         " p AS (UPDATE plans SET status = 'queued', version = version + 1, updated_at = now()"
         " FROM r WHERE plans.id = r.plan_id RETURNING 1),"
         " f AS (UPDATE frontiers SET status = 'queued', attempts = greatest(attempts - 1, 0),"
         " lease_token = NULL, lease_expires_at = NULL, locked_by = NULL, version = version + 1"
         " WHERE lease_token = ANY($1::uuid[]) AND status = 'running' RETURNING id)"
         " SELECT pg_notify('tpuplan_jobs', x) FROM (SELECT plan_id AS x FROM r"
         " UNION ALL SELECT id FROM f) n"},
    [STORE_STMT_JOB_REAP] =
        {"job_reap",
         "WITH r AS (UPDATE jobs SET state = CASE WHEN attempts >= $1::int THEN 'failed' ELSE"
         " 'queued' END, finished_at = CASE WHEN attempts >= $1::int THEN now() END,"
         " completions = completions + CASE WHEN attempts >= $1::int THEN 1 ELSE 0 END,"
         " lease_token = NULL, lease_expires_at = NULL, locked_by = NULL"
         " WHERE plan_id IN (SELECT plan_id FROM jobs WHERE state = 'running' AND"
         " lease_expires_at < now() FOR UPDATE SKIP LOCKED) RETURNING plan_id, state),"
         " p AS (UPDATE plans SET status = r.state, version = version + 1, updated_at = now(),"
         " error = CASE WHEN r.state = 'failed' THEN $2::jsonb END FROM r"
         " WHERE plans.id = r.plan_id RETURNING 1),"
         " f AS (UPDATE frontiers SET status = CASE WHEN attempts >= $1::int THEN 'failed' ELSE"
         " 'queued' END, finished_at = CASE WHEN attempts >= $1::int THEN now() END,"
         " completions = completions + CASE WHEN attempts >= $1::int THEN 1 ELSE 0 END,"
         " error = CASE WHEN attempts >= $1::int THEN $2::jsonb END, result = NULL,"
         " version = version + 1,"
         " lease_token = NULL, lease_expires_at = NULL, locked_by = NULL"
         " WHERE id IN (SELECT id FROM frontiers WHERE status = 'running' AND"
         " lease_expires_at < now() FOR UPDATE SKIP LOCKED) RETURNING status)"
         " SELECT (SELECT count(*) FILTER (WHERE state = 'queued') FROM r)"
         " + (SELECT count(*) FILTER (WHERE status = 'queued') FROM f)"},
    /* A search waits for its plan to finish: a what-if's input is the model its worker made
     * (0010_frontiers.sql). */
    [STORE_STMT_FRONTIER_INSERT] =
        {"frontier_insert",
         "WITH f AS (INSERT INTO frontiers (id, plan_id, query) SELECT $1, id, $3::json FROM plans"
         " WHERE id = $2 RETURNING id, created_at)"
         " SELECT " TS_CREATED ", pg_notify('tpuplan_jobs', id) FROM f"},
    [STORE_STMT_FRONTIER_GET] =
        {"frontier_get",
         "SELECT f.id, f.plan_id, f.status, f.query::text, f.result::text, f.error::text,"
         " " TS_OF("f.created_at") ", " TS_OF("f.started_at") ", " TS_OF(
             "f.finished_at") ","
                              " f.version, coalesce(p.expires_at <= now(), false)"
                              " FROM frontiers f JOIN plans p ON p.id = f.plan_id WHERE f.id = $1"},
    /* json_build_object writes the stored query's text as it is. */
    [STORE_STMT_FRONTIER_LIST] =
        {"frontier_list",
         "SELECT coalesce(p.expires_at <= now(), false), (SELECT coalesce(json_agg("
         "json_build_object('id', f.id, 'status', f.status, 'query', f.query,"
         " 'created', " TS_OF("f.created_at") ", 'finished', " TS_OF(
             "f.finished_at") ")"
                              " ORDER BY f.created_at DESC, f.id DESC), '[]')::text FROM (SELECT * "
                              "FROM frontiers"
                              " WHERE plan_id = $1 ORDER BY created_at DESC, id DESC LIMIT "
                              "$2::int) f)"
                              " FROM plans p WHERE p.id = $1"},
    /* As job_claim; only searches whose plan is finished are runnable. */
    [STORE_STMT_FRONTIER_CLAIM] =
        {"frontier_claim",
         "UPDATE frontiers SET status = 'running', attempts = attempts + 1, locked_by = $1,"
         " lease_token = gen_random_uuid(), lease_expires_at = now() + $2::int * interval '1"
         " millisecond', started_at = now(), version = version + 1 WHERE id = (SELECT f.id FROM"
         " frontiers f JOIN plans p ON p.id = f.plan_id WHERE f.status = 'queued' AND p.status IN"
         " ('done', 'failed') ORDER BY f.created_at, f.id FOR UPDATE OF f SKIP LOCKED LIMIT 1)"
         " RETURNING id, plan_id, lease_token, attempts, query::text"},
    /* Read in binary: the input as raw bytes; only a recipe's, and only up to $2 bytes. */
    [STORE_STMT_PLAN_RECIPE] =
        {"plan_recipe",
         "SELECT source_format, CASE WHEN expires_at <= now() THEN 'gone' ELSE '' END,"
         " CASE WHEN source_format = 'recipe' AND octet_length(input) <= $2::int THEN input END"
         " FROM plans WHERE id = $1"},
    /* The status with the result or the error, in one statement, while the lease holds. */
    [STORE_STMT_FRONTIER_FINISH] =
        {"frontier_finish",
         "UPDATE frontiers SET status = $3, result = $4::json, error = $5::jsonb,"
         " finished_at = now(), completions = completions + 1, lease_token = NULL,"
         " lease_expires_at = NULL, version = version + 1"
         " WHERE id = $1 AND lease_token = $2::uuid AND status = 'running' RETURNING 1"},
};

const char *store_rc_name(int rc)
{
    switch (rc) {
    case STORE_OK:
        return "ok";
    case STORE_NOTFOUND:
        return "notfound";
    case STORE_CONFLICT:
        return "conflict";
    case STORE_UNAVAILABLE:
        return "unavailable";
    case STORE_INVALID:
        return "invalid";
    case STORE_GONE:
        return "gone";
    default:
        return "error";
    }
}

/* Notices ("relation already exists, skipping") are not errors; keep stderr quiet. */
static void notice_ignore(void *arg, const char *msg)
{
    (void)arg;
    (void)msg;
}

static void conn_fresh(struct store *s)
{
    memset(s->prepared, 0, sizeof s->prepared);
    PQsetNoticeProcessor(s->conn, notice_ignore, NULL);
}

/* A new connection for conninfo, or NULL with a message in errbuf. */
static PGconn *conn_open(const char *conninfo, char *errbuf, size_t cap)
{
    /* Our defaults come first: with expand_dbname the conninfo in "dbname" overrides them. */
    const char *const keys[] = {"connect_timeout", "application_name", "keepalives_idle", "dbname",
                                NULL};
    const char *const vals[] = {"5", "tpuplan", "30", conninfo, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);

    if (c == NULL || PQstatus(c) != CONNECTION_OK) {
        snprintf(errbuf, cap, "cannot connect to the database: %s",
                 c ? PQerrorMessage(c) : "out of memory");
        /* PostgreSQL messages end in a newline. */
        size_t n = strlen(errbuf);
        while (n > 0 && errbuf[n - 1] == '\n')
            errbuf[--n] = '\0';
        PQfinish(c);
        return NULL;
    }
    return c;
}

struct store *store_open(const char *conninfo, char *errbuf, size_t cap)
{
    struct store *s = calloc(1, sizeof *s);

    if (s == NULL || (s->conninfo = strdup(conninfo)) == NULL) {
        free(s);
        snprintf(errbuf, cap, "out of memory");
        return NULL;
    }
    if ((s->conn = conn_open(conninfo, errbuf, cap)) == NULL) {
        free(s->conninfo);
        free(s);
        return NULL;
    }
    conn_fresh(s);
    return s;
}

void store_close(struct store *s)
{
    if (s == NULL)
        return;
    PQfinish(s->conn);
    free(s->conninfo);
    free(s);
}

bool store_shed(struct store *s)
{
    char err[256];
    PGconn *c;

    if (s->exchanged < STORE_SHED_BYTES || s->listening || PQstatus(s->conn) != CONNECTION_OK ||
        PQtransactionStatus(s->conn) != PQTRANS_IDLE)
        return false;
    /* the old one stays when no new one comes: its buffers are only memory */
    if ((c = conn_open(s->conninfo, err, sizeof(err))) == NULL)
        return false;
    PQfinish(s->conn);
    s->conn = c;
    s->exchanged = 0;
    conn_fresh(s);
    return true;
}

/* The bytes a statement sent (its parameters) and got back (a few rows' values): what
 * libpq's buffers grew to hold. */
static uint64_t exchanged(int n, const char *const *vals, const int *lens, const int *fmts,
                          const PGresult *r)
{
    uint64_t b = 0;

    for (int i = 0; i < n; i++)
        if (vals[i] != NULL)
            b += fmts != NULL && fmts[i] == 1 ? (uint64_t)lens[i] : strlen(vals[i]);
    for (int row = 0; row < PQntuples(r) && row < 4; row++)
        for (int col = 0; col < PQnfields(r); col++)
            b += (uint64_t)PQgetlength(r, row, col);
    return b;
}

int store_reconnect(struct store *s)
{
    int64_t now = clock_now_ms();
    if (now < s->retry_at_ms)
        return STORE_UNAVAILABLE;
    PQreset(s->conn);
    if (PQstatus(s->conn) != CONNECTION_OK) {
        s->backoff_ms = backoff_next(s->backoff_ms);
        s->retry_at_ms = now + s->backoff_ms;
        return STORE_UNAVAILABLE;
    }
    s->backoff_ms = 0;
    s->retry_at_ms = 0;
    s->connections++;
    conn_fresh(s);
    if (s->listening) {
        PGresult *r = PQexec(s->conn, LISTEN_SQL);
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok)
            return STORE_UNAVAILABLE;
    }
    log_line("store", "reconnected to the database");
    return STORE_OK;
}

/* SQLSTATE class 08 is a lost connection, 57P01-57P03 a server shutting down or starting;
 * 23503, a foreign key violation, is a row the statement names deleted meanwhile (a what-if
 * whose parent a DELETE removed first): not found, the client's race, not our failure. */
int store_classify(struct store *s, const PGresult *r)
{
    const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (PQstatus(s->conn) == CONNECTION_BAD)
        return STORE_UNAVAILABLE;
    if (st != NULL && (strncmp(st, "08", 2) == 0 || strncmp(st, "57P0", 4) == 0))
        return STORE_UNAVAILABLE;
    if (st != NULL && strcmp(st, "23503") == 0)
        return STORE_NOTFOUND;
    return STORE_ERROR;
}

PGresult *store_run(struct store *s, enum store_stmt id, int n, const char *const *vals,
                    const int *lens, const int *fmts, int result_fmt, bool first, int *rc)
{
    for (int attempt = 0;; attempt++) {
        PGresult *r = NULL;
        int code;
        if (PQstatus(s->conn) == CONNECTION_BAD && (code = store_reconnect(s)) != STORE_OK) {
            *rc = code;
            return NULL;
        }
        if (!s->prepared[id]) {
            r = PQprepare(s->conn, store_stmts[id].name, store_stmts[id].sql, 0, NULL);
            if (PQresultStatus(r) == PGRES_COMMAND_OK) {
                s->prepared[id] = true;
                PQclear(r);
                r = NULL;
            }
        }
        if (r == NULL)
            r = PQexecPrepared(s->conn, store_stmts[id].name, n, vals, lens, fmts, result_fmt);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
            s->exchanged += exchanged(n, vals, lens, fmts, r);
            *rc = STORE_OK;
            return r;
        }
        code = store_classify(s, r);
        if (code == STORE_UNAVAILABLE && first && attempt == 0 &&
            PQstatus(s->conn) == CONNECTION_BAD) {
            PQclear(r);
            s->retry_at_ms = 0; /* the server may be back: try at once */
            continue;
        }
        if (code == STORE_ERROR)
            log_line("store", "%s: %s", store_stmts[id].name, PQresultErrorMessage(r));
        PQclear(r);
        *rc = code;
        return NULL;
    }
}

int store_run_plain(struct store *s, const char *sql, bool first)
{
    for (int attempt = 0;; attempt++) {
        if (PQstatus(s->conn) == CONNECTION_BAD) {
            int code = store_reconnect(s);
            if (code != STORE_OK)
                return code;
        }
        PGresult *r = PQexec(s->conn, sql);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            PQclear(r);
            return STORE_OK;
        }
        int code = store_classify(s, r);
        if (code == STORE_UNAVAILABLE && first && attempt == 0 &&
            PQstatus(s->conn) == CONNECTION_BAD) {
            PQclear(r);
            s->retry_at_ms = 0;
            continue;
        }
        if (code == STORE_ERROR)
            log_line("store", "%s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        return code;
    }
}

void store_rollback(struct store *s)
{
    if (PQstatus(s->conn) == CONNECTION_OK && PQtransactionStatus(s->conn) != PQTRANS_IDLE)
        PQclear(PQexec(s->conn, "ROLLBACK"));
}

char *store_col_str(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : strdup(PQgetvalue(r, row, col));
}

uint64_t store_col_u64(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoull(PQgetvalue(r, row, col), NULL, 10);
}

static int hex_nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int store_col_hex(const PGresult *r, int row, int col, unsigned char *out, size_t n)
{
    const char *hex = PQgetvalue(r, row, col);

    if (PQgetisnull(r, row, col) || (size_t)PQgetlength(r, row, col) != 2 * n)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

int store_input_from_row(const PGresult *r, char **input, size_t *input_len, char **options_json)
{
    size_t n = (size_t)PQgetlength(r, 0, 0), on = (size_t)PQgetlength(r, 0, 1);
    *input = malloc(n + 1);
    *options_json = malloc(on + 1);
    if (*input == NULL || *options_json == NULL)
        return -1;
    memcpy(*input, PQgetvalue(r, 0, 0), n);
    (*input)[n] = '\0';
    *input_len = n;
    memcpy(*options_json, PQgetvalue(r, 0, 1), on);
    (*options_json)[on] = '\0';
    return 0;
}

/* True when JSON text contains the escape \u0000, which jsonb refuses (the whole document
 * with it). An escaped backslash followed by "u0000" is ordinary text and allowed. */
bool store_json_has_nul(const char *j)
{
    for (const char *p = strstr(j, "u0000"); p != NULL; p = strstr(p + 1, "u0000")) {
        size_t bs = 0;
        while (p - bs > j && p[-(ptrdiff_t)bs - 1] == '\\')
            bs++;
        if (bs % 2 == 1)
            return true;
    }
    return false;
}

void store_fmt_u64(char *buf, size_t cap, uint64_t v)
{
    snprintf(buf, cap, "%" PRIu64, v);
}

/* ---- notifications: LISTEN is part of the connection, kept across reconnects ---- */

unsigned long store_connections(const struct store *s)
{
    return s->connections;
}

int store_listen(struct store *s)
{
    s->listening = true;
    return store_run_plain(s, LISTEN_SQL, true);
}

int store_wait_notify(struct store *s, int timeout_ms,
                      void (*cb)(const char *channel, const char *payload, void *arg), void *arg)
{
    int count = 0;
    PGnotify *n;
    if (PQstatus(s->conn) == CONNECTION_BAD && store_reconnect(s) != STORE_OK)
        return STORE_UNAVAILABLE;
    /* Notifications may already sit in libpq's buffer (read along with a result). */
    if (PQconsumeInput(s->conn) == 0)
        goto lost;
    n = PQnotifies(s->conn);
    if (n == NULL) {
        struct pollfd p = {.fd = PQsocket(s->conn), .events = POLLIN};
        if (p.fd < 0)
            goto lost;
        if (poll(&p, 1, timeout_ms) < 0 && errno != EINTR)
            goto lost;
        if (PQconsumeInput(s->conn) == 0)
            goto lost;
        n = PQnotifies(s->conn);
    }
    while (n != NULL) {
        if (cb)
            cb(n->relname, n->extra, arg);
        PQfreemem(n);
        count++;
        n = PQnotifies(s->conn);
    }
    return count;
lost:
    /* PQconsumeInput fails when the connection is gone (status CONNECTION_BAD): the next
     * call reconnects, within the backoff. */
    return STORE_UNAVAILABLE;
}
