/*
 * main.c - tpuplan-server: configuration, migrations, the executor and planner pools, the
 * HTTP daemon, and graceful shutdown on SIGTERM/SIGINT.
 *
 * Setup order: the plan cache, the chips and recipes documents, the executor pool, the
 * planner workers (whose completions wake the executor's parked requests), the HTTP daemon.
 * Shutdown runs the same ladder backwards (serve()'s labels): stop accepting (quiesce),
 * answer every request still waiting on the executor or parked on Prefer: wait, let
 * in-flight responses go out, stop the daemon, then stop the planner workers (which
 * finish or hand back their running plans), the executor, and free the rest.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/chip.h"
#include "planner/jsonw.h"
#include "planner/recipe.h"
#include "service/api.h"
#include "service/config.h"
#include "service/exec.h"
#include "service/http.h"
#include "service/memtrim.h"
#include "service/jobs.h"
#include "service/keycmd.h"
#include "service/log.h"
#include "service/plancache.h"
#include "service/ratelimit.h"
#include "service/route.h"
#include "service/server.h"
#include "service/store.h"

/* How often a parked Prefer: wait request re-reads its plan, to see plans finished by
 * another server instance (this instance's own workers wake it at once). */
#define WAIT_POLL_S 1.0
/* How long running plans may take to finish at shutdown before they go back to the queue. */
#define JOBS_GRACE_MS 10000

/* jobs on_done: wakes the Prefer: wait requests parked on this plan. */
static void plan_done(const char *plan_id, const struct store_plan *plan, void *arg)
{
    const struct server *srv = arg;

    exec_plan_finished(srv->exec, plan_id, plan);
}

/* jobs on_deleted: a plan deleted on any instance leaves this one's cache at once (all of
 * it when deletions may have gone unheard), so no sibling serves it after its DELETE. */
static void plan_deleted(const char *plan_id, void *arg)
{
    const struct server *srv = arg;

    if (plan_id != NULL)
        plancache_evict(srv->cache, plan_id);
    else
        plancache_clear(srv->cache);
}

static int migrate(const struct config *cfg)
{
    char err[512] = "";
    struct store *st = store_open(cfg->database_url, err, sizeof(err));
    int rc = -1;

    if (st == NULL) {
        log_line(LOG_PROGRAM, "database: %s", err);
        goto out;
    }
    if (store_migrate(st, cfg->migrations_dir, err, sizeof(err)) != 0) {
        log_line(LOG_PROGRAM, "migrations in %s: %s", cfg->migrations_dir, err);
        goto out;
    }
    log_line(LOG_PROGRAM, "migrations in %s applied", cfg->migrations_dir);
    rc = 0;
out:
    if (st != NULL)
        store_close(st);
    return rc;
}

/* The GET /api/v1/chips document: the planner's chip table (memory figures, which of them
 * are assumptions, and why). Built once, since the table is static; the transport copies
 * it into each response. Caller owns the text (*len bytes); NULL when out of memory. */
static char *chips_document(size_t *len)
{
    struct jsonw w;
    char *t = NULL;

    jsonw_init(&w, (size_t)1 << 20);
    jsonw_obj_begin(&w, NULL);
    jsonw_arr_begin(&w, "chips");
    for (size_t i = 0; i < chip_count(); i++) {
        jsonw_obj_begin(&w, NULL);
        chip_json_write(&w, chip_at(i));
        jsonw_obj_end(&w);
    }
    jsonw_arr_end(&w);
    jsonw_obj_end(&w);
    if (jsonw_finish(&w, &t, len) != ERR_OK)
        return NULL;
    return t;
}

/* The settings block, as text on stderr; with JSON logs one line each through the log. */
static void settings_log(const struct config *cfg)
{
    char *text = NULL, *line, *save = NULL;
    size_t len = 0;
    FILE *m;

    if (strcmp(cfg->log_format, "json") != 0) {
        config_print(cfg, stderr);
        return;
    }
    m = open_memstream(&text, &len);
    if (m == NULL)
        return;
    config_print(cfg, m);
    fclose(m);
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
        log_line("settings", "%s", line + strspn(line, " "));
    free(text);
}

/* The executor pools (route.h's lanes): the executors, one thread for the operators'
 * endpoints, --max-heavy for large reads. 0, or -1 with a message in err (those started
 * are left for pools_stop). */
static int pools_start(struct server *srv, char *err, size_t cap)
{
    const struct config *cfg = srv->cfg;

    srv->exec = exec_start(cfg->database_url, cfg->executors, WAIT_POLL_S, route_run, api_abandon,
                           err, cap);
    if (srv->exec != NULL)
        srv->exec_ops =
            exec_start(cfg->database_url, 1, WAIT_POLL_S, route_run, api_abandon, err, cap);
    if (srv->exec_ops != NULL)
        srv->exec_heavy = exec_start(cfg->database_url, cfg->max_heavy, WAIT_POLL_S,
                                     route_run_heavy, api_abandon, err, cap);
    return srv->exec_heavy != NULL ? 0 : -1;
}

