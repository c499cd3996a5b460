-- 0003_views_from_planner.sql - the planner writes the result views; the result is json.
--
-- 0002 computed the views in SQL, as generated columns over a jsonb result. Measured on a
-- 2-core VM with the 1,000-tensor model of `make bench-server` (a 362 KB result), storing a
-- plan cost ~90 ms in the database: ~70 ms for the layout view's window functions and
-- aggregates, and jsonb input of the result itself is 7x json's (75 ms against 10 ms in an
-- isolated insert). That was more than the whole submit-to-done budget (50 ms). The
-- planner already holds every value the views need, and writes both in about a
-- millisecond (server/planner/plan.c, plan_views), so:
--   * result_summary and result_layout become plain json columns that the worker fills in
--     the same UPDATE as the result (store_job_finish); existing rows keep their values
--     (DROP EXPRESSION keeps what was computed);
--   * result becomes json: nothing in SQL looks inside it any more, json input only
--     validates the text, and the stored text is the planner's own, byte for byte, so the
--     document served is the one the planner wrote.
ALTER TABLE plans ALTER COLUMN result_summary DROP EXPRESSION;
ALTER TABLE plans ALTER COLUMN result_layout DROP EXPRESSION;
DROP FUNCTION plan_result_summary(jsonb);
DROP FUNCTION plan_result_layout(jsonb);
ALTER TABLE plans ALTER COLUMN result TYPE json USING result::json;
