describe("async specs", function()
  it("sleeps an hour in virtual time", function()
    local start = lunar.now()
    lunar.sleep(3600)
    assert.are.equal(3600, lunar.now() - start)
  end)

  it("awaits tasks", function()
    local t = lunar.spawn(function() lunar.sleep(1); return 42 end)
    assert.are.equal(42, t:await())
  end)

  it("asserts on the trace", function()
    local trace = require "lunar.trace"
    lunar.spawn(function() end):await()
    assert.are.same({ "task.spawned", "task.started", "task.done" }, (function()
      local kinds = {}
      for _, e in ipairs(trace.events("task.")) do kinds[#kinds + 1] = e.kind end
      return kinds
    end)())
  end)
end)
