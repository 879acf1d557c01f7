import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// Submitted runs and schedules' ticks, the same on SQLite and PostgreSQL.
enum SchedulingBehaviour {
  static func submission(_ file: String = "flows/nightly.lua", key: String? = nil) throws -> RunSubmission {
    RunSubmission(
      file: file, arguments: ["--day", "b\u{FF}"], fileFingerprint: try Fingerprint(of: [.string(LuaString(file))]),
      key: key.map { LuaString($0) }, submittedAt: at(0))
  }

  static func submitAndClaim(_ store: any SchedulingStore) throws {
    let first = try store.submit(try submission())
    #expect(first.isNew && first.run.status == .queued && first.run.file == "flows/nightly.lua")
    #expect(first.run.arguments == ["--day", "b\u{FF}"] && first.run.workflow == LuaString("nightly"))
    #expect(try store.submittedRun(first.run.id) == first.with(isNew: false))
    let second = try store.submit(try submission("other.lua"))
    let claimed = try #require(try store.claimQueuedRun(host: "w1", pid: 42, lease: .seconds(10), at: at(5)))
    #expect(claimed.run.id == first.run.id && claimed.run.status == .running && claimed.run.host == "w1")
    #expect(claimed.run.pid == 42 && claimed.run.startedAt == at(5))
    #expect(claimed.fileFingerprint == first.fileFingerprint)
    #expect(try store.claimQueuedRun(host: "w2", pid: 43, lease: .seconds(10), at: at(6))?.run.id == second.run.id)
    #expect(try store.claimQueuedRun(host: "w3", pid: 44, lease: .seconds(10), at: at(7)) == nil)
  }

  /// A submission may resume a run and force steps of it to run again (the
  /// page's Resume and Rerun from here, `lunar submit --resume RUN --force
  /// STEP`): both are kept with the queued run for the worker; a run that is
  /// not there, or a forced step without a run to resume, is refused and
  /// queues nothing.
  static func aSubmissionResumesARunAndForcesSteps(_ store: any SchedulingStore) throws {
    let earlier = try store.beginRun(NewRun(workflow: "nightly", file: "flows/nightly.lua", startedAt: at(0), host: "h", pid: 1))
    try store.finishRun(earlier, status: .failed, at: at(1))
    var rerun = try submission()
    rerun.resumes = earlier
    rerun.force = [LuaString(bytes: [0x62, 0xFF]), "c"]
    let queued = try store.submit(rerun)
    #expect(queued.run.resumedFrom == earlier && queued.run.force == [LuaString(bytes: [0x62, 0xFF]), "c"])
    let claimed = try #require(try store.claimQueuedRun(host: "w", pid: 2, lease: .seconds(10), at: at(2)))
    #expect(claimed.run.id == queued.run.id && claimed.run.resumedFrom == earlier && claimed.run.force == rerun.force)
    var resume = try submission()
    resume.resumes = earlier
    #expect(try store.submit(resume).run.force == [])

    var missing = try submission()
    missing.resumes = RunID(9999)
    #expect(refusal { try store.submit(missing) }?.kind == .noSuchRun)
    var stepAlone = try submission()
    stepAlone.force = ["b"]
    #expect(refusal { try store.submit(stepAlone) }?.kind == .badValue)
    #expect(try store.runs(workflow: nil, limit: 10).count == 3)
  }

  static func sameKeySameRun(_ store: any SchedulingStore) throws {
    let first = try store.submit(try submission(key: "2026-12-02"))
    let again = try store.submit(try submission("changed.lua", key: "2026-12-02"))
    #expect(first.isNew && !again.isNew && again.run.id == first.run.id && again.run.file == "flows/nightly.lua")
    let other = try store.submit(try submission(key: "2026-12-03"))
    #expect(other.isNew && other.run.id != first.run.id)
  }

  static func schedule(_ name: LuaString, overlap: ScheduleOverlap) -> Schedule {
    Schedule(
      name: name, cron: "*/5 * * * *", timeZone: "Europe/London", overlap: overlap, catchupMicroseconds: 3_600_000_000,
      file: "flows/nightly.lua", arguments: ["a"], createdAt: at(0))
  }

