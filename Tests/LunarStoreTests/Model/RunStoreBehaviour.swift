import Foundation
import LuaKit
import Testing
import TestSupport

@testable import LunarStore

/// An open store of either kind, what keeps it (its folder or schema), and
/// how to open it again (a second connection, or after a restart).
struct StoreFixture {
  let store: any RunStore
  let reopen: () throws -> any RunStore
  let keeps: AnyObject
  /// Runs SQL on the store behind its back, as sqlite3 or psql would.
  let tamper: (String) throws -> Void
  /// The SQL literal of a blob (`bytea`) whose bytes are `hex`.
  let blob: (_ hex: String) -> String

  /// A SQLite store in a fresh folder, removed with it.
  static func sqlite() throws -> StoreFixture {
    let folder = try TemporaryFolder()
    let path = folder.url.appendingPathComponent("runs.db").path
    return StoreFixture(
      store: try SQLiteRunStore(path: path), reopen: { try SQLiteRunStore(path: path) }, keeps: folder,
      tamper: { sql in try SQLiteDatabase(path: path).execute(sql) }, blob: { "x'\($0)'" })
  }

  /// A PostgreSQL store in a fresh schema of the test server, dropped with it.
  static func postgres() throws -> StoreFixture {
    let schema = try TestPostgresSchema()
    let location = StoreLocation(.postgres(url: schema.url))
    return StoreFixture(
      store: try location.openRunStore(), reopen: { try location.openRunStore() }, keeps: schema,
      tamper: { sql in try schema.query(sql) }, blob: { "'\\x\($0)'::bytea" })
  }
}

/// The store's refusal of `body`, if it refused it (any other error is
/// recorded as an issue).
func refusal<T>(_ body: () throws -> T) -> StoreError? {
  do {
    _ = try body()
    return nil
  } catch let error as StoreError {
    return error
  } catch {
    Issue.record("not a store error: \(error)")
    return nil
  }
}

/// `bytes` as hexadecimal digits, for `StoreFixture.blob`.
func hex(_ bytes: [UInt8]) -> String {
  bytes.map { String(format: "%02x", $0) }.joined()
}

/// The extremes of a 64-bit integer, in SQL.
let extremes = ["-9223372036854775808", "9223372036854775807"]

func at(_ seconds: Int64) -> StoreTimestamp { StoreTimestamp(microseconds: 1_700_000_000_000_000 + seconds * 1_000_000) }

/// Values of every kind, as a step might return them.
let everyKind: [LuaValue] = [
  .table(
    LuaTable(
      array: [.string(LuaString(bytes: [0, 0xFF, 0xFE])), .integer(Int64.min), .number(-0.0)],
      fields: [
        .integer(10): .number(.infinity), .boolean(true): .number(Double(bitPattern: 0x7FF8_0000_0000_BEEF)),
        .number(2.5): .table(LuaTable(array: ["nested"])), "name": .boolean(false),
      ])),
  .nil,
]

