import Foundation
import LuaKit
import LunarStore
import Testing
import TestSupport

/// Durable queues across processes: scripts submit with `lunar run`, real
/// `lunar worker` processes run the jobs, on a SQLite store in a temporary
/// folder (and on PostgreSQL, below, when the tests have a server).
struct DurableQueueCommandTests {
  /// Actions that append `queue seq attempt` to `log` when they start, then
  /// sleep `pause` seconds (a job with `hold` set waits until the file
  /// `log`.gate exists) and return their input squared (`square`), raise
  /// (`boom`), end the worker's process (`poison`) or compute forever,
  /// catching every error (`spin`).
  static func workerFile(log: String, pause: Double = 0) -> String {
    """
    local function note(ctx, input)
      local f = assert(io.open("\(log)", "a"))
      f:write(input.queue, " ", input.seq, " ", ctx.attempt, "\\n")
      f:close()
    end
    lunar.action("square", function(ctx, input)
      note(ctx, input)
      if \(pause) > 0 then lunar.sleep(\(pause)) end
      while input.hold and not io.open("\(log).gate") do lunar.sleep(0.01) end
      return { n = input.seq * input.seq, attempt = ctx.attempt }
    end)
    lunar.action("boom", function(ctx, input)
      note(ctx, input)
      error("boom " .. input.seq)
    end)
    lunar.action("flaky", function(ctx, input)
      note(ctx, input)
      if ctx.attempt < 3 then error("flaky on attempt " .. ctx.attempt) end
      return ctx.attempt
    end)
    lunar.action("poison", function(ctx, input)
      note(ctx, input)
      os.exit(3)
    end)
    lunar.action("spin", function(ctx, input)
      note(ctx, input)
      while true do pcall(function() while true do end end) end
    end)
    """
  }

  /// A temporary folder with a SQLite store, the log the worker's actions
  /// write, and the worker file.
  struct Fixture {
    let folder: TemporaryFolder
    let path: String
    var store: String { "sqlite:" + path }
    let log: String
    let worker: String

    init(pause: Double = 0) throws {
      folder = try TemporaryFolder()
      path = folder.url.appendingPathComponent("q.db").path
      log = folder.url.appendingPathComponent("log.txt").path
      worker = try folder.write("worker.lua", DurableQueueCommandTests.workerFile(log: log, pause: pause))
    }
  }

  /// Starts `count` workers on `store`.
  static func startWorkers(_ count: Int, file: String, store: String, extra: [String] = []) throws -> [LunarProcess.Running] {
    try (0..<count).map { _ in try LunarProcess.start(["worker", "--store", store] + extra + [file]) }
  }

  /// Stops `workers` with SIGTERM and expects each to exit 0.
  static func stop(_ workers: [LunarProcess.Running]) async throws {
    for worker in workers { worker.send(SIGTERM) }
    for worker in workers {
      let outcome = try await worker.wait()
      #expect(outcome.status == 0 && outcome.exitedNormally, "worker: \(outcome.stderr)")
    }
  }

  /// Waits until every job of `store` is final (or fails the test after
  /// `timeout` seconds); returns every job of `queues`, oldest first.
  static func finalJobs(in store: any QueueStore, queues: [String], count: Int, timeout: Double = 180) async throws -> [JobRecord] {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
      var jobs: [JobRecord] = []
      for queue in queues { jobs += try store.jobs(queue: LuaString(queue), limit: 100_000).reversed() }
      if jobs.count == count && jobs.allSatisfy(\.status.isFinal) { return jobs }
      guard Date() < deadline else {
        Issue.record("jobs not finished in time: \(jobs.filter { !$0.status.isFinal }.count) of \(jobs.count) still open")
        return jobs
      }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  /// The `log` lines as (queue, sequence, attempt).
  static func starts(in log: String) throws -> [(queue: String, seq: Int, attempt: Int)] {
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").map { line in
      let parts = line.split(separator: " ")
      return (String(parts[0]), Int(parts[1])!, Int(parts[2])!)
    }
  }

