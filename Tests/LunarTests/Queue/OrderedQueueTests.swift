import Synchronization
import Testing

@testable import Lunar

/// Records events from concurrent jobs in the order they happen.
final class EventLog: Sendable {
  private let entries = Mutex<[String]>([])
  func add(_ entry: String) { entries.withLock { $0.append(entry) } }
  var all: [String] { entries.withLock { $0 } }
}

struct Failure: Error, Equatable, CustomStringConvertible {
  let description: String
}

@Suite struct OrderedQueueTests {
  @Test func jobsThatSuspendRunStrictlyInOrder() async throws {
    let queue = OrderedQueue(name: "q")
    let log = EventLog()
    let handles = ["A", "B", "C"].map { name in
      queue.submit { () async throws -> String in
        log.add("start \(name)")
        for _ in 0..<5 {
          await Task.yield()
          try await Task.sleep(for: .microseconds(50))
        }
        log.add("finish \(name)")
        return name.lowercased()
      }
    }
    #expect(try await handles[2].value == "c")
    #expect(try await handles[0].value == "a")
    #expect(log.all == ["start A", "finish A", "start B", "finish B", "start C", "finish C"])
    #expect(handles.map(\.sequence) == [1, 2, 3])
  }

  @Test func aFailingJobKeepsItsErrorAndTheNextRuns() async throws {
    let queue = OrderedQueue(name: "q")
    let a = queue.submit { 1 }
    let b = queue.submit { () throws -> Int in throw Failure(description: "bad input") }
    let c = queue.submit { 3 }
    #expect(try await a.value == 1)
    await #expect(throws: Failure(description: "bad input")) { try await b.value }
    #expect(try await c.value == 3)
  }

  @Test func cancelBeforeStartNeverRunsAndKeepsTheOrder() async throws {
    let queue = OrderedQueue(name: "q")
    let log = EventLog()
    let gate = Gate()
    let a = queue.submit { await gate.wait(); log.add("A") }
    let b = queue.submit { log.add("B") }
    let c = queue.submit { log.add("C") }
    b.cancel()
    #expect(!b.isFinished, "reports cancelled only in its turn")
    gate.open()
    try await c.value
    try await a.value
    #expect(log.all == ["A", "C"])
    await #expect(throws: CancellationError.self) { try await b.value }
  }

  @Test func cancellingARunningJobLetsTheNextStartAfterIt() async throws {
    let queue = OrderedQueue(name: "q")
    let log = EventLog()
    let started = Gate()
    let a = queue.submit { () async throws -> Void in
      log.add("A start")
      started.open()
      try await Task.sleep(for: .seconds(3600))
      log.add("A never")
    }
    let b = queue.submit { () async -> String in
      log.add("B start")
      return Task.isCancelled ? "cancelled" : "clean"
    }
    await started.wait()
    a.cancel()
    await #expect(throws: CancellationError.self) { try await a.value }
    #expect(try await b.value == "clean", "the next job does not inherit the cancellation")
    #expect(log.all == ["A start", "B start"])
  }

  @Test func stopPolicyCancelsTheWaitingJobs() async throws {
    let queue = OrderedQueue(name: "q", policy: .stop)
    let gate = Gate()
    let a = queue.submit { () async throws -> Int in
      await gate.wait()
      throw Failure(description: "first")
    }
    let b = queue.submit { 2 }
    let c = queue.submit { 3 }
    gate.open()
    await queue.drain()
    await #expect(throws: Failure.self) { try await a.value }
    await #expect(throws: CancellationError.self) { try await b.value }
    await #expect(throws: CancellationError.self) { try await c.value }
    #expect(try await queue.submit { 4 }.value == 4)
  }

  @Test func twoQueuesRunConcurrently() async throws {
    let left = OrderedQueue(name: "left")
    let right = OrderedQueue(name: "right")
    let leftStarted = Gate()
    let rightStarted = Gate()
    // Each job waits for the other queue's job: only concurrency finishes both.
    let l = left.submit { leftStarted.open(); await rightStarted.wait(); return "l" }
    let r = right.submit { rightStarted.open(); await leftStarted.wait(); return "r" }
    #expect(try await l.value == "l")
    #expect(try await r.value == "r")
  }

  @Test func manyProducersKeepTheirOwnOrder() async throws {
    let queue = OrderedQueue(name: "shared")
    let entries = await submitFromProducers(to: queue, producers: 8, jobs: 100) { job in
      if job % 10 == 0 { await Task.yield() }
    }
    #expect(entries.count == 800)
    #expect(Set(entries).count == 800, "every job ran once")
    for producer in 0..<8 {
      let mine = entries.filter { $0.hasPrefix("\(producer):") }
      #expect(mine == (0..<100).map { "\(producer):\($0)" })
    }
  }

  @Test func countAndDrain() async throws {
    let queue = OrderedQueue(name: "q")
    #expect(queue.count == 0)
    await queue.drain()
    let gate = Gate()
    queue.submit { await gate.wait() }
    queue.submit {}
    #expect(queue.count == 2)
    gate.open()
    await queue.drain()
    #expect(queue.count == 0)
    #expect(queue.runningSequence == nil)
  }
}

/// A one-shot latch for tests: `wait` suspends until `open`.
final class Gate: Sendable {
  private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

  func open() {
    let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.open = true
      defer { state.waiters = [] }
      return state.waiters
    }
    for waiter in waiters { waiter.resume() }
  }

  func wait() async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        if state.open { return true }
        state.waiters.append(continuation)
        return false
      }
      if ready { continuation.resume() }
    }
  }
}

@Suite struct OrderedQueueDrainTests {
  @Test func drainsWaitingAtDifferentPointsAllWake() async throws {
    let queue = OrderedQueue(name: "q")
    let log = EventLog()
    let gate = Gate()
    queue.submit { await gate.wait() }
    for i in 0..<50 { queue.submit { log.add("\(i)") } }
    // Drains taken at different lengths, all waiting while the gate is shut.
    async let first: Void = queue.drain()
    queue.submit { log.add("late") }
    async let second: Void = queue.drain()
    gate.open()
    _ = await (first, second)
    #expect(log.all.count == 51)
    #expect(queue.count == 0)
  }

  @Test func jobsFromManyProducersWithDrainsInBetweenAllRunOnce() async throws {
    let queue = OrderedQueue(name: "q")
    let entries = await submitFromProducers(to: queue, producers: 4, jobs: 2_000) { job in
      if job % 500 == 0 { await queue.drain() }
    }
    #expect(entries.count == 8_000)
    #expect(Set(entries).count == 8_000)
  }
}

/// Submits `jobs` jobs from each of `producers` concurrent tasks (job `j` of
/// producer `p` logs "p:j"), each producer calling `between` after every
/// submit; returns the log once the queue has drained.
func submitFromProducers(
  to queue: OrderedQueue, producers: Int, jobs: Int, between: @escaping @Sendable (Int) async -> Void
) async -> [String] {
  let log = EventLog()
  await withTaskGroup(of: Void.self) { group in
    for producer in 0..<producers {
      group.addTask {
        for job in 0..<jobs {
          queue.submit { log.add("\(producer):\(job)") }
          await between(job)
        }
      }
    }
  }
  await queue.drain()
  return log.all
}
