import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

@testable import Lunar

/// What a resume reuses and why it reruns a step: a step's code (its
/// function, a module it reaches), `cache = "inputs"`, `version`, `--force`;
/// and `ctx.attempt` across retries and resumes. Each run is a runtime of
/// its own on one SQLite store, as `lunar run --resume` would be.
@Suite struct WorkflowResumeTests {
  let folder: TemporaryFolder
  let store: StoreLocation

  init() throws {
    folder = try TemporaryFolder()
    store = StoreLocation(.sqlite(path: folder.url.appendingPathComponent("runs.db").path))
  }

  /// A workflow of five steps: s2 uses the module `helpers`; s3's run
  /// function is `s3`; s4 fails while the global FAIL is set.
  static func workflow(s3: String = "return ctx.steps.s1.output + 10", s3Fields: String = "", fail: Bool = false) -> String {
    """
    FAIL = \(fail)
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local helpers = require "helpers"
    local wf = workflow "five" {
      step "s1" { run = function() return 1 end },
      step "s2" { needs = { "s1" }, run = function(ctx) return helpers.twice(ctx.steps.s1.output) end },
      step "s3" { needs = { "s1" }, \(s3Fields) run = function(ctx) \(s3) end },
      step "s4" { needs = { "s3" }, run = function(ctx)
        if FAIL then error("boom") end
        return ctx.steps.s3.output
      end },
      step "s5" { needs = { "s4" }, run = function(ctx) return ctx.steps.s4.output + ctx.steps.s1.output end },
    }
    return workflow.execute(wf, { quiet = true })
    """
  }

  /// Runs `source` as `@test.lua` in a new runtime recording in the store,
  /// resuming the last run if `resume`; returns its results by step.
  func run(_ source: String, resume: Bool = true, force: [LuaString] = [], from: LuaString? = nil) async throws -> LuaValue {
    var options = WorkflowRunOptions()
    if resume { options.resume = .last }
    options.force = force
    options.from = from
    let runtime = try TestRuntime { configuration in
      configuration.store = store
      configuration.pluginDirectories = [folder.url.path]
      configuration.plugins = [WorkflowPlugin(options: options)]
    }
    let results = try await runtime.run(source)
    return results.first?["results"] ?? .nil
  }

  /// Each step's status and, if it reran in a resume, why: `s3 succeeded (code changed)`.
  static func outcome(_ results: LuaValue) -> [String] {
    ["s1", "s2", "s3", "s4", "s5"].map { name in
      let step = results[.string(LuaString(name))]
      let status = step["status"].stringValue ?? "-"
      return step["reason"].stringValue.map { "\(name) \(status) (\($0))" } ?? "\(name) \(status)"
    }
  }

  func writeHelpers(_ body: String = "return x * 2") throws {
    _ = try folder.write("helpers.lua", "local M = {}\nfunction M.twice(x) \(body) end\nreturn M\n")
  }

  /// The store keeps each run's plan with what each step needs, so a page
  /// can draw the run's graph; a `--from` run plans the steps it carries
  /// over as well, with their edges.
  @Test func aRunsPlanInTheStoreKeepsWhatEachStepNeeds() async throws {
    try writeHelpers()
    _ = try await run(Self.workflow(), resume: false)
    let runs = try store.openRunStore()
    let first = try #require(try runs.lastRun(workflow: nil, file: nil))
    #expect(Array(first.plan) == ["s1", "s2", "s3", "s4", "s5"])
    #expect(first.plan.needs == [[], [0], [0], [2], [3]])
    // --from is for a file that returns its workflow.
    let returning = Self.workflow().replacingOccurrences(of: "return workflow.execute(wf, { quiet = true })", with: "return wf")
    _ = try await run(returning, resume: false, from: "s4")
    let second = try #require(try runs.lastRun(workflow: nil, file: nil))
    #expect(second.id != first.id && Array(second.plan) == ["s1", "s2", "s3", "s4", "s5"])
    #expect(second.plan.needs == [[], [0], [0], [2], [3]])
  }

