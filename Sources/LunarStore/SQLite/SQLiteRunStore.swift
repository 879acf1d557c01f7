import Glibc
import LuaKit
import Synchronization

/// The run store in one SQLite file: the default, for one host. Any number of
/// processes may use one store at once; each commit is durable across a
/// crash of the process (WAL with `synchronous=NORMAL`).
public final class SQLiteRunStore: RunStore {
  /// When a commit reaches the disk.
  public enum Durability: String, Sendable {
    /// Committed data survives a crash or SIGKILL of the process; a power
    /// loss may lose the last commits, never the store (no fsync per commit).
    case process = "NORMAL"
    /// Committed data survives a power loss too: an fsync per commit.
    case power = "FULL"
  }

  /// How to open the store.
  public struct Options: Sendable {
    /// How long to wait for another process's lock before failing.
    public var busyTimeoutMilliseconds: Int32
    /// When a commit reaches the disk.
    public var durability: Durability
    /// Opens the store only to read it (`lunar runs`, `queue show`): nothing
    /// is created or migrated, and the store's folder need not be writable.
    public var readOnly: Bool

    /// Waits up to 30 s for a lock; survives a crash of the process.
    public init(busyTimeoutMilliseconds: Int32 = 30_000, durability: Durability = .process, readOnly: Bool = false) {
      self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
      self.durability = durability
      self.readOnly = readOnly
    }
  }

  /// The database file.
  public let path: String
  public var location: String { "sqlite:" + path }
  private let connection: Mutex<SQLiteDatabase>
  /// The `data_version` the last `waitForChange` saw.
  let lastDataVersion = Mutex<Int64?>(nil)

  /// Throws what opening `path` as a store would refuse (a file that is not
  /// a Lunar store, a missing folder), touching nothing.
  public static func check(path: String) throws(StoreError) {
    _ = try StoreFileCheck.inspect(path)
  }

  /// Opens the store at `path` (an absolute path, or relative to the current
  /// folder), creating it if it is missing or an empty file (unless
  /// `createIfMissing` is false: then a missing file or folder is a
  /// `.missing` error) and migrating an older one.
  /// - Throws: `StoreError` for a file that is not a Lunar store (left
  ///   untouched: nothing is opened), a store of a newer Lunar, or a
  ///   database failure.
  public init(path: String, createIfMissing: Bool = true, options: Options = Options()) throws(StoreError) {
    self.path = path
    self.connection = Mutex(try SQLiteStoreFile.open(path: path, createIfMissing: createIfMissing, options: options))
  }

  public func beginRun(_ run: NewRun) throws(StoreError) -> RunID {
    let arguments = try Self.encode(run.arguments.map { .string(LuaString($0)) }, root: "arguments")
    let expiry = run.startedAt.microseconds + (try QueueLimits.microseconds(of: run.lease))
    let (plan, needs) = try run.plan.columns()
    return try withDatabase { db in
      try db.transaction {
        try db.run(
          """
          INSERT INTO run (workflow, file, arguments, status, started_at, resumed_from, host, pid, owner, owned_since,
            lease_expires_at, plan, plan_needs)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?)
          """,
          [
            .blob(run.workflow.bytes), .text(run.file), .blob(arguments), .text(RunStatus.running.rawValue),
            .integer(run.startedAt.microseconds), run.resumedFrom.map { .integer($0.rawValue) } ?? .null,
            .text(run.host), .integer(Int64(run.pid)), .integer(run.startedAt.microseconds), .integer(expiry),
            .blob(plan), needs.map { .blob($0) } ?? .null,
          ])
        return RunID(db.lastInsertedRowID)
      }
    }
  }

