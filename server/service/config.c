/*
 * config.c - flags and environment.
 */
#include "service/config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "planner/bytes.h"
#include "planner/plan.h"
#include "planner/text.h"
#include "service/conninfo.h"
#include "service/log.h"

/* OPT_FLAG takes no value on the command line (TPUPLAN_NAME=1/true/yes or 0/false/no);
 * OPT_NETS adds to a list; OPT_BASE is checked and copied (config_base_path). */
enum opt_kind { OPT_STR, OPT_UINT, OPT_BYTES, OPT_DURATION, OPT_FLAG, OPT_NETS, OPT_BASE };

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
    {"max-body", OPT_BYTES, OFF(max_body),
     "request body limit (64M, 1.5GiB: K/M/G/T are powers of 1024)"},
    {"max-tensors", OPT_UINT, OFF(max_tensors), "tensors per plan (bounds a job's memory)"},
    {"max-connections", OPT_UINT, OFF(max_connections), "concurrent connection limit"},
    {"max-per-ip", OPT_UINT, OFF(max_per_ip), "concurrent connections per client IP"},
    {"timeout", OPT_UINT, OFF(timeout_s), "idle connection timeout in seconds"},
    {"header-timeout", OPT_UINT, OFF(header_timeout_s),
     "seconds a connection has to send complete request headers (0: none)"},
    {"body-min-rate", OPT_BYTES, OFF(body_min_rate),
     "bytes a second a request body must keep up, after --header-timeout's grace (0: none)"},
    {"cache-bytes", OPT_BYTES, OFF(cache_bytes), "finished-plan cache size"},
    {"cache-ttl", OPT_UINT, OFF(cache_ttl_s), "finished-plan cache entry lifetime, seconds"},
    {"max-wait", OPT_UINT, OFF(max_wait_s), "ceiling of Prefer: wait=N, seconds"},
    {"trusted-proxy", OPT_NETS, OFF(trusted_proxies),
     "reverse proxy CIDR whose X-Forwarded-For is believed (repeatable)"},
    {"base-path", OPT_BASE, OFF(base_path), "serve under this path prefix, e.g. /tpuplan"},
    {"public-url", OPT_STR, OFF(public_url),
     "the URL users reach the server at (its host is the only name accepted in Host)"},
    {"tls-cert", OPT_STR, OFF(tls_cert), "PEM certificate (chain): serve https"},
    {"tls-key", OPT_STR, OFF(tls_key), "PEM private key of --tls-cert"},
    {"require-key", OPT_FLAG, OFF(require_key), "POST and DELETE need an API key"},
    {"public-list", OPT_FLAG, OFF(public_list),
     "list every plan to everyone (default: each caller its own)"},
    {"metrics-detail", OPT_FLAG, OFF(metrics_detail),
     "/metrics counts plans by API key name (default: one total)"},
    {"retain", OPT_DURATION, OFF(retain_s),
     "delete plans this long after creation (30d; 0: never)"},
    {"rate-limit", OPT_UINT, OFF(rate_limit), "plan submissions a minute per client (0: none)"},
    {"rate-burst", OPT_UINT, OFF(rate_burst), "submissions a client may send at once"},
    {"max-queue", OPT_UINT, OFF(max_queue), "queued plans at most, then 503 (0: none)"},
    {"max-heavy", OPT_UINT, OFF(max_heavy),
     "large reads at once (a whole plan, its trace, a diff), then 503"},
    {"max-patterns", OPT_UINT, OFF(max_patterns),
     "a what-if's override patterns, in all (dtype, sharding, remat)"},
    {"max-time-limit", OPT_DURATION, OFF(max_time_limit_s),
     "a plan's time_limit at most (600s, 10m; 0: the planner's 3600 s)"},
    {"log-format", OPT_STR, OFF(log_format), "text or json (one object a line)"},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

void config_plan_limits(const struct config *c, struct plan_limits *l)
{
    plan_limits_default(l);
    if (l->max_input_bytes > c->max_body)
        l->max_input_bytes = (size_t)c->max_body;
    if (l->max_tensors > c->max_tensors)
        l->max_tensors = c->max_tensors;
    l->max_patterns = c->max_patterns;
    l->max_time_limit_s = (double)c->max_time_limit_s;
}

/* The decimal number at the start of s (digits only: no sign, no blanks) into *v, at most max;
 * *end is what follows it. 0, or -1 when there is no digit or the number passes max. The one
 * number reader of the counts, durations and ports below. */
