-- 0005_plan_parent.sql - a what-if plan's parent (POST /api/v1/plans/{id}/whatif): the plan
-- whose model it changed. A deleted parent leaves its what-ifs in place, parentless.
ALTER TABLE plans ADD COLUMN parent_id text REFERENCES plans (id) ON DELETE SET NULL;
CREATE INDEX plans_parent ON plans (parent_id) WHERE parent_id IS NOT NULL;
