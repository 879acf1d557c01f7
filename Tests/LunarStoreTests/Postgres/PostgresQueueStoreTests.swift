import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// The queue store on the throwaway PostgreSQL server `scripts/test` starts;
/// skipped (and listed as skipped) when `LUNAR_TEST_POSTGRES` is not set.
@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresQueueStoreTests {
  @Test func jobsComeBackAsSubmitted() throws { try QueueStoreBehaviour.jobsComeBackAsSubmitted(.postgres()) }
  @Test func aJobOutOfRangeIsRefusedInOneLine() throws { try QueueStoreBehaviour.aJobOutOfRangeIsRefusedInOneLine(.postgres()) }
  @Test func ordersAreStrictPerQueueWithSeveralClaimers() throws {
    try QueueStoreBehaviour.ordersAreStrictPerQueueWithSeveralClaimers(.postgres())
  }
  @Test func aClaimNeverReturnsTheNextJobWhileItsPredecessorWaitsOrRuns() throws {
    try QueueStoreBehaviour.aClaimNeverReturnsTheNextJobWhileItsPredecessorWaitsOrRuns(.postgres())
  }
  @Test func aFailureUnderStopHaltsTheQueueUntilResumed() throws {
    try QueueStoreBehaviour.aFailureUnderStopHaltsTheQueueUntilResumed(.postgres())
  }
  @Test func aJobCancelledBeforeItStartsNeverRuns() throws { try QueueStoreBehaviour.aJobCancelledBeforeItStartsNeverRuns(.postgres()) }
  @Test func aLostWorkersJobIsClaimedAgainBeforeItsSuccessors() throws {
    try QueueStoreBehaviour.aLostWorkersJobIsClaimedAgainBeforeItsSuccessors(.postgres())
  }
  @Test func aCompletionClaimsTheNextHeadInItsTransaction() throws { try QueueStoreBehaviour.aCompletionClaimsTheNextHeadInItsTransaction(.postgres()) }
  @Test func aJobWhoseLeasesKeepExpiringIsAbandonedAndItsQueueGoesOn() throws {
    try QueueStoreBehaviour.aJobWhoseLeasesKeepExpiringIsAbandonedAndItsQueueGoesOn(.postgres())
  }
  @Test func aReleasedJobIsClaimedAgainAtOnceWithoutALostLease() throws {
    try QueueStoreBehaviour.aReleasedJobIsClaimedAgainAtOnceWithoutALostLease(.postgres())
  }
  @Test func aClaimOfEveryQueueNeverTakesAPrivateQueuesJob() throws {
    try QueueStoreBehaviour.aClaimOfEveryQueueNeverTakesAPrivateQueuesJob(.postgres())
  }
  @Test func workersRacingForOneHeadGetItOnce() throws { try QueueStoreBehaviour.workersRacingForOneHeadGetItOnce(.postgres()) }
  @Test func badRequestsAreRefusedInOneLine() throws { try QueueStoreBehaviour.badRequestsAreRefusedInOneLine(.postgres()) }

  @Test func anIdleWorkerHearsOfWorkThroughNotifications() throws {
    let schema = try TestPostgresSchema()
    let worker = try PostgresQueueStore(url: schema.url, location: "test")
    let submitter = try PostgresQueueStore(url: schema.url, location: "test")
    // The first wait starts listening; nothing has happened yet.
    #expect(try worker.waitForWork(timeout: .milliseconds(1)) == false)
    let job = try submitter.submit("q")
    #expect(try worker.waitForWork(timeout: .seconds(60)) == true)
    let claimed = try #require(try worker.claim(WorkerID("w")))
    #expect(try worker.waitForWork(timeout: .milliseconds(1)) == false)
    // A job finishing frees its queue's next one: that is news too.
    try submitter.complete(job: job.id, token: claimed.token, outcome: .succeeded(output: []), at: at(1))
    #expect(try worker.waitForWork(timeout: .seconds(60)) == true)
    // A failed statement sends nothing.
    #expect(throws: StoreError.self) { try submitter.complete(job: job.id, token: claimed.token, outcome: .succeeded(output: []), at: at(2)) }
    #expect(try worker.waitForWork(timeout: .milliseconds(1)) == false)
    // A store in another schema of the same database is not this one's news.
    let elsewhere = try TestPostgresSchema()
    try PostgresQueueStore(url: elsewhere.url, location: "elsewhere").submit("q")
    // Long enough for the notification to arrive, were it this store's.
    #expect(try worker.waitForWork(timeout: .milliseconds(200)) == false)
  }

  @Test func preparedStatementsArePreparedAgainOnANewSession() throws {
    let schema = try TestPostgresSchema()
    let db = try PostgresConnection(url: schema.url)
    let sql = "SELECT $1::bigint + 1"
    #expect(try db.query(sql, [.integer(1)], prepared: true).int64(0, 0) == 2)
    #expect(try db.query(sql, [.integer(2)], prepared: true).int64(0, 0) == 3)
    // The server ends the session, as a restart would: the statement is
    // gone with it.
    let pid = try db.query("SELECT pg_backend_pid()").int64(0, 0)
    _ = try schema.query("SELECT pg_terminate_backend(\(pid))")
    #expect(throws: PostgresError.self) { try db.query(sql, [.integer(3)], prepared: true) }
    try db.reconnectIfLost()
    #expect(try db.query(sql, [.integer(4)], prepared: true).int64(0, 0) == 5)
  }

  /// A schema as a Lunar of store version 1 left it, with one run.
  private func versionOneSchema(extra: String = "") throws -> TestPostgresSchema {
    let schema = try TestPostgresSchema()
    try schema.query(PostgresStoreSchema.migrations[0].joined(separator: ";\n"))
    try schema.query(
      """
      UPDATE lunar_store SET version = 1;
      INSERT INTO run (workflow, file, arguments, status, started_at, host, pid)
      VALUES ('old'::bytea, 'old.lua', '\\x\(try noArguments())'::bytea, 'succeeded', 1, 'h', 1); \(extra)
      """)
    return schema
  }

  @Test func aVersionOneStoreMigratesKeepingItsRuns() throws {
    // Both stores migrate through the same versions.
    #expect(PostgresStoreSchema.current == StoreSchema.current)
    let schema = try versionOneSchema()
    let queues = try PostgresQueueStore(url: schema.url, location: "test")
    let job = try queues.submit("q")
    #expect(try schema.query("SELECT version FROM lunar_store") == ["\(PostgresStoreSchema.current)"])
    let runs = try PostgresRunStore(url: schema.url, location: "test")
    #expect(try runs.lastRun(workflow: nil, file: nil)?.workflow == "old")
    #expect(try PostgresQueueStore(url: schema.url, location: "test").job(job.id)?.queue == "q")
  }

  @Test func aVersionTwoStoreMigratesMarkingEachQueuesHead() throws {
    let schema = try TestPostgresSchema()
    try schema.query((PostgresStoreSchema.migrations[0] + PostgresStoreSchema.migrations[1]).joined(separator: ";\n"))
    // Claim numbers 1 and 2 were handed out by the old store's sequence.
    try schema.query(
      "UPDATE lunar_store SET version = 2; SELECT setval('job_claim', 2);\n"
        + QueueMigrationFixture.versionTwoJobs.replacingOccurrences(of: "X'", with: "'\\x"))
    try QueueMigrationFixture.checkHeads(try PostgresQueueStore(url: schema.url, location: "test"))
  }

  @Test func aMigrationThatFailsLeavesTheStoreAsItWas() throws {
    // A table in the way of the migration's own: it fails half-way.
    let schema = try versionOneSchema(extra: "CREATE TABLE job (x integer);")
    let error = #expect(throws: StoreError.self) { try PostgresQueueStore(url: schema.url, location: "test") }
    #expect(error?.kind == .database)
    #expect(error?.message.contains("relation \"job\" already exists") == true, "\(String(describing: error))")
    #expect(try schema.query("SELECT version FROM lunar_store") == ["1"])
    #expect(try schema.query("SELECT count(*) FROM pg_class WHERE relname = 'queue' AND relnamespace = current_schema()::regnamespace") == ["0"])
  }

  @Test func processesClaimingOneStoreAtOnceRunEveryJobOnceInOrder() async throws {
    let schema = try TestPostgresSchema()
    try await QueueProbeRace.run(store: schema.url) { url in try PostgresQueueStore(url: url, location: "test") }
  }
}