  static func schedulesKept(_ store: any SchedulingStore) throws {
    let name = LuaString(bytes: [0x6E, 0xFF, 0x00, 0x31])
    try store.addSchedule(schedule(name, overlap: .queueOne))
    #expect(refusal { try store.addSchedule(schedule(name, overlap: .skip)) }?.kind == .duplicateSchedule)
    #expect(try store.schedule(named: name) == schedule(name, overlap: .queueOne))
    try store.setSchedule(name, paused: true, at: at(10))
    #expect(try store.schedule(named: name)?.isPaused == true)
    try store.setSchedule(name, paused: false, at: at(20))
    #expect(try store.schedule(named: name)?.isPaused == false && store.schedule(named: name)?.lastTick == at(20))
    #expect(try store.schedules().map(\.name) == [name])
    let missing = LuaString("missing")
    #expect(refusal { try store.setSchedule(missing, paused: true, at: at(0)) }?.kind == .noSuchSchedule)
    #expect(refusal { try store.removeSchedule(missing) }?.kind == .noSuchSchedule)
    try store.removeSchedule(name)
    #expect(try store.schedule(named: name) == nil)
  }

  /// `skip` starts nothing while a run of the schedule is unfinished,
  /// `queue-one` keeps one waiting, `allow` starts every tick; a tick
  /// decided twice starts one run.
  static func overlapPolicies(_ store: any SchedulingStore) throws {
    for (index, overlap) in ScheduleOverlap.allCases.enumerated() {
      let name = LuaString("s\(index)")
      try store.addSchedule(schedule(name, overlap: overlap))
      var outcomes = [try store.decideTick(at(300), of: name, submitting: try submission())]
      // The first run starts: it is running, no longer pending.
      let first = try #require(try store.claimQueuedRun(host: "w", pid: 1, lease: .seconds(10), at: at(301)))
      for minute in [10, 15] {
        outcomes.append(try store.decideTick(at(Int64(minute * 60)), of: name, submitting: try submission()))
      }
      #expect(try store.decideTick(at(300), of: name, submitting: try submission()) == .taken)
      let started = outcomes.filter { if case .started = $0 { true } else { false } }.count
      switch overlap {
      case .skip: #expect(started == 1 && outcomes.dropFirst().allSatisfy { $0 == .skipped })
      case .queueOne: #expect(started == 2 && outcomes.last == .skipped)
      case .allow: #expect(started == 3)
      }
      #expect(try store.schedule(named: name)?.lastTick == at(900))
      // A run that finished lets the next tick start.
      try store.finishRun(first.run.id, status: .succeeded, at: at(901))
      while let run = try store.claimQueuedRun(host: "w", pid: 1, lease: .seconds(10), at: at(901)) {
        try store.finishRun(run.run.id, status: .succeeded, at: at(902))
      }
      if case .started = try store.decideTick(at(1200), of: name, submitting: try submission()) {} else {
        Issue.record("\(overlap): the tick after the runs finished did not start")
      }
      while let run = try store.claimQueuedRun(host: "w", pid: 1, lease: .seconds(10), at: at(1201)) {
        try store.finishRun(run.run.id, status: .succeeded, at: at(1202))
      }
    }
  }

  /// A queued run of a `queue-one` schedule is not claimed while another
  /// run of that schedule runs.
  static func queueOneWaits(_ store: any SchedulingStore) throws {
    let name = LuaString("q")
    try store.addSchedule(schedule(name, overlap: .queueOne))
    _ = try store.decideTick(at(300), of: name, submitting: try submission())
    let first = try #require(try store.claimQueuedRun(host: "w", pid: 1, lease: .seconds(10), at: at(301)))
    _ = try store.decideTick(at(600), of: name, submitting: try submission())
    #expect(try store.claimQueuedRun(host: "w", pid: 1, lease: .seconds(10), at: at(601)) == nil)
    try store.finishRun(first.run.id, status: .failed, at: at(602))
    #expect(try store.claimQueuedRun(host: "w", pid: 1, lease: .seconds(10), at: at(603))?.schedule == name)
  }
}

extension SubmittedRun {
  func with(isNew: Bool) -> SubmittedRun {
    var copy = self
    copy.isNew = isNew
    return copy
  }
}

