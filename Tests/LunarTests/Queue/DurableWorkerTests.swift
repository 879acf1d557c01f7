import Foundation
import Synchronization
import LuaKit
import LunarStore
import Testing
import TestSupport

@testable import Lunar

/// Durable queues in one process: a runtime submits, a `DurableWorker` on
/// another runtime runs the jobs, both on a SQLite store in a temporary folder.
@Suite struct DurableWorkerTests {
  /// Actions that return their input squared (with their attempt), fail, or
  /// wait until the file `gate` exists in `folder`.
  static func actions(_ folder: String) -> String {
    """
    lunar.action("square", function(ctx, input) return { n = input * input, attempt = ctx.attempt } end)
    lunar.action("boom", function(ctx, input) error("boom " .. input) end)
    lunar.action("hold", function(ctx, input)
      while not io.open("\(folder)/gate") do lunar.sleep(0.005) end
      return "held"
    end)
    lunar.action("spin", function() while true do pcall(function() while true do end end) end end)
    lunar.action("nap", function() while true do pcall(lunar.sleep, 3600) end end)
    lunar.action("huge", function() return string.rep("x", 17 * 1024 * 1024) end)
    lunar.action("shout", function() error(string.rep("y", 17 * 1024 * 1024), 0) end)
    """
  }

