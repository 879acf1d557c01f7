import Foundation
import Testing

/// Durations of any size: a wait either waits idly or is refused, and the
/// trace never traps on the time it shows.
@Suite struct DurationTests {
  @Test func aHugeVirtualSleepUnderTraceIsADeadlockNotATrap() async throws {
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", "--trace", "-"], input: "lunar.sleep(1e16)", timeout: 10)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("timer.set after=1e+16"))
    #expect(outcome.stderr.contains("lunar: deadlock: every task is waiting and nothing can wake them\n"))
    #expect(outcome.stderr.contains("  main chunk waits for sleep 1e+16s at stdin:1\n"))
  }

  @Test func sleepsPastTheClocksRangeWaitIdlyAndAreReportedAsDeadlocks() async throws {
    // Before, the deadline overflowed into the past and the loop spun at
    // full speed forever (the kill timeout ends such a run).
    for seconds in ["1e300", "math.maxinteger", "math.huge"] {
      let outcome = try await LunarProcess.run(["run", "-"], input: "lunar.sleep(\(seconds))", timeout: 10)
      #expect(outcome.status == 1, "\(seconds)")
      #expect(outcome.stderr.hasPrefix("lunar: deadlock: every task is waiting and nothing can wake them\n"), "\(seconds)")
    }
  }

  @Test func aSleepThatNeverEndsCanBeCancelled() async throws {
    let script = """
      local t = lunar.spawn(function() lunar.sleep(math.huge) end)
      lunar.sleep(0.01)
      print(t:cancel(), t:result())
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 10)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "true\tfalse\tcancelled\n")
  }

  @Test func theConsoleRefusesToMoveTheClockPastItsRange() async throws {
    let input = ".trace on\n.clock advance 99999999999999999\nlunar.spawn(function() end):await()\nprint('alive')\n"
    let outcome = try await LunarProcess.run(["repl", "--clock", "virtual"], input: input, timeout: 10)
    #expect(outcome.status == 0)
    #expect(outcome.stdout.contains("cannot advance the clock by 1e+17 seconds: the clock ends at "))
    #expect(outcome.stdout.contains("task.done id=1"))
    #expect(outcome.stdout.hasSuffix("alive\n"))
  }
}
