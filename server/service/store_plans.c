/*
 * store_plans.c - plans and idempotency keys: create, read (whole or a view), list, copy,
 * delete.
 */
#include "service/store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/text.h"
#include "service/ids.h"
#include "service/log.h"
#include "service/sha256.h"
#include "service/store_int.h"

/* In a new transaction, claims np's idempotency key for plan id: STORE_OK with the
 * transaction left open when the key is new (the plan is to be inserted); otherwise the
 * transaction is rolled back and *done set: STORE_OK with out->replayed (the key's plan),
 * STORE_CONFLICT (another body), or a failure. */
static int key_claim(struct store *s, const struct store_new_plan *np, const char *id,
                     struct store_created *out, bool *done)
{
    char scoped[65];
    const char *kv[3] = {scoped, np->body_sha256_hex, id};
    const char *scope = np->idempotency_scope != NULL ? np->idempotency_scope : "";
    struct sha256 h;
    PGresult *r;
    int rc;

    /* The row's key is the digest of scope and key: a key names a plan only within its
     * submitter's scope, and neither reaches SQL as sent. */
    sha256_init(&h);
    sha256_update(&h, scope, strlen(scope) + 1); /* its NUL separates the two */
    sha256_update(&h, np->idempotency_key, strlen(np->idempotency_key));
    sha256_hex(&h, scoped);
    rc = store_run_plain(s, "BEGIN", true);

    *done = true;
    if (rc != STORE_OK)
        return rc;
    /* A concurrent insert of the same key makes this wait for that transaction, then
     * see its row: exactly one of two racing requests creates the plan. */
    r = store_run(s, STORE_STMT_KEY_INSERT, 3, kv, NULL, NULL, 0, false, &rc);
    if (r == NULL)
        goto out;
    *done = PQntuples(r) != 1;
    PQclear(r);
    if (!*done)
        return STORE_OK;
    r = store_run(s, STORE_STMT_KEY_LOOKUP, 2, kv, NULL, NULL, 0, false, &rc);
    if (r == NULL)
        goto out;
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
out:
    store_rollback(s);
    return rc;
}

/* Runs plan_insert for np as plan id with its manage token's digest (first: as for
 * store_run). STORE_OK or a failure. */
