/// Where a queued job stands. Succeeded, failed and cancelled are final: a
/// job in one of them never changes again.
public enum JobStatus: String, Sendable, CaseIterable {
  /// Submitted, not started (or started by a worker that was lost and whose
  /// lease expired: it is then `running` until claimed again).
  case waiting
  /// Claimed by a worker, which holds it while its lease lasts.
  case running
  /// Finished with an output.
  case succeeded
  /// Finished with an error.
  case failed
  /// Cancelled before it started: it never runs.
  case cancelled

  /// True for the states a job never leaves.
  public var isFinal: Bool { self != .waiting && self != .running }
}
