import Synchronization

/// The handle `OrderedQueue.submit` returns at once: the job's result once
/// it has run, and a way to cancel it. A small value; copies share the job.
public struct JobHandle<Value: Sendable>: Sendable {
  @usableFromInline let job: QueuedJob

  @usableFromInline
  init(job: QueuedJob) { self.job = job }

  /// The job's position in its queue, from 1.
  public var sequence: Int { job.sequence }

  /// The job's value, or its error (`CancellationError` if cancelled).
  public var value: Value {
    get async throws { try await result.get() }
  }

  /// The job's outcome, once it has one.
  public var result: Result<Value, any Error> {
    get async {
      // The job stores the value type-erased; it is always a `Value`.
      await job.outcome().map { $0 as! Value }
    }
  }

  /// True once the job has an outcome.
  public var isFinished: Bool { job.isFinished }

  /// Cancels the job: if it has not started it never runs (and reports
  /// cancelled only in its turn); if it is running, its work sees Swift
  /// task cancellation at its next suspension.
  public func cancel() { job.cancel() }
}

/// One job of an `OrderedQueue`, its value type erased so the queue's
/// consumer runs every job through the same non-generic code (generic
/// classes would look up type metadata on every call).
///
/// Each job has its own lock: the consumer takes it when the job starts and
/// when it ends, and `cancel` takes it to reach the consumer's task only
/// while this job runs, so a late cancel can never reach the next job.
@usableFromInline
final class QueuedJob: Sendable {
  let sequence: Int
  private let work: @Sendable () async throws -> any Sendable
  private let state = Mutex(State())

  private enum Phase {
    case waiting
    case running(ConsumerTask)
    case finished
  }

  /// Plain fields rather than an optional `Result`: the consumer sets them
  /// for every job, and an enum of existentials costs runtime calls to copy.
  private struct State {
    var phase = Phase.waiting
    var cancelRequested = false
    var value: any Sendable = ()
    var error: (any Error)?
    var waiters: [CheckedContinuation<Void, Never>] = []

    var isFinished: Bool {
      if case .finished = phase { return true }
      return false
    }
  }

  @usableFromInline
  init(sequence: Int, work: @escaping @Sendable () async throws -> any Sendable) {
    self.sequence = sequence
    self.work = work
  }

  /// The outcome, once there is one.
  func outcome() async -> Result<any Sendable, any Error> {
    await withCheckedContinuation { continuation in
      let finished = state.withLock { state in
        if !state.isFinished { state.waiters.append(continuation) }
        return state.isFinished
      }
      if finished { continuation.resume() }
    }
    return state.withLock { state in
      if let error = state.error { return .failure(error) }
      return .success(state.value)
    }
  }

  var isFinished: Bool { state.withLock { $0.isFinished } }

  func cancel() {
    state.withLock { state in
      state.cancelRequested = true
      if case .running(let consumer) = state.phase { consumer.cancel() }
    }
  }

  /// Asks the job not to run, without cancelling it if it runs already
  /// (the stop policy, for jobs still waiting).
  func markCancelled() { state.withLock { $0.cancelRequested = true } }

  /// Marks the job running on `consumer`'s task; false if it was cancelled
  /// before its turn (it is then finished as cancelled).
  func start(on consumer: ConsumerTask) -> Bool {
    let cancelled = state.withLock { state -> Bool in
      if state.cancelRequested { return true }
      state.phase = .running(consumer)
      return false
    }
    if cancelled { finish(value: (), error: CancellationError()) }
    return !cancelled
  }

  /// Runs the work (after `start`) and keeps its outcome; true if it failed.
  /// Inlined into the consumer loop: one async call per job, not two.
  @inline(__always)
  func run() async -> Bool {
    do {
      finish(value: try await work(), error: nil)
      return false
    } catch {
      finish(value: (), error: error)
      return true
    }
  }

  private func finish(value: any Sendable, error: (any Error)?) {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.phase = .finished
      state.value = value
      state.error = error
      guard !state.waiters.isEmpty else { return [] }
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }
}

/// The task a queue's consumer loop runs in, so that cancelling the running
/// job can cancel it (a cancel that arrives before the task is attached is
/// delivered on attaching).
final class ConsumerTask: Sendable {
  private let task = Mutex<Task<Void, Never>?>(nil)
  // Set under `task`'s lock, so `attach` and `cancel` cannot miss each
  // other; read without it by the running job.
  private let cancelled = Atomic<Bool>(false)

  /// True once a job running on this task was cancelled (cheaper to ask
  /// than `Task.isCancelled`, and only this type cancels the task).
  var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

  func attach(_ task: Task<Void, Never>) {
    let cancelledBefore = self.task.withLock { slot in
      slot = task
      return cancelled.load(ordering: .relaxed)
    }
    if cancelledBefore { task.cancel() }
  }

  func cancel() {
    let task = self.task.withLock { slot in
      cancelled.store(true, ordering: .releasing)
      return slot
    }
    task?.cancel()
  }
}
