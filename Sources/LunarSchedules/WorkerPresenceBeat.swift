import Foundation
import LunarStore
import Synchronization

/// Keeps a worker's presence in the store while it runs: announces it at
/// once and then every third of its lease, on a thread of its own, and
/// withdraws it on `stop`. A worker killed without `stop` stays listed
/// until its lease ends, then shows as lost.
public final class WorkerPresenceBeat: Sendable {
  private let store: any WorkerStore
  private let presence: WorkerPresence
  private let lease: Duration
  private let log: @Sendable (String) -> Void
  private let stopping = DispatchSemaphore(value: 0)
  private let done = DispatchSemaphore(value: 0)
  // Whether the last announce failed: a store that keeps failing is said once.
  private let failing = Mutex(false)

  /// Starts announcing `worker` (serving `serves`) in `store`, lost after
  /// `lease` without a heartbeat; `log` hears of a store that fails.
  public init(
    store: any WorkerStore, worker: WorkerID, serves: String, lease: Duration, now: StoreTimestamp = .now,
    log: @escaping @Sendable (String) -> Void
  ) {
    self.store = store
    self.lease = lease
    self.log = log
    presence = WorkerPresence(
      worker: worker, host: NewRun.currentHost, pid: getpid(), serves: serves, startedAt: now, seenAt: now, expiresAt: now)
    announce()
    Thread { [self] in
      let interval = max(0.2, lease.seconds / 3)
      while stopping.wait(timeout: .now() + interval) == .timedOut { announce() }
      do throws(StoreError) {
        try store.withdraw(presence.worker)
      } catch {
        log("could not remove this worker from the store's list: \(error.message)")
      }
      done.signal()
    }.start()
  }

  /// Withdraws the worker from the store and ends the heartbeats; returns
  /// once it is withdrawn (or the store refused).
  public func stop() {
    stopping.signal()
    done.wait()
  }

  private func announce() {
    var now = presence
    now.seenAt = .now
    now.expiresAt = StoreTimestamp(microseconds: now.seenAt.microseconds + Int64(min(lease.seconds, 1e9) * 1e6))
    do throws(StoreError) {
      try store.announce(now)
      failing.withLock { $0 = false }
    } catch {
      if !failing.withLock({ was in defer { was = true }; return was }) {
        log("could not record this worker's heartbeat in the store: \(error.message)")
      }
    }
  }
}

extension Duration {
  /// The duration in seconds.
  fileprivate var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }
}
