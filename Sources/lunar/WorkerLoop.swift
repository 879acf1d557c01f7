import LuaKit
import Lunar
import LunarStore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The claiming loop of `lunar worker`, on the calling thread: claims jobs
/// (at most `concurrency` at once), runs each on the runtime, heartbeats
/// them while they run and completes them in the store; idle, it waits on
/// PostgreSQL's notifications or polls SQLite briefly. A stop request ends
/// claiming; the loop returns once the running jobs are completed.
final class WorkerLoop {
  /// What the loop needs: where jobs come from and where they run.
  struct Setup {
    let store: any QueueStore
    let runtime: Runtime
    let worker: WorkerID
    let queues: [LuaString]?
    let concurrency: Int
    let lease: Duration
  }

  /// A job this worker is running.
  private struct Running {
    let job: ClaimedJob
    var lastHeartbeat: Double
  }

  private let setup: Setup
  private var running: [JobID: Running] = [:]
  /// Jobs whose action has ended, waiting to be completed in the store.
  private let finished = FinishedJobs()
  private let wake = WakeSignal()
  /// How long an idle SQLite worker sleeps between claims.
  private static let sqlitePoll = 0.05
  /// How long a busy worker sleeps at most between looks at its jobs.
  private static let busyPoll = 0.05
  /// The longest wait for a PostgreSQL notification (a notification sent
  /// before the listener started is missed, so it is short).
  private static let notificationWait: Duration = .seconds(1)

  init(_ setup: Setup) { self.setup = setup }

  /// Runs until `stop()` is true and no job runs.
  func run(until stop: () -> Bool) {
    let interval = Double(setup.lease.components.seconds) / 3
      + Double(setup.lease.components.attoseconds) / 3e18
    var stopNoted = false
    while true {
      let stopping = stop()
      // A job's completion claims its successor in the same transaction;
      // when that found no job, claiming again at once would find none.
      let foundNothing = completeFinished(claiming: !stopping)
      if stopping && !stopNoted {
        stopNoted = true
        log("stopping: finishing \(running.count) running job\(running.count == 1 ? "" : "s")")
      }
      if stopping && running.isEmpty { return }
      heartbeat(every: interval)
      if !stopping && !foundNothing && running.count < setup.concurrency, let job = claim() {
        start(job)
        continue
      }
      if running.isEmpty && !stopping, let postgres = setup.store as? PostgresQueueStore {
        do {
          _ = try postgres.waitForWork(timeout: Self.notificationWait)
        } catch {
          log("\(error.message); trying again in a second")
          sleep(1)
        }
      } else {
        wake.wait(seconds: running.isEmpty ? Self.sqlitePoll : min(Self.busyPoll, interval))
      }
    }
  }

  private func claim() -> ClaimedJob? {
    do {
      return try setup.store.claim(worker: setup.worker, queues: setup.queues, lease: setup.lease, at: .now)
    } catch {
      log("claiming a job: \(error.message)")
      // Give the store a moment (a server restarting, a lock held long).
      wake.wait(seconds: 0.5)
      return nil
    }
  }

  private func start(_ job: ClaimedJob) {
    running[job.id] = Running(job: job, lastHeartbeat: Self.monotonic)
    let (finished, wake) = (self.finished, self.wake)
    // The outcome comes back on the runtime's loop thread, which hands it
    // to this one and goes on.
    setup.runtime.start(job) { outcome in
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
          if let next = try setup.store.complete(
            job: id, token: job.token, outcome: outcome, at: .now, thenClaimFor: setup.worker, queues: setup.queues,
            lease: setup.lease)
          {
            start(next)
          } else {
            foundNothing = true
          }
        } else {
          try setup.store.complete(job: id, token: job.token, outcome: outcome, at: .now)
        }
      } catch where error.kind == .staleClaim {
        // Fencing: another worker claimed it after our lease expired.
        log("\(name(of: job)): its completion was refused: \(error.message)")
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
      try setup.store.complete(job: job.id, token: job.token, outcome: outcome, at: .now)
    } catch {
      // Its lease will expire and another claim will run it again.
      log("\(name(of: job)): its completion \(error.kind == .staleClaim ? "was refused" : "failed"): \(error.message)")
    }
  }

  private func heartbeat(every interval: Double) {
    let now = Self.monotonic
    for (id, entry) in running where now - entry.lastHeartbeat >= interval {
      running[id]?.lastHeartbeat = now
      do {
        _ = try setup.store.heartbeat(job: id, token: entry.job.token, lease: setup.lease, at: .now)
      } catch {
        log("\(name(of: entry.job)): heartbeat \(error.kind == .staleClaim ? "refused" : "failed"): \(error.message)")
      }
    }
  }

  private func name(of job: ClaimedJob) -> String {
    "job \(job.id) (queue \(job.queue.quoted) #\(job.sequence))"
  }

  private func log(_ message: String) {
    Console.error("lunar worker \(setup.worker): \(message)")
  }

  /// The jobs whose action has ended, shared with the tasks that ran them.
  private final class FinishedJobs: Sendable {
    let jobs = Mutex<[(JobID, JobOutcome)]>([])
  }

  private static var monotonic: Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
