#!/usr/bin/env bash
# frontier.sh - frontier searches (the most that fits, planner/frontier.h) over real HTTP and
# PostgreSQL, run on the worker pool: POST /api/v1/plans/{id}/frontiers answers 202 at once,
# GET /api/v1/frontiers/{fid} gives the result, byte for byte what `tpuplan fit --format json`
# writes for the same recipe and query, whose maximum fits and whose next value does not, each
# checked by a separate plan; a sweep is one line per value; every bad query is a 4xx naming
# what is wrong; a plan's searches are listed newest first and go with the plan; a search
# whose server died is run again (the reaper). Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/server.sh

server_init frontier
recipe=tests/data/recipes/llama-3.1-8b-fsdp16.json

# frontier PLAN BODY [curl args...]: POST a search of PLAN.
frontier() { req POST "/api/v1/plans/$1/frontiers" -H 'Content-Type: application/json' --data "$2" "${@:3}"; }
# jfield EXPR [ARGS...]: a Python expression over the last body (b) holds.
jfield() {
    python3 -c 'import json, sys; b = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/b" "$@"
}
# settle FID: polls the search until it is done or failed (10 s at most).
settle() {
    for _ in $(seq 100); do
        req GET "/api/v1/frontiers/$1"
        case "$(jstr status)" in done | failed) return 0 ;; esac
        sleep 0.1
    done
    return 1
}
# raw_frontier FILE: the text of the "frontier" member of the document in FILE, as sent.
raw_frontier() {
    python3 -c 'import sys; t = open(sys.argv[1]).read(); i = t.index("\"frontier\":") + 11; j = t.rindex(",\"error\":"); print(t[i:j])' "$1"
}
# cli_frontier ARGS...: the value of "frontier" in `tpuplan fit RECIPE --format json ARGS`.
cli_frontier() {
    bin/tpuplan fit "$recipe" --format json "$@" | python3 -c 'import sys; t = sys.stdin.read().rstrip("\n"); assert t.startswith("{\"frontier\":") and t.endswith("}"); print(t[12:-1])'
}
# bad NAME BODY STATUS SLUG WHERE TEXT: a POST of BODY to the recipe plan is that problem.
bad() {
    frontier "$plan" "$2"
    check "$1" problem_at "$3" "$4" "$5" "$6"
}
# problem_at STATUS SLUG WHERE TEXT: the last answer is that problem, at WHERE, saying TEXT.
problem_at() {
    problem "$1" "$2" && jfield 'b.get("where") == sys.argv[3] and sys.argv[4] in b["detail"]' "$3" "$4"
}

server_db
server_start pool --workers 1 --executors 2 --http-threads 2

# ---- a search of a recipe, on the worker pool ----
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=30' --data-binary @"$recipe"
plan=$(jstr id)
token=$(jstr manage_token)
check "the recipe (Llama 3.1 8B, FSDP over 16 v5e) is planned" eval 'is 201 && [ "$(jstr status)" = done ]'

frontier "$plan" '{"maximize": "batch"}'
fid=$(jstr id)
check "POST .../frontiers answers 202 queued at once, Location /api/v1/frontiers/{fid}, the query normalised" \
    eval 'is 202 && [ "$(hdr Location)" = "/api/v1/frontiers/$fid" ] && jfield "b[\"status\"] == \"queued\" and b[\"plan\"] == sys.argv[3] and b[\"query\"] == {\"maximize\": \"train.batch\", \"min\": 1, \"max\": 1048576, \"step\": 1, \"sweep\": None} and b[\"frontier\"] is None and b[\"finished\"] is None and b[\"created\"]" "$plan"'
settle "$fid"
cp "$tmp/b" "$tmp/single.json"
check "a worker runs it: done, finished set" jfield 'b["status"] == "done" and b["finished"] and b["error"] is None'
cli_frontier --maximize batch >"$tmp/cli-single.txt"
raw_frontier "$tmp/single.json" >"$tmp/api-single.txt"
check "its frontier is byte for byte what tpuplan fit --format json writes ($(wc -c <"$tmp/cli-single.txt") bytes)" \
    cmp -s "$tmp/cli-single.txt" "$tmp/api-single.txt"
