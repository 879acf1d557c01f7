import LuaKit
import Lunar

/// `lunar.run` of an empty Lua action and of an empty Swift action, against
/// a plain Lua function call in the same run.
enum ActionBenchmark {
  struct Empty: RunnableAction {
    static let name = "empty"
    func execute(in context: RunContext) async throws -> Int { 0 }
  }

  struct Setup: LunarPlugin {
    let name = "action-bench"
    func install(in runtime: RuntimeCore) throws { runtime.actions.register(Empty.self) }
  }

  static func run() throws {
    let runtime = try RuntimeBenchmark.makeRuntime(plugins: [Setup()])
    let n = 100_000
    let lua = try RuntimeBenchmark.timeScript(runtime, iterations: n, rounds: 3, """
      local n = ...
      lunar.action("noop", function() end)
      for i = 1, n do lunar.run("noop") end
      """)
    let swift = try RuntimeBenchmark.timeScript(runtime, iterations: n / 10, rounds: 3, """
      local n = ...
      for i = 1, n do lunar.run("empty") end
      """)
    let plain = try RuntimeBenchmark.timeScript(runtime, iterations: n, rounds: 3, """
      local n = ...
      local function noop() end
      for i = 1, n do noop() end
      """)
    Harness.report("lunar.run of an empty Lua action", subject: lua, baseline: plain, baselineName: "Lua call:", goal: "report")
    Harness.report("lunar.run of an empty Swift action", subject: swift, baseline: plain, baselineName: "Lua call:", goal: "report")
  }
}
