import Synchronization

/// Paces a worker's completions on PostgreSQL: one that also claims the
/// next job may commit without waiting for the disk (`synchronous_commit =
/// off`) while the last commit that waited is less than `window` old, so a
/// worker going through jobs pays for one flush per window, not one per job.
///
/// What this risks is bounded and is the queue's contract anyway: a server
/// crash (never a worker's) can lose the completions of the last `window`,
/// with every later change (PostgreSQL's log is replayed in order); those
/// jobs are then running under an expired lease and run again, in order,
/// as after a lost worker (at-least-once). A submit always waits for the
/// disk: a job once accepted is never lost.
final class DurableCommitPacing: Sendable {
  private let window: Duration
  private let lastDurable: Mutex<ContinuousClock.Instant?> = Mutex(nil)

  init(window: Duration) { self.window = window }

  /// True if the next commit may skip waiting for the disk.
  func mayDefer() -> Bool {
    lastDurable.withLock { last in last.map { ContinuousClock.now - $0 < window } ?? false }
  }

  /// Notes a commit that waited for the disk.
  func committed() {
    lastDurable.withLock { $0 = .now }
  }
}
