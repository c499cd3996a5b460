/*
 * store.c - the PostgreSQL side of the service: plans, jobs, idempotency keys, migrations.
 *
 * Every statement with values is a prepared statement from the table below, prepared on a
 * connection the first time it is used there (a reconnect forgets them all, as PQreset
 * drops server-side statements). Connection failures are classified once, in run(): a dead
 * connection is reset and the statement retried only when the caller says nothing was sent
 * in the current transaction yet, so a retry can never apply a write twice.
 */
#include "service/store.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <libpq-fe.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner/clock.h"
#include "service/backoff.h"
#include "service/ids.h"
#include "service/log.h"

/* RFC 3339 in UTC with microseconds. */
#define TS_CREATED          "to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define TS_UPDATED          "to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
#define MIGRATION_MAX_BYTES (1u << 20)
#define MIGRATIONS_MAX      1000
/* pg_advisory_lock key for migrations: "tpuplan" in ASCII. */
#define MIGRATION_LOCK "32772479919104366"

enum stmt {
    S_KEY_INSERT,
    S_KEY_LOOKUP,
    S_PLAN_INSERT,
    S_PLAN_GET,
    S_PLAN_LIST,
    S_PLAN_DELETE,
    S_PLAN_EXISTS,
    S_JOB_COUNTS,
    S_JOB_CLAIM,
    S_JOB_INPUT,
    S_JOB_RENEW,
    S_JOB_FINISH,
    S_JOB_RELEASE,
    S_JOB_REAP,
    S_COUNT
};

