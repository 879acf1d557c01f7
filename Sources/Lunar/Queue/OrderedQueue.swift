import LunarStore
import Synchronization

/// A queue that runs async jobs strictly one after another, in submission
/// order, across suspension points: job N+1 starts only after job N has
/// finished (succeeded, failed or was cancelled). `submit` returns a handle
/// at once. Usable from any Swift code, without Lua.
///
/// One consumer loop per queue drains a FIFO buffer, taking every waiting
/// job in one step; the loop exists while there is work, so an idle queue
/// costs nothing and a burst of jobs costs one task, not one or two per job.
/// Submitters and the consumer share the buffer's lock once per batch; per
/// job, the consumer takes only that job's own lock and updates two
/// counters.
public final class OrderedQueue: Sendable {
  /// The queue's name, for traces and messages.
  public let name: String
  /// What happens to waiting jobs when one fails.
  public let policy: QueuePolicy

  @usableFromInline
  struct Buffer {
    /// Waiting jobs. The consumer swaps in its emptied array for them, so
    /// submitters append into storage that has already grown.
    @usableFromInline var jobs: [QueuedJob?] = []
    @usableFromInline var consumerRunning = false
    @usableFromInline var nextSequence = 1
  }

  @usableFromInline let buffer = Mutex(Buffer())
  /// The sequence number of the job running now, 0 for none.
  private let running = Atomic<Int>(0)
  /// Every job up to this sequence number has finished.
  private let finishedThrough = Atomic<Int>(0)
  /// The smallest sequence a drain waits for (`Int.max` when none does):
  /// the consumer looks at the waiters only when a job reaches it.
  private let nextDrainWake = Atomic<Int>(.max)
  /// Drains waiting for every job up to `upTo` to finish.
  private let drainWaiters = Mutex<[(upTo: Int, continuation: CheckedContinuation<Void, Never>)]>([])

  /// A queue called `name` with a failure policy.
  public init(name: String, policy: QueuePolicy = .continue) {
    self.name = name
    self.policy = policy
  }

  /// Adds a job; it runs after every job submitted before it has finished.
  @inlinable
  @discardableResult
  public func submit<Value: Sendable>(_ work: @escaping @Sendable () async throws -> Value) -> JobHandle<Value> {
    let (job, start) = buffer.withLock { buffer -> (QueuedJob, Bool) in
      let job = QueuedJob(sequence: buffer.nextSequence) { try await work() }
      buffer.nextSequence += 1
      buffer.jobs.append(job)
      let start = !buffer.consumerRunning
      buffer.consumerRunning = true
      return (job, start)
    }
    if start { startConsumer() }
    return JobHandle(job: job)
  }

  /// Jobs waiting or running.
  public var count: Int {
    let submitted = buffer.withLock { $0.nextSequence - 1 }
    return submitted - finishedThrough.load(ordering: .sequentiallyConsistent)
  }

  /// The sequence number of the running job, if any.
  public var runningSequence: Int? {
    let sequence = running.load(ordering: .sequentiallyConsistent)
    return sequence == 0 ? nil : sequence
  }

  /// Waits until every job submitted so far has finished.
  public func drain() async {
    let last = buffer.withLock { $0.nextSequence - 1 }
    guard finishedThrough.load(ordering: .sequentiallyConsistent) < last else { return }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      drainWaiters.withLock { $0.append((last, continuation)) }
      // Announce the wait, then look again: either this sees the consumer's
      // progress or the consumer sees the announcement (both are
      // sequentially consistent), so no wake-up is lost.
      lowerNextDrainWake(to: last)
      wakeDrainWaiters(finished: finishedThrough.load(ordering: .sequentiallyConsistent))
    }
  }

  private func lowerNextDrainWake(to sequence: Int) {
    var current = nextDrainWake.load(ordering: .sequentiallyConsistent)
    while sequence < current {
      let (exchanged, original) = nextDrainWake.compareExchange(
        expected: current, desired: sequence, ordering: .sequentiallyConsistent)
      if exchanged { break }
      current = original
    }
  }

  /// Resumes the drains that wait for jobs up to `finished` (whoever removes
  /// a waiter from the list resumes it, so each is resumed once).
  private func wakeDrainWaiters(finished: Int) {
    let ready = drainWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
      let ready = waiters.filter { $0.upTo <= finished }.map(\.continuation)
      guard !ready.isEmpty else { return [] }
      waiters.removeAll { $0.upTo <= finished }
      nextDrainWake.store(waiters.map(\.upTo).min() ?? .max, ordering: .sequentiallyConsistent)
      return ready
    }
    for continuation in ready { continuation.resume() }
  }

  @usableFromInline
  func startConsumer() {
    let consumer = ConsumerTask()
    consumer.attach(Task { await self.consume(as: consumer) })
  }

  /// The consumer loop. Runs in its own task; a job cancelled while running
  /// cancels that task, so the loop then hands the rest to a fresh task.
  private func consume(as consumer: ConsumerTask) async {
    var batch: [QueuedJob?] = []
    while true {
      buffer.withLock { buffer in
        swap(&batch, &buffer.jobs)
        if batch.isEmpty {
          buffer.consumerRunning = false
          // An idle queue keeps no large storage.
          if buffer.jobs.capacity > 4096 { buffer.jobs = [] }
        }
      }
      if batch.isEmpty { return }
      var index = batch.startIndex
      while index < batch.endIndex {
        // Moved out, so it is released as soon as it is done, not with the batch.
        let job = batch[index].take()!
        index += 1
        running.store(job.sequence, ordering: .relaxed)
        let failed = job.start(on: consumer) ? await job.run() : false
        if failed && policy == .stop { cancelWaiting(batch[index...]) }
        if index == batch.endIndex { running.store(0, ordering: .relaxed) }
        finishedThrough.store(job.sequence, ordering: .sequentiallyConsistent)
        if job.sequence >= nextDrainWake.load(ordering: .sequentiallyConsistent) {
          wakeDrainWaiters(finished: job.sequence)
        }
        if consumer.isCancelled {
          // A running job was cancelled through this task: hand the rest to
          // a fresh consumer so later jobs do not start cancelled.
          let rest = batch[index...].compactMap { $0 }
          buffer.withLock { buffer in buffer.jobs = rest + buffer.jobs }
          running.store(0, ordering: .sequentiallyConsistent)
          startConsumer()
          return
        }
      }
      batch.removeAll(keepingCapacity: true)
    }
  }

  private func cancelWaiting(_ rest: ArraySlice<QueuedJob?>) {
    for job in rest { job?.markCancelled() }
    buffer.withLock { buffer in
      for job in buffer.jobs { job?.markCancelled() }
    }
  }
}