extension SchedulingBehaviour {
  /// A claim holds the run for the worker (a token and a lease); the
  /// process it hands the run to adopts it with that token only, once.
  static func aClaimIsHeldAndAdoptedOnce(_ store: any SchedulingStore) throws {
    let queued = try store.submit(try submission())
    let claimed = try #require(try store.claimQueuedRun(host: "w1", pid: 42, lease: .seconds(10), at: at(5)))
    #expect(claimed.run.ownerToken == ClaimToken(1) && claimed.run.leaseExpiresAt == at(15) && claimed.run.ownedSince == at(5))
    // Held: no other worker takes it over before its lease ends.
    #expect(try store.takeOverExpiredRun(host: "w2", pid: 43, lease: .seconds(10), at: at(14)) == nil)
    // A wrong token adopts nothing; the right one adopts it, names its workflow and plan.
    let adopt = { (token: Int64, time: Int64) throws -> RunLease? in
      try store.adopt(
        queued.run.id, from: ClaimToken(token), workflow: "nightly build",
        plan: try RunPlan(names: ["a", "b\u{FF}"], needs: [[], [0]]), host: "w1", pid: 50,
        lease: .seconds(10), at: at(time))
    }
    #expect(try adopt(2, 6) == nil)
    #expect(try adopt(1, 6) == RunLease(run: queued.run.id, token: ClaimToken(2), expiresAt: at(16)))
    // Once: the claim's token adopts it no more.
    #expect(try adopt(1, 7) == nil)
    let run = try #require(try store.run(queued.run.id))
    #expect(run.workflow == "nightly build" && Array(run.plan) == ["a", "b\u{FF}"] && run.pid == 50 && run.ownerToken == ClaimToken(2))
    #expect(run.plan.needs == [[], [0]])
    #expect(throws: StoreError.self) {
      try store.adopt(RunID(999), from: ClaimToken(1), workflow: "x", plan: [], host: "h", pid: 1, lease: .seconds(1), at: at(0))
    }
  }

  /// A submitted run whose owner's lease expired is taken over by one
  /// worker, with the next token; a run begun by `lunar run` is not.
  static func anExpiredSubmittedRunIsTakenOverOnce(_ store: any SchedulingStore) throws {
    let begun = try store.beginRun(NewRun(workflow: "terminal", file: "t.lua", startedAt: at(0), host: "h", pid: 1, lease: .seconds(1)))
    let queued = try store.submit(try submission())
    _ = try #require(try store.claimQueuedRun(host: "w1", pid: 42, lease: .seconds(10), at: at(5)))
    let adopted = try #require(
      try store.adopt(queued.run.id, from: ClaimToken(1), workflow: "nightly", plan: ["a"], host: "w1", pid: 50, lease: .seconds(10), at: at(6)))
    // A heartbeat at 10 holds it until 20.
    _ = try store.heartbeat(queued.run.id, owner: adopted.token, lease: .seconds(10), running: ["a"], at: at(10))
    #expect(try store.takeOverExpiredRun(host: "w2", pid: 43, lease: .seconds(10), at: at(19)) == nil)
    let taken = try #require(try store.takeOverExpiredRun(host: "w2", pid: 43, lease: .seconds(10), at: at(21)))
    #expect(taken.run.id == queued.run.id && taken.run.ownerToken == ClaimToken(3) && taken.run.host == "w2")
    #expect(taken.run.running == ["a"] && taken.fileFingerprint == queued.fileFingerprint)
    // Taken once: the next worker finds nothing, and the lost owner commits nothing.
    #expect(try store.takeOverExpiredRun(host: "w3", pid: 44, lease: .seconds(10), at: at(22)) == nil)
    #expect(throws: StoreError.self) {
      try store.recordSteps([StepRecord(name: "a", position: 0, status: .succeeded, output: [])], of: queued.run.id, owner: adopted.token)
    }
    // The terminal's run, long expired, is never a worker's.
    #expect(try store.run(begun)?.status == .running)
    #expect(try store.takeOverExpiredRun(host: "w3", pid: 44, lease: .seconds(10), at: at(1000))?.run.id == queued.run.id)
  }
}