static const struct {
    const char *name;
    const char *sql;
} stmts[S_COUNT] = {
    [S_KEY_INSERT] = {"key_insert",
                      "INSERT INTO idempotency_keys (key, body_sha256, plan_id) VALUES ($1, $2, $3)"
                      " ON CONFLICT (key) DO NOTHING RETURNING 1"},
    [S_KEY_LOOKUP] = {"key_lookup",
                      "SELECT plan_id, body_sha256 = $2 FROM idempotency_keys WHERE key = $1"},
    [S_PLAN_INSERT] =
        {"plan_insert",
         "WITH p AS (INSERT INTO plans (id, name, chip, source_format, input, options, tensors,"
         " logical_bytes, padded_bytes, peak_bytes, lower_bound_bytes, capacity_bytes, fits,"
         " manage_token_hash) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11, $12,"
         " $13, sha256(convert_to($14, 'UTF8'))) RETURNING id),"
         " j AS (INSERT INTO jobs (plan_id) SELECT id FROM p RETURNING plan_id)"
         " SELECT pg_notify('tpuplan_jobs', plan_id) FROM j"},
    /* $2 is an enum store_view. CASE evaluates one branch, so only that column is
     * detoasted; the views are json (stored text) and cost no re-serialisation. */
    [S_PLAN_GET] = {"plan_get", "SELECT id, name, chip, source_format, status, error::text,"
                                " CASE $2::int WHEN 1 THEN result_summary::text"
                                " WHEN 2 THEN result_layout::text ELSE result::text END,"
                                " " TS_CREATED ", " TS_UPDATED ", version, tensors, logical_bytes,"
                                " padded_bytes, peak_bytes, lower_bound_bytes, capacity_bytes, fits"
                                " FROM plans WHERE id = $1"},
    /* Keyset pagination: $2/$3 are the (created_at in epoch microseconds, id) of the last
     * row of the previous page; one extra row tells whether another page exists. */
    [S_PLAN_LIST] = {"plan_list",
                     "WITH page AS (SELECT id, name, chip, source_format, status, created_at,"
                     " updated_at, tensors, logical_bytes, padded_bytes, peak_bytes,"
                     " lower_bound_bytes, capacity_bytes, fits,"
                     " row_number() OVER (ORDER BY created_at DESC, id DESC) AS rn FROM plans"
                     " WHERE ($2::bigint IS NULL OR (created_at, id) <"
                     " ('epoch'::timestamptz + $2::bigint * interval '1 microsecond', $3::text))"
                     " AND ($4::text IS NULL OR name ILIKE $4 ESCAPE '\\')"
                     " ORDER BY created_at DESC, id DESC LIMIT $1::int + 1)"
                     " SELECT coalesce(json_agg(json_build_object('id', id, 'name', name,"
                     " 'chip', chip, 'source_format', source_format, 'status', status,"
                     " 'created_at', " TS_CREATED ", 'updated_at', " TS_UPDATED ","
                     " 'tensors', tensors, 'logical_bytes', logical_bytes,"
                     " 'padded_bytes', padded_bytes, 'peak_bytes', peak_bytes,"
                     " 'lower_bound_bytes', lower_bound_bytes, 'capacity_bytes', capacity_bytes,"
                     " 'fits', fits) ORDER BY rn) FILTER (WHERE rn <= $1::int), '[]')::text,"
                     " (SELECT (extract(epoch FROM created_at) * 1000000)::bigint || '.' || id"
                     " FROM page WHERE rn = $1::int AND EXISTS (SELECT 1 FROM page"
                     " WHERE rn > $1::int)) FROM page"},
    [S_PLAN_DELETE] = {"plan_delete", "DELETE FROM plans WHERE id = $1 AND manage_token_hash ="
                                      " sha256(convert_to($2, 'UTF8')) RETURNING 1"},
    [S_PLAN_EXISTS] = {"plan_exists", "SELECT 1 FROM plans WHERE id = $1"},
    [S_JOB_COUNTS] = {"job_counts", "SELECT count(*) FILTER (WHERE state = 'queued'),"
                                    " count(*) FILTER (WHERE state = 'running'),"
                                    " count(*) FILTER (WHERE state = 'done'),"
                                    " count(*) FILTER (WHERE state = 'failed') FROM jobs"},
    /* The sub-select is an InitPlan, evaluated once; SKIP LOCKED lets concurrent claimers
     * (threads or servers) pass over each other's rows instead of queueing on them. */
    [S_JOB_CLAIM] =
        {"job_claim",
         "WITH c AS (UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = $1,"
         " lease_token = gen_random_uuid(), lease_expires_at = now() + $2::int * interval '1"
         " millisecond', started_at = now() WHERE plan_id = (SELECT plan_id FROM jobs WHERE state"
         " = 'queued' AND run_at <= now() ORDER BY run_at, plan_id FOR UPDATE SKIP LOCKED LIMIT"
         " 1) RETURNING plan_id, lease_token, attempts),"
         " p AS (UPDATE plans SET status = 'running', version = version + 1, updated_at = now()"
         " FROM c WHERE plans.id = c.plan_id RETURNING plans.id)"
         " SELECT plan_id, lease_token, attempts FROM c"},
    [S_JOB_INPUT] = {"job_input", "SELECT input, options::text FROM plans WHERE id = $1"},
    [S_JOB_RENEW] = {"job_renew",
                     "UPDATE jobs SET lease_expires_at = now() + $2::int * interval '1 millisecond'"
                     " WHERE lease_token = ANY($1::uuid[]) AND state = 'running'"},
    [S_JOB_FINISH] =
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
         " version = version + 1, updated_at = now() FROM j WHERE plans.id = j.plan_id"
         " RETURNING plans.id, name, chip, source_format, status, error::text, NULL::text,"
         " " TS_CREATED ", " TS_UPDATED ", version, tensors, logical_bytes, padded_bytes,"
         " peak_bytes, lower_bound_bytes, capacity_bytes, fits)"
         /* The plan as plan_get reads it (the result column left NULL: the caller has
          * it), so a waiting request needs no second read. */
         " SELECT p.*, pg_notify('tpuplan_done', id) FROM p"},
    [S_JOB_RELEASE] =
        {"job_release",
         "WITH r AS (UPDATE jobs SET state = 'queued', attempts = greatest(attempts - 1, 0),"
         " lease_token = NULL, lease_expires_at = NULL, locked_by = NULL"
         " WHERE lease_token = ANY($1::uuid[]) AND state = 'running' RETURNING plan_id),"
         " p AS (UPDATE plans SET status = 'queued', version = version + 1, updated_at = now()"
         " FROM r WHERE plans.id = r.plan_id RETURNING 1)"
         " SELECT pg_notify('tpuplan_jobs', plan_id) FROM r"},
    [S_JOB_REAP] =
        {"job_reap",
         "WITH r AS (UPDATE jobs SET state = CASE WHEN attempts >= $1::int THEN 'failed' ELSE"
         " 'queued' END, finished_at = CASE WHEN attempts >= $1::int THEN now() END,"
         " completions = completions + CASE WHEN attempts >= $1::int THEN 1 ELSE 0 END,"
         " lease_token = NULL, lease_expires_at = NULL, locked_by = NULL"
         " WHERE plan_id IN (SELECT plan_id FROM jobs WHERE state = 'running' AND"
         " lease_expires_at < now() FOR UPDATE SKIP LOCKED) RETURNING plan_id, state),"
         " p AS (UPDATE plans SET status = r.state, version = version + 1, updated_at = now(),"
         " error = CASE WHEN r.state = 'failed' THEN $2::jsonb END FROM r"
         " WHERE plans.id = r.plan_id RETURNING 1)"
         " SELECT count(*) FILTER (WHERE state = 'queued') FROM r"},
};

struct store {
    PGconn *conn;
    bool prepared[S_COUNT];
    bool listening;
    unsigned backoff_ms;
    int64_t retry_at_ms; /* no reconnect attempt before this (monotonic) */
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
    case STORE_FORBIDDEN:
        return "forbidden";
    case STORE_UNAVAILABLE:
        return "unavailable";
    case STORE_INVALID:
        return "invalid";
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

struct store *store_open(const char *conninfo, char *errbuf, size_t cap)
{
    /* Our defaults come first: with expand_dbname the conninfo in "dbname" overrides them. */
    const char *const keys[] = {"connect_timeout", "application_name", "keepalives_idle", "dbname",
                                NULL};
    const char *const vals[] = {"5", "tpuplan", "30", conninfo, NULL};
    struct store *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(errbuf, cap, "out of memory");
        return NULL;
    }
    s->conn = PQconnectdbParams(keys, vals, 1);
    if (s->conn == NULL || PQstatus(s->conn) != CONNECTION_OK) {
        snprintf(errbuf, cap, "cannot connect to the database: %s",
                 s->conn ? PQerrorMessage(s->conn) : "out of memory");
        /* PostgreSQL messages end in a newline. */
        size_t n = strlen(errbuf);
        while (n > 0 && errbuf[n - 1] == '\n')
            errbuf[--n] = '\0';
        PQfinish(s->conn);
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
    free(s);
}

/* Re-establishes a dead connection, at most once per backoff interval. */
static int reconnect(struct store *s)
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
    conn_fresh(s);
    if (s->listening) {
        PGresult *r = PQexec(s->conn, "LISTEN tpuplan_jobs; LISTEN tpuplan_done");
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok)
            return STORE_UNAVAILABLE;
    }
    log_line("store", "reconnected to the database");
    return STORE_OK;
}

