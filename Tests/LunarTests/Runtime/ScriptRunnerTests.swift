import LuaKit
import Testing

@testable import Lunar

/// A third party's plugin that acts on what a main chunk returns: a
/// returned `"refuse"` refuses the run; a returned number is doubled.
private struct DoublingPlugin: LunarPlugin {
  let name = "doubling"

  func install(in runtime: RuntimeCore) throws {
    runtime.scripts.handleResults { (results) throws(LuaError) in
      let state = results.state
      guard state.top == results.base + 1 else { return nil }
      let value = (try? state.value(at: -1)) ?? .nil
      if value == "refuse" { return .usage("\(results.script.name) returned 'refuse'") }
      guard let number = value.integerValue else { return nil }
      state.pop()
      try? state.push(.integer(number * 2))
      return nil
    }
  }
}

@Suite struct ScriptRunnerTests {
  @Test func aResultsHandlerMayReplaceWhatTheChunkReturned() async throws {
    let lua = try TestRuntime { $0.plugins = [DoublingPlugin()] }
    #expect(try await lua.run("return 21") == [42])
    #expect(try await lua.run("return 'kept'") == ["kept"])
  }

  @Test func aResultsHandlerMayRefuseTheRunBeforeItsTasksRun() async throws {
    let lua = try TestRuntime { $0.plugins = [DoublingPlugin()] }
    let failure = await lua.failure("""
      lunar.spawn(function() error('a task of a refused run ran') end)
      return 'refuse'
      """)
    guard case .usage(let message) = failure else {
      Issue.record("expected a usage failure, got \(String(describing: failure))")
      return
    }
    #expect(message == "@test.lua returned 'refuse'")
    #expect(lua.events("task.") == ["task.spawned id=1 label=\"task 1\" at=test.lua:1", "task.cancelled id=1 error=cancelled"])
  }

  @Test func aConsoleEntrysUnobservedFailureIsTakenOnce() async throws {
    let lua = try TestRuntime()
    let entry = try await lua.runtime.perform { core in
      core.scripts.evaluate("lunar.spawn(function() error('lost') end)", name: "=stdin", arguments: [])
    }
    guard case .success = entry else {
      Issue.record("expected the entry to succeed, got \(entry)")
      return
    }
    #expect(await lua.runtime.takeUnobservedFailures().map(\.message) == ["stdin:1: lost"])
    #expect(await lua.runtime.takeUnobservedFailures().isEmpty)
  }
}
