import Foundation
import LuaKit
import LunarStore
import Synchronization
import Testing
import TestSupport

@testable import Lunar

/// A SQLite store in a temporary folder, with a runtime that submits to it
/// (its durable queues live there) and a worker runtime that loaded the
/// actions `workerSource` (given the folder's path) defines, as
/// `lunar worker FILE` would.
struct DurableFixture {
  let folder: TemporaryFolder
  let path: String
  let store: SQLiteQueueStore
  let submitter: TestRuntime
  let workerRuntime: TestRuntime

  init(workerSource: (String) -> String) async throws {
    folder = try TemporaryFolder()
    path = folder.url.appendingPathComponent("queues.db").path
    store = try SQLiteQueueStore(path: path)
    let location = StoreLocation(.sqlite(path: path))
    submitter = try TestRuntime(clock: .real) { $0.store = location }
    workerRuntime = try TestRuntime(clock: .real) { $0.store = location }
    _ = try await workerRuntime.run(workerSource(folder.url.path))
  }

  /// A worker on the worker runtime, its log lines kept in `log`.
  func worker(_ options: DurableWorker.Options = .init(worker: WorkerID("test:1")), log: WorkerLog = WorkerLog())
    throws -> DurableWorker
  {
    try DurableWorker(runtime: workerRuntime.runtime, store: store, options: options, log: { log.add($0) })
  }

  /// Waits until `condition` holds of the store, looking every 5 ms; an
  /// issue (and false) if it has not after `timeout` seconds.
  func waitUntil(timeout: Double = 60, _ what: String, _ condition: (SQLiteQueueStore) throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while try !condition(store) {
      guard Date() < deadline else {
        Issue.record("never happened: \(what)")
        return false
      }
      try await Task.sleep(for: .milliseconds(5))
    }
    return true
  }
}

/// The lines a worker logged.
final class WorkerLog: Sendable {
  private let lines = Mutex<[String]>([])

  func add(_ line: String) { lines.withLock { $0.append(line) } }

  var all: [String] { lines.withLock { $0 } }
}

/// A `DurableWorker` running on a thread of its own (`run` blocks its
/// thread, which must not be one of Swift's pool), awaited without blocking.
final class WorkerThread: Sendable {
  private let state = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

  /// Starts `body` (which runs a worker) on a new thread.
  init(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread { [self] in
      body()
      let waiter = state.withLock { state in
        state.done = true
        return state.waiter
      }
      waiter?.resume()
    }
    thread.start()
  }

  /// Starts `worker.run()`.
  convenience init(running worker: DurableWorker) {
    self.init { worker.run() }
  }

  /// Waits until the worker has returned.
  func join() async {
    await withCheckedContinuation { continuation in
      let done = state.withLock { state in
        if !state.done { state.waiter = continuation }
        return state.done
      }
      if done { continuation.resume() }
    }
  }
}
