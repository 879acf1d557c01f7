-- A workflow that fails halfway the first time and resumes where it
-- stopped: the expensive step is not run again.
--
--   lunar run --store sqlite:/tmp/resume.db examples/resume.lua          # "publish" fails
--   PUBLISH=1 lunar run --store sqlite:/tmp/resume.db --resume examples/resume.lua
--   lunar runs --store sqlite:/tmp/resume.db                            # both runs, newest first
--   lunar runs show --store sqlite:/tmp/resume.db last --outputs         # steps, outputs, errors
--   lunar runs logs --store sqlite:/tmp/resume.db 1 publish              # what each attempt printed
local workflow = require "lunar.workflow"
local step = workflow.step

return workflow "resume" {
  step "build" { run = function()
    print("building (slow, and run once)")
    lunar.sleep(0.2)
    return { version = "1.4.2", artifacts = { "lunar-linux-x86_64.tar.gz", "lunar.deb" } }
  end },
  step "checksum" { needs = { "build" }, run = function(ctx)
    local sums = {}
    for _, name in ipairs(ctx.steps.build.output.artifacts) do sums[name] = #name * 7919 % 65536 end
    return sums
  end },
  step "publish" { needs = { "build", "checksum" }, retry = { attempts = 2, backoff = 0.1 }, run = function(ctx)
    print("publishing " .. ctx.steps.build.output.version)
    if os.getenv("PUBLISH") ~= "1" then error("the release server is down (set PUBLISH=1)", 0) end
    print("published " .. ctx.steps.build.output.version)
    return true
  end },
}
