/*
 * store_migrate.c - schema migrations (migrations/NNNN_*.sql) and the readiness check.
 *
 * Unlike the rest of the store these statements are not prepared: they run once per
 * process (or per /readyz), and a migration file is a script PQexec runs as a whole.
 */
#include "service/store.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/log.h"
#include "service/store_int.h"

#define MIGRATION_MAX_BYTES (1u << 20)
#define MIGRATIONS_MAX      1000
/* pg_advisory_lock key for migrations: "tpuplan" in ASCII. */
#define MIGRATION_LOCK "32772479919104366"

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
        int code = store_classify(s, r);
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
    if (PQstatus(s->conn) == CONNECTION_BAD && (rc = store_reconnect(s)) != STORE_OK) {
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
                rc = store_classify(s, r);
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
            store_rollback(s);
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
    if (PQstatus(s->conn) == CONNECTION_BAD && store_reconnect(s) != STORE_OK)
        goto out;
    for (int attempt = 0; attempt < 2; attempt++) {
        const char *vals[1] = {arr};
        PGresult *r = PQexecParams(s->conn,
                                   "SELECT count(*) FROM schema_migrations WHERE version ="
                                   " ANY($1::text[])",
                                   1, NULL, vals, NULL, NULL, 0);
        if (PQresultStatus(r) == PGRES_TUPLES_OK) {
            ready = store_col_u64(r, 0, 0) == n;
            PQclear(r);
            break;
        }
        PQclear(r);
        if (PQstatus(s->conn) != CONNECTION_BAD || attempt > 0)
            break;
        s->retry_at_ms = 0;
        if (store_reconnect(s) != STORE_OK)
            break;
    }
out:
    free(arr);
    migrations_free(v, n);
    return ready;
}
