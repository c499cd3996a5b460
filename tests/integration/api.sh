#!/usr/bin/env bash
# api.sh - the REST API end to end: a throwaway PostgreSQL (tests/pg.sh), bin/tpuplan-server
# on a free loopback port, and curl over real HTTP. Prints TAP.
#
# Covers every endpoint and status code of static/openapi.json: submission in each format,
# Prefer: wait, Idempotency-Key, ETag/304, cursor pagination, DELETE token rules, problem+json
# bodies for bad input (malformed JSON, wrong types, overflowing dims, depth bomb, oversize
# body, wrong content type, truncated safetensors header), static files with path traversal
# attempts, security headers, /metrics, and a graceful SIGTERM. The database fault tests
# live in tests/integration/faults.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

server_init api

server_db
"$SERVER" migrate >"$tmp/migrate.log" 2>&1
rc=$?
check "tpuplan-server migrate applies the migrations and exits 0" \
    eval '[ "$rc" = 0 ] && grep -q "migrations in .* applied" "$tmp/migrate.log"'
server_start server --max-body 1M --workers 2 --executors 2 --http-threads 2 --cache-ttl 2
# Text and form bodies carry a client token, as the dashboard sends them (a cross-site form
# cannot: crosssite.sh).
dash="TPUplan-Client: api-sh-dashboard-token-$$"

# errors_are 'NAME|DETAIL' ...: the problem's errors, exactly and in order.
errors_are() {
    python3 - "$tmp/b" "$@" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
got = ["%s|%s" % (e["name"], e["detail"]) for e in p.get("errors", [])]
assert got == sys.argv[2:], got
PY
}

# ---- operational endpoints and security headers ----
req GET /healthz
check "GET /healthz is 200" is 200
check "every response has the CSP" \
    eval '[ "$(hdr Content-Security-Policy)" = "default-src '"'"'self'"'"'; script-src '"'"'self'"'"'; style-src '"'"'self'"'"'; img-src '"'"'self'"'"' data:; connect-src '"'"'self'"'"'; frame-ancestors '"'"'none'"'"'; base-uri '"'"'none'"'"'; form-action '"'"'self'"'"'" ]'
check "nosniff, no-referrer and DENY headers" \
    eval '[ "$(hdr X-Content-Type-Options)" = nosniff ] && [ "$(hdr Referrer-Policy)" = no-referrer ] && [ "$(hdr X-Frame-Options)" = DENY ]'
req GET /readyz
check "GET /readyz is 200 once migrations are applied" is 200
req GET /api/v1/openapi.json
check "GET /api/v1/openapi.json serves the OpenAPI 3.1 document" \
    eval 'is 200 && [ "$(hdr Content-Type)" = application/json ] && body_has "\"openapi\": *\"3.1"'

req GET /api/v1/chips
check "GET /api/v1/chips lists the chip table with usable HBM and assumptions" \
    eval 'is 200 && body_has "\"name\":\"v5e\"" && body_has "\"usable_hbm_bytes\":16911433728" && body_has "\"uncertain\":\[" && body_has "\"default\":true"'
req GET /api/v1/recipes
check "GET /api/v1/recipes lists the presets with their published counts, policies and choices" \
    eval 'is 200 && [ "$(hdr Cache-Control)" = "public, max-age=300" ] && body_has "\"name\":\"llama-3.1-8b\",\"url\":\"https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json\",\"family\":\"llama\",\"architecture\":\"LlamaForCausalLM\",\"parameters\":8030261248" && body_has "\"name\":\"offload_dot_with_no_batch_dims\"" && body_has "\"train.attention\":\[\"flash\",\"dot_product\"\]"'

# ---- routing errors ----
req GET /api/v1/nope
check "unknown API route is 404 problem+json" problem 404 not-found
req PUT /api/v1/plans
check "wrong method is 405 with Allow" eval 'problem 405 method-not-allowed && [ "$(hdr Allow)" = "GET, HEAD, POST" ]'
req GET /api/v1/plans/AAAAAAAAAAAAAAAAAAAAAA
check "unknown plan id is 404 problem+json" problem 404 not-found
req GET /api/v1/plans/not-an-id
check "malformed plan id is 404 without a database lookup" problem 404 not-found

# ---- static files ----
req GET /
check "/ serves index.html as HTML with no-cache" \
    eval 'is 200 && hdr Content-Type | grep -q "^text/html" && [ "$(hdr Cache-Control)" = no-cache ]'
etag=$(hdr ETag)
req GET / -H "If-None-Match: $etag"
check "static If-None-Match gives 304" is 304
js=$(grep -o 'src="[^"]*\.m\?js"' static/index.html | head -1 | sed 's/src="\.\?\/\?//; s/"$//')
if [ -n "$js" ]; then
    req GET "/$js"
    check "scripts are text/javascript" eval 'is 200 && hdr Content-Type | grep -q "^text/javascript"'
else
    ok "scripts are text/javascript # SKIP index.html has no script"
fi
traversal_ok=1
for p in /../Makefile /%2e%2e/Makefile /..%2fMakefile /%2e%2e%2fMakefile /js/..%2f..%2fMakefile \
    '/js/..%5c..%5cMakefile' /vendor/../Makefile /.git/config /%2e%2e/%2e%2e/etc/passwd \
    '/index.html%00.js' /static/../../etc/passwd; do
    req GET "$p"
    if [ "$status" != 404 ] || body_has 'root:' || body_has 'CFLAGS'; then
        traversal_ok=0
        echo "# $p -> $status"
    fi
done
check "path traversal (.., %2e%2e, encoded slashes, backslashes, NUL, dot-files) is 404" \
    [ "$traversal_ok" = 1 ]
req GET /p/AAAAAAAAAAAAAAAAAAAAAA
check "/p/{id} serves the plan page" eval 'is 200 && hdr Content-Type | grep -q "^text/html"'

# ---- submission ----
model='{"name":"api-test-small","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"},{"name":"x","shape":[8,128],"dtype":"bf16","kind":"activation","live":[0,2]}]}'
req POST /api/v1/plans -H 'Content-Type: application/json' --data "$model"
check "POST JSON model is 202" is 202
id=$(jstr id)
token=$(jstr manage_token)
check "202 carries Location and Retry-After" \
    eval '[ "$(hdr Location)" = "/api/v1/plans/$id" ] && [ "$(hdr Retry-After)" = 1 ]'
