/*
 * store_jobs.c - the planner job queue: claim with a lease, renew, finish, release, reap
 * expired leases, and the counts for /metrics.
 */
#include "service/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/store_int.h"

int store_job_counts(struct store *s, struct store_job_counts *out)
{
    int rc;
    PGresult *r = store_run(s, STORE_STMT_JOB_COUNTS, 0, NULL, NULL, NULL, 0, true, &rc);
    memset(out, 0, sizeof *out);
    if (r == NULL)
        return rc;
    out->queued = (int64_t)store_col_u64(r, 0, 0);
    out->running = (int64_t)store_col_u64(r, 0, 1);
    out->done = (int64_t)store_col_u64(r, 0, 2);
    out->failed = (int64_t)store_col_u64(r, 0, 3);
    PQclear(r);
    return STORE_OK;
}

int store_jobs_queued(struct store *s, unsigned limit, int64_t *out)
{
    char lim[16];
    const char *vals[1] = {lim};
    int rc;
    PGresult *r;

    snprintf(lim, sizeof(lim), "%u", limit);
    r = store_run(s, STORE_STMT_JOBS_QUEUED, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    *out = (int64_t)store_col_u64(r, 0, 0);
    PQclear(r);
    return STORE_OK;
}

void store_job_free(struct store_job *j)
{
    if (j == NULL)
        return;
    free(j->input);
    free(j->options_json);
    free(j->whatif_json);
    free(j->name);
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
        r = store_run(s, STORE_STMT_JOB_CLAIM, 2, vals, NULL, NULL, 0, true, &rc);
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
        r = store_run(s, STORE_STMT_JOB_INPUT, 1, vals, NULL, NULL, 1, true, &rc);
    }
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND; /* deleted between the two statements */
    }
    out->whatif_json = store_col_str(r, 0, 2); /* binary text is the text: store_col_str */
    out->name = store_col_str(r, 0, 3);
    if (store_input_from_row(r, &out->input, &out->input_len, &out->options_json) != 0 ||
        (!PQgetisnull(r, 0, 2) && out->whatif_json == NULL) || out->name == NULL) {
        PQclear(r);
        store_job_free(out);
        return STORE_ERROR;
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
        r = store_run(s, STORE_STMT_JOB_RENEW, 2, vals, NULL, NULL, 0, true, &rc);
    }
    free(arr);
    if (r == NULL)
        return rc;
    if (renewed)
        *renewed = (size_t)store_col_u64(r, 0, 0);
    PQclear(r);
    return STORE_OK;
}

int store_job_finish(struct store *s, const struct store_job *j, const char *result_json,
                     const struct plan_views *views, const char *error_json,
                     const struct plan_summary *sm, const struct store_made *made,
                     struct store_plan *done)
{
    char num[7][24];
    const char *vals[17] = {j->plan_id, j->lease_token, result_json ? "done" : "failed",
                            result_json, error_json};
    int lens[17] = {0}, fmts[17] = {0};
    int rc;
    PGresult *r;
    if (done != NULL)
        memset(done, 0, sizeof *done);
    /* The result and its views are json (any valid text, \u0000 included); the error is
     * jsonb. */
    if (error_json && store_json_has_nul(error_json))
        return STORE_INVALID;
    if (result_json != NULL && views != NULL) {
        vals[12] = views->summary;
        vals[13] = views->layout;
    }
    if (sm != NULL) {
        store_fmt_u64(num[0], sizeof num[0], sm->tensors);
        store_fmt_u64(num[1], sizeof num[1], sm->logical_bytes);
        store_fmt_u64(num[2], sizeof num[2], sm->padded_bytes);
        store_fmt_u64(num[3], sizeof num[3], sm->peak_bytes);
        store_fmt_u64(num[4], sizeof num[4], sm->lower_bound_bytes);
        store_fmt_u64(num[5], sizeof num[5], sm->capacity_bytes);
        snprintf(num[6], sizeof num[6], "%s", sm->fits ? "true" : "false");
        for (int i = 0; i < 7; i++)
            vals[5 + i] = num[i];
    }
    if (made != NULL) {
        if (made->input_len > INT32_MAX || store_json_has_nul(made->options_json))
            return STORE_INVALID;
        vals[14] = made->input;
        lens[14] = (int)made->input_len;
        fmts[14] = 1; /* bytea, binary */
        vals[15] = made->options_json;
        vals[16] = made->chip;
    }
    /* Not retried on a dead connection: the commit may have happened. The caller retries
     * with the same lease token, which is a no-op (NOTFOUND) if it did. */
    r = store_run(s, STORE_STMT_JOB_FINISH, 17, vals, lens, fmts, 0, false, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_OK : STORE_NOTFOUND;
    /* The commit happened: a plan that cannot be read back only costs a shortcut. */
    if (rc == STORE_OK && done != NULL && store_plan_from_row(r, false, done) != STORE_OK)
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
        r = store_run(s, STORE_STMT_JOB_RELEASE, 1, vals, NULL, NULL, 0, true, &rc);
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
        r = store_run(s, STORE_STMT_JOB_REAP, 2, vals, NULL, NULL, 0, true, &rc);
    }
    if (r == NULL)
        return rc;
    if (requeued)
        *requeued = (int)store_col_u64(r, 0, 0);
    PQclear(r);
    return STORE_OK;
}
