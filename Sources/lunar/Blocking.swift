import Dispatch

/// Runs async work to completion from synchronous code (the CLI's main
/// thread has nothing else to do while it waits).
enum Blocking {
  static func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let box = Box<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
      box.value = await work()
      done.signal()
    }
    done.wait()
    return box.value!
  }

  private final class Box<T: Sendable>: @unchecked Sendable {
    // Safe: written once by the task before it signals the semaphore, read
    // once by the waiting thread after; the semaphore orders the two.
    var value: T?
  }
}
