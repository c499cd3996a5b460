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
--                   peak and padding tables use. ~7 MB for 100,000 tensors.
-- Both are NULL while result is NULL (the functions are STRICT).

CREATE FUNCTION plan_result_summary(r jsonb) RETURNS json
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (r - 'tensors')::json;

-- Entry i of every column is tensor i, whose id is i (RESULT.md), so there is no id column.
-- Columns whose values repeat (kind, shape, layout rule, confidence: a model has few
-- distinct ones) are dictionaries, {"values": [...distinct, sorted], "index": [...]}, which
-- more than halves the document; tags, which few tensors have, are {"i": [...]} for those
-- that do. array_to_json(array_agg(...)) writes compact arrays ("[1,2]"); json_agg would
-- add a space after every comma. A missing field is null (in a dictionary, a null value).
CREATE FUNCTION plan_result_layout(r jsonb) RETURNS json
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    RETURN (
        WITH e AS (
            SELECT t, o - 1 AS i,
                   dense_rank() OVER (ORDER BY t -> 'kind') - 1 AS kind,
                   dense_rank() OVER (ORDER BY t -> 'shape') - 1 AS shape,
                   dense_rank() OVER (ORDER BY t -> 'layout_source') - 1 AS layout_source,
                   dense_rank() OVER (ORDER BY t -> 'confidence') - 1 AS confidence
            FROM jsonb_array_elements(
                CASE WHEN jsonb_typeof(r -> 'tensors') = 'array' THEN r -> 'tensors' ELSE '[]' END)
                WITH ORDINALITY AS a (t, o))
        SELECT json_build_object(
            'tensors', count(*),
            'name', coalesce(array_to_json(array_agg(t -> 'name' ORDER BY i)), '[]'),
            'start', coalesce(array_to_json(array_agg(t -> 'live' -> 0 ORDER BY i)), '[]'),
            'end', coalesce(array_to_json(array_agg(t -> 'live' -> 1 ORDER BY i)), '[]'),
            'offset', coalesce(array_to_json(array_agg(t -> 'offset' ORDER BY i)), '[]'),
            'padded_bytes', coalesce(array_to_json(array_agg(t -> 'padded_bytes' ORDER BY i)), '[]'),
            'logical_bytes', coalesce(array_to_json(array_agg(t -> 'logical_bytes' ORDER BY i)), '[]'),
            'kind', json_build_object(
                'values', coalesce(array_to_json(array_agg(DISTINCT t -> 'kind' ORDER BY t -> 'kind')), '[]'),
                'index', coalesce(array_to_json(array_agg(kind ORDER BY i)), '[]')),
            'shape', json_build_object(
                'values', coalesce(array_to_json(array_agg(DISTINCT t -> 'shape' ORDER BY t -> 'shape')), '[]'),
                'index', coalesce(array_to_json(array_agg(shape ORDER BY i)), '[]')),
            'layout_source', json_build_object(
                'values', coalesce(array_to_json(array_agg(DISTINCT t -> 'layout_source' ORDER BY t -> 'layout_source')), '[]'),
                'index', coalesce(array_to_json(array_agg(layout_source ORDER BY i)), '[]')),
            'confidence', json_build_object(
                'values', coalesce(array_to_json(array_agg(DISTINCT t -> 'confidence' ORDER BY t -> 'confidence')), '[]'),
                'index', coalesce(array_to_json(array_agg(confidence ORDER BY i)), '[]')),
            'tags', coalesce(json_object_agg(i, t -> 'tags')
                FILTER (WHERE jsonb_typeof(t -> 'tags') = 'array' AND t -> 'tags' <> '[]'), '{}'))
        FROM e);

ALTER TABLE plans
    ADD COLUMN result_summary json GENERATED ALWAYS AS (plan_result_summary(result)) STORED,
    ADD COLUMN result_layout json GENERATED ALWAYS AS (plan_result_layout(result)) STORED;
