/*
 * config.h - server settings from flags and the environment.
 *
 * Every flag --NAME also reads the environment variable TPUPLAN_NAME (upper case, '-' -> '_');
 * a flag wins over the environment, the environment over the default. The database URL is
 * --database-url or DATABASE_URL. All strings in struct config point into argv, the
 * environment or static defaults (borrowed; never freed).
 */
#ifndef TPUPLAN_CONFIG_H
#define TPUPLAN_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct config {
    const char *listen;         /* "HOST:PORT" or "[V6]:PORT"; port 0 picks a free one */
    const char *database_url;   /* libpq conninfo; required */
    const char *static_dir;     /* dashboard files, served at / */
    const char *vendor_dir;     /* npm front-end libraries, served at /vendor/ */
    const char *migrations_dir; /* NNNN_*.sql */
    unsigned workers;           /* planner worker threads (jobs) */
    unsigned executors;         /* request-executor threads, one DB connection each */
    unsigned http_threads;      /* MHD epoll thread pool */
    uint64_t max_body;          /* request body cap in bytes (413 above) */
    unsigned max_connections;
    unsigned max_per_ip;
    unsigned timeout_s;   /* idle connection timeout */
    uint64_t cache_bytes; /* finished-plan response cache */
    unsigned cache_ttl_s; /* how long another instance's DELETE can stay unseen */
    unsigned max_wait_s;  /* Prefer: wait ceiling */
    bool migrate_only;    /* `tpuplan-server migrate` */
};

/* Fills *c from argv and the environment. Returns 0, 1 after printing help (exit 0), or
 * -1 after printing an error to stderr (exit 2). */
int config_parse(struct config *c, int argc, char **argv);

/* One line per setting (the database URL without its password). */
void config_print(const struct config *c, FILE *f);

/* Splits c->listen into host (NUL-terminated, without brackets) and port. -1 if malformed. */
int config_listen_split(const char *listen, char *host, size_t hostcap, unsigned *port);

/* Parses a byte count with an optional K/M/G (binary) suffix. -1 if malformed. */
int config_parse_bytes(const char *s, uint64_t *out);

#endif
