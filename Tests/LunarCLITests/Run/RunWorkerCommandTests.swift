import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `lunar worker --runs N` running submitted runs in processes of their own,
/// taking over the runs of a dead worker, and refusing changed files.
@Suite struct RunWorkerCommandTests {
  /// The stores the worker's main tests run on: SQLite, and PostgreSQL
  /// when the test script's server is there.
  static let backends = ["sqlite"] + (TestPostgresSchema.isAvailable ? ["postgres"] : [])

  /// A folder with a workflow whose steps note each time they run (in
  /// `marks`), whose step b holds until the file `go` exists, and a store.
  struct Place {
    let folder: TemporaryFolder
    /// The PostgreSQL schema the store is in, for a place on PostgreSQL.
    let schema: TestPostgresSchema?
    var path: String { folder.url.appendingPathComponent("store.db").path }
    var store: String { schema?.url ?? "sqlite:" + path }
    var marks: String { folder.url.appendingPathComponent("marks").path }
    var go: String { folder.url.appendingPathComponent("go").path }

    init(_ backend: String = "sqlite") throws {
      folder = try TemporaryFolder()
      schema = backend == "postgres" ? try TestPostgresSchema() : nil
      _ = try folder.write("flow.lua", Self.flow)
    }

    /// The place's store, opened as a worker opens it.
    func openStore() throws -> any SchedulingStore {
      try StoreLocation(parsing: store, currentFolder: folder.url.path).openSchedulingStore()
    }

    static let flow = """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      local tag = ...
      local function mark(text)
        local f = assert(io.open("marks", "a"))
        f:write(text, "\\n")
        f:close()
      end
      return workflow "flow" {
        step "a" { run = function() mark("a " .. tag) return tag end },
        step "b" { needs = "a", run = function(ctx)
          mark("b " .. tag .. " attempt " .. ctx.attempt)
          while not io.open("go") do lunar.sleep(0.02) end
          return ctx.steps.a.output .. "!"
        end },
      }
      """

    func lunar(_ arguments: [String], timeout: TimeInterval = 20) async throws -> LunarProcess.Outcome {
      try await LunarProcess.run([arguments[0], "--store", store] + arguments.dropFirst(), in: folder.url, timeout: timeout)
    }

    func worker(_ extra: [String] = []) throws -> LunarProcess.Running {
      try LunarProcess.start(["worker", "--store", store, "--runs", "1", "--lease", "3"] + extra, in: folder.url)
    }

