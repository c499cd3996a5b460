/*
 * apikey.c - API key text, hash and comparison (apikey.h).
 */
#include "service/apikey.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "service/ids.h"
#include "service/sha256.h"

_Static_assert(IDS_TOKEN_LEN == 43, "the secret is one manage-token-sized random string");

int apikey_new(char *key, char *prefix)
{
    char id[IDS_ID_LEN + 1], secret[IDS_TOKEN_LEN + 1];

    if (ids_new_id(id) != 0 || ids_new_token(secret) != 0)
        return -1;
    memcpy(prefix, id, APIKEY_PREFIX_LEN);
    prefix[APIKEY_PREFIX_LEN] = '\0';
    snprintf(key, APIKEY_LEN + 1, "%s%s_%s", APIKEY_TAG, prefix, secret);
    return 0;
}

static bool b64url_char(char c)
{
    return isalnum((unsigned char)c) || c == '-' || c == '_';
}

bool apikey_parse(const char *s, char *prefix)
{
    size_t i;

    if (s == NULL || strlen(s) != APIKEY_LEN || strncmp(s, APIKEY_TAG, 4) != 0 ||
        s[4 + APIKEY_PREFIX_LEN] != '_')
        return false;
    for (i = 4; i < APIKEY_LEN; i++)
        if (!b64url_char(s[i]))
            return false;
    memcpy(prefix, s + 4, APIKEY_PREFIX_LEN);
    prefix[APIKEY_PREFIX_LEN] = '\0';
    return true;
}

void apikey_hash(const char *key, unsigned char out[APIKEY_HASH_LEN])
{
    sha256_of(key, strlen(key), out);
}

bool apikey_equal(const unsigned char *a, const unsigned char *b)
{
    return sha256_equal_ct(a, b, APIKEY_HASH_LEN); /* the one constant-time comparison */
}

bool apikey_valid_name(const char *name)
{
    size_t n = strlen(name);

    if (n == 0 || n > APIKEY_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && strchr("._-", name[i]) == NULL)
            return false;
    return true;
}
