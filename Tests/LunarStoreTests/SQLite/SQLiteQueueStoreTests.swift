import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

@Suite struct SQLiteQueueStoreTests {
  @Test func jobsComeBackAsSubmitted() throws { try QueueStoreBehaviour.jobsComeBackAsSubmitted(.sqlite()) }
  @Test func aJobOutOfRangeIsRefusedInOneLine() throws { try QueueStoreBehaviour.aJobOutOfRangeIsRefusedInOneLine(.sqlite()) }
  @Test func ordersAreStrictPerQueueWithSeveralClaimers() throws {
    try QueueStoreBehaviour.ordersAreStrictPerQueueWithSeveralClaimers(.sqlite())
  }
  @Test func aClaimNeverReturnsTheNextJobWhileItsPredecessorWaitsOrRuns() throws {
    try QueueStoreBehaviour.aClaimNeverReturnsTheNextJobWhileItsPredecessorWaitsOrRuns(.sqlite())
  }
  @Test func aFailureUnderStopHaltsTheQueueUntilResumed() throws {
    try QueueStoreBehaviour.aFailureUnderStopHaltsTheQueueUntilResumed(.sqlite())
  }
  @Test func aJobCancelledBeforeItStartsNeverRuns() throws { try QueueStoreBehaviour.aJobCancelledBeforeItStartsNeverRuns(.sqlite()) }
  @Test func aLostWorkersJobIsClaimedAgainBeforeItsSuccessors() throws {
    try QueueStoreBehaviour.aLostWorkersJobIsClaimedAgainBeforeItsSuccessors(.sqlite())
  }
  @Test func aCompletionClaimsTheNextHeadInItsTransaction() throws { try QueueStoreBehaviour.aCompletionClaimsTheNextHeadInItsTransaction(.sqlite()) }
  @Test func aJobWhoseLeasesKeepExpiringIsAbandonedAndItsQueueGoesOn() throws {
    try QueueStoreBehaviour.aJobWhoseLeasesKeepExpiringIsAbandonedAndItsQueueGoesOn(.sqlite())
  }
  @Test func aReleasedJobIsClaimedAgainAtOnceWithoutALostLease() throws {
    try QueueStoreBehaviour.aReleasedJobIsClaimedAgainAtOnceWithoutALostLease(.sqlite())
  }
  @Test func aClaimOfEveryQueueNeverTakesAPrivateQueuesJob() throws {
    try QueueStoreBehaviour.aClaimOfEveryQueueNeverTakesAPrivateQueuesJob(.sqlite())
  }
  @Test func workersRacingForOneHeadGetItOnce() throws { try QueueStoreBehaviour.workersRacingForOneHeadGetItOnce(.sqlite()) }
  @Test func aLostLeaseCountOutOfRangeIsRefusedNotAddedTo() throws {
    let fixture = try QueueFixture.sqlite()
    let job = try fixture.store.submit("q")
    let claimed = try #require(try fixture.store.claim(worker: WorkerID("w"), queues: nil, lease: .seconds(1), at: at(0)))
    #expect(claimed.id == job.id)
    // Counted one more when the lease is found lost: 2^63 - 1 has no next.
    try fixture.tamper("UPDATE job SET lost_leases = 9223372036854775807 WHERE id = \(job.id.rawValue)")
    let error = refusal { try fixture.store.claim(worker: WorkerID("v"), queues: nil, lease: .seconds(1), at: at(60)) }
    #expect(error?.kind == .badValue)
    #expect(error?.message.hasSuffix(": job \(job.id) has a bad lost_leases: 9223372036854775807 (a count from 0 to 2147483647)") == true)
  }
  @Test func badRequestsAreRefusedInOneLine() throws { try QueueStoreBehaviour.badRequestsAreRefusedInOneLine(.sqlite()) }

  /// A store as a Lunar of store version 1 left it, with one run.
  private func versionOneStore(in folder: TemporaryFolder, extra: String = "") throws -> String {
    let path = folder.url.appendingPathComponent("old.db").path
    let db = try SQLiteDatabase(path: path)
    for sql in StoreSchema.migrations[0] { try db.execute(sql) }
    try db.execute(
      """
      PRAGMA application_id = \(StoreFileCheck.applicationID); PRAGMA user_version = 1; PRAGMA journal_mode = WAL;
      INSERT INTO run (workflow, file, arguments, status, started_at, host, pid)
      VALUES (CAST('old' AS BLOB), 'old.lua', X'\(try noArguments())', 'succeeded', 1, 'h', 1); \(extra)
      """)
    return path
  }

  @Test func aVersionOneStoreMigratesKeepingItsRuns() throws {
    let folder = try TemporaryFolder()
    let path = try versionOneStore(in: folder)
    let queues = try SQLiteQueueStore(path: path)
    let job = try queues.submit("q")
    #expect(try SQLiteDatabase(path: path).scalar("PRAGMA user_version") == .integer(Int64(StoreSchema.current)))
    let runs = try SQLiteRunStore(path: path)
    #expect(try runs.run(RunID(1))?.workflow == "old")
    #expect(try SQLiteQueueStore(path: path).job(job.id)?.queue == "q")
  }

  @Test func aVersionTwoStoreMigratesMarkingEachQueuesHead() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("two.db").path
    let db = try SQLiteDatabase(path: path)
    for sql in StoreSchema.migrations[0] + StoreSchema.migrations[1] { try db.execute(sql) }
    try db.execute(
      """
      PRAGMA application_id = \(StoreFileCheck.applicationID); PRAGMA user_version = 2; PRAGMA journal_mode = WAL;
      \(QueueMigrationFixture.versionTwoJobs)
      """)
    try QueueMigrationFixture.checkHeads(try SQLiteQueueStore(path: path))
  }

  @Test func aMigrationThatFailsLeavesTheStoreAsItWas() throws {
    let folder = try TemporaryFolder()
    // A table in the way of the migration's own: it fails half-way.
    let path = try versionOneStore(in: folder, extra: "CREATE TABLE job (x);")
    let error = #expect(throws: StoreError.self) { try SQLiteQueueStore(path: path) }
    #expect(error?.kind == .database)
    #expect(error?.message.contains("table job already exists") == true, "\(String(describing: error))")
    let db = try SQLiteDatabase(path: path)
    #expect(try db.scalar("PRAGMA user_version") == .integer(1))
    #expect(try db.scalar("SELECT group_concat(name) FROM sqlite_schema WHERE name IN ('queue', 'job_unfinished')") == .null)
  }

  @Test func processesClaimingOneStoreAtOnceRunEveryJobOnceInOrder() async throws {
    let folder = try TemporaryFolder()
    try await QueueProbeRace.run(store: folder.url.appendingPathComponent("queues.db").path) { path in
      try SQLiteQueueStore(path: path)
    }
  }
}
