/// Where a recorded run stands.
public enum RunStatus: String, Sendable, CaseIterable {
  /// Started and not finished: still running, or its process died.
  case running
  /// Every step succeeded, was reused or was skipped.
  case succeeded
  /// A step failed.
  case failed
  /// Stopped by a signal (Ctrl-C, SIGTERM) before it finished.
  case interrupted
}