  public func recordSteps(_ steps: [StepRecord], logs: [StepLogChunk], of run: RunID, owner: ClaimToken?) throws(StoreError) {
    guard !steps.isEmpty || !logs.isEmpty else { return }
    // Encoded before the write lock is taken, so a bad value holds no lock.
    var rows: [[SQLiteValue]] = []
    rows.reserveCapacity(steps.count)
    for step in steps {
      let output = try step.output.map { values throws(StoreError) in
        try Self.encode(values, root: "output", step: step.name)
      }
      rows.append([
        .integer(run.rawValue), .blob(step.name.bytes), .integer(Int64(step.position)), .text(step.status.rawValue),
        .integer(Int64(step.attempts)), step.startedAt.map { .integer($0.microseconds) } ?? .null,
        step.finishedAt.map { .integer($0.microseconds) } ?? .null, step.fingerprint.map { .blob($0.bytes) } ?? .null,
        output.map { .blob($0) } ?? .null, step.error.map { .blob($0.bytes) } ?? .null,
        step.code.map { .blob($0.bytes) } ?? .null,
      ])
    }
    try withDatabase { db in
      // Immediate: the owner's check and the writes under one write lock,
      // so a take-over cannot come between them.
      try db.transaction(.immediate) {
        if let owner { try self.checkOwner(db, run: run, token: owner, "commit") }
        for row in rows {
          try db.run(
            """
            INSERT INTO step (run, name, position, status, attempts, started_at, finished_at, fingerprint, output, error, code)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (run, name) DO UPDATE SET
              position = excluded.position, status = excluded.status, attempts = excluded.attempts,
              started_at = excluded.started_at, finished_at = excluded.finished_at,
              fingerprint = excluded.fingerprint, output = excluded.output, error = excluded.error, code = excluded.code
            """, row)
        }
        for chunk in logs {
          try db.run(
            "INSERT INTO step_log (run, step, position, attempt, sequence, stream, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
              .integer(run.rawValue), .blob(chunk.step.bytes), .integer(Int64(chunk.position)),
              .integer(Int64(chunk.attempt)), .integer(Int64(chunk.sequence)), .integer(Int64(chunk.stream.rawValue)),
              .blob(chunk.bytes),
            ])
        }
      }
    } explaining: { error in
      // The step's run must exist (a foreign key).
      error.code == SQLiteError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func stepLogs(of run: RunID, step: LuaString?, attempt: Int?, after: Int64) throws(StoreError) -> [StepLogChunk] {
    var bindings: [SQLiteValue] = [.integer(run.rawValue), .integer(after)]
    var filter = ""
    if let step {
      filter += " AND step = ?"
      bindings.append(.blob(step.bytes))
    }
    if let attempt {
      filter += " AND attempt = ?"
      bindings.append(.integer(Int64(attempt)))
    }
    return try withDatabase { db in
      var chunks: [StepLogChunk] = []
      try db.query(
        "SELECT id, step, position, attempt, sequence, stream, bytes FROM step_log WHERE run = ? AND id > ?\(filter) ORDER BY id",
        bindings
      ) { row in
        let name = LuaString(bytes: row.blob(1))
        let checked = StoredRow(store: self.path, row: "the log of step \(name.quoted) of run \(run)")
        guard let stream = StepLogStream(rawValue: Int(truncatingIfNeeded: row.int64(5))) else {
          throw StoreError(
            .badValue, "store \(self.path): the log of step \(name.quoted) of run \(run) has an unknown stream \(row.int64(5))")
        }
        chunks.append(
          StepLogChunk(
            step: name, position: try checked.count(row.int64(2), "position"),
            attempt: try checked.count(row.int64(3), "attempt"), sequence: try checked.count(row.int64(4), "sequence"),
            stream: stream, bytes: row.blob(6), id: row.int64(0)))
      }
      return chunks
    }
  }

  public func recordStepJob(_ job: StepJob, of run: RunID) throws(StoreError) {
    try withDatabase { db in
      try db.transaction {
        try db.run(
          """
          INSERT INTO step_job (run, name, attempt, job, fingerprint) VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (run, name) DO UPDATE SET
            attempt = excluded.attempt, job = excluded.job, fingerprint = excluded.fingerprint
          """,
          [.integer(run.rawValue), .blob(job.name.bytes), .integer(Int64(job.attempt)), .integer(job.job.rawValue),
           job.fingerprint.map { .blob($0.bytes) } ?? .null])
      }
    } explaining: { error in
      error.code == SQLiteError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func stepJobs(of run: RunID) throws(StoreError) -> [StepJob] {
    try withDatabase { db in
      var jobs: [StepJob] = []
      try db.query("SELECT name, attempt, job, fingerprint FROM step_job WHERE run = ? ORDER BY name", [.integer(run.rawValue)]) {
        row in
        let name = LuaString(bytes: row.blob(0))
        let checked = StoredRow(store: self.path, row: "the durable job of step \(name.quoted) of run \(run)")
        jobs.append(
          StepJob(
            name: name, attempt: try checked.count(row.int64(1), "attempt"), job: JobID(row.int64(2)),
            fingerprint: row.isNull(3) ? nil : Fingerprint(bytes: row.blob(3))))
      }
      return jobs
    }
  }

  public func finishRun(_ run: RunID, status: RunStatus, stoppedBy: String?, owner: ClaimToken?, at time: StoreTimestamp)
    throws(StoreError)
  {
    try withDatabase { db in
      let changed = try db.transaction(.immediate) {
        if let owner { try self.checkOwner(db, run: run, token: owner, "finish") }
        try db.run(
          """
          UPDATE run SET status = ?, finished_at = ?, stopped_by = ?, lease_expires_at = NULL, cancel_request = NULL
          WHERE id = ?
          """,
          [.text(status.rawValue), .integer(time.microseconds), stoppedBy.map { .text($0) } ?? .null, .integer(run.rawValue)])
        return db.changes
      }
      if changed == 0 { throw StoreError(.noSuchRun, "no run \(run) in \(location)") }
    }
  }

  public func heartbeat(_ run: RunID, owner: ClaimToken, lease: Duration, running: [LuaString], at now: StoreTimestamp)
    throws(StoreError) -> RunHeartbeat
  {
    let names = try Self.encode(running.map { .string($0) }, root: "running")
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withDatabase { db in
      try db.transaction(.immediate) {
        try self.checkOwner(db, run: run, token: owner, "heartbeat")
        try db.run(
          "UPDATE run SET lease_expires_at = ?, running = ? WHERE id = ?", [.integer(expiry), .blob(names), .integer(run.rawValue)])
        var request: String?
        try db.query("SELECT cancel_request FROM run WHERE id = ?", [.integer(run.rawValue)]) { row in
          request = row.isNull(0) ? nil : row.text(0)
        }
        return RunHeartbeat(expiresAt: StoreTimestamp(microseconds: expiry), cancelRequest: request)
      }
    }
  }

  public func takeOver(_ run: RunID, host: String, pid: Int32, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> RunLease?
  {
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withDatabase { db in
      try db.transaction(.immediate) {
        try db.run(
          """
          UPDATE run SET owner = owner + 1, host = ?, pid = ?, owned_since = ?, lease_expires_at = ?
          WHERE id = ? AND status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= ?)
          """,
          [.text(host), .integer(Int64(pid)), .integer(now.microseconds), .integer(expiry), .integer(run.rawValue),
           .integer(now.microseconds)])
        if db.changes == 0 {
          guard try self.ownerRow(db, run: run) != nil else { throw StoreError(.noSuchRun, "no run \(run) in \(self.location)") }
          return nil
        }
        guard let current = try self.ownerRow(db, run: run) else { return nil }
        return RunLease(run: run, token: ClaimToken(current.token), expiresAt: StoreTimestamp(microseconds: expiry))
      }
    }
  }

  public func adopt(
    _ run: RunID, from token: ClaimToken, workflow: LuaString, plan: RunPlan, host: String, pid: Int32, lease: Duration,
    at now: StoreTimestamp
  ) throws(StoreError) -> RunLease? {
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    let (planned, needs) = try plan.columns()
    return try withDatabase { db in
      try db.transaction(.immediate) {
        try db.run(
          """
          UPDATE run SET owner = owner + 1, host = ?, pid = ?, owned_since = ?, lease_expires_at = ?, workflow = ?, plan = ?,
            plan_needs = ?
          WHERE id = ? AND status = 'running' AND owner = ?
          """,
          [.text(host), .integer(Int64(pid)), .integer(now.microseconds), .integer(expiry), .blob(workflow.bytes), .blob(planned),
           needs.map { .blob($0) } ?? .null, .integer(run.rawValue), .integer(token.rawValue)])
        if db.changes == 0 {
          guard try self.ownerRow(db, run: run) != nil else { throw StoreError(.noSuchRun, "no run \(run) in \(self.location)") }
          return nil
        }
        return RunLease(run: run, token: ClaimToken(token.rawValue + 1), expiresAt: StoreTimestamp(microseconds: expiry))
      }
    }
  }

  public func park(_ run: RunID, owner: ClaimToken, wakeAt: StoreTimestamp?, awaiting: [LuaString], at now: StoreTimestamp)
    throws(StoreError)
  {
    try withDatabase { db in
      try db.transaction(.immediate) {
        try self.checkOwner(db, run: run, token: owner, "park")
        // parked_at stays NULL: it woke runs parked before run_await.
        try db.run(
          """
          UPDATE run SET status = 'parked', wake_at = ?, parked_at = NULL, lease_expires_at = NULL, running = NULL,
            host = '', pid = 0
          WHERE id = ?
          """, [wakeAt.map { .integer($0.microseconds) } ?? .null, .integer(run.rawValue)])
        try db.run("DELETE FROM run_await WHERE run = ?", [.integer(run.rawValue)])
        for name in Set(awaiting) {
          try db.run("INSERT INTO run_await (run, name) VALUES (?, ?)", [.integer(run.rawValue), .blob(name.bytes)])
        }
      }
    }
  }

  public func requestCancel(_ run: RunID, by: String, at now: StoreTimestamp) throws(StoreError) -> CancelRequestOutcome {
    try withDatabase { db in
      try db.transaction(.immediate) {
        guard let current = try self.ownerRow(db, run: run) else {
          throw StoreError(.noSuchRun, "no run \(run) in \(self.location)")
        }
        let waits = [RunStatus.queued.rawValue, RunStatus.parked.rawValue].contains(current.status)
        guard current.status == RunStatus.running.rawValue || waits else {
          throw RunFencing.finished(run, status: current.status, in: self.location)
        }
        // A queued or parked run has no process to ask: it is cancelled now.
        if waits || (current.leaseExpiresAt.map { $0 <= now.microseconds } ?? false) {
          try db.run(
            """
            UPDATE run SET status = 'cancelled', stopped_by = ?, finished_at = ?, lease_expires_at = NULL,
              cancel_request = NULL WHERE id = ?
            """, [.text(by), .integer(now.microseconds), .integer(run.rawValue)])
          return .cancelledNow
        }
        try db.run("UPDATE run SET cancel_request = ? WHERE id = ?", [.text(by), .integer(run.rawValue)])
        return .requested
      }
    }
  }

  /// The owner columns of `run`, or nil if there is no such run.
  private func ownerRow(_ db: SQLiteDatabase, run: RunID) throws
    -> (token: Int64, host: String, pid: Int64, status: String, leaseExpiresAt: Int64?)?
  {
    var found: (token: Int64, host: String, pid: Int64, status: String, leaseExpiresAt: Int64?)?
    try db.query("SELECT owner, host, pid, status, lease_expires_at FROM run WHERE id = ?", [.integer(run.rawValue)]) { row in
      found = (row.int64(0), row.text(1), row.int64(2), row.text(3), row.isNull(4) ? nil : row.int64(4))
    }
    return found
  }

  /// Throws unless the holder of `token` still owns `run` and it runs.
  private func checkOwner(_ db: SQLiteDatabase, run: RunID, token: ClaimToken, _ what: String) throws {
    guard let current = try ownerRow(db, run: run) else { throw StoreError(.noSuchRun, "no run \(run) in \(location)") }
    guard current.token == token.rawValue, current.status == RunStatus.running.rawValue else {
      throw RunFencing.stale(what, run: run, token: token, current: (current.token, current.host, current.pid, current.status),
        in: location)
    }
  }

  public func run(_ id: RunID) throws(StoreError) -> RunRecord? {
    try withDatabase { db in
      var found: RunRecord?
      try db.query("SELECT \(Self.runColumns) FROM run WHERE id = ?", [.integer(id.rawValue)]) { row in
        found = try self.readRun(row)
      }
      return found
    }
  }

  public func lastRun(workflow: LuaString?, file: String?) throws(StoreError) -> RunRecord? {
    var conditions: [String] = []
    var bindings: [SQLiteValue] = []
    if let workflow {
      conditions.append("workflow = ?")
      bindings.append(.blob(workflow.bytes))
    }
    if let file {
      conditions.append("file = ?")
      bindings.append(.text(file))
    }
    let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    return try withDatabase { db in
      var found: RunRecord?
      try db.query("SELECT \(Self.runColumns) FROM run \(filter) ORDER BY id DESC LIMIT 1", bindings) { row in
        found = try self.readRun(row)
      }
      return found
    }
  }

  public func steps(of run: RunID) throws(StoreError) -> [StepRecord] {
    try withDatabase { db in
      var steps: [StepRecord] = []
      try db.query(
        """
        SELECT name, position, status, attempts, started_at, finished_at, fingerprint, output, error, code
        FROM step WHERE run = ? ORDER BY position, name
        """, [.integer(run.rawValue)]
      ) { row in
        let name = LuaString(bytes: row.blob(0))
        let checked = StoredRow(store: self.path, row: "step \(name.quoted) of run \(run)")
        guard let status = StepStatus(rawValue: row.text(2)) else {
          throw StoreError(.badValue, "store \(self.path): step \(name.quoted) of run \(run) has an unknown status '\(row.text(2))'")
        }
        var output: [LuaValue]?
        if !row.isNull(7) {
          do {
            output = try LuaValueCodec.decode(row.blob(7))
          } catch {
            throw StoreError(.badValue, "store \(self.path): the output of step \(name.quoted) of run \(run): \(error)")
          }
        }
        steps.append(
          StepRecord(
            name: name, position: try checked.count(row.int64(1), "position"), status: status,
            attempts: try checked.count(row.int64(3), "attempts"),
            startedAt: try checked.time(row.isNull(4) ? nil : row.int64(4), "started_at"),
            finishedAt: try checked.time(row.isNull(5) ? nil : row.int64(5), "finished_at"),
            fingerprint: row.isNull(6) ? nil : Fingerprint(bytes: row.blob(6)),
            code: row.isNull(9) ? nil : Fingerprint(bytes: row.blob(9)), output: output,
            error: row.isNull(8) ? nil : LuaString(bytes: row.blob(8))))
      }
      return steps
    }
  }

  public func runs(_ filter: RunFilter, limit: Int) throws(StoreError) -> [RunSummary] {
    var conditions: [String] = []
    var bindings: [SQLiteValue] = []
    if let workflow = filter.workflow {
      conditions.append("workflow = ?")
      bindings.append(.blob(workflow.bytes))
    }
    if let status = filter.status {
      conditions.append("status = ?")
      bindings.append(.text(status.rawValue))
    }
    if let since = filter.startedSince {
      conditions.append("started_at >= ?")
      bindings.append(.integer(since.microseconds))
    }
    if let before = filter.before {
      conditions.append("id < ?")
      bindings.append(.integer(before.rawValue))
    }
    let condition = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    bindings.append(.integer(Int64(limit)))
    // The counts follow the run's columns.
    let counts = Int32(RunColumns.record.count)
    return try withDatabase { db in
      var summaries: [RunSummary] = []
      // The newest runs first, then their steps: counting only what is listed.
      try db.query(
        """
        WITH recent AS (SELECT * FROM run \(condition) ORDER BY id DESC LIMIT ?)
        SELECT \(RunColumns.record(of: "recent")),
          count(CASE step.status WHEN 'succeeded' THEN 1 END), count(CASE step.status WHEN 'failed' THEN 1 END),
          count(CASE step.status WHEN 'skipped' THEN 1 END), count(CASE step.status WHEN 'reused' THEN 1 END)
        FROM recent LEFT JOIN step ON step.run = recent.id
        GROUP BY recent.id ORDER BY recent.id DESC
        """, bindings
      ) { row in
        summaries.append(
          RunSummary(
            run: try self.readRun(row), succeeded: Int(row.int64(counts)), failed: Int(row.int64(counts + 1)),
            skipped: Int(row.int64(counts + 2)), reused: Int(row.int64(counts + 3))))
      }
      return summaries
    }
  }

  /// The value of `PRAGMA name` on this store's connection (tests check
  /// the durability settings, which are per connection).
  func pragma(_ name: String) throws(StoreError) -> SQLiteValue? {
    try withDatabase { db in try db.scalar("PRAGMA \(name)") }
  }

  /// The columns `readRun` reads, in its order.
  static let runColumns = RunColumns.record(of: "run")


  /// A run from the columns `runColumns` names, in that order.
  func readRun(_ row: SQLiteStatement) throws(StoreError) -> RunRecord {
    let id = RunID(row.int64(0))
    let checked = StoredRow(store: path, row: "run \(id)")
    guard let status = RunStatus(rawValue: row.text(4)) else {
      throw StoreError(.badValue, "store \(path): run \(id) has an unknown status '\(row.text(4))'")
    }
    let arguments: [String]
    do {
      arguments = try LuaValueCodec.decode(row.blob(3)).map { $0.luaStringValue?.lossyString ?? "" }
    } catch {
      throw StoreError(.badValue, "store \(path): the arguments of run \(id): \(error)")
    }
    return RunRecord(
      id: id, workflow: LuaString(bytes: row.blob(1)), file: row.text(2), arguments: arguments, status: status,
      startedAt: try checked.time(row.int64(5), "started_at"),
      finishedAt: try checked.time(row.isNull(6) ? nil : row.int64(6), "finished_at"),
      resumedFrom: row.isNull(7) ? nil : RunID(row.int64(7)), host: row.text(8), pid: try checked.processID(row.int64(9), "pid"),
      ownerToken: ClaimToken(row.int64(10)), ownedSince: try checked.time(row.isNull(11) ? nil : row.int64(11), "owned_since"),
      leaseExpiresAt: try checked.time(row.isNull(12) ? nil : row.int64(12), "lease_expires_at"),
      cancelRequest: row.isNull(13) ? nil : row.text(13), stoppedBy: row.isNull(14) ? nil : row.text(14),
      plan: try RunPlan.read(names: row.isNull(15) ? nil : row.blob(15), needs: row.isNull(18) ? nil : row.blob(18), store: path, run: id),
      running: try names(row.isNull(16) ? nil : row.blob(16), "running", of: id),
      wakeAt: try checked.time(row.isNull(17) ? nil : row.int64(17), "wake_at"),
      force: try names(row.isNull(19) ? nil : row.blob(19), "force", of: id))
  }

  /// Runs `body` with the connection, alone; any failure becomes a
  /// `StoreError`, the one `explain` gives for a SQLite error if it gives one.
  func withDatabase<T: Sendable>(
    _ body: (SQLiteDatabase) throws -> T, explaining explain: (SQLiteError) -> StoreError? = { _ in nil }
  ) throws(StoreError) -> T {
    let path = self.path
    return try connection.withLock { (db) throws(StoreError) -> T in
      do {
        return try body(db)
      } catch let error as SQLiteError {
        throw explain(error) ?? StoreError(error, path: path)
      } catch {
        throw StoreError(error, path: path)
      }
    }
  }

  /// The step names a run's column `column` holds (none if NULL).
  private func names(_ bytes: [UInt8]?, _ column: String, of run: RunID) throws(StoreError) -> [LuaString] {
    guard let bytes else { return [] }
    do {
      return try LuaValueCodec.decode(bytes).compactMap(\.luaStringValue)
    } catch {
      throw StoreError(.badValue, "store \(self.path): the \(column) of run \(run): \(error)")
    }
  }

  /// The bytes of `values`; an error names the step they belong to, if any.
  static func encode(_ values: [LuaValue], root: String, step: LuaString? = nil) throws(StoreError) -> [UInt8] {
    do {
      return try LuaValueCodec.encode(values, root: root)
    } catch {
      throw StoreError(.badValue, (step.map { "step \($0.quoted): " } ?? "") + error.description)
    }
  }
}