max=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["frontier"]["lines"][0]["max_fit"])' "$tmp/single.json")
check "the largest batch that fits is 32, and its probe fits while 33's does not" \
    python3 -c 'import json, sys; f = json.load(open(sys.argv[1]))["frontier"]; ln = f["lines"][0]; p = {q["x"]: q["fits"] for q in ln["probes"]}
sys.exit(0 if ln["max_fit"] == 32 and ln["next"] == 33 and p[32] and not p[33] else 1)' "$tmp/single.json"
ETAG=$(hdr ETag)
req GET "/api/v1/frontiers/$fid" -H "If-None-Match: $ETAG"
check "GET with its ETag is 304" is 304
# each checked by a separate plan: the recipe with train.batch = max, then max + 1
for b in "$max" $((max + 1)); do
    sed "s/\"batch\": 16/\"batch\": $b/" "$recipe" >"$tmp/b$b.json"
    req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=30' --data-binary @"$tmp/b$b.json"
    cp "$tmp/b" "$tmp/plan$b.json"
done
check "a plan of the recipe at batch $max fits, at $((max + 1)) does not" \
    python3 -c 'import json, sys; a, b = (json.load(open(f))["summary"]["fits"] for f in sys.argv[1:3]); sys.exit(0 if a is True and b is False else 1)' \
    "$tmp/plan$max.json" "$tmp/plan$((max + 1)).json"

frontier "$plan" '{"maximize": "train.batch", "min": 8, "max": 64, "step": 8, "sweep": {"field": "train.remat", "values": ["full", "dots_saveable"]}}'
sweep=$(jstr id)
settle "$sweep"
cp "$tmp/b" "$tmp/sweep.json"
check "a sweep of two remat policies is two lines: full fits 32, dots_saveable not even 8" \
    jfield 'b["status"] == "done" and [(l["value"], l["max_fit"]) for l in b["frontier"]["lines"]] == [("full", 32), ("dots_saveable", None)] and b["query"]["sweep"] == {"field": "train.remat", "values": ["full", "dots_saveable"]}'
cli_frontier --maximize train.batch --min 8 --max 64 --step 8 --sweep train.remat=full,dots_saveable >"$tmp/cli-sweep.txt"
raw_frontier "$tmp/sweep.json" >"$tmp/api-sweep.txt"
check "and byte for byte tpuplan fit's with --min 8 --max 64 --step 8 --sweep" cmp -s "$tmp/cli-sweep.txt" "$tmp/api-sweep.txt"

python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["frontier"], open(sys.argv[2], "w"))' "$tmp/sweep.json" "$tmp/sweep-frontier.json"
check "its frontier validates against static/schema/frontier.schema.json" \
    python3 -c 'import json, sys, jsonschema; jsonschema.Draft202012Validator(json.load(open("static/schema/frontier.schema.json"))).validate(json.load(open(sys.argv[1])))' "$tmp/sweep-frontier.json"
req GET /metrics
check "/metrics counts the searches run (tpuplan_frontier_duration_seconds_count 2)" \
    body_has '^tpuplan_frontier_duration_seconds_count 2$'

# the 70B recipe's 8 pipeline microbatches: batch 1 does not split into them
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=30' \
    --data-binary @tests/data/recipes/llama-3.1-70b-pipeline.json
p70=$(jstr id)
frontier "$p70" '{"maximize": "batch"}'
settle "$(jstr id)"
check "a search the recipe refuses on the worker fails: a 422 problem naming the field, no frontier" \
    jfield 'b["status"] == "failed" and b["frontier"] is None and b["error"]["status"] == 422 and b["error"]["where"] == "train.batch" and "a step makes the search try only multiples" in b["error"]["detail"]'
