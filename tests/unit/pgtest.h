/*
 * pgtest.h - a throwaway PostgreSQL for the database unit tests (test_store, test_jobs,
 * test_exec).
 *
 * Included by one test file each (hence static functions): pgtest_start() creates a cluster
 * with tests/pg.sh under build/test-pg/NAME-PID, fills pgtest_host (the socket directory)
 * and pgtest_info (conninfo of its postgres database) and applies migrations/;
 * pgtest_ctl("stop" | "pause" | "start") drives the same cluster.
 */
#ifndef TPUPLAN_PGTEST_H
#define TPUPLAN_PGTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/store.h"

static char pgtest_dir[128];
static char pgtest_host[256];
static char pgtest_info[512];

static inline int pgtest_ctl(const char *verb)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "tests/pg.sh %s %s >/dev/null", verb, pgtest_dir);
    return system(cmd);
}

static inline int pgtest_start(const char *name)
{
    char cmd[256], err[512], line[512];
    struct store *s;
    FILE *p;
    int rc;

    snprintf(pgtest_dir, sizeof pgtest_dir, "build/test-pg/%s-%ld", name, (long)getpid());
    snprintf(cmd, sizeof cmd, "tests/pg.sh start %s", pgtest_dir);
    p = popen(cmd, "r");
    if (p == NULL || fgets(line, sizeof line, p) == NULL) {
        if (p)
            pclose(p);
        return -1;
    }
    if (pclose(p) != 0)
        return -1;
    line[strcspn(line, "\n")] = '\0';
    if (sscanf(line, "host=%255s", pgtest_host) != 1)
        return -1;
    snprintf(pgtest_info, sizeof pgtest_info, "host=%s dbname=postgres user=tpuplan", pgtest_host);
    s = store_open(pgtest_info, err, sizeof err);
    if (s == NULL) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    rc = store_migrate(s, "migrations", err, sizeof err);
    store_close(s);
    if (rc != STORE_OK)
        fprintf(stderr, "%s\n", err);
    return rc;
}

#endif
