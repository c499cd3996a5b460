-- 0010_frontiers.sql - frontier searches (the most that fits: server/planner/frontier.h) run
-- on the worker pool (issue 26: heavy work never runs on a request). POST
-- /api/v1/plans/{id}/frontiers stores the query; a worker claims the row like a plan's job
-- (FOR UPDATE SKIP LOCKED, a lease it renews, requeued when its server dies, given back on a
-- graceful stop), searches the plan's recipe with the plan's options and stores the result
-- or the error with the status in one UPDATE.
--
-- A search waits for its plan to finish (a what-if's input is the model the worker made),
-- and goes with it: ON DELETE CASCADE, the expiry sweep included.
--   query:  the normalised query {"maximize", "min", "max", "step", "sweep"} (json: as the
--           request wrote it, its order kept)
--   result: frontier_json's "frontier" object, json so its text is served byte for byte
--   error:  the problem document when it failed
-- The job columns are those of jobs (0001_init.sql), with the same CHECK and meaning.
CREATE TABLE frontiers (
    id               text        PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{22}$'),
    plan_id          text        NOT NULL REFERENCES plans (id) ON DELETE CASCADE,
    query            json        NOT NULL,
    status           text        NOT NULL DEFAULT 'queued'
                     CHECK (status IN ('queued', 'running', 'done', 'failed')),
    result           json,
    error            jsonb,
    version          bigint      NOT NULL DEFAULT 1,
    created_at       timestamptz NOT NULL DEFAULT now(),
    started_at       timestamptz,
    finished_at      timestamptz,
    attempts         integer     NOT NULL DEFAULT 0,
    locked_by        text,
    lease_token      uuid,
    lease_expires_at timestamptz,
    completions      integer     NOT NULL DEFAULT 0,
    CHECK ((status = 'running') = (lease_token IS NOT NULL))
);

-- A plan's searches, newest first (GET /api/v1/plans/{id}/frontiers; the cascade).
CREATE INDEX frontiers_plan ON frontiers (plan_id, created_at DESC, id DESC);
-- The claim and the queue's count read only this small index.
CREATE INDEX frontiers_queue ON frontiers (created_at, id) WHERE status = 'queued';
-- The reaper looks for expired leases.
CREATE INDEX frontiers_leases ON frontiers (lease_expires_at) WHERE status = 'running';

DO $$
BEGIN
    ALTER TABLE frontiers ALTER COLUMN result SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    RAISE NOTICE 'lz4 is not available: keeping the default compression';
END
$$;
