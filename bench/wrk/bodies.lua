-- wrk script: POSTs pre-signed bodies, one JSON body per line of BODIES_FILE, each sent once.
-- Thread k of n takes lines k, k+n, k+2n, ... so no two threads send the same body. A thread that
-- runs out starts over and counts it: a replayed body is a duplicate, so the bench reports wraps.
-- Usage: BODIES_FILE=bodies.ndjson WRK_THREADS=2 wrk -t2 -c10 -d8s -s bench/wrk/bodies.lua URL
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  bodies = {}
  local i = 0
  -- setup() has not yet seen every thread when the first one starts, so the count comes from outside.
  local total = tonumber(os.getenv("WRK_THREADS") or "1")
  for line in io.lines(os.getenv("BODIES_FILE")) do
    if i % total == id then bodies[#bodies + 1] = line end
    i = i + 1
  end
  next_body = 1
  wraps = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local body = bodies[next_body]
  next_body = next_body + 1
  if next_body > #bodies then
    next_body = 1
    wraps = wraps + 1
  end
  return wrk.format(nil, nil, nil, body)
end

function done(summary, latency, requests)
  local wrapped = 0
  for _, t in ipairs(threads) do wrapped = wrapped + (tonumber(t:get("wraps")) or 0) end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"non2xx":%d,"socket_errors":%d,"p50_us":%d,"p99_us":%d,"wraps":%d}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), wrapped))
end
