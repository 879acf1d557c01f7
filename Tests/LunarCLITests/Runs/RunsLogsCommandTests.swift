import Foundation
import Testing
import TestSupport

/// `lunar runs logs` and the filters of `lunar runs show`, as a user runs
/// them: real runs of `lunar run` in a real store in a temporary folder.
@Suite struct RunsLogsCommandTests {
  /// A step that prints, one that fails twice before it succeeds (its
  /// attempts counted in a file, as ctx.attempt may not count them), and
  /// output before the run.
  static let flaky = #"""
    local workflow = require "lunar.workflow"
    local step = workflow.step
    print("outside")
    return workflow "flaky" {
      step "hello" { run = function()
        print("hello from a step")
        io.stderr:write("a warning\n")
        return 42
      end },
      step "retry" { needs = { "hello" }, retry = { attempts = 3, backoff = 0 }, run = function()
        local f = io.open("tries", "r")
        local tries = (f and tonumber(f:read("a")) or 0) + 1
        if f then f:close() end
        f = assert(io.open("tries", "w"))
        f:write(tries)
        f:close()
        io.write("try ", tries, "\n")
        if tries < 3 then error("not yet", 0) end
        return "done"
      end },
    }
    """#

  struct Fixture {
    let folder: TemporaryFolder
    var store: String { "sqlite:" + folder.url.appendingPathComponent("runs.db").path }

    init() throws {
      folder = try TemporaryFolder()
      try folder.write("flaky.lua", RunsLogsCommandTests.flaky)
    }

    func lunar(_ arguments: [String]) async throws -> LunarProcess.Outcome {
      try await LunarProcess.run(arguments, in: folder.url)
    }
  }

  @Test func logsPrintsEveryStepAttemptUnderAHeader() async throws {
    let fixture = try Fixture()
    let run = try await fixture.lunar(["run", "--store", fixture.store, "flaky.lua"])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")

    let all = try await fixture.lunar(["runs", "logs", "--store", fixture.store, "last"])
    #expect(all.status == 0, "\(all.stderr)")
    #expect(
      all.stdout == """
        ==> step hello, attempt 1 <==
        hello from a step
        a warning
        ==> step retry, attempt 1 <==
        try 1
        ==> step retry, attempt 2 <==
        try 2
        ==> step retry, attempt 3 <==
        try 3

