-- `lunar.trace`: a script reads its own run's events.
local trace = require "lunar.trace"

describe("lunar.trace", function()
  it("records task events in order, cleared before each test", function()
    lunar.spawn(function() lunar.sleep(2) end):await()
    local kinds = {}
    for _, event in ipairs(trace.events("task.")) do kinds[#kinds + 1] = event.kind end
    assert.are.same({ "task.spawned", "task.started", "task.waiting", "task.resumed", "task.done" }, kinds)
  end)

  it("summarises events as one line each", function()
    lunar.spawn(function() error("x", 0) end):result()
    local lines = trace.summaries("task.")
    assert.are.equal("task.failed id=" .. trace.events("task.failed")[1].id .. " error=x", lines[#lines])
  end)

  it("gives events their time on the runtime clock", function()
    local before = trace.events()
    lunar.spawn(function() lunar.sleep(5) end):await()
    local fired = trace.events("timer.fired")[1]
    assert.is_true(fired.time >= 5)
    assert.are.equal(#before + 7, #trace.events())
  end)
end)