frontier "$p70" '{"maximize": "batch", "step": 8, "max": 4096, "sweep": {"field": "train.remat", "values": ["nothing_saveable", "dots_with_no_batch_dims_saveable", "dots_saveable", "everything_saveable"]}}'
settle "$(jstr id)"
check "the 70B recipe's four remat policies in multiples of 8 (tests/bench/bench_fit.c's sweep): 37 plans, 1408 128 128 none" \
    jfield 'b["status"] == "done" and b["frontier"]["plans"] == 37 and [l["max_fit"] for l in b["frontier"]["lines"]] == [1408, 128, 128, None]'
frontier "$plan" '{"maximize": "batch", "sweep": {"field": "chip", "values": ["v5p", "v6e"]}}'
chips=$(jstr id)
check "a sweep of chips (a field without a dot) is queued" is 202
settle "$chips"
check "... and done: a line for v5p, one for v6e" \
    jfield 'b["status"] == "done" and [l["value"] for l in b["frontier"]["lines"]] == ["v5p", "v6e"] and all(l["max_fit"] for l in b["frontier"]["lines"])'

# ---- the list ----
req GET "/api/v1/plans/$plan/frontiers"
check "GET .../frontiers lists the plan's three searches, newest first" \
    jfield '[f["id"] for f in b["frontiers"]] == sys.argv[3:6] and [f["status"] for f in b["frontiers"]] == ["done", "done", "done"] and b["frontiers"][2]["query"]["maximize"] == "train.batch" and all(f["created"] and f["finished"] for f in b["frontiers"])' \
    "$chips" "$sweep" "$fid"

# ---- what is refused ----
bad "an unknown key is 422 naming it" '{"maximize": "batch", "colour": 1}' 422 invalid-model colour 'colour: not a member'
bad "maximize that is no field is 422 naming maximize" '{"maximize": "nonsense"}' 422 invalid-model maximize '"nonsense" is not a field'
bad "maximize that this recipe does not have is 422 naming maximize" '{"maximize": "train.nonesuch"}' 422 invalid-model maximize 'maximize: train.nonesuch: no such field in this recipe'
bad "maximize that is no whole number is 422 naming maximize" '{"maximize": "train.remat"}' 422 invalid-model maximize 'maximize: train.remat: not a whole number'
bad "a serving field of a training recipe is 422 naming maximize" '{"maximize": "context"}' 422 invalid-model maximize 'serve.context: no such field in this recipe'
bad "a swept field this recipe does not have is 422 naming sweep.field" '{"maximize": "batch", "sweep": {"field": "train.loss", "values": ["x"]}}' 422 invalid-model sweep.field 'sweep.field: train.loss: no such field in this recipe'
bad "no maximize is 422 naming it" '{"min": 2}' 422 invalid-model maximize 'maximize: required'
bad "min as a string is 422 naming min" '{"maximize": "batch", "min": "2"}' 422 invalid-model min 'min: must be a whole number'
bad "min above max is 422 naming max" '{"maximize": "batch", "min": 64, "max": 8}' 422 invalid-model max 'max: must be from min (64)'
v17=$(python3 -c 'import json; print(json.dumps({"maximize": "batch", "sweep": {"field": "train.remat", "values": ["full"] * 17}}))')
bad "17 sweep values are 422 naming sweep.values" "$v17" 422 invalid-model sweep.values 'array of 1 to 16 strings'
bad "a sweep value that is not a string is 422 naming it" '{"maximize": "batch", "sweep": {"field": "mesh.fsdp", "values": ["8", 16]}}' 422 invalid-model 'sweep.values[1]' 'must be a string'
frontier "$plan" '{"maximize": '
check "JSON that does not parse is 400 malformed-input" problem 400 malformed-input
req POST "/api/v1/plans/$plan/frontiers" -H 'Content-Type: text/csv' --data '{"maximize": "batch"}'
check "a body that is not JSON is 415" problem 415 unsupported-media-type
frontier "$plan" '{"maximize": "batch"}' -H 'Idempotency-Key: k1'
check "Idempotency-Key is refused (400 naming it): each POST queues a search" \
    problem_at 400 invalid-parameter Idempotency-Key "does not take one"
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=30' --data-binary @tests/data/service/tiny.json
tiny=$(jstr id)
frontier "$tiny" '{"maximize": "batch"}'
check "a plan whose input is no recipe is 422 naming source_format: a search needs a recipe" \
    problem_at 422 invalid-model source_format "a frontier search needs a recipe (a model config"
