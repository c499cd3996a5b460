/*
 * reqparse.h - pure parsers for request headers and parameters (unit-tested).
 */
#ifndef TPUPLAN_REQPARSE_H
#define TPUPLAN_REQPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/err.h"

/* What a POST body is, from its Content-Type (parameters such as charset ignored). */
enum body_kind {
    BODY_NONE = 0,    /* no Content-Type */
    BODY_JSON,        /* application/json (or any application/...+json) */
    BODY_SAFETENSORS, /* application/octet-stream */
    BODY_CSV,         /* text/csv */
    BODY_MULTIPART,   /* multipart/form-data */
    BODY_TEXT,        /* text/plain: a text format (an XLA buffer assignment, HLO or
                       * StableHLO text), detected from content */
    BODY_UNSUPPORTED,
};

enum body_kind reqparse_media_type(const char *content_type);

/*
 * The wait=N preference of an RFC 7240 Prefer header value ("respond-async, wait=10"),
 * clamped to max. -1 when there is none or it is malformed.
 */
int reqparse_prefer_wait(const char *prefer, unsigned max);

/* Decimal unsigned 64-bit integer, whole string. 0 or -1. */
ERR_MUST_CHECK int reqparse_u64(const char *s, uint64_t *out);

/* Percent-encodes s for a query parameter value into out (cap bytes incl. NUL). Returns
 * the length, or -1 when it does not fit. */
ERR_MUST_CHECK long reqparse_urlencode(const char *s, char *out, size_t cap);

/* True when the two entity-tag lists match: If-None-Match value against one ETag ("*"
 * matches anything; weak comparison as RFC 9110 13.1.2 asks for If-None-Match). */
bool reqparse_etag_match(const char *if_none_match, const char *etag);

/* True when s may serve as a request id taken from a client's X-Request-Id header: 1 to 64
 * characters from A-Z a-z 0-9 and - _ . : (so it is safe in a header, a log line and JSON
 * unescaped). */
bool reqparse_request_id(const char *s);

/* True when s may serve as a client token (the TPUplan-Client header: the dashboard's
 * random submitter token, auth.h): REQPARSE_CLIENT_MIN to REQPARSE_CLIENT_MAX characters of
 * base64url (A-Z a-z 0-9 - _), so at least 128 bits when random. */
#define REQPARSE_CLIENT_MIN 22
#define REQPARSE_CLIENT_MAX 64
bool reqparse_client_token(const char *s);

/* Bearer token of an Authorization header value, or NULL (points into the value). */
const char *reqparse_bearer(const char *authorization);

#endif