/// What every run store does, whatever keeps it: each test opens a fixture
/// of each kind (SQLiteRunStoreTests, PostgresRunStoreTests) and runs these.
enum RunStoreBehaviour {
  static func aStepsDurableJobIsKeptForAResume(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let run = try store.beginRun(NewRun(workflow: "deploy", file: "deploy.lua", arguments: [], startedAt: at(0), host: "h", pid: 1))
    let other = try store.beginRun(NewRun(workflow: "deploy", file: "deploy.lua", arguments: [], startedAt: at(1), host: "h", pid: 1))
    let fingerprint = try Fingerprint(of: ["square", 1])
    let name = LuaString(bytes: [0x70, 0xFF])
    try store.recordStepJob(StepJob(name: name, attempt: 1, job: JobID(7), fingerprint: fingerprint), of: run)
    try store.recordStepJob(StepJob(name: "other", attempt: 2, job: JobID(8), fingerprint: nil), of: run)
    // A later attempt's job replaces the step's earlier one.
    try store.recordStepJob(StepJob(name: name, attempt: 2, job: JobID(9), fingerprint: fingerprint), of: run)
    #expect(try fixture.reopen().stepJobs(of: run) == [
      StepJob(name: "other", attempt: 2, job: JobID(8), fingerprint: nil),
      StepJob(name: name, attempt: 2, job: JobID(9), fingerprint: fingerprint),
    ])
    #expect(try store.stepJobs(of: other) == [])
    let missing = #expect(throws: StoreError.self) {
      try store.recordStepJob(StepJob(name: name, attempt: 1, job: JobID(1), fingerprint: nil), of: RunID(999))
    }
    #expect(missing?.kind == .noSuchRun && missing?.message == "no run 999 in \(store.location)")
  }

  /// A run or step whose time, count or process id someone else wrote out
  /// of range is refused in one line naming the row and the column.
  /// A run's plan keeps what each step needs, byte-named steps and all; a
  /// run begun without needs reads back as not recorded; a needs column
  /// that does not fit the plan is refused in one line that names the run.
  static func aRunsPlanKeepsWhatEachStepNeeds(_ fixture: StoreFixture) throws {
    let store = fixture.store
    var new = NewRun(workflow: "w", file: "w.lua", startedAt: at(0), host: "h", pid: 1)
    // A need on a later step is kept too: declaration order is not dependency order.
    new.plan = try RunPlan(names: ["fetch", LuaString(bytes: [0xFF]), "report"], needs: [[], [0, 2], []])
    let run = try store.beginRun(new)
    let read = try #require(try fixture.reopen().run(run))
    #expect(read.plan == new.plan && read.plan.needs == [[], [0, 2], []])
    #expect(try store.runs(workflow: nil, limit: 1).first?.run.plan.needs == [[], [0, 2], []])

    var older = NewRun(workflow: "w", file: "w.lua", startedAt: at(1), host: "h", pid: 1)
    older.plan = ["a", "b"]
    let unknown = try store.beginRun(older)
    #expect(try store.run(unknown)?.plan.needs == nil)
    #expect(try store.run(unknown).map { Array($0.plan) } == ["a", "b"])

    for bad in ["00", "0102"] {
      // NULL-free, but not a list of position lists for the plan's 3 steps.
      try fixture.tamper("UPDATE run SET plan_needs = \(fixture.blob(bad)) WHERE id = \(run.rawValue)")
      let error = refusal { try store.run(run) }
      #expect(error?.kind == .badValue && error?.message.contains("plan of run \(run)") == true, "\(error?.message ?? "read")")
      #expect(error?.message.contains("\n") == false)
    }
    let wrongCount = try LuaValueCodec.encode([.table(LuaTable(array: []))], root: "plan_needs")
    try fixture.tamper("UPDATE run SET plan_needs = \(fixture.blob(hex(wrongCount))) WHERE id = \(run.rawValue)")
    #expect(refusal { try store.run(run) }?.message.contains("needs for 1") == true)
    let itself = try LuaValueCodec.encode(
      [.table(LuaTable(array: [])), .table(LuaTable(array: [.integer(1)])), .table(LuaTable(array: []))], root: "plan_needs")
    try fixture.tamper("UPDATE run SET plan_needs = \(fixture.blob(hex(itself))) WHERE id = \(run.rawValue)")
    #expect(refusal { try store.run(run) }?.message.contains("not another step") == true)
  }

  /// Workers announce themselves, each record replacing the last; a
  /// stopped one is withdrawn; one lost for a day is forgotten at the next
  /// announce; a bad row is refused in one line that names the worker.
  static func workersAreListedAsTheyLastAnnouncedThemselves(_ fixture: StoreFixture) throws {
    let store = try #require(fixture.store as? any WorkerStore)
    func presence(_ name: String, seen: Int64, serves: String = "runs (1 at once)") -> WorkerPresence {
      WorkerPresence(
        worker: WorkerID(name), host: "h", pid: 7, serves: serves, startedAt: at(0), seenAt: at(seen), expiresAt: at(seen + 10))
    }
    try store.announce(presence("b:2", seen: 1))
    try store.announce(presence("a:1", seen: 2))
    try store.announce(presence("b:2", seen: 5, serves: "queues: every queue (w.lua)"))
    let reopened = try #require(try fixture.reopen() as? any WorkerStore)
    #expect(try reopened.workers() == [presence("a:1", seen: 2), presence("b:2", seen: 5, serves: "queues: every queue (w.lua)")])
    #expect(try reopened.workers().first?.isLost(at: at(12)) == true && reopened.workers().first?.isLost(at: at(11)) == false)
    try store.withdraw(WorkerID("a:1"))
    try store.withdraw(WorkerID("never:0"))
    #expect(try store.workers().map(\.worker) == [WorkerID("b:2")])
    // b:2's lease ended at 15; a day and more later it is forgotten.
    try store.announce(presence("c:3", seen: 15 + 24 * 3600 + 1))
    #expect(try store.workers().map(\.worker) == [WorkerID("c:3")])
    try fixture.tamper("UPDATE worker SET pid = -1")
    let error = refusal { try store.workers() }
    #expect(error?.kind == .badValue && error?.message.contains("worker c:3") == true && error?.message.contains("\n") == false)
  }

  /// A commit of another connection (another process) is a change the
  /// store tells of: a run begun, a step recorded, a row changed by hand;
  /// with none, a wait times out.
  static func anotherConnectionsCommitIsAChange(_ fixture: StoreFixture) throws {
    let watching = try #require(fixture.store as? any ChangeFeedStore)
    #expect(try watching.waitForChange(timeout: .milliseconds(50)) == false)
    let other = try fixture.reopen()
    let run = try other.beginRun(NewRun(workflow: "w", file: "w.lua", startedAt: at(0), host: "h", pid: 1))
    #expect(try watching.waitForChange(timeout: .seconds(10)))
    // Told once: nothing changed since.
    #expect(try watching.waitForChange(timeout: .milliseconds(100)) == false)
    try other.recordSteps([StepRecord(name: "s", position: 0, status: .succeeded)], of: run)
    #expect(try watching.waitForChange(timeout: .seconds(10)))
    // Any writer's commit, Lunar's or not (sqlite3, psql).
    try fixture.tamper("UPDATE run SET file = 'moved.lua'")
    #expect(try watching.waitForChange(timeout: .seconds(10)))
  }

  static func aRowOutOfRangeIsRefusedInOneLine(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let run = try store.beginRun(NewRun(workflow: "w", file: "w.lua", arguments: [], startedAt: at(0), host: "h", pid: 42))
    try store.recordSteps([StepRecord(name: "s", position: 0, status: .succeeded, startedAt: at(1), finishedAt: at(2))], of: run)
    try store.finishRun(run, status: .succeeded, at: at(3))
    let original = ["started_at": at(0), "finished_at": at(3)].mapValues { String($0.microseconds) }
    let stepOriginal = ["started_at": at(1), "finished_at": at(2)].mapValues { String($0.microseconds) }
    // (table, column, bad value, good value, the row as messages name it)
    var cases: [(String, String, String, String, String)] = []
    for column in ["started_at", "finished_at"] {
      for value in extremes {
        cases.append(("run", column, value, original[column]!, "run \(run)"))
        cases.append(("step", column, value, stepOriginal[column]!, "step \"s\" of run \(run)"))
      }
    }
    cases += [
      ("run", "pid", "-1", "42", "run \(run)"), ("step", "attempts", "-1", "1", "step \"s\" of run \(run)"),
      ("step", "position", "-1", "0", "step \"s\" of run \(run)"),
    ]
    for (table, column, bad, good, row) in cases {
      try fixture.tamper("UPDATE \(table) SET \(column) = \(bad)")
      let reads: [(String, StoreError?)] =
        table == "run"
        ? [
          ("run", refusal { try store.run(run) }), ("runs", refusal { try store.runs(workflow: nil, limit: 5) }),
          ("lastRun", refusal { try store.lastRun(workflow: nil, file: nil) }),
        ]
        : [("steps", refusal { try store.steps(of: run) })]
      for (read, error) in reads {
        let message = error?.message ?? "(read)"
        #expect(error?.kind == .badValue, "\(table).\(column) = \(bad), \(read): \(message)")
        #expect(message.contains("\(row) has a bad \(column): \(bad) ("), "\(read): \(message)")
        #expect(!message.contains("\n"), "\(message)")
      }
      try fixture.tamper("UPDATE \(table) SET \(column) = \(good)")
    }
    // Restored, every row reads again.
    #expect(try store.steps(of: run).count == 1)
    #expect(try store.run(run)?.pid == 42)
  }

  static func stepsComeBackAsRecorded(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let run = try store.beginRun(
      NewRun(workflow: "deploy", file: "deploy.lua", arguments: ["--env", "prod"], startedAt: at(0), host: "h", pid: 42))
    let fingerprint = try Fingerprint(of: ["uses", everyKind[0]])
    try store.recordSteps(
      [
        StepRecord(
          name: "build", position: 0, status: .succeeded, attempts: 2, startedAt: at(1), finishedAt: at(2),
          fingerprint: fingerprint, output: everyKind),
        StepRecord(name: "notify", position: 2, status: .succeeded, startedAt: at(3), finishedAt: at(3), output: []),
        StepRecord(
          name: LuaString(bytes: [0x74, 0xFF]), position: 1, status: .failed, attempts: 3, startedAt: at(2),
          finishedAt: at(4), error: LuaString(bytes: Array("test.lua:3: boom \u{1}".utf8) + [0xFE])),
      ], of: run)
    try store.recordSteps([StepRecord(name: "skipped", position: 3, status: .skipped, attempts: 0)], of: run)
    try store.finishRun(run, status: .failed, at: at(5))

    let steps = try store.steps(of: run)
    #expect(steps.map(\.name) == ["build", LuaString(bytes: [0x74, 0xFF]), "notify", "skipped"])
    #expect(steps.map(\.status) == [.succeeded, .failed, .succeeded, .skipped])
    #expect(steps.map(\.attempts) == [2, 3, 1, 0])
    #expect(try steps[0].output.map { try LuaValueCodec.encode($0) } == LuaValueCodec.encode(everyKind))
    #expect(steps[0].fingerprint == fingerprint && steps[1].fingerprint == nil)
    #expect(steps[0].startedAt == at(1) && steps[0].finishedAt == at(2) && steps[3].startedAt == nil)
    #expect(steps[1].output == nil && steps[1].error == LuaString(bytes: Array("test.lua:3: boom \u{1}".utf8) + [0xFE]))
    // A step that returned nothing is recorded as done, with no values; not as nil.
    #expect(steps[2].output == [] && steps[3].output == nil)

    let record = try #require(try store.run(run))
    #expect(record.workflow == "deploy" && record.file == "deploy.lua" && record.arguments == ["--env", "prod"])
    #expect(record.status == .failed && record.startedAt == at(0) && record.finishedAt == at(5))
    #expect(record.host == "h" && record.pid == 42 && record.resumedFrom == nil)
  }

  static func aRetryReplacesTheStepsEarlierRecord(_ fixture: StoreFixture) throws {
    let run = try fixture.store.beginRun(NewRun(workflow: "w", file: "w.lua"))
    try fixture.store.recordSteps([StepRecord(name: "a", position: 0, status: .failed, error: "first")], of: run)
    try fixture.store.recordSteps([StepRecord(name: "a", position: 0, status: .succeeded, attempts: 2, output: [1])], of: run)
    let steps = try fixture.store.steps(of: run)
    #expect(steps.count == 1)
    #expect(steps[0].status == .succeeded && steps[0].attempts == 2 && steps[0].error == nil && steps[0].output == [1])
  }

  static func aBatchIsRecordedWholeOrNotAtAll(_ fixture: StoreFixture) throws {
    let run = try fixture.store.beginRun(NewRun(workflow: "w", file: "w.lua"))
    var deep = LuaValue.table(LuaTable())
    for _ in 0..<LuaValueCodec.maximumDepth { deep = .table(LuaTable(array: [deep])) }
    let error = #expect(throws: StoreError.self) {
      try fixture.store.recordSteps(
        [StepRecord(name: "fine", position: 0, status: .succeeded, output: [1]),
         StepRecord(name: "deep", position: 1, status: .succeeded, output: [deep])], of: run)
    }
    #expect(error?.kind == .badValue)
    #expect(
      error?.message
        == "step \"deep\": output[1]\(String(repeating: "[1]", count: 200)): tables nested deeper than 200 levels cannot be stored")
    #expect(try fixture.store.steps(of: run).isEmpty)
    let missing = #expect(throws: StoreError.self) {
      try fixture.store.recordSteps([StepRecord(name: "a", position: 0, status: .succeeded)], of: RunID(99))
    }
    #expect(missing?.kind == .noSuchRun)
    #expect(missing?.message == "no run 99 in \(fixture.store.location)")
  }

  static func runsAreFoundByTheBytesOfTheirWorkflowsName(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let composed = try store.beginRun(NewRun(workflow: "\u{E9}", file: "a.lua"))
    let decomposed = try store.beginRun(NewRun(workflow: "e\u{301}", file: "a.lua"))
    let otherFile = try store.beginRun(NewRun(workflow: "\u{E9}", file: "b.lua"))
    #expect(try store.lastRun(workflow: "\u{E9}", file: nil)?.id == otherFile)
    #expect(try store.lastRun(workflow: "\u{E9}", file: "a.lua")?.id == composed)
    #expect(try store.lastRun(workflow: "e\u{301}", file: nil)?.id == decomposed)
    #expect(try store.lastRun(workflow: nil, file: nil)?.id == otherFile)
    #expect(try store.lastRun(workflow: "nothing", file: nil) == nil)
    #expect(try store.runs(workflow: "e\u{301}", limit: 10).map(\.run.id) == [decomposed])
  }

  static func runsAreListedNewestFirstWithTheirStepCounts(_ fixture: StoreFixture) throws {
    let store = fixture.store
    var ids: [RunID] = []
    for index in 0..<4 {
      let run = try store.beginRun(NewRun(workflow: index == 2 ? "other" : "main", file: "m.lua"))
      let statuses: [StepStatus] = Array([.succeeded, .succeeded, .failed, .skipped, .reused, .reused, .reused].prefix(index * 2 + 1))
      try store.recordSteps(
        statuses.enumerated().map { StepRecord(name: LuaString("s\($0.offset)"), position: $0.offset, status: $0.element) },
        of: run)
      ids.append(run)
    }
    try store.finishRun(ids[3], status: .succeeded, at: .now)
    let all = try store.runs(workflow: nil, limit: 10)
    #expect(all.map(\.run.id) == ids.reversed())
    #expect(all[0].run.status == .succeeded && all[1].run.status == .running)
    #expect(all.map { [$0.succeeded, $0.failed, $0.skipped, $0.reused] } == [[2, 1, 1, 3], [2, 1, 1, 1], [2, 1, 0, 0], [1, 0, 0, 0]])
    #expect(try store.runs(workflow: "main", limit: 2).map(\.run.id) == [ids[3], ids[1]])
    #expect(try store.runs(workflow: "none", limit: 2).isEmpty)
  }

  static func runsAreFilteredByStatusTimeAndPagedOn(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let at = { (seconds: Int64) in StoreTimestamp(microseconds: 1_800_000_000_000_000 + seconds * 1_000_000) }
    var ids: [RunID] = []
    for index in 0..<6 {
      let run = try store.beginRun(NewRun(workflow: index % 2 == 0 ? "even" : "odd", file: "m.lua", startedAt: at(Int64(index) * 10)))
      if index % 3 == 0 { try store.finishRun(run, status: .failed, at: at(Int64(index) * 10 + 1)) }
      ids.append(run)
    }
    func listed(_ filter: RunFilter, limit: Int = 10) throws -> [RunID] { try store.runs(filter, limit: limit).map(\.run.id) }
    #expect(try listed(RunFilter(status: .failed)) == [ids[3], ids[0]])
    #expect(try listed(RunFilter(status: .running)) == [ids[5], ids[4], ids[2], ids[1]])
    #expect(try listed(RunFilter(startedSince: at(30))) == [ids[5], ids[4], ids[3]])
    #expect(try listed(RunFilter(before: ids[2])) == [ids[1], ids[0]])
    #expect(try listed(RunFilter(before: ids[4]), limit: 2) == [ids[3], ids[2]])
    #expect(try listed(RunFilter(workflow: "even", status: .running, startedSince: at(10), before: ids[5])) == [ids[4], ids[2]])
    #expect(try listed(RunFilter(status: .succeeded)).isEmpty)
  }

  static func lastOrAnIdResolvesToARun(_ fixture: StoreFixture) throws {
    let store = fixture.store
    #expect(try RunReference(parsing: "last") == .last)
    #expect(try RunReference(parsing: "12") == .id(RunID(12)))
    for bad in ["", "0", "-1", "+3", "1.5", "latest", "９"] {
      let error = #expect(throws: StoreError.self) { try RunReference(parsing: bad) }
      #expect(error?.message == "a run is 'last' or a run id (a positive number), got '\(bad)'")
    }
    let none = #expect(throws: StoreError.self) { try store.resolve(.last) }
    #expect(none?.message == "no runs in \(fixture.store.location)")
    let first = try store.beginRun(NewRun(workflow: "a", file: "a.lua"))
    let second = try store.beginRun(NewRun(workflow: "b", file: "b.lua", resumedFrom: first))
    #expect(try store.resolve(.last).id == second)
    #expect(try store.resolve(.last).resumedFrom == first)
    #expect(try store.resolve(.last, workflow: "a").id == first)
    #expect(try store.resolve(.id(first)).workflow == "a")
    let missing = #expect(throws: StoreError.self) { try store.resolve(.id(RunID(7))) }
    #expect(missing?.message == "no run 7 in \(fixture.store.location)")
    let noneOfThat = #expect(throws: StoreError.self) { try store.resolve(.last, workflow: "c") }
    #expect(noneOfThat?.message == "no runs of workflow 'c' in \(fixture.store.location)")
  }

  static func aCommitIsSeenByAnotherConnectionAndAfterReopening(_ fixture: StoreFixture) throws {
    let other = try fixture.reopen()
    let run = try fixture.store.beginRun(NewRun(workflow: "w", file: "w.lua"))
    try fixture.store.recordSteps([StepRecord(name: "a", position: 0, status: .succeeded, output: everyKind)], of: run)
    #expect(try other.steps(of: run).map(\.name) == ["a"])
    let reopened = try fixture.reopen()
    #expect(try reopened.steps(of: run).first?.output.map { try LuaValueCodec.encode($0) } == LuaValueCodec.encode(everyKind))
  }
}