/* Maps a failed result to a store code: lost connections and a server shutting down or
 * starting up (SQLSTATE class 08, 57P01-57P03) are "unavailable". */
static int classify(struct store *s, const PGresult *r)
{
    const char *st = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (PQstatus(s->conn) == CONNECTION_BAD)
        return STORE_UNAVAILABLE;
    if (st != NULL && (strncmp(st, "08", 2) == 0 || strncmp(st, "57P0", 4) == 0))
        return STORE_UNAVAILABLE;
    return STORE_ERROR;
}

/*
 * Runs prepared statement id with text parameters (binary where fmts says so) and returns
 * the result when its status is PGRES_TUPLES_OK or PGRES_COMMAND_OK, else NULL with *rc set.
 * first: nothing has been sent in this transaction yet, so a dead connection may be reset
 * and the statement retried once.
 */
static PGresult *run(struct store *s, enum stmt id, int n, const char *const *vals, const int *lens,
                     const int *fmts, int result_fmt, bool first, int *rc)
{
    for (int attempt = 0;; attempt++) {
        PGresult *r = NULL;
        int code;
        if (PQstatus(s->conn) == CONNECTION_BAD && (code = reconnect(s)) != STORE_OK) {
            *rc = code;
            return NULL;
        }
        if (!s->prepared[id]) {
            r = PQprepare(s->conn, stmts[id].name, stmts[id].sql, 0, NULL);
            if (PQresultStatus(r) == PGRES_COMMAND_OK) {
                s->prepared[id] = true;
                PQclear(r);
                r = NULL;
            }
        }
        if (r == NULL)
            r = PQexecPrepared(s->conn, stmts[id].name, n, vals, lens, fmts, result_fmt);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
            *rc = STORE_OK;
            return r;
        }
        code = classify(s, r);
        if (code == STORE_UNAVAILABLE && first && attempt == 0 &&
            PQstatus(s->conn) == CONNECTION_BAD) {
            PQclear(r);
            s->retry_at_ms = 0; /* the server may be back: try at once */
            continue;
        }
        if (code != STORE_UNAVAILABLE)
            log_line("store", "%s: %s", stmts[id].name, PQresultErrorMessage(r));
        PQclear(r);
        *rc = code;
        return NULL;
    }
}

/* Transaction control and other constant statements without parameters. */
static int run_plain(struct store *s, const char *sql, bool first)
{
    for (int attempt = 0;; attempt++) {
        if (PQstatus(s->conn) == CONNECTION_BAD) {
            int code = reconnect(s);
            if (code != STORE_OK)
                return code;
        }
        PGresult *r = PQexec(s->conn, sql);
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            PQclear(r);
            return STORE_OK;
        }
        int code = classify(s, r);
        if (code == STORE_UNAVAILABLE && first && attempt == 0 &&
            PQstatus(s->conn) == CONNECTION_BAD) {
            PQclear(r);
            s->retry_at_ms = 0;
            continue;
        }
        if (code != STORE_UNAVAILABLE)
            log_line("store", "%s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
        return code;
    }
}

static void rollback(struct store *s)
{
    if (PQstatus(s->conn) == CONNECTION_OK && PQtransactionStatus(s->conn) != PQTRANS_IDLE)
        PQclear(PQexec(s->conn, "ROLLBACK"));
}

static char *dup_or_null(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : strdup(PQgetvalue(r, row, col));
}

static uint64_t get_u64(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoull(PQgetvalue(r, row, col), NULL, 10);
}

/* ---- migrations ---- */

static bool migration_name_ok(const char *n)
{
    size_t len = strlen(n);
    if (len < 10 || len > 128 || strcmp(n + len - 4, ".sql") != 0 || n[4] != '_')
        return false;
    for (size_t i = 0; i < len - 4; i++) {
        char c = n[i];
        bool ok = i < 4 ? (c >= '0' && c <= '9')
                        : ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                           (c >= 'A' && c <= 'Z') || c == '_' || c == '-');
        if (!ok)
            return false;
    }
    return true;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sorted migration versions (file names without ".sql") in dir; *n of them. */
static char **migrations_list(const char *dir, size_t *n, char *errbuf, size_t cap)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t cnt = 0;
    struct dirent *e;
    if (d == NULL) {
        snprintf(errbuf, cap, "%s: %s", dir, strerror(errno));
        return NULL;
    }
    v = calloc(MIGRATIONS_MAX, sizeof *v);
    if (v == NULL)
        goto fail;
    while ((e = readdir(d)) != NULL) {
        if (!migration_name_ok(e->d_name))
            continue;
        if (cnt == MIGRATIONS_MAX) {
            snprintf(errbuf, cap, "%s: more than %d migrations", dir, MIGRATIONS_MAX);
            goto fail;
        }
        v[cnt] = strndup(e->d_name, strlen(e->d_name) - 4);
        if (v[cnt] == NULL)
            goto fail;
        cnt++;
    }
    closedir(d);
    qsort(v, cnt, sizeof *v, cmp_str);
    *n = cnt;
    return v;
