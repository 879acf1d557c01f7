import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// `lunar worker` processes whose PostgreSQL server restarts under them, on
/// a cluster of the test's own (the shared one must keep running).
@Suite(.enabled(if: PrivatePostgresCluster.serverInstalled, "needs PostgreSQL's server programs: scripts/bootstrap installs them"))
struct PostgresRestartCommandTests {
  @Test func aRunWhoseServerRestartsUnderItRecordsItsStepsAndOutcome() async throws {
    try await PrivatePostgresCluster.with { cluster in
      let folder = try TemporaryFolder()
      let gate = folder.url.appendingPathComponent("gate").path
      let script = try folder.write(
        "restart.lua",
        """
        local workflow = require "lunar.workflow"
        local step = workflow.step
        return workflow "restart" {
          step "first" { run = function() return 1 end },
          step "second" { needs = { "first" }, run = function()
            io.stdout:write("waiting\\n"); io.stdout:flush()
            while not io.open("\(gate)") do lunar.sleep(0.01) end
            return 2
          end },
          step "third" { needs = { "second" }, run = function() return 3 end },
        }
        """)
      let running = try LunarProcess.start(["run", "--store", cluster.url, script], in: folder.url)
      // "first" is committed before "second" starts.
      try await running.waitForOutput("waiting\n")
      try await cluster.restart()
      _ = FileManager.default.createFile(atPath: gate, contents: Data())
      let outcome = try await running.wait(timeout: 60)
      #expect(outcome.status == 0, "\(outcome.stderr)")

      let show = try await LunarProcess.run(["runs", "show", "--store", cluster.url, "last"], in: folder.url)
      #expect(show.status == 0, "\(show.stderr)")
      #expect(show.stdout.contains("\nstatus     succeeded\n"), "\(show.stdout)")
      let rows = show.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
      for name in ["first", "second", "third"] {
        #expect(rows.contains { $0.prefix(2) == [name, "succeeded"] }, "\(show.stdout)")
      }
      // One run: reconnecting did not begin it twice.
      let list = try await LunarProcess.run(["runs", "--store", cluster.url], in: folder.url)
      #expect(list.stdout.split(separator: "\n").count == 2, "\(list.stdout)")
    }
  }

  @Test func workersReconnectAfterTheServerRestartsAndEveryJobFinishesOnceInOrder() async throws {
    try await PrivatePostgresCluster.with { cluster in
      let fixture = try DurableQueueCommandTests.Fixture(pause: 0.02)
      let (folder, log, worker) = (fixture.folder, fixture.log, fixture.worker)
      // 200 jobs over 4 queues. Job 20 of "c" and of "d" holds until the
      // gate opens, which happens only after the restart: the server
      // restarts while both run, and their queues' later jobs can only run
      // after it.
      let queues = ["a", "b", "c", "d"]
      let perQueue = 50
      let script = try folder.write(
        "submit.lua",
        """
        local queue = require "lunar.queue"
        local qs = {}
        for _, name in ipairs { "a", "b", "c", "d" } do qs[name] = queue.new { name = name, durable = true } end
        for i = 1, \(perQueue) do
          for _, name in ipairs { "a", "b", "c", "d" } do
            qs[name]:submit("square", { queue = name, seq = i, hold = (name == "c" or name == "d") and i == 20 })
          end
        end
        """)
      let submitted = try await LunarProcess.run(["run", "--store", cluster.url, script])
      #expect(submitted.status == 0, "\(submitted.stderr)")
      // Both workers serve "a" and "b"; only the first serves "c", only
      // the second "d", so each must go on after the restart.
      let workers = [
        try LunarProcess.start(["worker", "--store", cluster.url, "--queues", "a,b,c", "--concurrency", "2", "--lease", "3", worker]),
        try LunarProcess.start(["worker", "--store", cluster.url, "--queues", "a,b,d", "--concurrency", "2", "--lease", "3", worker]),
      ]
      let deadline = Date().addingTimeInterval(120)
      func holding() throws -> Bool {
        let starts = try DurableQueueCommandTests.starts(in: log)
        return starts.contains { $0.queue == "c" && $0.seq == 20 } && starts.contains { $0.queue == "d" && $0.seq == 20 }
      }
      while try !holding() && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
      #expect(try holding(), "jobs c#20 and d#20 never started")

      try await cluster.restart()
      let restarted = StoreTimestamp.now
      _ = FileManager.default.createFile(atPath: log + ".gate", contents: Data())

      let store = try PostgresQueueStore(url: cluster.url, location: "test", createIfMissing: false)
      let jobs = try await DurableQueueCommandTests.finalJobs(in: store, queues: queues, count: queues.count * perQueue)
      // Both workers lived through the restart and ran jobs after it.
      for running in workers {
        let said = try running.stderr.contents()
        #expect(running.process.isRunning, "a worker died: \(said)")
        let name = ":\(running.process.processIdentifier)"
        #expect(
          jobs.contains { $0.worker?.name.hasSuffix(name) == true && ($0.startedAt ?? restarted) > restarted },
          "worker\(name) ran no job after the restart: \(said)")
      }
      try await DurableQueueCommandTests.stop(workers)
      // What the workers said of the lost connections is theirs, one line
      // each: nothing of libpq's reaches their standard error unasked.
      for running in workers {
        let said = try running.stderr.contents()
        #expect(said.split(separator: "\n").allSatisfy { $0.hasPrefix("lunar worker ") }, "\(said)")
        // libpq reports a lost connection once on sending, once on reading.
        #expect(
          said.split(separator: "\n").allSatisfy { $0.components(separatedBy: "server closed the connection").count <= 2 },
          "\(said)")
      }

      // Every job finished once: a job whose claim or completion the
      // restart lost ran again after its lease (at-least-once), and the
      // store holds one outcome for it.
      #expect(jobs.allSatisfy { $0.status == .succeeded }, "\(jobs.filter { $0.status != .succeeded })")
      let starts = try DurableQueueCommandTests.starts(in: log)
      for name in queues {
        let mine = jobs.filter { $0.queue == LuaString(name) }
        #expect(mine.map(\.sequence) == Array(1...Int64(perQueue)), "queue \(name)")
        let claims = mine.compactMap(\.claim)
        #expect(claims == claims.sorted() && claims.count == perQueue, "queue \(name)")
        // Starts, re-runs included, follow submission order.
        let started = starts.filter { $0.queue == name }.map(\.seq)
        #expect(zip(started, started.dropFirst()).allSatisfy { $0 <= $1 }, "queue \(name): \(started)")
        #expect(Set(started) == Set(1...perQueue), "queue \(name)")
      }
    }
  }
}
