local workflow = require "lunar.workflow"
local step = workflow.step

lunar.action("greet", {}, function(_, input)
  return { text = "hello, " .. input.name }
end)

local flaky = 0
return workflow "hello-pipeline" {
  step "names" { run = function() return { "Ada", "Grace" } end },
  step "first" { needs = { "names" }, queue = "greetings", uses = "greet",
                 with = function(ctx) return { name = ctx.steps.names.output[1] } end },
  step "second" { needs = { "names" }, queue = "greetings", uses = "greet",
                  with = function(ctx) return { name = ctx.steps.names.output[2] } end },
  step "report" { needs = { "first", "second" }, retry = { attempts = 3, backoff = 0.1 },
                  run = function(ctx)
                    flaky = flaky + 1
                    if flaky == 1 then error("the printer is warming up") end
                    print(ctx.steps.first.output.text .. "; " .. ctx.steps.second.output.text)
                  end },
}
