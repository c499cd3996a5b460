-- mixed.lua - wrk script of tests/soak/soak.sh: a mix of plan submissions and reads.
--
-- wrk ... URL -- PLAN_ID MODEL_FILE IDS_PREFIX
-- Of every 10 requests: 1 POST /api/v1/plans (the model file), 4 GET of a finished plan,
-- 1 GET of its summary view, 2 GET /api/v1/plans?limit=20, 2 GET /healthz. Each thread
-- appends the id of every accepted submission (201/202) to IDS_PREFIX.<thread>, so the
-- soak can check afterwards that every acknowledged plan was planned exactly once. done()
-- prints the responses by status, wrk's socket errors, the request count and p50/p99.

local threads = {}

function setup(thread)
    thread:set("tid", #threads + 1)
    table.insert(threads, thread)
end

function init(args)
    plan_id = args[1]
    local f = assert(io.open(args[2], "rb"))
    model = f:read("*a")
    f:close()
    out = assert(io.open(args[3] .. "." .. tid, "a"))
    counts = {}
    n = 0
end

function request()
    n = n + 1
    local k = n % 10
    if k == 0 then
        return wrk.format("POST", "/api/v1/plans?name=soak",
            { ["Content-Type"] = "application/json" }, model)
    elseif k <= 4 then
        return wrk.format("GET", "/api/v1/plans/" .. plan_id)
    elseif k == 5 then
        return wrk.format("GET", "/api/v1/plans/" .. plan_id .. "?view=summary")
    elseif k <= 7 then
        return wrk.format("GET", "/api/v1/plans?limit=20")
    end
    return wrk.format("GET", "/healthz")
end

function response(status, headers, body)
    counts[status] = (counts[status] or 0) + 1
    if status == 201 or status == 202 then
        local id = body:match('"id":"([^"]+)"')
        if id then
            out:write(id, "\n")
            out:flush()
        end
    end
end

function done(summary, latency, requests)
    local total = {}
    for _, t in ipairs(threads) do
        for k, v in pairs(t:get("counts")) do
            total[k] = (total[k] or 0) + v
        end
    end
    for k, v in pairs(total) do
        io.write(string.format("status %d %d\n", k, v))
    end
    local e = summary.errors
    io.write(string.format("socket connect %d read %d write %d timeout %d\n",
        e.connect, e.read, e.write, e.timeout))
    io.write(string.format("requests %d\n", summary.requests))
    io.write(string.format("p50_ms %.2f\n", latency:percentile(50) / 1000))
    io.write(string.format("p99_ms %.2f\n", latency:percentile(99) / 1000))
end
