/// What a job's failure does to its queue. One policy for every kind of
/// ordered queue: in a process (`lunar.queue`, `OrderedQueue`) `stop`
/// cancels the jobs still waiting, in order; in a store (durable queues)
/// it halts the queue until `QueueStore.resume(queue:)`, so the jobs wait.
public enum QueuePolicy: String, Sendable, CaseIterable {
  /// A failure stays in its job's handle; the next job runs.
  case `continue`
  /// The jobs after a failure do not run (cancelled, or held until resumed).
  case stop
}
