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
  /// The connection `waitForChange` listens on: the tables' changes and the queues' news.
  let changeListener: PostgresListener
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
    changeListener = PostgresListener(
      url: url, location: location, channels: [Self.changeChannel, PostgresQueueStore.notificationChannel])
    self.reconnectFor = reconnectFor
    self.connection = Mutex(try PostgresStoreSchema.connect(url: url, location: location, createIfMissing: createIfMissing))
  }

  public func beginRun(_ run: NewRun) throws(StoreError) -> RunID {
    let arguments = try Self.encode(run.arguments.map { .string(LuaString($0)) }, root: "arguments")
    let expiry = run.startedAt.microseconds + (try QueueLimits.microseconds(of: run.lease))
    let (plan, needs) = try run.plan.columns()
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
        INSERT INTO run (workflow, file, arguments, status, started_at, resumed_from, host, pid, owner, owned_since,
          lease_expires_at, plan, plan_needs)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $5, $9, $10, $11) RETURNING id
        """,
        [
          .bytes(run.workflow.bytes), .text(run.file), .bytes(arguments), .text(RunStatus.running.rawValue),
          .integer(run.startedAt.microseconds), run.resumedFrom.map { .integer($0.rawValue) } ?? .null,
          .text(run.host), .integer(Int64(run.pid)), .integer(expiry), .bytes(plan), needs.map { .bytes($0) } ?? .null,
        ])
      return RunID(row.int64(0, 0))
    }
  }

  public func recordSteps(_ steps: [StepRecord], logs: [StepLogChunk], of run: RunID, owner: ClaimToken?) throws(StoreError) {
    guard !steps.isEmpty || !logs.isEmpty else { return }
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
        // The run's row is locked until the commit: a take-over waits for it.
        if let owner { try self.checkOwner(db, run: run, token: owner, "commit") }
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
        for chunk in logs {
          try db.query(
            "INSERT INTO step_log (run, step, position, attempt, sequence, stream, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            [
              .integer(run.rawValue), .bytes(chunk.step.bytes), .integer(Int64(chunk.position)),
              .integer(Int64(chunk.attempt)), .integer(Int64(chunk.sequence)), .integer(Int64(chunk.stream.rawValue)),
              .bytes(chunk.bytes),
            ])
        }
      }
    } explaining: { error in
      // The step's run must exist (a foreign key).
      error.state == PostgresError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func stepLogs(of run: RunID, step: LuaString?, attempt: Int?, after: Int64) throws(StoreError) -> [StepLogChunk] {
    try withConnection { db in
      let rows = try db.query(
        """
        SELECT id, step, position, attempt, sequence, stream, bytes FROM step_log
        WHERE run = $1 AND id > $2 AND ($3::bytea IS NULL OR step = $3::bytea)
          AND ($4::integer IS NULL OR attempt = $4::integer)
        ORDER BY id
        """,
        [
          .integer(run.rawValue), .integer(after), step.map { .bytes($0.bytes) } ?? .null,
          attempt.map { .integer(Int64($0)) } ?? .null,
        ])
      var chunks: [StepLogChunk] = []
      for row in 0..<rows.count {
        let name = LuaString(bytes: rows.bytes(row, 1))
        let checked = StoredRow(store: self.location, row: "the log of step \(name.quoted) of run \(run)")
        guard let stream = StepLogStream(rawValue: Int(truncatingIfNeeded: rows.int64(row, 5))) else {
          throw StoreError(
            .badValue,
            "store \(self.location): the log of step \(name.quoted) of run \(run) has an unknown stream \(rows.int64(row, 5))")
        }
        chunks.append(
          StepLogChunk(
            step: name, position: try checked.count(rows.int64(row, 2), "position"),
            attempt: try checked.count(rows.int64(row, 3), "attempt"), sequence: try checked.count(rows.int64(row, 4), "sequence"),
            stream: stream, bytes: rows.bytes(row, 6), id: rows.int64(row, 0)))
      }
      return chunks
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

  public func finishRun(_ run: RunID, status: RunStatus, stoppedBy: String?, owner: ClaimToken?, at time: StoreTimestamp)
    throws(StoreError)
  {
    try withConnection { db in
      try db.transaction {
        if let owner { try self.checkOwner(db, run: run, token: owner, "finish") }
        let changed = try db.query(
          """
          UPDATE run SET status = $1, finished_at = $2, stopped_by = $3, lease_expires_at = NULL, cancel_request = NULL
          WHERE id = $4 RETURNING id
          """,
          [.text(status.rawValue), .integer(time.microseconds), stoppedBy.map { .text($0) } ?? .null, .integer(run.rawValue)])
        if changed.count == 0 { throw StoreError(.noSuchRun, "no run \(run) in \(self.location)") }
      }
    }
  }

  public func heartbeat(_ run: RunID, owner: ClaimToken, lease: Duration, running: [LuaString], at now: StoreTimestamp)
    throws(StoreError) -> RunHeartbeat
  {
    let names = try Self.encode(running.map { .string($0) }, root: "running")
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withConnection { db in
      let rows = try db.query(
        """
        UPDATE run SET lease_expires_at = $1, running = $4 WHERE id = $2 AND owner = $3 AND status = 'running'
        RETURNING cancel_request
        """, [.integer(expiry), .integer(run.rawValue), .integer(owner.rawValue), .bytes(names)])
      guard rows.count == 1 else {
        guard let current = try self.ownerRow(db, run: run, locking: false) else {
          throw StoreError(.noSuchRun, "no run \(run) in \(self.location)")
        }
        throw RunFencing.stale(
          "heartbeat", run: run, token: owner, current: (current.token, current.host, current.pid, current.status),
          in: self.location)
      }
      return RunHeartbeat(expiresAt: StoreTimestamp(microseconds: expiry), cancelRequest: rows.isNull(0, 0) ? nil : rows.text(0, 0))
    }
  }

  public func takeOver(_ run: RunID, host: String, pid: Int32, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> RunLease?
  {
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withConnection { db in
      // One statement: the row's lock makes two take-overs take turns, and
      // the second finds the lease the first just took.
      let rows = try db.query(
        """
        UPDATE run SET owner = owner + 1, host = $1, pid = $2, owned_since = $3, lease_expires_at = $4
        WHERE id = $5 AND status = 'running' AND (lease_expires_at IS NULL OR lease_expires_at <= $3)
        RETURNING owner
        """,
        [.text(host), .integer(Int64(pid)), .integer(now.microseconds), .integer(expiry), .integer(run.rawValue)])
      if rows.count == 1 {
        return RunLease(run: run, token: ClaimToken(rows.int64(0, 0)), expiresAt: StoreTimestamp(microseconds: expiry))
      }
      guard try self.ownerRow(db, run: run, locking: false) != nil else {
        throw StoreError(.noSuchRun, "no run \(run) in \(self.location)")
      }
      return nil
    }
  }

  public func adopt(
    _ run: RunID, from token: ClaimToken, workflow: LuaString, plan: RunPlan, host: String, pid: Int32, lease: Duration,
    at now: StoreTimestamp
  ) throws(StoreError) -> RunLease? {
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    let (planned, needs) = try plan.columns()
    return try withConnection { db in
      let rows = try db.query(
        """
        UPDATE run SET owner = owner + 1, host = $1, pid = $2, owned_since = $3, lease_expires_at = $4, workflow = $5, plan = $6,
          plan_needs = $9
        WHERE id = $7 AND status = 'running' AND owner = $8
        RETURNING owner
        """,
        [.text(host), .integer(Int64(pid)), .integer(now.microseconds), .integer(expiry), .bytes(workflow.bytes), .bytes(planned),
         .integer(run.rawValue), .integer(token.rawValue), needs.map { .bytes($0) } ?? .null])
      if rows.count == 1 {
        return RunLease(run: run, token: ClaimToken(rows.int64(0, 0)), expiresAt: StoreTimestamp(microseconds: expiry))
      }
      guard try self.ownerRow(db, run: run, locking: false) != nil else {
        throw StoreError(.noSuchRun, "no run \(run) in \(self.location)")
      }
      return nil
    }
  }

  public func park(_ run: RunID, owner: ClaimToken, wakeAt: StoreTimestamp?, awaiting: [LuaString], at now: StoreTimestamp)
    throws(StoreError)
  {
    try withConnection { db in
      try db.transaction {
        try self.checkOwner(db, run: run, token: owner, "park")
        // parked_at stays NULL: it woke runs parked before run_await.
        try db.query(
          """
          UPDATE run SET status = 'parked', wake_at = $1, parked_at = NULL, lease_expires_at = NULL, running = NULL,
            host = '', pid = 0
          WHERE id = $2
          """, [wakeAt.map { .integer($0.microseconds) } ?? .null, .integer(run.rawValue)])
        try db.query("DELETE FROM run_await WHERE run = $1", [.integer(run.rawValue)])
        for name in Set(awaiting) {
          try db.query("INSERT INTO run_await (run, name) VALUES ($1, $2)", [.integer(run.rawValue), .bytes(name.bytes)])
        }
      }
    }
  }

  public func requestCancel(_ run: RunID, by: String, at now: StoreTimestamp) throws(StoreError) -> CancelRequestOutcome {
    try withConnection { db in
      try db.transaction {
        guard let current = try self.ownerRow(db, run: run, locking: true) else {
          throw StoreError(.noSuchRun, "no run \(run) in \(self.location)")
        }
        let waits = [RunStatus.queued.rawValue, RunStatus.parked.rawValue].contains(current.status)
        guard current.status == RunStatus.running.rawValue || waits else {
          throw RunFencing.finished(run, status: current.status, in: self.location)
        }
        // A queued or parked run has no process to ask: it is cancelled now.
        if waits || (current.leaseExpiresAt.map { $0 <= now.microseconds } ?? false) {
          try db.query(
            """
            UPDATE run SET status = 'cancelled', stopped_by = $1, finished_at = $2, lease_expires_at = NULL,
              cancel_request = NULL WHERE id = $3
            """, [.text(by), .integer(now.microseconds), .integer(run.rawValue)])
          return .cancelledNow
        }
        try db.query("UPDATE run SET cancel_request = $1 WHERE id = $2", [.text(by), .integer(run.rawValue)])
        return .requested
      }
    }
  }

  /// The owner columns of `run`, or nil if there is no such run; with
  /// `locking`, the row stays locked (shared) until the transaction ends.
  private func ownerRow(_ db: PostgresConnection, run: RunID, locking: Bool) throws
    -> (token: Int64, host: String, pid: Int64, status: String, leaseExpiresAt: Int64?)?
  {
    let rows = try db.query(
      "SELECT owner, host, pid, status, lease_expires_at FROM run WHERE id = $1\(locking ? " FOR SHARE" : "")",
      [.integer(run.rawValue)])
    guard rows.count == 1 else { return nil }
    return (rows.int64(0, 0), rows.text(0, 1), rows.int64(0, 2), rows.text(0, 3), rows.isNull(0, 4) ? nil : rows.int64(0, 4))
  }

  /// Throws unless the holder of `token` still owns `run` and it runs; the
  /// run's row stays locked until the transaction ends.
  private func checkOwner(_ db: PostgresConnection, run: RunID, token: ClaimToken, _ what: String) throws {
    guard let current = try ownerRow(db, run: run, locking: true) else {
      throw StoreError(.noSuchRun, "no run \(run) in \(location)")
    }
    guard current.token == token.rawValue, current.status == RunStatus.running.rawValue else {
      throw RunFencing.stale(what, run: run, token: token, current: (current.token, current.host, current.pid, current.status),
        in: location)
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

  public func runs(_ filter: RunFilter, limit: Int) throws(StoreError) -> [RunSummary] {
    var conditions: [String] = []
    var parameters: [PostgresValue] = [.integer(Int64(limit))]
    if let workflow = filter.workflow {
      parameters.append(.bytes(workflow.bytes))
      conditions.append("workflow = $\(parameters.count)")
    }
    if let status = filter.status {
      parameters.append(.text(status.rawValue))
      conditions.append("status = $\(parameters.count)")
    }
    if let since = filter.startedSince {
      parameters.append(.integer(since.microseconds))
      conditions.append("started_at >= $\(parameters.count)")
    }
    if let before = filter.before {
      parameters.append(.integer(before.rawValue))
      conditions.append("id < $\(parameters.count)")
    }
    let condition = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    return try withConnection { db in
      // The newest runs first, then their steps: counting only what is listed.
      let rows = try db.query(
        """
        WITH recent AS (SELECT * FROM run \(condition) ORDER BY id DESC LIMIT $1)
        SELECT \(RunColumns.record(of: "recent")),
          count(*) FILTER (WHERE step.status = 'succeeded'), count(*) FILTER (WHERE step.status = 'failed'),
          count(*) FILTER (WHERE step.status = 'skipped'), count(*) FILTER (WHERE step.status = 'reused')
        FROM recent LEFT JOIN step ON step.run = recent.id
        GROUP BY \(RunColumns.record(of: "recent")) ORDER BY recent.id DESC
        """, parameters)
      // The counts follow the run's columns.
      let counts = RunColumns.record.count
      var summaries: [RunSummary] = []
      for row in 0..<rows.count {
        summaries.append(
          RunSummary(
            run: try self.readRun(rows, row), succeeded: Int(rows.int64(row, counts)), failed: Int(rows.int64(row, counts + 1)),
            skipped: Int(rows.int64(row, counts + 2)), reused: Int(rows.int64(row, counts + 3))))
      }
      return summaries
    }
  }

  /// The columns `readRun` reads, in its order.
  static let runColumns = RunColumns.record(of: "run")


  /// The run in row `row` of `rows`, from the columns `runColumns` names.
  func readRun(_ rows: PostgresResult, _ row: Int) throws(StoreError) -> RunRecord {
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
      pid: try checked.processID(rows.int64(row, 9), "pid"), ownerToken: ClaimToken(rows.int64(row, 10)),
      ownedSince: try checked.time(rows.isNull(row, 11) ? nil : rows.int64(row, 11), "owned_since"),
      leaseExpiresAt: try checked.time(rows.isNull(row, 12) ? nil : rows.int64(row, 12), "lease_expires_at"),
      cancelRequest: rows.isNull(row, 13) ? nil : rows.text(row, 13), stoppedBy: rows.isNull(row, 14) ? nil : rows.text(row, 14),
      plan: try RunPlan.read(
        names: rows.isNull(row, 15) ? nil : rows.bytes(row, 15), needs: rows.isNull(row, 18) ? nil : rows.bytes(row, 18),
        store: location, run: id),
      running: try names(rows.isNull(row, 16) ? nil : rows.bytes(row, 16), "running", of: id),
      wakeAt: try checked.time(rows.isNull(row, 17) ? nil : rows.int64(row, 17), "wake_at"),
      force: try names(rows.isNull(row, 19) ? nil : rows.bytes(row, 19), "force", of: id))
  }

  /// Runs `body` with the connection, alone, connecting again first if the
  /// connection was lost; when the connection is lost during `body`, runs
  /// it again (told so by its second argument) on a new one, for up to
  /// `reconnectFor`. Every write here may be made twice: steps and outcomes
  /// are upserts and updates, and `beginRun` looks for its run first. Any
  /// failure becomes a `StoreError`, the one `explain` gives for a
  /// PostgreSQL error if it gives one.
  func withConnection<T: Sendable>(
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
  /// run again.
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

  /// The step names a run's column `column` holds (none if NULL).
  private func names(_ bytes: [UInt8]?, _ column: String, of run: RunID) throws(StoreError) -> [LuaString] {
    guard let bytes else { return [] }
    do {
      return try LuaValueCodec.decode(bytes).compactMap(\.luaStringValue)
    } catch {
      throw StoreError(.badValue, "store \(self.location): the \(column) of run \(run): \(error)")
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
