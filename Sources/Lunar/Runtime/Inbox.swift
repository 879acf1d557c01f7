import CLuaShim  // the loop sleeps on a semaphore in the shim's control block; posting wakes it there
import Synchronization

/// Work posted to a runtime from other threads; the loop thread runs it in
/// order. Posting wakes the loop.
final class Inbox: Sendable {
  /// One posted piece of work, run on the loop thread.
  typealias Event = @Sendable (RuntimeCore) -> Void

  private struct Contents {
    var events: [Event] = []
    var open = true
  }

  private let contents = Mutex(Contents())
  private let wakeup: Wakeup

  init(wakeup: Wakeup) { self.wakeup = wakeup }

  /// Adds an event; false if the runtime has shut down.
  @discardableResult
  func post(_ event: @escaping Event) -> Bool {
    contents.withLock { contents in
      guard contents.open else { return false }
      contents.events.append(event)
      // Under the lock, so `close` cannot free the state in between.
      wakeup.wake()
      return true
    }
  }

  /// Takes every waiting event.
  func drain() -> [Event] {
    contents.withLock { contents in
      if contents.events.isEmpty { return [] }
      defer { contents.events.removeAll(keepingCapacity: true) }
      return contents.events
    }
  }

  /// Refuses further posts; returns what was still waiting.
  func close() -> [Event] {
    contents.withLock { contents in
      contents.open = false
      defer { contents.events.removeAll() }
      return contents.events
    }
  }
}

/// Wakes the loop thread sleeping in `lunar_sleep`.
struct Wakeup: @unchecked Sendable {
  // Safe: the pointer is used only for lunar_wake, a sem_post on the
  // state's control block, which is thread- and signal-safe; the Inbox
  // calls it under its lock and stops before the state is closed.
  let L: OpaquePointer

  func wake() { lunar_wake(L) }
}
