import Foundation
import Synchronization
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// An open queue store of either kind, what keeps it (its folder or
/// schema), and how to open it again (another connection: another worker).
struct QueueFixture {
  let store: any QueueStore
  let reopen: () throws -> any QueueStore
  let keeps: AnyObject
  /// Runs SQL on the store behind its back, as sqlite3 or psql would.
  let tamper: (String) throws -> Void

  /// A SQLite store in a fresh folder, removed with it.
  static func sqlite() throws -> QueueFixture {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("queues.db").path
    return QueueFixture(
      store: try SQLiteQueueStore(path: path), reopen: { try SQLiteQueueStore(path: path) }, keeps: folder,
      tamper: { sql in try SQLiteDatabase(path: path).execute(sql) })
  }

  /// A PostgreSQL store in a fresh schema of the test server, dropped with it.
  static func postgres() throws -> QueueFixture {
    let schema = try TestPostgresSchema()
    let location = StoreLocation(.postgres(url: schema.url))
    return QueueFixture(
      store: try location.openQueueStore(), reopen: { try location.openQueueStore() }, keeps: schema,
      tamper: { sql in try schema.query(sql) })
  }
}

/// The encoding of `values`, as a job's input or output.
func encoded(_ values: LuaValue...) throws -> [UInt8] { try LuaValueCodec.encode(values) }

/// The hex of an encoded empty list of arguments, for a run written in SQL.
func noArguments() throws -> String {
  try LuaValueCodec.encode([]).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }
    .joined()
}

private let lease = Duration.seconds(10)
private let alice = WorkerID("alice:1")
private let bob = WorkerID("bob:2")

extension QueueStore {
  /// Submits a job running `action` with an empty input at `now`.
  @discardableResult
  func submit(_ queue: LuaString, _ action: LuaString = "act", policy: QueuePolicy = .continue, at now: Int64 = 0) throws
    -> EnqueuedJob
  {
    try enqueue(queue: queue, action: action, input: encoded(), policy: policy, at: at(now))
  }

  /// Claims for `worker` at second `now` of the test clock.
  func claim(_ worker: WorkerID, _ queues: [LuaString]? = nil, at now: Int64 = 0) throws -> ClaimedJob? {
    try claim(worker: worker, queues: queues, lease: lease, at: at(now))
  }

  /// Completes `job` as succeeded with `output` at second `now`.
  func succeed(_ job: ClaimedJob, _ output: LuaValue = true, at now: Int64 = 0) throws {
    try complete(job: job.id, token: job.token, outcome: .succeeded(output: encoded(output)), at: at(now))
  }
}

/// What every queue store does, whatever keeps it: each test opens a
/// fixture of each kind (SQLiteQueueStoreTests, PostgresQueueStoreTests)
/// and runs these.
enum QueueStoreBehaviour {
  /// A job whose time, count or place someone else wrote out of range is
  /// refused in one line naming the job and the column, wherever it is read.
  static func aJobOutOfRangeIsRefusedInOneLine(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let first = try store.submit("q", at: 1)
    let waiting = try store.submit("q", at: 2)
    let running = try #require(try store.claim(alice, at: 3))
    #expect(running.id == first.id)
    // (column, bad value, good value, the job)
    var cases: [(String, String, String, JobID)] = []
    for value in extremes {
      cases += [
        ("enqueued_at", value, String(at(1).microseconds), first.id), ("started_at", value, String(at(3).microseconds), first.id),
        ("lease_expires_at", value, String(at(13).microseconds), first.id),
        ("finished_at", value, "NULL", first.id),
        ("enqueued_at", value, String(at(2).microseconds), waiting.id),
      ]
    }
    cases += [("attempts", "-1", "1", first.id), ("sequence", "0", "1", first.id), ("sequence", "-1", "2", waiting.id)]
    for (column, bad, good, job) in cases {
      try fixture.tamper("UPDATE job SET \(column) = \(bad) WHERE id = \(job.rawValue)")
      var reads: [(String, StoreError?)] = [
        ("job", refusal { try store.job(job) }), ("jobs", refusal { try store.jobs(queue: "q", limit: 10) }),
      ]
      if column == "enqueued_at" && job == waiting.id {
        // The oldest waiting job's time is in the queue's summary.
        reads.append(("queues", refusal { try store.queues() }))
      }
      for (read, error) in reads {
        let message = error?.message ?? "(read)"
        #expect(error?.kind == .badValue, "job.\(column) = \(bad), \(read): \(message)")
        let row = read == "queues" ? "queue \"q\"" : "job \(job)"
        #expect(message.contains("\(row) has a bad \(column): \(bad) ("), "\(read): \(message)")
        #expect(!message.contains("\n"), "\(message)")
      }
      try fixture.tamper("UPDATE job SET \(column) = \(good) WHERE id = \(job.rawValue)")
    }
    #expect(try store.jobs(queue: "q", limit: 10).count == 2)
  }

