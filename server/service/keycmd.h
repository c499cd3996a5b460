/*
 * keycmd.h - `tpuplan-server key create|list|revoke [NAME]`: the API key admin command.
 *
 * Runs against the database of the configuration (after the migrations), prints to stdout,
 * and exits; the key itself is printed once, by create, and stored only as its hash.
 */
#ifndef TPUPLAN_KEYCMD_H
#define TPUPLAN_KEYCMD_H

#include "planner/err.h"
#include "service/config.h"

/* Runs cfg->key_cmd on cfg->key_name. Returns the process exit status: 0 done, 1 failed
 * (message on stderr). */
ERR_MUST_CHECK int keycmd_run(const struct config *cfg);

#endif
