import Foundation
import LuaKit
import LunarSchedules
import LunarStore
import Synchronization
import Testing
import TestSupport

/// A launcher the tests replace `lunar run --adopt` with: it records what
/// it was asked to start, and each "process" adopts its run (or not) and
/// exits when the test says.
private final class RecordingLauncher: RunLauncher {
  struct Launch: Sendable {
    var run: RunID
    var handover: RunHandover
    var file: String
  }

  final class Process: LaunchedRun {
    let exit = DispatchSemaphore(value: 0)
    let status = Mutex<Int32>(0)
    func waitForExit() -> Int32 {
      exit.wait()
      return status.withLock { $0 }
    }
    func end(_ code: Int32) {
      status.withLock { $0 = code }
      exit.signal()
    }
  }

  let launches = Mutex<[(Launch, Process)]>([])

  func launch(_ run: RunRecord, handover: RunHandover, file: String) throws -> any LaunchedRun {
    let process = Process()
    launches.withLock { $0.append((Launch(run: run.id, handover: handover, file: file), process)) }
    return process
  }

  var started: [Launch] { launches.withLock { $0.map(\.0) } }
  func process(_ index: Int) -> Process { launches.withLock { $0[index].1 } }
}

/// What a worker reported, in order.
private final class EventLog: Sendable {
  private let events = Mutex<[RunWorker.Event]>([])
  func append(_ event: RunWorker.Event) { events.withLock { $0.append(event) } }
  var all: [RunWorker.Event] { events.withLock { $0 } }
}

@Suite struct RunWorkerTests {
  private let folder: TemporaryFolder
  private let store: SQLiteRunStore
  private let file: String
  private let fingerprint: Fingerprint
  private let launcher = RecordingLauncher()
  private let events = EventLog()

  init() throws {
    folder = try TemporaryFolder()
    store = try SQLiteRunStore(path: folder.url.appendingPathComponent("store.db").path)
    let source = "return require 'lunar.workflow' 'w' {}\n"
    file = try folder.write("flow.lua", source)
    fingerprint = Fingerprint(ofContent: Array(source.utf8))
  }

  private func worker(runs: Int = 1, takeoverLimit: Int = 3, now: @escaping @Sendable () -> Date = { Date() }) -> RunWorker {
    let events = self.events
    return RunWorker(
      store: store, options: .init(root: folder.url.path, runs: runs, takeoverLimit: takeoverLimit, host: "w", pid: 7),
      launcher: launcher, report: { event in events.append(event) }, now: now)
  }

  private func submit(_ fingerprint: Fingerprint? = nil) throws -> RunID {
    try store.submit(RunSubmission(file: "flow.lua", arguments: ["x"], fileFingerprint: fingerprint ?? self.fingerprint)).run.id
  }

  /// Waits (a bounded while) for the worker's thread to see `count` ended processes.
  private func waitForEnded(_ count: Int) async throws {
    for _ in 0..<500 {
      if events.all.filter({ if case .ended = $0 { true } else { false } }).count >= count { return }
      try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("no \(count) ended processes: \(events.all)")
  }

  @Test func aPollStartsAtMostRunsRunsEachWithItsHandover() throws {
    let first = try submit(), second = try submit(), third = try submit()
    let worker = worker(runs: 2)
    #expect(worker.poll() == [.started(first, file: file), .started(second, file: file)])
    #expect(launcher.started.map(\.handover) == [RunHandover(run: first, token: ClaimToken(1)), RunHandover(run: second, token: ClaimToken(1))])
    #expect(worker.poll() == [])
    #expect(try store.run(third)?.status == .queued)
    #expect(worker.running == [first, second])
  }

  @Test func aFileThatIsNotTheOneSubmittedIsRefusedWithBothFingerprints() throws {
    let other = Fingerprint(ofContent: Array("print 'other code'\n".utf8))
    let run = try submit(other)
    let events = worker().poll()
    let reason =
      "refused: \(file) is not the file that was submitted (submitted sha256 \(other.hex), found sha256 \(fingerprint.hex))"
    #expect(events == [.refused(run, reason: reason)])
    #expect(launcher.started.isEmpty)
    let record = try #require(try store.run(run))
    #expect(record.status == .failed && record.stoppedBy == reason)
  }

  @Test func aMissingFileIsRefused() throws {
    try FileManager.default.removeItem(atPath: file)
    let run = try submit()
    guard case .refused(run, let reason)? = worker().poll().first else {
      Issue.record("not refused")
      return
    }
    #expect(reason.hasPrefix("refused: cannot read \(file)"), "\(reason)")
    #expect(try store.run(run)?.status == .failed)
  }

  @Test func aProcessThatNeverAdoptsItsRunLeavesItFailed() async throws {
    let run = try submit()
    let worker = worker()
    worker.poll()
    launcher.process(0).end(0)
    try await waitForEnded(1)
    let record = try #require(try store.run(run))
    #expect(record.status == .failed && record.stoppedBy == "refused: it ran no workflow", "\(record)")
    #expect(worker.running.isEmpty)
  }

  @Test func anAdoptedRunIsTheProcesssOnceItEnds() async throws {
    let run = try submit()
    let worker = worker()
    worker.poll()
    let lease = try #require(
      try store.adopt(run, from: ClaimToken(1), workflow: "w", plan: [], host: "w", pid: 8, lease: .seconds(10), at: .now))
    try store.finishRun(run, status: .succeeded, stoppedBy: nil, owner: lease.token, at: .now)
    launcher.process(0).end(0)
    try await waitForEnded(1)
    #expect(try store.run(run)?.status == .succeeded)
  }

  @Test func aRunWhoseProcessWasLostIsTakenOverUntilTheLimit() async throws {
    let run = try submit()
    let clock = Mutex(Date())
    let worker = worker(takeoverLimit: 1, now: { clock.withLock { $0 } })
    let now = { ScheduleTicker.timestamp(clock.withLock { $0 }) }
    worker.poll()
    // The process adopts the run, then dies without a trace: its lease expires.
    _ = try store.adopt(run, from: ClaimToken(1), workflow: "w", plan: [], host: "w", pid: 8, lease: .seconds(10), at: now())
    launcher.process(0).end(137)
    try await waitForEnded(1)
    clock.withLock { $0 += 11 }
    #expect(worker.poll() == [.tookOver(run, file: file)])
    #expect(launcher.started.last?.handover == RunHandover(run: run, token: ClaimToken(3)))
    _ = try store.adopt(run, from: ClaimToken(3), workflow: "w", plan: [], host: "w", pid: 9, lease: .seconds(10), at: now())
    launcher.process(1).end(137)
    try await waitForEnded(2)
    clock.withLock { $0 += 11 }
    let reason = "abandoned: its process was lost once after a worker took it over"
    #expect(worker.poll() == [.refused(run, reason: reason)])
    #expect(try store.run(run)?.status == .failed)
  }

  @Test func aDueScheduleTickQueuesARunTheSamePollStarts() throws {
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    try store.addSchedule(
      Schedule(name: "hourly", cron: "0 * * * *", timeZone: "UTC", file: "flow.lua", createdAt: ScheduleTicker.timestamp(start)))
    let events = worker(now: { start.addingTimeInterval(3601) }).poll()
    guard events.count == 2, case .fired(let fired) = events[0], case .started(let run, file: file) = events[1],
      fired.outcome == .started(run)
    else {
      Issue.record("\(events)")
      return
    }
    #expect(try store.submittedRun(run)?.schedule == "hourly")
  }
}
