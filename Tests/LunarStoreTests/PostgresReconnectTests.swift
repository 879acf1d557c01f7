import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// A store whose server restarts or goes away, on a cluster of the test's
/// own (the shared one must keep running).
@Suite(.enabled(if: PrivatePostgresCluster.serverInstalled, "needs PostgreSQL's server programs: scripts/bootstrap installs them"))
struct PostgresReconnectTests {
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
