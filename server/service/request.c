/*
 * request.c - a request's lifetime and the executor's way of answering it (request.h).
 */
#include "service/request.h"

#include <stdlib.h>

#include "planner/clock.h"
#include "service/response.h"
#include "service/store.h"

struct request *request_new(struct server *srv, struct MHD_Connection *conn)
{
    struct request *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    r->srv = srv;
    r->http.conn = conn;
    r->t_start = clock_now();
    r->prefer_wait = -1;
    return r;
}

void request_free(struct request *r)
{
    size_t i;

    if (r->http.pp != NULL)
        MHD_destroy_post_processor(r->http.pp);
    body_free(&r->body);
    for (i = 0; i < REQ_PARAM_COUNT; i++)
        free(r->param[i]);
    free(r->authorization);
    free(r->if_none_match);
    free(r->idempotency_key);
    if (r->resp != NULL)
        MHD_destroy_response(r->resp);
    if (r->exec.finished != NULL) {
        store_plan_free(r->exec.finished);
        free(r->exec.finished);
    }
    free(r);
}

void request_reply(struct request *r, int status, struct MHD_Response *resp)
{
    struct MHD_Connection *conn = r->http.conn;

    if (resp == NULL) {
        /* Out of memory building the answer: a body-less 500 still needs no allocation. */
        resp = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
        status = 500;
    }
    r->status = status;
    r->resp = resp;
    r->http.phase = REQ_READY;
    /* After this the MHD thread may run and free r: touch nothing of it below. */
    MHD_resume_connection(conn);
}

void request_reply_problem(struct request *r, enum problem_id id, const char *detail)
{
    request_reply(r, problem_types[id].status, response_problem(id, detail, NULL, NULL));
}
