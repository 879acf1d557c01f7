/// What became of one tick of a schedule.
public enum TickOutcome: Sendable, Equatable {
  /// This call started it: the run it submitted.
  case started(RunID)
  /// This call decided it and started nothing (the overlap policy said so).
  case skipped
  /// Another caller (another worker) had decided it already.
  case taken
}
