import LuaKit
import Testing

@testable import LunarStore

/// What every run store does about who owns a running run: each test opens a
/// fixture of each kind (SQLiteRunStoreTests, PostgresRunStoreTests).
enum RunOwnershipBehaviour {
  private static func begin(_ store: any RunStore, at seconds: Int64 = 0) throws -> RunID {
    try store.beginRun(
      NewRun(workflow: "nightly", file: "nightly.lua", startedAt: at(seconds), host: "first", pid: 10, lease: .seconds(10)))
  }

  private static let step = StepRecord(name: "a", position: 0, status: .succeeded, output: [.integer(1)])

  static func aStaleOwnersCommitIsRefused(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let run = try begin(store)
    #expect(try store.run(run)?.ownerToken == ClaimToken(1))
    #expect(try store.run(run)?.leaseExpiresAt == at(10))
    // The lease is held: nobody takes it over.
    #expect(try fixture.reopen().takeOver(run, host: "second", pid: 20, lease: .seconds(10), at: at(5)) == nil)
    let lease = try #require(try fixture.reopen().takeOver(run, host: "second", pid: 20, lease: .seconds(10), at: at(11)))
    #expect(lease == RunLease(run: run, token: ClaimToken(2), expiresAt: at(21)))
    // The first owner's commit, heartbeat and finish are refused, and change nothing.
    let commit = refusal { try store.recordSteps([step], of: run, owner: ClaimToken(1)) }
    #expect(commit?.kind == .staleOwner)
    #expect(
      commit?.message
        == "run \(run) in \(store.location): refused the commit of its owner with token 1: it was taken over by process 20 on second (owner token 2); that process stops its run"
    )
    #expect(try store.steps(of: run).isEmpty)
    #expect(refusal { try store.heartbeat(run, owner: ClaimToken(1), lease: .seconds(10), at: at(12)) }?.kind == .staleOwner)
    #expect(
      refusal { try store.finishRun(run, status: .succeeded, stoppedBy: nil, owner: ClaimToken(1), at: at(12)) }?.kind
        == .staleOwner)
    #expect(try store.run(run)?.status == .running)
    // The new owner commits.
    try store.recordSteps([step], of: run, owner: lease.token)
    #expect(try store.steps(of: run).map(\.name) == ["a"])
    let record = try #require(try store.run(run))
    #expect(record.host == "second" && record.pid == 20 && record.ownedSince == at(11))
    try store.finishRun(run, status: .succeeded, stoppedBy: nil, owner: lease.token, at: at(13))
    #expect(try store.run(run)?.leaseExpiresAt == nil)
    // A finished run is nobody's to take, and its owner's token commits no more.
    #expect(try store.takeOver(run, host: "third", pid: 30, lease: .seconds(10), at: at(100)) == nil)
    #expect(refusal { try store.recordSteps([step], of: run, owner: lease.token) }?.kind == .staleOwner)
    #expect(refusal { try store.takeOver(RunID(999), host: "h", pid: 1, lease: .seconds(1), at: at(0)) }?.kind == .noSuchRun)
  }

  static func aHeartbeatKeepsTheLeaseAndCarriesACancelRequest(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let run = try begin(store)
    #expect(try store.heartbeat(run, owner: ClaimToken(1), lease: .seconds(10), at: at(8)) == RunHeartbeat(expiresAt: at(18), cancelRequest: nil))
    // Renewed: not expired at 11, so not taken over.
    #expect(try store.takeOver(run, host: "second", pid: 20, lease: .seconds(10), at: at(11)) == nil)
    #expect(try fixture.reopen().requestCancel(run, by: "request", at: at(12)) == .requested)
    #expect(try store.run(run)?.cancelRequest == "request")
    #expect(
      try store.heartbeat(run, owner: ClaimToken(1), lease: .seconds(10), at: at(13))
        == RunHeartbeat(expiresAt: at(23), cancelRequest: "request"))
    try store.finishRun(run, status: .cancelled, stoppedBy: "request", owner: ClaimToken(1), at: at(14))
    let record = try #require(try store.run(run))
    #expect(record.status == .cancelled && record.stoppedBy == "request" && record.cancelRequest == nil)
    let again = refusal { try store.requestCancel(run, by: "request", at: at(15)) }
    #expect(again?.kind == .runNotCancellable)
    #expect(again?.message == "run \(run) in \(store.location) already finished (cancelled): nothing to cancel")
    #expect(refusal { try store.requestCancel(RunID(999), by: "request", at: at(15)) }?.kind == .noSuchRun)
  }

  static func cancellingARunWhoseOwnerIsGoneCancelsItAtOnce(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let run = try begin(store)
    #expect(try store.run(run)?.leaseExpired(at: at(11)) == true)
    #expect(try store.requestCancel(run, by: "request", at: at(11)) == .cancelledNow)
    let record = try #require(try store.run(run))
    #expect(record.status == .cancelled && record.stoppedBy == "request" && record.finishedAt == at(11))
  }
}
