import Foundation
import Testing
import TestSupport

/// `require "lunar.trace"` in a script under `lunar run`, as in a spec.
@Suite struct TraceCommandTests {
  /// Work done before and after the trace module is required; prints how
  /// many tasks each part saw finish.
  static let script = """
    lunar.spawn(function() lunar.sleep(1) end):await()
    local trace = require "lunar.trace"
    local before = #trace.events("task.done")
    lunar.spawn(function() lunar.sleep(1) end):await()
    print(before, #trace.events("task.done"), trace.summaries("task.done")[1])
    """

  @Test func aScriptReadsItsEventsFromTheFirstRequireOn() async throws {
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", "-"], input: Self.script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "0\t1\ttask.done id=2\n")
  }

  @Test func underTraceTheEventsStartWithTheRun() async throws {
    let folder = try TemporaryFolder()
    let traced = try await LunarProcess.run(["run", "--clock", "virtual", "--trace", "-"], input: Self.script)
    #expect(traced.status == 0, "\(traced.stderr)")
    #expect(traced.stdout == "1\t2\ttask.done id=1\n")
    #expect(traced.stderr.contains("task.done id=1\n"), "and are printed as before")
    let path = folder.url.appendingPathComponent("trace.jsonl").path
    let written = try await LunarProcess.run(["run", "--clock", "virtual", "--trace-file", path, "-"], input: Self.script)
    #expect(written.stdout == "1\t2\ttask.done id=1\n", "\(written.stderr)")
  }

  @Test func machinesRecordNothingUntilTheTraceIsRequired() async throws {
    let outcome = try await LunarProcess.run(["run", "-"], input: """
      local machine = require "lunar.machine"
      local m = machine.new { name = "door", initial = "closed", states = { closed = { on = { open = "open" } }, open = {} } }
      m:send("open")
      m:settle()
      local trace = require "lunar.trace"
      print(m.state, #trace.events(), trace.recording())
      m:send("open")
      m:settle()
      print(#trace.events("machine.received"))
      """)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "open\t0\ttrue\n1\n")
  }
}
