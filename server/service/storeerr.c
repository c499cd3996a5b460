/*
 * storeerr.c - store errors as problems (storeerr.h).
 */
#include "service/storeerr.h"

#include "service/problem.h"
#include "service/request.h"
#include "service/store.h"

void storeerr_reply(struct request *r, int rc)
{
    if (rc == STORE_UNAVAILABLE)
        request_reply_problem(r, PROBLEM_DATABASE_UNAVAILABLE,
                              "The database cannot be reached; retry later.");
    else if (rc == STORE_INVALID)
        request_reply_problem(r, PROBLEM_INVALID_PARAMETER, "The cursor or limit is malformed.");
    else if (rc == STORE_NOTFOUND)
        request_reply_problem(r, PROBLEM_NO_SUCH_PLAN,
                              "No plan has this id (it may have been deleted).");
    else if (rc == STORE_GONE)
        request_reply_problem(r, PROBLEM_PLAN_EXPIRED,
                              "This plan reached its expiry time (expires_at) and was deleted.");
    else
        request_reply_problem(r, PROBLEM_INTERNAL, "The database call failed; see the server log.");
}
