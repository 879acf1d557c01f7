-- launch_report.lua: a workflow. Fetch launches, pick the next one, report.
-- `report.print` comes from the Lua plugin in plugins/report/, loaded when
-- the step first uses it.
--   ./scripts/run examples/launch_report.lua      (offline: the shipped samples)
--   lunar run --dry-run examples/launch_report.lua
--   lunar graph examples/launch_report.lua
--   lunar runs show last                          (the last run: each step's output or error)
--   LUNAR_LAUNCHES_LIVE=1 lunar run examples/launch_report.lua
local workflow = require "lunar.workflow"
local launches = require "lunar.launches"
local step = workflow.step

-- Offline, both sources answer from the samples shipped inside Lunar.
if os.getenv("LUNAR_LAUNCHES_LIVE") ~= "1" then launches.configure { samples = true } end

return workflow "nightly-launch-report" {
  step "fetch_rll" { uses = "launches.upcoming", with = { source = "rocketlaunch.live", limit = 10 } },
  step "fetch_ll2" { uses = "launches.upcoming", with = { source = "launchlibrary2", limit = 10 } },
  step "next" { needs = { "fetch_rll", "fetch_ll2" }, run = function(ctx)
    local soonest
    for _, source in ipairs { "fetch_rll", "fetch_ll2" } do
      for _, l in ipairs(ctx.steps[source].output) do
        if l.planned_time and l.planned_time > ctx.now() and (not soonest or l.planned_time < soonest.planned_time) then
          soonest = l
        end
      end
    end
    return soonest
  end },
  step "notify" { needs = { "next" }, uses = "report.print", retry = { attempts = 3, backoff = 0.5 },
    with = function(ctx)
      local l = ctx.steps.next.output
      local when = os.date("!%Y-%m-%d %H:%M UTC", math.floor(l.planned_time))
      -- The provider may be unknown (nil) in either source's feed.
      return { text = ("next: %s by %s, %s"):format(l.name, l.provider or "an unknown provider", when) }
    end },
}
