import LuaKit
import Testing
import TestSupport

@testable import Lunar

/// Sets task deadlines from Lua the way the workflow engine sets them from
/// Swift, and starts Swift work as a task.
private struct DeadlinePlugin: LunarPlugin {
  let name = "deadline"

  func install(in runtime: RuntimeCore) throws {
    var module = LuaModule("deadline")
    let taskClass = runtime.taskClass
    module.function("set") { [unowned runtime] call in
      let task = try call.object(1, of: taskClass)
      runtime.scheduler.setDeadline(task, after: try call.number(2), message: try call.string(3))
      return .none
    }
    module.function("clear") { [unowned runtime] call in
      runtime.scheduler.clearDeadline(try call.object(1, of: taskClass))
      return .none
    }
    // A task whose body is Swift work that takes seconds unless stopped.
    module.function("swiftwork") { [unowned runtime] call in
      let task = runtime.scheduler.makeTask(label: "swift work", origin: "swift")
      runtime.runSwiftWork(task) {
        try await Task.sleep(for: .seconds(5))
        return "finished"
      }
      LuaState(borrowing: call.L).push(task, as: taskClass)
      return .one
    }
    // Swift work that returns at once, queued on the queue `q`.
    module.function("swiftjob") { call in
      let queue = try call.object(1, of: LuaQueue.self, named: "lunar.queue")
      LuaState(borrowing: call.L).push(queue.submit { "ran" }, as: taskClass)
      return .one
    }
    try runtime.install(module)
  }
}

@Suite struct TaskDeadlineTests {
  static let message = #"step "spin": timed out after 0.05s"#

  func runtime(clock: RuntimeClock.Kind = .virtual(start: 1_000_000)) throws -> TestRuntime {
    try TestRuntime(clock: clock) { $0.plugins = [DeadlinePlugin()] }
  }

  /// Runs `body` as a task with a deadline `seconds` away; returns
  /// `t:result()`, the task's status and the virtual seconds that passed.
  func outcome(of body: String, seconds: Double) async throws -> [LuaValue] {
    try await runtime().run("""
      local deadline = require 'deadline'
      local start = lunar.now()
      local t = lunar.spawn(function() \(body) end)
      deadline.set(t, \(seconds), '\(Self.message)')
      local ok, err = t:result()
      return ok, err, t:status(), lunar.now() - start
      """)
  }

  @Test(arguments: [
    "while true do end",
    "local function deep(n) if n == 0 then return 0 end return 1 + deep(n - 1) end while true do deep(150) end",
    "local s = '' while true do s = string.rep('x', 100) .. s:sub(1, 50) end",
    "while true do pcall(function() while true do end end) end",
    "while true do pcall(error, 'not this') end",
    "while true do xpcall(function() while true do end end, function() return 'handled' end) end",
  ])
  func aComputingTaskFailsWithTheMessage(body: String) async throws {
    // Under the virtual clock: computing counts real time.
    let results = try await outcome(of: body, seconds: 0.05)
    #expect(results.prefix(3) == [false, .string(LuaString(Self.message)), "failed"])
  }

  @Test(arguments: [
    "while true do end",
    "while true do pcall(function() while true do end end) end",
    "local spin = coroutine.wrap(function() while true do end end) spin()",
  ])
  func aComputingTaskInALoadedFileFailsWithTheMessageUnderCoverage(body: String) async throws {
    // The line hook counts in the same hook function as the deadline's
    // count hook, on the task's coroutine and on the coroutines it makes.
    let folder = try TemporaryFolder()
    let file = try folder.write("spin.lua", "return function()\n  \(body)\nend\n")
    let coverage = LineCoverage()
    var results: [LuaValue] = []
    do {
      let lua = try TestRuntime { $0.plugins = [DeadlinePlugin()]; $0.coverage = coverage }
      results = try await lua.run("""
        local deadline = require 'deadline'
        local t = lunar.spawn(dofile('\(file)'))
        deadline.set(t, 0.05, '\(Self.message)')
        return t:result()
        """)
    }
    #expect(results == [false, .string(LuaString(Self.message))])
    let spin = try #require(coverage.coveredFiles.first)
    #expect(spin.path == LineCoverage.absolutePath(Array(file.utf8)))
    #expect((spin.hits[2] ?? 0) > 0)
  }

