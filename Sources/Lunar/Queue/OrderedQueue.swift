import Synchronization

/// A queue that runs async jobs strictly one after another, in submission
/// order, across suspension points: job N+1 starts only after job N has
/// finished (succeeded, failed or was cancelled). `submit` returns a handle
/// at once. Usable from any Swift code, without Lua.
///
/// One consumer loop per queue drains a FIFO buffer, taking every waiting
/// job in one step; the loop exists while there is work, so an idle queue
/// costs nothing and a burst of jobs costs one task, not one or two per job.
/// Submitters and the consumer share only the buffer's lock, once per
/// batch; the consumer's per-job bookkeeping has a lock of its own.
public final class OrderedQueue: Sendable {
  /// The queue's name, for traces and messages.
  public let name: String
  /// What happens to waiting jobs when one fails.
  public let policy: QueuePolicy

  @usableFromInline
  struct Buffer {
    @usableFromInline var jobs: [QueuedJob] = []
    @usableFromInline var consumerRunning = false
    @usableFromInline var nextSequence = 1
  }

  private struct Progress {
    var consumer: Task<Void, Never>?
    var running = 0
    var finishedThrough = 0
    var drainWaiters: [(upTo: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  @usableFromInline let buffer = Mutex(Buffer())
  private let progress = Mutex(Progress())

  /// A queue called `name` with a failure policy.
  public init(name: String, policy: QueuePolicy = .continue) {
    self.name = name
    self.policy = policy
  }

  /// Adds a job; it runs after every job submitted before it has finished.
  @inlinable
  @discardableResult
  public func submit<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) -> JobHandle<Value> {
    let (handle, start) = buffer.withLock { buffer -> (JobHandle<Value>, Bool) in
      let job = QueuedJob(sequence: buffer.nextSequence, queue: self) { try await work() }
      buffer.nextSequence += 1
      buffer.jobs.append(job)
      let start = !buffer.consumerRunning
      buffer.consumerRunning = true
      return (JobHandle<Value>(job: job), start)
    }
    if start { startConsumer() }
    return handle
  }

  /// Jobs waiting or running.
  public var count: Int {
    let submitted = buffer.withLock { $0.nextSequence - 1 }
    return submitted - progress.withLock { $0.finishedThrough }
  }

  /// The sequence number of the running job, if any.
  public var runningSequence: Int? { progress.withLock { $0.running == 0 ? nil : $0.running } }

  /// Waits until every job submitted so far has finished.
  public func drain() async {
    let last = buffer.withLock { $0.nextSequence - 1 }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let done = progress.withLock { progress -> Bool in
        if progress.finishedThrough >= last { return true }
        progress.drainWaiters.append((last, continuation))
        return false
      }
      if done { continuation.resume() }
    }
  }

  @usableFromInline
  func startConsumer() {
    progress.withLock { progress in
      progress.consumer = Task { await self.consume() }
    }
  }

  /// Cancels the consumer task if it is running job `sequence` now; the
  /// check and the consumer's move to the next job share the lock, so a
  /// late cancel never reaches the next job.
  func cancelRunning(_ sequence: Int) {
    progress.withLock { progress in
      if progress.running == sequence { progress.consumer?.cancel() }
    }
  }

  /// The consumer loop.
  private func consume() async {
    while true {
      let batch = buffer.withLock { buffer -> [QueuedJob] in
        if buffer.jobs.isEmpty {
          buffer.consumerRunning = false
          return []
        }
        defer { buffer.jobs = [] }
        return buffer.jobs
      }
      guard let first = batch.first else { return }
      progress.withLock { $0.running = first.sequence }
      for (index, job) in batch.enumerated() {
        let failed: Bool
        if job.cancelRequested {
          job.resolveCancelled()
          failed = false
        } else {
          failed = await job.run()
        }
        let rest = batch[(index + 1)...]
        if failed && policy == .stop { cancelWaiting(rest) }
        if end(job, next: rest.first) {
          // A running job was cancelled through this task: hand the rest of
          // the queue to a fresh consumer so later jobs do not start cancelled.
          buffer.withLock { buffer in buffer.jobs = Array(rest) + buffer.jobs }
          startConsumer()
          return
        }
      }
    }
  }

  private func cancelWaiting(_ rest: ArraySlice<QueuedJob>) {
    for job in rest { job.markCancelled() }
    buffer.withLock { buffer in
      for job in buffer.jobs { job.markCancelled() }
    }
  }

  /// Records the end of `job` and the start of `next`, in one step; returns
  /// true if this consumer was cancelled.
  private func end(_ job: QueuedJob, next: QueuedJob?) -> Bool {
    let (ready, cancelled) = progress.withLock { progress -> ([CheckedContinuation<Void, Never>], Bool) in
      let cancelled = Task.isCancelled
      progress.running = cancelled ? 0 : (next?.sequence ?? 0)
      progress.finishedThrough = job.sequence
      var ready: [CheckedContinuation<Void, Never>] = []
      if !progress.drainWaiters.isEmpty {
        ready = progress.drainWaiters.filter { $0.upTo <= job.sequence }.map(\.continuation)
        progress.drainWaiters.removeAll { $0.upTo <= job.sequence }
      }
      return (ready, cancelled)
    }
    for continuation in ready { continuation.resume() }
    return cancelled
  }
}
