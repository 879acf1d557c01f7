-- Ordered actor queues (`lunar.queue`), specified from Lua.
local queue = require "lunar.queue"
local trace = require "lunar.trace"

-- The job events of the trace, as "kind seq" lines.
local function job_events(name)
  local lines = {}
  for _, e in ipairs(trace.events("job.")) do
    if name == nil or e.queue == name then
      lines[#lines + 1] = e.kind:sub(5) .. " " .. (name and "" or e.queue) .. e.seq
    end
  end
  return lines
end

describe("lunar.queue", function()
  it("runs jobs that suspend strictly one after another", function()
    local q = queue.new("q")
    local helper = lunar.spawn(function() lunar.sleep(5); return 1 end)
    local function job(name)
      return function()
        lunar.sleep(1)
        local x = helper:await()
        lunar.sleep(2)
        coroutine.wrap(function() lunar.sleep(1) end)()
        return name .. x
      end
    end
    local a, b, c = q:submit(job("A")), q:submit(job("B")), q:submit(job("C"))
    assert.are.same({ "A1", "B1", "C1" }, { c:await() and a:await(), b:await(), c:await() })
    assert.are.same({
      "submitted 1", "started 1", "submitted 2", "submitted 3",
      "finished 1", "started 2", "finished 2", "started 3", "finished 3",
    }, job_events("q"))
  end)

  it("keeps a failure in its handle and runs the next job", function()
    local q = queue.new("calc")
    local a = q:submit(function() return 9 end)
    local b = q:submit(function() lunar.sleep(1); error("bad input") end)
    local c = q:submit(function() return 25 end)
    assert.are.equal(9, a:await())
    local ok, err = b:result()
    assert.is_false(ok)
    assert.matches("^spec/queue_spec.lua:%d+: bad input$", err)
    assert.are.equal(25, c:await())
    assert.has_error(function() b:await() end)
    assert.are.same({ "failed", "done" }, { b:status(), c:status() })
  end)

  it("never runs a job cancelled before it starts, and keeps the order", function()
    local q = queue.new("q")
    local ran = {}
    local a = q:submit(function() lunar.sleep(10); ran[#ran + 1] = "A" end)
    local b = q:submit(function() ran[#ran + 1] = "B" end)
    local c = q:submit(function() ran[#ran + 1] = "C" end)
    assert.is_true(b:cancel())
    assert.are.equal("pending", b:status())  -- reports cancelled in its turn
    c:await()
    assert.are.same({ "A", "C" }, ran)
    assert.are.same({ "done", "cancelled", "done" }, { a:status(), b:status(), c:status() })
    assert.are.same({
      "submitted 1", "started 1", "submitted 2", "submitted 3",
      "finished 1", "cancelled 2", "started 3", "finished 3",
    }, job_events("q"))
  end)

  it("cancels a running job at its next waiting point without starting the next early", function()
    local q = queue.new("q")
    local a = q:submit(function() lunar.sleep(100) end)
    local b = q:submit(function() return "b" end)
    lunar.sleep(1)
    a:cancel()
    assert.are.equal("b", b:await())
    assert.are.equal("cancelled", a:status())
    assert.are.same({ "submitted 1", "started 1", "submitted 2", "cancelled 1", "started 2", "finished 2" },
      job_events("q"))
  end)

  it("stops after a failure with the stop policy", function()
    local q = queue.new { name = "strict", policy = "stop" }
    local a = q:submit(function() error("first fails", 0) end)
    local b = q:submit(function() return "never" end)
    local c = q:submit(function() return "never either" end)
    q:drain()
    assert.are.same({ "failed", "cancelled", "cancelled" }, { a:status(), b:status(), c:status() })
    local ok, err = b:result()
    assert.is_false(ok)
    assert.are.equal(lunar.cancelled, err)
    assert.are.equal("stop", q.policy)
    -- The queue runs jobs submitted after the failure.
    assert.are.equal("later", q:submit(function() return "later" end):await())
  end)

  it("runs two queues concurrently, each in its own order", function()
    local left, right = queue.new("left"), queue.new("right")
    for _ = 1, 3 do
      left:submit(function() lunar.sleep(2) end)
      right:submit(function() lunar.sleep(3) end)
    end
    local start = lunar.now()
    left:drain()
    right:drain()
    assert.are.equal(9, lunar.now() - start)  -- 3 × 3 s, not 6 + 9
    assert.are.same({ "started 1", "finished 1", "started 2", "finished 2", "started 3", "finished 3" },
      (function()
        local lines = {}
        for _, line in ipairs(job_events("left")) do
          if not line:match("^submitted") then lines[#lines + 1] = line end
        end
        return lines
      end)())
  end)

  it("keeps each producer's order with many concurrent producers", function()
    local q = queue.new("shared")
    local seen = {}
    local producers = {}
    for p = 1, 5 do
      producers[p] = lunar.spawn(function()
        for j = 1, 20 do
          q:submit(function() seen[#seen + 1] = { p, j } end)
          if j % 3 == 0 then lunar.sleep(0) end
        end
      end)
    end
    lunar.await_all(producers)
    q:drain()
    assert.are.equal(100, #seen)
    local last = {}
    for _, entry in ipairs(seen) do
      local p, j = entry[1], entry[2]
      assert.is_true((last[p] or 0) < j)
      last[p] = j
    end
  end)

  it("reports its length and running job", function()
    local q = queue.new("q")
    assert.are.equal(0, q:length())
    assert.is_nil(q:running())
    local a = q:submit(function() lunar.sleep(1) end)
    q:submit(function() end)
    assert.are.equal(2, q:length())
    lunar.sleep(0.5)
    assert.are.equal(a, q:running())
    q:drain()
    assert.are.equal(0, q:length())
  end)

  it("rejects bad input in Lua's words", function()
    local q = queue.new("q")
    assert.has_error(function() q:submit(nil) end, "bad argument #1 to 'submit' (function expected, got nil)")
    assert.has_error(function() q:submit(42) end, "bad argument #1 to 'submit' (function expected, got number)")
    assert.has_error(function() queue.new(42) end, "bad argument #1 to 'new' (string or table expected, got number)")
    assert.has_error(function() queue.new({ name = 1 }) end,
      "bad argument #1 to 'new' (field 'name' must be a string, got number)")
    assert.has_error(function() queue.new({ name = "x", policy = "maybe" }) end,
      "bad argument #1 to 'new' (field 'policy' must be 'continue' or 'stop', got 'maybe')")
    assert.has_error(function() q.submit({}, print) end,
      "bad argument #1 to 'submit' (lunar.queue expected, got table)")
  end)
end)
