/// What a schedule's tick does while the schedule's previous run is unfinished.
public enum ScheduleOverlap: String, Sendable, CaseIterable {
  /// Starts nothing (the default).
  case skip
  /// Queues one run, which waits for the unfinished one; further ticks are
  /// skipped while it waits.
  case queueOne = "queue-one"
  /// Starts a run whatever else runs.
  case allow

  /// Whether a tick starts a run when the schedule has `unfinished` runs
  /// not yet finished, `queued` of them not yet taken by a worker.
  public func startsRun(unfinished: Int, queued: Int) -> Bool {
    switch self {
    case .skip: unfinished == 0
    case .queueOne: unfinished == 0 || (queued == 0 && unfinished == 1)
    case .allow: true
    }
  }
}