fail:
    if (errbuf[0] == '\0')
        snprintf(errbuf, cap, "out of memory");
    closedir(d);
    for (size_t i = 0; i < cnt; i++)
        free(v[i]);
    free(v);
    return NULL;
}

static void migrations_free(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static char *file_read(const char *path, char *errbuf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0;
    if (f == NULL) {
        snprintf(errbuf, cap, "%s: %s", path, strerror(errno));
        return NULL;
    }
    buf = malloc(MIGRATION_MAX_BYTES + 1);
    if (buf == NULL) {
        snprintf(errbuf, cap, "out of memory");
        goto out;
    }
    len = fread(buf, 1, MIGRATION_MAX_BYTES + 1, f);
    if (ferror(f) || len > MIGRATION_MAX_BYTES || memchr(buf, '\0', len) != NULL) {
        snprintf(errbuf, cap, "%s: unreadable, larger than %u bytes, or contains NUL", path,
                 MIGRATION_MAX_BYTES);
        free(buf);
        buf = NULL;
        goto out;
    }
    buf[len] = '\0';
out:
    fclose(f);
    return buf;
}

static int exec_params(struct store *s, const char *sql, int n, const char *const *vals,
                       PGresult **out, char *errbuf, size_t cap)
{
    PGresult *r = PQexecParams(s->conn, sql, n, NULL, vals, NULL, NULL, 0);
    ExecStatusType st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        int code = classify(s, r);
        snprintf(errbuf, cap, "%s", PQresultErrorMessage(r));
        PQclear(r);
        return code;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return STORE_OK;
}

int store_migrate(struct store *s, const char *dir, char *errbuf, size_t cap)
{
    char **v = NULL;
    size_t n = 0;
    int rc;
    bool locked = false;
    char msg[512] = "";
    errbuf[0] = '\0';
    v = migrations_list(dir, &n, errbuf, cap);
    if (v == NULL)
        return STORE_ERROR;
    if (PQstatus(s->conn) == CONNECTION_BAD && (rc = reconnect(s)) != STORE_OK) {
        snprintf(errbuf, cap, "database unavailable");
        goto out;
    }
    /* Session-level: released at unlock or when the connection dies. */
    rc = exec_params(s, "SELECT pg_advisory_lock(" MIGRATION_LOCK ")", 0, NULL, NULL, msg,
                     sizeof msg);
    if (rc != STORE_OK) {
        snprintf(errbuf, cap, "advisory lock: %s", msg);
        goto out;
    }
    locked = true;
    rc = exec_params(s,
                     "CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY,"
                     " applied_at timestamptz NOT NULL DEFAULT now())",
                     0, NULL, NULL, msg, sizeof msg);
    if (rc != STORE_OK) {
        snprintf(errbuf, cap, "schema_migrations: %s", msg);
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        PGresult *r = NULL;
        const char *ver[1] = {v[i]};
        char path[4096];
        char *sql;
        rc = exec_params(s, "SELECT 1 FROM schema_migrations WHERE version = $1", 1, ver, &r, msg,
                         sizeof msg);
        if (rc != STORE_OK) {
            snprintf(errbuf, cap, "%s: %s", v[i], msg);
            goto out;
        }
        bool applied = PQntuples(r) > 0;
        PQclear(r);
        if (applied)
            continue;
        snprintf(path, sizeof path, "%s/%s.sql", dir, v[i]);
        sql = file_read(path, errbuf, cap);
        if (sql == NULL) {
            rc = STORE_ERROR;
            goto out;
        }
        rc = exec_params(s, "BEGIN", 0, NULL, NULL, msg, sizeof msg);
        if (rc == STORE_OK) {
            /* The file is trusted text from the checkout, possibly several statements:
             * PQexec is the one call that runs a script. */
            r = PQexec(s->conn, sql);
            if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
                rc = classify(s, r);
                snprintf(msg, sizeof msg, "%s", PQresultErrorMessage(r));
            }
            PQclear(r);
        }
        free(sql);
        if (rc == STORE_OK)
            rc = exec_params(s, "INSERT INTO schema_migrations (version) VALUES ($1)", 1, ver, NULL,
                             msg, sizeof msg);
        if (rc == STORE_OK)
            rc = exec_params(s, "COMMIT", 0, NULL, NULL, msg, sizeof msg);
        if (rc != STORE_OK) {
            rollback(s);
            snprintf(errbuf, cap, "migration %s failed: %s", v[i], msg);
            goto out;
        }
        log_line("store", "applied migration %s", v[i]);
    }
    rc = STORE_OK;
out:
    if (locked && PQstatus(s->conn) == CONNECTION_OK)
        PQclear(PQexec(s->conn, "SELECT pg_advisory_unlock(" MIGRATION_LOCK ")"));
    {
        size_t len = strlen(errbuf);
        while (len > 0 && errbuf[len - 1] == '\n')
            errbuf[--len] = '\0';
    }
    migrations_free(v, n);
    return rc;
}

