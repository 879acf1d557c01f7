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

  @Test func lunarTestReportsAFileWhoseCleanUpNeverEndsAndGoesOn() async throws {
    // Three files on one job: the runtime of the first is restored for the
    // next, which runs the finalizer its test left. After the grace the
    // runtime is left to it, a new one runs the rest, and the report says so.
    let folder = try TemporaryFolder()
    try folder.write("spec/a_spec.lua", """
      it("leaves a finalizer that loops", function()
        setmetatable({}, { __gc = function() while true do end end })
      end)
      """)
    for name in ["b", "c"] {
      try folder.write("spec/\(name)_spec.lua", "it('passes', function() assert.is_true(true) end)\n")
    }
    let outcome = try await LunarProcess.run(["test", "--jobs", "1", "spec"], in: folder.url, timeout: 60)
    #expect(outcome.status == 1, "\(outcome.stdout)\(outcome.stderr)")
    #expect(outcome.stdout.contains("spec/a_spec.lua (clean-up)"))
    #expect(outcome.stdout.contains("the clean-up after this file did not finish in 5 s"))
    #expect(outcome.stdout.hasSuffix("3 passed, 0 failed, 1 errors, 0 pending\n"), "\(outcome.stdout)")
  }
}
