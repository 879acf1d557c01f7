import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `workflow.sleep` steps: they wait on the runtime clock (instantly under
/// `--clock virtual`), and a resumed run waits only what is left.
@Suite struct WorkflowSleepTests {
  /// A workflow `before` → sleep `cool-down` (`wait`, Lua fields) → `after`,
  /// where `after` prints how long the sleep took on the runtime clock,
  /// what the sleep step says it waited, and its deadline.
  static func workflow(_ wait: String) -> String {
    """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    return workflow "cool" {
      step "before" { run = function() return lunar.now() end },
      workflow.sleep "cool-down" { needs = "before", \(wait) },
      step "after" {
        needs = "cool-down",
        run = function(ctx)
          local slept = ctx.steps["cool-down"].output
          print(("took %.0f waited %.0f"):format(lunar.now() - ctx.steps.before.output, slept.waited))
          print(("deadline %.3f waited %.3f"):format(slept.deadline, slept.waited))
        end,
      },
    }
    """
  }

  @Test func aSleepStepEndsAfterItsSecondsOnTheVirtualClock() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("cool.lua", Self.workflow("seconds = 3600"))
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", script])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("took 3600 waited 3600"), "\(outcome.stdout)")
  }

  @Test func untilGivesTheDeadlineAndOneThatHasPassedEndsAtOnce() async throws {
    let folder = try TemporaryFolder()
    let later = try folder.write(
      "later.lua", Self.workflow("['until'] = function(ctx) return ctx.steps.before.output + 90 end"))
    let waited = try await LunarProcess.run(["run", "--clock", "virtual", later])
    #expect(waited.status == 0, "\(waited.stderr)")
    #expect(waited.stdout.contains("took 90 waited 90"), "\(waited.stdout)")
    let past = try folder.write("past.lua", Self.workflow("['until'] = function(ctx) return 0 end"))
    let atOnce = try await LunarProcess.run(["run", "--clock", "virtual", past])
    #expect(atOnce.status == 0, "\(atOnce.stderr)")
    #expect(atOnce.stdout.contains("took 0 waited 0"), "\(atOnce.stdout)")
  }

  @Test func aBadSleepIsAnErrorAtTheUsersLine() async throws {
    let folder = try TemporaryFolder()
    for (fields, message) in [
      ("seconds = -1", "sleep \"cool-down\": 'seconds' must be a non-negative number, got -1"),
      ("seconds = 1, ['until'] = function() return 0 end",
       "sleep \"cool-down\": needs exactly one of 'seconds' (a number) or 'until' (a function returning epoch seconds)"),
      ("seconds = 1, run = print",
       "sleep \"cool-down\": unknown field 'run' (a sleep takes seconds or until, needs, if, description)"),
      ("['until'] = 5", "sleep \"cool-down\": 'until' must be a function, got number"),
    ] {
      let script = try folder.write("bad.lua", Self.workflow(fields))
      let outcome = try await LunarProcess.run(["run", "--clock", "virtual", script])
      #expect(outcome.status != 0)
      #expect(outcome.stderr.contains("bad.lua:5: " + message), "\(outcome.stderr)")
    }
    let script = try folder.write("nan.lua", Self.workflow("['until'] = function() return 0/0 end"))
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", script])
    #expect(outcome.status != 0)
    let shown = outcome.stdout + outcome.stderr
    #expect(
      shown.contains("nan.lua:5: step \"cool-down\": 'until' must return a time in seconds since the epoch, got nan")
        || shown.contains("nan.lua:5: step \"cool-down\": 'until' must return a time in seconds since the epoch, got -nan"),
      "\(shown)")
  }

  @Test func aRunKilledMidSleepResumesWaitingOnlyWhatIsLeft() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("cool.lua", Self.workflow("seconds = 3600"))
    let first = try LunarProcess.start(["run", "--store", "sqlite:" + path, script])
    // The wait is recorded when it starts: then the process is killed.
    var recorded: StepWait?
    while recorded == nil {
      try await Task.sleep(for: .milliseconds(20))
      guard let store = try? SQLiteRunStore(path: path), let run = try? store.lastRun(workflow: "cool", file: nil) else {
        continue
      }
      recorded = try store.stepWaits(of: run.id).first
    }
    kill(first.process.processIdentifier, SIGKILL)
    _ = try await first.wait()
    let wait = try #require(recorded)
    #expect(wait.name == "cool-down")

    // The virtual clock starts at the real time, later than the first run's
    // start: the deadline is the recorded one, so less than an hour is left.
    let resumed = try await LunarProcess.run(["run", "--clock", "virtual", "--store", "sqlite:" + path, "--resume", script])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(resumed.stdout.contains(String(format: "deadline %.3f", Double(wait.deadlineMilliseconds) / 1000)), "\(resumed.stdout)")
    let waited = resumed.stdout.split(separator: "\n").first { $0.hasPrefix("deadline ") }.map(String.init) ?? ""
    let seconds = Double(waited.split(separator: " ").last ?? "") ?? .infinity
    #expect(seconds < 3600, "\(resumed.stdout)")
  }
}
