-- The runtime's task API, specified from Lua and run by `lunar test`.
describe("lunar tasks", function()
  it("spawn returns a handle whose await gives the results", function()
    local t = lunar.spawn(function(a, b) return a + b, "sum" end, 2, 3)
    local value, label = t:await()
    assert.are.equal(5, value)
    assert.are.equal("sum", label)
    assert.are.equal("done", t:status())
  end)

  it("sleeps on the virtual clock", function()
    local start = lunar.now()
    lunar.sleep(86400)
    assert.are.equal(86400, lunar.now() - start)
  end)

  it("reports failures through result without raising", function()
    local t = lunar.spawn(function() error("nope", 0) end)
    local ok, err = t:result()
    assert.is_false(ok)
    assert.are.equal("nope", err)
    assert.are.equal("failed", t:status())
  end)

  it("raises failures through await", function()
    local t = lunar.spawn(function() error("nope", 0) end)
    assert.has_error(function() t:await() end)
  end)

  it("cancels a waiting task", function()
    local t = lunar.spawn(function() lunar.sleep(1e6) end)
    lunar.sleep(1)
    assert.is_true(t:cancel())
    local ok, err = t:result()
    assert.is_false(ok)
    assert.are.equal(lunar.cancelled, err)
    assert.are.equal("cancelled", t:status())
  end)

  it("waits for all and for any", function()
    local slow = lunar.spawn(function() lunar.sleep(10) return "slow" end)
    local fast = lunar.spawn(function() lunar.sleep(1) return "fast" end)
    assert.are.same({ 2, "fast" }, { lunar.await_any({ slow, fast }) })
    assert.are.same({ "slow", "fast" }, { lunar.await_all({ slow, fast }) })
  end)

  it("keeps trailing nils in results, as coroutine.resume does", function()
    local function three() return 1, nil, nil end
    local co = coroutine.create(three)
    assert.are.equal(4, select("#", coroutine.resume(co)))
    -- Finished at once and finished while awaited: both keep the count.
    local done = lunar.spawn(three)
    lunar.sleep(0)
    local later = lunar.spawn(function() lunar.sleep(1) return 1, nil, nil end)
    for _, t in ipairs { done, later } do
      assert.are.equal(3, select("#", t:await()))
      assert.are.equal(4, select("#", t:result()))
    end
    local only_nil = lunar.spawn(function() return nil end)
    assert.are.equal(1, select("#", only_nil:await()))
    assert.are.equal(0, select("#", lunar.spawn(function() end):await()))
    local job = require("lunar.queue").new("nils"):submit(function() lunar.sleep(1) return nil, 2, nil end)
    assert.are.equal(3, select("#", job:await()))
  end)

  it("gives await_any the index and every result, nils included", function()
    local t = lunar.spawn(function() lunar.sleep(1) return "a", nil end)
    local slow = lunar.spawn(function() lunar.sleep(10) end)
    assert.are.same({ n = 3, 2, "a" }, table.pack(lunar.await_any { slow, t }))
    -- await_all keeps to the first result of each, a nil for none.
    local none = lunar.spawn(function() end)
    assert.are.same({ n = 3, "a" }, table.pack(lunar.await_all { t, none, slow }))
  end)

  it("lets a coroutine wait inside a task", function()
    local gen = coroutine.wrap(function()
      for i = 1, 3 do lunar.sleep(1); coroutine.yield(i) end
    end)
    assert.are.equal(6, gen() + gen() + gen())
  end)

  it("refuses to close or resume a task's coroutine from Lua", function()
    local co
    local t = lunar.spawn(function() co = coroutine.running(); lunar.sleep(5); return "finished" end)
    lunar.sleep(1)
    assert.error_matches(function() coroutine.close(co) end,
      "^bad argument #1 to 'close' %(the coroutine of task %d+ is run by the scheduler; cancel the task instead%)$")
    assert.error_matches(function() coroutine.resume(co, true, "injected") end,
      "bad argument #1 to 'resume' %(the coroutine of task %d+ is run by the scheduler; await the task instead%)$")
    assert.are.equal("finished", t:await())
    assert.are.same({ false, "cannot resume dead coroutine" }, { coroutine.resume(co) })
  end)

  it("treats a coroutine suspended in a wait as inside its resumer's call", function()
    local inner = coroutine.create(function() lunar.sleep(5); return "inner done" end)
    local gen = coroutine.wrap(function() lunar.sleep(5); return "wrapped done" end)
    local a = lunar.spawn(function() return coroutine.resume(inner) end)
    local b = lunar.spawn(function() return gen() end)
    lunar.sleep(1)
    assert.are.equal("normal", coroutine.status(inner))
    assert.are.same({ false, "cannot resume non-suspended coroutine" }, { coroutine.resume(inner) })
    assert.error_matches(function() coroutine.close(inner) end, "cannot close a normal coroutine$")
    assert.error_matches(function() gen() end, "^cannot resume non%-suspended coroutine$")
    assert.are.same({ true, "inner done" }, { a:await() })
    assert.are.equal("wrapped done", b:await())
    assert.are.equal("dead", coroutine.status(inner))
  end)

  it("lets a sort comparator and a module body wait", function()
    package.preload.waits = function() lunar.sleep(1); return { ready = coroutine.isyieldable() } end
    local xs = { 3, 1, 2 }
    table.sort(xs, function(a, b) lunar.sleep(1); return a < b end)
    assert.are.same({ 1, 2, 3 }, xs)
    -- The body waited, yet isyieldable answers as in stock Lua, where a
    -- module body cannot yield: a user's own yield there fails.
    assert.is_false(require("waits").ready)
    package.loaded.waits, package.preload.waits = nil, nil
  end)

  it("rejects bad arguments in Lua's words", function()
    assert.has_error(function() lunar.spawn(42) end,
      "bad argument #1 to 'spawn' (function expected, got number)")
    assert.error_matches(function() lunar.sleep("soon") end, "number expected, got string")
  end)
end)
