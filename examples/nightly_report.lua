-- The workflow examples/nightly_schedule.sh schedules: a report for the day
-- given as its argument (today's, in UTC, if none).
local workflow = require "lunar.workflow"
local step = workflow.step

local day = ... or os.date("!%Y-%m-%d")

return workflow "nightly-report" {
  step "collect" { run = function()
    return { day = day, orders = #day * 3 }
  end },
  step "report" { needs = { "collect" }, run = function(ctx)
    local collected = ctx.steps.collect.output
    print(("report for %s: %d orders"):format(collected.day, collected.orders))
    return collected.orders
  end },
}
