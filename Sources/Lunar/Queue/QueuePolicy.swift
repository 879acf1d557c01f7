/// What a queue does with the jobs still waiting when one fails.
public enum QueuePolicy: String, Sendable, CaseIterable {
  /// A failure stays in its job's handle; the next job runs.
  case `continue`
  /// After a failure, the jobs still waiting are cancelled (in order).
  case stop
}
