import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// A store in a fresh folder, removed with it.
private struct Fixture {
  let folder: TemporaryFolder
  let path: String
  let store: SQLiteRunStore

  init() throws {
    folder = try TemporaryFolder()
    path = folder.url.appendingPathComponent("runs.db").path
    store = try SQLiteRunStore(path: path)
  }
}

@Suite struct SQLiteRunStoreTests {
  @Test func stepsComeBackAsRecorded() throws { try RunStoreBehaviour.stepsComeBackAsRecorded(.sqlite()) }
  @Test func aStepsDurableJobIsKeptForAResume() throws { try RunStoreBehaviour.aStepsDurableJobIsKeptForAResume(.sqlite()) }
  @Test func aRowOutOfRangeIsRefusedInOneLine() throws { try RunStoreBehaviour.aRowOutOfRangeIsRefusedInOneLine(.sqlite()) }
  @Test func aRetryReplacesTheStepsEarlierRecord() throws { try RunStoreBehaviour.aRetryReplacesTheStepsEarlierRecord(.sqlite()) }
  @Test func aBatchIsRecordedWholeOrNotAtAll() throws { try RunStoreBehaviour.aBatchIsRecordedWholeOrNotAtAll(.sqlite()) }
  @Test func stepLogsComeBackAsStored() throws { try RunStoreBehaviour.stepLogsComeBackAsStored(.sqlite()) }
  @Test func runsAreFoundByTheBytesOfTheirWorkflowsName() throws { try RunStoreBehaviour.runsAreFoundByTheBytesOfTheirWorkflowsName(.sqlite()) }
  @Test func runsAreFilteredByStatusTimeAndPagedOn() throws { try RunStoreBehaviour.runsAreFilteredByStatusTimeAndPagedOn(.sqlite()) }
  @Test func runsAreListedNewestFirstWithTheirStepCounts() throws { try RunStoreBehaviour.runsAreListedNewestFirstWithTheirStepCounts(.sqlite()) }
  @Test func lastOrAnIdResolvesToARun() throws { try RunStoreBehaviour.lastOrAnIdResolvesToARun(.sqlite()) }
  @Test func aRunsPlanKeepsWhatEachStepNeeds() throws { try RunStoreBehaviour.aRunsPlanKeepsWhatEachStepNeeds(.sqlite()) }
  @Test func workersAreListed() throws { try RunStoreBehaviour.workersAreListedAsTheyLastAnnouncedThemselves(.sqlite()) }
  @Test func anotherConnectionsCommitIsAChange() throws { try RunStoreBehaviour.anotherConnectionsCommitIsAChange(.sqlite()) }
  @Test func aStaleOwnersCommitIsRefused() throws { try RunOwnershipBehaviour.aStaleOwnersCommitIsRefused(.sqlite()) }
  @Test func aHeartbeatKeepsTheLeaseAndCarriesACancelRequest() throws {
    try RunOwnershipBehaviour.aHeartbeatKeepsTheLeaseAndCarriesACancelRequest(.sqlite())
  }
  @Test func cancellingARunWhoseOwnerIsGoneCancelsItAtOnce() throws {
    try RunOwnershipBehaviour.cancellingARunWhoseOwnerIsGoneCancelsItAtOnce(.sqlite())
  }
  @Test func aCommitIsSeenByAnotherConnectionAndAfterReopening() throws { try RunStoreBehaviour.aCommitIsSeenByAnotherConnectionAndAfterReopening(.sqlite()) }

  @Test func aStoreIsMarkedVersionedAndWriteAheadLogged() throws {
    let fixture = try Fixture()
    #expect(try fixture.store.pragma("journal_mode") == .text("wal"))
    #expect(try fixture.store.pragma("synchronous") == .integer(1))  // NORMAL
    #expect(try fixture.store.pragma("foreign_keys") == .integer(1))
    #expect(try fixture.store.pragma("application_id") == .integer(0x4C55_4E52))
    #expect(try fixture.store.pragma("user_version") == .integer(Int64(StoreSchema.current)))
    let full = try SQLiteRunStore(path: fixture.path, options: .init(durability: .power))
    #expect(try full.pragma("synchronous") == .integer(2))  // FULL
    // The application id is in the file's own header, where a check reads it
    // before SQLite opens the file.
    let header = try Data(contentsOf: fixture.folder.url.appendingPathComponent("runs.db")).prefix(100)
    #expect(Array(header[68..<72]) == Array("LUNR".utf8))
  }

  @Test func aStoreFromANewerLunarIsRefused() throws {
    let fixture = try Fixture()
    let db = try SQLiteDatabase(path: fixture.path)
    try db.execute("PRAGMA user_version = \(StoreSchema.current + 1)")
    let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: fixture.path) }
    #expect(error?.kind == .newerStore)
    #expect(
      error?.message
        == "\(fixture.path) was written by a newer Lunar (store version \(StoreSchema.current + 1); this Lunar knows up to \(StoreSchema.current)); use that Lunar or a newer one"
    )
  }

  @Test func aMissingStoreIsCreatedOnlyWhenAsked() throws {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    let error = #expect(throws: StoreError.self) { try SQLiteRunStore(path: path, createIfMissing: false) }
    #expect(error?.kind == .missing && error?.message == "no store at \(path)")
    #expect(!FileManager.default.fileExists(atPath: path))
    _ = try SQLiteRunStore(path: path)
    _ = try SQLiteRunStore(path: path, createIfMissing: false)
    // Without creating, a missing folder is a missing store too.
    let deeper = folder.url.appendingPathComponent("none/runs.db").path
    let missing = #expect(throws: StoreError.self) { try SQLiteRunStore(path: deeper, createIfMissing: false) }
    #expect(missing?.kind == .missing && missing?.message == "no store at \(deeper)")
  }
}
