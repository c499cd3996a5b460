/*
 * store_keys.c - API keys and retention in PostgreSQL: create, find by prefix, list, revoke
 * keys; the expiry sweep (store.h).
 */
#include "service/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/ids.h"
#include "service/store_int.h"

int store_apikey_create(struct store *s, const char *name, const char *prefix,
                        const unsigned char *hash)
{
    const char *vals[3] = {name, prefix, (const char *)hash};
    const int lens[3] = {0, 0, APIKEY_HASH_LEN};
    const int fmts[3] = {0, 0, 1};
    PGresult *r;
    int rc;

    if (!apikey_valid_name(name))
        return STORE_INVALID;
    r = store_run(s, STORE_STMT_APIKEY_INSERT, 3, vals, lens, fmts, 0, true, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_OK : STORE_CONFLICT;
    PQclear(r);
    return rc;
}

int store_apikey_find(struct store *s, const char *prefix, struct store_apikey *out)
{
    const char *vals[1] = {prefix};
    PGresult *r;
    int rc;

    memset(out, 0, sizeof(*out));
    r = store_run(s, STORE_STMT_APIKEY_FIND, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    rc = STORE_NOTFOUND;
    if (PQntuples(r) != 1)
        goto out;
    rc = STORE_ERROR;
    if (store_col_hex(r, 0, 2, out->hash, APIKEY_HASH_LEN) != 0)
        goto out;
    out->id = (int64_t)store_col_u64(r, 0, 0);
    snprintf(out->name, sizeof(out->name), "%s", PQgetvalue(r, 0, 1));
    snprintf(out->prefix, sizeof(out->prefix), "%s", prefix);
    out->revoked = strcmp(PQgetvalue(r, 0, 3), "t") == 0;
    rc = STORE_OK;
out:
    PQclear(r);
    return rc;
}

int store_apikey_list(struct store *s, struct store_apikey **out, size_t *n)
{
    PGresult *r;
    int rc;
    size_t rows;

    *out = NULL;
    *n = 0;
    r = store_run(s, STORE_STMT_APIKEY_LIST, 0, NULL, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    rows = (size_t)PQntuples(r);
    if (rows > 0 && (*out = calloc(rows, sizeof(**out))) == NULL) {
        PQclear(r);
        return STORE_ERROR;
    }
    for (size_t i = 0; i < rows; i++) {
        struct store_apikey *k = &(*out)[i];
        snprintf(k->name, sizeof(k->name), "%s", PQgetvalue(r, (int)i, 0));
        snprintf(k->prefix, sizeof(k->prefix), "%s", PQgetvalue(r, (int)i, 1));
        snprintf(k->created_at, sizeof(k->created_at), "%s", PQgetvalue(r, (int)i, 2));
        snprintf(k->revoked_at, sizeof(k->revoked_at), "%s", PQgetvalue(r, (int)i, 3));
        k->revoked = !PQgetisnull(r, (int)i, 3);
        k->plans = (int64_t)store_col_u64(r, (int)i, 4);
    }
    *n = rows;
    PQclear(r);
    return STORE_OK;
}

int store_apikey_revoke(struct store *s, const char *name)
{
    const char *vals[1] = {name};
    PGresult *r;
    int rc;

    r = store_run(s, STORE_STMT_APIKEY_REVOKE, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

/* Runs a sweep statement (one batch, its own transaction): how many rows it removed. */
static int sweep_batch(struct store *s, enum store_stmt id, int batch, long *n)
{
    char b[16];
    const char *vals[1] = {b};
    PGresult *r;
    int rc;

    snprintf(b, sizeof(b), "%d", batch);
    r = store_run(s, id, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    *n = PQntuples(r) == 1 ? (long)store_col_u64(r, 0, 0) : 0;
    PQclear(r);
    return STORE_OK;
}

int store_plan_expire(struct store *s, int batch, int max_batches, long *expired)
{
    long n = 0;
    int rc = STORE_OK;

    *expired = 0;
    for (int i = 0; i < max_batches; i++) {
        rc = sweep_batch(s, STORE_STMT_PLAN_EXPIRE, batch, &n);
        if (rc != STORE_OK)
            return rc;
        *expired += n;
        if (n < batch)
            break;
    }
    for (int i = 0; i < max_batches; i++) {
        rc = sweep_batch(s, STORE_STMT_TOMBSTONE_PURGE, batch, &n);
        if (rc != STORE_OK || n < batch)
            break;
    }
    return rc;
}
