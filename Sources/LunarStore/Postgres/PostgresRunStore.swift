import Glibc
import LuaKit
import Synchronization

/// The run store on a PostgreSQL server: for runs on several hosts, or a
/// team's shared server. Each commit is durable as the server's settings
/// make it (by default, across a crash of the server: `synchronous_commit`
/// on, WAL fsynced).
public final class PostgresRunStore: RunStore {
  /// The server's URL, any password hidden.
  public let location: String
  private let connection: Mutex<PostgresConnection>
  /// How long a call whose connection is lost keeps connecting again
  /// before it fails.
  private let reconnectFor: Duration

  /// Connects to the server `url` names (a libpq URL, `postgres://...`),
  /// creates the store's tables in the connection's current schema if it is
  /// empty (unless `createIfMissing` is false: then an empty schema is a
  /// `.missing` error) and migrates an older store.
  /// A call that finds the connection lost (the server restarted) connects
  /// again and runs once more, for up to `reconnectFor`: a run's steps and
  /// outcome are recorded across a restart instead of lost.
  /// - Parameter location: `url` as messages show it (without its password).
  /// - Throws: `StoreError` for a server that cannot be reached or refuses
  ///   the login, a schema that holds another application's tables (left
  ///   untouched), a store of a newer Lunar, or a database failure.
  public init(url: String, location: String, createIfMissing: Bool = true, reconnectFor: Duration = .seconds(30))
    throws(StoreError)
  {
    self.location = location
    self.reconnectFor = reconnectFor
    self.connection = Mutex(try PostgresStoreSchema.connect(url: url, location: location, createIfMissing: createIfMissing))
  }

  public func beginRun(_ run: NewRun) throws(StoreError) -> RunID {
    let arguments = try Self.encode(run.arguments.map { .string(LuaString($0)) }, root: "arguments")
    return try withConnection { db, again in
      if again {
        // The insert that lost its connection may have committed: this
        // process's run that began at that microsecond is that run.
        let rows = try db.query(
          """
          SELECT id FROM run WHERE host = $1 AND pid = $2 AND started_at = $3 AND workflow = $4 AND file = $5
          ORDER BY id DESC LIMIT 1
          """,
          [
            .text(run.host), .integer(Int64(run.pid)), .integer(run.startedAt.microseconds), .bytes(run.workflow.bytes),
            .text(run.file),
          ])
        if rows.count == 1 { return RunID(rows.int64(0, 0)) }
      }
      let row = try db.query(
        """
        INSERT INTO run (workflow, file, arguments, status, started_at, resumed_from, host, pid)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id
        """,
        [
          .bytes(run.workflow.bytes), .text(run.file), .bytes(arguments), .text(RunStatus.running.rawValue),
          .integer(run.startedAt.microseconds), run.resumedFrom.map { .integer($0.rawValue) } ?? .null,
          .text(run.host), .integer(Int64(run.pid)),
        ])
      return RunID(row.int64(0, 0))
    }
  }

