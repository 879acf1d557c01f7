import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `lunar run` with a run store: runs recorded, resumed after SIGKILL,
/// shared by two processes, and values that come back exactly.
@Suite struct RunStoreCommandTests {
  /// A chain of `count` steps; each appends its name to `log` (after a
  /// millisecond, so a run can be killed midway) and returns its position.
  /// Past `gate`, a step first waits for the file `gate` to exist, so a
  /// run cannot end before the test has killed it.
  static func chain(_ count: Int, log: String, gate: String? = nil) -> String {
    """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local steps = {}
    local gate = \(gate.map { "\"\($0)\"" } ?? "nil")
    for i = 1, \(count) do
      steps[i] = step("s" .. i) {
        needs = i > 1 and { "s" .. (i - 1) } or nil,
        run = function(ctx)
          lunar.sleep(0.001)
          while gate and i > \(count / 2) and not io.open(gate) do lunar.sleep(0.01) end
          local f = assert(io.open("\(log)", "a"))
          f:write("s", i, "\\n")
          f:close()
          return i
        end,
      }
    end
    return workflow "chain" (steps)
    """
  }

  static func lines(_ path: String) throws -> [String] {
    try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
  }

  @Test func aRunKilledMidwayResumesAndRunsEveryStepOnceAfterItsCommittedPredecessor() async throws {
    let folder = try TemporaryFolder()
    let log = folder.url.appendingPathComponent("ran.txt").path
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let gate = folder.url.appendingPathComponent("gate").path
    let script = try folder.write("chain.lua", Self.chain(2000, log: log, gate: gate))
    let first = try LunarProcess.start(["run", "--store", store, "--jobs", "1", script])
    while (try? Self.lines(log).count) ?? 0 < 300 { try await Task.sleep(for: .milliseconds(5)) }
    kill(first.process.processIdentifier, SIGKILL)
    let killed = try await first.wait()
    #expect(!killed.exitedNormally, "SIGKILL ended the run")
    let ranBeforeKill = try Self.lines(log).count
    #expect(ranBeforeKill <= 1000, "killed before the gate")
    #expect(FileManager.default.createFile(atPath: gate, contents: nil))

    let resumed = try await LunarProcess.run(["run", "--store", store, "--resume", "--jobs", "1", script], timeout: 60)
    #expect(resumed.status == 0, "\(resumed.stderr)")
    let ran = try Self.lines(log)
    // Each step ran after its predecessor; a step ran twice only if it was
    // the one running when the process died (its output never committed).
    var seen = Set<String>()
    var repeated: [String] = []
    for (index, name) in ran.enumerated() {
      if !seen.insert(name).inserted { repeated.append(name) }
      let position = Int(name.dropFirst())!
      if position > 1 { #expect(seen.contains("s\(position - 1)"), "s\(position - 1) ran before \(name) (line \(index + 1))") }
    }
    #expect(seen.count == 2000)
    #expect(repeated.count <= 1, "only the step in flight at the kill runs again: \(repeated)")
    if let again = repeated.first { #expect(again == "s\(ranBeforeKill)", "the step in flight was the last to start") }
    let reused = resumed.stdout.components(separatedBy: "\n").filter { $0.hasSuffix("reused in 0.00s") || $0.contains(" reused in ") }
    #expect(reused.count >= ranBeforeKill - 1, "the committed steps were reused, not rerun")

    let runs = try SQLiteRunStore(path: String(store.dropFirst("sqlite:".count)))
    let last = try #require(try runs.lastRun(workflow: LuaString("chain"), file: nil))
    #expect(last.status == .succeeded)
    #expect(last.resumedFrom != nil)
    let steps = try runs.steps(of: last.id)
    #expect(steps.count == 2000)
    #expect(steps.allSatisfy { $0.status == .succeeded || $0.status == .reused })
    #expect(steps[1999].output == [.integer(2000)])
  }

  @Test func twoProcessesRecordTheirRunsInOneStoreAtOnce() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write(
      "wide.lua",
      """
      local workflow = require "lunar.workflow"
      local steps = {}
      for i = 1, 300 do steps[i] = workflow.step("s" .. i) { run = function() lunar.sleep(0.001); return i end } end
      return workflow "wide" (steps)
      """)
    let one = try LunarProcess.start(["run", "--store", "sqlite:" + path, script])
    let two = try LunarProcess.start(["run", "--store", "sqlite:" + path, script])
    let first = try await one.wait(timeout: 60)
    let second = try await two.wait(timeout: 60)
    #expect(first.status == 0, "\(first.stderr)")
    #expect(second.status == 0, "\(second.stderr)")
    let store = try SQLiteRunStore(path: path)
    let runs = try store.runs(workflow: LuaString("wide"), limit: 10)
    #expect(runs.count == 2)
    for summary in runs {
      let run = summary.run
      let steps = try store.steps(of: run.id)
      #expect(steps.count == 300)
      #expect(steps.allSatisfy { $0.status == .succeeded })
      #expect(Set(steps.compactMap { $0.output?.first }) == Set((1...300).map { LuaValue.integer(Int64($0)) }))
    }
  }

  /// A script whose step `values` returns every kind of value, a step that
  /// returns nothing (counting its runs in `count`), and `show`, which
  /// prints what it got in a form that tells every kind apart.
  static func values(count: String) -> String {
    #"""
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local function show(v, seen)
      local t = type(v)
      if t == "string" then return (("%q"):format(v):gsub("[\128-\255]", function(c) return "\\" .. c:byte() end)) end
      if t == "number" then
        if v ~= v then return "nan" end
        return math.type(v) .. ":" .. (math.type(v) == "float" and ("%a"):format(v) or tostring(v))
      end
      if t ~= "table" then return tostring(v) end
      local keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys, function(a, b) return show(a) < show(b) end)
      local parts = {}
      for _, k in ipairs(keys) do parts[#parts + 1] = "[" .. show(k) .. "]=" .. show(v[k]) end
      return "{" .. table.concat(parts, ",") .. "}"
    end
    return workflow "values" {
      step "values" { run = function()
        return { bytes = "\0\255\254", int = 1, float = 1.0, nan = 0/0, inf = math.huge, ninf = -math.huge,
                 nzero = -0.0, sparse = { [1] = "x", [3] = "y" }, [true] = "t", [2.5] = "f",
                 nested = { { { "deep" } } }, big = math.maxinteger, small = math.mininteger }
      end },
      step "nothing" { run = function()
        local f = assert(io.open("\#(count)", "a")); f:write("x"); f:close()
      end },
      step "show" { needs = { "values", "nothing" }, run = function(ctx)
        print("values " .. show(ctx.steps.values.output))
        print("nothing " .. ctx.steps.nothing.status .. " " .. tostring(ctx.steps.nothing.output))
      end },
    }
    """#
  }

  @Test func everyKindOfValueComesBackExactlyFromTheStore() async throws {
    let folder = try TemporaryFolder()
    let count = folder.url.appendingPathComponent("count").path
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("values.lua", Self.values(count: count))
    let first = try await LunarProcess.run(["run", "--store", store, script])
    #expect(first.status == 0, "\(first.stderr)")
    let printed = first.stdout.split(separator: "\n").first { $0.hasPrefix("values ") }.map(String.init)
    #expect(printed?.contains(#"["bytes"]="\0\255\254""#) == true, "\(printed ?? "")")
    #expect(printed?.contains(#"["float"]=float:0x1p+0,["inf"]=float:inf"#) == true, "\(printed ?? "")")
    // --from show: "values" and "nothing" come from the store.
    let again = try await LunarProcess.run(["run", "--store", store, "--from", "show", script])
    #expect(again.status == 0, "\(again.stderr)")
    let reprinted = again.stdout.split(separator: "\n").first { $0.hasPrefix("values ") }.map(String.init)
    #expect(reprinted == printed)
    // --resume: the step that returned nothing is done, not run again.
    let resumed = try await LunarProcess.run(["run", "--store", store, "--resume", script])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(resumed.stdout.contains("[values] step nothing reused"))
    #expect(!resumed.stdout.contains("step nothing started"), "a reused step never said it started")
    #expect(try String(contentsOfFile: count, encoding: .utf8) == "x")
  }

  @Test func fromNeedsAnEarlierRunInTheStore() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("values.lua", Self.values(count: folder.url.appendingPathComponent("count").path))
    let outcome = try await LunarProcess.run(["run", "--store", store, "--from", "show", script])
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("--from show: no earlier run of workflow \"values\" in \(store)"), "\(outcome.stderr)")
    #expect(!outcome.stdout.contains("values {"), "nothing ran")
  }

  @Test func aStepWhoseOutputContainsItselfFailsWithThePathAndTheRunGoesOn() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "cycle" {
        step "a" { run = function() local t = {}; t.self = t; return t end },
        step "b" { run = function() return 1 end },
      }
      """
    let outcome = try await LunarProcess.run(["run", "-"], input: script)
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains(#"[cycle] step a failed: stdin:4: step "a": output.self: a table that contains itself"#), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("b     succeeded"))
    #expect(outcome.stdout.contains("workflow cycle: failed"))
  }

  @Test func storeFlagsAreCheckedBeforeAnythingRuns() async throws {
    let script = "print('ran')"
    let both = try await LunarProcess.run(["run", "--no-store", "--store", "sqlite:x.db", "-"], input: script)
    #expect(both.status == 2)
    #expect(both.stderr.contains("--no-store cannot be used with --store, --journal or --resume"))
    let badRun = try await LunarProcess.run(["run", "--resume=abc", "-"], input: script)
    #expect(badRun.status == 2)
    #expect(badRun.stderr.contains("--resume: a run is 'last' or a run id (a positive number), got 'abc'"))
    let badStore = try await LunarProcess.run(["run", "--store", "mysql://x", "-"], input: script)
    #expect(badStore.status == 2)
    #expect(badStore.stderr.contains("--store: unknown kind of store 'mysql:'"), "\(badStore.stderr)")
    #expect(!both.stdout.contains("ran") && !badRun.stdout.contains("ran") && !badStore.stdout.contains("ran"))
  }

  @Test func stepsSharingAQueueRunInDeclarationOrderEvenWhenNeedsDelayTheFirst() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "q" {
        step "slow" { run = function() lunar.sleep(1) end },
        step "first" { needs = { "slow" }, queue = "deploy", run = function() print("first") end },
        step "second" { queue = "deploy", run = function() print("second") end },
      }
      """
    let outcome = try await LunarProcess.run(["run", "--no-store", "--clock", "virtual", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let printed = outcome.stdout.split(separator: "\n").filter { $0 == "first" || $0 == "second" }
    #expect(printed == ["first", "second"])
  }

  @Test func aQueueOrderThatCanNeverHoldIsRefused() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "q" {
        step "first" { needs = { "second" }, queue = "deploy", run = function() end },
        step "second" { queue = "deploy", run = function() end },
      }
      """
    let outcome = try await LunarProcess.run(["run", "--no-store", "-"], input: script)
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains(#"step "first" can never start: queue "deploy" runs its steps in declaration order"#), "\(outcome.stderr)")
  }

  @Test func theTotalDurationUsesTheStepsClock() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      return workflow "t" { workflow.step "wait" { run = function() lunar.sleep(90) end } }
      """
    let outcome = try await LunarProcess.run(["run", "--no-store", "--clock", "virtual", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("wait  succeeded         1      90.0s"))
    #expect(outcome.stdout.contains("workflow t: succeeded in 90.0s"))
  }

  @Test func aTimeoutStopsAStepThatComputesAndOneThatCatchesIt() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "busy" {
        step "spin" { timeout = 0.2, run = function() while true do end end },
        step "catch" { timeout = 0.2, run = function() while true do pcall(function() while true do end end) end end },
        step "after" { needs = { "spin" }, continue_on_error = false, run = function() print("never") end },
      }
      """
    let outcome = try await LunarProcess.run(["run", "--no-store", "-"], input: script)
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains(#"[busy] step spin failed: step "spin": timed out after 0.2s"#), "\(outcome.stdout)")
    #expect(outcome.stdout.contains(#"[busy] step catch failed: step "catch": timed out after 0.2s"#))
    #expect(outcome.stdout.contains("[busy] step after skipped (needs spin)"))
    #expect(!outcome.stdout.contains("never"))
  }

  @Test func aStepSkippedByItsConditionNeverStartsAndNeitherDoesWhatNeedsIt() async throws {
    let script = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "maybe" {
        step "check" { ["if"] = function() return false end, run = function() print("never") end },
        step "after" { needs = { "check" }, run = function() print("never either") end },
        step "other" { run = function() return 1 end },
      }
      """
    let outcome = try await LunarProcess.run(["run", "--no-store", "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("[maybe] step check skipped (condition false)"))
    #expect(outcome.stdout.contains("[maybe] step after skipped (needs check)"))
    #expect(!outcome.stdout.contains("step check started") && !outcome.stdout.contains("step after started"))
    #expect(outcome.stdout.contains("[maybe] step other started"))
    #expect(!outcome.stdout.contains("never"))
  }
}
