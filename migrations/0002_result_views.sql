-- 0002_result_views.sql - small views of a plan's result, computed once when it is stored.
--
-- A 100,000-tensor result is ~37 MB of JSON: too much for a browser to download and parse
-- just to draw the plan page, and too slow to reshape on every GET (about 2 s of
-- jsonb_array_elements + json_agg on a loaded machine). Stored generated columns compute
-- both views once, whenever `result` is written (the worker's finish, or anything else
-- that sets it), and GET ?view=summary|layout (server/service/api.c) reads them verbatim:
-- they are `json`, whose text is returned as stored, without re-serialising.
--   result_summary: the result without its `tensors` array (a few KB to ~100 KB).
--   result_layout:  the tensors as columns, one array per field, in tensor order
--                   (`tensors` is the count): what the dashboard's chart, tooltips, search,
--                   peak and padding tables use. ~16 MB for 100,000 tensors, ~2.7 MB stored.
-- Both are NULL while result is NULL (the functions are STRICT).

CREATE FUNCTION plan_result_summary(r jsonb) RETURNS json
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (r - 'tensors')::json;

-- array_to_json(array_agg(...)) writes compact arrays ("[1,2]"); json_agg would add a
-- space after every comma (100,000 x 12 bytes). A missing field becomes null.
CREATE FUNCTION plan_result_layout(r jsonb) RETURNS json
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (
        SELECT json_build_object(
            'tensors', count(*),
            'id', coalesce(array_to_json(array_agg(t -> 'id' ORDER BY o)), '[]'),
            'name', coalesce(array_to_json(array_agg(t -> 'name' ORDER BY o)), '[]'),
            'kind', coalesce(array_to_json(array_agg(t -> 'kind' ORDER BY o)), '[]'),
            'shape', coalesce(array_to_json(array_agg(t -> 'shape' ORDER BY o)), '[]'),
            'start', coalesce(array_to_json(array_agg(t -> 'live' -> 0 ORDER BY o)), '[]'),
            'end', coalesce(array_to_json(array_agg(t -> 'live' -> 1 ORDER BY o)), '[]'),
            'offset', coalesce(array_to_json(array_agg(t -> 'offset' ORDER BY o)), '[]'),
            'padded_bytes', coalesce(array_to_json(array_agg(t -> 'padded_bytes' ORDER BY o)), '[]'),
            'logical_bytes', coalesce(array_to_json(array_agg(t -> 'logical_bytes' ORDER BY o)), '[]'),
            'layout_source', coalesce(array_to_json(array_agg(t -> 'layout_source' ORDER BY o)), '[]'),
            'confidence', coalesce(array_to_json(array_agg(t -> 'confidence' ORDER BY o)), '[]'),
            'tags', coalesce(array_to_json(array_agg(t -> 'tags' ORDER BY o)), '[]'))
        FROM jsonb_array_elements(
            CASE WHEN jsonb_typeof(r -> 'tensors') = 'array' THEN r -> 'tensors' ELSE '[]' END)
            WITH ORDINALITY AS e (t, o));

ALTER TABLE plans
    ADD COLUMN result_summary json GENERATED ALWAYS AS (plan_result_summary(result)) STORED,
    ADD COLUMN result_layout json GENERATED ALWAYS AS (plan_result_layout(result)) STORED;
