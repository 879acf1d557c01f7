import Foundation
import Testing
import TestSupport

/// Lua command interpreters run as tasks: a wait in one suspends it, so
/// the runtime's deadlines, interrupts and deadlock reports see it as they
/// see any task (a nested loop hid it from all three).
@Suite struct MachineInterpreterTests {
  static let machine = """
    local machine = require "lunar.machine"
    local m
    machine.interpreter("work", function() WAIT end)
    m = machine.new { name = "m", initial = "idle",
      states = { idle = { on = { go = function() return nil, { { "work" } } end } } } }
    m:send("go")
    m:settle()
    print("settled")
    """

  @Test func theTimeoutStopsAnInterpreterThatWaits() async throws {
    let script = Self.machine.replacingOccurrences(of: "WAIT", with: "lunar.sleep(1e6)")
    let outcome = try await LunarProcess.run(["run", "--timeout", "0.3", "-"], input: script, timeout: 20)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: timeout: the script ran longer than 0.3 seconds"), "\(outcome.stderr)")
    #expect(!outcome.stdout.contains("settled"))
  }

  @Test func anInterpreterWaitingOnItsOwnMachineIsADeadlockNamingIt() async throws {
    let script = Self.machine.replacingOccurrences(of: "WAIT", with: "m:settle()")
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 20)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: deadlock: every task is waiting and nothing can wake them\n"), "\(outcome.stderr)")
    #expect(outcome.stderr.contains("interpreter of 'work' (machine 'm') waits for machine m to settle at stdin:3\n"))
  }
}
