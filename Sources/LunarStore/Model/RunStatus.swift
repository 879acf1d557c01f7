/// Where a recorded run stands.
public enum RunStatus: String, Sendable, CaseIterable {
  /// Submitted (`lunar submit`, a schedule's tick) and not yet taken by a worker.
  case queued
  /// Started and not finished: still running, or its process died.
  case running
  /// Every step succeeded, was reused or was skipped.
  case succeeded
  /// A step failed.
  case failed
  /// Stopped before it finished without recording why (an older Lunar's
  /// Ctrl-C).
  case interrupted
  /// Waiting, with no process, for a sleep's deadline or a signal: a
  /// worker takes it again at `RunRecord.wakeAt` or when a signal is sent.
  case parked
  /// Cancelled before it finished: by a signal (`RunRecord.stoppedBy` names
  /// it: `SIGTERM`) or by `lunar runs cancel` (`request`).
  case cancelled
}

extension RunStatus {
  /// True once the run ended: it will not change again by itself.
  public var isFinished: Bool { self == .succeeded || self == .failed || self == .interrupted || self == .cancelled }
}