int store_ready(struct store *s, const char *dir)
{
    char err[256] = "";
    size_t n = 0;
    char **v = migrations_list(dir, &n, err, sizeof err);
    char *arr = NULL;
    size_t len = 3;
    int ready = 0;
    if (v == NULL)
        return 0;
    for (size_t i = 0; i < n; i++)
        len += strlen(v[i]) + 1;
    arr = malloc(len);
    if (arr == NULL)
        goto out;
    /* Versions match [0-9A-Za-z_-]+, so this array literal needs no quoting. */
    strcpy(arr, "{");
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            strcat(arr, ",");
        strcat(arr, v[i]);
    }
    strcat(arr, "}");
    if (PQstatus(s->conn) == CONNECTION_BAD && reconnect(s) != STORE_OK)
        goto out;
    for (int attempt = 0; attempt < 2; attempt++) {
        const char *vals[1] = {arr};
        PGresult *r = PQexecParams(s->conn,
                                   "SELECT count(*) FROM schema_migrations WHERE version ="
                                   " ANY($1::text[])",
                                   1, NULL, vals, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_TUPLES_OK) {
            ready = get_u64(r, 0, 0) == n;
            PQclear(r);
            break;
        }
        PQclear(r);
        if (PQstatus(s->conn) != CONNECTION_BAD || attempt > 0)
            break;
        s->retry_at_ms = 0;
        if (reconnect(s) != STORE_OK)
            break;
    }
out:
    free(arr);
    migrations_free(v, n);
    return ready;
}

/* ---- plans ---- */

/* True when JSON text contains the escape \u0000, which jsonb refuses (the whole document
 * with it). An escaped backslash followed by "u0000" is ordinary text and allowed. */
static bool json_has_nul(const char *j)
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

static void fmt_u64(char *buf, size_t cap, uint64_t v)
{
    snprintf(buf, cap, "%" PRIu64, v);
}

int store_plan_create(struct store *s, const struct store_new_plan *np, struct store_created *out)
{
    char id[IDS_ID_LEN + 1];
    char token[IDS_TOKEN_LEN + 1];
    char num[7][24];
    const struct plan_summary *sm = np->summary;
    PGresult *r = NULL;
    int rc;
    bool tx = np->idempotency_key != NULL;
    memset(out, 0, sizeof *out);
    /* The schema's CHECK, answered as a client error rather than a failed INSERT. */
    if (tx && (np->body_sha256_hex == NULL || np->idempotency_key[0] == '\0' ||
               strlen(np->idempotency_key) > STORE_KEY_MAX))
        return STORE_INVALID;
    if (np->options_json && json_has_nul(np->options_json))
        return STORE_INVALID;
    if (ids_new_id(id) < 0 || ids_new_token(token) < 0) {
        log_line("store", "getrandom failed: %s", strerror(errno));
        return STORE_ERROR;
    }
    if (tx) {
        const char *kv[3] = {np->idempotency_key, np->body_sha256_hex, id};
        rc = run_plain(s, "BEGIN", true);
        if (rc != STORE_OK)
            return rc;
        /* A concurrent insert of the same key makes this wait for that transaction, then
         * see its row: exactly one of two racing requests creates the plan. */
        r = run(s, S_KEY_INSERT, 3, kv, NULL, NULL, 0, false, &rc);
        if (r == NULL)
            goto fail;
        bool inserted = PQntuples(r) == 1;
        PQclear(r);
        if (!inserted) {
            r = run(s, S_KEY_LOOKUP, 2, kv, NULL, NULL, 0, false, &rc);
            if (r == NULL)
                goto fail;
            if (PQntuples(r) != 1) {
                rc = STORE_ERROR;
            } else if (strcmp(PQgetvalue(r, 0, 1), "t") != 0) {
                rc = STORE_CONFLICT;
            } else {
                snprintf(out->id, sizeof out->id, "%s", PQgetvalue(r, 0, 0));
                out->replayed = true;
                rc = STORE_OK;
            }
            PQclear(r);
            rollback(s);
            return rc;
        }
    }
    fmt_u64(num[0], sizeof num[0], sm ? sm->tensors : 0);
    fmt_u64(num[1], sizeof num[1], sm ? sm->logical_bytes : 0);
    fmt_u64(num[2], sizeof num[2], sm ? sm->padded_bytes : 0);
    fmt_u64(num[3], sizeof num[3], sm ? sm->peak_bytes : 0);
    fmt_u64(num[4], sizeof num[4], sm ? sm->lower_bound_bytes : 0);
    fmt_u64(num[5], sizeof num[5], sm ? sm->capacity_bytes : 0);
    snprintf(num[6], sizeof num[6], "%s", sm && sm->fits ? "true" : "false");
    {
        const char *vals[14] = {id,
                                np->name ? np->name : "",
                                np->chip ? np->chip : "",
                                np->source_format ? np->source_format : "",
                                np->input ? np->input : "",
                                np->options_json ? np->options_json : "{}",
                                num[0],
                                num[1],
                                num[2],
                                num[3],
                                num[4],
                                num[5],
                                num[6],
                                token};
        int lens[14] = {0};
        int fmts[14] = {0};
        if (np->input_len > INT32_MAX) {
            rc = STORE_INVALID;
            goto fail;
        }
        lens[4] = (int)np->input_len;
        fmts[4] = 1; /* bytea, binary: NULs and all */
        r = run(s, S_PLAN_INSERT, 14, vals, lens, fmts, 0, !tx, &rc);
        if (r == NULL)
            goto fail;
        PQclear(r);
    }
    if (tx && (rc = run_plain(s, "COMMIT", false)) != STORE_OK)
        goto fail;
    memcpy(out->id, id, sizeof out->id);
    memcpy(out->manage_token, token, sizeof out->manage_token);
    return STORE_OK;
fail:
    rollback(s);
    return rc;
}