  public func recordSteps(_ steps: [StepRecord], of run: RunID) throws(StoreError) {
    guard !steps.isEmpty else { return }
    // Encoded before the transaction begins, so a bad value holds no lock.
    var rows: [[PostgresValue]] = []
    rows.reserveCapacity(steps.count)
    for step in steps {
      let output = try step.output.map { values throws(StoreError) in
        try Self.encode(values, root: "output", step: step.name)
      }
      rows.append([
        .integer(run.rawValue), .bytes(step.name.bytes), .integer(Int64(step.position)), .text(step.status.rawValue),
        .integer(Int64(step.attempts)), step.startedAt.map { .integer($0.microseconds) } ?? .null,
        step.finishedAt.map { .integer($0.microseconds) } ?? .null, step.fingerprint.map { .bytes($0.bytes) } ?? .null,
        output.map { .bytes($0) } ?? .null, step.error.map { .bytes($0.bytes) } ?? .null,
        step.code.map { .bytes($0.bytes) } ?? .null,
      ])
    }
    try withConnection { db in
      try db.transaction {
        for row in rows {
          try db.query(
            """
            INSERT INTO step (run, name, position, status, attempts, started_at, finished_at, fingerprint, output, error, code)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            ON CONFLICT (run, name) DO UPDATE SET
              position = excluded.position, status = excluded.status, attempts = excluded.attempts,
              started_at = excluded.started_at, finished_at = excluded.finished_at,
              fingerprint = excluded.fingerprint, output = excluded.output, error = excluded.error, code = excluded.code
            """, row)
        }
      }
    } explaining: { error in
      // The step's run must exist (a foreign key).
      error.state == PostgresError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func recordStepJob(_ job: StepJob, of run: RunID) throws(StoreError) {
    try withConnection { db in
      _ = try db.query(
        """
        INSERT INTO step_job (run, name, attempt, job, fingerprint) VALUES ($1, $2, $3, $4, $5)
        ON CONFLICT (run, name) DO UPDATE SET
          attempt = excluded.attempt, job = excluded.job, fingerprint = excluded.fingerprint
        """,
        [.integer(run.rawValue), .bytes(job.name.bytes), .integer(Int64(job.attempt)), .integer(job.job.rawValue),
         job.fingerprint.map { .bytes($0.bytes) } ?? .null])
    } explaining: { error in
      error.state == PostgresError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func stepJobs(of run: RunID) throws(StoreError) -> [StepJob] {
    try withConnection { db in
      let rows = try db.query(
        "SELECT name, attempt, job, fingerprint FROM step_job WHERE run = $1 ORDER BY name", [.integer(run.rawValue)])
      var jobs: [StepJob] = []
      for row in 0..<rows.count {
        let name = LuaString(bytes: rows.bytes(row, 0))
        let checked = StoredRow(store: self.location, row: "the durable job of step \(name.quoted) of run \(run)")
        jobs.append(
          StepJob(
            name: name, attempt: try checked.count(rows.int64(row, 1), "attempt"), job: JobID(rows.int64(row, 2)),
            fingerprint: rows.isNull(row, 3) ? nil : Fingerprint(bytes: rows.bytes(row, 3))))
      }
      return jobs
    }
  }

  public func finishRun(_ run: RunID, status: RunStatus, at time: StoreTimestamp) throws(StoreError) {
    try withConnection { db in
      let changed = try db.query(
        "UPDATE run SET status = $1, finished_at = $2 WHERE id = $3 RETURNING id",
        [.text(status.rawValue), .integer(time.microseconds), .integer(run.rawValue)])
      if changed.count == 0 { throw StoreError(.noSuchRun, "no run \(run) in \(location)") }
    }
  }

  public func run(_ id: RunID) throws(StoreError) -> RunRecord? {
    try withConnection { db in
      let rows = try db.query("SELECT \(Self.runColumns) FROM run WHERE id = $1", [.integer(id.rawValue)])
      return rows.count == 0 ? nil : try self.readRun(rows, 0)
    }
  }

  public func lastRun(workflow: LuaString?, file: String?) throws(StoreError) -> RunRecord? {
    var conditions: [String] = []
    var parameters: [PostgresValue] = []
    if let workflow {
      parameters.append(.bytes(workflow.bytes))
      conditions.append("workflow = $\(parameters.count)")
    }
    if let file {
      parameters.append(.text(file))
      conditions.append("file = $\(parameters.count)")
    }
    let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    return try withConnection { db in
      let rows = try db.query("SELECT \(Self.runColumns) FROM run \(filter) ORDER BY id DESC LIMIT 1", parameters)
      return rows.count == 0 ? nil : try self.readRun(rows, 0)
    }
  }

  public func steps(of run: RunID) throws(StoreError) -> [StepRecord] {
    try withConnection { db in
      // bytea orders by its bytes, as SQLite orders a BLOB.
      let rows = try db.query(
        """
        SELECT name, position, status, attempts, started_at, finished_at, fingerprint, output, error, code
        FROM step WHERE run = $1 ORDER BY position, name
        """, [.integer(run.rawValue)])
      var steps: [StepRecord] = []
      steps.reserveCapacity(rows.count)
      for row in 0..<rows.count {
        let name = LuaString(bytes: rows.bytes(row, 0))
        let checked = StoredRow(store: self.location, row: "step \(name.quoted) of run \(run)")
        guard let status = StepStatus(rawValue: rows.text(row, 2)) else {
          throw StoreError(
            .badValue, "store \(self.location): step \(name.quoted) of run \(run) has an unknown status '\(rows.text(row, 2))'")
        }
        var output: [LuaValue]?
        if !rows.isNull(row, 7) {
          do {
            output = try LuaValueCodec.decode(rows.bytes(row, 7))
          } catch {
            throw StoreError(.badValue, "store \(self.location): the output of step \(name.quoted) of run \(run): \(error)")
          }
        }
        steps.append(
          StepRecord(
            name: name, position: try checked.count(rows.int64(row, 1), "position"), status: status,
            attempts: try checked.count(rows.int64(row, 3), "attempts"),
            startedAt: try checked.time(rows.isNull(row, 4) ? nil : rows.int64(row, 4), "started_at"),
            finishedAt: try checked.time(rows.isNull(row, 5) ? nil : rows.int64(row, 5), "finished_at"),
            fingerprint: rows.isNull(row, 6) ? nil : Fingerprint(bytes: rows.bytes(row, 6)),
            code: rows.isNull(row, 9) ? nil : Fingerprint(bytes: rows.bytes(row, 9)), output: output,
            error: rows.isNull(row, 8) ? nil : LuaString(bytes: rows.bytes(row, 8))))
      }
      return steps
    }
  }

  public func runs(workflow: LuaString?, limit: Int) throws(StoreError) -> [RunSummary] {
    let filter = workflow == nil ? "" : "WHERE workflow = $2"
    let parameters: [PostgresValue] = [.integer(Int64(limit))] + (workflow.map { [.bytes($0.bytes)] } ?? [])
    return try withConnection { db in
      // The newest runs first, then their steps: counting only what is listed.
      let rows = try db.query(
        """
        WITH recent AS (SELECT * FROM run \(filter) ORDER BY id DESC LIMIT $1)
        SELECT \(Self.runColumns(of: "recent")),
          count(*) FILTER (WHERE step.status = 'succeeded'), count(*) FILTER (WHERE step.status = 'failed'),
          count(*) FILTER (WHERE step.status = 'skipped'), count(*) FILTER (WHERE step.status = 'reused')
        FROM recent LEFT JOIN step ON step.run = recent.id
        GROUP BY \(Self.runColumns(of: "recent")) ORDER BY recent.id DESC
        """, parameters)
      var summaries: [RunSummary] = []
      for row in 0..<rows.count {
        summaries.append(
          RunSummary(
            run: try self.readRun(rows, row), succeeded: Int(rows.int64(row, 10)), failed: Int(rows.int64(row, 11)),
            skipped: Int(rows.int64(row, 12)), reused: Int(rows.int64(row, 13))))
      }
      return summaries
    }
  }

  /// The columns `readRun` reads, in its order.
  private static let runColumns = runColumns(of: "run")

  private static func runColumns(of table: String) -> String {
    ["id", "workflow", "file", "arguments", "status", "started_at", "finished_at", "resumed_from", "host", "pid"]
      .map { table + "." + $0 }.joined(separator: ", ")
  }

  /// The run in row `row` of `rows`, from the columns `runColumns` names.
  private func readRun(_ rows: PostgresResult, _ row: Int) throws(StoreError) -> RunRecord {
    let id = RunID(rows.int64(row, 0))
    let checked = StoredRow(store: location, row: "run \(id)")
    guard let status = RunStatus(rawValue: rows.text(row, 4)) else {
      throw StoreError(.badValue, "store \(location): run \(id) has an unknown status '\(rows.text(row, 4))'")
    }
    let arguments: [String]
    do {
      arguments = try LuaValueCodec.decode(rows.bytes(row, 3)).map { $0.luaStringValue?.lossyString ?? "" }
    } catch {
      throw StoreError(.badValue, "store \(location): the arguments of run \(id): \(error)")
    }
    return RunRecord(
      id: id, workflow: LuaString(bytes: rows.bytes(row, 1)), file: rows.text(row, 2), arguments: arguments,
      status: status, startedAt: try checked.time(rows.int64(row, 5), "started_at"),
      finishedAt: try checked.time(rows.isNull(row, 6) ? nil : rows.int64(row, 6), "finished_at"),
      resumedFrom: rows.isNull(row, 7) ? nil : RunID(rows.int64(row, 7)), host: rows.text(row, 8),
      pid: try checked.processID(rows.int64(row, 9), "pid"))
  }

  /// Runs `body` with the connection, alone, connecting again first if the
  /// connection was lost; when the connection is lost during `body`, runs
  /// it again (told so by its second argument) on a new one, for up to
  /// `reconnectFor`. Every write here may be made twice: steps and outcomes
  /// are upserts and updates, and `beginRun` looks for its run first. Any
  /// failure becomes a `StoreError`, the one `explain` gives for a
  /// PostgreSQL error if it gives one.
  private func withConnection<T: Sendable>(
    _ body: (PostgresConnection, _ again: Bool) throws -> T,
    explaining explain: (PostgresError) -> StoreError? = { _ in nil }
  ) throws(StoreError) -> T {
    let (location, deadline) = (self.location, ContinuousClock.now + reconnectFor)
    return try connection.withLock { (db) throws(StoreError) -> T in
      var attempt = 0
      while true {
        do {
          try db.reconnectIfLost()
          return try body(db, attempt > 0)
        } catch let error as StoreError {
          throw error
        } catch let error as PostgresError {
          if db.isLost && ContinuousClock.now < deadline {
            // A server restarting refuses connections for a moment.
            let pause = min(Duration.milliseconds(20 << min(attempt, 6)), .seconds(1))
            Self.sleep(min(pause, max(.zero, deadline - ContinuousClock.now)))
            attempt += 1
            continue
          }
          throw explain(error) ?? StoreError(.database, "store \(location): \(error)")
        } catch {
          throw StoreError(.database, "store \(location): \(error)")
        }
      }
    }
  }

  /// `withConnection` for a body that runs the same whether or not it is
  /// run again. Internal, not private: the store's extensions in other files use it.
  func withConnection<T: Sendable>(
    _ body: (PostgresConnection) throws -> T, explaining explain: (PostgresError) -> StoreError? = { _ in nil }
  ) throws(StoreError) -> T {
    try withConnection({ db, _ in try body(db) }, explaining: explain)
  }

  /// Blocks the calling thread for `duration` (the store's calls are
  /// synchronous).
  private static func sleep(_ duration: Duration) {
    let (seconds, attoseconds) = duration.components
    var left = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var rest = timespec()
    while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
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
