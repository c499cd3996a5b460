/*
 * apikey.h - API keys: their text form, their hash, and the constant-time comparison.
 *
 * A key is "tpk_" + PREFIX (8 base64url characters, 48 random bits, not secret: it names
 * the key's row) + "_" + SECRET (43 base64url characters, 256 random bits). The database
 * holds the SHA-256 of the whole key text, never the key; a presented key is looked up by
 * its prefix and accepted only when its hash equals the stored one (apikey_equal, which
 * takes the same time wherever the bytes differ). Pure except apikey_new (getrandom).
 */
#ifndef TPUPLAN_APIKEY_H
#define TPUPLAN_APIKEY_H

#include <stdbool.h>
#include <stddef.h>

#include "planner/err.h"

#define APIKEY_TAG        "tpk_"
#define APIKEY_PREFIX_LEN 8
#define APIKEY_LEN        (4 + APIKEY_PREFIX_LEN + 1 + 43)
#define APIKEY_HASH_LEN   32
#define APIKEY_NAME_MAX   64

/* A new key into key (APIKEY_LEN + 1 bytes) and its prefix into prefix
 * (APIKEY_PREFIX_LEN + 1 bytes). 0, or -1 when getrandom fails. */
ERR_MUST_CHECK int apikey_new(char *key, char *prefix);

/* True when s has the form of a key; then its prefix is copied into prefix
 * (APIKEY_PREFIX_LEN + 1 bytes). A manage token (43 characters) never has this form. */
bool apikey_parse(const char *s, char *prefix);

/* SHA-256 of the key text. */
void apikey_hash(const char *key, unsigned char out[APIKEY_HASH_LEN]);

/* Whether two hashes are equal, in time independent of where they differ. */
bool apikey_equal(const unsigned char *a, const unsigned char *b);

/* A key name: 1..APIKEY_NAME_MAX of letters, digits and "._-" (also the schema's CHECK). */
bool apikey_valid_name(const char *name);

#endif
