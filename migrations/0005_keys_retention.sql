-- 0005_keys_retention.sql - API keys for submission, and plan retention.
--
-- API keys (tpuplan-server key create|list|revoke NAME, server/service/keycmd.c). A key is
-- "tpk_" + an 8-character prefix + "_" + a 43-character secret (apikey.h), shown once at
-- creation; only its SHA-256 is stored. The server finds the row by the prefix, which is
-- not secret, and compares the hashes in constant time, so no lookup ever depends on the
-- secret. Keys are revoked, never deleted: plans keep naming the key that created them.
-- A name is unique among keys not revoked, so a revoked key's name can be given again.
CREATE TABLE api_keys (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text        NOT NULL CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
    prefix     text        NOT NULL UNIQUE CHECK (prefix ~ '^[A-Za-z0-9_-]{8}$'),
    key_hash   bytea       NOT NULL CHECK (length(key_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

-- Which key created a plan (NULL: none was needed or sent), and when the plan expires
-- (NULL: never). Both columns are nullable without a default, so adding them rewrites
-- nothing.
ALTER TABLE plans
    ADD COLUMN api_key_id bigint REFERENCES api_keys (id),
    ADD COLUMN expires_at timestamptz;

-- The expiry sweep (store_plan_expire) reads only this small index.
CREATE INDEX plans_expiry ON plans (expires_at) WHERE expires_at IS NOT NULL;

-- The ids of swept plans, so that GET answers 410 Gone instead of 404 for them; a row is
-- about 60 bytes, and the sweep drops rows older than 90 days (then GET is 404).
CREATE TABLE expired_plans (
    id         text        PRIMARY KEY,
    expired_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX expired_plans_age ON expired_plans (expired_at);
