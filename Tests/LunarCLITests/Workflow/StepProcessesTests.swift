import Foundation
import Testing
import TestSupport

/// `lunar run --processes N`: steps run in N `lunar worker --steps`
/// processes sharing the run's store, and share only outputs.
@Suite struct StepProcessesTests {
  static let backends = ["sqlite"] + (TestPostgresSchema.isAvailable ? ["postgres"] : [])

  /// A workflow whose steps each say which process ran them (the first
  /// field of /proc/self/stat); `flaky` fails its first attempt, `broken`
  /// every one, and `late` reads the file's argument as the worker loaded it.
  static let flow = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local label = arg[1] or "no argument"
    local function pid() local f = assert(io.open("/proc/self/stat")) local n = f:read("n") f:close() return n end
    return workflow "spread" {
      step "a" { run = function() return { pid = pid() } end },
      step "b" { run = function() return { pid = pid() } end },
      step "flaky" { retry = { attempts = 3 }, run = function(ctx)
        if ctx.attempt < 2 then error("not yet (attempt " .. ctx.attempt .. ")") end
        return ctx.attempt
      end },
      step "broken" { run = function() error("always broken") end },
      step "after broken" { needs = "broken", run = function() return 1 end },
      step "late" { needs = { "a", "b", "flaky" }, run = function(ctx)
        print(("late: %s, a in %d, b in %d, flaky took %d, me in %d, host %d"):format(label, ctx.steps.a.output.pid,
          ctx.steps.b.output.pid, ctx.steps.flaky.output, pid(), ctx.steps.host and 1 or 0))
      end },
    }
    """

  /// The processes whose command line holds `text`.
  static func processes(mentioning text: String) -> [Int32] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry in
      guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { return nil }
      return String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).contains(text) ? pid : nil
    }
  }

  @Test(arguments: backends) func stepsRunInWorkerProcessesWithRetriesAndFailures(backend: String) async throws {
    let folder = try TemporaryFolder()
    let schema = backend == "postgres" ? try TestPostgresSchema() : nil
    let store = schema?.url ?? "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("spread.lua", Self.flow)
    let running = try LunarProcess.start(["run", "--store", store, "--processes", "2", script, "blue"], in: folder.url)
    let outcome = try await running.wait(timeout: 60)
    #expect(outcome.status == 1, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("step flaky attempt 1 failed: "), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("not yet (attempt 1)"), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("always broken"), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("step after broken skipped (needs broken)"), "\(outcome.stdout)")
    let line = try #require(outcome.stdout.split(separator: "\n").first { $0.hasPrefix("late: ") }, "\(outcome.stdout)")
    let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int32($0) }
    #expect(line.hasPrefix("late: blue, "), "the workers load the file with the run's arguments: \(line)")
    #expect(numbers.count == 5 && numbers[2] == 2 && numbers[4] == 0, "\(line)")
    #expect(outcome.stderr.contains("lunar: workflow spread failed: step broken failed"), "\(outcome.stderr)")
    let pids = Set([numbers[0], numbers[1], numbers[3]])
    #expect(!pids.contains(running.process.processIdentifier), "no step ran in the run's own process")
    #expect(Self.processes(mentioning: script).isEmpty, "the workers ended with the run")

    let shown = try await LunarProcess.run(["runs", "show", "--store", store, "last"], in: folder.url)
    #expect(shown.stdout.contains(#/flaky\s+succeeded\s+2/#), "\(shown.stdout)")
    #expect(shown.stdout.contains(#/broken\s+failed\s+1/#), "\(shown.stdout)")
  }

  @Test func noStoreRunsInATemporaryStoreThatIsRemoved() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "map.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "squares" {
        workflow.step "squares" { map = function() return { 1, 2, 3, 4 } end, run = function(ctx, n) return n * n end },
        workflow.step "sum" { needs = "squares", run = function(ctx)
          local s = 0 for _, v in ipairs(ctx.steps.squares.output) do s = s + v end print("sum " .. s) end },
      }
      """)
    let temporary = folder.url.appendingPathComponent("tmp")
    try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)
    let outcome = try await LunarProcess.run(
      ["run", "--no-store", "--processes", "2", script], in: folder.url, environment: ["TMPDIR": temporary.path], timeout: 60)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("sum 30"), "\(outcome.stdout)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty, "the temporary store is removed")
  }

  @Test func workersStopWhenTheRunIsKilled() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "slow.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "slow" {
        workflow.step "wait" { run = function() print("waiting") io.stdout:flush() lunar.sleep(60) end },
      }
      """)
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let run = try LunarProcess.start(["run", "--store", store, "--processes", "1", script], in: folder.url)
    try await run.waitForOutput("waiting", timeout: 30)
    #expect(!Self.processes(mentioning: script).filter { $0 != run.process.processIdentifier }.isEmpty, "a worker runs the step")
    run.send(SIGKILL)
    _ = try? await run.wait()
    let deadline = Date().addingTimeInterval(15)
    while !Self.processes(mentioning: script).isEmpty && Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
    #expect(Self.processes(mentioning: script).isEmpty, "the worker saw its parent die and stopped")
  }

  @Test func aWorkerThatDiesStopsTheRunInsteadOfHangingIt() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "exits.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "exits" { workflow.step "gone" { run = function() os.exit(3) end } }
      """)
    let outcome = try await LunarProcess.run(["run", "--no-store", "--processes", "1", script], in: folder.url, timeout: 30)
    #expect(outcome.status == 143, "\(outcome.stdout) \(outcome.stderr)")
    #expect(outcome.stderr.contains(#/step worker \d+ ended \(status 3\) while the run needed it: stopping the run/#), "\(outcome.stderr)")
  }

  @Test func aFileThatRunsItsWorkflowItselfIsRefusedInTheWorkers() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write(
      "runs.lua",
      """
      local workflow = require "lunar.workflow"
      local wf = workflow "itself" { workflow.step "a" { run = function() lunar.sleep(5) end } }
      workflow.run(wf)
      """)
    let outcome = try await LunarProcess.run(["run", "--no-store", "--processes", "2", script], in: folder.url, timeout: 30)
    #expect(outcome.status != 0)
    #expect(
      outcome.stderr.contains("a file run with --processes must return its workflow, not run it (its workers load the file)"),
      "\(outcome.stderr)")
  }

  @Test func badProcessesFlagsAreUsageErrors() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("plain.lua", "print('not a workflow')\n")
    for (arguments, message) in [
      (["--processes", "0", script], "--processes needs a number from 1 to 256, got '0'"),
      (["--processes", "257", script], "--processes needs a number from 1 to 256, got '257'"),
      (["--processes", "two", script], "--processes needs a number from 1 to 256, got 'two'"),
      (["--processes", "2", "--sandbox", script], "--processes cannot be used with --sandbox"),
      (["--processes", "2", "-"], "--processes needs a script FILE its workers can load, not standard input"),
      (["--processes", "2", "--no-store", script], "'--processes' is for a file that returns a workflow"),
    ] {
      let outcome = try await LunarProcess.run(["run"] + arguments, in: folder.url)
      #expect(outcome.status == 2, "\(arguments): \(outcome.stderr)")
      #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
    }
    for (arguments, message) in [
      (["worker", "--steps"], "--steps needs a workflow FILE, and cannot be used with --runs"),
      (["worker", "--steps", "--runs", "1", script], "--steps needs a workflow FILE, and cannot be used with --runs"),
      (["worker", "--parent", "x", script], "--parent needs a positive number, got 'x'"),
      (["worker", "--parent", "99999999999", script], "--parent needs a process id, got '99999999999'"),
      (["worker", script, "extra"], "unexpected argument 'extra'"),
    ] {
      let outcome = try await LunarProcess.run(arguments, in: folder.url)
      #expect(outcome.status == 2, "\(arguments): \(outcome.stderr)")
      #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
    }
  }
}
