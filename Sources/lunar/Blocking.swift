import Lunar

/// Runs async work to completion from synchronous code (the CLI's main
/// thread has nothing else to do while it waits).
enum Blocking {
  static func run<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let answer = BlockingHandoff<T>()
    Task { answer.put(await work()) }
    return answer.take()
  }
}
