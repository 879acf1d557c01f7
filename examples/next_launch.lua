-- next_launch.lua: the next rocket launches, as a small table.
--   ./scripts/run examples/next_launch.lua           (offline: the shipped samples)
--   LUNAR_LAUNCHES_LIVE=1 lunar run examples/next_launch.lua   (the live APIs)
local launches = require "lunar.launches"

-- Offline, both sources answer from the samples shipped inside Lunar.
if os.getenv("LUNAR_LAUNCHES_LIVE") ~= "1" then launches.configure { samples = true } end

local function when(launch)
  if launch.planned_time then return os.date("!%Y-%m-%d %H:%M UTC", math.floor(launch.planned_time)) end
  return launch.date_label .. " (estimated)"
end

print(("%-34s %-18s %-14s %s"):format("launch", "provider", "vehicle", "when"))
for _, l in ipairs(launches.upcoming { limit = 8 }) do
  print(("%-34s %-18s %-14s %s"):format(l.name:sub(1, 34), l.provider:sub(1, 18), l.vehicle:sub(1, 14), when(l)))
end

local next_launch = launches.next()
if next_launch then print("\nnext: " .. next_launch.name .. " — " .. when(next_launch)) end
