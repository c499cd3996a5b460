/*
 * store_frontiers.c - frontier searches: queue, read, list, claim and finish (store.h).
 * Their leases are renewed, released and reaped with the plans' (store_jobs.c).
 */
#include "service/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/ids.h"
#include "service/log.h"
#include "service/store_int.h"

void store_frontier_free(struct store_frontier *f)
{
    if (f == NULL)
        return;
    free(f->status);
    free(f->query_json);
    free(f->result_json);
    free(f->error_json);
    free(f->created_at);
    free(f->started_at);
    free(f->finished_at);
    memset(f, 0, sizeof(*f));
}

void store_frontier_job_free(struct store_frontier_job *j)
{
    if (j == NULL)
        return;
    free(j->query_json);
    free(j->input);
    free(j->options_json);
    memset(j, 0, sizeof(*j));
}

int store_frontier_create(struct store *s, const char *plan_id, const char *query_json,
                          struct store_frontier *out)
{
    char id[IDS_ID_LEN + 1];
    const char *vals[3] = {id, plan_id, query_json};
    PGresult *r;
    int rc;

    memset(out, 0, sizeof(*out));
    if (!ids_valid_id(plan_id))
        return STORE_NOTFOUND;
    if (store_json_has_nul(query_json))
        return STORE_INVALID;
    if (ids_new_id(id) < 0) {
        log_line("store", "getrandom failed: %s", strerror(errno));
        return STORE_ERROR;
    }
    r = store_run(s, STORE_STMT_FRONTIER_INSERT, 3, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc; /* a plan deleted meanwhile fails the foreign key: STORE_NOTFOUND */
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND;
    }
    memcpy(out->id, id, sizeof(out->id));
    snprintf(out->plan_id, sizeof(out->plan_id), "%s", plan_id);
    out->created_at = store_col_str(r, 0, 0);
    out->status = strdup("queued");
    out->query_json = strdup(query_json);
    PQclear(r);
    if (out->created_at == NULL || out->status == NULL || out->query_json == NULL) {
        store_frontier_free(out);
        return STORE_ERROR;
    }
    return STORE_OK;
}

int store_frontier_get(struct store *s, const char *id, struct store_frontier *out)
{
    const char *vals[1] = {id};
    PGresult *r;
    int rc;

    memset(out, 0, sizeof(*out));
    if (id == NULL || !ids_valid_id(id))
        return STORE_NOTFOUND;
    r = store_run(s, STORE_STMT_FRONTIER_GET, 1, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND;
    }
    /* its plan expired but is not swept yet: gone with it */
    if (strcmp(PQgetvalue(r, 0, 10), "t") == 0) {
        PQclear(r);
        return STORE_GONE;
    }
    snprintf(out->id, sizeof(out->id), "%s", PQgetvalue(r, 0, 0));
    snprintf(out->plan_id, sizeof(out->plan_id), "%s", PQgetvalue(r, 0, 1));
    out->status = store_col_str(r, 0, 2);
    out->query_json = store_col_str(r, 0, 3);
    out->result_json = store_col_str(r, 0, 4);
    out->error_json = store_col_str(r, 0, 5);
    out->created_at = store_col_str(r, 0, 6);
    out->started_at = store_col_str(r, 0, 7);
    out->finished_at = store_col_str(r, 0, 8);
    out->version = (int64_t)store_col_u64(r, 0, 9);
    rc = out->status == NULL || out->query_json == NULL || out->created_at == NULL ||
                 (!PQgetisnull(r, 0, 4) && out->result_json == NULL) ||
                 (!PQgetisnull(r, 0, 5) && out->error_json == NULL)
             ? STORE_ERROR
             : STORE_OK;
    PQclear(r);
    if (rc != STORE_OK)
        store_frontier_free(out);
    return rc;
}

int store_frontier_list(struct store *s, const char *plan_id, int limit, char **items_json)
{
    char lim[16];
    const char *vals[2] = {plan_id, lim};
    PGresult *r;
    int rc;

    *items_json = NULL;
    if (limit < 1 || limit > 1000)
        return STORE_INVALID;
    if (plan_id == NULL || !ids_valid_id(plan_id))
        return STORE_NOTFOUND;
    snprintf(lim, sizeof(lim), "%d", limit);
    r = store_run(s, STORE_STMT_FRONTIER_LIST, 2, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        /* no such plan: swept (410) or never there (404), as store_plan_get answers */
        {
            char fmt[24];
            rc = store_plan_format(s, plan_id, fmt, sizeof(fmt));
        }
        return rc == STORE_OK ? STORE_NOTFOUND : rc;
    }
    if (strcmp(PQgetvalue(r, 0, 0), "t") == 0) {
        PQclear(r);
        return STORE_GONE;
    }
    *items_json = store_col_str(r, 0, 1);
    PQclear(r);
    return *items_json != NULL ? STORE_OK : STORE_ERROR;
}

int store_frontier_claim(struct store *s, const char *worker, int lease_ms,
                         struct store_frontier_job *out)
{
    char lease[16];
    const char *vals[2] = {worker, lease};
    PGresult *r;
    int rc;

    memset(out, 0, sizeof(*out));
    snprintf(lease, sizeof(lease), "%d", lease_ms);
    r = store_run(s, STORE_STMT_FRONTIER_CLAIM, 2, vals, NULL, NULL, 0, true, &rc);
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND;
    }
    snprintf(out->id, sizeof(out->id), "%s", PQgetvalue(r, 0, 0));
    snprintf(out->plan_id, sizeof(out->plan_id), "%s", PQgetvalue(r, 0, 1));
    snprintf(out->lease_token, sizeof(out->lease_token), "%s", PQgetvalue(r, 0, 2));
    out->attempts = atoi(PQgetvalue(r, 0, 3));
    out->query_json = store_col_str(r, 0, 4);
    PQclear(r);
    if (out->query_json == NULL)
        return STORE_ERROR; /* the claim stands: its lease expires and it is reaped */
    /* the plan's input in binary, as a plan's job reads it (store_job_claim) */
    {
        const char *pv[1] = {out->plan_id};
        r = store_run(s, STORE_STMT_JOB_INPUT, 1, pv, NULL, NULL, 1, true, &rc);
    }
    if (r == NULL)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return STORE_NOTFOUND; /* the plan was deleted between the two statements */
    }
    rc = store_input_from_row(r, &out->input, &out->input_len, &out->options_json) == 0
             ? STORE_OK
             : STORE_ERROR;
    PQclear(r);
    if (rc != STORE_OK)
        store_frontier_job_free(out);
    return rc;
}

int store_frontier_finish(struct store *s, const struct store_frontier_job *j,
                          const char *result_json, const char *error_json)
{
    const char *vals[5] = {j->id, j->lease_token, result_json != NULL ? "done" : "failed",
                           result_json, error_json};
    PGresult *r;
    int rc;

    if ((result_json != NULL) == (error_json != NULL) ||
        (error_json != NULL && store_json_has_nul(error_json)))
        return STORE_INVALID;
    /* Not retried on a dead connection: the commit may have happened. The caller retries
     * with the same lease token, which is a no-op (NOTFOUND) if it did. */
    r = store_run(s, STORE_STMT_FRONTIER_FINISH, 5, vals, NULL, NULL, 0, false, &rc);
    if (r == NULL)
        return rc;
    rc = PQntuples(r) == 1 ? STORE_OK : STORE_NOTFOUND;
    PQclear(r);
    return rc;
}
