import CBenchSupport
import CLua
import Foundation
import LuaKit
import Lunar

/// The runtime's waiting machinery, each figure beside a baseline measured
/// in the same run.
enum RuntimeBenchmark {
  /// A plugin with an async function that completes without suspending.
  struct Immediate: LunarPlugin {
    let name = "bench"
    func install(in runtime: RuntimeCore) throws {
      var module = LuaModule("bench")
      module.asyncFunction("ready") { arguments in arguments.first ?? .nil }
      try runtime.install(module)
    }
  }

  static func run() throws {
    let runtime = try makeRuntime(plugins: [Immediate()])

    // 1. await of a value that is already there.
    let awaitN = 1_000_000
    let awaitDone = try timeScript(runtime, iterations: awaitN, """
      local t = lunar.spawn(function() return 1 end); t:await()
      local n = ...
      for i = 1, n do t:await() end
      """)
    let plainCall = try timeScript(runtime, iterations: awaitN, """
      local function f() return 1 end
      local n = ...
      for i = 1, n do f() end
      """)
    Harness.report("await of a finished task", subject: awaitDone, baseline: plainCall, baselineName: "Lua call:", goal: "≤ 1000 ns")

    // 2. an async host function that completes at once, from a task.
    let asyncN = 300_000
    let asyncCall = try timeScript(runtime, iterations: asyncN, """
      local ready, n = require('bench').ready, ...
      lunar.spawn(function() for i = 1, n do ready(i) end end):await()
      """)
    let resumeYield = try bareResumeYield(iterations: asyncN)
    Harness.report("async host fn, immediate (from a task)", subject: asyncCall, baseline: resumeYield, baselineName: "resume/yield:", goal: "≥ 300k/s")
    print(String(format: "    → %.0f calls per second", 1e9 / asyncCall))

    // 3. 100,000 tasks that each sleep once, on the virtual clock.
    let taskN = 100_000
    let before = try runtime.perform { core in core.state.peakMemory }
    let perTask = try timeScript(runtime, iterations: taskN, rounds: 3, """
      local n = ...
      local tasks = {}
      for i = 1, n do tasks[i] = lunar.spawn(function() lunar.sleep(1) end) end
      lunar.await_all(tasks)
      """)
    let after = try runtime.perform { core in (core.state.peakMemory, core.state.memoryInUse) }
    let spawnOnly = try timeScript(runtime, iterations: taskN, rounds: 3, """
      local n = ...
      for i = 1, n do coroutine.wrap(function() end)() end
      """)
    Harness.report("100k tasks sleeping once (virtual clock)", subject: perTask, baseline: spawnOnly, baselineName: "bare coroutine:", goal: "report")
    print(String(format: "    → %.0f tasks per second; peak Lua memory %.0f bytes per task", 1e9 / perTask,
      Double(max(after.0 - before, 0)) / Double(taskN)))
  }

  /// A runtime on the virtual clock (sleeps cost nothing) with `plugins`.
  static func makeRuntime(plugins: [any LunarPlugin] = []) throws -> Runtime {
    var configuration = RuntimeConfiguration()
    configuration.clock = .virtual(start: 0)
    configuration.plugins = plugins
    return try Runtime(configuration)
  }

  /// Nanoseconds per iteration of `source`, which receives the count as `...`.
  static func timeScript(_ runtime: Runtime, iterations: Int, rounds: Int = 5, _ source: String) throws -> Double {
    try Harness.nanoseconds(iterations: iterations, rounds: rounds, script(runtime, source))
  }

  /// Runs `source` on `runtime` with the iteration count as its argument.
  static func script(_ runtime: Runtime, _ source: String) -> (Int) throws -> Void {
    { n in
      let script = Script(source: .text(source, chunkName: "=bench"), arguments: [String(n)])
      if case .failure(let failure) = runtime.runBlocking(script) { throw BenchmarkFailure(description: "\(failure)") }
    }
  }

  /// A coroutine that yields in a loop, resumed from C: the floor for any
  /// host yield.
  static func bareResumeYield(iterations: Int) throws -> Double {
    let state = try LuaState()
    let co = lua_newthread(state.L)!
    try state.load("while true do coroutine.yield() end", name: "=yielder")
    lua_xmove(state.L, co, 1)
    return Harness.nanoseconds(iterations: iterations) { n in bench_resume_loop(state.L, co, n) }
  }

}

struct BenchmarkFailure: Error, CustomStringConvertible {
  let description: String
}

extension Runtime {
  /// `perform` for synchronous benchmark code.
  func perform<T: Sendable>(_ body: @escaping @Sendable (RuntimeCore) throws -> T) throws -> T {
    let answer = BlockingHandoff<Result<T, any Error>>()
    Task {
      do { answer.put(.success(try await self.perform(body))) } catch { answer.put(.failure(error)) }
    }
    return try answer.take().get()
  }
}