extension SchedulingBehaviour {
  /// A parked run holds no lease; a worker takes it again once its wake-up
  /// time passed or a signal came after it parked, and not before.
  static func aParkedRunIsTakenWhenDue(_ store: any SchedulingStore) throws {
    let queued = try store.submit(try submission())
    _ = try #require(try store.claimQueuedRun(host: "w1", pid: 42, lease: .seconds(10), at: at(1)))
    let lease = try #require(
      try store.adopt(queued.run.id, from: ClaimToken(1), workflow: "nightly", plan: ["a"], host: "w1", pid: 50, lease: .seconds(10), at: at(2)))
    // Only the owner parks it.
    #expect(throws: StoreError.self) {
      try store.park(queued.run.id, owner: ClaimToken(1), wakeAt: at(100), awaiting: [], at: at(3))
    }
    try store.park(queued.run.id, owner: lease.token, wakeAt: at(100), awaiting: [], at: at(3))
    let parked = try #require(try store.run(queued.run.id))
    #expect(parked.status == .parked && parked.wakeAt == at(100) && parked.leaseExpiresAt == nil, "\(parked)")
    // Not due: not taken, not even as an expired lease.
    #expect(try store.claimDueParkedRun(host: "w2", pid: 43, lease: .seconds(10), at: at(99)) == nil)
    #expect(try store.takeOverExpiredRun(host: "w2", pid: 43, lease: .seconds(10), at: at(99)) == nil)
    let woken = try #require(try store.claimDueParkedRun(host: "w2", pid: 43, lease: .seconds(10), at: at(100)))
    #expect(woken.run.id == queued.run.id && woken.run.status == .running && woken.run.ownerToken == ClaimToken(3))
    #expect(woken.run.wakeAt == nil && woken.run.host == "w2")
    #expect(try store.claimDueParkedRun(host: "w3", pid: 44, lease: .seconds(10), at: at(200)) == nil)
  }

  /// A run parked for a signal wakes when that signal is there, even one
  /// sent before it parked that its wait had not seen yet; not for a signal
  /// nothing waits for, nor for one a wait already took.
  static func aSignalWakesAParkedRun(_ store: any SchedulingStore) throws {
    guard let waits = store as? any WaitStore else { throw StoreError(.database, "not a wait store") }
    let queued = try store.submit(try submission())
    _ = try #require(try store.claimQueuedRun(host: "w1", pid: 42, lease: .seconds(10), at: at(1)))
    var lease = try #require(
      try store.adopt(queued.run.id, from: ClaimToken(1), workflow: "nightly", plan: ["a"], host: "w1", pid: 50, lease: .seconds(10), at: at(2)))
    // "taken" was read by a wait that finished; "later" no wait reads yet.
    try waits.sendSignal("taken", value: .boolean(true), to: queued.run.id, at: at(3))
    try store.park(queued.run.id, owner: lease.token, wakeAt: nil, awaiting: ["approve"], at: at(6))
    try waits.sendSignal("later", value: .boolean(true), to: queued.run.id, at: at(7))
    #expect(try store.claimDueParkedRun(host: "w2", pid: 43, lease: .seconds(10), at: at(1000)) == nil)
    try waits.sendSignal("approve", value: .string("ada"), to: queued.run.id, at: at(1001))
    let woken = try #require(try store.claimDueParkedRun(host: "w2", pid: 43, lease: .seconds(10), at: at(1002)))
    #expect(woken.run.id == queued.run.id)
    // Parked again for "release", sent just before it parked: due at once.
    lease = try #require(
      try store.adopt(queued.run.id, from: woken.run.ownerToken, workflow: "nightly", plan: ["a"], host: "w2", pid: 51, lease: .seconds(10), at: at(1003)))
    try waits.sendSignal("release", value: .boolean(true), to: queued.run.id, at: at(1004))
    try store.park(queued.run.id, owner: lease.token, wakeAt: nil, awaiting: ["release", "release"], at: at(1005))
    #expect(try store.claimDueParkedRun(host: "w3", pid: 44, lease: .seconds(10), at: at(1006))?.run.id == queued.run.id)
  }

  /// Cancelling a queued or parked run cancels it at once: no process has it.
  static func aQueuedOrParkedRunIsCancelledAtOnce(_ store: any SchedulingStore) throws {
    let queued = try store.submit(try submission())
    #expect(try store.requestCancel(queued.run.id, by: "request", at: at(1)) == .cancelledNow)
    #expect(try store.run(queued.run.id)?.status == .cancelled)
    #expect(try store.claimQueuedRun(host: "w", pid: 1, lease: .seconds(10), at: at(2)) == nil)
  }
}

