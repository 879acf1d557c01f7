-- Fan-out at run time: one child step per region, known only when the
-- run gets there. A region listed in DOWN fails; a resume reruns only it.
--
--   DOWN=us lunar run --store sqlite:/tmp/fan.db examples/fan_out.lua   # deploy[2] fails
--   lunar runs show --store sqlite:/tmp/fan.db last                     # the children under "deploy"
--   lunar run --store sqlite:/tmp/fan.db --resume examples/fan_out.lua  # only deploy[2] runs
local workflow = require "lunar.workflow"
local step = workflow.step

return workflow "fan-out" {
  step "regions" { run = function() return { "eu", "us", "ap" } end },
  step "deploy" {
    needs = "regions",
    map = function(ctx) return ctx.steps.regions.output end,
    max_parallel = 2,
    retry = { attempts = 2, backoff = 0.05 },
    run = function(ctx, region)
      print(("deploying %s (attempt %d)"):format(region, ctx.attempt))
      lunar.sleep(0.05)
      for down in (os.getenv("DOWN") or ""):gmatch("[^,]+") do
        if down == region then error(region .. " is down", 0) end
      end
      return region .. "-ok"
    end,
  },
  step "announce" { needs = "deploy", run = function(ctx)
    print("deployed: " .. table.concat(ctx.steps.deploy.output, ", "))
  end },
}