  @Test(arguments: ["spin()", "local ok = pcall(spin); return 'went on after', ok"])
  func aCoroutineTheTaskResumesComputesUnderItsDeadline(body: String) async throws {
    // The coroutine was made outside the task, so it has no hook of its
    // own; the wrapper adds a position to the error it passes on.
    let results = try await runtime().run("""
      local deadline = require 'deadline'
      local spin = coroutine.wrap(function() while true do end end)
      local t = lunar.spawn(function() \(body) end)
      deadline.set(t, 0.05, '\(Self.message)')
      return t:result()
      """)
    #expect(results == [false, .string(LuaString(Self.message))])
  }

  @Test(arguments: [
    "lunar.sleep(3600)",
    "while true do pcall(lunar.sleep, 3600) end",
    // A nested wait: a gsub replacement function cannot yield.
    "string.gsub('x', '.', function(c) lunar.sleep(3600); return c end)",
  ])
  func aWaitingTaskFailsWhenTimeIsUpOnTheVirtualClock(body: String) async throws {
    let results = try await outcome(of: body, seconds: 2)
    #expect(results == [false, .string(LuaString(Self.message)), "failed", .number(2)])
  }

  @Test func aWaitingTasksWaitIsUndone() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local deadline = require 'deadline'
      local t = lunar.spawn(function() lunar.sleep(3600) end)
      deadline.set(t, 0.05, '\(Self.message)')
      lunar.sleep(0.1)
      return t:status()
      """)
    #expect(results == ["failed"])
    // The sleep's timer went with its wait.
    #expect(try await lua.runtime.perform { $0.scheduler.timers.isEmpty })
  }

  @Test func swiftWorkIsStoppedAndItsTaskFails() async throws {
    let results = try await runtime(clock: .real).run("""
      local deadline = require 'deadline'
      local t = require('deadline').swiftwork()
      deadline.set(t, 0.05, '\(Self.message)')
      return t:result()
      """)
    #expect(results == [false, .string(LuaString(Self.message))])
  }

  @Test func aTaskThatFinishesInTimeIsUnaffectedAndLeavesNoTimer() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local deadline = require 'deadline'
      local start = lunar.now()
      local t = lunar.spawn(function() lunar.sleep(1); local n = 0; for i = 1, 1e5 do n = n + i end; return n end)
      deadline.set(t, 3600, 'too late')
      return t:await(), lunar.now() - start
      """)
    #expect(results == [5_000_050_000, .number(1)])
    #expect(try await lua.runtime.perform { $0.scheduler.timers.isEmpty })
  }

  @Test func aClearedDeadlineNeverFires() async throws {
    let lua = try runtime()
    let results = try await lua.run("""
      local deadline = require 'deadline'
      local t = lunar.spawn(function() lunar.sleep(10); return 'done' end)
      deadline.set(t, 0.05, 'cleared')
      deadline.clear(t)
      return t:await()
      """)
    #expect(results == ["done"])
    #expect(try await lua.runtime.perform { $0.scheduler.timers.isEmpty })
  }

  @Test func aNewDeadlineReplacesTheOldOne() async throws {
    let results = try await runtime().run("""
      local deadline = require 'deadline'
      local t = lunar.spawn(function() lunar.sleep(10) end)
      deadline.set(t, 0.05, 'first')
      deadline.set(t, 5, 'second')
      return t:result()
      """)
    #expect(results == [false, "second"])
  }

  @Test func aTaskNotStartedWhenTimeIsUpFailsWhenItStarts() async throws {
    let results = try await runtime().run("""
      local deadline = require 'deadline'
      local queue = require('lunar.queue').new('q')
      local ran = {}
      queue:submit(function() lunar.sleep(1) end)
      local t = queue:submit(function() ran[#ran + 1] = 'second job' end)
      deadline.set(t, 0.05, '\(Self.message)')
      local ok, err = t:result()
      return ok, err, #ran
      """)
    #expect(results == [false, .string(LuaString(Self.message)), 0])
  }

  @Test func swiftWorkNotStartedWhenTimeIsUpNeverRuns() async throws {
    let results = try await runtime().run("""
      local deadline = require 'deadline'
      local queue = require('lunar.queue').new('q')
      queue:submit(function() lunar.sleep(1) end)
      local t = deadline.swiftjob(queue)
      deadline.set(t, 0.05, '\(Self.message)')
      return t:result()
      """)
    #expect(results == [false, .string(LuaString(Self.message))])
  }
}
