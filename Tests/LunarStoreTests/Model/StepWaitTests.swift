import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// The deadlines of workflow sleep steps, kept for a resume, on both stores.
enum StepWaitBehaviour {
  /// A step's wait comes back as recorded (a later record replaces it), per
  /// run; a wait for a run the store does not have is refused.
  static func aStepsWaitIsKeptForAResume(_ fixture: StoreFixture) throws {
    let store = try #require(fixture.store as? any WaitStore)
    let run = try store.beginRun(NewRun(workflow: "deploy", file: "deploy.lua", arguments: [], startedAt: at(0), host: "h", pid: 1))
    let other = try store.beginRun(NewRun(workflow: "deploy", file: "deploy.lua", arguments: [], startedAt: at(1), host: "h", pid: 1))
    let fingerprint = try Fingerprint(of: ["cool-down"])
    let name = LuaString(bytes: [0x63, 0xFF])
    try store.recordStepWait(StepWait(name: name, fingerprint: fingerprint, deadlineMilliseconds: 1), of: run)
    try store.recordStepWait(StepWait(name: "other", fingerprint: nil, deadlineMilliseconds: -5), of: run)
    try store.recordStepWait(StepWait(name: name, fingerprint: fingerprint, deadlineMilliseconds: Int64.max), of: run)
    let reopened = try #require(try fixture.reopen() as? any WaitStore)
    #expect(try reopened.stepWaits(of: run) == [
      StepWait(name: name, fingerprint: fingerprint, deadlineMilliseconds: Int64.max),
      StepWait(name: "other", fingerprint: nil, deadlineMilliseconds: -5),
    ])
    #expect(try store.stepWaits(of: other) == [])
    let missing = #expect(throws: StoreError.self) {
      try store.recordStepWait(StepWait(name: name, fingerprint: nil, deadlineMilliseconds: 0), of: RunID(999))
    }
    #expect(missing?.kind == .noSuchRun && missing?.message == "no run 999 in \(store.location)")
  }

  /// A signal is kept for its run by the bytes of its name, whether or not
  /// a step waits for it; a later one replaces it; a signal for a run the
  /// store does not have is refused.
  static func aSignalIsKeptForItsRunByTheBytesOfItsName(_ fixture: StoreFixture) throws {
    let store = try #require(fixture.store as? any WaitStore)
    let run = try store.beginRun(NewRun(workflow: "deploy", file: "deploy.lua", arguments: [], startedAt: at(0), host: "h", pid: 1))
    let other = try store.beginRun(NewRun(workflow: "deploy", file: "deploy.lua", arguments: [], startedAt: at(1), host: "h", pid: 1))
    let name = LuaString(bytes: [0x61, 0xFF])
    #expect(try store.signal(name, of: run) == nil)
    let value = LuaValue.table(LuaTable(array: [.integer(1)], fields: [.string("by"): .string("ada")]))
    try store.sendSignal(name, value: .string("first"), to: run, at: at(2))
    try store.sendSignal(name, value: value, to: run, at: at(3))
    try store.sendSignal(LuaString(bytes: [0x61]), value: .boolean(false), to: run, at: at(3))
    let reopened = try #require(try fixture.reopen() as? any WaitStore)
    #expect(try reopened.signal(name, of: run) == .some(value))
    #expect(try reopened.signal(LuaString(bytes: [0x61]), of: run) == .some(.boolean(false)))
    #expect(try reopened.signal(name, of: other) == nil)
    let missing = #expect(throws: StoreError.self) {
      try store.sendSignal(name, value: .nil, to: RunID(999), at: at(4))
    }
    #expect(missing?.kind == .noSuchRun && missing?.message == "no run 999 in \(store.location)")
  }
}

@Suite struct SQLiteStepWaitTests {
  @Test func aStepsWaitIsKeptForAResume() throws { try StepWaitBehaviour.aStepsWaitIsKeptForAResume(.sqlite()) }
  @Test func aSignalIsKeptForItsRunByTheBytesOfItsName() throws {
    try StepWaitBehaviour.aSignalIsKeptForItsRunByTheBytesOfItsName(.sqlite())
  }
}

@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresStepWaitTests {
  @Test func aStepsWaitIsKeptForAResume() throws { try StepWaitBehaviour.aStepsWaitIsKeptForAResume(.postgres()) }
  @Test func aSignalIsKeptForItsRunByTheBytesOfItsName() throws {
    try StepWaitBehaviour.aSignalIsKeptForItsRunByTheBytesOfItsName(.postgres())
  }
}
