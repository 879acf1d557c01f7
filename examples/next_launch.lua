-- next_launch.lua: the next rocket launches, as a small table.
--   ./scripts/run examples/next_launch.lua           (offline: the shipped samples)
--   LUNAR_LAUNCHES_LIVE=1 lunar run examples/next_launch.lua   (the live APIs)
local launches = require "lunar.launches"

-- Offline, both sources answer from the samples shipped inside Lunar.
if os.getenv("LUNAR_LAUNCHES_LIVE") ~= "1" then launches.configure { samples = true } end

-- A source may leave any of provider, vehicle, pad, country and date label out: nil means unknown.
local function when(launch)
  if launch.planned_time then return os.date("!%Y-%m-%d %H:%M UTC", math.floor(launch.planned_time)) end
  return (launch.date_label or "date unknown") .. " (estimated)"
end

print(("%-34s %-18s %-14s %s"):format("launch", "provider", "vehicle", "when"))
for _, l in ipairs(launches.upcoming { limit = 8 }) do
  local provider, vehicle = (l.provider or "?"):sub(1, 18), (l.vehicle or "?"):sub(1, 14)
  print(("%-34s %-18s %-14s %s"):format(l.name:sub(1, 34), provider, vehicle, when(l)))
end

local next_launch = launches.next()
if next_launch then
  if next_launch.mission_description then print("\n" .. next_launch.mission_description) end
  local where = next_launch.country and ", " .. next_launch.country or ""
  print("\nnext: " .. next_launch.name .. " — " .. when(next_launch) .. where)
end
