import LuaKit
import LunarStore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A worker of durable queues inside any Swift program: claims jobs of a
/// queue store (at most `concurrency` at once, each of a different queue),
/// runs each job's action on a runtime, heartbeats its lease while it runs
/// and records how it ended. `lunar worker` is this one type behind flags.
///
/// ```swift
/// let worker = try DurableWorker(runtime: runtime, store: store, options: .init(worker: WorkerID("build-3:4711")))
/// worker.run()        // on a thread of its own; another calls worker.stop()
/// ```
///
/// Stopping: a first `stop` ends claiming, and the running jobs may finish
/// for `gracePeriod`; then they are cancelled (a job that computes is
/// interrupted) and given back to their queues, for another worker to
/// claim at once. A second `stop` gives them back at once.
public final class DurableWorker: Sendable {
  /// How a worker claims and holds jobs.
  public struct Options: Sendable {
    /// The name its claims carry (`lunar queue ls` shows it).
    public var worker: WorkerID
    /// The queues to serve; nil serves every queue.
    public var queues: [LuaString]?
    /// How many jobs run at once, each of a different queue.
    public var concurrency: Int
    /// How long a job stays this worker's without a heartbeat; the worker
    /// heartbeats every third of it.
    public var lease: Duration
    /// After how many lost leases (its worker ended before finishing it) a
    /// job this worker finds expired is abandoned: failed, never run again.
    public var lostLeaseLimit: Int
    /// How long running jobs may go on after a first `stop` before they
    /// are cancelled and given back.
    public var gracePeriod: Duration

    /// Every queue, one job at a time, a lease of 10 seconds, a job
    /// abandoned after 3 lost leases, 10 seconds' grace.
    public init(
      worker: WorkerID, queues: [LuaString]? = nil, concurrency: Int = 1, lease: Duration = .seconds(10),
      lostLeaseLimit: Int = QueueLimits.defaultLostLeaseLimit, gracePeriod: Duration = .seconds(10)
    ) {
      self.worker = worker
      self.queues = queues
      self.concurrency = concurrency
      self.lease = lease
      self.lostLeaseLimit = lostLeaseLimit
      self.gracePeriod = gracePeriod
    }

    /// The shortest lease a worker takes. Heartbeats come every third of
    /// the lease, from the thread that also claims and completes, and each
    /// must reach the store before the lease ends; below a second a
    /// commit or a lock held for a moment lets a live worker's lease
    /// expire, and another worker runs its job at the same time.
    public static let minimumLease: Duration = .seconds(1)

    /// Throws unless a worker can run with these options: a lease of at
    /// least `minimumLease` (and under a year), a concurrency and a limit
    /// of lost leases of at least 1, a grace period of 0 or more.
    public func check() throws(OptionError) {
      guard concurrency >= 1 else { throw OptionError(.concurrency, "must be at least 1") }
      guard lease >= Self.minimumLease else {
        throw OptionError(
          .lease,
          "must be at least 1 second (the worker renews its leases every third of their length, and a renewal must reach the store before the lease ends)"
        )
      }
      guard lease < .seconds(366 * 86_400) else { throw OptionError(.lease, "must be shorter than a year") }
      guard lostLeaseLimit >= 1 else { throw OptionError(.lostLeaseLimit, "must be at least 1") }
      guard gracePeriod >= .zero else { throw OptionError(.gracePeriod, "must be 0 seconds or more") }
    }
  }

  /// Why options cannot be used (`Options.check`): which option, and what
  /// it must be.
  public struct OptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The options a worker checks.
    public enum Option: String, Sendable {
      case concurrency, lease, lostLeaseLimit, gracePeriod
    }

    /// The option at fault.
    public let option: Option
    /// What it must be: `must be at least 1 second (...)`.
    public let requirement: String

    init(_ option: Option, _ requirement: String) {
      self.option = option
      self.requirement = requirement
    }

