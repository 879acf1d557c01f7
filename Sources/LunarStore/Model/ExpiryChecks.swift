import Synchronization

/// When a store's claims last looked for a running job whose lease expired.
/// A claim takes a waiting head first and looks for expired leases only
/// when none waits, or when `interval` has passed since the last look: a
/// lost worker's job is claimed again within `interval` of its lease's end,
/// and a busy queue pays for that look once per `interval`, not per job.
final class ExpiryChecks: Sendable {
  /// The longest time between two looks while heads keep waiting.
  static let interval: Duration = .seconds(1)

  private let last = Mutex<ContinuousClock.Instant?>(nil)

  /// True, noting the look, when a look is due.
  func due() -> Bool {
    last.withLock { last in
      if let checked = last, ContinuousClock.now - checked < Self.interval { return false }
      last = .now
      return true
    }
  }

  /// Notes a look made because no head waited.
  func checked() {
    last.withLock { $0 = .now }
  }
}
