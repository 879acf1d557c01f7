import LuaKit
import Synchronization

/// Swift async work started from the loop thread, whose result the loop
/// takes back: each piece has a ticket until its result is delivered, on the
/// loop and exactly once, or it is cancelled. The tickets are the work in
/// flight that the scheduler counts: while there is any, an idle loop
/// sleeps until a result arrives instead of reporting a deadlock. Every
/// bridge from the loop to Swift's pool (async host functions, queue jobs
/// written in Swift, Swift command interpreters, `afterAsync`) goes through
/// here, so the count is kept in one place. Loop thread only.
public final class OffLoopWork {
  /// One piece of work in flight.
  public struct Ticket: Hashable, Sendable {
    fileprivate let id: Int
  }

  /// How work started with `startImmediately` went.
  public enum Start<Value> {
    /// It finished without suspending: here is its result (no ticket).
    case finished(Value)
    /// It suspended: its result will be delivered on the loop.
    case running(Ticket)
  }

  /// Posts work to run on the loop thread with this object; false if the
  /// loop has shut down (the result is then dropped).
  typealias Post = @Sendable (@escaping @Sendable (OffLoopWork) -> Void) -> Bool

  private let post: Post
  private var pending: [Int: PendingWork] = [:]
  private var nextID = 1

  /// Work whose results come back through `post` (the runtime's inbox).
  init(post: @escaping Post) { self.post = post }

  /// How many pieces of work are in flight: started, neither delivered nor
  /// cancelled.
  public var count: Int { pending.count }

  /// True while `ticket`'s work is in flight.
  public func isRunning(_ ticket: Ticket) -> Bool { pending[ticket.id] != nil }

  /// Runs `work` on Swift's pool; `deliver` then runs on the loop with its
  /// result, once, unless the ticket is cancelled first.
  @discardableResult
  public func start<Value: Sendable>(
    _ work: @escaping @Sendable () async -> Value, then deliver: @escaping (Value) -> Void
  ) -> Ticket {
    let id = nextID
    nextID += 1
    let post = self.post
    let task = Task {
      let value = await work()
      _ = post { work in work.finish(id, value) }
    }
    pending[id] = Delivery(task: task, deliver: deliver)
    return Ticket(id: id)
  }

  /// Runs `work`, whose value is for Lua, at once on this thread
  /// (`Task.immediate`) until it first suspends. The value is held against
  /// `budget` from when the work returns it (see `LuaMemoryBudget.hold`).
  /// A result ready without suspending is returned as `.finished`, with no
  /// thread hop and no ticket; otherwise the work goes on in Swift's pool,
  /// and `deliverLater` (called before this returns) gives what receives
  /// its result on the loop.
  public func startImmediately(
    holding budget: LuaMemoryBudget, _ work: @escaping @Sendable () async throws -> LuaValue,
    deliverLater: (Ticket) -> (Result<ChargedValue, any Error>) -> Void
  ) -> Start<Result<ChargedValue, any Error>> {
    // One closure for the task, the value held inside it: this is the path
    // of every async host call that completes at once.
    let handoff = Handoff()
    let post = self.post
    let task = Task.immediate {
      let result: Result<ChargedValue, any Error>
      do {
        result = .success(try budget.hold(try await work()))
      } catch {
        result = .failure(error)
      }
      if let id = handoff.finish(result) { _ = post { work in work.finish(id, result) } }
    }
    let id = nextID
    if let result = handoff.detach(id: id) { return .finished(result) }
    nextID += 1
    let ticket = Ticket(id: id)
    pending[id] = Delivery(task: task, deliver: deliverLater(ticket))
    return .running(ticket)
  }

  /// Cancels the Swift task and forgets the ticket: its result, if it
  /// comes, is dropped. Does nothing for a ticket no longer in flight.
  public func cancel(_ ticket: Ticket) {
    pending.removeValue(forKey: ticket.id)?.task.cancel()
  }

  /// Cancels the Swift task but keeps the ticket: its result (often
  /// `CancellationError`) is still delivered when the work ends, so whoever
  /// waits for it knows when it has stopped.
  public func requestCancellation(_ ticket: Ticket) {
    pending[ticket.id]?.task.cancel()
  }

  /// Delivers the result of the work with `id`, unless it was cancelled.
  private func finish<Value>(_ id: Int, _ value: Value) {
    guard let entry = pending.removeValue(forKey: id) else { return }
    unsafeDowncast(entry, to: Delivery<Value>.self).deliver(value)
  }
}

/// The Swift task of work in flight, for cancelling it.
private class PendingWork {
  let task: Task<Void, Never>

  init(task: Task<Void, Never>) { self.task = task }
}

/// Work in flight with what receives its result. The ticket's id fixes
/// `Value`, so `finish` finds a `Delivery` of the value's own type.
private final class Delivery<Value>: PendingWork {
  let deliver: (Value) -> Void

  init(task: Task<Void, Never>, deliver: @escaping (Value) -> Void) {
    self.deliver = deliver
    super.init(task: task)
  }
}

/// Hands the result of a `Task.immediate` to whichever side is there: the
/// caller still running on the loop right after starting it, or the loop
/// later (through the ticket's id). Not generic: a generic class's
/// metadata is looked up at run time on every allocation, a cost every
/// async host call would pay.
private final class Handoff: Sendable {
  private enum State {
    case running
    case finished(Result<ChargedValue, any Error>)
    case detached(id: Int)
  }

  private let state = Mutex(State.running)

  /// Called by the task when done: the id to post the result to if the
  /// caller has already moved on, or nil if it will take the result.
  func finish(_ result: Result<ChargedValue, any Error>) -> Int? {
    state.withLock { state in
      if case .detached(let id) = state { return id }
      state = .finished(result)
      return nil
    }
  }

  /// Called right after starting the task: its result if it is already
  /// there; otherwise nil, and the task will post its result to `id`.
  func detach(id: Int) -> Result<ChargedValue, any Error>? {
    state.withLock { state in
      if case .finished(let result) = state { return result }
      state = .detached(id: id)
      return nil
    }
  }
}
