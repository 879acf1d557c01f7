-- release_train.lua: a workflow whose steps drive a state machine and an
-- ordered queue.
--   ./scripts/run examples/release_train.lua
--   lunar run --clock virtual --trace-file release.json --trace-format chrome examples/release_train.lua
--     (its timeline: open release.json in ui.perfetto.dev)
local workflow = require "lunar.workflow"
local machine = require "lunar.machine"
local queue = require "lunar.queue"
local step = workflow.step

local deploys = queue.new("deploys")          -- one deploy at a time, in order
local release = machine.new {
  name = "release", initial = "draft",
  states = {
    draft = { on = { approve = "approved" } },
    approved = { on = { ship = { run = function() return "shipping", { { "deploy", "eu" }, { "deploy", "us" } } end,
                                 targets = { "shipping" } } } },
    shipping = { on = { deployed = function(_ctx, msg) if msg.region == "us" then return "live" end end } },
    live = {},
  },
}
machine.interpreter("deploy", function(cmd, send)
  deploys:submit(function() lunar.sleep(0.02); send { "deployed", region = cmd[2] } end):await()
end)

return workflow "release-train" {
  step "build_eu" { queue = "builds", run = function() lunar.sleep(0.01); return "eu-1.2.0" end },
  step "build_us" { queue = "builds", run = function() lunar.sleep(0.01); return "us-1.2.0" end },
  step "approve" { needs = { "build_eu", "build_us" }, run = function()
    release:send("approve")
    release:settle()
    return release.state
  end },
  step "ship" { needs = { "approve" }, timeout = 5, run = function()
    release:send("ship")
    release:settle()
    return release.state
  end },
  step "announce" { needs = { "ship" }, ["if"] = function(ctx) return ctx.steps.ship.output == "live" end,
    run = function(ctx) print("released " .. ctx.steps.build_eu.output .. " and " .. ctx.steps.build_us.output) end },
}
