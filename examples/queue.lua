-- queue.lua: an ordered actor queue.
--   ./scripts/run examples/queue.lua
-- Jobs run strictly one after another in submission order, even when
-- each one waits; a failure stays in its handle and the next job runs.
local queue = require "lunar.queue"

local q = queue.new("calc")
local function square(x) lunar.sleep(0.01); return x * x end

local a = q:submit(function() return square(3) end)
local b = q:submit(function() error("bad input") end)
local c = q:submit(function() return 25 end)
print(a:await(), c:await())
print(b:result())

-- Cancelling a waiting job: it never runs, and reports in its turn.
local slow = q:submit(function() lunar.sleep(0.05) return "slow" end)
local skipped = q:submit(function() return "never" end)
skipped:cancel()
q:drain()
print(slow:await(), skipped:status())

-- With the stop policy, the jobs waiting behind a failure are cancelled.
local strict = queue.new { name = "deploy", policy = "stop" }
local migrate = strict:submit(function() error("migration failed", 0) end)
local deploy = strict:submit(function() return "deployed" end)
strict:drain()
print(migrate:result())
print(deploy:status(), q:length(), strict.policy)
