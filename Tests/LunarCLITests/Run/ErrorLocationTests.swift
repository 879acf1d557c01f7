import Foundation
import Testing
import TestSupport

/// Every error a user sees names their file and line and the public
/// function they called, never the chunks Lunar writes in Lua
/// (`lunar.workflow`, `lunar.actions`, `lunar.launches`, ...); and nothing
/// is reported twice or swallowed.
@Suite struct ErrorLocationTests {
  @Test func aFailingWorkflowEndsWithOneLineNamingTheFailedSteps() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "demo" {
        step "a" { run = function() error("boom") end },
        step "b" { run = function() return 1 end },
        step "c" { needs = { "b" }, run = function() local x = nil; return x.y end },
      }
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script)
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains("[demo] step a failed: stdin:4: boom\n"))
    #expect(outcome.stdout.contains("[demo] step c failed: stdin:6: attempt to index a nil value (local 'x')\n"))
    #expect(outcome.stderr == "lunar: workflow demo failed: steps a, c failed\n")
  }

  @Test func aWorkflowRunFromAScriptFailsAtTheScriptsCall() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      local wf = workflow "demo" { workflow.step "a" { run = function() error("boom", 0) end } }
      local function go()
        workflow.run(wf)
      end
      go()
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script)
    #expect(outcome.status == 1)
    #expect(outcome.stderr == """
      lunar: stdin:4: workflow demo failed: step a failed
      stack traceback:
      \t[C]: in function 'lunar.workflow.run'
      \tstdin:4: in local 'go'
      \tstdin:6: in main chunk

      """)
  }

  @Test func aStepWhoseValuesCannotBeJournaledFailsAtItsDefinition() async throws {
    let folder = try TemporaryFolder()
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "demo" {
        step "a" { run = function() return { f = print } end },
        step "b" { with = { f = print }, run = function() return 1 end },
      }
      """
    let outcome = try await LunarProcess.run(["run", "--journal", "journal.jsonl", "-"], input: script, in: folder.url)
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains("[demo] step a failed: stdin:4: step \"a\": output.f: a function cannot cross into Swift\n"))
    #expect(outcome.stdout.contains("[demo] step b failed: stdin:5: step \"b\": with.f: a function cannot cross into Swift\n"))
    #expect(outcome.stderr == "lunar: workflow demo failed: steps a, b failed\n")
  }

  @Test func aReplayDivergenceNamesTheScriptsCall() async throws {
    let folder = try TemporaryFolder()
    let script = """
      lunar.action("greet", function(ctx, input) return "hi " .. input end)
      print(lunar.run("greet", arg[1]))
      """
    let recorded = try await LunarProcess.run(["run", "--record", "run.journal", "-", "a"], input: script, in: folder.url)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let replayed = try await LunarProcess.run(["run", "--replay", "run.journal", "-", "b"], input: script, in: folder.url)
    #expect(replayed.status == 1)
    #expect(replayed.stderr.hasPrefix("lunar: stdin:2: replay diverged at call 1: "), "\(replayed.stderr)")
    #expect(replayed.stderr.hasSuffix("\nstack traceback:\n\t[C]: in function 'lunar.run'\n\tstdin:2: in main chunk\n"))
  }

  @Test func reminderErrorsNameRemindAndTheCallersLine() async throws {
    let script = """
      local launches = require "lunar.launches"
      print(pcall(function() launches.remind({}, 5, print) end))
      print(pcall(function() launches.remind("nope", 5, print) end))
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == """
      false\tstdin:2: bad argument #1 to 'remind' (a launch table with an 'id' expected)
      false\tstdin:3: cannot set reminder: no launch 'nope' in the schedule

      """)
  }

  @Test func functionsCalledWithoutANameAreNamedByTheirModuleOrClass() async throws {
    let script = """
      local q = require("lunar.queue").new("q")
      print(pcall(q.submit, q, 1))
      print(pcall(lunar.spawn(function() end).result, 5))
      print(pcall(lunar.sleep, "x"))
      print(pcall(function() lunar.run_stubbed({}, 5) end))
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == """
      false\tbad argument #2 to 'queue:submit' (function expected, got number)
      false\tbad argument #1 to 'task:result' (lunar.task expected, got number)
      false\tbad argument #1 to 'lunar.sleep' (number expected, got string)
      false\tstdin:5: bad argument #2 to 'run_stubbed' (string expected, got number)

      """)
  }

  @Test func aWaitWithoutALineOfTheScriptHasNoPlaceInTheReport() async throws {
    let script = """
      local t = lunar.spawn(lunar.sleep, math.huge)
      t:await()
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 10)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("\n  main chunk waits for task 1 at stdin:2\n  task 1 waits for sleep forever\n"), "\(outcome.stderr)")
  }

  @Test func aDeadlockCaughtByPcallIsNotReportedAgain() async throws {
    let script = """
      local q = require("lunar.queue").new("q")
      local t = lunar.spawn(lunar.sleep, math.huge)
      print(pcall(t.await, t))
      local ok = pcall(function()
        return q:submit(function() return q:submit(function() end):await() end):await()
      end)
      print("caught", ok)
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 10)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stderr == "")
    #expect(outcome.stdout.hasPrefix("false\tdeadlock: every task is waiting and nothing can wake them\n  main chunk waits for task 1 at stdin:3\n"))
    #expect(outcome.stdout.hasSuffix("caught\tfalse\n"))
  }

  @Test func aNewDeadlockAfterACaughtOneIsReported() async throws {
    let script = """
      local q = require("lunar.queue").new("q")
      pcall(function()
        return q:submit(function() return q:submit(function() end):await() end):await()
      end)
      lunar.spawn(function() lunar.sleep(math.huge) end)
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script, timeout: 10)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.hasPrefix("lunar: deadlock: every task is waiting and nothing can wake them\n"))
    #expect(outcome.stderr.contains("  q#1 waits for q#2 at stdin:3\n"))
    #expect(outcome.stderr.contains(" waits for sleep forever at stdin:5\n"))
  }

  @Test func anInterpreterErrorAfterStopReachesTheNextSettle() async throws {
    let script = """
      local machine = require "lunar.machine"
      local m
      machine.interpreter("boom", function(cmd, send) m:stop(); error("kaput") end)
      m = machine.new { name = "m", initial = "a", states = { a = { on = { go = function() return "b", { { "boom" } } end } }, b = {} } }
      m:send("go")
      print(pcall(m.settle, m))
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout == "false\tmachine 'm': command { \"boom\" } failed: stdin:3: kaput\n")
  }

  @Test func aMachineFailureNoSettleRaisedIsReportedWhenTheRunEnds() async throws {
    let script = """
      local machine = require "lunar.machine"
      local m
      machine.interpreter("boom", function(cmd, send) lunar.sleep(2); error("kaput") end)
      m = machine.new { name = "m", initial = "a", states = { a = { on = { go = function() return "b", { { "boom" } } end } }, b = {} } }
      m:send("go")
      lunar.spawn(function() lunar.sleep(1); m:stop() end)
      """
    let outcome = try await LunarProcess.run(["run", "--clock", "virtual", "-"], input: script)
    #expect(outcome.status == 1)
    #expect(outcome.stderr == "lunar: unobserved error in machine 'm': command { \"boom\" } failed: stdin:3: kaput\n")
  }
}
