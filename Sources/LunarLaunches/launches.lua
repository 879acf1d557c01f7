-- lunar.launches, its part in Lua: `remind` checks its arguments,
-- `upcoming` goes through the journal, and the module is the `launches`
-- service and the `launches.upcoming` action (LaunchesPlugin.swift).
local M = ...
local host = M._host
M._host = nil
function M.remind(launch, minutes, target)
  if type(launch) ~= "table" and type(launch) ~= "string" then
    error(("bad argument #1 to 'remind' (launch table or id expected, got %s)"):format(type(launch)), 2)
  end
  if minutes ~= 5 and minutes ~= 15 and minutes ~= 60 then
    error(("bad argument #2 to 'remind' (5, 15 or 60 minutes expected, got %s)")
      :format(type(minutes) == "number" and tostring(minutes) or type(minutes)), 2)
  end
  if type(target) ~= "function" and type(target) ~= "userdata" then
    error(("bad argument #3 to 'remind' (function or machine expected, got %s)"):format(type(target)), 2)
  end
  local id = M.set_reminder(launch, minutes)
  M.deliver_to(id, target)
  return id
end

-- Launch fetches touch the outside world: record them in the journal
-- (lunar run --record) and answer them from it (--replay).
local actions = require "lunar.actions"
local fetch = M.upcoming
function M.upcoming(options)
  local problem = host.check_upcoming(options)
  if problem then error(("bad argument #1 to 'upcoming' (%s)"):format(problem), 2) end
  local key = { source = type(options) == "table" and options.source or "all",
                limit = type(options) == "table" and options.limit or 10 }
  if actions.replaying() then
    local entry = actions.journal("launches", key)
    if entry.error then error(entry.error, 2) end
    return entry.launches or {}
  end
  local ok, list = pcall(fetch, options)
  if not ok then
    actions.journal("launches", key, { error = list })
    error(list, 0)
  end
  actions.journal("launches", key, { launches = list })
  return list
end

-- A service for actions (ctx.launches) and an action for workflows.
actions.service("launches", M)
lunar.action("launches.upcoming", { uses = { "launches" } }, function(ctx, input)
  return ctx.launches.upcoming(input)
end)
