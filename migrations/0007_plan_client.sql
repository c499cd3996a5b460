-- 0007_plan_client.sql - private plan lists: who created a plan.
--
-- GET /api/v1/plans lists the caller's own plans (server/service/README.md#private-plans):
-- those created with the API key it presents, and those created by the client whose token
-- (TPUplan-Client, the dashboard's random per-browser token) it presents. client_hash is
-- that token's SHA-256 (32 bytes, computed by the server: the token never reaches SQL);
-- NULL when none was sent. Nullable without a default: adding it rewrites nothing, and old
-- servers keep inserting plans without it during a rolling upgrade.
ALTER TABLE plans ADD COLUMN client_hash bytea;

-- A caller's list, newest first, reads only its own rows.
CREATE INDEX plans_by_client ON plans (client_hash, created_at DESC, id DESC)
    WHERE client_hash IS NOT NULL;
CREATE INDEX plans_by_key ON plans (api_key_id, created_at DESC, id DESC)
    WHERE api_key_id IS NOT NULL;
