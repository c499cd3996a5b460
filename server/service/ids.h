/*
 * ids.h - random identifiers: plan ids, manage tokens and request ids.
 *
 * All come from getrandom() and are written in URL-safe base64 without padding, so they
 * can appear in paths and headers unescaped. A plan id carries 128 random bits (22
 * characters), a manage token 256 bits (43 characters); ids are unguessable, so listing
 * them is the only way to find a plan, and only the token lets one delete it.
 */
#ifndef TPUPLAN_IDS_H
#define TPUPLAN_IDS_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/err.h"

/* The one definition of both lengths (store.h, route.h and the API use these). */
#define IDS_ID_BITS    128
#define IDS_ID_LEN     22
#define IDS_TOKEN_BITS 256
#define IDS_TOKEN_LEN  43

/* Unpadded base64url holds 6 bits a character: the lengths are ceil(bits / 6). */
_Static_assert(IDS_ID_LEN == (IDS_ID_BITS + 5) / 6, "a plan id is 128 random bits in base64url");
_Static_assert(IDS_TOKEN_LEN == (IDS_TOKEN_BITS + 5) / 6,
               "a manage token is 256 random bits in base64url");

/* Fills out (IDS_ID_LEN + 1 bytes) with a new id. 0, or -1 when getrandom fails. */
ERR_MUST_CHECK int ids_new_id(char *out);

/* Fills out (IDS_TOKEN_LEN + 1 bytes) with a new manage token. 0 or -1. */
ERR_MUST_CHECK int ids_new_token(char *out);

/* A request id (X-Request-Id, log lines): 96 random bits, 16 characters. */
#define IDS_REQUEST_LEN 16

/* Fills out (IDS_REQUEST_LEN + 1 bytes) with a new request id. 0 or -1. */
ERR_MUST_CHECK int ids_new_request_id(char *out);

/* Writes base64url (no padding) of n bytes into out, which holds 4 * ceil(n / 3) + 1
 * bytes; NUL-terminates. Returns the number of characters written. */
size_t ids_b64url_encode(const unsigned char *in, size_t n, char *out);

/* Decodes unpadded base64url text of length len into out (cap bytes). Returns the byte
 * count, or -1 on a character outside the alphabet, a bad length or a full buffer. */
ERR_MUST_CHECK long ids_b64url_decode(const char *in, size_t len, unsigned char *out, size_t cap);

/* True when s is exactly IDS_ID_LEN base64url characters (an id from ids_new_id): the one
 * plan-id check, used by the router (so malformed ids never reach the database) and the store.
 * Pure. */
bool ids_valid_id(const char *s);

#endif
