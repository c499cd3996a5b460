/*
 * auth.h - API keys on requests: the key a request presents, checked against the store.
 *
 * A request presents a key as `Authorization: Bearer tpk_...` (apikey.h). The same header
 * carries a plan's manage token on DELETE; the two never share a form, so a bearer that is
 * not a key is left to the manage-token rules. Runs on executor threads (api.c).
 */
#ifndef TPUPLAN_AUTH_H
#define TPUPLAN_AUTH_H

#include <stdbool.h>

#include "planner/err.h"
#include "service/request.h"
#include "service/store.h"

enum auth_result {
    AUTH_NONE,     /* no key presented, and none required */
    AUTH_OK,       /* *key is the presented key: known and not revoked */
    AUTH_ANSWERED, /* r was answered (401, 403 or 503) and must not be touched again */
};

/* Checks the key r presents. required (--require-key): a request without one is answered
 * 401 key-required. An unknown key is 401 too; a revoked one 403 key-revoked. */
ERR_MUST_CHECK enum auth_result auth_key(struct store *st, struct request *r, bool required,
                                         struct store_apikey *key);

/* Answers r 401 key-required (WWW-Authenticate: Bearer) with detail, counted as a missing
 * key; r must not be touched again. */
void auth_reply_key_required(struct request *r, const char *detail);

#endif