/* Stops the pools (their queued and parked requests answered), and frees them when told. */
static void pools_stop(struct server *srv, bool free_them)
{
    struct exec *const pools[] = {srv->exec, srv->exec_ops, srv->exec_heavy};

    for (size_t i = 0; i < sizeof(pools) / sizeof(pools[0]); i++) {
        exec_stop(pools[i]);
        if (free_them)
            exec_free(pools[i]);
    }
}

/* Runs the server until SIGINT or SIGTERM arrives in sigs. 0 after a clean stop, 1 when
 * something could not start. */
static int serve(const struct config *cfg, const sigset_t *sigs)
{
    struct server srv = {0}; /* not memset: its atomics start zero by initialization */
    struct jobs_config jc;
    struct plan_limits limits;
    struct err e;
    char err[512] = "";
    int jobs_grace_ms = 0;
    int sig = 0, rc = 1;

    memset(&jc, 0, sizeof(jc));
    srv.cfg = cfg;
    srv.cache = plancache_new(cfg->cache_bytes, cfg->cache_ttl_s);
    if (srv.cache == NULL) {
        log_line(LOG_PROGRAM, "out of memory");
        return 1;
    }
    srv.ratelimit = ratelimit_new(cfg->rate_limit, cfg->rate_burst);
    if (srv.ratelimit == NULL && cfg->rate_limit > 0) {
        log_line(LOG_PROGRAM, "out of memory");
        goto out_cache;
    }
    /* NULL is not fatal: GET /api/v1/chips then answers 500. */
    srv.chips = chips_document(&srv.chips_len);
    if (recipe_catalog(&srv.recipes, &srv.recipes_len, &e) != ERR_OK)
        log_line(LOG_PROGRAM, "the recipe catalog: %s", e.msg); /* GET /api/v1/recipes: 500 */
    if (pools_start(&srv, err, sizeof(err)) != 0) {
        log_line(LOG_PROGRAM, "executor pool: %s", err);
        goto out_exec;
    }
    jc.conninfo = cfg->database_url;
    jc.base_path = cfg->base_path;
    jc.workers = cfg->workers;
    config_plan_limits(cfg, &limits);
    jc.limits = &limits; /* copied */
    jc.on_done = plan_done;
    jc.on_deleted = plan_deleted;
    jc.arg = &srv;
    srv.jobs = jobs_start(&jc, err, sizeof(err));
    if (srv.jobs == NULL) {
        log_line(LOG_PROGRAM, "planner workers: %s", err);
        goto out_exec;
    }
    if (http_start(&srv) != 0)
        goto out_jobs;
    log_line(LOG_PROGRAM, "listening on %s://%s:%u%s/", cfg->tls_cert != NULL ? "https" : "http",
             strncmp(cfg->listen, "0.0.0.0:", 8) == 0 || cfg->listen[0] == ':' ? "localhost"
                                                                               : "127.0.0.1",
             http_port(&srv), cfg->base_path);

    while (sig != SIGINT && sig != SIGTERM)
        if (sigwait(sigs, &sig) != 0)
            break;
    log_line(LOG_PROGRAM, "%s: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
    http_quiesce(&srv);
    /* Before the daemon stops: queued and parked requests are answered, not cut off. */
    pools_stop(&srv, false);
    http_stop(&srv, 10.0);
    jobs_grace_ms = JOBS_GRACE_MS;
    rc = 0;
out_jobs:
    jobs_stop(srv.jobs, jobs_grace_ms);
out_exec:
    pools_stop(&srv, true);
out_cache:
    free(srv.chips);
    free(srv.recipes);
    plancache_free(srv.cache);
    ratelimit_free(srv.ratelimit);
    if (rc == 0)
        log_line(LOG_PROGRAM, "stopped");
    return rc;
}

int main(int argc, char **argv)
{
    struct config cfg;
    sigset_t sigs;
    int rc;

    rc = config_parse(&cfg, argc, argv);
    if (rc != 0)
        return rc > 0 ? 0 : 2;
    log_set_json(strcmp(cfg.log_format, "json") == 0);
    settings_log(&cfg);
    signal(SIGPIPE, SIG_IGN);
    /* Each job parses, plans and writes a few MB and frees them. By default glibc gives
     * that back to the kernel (blocks over 128 KiB are mmap'd, heap tops trimmed), and the
     * next job faults every page in again, which on a VM costs more than the work itself:
     * for the 1,000-tensor bench model, validation 14 -> 4 ms and planning 31 -> 21 ms
     * with the memory kept. So keep it (memtrim.h), and give it back after large work. */
    memtrim_init();
    /* Every thread inherits this mask, so only sigwait() in serve() sees the signals. */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    if (migrate(&cfg) != 0)
        return 1;
    if (cfg.migrate_only)
        return 0;
    if (cfg.key_cmd != NULL)
        return keycmd_run(&cfg);
    return serve(&cfg, &sigs);
}