extension RunStoreBehaviour {
  /// Step logs come back byte for byte, by run, step (its bytes) and
  /// attempt, in the order stored, from a given chunk on; a batch with a
  /// bad step keeps none of its logs.
  static func stepLogsComeBackAsStored(_ fixture: StoreFixture) throws {
    let store = fixture.store
    let run = try store.beginRun(NewRun(workflow: "w", file: "w.lua"))
    let other = try store.beginRun(NewRun(workflow: "w", file: "w.lua"))
    let name = LuaString(bytes: [0x73, 0xFF])
    func chunk(_ step: LuaString, _ attempt: Int, _ sequence: Int, _ stream: StepLogStream, _ bytes: [UInt8]) -> StepLogChunk {
      StepLogChunk(step: step, position: step == name ? 1 : 0, attempt: attempt, sequence: sequence, stream: stream, bytes: bytes)
    }
    let first = [chunk("a", 1, 1, .standardOutput, [0, 0xFF, 0x0A]), chunk(name, 1, 1, .standardError, Array("e\n".utf8))]
    try store.recordSteps([], logs: first, of: run)
    try store.recordSteps(
      [StepRecord(name: "a", position: 0, status: .succeeded, output: [])], logs: [chunk("a", 2, 1, .standardOutput, [1])], of: run)
    try store.recordSteps([], logs: [chunk("a", 1, 1, .standardOutput, [9])], of: other)
    let all = try fixture.reopen().stepLogs(of: run, step: nil, attempt: nil, after: 0)
    #expect(all.map { [$0.step, LuaString(bytes: $0.bytes)] } == [["a", LuaString(bytes: [0, 0xFF, 0x0A])], [name, "e\n"], ["a", LuaString(bytes: [1])]])
    #expect(all.map(\.stream) == [.standardOutput, .standardError, .standardOutput])
    #expect(all.map(\.attempt) == [1, 1, 2])
    #expect(try store.stepLogs(of: run, step: name, attempt: nil, after: 0).map(\.bytes) == [Array("e\n".utf8)])
    #expect(try store.stepLogs(of: run, step: "a", attempt: 2, after: 0).map(\.bytes) == [[1]])
    #expect(try store.stepLogs(of: run, step: nil, attempt: nil, after: all[0].id).map(\.id) == all.dropFirst().map(\.id))
    #expect(try store.stepLogs(of: other, step: nil, attempt: nil, after: 0).map(\.bytes) == [[9]])

    var deep = LuaValue.table(LuaTable())
    for _ in 0..<LuaValueCodec.maximumDepth { deep = .table(LuaTable(array: [deep])) }
    #expect(throws: StoreError.self) {
      try store.recordSteps(
        [StepRecord(name: "deep", position: 2, status: .succeeded, output: [deep])],
        logs: [chunk("deep", 1, 1, .standardOutput, [2])], of: run)
    }
    #expect(try store.stepLogs(of: run, step: "deep", attempt: nil, after: 0).isEmpty)
    let missing = #expect(throws: StoreError.self) {
      try store.recordSteps([], logs: [chunk("a", 1, 1, .standardOutput, [3])], of: RunID(999))
    }
    #expect(missing?.kind == .noSuchRun)
  }
}