  @Test func aWorkerRunsWhatAScriptSubmitsInOrder() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let worker = try fixture.worker()
    let thread = WorkerThread(running: worker)
    let results = try await fixture.submitter.run(
      """
      local q = require("lunar.queue").new { name = "calc", durable = true }
      local handles = {}
      for i = 1, 3 do handles[i] = q:submit("square", i) end
      local failing = q:submit("boom", 4)
      local unknown = q:submit("nowhere", 5)
      local squares = {}
      for i, h in ipairs(handles) do squares[i] = h:await().n end
      local _, failure = failing:result()
      local _, missing = unknown:result()
      return table.concat(squares, ","), handles[1]:await().attempt, failure, missing, handles[3]:status()
      """)
    worker.stop()
    await thread.join()
    #expect(results.count == 5)
    #expect(results.prefix(2) == ["1,4,9", 1])
    #expect(results[2].stringValue?.hasSuffix(": boom 4") == true, "\(results)")
    #expect(results[3] == "unknown action 'nowhere': the worker that ran this job does not define it")
    #expect(results[4] == "done")
    let jobs = try fixture.store.jobs(queue: "calc", limit: 10).reversed().map(\.status)
    #expect(jobs == [.succeeded, .succeeded, .succeeded, .failed, .failed])
  }

  @Test func stopFinishesTheRunningJobAndClaimsNoMore() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let first = try fixture.store.enqueue(queue: "slow", action: "hold", input: LuaValueCodec.encode([.nil]), policy: .continue, at: .now)
    let second = try fixture.store.enqueue(queue: "slow", action: "square", input: LuaValueCodec.encode([2]), policy: .continue, at: .now)
    let log = WorkerLog()
    // A grace period no loaded machine outlasts: the job ends when the test
    // opens the gate, so the test waits on that, never on wall time.
    let worker = try fixture.worker(.init(worker: WorkerID("test:1"), gracePeriod: .seconds(3600)), log: log)
    let thread = WorkerThread(running: worker)
    guard try await fixture.waitUntil("the first job runs", { try $0.job(first.id)?.status == .running }) else { return }
    worker.stop()
    guard try await fixture.waitUntil(timeout: 60, "the worker says it stops", { _ in log.all.contains { $0.hasPrefix("stopping") } })
    else { return }
    _ = FileManager.default.createFile(atPath: fixture.folder.url.appendingPathComponent("gate").path, contents: Data())
    await thread.join()
    #expect(try fixture.store.job(first.id)?.status == .succeeded)
    #expect(try fixture.store.job(second.id)?.status == .waiting)
    #expect(log.all == ["stopping: finishing 1 running job"])
  }

  @Test func anIdleWorkerStopsWithoutAWord() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let log = WorkerLog()
    let worker = try fixture.worker(log: log)
    let thread = WorkerThread(running: worker)
    worker.stop()
    await thread.join()
    #expect(log.all.isEmpty, "\(log.all)")
  }

  @Test func theRunnerRunsAClaimedJobsActionWithItsAttempt() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let store = fixture.store
    let worker = WorkerID("direct:1")
    let jobs: [(LuaString, LuaString, [UInt8])] = [
      ("a", "square", try LuaValueCodec.encode([7])), ("b", "nowhere", try LuaValueCodec.encode([1])), ("c", "square", [0xFF]),
    ]
    for (queue, action, input) in jobs {
      _ = try store.enqueue(queue: queue, action: action, input: input, policy: .continue, at: .now)
    }
    var outcomes: [JobOutcome] = []
    while let job = try store.claim(worker: worker, queues: nil, lease: .seconds(10), at: .now) {
      let outcome = await fixture.workerRuntime.runtime.run(job)
      outcomes.append(outcome)
      try store.complete(job: job.id, token: job.token, outcome: outcome, at: .now)
    }
    #expect(outcomes.count == 3)
    guard case .succeeded(let output)? = outcomes.first else {
      Issue.record("the first job should succeed: \(outcomes)")
      return
    }
    #expect(try LuaValueCodec.decode(output) == [.table(["n": 49, "attempt": 1])])
    #expect(outcomes.dropFirst().first == .failed(error: Array("unknown action 'nowhere': the worker that ran this job does not define it".utf8)))
    guard case .failed(let error)? = outcomes.last else {
      Issue.record("a job whose input cannot be read should fail: \(outcomes)")
      return
    }
    #expect(String(decoding: error, as: UTF8.self).hasPrefix("its input cannot be read: "))
  }

  @Test func aDurableHandleCancelsAJobBeforeItStarts() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let results = try await fixture.submitter.run(
      """
      local queue = require "lunar.queue"
      local q = queue.new { name = "c", durable = true }
      local a = q:submit("square", 1)
      local b = q:submit("square", 2)
      return b:cancel(), b:cancel(), b:status(), a:status(), queue.job("c", 2).id == b.id, b.durable
      """)
    #expect(results == [true, false, "cancelled", "pending", true, true])
    let worker = try fixture.worker()
    let thread = WorkerThread(running: worker)
    guard try await fixture.waitUntil("the first job is done", { try $0.job(queue: "c", sequence: 1)?.status == .succeeded }) else {
      return
    }
    worker.stop()
    await thread.join()
    #expect(try fixture.store.job(queue: "c", sequence: 2)?.status == .cancelled)
  }

  @Test func anOutputOrErrorOverTheLimitFailsItsJobAndTheQueueGoesOn() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let store = fixture.store
    let none = try LuaValueCodec.encode([.nil])
    let huge = try store.enqueue(queue: "big", action: "huge", input: none, policy: .continue, at: .now)
    let shout = try store.enqueue(queue: "big", action: "shout", input: none, policy: .continue, at: .now)
    let after = try store.enqueue(queue: "big", action: "square", input: LuaValueCodec.encode([3]), policy: .continue, at: .now)
    let worker = try fixture.worker(.init(worker: WorkerID("test:1"), lease: .seconds(1)))
    let thread = WorkerThread(running: worker)
    let finished = try await fixture.waitUntil(timeout: 30, "the job after them runs") { try $0.job(after.id)?.status.isFinal == true }
    worker.stop()
    await thread.join()
    guard finished else { return }
    let size = try LuaValueCodec.encode([.string(LuaString(String(repeating: "x", count: 17 * 1024 * 1024)))]).count
    let hugeJob = try #require(try store.job(huge.id))
    #expect(hugeJob.status == .failed)
    #expect(
      String(decoding: hugeJob.error ?? [], as: UTF8.self)
        == "action 'huge' returned too much: its output is \(size) bytes, over the 16 MiB limit")
    let shoutJob = try #require(try store.job(shout.id))
    #expect(shoutJob.status == .failed)
    let error = shoutJob.error ?? []
    #expect(error.count <= QueueLimits.maximumValueBytes)
    #expect(error.prefix(3) == [0x79, 0x79, 0x79])
    #expect(
      String(decoding: error.suffix(80), as: UTF8.self).hasSuffix(
        "(error cut: it was \(17 * 1024 * 1024) bytes, over the 16 MiB limit)"), "\(String(decoding: error.suffix(80), as: UTF8.self))")
    #expect(try store.job(after.id)?.status == .succeeded)
  }

  @Test func jobsStillRunningAfterTheGracePeriodAreCancelledAndGivenBack() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let store = fixture.store
    let none = try LuaValueCodec.encode([.nil])
    let spin = try store.enqueue(queue: "a", action: "spin", input: none, policy: .continue, at: .now)
    let nap = try store.enqueue(queue: "b", action: "nap", input: none, policy: .continue, at: .now)
    let log = WorkerLog()
    let worker = try fixture.worker(.init(worker: WorkerID("test:1"), concurrency: 2, gracePeriod: .milliseconds(50)), log: log)
    let stop = StopOutcome()
    let thread = WorkerThread { stop.set(worker.run()) }
    guard
      try await fixture.waitUntil("both jobs run", {
        try $0.job(spin.id)?.status == .running && $0.job(nap.id)?.status == .running
      })
    else { return }
    worker.stop()
    await thread.join()
    #expect(stop.value == .cancelled(jobs: 2))
    #expect(log.all.last == "grace period of 0.05s over: cancelled 2 running jobs, to give back to their queues", "\(log.all)")
    for id in [spin.id, nap.id] {
      let job = try #require(try store.job(id))
      #expect(job.status == .waiting && job.leaseExpiresAt == nil && job.attempts == 1, "\(job)")
    }
    // The runtime goes on: another worker runs a job on it.
    let square = try store.enqueue(queue: "c", action: "square", input: LuaValueCodec.encode([5]), policy: .continue, at: .now)
    let next = try fixture.worker(.init(worker: WorkerID("test:2"), queues: ["c"]))
    let nextThread = WorkerThread(running: next)
    let done = try await fixture.waitUntil("the next job is done") { try $0.job(square.id)?.status == .succeeded }
    next.stop()
    await nextThread.join()
    #expect(done)
    #expect(try store.job(spin.id)?.status == .waiting)
  }

  @Test func aSecondStopGivesTheRunningJobsBackAtOnce() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let store = fixture.store
    let held = try store.enqueue(queue: "a", action: "hold", input: LuaValueCodec.encode([.nil]), policy: .continue, at: .now)
    let log = WorkerLog()
    let worker = try fixture.worker(.init(worker: WorkerID("test:1"), gracePeriod: .seconds(3600)), log: log)
    let stop = StopOutcome()
    let thread = WorkerThread { stop.set(worker.run()) }
    guard try await fixture.waitUntil("the job runs", { try $0.job(held.id)?.status == .running }) else { return }
    worker.stop()
    guard try await fixture.waitUntil("the worker says it stops", { _ in log.all.contains { $0.hasPrefix("stopping") } })
    else { return }
    worker.stop()
    await thread.join()
    #expect(stop.value == .atOnce(jobs: 1))
    #expect(log.all == ["stopping: finishing 1 running job", "stopping at once: giving back 1 running job"])
    let job = try #require(try store.job(held.id))
    #expect(job.status == .waiting && job.leaseExpiresAt == nil)
  }

  @Test func aLeaseTooShortToHeartbeatIsRefused() async throws {
    let fixture = try await DurableFixture(workerSource: Self.actions)
    let refused = #expect(throws: DurableWorker.OptionError.self) {
      try fixture.worker(.init(worker: WorkerID("test:1"), lease: .milliseconds(999)))
    }
    #expect(refused?.option == .lease)
    #expect(refused?.requirement.hasPrefix("must be at least 1 second") == true)
    for options in [
      DurableWorker.Options(worker: WorkerID("w"), concurrency: 0), .init(worker: WorkerID("w"), lostLeaseLimit: 0),
      .init(worker: WorkerID("w"), gracePeriod: .seconds(-1)),
    ] {
      #expect(throws: DurableWorker.OptionError.self) { try options.check() }
    }
    try DurableWorker.Options(worker: WorkerID("w"), lease: DurableWorker.Options.minimumLease).check()
  }
}

/// What a worker's `run` returned, set on its thread.
final class StopOutcome: Sendable {
  private let stop = Mutex<DurableWorker.Stop?>(nil)

  func set(_ value: DurableWorker.Stop) { stop.withLock { $0 = value } }

  var value: DurableWorker.Stop? { stop.withLock { $0 } }
}
