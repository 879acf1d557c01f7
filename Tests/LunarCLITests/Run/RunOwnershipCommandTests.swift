import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// A workflow of `count` steps in a chain; step `hold` (if any) waits until
/// the file `go` exists, its wait cancellable; every step prints `ready N`
/// when it starts and `finally N` when it is cancelled.
private func chain(count: Int = 4, hold: Int? = nil, go: String = "") -> String {
  """
  local workflow = require "lunar.workflow"
  local steps = {}
  for i = 1, \(count) do
    steps[#steps + 1] = workflow.step("s" .. i) { needs = i > 1 and { "s" .. (i - 1) } or nil, run = function()
      print("ready " .. i)
      local ok, err = pcall(function()
        if i == \(hold ?? -1) then
          while not io.open("\(go)") do lunar.sleep(0.02) end
        end
      end)
      if not ok then print("finally " .. i); error(err, 0) end
      return i
    end }
  end
  return workflow "chain" (steps)
  """
}

/// Signals, owners and cancellation of `lunar run`'s workflow runs, seen from the command line.
@Suite struct RunOwnershipCommandTests {
  @Test(arguments: [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT"), (SIGHUP, "SIGHUP")])
  func aStopSignalCancelsTheRunRecordsItAndPrintsTheSummary(signal: Int32, name: String) async throws {
    let folder = try TemporaryFolder()
    let store = folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("chain.lua", chain(hold: 2, go: folder.url.appendingPathComponent("never").path))
    // Standard output is a file, as when piped or redirected.
    let running = try LunarProcess.start(["run", "--store", "sqlite:" + store, script])
    try await running.waitForOutput("[chain] step s2 started")
    running.send(signal)
    let outcome = try await running.wait()
    #expect(outcome.exitedNormally && outcome.status == 128 + signal, "\(outcome.status) \(outcome.stderr)")
    // The step's own cleanup ran, and the summary was printed.
    #expect(outcome.stdout.contains("finally 2\n"), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("workflow chain: cancelled by \(name) in "), "\(outcome.stdout)")
    let run = try #require(try SQLiteRunStore(path: store).lastRun(workflow: nil, file: nil))
    #expect(run.status == .cancelled && run.stoppedBy == name, "\(run)")
    let listed = try await LunarProcess.run(["runs", "--store", "sqlite:" + store])
    #expect(listed.stdout.contains("cancelled (\(name))"), "\(listed.stdout)")
  }

  @Test func aKilledRunLeavesEveryProgressLineButTheOneBeingWritten() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("chain.lua", chain(count: 6, hold: 5, go: folder.url.appendingPathComponent("never").path))
    let running = try LunarProcess.start(["run", "--store", "sqlite:" + folder.url.appendingPathComponent("runs.db").path, script])
    // Nine progress lines: s1 to s4 started and succeeded, s5 started.
    try await running.waitForOutput("[chain] step s5 started")
    running.send(SIGKILL)
    _ = try await running.wait()
    let lines = try running.stdout.contents().split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.filter { $0.hasPrefix("[chain] step ") }.count >= 8, "\(lines)")
  }

