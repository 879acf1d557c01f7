import Dispatch
import Synchronization

/// One value handed from the thread or task that makes it to a thread that
/// blocks until it comes: a runtime's set-up and `runBlocking` answers, the
/// command line waiting for async work. Never wait on Swift's cooperative
/// pool (docs/architecture.md, "One thread per Lua state").
public final class BlockingHandoff<Value: Sendable>: Sendable {
  private let value = Mutex<Value?>(nil)
  private let arrived = DispatchSemaphore(value: 0)

  /// A handoff with no value yet.
  public init() {}

  /// Hands `value` over and wakes the waiting thread; call it once.
  public func put(_ newValue: Value) {
    value.withLock { $0 = newValue }
    arrived.signal()
  }

  /// Blocks until `put` has run, then returns its value; call it once.
  public func take() -> Value {
    arrived.wait()
    return value.withLock { $0.take()! }
  }
}
