import Foundation
import LunarSchedules
import LunarStore
import Testing
import TestSupport

/// A worker's presence on a real SQLite store: listed as soon as the beat
/// starts, heartbeating on its own thread, withdrawn when it stops.
@Suite struct WorkerPresenceBeatTests {
  @Test func aBeatListsTheWorkerHeartbeatsAndWithdrawsIt() async throws {
    let folder = try TemporaryFolder()
    let store = try SQLiteRunStore(path: folder.url.appendingPathComponent("runs.db").path)
    let worker = WorkerID("box:1")
    let beat = WorkerPresenceBeat(store: store, worker: worker, serves: "runs (3 at once)", lease: .milliseconds(600)) { _ in }
    let first = try #require(try store.workers().first)
    #expect(first.worker == worker && first.serves == "runs (3 at once)" && first.pid == getpid())
    #expect(first.expiresAt.microseconds - first.seenAt.microseconds == 600_000)
    // Heartbeats come every third of the lease: wait for the next one.
    var later = first
    for _ in 0..<500 where later.seenAt == first.seenAt {
      try await Task.sleep(for: .milliseconds(10))
      later = try #require(try store.workers().first)
    }
    #expect(later.seenAt.microseconds > first.seenAt.microseconds && later.startedAt == first.startedAt)
    beat.stop()
    #expect(try store.workers().isEmpty)
  }
}
