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

#include "planner/err.h"
#include "service/guard.h"
#include "service/proxy.h"

#define CONFIG_BASE_MAX 128 /* bytes of --base-path */

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
    unsigned max_tensors;       /* tensors per plan (422 above): with max_body, the per-job
                                 * memory cap: server/service/README.md#limits-per-job) */
    unsigned max_connections;
    unsigned max_per_ip;
    unsigned timeout_s;        /* idle connection timeout */
    unsigned header_timeout_s; /* request headers complete within this (deadline.h); 0: off */
    uint64_t body_min_rate;    /* a body's bytes a second after that grace (deadline.h); 0: off */
    uint64_t cache_bytes;      /* finished-plan response cache */
    unsigned cache_ttl_s;      /* how long another instance's DELETE can stay unseen */
    unsigned max_wait_s;       /* Prefer: wait ceiling */
    unsigned rate_limit;       /* plan submissions a minute per client (429 beyond); 0: no limit */
    unsigned rate_burst;       /* submissions a client may make at once before the rate applies */
    unsigned max_queue;        /* queued jobs at most (503 beyond); 0: no limit */
    unsigned max_patterns;     /* a what-if's override patterns, in all (422 beyond) */
    unsigned max_heavy;        /* large reads at once (admit.h; 503 beyond), >= 1 */
    uint64_t max_time_limit_s; /* a plan's time_limit at most (400/422 beyond); 0: the
                                * options table's 3600 s */
    const char *log_format;    /* "text" or "json" (log.h) */
    bool migrate_only;         /* `tpuplan-server migrate` */
    /* Running for a team (server/service/README.md#running-it-for-a-team). */
    struct proxy_nets trusted_proxies; /* --trusted-proxy CIDR (repeatable, or comma list) */
    char base_path[CONFIG_BASE_MAX];   /* "" or "/a/b": no trailing slash */
    const char *tls_cert, *tls_key;    /* PEM files; both or neither */
    const char *public_url;            /* the address users reach it at; NULL: unset */
    bool require_key;                  /* POST and DELETE need an API key */
    bool public_list;                  /* GET /api/v1/plans lists every plan, not the caller's */
    bool metrics_detail;               /* /metrics counts plans by API key name */
    /* Derived once all are read (guard.h): whether --listen names a loopback address, and
     * --public-url's host ("" when unset). */
    bool listen_loopback;
    uint64_t retain_s; /* default plan lifetime in seconds; 0: forever */
    /* `tpuplan-server key create|list|revoke [NAME]`: key_cmd is NULL when serving. */
    const char *key_cmd, *key_name;
    char public_host[GUARD_HOST_MAX];
};

/* Fills *c from argv and the environment. Returns 0, 1 after printing help (exit 0), or
 * -1 after printing an error to stderr (exit 2). */
ERR_MUST_CHECK int config_parse(struct config *c, int argc, char **argv);

/* One line per setting (the database URL with its passwords masked: conninfo.h). */
void config_print(const struct config *c, FILE *f);

/* Splits c->listen into host (NUL-terminated, without brackets) and port. -1 if malformed. */
ERR_MUST_CHECK int config_listen_split(const char *listen, char *host, size_t hostcap,
                                       unsigned *port);

/* Parses a duration: a count with a unit s, m, h or d ("30d"); a bare count is seconds.
 * -1 if malformed or over ten years. */
ERR_MUST_CHECK int config_parse_duration(const char *s, uint64_t *out);

/* Checks and normalises a base path ("/tpuplan/" -> "/tpuplan", "/" -> ""): it must start
 * with '/', and hold only letters, digits and "-._~/" without "//" or a "." segment.
 * 0, or -1. out has cap bytes. */
ERR_MUST_CHECK int config_base_path(const char *s, char *out, size_t cap);

/* The planner's limits a plan runs under here: the planner's defaults, the input capped at
 * max_body, the tensors at max_tensors, the time limit at max_time_limit_s and a what-if's
 * patterns at max_patterns. The request validation and the worker pool use the same. */
struct plan_limits;
void config_plan_limits(const struct config *c, struct plan_limits *l);

#endif
