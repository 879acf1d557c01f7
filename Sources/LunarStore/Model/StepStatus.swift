/// How a recorded step ended.
public enum StepStatus: String, Sendable, CaseIterable {
  /// It ran and returned; its output is kept.
  case succeeded
  /// It raised an error (after its retries); the error is kept.
  case failed
  /// It did not run (its condition was false, or a step it needs did not succeed).
  case skipped
  /// An earlier run's output was taken for it: its inputs had not changed.
  case reused
}
