/*
 * config.c - flags and environment.
 */
#include "service/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "service/log.h"

enum opt_kind { OPT_STR, OPT_UINT, OPT_BYTES };

struct opt {
    const char *name;
    enum opt_kind kind;
    size_t off;
    const char *help;
};

#define OFF(f) offsetof(struct config, f)

static const struct opt opts[] = {
    {"listen", OPT_STR, OFF(listen), "HOST:PORT to listen on (port 0: any free port)"},
    {"database-url", OPT_STR, OFF(database_url), "libpq URL (or DATABASE_URL)"},
    {"static", OPT_STR, OFF(static_dir), "dashboard directory served at /"},
    {"vendor", OPT_STR, OFF(vendor_dir), "front-end libraries served at /vendor/"},
    {"migrations", OPT_STR, OFF(migrations_dir), "directory of NNNN_*.sql migrations"},
    {"workers", OPT_UINT, OFF(workers), "planner worker threads (default: cores)"},
    {"executors", OPT_UINT, OFF(executors), "request-executor threads (DB connections)"},
    {"http-threads", OPT_UINT, OFF(http_threads), "HTTP event-loop threads"},
    {"max-body", OPT_BYTES, OFF(max_body), "request body limit (K/M/G suffixes)"},
    {"max-connections", OPT_UINT, OFF(max_connections), "concurrent connection limit"},
    {"max-per-ip", OPT_UINT, OFF(max_per_ip), "concurrent connections per client IP"},
    {"timeout", OPT_UINT, OFF(timeout_s), "idle connection timeout in seconds"},
    {"cache-bytes", OPT_BYTES, OFF(cache_bytes), "finished-plan cache size"},
    {"cache-ttl", OPT_UINT, OFF(cache_ttl_s), "finished-plan cache entry lifetime, seconds"},
    {"max-wait", OPT_UINT, OFF(max_wait_s), "ceiling of Prefer: wait=N, seconds"},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

int config_parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    unsigned shift = 0;

    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    switch (*end) {
    case '\0':
        break;
    case 'K':
    case 'k':
        shift = 10;
        end++;
        break;
    case 'M':
    case 'm':
        shift = 20;
        end++;
        break;
    case 'G':
    case 'g':
        shift = 30;
        end++;
        break;
    default:
        return -1;
    }
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end != '\0' || (shift > 0 && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int opt_set(struct config *c, const struct opt *o, const char *val, const char *from)
{
    char *base = (char *)c + o->off;
    uint64_t v;

    switch (o->kind) {
    case OPT_STR:
        memcpy(base, &val, sizeof(val));
        return 0;
    case OPT_UINT: {
        char *end;
        unsigned long u;
        errno = 0;
        u = isdigit((unsigned char)val[0]) ? strtoul(val, &end, 10) : (end = (char *)val, 0);
        if (errno != 0 || *end != '\0' || end == val || u > 1000000) {
            log_line(LOG_PROGRAM, "%s: %s is not a count", from, val);
            return -1;
        }
        unsigned uv = (unsigned)u;
        memcpy(base, &uv, sizeof(uv));
        return 0;
    }
    case OPT_BYTES:
        if (config_parse_bytes(val, &v) != 0) {
            log_line(LOG_PROGRAM, "%s: %s is not a byte count", from, val);
            return -1;
        }
        memcpy(base, &v, sizeof(v));
        return 0;
    }
    return -1;
}

static void config_usage(void)
{
    size_t i;

    printf("usage: tpuplan-server [migrate] [--NAME VALUE | --NAME=VALUE]...\n"
           "  migrate: apply migrations and exit\n"
           "Every flag also reads TPUPLAN_NAME from the environment.\n");
    for (i = 0; i < NOPTS; i++)
        printf("  --%-16s %s\n", opts[i].name, opts[i].help);
}

int config_parse(struct config *c, int argc, char **argv)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t i;
    int a;

    memset(c, 0, sizeof(*c));
    c->listen = "127.0.0.1:8080";
    c->static_dir = "static";
    c->vendor_dir = "build/web";
    c->migrations_dir = "migrations";
    c->workers = ncpu > 0 ? (unsigned)ncpu : 1;
    c->executors = 4;
    c->http_threads = ncpu > 4 ? 4 : (ncpu > 1 ? (unsigned)ncpu : 1);
    c->max_body = 64u << 20;
    c->max_connections = 1024;
    c->max_per_ip = 256;
    c->timeout_s = 30;
    c->cache_bytes = 64u << 20;
    c->cache_ttl_s = 5;
    c->max_wait_s = 60;
    c->database_url = getenv("DATABASE_URL");

    for (i = 0; i < NOPTS; i++) {
        char env[64] = "TPUPLAN_";
        size_t k, n = strlen(env);
        for (k = 0; opts[i].name[k] != '\0' && n + 1 < sizeof(env); k++)
            env[n++] = opts[i].name[k] == '-' ? '_' : (char)toupper(opts[i].name[k]);
        env[n] = '\0';
        const char *v = getenv(env);
        if (v != NULL && v[0] != '\0' && opt_set(c, &opts[i], v, env) != 0)
            return -1;
    }
    for (a = 1; a < argc; a++) {
        const char *arg = argv[a], *val = NULL;
        size_t len;
        if (strcmp(arg, "migrate") == 0 && a == 1) {
            c->migrate_only = true;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            config_usage();
            return 1;
        }
        if (strncmp(arg, "--", 2) != 0) {
            log_line(LOG_PROGRAM, "unexpected argument %s (try --help)", arg);
            return -1;
        }
        arg += 2;
        const char *eq = strchr(arg, '=');
        len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        for (i = 0; i < NOPTS; i++)
            if (strlen(opts[i].name) == len && strncmp(opts[i].name, arg, len) == 0)
                break;
        if (i == NOPTS) {
            log_line(LOG_PROGRAM, "unknown flag --%.*s (try --help)", (int)len, arg);
            return -1;
        }
        if (eq != NULL)
            val = eq + 1;
        else if (a + 1 < argc)
            val = argv[++a];
        else {
            log_line(LOG_PROGRAM, "--%s needs a value", opts[i].name);
            return -1;
        }
        if (opt_set(c, &opts[i], val, argv[a]) != 0)
            return -1;
    }
    if (c->database_url == NULL || c->database_url[0] == '\0') {
        log_line(LOG_PROGRAM, "set DATABASE_URL or --database-url");
        return -1;
    }
    if (c->workers == 0 || c->executors == 0 || c->http_threads == 0) {
        log_line(LOG_PROGRAM, "--workers, --executors, --http-threads must be > 0");
        return -1;
    }
    if (c->max_wait_s > 60)
        c->max_wait_s = 60;
    char host[256];
    unsigned port;
    if (config_listen_split(c->listen, host, sizeof(host), &port) != 0) {
        log_line(LOG_PROGRAM, "--listen %s: expected HOST:PORT", c->listen);
        return -1;
    }
    return 0;
}

int config_listen_split(const char *listen, char *host, size_t hostcap, unsigned *port)
{
    const char *colon = strrchr(listen, ':');
    const char *h = listen;
    size_t hl;
    char *end;
    unsigned long p;

    if (colon == NULL)
        return -1;
    hl = (size_t)(colon - listen);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
        h++;
        hl -= 2;
    }
    if (hl >= hostcap)
        return -1;
    memcpy(host, h, hl);
    host[hl] = '\0';
    errno = 0;
    p = strtoul(colon + 1, &end, 10);
    if (errno != 0 || end == colon + 1 || *end != '\0' || p > 65535)
        return -1;
    *port = (unsigned)p;
    return 0;
}