static int leading_uint(const char *s, int64_t max, int64_t *v, const char **end)
{
    size_t i = 0;

    if (s == NULL || !text_uint(s, strlen(s), &i, v) || *v > max)
        return -1;
    *end = s + i;
    return 0;
}

int config_parse_duration(const char *s, uint64_t *out)
{
    const char *end;
    int64_t v, unit = 1;

    if (leading_uint(s, INT64_MAX, &v, &end) != 0)
        return -1;
    switch (*end) {
    case '\0':
        break;
    case 's':
        end++;
        break;
    case 'm':
        unit = 60;
        end++;
        break;
    case 'h':
        unit = 3600;
        end++;
        break;
    case 'd':
        unit = 86400;
        end++;
        break;
    default:
        return -1;
    }
    if (*end != '\0' || v > 3650LL * 86400 / unit)
        return -1;
    *out = (uint64_t)(v * unit);
    return 0;
}

int config_base_path(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s), i;

    while (n > 0 && s[n - 1] == '/')
        n--;
    if (s[0] != '/' || n >= cap)
        return -1;
    for (i = 0; i < n; i++) {
        char ch = s[i];
        if (!isalnum((unsigned char)ch) && strchr("-._~/", ch) == NULL)
            return -1;
        /* Each segment: not empty, not "." or "..". */
        if (ch == '/') {
            size_t k = i + 1;
            while (k < n && s[k] != '/')
                k++;
            size_t seg = k - i - 1;
            if (seg == 0 || (s[i + 1] == '.' && (seg == 1 || (seg == 2 && s[i + 2] == '.'))))
                return -1;
        }
    }
    memcpy(out, s, n);
    out[n] = '\0';
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
        const char *end;
        int64_t u;
        if (leading_uint(val, 1000000, &u, &end) != 0 || *end != '\0') {
            log_line(LOG_PROGRAM, "%s: %s is not a count", from, val);
            return -1;
        }
        unsigned uv = (unsigned)u;
        memcpy(base, &uv, sizeof(uv));
        return 0;
    }
    case OPT_BYTES: {
        struct err e;
        err_clear(&e);
        if (bytes_parse(o->name, val, &v, &e) != ERR_OK) {
            log_line(LOG_PROGRAM, "%s: %s", from, e.msg);
            return -1;
        }
        memcpy(base, &v, sizeof(v));
        return 0;
    }
    case OPT_DURATION:
        if (config_parse_duration(val, &v) != 0) {
            log_line(LOG_PROGRAM, "%s: %s is not a duration (e.g. 30d, 12h, 90m, 3600s)", from,
                     val);
            return -1;
        }
        memcpy(base, &v, sizeof(v));
        return 0;
    case OPT_FLAG: {
        bool on =
            strcmp(val, "1") == 0 || strcasecmp(val, "true") == 0 || strcasecmp(val, "yes") == 0;
        if (!on && strcmp(val, "0") != 0 && strcasecmp(val, "false") != 0 &&
            strcasecmp(val, "no") != 0) {
            log_line(LOG_PROGRAM, "%s: %s is not 1/true/yes or 0/false/no", from, val);
            return -1;
        }
        memcpy(base, &on, sizeof(on));
        return 0;
    }
    case OPT_NETS:
        if (proxy_nets_add(&c->trusted_proxies, val) != 0) {
            log_line(LOG_PROGRAM, "%s: %s is not a list of CIDRs (at most %d)", from, val,
                     PROXY_MAX_NETS);
            return -1;
        }
        return 0;
    case OPT_BASE:
        if (config_base_path(val, c->base_path, sizeof(c->base_path)) != 0) {
            log_line(LOG_PROGRAM, "%s: %s is not a path like /tpuplan", from, val);
            return -1;
        }
        return 0;
    }
    return -1;
}

/* `key create|list|revoke [NAME]` after argv[*a] == "key"; advances *a past them. */
static int key_args(struct config *c, int argc, char **argv, int *a)
{
    const char *cmd = *a + 1 < argc ? argv[*a + 1] : "";
    bool named = strcmp(cmd, "create") == 0 || strcmp(cmd, "revoke") == 0;

    if (!named && strcmp(cmd, "list") != 0) {
        log_line(LOG_PROGRAM, "key: expected create NAME, list or revoke NAME");
        return -1;
    }
    c->key_cmd = cmd;
    *a += 1;
    if (named) {
        if (*a + 1 >= argc || strncmp(argv[*a + 1], "--", 2) == 0) {
            log_line(LOG_PROGRAM, "key %s: needs a NAME", cmd);
            return -1;
        }
        c->key_name = argv[*a + 1];
        *a += 1;
    }
    return 0;
}