check "202 body has id, queued status, manage token and share link" \
    eval '[ ${#id} = 22 ] && [ ${#token} = 43 ] && [ "$(jstr status)" = queued ] && [ "$(jstr share)" = "/p/$id" ]'
req GET "/api/v1/plans/$id"
check "GET plan shows its fields" \
    eval 'is 200 && [ "$(jstr name)" = api-test-small ] && [ "$(jstr source_format)" = json ] && body_has "\"summary\":{\"tensors\":2"'
etag=$(hdr ETag)
req GET "/api/v1/plans/$id" -H "If-None-Match: $etag"
check "GET plan with If-None-Match gives 304" eval 'is 304 || [ "$(hdr ETag)" != "$etag" ]'

# Prefer: wait: 201 with the finished plan (and the manage token, shown once).
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data "${model/api-test-small/api-test-wait}"
check "Prefer: wait=20 answers 201 with the finished plan" \
    eval 'is 201 && [ "$(jstr status)" = done ] && body_has "\"result\":"'
check "201 has Preference-Applied, Location, ETag and the manage token" \
    eval '[ "$(hdr Preference-Applied)" = wait=20 ] && [ -n "$(hdr Location)" ] && [ -n "$(hdr ETag)" ] && [ ${#token} = 43 ] && [ -n "$(jstr manage_token)" ]'
wid=$(jstr id)
req GET "/api/v1/plans/$wid"
check "GET of a done plan includes the result" eval 'is 200 && [ "$(jstr status)" = done ] && body_has "\"schema_version\": *1"'
wetag=$(hdr ETag)
req GET "/api/v1/plans/$wid"
check "cached GET answers the same document and ETag" eval 'is 200 && [ "$(hdr ETag)" = "$wetag" ] && body_has "\"result\":"'
req GET "/api/v1/plans/$wid" -H "If-None-Match: $wetag"
check "cached GET honours If-None-Match" is 304
req HEAD "/api/v1/plans/$wid"
check "HEAD of a plan is 200" is 200

# Views: the result without its tensors, and the tensors as columns, as the planner wrote
# them (plan_views; migrations/0003).
req GET "/api/v1/plans/$wid?view=summary"
check "?view=summary is the plan with the result minus its tensors" \
    eval 'is 200 && [ "$(jstr status)" = done ] && body_has "\"result\":{" && body_has "\"schema_version\": *1" && body_has "\"packing\":" && ! body_has "\"tensors\": *\["'
setag=$(hdr ETag)
check "?view=summary has its own ETag" eval '[ "$setag" = "${wetag%\"}-summary\"" ]'
req GET "/api/v1/plans/$wid?view=layout"
check "?view=layout is the tensors as columns, in tensor order, without the result" \
    eval 'is 200 && body_has "\"layout\":{\"tensors\":2,\"name\":\[\"w\",\"x\"\],\"start\":\[0,0\],\"end\":\[2,2\],\"offset\":\[0,2048\],\"padded_bytes\":\[2048,2048\]" && body_has "\"kind\":{\"values\":\[\"activation\",\"param\"\],\"index\":\[1,0\]}" && body_has "\"shape\":{\"values\":\[\"bf16\[8,128\]{1,0:T(8,128)(2,1)}\",\"f32\[4,128\]{1,0:T(4,128)}\"\],\"index\":\[1,0\]}" && body_has "\"confidence\":{\"values\":\[\"assumed\"\],\"index\":\[0,0\]}" && ! body_has "\"result\":"'
letag=$(hdr ETag)
check "?view=layout has its own ETag" eval '[ "$letag" = "${wetag%\"}-layout\"" ]'
req GET "/api/v1/plans/$wid?view=layout" -H "If-None-Match: $letag"
check "?view=layout honours its ETag (304)" is 304
req GET "/api/v1/plans/$wid?view=layout" -H "If-None-Match: $wetag"
check "the whole plan's ETag does not match a view (200)" eval 'is 200 && body_has "\"layout\":"'
req GET "/api/v1/plans/$wid?view=summary"
check "a cached view answers the same view, not another" \
    eval 'is 200 && [ "$(hdr ETag)" = "$setag" ] && ! body_has "\"layout\":"'
req GET "/api/v1/plans/$wid?view=tensors"
check "an unknown view is 400 naming view" eval 'problem 400 invalid-parameter && body_has "view must be"'
req GET "/api/v1/plans/$wid?view="
check "an empty view is 400" problem 400 invalid-parameter

# The runtime allocator replay (packing.runtime: a GPU runtime model, only when asked for), the
# verdict in the planner's words, and the trace export (?format=trace).
req GET "/api/v1/plans/$wid?view=summary"
check "the summary view has no runtime replay unless asked, and the verdict's words" \
    eval 'body_has "\"runtime\":null" && body_has "\"verdict\":{\"status\":\"fits\",\"headline\":\"fits\""'
req POST "/api/v1/plans?runtime=bfc" -H 'Content-Type: application/json' \
    -H 'Prefer: wait=20' --data "${model/api-test-small/api-test-bfc}"
check "?runtime=bfc: packing.runtime, labelled as the GPU-style allocator" \
    eval 'is 201 && body_has "\"runtime\":{\"name\":\"bfc-runtime\"" && body_has "not what the TPU compiler does" && body_has "\"memory_fraction\":0.75"'
req POST "/api/v1/plans?runtime=gpu" -H 'Content-Type: application/json' --data "$model"
check "?runtime other than none or bfc is 400 naming it" \
    eval 'problem 400 invalid-parameter && body_has "runtime: must be none or bfc, got"'
req GET "/api/v1/plans/$wid?format=trace"
check "?format=trace is Chrome/Perfetto trace JSON: 2 slices, 2 steps x 2 counters, 2 tracks" \
    eval 'is 200 && [ "$(hdr Content-Type)" = application/json ] && python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))
