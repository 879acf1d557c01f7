-- A bug fixed between a failed run and its resume: the step whose code
-- changed runs again, and so do the steps that need it; the rest is reused.
--
--   lunar run --store sqlite:/tmp/fix.db examples/resume_after_fix.lua   # "convert" fails
--   (fix the line marked BUG: prices.rates.EUR -> prices.rates.eur)
--   lunar run --store sqlite:/tmp/fix.db --resume examples/resume_after_fix.lua
--     [prices] resume: convert: code changed
--     [prices] resume: report: needs convert
--   lunar run --store sqlite:/tmp/fix.db --resume --force fetch examples/resume_after_fix.lua
local workflow = require "lunar.workflow"
local step = workflow.step

return workflow "prices" {
  step "fetch" { run = function()
    print("fetching (slow, and run once)")
    lunar.sleep(0.1)
    return { usd = { 10, 25, 40 }, rates = { eur = 0.5 } }
  end },
  step "count" { needs = { "fetch" }, run = function(ctx) return #ctx.steps.fetch.output.usd end },
  step "convert" { needs = { "fetch" }, run = function(ctx)
    local prices = ctx.steps.fetch.output
    local rate = prices.rates.EUR -- BUG: the rates are keyed in lower case
    local converted = {}
    for i, usd in ipairs(prices.usd) do converted[i] = usd * rate end
    return converted
  end },
  step "report" { needs = { "convert", "count" }, run = function(ctx)
    local line = ("%d prices in EUR: %s"):format(ctx.steps.count.output, table.concat(ctx.steps.convert.output, ", "))
    print(line)
    return line
  end },
}
