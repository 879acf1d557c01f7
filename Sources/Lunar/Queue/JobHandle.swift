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
@usableFromInline
final class QueuedJob: Sendable {
  let sequence: Int
  private let work: @Sendable () async throws -> any Sendable
  private unowned let queue: OrderedQueue
  private let cancelFlag = Atomic<Bool>(false)

  private struct State {
    var result: Result<any Sendable, any Error>?
    var waiters: [CheckedContinuation<Result<any Sendable, any Error>, Never>] = []
  }

  private let state = Mutex(State())

  @usableFromInline
  init(sequence: Int, queue: OrderedQueue, work: @escaping @Sendable () async throws -> any Sendable) {
    self.sequence = sequence
    self.queue = queue
    self.work = work
  }

  func outcome() async -> Result<any Sendable, any Error> {
    await withCheckedContinuation { continuation in
      let ready: Result<any Sendable, any Error>? = state.withLock { state in
        if let result = state.result { return result }
        state.waiters.append(continuation)
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  var isFinished: Bool { state.withLock { $0.result != nil } }

  func cancel() {
    markCancelled()
    queue.cancelRunning(sequence)
  }

  /// Marks the job cancelled without telling the queue (the stop policy).
  func markCancelled() { cancelFlag.store(true, ordering: .sequentiallyConsistent) }

  var cancelRequested: Bool { cancelFlag.load(ordering: .sequentiallyConsistent) }

  /// Runs the work and keeps its outcome; true if it failed.
  func run() async -> Bool {
    do {
      resolve(.success(try await work()))
      return false
    } catch {
      resolve(.failure(error))
      return true
    }
  }

  /// Ends the job as cancelled without running it.
  func resolveCancelled() { resolve(.failure(CancellationError())) }

  private func resolve(_ result: Result<any Sendable, any Error>) {
    let waiters = state.withLock { state -> [CheckedContinuation<Result<any Sendable, any Error>, Never>] in
      guard state.result == nil else { return [] }
      state.result = result
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume(returning: result) }
  }
}