static void config_usage(void)
{
    size_t i;

    printf("usage: tpuplan-server [migrate | key create|list|revoke [NAME]] "
           "[--NAME VALUE | --NAME=VALUE]...\n"
           "  migrate: apply migrations and exit\n"
           "  key:     manage API keys (create prints the key once)\n"
           "Every flag also reads TPUPLAN_NAME from the environment.\n");
    for (i = 0; i < NOPTS; i++)
        printf("  --%-16s %s\n", opts[i].name, opts[i].help);
}

/* The defaults, before the environment and the flags. */
static void config_defaults(struct config *c)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

    memset(c, 0, sizeof(*c));
    c->listen = "127.0.0.1:8080";
    c->static_dir = "static";
    c->vendor_dir = "build/web";
    c->migrations_dir = "migrations";
    c->workers = ncpu > 0 ? (unsigned)ncpu : 1;
    c->executors = 4;
    c->http_threads = ncpu > 4 ? 4 : (ncpu > 1 ? (unsigned)ncpu : 1);
    c->max_body = 64u << 20;
    c->max_tensors = 1000000;
    c->max_connections = 1024;
    c->max_per_ip = 256;
    c->timeout_s = 30;
    c->header_timeout_s = 10;
    c->body_min_rate = 500;
    c->cache_bytes = 64u << 20;
    c->cache_ttl_s = 5;
    c->max_wait_s = 60;
    c->rate_limit = 120;
    c->rate_burst = 30;
    c->max_queue = 10000;
    c->max_patterns = 256;
    c->max_heavy = 2;
    c->max_time_limit_s = 600;
    c->log_format = "text";
    c->database_url = getenv("DATABASE_URL");
}

/* Every flag's TPUPLAN_NAME from the environment (--max-body: TPUPLAN_MAX_BODY). */
static int config_env(struct config *c)
{
    for (size_t i = 0; i < NOPTS; i++) {
        char env[64] = "TPUPLAN_";
        size_t k, n = strlen(env);
        for (k = 0; opts[i].name[k] != '\0' && n + 1 < sizeof(env); k++)
            env[n++] = opts[i].name[k] == '-' ? '_' : (char)toupper(opts[i].name[k]);
        env[n] = '\0';
        const char *v = getenv(env);
        if (v != NULL && v[0] != '\0' && opt_set(c, &opts[i], v, env) != 0)
            return -1;
    }
    return 0;
}

/* The option called arg[0..len), or NULL. */
static const struct opt *opt_find(const char *arg, size_t len)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, arg, len) == 0)
            return &opts[i];
    return NULL;
}

/* The command line after the environment: migrate, key .., --NAME VALUE, --NAME=VALUE. 1
 * after --help (printed), -1 on an error (logged). */
static int config_args(struct config *c, int argc, char **argv)
{
    bool nets_from_env = c->trusted_proxies.n > 0;

    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a], *val = NULL;
        const struct opt *o;
        size_t len;
        if (strcmp(arg, "migrate") == 0 && a == 1) {
            c->migrate_only = true;
            continue;
        }
        if (strcmp(arg, "key") == 0 && a == 1) {
            if (key_args(c, argc, argv, &a) != 0)
                return -1;
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
        if ((o = opt_find(arg, len)) == NULL) {
            log_line(LOG_PROGRAM, "unknown flag --%.*s (try --help)", (int)len, arg);
            return -1;
        }
        if (o->kind == OPT_NETS && nets_from_env) {
            c->trusted_proxies.n = 0; /* flags replace the environment's list */
            nets_from_env = false;
        }
        if (eq != NULL)
            val = eq + 1;
        else if (o->kind == OPT_FLAG)
            val = "1";
        else if (a + 1 < argc)
            val = argv[++a];
        else {
            log_line(LOG_PROGRAM, "--%s needs a value", o->name);
            return -1;
        }
        if (opt_set(c, o, val, argv[a]) != 0)
            return -1;
    }
    return 0;
}

