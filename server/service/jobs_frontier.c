/*
 * jobs_frontier.c - a frontier search run on the worker (jobs_frontier.h).
 */
#include "service/jobs_frontier.h"

#include <stdlib.h>
#include <string.h>

#include "planner/frontier.h"
#include "service/frontierq.h"
#include "service/planopts.h"

#define OPTS_BUF 2048

/* frontier_json's {"frontier": X} cut down to X, in place: *json keeps its allocation. */
static int unwrap(char *json, size_t *len, struct err *e)
{
    static const char head[] = "{\"frontier\":";
    size_t h = sizeof(head) - 1;

    if (*len < h + 2 || strncmp(json, head, h) != 0 || json[*len - 1] != '}')
        return err_set(e, ERR_INTERNAL, "", "the frontier's JSON is not {\"frontier\": ...}");
    *len -= h + 1;
    memmove(json, json + h, *len);
    json[*len] = '\0';
    return ERR_OK;
}

int jobs_frontier_run(const struct store_frontier_job *job, const struct plan_limits *lim,
                      char **result, size_t *len, struct err *e)
{
    /* The options' strings (XLA's dumps among them) fit in the document's own length. */
    size_t cap =
        strlen(job->options_json) + 1 > OPTS_BUF ? strlen(job->options_json) + 1 : OPTS_BUF;
    char *buf = malloc(cap);
    struct frontierq *fq = malloc(sizeof(*fq));
    struct frontier_result r;
    struct plan_opts o;
    struct err why;
    int rc;

    *result = NULL;
    *len = 0;
    memset(&r, 0, sizeof(r));
    if (buf == NULL || fq == NULL) {
        rc = err_set(e, ERR_NOMEM, "", "out of memory reading frontier search %s", job->id);
        goto out;
    }
    if (planopts_parse(job->options_json, &o, buf, cap, &why) < 0) {
        rc = err_set(e, ERR_INTERNAL, "options", "the stored options of plan %s are malformed: %s",
                     job->plan_id, why.msg);
        goto out;
    }
    if (frontierq_parse(job->query_json, strlen(job->query_json), fq, &why) != ERR_OK) {
        rc = err_set(e, ERR_INTERNAL, "query",
                     "the stored query of frontier search %s is "
                     "malformed: %s",
                     job->id, why.msg);
        goto out;
    }
    if ((rc = frontier_search(job->input, job->input_len, &o, lim, &fq->q, &r, e)) != ERR_OK)
        goto out;
    if ((rc = frontier_json(&r, result, len, e)) == ERR_OK)
        rc = unwrap(*result, len, e);
    frontier_free(&r);
    if (rc != ERR_OK) {
        free(*result);
        *result = NULL;
    }
out:
    free(fq);
    free(buf);
    return rc;
}
