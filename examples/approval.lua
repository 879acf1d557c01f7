-- A release that cools down, then waits for a person's approval:
--
--   lunar run examples/approval.lua        (waits; in another terminal:)
--   lunar runs signal last approve '{"by":"ada"}'
--
-- Under `lunar run --clock virtual` the cool-down is instant, and the wait
-- sees only a signal sent before it starts (it looks again at its timeout).
local workflow = require "lunar.workflow"
local step = workflow.step

return workflow "approval" {
  step "build" { run = function() return { version = "1.2.0" } end },
  workflow.sleep "cool-down" { needs = "build", seconds = 1 },
  workflow.wait "approval" { needs = "cool-down", signal = "approve", timeout = 86400 },
  step "ship" {
    needs = { "build", "approval" },
    run = function(ctx)
      local approval = ctx.steps.approval.output
      print(("shipping %s, approved by %s"):format(ctx.steps.build.output.version, tostring(approval.by)))
    end,
  },
}