@Suite struct SQLiteSubmittedRunTests {
  func with(_ body: (any SchedulingStore) throws -> Void) throws {
    let fixture = try StoreFixture.sqlite()
    try body(try #require(fixture.store as? any SchedulingStore))
    withExtendedLifetime(fixture) {}
  }

  @Test func submitAndClaim() throws { try with(SchedulingBehaviour.submitAndClaim) }
  @Test func sameKeySameRun() throws { try with(SchedulingBehaviour.sameKeySameRun) }
  @Test func aSubmissionResumesARunAndForcesSteps() throws { try with(SchedulingBehaviour.aSubmissionResumesARunAndForcesSteps) }
  @Test func schedulesKept() throws { try with(SchedulingBehaviour.schedulesKept) }
  @Test func overlapPolicies() throws { try with(SchedulingBehaviour.overlapPolicies) }
  @Test func queueOneWaits() throws { try with(SchedulingBehaviour.queueOneWaits) }
  @Test func aClaimIsHeldAndAdoptedOnce() throws { try with(SchedulingBehaviour.aClaimIsHeldAndAdoptedOnce) }
  @Test func anExpiredSubmittedRunIsTakenOverOnce() throws { try with(SchedulingBehaviour.anExpiredSubmittedRunIsTakenOverOnce) }
  @Test func aParkedRunIsTakenWhenDue() throws { try with(SchedulingBehaviour.aParkedRunIsTakenWhenDue) }
  @Test func aSignalWakesAParkedRun() throws { try with(SchedulingBehaviour.aSignalWakesAParkedRun) }
  @Test func aQueuedOrParkedRunIsCancelledAtOnce() throws { try with(SchedulingBehaviour.aQueuedOrParkedRunIsCancelledAtOnce) }
}

@Suite(.enabled(if: TestPostgresSchema.isAvailable, "needs LUNAR_TEST_POSTGRES: run scripts/test, which starts a server"))
struct PostgresSubmittedRunTests {
  func with(_ body: (any SchedulingStore) throws -> Void) throws {
    let fixture = try StoreFixture.postgres()
    try body(try #require(fixture.store as? any SchedulingStore))
    withExtendedLifetime(fixture) {}
  }

  @Test func submitAndClaim() throws { try with(SchedulingBehaviour.submitAndClaim) }
  @Test func sameKeySameRun() throws { try with(SchedulingBehaviour.sameKeySameRun) }
  @Test func aSubmissionResumesARunAndForcesSteps() throws { try with(SchedulingBehaviour.aSubmissionResumesARunAndForcesSteps) }
  @Test func schedulesKept() throws { try with(SchedulingBehaviour.schedulesKept) }
  @Test func overlapPolicies() throws { try with(SchedulingBehaviour.overlapPolicies) }
  @Test func queueOneWaits() throws { try with(SchedulingBehaviour.queueOneWaits) }
  @Test func aClaimIsHeldAndAdoptedOnce() throws { try with(SchedulingBehaviour.aClaimIsHeldAndAdoptedOnce) }
  @Test func anExpiredSubmittedRunIsTakenOverOnce() throws { try with(SchedulingBehaviour.anExpiredSubmittedRunIsTakenOverOnce) }
  @Test func aParkedRunIsTakenWhenDue() throws { try with(SchedulingBehaviour.aParkedRunIsTakenWhenDue) }
  @Test func aSignalWakesAParkedRun() throws { try with(SchedulingBehaviour.aSignalWakesAParkedRun) }
  @Test func aQueuedOrParkedRunIsCancelledAtOnce() throws { try with(SchedulingBehaviour.aQueuedOrParkedRunIsCancelledAtOnce) }
}
