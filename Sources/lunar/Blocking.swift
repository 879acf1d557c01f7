import Dispatch
import Synchronization

/// Runs async work to completion from synchronous code (the CLI's main
/// thread has nothing else to do while it waits).
enum Blocking {
  static func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
      box.set(await work())
      done.signal()
    }
    done.wait()
    return box.get()!
  }

  /// Carries the result from the task to the waiting thread.
  private final class Box<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    func set(_ newValue: T) { value.withLock { $0 = newValue } }
    func get() -> T? { value.withLock { $0 } }
  }
}
