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
/// let worker = DurableWorker(runtime: runtime, store: store, options: .init(worker: WorkerID("build-3:4711")))
/// worker.run()        // on a thread of its own; another calls worker.stop()
/// ```
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

    /// Every queue, one job at a time, a lease of 10 seconds, a job
    /// abandoned after 3 lost leases.
    public init(
      worker: WorkerID, queues: [LuaString]? = nil, concurrency: Int = 1, lease: Duration = .seconds(10),
      lostLeaseLimit: Int = QueueLimits.defaultLostLeaseLimit
    ) {
      self.worker = worker
      self.queues = queues
      self.concurrency = concurrency
      self.lease = lease
      self.lostLeaseLimit = lostLeaseLimit
    }
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
  public init(
    runtime: Runtime, store: any QueueStore, options: Options, log: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.runtime = runtime
    self.store = store
    self.options = options
    self.log = log
  }

  /// Asks the worker to stop, from any thread: it claims no more jobs, and
  /// `run` returns once the running ones are completed.
  public func stop() {
    stopRequests.add(1, ordering: .relaxed)
    wake.post()
  }

  /// Claims and runs jobs on the calling thread, which it blocks, until
  /// `stop` was called (or `stopRequested` says so) and no job runs. Idle,
  /// it waits on PostgreSQL's notifications or polls SQLite every 50 ms.
  /// Runs once: a later call returns at once.
  public func run(stopRequested: () -> Bool = { false }) {
    guard !started.exchange(true, ordering: .relaxed) else { return }
    DurableWorkerLoop(self).run { stopRequested() || stopRequests.load(ordering: .relaxed) > 0 }
  }
}

/// The claiming loop of one `DurableWorker.run`, on its thread: the jobs
/// it runs and their heartbeats.
private final class DurableWorkerLoop {
  /// A job this worker is running.
  private struct Running {
    let job: ClaimedJob
    var lastHeartbeat: Double
  }

  private let worker: DurableWorker
  private var options: DurableWorker.Options { worker.options }
  private var store: any QueueStore { worker.store }
  private var running: [JobID: Running] = [:]
  /// Jobs whose action has ended, waiting to be completed in the store.
  private let finished = FinishedJobs()
  /// How an idle SQLite worker sleeps between claims.
  private static let sqlitePoll = 0.05
  /// How long a busy worker sleeps at most between looks at its jobs.
  private static let busyPoll = 0.05
  /// The longest wait for a PostgreSQL notification (a notification sent
  /// before the listener started is missed, so it is short).
  private static let notificationWait: Duration = .seconds(1)

  init(_ worker: DurableWorker) { self.worker = worker }

  /// Runs until `stop()` is true and no job runs.
  func run(until stop: () -> Bool) {
    let interval = Self.seconds(options.lease) / 3
    var stopNoted = false
    while true {
      let stopping = stop()
      // A job's completion claims its successor in the same transaction;
      // when that found no job, claiming again at once would find none.
      let foundNothing = completeFinished(claiming: !stopping)
      if stopping && !stopNoted {
        stopNoted = true
        worker.log("stopping: finishing \(running.count) running job\(running.count == 1 ? "" : "s")")
      }
      if stopping && running.isEmpty { return }
      heartbeat(every: interval)
      if !stopping && !foundNothing && running.count < options.concurrency, let job = claim() {
        start(job)
        continue
      }
      if running.isEmpty && !stopping, let postgres = store as? PostgresQueueStore {
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
