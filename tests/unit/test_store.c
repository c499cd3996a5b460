/*
 * test_store.c - the store modules (store.h) against a real, throwaway PostgreSQL (tests/pg.sh).
 *
 * The group setup starts a cluster and migrates it; every test starts from empty tables
 * (TRUNCATE is ~20x faster than a CREATE DATABASE ... TEMPLATE copy here), so queue tests
 * start from an empty queue. Run from the repository root (tests/run.sh does).
 */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <pthread.h>

#include "service/ids.h"
#include "service/sha256.h"
#include "service/store.h"

#include "pgtest.h"

/* Runs one SQL command with no parameters on conninfo; returns the first value (malloc'd)
 * or NULL. Test-only glue: the statements are constants of this file. */
static char *sql1(const char *conninfo, const char *sql)
{
    PGconn *c = PQconnectdb(conninfo);
    char *v = NULL;
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0)
            v = strdup(PQgetvalue(r, 0, 0));
        else if (PQresultStatus(r) == PGRES_COMMAND_OK)
            v = strdup("");
        else
            fprintf(stderr, "sql1: %s", PQerrorMessage(c));
        PQclear(r);
    }
    PQfinish(c);
    return v;
}

static long sql_long(const char *sql)
{
    char *v = sql1(pgtest_info, sql);
    long n = v ? strtol(v, NULL, 10) : -1;
    free(v);
    return n;
}

static int group_setup(void **state)
{
    (void)state;
    return pgtest_start("store");
}

static int group_teardown(void **state)
{
    (void)state;
    return pgtest_ctl("stop") == 0 ? 0 : -1;
}

/* Empty tables and a store on them. */
static int setup(void **state)
{
    char err[256];
    char *ok = sql1(pgtest_info, "TRUNCATE plans, jobs, idempotency_keys, frontiers");
    if (ok == NULL)
        return -1;
    free(ok);
    *state = store_open(pgtest_info, err, sizeof err);
    return *state ? 0 : -1;
}

static int teardown(void **state)
{
    store_close(*state);
    return 0;
}

static const struct plan_summary sum = {
    .name = "m",
    .chip = "v5e",
    .source_format = "json",
    .tensors = 7,
    .logical_bytes = 1000,
    .padded_bytes = 4096,
    .capacity_bytes = 16ull << 30,
};

static void create(struct store *s, const char *name, struct store_created *out)
{
    struct store_new_plan np = {.name = name,
                                .chip = "v5e",
                                .source_format = "json",
                                .options_json = "{\"chip\":\"v5e\"}",
                                .input = "{}",
                                .input_len = 2,
                                .summary = &sum};
    assert_int_equal(store_plan_create(s, &np, out), STORE_OK);
}

/* The migrations in the repository: every one of them must be recorded as applied. */
static long migration_files(void)
{
    glob_t g;
    long n = 0;

    if (glob("migrations/[0-9][0-9][0-9][0-9]_*.sql", 0, NULL, &g) == 0)
        n = (long)g.gl_pathc;
    globfree(&g);
    assert_true(n >= 3);
    return n;
}

static void test_migrate_is_idempotent(void **state)
{
    char err[256];
    assert_int_equal(store_migrate(*state, "migrations", err, sizeof err), STORE_OK);
    assert_int_equal(store_ready(*state, "migrations"), 1);
    assert_int_equal(sql_long("SELECT count(*) FROM schema_migrations"), migration_files());
    assert_int_equal(store_ready(*state, "/nonexistent"), 0);
    assert_int_not_equal(store_migrate(*state, "/nonexistent", err, sizeof err), STORE_OK);
    assert_non_null(strstr(err, "/nonexistent"));
}

struct migrator {
    char conninfo[512];
    int rc;
    char err[256];
};

static void *migrate_thread(void *p)
{
    struct migrator *m = p;
    struct store *s = store_open(m->conninfo, m->err, sizeof m->err);
    m->rc = s ? store_migrate(s, "migrations", m->err, sizeof m->err) : -100;
    store_close(s);
    return NULL;
}

/* Servers starting together on an empty database: the advisory lock serialises them, so
 * each migration runs once and neither fails on the other's tables. */
