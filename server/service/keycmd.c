/*
 * keycmd.c - the API key admin command (keycmd.h).
 */
#include "service/keycmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/apikey.h"
#include "service/log.h"
#include "service/store.h"

static int key_create(struct store *st, const char *name)
{
    char key[APIKEY_LEN + 1], prefix[APIKEY_PREFIX_LEN + 1];
    unsigned char hash[APIKEY_HASH_LEN];
    int rc;

    if (!apikey_valid_name(name)) {
        log_line(LOG_PROGRAM, "key create: a name is 1 to %d letters, digits, '.', '_' or '-'",
                 APIKEY_NAME_MAX);
        return 1;
    }
    if (apikey_new(key, prefix) != 0) {
        log_line(LOG_PROGRAM, "key create: getrandom failed");
        return 1;
    }
    apikey_hash(key, hash);
    rc = store_apikey_create(st, name, prefix, hash);
    if (rc == STORE_CONFLICT) {
        log_line(LOG_PROGRAM, "key create: a key named %s exists; revoke it first", name);
        return 1;
    }
    if (rc != STORE_OK) {
        log_line(LOG_PROGRAM, "key create: %s", store_rc_name(rc));
        return 1;
    }
    /* The only time the key is shown: stdout alone, so `key=$(... key create ci)` works. */
    printf("%s\n", key);
    fflush(stdout);
    log_line(LOG_PROGRAM, "key %s created (prefix %s); it is shown only this once", name, prefix);
    return 0;
}

static int key_list(struct store *st)
{
    struct store_apikey *keys = NULL;
    size_t n = 0;
    int rc = store_apikey_list(st, &keys, &n);

    if (rc != STORE_OK) {
        log_line(LOG_PROGRAM, "key list: %s", store_rc_name(rc));
        return 1;
    }
    printf("%-24s %-8s %-8s %-28s %s\n", "NAME", "PREFIX", "PLANS", "CREATED", "REVOKED");
    for (size_t i = 0; i < n; i++)
        printf("%-24s %-8s %-8lld %-28s %s\n", keys[i].name, keys[i].prefix,
               (long long)keys[i].plans, keys[i].created_at,
               keys[i].revoked ? keys[i].revoked_at : "-");
    free(keys);
    return 0;
}

static int key_revoke(struct store *st, const char *name)
{
    int rc = store_apikey_revoke(st, name);

    if (rc == STORE_NOTFOUND) {
        log_line(LOG_PROGRAM, "key revoke: no active key is named %s", name);
        return 1;
    }
    if (rc != STORE_OK) {
        log_line(LOG_PROGRAM, "key revoke: %s", store_rc_name(rc));
        return 1;
    }
    log_line(LOG_PROGRAM, "key %s revoked", name);
    return 0;
}

int keycmd_run(const struct config *cfg)
{
    char err[512] = "";
    struct store *st = store_open(cfg->database_url, err, sizeof(err));
    int rc;

    if (st == NULL) {
        log_line(LOG_PROGRAM, "database: %s", err);
        return 1;
    }
    if (strcmp(cfg->key_cmd, "create") == 0)
        rc = key_create(st, cfg->key_name);
    else if (strcmp(cfg->key_cmd, "revoke") == 0)
        rc = key_revoke(st, cfg->key_name);
    else
        rc = key_list(st);
    store_close(st);
    return rc;
}