    func markLines() throws -> [String] {
      (try? String(contentsOfFile: marks, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }

    /// Waits until `marks` has `line`.
    func waitForMark(_ line: String) async throws {
      for _ in 0..<1500 {
        if try markLines().contains(line) { return }
        try await Task.sleep(for: .milliseconds(20))
      }
      Issue.record("never marked \(line): \(try markLines())")
    }

    func open() { _ = FileManager.default.createFile(atPath: go, contents: nil) }
  }

  @Test(arguments: backends) func twoWorkersRunEverySubmittedRunOnceWithItsArguments(backend: String) async throws {
    let place = try Place(backend)
    place.open()
    for tag in ["t1", "t2", "t3", "t4"] {
      let submitted = try await place.lunar(["submit", "flow.lua", tag])
      #expect(submitted.status == 0, "\(submitted.stderr)")
    }
    let workers = [try place.worker(["--runs", "2"]), try place.worker()]
    for run in 1...4 {
      let waited = try await place.lunar(["runs", "wait", "\(run)", "--timeout", "60"], timeout: 70)
      #expect(waited.status == 0 && waited.stdout == "succeeded\n", "run \(run): \(waited.stdout) \(waited.stderr)")
    }
    for worker in workers { worker.send(SIGTERM) }
    for worker in workers {
      let stopped = try await worker.wait()
      #expect(stopped.status == 0, "\(stopped.stderr)")
    }
    let marks = try place.markLines().sorted()
    #expect(marks == ["t1", "t2", "t3", "t4"].flatMap { ["a \($0)", "b \($0) attempt 1"] }.sorted(), "\(marks)")
    let store = try place.openStore()
    for run in 1...4 {
      let steps = try store.steps(of: RunID(Int64(run)))
      #expect(steps.first { $0.name == "b" }?.output == [.string(LuaString("t\(run)!"))], "\(steps)")
      #expect(try store.run(RunID(Int64(run)))?.workflow == "flow")
    }
  }

  @Test(arguments: backends) func aDeadWorkersRunIsTakenOverAndNoCommittedStepRunsAgain(backend: String) async throws {
    let place = try Place(backend)
    _ = try await place.lunar(["submit", "flow.lua", "t"])
    let first = try place.worker()
    try await place.waitForMark("b t attempt 1")
    // Once a heartbeat recorded b as running, the host dies: its worker
    // and the run's process, at once.
    let store = try place.openStore()
    var owner = try #require(try store.run(RunID(1)))
    for _ in 0..<1500 where owner.running != ["b"] {
      try await Task.sleep(for: .milliseconds(20))
      owner = try #require(try store.run(RunID(1)))
    }
    #expect(owner.ownerToken == ClaimToken(2) && owner.pid != first.process.processIdentifier)
    kill(owner.pid, SIGKILL)
    first.send(SIGKILL)
    _ = try await first.wait()
    let second = try place.worker()
    try await place.waitForMark("b t attempt 2")
    place.open()
    let waited = try await place.lunar(["runs", "wait", "1", "--timeout", "60"], timeout: 70)
    #expect(waited.status == 0, "\(waited.stdout) \(waited.stderr)")
    second.send(SIGTERM)
    let stopped = try await second.wait()
    #expect(stopped.stderr.contains("run 1: took over (its owner was lost)"), "\(stopped.stderr)")
    // Step a committed before the host died: it never ran again.
    #expect(try place.markLines() == ["a t", "b t attempt 1", "b t attempt 2"])
    let steps = try store.steps(of: RunID(1))
    #expect(steps.map(\.name) == ["a", "b"] && steps[1].attempts == 2 && steps[1].output == [.string("t!")], "\(steps)")
    let shown = try await place.lunar(["runs", "show", "1"])
    #expect(shown.stdout.contains("\nowner      token 4, process "), "\(shown.stdout)")
  }

  /// `lunar submit --resume RUN` is `lunar run --resume RUN` on a worker:
  /// the unchanged steps are reused from RUN; `--force STEP` runs STEP again
  /// anyway (a rerun from a step, as `lunar serve`'s page submits it); a
  /// forced step the workflow does not have fails the run, saying so.
  @Test(arguments: backends) func aSubmittedResumeReusesTheEarlierRunAndRerunsWhatItForces(backend: String) async throws {
    let place = try Place(backend)
    place.open()
    let first = try await place.lunar(["run", "flow.lua", "t"])
    #expect(first.status == 0, "\(first.stderr)")
    for extra in [["--resume", "1"], ["--resume", "1", "--force", "b"], ["--resume", "2", "--force", "nope"]] {
      let submitted = try await place.lunar(["submit"] + extra + ["flow.lua", "t"])
      #expect(submitted.status == 0, "\(submitted.stderr)")
    }
    let worker = try place.worker()
    for (run, outcome) in [(2, "succeeded"), (3, "succeeded"), (4, "failed")] {
      let waited = try await place.lunar(["runs", "wait", "\(run)", "--timeout", "60"], timeout: 70)
      #expect(waited.stdout == "\(outcome)\n", "run \(run): \(waited.stdout) \(waited.stderr)")
    }
    worker.send(SIGTERM)
    _ = try await worker.wait()
    let store = try place.openStore()
    func statuses(_ run: Int64) throws -> [String] { try store.steps(of: RunID(run)).map { "\($0.name) \($0.status.rawValue)" } }
    #expect(try statuses(2) == ["a reused", "b reused"])
    #expect(try statuses(3) == ["a reused", "b succeeded"])
    #expect(try store.run(RunID(3))?.resumedFrom == RunID(1))
    #expect(try store.steps(of: RunID(3)).last?.output == [.string("t!")])
    // Run 1 ran both steps; run 3 only b again.
    #expect(try place.markLines() == ["a t", "b t attempt 1", "b t attempt 1"])
    let shown = try await place.lunar(["runs", "show", "4"])
    #expect(shown.stdout.contains("forces step \"nope\", which workflow \"flow\" has no more"), "\(shown.stdout)")
  }

  /// A worker lists itself in the store while it runs (what it serves, its
  /// heartbeats), holding work or not, and withdraws when it stops.
  @Test(arguments: backends) func aRunningWorkerIsListedInTheStoreUntilItStops(backend: String) async throws {
    let place = try Place(backend)
    let worker = try place.worker(["--runs", "2"])
    let store = try #require(try place.openStore() as? any WorkerStore)
    let name = "\(NewRun.currentHost):\(worker.process.processIdentifier)"
    var listed: WorkerPresence?
    for _ in 0..<1500 {
      listed = try store.workers().first { $0.worker.name == name }
      if listed != nil { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    let presence = try #require(listed, "never listed as \(name)")
    #expect(presence.serves == "runs (2 at once)" && presence.pid == worker.process.processIdentifier)
    #expect(!presence.isLost(at: presence.seenAt) && presence.isLost(at: presence.expiresAt))
    worker.send(SIGTERM)
    let stopped = try await worker.wait()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    #expect(try store.workers().isEmpty)
  }

  @Test(arguments: backends) func aFileChangedSinceItWasSubmittedIsRefusedWithBothFingerprints(backend: String) async throws {
    let place = try Place(backend)
    _ = try await place.lunar(["submit", "flow.lua", "t"])
    let submitted = Fingerprint(ofContent: Array(Place.flow.utf8))
    let changed = Place.flow + "-- changed\n"
    _ = try place.folder.write("flow.lua", changed)
    let worker = try place.worker()
    let waited = try await place.lunar(["runs", "wait", "1", "--timeout", "60"], timeout: 70)
    #expect(waited.status == 1 && waited.stdout == "failed\n", "\(waited.stdout) \(waited.stderr)")
    worker.send(SIGTERM)
    _ = try await worker.wait()
    let why =
      "refused: \(place.folder.url.path)/flow.lua is not the file that was submitted (submitted sha256 \(submitted.hex), found sha256 \(Fingerprint(ofContent: Array(changed.utf8)).hex))"
    let shown = try await place.lunar(["runs", "show", "1"])
    #expect(shown.stdout.contains("\nwhy        \(why)\n"), "\(shown.stdout)")
    #expect(try place.markLines().isEmpty)
  }

  @Test func aWorkerFindsFilesUnderItsRoot() async throws {
    let place = try Place()
    place.open()
    let sub = place.folder.url.appendingPathComponent("flows")
    try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
    try Data(Place.flow.utf8).write(to: sub.appendingPathComponent("flow.lua"))
    // Submitted from the root's parent as a path under it.
    _ = try await place.lunar(["submit", "flows/flow.lua", "r"])
    let worker = try LunarProcess.start(
      ["worker", "--store", place.store, "--runs", "1", "--root", place.folder.url.path], in: FileManager.default.temporaryDirectory)
    let waited = try await place.lunar(["runs", "wait", "1", "--timeout", "60"], timeout: 70)
    #expect(waited.status == 0, "\(waited.stdout) \(waited.stderr)")
    worker.send(SIGTERM)
    _ = try await worker.wait()
    // The run's process ran in the root: its marks are there.
    #expect(try place.markLines() == ["a r", "b r attempt 1"])
  }

  @Test(arguments: [
    (["worker", "--runs", "0"], "--runs needs a positive number, got '0'"),
    (["worker", "--runs", "many"], "--runs needs a positive number, got 'many'"),
    (["worker", "--root", "."], "--root is for --runs"),
    (["worker"], "missing worker file (or --runs N, to run submitted runs)"),
    (["worker", "--runs", "1", "--lease", "2"], "--lease must be at least 3 seconds with --runs"),
    (["run", "--adopt", "1", "flow.lua"], "--adopt needs RUN:TOKEN (two positive numbers), got '1'"),
    (["run", "--adopt", "0:1", "flow.lua"], "--adopt needs RUN:TOKEN (two positive numbers), got '0:1'"),
    (["run", "--adopt", "1:1", "--resume", "flow.lua"], "--adopt runs a handed-over run whole: it cannot be used with --resume"),
    (["run", "--lease", "1", "flow.lua"], "--lease needs a number of seconds from 3 to a year, got '1'"),
    (["submit", "--force", "b", "flow.lua"], "--force needs --resume RUN: the run whose other outputs are reused"),
    (["submit", "--resume", "1", "--force", "", "flow.lua"], "--force needs a step's name"),
    (["submit", "--resume", "last", "flow.lua"], "--resume needs a run's id (a positive number), not 'last'"),
    (["submit", "--resume", "-3", "flow.lua"], "--resume needs a run's id (a positive number), not '-3'"),
    (["run", "--host-runs", "flow.lua"], "--host-runs takes no FILE: lunar worker hands each run over"),
    (["run", "--host-runs", "--jobs", "2"], "--host-runs gives each run only --store, --lease and --plugin-dir: it cannot be used with --jobs"),
    (["run", "--host-runs"], "--host-runs runs what lunar worker hands over on descriptor 3, which is not its socket"),
  ])
  func badFlagsAreUsageErrors(arguments: [String], message: String) async throws {
    let place = try Place()
    let outcome = try await place.lunar(arguments)
    #expect(outcome.status == 2, "\(outcome.stderr)")
    #expect(outcome.stderr.contains(message), "\(outcome.stderr)")
  }

  /// Runs that note their process and whether they found an earlier
  /// run's global: `marks` gets `TAG PID fresh|stale` per run.
  static let noting = """
    local workflow = require "lunar.workflow"
    local tag = ...
    if tag == "exit" then os.exit(3) end
    local stat = assert(io.open("/proc/self/stat")):read("a")
    local state = LEFT_BY_AN_EARLIER_RUN and "stale" or "fresh"
    LEFT_BY_AN_EARLIER_RUN = true
    return workflow "noting" {
      workflow.step "note" { run = function()
        local f = assert(io.open("marks", "a"))
        f:write(tag, " ", stat:match("^%d+"), " ", state, "\\n")
        f:close()
      end },
    }
    """

  /// The `TAG PID STATE` lines of `place`'s marks, by tag.
  private func notes(_ place: Place) throws -> [String: (pid: String, state: String)] {
    var notes: [String: (pid: String, state: String)] = [:]
    for line in try place.markLines() {
      let words = line.split(separator: " ").map(String.init)
      if words.count == 3 { notes[words[0]] = (words[1], words[2]) }
    }
    return notes
  }

  @Test(arguments: backends) func runsOneAfterAnotherShareAWarmProcessButNeverALuaState(backend: String) async throws {
    let place = try Place(backend)
    _ = try place.folder.write("noting.lua", Self.noting)
    for tag in ["r1", "r2", "r3"] { _ = try await place.lunar(["submit", "noting.lua", tag]) }
    let worker = try place.worker()
    for run in 1...3 {
      let waited = try await place.lunar(["runs", "wait", "\(run)", "--timeout", "60"], timeout: 70)
      #expect(waited.status == 0, "run \(run): \(waited.stdout) \(waited.stderr)")
    }
    worker.send(SIGTERM)
    let stopped = try await worker.wait()
    #expect(stopped.status == 0 && stopped.stderr.contains("run 3: ended with status 0"), "\(stopped.stderr)")
    let notes = try notes(place)
    #expect(notes.count == 3 && notes.values.allSatisfy { $0.state == "fresh" }, "\(notes)")
    #expect(Set(notes.values.map(\.pid)).count == 1, "one warm process ran the three runs: \(notes)")
    #expect(notes["r1"]?.pid != "\(worker.process.processIdentifier)")
    // The warm process ended with its worker.
    let pid = try #require(notes["r1"].flatMap { Int32($0.pid) })
    #expect(kill(pid, 0) != 0 && errno == ESRCH)
  }

  @Test func aRunThatEndsItsProcessLeavesTheWorkerAndTheNextRunAFreshOne() async throws {
    let place = try Place()
    _ = try place.folder.write("noting.lua", Self.noting)
    for tag in ["r1", "exit", "r2"] { _ = try await place.lunar(["submit", "noting.lua", tag]) }
    let worker = try place.worker()
    let ended = try await place.lunar(["runs", "wait", "2", "--timeout", "60"], timeout: 70)
    #expect(ended.status == 1 && ended.stdout == "failed\n", "\(ended.stdout) \(ended.stderr)")
    let waited = try await place.lunar(["runs", "wait", "3", "--timeout", "60"], timeout: 70)
    #expect(waited.status == 0, "\(waited.stdout) \(waited.stderr)")
    let store = try place.openStore()
    #expect(try store.run(RunID(2))?.stoppedBy == "refused: its process ended with status 3 before it began")
    // An idle warm process killed from outside is replaced as well.
    let notes = try notes(place)
    let pid = try #require(notes["r2"].flatMap { Int32($0.pid) })
    #expect(notes["r1"]?.pid != notes["r2"]?.pid, "\(notes)")
    kill(pid, SIGKILL)
    // Dead (a zombie until its worker reaps it) before the next run is handed over.
    for _ in 0..<500 {
      let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
      if stat.isEmpty || stat.contains(") Z ") { break }
      try await Task.sleep(for: .milliseconds(10))
    }
    _ = try await place.lunar(["submit", "noting.lua", "r3"])
    let last = try await place.lunar(["runs", "wait", "4", "--timeout", "60"], timeout: 70)
    #expect(last.status == 0, "\(last.stdout) \(last.stderr)")
    worker.send(SIGTERM)
    let stopped = try await worker.wait()
    #expect(stopped.status == 0, "\(stopped.stderr)")
    let after = try self.notes(place)
    #expect(after["r3"].map { $0.pid != "\(pid)" && $0.state == "fresh" } == true, "\(after)")
  }

  @Test func aMissingRootIsAnError() async throws {
    let place = try Place()
    let outcome = try await place.lunar(["worker", "--runs", "1", "--root", "/nonexistent/lunar-root"])
    #expect(outcome.status == 1 && outcome.stderr == "lunar: --root /nonexistent/lunar-root: no such folder\n", "\(outcome.stderr)")
  }

  @Test func adoptingARunNoLongerHeldIsRefusedAndRecordsNothing() async throws {
    let place = try Place()
    place.open()
    _ = try await place.lunar(["submit", "flow.lua", "t"])
    // Token 7 never held run 1 (it is queued, not claimed).
    let outcome = try await place.lunar(["run", "--adopt", "1:7", "flow.lua", "t"])
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("run 1 is no longer held with token 7: it is queued"), "\(outcome.stderr)")
    #expect(try place.markLines().isEmpty)
    #expect(try place.openStore().run(RunID(1))?.status == .queued)
  }
}

extension RunWorkerCommandTests {
  /// A build, a wait for approval, a ship: each step marks when it runs.
  static let approval = """
    local workflow = require "lunar.workflow"
    local step = workflow.step
    local function mark(text)
      local f = assert(io.open("marks", "a"))
      f:write(text, "\\n")
      f:close()
    end
    return workflow "release" {
      step "build" { run = function() mark("build") return "v1" end },
      workflow.wait "approval" { needs = "build", signal = "approve", timeout = 3600 },
      -- Long enough that a loaded machine reaches it with more than the
      -- 2 s a run parks for still to wait: it waits a shorter rest out.
      workflow.sleep "cool-down" { needs = "approval", seconds = 6 },
      step "ship" { needs = "cool-down", run = function(ctx)
        mark("ship " .. ctx.steps.build.output .. " by " .. ctx.steps.approval.output.by)
      end },
    }
    """

  /// Waits until run 1 of `place` is parked, until another time than `earlier`'s.
  private func waitUntilParked(_ place: Place, after earlier: RunRecord? = nil) async throws -> RunRecord {
    let store = try place.openStore()
    for _ in 0..<1500 {
      if let run = try store.run(RunID(1)), run.status == .parked, run.wakeAt != earlier?.wakeAt { return run }
      try await Task.sleep(for: .milliseconds(20))
    }
    throw StoreError(.database, "run 1 never parked: \(String(describing: try store.run(RunID(1))))")
  }

  @Test(arguments: backends) func aParkedRunIsResumedByASignalAndAfterItsSleepOnOtherWorkers(backend: String) async throws {
    let place = try Place(backend)
    _ = try place.folder.write("release.lua", Self.approval)
    _ = try await place.lunar(["submit", "release.lua"])
    // The first worker builds, then parks the run for its approval, and stops.
    let first = try place.worker()
    let parked = try await waitUntilParked(place)
    // Until the signal, or at the latest the wait's timeout an hour on.
    let timeout = (parked.wakeAt?.microseconds ?? 0) - StoreTimestamp.now.microseconds
    #expect(timeout > 3_500_000_000 && timeout <= 3_600_000_000, "\(parked)")
    first.send(SIGTERM)
    #expect(try await first.wait().status == 0)
    let listed = try await place.lunar(["runs"])
    #expect(listed.stdout.contains(" parked until "), "\(listed.stdout)")
    // A second worker takes it when the approval comes, and parks it for its cool-down.
    let second = try place.worker()
    let signalled = try await place.lunar(["runs", "signal", "1", "approve", #"{"by":"ada"}"#])
    #expect(signalled.status == 0, "\(signalled.stderr)")
    let sleeping = try await waitUntilParked(place, after: parked)
    // Until the cool-down's end, 6 seconds after the approval.
    #expect((sleeping.wakeAt?.microseconds ?? 0) < (parked.wakeAt?.microseconds ?? 0), "\(sleeping)")
    second.send(SIGTERM)
    let secondOutcome = try await second.wait()
    // Woken once, by the signal: the signal it took does not wake it again
    // when it parks for the cool-down (it did, hundreds of times, within
    // the second after the signal).
    let wakes = secondOutcome.stderr.components(separatedBy: "run 1: due (parked until now)").count - 1
    #expect(wakes == 1, "\(secondOutcome.stderr)")
    // A third, started later, ships once the cool-down's deadline passed.
    let third = try place.worker()
    let waited = try await place.lunar(["runs", "wait", "1", "--timeout", "60"], timeout: 70)
    #expect(waited.status == 0 && waited.stdout == "succeeded\n", "\(waited.stdout) \(waited.stderr)")
    third.send(SIGTERM)
    _ = try await third.wait()
    // Nothing committed ran twice.
    #expect(try place.markLines() == ["build", "ship v1 by ada"])
  }

  @Test(arguments: backends) func aSignalSentAfterTheWaitLastLookedWakesTheRunItParks(backend: String) async throws {
    let place = try Place(backend)
    // "send" signals after the wait's first look and before the run parks
    // (it parks once "send" has ended and only the wait is left).
    _ = try place.folder.write(
      "late.lua",
      """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "late" {
        workflow.wait "approval" { signal = "approve", timeout = 3600 },
        step "send" { run = function()
          local command = [[\(LunarProcess.binary) runs signal --store '\(place.store)' 1 approve '"yes"']]
          assert(os.execute(command .. " > /dev/null"))
        end },
        step "ship" { needs = "approval", run = function(ctx)
          local f = assert(io.open("marks", "a"))
          f:write("ship ", ctx.steps.approval.output, "\\n")
          f:close()
        end },
      }
      """)
    _ = try await place.lunar(["submit", "late.lua"])
    let worker = try place.worker()
    // Parked with signals only from its parking on, it would sleep an hour.
    let waited = try await place.lunar(["runs", "wait", "1", "--timeout", "30"], timeout: 40)
    worker.send(SIGTERM)
    _ = try await worker.wait()
    #expect(waited.status == 0 && waited.stdout == "succeeded\n", "\(waited.stdout) \(waited.stderr)")
    #expect(try place.markLines() == ["ship yes"])
  }

  @Test func cancellingAParkedRunCancelsItAtOnce() async throws {
    let place = try Place()
    _ = try place.folder.write("release.lua", Self.approval)
    _ = try await place.lunar(["submit", "release.lua"])
    let worker = try place.worker()
    _ = try await waitUntilParked(place)
    let cancelled = try await place.lunar(["runs", "cancel", "1"])
    #expect(cancelled.status == 0, "\(cancelled.stderr)")
    #expect(try place.openStore().run(RunID(1))?.status == .cancelled)
    worker.send(SIGTERM)
    _ = try await worker.wait()
  }
}