void store_plan_free(struct store_plan *p)
{
    if (p == NULL)
        return;
    free(p->name);
    free(p->chip);
    free(p->source_format);
    free(p->status);
    free(p->error_json);
    free(p->result_json);
    free(p->created_at);
    free(p->updated_at);
    memset(p, 0, sizeof *p);
}

/* Row 0 of a plan_get-shaped result (also job_finish's RETURNING) into *out. */
static int plan_from_row(const PGresult *r, struct store_plan *out)
{
    snprintf(out->id, sizeof out->id, "%s", PQgetvalue(r, 0, 0));
    out->name = dup_or_null(r, 0, 1);
    out->chip = dup_or_null(r, 0, 2);
    out->source_format = dup_or_null(r, 0, 3);
    out->status = dup_or_null(r, 0, 4);
    out->error_json = dup_or_null(r, 0, 5);
    out->result_json = dup_or_null(r, 0, 6);
    out->created_at = dup_or_null(r, 0, 7);
    out->updated_at = dup_or_null(r, 0, 8);
    out->version = (int64_t)get_u64(r, 0, 9);
    snprintf(out->summary.name, sizeof out->summary.name, "%s", PQgetvalue(r, 0, 1));
    snprintf(out->summary.chip, sizeof out->summary.chip, "%s", PQgetvalue(r, 0, 2));
    snprintf(out->summary.source_format, sizeof out->summary.source_format, "%s",
             PQgetvalue(r, 0, 3));
    out->summary.tensors = (size_t)get_u64(r, 0, 10);
    out->summary.logical_bytes = get_u64(r, 0, 11);
    out->summary.padded_bytes = get_u64(r, 0, 12);
    out->summary.peak_bytes = get_u64(r, 0, 13);
    out->summary.lower_bound_bytes = get_u64(r, 0, 14);
    out->summary.capacity_bytes = get_u64(r, 0, 15);
    out->summary.fits = strcmp(PQgetvalue(r, 0, 16), "t") == 0;
    bool lost =
        (!PQgetisnull(r, 0, 5) && !out->error_json) || (!PQgetisnull(r, 0, 6) && !out->result_json);
    if (lost || !out->name || !out->chip || !out->source_format || !out->status ||
        !out->created_at || !out->updated_at) {
        store_plan_free(out);
        return STORE_ERROR;
    }
    return STORE_OK;
}

int store_plan_copy(const struct store_plan *src, struct store_plan *dst)
{
    char **const d[] = {&dst->name,       &dst->chip,        &dst->source_format, &dst->status,
                        &dst->error_json, &dst->result_json, &dst->created_at,    &dst->updated_at};
    const char *const sv[] = {src->name,       src->chip,       src->source_format,
                              src->status,     src->error_json, src->result_json,
                              src->created_at, src->updated_at};

    *dst = *src;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        *d[i] = NULL;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (sv[i] != NULL && (*d[i] = strdup(sv[i])) == NULL) {
            store_plan_free(dst);
            return STORE_ERROR;
        }
    return STORE_OK;
}

int store_plan_get(struct store *s, const char *id, struct store_plan *out)
{
    return store_plan_get_view(s, id, STORE_VIEW_FULL, out);
}

int store_plan_get_view(struct store *s, const char *id, enum store_view view,
                        struct store_plan *out)
{
    char v[16];
    const char *vals[2] = {id, v};
    int rc;
    PGresult *r;
    memset(out, 0, sizeof *out);
    if (id == NULL || !ids_valid_id(id))
        return STORE_NOTFOUND;
    snprintf(v, sizeof v, "%d", (int)view);
    r = run(s, S_PLAN_GET, 2, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND;
    }
    rc = plan_from_row(r, out);
    PQclear(r);
    return rc;
}

/* The cursor is base64url("<created_at epoch microseconds>.<id>"). */
static int cursor_parse(const char *c, char *micros, size_t mcap, char *id)
{
    unsigned char raw[64];
    long n = ids_b64url_decode(c, strlen(c), raw, sizeof raw - 1);
    char *dot;
    if (n <= 0)
        return -1;
    raw[n] = '\0';
    dot = strchr((char *)raw, '.');
    if (dot == NULL || (size_t)(dot - (char *)raw) >= mcap || dot == (char *)raw)
        return -1;
    for (char *p = (char *)raw; p < dot; p++)
        if ((*p < '0' || *p > '9') && !(p == (char *)raw && *p == '-'))
            return -1;
    if (!ids_valid_id(dot + 1))
        return -1;
    memcpy(micros, raw, (size_t)(dot - (char *)raw));
    micros[dot - (char *)raw] = '\0';
    memcpy(id, dot + 1, IDS_ID_LEN + 1);
    return 0;
}