  @Test func aResumeOfALiveRunIsRefusedAndTheLiveRunFinishesUntouched() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let go = folder.url.appendingPathComponent("go").path
    let script = try folder.write("chain.lua", chain(hold: 2, go: go))
    let live = try LunarProcess.start(["run", "--store", store, script])
    try await live.waitForOutput("[chain] step s2 started")
    let resume = try await LunarProcess.run(["run", "--store", store, "--resume", script])
    #expect(resume.status == 1)
    #expect(
      resume.stderr.contains("run 1 is still running: held by process \(live.process.processIdentifier) on \(NewRun.currentHost) since "),
      "\(resume.stderr)")
    #expect(resume.stderr.contains("cancel it with 'lunar runs cancel 1'"), "\(resume.stderr)")
    #expect(!resume.stdout.contains("ready"), "\(resume.stdout)")
    _ = FileManager.default.createFile(atPath: go, contents: nil)
    let finished = try await live.wait()
    #expect(finished.status == 0, "\(finished.stderr)")
    let runs = try await LunarProcess.run(["runs", "--store", store])
    // The refused resume recorded no run.
    #expect(runs.stdout.split(separator: "\n").count == 2, "\(runs.stdout)")
    #expect(runs.stdout.contains("succeeded") && !runs.stdout.contains("cancelled"), "\(runs.stdout)")
  }

  @Test func aKilledRunShowsTheStepsItWasRunningAndThoseItNeverStarted() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("chain.lua", chain(count: 4, hold: 2, go: folder.url.appendingPathComponent("never").path))
    let running = try LunarProcess.start(["run", "--store", store, script])
    try await running.waitForOutput("[chain] step s2 started")
    // Waits for a heartbeat to have recorded s2 as running.
    var shown = ""
    let deadline = Date().addingTimeInterval(60)
    while !shown.contains("\ns2    running ") && Date() < deadline {
      shown = try await LunarProcess.run(["runs", "show", "last", "--store", store]).stdout
    }
    #expect(shown.contains("\ns3    not started"), "\(shown)")
    running.send(SIGKILL)
    _ = try await running.wait()
    let show = try await LunarProcess.run(["runs", "show", "last", "--store", store])
    #expect(show.stdout.contains("\nstatus     interrupted (process "), "\(show.stdout)")
    #expect(show.stdout.contains("\ns1    succeeded "), "\(show.stdout)")
    #expect(show.stdout.contains("\ns2    stopped "), "\(show.stdout)")
    #expect(show.stdout.contains("\ns3    not started"), "\(show.stdout)")
    #expect(show.stdout.contains("\ns4    not started"), "\(show.stdout)")
  }

  @Test func cancellingAFinishedOrUnknownRunIsRefused() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("runs.db").path
    let script = try folder.write("chain.lua", chain(count: 1))
    #expect(try await LunarProcess.run(["run", "--store", store, script]).status == 0)
    let finished = try await LunarProcess.run(["runs", "cancel", "last", "--store", store])
    #expect(finished.status == 1)
    #expect(finished.stderr == "lunar: run 1 in \(store) already finished (succeeded): nothing to cancel\n")
    let unknown = try await LunarProcess.run(["runs", "cancel", "7", "--store", store])
    #expect(unknown.status == 1)
    #expect(unknown.stderr == "lunar: no run 7 in \(store)\n")
  }

  @Test func runsCancelFromASecondProcessStopsARunningRunOnSQLite() async throws {
    let folder = try TemporaryFolder()
    try await Self.cancelFromASecondProcess(store: "sqlite:" + folder.url.appendingPathComponent("runs.db").path, in: folder)
  }

  /// Starts a run that waits forever in step s2, cancels it with `lunar
  /// runs cancel` and checks it stopped as a request stops it.
  static func cancelFromASecondProcess(store: String, in folder: TemporaryFolder) async throws {
    let script = try folder.write("chain.lua", chain(hold: 2, go: folder.url.appendingPathComponent("never").path))
    let running = try LunarProcess.start(["run", "--store", store, script])
    try await running.waitForOutput("[chain] step s2 started")
    let cancel = try await LunarProcess.run(["runs", "cancel", "last", "--store", store])
    #expect(cancel.status == 0, "\(cancel.stderr)")
    #expect(cancel.stdout.contains("cancel requested"), "\(cancel.stdout)")
    // Waits on the run's end, whenever its owner sees the request.
    let outcome = try await running.wait(timeout: 60)
    #expect(outcome.status == 1, "\(outcome.stderr)")
    #expect(outcome.stdout.contains("finally 2\n"), "\(outcome.stdout)")
    #expect(outcome.stdout.contains("workflow chain: cancelled by request in "), "\(outcome.stdout)")
    let shown = try await LunarProcess.run(["runs", "show", "last", "--store", store])
    #expect(shown.stdout.contains("status     cancelled by request"), "\(shown.stdout)")
  }
}

/// `lunar runs cancel` against a PostgreSQL store shared by two processes.
@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresRunOwnershipCommandTests {
  @Test func runsCancelFromASecondProcessStopsARunningRunOnPostgreSQL() async throws {
    let schema = try TestPostgresSchema()
    try await RunOwnershipCommandTests.cancelFromASecondProcess(store: schema.url, in: try TemporaryFolder())
  }
}
