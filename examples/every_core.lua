-- Four CPU-bound steps: run them in two worker processes, one per core.
--
--   lunar run --no-store examples/every_core.lua                 # one core: the four one after another
--   lunar run --no-store --processes 2 examples/every_core.lua   # two at a time, about half the time
local workflow = require "lunar.workflow"
local step = workflow.step

-- Counts the primes below `limit` the slow way: pure computing.
local function primes_below(limit)
  local count = 0
  for n = 2, limit - 1 do
    local prime = true
    for d = 2, math.floor(math.sqrt(n)) do
      if n % d == 0 then prime = false break end
    end
    if prime then count = count + 1 end
  end
  return count
end

local limit = tonumber(arg[1]) or 300000
local steps, names = {}, {}
for i = 1, 4 do
  names[i] = "count" .. i
  steps[i] = step(names[i]) { run = function() return primes_below(limit + i) end }
end
steps[5] = step "total" { needs = names, run = function(ctx)
  local counts = {}
  for i, name in ipairs(names) do counts[i] = ctx.steps[name].output end
  print("primes: " .. table.concat(counts, ", "))
end }
return workflow "every-core" (steps)