static void test_concurrent_migrations_run_each_once(void **state)
{
    struct migrator m[3];
    pthread_t t[3];
    char info[512];
    (void)state;
    memset(m, 0, sizeof m);
    char *ok = sql1(pgtest_info, "CREATE DATABASE migrate_race");
    assert_non_null(ok);
    free(ok);
    for (int i = 0; i < 3; i++) {
        snprintf(m[i].conninfo, sizeof m[i].conninfo, "host=%s dbname=migrate_race user=tpuplan",
                 pgtest_host);
        assert_int_equal(pthread_create(&t[i], NULL, migrate_thread, &m[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        if (m[i].rc != STORE_OK)
            fprintf(stderr, "migrator %d: %s\n", i, m[i].err);
        assert_int_equal(m[i].rc, STORE_OK);
    }
    snprintf(info, sizeof info, "%s", m[0].conninfo);
    char *v = sql1(info, "SELECT count(*) || '/' || min(version) FROM schema_migrations");
    char want[32];
    snprintf(want, sizeof want, "%ld/0001_init", migration_files());
    assert_non_null(v);
    assert_string_equal(v, want);
    free(v);
}

/* Bytes with NULs survive; uint64 summaries above INT64_MAX round-trip exactly. */
static void test_created_plan_reads_back_exactly(void **state)
{
    struct store *s = *state;
    static const char input[] = {'a', '\0', 'b', '\xff', '\0'};
    struct plan_summary big = sum;
    big.logical_bytes = UINT64_MAX;
    big.peak_bytes = (1ull << 63) + 5;
    big.fits = true;
    struct store_new_plan np = {.name = "roundtrip",
                                .chip = "v5p",
                                .source_format = "json",
                                .input = input,
                                .input_len = sizeof input,
                                .summary = &big};
    struct store_created c;
    struct store_plan p;
    assert_int_equal(store_plan_create(s, &np, &c), STORE_OK);
    assert_true(ids_valid_id(c.id));
    assert_int_equal(strlen(c.manage_token), IDS_TOKEN_LEN);
    assert_false(c.replayed);
    assert_int_equal(store_plan_get(s, c.id, &p), STORE_OK);
    assert_string_equal(p.name, "roundtrip");
    assert_string_equal(p.chip, "v5p");
    assert_string_equal(p.status, "queued");
    assert_null(p.result_json);
    assert_null(p.error_json);
    assert_int_equal(p.version, 1);
    assert_int_equal(strlen(p.created_at), strlen("2026-01-01T00:00:00.000000Z"));
    assert_true(p.summary.logical_bytes == UINT64_MAX);
    assert_true(p.summary.peak_bytes == (1ull << 63) + 5);
    assert_int_equal(p.summary.tensors, 7);
    assert_true(p.summary.fits);
    store_plan_free(&p);
    /* The token is stored only as its hash. */
    assert_int_equal(sql_long("SELECT count(*) FROM plans WHERE length(manage_token_hash) = 32"),
                     1);
    assert_int_equal(sql_long("SELECT length(input) FROM plans"), (long)sizeof input);
    assert_int_equal(store_plan_get(s, "AAAAAAAAAAAAAAAAAAAAAA", &p), STORE_NOTFOUND);
    assert_int_equal(store_plan_get(s, "../etc/passwd", &p), STORE_NOTFOUND);
}

/* A submission with Idempotency-Key key in scope, of a body whose hash is "aa". */
static struct store_new_plan idem_plan(const char *key, const char *scope)
{
    struct store_new_plan np = {.name = "idem",
                                .chip = "v5e",
                                .source_format = "json",
                                .input = "{}",
                                .input_len = 2,
                                .idempotency_key = key,
                                .idempotency_scope = scope,
                                .body_sha256_hex = "aa",
                                .summary = &sum};
    return np;
}

static void test_idempotency_key_replays_or_conflicts(void **state)
{
    struct store *s = *state;
    struct store_new_plan np = idem_plan("k-1", NULL);
    struct store_created a, b;
    assert_int_equal(store_plan_create(s, &np, &a), STORE_OK);
    assert_false(a.replayed);
    assert_int_equal(strlen(a.manage_token), IDS_TOKEN_LEN);
    assert_int_equal(store_plan_create(s, &np, &b), STORE_OK);
    assert_true(b.replayed);
    assert_string_equal(a.id, b.id);
    assert_string_equal(b.manage_token, "");
    np.body_sha256_hex = "bb";
    assert_int_equal(store_plan_create(s, &np, &b), STORE_CONFLICT);
    assert_int_equal(sql_long("SELECT count(*) FROM plans"), 1);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs"), 1);
    /* A key needs a body hash to compare against. */
    np.body_sha256_hex = NULL;
    assert_int_equal(store_plan_create(s, &np, &b), STORE_INVALID);
    char longkey[STORE_KEY_MAX + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    np.body_sha256_hex = "aa";
    np.idempotency_key = longkey;
    assert_int_equal(store_plan_create(s, &np, &b), STORE_INVALID);
    longkey[STORE_KEY_MAX] = '\0'; /* exactly the limit */
    assert_int_equal(store_plan_create(s, &np, &b), STORE_OK);
    assert_false(b.replayed);
}

/* A key names a plan within its scope only: another scope's same key is a new plan, neither
 * a replay of it nor a conflict with it, and the key is stored only as a digest. */
static void test_idempotency_keys_are_scoped(void **state)
{
    struct store *s = *state;
    struct store_new_plan np = idem_plan("shared-key", "key 1");
    struct store_created a, b, c;

    assert_int_equal(store_plan_create(s, &np, &a), STORE_OK);
    np.idempotency_scope = "key 2"; /* another body too: no 422 tells it the key is used */
    np.body_sha256_hex = "bb";
    assert_int_equal(store_plan_create(s, &np, &b), STORE_OK);
    assert_false(b.replayed);
    np.body_sha256_hex = "aa"; /* the owner's body: still not the owner's plan */
    np.idempotency_scope = "addr 127.0.0.2";
    assert_int_equal(store_plan_create(s, &np, &c), STORE_OK);
    assert_false(c.replayed);
    assert_string_not_equal(c.id, a.id);
    np.idempotency_scope = "key 1";
    assert_int_equal(store_plan_create(s, &np, &c), STORE_OK);
    assert_true(c.replayed);
    assert_string_equal(c.id, a.id);
    /* A NUL keeps scope and key apart: ("key 1", "2x") and ("key 12", "x") are two keys. */
    np.idempotency_key = "2x";
    assert_int_equal(store_plan_create(s, &np, &c), STORE_OK);
    assert_false(c.replayed);
    np.idempotency_scope = "key 12";
    np.idempotency_key = "x";
    np.body_sha256_hex = "bb";
    assert_int_equal(store_plan_create(s, &np, &c), STORE_OK);
    assert_false(c.replayed);
    assert_int_equal(sql_long("SELECT count(*) FROM plans"), 5);
    assert_int_equal(sql_long("SELECT count(*) FROM idempotency_keys WHERE key ~ '^[0-9a-f]{64}$'"
                              " AND strpos(key, 'shared') = 0"),
                     5);
}

static const struct store_list_owner everyone = {.all = true};

static void test_list_pages_through_every_plan_once(void **state)
{
    struct store *s = *state;
    struct store_created c[7];
    char *items, *next, *cursor = NULL;
    int seen = 0;
    const char *names[7] = {"alpha-0", "alpha-1", "alpha-2", "Alpha-3", "alpha-4", "b%_x", "bxyx"};
    for (int i = 0; i < 7; i++)
        create(s, names[i], &c[i]);
    /* Walk alpha-* two at a time, newest first: ids 4 3 | 2 1 | 0. */
    for (int page = 0; page < 3; page++) {
        assert_int_equal(store_plan_list(s, &everyone, 2, cursor, "ALPHA", &items, &next),
                         STORE_OK);
        for (int k = 4 - 2 * page; k >= 0 && k > 2 - 2 * page; k--) {
            assert_non_null(strstr(items, c[k].id));
            seen++;
        }
        if (page < 2) {
            char *first = strstr(items, c[4 - 2 * page].id);
            char *second = strstr(items, c[3 - 2 * page].id);
            assert_true(first != NULL && second != NULL && first < second);
            assert_non_null(next);
        } else {
            assert_null(next);
        }
        free(items);
        free(cursor);
        cursor = next;
    }
    assert_int_equal(seen, 5);
    /* % and _ match literally: only "b%_x", not "bxyx". */
    assert_int_equal(store_plan_list(s, &everyone, 10, NULL, "%_", &items, &next), STORE_OK);
    assert_non_null(strstr(items, c[5].id));
    assert_null(strstr(items, c[6].id));
    assert_non_null(strstr(items, "\"capacity_bytes\" : 17179869184"));
    free(items);
    assert_int_equal(store_plan_list(s, &everyone, 10, NULL, "nomatch", &items, &next), STORE_OK);
    assert_string_equal(items, "[]");
    free(items);
    assert_int_equal(store_plan_list(s, &everyone, 2, "bm90LWEtY3Vyc29y", NULL, &items, &next),
                     STORE_INVALID);
    assert_int_equal(store_plan_list(s, &everyone, 0, NULL, NULL, &items, &next), STORE_INVALID);
}

/* Which of the n plans c items lists, as "p5 p1": the last created (newest) first. */
static void ids_listed(const char *items, const struct store_created *c, size_t n, char *out,
                       size_t cap)
{
    const char *at[5] = {NULL};
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        at[i] = strstr(items, c[i].id);
    /* newest first: walk from the last created */
    for (size_t k = n; k-- > 0;)
        if (at[k] != NULL)
            snprintf(out + strlen(out), cap - strlen(out), "%sp%zu", out[0] ? " " : "", k + 1);
}

/* A caller lists its own plans: those of its API key and of its client token, both when it
 * presents both; with neither, none; `all` lists every one. */
static void test_list_shows_the_callers_own_plans(void **state)
{
    struct store *s = *state;
    struct store_apikey key;
    unsigned char kh[APIKEY_HASH_LEN] = {1}, ca[SHA256_LEN], cb[SHA256_LEN];
    struct store_created c[5];
    char *items, *next, got[64];
    const struct {
        int64_t key;
        const unsigned char *client;
    } made[5] = {{0, ca}, {0, cb}, {0, NULL}, {1, NULL}, {1, ca}};
    const struct {
        struct store_list_owner o;
        const char *want;
    } cases[] = {
        {{.client_hash = ca}, "p5 p1"},
        {{.client_hash = cb}, "p2"},
        {{.key_id = 1}, "p5 p4"},
        {{.key_id = 1, .client_hash = cb}, "p5 p4 p2"},
        {{.key_id = 0}, ""},
        {{.all = true}, "p5 p4 p3 p2 p1"},
    };

    sha256_of("browser a", 9, ca);
    sha256_of("browser b", 9, cb);
    assert_int_equal(store_apikey_create(s, "lister", "listerAA", kh), STORE_OK);
    assert_int_equal(store_apikey_find(s, "listerAA", &key), STORE_OK);
    for (size_t i = 0; i < 5; i++) {
        struct store_new_plan np = {.name = "mine",
                                    .chip = "v5e",
                                    .source_format = "json",
                                    .input = "{}",
                                    .input_len = 2,
                                    .summary = &sum,
                                    .api_key_id = made[i].key ? key.id : 0,
                                    .client_hash = made[i].client};
        assert_int_equal(store_plan_create(s, &np, &c[i]), STORE_OK);
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct store_list_owner o = cases[i].o;
        if (o.key_id != 0)
            o.key_id = key.id;
        assert_int_equal(store_plan_list(s, &o, 10, NULL, NULL, &items, &next), STORE_OK);
        ids_listed(items, c, 5, got, sizeof got);
        assert_string_equal(got, cases[i].want);
        assert_null(next);
        free(items);
    }
    assert_int_equal(sql_long("SELECT count(*) FROM plans WHERE length(client_hash) = 32"), 3);
}

/* A cursor as the store writes them: base64url("<micros>.<id>"). */
static void cursor_of(const char *micros, const char *id, char *out)
{
    char raw[96];
    int n = snprintf(raw, sizeof raw, "%s.%s", micros, id);
    ids_b64url_encode((const unsigned char *)raw, (size_t)n, out);
}

/* What a client sends that the database would refuse (a cursor past its interval
 * arithmetic, text that is not UTF-8, a what-if's parent deleted first) is the client's
 * mistake, answered as such, never a failed statement (a 500). */
static void test_client_mistakes_are_refused_not_failed(void **state)
{
    struct store *s = *state;
    struct store_created c, parent;
    char cur[160], *items = NULL, *next = NULL;
    struct store_new_plan np = {.name = "child",
                                .chip = "v5e",
                                .source_format = "json",
                                .input = "{}",
                                .input_len = 2,
                                .summary = &sum};

    create(s, "one", &c);
    /* 9999-12-31T23:59:59.999999Z is the last time a cursor may name */
    cursor_of("253402300799999999", c.id, cur);
    assert_int_equal(store_plan_list(s, &everyone, 5, cur, NULL, &items, &next), STORE_OK);
    assert_non_null(strstr(items, c.id));
    free(items);
    free(next);
    cursor_of("253402300800000000", c.id, cur);
    assert_int_equal(store_plan_list(s, &everyone, 5, cur, NULL, &items, &next), STORE_INVALID);
    cursor_of("99999999999999999999999", c.id, cur);
    assert_int_equal(store_plan_list(s, &everyone, 5, cur, NULL, &items, &next), STORE_INVALID);
    cursor_of("-5", c.id, cur);
    assert_int_equal(store_plan_list(s, &everyone, 5, cur, NULL, &items, &next), STORE_INVALID);
    cursor_of("-", c.id, cur);
    assert_int_equal(store_plan_list(s, &everyone, 5, cur, NULL, &items, &next), STORE_INVALID);
    assert_int_equal(store_plan_list(s, &everyone, 5, NULL, "x\xff", &items, &next), STORE_INVALID);
    assert_int_equal(store_plan_list(s, &everyone, 5, NULL, "\xc3\xbc", &items, &next), STORE_OK);
    assert_string_equal(items, "[]");
    free(items);
    /* an Idempotency-Key that is not UTF-8 */
    np.idempotency_key = "k\xc3";
    np.body_sha256_hex = "aa";
    assert_int_equal(store_plan_create(s, &np, &parent), STORE_INVALID);
    /* a what-if whose parent was deleted first: not found, and nothing written */
    np.idempotency_key = NULL;
    np.parent_id = "AAAAAAAAAAAAAAAAAAAAAA";
    assert_int_equal(store_plan_create(s, &np, &parent), STORE_NOTFOUND);
    assert_int_equal(sql_long("SELECT count(*) FROM plans"), 1);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs"), 1);
    np.parent_id = c.id;
    assert_int_equal(store_plan_create(s, &np, &parent), STORE_OK);
}

/* The token's digest is computed in C (only it reaches SQL) and is the same SHA-256 that
 * PostgreSQL computes; deleting names the digest. */
static void test_delete_needs_the_token_digest(void **state)
{
    struct store *s = *state;
    struct store_created c;
    struct store_plan_owner own;
    unsigned char want[SHA256_LEN], other[SHA256_LEN] = {0};
    char q[256];

    create(s, "del", &c);
    assert_int_equal(store_plan_owner(s, c.id, &own), STORE_OK);
    sha256_of(c.manage_token, strlen(c.manage_token), want);
    assert_memory_equal(own.token_hash, want, SHA256_LEN);
    assert_int_equal(own.api_key_id, 0);
    snprintf(q, sizeof q,
             "SELECT count(*) FROM plans WHERE manage_token_hash = sha256(convert_to('%s', "
             "'UTF8'))",
             c.manage_token);
    assert_int_equal(sql_long(q), 1);
    assert_int_equal(store_plan_delete(s, c.id, other), STORE_NOTFOUND);
    assert_int_equal(store_plan_delete(s, c.id, own.token_hash), STORE_OK);
    assert_int_equal(store_plan_delete(s, c.id, own.token_hash), STORE_NOTFOUND);
    assert_int_equal(store_plan_owner(s, c.id, &own), STORE_NOTFOUND);
    assert_int_equal(store_plan_owner(s, "../etc/passwd", &own), STORE_NOTFOUND);
    assert_int_equal(sql_long("SELECT count(*) FROM jobs"), 0);
}

static const char result[] = "{\"peak\": 1}";

static void test_each_job_is_claimed_and_finished_once(void **state)
{
    struct store *s = *state;
    struct store *s2;
    struct store_created a, b;
    struct store_job j1, j2, j3;
    struct store_job_counts n;
    struct store_plan p;
    struct plan_summary done = sum;
    char err[256];
    size_t renewed;
    done.peak_bytes = 3000;
    done.lower_bound_bytes = 2900;
    done.fits = true;
    create(s, "first", &a);
    create(s, "second", &b);
    s2 = store_open(pgtest_info, err, sizeof err);
    assert_non_null(s2);
    /* Oldest first; a second connection skips the locked row and takes the other one. */
    assert_int_equal(store_job_claim(s, "w1", 10000, &j1), STORE_OK);
    assert_string_equal(j1.plan_id, a.id);
    assert_int_equal(j1.input_len, 2);
    assert_string_equal(j1.options_json, "{\"chip\": \"v5e\"}");
    assert_int_equal(j1.attempts, 1);
    assert_int_equal(store_job_claim(s2, "w2", 10000, &j2), STORE_OK);
    assert_string_equal(j2.plan_id, b.id);
    assert_int_equal(store_job_claim(s2, "w2", 10000, &j3), STORE_NOTFOUND);
    assert_int_equal(store_job_counts(s, &n), STORE_OK);
    assert_true(n.queued == 0 && n.running == 2);
    {
        const char *toks[2] = {j1.lease_token, j2.lease_token};
        assert_int_equal(store_job_renew(s, toks, 2, 10000, &renewed), STORE_OK);
        assert_int_equal(renewed, 2);
    }
    assert_int_equal(store_plan_get(s, a.id, &p), STORE_OK);
    assert_string_equal(p.status, "running");
    assert_int_equal(p.version, 2);
    store_plan_free(&p);
    struct store_plan fin, copy;
    assert_int_equal(store_job_finish(s, &j1, result, NULL, NULL, &done, NULL, &fin), STORE_OK);
    assert_int_equal(store_job_finish(s, &j1, result, NULL, NULL, &done, NULL, NULL),
                     STORE_NOTFOUND);
    /* The finished plan comes back from the same statement, as plan_get reads it, except
     * the result the caller holds; a copy is deep. */
    assert_int_equal(store_plan_get(s, a.id, &p), STORE_OK);
    assert_string_equal(fin.id, a.id);
    assert_string_equal(fin.status, "done");
    assert_int_equal(fin.version, p.version);
    assert_string_equal(fin.created_at, p.created_at);
    assert_string_equal(fin.updated_at, p.updated_at);
    assert_true(fin.summary.peak_bytes == 3000 && fin.summary.fits);
    assert_null(fin.result_json);
    assert_null(fin.error_json);
    store_plan_free(&p);
    fin.result_json = strdup(result);
    assert_int_equal(store_plan_copy(&fin, &copy), STORE_OK);
    store_plan_free(&fin);
    assert_string_equal(copy.result_json, result);
    assert_string_equal(copy.name, "first");
    store_plan_free(&copy);
    assert_int_equal(store_job_finish(s2, &j2, NULL, NULL, "{\"status\": 422}", NULL, NULL, NULL),
                     STORE_OK);
    assert_int_equal(store_plan_get(s, a.id, &p), STORE_OK);
    assert_string_equal(p.status, "done");
    assert_string_equal(p.result_json, result);
    assert_true(p.summary.peak_bytes == 3000 && p.summary.fits);
    store_plan_free(&p);
    assert_int_equal(store_plan_get(s, b.id, &p), STORE_OK);
    assert_string_equal(p.status, "failed");
    assert_string_equal(p.error_json, "{\"status\": 422}");
    assert_true(p.summary.padded_bytes == 4096); /* submit-time summary kept */
    store_plan_free(&p);
    assert_int_equal(sql_long("SELECT sum(completions) FROM jobs"), 2);
    {
        const char *toks[1] = {j1.lease_token};
        assert_int_equal(store_job_renew(s, toks, 1, 10000, &renewed), STORE_OK);
        assert_int_equal(renewed, 0);
        const char *bad[1] = {"'); DROP TABLE jobs; --"};
        assert_int_equal(store_job_renew(s, bad, 1, 10000, &renewed), STORE_INVALID);
    }
    /* The error is jsonb, which cannot hold \u0000: refused before it reaches SQL. An
     * escaped backslash before "u0000" is plain text and no reason to refuse; the result
     * is json, which holds any valid text (here the lease is gone, so nothing is stored). */
    assert_int_equal(store_job_finish(s, &j2, NULL, NULL, "{\"a\": \"\\u0000\"}", NULL, NULL, NULL),
                     STORE_INVALID);
    assert_int_equal(
        store_job_finish(s, &j2, NULL, NULL, "{\"a\": \"x\\\\\\u0000\"}", NULL, NULL, NULL),
        STORE_INVALID);
    assert_int_equal(
        store_job_finish(s, &j2, NULL, NULL, "{\"a\": \"\\\\u0000\"}", NULL, NULL, NULL),
        STORE_NOTFOUND);
    assert_int_equal(store_job_finish(s, &j2, "{\"a\": \"\\u0000\"}", NULL, NULL, NULL, NULL, NULL),
                     STORE_NOTFOUND);
    store_job_free(&j1);
    store_job_free(&j2);
    store_close(s2);
}

/* A worker whose lease expired and was re-claimed cannot finish the job any more. */
/* The views are stored as the worker gives them (the planner writes them, plan_views) and
 * read back verbatim; none exist before the result; the full result is kept byte for byte
 * (a json column: no re-serialisation). */
static void test_result_views_read_back_verbatim(void **state)
{
    static const char res[] = "{\"summary\": {\"tensors\": 1},  \"tensors\": [{\"id\": 0}]}";
    struct plan_views views = {.summary = "{\"summary\":{\"tensors\":1}}",
                               .layout = "{\"tensors\":1,\"name\":[\"a\"]}"};
    struct store *s = *state;
    struct store_created a;
    struct store_job j;
    struct store_plan p;
    create(s, "views", &a);
    assert_int_equal(store_plan_get_view(s, a.id, STORE_VIEW_LAYOUT, &p), STORE_OK);
    assert_null(p.result_json);
    store_plan_free(&p);
    assert_int_equal(store_job_claim(s, "w", 10000, &j), STORE_OK);
    assert_int_equal(store_job_finish(s, &j, res, &views, NULL, &sum, NULL, NULL), STORE_OK);
    assert_int_equal(store_plan_get_view(s, a.id, STORE_VIEW_SUMMARY, &p), STORE_OK);
    assert_string_equal(p.status, "done");
    assert_string_equal(p.result_json, views.summary);
    store_plan_free(&p);
    assert_int_equal(store_plan_get_view(s, a.id, STORE_VIEW_LAYOUT, &p), STORE_OK);
    assert_string_equal(p.result_json, views.layout);
    assert_int_equal(p.version, 3);
    store_plan_free(&p);
    assert_int_equal(store_plan_get_view(s, a.id, STORE_VIEW_FULL, &p), STORE_OK);
    assert_string_equal(p.result_json, res);
    store_plan_free(&p);
    assert_int_equal(store_plan_get_view(s, "AAAAAAAAAAAAAAAAAAAAAA", STORE_VIEW_SUMMARY, &p),
                     STORE_NOTFOUND);
    store_job_free(&j);
}

static void test_expired_lease_requeues_the_job(void **state)
{
    struct store *s = *state;
    struct store_created a;
    struct store_job zombie, j;
    struct store_plan p;
    int requeued = -1;
    create(s, "expiring", &a);
    assert_int_equal(store_job_claim(s, "w1", 1, &zombie), STORE_OK);
    usleep(20000);
    assert_int_equal(store_job_reap(s, 5, "{}", &requeued), STORE_OK);
    assert_int_equal(requeued, 1);
    assert_int_equal(store_plan_get(s, a.id, &p), STORE_OK);
    assert_string_equal(p.status, "queued");
    store_plan_free(&p);
    assert_int_equal(store_job_claim(s, "w2", 10000, &j), STORE_OK);
    assert_int_equal(j.attempts, 2);
    assert_string_not_equal(j.lease_token, zombie.lease_token);
    assert_int_equal(store_job_finish(s, &zombie, result, NULL, NULL, NULL, NULL, NULL),
                     STORE_NOTFOUND);
    assert_int_equal(store_job_finish(s, &j, result, NULL, NULL, NULL, NULL, NULL), STORE_OK);
    assert_int_equal(sql_long("SELECT completions FROM jobs"), 1);
    store_job_free(&zombie);
    store_job_free(&j);
}

/* A job that keeps killing its server fails after max_attempts claims. */
static void test_reap_gives_up(void **state)
{
    struct store *s = *state;
    struct store_created a;
    struct store_job j;
    struct store_plan p;
    int requeued = -1;
    create(s, "poison", &a);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(store_job_claim(s, "w", 1, &j), STORE_OK);
        store_job_free(&j);
        usleep(20000);
        assert_int_equal(store_job_reap(s, 2, "{\"title\": \"gave up\"}", &requeued), STORE_OK);
        assert_int_equal(requeued, i == 0 ? 1 : 0);
    }
    assert_int_equal(store_plan_get(s, a.id, &p), STORE_OK);
    assert_string_equal(p.status, "failed");
    assert_string_equal(p.error_json, "{\"title\": \"gave up\"}");
    store_plan_free(&p);
    assert_int_equal(sql_long("SELECT completions FROM jobs"), 1);
}

static void test_released_job_is_claimable_again(void **state)
{
    struct store *s = *state;
    struct store_created a;
    struct store_job j, k;
    create(s, "released", &a);
    assert_int_equal(store_job_claim(s, "w", 10000, &j), STORE_OK);
    const char *toks[1] = {j.lease_token};
    assert_int_equal(store_job_release(s, toks, 1), STORE_OK);
    assert_int_equal(store_job_finish(s, &j, result, NULL, NULL, NULL, NULL, NULL), STORE_NOTFOUND);
    assert_int_equal(store_job_claim(s, "w", 10000, &k), STORE_OK);
    assert_int_equal(k.attempts, 1); /* a give-back is not a failed attempt */
    store_job_free(&j);
    store_job_free(&k);
}

/* A frontier search waits for its plan, is leased like a plan's job (claimed once, renewed,
 * reaped, released: the same calls), stores its result verbatim with its status in one
 * statement, is listed newest first and goes with its plan. */
static void test_frontier_is_a_leased_job(void **state)
{
    static const char query[] = "{\"maximize\":\"train.batch\",\"min\":1}";
    static const char res[] = "{\"maximize\": \"train.batch\",  \"lines\": []}";
    struct store *s = *state;
    struct store_created a;
    struct store_job j;
    struct store_frontier f, g, got;
    struct store_frontier_job fj, zombie;
    struct store_plan_owner own;
    char *items = NULL;
    size_t renewed = 0;
    int64_t queued = 0;
    int requeued = -1;

    create(s, "recipe", &a);
    assert_int_equal(store_frontier_create(s, a.id, query, &f), STORE_OK);
    assert_string_equal(f.status, "queued");
    assert_string_equal(f.plan_id, a.id);
    assert_non_null(f.created_at);
    assert_int_equal(store_jobs_queued(s, 10, &queued), STORE_OK);
    assert_int_equal(queued, 2); /* the plan's job and the search */
    /* its plan is not planned yet: nothing to claim */
    assert_int_equal(store_frontier_claim(s, "w", 10000, &fj), STORE_NOTFOUND);
    store_frontier_job_free(&fj);
    assert_int_equal(store_job_claim(s, "w", 10000, &j), STORE_OK);
    assert_int_equal(store_job_finish(s, &j, result, NULL, NULL, &sum, NULL, NULL), STORE_OK);
    store_job_free(&j);
    assert_int_equal(store_frontier_claim(s, "w", 10000, &fj), STORE_OK);
    assert_string_equal(fj.id, f.id);
    assert_string_equal(fj.plan_id, a.id);
    assert_string_equal(fj.query_json, query);
    assert_int_equal(fj.input_len, 2);
    assert_string_equal(fj.options_json, "{\"chip\": \"v5e\"}");
    assert_int_equal(fj.attempts, 1);
    assert_int_equal(store_frontier_claim(s, "w", 10000, &zombie), STORE_NOTFOUND);
    store_frontier_job_free(&zombie);
    {
        const char *toks[1] = {fj.lease_token};
        assert_int_equal(store_job_renew(s, toks, 1, 10000, &renewed), STORE_OK);
        assert_int_equal(renewed, 1);
    }
    assert_int_equal(store_frontier_finish(s, &fj, res, NULL), STORE_OK);
    assert_int_equal(store_frontier_finish(s, &fj, res, NULL), STORE_NOTFOUND);
    assert_int_equal(store_frontier_get(s, f.id, &got), STORE_OK);
    assert_string_equal(got.status, "done");
    assert_string_equal(got.result_json, res);
    assert_null(got.error_json);
    assert_non_null(got.started_at);
    assert_non_null(got.finished_at);
    assert_int_equal(got.version, 3);
    store_frontier_free(&got);
    store_frontier_job_free(&fj);

    /* a second one: its server dies (the lease expires), the reaper requeues it, the late
     * finish is refused; claimed again, then given back by a graceful stop */
    assert_int_equal(store_frontier_create(s, a.id, query, &g), STORE_OK);
    assert_int_equal(store_frontier_claim(s, "w", 1, &zombie), STORE_OK);
    usleep(20000);
    assert_int_equal(store_job_reap(s, 5, "{}", &requeued), STORE_OK);
    assert_int_equal(requeued, 1);
    assert_int_equal(store_frontier_claim(s, "w", 10000, &fj), STORE_OK);
    assert_int_equal(fj.attempts, 2);
    assert_int_equal(store_frontier_finish(s, &zombie, res, NULL), STORE_NOTFOUND);
    {
        const char *toks[1] = {fj.lease_token};
        assert_int_equal(store_job_release(s, toks, 1), STORE_OK);
    }
    assert_int_equal(store_frontier_finish(s, &fj, NULL, "{\"status\": 422}"), STORE_NOTFOUND);
    store_frontier_job_free(&fj);
    store_frontier_job_free(&zombie);
    assert_int_equal(store_frontier_get(s, g.id, &got), STORE_OK);
    assert_string_equal(got.status, "queued");
    store_frontier_free(&got);

    assert_int_equal(store_frontier_list(s, a.id, 50, &items), STORE_OK);
    assert_true(strstr(items, g.id) != NULL && strstr(items, f.id) != NULL &&
                strstr(items, g.id) < strstr(items, f.id));
    free(items);
    assert_int_equal(store_frontier_list(s, "AAAAAAAAAAAAAAAAAAAAAA", 50, &items), STORE_NOTFOUND);
    assert_int_equal(store_frontier_create(s, "AAAAAAAAAAAAAAAAAAAAAA", query, &got),
                     STORE_NOTFOUND);
    assert_int_equal(store_frontier_get(s, "AAAAAAAAAAAAAAAAAAAAAA", &got), STORE_NOTFOUND);
    assert_int_equal(store_frontier_get(s, "x'; --", &got), STORE_NOTFOUND);

    assert_int_equal(store_plan_owner(s, a.id, &own), STORE_OK);
    assert_int_equal(store_plan_delete(s, a.id, own.token_hash), STORE_OK);
    assert_int_equal(store_frontier_get(s, f.id, &got), STORE_NOTFOUND);
    assert_int_equal(sql_long("SELECT count(*) FROM frontiers"), 0);
    store_frontier_free(&f);
    store_frontier_free(&g);
}

/* A recipe's input is read for the request's field check, and only a recipe's, only up to
 * max bytes; an expired plan is gone, as store_plan_format says. */
static void test_plan_recipe_reads_a_small_recipe(void **state)
{
    static const char recipe[] = "{\"model\": {\"preset\": \"gpt2\"}, \"train\": {}}";
    struct store *s = *state;
    struct store_new_plan np = {.name = "r",
                                .chip = "v5e",
                                .source_format = "recipe",
                                .input = recipe,
                                .input_len = sizeof(recipe) - 1,
                                .summary = &sum};
    struct store_created a, b;
    char fmt[24], *input = NULL, *sqlr;
    size_t len = 0;

    assert_int_equal(store_plan_create(s, &np, &a), STORE_OK);
    create(s, "json", &b);
    assert_int_equal(store_plan_recipe(s, a.id, 1024, fmt, sizeof(fmt), &input, &len), STORE_OK);
    assert_string_equal(fmt, "recipe");
    assert_int_equal(len, sizeof(recipe) - 1);
    assert_string_equal(input, recipe);
    free(input);
    assert_int_equal(store_plan_recipe(s, a.id, 8, fmt, sizeof(fmt), &input, &len), STORE_OK);
    assert_null(input);
    assert_int_equal(store_plan_recipe(s, b.id, 1024, fmt, sizeof(fmt), &input, &len), STORE_OK);
    assert_string_equal(fmt, "json");
    assert_null(input);
    assert_int_equal(
        store_plan_recipe(s, "AAAAAAAAAAAAAAAAAAAAAA", 1024, fmt, sizeof(fmt), &input, &len),
        STORE_NOTFOUND);
    sqlr = sql1(pgtest_info, "UPDATE plans SET expires_at = now() - interval '1 second'");
    free(sqlr);
    assert_int_equal(store_plan_recipe(s, a.id, 1024, fmt, sizeof(fmt), &input, &len), STORE_GONE);
    assert_null(input);
}

struct seen {
    int jobs, done, deleted;
    char last_deleted[IDS_ID_LEN + 1];
};

static void on_notify(const char *channel, const char *payload, void *arg)
{
    struct seen *n = arg;
    if (strcmp(channel, "tpuplan_jobs") == 0) {
        n->jobs++;
    } else if (strcmp(channel, "tpuplan_done") == 0) {
        n->done++;
    } else if (strcmp(channel, "tpuplan_deleted") == 0) {
        n->deleted++;
        snprintf(n->last_deleted, sizeof n->last_deleted, "%s", payload);
    }
}

static void test_listener_hears_new_and_finished_jobs(void **state)
{
    struct store *s = *state;
    struct store *l;
    struct store_created a;
    struct store_job j;
    struct seen n = {0};
    char err[256], q[96];
    long expired = -1;
    l = store_open(pgtest_info, err, sizeof err);
    assert_non_null(l);
    assert_int_equal(store_listen(l), STORE_OK);
    assert_int_equal(store_wait_notify(l, 10, on_notify, &n), 0);
    create(s, "notified", &a);
    for (int i = 0; i < 50 && n.jobs == 0; i++)
        assert_true(store_wait_notify(l, 100, on_notify, &n) >= 0);
    assert_int_equal(n.jobs, 1);
    assert_int_equal(store_job_claim(s, "w", 10000, &j), STORE_OK);
    assert_int_equal(store_job_finish(s, &j, result, NULL, NULL, NULL, NULL, NULL), STORE_OK);
    for (int i = 0; i < 50 && n.done == 0; i++)
        assert_true(store_wait_notify(l, 100, on_notify, &n) >= 0);
    assert_int_equal(n.done, 1);
    store_job_free(&j);
    /* Every deletion is announced with the plan's id, whoever deletes it (the trigger of
     * migrations/0009): the expiry sweep's batch DELETE as much as one plan's. */
    assert_int_equal(store_plan_expire(s, 10, 1, &expired), STORE_OK);
    assert_int_equal(expired, 0);
    snprintf(q, sizeof q, "DELETE FROM plans WHERE id = '%s'", a.id);
    free(sql1(pgtest_info, q));
    for (int i = 0; i < 50 && n.deleted == 0; i++)
        assert_true(store_wait_notify(l, 100, on_notify, &n) >= 0);
    assert_int_equal(n.deleted, 1);
    assert_string_equal(n.last_deleted, a.id);
    create(s, "swept", &a);
    free(sql1(pgtest_info, "UPDATE plans SET expires_at = now() - interval '1 s'"));
    assert_int_equal(store_plan_expire(s, 10, 1, &expired), STORE_OK);
    assert_int_equal(expired, 1);
    for (int i = 0; i < 50 && n.deleted == 1; i++)
        assert_true(store_wait_notify(l, 100, on_notify, &n) >= 0);
    assert_int_equal(n.deleted, 2);
    assert_string_equal(n.last_deleted, a.id);
    assert_int_equal(store_connections(l), 0);
    store_close(l);
}

/* PostgreSQL stops: calls fail fast with STORE_UNAVAILABLE; it comes back: the same store
 * reconnects by itself, within the backoff ceiling. Runs last: it restarts the cluster. */
static void test_store_reconnects_after_postgres_restarts(void **state)
{
    struct store *s = *state;
    struct store_created c;
    struct store_plan p;
    struct timespec t0, t1;
    int rc = STORE_ERROR;
    create(s, "before", &c);
    assert_int_equal(pgtest_ctl("pause"), 0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    assert_int_equal(store_plan_get(s, c.id, &p), STORE_UNAVAILABLE);
    assert_int_equal(store_plan_get(s, c.id, &p), STORE_UNAVAILABLE);
    struct store_new_plan np = {.name = "during",
                                .chip = "v5e",
                                .source_format = "json",
                                .input = "{}",
                                .input_len = 2,
                                .summary = &sum};
    assert_int_equal(store_plan_create(s, &np, &c), STORE_UNAVAILABLE);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(t1.tv_sec - t0.tv_sec < 2);
    assert_int_equal(pgtest_ctl("start"), 0);
    for (int i = 0; i < 80 && rc != STORE_OK; i++) {
        rc = store_plan_create(s, &np, &c);
        if (rc != STORE_OK)
            usleep(100000);
    }
    assert_int_equal(rc, STORE_OK);
    assert_int_equal(sql_long("SELECT count(*) FROM plans"), 2); /* nothing half-written */
    assert_true(store_connections(s) >= 1); /* a listener would know it may have missed some */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_migrate_is_idempotent, setup, teardown),
        cmocka_unit_test(test_concurrent_migrations_run_each_once),
        cmocka_unit_test_setup_teardown(test_created_plan_reads_back_exactly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idempotency_key_replays_or_conflicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_idempotency_keys_are_scoped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_pages_through_every_plan_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_mistakes_are_refused_not_failed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_delete_needs_the_token_digest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_list_shows_the_callers_own_plans, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_job_is_claimed_and_finished_once, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_result_views_read_back_verbatim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_expired_lease_requeues_the_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reap_gives_up, setup, teardown),
        cmocka_unit_test_setup_teardown(test_released_job_is_claimable_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frontier_is_a_leased_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plan_recipe_reads_a_small_recipe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_listener_hears_new_and_finished_jobs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_reconnects_after_postgres_restarts, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
