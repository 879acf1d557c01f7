import Foundation
import LuaKit
import LunarStore
import Synchronization

/// A worker of submitted runs inside any Swift program: fires the store's
/// due schedule ticks, takes over submitted runs whose owner died, claims
/// queued runs (at most `runs` at once) and hands each to a process of its
/// own through a `RunLauncher`. `lunar worker --runs N` is this type behind
/// flags.
///
/// A run is the worker's only between its claim and its process adopting
/// it (`RunStore.adopt`); from then on the process holds the run's lease and
/// heartbeats it itself, so a worker that dies leaves its runs running, and
/// a process that dies leaves its run to the next worker that finds its
/// lease expired.
public final class RunWorker: Sendable {
  /// How a worker claims and hands over runs.
  public struct Options: Sendable {
    /// Where workflow files are found by the path they were submitted with.
    public var root: String
    /// How many runs run at once.
    public var runs: Int
    /// How long a claimed run stays this worker's before its process adopts it.
    public var claimLease: Duration
    /// How often the store is looked at for work.
    public var pollInterval: Duration
    /// How many times a run may lose its process before it is recorded as
    /// failed rather than taken over again (a run that crashes every process).
    public var takeoverLimit: Int
    /// Whether this worker fires schedule ticks.
    public var firesSchedules: Bool
    /// The host and process its claims name.
    public var host: String
    /// The process its claims name.
    public var pid: Int32

    /// One run at a time from `root`, schedules fired, a run abandoned
    /// after its process was lost 3 times.
    public init(
      root: String, runs: Int = 1, claimLease: Duration = RunLease.defaultDuration, pollInterval: Duration = .milliseconds(200),
      takeoverLimit: Int = 3, firesSchedules: Bool = true, host: String = NewRun.currentHost, pid: Int32 = getpid()
    ) {
      self.root = root
      self.runs = runs
      self.claimLease = claimLease
      self.pollInterval = pollInterval
      self.takeoverLimit = takeoverLimit
      self.firesSchedules = firesSchedules
      self.host = host
      self.pid = pid
    }
  }

  /// What one look at the store started or refused.
  public enum Event: Sendable, Equatable {
    /// A queued run was claimed and its process started.
    case started(RunID, file: String)
    /// A run whose owner was lost was taken over and its process started.
    case tookOver(RunID, file: String)
    /// A parked run came due (its wait ended, or a signal came) and its process started.
    case woke(RunID, file: String)
    /// A run was not started, and is recorded as failed, for this reason.
    case refused(RunID, reason: String)
    /// A run ended with this status, as `lunar run` exits (0 success, 128 + N for signal N).
    case ended(RunID, status: Int32)
    /// A schedule's tick was decided.
    case fired(ScheduleTicker.Fired)
    /// Something went wrong that the worker lives through.
    case problem(String)
  }

  private struct State {
    var running: [RunID: any LaunchedRun] = [:]
    var stopping = false
  }

  private let store: any SchedulingStore
  private let options: Options
  private let launcher: any RunLauncher
  private let report: @Sendable (Event) -> Void
  private let now: @Sendable () -> Date
  private let state = Mutex(State())
  private let wake = DispatchSemaphore(value: 0)

  /// A worker over `store` that starts runs with `launcher` and tells
  /// `report` what it did; `now` is its clock for schedules and leases.
  public init(
    store: any SchedulingStore, options: Options, launcher: any RunLauncher, report: @escaping @Sendable (Event) -> Void,
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.store = store
    self.options = options
    self.launcher = launcher
    self.report = report
    self.now = now
  }

  /// The runs whose processes are running now.
  public var running: [RunID] { state.withLock { Array($0.running.keys).sorted() } }

  /// Looks at the store once: fires due schedule ticks, then takes over
  /// and claims runs while fewer than `runs` run, starting a process for
  /// each. Returns what it did (also told to `report`).
  @discardableResult
  public func poll() -> [Event] {
    var events: [Event] = []
    let time = ScheduleTicker.timestamp(now())
    if options.firesSchedules {
      do {
        let ticker = ScheduleTicker(store: store) { [root = options.root] schedule in
          try Fingerprint(ofContent: RunWorker.read(RunWorker.path(of: schedule.file, under: root)))
        }
        let (fired, problems) = try ticker.fire(now: now())
        events += fired.map(Event.fired) + problems.map(Event.problem)
      } catch {
        events.append(.problem("schedules: \(error.message)"))
      }
    }
    while state.withLock({ !$0.stopping && $0.running.count < options.runs }) {
      let next: (SubmittedRun, Taken)?
      do {
        if let taken = try store.takeOverExpiredRun(host: options.host, pid: options.pid, lease: options.claimLease, at: time) {
          next = (taken, .tookOver)
        } else if let woken = try store.claimDueParkedRun(
          host: options.host, pid: options.pid, lease: options.claimLease, at: time)
        {
          next = (woken, .woke)
        } else if let claimed = try store.claimQueuedRun(
          host: options.host, pid: options.pid, lease: options.claimLease, at: time)
        {
          next = (claimed, .claimed)
        } else {
          next = nil
        }
      } catch {
        events.append(.problem(error.message))
        break
      }
      guard let (run, taken) = next else { break }
      events.append(start(run, taken, at: time))
    }
    for event in events { report(event) }
    return events
  }

