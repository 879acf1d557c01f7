import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// A store whose server restarts or goes away, on a cluster of the test's
/// own (the shared one must keep running).
@Suite(.enabled(if: PrivatePostgresCluster.serverInstalled, "needs PostgreSQL's server programs: scripts/bootstrap installs them"))
struct PostgresReconnectTests {
  @Test func theRunStoreRecordsAcrossARestartInTheCallThatFoundItsConnectionGone() async throws {
    try await PrivatePostgresCluster.with { cluster in
      let store = try PostgresRunStore(url: cluster.url, location: "test", reconnectFor: .seconds(60))
      let run = try store.beginRun(NewRun(workflow: "w", file: "w.lua", arguments: []))
      try await cluster.restart()
      try store.recordSteps([StepRecord(name: "a", position: 0, status: .succeeded, startedAt: .now, finishedAt: .now)], of: run)
      try await cluster.restart()
      try store.finishRun(run, status: .succeeded, at: .now)
      try await cluster.restart()
      let second = try store.beginRun(NewRun(workflow: "w", file: "w.lua", arguments: []))
      #expect(try store.run(run)?.status == .succeeded)
      #expect(try store.steps(of: run).map(\.name) == ["a"])
      // Begun once, though its first try found the connection gone.
      #expect(try store.runs(workflow: nil, limit: 10).map(\.run.id) == [second, run])

      // With the server gone, a call gives up once its time is up and
      // says why connecting failed.
      let gone = try PostgresRunStore(url: cluster.url, location: "test", reconnectFor: .milliseconds(200))
      try await cluster.stop()
      let error = #expect(throws: StoreError.self) { try gone.finishRun(second, status: .failed, at: .now) }
      #expect(error?.message.contains("No such file or directory") == true, "\(error?.message ?? "")")
    }
  }

  @Test func theCallAfterARestartConnectsAgainAndAGoneServerIsNamed() async throws {
    try await PrivatePostgresCluster.with { cluster in
      let store = try PostgresQueueStore(url: cluster.url, location: "test")
      let submitter = try PostgresQueueStore(url: cluster.url, location: "test")
      try submitter.submit("q")
      #expect(try store.waitForWork(timeout: .milliseconds(1)) == false)

      try await cluster.restart()
      // The call that finds its connection gone fails; the next one
      // connects again, for the store and for its listener alike.
      #expect(throws: StoreError.self) { try store.queues() }
      #expect(try store.queues().map(\.name) == ["q"])
      #expect(throws: StoreError.self) { try store.waitForWork(timeout: .seconds(60)) }
      #expect(try store.waitForWork(timeout: .milliseconds(1)) == false)
      #expect(throws: StoreError.self) { try submitter.submit("q") }
      try submitter.submit("q")
      #expect(try store.waitForWork(timeout: .seconds(60)) == true)

      // With the server gone, the failure says why connecting failed.
      try await cluster.stop()
      #expect(throws: StoreError.self) { try store.queues() }
      let gone = #expect(throws: StoreError.self) { try store.queues() }
      #expect(gone?.message.contains("No such file or directory") == true, "\(gone?.message ?? "")")
      #expect(gone?.message.contains("no connection to the server") == false)
    }
  }
}
