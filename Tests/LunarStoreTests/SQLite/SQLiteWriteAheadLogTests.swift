import Foundation
import LunarStore
import Testing
import TestSupport

/// The SQLite store's write-ahead log while several processes write to it:
/// it must stay near the size one process alone keeps (SQLite's 1,000
/// pages, about 4 MB), not grow with every commit.
@Suite struct SQLiteWriteAheadLogTests {
  /// The bound: eight times what either process alone keeps. On a loaded
  /// machine a checkpoint may miss its moment a few times (each miss lets
  /// the log grow by 1,000 pages before the next try); a log that grows by
  /// every commit reaches 222 MB here.
  static let bound = 8 * 4 * 1024 * 1024

  /// A second connection to a store this process has open (`lunar serve`
  /// opens the runs, the queues and its change feed) must not drop the
  /// first's locks: a file descriptor of the store closed by the check
  /// before SQLite opens it did, and another process that closed its
  /// connection then took the store for unused and deleted its log, with
  /// every later commit of this process written into the deleted file.
  @Test func aSecondConnectionInOneProcessLosesNoCommit() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("store.db").path
    let first = try SQLiteRunStore(path: path)
    _ = try first.beginRun(NewRun(workflow: "w", file: "w.lua", startedAt: .now, host: "h", pid: 1))
    _ = try SQLiteRunStore(path: path)
    _ = try SQLiteQueueStore(path: path)
    // Another process opens the store and closes it: the last to close
    // checkpoints the log and deletes it, if it may.
    let count = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute('SELECT count(*) FROM run').fetchone()[0]); c.close()"
    let before = try await ProgramRun.run("/usr/bin/python3", ["-c", count, path])
    #expect(before.stdout == "1\n", "\(before.stderr)")
    _ = try first.beginRun(NewRun(workflow: "w", file: "w.lua", startedAt: .now, host: "h", pid: 1))
    let after = try await ProgramRun.run("/usr/bin/python3", ["-c", count, path])
    #expect(after.stdout == "2\n", "\(after.stderr)")
    #expect(FileManager.default.fileExists(atPath: path + "-wal"))
  }

  @Test func aSubmitterAndAWorkerAtOnceKeepTheLogBounded() async throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("store.db").path
    // Made before the two start, so neither waits on the other's migration.
    _ = try SQLiteQueueStore(path: path)
    // Enough jobs that a log growing by each commit passes the bound
    // many times over (it grew by 4 to 37 KB a job).
    let jobs = 6_000
    let submitter = try ProbeProcess(arguments: ["submit", path, "work", String(jobs)])
    let worker = try ProbeProcess(arguments: ["drain", path, "worker", String(jobs)])
    let statuses = [try await submitter.wait(timeout: 600), try await worker.wait(timeout: 600)]
    #expect(statuses == [0, 0], "\(submitter.errorText) \(worker.errorText)")
    #expect(worker.lines.last == "done", "\(worker.lines.suffix(3))")

    // The largest size each saw after any of its commits.
    let peaks = [submitter, worker].compactMap { probe in
      probe.lines.first { $0.hasPrefix("peak-wal ") }.flatMap { Int($0.dropFirst("peak-wal ".count)) }
    }
    #expect(peaks.count == 2)
    #expect(peaks.allSatisfy { $0 <= Self.bound }, "peak write-ahead log sizes \(peaks) bytes, bound \(Self.bound)")

    // Nothing was lost on the way: every job finished once.
    let store = try SQLiteQueueStore(path: path)
    let summary = try #require(try store.queues().first)
    #expect(summary.submitted == Int64(jobs) && summary.waiting == 0 && summary.running == nil)
  }
}
