import LuaKit
import Testing

@testable import Lunar

@Suite struct SchedulerTests {
  @Test func spawnedTaskResultIsAwaited() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local t = lunar.spawn(function(n) lunar.sleep(0.05); return n * 2, 'extra' end, 21)
      return t:await()
      """)
    #expect(results == [42, "extra"])
  }

  /// A single boolean or number result is kept in Swift, not in the
  /// registry: it comes back as it was, integer or float, to every reader.
  @Test func aSingleScalarResultKeepsItsTypeForEveryReader() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local shown = {}
      for _, value in ipairs { 3, 3.0, -0.0, 2^63, math.mininteger, true, false } do
        local t = lunar.spawn(function() return value end)
        local first, again = t:await(), t:await()
        assert(rawequal(first, again) or first ~= first)
        shown[#shown + 1] = math.type(first) or tostring(first)
        shown[#shown + 1] = tostring(first)
      end
      return table.concat(shown, " ")
      """)
    #expect(results == ["integer 3 float 3.0 float -0.0 float 9.2233720368548e+18 integer -9223372036854775808 true true false false"])
  }

  @Test func sleepsWakeInDeadlineOrderUnderTheVirtualClock() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local order = {}
      local start = lunar.now()
      for _, d in ipairs {3, 1, 2, 1} do
        lunar.spawn(function() lunar.sleep(d * 3600); order[#order + 1] = d .. '@' .. (lunar.now() - start) end)
      end
      lunar.sleep(4 * 3600)
      return table.concat(order, ' ')
      """)
    #expect(results == ["1@3600.0 1@3600.0 2@7200.0 3@10800.0"])
  }

  @Test func mainChunkRunsOnTheMainThreadAndTasksOnCoroutines() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local _, main = coroutine.running()
      local inTask = lunar.spawn(function() local _, m = coroutine.running(); return m, coroutine.isyieldable() end)
      return main, coroutine.isyieldable(), inTask:await()
      """)
    #expect(results == [true, false, false, true])
  }

  @Test func aStepsCoroutineThatLuaCodeSawIsNeverGivenToAnotherStep() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local workflow = require "lunar.workflow"
      local seen, steps = {}, {}
      for i = 1, 6 do
        -- Odd steps never see their coroutine: theirs may run the next step.
        steps[i] = workflow.step("s" .. i) { run = function()
          if i % 2 == 0 then seen[#seen + 1] = coroutine.running() end
          local function deep(n) if n > 0 then return deep(n - 1) + 1 end return 0 end
          return deep(200)
        end }
      end
      local outcome = workflow.execute(workflow "w" (steps), { jobs = 1, quiet = true })
      local distinct = {}
      for _, co in ipairs(seen) do distinct[co] = coroutine.status(co) end
      local statuses = {}
      for _, status in pairs(distinct) do statuses[#statuses + 1] = status end
      return outcome.ok, #statuses, table.concat(statuses, " "), outcome.results.s5.output
      """)
    #expect(results == [true, 3, "dead dead dead", 200])
  }

  @Test func aStepsOwnHookDoesNotFollowItsCoroutineToTheNextStep() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local workflow = require "lunar.workflow"
      -- The thread that runs the workflow is hooked: the steps' coroutines copy the hook.
      debug.sethook(function() end, "l")
      local current, foreign = "a", 0
      local steps = { workflow.step "a" { run = function()
        debug.sethook(function() if current ~= "a" then foreign = foreign + 1 end end, "l")
      end } }
      for i = 1, 3 do
        steps[#steps + 1] = workflow.step("b" .. i) { needs = "a", run = function()
          current = "b"
          local x = 1
          x = x + 1
          return x
        end }
      end
      local outcome = workflow.execute(workflow "w" (steps), { jobs = 1, quiet = true })
      debug.sethook()
      return outcome.ok, foreign
      """)
    #expect(results == [true, 0])
  }

  @Test func waitingInsideCoroutineWrapInsideATask() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local t = lunar.spawn(function()
        local gen = coroutine.wrap(function()
          for i = 1, 3 do lunar.sleep(1); coroutine.yield(i * 10) end
        end)
        return gen() + gen() + gen()
      end)
      return t:await(), lunar.now() - 1000000
      """)
    #expect(results == [60, .number(3)])
  }

  @Test func waitingInsideCoroutineResumeFromTheMainChunk() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local co = coroutine.create(function(x) lunar.sleep(1); local y = coroutine.yield(x + 1); lunar.sleep(1); return y * 2 end)
      local ok1, a = coroutine.resume(co, 1)
      local ok2, b = coroutine.resume(co, 5)
      return ok1, a, ok2, b, coroutine.status(co)
      """)
    #expect(results == [true, 2, true, 10, "dead"])
  }

  @Test func waitingInsideARequiredModule() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      package.preload.slow = function()
        lunar.sleep(5)
        return { value = lunar.spawn(function() return 'loaded' end):await() }
      end
      return require('slow').value, lunar.now() - 1000000
      """)
    #expect(results == ["loaded", .number(5)])
  }

  @Test func waitingInsideAMetamethodAndASortComparator() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local t = setmetatable({}, { __index = function(_, k) lunar.sleep(1); return k .. '!' end })
      local list = {3, 1, 2}
      table.sort(list, function(a, b) lunar.sleep(0); return a < b end)
      return t.x, table.concat(list, ',')
      """)
    #expect(results == ["x!", "1,2,3"])
  }

  @Test func pcallAroundAnAwaitThatFails() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local t = lunar.spawn(function() lunar.sleep(1); error('bad input') end)
      local ok, err = pcall(function() return t:await() end)
      local ok2, err2 = t:result()
      return ok, err:match('^test.lua:1: bad input'), ok2, err2, t:status()
      """)
    #expect(results == [false, "test.lua:1: bad input", false, "test.lua:1: bad input", "failed"])
  }

  @Test func awaitRaisesWithTheTaskTraceback() async throws {
    let lua = try TestRuntime()
    let failure = await lua.failure("""
      local function inner() error('deep failure') end
      local t = lunar.spawn(function() lunar.sleep(1); inner() end)
      t:await()
      """)
    let message = try #require(failure?.luaMessage)
    #expect(message.hasPrefix("test.lua:1: deep failure\ntask 1 traceback:"))
    #expect(message.contains("test.lua:1: in upvalue 'inner'"))
  }

  @Test func cancelBeforeStartNeverRuns() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      ran = false
      local t = lunar.spawn(function() ran = true end)
      local cancelled = t:cancel()
      lunar.sleep(1)
      local ok, err = t:result()
      return cancelled, ran, t:status(), ok, tostring(err), err == lunar.cancelled
      """)
    #expect(results == [true, false, "cancelled", false, "cancelled", true])
  }

  @Test func cancelWhileWaitingRaisesAtTheWaitingPoint() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local log = {}
      local t = lunar.spawn(function()
        local ok, err = pcall(lunar.sleep, 3600)
        log[#log + 1] = tostring(err)
        error(err)
      end)
      lunar.sleep(1)
      t:cancel()
      local ok, err = t:result()
      return log[1], t:status(), ok, lunar.now() - 1000000
      """)
    #expect(results == ["cancelled", "cancelled", false, .number(1)])
  }

  @Test func cancellingAFinishedTaskReturnsFalse() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local t = lunar.spawn(function() return 1 end)
      t:await()
      return t:cancel(), t:status()
      """)
    #expect(results == [false, "done"])
  }

  @Test func awaitAllAndAwaitAny() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local a = lunar.spawn(function() lunar.sleep(2); return 'a' end)
      local b = lunar.spawn(function() lunar.sleep(1); return 'b' end)
      local x, y = lunar.await_all({a, b})
      local c = lunar.spawn(function() lunar.sleep(5); return 'slow' end)
      local d = lunar.spawn(function() lunar.sleep(1); return 'fast' end)
      local index, value = lunar.await_any({c, d})
      c:cancel()
      return x, y, index, value
      """)
    #expect(results == ["a", "b", 2, "fast"])
  }

  @Test func awaitAllFailsFast() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local a = lunar.spawn(function() lunar.sleep(100); return 'a' end)
      local b = lunar.spawn(function() lunar.sleep(1); error('b broke', 0) end)
      local ok, err = pcall(lunar.await_all, {a, b})
      local elapsed = lunar.now() - 1000000
      a:cancel()
      return ok, err:match('^[^\\n]*'), elapsed
      """)
    #expect(results == [false, "b broke", .number(1)])
  }

  @Test func badArgumentsAreLuaErrors() async throws {
    let lua = try TestRuntime()
    let cases: [(String, String)] = [
      ("lunar.spawn(nil)", "test.lua:1: bad argument #1 to 'spawn' (function expected, got nil)"),
      ("lunar.spawn(42)", "test.lua:1: bad argument #1 to 'spawn' (function expected, got number)"),
      ("lunar.sleep('soon')", "test.lua:1: bad argument #1 to 'sleep' (number expected, got string)"),
      ("lunar.sleep(-1)", "test.lua:1: bad argument #1 to 'sleep' (non-negative number expected, got -1)"),
      ("lunar.await_all(1)", "test.lua:1: bad argument #1 to 'await_all' (table expected, got number)"),
      ("lunar.await_all({1})", "test.lua:1: bad argument #1 to 'await_all' (task expected at index 1, got number)"),
      ("lunar.await_any({})", "test.lua:1: bad argument #1 to 'await_any' (at least one task expected)"),
      ("local t = lunar.spawn(print); t.await({})", "test.lua:1: bad argument #1 to 'await' (lunar.task expected, got table)"),
    ]
    for (source, expected) in cases {
      let failure = await lua.failure(source)
      #expect(failure?.luaMessage == expected, "\(source)")
    }
  }

  @Test func aTaskCannotAwaitItself() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local t
      t = lunar.spawn(function() lunar.sleep(0); return pcall(t.await, t) end)
      return t:await()
      """)
    #expect(results == [false, "task 1 cannot await itself"])
  }

  @Test func deadlockIsReportedNotHung() async throws {
    let lua = try TestRuntime()
    let failure = await lua.failure("""
      local a, b
      a = lunar.spawn(function() lunar.sleep(0); return b:await() end)
      b = lunar.spawn(function() lunar.sleep(0); return a:await() end)
      a:await()
      """)
    let message = try #require(failure?.luaMessage)
    #expect(message.hasPrefix("deadlock: every task is waiting and nothing can wake them"))
    #expect(message.contains("main chunk waits for task 1 at test.lua:4\n"))
    #expect(message.contains("task 1 waits for task 2 at test.lua:2\n"))
    #expect(message.contains("task 2 waits for task 1 at test.lua:3\n"))
  }

  @Test func deadlockAfterTheMainChunkEnds() async throws {
    let lua = try TestRuntime()
    let failure = await lua.failure("""
      local a, b
      a = lunar.spawn(function() lunar.sleep(0); return b:await() end)
      b = lunar.spawn(function() lunar.sleep(0); return a:await() end)
      """)
    guard case .deadlock(let report) = failure else {
      Issue.record("expected a deadlock, got \(String(describing: failure))")
      return
    }
    #expect(report.contains("task 1 waits for task 2"))
  }

  @Test func unobservedErrorsAreReportedAtTheEnd() async throws {
    let lua = try TestRuntime()
    let failure = await lua.failure("""
      lunar.spawn(function() error('nobody looked') end)
      local seen = lunar.spawn(function() error('observed') end)
      seen:result()
      """)
    guard case .unobservedErrors(let errors) = failure else {
      Issue.record("expected unobserved errors, got \(String(describing: failure))")
      return
    }
    #expect(errors.count == 1)
    #expect(errors.first?.message == "test.lua:1: nobody looked")
    #expect(errors.first?.origin == "test.lua:1")
  }

  @Test func theRunWaitsForBackgroundTasks() async throws {
    let lua = try TestRuntime()
    _ = try await lua.run("lunar.spawn(function() lunar.sleep(10); finished = true end)")
    let results = try await lua.run("return finished")
    #expect(results == [true])
  }

  @Test func userYieldsInsideATaskGiveOthersATurn() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local log = {}
      local a = lunar.spawn(function() for i = 1, 3 do log[#log + 1] = 'a' .. i; coroutine.yield() end end)
      local b = lunar.spawn(function() for i = 1, 3 do log[#log + 1] = 'b' .. i; coroutine.yield() end end)
      lunar.await_all({a, b})
      return table.concat(log, ' ')
      """)
    #expect(results == ["a1 b1 a2 b2 a3 b3"])
  }

  @Test func tracesRecordTheTaskLifecycle() async throws {
    let lua = try TestRuntime()
    _ = try await lua.run("""
      local t = lunar.spawn(function() lunar.sleep(2) end)
      t:await()
      local f = lunar.spawn(function() error('x', 0) end)
      f:result()
      """)
    #expect(lua.events("task.") == [
      "task.spawned id=1 label=\"task 1\" at=test.lua:1",
      "task.started id=1",
      "task.waiting id=1 on=\"sleep 2s\"",
      "task.resumed id=1",
      "task.done id=1",
      "task.spawned id=2 label=\"task 2\" at=test.lua:3",
      "task.started id=2",
      "task.failed id=2 error=x",
    ])
    #expect(lua.events("timer.") == ["timer.set after=2.0", "timer.fired after=2.0"])
    let fired = try #require(lua.recorder.events.first { $0.kind == "timer.fired" })
    #expect(fired.time == 2)
  }

  @Test func tasksCanReturnValuesThatCannotCrossIntoSwift() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local t = lunar.spawn(function() return function() return 'a function' end end)
      return t:await()()
      """)
    #expect(results == ["a function"])
  }

  @Test func aSleepPastTheClocksHorizonIsADeadlockNotAJumpInVirtualTime() async throws {
    for seconds in ["1e16", "1e300", "math.maxinteger", "math.huge"] {
      let lua = try TestRuntime()
      let failure = await lua.failure("lunar.sleep(\(seconds))")
      let message = try #require(failure?.luaMessage, "lunar.sleep(\(seconds))")
      #expect(message.hasPrefix("deadlock: every task is waiting and nothing can wake them"))
      #expect(message.contains("main chunk waits for sleep "))
    }
  }

  @Test func aSleepThatNeverEndsWaitsUntilCancelled() async throws {
    let lua = try TestRuntime(clock: .real)
    let results = try await lua.run("""
      local forever = lunar.spawn(function() lunar.sleep(math.huge) end)
      local long = lunar.spawn(function() lunar.sleep(1e300) end)
      lunar.sleep(0.01)
      forever:cancel()
      long:cancel()
      forever:result()
      long:result()
      return forever:status(), long:status()
      """)
    #expect(results == ["cancelled", "cancelled"])
  }

  @Test func sleepRefusesNaN() async throws {
    let lua = try TestRuntime()
    let nan = await lua.failure("lunar.sleep(0/0)")
    #expect(nan?.luaMessage?.hasPrefix("test.lua:1: bad argument #1 to 'sleep' (non-negative number expected, got ") == true)
  }

  @Test func closingATasksCoroutineIsRefusedAtTheCallersLineAndTheRunGoesOn() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local co
      local t = lunar.spawn(function() co = coroutine.running(); lunar.sleep(5); return 'finished' end)
      lunar.sleep(1)
      local closed, closeError = pcall(function() coroutine.close(co) end)
      local resumed, resumeError = pcall(function() coroutine.resume(co) end)
      return closeError, resumeError, t:await()
      """)
    #expect(results == [
      "test.lua:4: bad argument #1 to 'close' (the coroutine of task 1 is run by the scheduler; cancel the task instead)",
      "test.lua:5: bad argument #1 to 'resume' (the coroutine of task 1 is run by the scheduler; await the task instead)",
      "finished",
    ])
  }

  @Test func aModuleBodyRequiredByATaskYieldsInsteadOfHoldingTheMainChunk() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local order = {}
      package.preload.slow = function(name, data)
        for i = 1, 5 do lunar.sleep(1) end
        order[#order + 1] = 'module loaded'
        return { yieldable = coroutine.isyieldable(), name = name, data = data }
      end
      local t = lunar.spawn(function() return require('slow') end)
      lunar.sleep(1)
      order[#order + 1] = 'main woke'
      local m = t:await()
      return table.concat(order, ', '), m.yieldable, m.name, m.data, select('#', require('slow'))
      """)
    // The body yielded its task, yet isyieldable answers as in stock Lua,
    // where a module body cannot yield.
    #expect(results == ["main woke, module loaded", false, "slow", ":preload:", 1])
  }

  @Test func aNestedDeadlockNamesTheWaitAndTheFramesBeneathIt() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local gate = lunar.spawn(function() lunar.sleep(math.huge) end)
      local replacer = lunar.spawn(function()
        return pcall(string.gsub, 'a', '.', function(c) return gate:await() end)
      end)
      lunar.sleep(10)
      gate:cancel()
      return replacer:await()
      """)
    #expect(results == [
      false,
      """
      deadlock: a nested wait cannot end, and the waits beneath it cannot continue until it does
        task 2 waits for task 1 at test.lua:3, nested inside function 'string.gsub', which cannot yield
        beneath it, main chunk waits for sleep 10s at test.lua:5
        task 1 waits for sleep forever at test.lua:1
          stack traceback:
          \t[C]: in function 'lunar.sleep'
          \ttest.lua:1: in function <test.lua:1>
      """,
    ])
  }

  @Test func aSortComparatorInATaskYieldsAndCanBeCancelled() async throws {
    let lua = try TestRuntime()
    let results = try await lua.run("""
      local seen
      local sorter = lunar.spawn(function()
        local xs = { 5, 2, 8, 1, 9, 3 }
        table.sort(xs, function(a, b) seen = coroutine.isyieldable(); lunar.sleep(1) return a > b end)
        return table.concat(xs, ',')
      end)
      local stuck = lunar.spawn(function()
        table.sort({ 3, 2, 1 }, function() lunar.sleep(math.huge) end)
      end)
      lunar.sleep(1)
      stuck:cancel()
      local ok, err = stuck:result()
      return sorter:await(), seen, ok, err == lunar.cancelled
      """)
    // The comparator's waits yield the task; isyieldable answers as stock.
    #expect(results == ["9,8,5,3,2,1", false, false, true])
  }
}
