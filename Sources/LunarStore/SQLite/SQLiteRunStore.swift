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
    return try withDatabase { db in
      try db.transaction {
        try db.run(
          """
          INSERT INTO run (workflow, file, arguments, status, started_at, resumed_from, host, pid)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?)
          """,
          [
            .blob(run.workflow.bytes), .text(run.file), .blob(arguments), .text(RunStatus.running.rawValue),
            .integer(run.startedAt.microseconds), run.resumedFrom.map { .integer($0.rawValue) } ?? .null,
            .text(run.host), .integer(Int64(run.pid)),
          ])
        return RunID(db.lastInsertedRowID)
      }
    }
  }

  public func recordSteps(_ steps: [StepRecord], of run: RunID) throws(StoreError) {
    guard !steps.isEmpty else { return }
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
      try db.transaction {
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
      }
    } explaining: { error in
      // The step's run must exist (a foreign key).
      error.code == SQLiteError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
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

  public func finishRun(_ run: RunID, status: RunStatus, at time: StoreTimestamp) throws(StoreError) {
    try withDatabase { db in
      let changed = try db.transaction {
        try db.run(
          "UPDATE run SET status = ?, finished_at = ? WHERE id = ?",
          [.text(status.rawValue), .integer(time.microseconds), .integer(run.rawValue)])
        return db.changes
      }
      if changed == 0 { throw StoreError(.noSuchRun, "no run \(run) in \(location)") }
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

  public func runs(workflow: LuaString?, limit: Int) throws(StoreError) -> [RunSummary] {
    let filter = workflow == nil ? "" : "WHERE workflow = ?"
    let bindings: [SQLiteValue] = (workflow.map { [.blob($0.bytes)] } ?? []) + [.integer(Int64(limit))]
    return try withDatabase { db in
      var summaries: [RunSummary] = []
      // The newest runs first, then their steps: counting only what is listed.
      try db.query(
        """
        WITH recent AS (SELECT * FROM run \(filter) ORDER BY id DESC LIMIT ?)
        SELECT \(Self.runColumns(of: "recent")),
          count(CASE step.status WHEN 'succeeded' THEN 1 END), count(CASE step.status WHEN 'failed' THEN 1 END),
          count(CASE step.status WHEN 'skipped' THEN 1 END), count(CASE step.status WHEN 'reused' THEN 1 END)
        FROM recent LEFT JOIN step ON step.run = recent.id
        GROUP BY recent.id ORDER BY recent.id DESC
        """, bindings
      ) { row in
        summaries.append(
          RunSummary(
            run: try self.readRun(row), succeeded: Int(row.int64(10)), failed: Int(row.int64(11)),
            skipped: Int(row.int64(12)), reused: Int(row.int64(13))))
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
  private static let runColumns = runColumns(of: "run")

  private static func runColumns(of table: String) -> String {
    ["id", "workflow", "file", "arguments", "status", "started_at", "finished_at", "resumed_from", "host", "pid"]
      .map { table + "." + $0 }.joined(separator: ", ")
  }

  /// A run from the columns `runColumns` names, in that order.
  private func readRun(_ row: SQLiteStatement) throws(StoreError) -> RunRecord {
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
      resumedFrom: row.isNull(7) ? nil : RunID(row.int64(7)), host: row.text(8), pid: try checked.processID(row.int64(9), "pid"))
  }

  /// Runs `body` with the connection, alone; any failure becomes a
  /// `StoreError`, the one `explain` gives for a SQLite error if it gives one.
  /// Internal, not private: the store's extensions in other files use it.
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

  /// The bytes of `values`; an error names the step they belong to, if any.
  private static func encode(_ values: [LuaValue], root: String, step: LuaString? = nil) throws(StoreError) -> [UInt8] {
    do {
      return try LuaValueCodec.encode(values, root: root)
    } catch {
      throw StoreError(.badValue, (step.map { "step \($0.quoted): " } ?? "") + error.description)
    }
  }
}