check "... and says what this one is" body_has "this plan's input is json, which has no such fields"
frontier AAAAAAAAAAAAAAAAAAAAAA '{"maximize": "batch"}'
check "a search of a plan that does not exist is 404" problem 404 not-found
req GET /api/v1/frontiers/AAAAAAAAAAAAAAAAAAAAAA
check "GET of a search that does not exist is 404" eval 'problem 404 not-found && body_has "No frontier search has this id"'
req GET "/api/v1/frontiers/$fid?view=summary"
check "an unknown query parameter is 400 naming it (GET)" problem_at 400 invalid-parameter view view
req POST "/api/v1/plans/$plan/frontiers?chips=v4" -H 'Content-Type: application/json' --data '{"maximize": "batch"}'
check "... and (POST)" problem_at 400 invalid-parameter chips chips
req GET "/api/v1/plans/$plan/frontiers?limit=1"
check "... and (the list)" problem_at 400 invalid-parameter limit limit
check "none of them stored a search" [ "$(sql "SELECT count(*) FROM frontiers")" = 5 ]

# ---- a search whose server stopped renewing its lease runs again ----
sql "UPDATE frontiers SET status = 'running', lease_token = gen_random_uuid(), lease_expires_at = now() - interval '1 second', finished_at = NULL, result = NULL WHERE id = '$fid'" >/dev/null
settle "$fid"
check "an expired lease is reaped and the search run again: done, the same frontier, completed twice" \
    eval 'jfield "b[\"status\"] == \"done\"" && [ "$(raw_frontier "$tmp/b")" = "$(cat "$tmp/api-single.txt")" ] && [ "$(sql "SELECT completions FROM frontiers WHERE id = '"'$fid'"'")" = 2 ]'
sql "UPDATE frontiers SET status = 'running', lease_token = gen_random_uuid(), lease_expires_at = now() - interval '1 second', attempts = 5 WHERE id = '$fid'" >/dev/null
settle "$fid"
check "one claimed 5 times fails for good with the reaper's problem" \
    jfield 'b["status"] == "failed" and b["frontier"] is None and b["error"]["status"] == 500 and "not retried again" in b["error"]["detail"]'

# ---- a search waits for its plan, and goes with it ----
req POST /api/v1/plans/"$plan"/whatif -H 'Content-Type: application/json' --data '{"recipe": {"train": {"remat": "full"}}}'
wi=$(jstr id)
frontier "$wi" '{"maximize": "batch", "max": 64}'
wfid=$(jstr id)
settle "$wfid"
check "a search of a what-if queued before it was planned searches the model the what-if made (remat full: 32)" \
    jfield 'b["status"] == "done" and b["frontier"]["lines"][0]["max_fit"] == 32'
req DELETE "/api/v1/plans/$plan" -H "Authorization: Bearer $token"
check "DELETE of the plan is 204" is 204
req GET "/api/v1/frontiers/$sweep"
check "its searches are gone with it: GET is 404" problem 404 not-found
req GET "/api/v1/plans/$plan/frontiers"
check "and the list is 404" problem 404 not-found
check "no row is left of them" [ "$(sql "SELECT count(*) FROM frontiers WHERE plan_id = '$plan'")" = 0 ]
server_stop_check pool

tap_end
