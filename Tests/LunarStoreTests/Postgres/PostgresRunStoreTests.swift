import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// The relations in `schema`'s namespace, by name, comma-separated.
private func relations(_ schema: TestPostgresSchema) throws -> String {
  try schema.query(
    """
    SELECT coalesce(string_agg(c.relname, ',' ORDER BY c.relname), '') FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()
    """
  ).first?.flatMap { $0 } ?? ""
}

/// The run store on the throwaway PostgreSQL server `scripts/test` starts;
/// skipped (and listed as skipped) when `LUNAR_TEST_POSTGRES` is not set.
@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresRunStoreTests {
  @Test func stepsComeBackAsRecorded() throws { try RunStoreBehaviour.stepsComeBackAsRecorded(.postgres()) }
  @Test func aStepsDurableJobIsKeptForAResume() throws { try RunStoreBehaviour.aStepsDurableJobIsKeptForAResume(.postgres()) }
  @Test func aRowOutOfRangeIsRefusedInOneLine() throws { try RunStoreBehaviour.aRowOutOfRangeIsRefusedInOneLine(.postgres()) }
  @Test func aRetryReplacesTheStepsEarlierRecord() throws { try RunStoreBehaviour.aRetryReplacesTheStepsEarlierRecord(.postgres()) }
  @Test func aBatchIsRecordedWholeOrNotAtAll() throws { try RunStoreBehaviour.aBatchIsRecordedWholeOrNotAtAll(.postgres()) }
  @Test func stepLogsComeBackAsStored() throws { try RunStoreBehaviour.stepLogsComeBackAsStored(.postgres()) }
  @Test func runsAreFoundByTheBytesOfTheirWorkflowsName() throws {
    try RunStoreBehaviour.runsAreFoundByTheBytesOfTheirWorkflowsName(.postgres())
  }
  @Test func runsAreFilteredByStatusTimeAndPagedOn() throws { try RunStoreBehaviour.runsAreFilteredByStatusTimeAndPagedOn(.postgres()) }
  @Test func runsAreListedNewestFirstWithTheirStepCounts() throws {
    try RunStoreBehaviour.runsAreListedNewestFirstWithTheirStepCounts(.postgres())
  }
  @Test func lastOrAnIdResolvesToARun() throws { try RunStoreBehaviour.lastOrAnIdResolvesToARun(.postgres()) }
  @Test func aRunsPlanKeepsWhatEachStepNeeds() throws { try RunStoreBehaviour.aRunsPlanKeepsWhatEachStepNeeds(.postgres()) }
  @Test func workersAreListed() throws { try RunStoreBehaviour.workersAreListedAsTheyLastAnnouncedThemselves(.postgres()) }
  @Test func anotherConnectionsCommitIsAChange() throws { try RunStoreBehaviour.anotherConnectionsCommitIsAChange(.postgres()) }
  @Test func aStaleOwnersCommitIsRefused() throws { try RunOwnershipBehaviour.aStaleOwnersCommitIsRefused(.postgres()) }
  @Test func aHeartbeatKeepsTheLeaseAndCarriesACancelRequest() throws {
    try RunOwnershipBehaviour.aHeartbeatKeepsTheLeaseAndCarriesACancelRequest(.postgres())
  }
  @Test func cancellingARunWhoseOwnerIsGoneCancelsItAtOnce() throws {
    try RunOwnershipBehaviour.cancellingARunWhoseOwnerIsGoneCancelsItAtOnce(.postgres())
  }
  @Test func aCommitIsSeenByAnotherConnectionAndAfterReopening() throws {
    try RunStoreBehaviour.aCommitIsSeenByAnotherConnectionAndAfterReopening(.postgres())
  }

  @Test func aNegativeStoreVersionIsRefusedInOneLine() throws {
    let schema = try TestPostgresSchema()
    _ = try PostgresRunStore(url: schema.url, location: "test")
    try schema.query("UPDATE lunar_store SET version = -1")
    let error = refusal { try PostgresRunStore(url: schema.url, location: "test") }
    #expect(error?.kind == .badValue)
    #expect(error?.message == "store test: table lunar_store has a bad version: -1 (a count from 0 to 2147483647)")
  }

  @Test func anEmptySchemaBecomesAVersionedStore() throws {
    let schema = try TestPostgresSchema()
    #expect(try relations(schema) == "")
    _ = try PostgresRunStore(url: schema.url, location: "test")
    #expect(try relations(schema) == "job,job_by_claim,job_claim,job_id_seq,job_leased,job_pkey,job_queue_sequence_key,job_ready,job_unfinished,lunar_store,queue,queue_pkey,run,run_await,run_await_pkey,run_by_schedule,run_by_submit_key,run_by_workflow,run_id_seq,run_parked,run_pkey,run_queued,run_running,run_signal,run_signal_pkey,schedule,schedule_pkey,schedule_tick,schedule_tick_pkey,step,step_job,step_job_pkey,step_log,step_log_by_run,step_log_id_seq,step_log_pkey,step_pkey,step_wait,step_wait_pkey,worker,worker_pkey")
    #expect(try schema.query("SELECT version FROM lunar_store") == ["\(PostgresStoreSchema.current)"])
    // Opening it again changes nothing.
    _ = try PostgresRunStore(url: schema.url, location: "test")
    #expect(try schema.query("SELECT count(*) FROM lunar_store") == ["1"])
  }

  @Test func aSchemaWithAnotherApplicationsTablesIsRefusedAndLeftUntouched() throws {
    let schema = try TestPostgresSchema()
    try schema.query("CREATE TABLE notes (body text); INSERT INTO notes VALUES ('keep me')")
    let location = StoreLocation(.postgres(url: schema.url))
    for createIfMissing in [true, false] {
      let error = #expect(throws: StoreError.self) { try location.openRunStore(createIfMissing: createIfMissing) }
      #expect(error?.kind == .notAStore)
      #expect(
        error?.message
          == "\(location) is not a Lunar store (its schema holds tables of another application); Lunar leaves it untouched")
    }
    #expect(try relations(schema) == "notes")
    #expect(try schema.query("SELECT body FROM notes") == ["keep me"])
  }

  @Test func aStoreFromANewerLunarIsRefused() throws {
    let schema = try TestPostgresSchema()
    _ = try PostgresRunStore(url: schema.url, location: "test")
    try schema.query("UPDATE lunar_store SET version = \(PostgresStoreSchema.current + 1)")
    let error = #expect(throws: StoreError.self) { try PostgresRunStore(url: schema.url, location: "the store") }
    #expect(error?.kind == .newerStore)
    #expect(
      error?.message
        == "the store was written by a newer Lunar (store version \(PostgresStoreSchema.current + 1); this Lunar knows up to \(PostgresStoreSchema.current)); use that Lunar or a newer one"
    )
  }

  @Test func anEmptySchemaIsAMissingStoreWhenNothingIsToBeCreated() throws {
    let schema = try TestPostgresSchema()
    let error = #expect(throws: StoreError.self) { try PostgresRunStore(url: schema.url, location: "the store", createIfMissing: false) }
    #expect(error?.kind == .missing && error?.message == "no store at the store")
    #expect(try relations(schema) == "")
  }

  @Test func aWrongPasswordIsOneLineThatDoesNotShowIt() throws {
    let server = try #require(TestPostgresSchema.tcpURL, "LUNAR_TEST_POSTGRES_TCP")
    let url = server.replacingOccurrences(of: "lunar@", with: "lunar:not-the-password@")
    let location = try StoreLocation(parsing: url, currentFolder: "/")
    let error = #expect(throws: StoreError.self) { try location.openRunStore() }
    #expect(error?.kind == .database)
    let message = try #require(error?.message)
    #expect(message.hasPrefix("cannot connect to store \(location): "))
    #expect(message.contains("password authentication failed for user \"lunar\""), "\(message)")
    #expect(!message.contains("not-the-password") && !message.contains("\n"))
  }

  @Test func processesWritingOneStoreAtOnceAllSucceed() async throws {
    let schema = try TestPostgresSchema()
    // Started together on an empty schema: they also race to create the store.
    let probes = try (1...3).map { index in
      try ProbeProcess(store: schema.url, workflow: "p\(index)", steps: 300, batch: index, seed: UInt64(index))
    }
    let store = try PostgresRunStore(url: schema.url, location: "test")
    for (index, probe) in probes.enumerated() {
      #expect(try await probe.wait() == 0, "probe \(index + 1): \(probe.errorText)")
      #expect(probe.errorText == "")
      #expect(probe.lines.last == "done")
      let committed = probe.committed
      #expect(committed.count == 300)
      let run = try #require(probe.run.map(RunID.init))
      let steps = try store.steps(of: run)
      #expect(steps.map(\.position) == Array(0..<300))
      for step in steps {
        let output = try #require(step.output)
        #expect(try Fingerprint(of: output).hex == committed[step.position], "probe \(index + 1), step \(step.position)")
      }
    }
    let runs = try store.runs(workflow: nil, limit: 10)
    #expect(runs.count == 3)
    #expect(runs.allSatisfy { $0.run.status == .succeeded && $0.succeeded == 300 })
    #expect(Set(runs.map(\.run.workflow)) == ["p1", "p2", "p3"])
  }
}

/// Connection failures that need no server: each is one line.
@Suite struct PostgresConnectionFailureTests {
  @Test func anUnreachableServerIsOneLine() throws {
    // Port 1 on the loopback: nothing listens there, so the refusal is immediate.
    let location = try StoreLocation(parsing: "postgres://lunar:secret@127.0.0.1:1/runs", currentFolder: "/")
    let error = #expect(throws: StoreError.self) { try location.openRunStore() }
    #expect(error?.kind == .database)
    let message = try #require(error?.message)
    #expect(message.hasPrefix("cannot connect to store postgres://lunar:***@127.0.0.1:1/runs: connection to server at \"127.0.0.1\", port 1 failed: Connection refused"), "\(message)")
    #expect(!message.contains("secret") && !message.contains("\n"))
  }
}