ph = [e[\"ph\"] for e in t[\"traceEvents\"]]
assert (ph.count(\"X\"), ph.count(\"C\"), ph.count(\"M\")) == (2, 4, 5), ph
assert sorted(e[\"name\"] for e in t[\"traceEvents\"] if e[\"ph\"] == \"X\") == [\"w\", \"x\"]
" "$tmp/b"'
tetag=$(hdr ETag)
check "the trace is an attachment with its own ETag" \
    eval '[ "$tetag" = "${wetag%\"}-trace\"" ] && hdr Content-Disposition | grep -qF "attachment; filename=\"$wid.trace.json\""'
req GET "/api/v1/plans/$wid?format=trace" -H "If-None-Match: $tetag"
check "?format=trace honours its ETag (304)" is 304
req GET "/api/v1/plans/$wid?format=svg"
check "a format other than trace is 400 naming format" eval 'problem 400 invalid-parameter && body_has "format must be trace"'
req GET "/api/v1/plans/$wid?format=trace&view=layout"
check "format=trace with a view is 400" problem 400 invalid-parameter
req POST "/api/v1/plans?mem_fraction=0.5&preallocate=false" -H 'Content-Type: application/json' \
    -H 'Prefer: wait=20' --data "${model/api-test-small/api-test-runtime}"
check "mem_fraction and preallocate reach the runtime replay" \
    eval 'is 201 && body_has "\"memory_fraction\":0.5" && body_has "\"preallocate\":false" && body_has "\"region_bytes\":\[2097152\]"'
req POST "/api/v1/plans?mem_fraction=1.5" -H 'Content-Type: application/json' --data "$model"
check "mem_fraction above 1 is 400" \
    eval 'problem 400 invalid-parameter && body_has "mem_fraction: must be above 0 and at most 1, got"'
req POST "/api/v1/plans?preallocate=yes" -H 'Content-Type: application/json' --data "$model"
check "preallocate other than true or false is 400" problem 400 invalid-parameter
# The budget gate: w f32[4,128] and x bf16[8,128] on v5e, 2048 bytes each, both live: peak 4096.
req POST "/api/v1/plans?budget=4096B" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data "${model/api-test-small/api-test-budget}"
check "budget=4096B (the peak) is within budget" \
    eval 'is 201 && body_has "\"budget_bytes\":4096,\"within_budget\":true"'
req POST "/api/v1/plans?budget=4095B" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data "${model/api-test-small/api-test-budget-over}"
check "budget=4095B is over budget, the verdict in the result" \
    eval 'is 201 && body_has "\"budget_bytes\":4095,\"within_budget\":false" && body_has "\"fits\":true"'
req POST "/api/v1/plans?budget=0.9" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data "${model/api-test-small/api-test-budget-fraction}"
check "budget=0.9 is 0.9 of v5e's usable HBM, 16911433728 (rounded down)" \
    eval 'is 201 && body_has "\"budget_bytes\":15220290355,\"within_budget\":true"'
req POST "/api/v1/plans?budget=1.5" -H 'Content-Type: application/json' --data "$model"
check "budget=1.5 is 400 naming budget" \
    eval 'problem 400 invalid-parameter && body_has "budget: a fraction of the capacity must be above 0 and at most 1"'
req POST "/api/v1/plans?budget=0.9" -H 'Content-Type: text/csv' --data-binary $'id,lower,upper,size\n0,0,1,8\n'
check "a budget fraction of a plan without a capacity is 422 naming budget" \
    eval 'problem 422 invalid-model && body_has "\"where\":\"budget\"" && body_has "a fraction needs a capacity"'
# The README's CI step (README.md#budget-gate-in-ci), run as written (its budget swapped, model.json = this model): exit 0
# within budget, 1 over, and the share link first.
awk '/^TPUPLAN=http/ {on = 1} on {print} on && /^PY$/ {exit}' README.md >"$tmp/gate.sh"
printf '%s' "${model/api-test-small/api-test-gate}" >"$tmp/model.json"
# gate BUDGET : the step against this server with its budget BUDGET; its exit status in $grc,
# its output in $tmp/gate.out
gate() {
    (cd "$tmp" && sed "s|^TPUPLAN=.*|TPUPLAN=$base|; s|budget=0.9|budget=$1|" gate.sh | bash >gate.out 2>&1)
    grc=$?
}
gate 4096B
check "README gate step: within budget exits 0 and prints the share link" \
    eval '[ $grc = 0 ] && grep -q "^$base/p/[A-Za-z0-9_-]\{22\}  peak 4096 B, budget 4096 B$" "$tmp/gate.out"'
gate 4K
check "README gate step: budget=4K (4096) passes too" eval '[ $grc = 0 ]'
gate 4000B
check "README gate step: over budget exits 1" \
    eval '[ $grc = 1 ] && grep -q "peak 4096 B, budget 4000 B$" "$tmp/gate.out"'
gate lots
check "README gate step: a malformed budget fails the step (curl -f)" eval '[ $grc != 0 ] && ! grep -q "/p/" "$tmp/gate.out"'
# The diff of two stored plans: x bf16[8,128] (2048 B) becomes f32[8,128] (4096 B under
# T(8,128)): +2048 B for x and for the peak (w 2048 B and x live together).
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data "${model/api-test-small/api-test-diff-a}"
da=$(jstr id)
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data "$(printf '%s' "${model/api-test-small/api-test-diff-b}" | sed 's/"bf16"/"f32"/')"
db=$(jstr id)
req GET "/api/v1/diff?a=$da&b=$db"
check "GET /api/v1/diff gives the exact deltas, x first" \
    eval 'is 200 && python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
s = d[\"summary\"]
assert (s[\"peak_bytes_before\"], s[\"peak_bytes_after\"], s[\"peak_bytes_delta\"]) == (4096, 6144, 2048), s
assert (s[\"changed\"], s[\"unchanged\"], s[\"added\"], s[\"removed\"]) == (1, 1, 0, 0), s
t = d[\"tensors\"][0]
assert (t[\"name\"], t[\"padded_bytes_delta\"], t[\"layout_before\"], t[\"layout_after\"]) == (\"x\", 2048, \"bf16[8,128]{1,0:T(8,128)(2,1)}\", \"f32[8,128]{1,0:T(8,128)}\"), t
assert d[\"by_kind\"][\"activation\"][\"padded_bytes_delta\"] == 2048 and d[\"a\"][\"name\"] == \"api-test-diff-a\"
" "$tmp/b"'
detag=$(hdr ETag)
req GET "/api/v1/diff?a=$da&b=$db" -H "If-None-Match: $detag"
check "the diff honours its ETag (304)" eval 'is 304 && [ -n "$detag" ]'
req GET "/api/v1/diff?a=$da"
check "a diff without b is 400" eval 'problem 400 invalid-parameter && body_has "a and b must both be plan ids"'
req GET "/api/v1/diff?a=$da&b=AAAAAAAAAAAAAAAAAAAAAA"
check "a diff with an unknown plan is 404" eval 'problem 404 not-found && body_has "No plan has this id"'
req POST "/api/v1/diff?a=$da&b=$db"
check "POST to the diff is 405" problem 405 method-not-allowed
req GET "/d/$da/$db"
check "/d/{a}/{b} serves the diff page" eval 'is 200 && hdr Content-Type | grep -q "^text/html" && body_has "/js/diff.js"'
req GET "/d/$da"
check "/d/{a} without b is 404" problem 404 not-found
req POST "/api/v1/plans?goal=most" -H 'Content-Type: application/json' --data "$model"
check "goal other than min or fit is 400" eval 'problem 400 invalid-parameter && body_has "goal: must be min or fit"'
req POST "/api/v1/plans?goal=fit&strategies=best" -H 'Content-Type: application/json' \
    -H 'Prefer: wait=20' --data "${model/api-test-small/api-test-goal}"
check "goal=fit plans (201, fits)" eval 'is 201 && body_has "\"fits\":true"'
# What-if on a stored plan: a new plan linked to its parent, and the diff against it.
req POST "/api/v1/plans/$da/whatif" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data '{"dtype":{"activation":"f32"},"name":"api-test-whatif"}'
wid2=$(jstr id)
check "POST /whatif with Prefer: wait answers 201 with the new plan, its parent and links" \
    eval 'is 201 && [ "$(jstr status)" = done ] && [ "$(jstr parent_id)" = "$da" ] && [ "$(jstr parent)" = "/p/$da" ] && [ "$(jstr compare)" = "/d/$da/$wid2" ] && [ "$(jstr diff)" = "/api/v1/diff?a=$da&b=$wid2" ] && [ "$(jstr name)" = api-test-whatif ]'
check "the waited what-if carries its diff against the parent inline (x +2048), and no ETag" \
    eval 'body_has "\"diff\":{" && body_has "\"peak_bytes_delta\":2048" && body_has "\"name\":\"x\",\"status\":\"changed\"" && ! hdr ETag | grep -q .'
req GET "/api/v1/plans/$wid2?view=summary"
check "the what-if plan keeps its parent (GET), x now f32: peak 6144" \
    eval 'is 200 && [ "$(jstr parent_id)" = "$da" ] && body_has "\"peak_bytes\":6144"'
req GET "/api/v1/diff?a=$da&b=$wid2"
check "the what-if's diff against its parent: x +2048" \
    eval 'is 200 && body_has "\"peak_bytes_delta\":2048" && body_has "\"name\":\"x\",\"status\":\"changed\""'
req GET "/api/v1/plans/$da"
check "the parent itself has no parent_id" eval 'is 200 && ! body_has "parent_id"'
req POST "/api/v1/plans/$da/whatif" -H 'Content-Type: application/json' --data '{"chip":"v6e","mesh":{"data":2},"sharding":{"w":[null,"data"]}}'
check "a what-if without Prefer: wait is 202 with its parent links" \
    eval 'is 202 && [ "$(jstr parent_id)" = "$da" ] && [ -n "$(jstr manage_token)" ]'
req POST "/api/v1/plans/$da/whatif" -H 'Content-Type: application/json' --data '{"dtype":{"x":7}}'
check "a bad override is 422 naming it" \
    eval 'problem 422 invalid-model && body_has "\"where\":\"overrides.dtype.x\""'
req POST "/api/v1/plans/$da/whatif" -H 'Content-Type: application/json' --data '{"colour":"red"}'
check "an unknown override is 422" eval 'problem 422 invalid-model && body_has "unknown override"'
req POST "/api/v1/plans/$da/whatif?chip=v4&retain=x" -H 'Content-Type: application/json' --data '{}'
check "a what-if's query takes retain only: chip is unknown there, and a bad retain is listed too" \
    eval 'problem 400 invalid-parameter && errors_are "chip|chip: unknown parameter (known: retain); a what-if'"'"'s changes are its body" "retain|retain: must be a duration (30d, 12h, 90m, 3600s; 0: forever) of at most 3650d."'
req POST "/api/v1/plans/$da/whatif" -H 'Content-Type: text/csv' --data 'a,b'
check "overrides not in JSON are 415" problem 415 unsupported-media-type
req POST "/api/v1/plans/AAAAAAAAAAAAAAAAAAAAAA/whatif" -H 'Content-Type: application/json' --data '{}'
check "a what-if of an unknown plan is 404" eval 'is 404 && body_has "No plan has this id"'
req GET "/api/v1/plans/$da/whatif"
check "GET of /whatif is 405" problem 405 method-not-allowed
# A recipe (a model config and a training step) is posted as JSON like a model; its what-if
# is a merge patch of the recipe: batch 16 instead of 8.
recipe='{"name":"api-test-recipe","chip":"v5e","model":"gpt2","train":{"batch":8,"seq":1024},"options":{"strategies":"xla-spatial"}}'
req POST "/api/v1/plans" -H 'Content-Type: application/json' -H 'Prefer: wait=20' --data "$recipe"
rid=$(jstr id)
check "a recipe posted as application/json plans (201)" eval 'is 201 && [ "$(jstr status)" = done ]'
req GET "/api/v1/plans/$rid?view=summary"
check "its summary carries the recipe section: GPT-2's 124,439,808 parameters, batch 8" \
    eval 'is 200 && body_has "\"source_format\":\"recipe\"" && body_has "\"parameters\":124439808" && body_has "\"batch\":8"'
req POST "/api/v1/plans/$rid/whatif" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data '{"recipe":{"train":{"batch":16}}}'
rwid=$(jstr id)
check "a recipe's what-if plans (201) with the recipe's plan as parent" \
    eval 'is 201 && [ "$(jstr parent_id)" = "$rid" ]'
req GET "/api/v1/plans/$rwid?view=summary"
check "the what-if planned batch 16" eval 'is 200 && body_has "\"batch\":16" && body_has "\"source_format\":\"recipe\""'
# The worker applies a what-if's overrides: a bad one fails the new plan with a 422 problem.
req POST "/api/v1/plans/$rid/whatif" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data '{"recipe":{"train":{"batch":0}}}'
check "a recipe's bad what-if fails 422 naming the field" \
    eval 'body_has "\"status\": *\"failed\"" && body_has "\"status\": *422" && body_has "\"where\": *\"overrides.recipe.train.batch\"" && body_has "\"source_format\":\"recipe\""'
req POST "/api/v1/plans/$rid/whatif" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data '{"remat":"layers.*"}'
check "a tensor pattern on a recipe's plan fails 422 naming it" \
    eval 'body_has "\"status\": *\"failed\"" && body_has "\"where\": *\"overrides.remat\""'
req POST "/api/v1/plans" -H 'Content-Type: application/json' --data '{"architectures":["LlamaForCausalLM"],"hidden_size":8}'
check "a bare config.json is 422 saying how to make it a recipe" \
    eval 'problem 422 invalid-model && body_has "does not say what to run"'
# A plan still running has no trace yet: exact search on 3000 random buffers runs out its 3 s.
awk 'BEGIN { srand(7); print "id,lower,upper,size"; for (i = 0; i < 3000; i++) { l = int(rand() * 500); printf "%d,%d,%d,%d\n", i, l, l + 1 + int(rand() * 60), 256 * (1 + int(rand() * 64)) } }' >"$tmp/slow.csv"
req POST "/api/v1/plans?strategies=exact&time_limit=3" -H 'Content-Type: text/csv' --data-binary @"$tmp/slow.csv"
sid=$(jstr id)
req GET "/api/v1/plans/$sid?format=trace"
check "?format=trace of a plan not done yet is 409 no-result" \
    eval 'problem 409 no-result && body_has "not done yet"'
req POST "/api/v1/plans/$sid/whatif" -H 'Content-Type: application/json' --data '{}'
check "a what-if of a CSV plan is 422 (it needs a JSON model)" \
    eval 'problem 422 invalid-model && body_has "this plan.s input is minimalloc-csv"'
req GET "/api/v1/diff?a=$da&b=$sid"
check "a diff with a plan not done yet is 409 no-result" \
    eval 'problem 409 no-result && body_has "only finished plans can be compared"'

# Formats: CSV, safetensors (only the header is read), multipart form.
printf 'id,lower,upper,size\n0,0,10,4096\n1,5,15,8192\n2,12,20,4096\n' >"$tmp/mm.csv"
req POST /api/v1/plans -H 'Content-Type: text/csv' --data-binary @"$tmp/mm.csv"
check "POST MiniMalloc CSV is 202" eval 'is 202 && [ -n "$(jstr manage_token)" ]'
hjson='{"w":{"dtype":"F32","shape":[4,128],"data_offsets":[0,2048]},"__metadata__":{"format":"pt"}}'
{
    printf "$(printf '\\x%02x' $((${#hjson} & 255)) $((${#hjson} >> 8)) 0 0 0 0 0 0)"
    printf '%s' "$hjson"
    head -c 2048 /dev/zero
} >"$tmp/m.safetensors"
req POST /api/v1/plans -H 'Content-Type: application/octet-stream' --data-binary @"$tmp/m.safetensors"
check "POST safetensors file is 202 (header read, data skipped)" is 202
# XLA HLO text: text/plain, detected from content; the planned result names HLO buffers.
req POST /api/v1/plans -H 'Content-Type: text/plain' -H "$dash" -H 'Prefer: wait=20' \
    --data-binary @tests/data/hlo/while.hlo
check "POST HLO text (text/plain) is planned: source hlo, buffer w/temps" \
    eval 'is 201 && body_has "\"source_format\":\"hlo\"" && body_has "\"w/temps\""'
# ?format= takes every name and alias of the planner's input table (import.h), as the CLI's
# --input does: mlir is StableHLO's alias. Forced on HLO text it is applied, not ignored.
req POST "/api/v1/plans?format=mlir" -H 'Content-Type: text/plain' -H "$dash" -H 'Prefer: wait=20' \
    --data-binary @tests/data/hlo/jax_while_call.mlir
check "?format=mlir plans StableHLO text (201, source stablehlo)" \
    eval 'is 201 && [ "$(jstr source_format)" = stablehlo ]'
req POST "/api/v1/plans?format=mlir" -H 'Content-Type: text/plain' -H "$dash" \
    --data-binary @tests/data/hlo/while.hlo
check "?format=mlir on HLO text reads it as StableHLO (422)" is 422
# ?bind= binds StableHLO's dynamic dims (the options table's row, as the CLI's --bind)
req POST "/api/v1/plans?bind=arg0=5,arg1=5x1" -H 'Content-Type: text/plain' -H "$dash" \
    -H 'Prefer: wait=20' --data-binary @tests/data/dynamic/tri.mlir
check "?bind= plans a module with dynamic dims (201), the binding stored with the plan" \
    eval 'is 201 && [ "$(jstr source_format)" = stablehlo ] && body_has "f32\\[5,7\\]"'
req POST "/api/v1/plans" -H 'Content-Type: text/plain' -H "$dash" \
    --data-binary @tests/data/dynamic/tri.mlir
check "without ?bind= the dynamic dim is refused (422), saying how to bind it" \
    eval 'is 422 && body_has "bind it with --bind arg1=Nx1"'
req POST "/api/v1/plans?format=csv" -H 'Content-Type: text/plain' -H "$dash" -H 'Prefer: wait=20' \
    --data-binary @tests/data/minimalloc-small.csv
check "?format=csv plans a MiniMalloc CSV sent as text/plain (201)" \
    eval 'is 201 && [ "$(jstr source_format)" = minimalloc-csv ]'
printf 'HloModule m\nENTRY e {\n  ROOT a = f32[2]{0} add(b, b)\n}\n' >"$tmp/bad.hlo"
req POST /api/v1/plans -H 'Content-Type: text/plain' -H "$dash" --data-binary @"$tmp/bad.hlo"
check "bad HLO text is 422 naming line 3:26" \
    eval 'is 422 && body_has "\"where\":\"line 3:26\""'
printf '%s' "$model" >"$tmp/model.json"
req POST /api/v1/plans -H "$dash" -F "file=@$tmp/model.json" -F name=api-test-form -F chip=v5p
check "POST multipart form (file sent as application/octet-stream, like browsers) is 202" is 202
fid=$(jstr id)
req GET "/api/v1/plans/$fid"
check "form fields become options (name, chip)" \
    eval '[ "$(jstr name)" = api-test-form ] && [ "$(jstr chip)" = v5p ]'
req POST "/api/v1/plans?name=api-test-query&chip=v4" -H 'Content-Type: application/json' --data "$model"
qid=$(jstr id)
req GET "/api/v1/plans/$qid"
check "query parameters become options (name, chip)" \
    eval '[ "$(jstr name)" = api-test-query ] && [ "$(jstr chip)" = v4 ]'

# XLA's dumps: a buffer assignment alone as text/plain (detected from content), and a model
# with its buffer assignment and memory-usage report as three multipart files.
req POST /api/v1/plans -H 'Content-Type: text/plain' -H "$dash" -H 'Prefer: wait=20' \
    --data-binary @tests/data/xla/small.buffer-assignment.txt
check "POST a buffer assignment as text/plain plans it (201, xla-actual 4240 B)" \
    eval 'is 201 && [ "$(jstr source_format)" = xla-buffer-assignment ] && body_has "\"name\":\"xla-actual\",\"peak_bytes\":4240"'
req POST /api/v1/plans -H 'Prefer: wait=20' -H "$dash" -F "file=@tests/data/xla/small.model.json" \
    -F "xla_assignment=@tests/data/xla/small.buffer-assignment.txt" \
    -F "xla_report=@tests/data/xla/small.memory-usage-report.txt"
check "multipart model + xla_assignment + xla_report: matched by name, report totals" \
    eval 'is 201 && body_has "\"matched_values\":3" && body_has "\"report\":{\"form\":\"text\",\"total_bytes\":4240"'
# XLA's out-of-memory report, pasted as text/plain (detected anywhere in the text), and
# CompiledMemoryStats beside an HLO module as the form file xla_report.
req POST /api/v1/plans -H 'Content-Type: text/plain' -H "$dash" -H 'Prefer: wait=20' \
    --data-binary @tests/data/xla/oom/flowpm-27.txt
check "POST an out-of-memory report as text/plain plans its allocations (201, 32.00G matches)" \
    eval 'is 201 && [ "$(jstr source_format)" = xla-oom ] && body_has "\"size_matches\":true"'
req POST /api/v1/plans -H 'Prefer: wait=20' -H "$dash" -F "file=@tests/data/hlo/while.hlo" \
    -F "xla_report=@tests/data/xla/oom/xla-10803.memstats.txt"
check "multipart HLO + CompiledMemoryStats as xla_report: XLA's total beside ours" \
    eval 'is 201 && body_has "\"xla_total_bytes\":137376"'
req POST /api/v1/plans -H "$dash" -F "file=@tests/data/xla/small.model.json" \
    -F "xla_assignment=@tests/data/xla/small.memory-usage-report.txt"
check "a report sent as xla_assignment is a 4xx problem naming the field" \
    eval '(is 422 || is 400) && body_has "xla_assignment"'
{
    cat "$tmp/m.safetensors"
    head -c $((2 * 1024 * 1024)) /dev/zero
} >"$tmp/big.safetensors"
req POST /api/v1/plans -H "$dash" -F "file=@$tmp/big.safetensors"
check "a multipart safetensors file larger than --max-body is accepted (header only kept)" is 202

# ---- idempotency ----
key="k-$RANDOM-$$"
req POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key" --data "$model"
iid=$(jstr id)
check "first request with an Idempotency-Key is 202" is 202
req POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key" --data "$model"
check "retry with the same key and body returns the same plan without a token" \
    eval '{ is 202 || is 200; } && [ "$(jstr id)" = "$iid" ] && ! body_has manage_token'
req POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key" \
    --data "${model/api-test-small/other}"
check "same key with another body is 422" problem 422 idempotency-key-reused
# Keys are the submitter's own: without API keys, its client address (127.0.0.2 and
# 127.0.0.3 are other clients here), so no other client can probe a key, replay it or claim it
# first.
from() { # from ADDR METHOD PATH [curl args...]: req from source address ADDR
    local a=$1 m=$2 p=$3
    shift 3
    status=$(curl -s --interface "$a" -X "$m" -o "$tmp/b" -D "$tmp/h" -w '%{http_code}' "$@" \
        "$base$p")
}
from 127.0.0.2 POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key" \
    --data "${model/api-test-small/other}"
check "another client's same key with another body is a new plan, not 422 (nothing to probe)" \
    eval 'is 202 && [ "$(jstr id)" != "$iid" ] && body_has manage_token'
from 127.0.0.3 POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key" \
    --data "$model"
check "another client replaying the key and body gets a plan of its own, not the owner's" \
    eval 'is 202 && [ "$(jstr id)" != "$iid" ] && body_has manage_token'
key2="k2-$RANDOM-$$"
from 127.0.0.2 POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key2" \
    --data "${model/api-test-small/squatter}"
req POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key2" --data "$model"
own2=$(jstr id)
check "a key another client claimed first does not stop its owner (202, not 422)" \
    eval 'is 202 && body_has manage_token'
req POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $key2" --data "$model"
check "and the owner's retry replays the owner's plan" eval '[ "$(jstr id)" = "$own2" ] && ! body_has manage_token'

req POST /api/v1/plans -H 'Content-Type: application/json' -H "Idempotency-Key: $(printf 'k%.0s' $(seq 300))" \
    --data "$model"
check "an Idempotency-Key over 255 characters is 400" problem 400 invalid-parameter

# ---- bad input: problem+json naming the field ----
req POST /api/v1/plans -H 'Content-Type: application/json' --data '{"tensors":[{"name":"w",'
check "malformed JSON is 400" problem 400 malformed-input
req POST /api/v1/plans -H 'Content-Type: application/json' \
    --data '{"tensors":[{"name":"w","shape":"big","dtype":"f32"}]}'
check "a wrong type is 422 naming the tensor" \
    eval 'is 422 && body_has "\"where\":\"tensors\[0\]" && body_has "\\\\\"w\\\\\""'
req POST /api/v1/plans -H 'Content-Type: application/json' \
    --data '{"tensors":[{"name":"a","shape":[1,2],"dtype":"f32"},{"name":"huge","shape":[4294967296,4294967296,4294967296],"dtype":"f32"}]}'
check "overflowing dims are 422 naming tensor 1" eval '[ "${status:0:1}" = 4 ] && body_has "tensors\[1\]" && hdr Content-Type | grep -q problem'
bomb=$(printf '[%.0s' $(seq 200))
req POST /api/v1/plans -H 'Content-Type: application/json' --data "{\"tensors\":$bomb"
check "a JSON depth bomb is refused with a problem" \
    eval '{ is 400 || is 422; } && hdr Content-Type | grep -q problem && body_has "nesting"'
head -c $((1024 * 1024 + 10)) /dev/zero | tr '\0' ' ' >"$tmp/big.json"
req POST /api/v1/plans -H 'Content-Type: application/json' --data-binary @"$tmp/big.json"
check "a body over --max-body is 413" problem 413 body-too-large
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' \
    --data-binary @"$tmp/big.json"
check "a chunked body over --max-body is 413 (counted while streaming)" problem 413 body-too-large
req POST /api/v1/plans -H 'Content-Type: text/html' --data "$model"
check "an unsupported content type is 415" problem 415 unsupported-media-type
req POST /api/v1/plans -H 'Content-Type:' --data "$model"
check "a missing content type is 415" problem 415 unsupported-media-type
printf '\x00\x10\x00\x00\x00\x00\x00\x00{"w":' >"$tmp/trunc.safetensors"
req POST /api/v1/plans -H 'Content-Type: application/octet-stream' --data-binary @"$tmp/trunc.safetensors"
check "a truncated safetensors header is 400" problem 400 truncated-safetensors
printf '\xff\xff\xff\xff\x00\x00\x00\x00' >"$tmp/huge.safetensors"
req POST /api/v1/plans -H 'Content-Type: application/octet-stream' --data-binary @"$tmp/huge.safetensors"
check "a safetensors header longer than --max-body is 413" problem 413 body-too-large
req POST /api/v1/plans -H 'Content-Type: application/json' --data ''
check "an empty body is 400" problem 400 empty-body
req POST '/api/v1/plans?capacity=lots' -H 'Content-Type: application/json' --data "$model"
check "a malformed option is 400" problem 400 invalid-parameter
req POST '/api/v1/plans?capacity=0.3K' -H 'Content-Type: application/json' --data "$model"
check "a capacity that is not whole bytes (0.3K) is 400, not rounded" \
    eval 'problem 400 invalid-parameter && body_has "is not a whole number of bytes"'
req POST '/api/v1/plans?capacity=1.5M&alignment=4K&name=bytes-'$$ -H 'Content-Type: application/json' \
    -H 'Prefer: wait=20' --data "$model"
align=$(sql "SELECT options->>'alignment' FROM plans WHERE name = 'bytes-$$'")
check "capacity=1.5M and alignment=4K take the CLI's byte grammar (1572864 and 4096 bytes)" \
    eval 'is 201 && body_has "\"capacity_bytes\": *1572864" && [ "$align" = 4096 ]'
req POST '/api/v1/plans?chip=v99' -H 'Content-Type: application/json' --data "$model"
check "an unknown chip parameter is 400 naming chip" \
    eval 'problem 400 invalid-parameter && body_has "\"where\":\"chip\"" && body_has "chip: unknown chip"'

# The plan options' table (planner/plan_options.h): the CLI's grammar, ranges and messages;
# every bad, unknown or repeated parameter listed in one 400 (its errors member).
req POST '/api/v1/plans?capacity=lots&time_limit=0&colour=red&goal=fit&preallocate=maybe' \
    -H 'Content-Type: application/json' --data "$model"
check "every bad parameter is listed, each with its name and detail" \
    eval 'problem 400 invalid-parameter && body_has "\"where\":\"capacity\"" &&
        body_has "\"detail\":\"4 parameters are invalid: capacity, time_limit, colour, preallocate.\"" &&
        errors_are "capacity|capacity: \"lots\" is not a byte count (12, 64M, 1.5GiB: K/M/G/T are powers of 1024)" \
            "time_limit|time_limit: must be above 0 and at most 3600 s, got \"0\"" \
            "colour|colour: unknown parameter (known: format, chip, strategies, capacity, time_limit, alignment, name, budget, runtime, mem_fraction, preallocate, goal, reading, order, bind, retain)" \
            "preallocate|preallocate: must be true or false, got \"maybe\""'
req POST '/api/v1/plans?colour=red' -H 'Content-Type: application/json' --data "$model"
check "an unknown parameter alone is 400 naming it" \
    eval 'problem 400 invalid-parameter && body_has "\"where\":\"colour\"" && body_has "\"detail\":\"colour: unknown parameter (known: format,"'
req POST '/api/v1/plans?capacity=1G&capacity=2G' -H 'Content-Type: application/json' --data "$model"
check "a parameter given twice is 400" eval 'problem 400 invalid-parameter && errors_are "capacity|capacity: given more than once"'
req POST '/api/v1/plans?capacity' -H 'Content-Type: application/json' --data "$model"
check "a parameter without a value is 400" eval 'problem 400 invalid-parameter && errors_are "capacity|capacity: needs a value"'
req POST /api/v1/plans -H "$dash" -F "file=@$tmp/model.json" -F colour=red -F time_limit=2h
check "form fields are parameters too: unknown and out of range, both listed" \
    eval 'problem 400 invalid-parameter && errors_are "colour|colour: unknown parameter (known: format, chip, strategies, capacity, time_limit, alignment, name, budget, runtime, mem_fraction, preallocate, goal, reading, order, bind, retain)" "time_limit|time_limit: must be above 0 and at most 3600 s, got \"2h\""'
req POST '/api/v1/plans?alignment=96&format=xml&strategies=magic' -H 'Content-Type: application/json' --data "$model"
check "alignment, format and strategies refused as tpuplan plan refuses them" \
    eval 'problem 400 invalid-parameter && errors_are "alignment|alignment: must be a power of two from 1 to 1G (2^30) bytes, got \"96\"" "format|format: unknown input format \"xml\" (known: auto, safetensors, recipe, json, minimalloc-csv (csv), xla-buffer-assignment, hlo, stablehlo (mlir), xla-oom (oom))" "strategies|strategies: unknown strategy \"magic\" (known: xla-spatial,xla-temporal,xla-area,xla-default,first-fit,tflite,tpuplan-search,exact, best, all)"'
req POST "/api/v1/plans?time_limit=500ms&capacity=1M&name=opts-$$" -H 'Content-Type: application/json' \
    -H 'Prefer: wait=20' --data "$model"
stored=$(sql "SELECT options::text FROM plans WHERE name = 'opts-$$'")
check "time_limit=500ms and capacity=1M are taken, and stored as numbers" \
    eval 'is 201 && body_has "\"capacity_bytes\": *1048576" && [ "$stored" = "{\"name\": \"opts-$$\", \"format\": \"json\", \"capacity\": 1048576, \"time_limit_s\": 0.5}" ]'
req POST "/api/v1/plans?time_limit=1s" -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data '{"name":"api-test-model-options","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32"}],"options":{"capacity":"16GiB","mem_fraction":0.5}}'
check "a model's options in the parameters' grammar (capacity \"16GiB\"), with a parameter beside them" \
    eval 'is 201 && body_has "\"capacity_bytes\":17179869184" && body_has "\"memory_fraction\":0.5"'
req POST /api/v1/plans -H 'Content-Type: application/json' \
    --data '{"tensors":[],"options":{"capacity":"16GiB","time_limit":4000}}'
check "a model option out of range is 422 naming options.time_limit" \
    eval 'problem 422 invalid-model && body_has "\"where\":\"options.time_limit\"" && body_has "options.time_limit: must be above 0 and at most 3600 s"'
many=$(for i in $(seq 1 33); do printf 'p%d=1&' "$i"; done)
req POST "/api/v1/plans?${many%&}" -H 'Content-Type: application/json' --data "$model"
check "more than 32 parameters is 400" eval 'problem 400 invalid-parameter && body_has "More than 32 parameters."'
req POST "/api/v1/plans?capacity=0" -H 'Content-Type: application/json' --data "$model"
check "capacity=0 is 400 (above 0, as on the command line)" \
    eval 'problem 400 invalid-parameter && errors_are "capacity|capacity: must be above 0 bytes, got \"0\""'

# ---- listing ----
# The list is the caller's own (private.sh): this one's client token.
me="api-sh-$$-0123456789abcdef"
for i in 1 2 3; do
    req POST "/api/v1/plans?name=page-$$-$i" -H 'Content-Type: application/json' \
        -H "TPUplan-Client: $me" --data "$model"
done
req GET "/api/v1/plans?limit=2&name=page-$$-" -H "TPUplan-Client: $me"
cursor=$(jstr next_cursor)
link=$(hdr Link)
check "list is newest first, limited, with next_cursor and Link rel=next" \
    eval 'is 200 && [ "$(jstr name)" = "page-$$-3" ] && [ -n "$cursor" ] && [[ "$link" == *"rel=\"next\""* ]]'
req GET "/api/v1/plans?limit=2&name=page-$$-&cursor=$cursor" -H "TPUplan-Client: $me"
check "the next page has the rest and no cursor" \
    eval 'is 200 && [ "$(jstr name)" = "page-$$-1" ] && body_has "\"next_cursor\":null"'
req GET "/api/v1/plans?limit=0"
check "limit=0 is 400" problem 400 invalid-parameter
req GET "/api/v1/plans?cursor=@@@"
check "a forged cursor is 400" problem 400 invalid-parameter

# ---- delete ----
req DELETE "/api/v1/plans/$id"
check "DELETE without a token is 401 with WWW-Authenticate" \
    eval 'problem 401 unauthorized && [ "$(hdr WWW-Authenticate)" = Bearer ]'
req DELETE "/api/v1/plans/$id" -H 'Authorization: Bearer AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
check "DELETE with a wrong token is 403" problem 403 forbidden
req DELETE "/api/v1/plans/$wid" -H "Authorization: Bearer $token"
check "one plan's token cannot delete another (403)" problem 403 forbidden
req GET "/api/v1/plans/$id?view=summary"
req GET "/api/v1/plans/$id?view=layout"
req DELETE "/api/v1/plans/$id" -H "Authorization: Bearer $token"
check "DELETE with the manage token is 204" is 204
req GET "/api/v1/plans/$id"
check "a deleted plan is 404" problem 404 not-found
req GET "/api/v1/plans/$id?view=layout"
check "a deleted plan's views are 404 too (evicted from the cache)" problem 404 not-found

# ---- metrics and shutdown ----
req GET /metrics
check "/metrics has requests by route and status, durations, jobs and planner histogram" \
    eval 'is 200 && body_has "tpuplan_http_requests_total{route=\"plans\",status=\"202\"}" && body_has "tpuplan_http_request_duration_seconds_bucket" && body_has "tpuplan_jobs{state=\"done\"}" && body_has "tpuplan_planner_duration_seconds_count"'
# Graceful stop: a request parked on Prefer: wait still gets an answer (201 if its plan
# finished first, else 202 with its location), never a reset; the exit status is 0.
awk 'BEGIN { printf "{\"name\":\"api-test-big\",\"tensors\":["; for (i = 0; i < 3000; i++) printf "%s{\"name\":\"t%d\",\"shape\":[%d,256],\"dtype\":\"bf16\",\"kind\":\"activation\",\"live\":[%d,%d]}", (i ? "," : ""), i, 8 + i % 300, i % 90, i % 90 + 3; printf "]}" }' >"$tmp/big-model.json"
curl -s -o "$tmp/parked.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H 'Prefer: wait=60' --data-binary @"$tmp/big-model.json" "$base/api/v1/plans" \
    >"$tmp/parked.code" 2>/dev/null &
curl_pid=$!
sleep 0.5
server_stop_check server
wait "$curl_pid"
parked=$(cat "$tmp/parked.code")
check "a request parked on Prefer: wait is answered at shutdown (got $parked)" \
    eval '[ "$parked" = 202 ] || [ "$parked" = 201 ]'

tap_end
