-- 0009_plan_deleted_notify.sql - every deleted plan is announced on the channel
-- tpuplan_deleted (payload: its id), by whatever deletes it (a DELETE with a manage token or
-- an API key, the expiry sweep), in the deleting transaction: PostgreSQL delivers it at
-- commit, so each server's job coordinator drops the plan from its cache of plan responses
-- at once (server/service/plancache.h) instead of serving it for up to --cache-ttl more.
CREATE FUNCTION plans_notify_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('tpuplan_deleted', OLD.id);
    RETURN OLD;
END
$$;
CREATE TRIGGER plans_deleted AFTER DELETE ON plans
    FOR EACH ROW EXECUTE FUNCTION plans_notify_deleted();