/* What the values must be together, once all are read. */
static int config_check(struct config *c)
{
    char host[256];
    unsigned port;

    if (c->database_url == NULL || c->database_url[0] == '\0') {
        log_line(LOG_PROGRAM, "set DATABASE_URL or --database-url");
        return -1;
    }
    if (c->workers == 0 || c->executors == 0 || c->http_threads == 0 || c->max_heavy == 0) {
        log_line(LOG_PROGRAM, "--workers, --executors, --http-threads, --max-heavy must be > 0");
        return -1;
    }
    if (strcmp(c->log_format, "text") != 0 && strcmp(c->log_format, "json") != 0) {
        log_line(LOG_PROGRAM, "--log-format %s: expected text or json", c->log_format);
        return -1;
    }
    if (c->max_wait_s > 60)
        c->max_wait_s = 60;
    if ((c->tls_cert == NULL) != (c->tls_key == NULL)) {
        log_line(LOG_PROGRAM, "--tls-cert and --tls-key go together");
        return -1;
    }
    if (config_listen_split(c->listen, host, sizeof(host), &port) != 0) {
        log_line(LOG_PROGRAM, "--listen %s: expected HOST:PORT", c->listen);
        return -1;
    }
    c->listen_loopback = guard_loopback(host);
    if (c->public_url != NULL && guard_url_host(c->public_url, c->public_host) != 0) {
        log_line(LOG_PROGRAM, "--public-url %s: expected http(s)://HOST[:PORT][/PATH]",
                 c->public_url);
        return -1;
    }
    return 0;
}

int config_parse(struct config *c, int argc, char **argv)
{
    int rc;

    config_defaults(c);
    if (config_env(c) != 0)
        return -1;
    if ((rc = config_args(c, argc, argv)) != 0)
        return rc;
    return config_check(c);
}

int config_listen_split(const char *listen, char *host, size_t hostcap, unsigned *port)
{
    const char *colon = strrchr(listen, ':');
    const char *h = listen, *end;
    size_t hl;
    int64_t p;

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
    if (leading_uint(colon + 1, 65535, &p, &end) != 0 || *end != '\0')
        return -1;
    *port = (unsigned)p;
    return 0;
}

void config_print(const struct config *c, FILE *f)
{
    char *masked;

    fprintf(f, "tpuplan-server settings:\n");
    fprintf(f, "  listen          %s\n", c->listen);
    masked = conninfo_masked(c->database_url);
    fprintf(f, "  database-url    %s\n", masked != NULL ? masked : "(not printed: out of memory)");
    free(masked);
    fprintf(f, "  static          %s\n", c->static_dir);
    fprintf(f, "  vendor          %s\n", c->vendor_dir);
    fprintf(f, "  migrations      %s\n", c->migrations_dir);
    fprintf(f, "  workers         %u\n", c->workers);
    fprintf(f, "  executors       %u\n", c->executors);
    fprintf(f, "  http-threads    %u\n", c->http_threads);
    fprintf(f, "  max-body        %llu\n", (unsigned long long)c->max_body);
    fprintf(f, "  max-tensors     %u\n", c->max_tensors);
    fprintf(f, "  max-connections %u\n", c->max_connections);
    fprintf(f, "  max-per-ip      %u\n", c->max_per_ip);
    fprintf(f, "  timeout         %u s\n", c->timeout_s);
    fprintf(f, "  header-timeout  %u s\n", c->header_timeout_s);
    fprintf(f, "  body-min-rate   %llu B/s\n", (unsigned long long)c->body_min_rate);
    fprintf(f, "  cache-bytes     %llu\n", (unsigned long long)c->cache_bytes);
    fprintf(f, "  cache-ttl       %u s\n", c->cache_ttl_s);
    fprintf(f, "  max-wait        %u s\n", c->max_wait_s);
    fprintf(f, "  trusted-proxy   %zu net(s)\n", c->trusted_proxies.n);
    fprintf(f, "  base-path       %s\n", c->base_path[0] != '\0' ? c->base_path : "/");
    fprintf(f, "  public-url      %s\n", c->public_url != NULL ? c->public_url : "(unset)");
    fprintf(f, "  tls             %s\n", c->tls_cert != NULL ? c->tls_cert : "off");
    fprintf(f, "  require-key     %s\n", c->require_key ? "yes" : "no");
    fprintf(f, "  public-list     %s\n", c->public_list ? "yes" : "no");
    fprintf(f, "  metrics-detail  %s\n", c->metrics_detail ? "yes" : "no");
    fprintf(f, "  retain          %llu s%s\n", (unsigned long long)c->retain_s,
            c->retain_s == 0 ? " (forever)" : "");
    fprintf(f, "  rate-limit      %u a minute per client, bursts of %u\n", c->rate_limit,
            c->rate_burst);
    fprintf(f, "  max-queue       %u\n", c->max_queue);
    fprintf(f, "  max-heavy       %u\n", c->max_heavy);
    fprintf(f, "  max-patterns    %u\n", c->max_patterns);
    fprintf(f, "  max-time-limit  %llu s\n", (unsigned long long)c->max_time_limit_s);
    fprintf(f, "  log-format      %s\n", c->log_format);
    fflush(f);
}