        """)

    let one = try await fixture.lunar(["runs", "logs", "--store", fixture.store, "1", "retry", "--attempt", "2"])
    #expect(one.status == 0, "\(one.stderr)")
    #expect(one.stdout == "try 2\n", "one attempt's bytes alone")
    let step = try await fixture.lunar(["runs", "logs", "--store", fixture.store, "last", "hello"])
    #expect(step.stdout == "==> step hello, attempt 1 <==\nhello from a step\na warning\n")
  }

  @Test func logsRefusesWhatTheRunDoesNotHave() async throws {
    let fixture = try Fixture()
    #expect(try await fixture.lunar(["run", "--store", fixture.store, "flaky.lua"]).status == 0)
    let cases: [([String], Int32, String)] = [
      (["last", "nope"], 1, "lunar: run 1 in \(fixture.store) has no step 'nope'\n"),
      (["last", "retry", "--attempt", "4"], 1, "lunar: step 'retry' of run 1 has no attempt 4 (it made 3)\n"),
      (["last", "retry", "--attempt", "0"], 2, "lunar: --attempt needs a positive attempt number, got '0'\nTry 'lunar help runs'.\n"),
      (["last", "--attempt", "1"], 2, "lunar: --attempt needs a STEP: runs logs RUN STEP --attempt N\nTry 'lunar help runs'.\n"),
      (["7"], 1, "lunar: no run 7 in \(fixture.store)\n"),
      ([], 2, "lunar: runs logs needs a RUN: a run id or last\nTry 'lunar help runs'.\n"),
    ]
    for (arguments, status, message) in cases {
      let outcome = try await fixture.lunar(["runs", "logs", "--store", fixture.store] + arguments)
      #expect(outcome.status == status, "\(arguments): \(outcome.stderr)")
      #expect(outcome.stderr == message, "\(arguments)")
      #expect(outcome.stdout.isEmpty)
    }
    let misplaced = try await fixture.lunar(["runs", "show", "--store", fixture.store, "last", "--follow"])
    #expect(misplaced.status == 2 && misplaced.stderr.hasPrefix("lunar: --follow is for runs logs, not for runs show\n"))
  }

  /// Durations vary from run to run; everything else is compared byte for byte.
  private static func normalized(_ text: String) -> String {
    text.replacingOccurrences(of: #"[0-9]+\.[0-9]+s"#, with: "Ns", options: .regularExpression)
  }

  @Test func liveOutputIsTheSameWithOrWithoutLogs() async throws {
    let fixture = try Fixture()
    let kept = try await fixture.lunar(["run", "--store", fixture.store, "flaky.lua"])
    try FileManager.default.removeItem(at: fixture.folder.url.appendingPathComponent("tries"))
    let notKept = try await fixture.lunar(["run", "--store", fixture.store, "--no-logs", "flaky.lua"])
    #expect(kept.status == 0 && notKept.status == 0, "\(kept.stderr)\(notKept.stderr)")
    #expect(Self.normalized(kept.stdout) == Self.normalized(notKept.stdout))
    #expect(kept.stderr == notKept.stderr)
    #expect(kept.stdout.hasPrefix("outside\n[flaky] step hello started\nhello from a step\n"), "\(kept.stdout)")
    #expect(kept.stdout.contains("\ntry 1\n[flaky] step retry attempt 1 failed: not yet; retrying\ntry 2\n"), "\(kept.stdout)")
    #expect(kept.stderr == "a warning\n")
    let none = try await fixture.lunar(["runs", "logs", "--store", fixture.store, "last"])
    #expect(none.status == 0 && none.stdout.isEmpty, "--no-logs kept nothing: \(none.stdout)")
    #expect(none.stderr == "lunar: run 2 in \(fixture.store) has no stored logs\n")
  }

  @Test func followPrintsARunningStepsLinesAsTheyCome() async throws {
    let fixture = try Fixture()
    try fixture.folder.write(
      "slow.lua",
      #"""
      local workflow = require "lunar.workflow"
      return workflow "slow" {
        workflow.step "wait" { run = function()
          print("first")
          while not io.open("gate") do lunar.sleep(0.02) end
          print("second")
        end },
        workflow.step "after" { needs = { "wait" }, run = function() print("third") end },
      }
      """#)
    let run = try LunarProcess.start(["run", "--store", fixture.store, "slow.lua"], in: fixture.folder.url)
    try await run.waitForOutput("first\n")
    let follow = try LunarProcess.start(["runs", "logs", "--store", fixture.store, "--follow", "last"], in: fixture.folder.url)
    // The step is still waiting: its first line reaches the follower from the store.
    try await follow.waitForOutput("==> step wait, attempt 1 <==\nfirst\n")
    _ = FileManager.default.createFile(atPath: fixture.folder.url.appendingPathComponent("gate").path, contents: Data())
    let ran = try await run.wait()
    #expect(ran.status == 0, "\(ran.stderr)")
    let followed = try await follow.wait()
    #expect(followed.status == 0, "\(followed.stderr)")
    #expect(followed.stdout == "==> step wait, attempt 1 <==\nfirst\nsecond\n==> step after, attempt 1 <==\nthird\n")
  }

  @Test func showFiltersStepsAndPrintsOutputsOnlyWhenAsked() async throws {
    let fixture = try Fixture()
    try fixture.folder.write(
      "mixed.lua",
      #"""
      local workflow = require "lunar.workflow"
      return workflow "mixed" {
        workflow.step "good" { run = function() return { answer = 42 } end },
        workflow.step "bad" { run = function() error("broken", 0) end },
        workflow.step "also good" { run = function() return "fine" end },
      }
      """#)
    #expect(try await fixture.lunar(["run", "--store", fixture.store, "mixed.lua"]).status == 1)
    func steps(_ arguments: [String]) async throws -> [String] {
      let outcome = try await fixture.lunar(["runs", "show", "--store", fixture.store, "last"] + arguments)
      #expect(outcome.status == 0, "\(outcome.stderr)")
      return Array(outcome.stdout.components(separatedBy: "\n\n")[1].split(separator: "\n").dropFirst().map(String.init))
        .map { Self.normalized($0).replacingOccurrences(of: #" +"#, with: " ", options: .regularExpression) }
    }
    #expect(try await steps([]) == ["good succeeded 1 Ns", "bad failed 1 Ns", " error: broken", "also good succeeded 1 Ns"])
    #expect(
      try await steps(["--outputs"]) == [
        "good succeeded 1 Ns", " output: { answer = 42 }", "bad failed 1 Ns", " error: broken", "also good succeeded 1 Ns",
        " output: \"fine\"",
      ])
    #expect(try await steps(["--status", "failed"]) == ["bad failed 1 Ns", " error: broken"])
    #expect(try await steps(["--step", "also good", "--outputs"]) == ["also good succeeded 1 Ns", " output: \"fine\""])
    #expect(try await steps(["--status", "succeeded", "--step", "bad"]) == [])

    let unknown = try await fixture.lunar(["runs", "show", "--store", fixture.store, "last", "--step", "nope"])
    #expect(unknown.status == 1 && unknown.stderr == "lunar: run 1 in \(fixture.store) has no step 'nope'\n")
    let badStatus = try await fixture.lunar(["runs", "show", "--store", fixture.store, "last", "--status", "done"])
    #expect(badStatus.status == 2, "\(badStatus.stderr)")
    #expect(badStatus.stderr.hasPrefix("lunar: --status is one of 'succeeded', 'failed', 'skipped', 'reused', got 'done'\n"))
    let onList = try await fixture.lunar(["runs", "--store", fixture.store, "--outputs"])
    #expect(onList.status == 2 && onList.stderr.hasPrefix("lunar: --outputs is for runs show, not for the list of runs\n"))
  }
}
