import Foundation
import Testing
import TestSupport

/// A finalizer that never returns while the state closes. Lua runs
/// finalizers with hooks off, so no interrupt can stop one: `lunar run`,
/// which owns its process, ends it instead of hanging.
@Suite struct ClosingFinalizerTests {
  static let script = """
    setmetatable({}, { __gc = function() while true do end end })
    io.stdout:write("closing\\n")
    io.stdout:flush()
    """

  @Test func theTimeoutEndsAFinalizerThatLoopsWhileClosing() async throws {
    let outcome = try await LunarProcess.run(["run", "--timeout", "0.5", "-"], input: Self.script, timeout: 20)
    #expect(outcome.status == 1)
    #expect(outcome.stdout == "closing\n")
    #expect(outcome.stderr == "lunar: timeout: the script ran longer than 0.5 seconds (stopped inside a finalizer while the state closed)\n")
  }

  @Test func aTimeoutThatStoppedTheScriptStillEndsALoopingFinalizer() async throws {
    let script = Self.script + "\nwhile true do end\n"
    let outcome = try await LunarProcess.run(["run", "--timeout", "0.3", "-"], input: script, timeout: 20)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("(stopped inside a finalizer while the state closed)"), "\(outcome.stderr)")
  }

  @Test func ctrlCEndsAFinalizerThatLoopsWhileClosing() async throws {
    let running = try LunarProcess.start(["run", "-"], input: Self.script)
    try await running.waitForOutput("closing\n")
    // Until it exits: a Ctrl-C that lands before the close only ends the run.
    for _ in 0..<200 where running.process.isRunning {
      running.send(SIGINT)
      try await Task.sleep(for: .milliseconds(50))
    }
    let outcome = try await running.wait()
    #expect(outcome.status == 130)
    #expect(outcome.stderr.hasSuffix("lunar: interrupted while closing the state (a finalizer was still running)\n"), "\(outcome.stderr)")
  }
}