/* Prints the URL with any password replaced by "***". */
static void print_url(const char *url, FILE *f)
{
    const char *scheme = strstr(url, "://");
    const char *at = strchr(url, '@');
    const char *pw;

    if (scheme != NULL && at != NULL) {
        pw = memchr(scheme + 3, ':', (size_t)(at - scheme - 3));
        if (pw != NULL) {
            fprintf(f, "%.*s:***%s\n", (int)(pw - url), url, at);
            return;
        }
    }
    if (strstr(url, "password") != NULL) {
        fputs("(conninfo with a password, not printed)\n", f);
        return;
    }
    fprintf(f, "%s\n", url);
}

void config_print(const struct config *c, FILE *f)
{
    fprintf(f, "tpuplan-server settings:\n");
    fprintf(f, "  listen          %s\n", c->listen);
    fprintf(f, "  database-url    ");
    print_url(c->database_url, f);
    fprintf(f, "  static          %s\n", c->static_dir);
    fprintf(f, "  vendor          %s\n", c->vendor_dir);
    fprintf(f, "  migrations      %s\n", c->migrations_dir);
    fprintf(f, "  workers         %u\n", c->workers);
    fprintf(f, "  executors       %u\n", c->executors);
    fprintf(f, "  http-threads    %u\n", c->http_threads);
    fprintf(f, "  max-body        %llu\n", (unsigned long long)c->max_body);
    fprintf(f, "  max-connections %u\n", c->max_connections);
    fprintf(f, "  max-per-ip      %u\n", c->max_per_ip);
    fprintf(f, "  timeout         %u s\n", c->timeout_s);
    fprintf(f, "  cache-bytes     %llu\n", (unsigned long long)c->cache_bytes);
    fprintf(f, "  cache-ttl       %u s\n", c->cache_ttl_s);
    fprintf(f, "  max-wait        %u s\n", c->max_wait_s);
    fflush(f);
}