/* "%" + name with % _ \ escaped + "%", for ILIKE ... ESCAPE '\'. */
static char *like_pattern(const char *s)
{
    size_t n = strlen(s);
    char *p = malloc(2 * n + 3);
    size_t o = 0;
    if (p == NULL)
        return NULL;
    p[o++] = '%';
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' || s[i] == '_' || s[i] == '\\')
            p[o++] = '\\';
        p[o++] = s[i];
    }
    p[o++] = '%';
    p[o] = '\0';
    return p;
}

int store_plan_list(struct store *s, int limit, const char *cursor, const char *name_filter,
                    char **items_json, char **next_cursor)
{
    char lim[16];
    char micros[24] = "";
    char cid[IDS_ID_LEN + 1] = "";
    char *pattern = NULL;
    PGresult *r = NULL;
    int rc = STORE_OK;
    *items_json = NULL;
    *next_cursor = NULL;
    if (limit < 1 || limit > 1000)
        return STORE_INVALID;
    if (cursor != NULL && cursor_parse(cursor, micros, sizeof micros, cid) < 0)
        return STORE_INVALID;
    if (name_filter != NULL && name_filter[0] != '\0' &&
        (pattern = like_pattern(name_filter)) == NULL)
        return STORE_ERROR;
    snprintf(lim, sizeof lim, "%d", limit);
    {
        const char *vals[4] = {lim, cursor ? micros : NULL, cursor ? cid : NULL, pattern};
        r = run(s, S_PLAN_LIST, 4, vals, NULL, NULL, 0, true, &rc);
    }
    free(pattern);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        rc = STORE_ERROR;
        goto out;
    }
    *items_json = strdup(PQgetvalue(r, 0, 0));
    if (*items_json == NULL) {
        rc = STORE_ERROR;
        goto out;
    }
    if (!PQgetisnull(r, 0, 1)) {
        const char *raw = PQgetvalue(r, 0, 1);
        size_t n = strlen(raw);
        *next_cursor = malloc(4 * (n / 3 + 1) + 1);
        if (*next_cursor == NULL) {
            free(*items_json);
            *items_json = NULL;
            rc = STORE_ERROR;
            goto out;
        }
        ids_b64url_encode((const unsigned char *)raw, n, *next_cursor);
    }
out:
    PQclear(r);
    return rc;
}

