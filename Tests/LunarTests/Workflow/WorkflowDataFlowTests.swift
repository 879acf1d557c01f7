import LuaKit
import Testing

@testable import Lunar

/// Declared data flow: a step reads in `ctx.steps` only the steps it needs,
/// directly or through its needs; any other read is an error at its line.
@Suite struct WorkflowDataFlowTests {
  /// Runs a workflow of `steps` (Lua step definitions) and returns each
  /// step's status, output or error: `deploy failed: test.lua:7: ...`.
  static func outcome(_ steps: String, names: [String]) async throws -> [String] {
    let runtime = try TestRuntime()
    let results = try await runtime.run(
      """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      local wf = workflow "release" {
      \(steps)
      }
      return workflow.execute(wf, { quiet = true }).results
      """)
    let table = results.first ?? .nil
    return names.map { name in
      let step = table[.string(LuaString(name))]
      let status = step["status"].stringValue ?? "-"
      if let error = step["error"].stringValue { return "\(name) \(status): \(error)" }
      return "\(name) \(status)"
    }
  }

  @Test func readingAStepThatIsNotANeedFailsNamingBothAtTheLineThatReads() async throws {
    let outcome = try await Self.outcome(
      """
        step "build" { run = function() return "v1" end },
        step "deploy" { run = function(ctx)
          local version = ctx.steps.build
          return version
        end },
      """, names: ["build", "deploy"])
    #expect(
      outcome == [
        "build succeeded",
        "deploy failed: test.lua:6: step \"deploy\" reads ctx.steps.build, but \"build\" is not among its needs (add needs = { \"build\" })",
      ])
  }

  @Test func theHintKeepsTheNeedsAStepAlreadyHas() async throws {
    let outcome = try await Self.outcome(
      """
        step "lint" { run = function() return 1 end },
        step "build" { run = function() return 2 end },
        step "deploy" { needs = { "lint" }, run = function(ctx) return ctx.steps.build.output end },
      """, names: ["deploy"])
    #expect(
      outcome == [
        "deploy failed: test.lua:6: step \"deploy\" reads ctx.steps.build, but \"build\" is not among its needs (add needs = { \"lint\", \"build\" })"
      ])
  }

  @Test func readingAnUnknownStepFails() async throws {
    let outcome = try await Self.outcome(
      """
        step "build" { run = function() return 1 end },
        step "deploy" { needs = { "build" }, run = function(ctx) return ctx.steps.biuld end },
      """, names: ["deploy"])
    #expect(
      outcome == [
        "deploy failed: test.lua:5: step \"deploy\" reads ctx.steps.biuld, but workflow \"release\" has no step \"biuld\""
      ])
  }

  @Test func aConditionAndAnInputFunctionFollowTheSameRule() async throws {
    let outcome = try await Self.outcome(
      """
        step "build" { run = function() return 1 end },
        step "gated" { ["if"] = function(ctx) return ctx.steps.build end, run = function() end },
        step "fed" { with = function(ctx) return ctx.steps.build end, run = function() end },
      """, names: ["gated", "fed"])
    #expect(
      outcome == [
        "gated failed: test.lua:5: step \"gated\" reads ctx.steps.build, but \"build\" is not among its needs (add needs = { \"build\" })",
        "fed failed: test.lua:6: step \"fed\" reads ctx.steps.build, but \"build\" is not among its needs (add needs = { \"build\" })",
      ])
  }

  @Test func transitiveNeedsAreReadable() async throws {
    let outcome = try await Self.outcome(
      """
        step "build" { run = function() return 1 end },
        step "test" { needs = { "build" }, run = function(ctx) return ctx.steps.build.output + 1 end },
        step "pack" { needs = { "test" }, run = function(ctx)
          local seen = {}
          for name in pairs(ctx.steps) do seen[#seen + 1] = name end
          table.sort(seen)
          assert(table.concat(seen, ",") == "build,test", table.concat(seen, ","))
          return ctx.steps.build.output + ctx.steps.test.output
        end },
      """, names: ["build", "test", "pack"])
    #expect(outcome == ["build succeeded", "test succeeded", "pack succeeded"])
  }
}