  static func jobsComeBackAsSubmitted(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let input = try LuaValueCodec.encode(everyKind)
    // Names are bytes: these two are the same text to Swift, not to Lua.
    let composed = LuaString("\u{E9}")
    let decomposed = LuaString("e\u{301}")
    let first = try store.enqueue(queue: composed, action: LuaString(bytes: [0x61, 0xFF]), input: input, policy: .stop, at: at(1))
    let other = try store.submit(decomposed, at: 2)
    let second = try store.submit(composed, at: 3)
    #expect([first.sequence, other.sequence, second.sequence] == [1, 1, 2])
    #expect(first.queue == composed && other.queue == decomposed)
    #expect(Set([first.id, other.id, second.id]).count == 3)

    let record = try #require(try store.job(first.id))
    #expect(record.queue == composed && record.sequence == 1 && record.action == LuaString(bytes: [0x61, 0xFF]))
    #expect(record.input == input && record.policy == .stop && record.status == .waiting && record.attempts == 0)
    #expect(record.worker == nil && record.claim == nil && record.enqueuedAt == at(1) && record.startedAt == nil)
    #expect(record.finishedAt == nil && record.output == nil && record.error == nil)
    #expect(try store.job(queue: composed, sequence: 2)?.id == second.id)
    #expect(try store.job(queue: decomposed, sequence: 2) == nil)
    #expect(try store.job(JobID(999)) == nil)
    #expect(try store.jobs(queue: composed, limit: 10).map(\.id) == [second.id, first.id])
    #expect(try store.jobs(queue: composed, limit: 1).map(\.id) == [second.id])

    let claimed = try #require(try store.claim(alice, [composed], at: 5))
    #expect(claimed.id == first.id && claimed.input == input && claimed.attempt == 1)
    #expect(claimed.leaseExpiresAt == at(15))
    try store.complete(job: claimed.id, token: claimed.token, outcome: .succeeded(output: input), at: at(6))
    let done = try #require(try store.job(first.id))
    #expect(done.status == .succeeded && done.output == input && done.error == nil && done.attempts == 1)
    #expect(done.worker == alice && done.claim == claimed.token && done.startedAt == at(5) && done.finishedAt == at(6))

    let running = try #require(try store.claim(bob, [composed], at: 7))
    let summaries = try store.queues()
    #expect(summaries.map(\.name) == [decomposed, composed])  // by bytes: "e" < 0xC3
    #expect(summaries.map(\.submitted) == [1, 2] && summaries.map(\.waiting) == [1, 0])
    #expect(summaries[1].running == running.id && summaries[1].runningWorker == bob && summaries[0].running == nil)
    #expect(summaries[0].oldestWaitingSince == at(2) && summaries[1].oldestWaitingSince == nil)
    #expect(summaries[1].runningLeaseExpiresAt == running.leaseExpiresAt && summaries[0].runningLeaseExpiresAt == nil)
    #expect(try store.heartbeat(job: running.id, token: running.token, lease: .seconds(20), at: at(9)) == at(29))
    #expect(try store.queues()[1].runningLeaseExpiresAt == at(29))
    #expect(summaries.allSatisfy { !$0.isHalted })
  }