  @Test func aScriptAwaitsWhatAWorkerRan() async throws {
    let fixture = try Fixture()
    let (folder, store, worker) = (fixture.folder, fixture.store, fixture.worker)
    let script = try folder.write(
      "submit.lua",
      """
      local queue = require "lunar.queue"
      local q = queue.new { name = "calc", durable = true }
      local handles = {}
      for i = 1, 3 do handles[i] = q:submit("square", { queue = "calc", seq = i }) end
      local failing = q:submit("boom", { queue = "calc", seq = 4 })
      local unknown = q:submit("nowhere", { queue = "calc", seq = 5 })
      for i, h in ipairs(handles) do
        local out = h:await()
        print(h.sequence, out.n, out.attempt, h:status())
      end
      print("failing", failing:result())
      print("unknown", unknown:result())
      print("again", queue.job("calc", 2):await().n, queue.job("calc", 99))
      print("closure", pcall(q.submit, q, function() end))
      print("closure input", pcall(q.submit, q, "square", { f = print }))
      """)
    let workers = try Self.startWorkers(1, file: worker, store: store)
    let outcome = try await LunarProcess.run(["run", "--store", store, script])
    try await Self.stop(workers)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines.prefix(3) == ["1\t1\t1\tdone", "2\t4\t1\tdone", "3\t9\t1\tdone"])
    #expect(lines.contains { $0.hasPrefix("failing\tfalse\t") && $0.contains("worker.lua:") && $0.hasSuffix(": boom 4") }, "\(lines)")
    #expect(lines.contains("unknown\tfalse\tunknown action 'nowhere': the worker that ran this job does not define it"), "\(lines)")
    #expect(lines.contains("again\t4\tnil"))
    #expect(lines.contains { $0.hasPrefix("closure\tfalse\t") && $0.contains("closures cannot cross processes") }, "\(lines)")
    #expect(lines.contains { $0.hasPrefix("closure input\tfalse\t") && $0.contains("input.f: a function") && $0.contains("closures cannot cross processes") }, "\(lines)")
  }

  @Test func aDurableQueueNeedsAStore() async throws {
    let folder = try TemporaryFolder()
    let script = try folder.write("s.lua", "local q = require('lunar.queue').new { name = 'x', durable = true }")
    let outcome = try await LunarProcess.run(["run", "--no-store", script])
    #expect(outcome.status == 1)
    #expect(outcome.stderr.contains("s.lua:1: durable queue \"x\" needs a store"), "\(outcome.stderr)")
  }

  @Test func twoWorkersKeepStrictOrderOnOneQueue() async throws {
    let fixture = try Fixture(pause: 0.01)
    let (folder, store, log, worker) = (fixture.folder, fixture.store, fixture.log, fixture.worker)
    let script = try folder.write(
      "submit.lua",
      """
      local q = require("lunar.queue").new { name = "line", durable = true }
      local last
      for i = 1, 40 do last = q:submit("square", { queue = "line", seq = i }) end
      print(last:await().n)
      """)
    let workers = try Self.startWorkers(2, file: worker, store: store, extra: ["--concurrency", "2"])
    let outcome = try await LunarProcess.run(["run", "--store", store, script], timeout: 60)
    try await Self.stop(workers)
    #expect(outcome.stdout == "1600\n", "\(outcome.stderr)")
    #expect(try Self.starts(in: log).map(\.seq) == Array(1...40))
  }

  @Test func aKilledWorkersJobRunsAgainAndEveryJobFinishesOnceInOrder() async throws {
    let fixture = try Fixture(pause: 0.002)
    let (folder, path, store, log, worker) = (fixture.folder, fixture.path, fixture.store, fixture.log, fixture.worker)
    // The issue's shape: 1,000 jobs over 10 queues, 3 workers, one killed.
    let queues = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
    let perQueue = 100
    let names = queues.map { "\"\($0)\"" }.joined(separator: ", ")
    let script = try folder.write(
      "submit.lua",
      """
      local queue = require "lunar.queue"
      local qs = {}
      for _, name in ipairs { \(names) } do qs[name] = queue.new { name = name, durable = true } end
      for i = 1, \(perQueue) do
        for _, name in ipairs { \(names) } do
          qs[name]:submit("square", { queue = name, seq = i, hold = name == "a" and i == 2 })
        end
      end
      """)
    let submitted = try await LunarProcess.run(["run", "--store", store, script])
    #expect(submitted.status == 0, "\(submitted.stderr)")
    let workers = try Self.startWorkers(3, file: worker, store: store, extra: ["--concurrency", "2", "--lease", "1"])
    let queueStore = try SQLiteQueueStore(path: path)
    // Job a#2 holds until the gate opens: kill the worker running it.
    let deadline = Date().addingTimeInterval(60)
    var holder: Int?
    while holder == nil && Date() < deadline {
      if let a = try queueStore.queues().first(where: { $0.name == "a" }), let running = a.running,
        try queueStore.job(running)?.sequence == 2, let name = a.runningWorker?.name
      {
        holder = workers.firstIndex { name.hasSuffix(":\($0.process.processIdentifier)") }
      }
      try await Task.sleep(for: .milliseconds(5))
    }
    let victim = try #require(holder)
    workers[victim].send(SIGKILL)
    let killed = try await workers[victim].wait()
    #expect(!killed.exitedNormally)
    _ = FileManager.default.createFile(atPath: log + ".gate", contents: Data())

    let jobs = try await Self.finalJobs(in: queueStore, queues: queues, count: queues.count * perQueue)
    try await Self.stop(workers.indices.filter { $0 != victim }.map { workers[$0] })
    #expect(jobs.allSatisfy { $0.status == .succeeded }, "\(jobs.filter { $0.status != .succeeded })")
    // The killed worker's job ran again after its lease expired, and its
    // action saw the attempt.
    #expect(jobs.first { $0.queue == "a" && $0.sequence == 2 }?.attempts == 2)
    #expect(try Self.starts(in: log).contains { $0 == ("a", 2, 2) })
    for name in queues {
      let mine = jobs.filter { $0.queue == LuaString(name) }
      #expect(mine.map(\.sequence) == Array(1...Int64(perQueue)))
      // Claims are numbered in the order they were made: each queue's
      // latest claims follow its order.
      let claims = mine.compactMap(\.claim)
      #expect(claims == claims.sorted() && claims.count == perQueue, "queue \(name)")
      // Every start, re-runs included, came in order: a job never started
      // before an earlier one of its queue.
      let started = try Self.starts(in: log).filter { $0.queue == name }.map(\.seq)
      #expect(zip(started, started.dropFirst()).allSatisfy { $0 <= $1 }, "queue \(name): \(started)")
      #expect(Set(started) == Set(1...perQueue))
    }
  }

  @Test func aDurableWorkflowStepIsAJobAWorkerRuns() async throws {
    let fixture = try Fixture()
    let (folder, store, log, worker) = (fixture.folder, fixture.store, fixture.log, fixture.worker)
    let workflow = try folder.write(
      "release.lua",
      """
      local workflow = require "lunar.workflow"
      local step = workflow.step
      return workflow "release" {
        step "first" { queue = "deploys", durable = true, uses = "square", with = { queue = "deploys", seq = 1 } },
        step "second" { queue = "deploys", durable = true, uses = "square", with = { queue = "deploys", seq = 2 } },
        step "report" { needs = { "first", "second" }, run = function(ctx)
          print("squares", ctx.steps.first.output.n, ctx.steps.second.output.n)
        end },
      }
      """)
    let workers = try Self.startWorkers(1, file: worker, store: store)
    let run = try await LunarProcess.run(["run", "--store", store, workflow], timeout: 60)
    try await Self.stop(workers)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    #expect(run.stdout.contains("squares\t1\t4"), "the outputs came from the worker's jobs")
    #expect(try Self.starts(in: log).map(\.seq) == [1, 2], "the worker ran them, in declaration order")
    let bad = try await LunarProcess.run(
      ["run", "--no-store", "-"],
      input: """
        local workflow = require "lunar.workflow"
        return workflow "w" { workflow.step "a" { durable = true, run = function() end } }
        """)
    #expect(bad.status == 1)
    #expect(bad.stderr.contains("'durable' needs 'queue' (the durable queue) and 'uses' (the action a worker runs)"), "\(bad.stderr)")
  }

  /// A durable step retried submits a job per attempt; the worker's action
  /// sees the step's attempt, and a resume counts on.
  @Test func aRetriedDurableStepsWorkerSeesTheStepsAttempt() async throws {
    let fixture = try Fixture()
    let (folder, store, log, worker) = (fixture.folder, fixture.store, fixture.log, fixture.worker)
    let workflow = try folder.write(
      "flaky.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "flaky" {
        workflow.step "d" { queue = "q", durable = true, uses = "flaky", with = { queue = "q", seq = 1 },
          retry = { attempts = 3, backoff = 0.01 } },
      }
      """)
    let workers = try Self.startWorkers(1, file: worker, store: store)
    let run = try await LunarProcess.run(["run", "--store", store, workflow], timeout: 60)
    try await Self.stop(workers)
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let noted = try String(contentsOfFile: log, encoding: .utf8)
    #expect(try Self.starts(in: log).map(\.attempt) == [1, 2, 3], "\(noted)")
    let steps = try SQLiteRunStore(path: fixture.path).steps(of: RunID(1))
    #expect(steps.first?.attempts == 3 && steps.first?.output == [.integer(3)], "\(steps)")
  }

  @Test func badQueueNamesAndInputsAreArgumentErrors() async throws {
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("q.db").path
    let script = """
      local queue = require "lunar.queue"
      print(pcall(queue.new, { name = "", durable = true }))
      print(pcall(queue.new, { name = ("q"):rep(1001), durable = true }))
      local t = {}; t.self = t
      print(pcall(queue.new { name = "q", durable = true }.submit, queue.new { name = "q", durable = true }, "a", t))
      """
    let outcome = try await LunarProcess.run(["run", "--store", store, "-"], input: script)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    let lines = outcome.stdout.split(separator: "\n").map(String.init)
    #expect(lines == [
      "false\tbad argument #1 to 'lunar.queue.new' (field 'name': a queue name must not be empty)",
      "false\tbad argument #1 to 'lunar.queue.new' (field 'name': a queue name is at most 1000 bytes long, got 1001 bytes)",
      "false\tbad argument #3 to 'durable_queue:submit' (input.self: a table that contains itself cannot cross into Swift)",
    ])
  }

  @Test func sigtermFinishesTheRunningJobThenExits() async throws {
    let fixture = try Fixture()
    let (folder, path, store, log, worker) = (fixture.folder, fixture.path, fixture.store, fixture.log, fixture.worker)
    let script = try folder.write(
      "submit.lua",
      """
      local q = require("lunar.queue").new { name = "slow", durable = true }
      q:submit("square", { queue = "slow", seq = 1, hold = true })
      q:submit("square", { queue = "slow", seq = 2 })
      """)
    #expect(try await LunarProcess.run(["run", "--store", store, script]).status == 0)
    // A grace period long enough for a loaded machine: what is checked is
    // that the job finishes, not how soon (the default 10 s once ran out).
    let running = try LunarProcess.start(["worker", "--store", store, "--grace", "100", worker])
    let deadline = Date().addingTimeInterval(60)
    while try Self.starts(in: log).isEmpty && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
    // The first job holds until the gate opens: SIGTERM comes while it runs.
    running.send(SIGTERM)
    while try !running.stderr.contents().contains("stopping") && Date() < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(FileManager.default.createFile(atPath: log + ".gate", contents: Data()))
    let outcome = try await running.wait(timeout: 120)
    #expect(outcome.status == 0 && outcome.exitedNormally, "\(outcome.stderr)")
    let queueStore = try SQLiteQueueStore(path: path)
    let first = try #require(try queueStore.job(queue: "slow", sequence: 1))
    let second = try #require(try queueStore.job(queue: "slow", sequence: 2))
    #expect(first.status == .succeeded)
    #expect(second.status == .waiting)
  }

  /// Waits until `log` shows that job `seq` of `queue` started its attempt
  /// `attempt`; false (and an issue) after a minute.
  static func waitForStart(in log: String, _ queue: String, _ seq: Int, attempt: Int) async throws -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while try !Self.starts(in: log).contains(where: { $0 == (queue, seq, attempt) }) {
      guard Date() < deadline else {
        Issue.record("job \(queue)#\(seq) never started its attempt \(attempt): \(try Self.starts(in: log))")
        return false
      }
      try await Task.sleep(for: .milliseconds(5))
    }
    return true
  }

  @Test func aStuckJobIsCancelledAfterTheGracePeriodAndItsLeaseReleased() async throws {
    let fixture = try Fixture()
    let (folder, path, store, log, worker) = (fixture.folder, fixture.path, fixture.store, fixture.log, fixture.worker)
    let script = try folder.write(
      "submit.lua",
      """
      local q = require("lunar.queue").new { name = "stuck", durable = true }
      q:submit("spin", { queue = "stuck", seq = 1 })
      q:submit("square", { queue = "stuck", seq = 2 })
      """)
    #expect(try await LunarProcess.run(["run", "--store", store, script]).status == 0)
    let queueStore = try SQLiteQueueStore(path: path)
    // SIGTERM: the job ignores it; after the grace period the worker
    // cancels it, gives its lease back and exits as SIGTERM's would.
    let first = try LunarProcess.start(["worker", "--store", store, "--grace", "0.2", worker])
    guard try await Self.waitForStart(in: log, "stuck", 1, attempt: 1) else { return }
    first.send(SIGTERM)
    let stopped = try await first.wait(timeout: 60)
    #expect(stopped.exitedNormally && stopped.status == 143, "\(stopped.status) \(stopped.stderr)")
    #expect(stopped.stderr.contains("cancelled 1 running job"), "\(stopped.stderr)")
    let released = try #require(try queueStore.job(queue: "stuck", sequence: 1))
    #expect(released.status == .waiting && released.leaseExpiresAt == nil, "\(released)")
    #expect(try queueStore.job(queue: "stuck", sequence: 2)?.status == .waiting)

    // Another worker takes it at once; a second Ctrl-C stops that one at
    // once, long before its grace period ends, and gives the job back too.
    let second = try LunarProcess.start(["worker", "--store", store, "--grace", "3600", worker])
    guard try await Self.waitForStart(in: log, "stuck", 1, attempt: 2) else { return }
    second.send(SIGINT)
    let deadline = Date().addingTimeInterval(60)
    while try !second.stderr.contents().contains("stopping") && Date() < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    second.send(SIGINT)
    let interrupted = try await second.wait(timeout: 60)
    #expect(interrupted.exitedNormally && interrupted.status == 130, "\(interrupted.status) \(interrupted.stderr)")
    let again = try #require(try queueStore.job(queue: "stuck", sequence: 1))
    #expect(again.status == .waiting && again.attempts == 2, "\(again)")
    #expect(try queueStore.job(queue: "stuck", sequence: 2)?.status == .waiting)
  }

  @Test func aJobThatKillsEveryWorkerIsAbandonedAfterThreeLostLeases() async throws {
    let fixture = try Fixture()
    let (folder, path, store, log, worker) = (fixture.folder, fixture.path, fixture.store, fixture.log, fixture.worker)
    let script = try folder.write(
      "submit.lua",
      """
      local q = require("lunar.queue").new { name = "poisoned", durable = true }
      q:submit("poison", { queue = "poisoned", seq = 1 })
      q:submit("square", { queue = "poisoned", seq = 2 })
      """)
    #expect(try await LunarProcess.run(["run", "--store", store, script]).status == 0)
    let queueStore = try SQLiteQueueStore(path: path)
    // Workers are started one after another as the job kills each.
    var killed = 0
    var alive: LunarProcess.Running?
    let deadline = Date().addingTimeInterval(120)
    while try queueStore.job(queue: "poisoned", sequence: 2)?.status.isFinal != true && Date() < deadline && killed < 6 {
      if let running = alive, !running.process.isRunning {
        _ = try await running.wait()
        killed += 1
        alive = nil
      }
      if alive == nil { alive = try LunarProcess.start(["worker", "--store", store, "--lease", "1", worker]) }
      try await Task.sleep(for: .milliseconds(10))
    }
    if let alive { try await Self.stop([alive]) }
    #expect(killed == 3)
    #expect(try Self.starts(in: log).map(\.attempt) == [1, 2, 3, 1])
    let poisoned = try #require(try queueStore.job(queue: "poisoned", sequence: 1))
    #expect(poisoned.status == .failed)
    let error = String(decoding: poisoned.error ?? [], as: UTF8.self)
    #expect(error.hasPrefix("abandoned after 3 lost leases: "), "\(error)")
    #expect(try queueStore.job(queue: "poisoned", sequence: 2)?.status == .succeeded)
  }

  @Test func aResumedRunWaitsForTheDurableJobItsInterruptedRunSubmitted() async throws {
    let fixture = try Fixture()
    let (folder, path, store, log, worker) = (fixture.folder, fixture.path, fixture.store, fixture.log, fixture.worker)
    let workflow = try folder.write(
      "deploy.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "deploy" {
        workflow.step "push" { queue = "deploys", durable = true, uses = "square", with = { queue = "deploys", seq = 1 } },
      }
      """)
    let queueStore = try SQLiteQueueStore(path: path)
    // No worker yet: the run waits for its job, and Ctrl-C stops it.
    let first = try LunarProcess.start(["run", "--store", store, workflow])
    let deadline = Date().addingTimeInterval(60)
    while try queueStore.job(queue: "deploys", sequence: 1) == nil && Date() < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    first.send(SIGINT)
    let interrupted = try await first.wait()
    #expect(interrupted.status == 130, "\(interrupted.stderr)")
    // A resumed run interrupted in its turn leaves the same job to the next.
    let again = try LunarProcess.start(["run", "--store", store, "--resume", workflow])
    let runs = try SQLiteRunStore(path: path)
    while try runs.stepJobs(of: RunID(2)).isEmpty && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
    again.send(SIGINT)
    let stopped = try await again.wait()
    #expect(stopped.status == 130 && stopped.exitedNormally, "\(stopped.status) \(stopped.stdout)\(stopped.stderr)")
    let resumed = try LunarProcess.start(["run", "--store", store, "--resume", workflow])
    let workers = try Self.startWorkers(1, file: worker, store: store)
    let outcome = try await resumed.wait(timeout: 60)
    try await Self.stop(workers)
    #expect(outcome.status == 0, "\(outcome.stdout)\(outcome.stderr)")
    #expect(try queueStore.jobs(queue: "deploys", limit: 10).count == 1, "the resumed run submitted no second job")
    #expect(try Self.starts(in: log).map(\.seq) == [1], "the action ran once")
    #expect(try Self.starts(in: log).map(\.attempt) == [1])
    let show = try await LunarProcess.run(["runs", "show", "last", "--store", store])
    #expect(show.stdout.contains("push  succeeded         1"), "\(show.stdout)")
  }

  @Test func aResumedRunCountsTheStepsAttemptsAcrossRuns() async throws {
    let fixture = try Fixture()
    let (folder, path, store, log, worker) = (fixture.folder, fixture.path, fixture.store, fixture.log, fixture.worker)
    let workflow = try folder.write(
      "deploy.lua",
      """
      local workflow = require "lunar.workflow"
      return workflow "deploy" {
        workflow.step "push" {
          queue = "deploys", durable = true, uses = "square", with = { queue = "deploys", seq = 1 }, retry = { attempts = 3 },
        },
      }
      """)
    let queueStore = try SQLiteQueueStore(path: path)
    let first = try LunarProcess.start(["run", "--store", store, workflow])
    // The test fails the first attempt's job as a worker would; the run
    // submits its second attempt's job, and is interrupted waiting for it.
    let deadline = Date().addingTimeInterval(60)
    var failed = false
    while try queueStore.job(queue: "deploys", sequence: 2) == nil && Date() < deadline {
      if !failed, let job = try queueStore.claim(worker: WorkerID("test"), queues: ["deploys"], lease: .seconds(60), at: .now) {
        try queueStore.complete(job: job.id, token: job.token, outcome: .failed(error: Array("no".utf8)), at: .now)
        failed = true
      }
      try await Task.sleep(for: .milliseconds(5))
    }
    first.send(SIGINT)
    #expect(try await first.wait().status == 130)
    let workers = try Self.startWorkers(1, file: worker, store: store)
    let resumed = try await LunarProcess.run(["run", "--store", store, "--resume", workflow], timeout: 60)
    try await Self.stop(workers)
    #expect(resumed.status == 0, "\(resumed.stdout)\(resumed.stderr)")
    #expect(try queueStore.jobs(queue: "deploys", limit: 10).count == 2)
    #expect(try Self.starts(in: log).map(\.seq) == [1], "the worker ran the second attempt's job only")
    // The step's attempts: the failed one, then the one it waited for again.
    #expect(resumed.stdout.contains("push  succeeded         2"), "\(resumed.stdout)")
  }

  @Test func theStopPolicyHaltsUntilResumed() async throws {
    let fixture = try Fixture()
    let (folder, path, store, log, worker) = (fixture.folder, fixture.path, fixture.store, fixture.log, fixture.worker)
    let script = try folder.write(
      "submit.lua",
      """
      local q = require("lunar.queue").new { name = "strict", durable = true, policy = "stop" }
      local bad = q:submit("boom", { queue = "strict", seq = 1 })
      local next = q:submit("square", { queue = "strict", seq = 2 })
      print(bad:result())
      print(next:status())
      """)
    let workers = try Self.startWorkers(1, file: worker, store: store)
    let outcome = try await LunarProcess.run(["run", "--store", store, script])
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.hasSuffix("boom 1\npending\n"), "\(outcome.stdout)")
    let queueStore = try SQLiteQueueStore(path: path)
    #expect(try queueStore.resume(queue: "strict"))
    let jobs = try await Self.finalJobs(in: queueStore, queues: ["strict"], count: 2)
    try await Self.stop(workers)
    #expect(jobs.map(\.status) == [.failed, .succeeded])
    #expect(try Self.starts(in: log).map(\.seq) == [1, 2])
  }

  @Test func aJobCancelledBeforeItStartsNeverRuns() async throws {
    let fixture = try Fixture()
    let (folder, store, log, worker) = (fixture.folder, fixture.store, fixture.log, fixture.worker)
    let submit = try folder.write(
      "submit.lua",
      """
      local q = require("lunar.queue").new { name = "c", durable = true }
      q:submit("square", { queue = "c", seq = 1 })
      local doomed = q:submit("square", { queue = "c", seq = 2 })
      q:submit("square", { queue = "c", seq = 3 })
      print(doomed:cancel(), doomed:cancel(), doomed:status())
      """)
    let first = try await LunarProcess.run(["run", "--store", store, submit])
    #expect(first.stdout == "true\tfalse\tcancelled\n", "\(first.stderr)")
    let workers = try Self.startWorkers(1, file: worker, store: store)
    let check = try folder.write(
      "check.lua",
      """
      local queue = require "lunar.queue"
      print(queue.job("c", 3):await().n, queue.job("c", 1):cancel(), queue.job("c", 2):result())
      """)
    let second = try await LunarProcess.run(["run", "--store", store, check])
    try await Self.stop(workers)
    #expect(second.stdout == "9\tfalse\tfalse\tcancelled\n", "\(second.stderr)")
    #expect(try Self.starts(in: log).map(\.seq) == [1, 3])
  }

  @Test func theExampleRunsWithItsWorker() async throws {
    let examples = Repository.url("examples")
    let folder = try TemporaryFolder()
    let store = "sqlite:" + folder.url.appendingPathComponent("demo.db").path
    let workers = try Self.startWorkers(1, file: examples.appendingPathComponent("durable_worker.lua").path, store: store)
    let outcome = try await LunarProcess.run(["run", "--store", store, "durable_queue.lua"], in: examples)
    try await Self.stop(workers)
    #expect(outcome.status == 0, "\(outcome.stderr)")
    #expect(outcome.stdout.hasPrefix("eu\thttps://eu.example.com\nus\thttps://us.example.com\nmars\tfalse\t"))
    #expect(outcome.stdout.hasSuffix("cannot deploy to mars\nagain\tdone\n"), "\(outcome.stdout)")
  }
}