int store_plan_delete(struct store *s, const char *id, const char *manage_token)
{
    const char *vals[2] = {id, manage_token ? manage_token : ""};
    int rc;
    PGresult *r;
    if (id == NULL || !ids_valid_id(id))
        return STORE_NOTFOUND;
    r = run(s, S_PLAN_DELETE, 2, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    bool deleted = PQntuples(r) == 1;
    PQclear(r);
    if (deleted)
        return STORE_OK;
    r = run(s, S_PLAN_EXISTS, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_FORBIDDEN : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

int store_job_counts(struct store *s, struct store_job_counts *out)
{
    int rc;
    PGresult *r = run(s, S_JOB_COUNTS, 0, NULL, NULL, NULL, 0, true, &rc);
    memset(out, 0, sizeof *out);
    if (r == NULL)
        return rc;
    out->queued = (int64_t)get_u64(r, 0, 0);
    out->running = (int64_t)get_u64(r, 0, 1);
    out->done = (int64_t)get_u64(r, 0, 2);
    out->failed = (int64_t)get_u64(r, 0, 3);
    PQclear(r);
    return STORE_OK;
}

/* ---- jobs ---- */

void store_job_free(struct store_job *j)
{
    if (j == NULL)
        return;
    free(j->input);
    free(j->options_json);
    memset(j, 0, sizeof *j);
}

int store_job_claim(struct store *s, const char *worker, int lease_ms, struct store_job *out)
{
    char lease[16];
    int rc;
    PGresult *r;
    memset(out, 0, sizeof *out);
    snprintf(lease, sizeof lease, "%d", lease_ms);
    {
        const char *vals[2] = {worker, lease};
        r = run(s, S_JOB_CLAIM, 2, vals, NULL, NULL, 0, true, &rc);
    }
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND;
    }
    snprintf(out->plan_id, sizeof out->plan_id, "%s", PQgetvalue(r, 0, 0));
    snprintf(out->lease_token, sizeof out->lease_token, "%s", PQgetvalue(r, 0, 1));
    out->attempts = atoi(PQgetvalue(r, 0, 2));
    PQclear(r);
    /* Binary results: the input arrives as raw bytes, not as hex text twice its size. If
     * this fails the claim stands and the lease expires, so the job is not lost. */
    {
        const char *vals[1] = {out->plan_id};
        r = run(s, S_JOB_INPUT, 1, vals, NULL, NULL, 1, true, &rc);
    }
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND; /* deleted between the two statements */
    }
    {
        size_t n = (size_t)PQgetlength(r, 0, 0);
        size_t on = (size_t)PQgetlength(r, 0, 1);
        out->input = malloc(n + 1);
        out->options_json = malloc(on + 1);
        if (out->input == NULL || out->options_json == NULL) {
            PQclear(r);
            store_job_free(out);
            return STORE_ERROR;
        }
        memcpy(out->input, PQgetvalue(r, 0, 0), n);
        out->input[n] = '\0';
        out->input_len = n;
        memcpy(out->options_json, PQgetvalue(r, 0, 1), on);
        out->options_json[on] = '\0';
    }
    PQclear(r);
    return STORE_OK;
}

/* "{tok,tok,...}": uuid text needs no quoting in an array literal; anything else is
 * refused so the literal cannot be malformed. */
static char *uuid_array(const char *const *tokens, size_t n)
{
    char *a = malloc(n * (STORE_LEASE_LEN + 1) + 3);
    size_t o = 0;
    if (a == NULL)
        return NULL;
    a[o++] = '{';
    for (size_t i = 0; i < n; i++) {
        const char *t = tokens[i];
        if (strlen(t) != STORE_LEASE_LEN || strspn(t, "0123456789abcdef-") != STORE_LEASE_LEN) {
            free(a);
            return NULL;
        }
        if (i > 0)
            a[o++] = ',';
        memcpy(a + o, t, STORE_LEASE_LEN);
        o += STORE_LEASE_LEN;
    }
    a[o++] = '}';
    a[o] = '\0';
    return a;
}

int store_job_renew(struct store *s, const char *const *tokens, size_t n, int lease_ms,
                    size_t *renewed)
{
    char lease[16];
    char *arr;
    int rc;
    PGresult *r;
    if (renewed)
        *renewed = 0;
    if (n == 0)
        return STORE_OK;
    if ((arr = uuid_array(tokens, n)) == NULL)
        return STORE_INVALID;
    snprintf(lease, sizeof lease, "%d", lease_ms);
    {
        const char *vals[2] = {arr, lease};
        r = run(s, S_JOB_RENEW, 2, vals, NULL, NULL, 0, true, &rc);
    }
    free(arr);
    if (r == NULL)
        return rc;
    if (renewed)
        *renewed = (size_t)strtoul(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    return STORE_OK;
}

int store_job_finish(struct store *s, const struct store_job *j, const char *result_json,
                     const struct plan_views *views, const char *error_json,
                     const struct plan_summary *sm, struct store_plan *done)
{
    char num[7][24];
    const char *vals[14] = {j->plan_id, j->lease_token, result_json ? "done" : "failed",
                            result_json, error_json};
    int rc;
    PGresult *r;
    if (done != NULL)
        memset(done, 0, sizeof *done);
    /* The result and its views are json (any valid text, \u0000 included); the error is
     * jsonb. */
    if (error_json && json_has_nul(error_json))
        return STORE_INVALID;
    if (result_json != NULL && views != NULL) {
        vals[12] = views->summary;
        vals[13] = views->layout;
    }
    if (sm != NULL) {
        fmt_u64(num[0], sizeof num[0], sm->tensors);
        fmt_u64(num[1], sizeof num[1], sm->logical_bytes);
        fmt_u64(num[2], sizeof num[2], sm->padded_bytes);
        fmt_u64(num[3], sizeof num[3], sm->peak_bytes);
        fmt_u64(num[4], sizeof num[4], sm->lower_bound_bytes);
        fmt_u64(num[5], sizeof num[5], sm->capacity_bytes);
        snprintf(num[6], sizeof num[6], "%s", sm->fits ? "true" : "false");
        for (int i = 0; i < 7; i++)
            vals[5 + i] = num[i];
    }
    /* Not retried on a dead connection: the commit may have happened. The caller retries
     * with the same lease token, which is a no-op (NOTFOUND) if it did. */
    r = run(s, S_JOB_FINISH, 14, vals, NULL, NULL, 0, false, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_OK : STORE_NOTFOUND;
    /* The commit happened: a plan that cannot be read back only costs a shortcut. */
    if (rc == STORE_OK && done != NULL && plan_from_row(r, done) != STORE_OK)
        memset(done, 0, sizeof *done);
    PQclear(r);
    return rc;
}

int store_job_release(struct store *s, const char *const *tokens, size_t n)
{
    char *arr;
    int rc;
    PGresult *r;
    if (n == 0)
        return STORE_OK;
    if ((arr = uuid_array(tokens, n)) == NULL)
        return STORE_INVALID;
    {
        const char *vals[1] = {arr};
        r = run(s, S_JOB_RELEASE, 1, vals, NULL, NULL, 0, true, &rc);
    }
    free(arr);
    if (r == NULL)
        return rc;
    PQclear(r);
    return STORE_OK;
}

int store_job_reap(struct store *s, int max_attempts, const char *error_json, int *requeued)
{
    char att[16];
    int rc;
    PGresult *r;
    snprintf(att, sizeof att, "%d", max_attempts);
    {
        const char *vals[2] = {att, error_json ? error_json : "{}"};
        r = run(s, S_JOB_REAP, 2, vals, NULL, NULL, 0, true, &rc);
    }
    if (r == NULL)
        return rc;
    if (requeued)
        *requeued = (int)get_u64(r, 0, 0);
    PQclear(r);
    return STORE_OK;
}

/* ---- notifications ---- */

int store_listen(struct store *s)
{
    s->listening = true;
    return run_plain(s, "LISTEN tpuplan_jobs; LISTEN tpuplan_done", true);
}

int store_wait_notify(struct store *s, int timeout_ms,
                      void (*cb)(const char *channel, const char *payload, void *arg), void *arg)
{
    int count = 0;
    PGnotify *n;
    if (PQstatus(s->conn) == CONNECTION_BAD && reconnect(s) != STORE_OK)
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