  static func ordersAreStrictPerQueueWithSeveralClaimers(_ fixture: QueueFixture) throws {
    // Three workers, each on its own connection, claim in turn from three
    // queues; every claim must be a head: all earlier jobs of its queue
    // finished.
    let workers = try [fixture.store, fixture.reopen(), fixture.reopen()]
    let queues: [LuaString] = ["a", "b", "c"]
    var submitted: [JobID: EnqueuedJob] = [:]
    for index in 0..<12 {
      let job = try workers[index % 3].submit(queues[index % 3 == 2 ? 2 : index % 2], at: Int64(index))
      submitted[job.id] = job
    }
    var running: [ClaimedJob] = []
    var order: [LuaString: [Int64]] = [:]
    var random = SplitMix64(seed: 7)
    var turn = 0
    while order.values.map(\.count).reduce(0, +) < 12 {
      turn += 1
      let worker = Int(random.below(3))
      if random.below(2) == 0, let claimed = try workers[worker].claim(WorkerID("w\(worker)"), at: Int64(turn)) {
        #expect(!running.contains { $0.queue == claimed.queue }, "two jobs of \(claimed.queue) running at once")
        for earlier in 1..<claimed.sequence {
          let status = try #require(try workers[worker].job(queue: claimed.queue, sequence: earlier)?.status)
          #expect(status.isFinal, "job \(claimed.sequence) of \(claimed.queue) claimed while \(earlier) was \(status)")
        }
        order[claimed.queue, default: []].append(claimed.sequence)
        running.append(claimed)
      } else if !running.isEmpty {
        let done = running.remove(at: Int(random.below(running.count)))
        try workers[worker].succeed(done, at: Int64(turn))
      }
      #expect(turn < 1_000)
      if turn >= 1_000 { break }
    }
    for job in running { try fixture.store.succeed(job) }
    for (queue, sequences) in order { #expect(sequences == Array(1...Int64(sequences.count)), "\(queue)") }
    #expect(order.values.map(\.count).sorted() == [4, 4, 4])
    // The claims' tokens record the order each queue started its jobs in.
    for queue in queues {
      let tokens = try fixture.store.jobs(queue: queue, limit: 100).reversed().compactMap(\.claim)
      #expect(tokens.count == 4 && tokens == tokens.sorted())
    }
  }

  static func aClaimNeverReturnsTheNextJobWhileItsPredecessorWaitsOrRuns(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let first = try store.submit("a")
    let second = try store.submit("a")
    // Filtering by queue reaches no further than the head either.
    let claimed = try #require(try store.claim(alice, ["a"]))
    #expect(claimed.id == first.id)
    #expect(try store.claim(bob, ["a"]) == nil)
    #expect(try store.claim(bob) == nil)
    // Another queue runs in parallel.
    let elsewhere = try store.submit("b")
    #expect(try store.claim(bob)?.id == elsewhere.id)
    #expect(try store.claim(bob, ["a", "c"]) == nil)
    #expect(try store.claim(bob, []) == nil)
    try store.succeed(claimed)
    #expect(try store.claim(bob, ["c"]) == nil)
    #expect(try store.claim(bob, ["c", "a"])?.id == second.id)
  }

  static func aFailureUnderStopHaltsTheQueueUntilResumed(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let failing = try store.submit("a", policy: .stop)
    let next = try store.submit("a")
    let other = try store.submit("b")
    let claimed = try #require(try store.claim(alice, ["a"]))
    try store.complete(job: claimed.id, token: claimed.token, outcome: .failed(error: Array("boom\u{0}".utf8)), at: at(1))
    #expect(try store.job(failing.id)?.status == .failed)
    #expect(try store.job(failing.id)?.error == Array("boom\u{0}".utf8))
    #expect(try store.queues().map(\.haltedBy) == [failing.id, nil])
    #expect(try store.claim(bob, ["a"]) == nil)
    #expect(try store.claim(bob)?.id == other.id)
    #expect(try store.resume(queue: "a") == true)
    #expect(try store.resume(queue: "a") == false)
    #expect(try store.queues().map(\.isHalted) == [false, false])
    let resumed = try #require(try store.claim(bob, ["a"]))
    #expect(resumed.id == next.id)
    // Under `continue`, a failure lets the next job start.
    try store.complete(job: resumed.id, token: resumed.token, outcome: .failed(error: []), at: at(2))
    let last = try store.submit("a")
    #expect(try store.claim(alice, ["a"])?.id == last.id)
    let unknown = #expect(throws: StoreError.self) { try store.resume(queue: "none") }
    #expect(unknown?.kind == .noSuchQueue && unknown?.message == "no queue \"none\" in \(store.location)")
  }

  static func aJobCancelledBeforeItStartsNeverRuns(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let first = try store.submit("a")
    let cancelled = try store.submit("a")
    let third = try store.submit("a")
    try store.cancel(job: cancelled.id, at: at(1))
    let record = try #require(try store.job(cancelled.id))
    #expect(record.status == .cancelled && record.finishedAt == at(1) && record.attempts == 0)
    let running = try #require(try store.claim(alice))
    #expect(running.id == first.id)
    // A started job cannot be cancelled, nor a finished one; nothing changes.
    let started = #expect(throws: StoreError.self) { try store.cancel(job: first.id, at: at(2)) }
    #expect(started?.kind == .notWaiting)
    #expect(started?.message == "job \(first.id) (queue \"a\" #1) has started: only a job that has not started can be cancelled")
    #expect(try store.job(first.id)?.status == .running)
    let again = #expect(throws: StoreError.self) { try store.cancel(job: cancelled.id, at: at(2)) }
    #expect(again?.message == "job \(cancelled.id) (queue \"a\" #2) has already cancelled: only a job that has not started can be cancelled")
    try store.succeed(running)
    // The cancelled job is skipped: the one after it is the head.
    let next = try #require(try store.claim(alice))
    #expect(next.id == third.id)
    try store.succeed(next)
    #expect(try store.claim(alice) == nil)
    #expect(try store.job(cancelled.id)?.status == .cancelled && store.job(cancelled.id)?.worker == nil)
    // A cancelled head lets the job after it start.
    let head = try store.submit("b")
    let after = try store.submit("b")
    try store.cancel(job: head.id, at: at(3))
    #expect(try store.claim(bob)?.id == after.id)
    let missing = #expect(throws: StoreError.self) { try store.cancel(job: JobID(999), at: at(3)) }
    #expect(missing?.kind == .noSuchJob && missing?.message == "no job 999 in \(store.location)")
  }

  static func aLostWorkersJobIsClaimedAgainBeforeItsSuccessors(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let other = try fixture.reopen()
    let lost = try store.submit("a")
    let successor = try store.submit("a")
    let first = try #require(try store.claim(alice, at: 0))
    #expect(first.id == lost.id && first.attempt == 1)
    // Within the lease nobody else gets it, nor its successor.
    #expect(try other.claim(bob, at: 9) == nil)
    // A heartbeat at 8 s moves the lease's end to 18 s.
    #expect(try store.heartbeat(job: first.id, token: first.token, lease: lease, at: at(8)) == at(18))
    #expect(try other.claim(bob, at: 17) == nil)
    let second = try #require(try other.claim(bob, at: 18))
    #expect(second.id == lost.id && second.attempt == 2 && second.token > first.token)
    #expect(try store.job(lost.id)?.worker == bob && store.job(lost.id)?.attempts == 2)
    // The lost worker comes back: its heartbeat and completion are refused,
    // and the job is left as the new claim holds it.
    let beat = #expect(throws: StoreError.self) { try store.heartbeat(job: first.id, token: first.token, lease: lease, at: at(19)) }
    #expect(beat?.kind == .staleClaim)
    #expect(
      beat?.message
        == "job \(lost.id) (queue \"a\" #1) was claimed again (attempt 2) after the lease of claim \(first.token) expired: this heartbeat is refused")
    let late = #expect(throws: StoreError.self) { try store.succeed(first, "late", at: 19) }
    #expect(late?.kind == .staleClaim)
    #expect(
      late?.message
        == "job \(lost.id) (queue \"a\" #1) was claimed again (attempt 2) after the lease of claim \(first.token) expired: this completion is refused")
    let held = try #require(try store.job(lost.id))
    #expect(held.status == .running && held.output == nil && held.claim == second.token && held.leaseExpiresAt == at(28))
    try other.succeed(second, "on time", at: 20)
    #expect(try store.job(lost.id)?.output == encoded("on time"))
    // Completing twice is refused too, and changes nothing.
    let twice = #expect(throws: StoreError.self) { try other.succeed(second, "again", at: 21) }
    #expect(twice?.message == "job \(lost.id) (queue \"a\" #1) has already succeeded: this completion is refused")
    #expect(try store.job(lost.id)?.output == encoded("on time") && store.job(lost.id)?.finishedAt == at(20))
    let next = try #require(try store.claim(alice, at: 22))
    #expect(next.id == successor.id && next.attempt == 1)
    let missing = #expect(throws: StoreError.self) {
      try store.heartbeat(job: JobID(999), token: next.token, lease: lease, at: at(22))
    }
    #expect(missing?.kind == .noSuchJob)
  }

  static func aJobWhoseLeasesKeepExpiringIsAbandonedAndItsQueueGoesOn(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let other = try fixture.reopen()
    let poison = try store.submit("a", policy: .stop)
    let successor = try store.submit("a")
    // Claimed, then lost, twice: each later claim counts a lost lease.
    let first = try #require(try store.claim(worker: alice, queues: nil, lease: lease, lostLeaseLimit: 3, at: at(0)))
    let second = try #require(try other.claim(worker: bob, queues: nil, lease: lease, lostLeaseLimit: 3, at: at(10)))
    let third = try #require(try store.claim(worker: alice, queues: nil, lease: lease, lostLeaseLimit: 3, at: at(20)))
    #expect([first.id, second.id, third.id] == [poison.id, poison.id, poison.id])
    #expect(third.attempt == 3)
    // The third lease lost too: the next claim abandons the job, which
    // fails as a completion would (its policy halts the queue) and takes
    // nothing; resumed, the queue's next job is claimed.
    #expect(try other.claim(worker: bob, queues: nil, lease: lease, lostLeaseLimit: 3, at: at(30)) == nil)
    let abandoned = try #require(try store.job(poison.id))
    #expect(abandoned.status == .failed && abandoned.attempts == 3 && abandoned.finishedAt == at(30))
    #expect(abandoned.error == Array(QueueLimits.abandonment(lostLeases: 3).utf8))
    #expect(String(decoding: abandoned.error ?? [], as: UTF8.self).hasPrefix("abandoned after 3 lost leases: "))
    #expect(try store.queues().first?.haltedBy == poison.id)
    let late = #expect(throws: StoreError.self) { try store.succeed(third, at: 31) }
    #expect(late?.kind == .staleClaim)
    #expect(try store.resume(queue: "a"))
    let next = try #require(try other.claim(worker: bob, queues: nil, lease: lease, lostLeaseLimit: 3, at: at(31)))
    #expect(next.id == successor.id && next.attempt == 1)
    // A completion's claim abandons too, and a limit of 1 abandons a job
    // at its first lost lease; a finished job's lease never counts.
    let lone = try store.submit("b")
    try store.succeed(next, at: 32)
    let once = try #require(try store.claim(worker: alice, queues: ["b"], lease: lease, lostLeaseLimit: 1, at: at(32)))
    #expect(once.id == lone.id)
    let after = try store.submit("b")
    let other2 = try store.submit("c")
    let claimedC = try #require(try store.claim(worker: bob, queues: ["c"], lease: .seconds(100), at: at(33)))
    #expect(claimedC.id == other2.id)
    let taken = try store.complete(
      job: claimedC.id, token: claimedC.token, outcome: .succeeded(output: encoded()), at: at(43), thenClaimFor: bob,
      queues: nil, lease: lease, lostLeaseLimit: 1)
    #expect(taken?.id == after.id)
    #expect(try store.job(lone.id)?.status == .failed)
    #expect(try store.job(lone.id)?.error == Array(QueueLimits.abandonment(lostLeases: 1).utf8))
    let bad = #expect(throws: StoreError.self) {
      try store.claim(worker: alice, queues: nil, lease: lease, lostLeaseLimit: 0, at: at(50))
    }
    #expect(bad?.kind == .badValue && bad?.message == "the limit of lost leases must be at least 1, got 0")
  }

  static func aReleasedJobIsClaimedAgainAtOnceWithoutALostLease(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let other = try fixture.reopen()
    let job = try store.submit("a")
    let successor = try store.submit("a")
    // Released three times: never abandoned, each claim at once.
    for attempt in 1...3 {
      let claimed = try #require(try store.claim(worker: alice, queues: nil, lease: lease, lostLeaseLimit: 1, at: at(1)))
      #expect(claimed.id == job.id && claimed.attempt == attempt)
      try store.release(job: claimed.id, token: claimed.token, at: at(2))
      let record = try #require(try store.job(job.id))
      #expect(record.status == .waiting && record.leaseExpiresAt == nil && record.attempts == attempt)
      // Its worker's late calls are refused.
      let beat = #expect(throws: StoreError.self) { try store.heartbeat(job: job.id, token: claimed.token, lease: lease, at: at(2)) }
      #expect(beat?.kind == .staleClaim)
      let twice = #expect(throws: StoreError.self) { try store.release(job: job.id, token: claimed.token, at: at(2)) }
      #expect(twice?.message == "job \(job.id) (queue \"a\" #1) is not held by claim \(claimed.token): this release is refused")
      #expect(throws: StoreError.self) { try store.succeed(claimed, at: 2) }
    }
    let last = try #require(try other.claim(worker: bob, queues: nil, lease: lease, lostLeaseLimit: 1, at: at(3)))
    #expect(last.id == job.id && last.attempt == 4)
    try other.succeed(last, at: 4)
    #expect(try store.claim(alice, at: 5)?.id == successor.id)
    let missing = #expect(throws: StoreError.self) { try store.release(job: JobID(999), token: last.token, at: at(5)) }
    #expect(missing?.kind == .noSuchJob)
  }

  /// A run's private queue (`lunar run --processes`) is served only by a
  /// worker that names it: a claim of every queue passes over its waiting
  /// job and its job whose lease expired, and takes the others.
  static func aClaimOfEveryQueueNeverTakesAPrivateQueuesJob(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let privateQueue = LuaString(bytes: QueueLimits.privateQueuePrefix + Array("4711.9/1".utf8))
    let lost = try store.submit(privateQueue, at: 1)
    let waiting = try store.submit(privateQueue, at: 1)
    let mine = try store.submit("lunar.process", at: 1)
    let held = try #require(try store.claim(bob, [privateQueue], at: 2))
    #expect(held.id == lost.id)
    // Bob's lease ends at second 12: at 100 only a worker naming the queue takes it over.
    #expect(try store.claim(alice, at: 100)?.id == mine.id)
    #expect(try store.claim(alice, at: 100) == nil)
    let takenOver = try #require(try store.claim(alice, [privateQueue], at: 100))
    #expect(takenOver.id == lost.id && takenOver.attempt == 2)
    try store.succeed(takenOver, at: 101)
    #expect(try store.claim(alice, at: 102) == nil)
    #expect(try store.claim(alice, [privateQueue], at: 102)?.id == waiting.id)
  }

  static func aCompletionClaimsTheNextHeadInItsTransaction(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let other = try fixture.reopen()
    let first = try store.submit("a")
    let second = try store.submit("a")
    let elsewhere = try store.submit("b", policy: .stop)
    let claimed = try #require(try store.claim(alice, ["a"]))
    #expect(claimed.id == first.id)
    // The successor is the head once its predecessor is finished, within
    // the same transaction; it is running before anyone else looks.
    let next = try #require(
      try store.complete(
        job: claimed.id, token: claimed.token, outcome: .succeeded(output: encoded("one")), at: at(1),
        thenClaimFor: alice, queues: ["a"], lease: lease))
    #expect(next.id == second.id && next.attempt == 1 && next.token > claimed.token)
    #expect(next.leaseExpiresAt == at(11))
    #expect(try store.job(first.id)?.status == .succeeded && store.job(first.id)?.output == encoded("one"))
    #expect(try store.job(second.id)?.status == .running && store.job(second.id)?.worker == alice)
    #expect(try other.claim(bob, ["a"]) == nil)
    // A refused completion claims nothing and changes nothing.
    let stale = #expect(throws: StoreError.self) {
      try store.complete(
        job: claimed.id, token: claimed.token, outcome: .succeeded(output: encoded("again")), at: at(2),
        thenClaimFor: alice, queues: nil, lease: lease)
    }
    #expect(stale?.kind == .staleClaim)
    #expect(try store.job(elsewhere.id)?.status == .waiting)
    #expect(try store.job(first.id)?.output == encoded("one"))
    // A last job finds nothing after it in its queue; another queue's head
    // is taken when the claim may look there.
    #expect(
      try store.complete(
        job: next.id, token: next.token, outcome: .succeeded(output: encoded()), at: at(3), thenClaimFor: alice,
        queues: ["a"], lease: lease) == nil)
    try store.submit("b")
    let b = try #require(try store.claim(bob, ["b"]))
    // A failure under `stop` halts its queue before the claim looks at it.
    let after = try store.submit("a")
    #expect(
      try store.complete(
        job: b.id, token: b.token, outcome: .failed(error: Array("boom".utf8)), at: at(4), thenClaimFor: bob, queues: nil,
        lease: lease)?.id == after.id)
    #expect(try store.queues().map(\.haltedBy) == [nil, elsewhere.id])
  }

  static func workersRacingForOneHeadGetItOnce(_ fixture: QueueFixture) throws {
    let workers = try (0..<6).map { _ in try fixture.reopen() }
    for round in 0..<10 {
      let queue = LuaString("race\(round)")
      let head = try fixture.store.submit(queue)
      try fixture.store.submit(queue)
      let wins = Mutex<[JobID]>([])
      let failures = Mutex<[String]>([])
      DispatchQueue.concurrentPerform(iterations: workers.count) { index in
        do {
          if let job = try workers[index].claim(WorkerID("w\(index)"), [queue]) { wins.withLock { $0.append(job.id) } }
        } catch {
          failures.withLock { $0.append("\(error)") }
        }
      }
      #expect(failures.withLock { $0 } == [])
      // Exactly one wins: a worker may come away empty-handed while another
      // takes the head, never with the job after it.
      #expect(wins.withLock { $0 } == [head.id], "round \(round)")
    }
  }

  static func badRequestsAreRefusedInOneLine(_ fixture: QueueFixture) throws {
    let store = fixture.store
    let cases: [(String, () throws -> Void)] = [
      ("a queue name must not be empty", { try store.submit("") }),
      ("an action name must not be empty", { try store.submit("q", "") }),
      ("a queue name is at most 1000 bytes long, got 1001 bytes", { try store.submit(LuaString(String(repeating: "q", count: 1001))) }),
      (
        "a job's input is at most 16777216 bytes once encoded, got 16777217 bytes",
        { _ = try store.enqueue(queue: "q", action: "a", input: [UInt8](repeating: 0, count: 16_777_217), policy: .stop, at: at(0)) }
      ),
      ("a worker id must not be empty", { _ = try store.claim(WorkerID("")) }),
      ("a lease must be longer than 0 seconds and shorter than a year, got 0.0 seconds", {
        _ = try store.claim(worker: alice, queues: nil, lease: .zero, at: at(0))
      }),
      ("a limit must be positive, got 0", { _ = try store.jobs(queue: "q", limit: 0) }),
    ]
    for (message, call) in cases {
      let error = #expect(throws: StoreError.self) { try call() }
      #expect(error?.kind == .badValue && error?.message == message)
    }
    // Nothing was submitted.
    #expect(try store.queues().isEmpty)
    let job = try store.submit("q")
    let claimed = try #require(try store.claim(alice))
    let huge = #expect(throws: StoreError.self) {
      try store.complete(
        job: job.id, token: claimed.token, outcome: .failed(error: [UInt8](repeating: 1, count: 16_777_217)), at: at(1))
    }
    #expect(huge?.message == "a job's error is at most 16777216 bytes once encoded, got 16777217 bytes")
    #expect(try store.job(job.id)?.status == .running)
  }
}
