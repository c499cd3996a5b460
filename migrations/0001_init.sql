-- 0001_init.sql - plans, their planner jobs, and idempotency keys.
--
-- Applied by store_migrate() (tpuplan-server migrate, and at every server start) inside
-- one transaction, under pg_advisory_lock, and recorded in schema_migrations. Never edit
-- this file once released: add 0002_*.sql instead.

-- One submitted plan: the validated input, its options, and (once planned) the result.
-- The summary columns are filled at submit time from plan_validate (name, chip, format,
-- tensors, logical/padded bytes, capacity) and completed by the worker (peak, lower
-- bound, fits), so listings never have to read the result document.
CREATE TABLE plans (
    id                text        PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{22}$'),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    name              text        NOT NULL,
    chip              text        NOT NULL,
    source_format     text        NOT NULL,
    status            text        NOT NULL DEFAULT 'queued'
                      CHECK (status IN ('queued', 'running', 'done', 'failed')),
    input             bytea       NOT NULL,
    options           jsonb       NOT NULL DEFAULT '{}',
    result            jsonb,
    error             jsonb,
    -- Bumped by every change; the HTTP layer derives the ETag from id and version.
    version           bigint      NOT NULL DEFAULT 1,
    -- Byte counts are uint64 in C: numeric(20,0) holds every value exactly.
    tensors           bigint      NOT NULL DEFAULT 0 CHECK (tensors >= 0),
    logical_bytes     numeric(20, 0) NOT NULL DEFAULT 0 CHECK (logical_bytes >= 0),
    padded_bytes      numeric(20, 0) NOT NULL DEFAULT 0 CHECK (padded_bytes >= 0),
    peak_bytes        numeric(20, 0) NOT NULL DEFAULT 0 CHECK (peak_bytes >= 0),
    lower_bound_bytes numeric(20, 0) NOT NULL DEFAULT 0 CHECK (lower_bound_bytes >= 0),
    capacity_bytes    numeric(20, 0) NOT NULL DEFAULT 0 CHECK (capacity_bytes >= 0),
    fits              boolean     NOT NULL DEFAULT false,
    -- SHA-256 of the manage token; the token itself is shown once and never stored.
    manage_token_hash bytea       NOT NULL CHECK (length(manage_token_hash) = 32)
);

-- Listing is newest first with a (created_at, id) keyset cursor.
CREATE INDEX plans_newest ON plans (created_at DESC, id DESC);

-- The planner queue: one job per plan, deleted with it.
--   queued  -> running   claim (FOR UPDATE SKIP LOCKED), new lease_token, attempts + 1
--   running -> running   lease renewed by the owning server while plan_run runs
--   running -> queued    lease expired (the server died) or graceful stop gave it back
--   running -> done/failed  finish, only while lease_token is still the claimer's
-- completions counts finishes: it must end at exactly 1 (tests check it).
CREATE TABLE jobs (
    plan_id          text        PRIMARY KEY REFERENCES plans (id) ON DELETE CASCADE,
    state            text        NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    locked_by        text,
    lease_token      uuid,
    lease_expires_at timestamptz,
    run_at           timestamptz NOT NULL DEFAULT now(),
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    completions      integer     NOT NULL DEFAULT 0,
    CHECK ((state = 'running') = (lease_token IS NOT NULL))
);

-- The claim query reads only this small index.
CREATE INDEX jobs_queue ON jobs (run_at, plan_id) WHERE state = 'queued';
-- The reaper looks for expired leases.
CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE state = 'running';

-- Idempotency-Key header: the same key and body return the first plan; the same key with
-- another body is a conflict. The FK is deferred so the key can be inserted (and
-- conflicts detected) before the plan row exists, inside the same transaction.
CREATE TABLE idempotency_keys (
    key         text        PRIMARY KEY CHECK (length(key) BETWEEN 1 AND 255),
    body_sha256 text        NOT NULL,
    plan_id     text        NOT NULL REFERENCES plans (id) ON DELETE CASCADE
                            DEFERRABLE INITIALLY DEFERRED,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idempotency_keys_plan ON idempotency_keys (plan_id);
