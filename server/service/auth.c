/*
 * auth.c - the API key a request presents (auth.h).
 */
#include "service/auth.h"

#include <stdio.h>
#include <string.h>

#include "service/apikey.h"
#include "service/metrics.h"
#include "service/response.h"
#include "service/server.h"

static void reply_401(struct request *r, const char *detail)
{
    struct MHD_Response *resp =
        response_problem(PROBLEM_KEY_REQUIRED, r->srv->cfg->base_path, detail, NULL, NULL);

    if (resp != NULL)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"tpuplan\"");
    request_reply(r, problem_types[PROBLEM_KEY_REQUIRED].status, resp);
}

enum auth_result auth_client(struct request *r, unsigned char digest[SHA256_LEN])
{
    if (r->client == NULL)
        return AUTH_NONE;
    if (!reqparse_client_token(r->client)) {
        char d[160];
        snprintf(d, sizeof(d),
                 AUTH_CLIENT_HEADER " must be %d to %d characters of A-Z a-z 0-9 - _ (a random "
                                    "token the client keeps).",
                 REQPARSE_CLIENT_MIN, REQPARSE_CLIENT_MAX);
        request_reply_problem(r, PROBLEM_INVALID_PARAMETER, d);
        return AUTH_ANSWERED;
    }
    sha256_of(r->client, strlen(r->client), digest);
    return AUTH_OK;
}

void auth_reply_key_required(struct request *r, const char *detail)
{
    metrics_auth_failure(METRICS_AUTH_MISSING);
    reply_401(r, detail);
}

enum auth_result auth_key(struct store *st, struct request *r, bool required,
                          struct store_apikey *key)
{
    const char *bearer = reqparse_bearer(r->authorization);
    unsigned char hash[APIKEY_HASH_LEN];
    char prefix[APIKEY_PREFIX_LEN + 1];
    int rc;

    if (!apikey_parse(bearer, prefix)) {
        if (!required)
            return AUTH_NONE;
        auth_reply_key_required(r,
                                "This server needs an API key: send Authorization: Bearer tpk_... "
                                "(keys come from `tpuplan-server key create NAME`).");
        return AUTH_ANSWERED;
    }
    rc = store_apikey_find(st, prefix, key);
    if (rc == STORE_OK) {
        apikey_hash(bearer, hash);
        if (!apikey_equal(hash, key->hash))
            rc = STORE_NOTFOUND;
    }
    if (rc == STORE_NOTFOUND) {
        metrics_auth_failure(METRICS_AUTH_UNKNOWN);
        reply_401(r, "This API key is not known to the server.");
        return AUTH_ANSWERED;
    }
    if (rc != STORE_OK) {
        request_reply_problem(
            r, rc == STORE_UNAVAILABLE ? PROBLEM_DATABASE_UNAVAILABLE : PROBLEM_INTERNAL,
            "The API key could not be checked; retry later.");
        return AUTH_ANSWERED;
    }
    if (key->revoked) {
        metrics_auth_failure(METRICS_AUTH_REVOKED);
        request_reply_problem(r, PROBLEM_KEY_REVOKED, "This API key was revoked.");
        return AUTH_ANSWERED;
    }
    return AUTH_OK;
}
