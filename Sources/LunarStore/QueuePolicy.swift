/// What a job's failure does to its queue.
public enum QueuePolicy: String, Sendable, CaseIterable {
  /// The next job starts anyway.
  case `continue`
  /// The queue halts: no later job starts until `QueueStore.resume(queue:)`.
  case stop
}
