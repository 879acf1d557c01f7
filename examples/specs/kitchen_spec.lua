-- kitchen_spec.lua: a busted-style suite that waits on tasks.
--   lunar test examples/specs
-- Time is virtual under `lunar test`: the hour-long roast takes no time.

local function roast(minutes)
  lunar.sleep(minutes * 60)
  return "roasted for " .. minutes .. " min"
end

describe("the kitchen", function()
  local oven

  before_each(function()
    oven = { preheated = true }
  end)

  it("roasts for an hour in no time #slow", function()
    local started = lunar.now()
    assert.are.equal("roasted for 60 min", roast(60))
    assert.are.equal(3600, lunar.now() - started)
  end)

  it("cooks two dishes at once", function()
    local a = lunar.spawn(roast, 30)
    local b = lunar.spawn(roast, 45)
    local started = lunar.now()
    assert.are.same({ "roasted for 30 min", "roasted for 45 min" }, { lunar.await_all({ a, b }) })
    assert.are.equal(45 * 60, lunar.now() - started)
  end)

  it("spies on the timer", function()
    local ding = spy.new(function() end)
    lunar.spawn(function() lunar.sleep(5); ding("ready") end):await()
    assert.spy(ding).was.called_with("ready")
    assert.is_true(oven.preheated)
  end)

  it("records what happened in the trace", function()
    local trace = require "lunar.trace"
    lunar.spawn(roast, 1):await()
    local fired = trace.events("timer.fired")
    assert.are.equal(1, #fired)
    assert.are.equal(60, fired[1].after)
  end)
end)