/// The core scenario on PostgreSQL: workers woken by notifications.
@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresDurableQueueCommandTests {
  @Test func workersOnPostgresRunJobsInOrderAndAScriptAwaitsThem() async throws {
    let schema = try TestPostgresSchema()
    let folder = try TemporaryFolder()
    let log = folder.url.appendingPathComponent("log.txt").path
    let worker = try folder.write("worker.lua", DurableQueueCommandTests.workerFile(log: log, pause: 0.01))
    let script = try folder.write(
      "submit.lua",
      """
      local queue = require "lunar.queue"
      local a = queue.new { name = "pa", durable = true }
      local b = queue.new { name = "pb", durable = true }
      local last = {}
      for i = 1, 20 do
        last.a = a:submit("square", { queue = "pa", seq = i })
        last.b = b:submit("square", { queue = "pb", seq = i })
      end
      local unknown = a:submit("nowhere", { queue = "pa", seq = 21 })
      print(last.a:await().n, last.b:await().n, unknown:result())
      """)
    let workers = try DurableQueueCommandTests.startWorkers(2, file: worker, store: schema.url, extra: ["--concurrency", "2"])
    let outcome = try await LunarProcess.run(["run", "--store", schema.url, script], timeout: 60)
    try await DurableQueueCommandTests.stop(workers)
    #expect(
      outcome.stdout == "400\t400\tfalse\tunknown action 'nowhere': the worker that ran this job does not define it\n",
      "\(outcome.stderr)")
    let starts = try DurableQueueCommandTests.starts(in: log)
    #expect(starts.filter { $0.queue == "pa" }.map(\.seq) == Array(1...20))
    #expect(starts.filter { $0.queue == "pb" }.map(\.seq) == Array(1...20))
  }
}