  /// Polls every `pollInterval` until `stopRequested` counts a request,
  /// then waits up to `graceful` for the running runs' processes to end. A
  /// second request, or the end of `graceful`, ends the wait and leaves them
  /// running: each holds its run itself, and one whose process dies later is
  /// taken over by another worker once its lease expires.
  public func run(stopRequested: @Sendable () -> Int, graceful: Duration) {
    while stopRequested() == 0 {
      poll()
      _ = wake.wait(timeout: .now() + .microseconds(Int(options.pollInterval / .microseconds(1))))
    }
    state.withLock { $0.stopping = true }
    let deadline = ContinuousClock.now + graceful
    while !state.withLock({ $0.running.isEmpty }) && stopRequested() < 2 && ContinuousClock.now < deadline {
      _ = wake.wait(timeout: .now() + .milliseconds(100))
    }
  }

  /// Checks `run`'s file and starts its process, or records why not.
  /// How a worker came to hold a run.
  private enum Taken { case claimed, tookOver, woke }

  private func start(_ submitted: SubmittedRun, _ taken: Taken, at time: StoreTimestamp) -> Event {
    let run = submitted.run
    let handover = RunHandover(run: run.id, token: run.ownerToken)
    if taken == .tookOver, submitted.takeovers > options.takeoverLimit {
      return refuse(
        handover,
        "abandoned: its process was lost \(options.takeoverLimit == 1 ? "once" : "\(options.takeoverLimit) times") after a worker took it over", at: time)
    }
    let path = Self.path(of: run.file, under: options.root)
    let content: [UInt8]
    do {
      content = try Self.read(path)
    } catch {
      return refuse(handover, "refused: cannot read \(path): \(error)", at: time)
    }
    let found = Fingerprint(ofContent: content)
    if let submitted = submitted.fileFingerprint, submitted != found {
      return refuse(
        handover,
        "refused: \(path) is not the file that was submitted (submitted sha256 \(submitted.hex), found sha256 \(found.hex))",
        at: time)
    }
    let launched: any LaunchedRun
    do {
      launched = try launcher.launch(run, handover: handover, file: path)
    } catch {
      return refuse(handover, "refused: its process could not start: \(error)", at: time)
    }
    state.withLock { $0.running[run.id] = launched }
    let thread = Thread { [self] in
      let status = launched.waitForExit()
      ended(run.id, handover: handover, status: status)
    }
    thread.start()
    switch taken {
    case .claimed: return .started(run.id, file: path)
    case .tookOver: return .tookOver(run.id, file: path)
    case .woke: return .woke(run.id, file: path)
    }
  }

  /// Records a run its process left unadopted as failed: the file did not
  /// run a workflow, or the process died before it could.
  private func ended(_ id: RunID, handover: RunHandover, status: Int32) {
    state.withLock { _ = $0.running.removeValue(forKey: id) }
    if let run = try? store.run(id), run.status == .running, run.ownerToken == handover.token {
      let why = status == 0 ? "it ran no workflow" : "its process ended with status \(status) before it began"
      try? store.finishRun(id, status: .failed, stoppedBy: "refused: \(why)", owner: handover.token, at: ScheduleTicker.timestamp(now()))
    }
    report(.ended(id, status: status))
    wake.signal()
  }

  private func refuse(_ handover: RunHandover, _ reason: String, at time: StoreTimestamp) -> Event {
    do {
      try store.finishRun(handover.run, status: .failed, stoppedBy: reason, owner: handover.token, at: time)
    } catch {
      return .problem("run \(handover.run): \(reason); and recording it failed: \(error.message)")
    }
    return .refused(handover.run, reason: reason)
  }

  /// Where the file submitted as `file` is for a worker rooted at `root`.
  static func path(of file: String, under root: String) -> String {
    file.hasPrefix("/") ? file : (root as NSString).appendingPathComponent(file)
  }

  static func read(_ path: String) throws -> [UInt8] {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw RunWorkerError(description: "no such file, or not readable")
    }
    return [UInt8](data)
  }
}

/// Why a worker could not read a workflow file.
struct RunWorkerError: Error, CustomStringConvertible {
  var description: String
}

/// Starts a claimed run in a process of its own: `lunar worker`'s hands it
/// to a warm `lunar run --host-runs` process, which runs it as `lunar run
/// --adopt RUN:TOKEN FILE ARGS...` would, in the worker's store.
public protocol RunLauncher: Sendable {
  /// Starts `run`, handed over with `handover`, from `file`, in a process.
  func launch(_ run: RunRecord, handover: RunHandover, file: String) throws -> any LaunchedRun
}

/// A run a `RunLauncher` started in a process.
public protocol LaunchedRun: Sendable {
  /// Blocks until the run ends; its status as `lunar run` exits, or 128 +
  /// the signal that ended its process.
  func waitForExit() -> Int32
}