static int plan_insert(struct store *s, const struct store_new_plan *np, const char *id,
                       const unsigned char *token_hash, bool first)
{
    const struct plan_summary *sm = np->summary;
    char num[9][24];
    PGresult *r;
    int rc;

    store_fmt_u64(num[0], sizeof num[0], sm ? sm->tensors : 0);
    store_fmt_u64(num[1], sizeof num[1], sm ? sm->logical_bytes : 0);
    store_fmt_u64(num[2], sizeof num[2], sm ? sm->padded_bytes : 0);
    store_fmt_u64(num[3], sizeof num[3], sm ? sm->peak_bytes : 0);
    store_fmt_u64(num[4], sizeof num[4], sm ? sm->lower_bound_bytes : 0);
    store_fmt_u64(num[5], sizeof num[5], sm ? sm->capacity_bytes : 0);
    snprintf(num[6], sizeof num[6], "%s", sm && sm->fits ? "true" : "false");
    snprintf(num[7], sizeof num[7], "%lld", (long long)np->api_key_id);
    store_fmt_u64(num[8], sizeof num[8], np->retain_s);
    /* a what-if's input and options are its parent's, copied in SQL (store.c) */
    const bool whatif = np->whatif_json != NULL;
    const char *vals[19] = {id,
                            np->name ? np->name : "",
                            np->chip ? np->chip : "",
                            np->source_format ? np->source_format : "",
                            whatif      ? NULL
                            : np->input ? np->input
                                        : "",
                            whatif             ? NULL
                            : np->options_json ? np->options_json
                                               : "{}",
                            num[0],
                            num[1],
                            num[2],
                            num[3],
                            num[4],
                            num[5],
                            num[6],
                            (const char *)token_hash,
                            num[7],
                            num[8],
                            np->parent_id ? np->parent_id : "",
                            (const char *)np->client_hash,
                            np->whatif_json};
    /* bytea in binary: the input (NULs and all) and the digests */
    const int lens[19] = {[4] = (int)np->input_len, [13] = SHA256_LEN, [17] = SHA256_LEN};
    const int fmts[19] = {[4] = 1, [13] = 1, [17] = 1};
    r = store_run(s, STORE_STMT_PLAN_INSERT, 19, vals, lens, fmts, 0, first, &rc);
    if (r == NULL)
        return rc;
    /* a what-if whose parent is gone (or was deleted first) inserts nothing */
    rc = PQntuples(r) == 1 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

int store_plan_create(struct store *s, const struct store_new_plan *np, struct store_created *out)
{
    char id[IDS_ID_LEN + 1];
    char token[IDS_TOKEN_LEN + 1];
    unsigned char token_hash[SHA256_LEN];
    int rc;
    bool tx = np->idempotency_key != NULL, done = false;
    memset(out, 0, sizeof *out);
    /* The schema's CHECK, answered as a client error rather than a failed INSERT. */
    if (tx && (np->body_sha256_hex == NULL || np->idempotency_key[0] == '\0' ||
               strlen(np->idempotency_key) > STORE_KEY_MAX ||
               !text_utf8_valid(np->idempotency_key, strlen(np->idempotency_key))))
        return STORE_INVALID;
    if ((np->options_json && store_json_has_nul(np->options_json)) || np->input_len > INT32_MAX)
        return STORE_INVALID;
    if (ids_new_id(id) < 0 || ids_new_token(token) < 0) {
        log_line("store", "getrandom failed: %s", strerror(errno));
        return STORE_ERROR;
    }
    /* Only the digest is sent: the token never reaches SQL, so no statement log holds it. */
    sha256_of(token, strlen(token), token_hash);
    if (tx && ((rc = key_claim(s, np, id, out, &done)) != STORE_OK || done))
        return rc;
    if ((rc = plan_insert(s, np, id, token_hash, !tx)) != STORE_OK)
        goto fail;
    if (tx && (rc = store_run_plain(s, "COMMIT", false)) != STORE_OK)
        goto fail;
    memcpy(out->id, id, sizeof out->id);
    memcpy(out->manage_token, token, sizeof out->manage_token);
    return STORE_OK;
fail:
    store_rollback(s);
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
    if (p->res != NULL)
        PQclear(p->res);
    else
        free(p->result_json);
    free(p->created_at);
    free(p->updated_at);
    free(p->expires_at);
    free(p->whatif_json);
    memset(p, 0, sizeof *p);
}

/* Row 0 of a plan_get-shaped result (also job_finish's RETURNING) into *out. */
int store_plan_from_row(PGresult *r, bool keep, struct store_plan *out)
{
    if (keep) {
        out->res = r;
        out->result_json = PQgetisnull(r, 0, 6) ? NULL : PQgetvalue(r, 0, 6);
    } else {
        out->result_json = store_col_str(r, 0, 6);
    }
    snprintf(out->id, sizeof out->id, "%s", PQgetvalue(r, 0, 0));
    out->name = store_col_str(r, 0, 1);
    out->chip = store_col_str(r, 0, 2);
    out->source_format = store_col_str(r, 0, 3);
    out->status = store_col_str(r, 0, 4);
    out->error_json = store_col_str(r, 0, 5);
    out->created_at = store_col_str(r, 0, 7);
    out->updated_at = store_col_str(r, 0, 8);
    out->version = (int64_t)store_col_u64(r, 0, 9);
    if (PQnfields(r) > 19 && !PQgetisnull(r, 0, 19))
        snprintf(out->parent_id, sizeof out->parent_id, "%s", PQgetvalue(r, 0, 19));
    out->whatif_json = PQnfields(r) > 20 ? store_col_str(r, 0, 20) : NULL;
    snprintf(out->summary.name, sizeof out->summary.name, "%s", PQgetvalue(r, 0, 1));
    snprintf(out->summary.chip, sizeof out->summary.chip, "%s", PQgetvalue(r, 0, 2));
    snprintf(out->summary.source_format, sizeof out->summary.source_format, "%s",
             PQgetvalue(r, 0, 3));
    out->summary.tensors = (size_t)store_col_u64(r, 0, 10);
    out->summary.logical_bytes = store_col_u64(r, 0, 11);
    out->summary.padded_bytes = store_col_u64(r, 0, 12);
    out->summary.peak_bytes = store_col_u64(r, 0, 13);
    out->summary.lower_bound_bytes = store_col_u64(r, 0, 14);
    out->summary.capacity_bytes = store_col_u64(r, 0, 15);
    out->summary.fits = strcmp(PQgetvalue(r, 0, 16), "t") == 0;
    out->expires_at = store_col_str(r, 0, 17);
    out->expires_in_s = PQgetisnull(r, 0, 18) ? HUGE_VAL : strtod(PQgetvalue(r, 0, 18), NULL);
    bool lost = (!PQgetisnull(r, 0, 5) && !out->error_json) ||
                (!PQgetisnull(r, 0, 6) && !out->result_json) ||
                (!PQgetisnull(r, 0, 17) && !out->expires_at) ||
                (PQnfields(r) > 20 && !PQgetisnull(r, 0, 20) && !out->whatif_json);
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
                        &dst->error_json, &dst->result_json, &dst->created_at,    &dst->updated_at,
                        &dst->expires_at, &dst->whatif_json};
    const char *const sv[] = {
        src->name,        src->chip,       src->source_format, src->status,     src->error_json,
        src->result_json, src->created_at, src->updated_at,    src->expires_at, src->whatif_json};

    *dst = *src;
    dst->res = NULL;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        *d[i] = NULL;
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (sv[i] != NULL && (*d[i] = strdup(sv[i])) == NULL) {
            store_plan_free(dst);
            return STORE_ERROR;
        }
    return STORE_OK;
}

