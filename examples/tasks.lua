-- tasks.lua: concurrent tasks on Lunar's scheduler.
--   ./scripts/run examples/tasks.lua
-- Tasks are coroutines run by the runtime; waiting calls (sleep, await)
-- suspend only the task that makes them.

local function brew(name, minutes)
  lunar.sleep(minutes / 100)          -- a hundredth of a second per "minute"
  return name .. " ready after " .. minutes .. " min"
end

local started = lunar.now()
local tea = lunar.spawn(brew, "tea", 3)
local coffee = lunar.spawn(brew, "coffee", 5)
local rice = lunar.spawn(brew, "rice", 12)

-- Wait for the first two together, then for whichever finishes first of
-- the rest.
print(lunar.await_all({ tea, coffee }))
local index, value = lunar.await_any({ rice })
print(index, value)

-- A task that fails keeps its error until someone looks.
local burnt = lunar.spawn(function() error("toast burnt") end)
local ok, err = burnt:result()
print(ok, err)

-- Cancelling a waiting task raises lunar.cancelled at its waiting point.
local slow = lunar.spawn(brew, "stew", 600)
slow:cancel()
print(slow:status(), select(2, slow:result()) == lunar.cancelled)

print(("all done in %.2f s"):format(lunar.now() - started))
