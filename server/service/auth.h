/*
 * auth.h - who a request is: the API key it presents, checked against the store, and the
 * client token it presents.
 *
 * A request presents a key as `Authorization: Bearer tpk_...` (apikey.h). The same header
 * carries a plan's manage token on DELETE; the two never share a form, so a bearer that is
 * not a key is left to the manage-token rules. Runs on executor threads (api.c).
 *
 * A client token (`TPUplan-Client`, reqparse_client_token) is a random string a client makes
 * once and sends with its submissions and list requests: the dashboard keeps one per browser
 * in localStorage. The server keeps only its SHA-256 with each plan the client creates, and
 * GET /api/v1/plans lists the plans of the caller's key and token (server/service/README.md
 * #private-plans). It proves nothing but "the same client as before", which is all a
 * private list needs: plan ids stay the capability that reads a plan.
 */
#ifndef TPUPLAN_AUTH_H
#define TPUPLAN_AUTH_H

#include <stdbool.h>

#include "planner/err.h"
#include "service/request.h"
#include "service/sha256.h"
#include "service/store.h"

#define AUTH_CLIENT_HEADER "TPUplan-Client"

enum auth_result {
    AUTH_NONE,     /* no key presented, and none required */
    AUTH_OK,       /* *key is the presented key: known and not revoked */
    AUTH_ANSWERED, /* r was answered (401, 403 or 503) and must not be touched again */
};

/* Checks the key r presents. required (--require-key): a request without one is answered
 * 401 key-required. An unknown key is 401 too; a revoked one 403 key-revoked. */
ERR_MUST_CHECK enum auth_result auth_key(struct store *st, struct request *r, bool required,
                                         struct store_apikey *key);

/* The client token r presents: AUTH_NONE (none), AUTH_OK with its SHA-256 in digest, or
 * AUTH_ANSWERED after a 400 invalid-parameter naming the header (malformed). */
ERR_MUST_CHECK enum auth_result auth_client(struct request *r, unsigned char digest[SHA256_LEN]);

/* Answers r 401 key-required (WWW-Authenticate: Bearer) with detail, counted as a missing
 * key; r must not be touched again. */
void auth_reply_key_required(struct request *r, const char *detail);

#endif