/* A plan id that no row answers: swept already (its id is kept a while, so the answer is
 * 410, not 404) or never there. */
static int gone_or_missing(struct store *s, const char *id)
{
    const char *vals[1] = {id};
    int rc;
    PGresult *r = store_run(s, STORE_STMT_PLAN_GONE, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_GONE : STORE_NOTFOUND;
    PQclear(r);
    return rc;
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
    r = store_run(s, STORE_STMT_PLAN_GET, 2, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return gone_or_missing(s, id);
    }
    /* Expired but not swept yet: gone all the same. */
    if (!PQgetisnull(r, 0, 18) && strtod(PQgetvalue(r, 0, 18), NULL) <= 0) {
        PQclear(r);
        return STORE_GONE;
    }
    /* the result kept where libpq read it: a whole plan is hundreds of MB at 1M tensors */
    return store_plan_from_row(r, true, out);
}

/* The latest created_at a cursor may name, in epoch microseconds: 9999-12-31T23:59:59.999999Z.
 * A cursor past it (or before 1970) was not made here, and in SQL it would overflow the
 * interval arithmetic: a 400, not a failed statement. */
#define CURSOR_MICROS_MAX 253402300799999999LL

/* The cursor is base64url("<created_at epoch microseconds>.<id>"). */
static int cursor_parse(const char *c, char *micros, size_t mcap, char *id)
{
    unsigned char raw[64];
    long n = ids_b64url_decode(c, strlen(c), raw, sizeof raw - 1);
    char *dot;
    long long v = 0;
    if (n <= 0)
        return -1;
    raw[n] = '\0';
    dot = strchr((char *)raw, '.');
    if (dot == NULL || (size_t)(dot - (char *)raw) >= mcap || dot == (char *)raw)
        return -1;
    for (char *p = (char *)raw; p < dot; p++) {
        if (*p < '0' || *p > '9' || v > (CURSOR_MICROS_MAX - (*p - '0')) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
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

int store_plan_list(struct store *s, const struct store_list_owner *owner, int limit,
                    const char *cursor, const char *name_filter, char **items_json,
                    char **next_cursor)
{
    char lim[16], kid[24];
    char micros[24] = "";
    char cid[IDS_ID_LEN + 1] = "";
    char *pattern = NULL;
    PGresult *r = NULL;
    int rc = STORE_OK;
    *items_json = NULL;
    *next_cursor = NULL;
    if (limit < 1 || limit > 1000)
        return STORE_INVALID;
    if ((cursor != NULL && cursor_parse(cursor, micros, sizeof micros, cid) < 0) ||
        (name_filter != NULL && !text_utf8_valid(name_filter, strlen(name_filter))))
        return STORE_INVALID;
    if (name_filter != NULL && name_filter[0] != '\0' &&
        (pattern = like_pattern(name_filter)) == NULL)
        return STORE_ERROR;
    snprintf(lim, sizeof lim, "%d", limit);
    snprintf(kid, sizeof kid, "%lld", (long long)owner->key_id);
    {
        const char *vals[7] = {lim,
                               cursor ? micros : NULL,
                               cursor ? cid : NULL,
                               pattern,
                               owner->all ? "true" : "false",
                               owner->key_id != 0 ? kid : NULL,
                               (const char *)owner->client_hash};
        const int lens[7] = {[6] = SHA256_LEN};
        const int fmts[7] = {[6] = 1};
        r = store_run(s, STORE_STMT_PLAN_LIST, 7, vals, lens, fmts, 0, true, &rc);
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

int store_plan_owner(struct store *s, const char *id, struct store_plan_owner *out)
{
    const char *vals[1] = {id};
    PGresult *r;
    int rc;

    memset(out, 0, sizeof *out);
    if (id == NULL || !ids_valid_id(id))
        return STORE_NOTFOUND;
    r = store_run(s, STORE_STMT_PLAN_OWNER, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1)
        rc = STORE_NOTFOUND;
    else if (store_col_hex(r, 0, 0, out->token_hash, SHA256_LEN) != 0)
        rc = STORE_ERROR;
    else
        out->api_key_id = (int64_t)store_col_u64(r, 0, 1);
    PQclear(r);
    return rc;
}

int store_plan_delete(struct store *s, const char *id, const unsigned char *token_hash)
{
    const char *vals[2] = {id, (const char *)token_hash};
    const int lens[2] = {0, SHA256_LEN};
    const int fmts[2] = {0, 1};
    PGresult *r;
    int rc;

    if (id == NULL || !ids_valid_id(id))
        return STORE_NOTFOUND;
    r = store_run(s, STORE_STMT_PLAN_DELETE, 2, vals, lens, fmts, 0, true, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}

int store_plan_tensors(struct store *s, const char *id, uint64_t *tensors)
{
    const char *vals[1] = {id};
    PGresult *r;
    int rc;

    *tensors = 0;
    if (!ids_valid_id(id))
        return STORE_OK; /* the handler's own read answers it */
    r = store_run(s, STORE_STMT_PLAN_TENSORS, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) == 1)
        *tensors = store_col_u64(r, 0, 0);
    PQclear(r);
    return STORE_OK;
}

int store_plan_format(struct store *s, const char *id, char *fmt, size_t cap)
{
    const char *vals[1] = {id};
    PGresult *r;
    int rc;

    if (!ids_valid_id(id))
        return STORE_NOTFOUND;
    r = store_run(s, STORE_STMT_PLAN_FORMAT, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return gone_or_missing(s, id);
    }
    /* expired but not swept yet: gone all the same */
    rc = strcmp(PQgetvalue(r, 0, 1), "t") == 0 ? STORE_GONE : STORE_OK;
    if (rc == STORE_OK)
        snprintf(fmt, cap, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return rc;
}

int store_plan_recipe(struct store *s, const char *id, size_t max, char *fmt, size_t cap,
                      char **input, size_t *len)
{
    char lim[24];
    const char *vals[2] = {id, lim};
    PGresult *r;
    int rc;

    *input = NULL;
    *len = 0;
    if (!ids_valid_id(id))
        return STORE_NOTFOUND;
    store_fmt_u64(lim, sizeof(lim), max < INT32_MAX ? max : INT32_MAX);
    r = store_run(s, STORE_STMT_PLAN_RECIPE, 2, vals, NULL, NULL, 1, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return gone_or_missing(s, id);
    }
    /* expired but not swept yet: gone all the same; binary text is the text, NUL-ended */
    rc = PQgetlength(r, 0, 1) > 0 ? STORE_GONE : STORE_OK;
    if (rc == STORE_OK) {
        snprintf(fmt, cap, "%s", PQgetvalue(r, 0, 0));
        if (!PQgetisnull(r, 0, 2)) {
            *len = (size_t)PQgetlength(r, 0, 2);
            if ((*input = malloc(*len + 1)) == NULL) {
                rc = STORE_ERROR;
            } else {
                memcpy(*input, PQgetvalue(r, 0, 2), *len);
                (*input)[*len] = '\0';
            }
        }
    }
    PQclear(r);
    return rc;
}