    public var description: String { "\(option.rawValue) \(requirement)" }
  }

  /// How `run` ended.
  public enum Stop: Sendable, Equatable {
    /// Asked to stop, it completed every job it had started.
    case finished
    /// The grace period ended first: `jobs` running jobs were cancelled and
    /// given back to their queues.
    case cancelled(jobs: Int)
    /// A second stop came: `jobs` running jobs were given back at once.
    /// Their code may still run on the runtime: close it, or end the process.
    case atOnce(jobs: Int)
  }

  /// The options it was made with.
  public let options: Options
  let store: any QueueStore
  let runtime: Runtime
  let log: @Sendable (String) -> Void
  /// How many times `stop` was called.
  let stopRequests = Atomic<Int>(0)
  /// Posted when a job's action ends or a stop is asked for.
  let wake = WakeSignal()
  private let started = Atomic<Bool>(false)

  /// A worker running `store`'s jobs on `runtime`, which should have loaded
  /// the actions they name; `log` gets a line for each thing that went
  /// wrong (a store call that failed, a completion refused) and for stopping.
  /// - Throws: what `options.check()` throws.
  public init(
    runtime: Runtime, store: any QueueStore, options: Options, log: @escaping @Sendable (String) -> Void = { _ in }
  ) throws(OptionError) {
    try options.check()
    self.runtime = runtime
    self.store = store
    self.options = options
    self.log = log
  }

  /// Asks the worker to stop, from any thread: the first time, it claims
  /// no more jobs and lets the running ones finish (for the grace period);
  /// the second time, it gives them back and returns at once.
  public func stop() {
    stopRequests.add(1, ordering: .relaxed)
    wake.post()
  }

  /// Claims and runs jobs on the calling thread, which it blocks, until
  /// stopped: by `stop`, or by `stopRequests`, which says how many stop
  /// requests came from elsewhere (signals) so far. Idle, it waits on
  /// PostgreSQL's notifications or polls SQLite every 50 ms. Runs once: a
  /// later call returns `.finished` at once.
  @discardableResult
  public func run(stopRequests external: () -> Int = { 0 }) -> Stop {
    guard !started.exchange(true, ordering: .relaxed) else { return .finished }
    return DurableWorkerLoop(self).run { external() + stopRequests.load(ordering: .relaxed) }
  }
}

/// The claiming loop of one `DurableWorker.run`, on its thread: the jobs
/// it runs and their heartbeats, and its stopping.
private final class DurableWorkerLoop {
  /// A job this worker is running.
  private struct Running {
    let job: ClaimedJob
    var lastHeartbeat: Double
  }

  /// Where the loop stands.
  private enum Phase {
    /// Claiming and running jobs.
    case serving
    /// Stopping: the running jobs may finish until the time given.
    case draining(until: Double)
    /// The running jobs were cancelled at the time given; they are given
    /// back as their outcomes come, or all at once after `cancelWait`.
    case cancelling(since: Double, jobs: Int)
  }

  private let worker: DurableWorker
  private var options: DurableWorker.Options { worker.options }
  private var store: any QueueStore { worker.store }
  private var running: [JobID: Running] = [:]
  private var phase = Phase.serving
  /// Jobs whose action has ended, waiting to be completed in the store.
  private let finished = FinishedJobs()
  /// How an idle SQLite worker sleeps between claims.
  private static let sqlitePoll = 0.05
  /// How long a busy worker sleeps at most between looks at its jobs.
  private static let busyPoll = 0.05
  /// The longest wait for a PostgreSQL notification (a notification sent
  /// before the listener started is missed, so it is short).
  private static let notificationWait: Duration = .seconds(1)
  /// How long cancelled jobs have to end before they are given back
  /// anyway (a job inside one long C call cannot be stopped).
  private static let cancelWait = 1.0

  init(_ worker: DurableWorker) { self.worker = worker }

  /// Runs until stopped (`stopRequests()` counts the requests).
  func run(stopRequests: () -> Int) -> DurableWorker.Stop {
    let interval = Self.seconds(options.lease) / 3
    while true {
      let requests = stopRequests()
      if requests >= 2 { return stopAtOnce() }
      if requests == 1, case .serving = phase {
        phase = .draining(until: Self.monotonic + Self.seconds(options.gracePeriod))
        // An idle worker stops without a word (a `--processes` run stops
        // its workers after every run).
        if !running.isEmpty {
          worker.log("stopping: finishing \(running.count) running job\(running.count == 1 ? "" : "s")")
        }
      }
      let serving = if case .serving = phase { true } else { false }
      // A job's completion claims its successor in the same transaction;
      // when that found no job, claiming again at once would find none.
      let foundNothing = completeFinished(claiming: serving)
      switch phase {
      case .serving: break
      case .draining(let until):
        if running.isEmpty { return .finished }
        if Self.monotonic >= until { cancelRunning() }
      case .cancelling(let since, let jobs):
        if running.isEmpty { return .cancelled(jobs: jobs) }
        if Self.monotonic - since >= Self.cancelWait {
          releaseRunning()
          return .cancelled(jobs: jobs)
        }
      }
      heartbeat(every: interval)
      if serving && !foundNothing && running.count < options.concurrency, let job = claim() {
        start(job)
        continue
      }
      if running.isEmpty && serving, let postgres = store as? PostgresQueueStore {
        do {
          _ = try postgres.waitForWork(timeout: Self.notificationWait)
        } catch {
          worker.log("\(error.message); trying again in a second")
          worker.wake.wait(seconds: 1)
        }
      } else {
        worker.wake.wait(seconds: running.isEmpty ? Self.sqlitePoll : min(Self.busyPoll, interval))
      }
    }
  }

  /// The grace period is over: cancels the running jobs, which are given
  /// back as they end.
  private func cancelRunning() {
    let ids = Array(running.keys)
    phase = .cancelling(since: Self.monotonic, jobs: ids.count)
    let count = "\(ids.count) running job\(ids.count == 1 ? "" : "s")"
    worker.log(
      "grace period of \(LuaValue.number(Self.seconds(options.gracePeriod)).formattedSeconds)s over: cancelled \(count), to give back to \(ids.count == 1 ? "its queue" : "their queues")")
    worker.runtime.cancelJobs(ids, message: "cancelled: the worker running this job is stopping")
  }

