import Foundation
import Testing
import TestSupport

/// Fan-out (`map`): a step runs one child `name[k]` per item of the list
/// its `map` returns, each recorded, retried and resumed on its own, and
/// its dependents see the list of the children's outputs.
@Suite struct WorkflowMapTests {
  static let backends = ["sqlite"] + (TestPostgresSchema.isAvailable ? ["postgres"] : [])

  /// Twelve regions (so `[10]` sorts after `[2]`): each child notes its
  /// item in `marks` each time it runs, and fails while `fail-ITEM` exists.
  /// Nothing it reads is an upvalue that changes between runs.
  static let regions = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    return workflow "regions" {
      step "list" { run = function() return { "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12" } end },
      step "deploy" {
        needs = "list",
        map = function(ctx) return ctx.steps.list.output end,
        max_parallel = 3,
        run = function(ctx, region)
          local marks = assert(io.open("marks", "a"))
          marks:write(region, "\\n")
          marks:close()
          if io.open("fail-" .. region) then error("cannot reach " .. region) end
          return region:upper()
        end,
      },
      step "report" { needs = "deploy", run = function(ctx) print("deployed " .. table.concat(ctx.steps.deploy.output, ",")) end },
    }
    """

  static func marks(_ folder: TemporaryFolder) throws -> [String] {
    let url = folder.url.appendingPathComponent("marks")
    guard FileManager.default.fileExists(atPath: url.path) else { return [] }
    return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").map(String.init).sorted()
  }

  @Test(arguments: backends) func aFailedChildIsResumedAloneAndDependentsSeeTheOutputsInItemOrder(backend: String) async throws {
    let folder = try TemporaryFolder()
    let schema = backend == "postgres" ? try TestPostgresSchema() : nil
    let store = schema?.url ?? "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("regions.lua", Self.regions)
    _ = try folder.write("fail-r7", "")
    let failed = try await LunarProcess.run(["run", "--store", store, script], in: folder.url)
    #expect(failed.status == 1)
    #expect(failed.stdout.contains("step \"deploy\": 1 of 12 children failed: deploy[7]"), "\(failed.stdout)")
    #expect(failed.stdout.contains("regions.lua:13: cannot reach r7"), "\(failed.stdout)")
    #expect(try Self.marks(folder) == (1...12).map { "r\($0)" }.sorted())

    let shown = try await LunarProcess.run(["runs", "show", "--store", store, "last"], in: folder.url)
    #expect(shown.status == 0, "\(shown.stderr)")
    let rows = shown.stdout.split(separator: "\n").map(String.init).filter { $0.hasPrefix("  deploy[") }
    #expect(rows.map { $0.split(separator: " ")[0] } == (1...12).map { "deploy[\($0)]" }, "\(shown.stdout)")
    #expect(rows[6].contains("failed") && rows[5].contains("succeeded"), "\(shown.stdout)")

    try FileManager.default.removeItem(at: folder.url.appendingPathComponent("fail-r7"))
    try FileManager.default.removeItem(at: folder.url.appendingPathComponent("marks"))
    let resumed = try await LunarProcess.run(["run", "--store", store, "--resume", script], in: folder.url)
    #expect(resumed.status == 0, "\(resumed.stderr)")
    #expect(try Self.marks(folder) == ["r7"], "only the failed child runs again")
    #expect(resumed.stdout.contains("resume: deploy[7]: failed in run"), "\(resumed.stdout)")
    #expect(resumed.stdout.contains("deployed R1,R2,R3,R4,R5,R6,R7,R8,R9,R10,R11,R12"), "\(resumed.stdout)")
    #expect(resumed.stdout.contains("step deploy[3] reused"), "\(resumed.stdout)")
  }

  @Test(arguments: [[], ["--processes", "2"]]) func eachChildSeesItsOwnNameAsCtxStep(flags: [String]) async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "named.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "named" {
        workflow.step "each" { map = function() return { "a", "b", "c" } end, run = function(ctx, x) return ctx.step .. "=" .. x end },
        workflow.step "show" { needs = "each", run = function(ctx) print(ctx.step, table.concat(ctx.steps.each.output, " ")) end },
      }
      """)
    let outcome = try await LunarProcess.run(["run", "--no-store"] + flags + [script], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("show\teach[1]=a each[2]=b each[3]=c\n"), "\(outcome.stdout)")
  }

  @Test func maxParallelAndJobsBoundTheChildrenRunningAtOnce() async throws {
    let folder = try TemporaryFolder()
    // Each child notes how many run beside it while it waits a little.
    func flow(_ limit: String) -> String {
      """
      local workflow = require "lunar.workflow"
      local running, most = 0, 0
      return workflow "bounded" {
        workflow.step "work" {
          \(limit)
          map = function() return { 1, 2, 3, 4, 5, 6, 7, 8 } end,
          run = function(ctx, n)
            running = running + 1
            most = math.max(most, running)
            lunar.sleep(0.02)
            running = running - 1
            return n * 10
          end,
        },
        workflow.step "most" { needs = "work", run = function(ctx) print("most " .. most .. " sum " .. #ctx.steps.work.output) end },
      }
      """
    }
    for (limit, jobs, expected) in [("max_parallel = 2,", "4", "most 2"), ("", "3", "most 3"), ("max_parallel = 5,", "1", "most 1")] {
      let script = try folder.write("bounded.lua", flow(limit))
      let outcome = try await LunarProcess.run(["run", "--no-store", "--clock", "virtual", "--jobs", jobs, script])
      #expect(outcome.status == 0, "\(outcome.stderr)")
      #expect(outcome.stdout.contains(expected + " sum 8"), "\(limit) --jobs \(jobs): \(outcome.stdout)")
    }
  }

  @Test func retriesAndTimeoutsAreEachChildsAndAMapOfNothingOutputsAnEmptyList() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "each.lua",
      """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "each" {
        step "flaky" {
          map = function() return { "a", "b" } end,
          retry = { attempts = 3 },
          run = function(ctx, item)
            if ctx.attempt < 2 then error(item .. " is flaky") end
            return item .. ctx.attempt
          end,
        },
        step "slow" {
          map = function() return { 0.01, 5 } end,
          timeout = 0.5,
          continue_on_error = true,
          run = function(ctx, seconds) lunar.sleep(seconds) return seconds end,
        },
        step "none" { map = function() return {} end, run = function() error("never runs") end },
        step "after" {
          needs = { "flaky", "slow", "none" },
          run = function(ctx)
            print("flaky " .. table.concat(ctx.steps.flaky.output, " ") .. " none " .. #ctx.steps.none.output)
          end,
        },
      }
      """)
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let outcome = try await LunarProcess.run(["run", "--store", store, "--clock", "virtual", script], in: folder.url)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("flaky a2 b2 none 0"), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("step \"slow[2]\": timed out after 0.5s"), "\(outcome.stdout)")
    #expect(!outcome.stdout.contains("slow[1] failed"), "\(outcome.stdout)")
    let shown = try await LunarProcess.run(["runs", "show", "--store", store, "last"], in: folder.url)
    #expect(shown.stdout.contains(#/flaky\[1\]\s+succeeded\s+2/#), "\(shown.stdout)")
  }

  @Test func usesWithAFunctionOfEachItemAndExecuteGivesEachChildsResult() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "square.lua",
      """
      local workflow = require "lunar.workflow"
      local actions = require "lunar.actions"
      actions.define("square", function(ctx, n) return n * n end)
      local wf = workflow "squares" {
        workflow.step "squares" {
          map = function() return { 1, 2, 3 } end,
          uses = "square",
          with = function(ctx, item) return item + 1 end,
        },
      }
      local outcome = workflow.execute(wf, { quiet = true })
      print(outcome.ok, table.concat(outcome.results.squares.output, ","), outcome.results["squares[3]"].output,
        outcome.results["squares[3]"].status)
      """)
    for store in [["--no-store"], []] {
      let outcome = try await LunarProcess.run(["run"] + store + [script], in: folder.url)
      #expect(outcome.status == 0, "\(outcome.stderr)")
      #expect(outcome.stdout.contains("true\t4,9,16\t16\tsucceeded"), "\(store): \(outcome.stdout)")
    }
  }

  @Test func badMapFieldsAreErrorsAtTheUsersLine() async throws {
    let folder = try TemporaryFolder()
    func flow(_ fields: String) -> String {
      """
      local workflow = require "lunar.workflow"
      return workflow "bad" {
        workflow.step "fan" { \(fields) },
      }
      """
    }
    for (fields, message) in [
      ("map = 5, run = print", "bad.lua:3: step \"fan\": 'map' must be a function returning the list of items, got number"),
      ("map = function() return {} end, run = print, max_parallel = 0",
       "bad.lua:3: step \"fan\": 'max_parallel' must be a positive integer, got 0"),
      ("map = function() return {} end, run = print, max_parallel = 1.5",
       "bad.lua:3: step \"fan\": 'max_parallel' must be a positive integer, got 1.5"),
      ("run = print, max_parallel = 2", "bad.lua:3: step \"fan\": 'max_parallel' is for a step with 'map'"),
      ("map = function() return {} end, uses = 'x', with = { 1 }",
       "bad.lua:3: step \"fan\": 'with' of a step with 'map' must be a function (ctx, item), got table"),
    ] {
      let script = try folder.write("bad.lua", flow(fields))
      let outcome = try await LunarProcess.run(["run", "--no-store", script])
      #expect(outcome.status != 0)
      #expect(outcome.stderr.contains(message), "\(fields): \(outcome.stderr)")
    }
    for (fields, message) in [
      ("map = function() return { a = 1 } end, run = print",
       "bad.lua:3: step \"fan\": 'map' must return a list of items, got a table with other keys"),
      ("map = function() return 'eu' end, run = print", "bad.lua:3: step \"fan\": 'map' must return a list of items, got string"),
      ("map = function() error('no items') end, run = print", "bad.lua:3: no items"),
    ] {
      let script = try folder.write("bad.lua", flow(fields))
      let outcome = try await LunarProcess.run(["run", "--no-store", script])
      #expect(outcome.status == 1)
      #expect((outcome.stdout + outcome.stderr).contains(message), "\(fields): \(outcome.stdout) \(outcome.stderr)")
    }
  }

  @Test func aStepNamedAsAChildOfAMappedStepIsRefused() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "twins.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "twins" {
        workflow.step "x" { map = function() return { 1 } end, run = print },
        workflow.step "x[1]" { run = print },
      }
      """)
    let outcome = try await LunarProcess.run(["run", "--no-store", script])
    #expect(outcome.status == 1)
    #expect(
      outcome.stderr.contains("twins.lua:4: workflow \"twins\": step \"x[1]\" has the name of a child of step \"x\", which has 'map'"),
      "\(outcome.stderr)")
  }

  @Test func aStoreRefusesAChildsInputThatCannotBeStored() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "fn.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "fn" {
        workflow.step "fan" { map = function() return { 1 } end, with = function(ctx, item) return { f = print } end,
          uses = "nothing" },
      }
      """)
    let outcome = try await LunarProcess.run(["run", script], in: folder.url)
    #expect(outcome.status == 1)
    #expect(outcome.stdout.contains("fn.lua:3: step \"fan[1]\": "), "\(outcome.stdout)")
  }
}