  @Test func anEditedStepFunctionRerunsWithItsDependentsAndTheOthersAreReused() async throws {
    try writeHelpers()
    let failed = try await run(Self.workflow(fail: true), resume: false)
    #expect(Self.outcome(failed) == ["s1 succeeded", "s2 succeeded", "s3 succeeded", "s4 failed", "s5 skipped"])
    let resumed = try await run(Self.workflow(s3: "return ctx.steps.s1.output + 20"))
    #expect(
      Self.outcome(resumed) == [
        "s1 reused", "s2 reused", "s3 succeeded (code changed)", "s4 succeeded (needs s3)", "s5 succeeded (needs s4)",
      ])
    #expect(resumed["s5"]["output"] == .integer(22))
  }

  @Test func movingAStepFunctionToAnotherLineIsNotAChange() async throws {
    try writeHelpers()
    _ = try await run(Self.workflow(), resume: false)
    let resumed = try await run("\n\n-- a comment\n" + Self.workflow(s3: "\n  return ctx.steps.s1.output + 10 -- the same\n"))
    #expect(Self.outcome(resumed) == ["s1 reused", "s2 reused", "s3 reused", "s4 reused", "s5 reused"])
  }

  @Test func aChangedRequiredModuleRerunsTheStepsThatReachIt() async throws {
    try writeHelpers()
    _ = try await run(Self.workflow(), resume: false)
    try writeHelpers("return x * 3")
    let resumed = try await run(Self.workflow())
    #expect(Self.outcome(resumed) == ["s1 reused", "s2 succeeded (code changed)", "s3 reused", "s4 reused", "s5 reused"])
    #expect(resumed["s2"]["output"] == .integer(3))
  }

  @Test func aStepCachedOnItsInputsIgnoresItsCode() async throws {
    try writeHelpers()
    _ = try await run(Self.workflow(s3Fields: "cache = \"inputs\","), resume: false)
    let resumed = try await run(Self.workflow(s3: "return 99", s3Fields: "cache = \"inputs\","))
    #expect(Self.outcome(resumed) == ["s1 reused", "s2 reused", "s3 reused", "s4 reused", "s5 reused"])
  }

  @Test func aPinnedVersionStandsForTheCode() async throws {
    try writeHelpers()
    _ = try await run(Self.workflow(s3Fields: "version = \"1\","), resume: false)
    let edited = try await run(Self.workflow(s3: "return 99", s3Fields: "version = \"1\","))
    #expect(Self.outcome(edited) == ["s1 reused", "s2 reused", "s3 reused", "s4 reused", "s5 reused"])
    let bumped = try await run(Self.workflow(s3: "return 99", s3Fields: "version = \"2\","))
    #expect(
      Self.outcome(bumped) == [
        "s1 reused", "s2 reused", "s3 succeeded (code changed)", "s4 succeeded (needs s3)", "s5 succeeded (needs s4)",
      ])
    #expect(bumped["s4"]["output"] == .integer(99))
  }

  @Test func forceRerunsAnUnchangedStepAndWhatNeedsIt() async throws {
    try writeHelpers()
    _ = try await run(Self.workflow(), resume: false)
    let forced = try await run(Self.workflow(), force: ["s3"])
    #expect(
      Self.outcome(forced) == [
        "s1 reused", "s2 reused", "s3 succeeded (forced (--force))", "s4 succeeded (needs s3)", "s5 succeeded (needs s4)",
      ])
  }

  @Test func forceOfAnUnknownStepIsRefused() async throws {
    try writeHelpers()
    await #expect(throws: RunFailure.self) { try await run(Self.workflow(), force: ["nope"]) }
  }

  @Test func badCacheAndVersionFieldsAreErrorsAtTheUsersLine() async throws {
    let runtime = try TestRuntime()
    let source = """
      local step = require("lunar.workflow").step
      local _, err = pcall(function()
        local s = step "a" { cache = "always", run = function() end }; return s
      end)
      local _, err2 = pcall(function()
        local s = step "b" { version = 2, run = function() end }; return s
      end)
      local _, err3 = pcall(function()
        local s = step "c" { version = "2", cache = "inputs", run = function() end }; return s
      end)
      return err, err2, err3
      """
    let results = try await runtime.run(source)
    #expect(results[0].stringValue == "test.lua:3: step \"a\": 'cache' must be \"code\" or \"inputs\", got \"always\"")
    #expect(results[1].stringValue == "test.lua:6: step \"b\": 'version' must be a non-empty string, got number")
    #expect(results[2].stringValue == "test.lua:9: step \"c\": give 'version' or cache = \"inputs\", not both")
  }

  /// A step that fails until its attempt reaches `until`, with `retry`
  /// attempts per run; ATTEMPTS lists the ctx.attempt each attempt saw.
  static func retrying(until: Int) -> String {
    """
    ATTEMPTS = {}
    local workflow = require "lunar.workflow"
    local wf = workflow "retries" {
      workflow.step "flaky" { retry = { attempts = 3 }, run = function(ctx)
        ATTEMPTS[#ATTEMPTS + 1] = ctx.attempt
        if ctx.attempt < \(until) then error("not yet") end
        return ctx.attempt
      end },
    }
    local outcome = workflow.execute(wf, { quiet = true })
    return { results = outcome.results, attempts = ATTEMPTS }
    """
  }

  func attempts(_ source: String, resume: Bool) async throws -> (seen: [LuaValue], status: String?) {
    var options = WorkflowRunOptions()
    if resume { options.resume = .last }
    let runtime = try TestRuntime { configuration in
      configuration.store = store
      configuration.plugins = [WorkflowPlugin(options: options)]
    }
    let result = try await runtime.run(source).first ?? .nil
    return (result["attempts"].tableValue?.array ?? [], result["results"]["flaky"]["status"].stringValue)
  }

  @Test func ctxAttemptCountsRetriesAndGoesOnAfterAResume() async throws {
    let first = try await attempts(Self.retrying(until: 5), resume: false)
    #expect(first.seen == [1, 2, 3])
    #expect(first.status == "failed")
    let resumed = try await attempts(Self.retrying(until: 5), resume: true)
    #expect(resumed.seen == [4, 5])
    #expect(resumed.status == "succeeded")
    let runStore = try store.openRunStore()
    let last = try #require(try runStore.lastRun(workflow: "retries", file: nil))
    #expect(try runStore.steps(of: last.id).map(\.attempts) == [5])
  }
}