  /// A second stop request: completes the jobs that have ended, gives the
  /// others back.
  private func stopAtOnce() -> DurableWorker.Stop {
    _ = completeFinished(claiming: false)
    let count = running.count
    worker.log("stopping at once: giving back \(count) running job\(count == 1 ? "" : "s")")
    releaseRunning()
    return .atOnce(jobs: count)
  }

  /// Gives every running job back to its queue, for another claim to take
  /// at once (their actions may still run here: this worker is ending).
  private func releaseRunning() {
    for (_, entry) in running { release(entry.job) }
    running = [:]
  }

  private func release(_ job: ClaimedJob) {
    do {
      try store.release(job: job.id, token: job.token, at: .now)
    } catch {
      // Its lease will expire, and another claim will run it again.
      worker.log("\(name(of: job)): giving it back \(error.kind == .staleClaim ? "was refused" : "failed"): \(error.message)")
    }
  }

  private func claim() -> ClaimedJob? {
    do {
      return try store.claim(
        worker: options.worker, queues: options.queues, lease: options.lease, lostLeaseLimit: options.lostLeaseLimit,
        at: .now)
    } catch {
      worker.log("claiming a job: \(error.message)")
      // Give the store a moment (a server restarting, a lock held long).
      worker.wake.wait(seconds: 0.5)
      return nil
    }
  }

  private func start(_ job: ClaimedJob) {
    running[job.id] = Running(job: job, lastHeartbeat: Self.monotonic)
    let (finished, wake) = (self.finished, worker.wake)
    // The outcome comes back on the runtime's loop thread, which hands it
    // to this one and goes on.
    worker.runtime.start(job) { outcome in
      finished.jobs.withLock { $0.append((job.id, outcome)) }
      wake.post()
    }
  }

  /// Completes the jobs whose action has ended, each (when `claiming`)
  /// with a claim of the next job in its transaction, started at once.
  /// True if a claim was made and found no job.
  private func completeFinished(claiming: Bool) -> Bool {
    let done = finished.jobs.withLock { done in
      defer { done = [] }
      return done
    }
    var foundNothing = false
    for (id, outcome) in done {
      guard let job = running.removeValue(forKey: id)?.job else { continue }
      if case .cancelling = phase, outcome.status == .failed {
        // Most likely failed because it was cancelled: it runs again.
        release(job)
        continue
      }
      do {
        if claiming {
          if let next = try store.complete(
            job: id, token: job.token, outcome: outcome, at: .now, thenClaimFor: options.worker, queues: options.queues,
            lease: options.lease, lostLeaseLimit: options.lostLeaseLimit)
          {
            start(next)
          } else {
            foundNothing = true
          }
        } else {
          try store.complete(job: id, token: job.token, outcome: outcome, at: .now)
        }
      } catch where error.kind == .staleClaim {
        // Fencing: another worker claimed it after our lease expired.
        worker.log("\(name(of: job)): its completion was refused: \(error.message)")
      } catch where error.kind == .badValue {
        // An outcome the store refuses (too big): the job fails saying so,
        // rather than stay unfinished and be claimed again and again.
        completeAlone(job, DurableJobRunner.failure(error.message))
      } catch {
        // Tried once more alone: unless a completion commits, the job runs
        // again once its lease expires (at-least-once).
        completeAlone(job, outcome)
      }
    }
    return foundNothing
  }

  /// Completes `job` without claiming, after a completion with a claim
  /// failed (the claim may have taken the completion with it, or the
  /// connection went and the store connects again first).
  private func completeAlone(_ job: ClaimedJob, _ outcome: JobOutcome) {
    do {
      try store.complete(job: job.id, token: job.token, outcome: outcome, at: .now)
    } catch {
      // Its lease will expire and another claim will run it again.
      worker.log("\(name(of: job)): its completion \(error.kind == .staleClaim ? "was refused" : "failed"): \(error.message)")
    }
  }

  private func heartbeat(every interval: Double) {
    let now = Self.monotonic
    for (id, entry) in running where now - entry.lastHeartbeat >= interval {
      running[id]?.lastHeartbeat = now
      do {
        _ = try store.heartbeat(job: id, token: entry.job.token, lease: options.lease, at: .now)
      } catch {
        worker.log("\(name(of: entry.job)): heartbeat \(error.kind == .staleClaim ? "refused" : "failed"): \(error.message)")
      }
    }
  }

  private func name(of job: ClaimedJob) -> String {
    "job \(job.id) (queue \(job.queue.quoted) #\(job.sequence))"
  }

  /// The jobs whose action has ended, shared with the tasks that ran them.
  private final class FinishedJobs: Sendable {
    let jobs = Mutex<[(JobID, JobOutcome)]>([])
  }

  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }

  private static var monotonic: Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
