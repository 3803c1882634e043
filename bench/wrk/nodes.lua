-- wrk script for bench/nodes: bench/wrk/bodies.lua's pre-signed bodies (each line sent once,
-- thread k of n taking lines k, k+n, ...), with wrk's threads dealt round-robin over the nodes
-- listed in NODES ("host:port,host:port"): thread 1 connects to the first node, thread 2 to the
-- second, and so on, as a load balancer deals keep-alive connections. One wrk process, so its
-- latency percentiles cover every request to every node.
-- Usage: BODIES_LUA=bench/wrk/bodies.lua BODIES_FILE=b.ndjson WRK_THREADS=2 NODES=127.0.0.1:1,127.0.0.1:2 \
--        wrk -t2 -c10 -d6s -s bench/wrk/nodes.lua http://127.0.0.1:1/path
dofile(os.getenv("BODIES_LUA"))

local bodies_setup = setup
local addrs = nil
local dealt = 0

function setup(thread)
  if addrs == nil then
    addrs = {}
    for hostport in string.gmatch(os.getenv("NODES"), "[^,]+") do
      local host, port = string.match(hostport, "^(.+):(%d+)$")
      table.insert(addrs, wrk.lookup(host, port)[1])
    end
  end
  bodies_setup(thread)
  thread.addr = addrs[(dealt % #addrs) + 1]
  dealt = dealt + 1
end
