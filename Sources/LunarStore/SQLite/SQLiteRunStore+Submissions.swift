import LuaKit

extension SQLiteRunStore: SubmittedRunStore {
  /// The columns `readSubmitted` reads, unqualified (for RETURNING).
  static let submittedColumns = RunColumns.submitted

  public func submit(_ submission: RunSubmission) throws(StoreError) -> SubmittedRun {
    try submission.check()
    let arguments = try Self.encode(submission.arguments.map { .string(LuaString($0)) }, root: "arguments")
    return try withDatabase { db in
      try db.transaction {
        if let key = submission.key {
          var found: SubmittedRun?
          try db.query("SELECT \(Self.submittedColumns) FROM run WHERE submit_key = ?", [.blob(key.bytes)]) { row in
            found = try self.readSubmitted(row, isNew: false)
          }
          if let found { return found }
        }
        if let resumed = submission.resumes {
          var exists = false
          try db.query("SELECT 1 FROM run WHERE id = ?", [.integer(resumed.rawValue)]) { _ in exists = true }
          guard exists else { throw StoreError(.noSuchRun, "no run \(resumed) in \(self.location) to resume") }
        }
        let id = try Self.insertQueuedRun(db, submission, arguments: arguments)
        var made: SubmittedRun?
        try db.query("SELECT \(Self.submittedColumns) FROM run WHERE id = ?", [.integer(id.rawValue)]) { row in
          made = try self.readSubmitted(row, isNew: true)
        }
        guard let made else { throw StoreError(.database, "store \(self.path): run \(id) vanished as it was submitted") }
        return made
      }
    }
  }

  public func submittedRun(_ id: RunID) throws(StoreError) -> SubmittedRun? {
    try withDatabase { db in
      var found: SubmittedRun?
      try db.query(
        "SELECT \(Self.submittedColumns) FROM run WHERE id = ? AND file_fingerprint IS NOT NULL", [.integer(id.rawValue)]
      ) { row in found = try self.readSubmitted(row, isNew: false) }
      return found
    }
  }

  public func claimQueuedRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError)
    -> SubmittedRun?
  {
    // One statement: the run found queued is the run changed, whatever
    // other workers do at the same time.
    try takeRun(
      host: host, pid: pid, lease: lease, at: time, setting: ", status = 'running', started_at = ?3",
      chosenBy: """
        SELECT q.id FROM run q WHERE q.status = 'queued' AND NOT (
          q.schedule IS NOT NULL
          AND EXISTS (SELECT 1 FROM schedule s WHERE s.name = q.schedule AND s.overlap <> 'allow')
          AND EXISTS (SELECT 1 FROM run r WHERE r.schedule = q.schedule AND r.status = 'running'))
        ORDER BY q.id LIMIT 1
        """)
  }

  public func takeOverExpiredRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError)
    -> SubmittedRun?
  {
    try takeRun(
      host: host, pid: pid, lease: lease, at: time, setting: ", takeovers = takeovers + 1",
      chosenBy: """
        SELECT id FROM run WHERE status = 'running' AND lease_expires_at <= ?3 AND file_fingerprint IS NOT NULL
        ORDER BY id LIMIT 1
        """)
  }

  public func claimDueParkedRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError)
    -> SubmittedRun?
  {
    try takeRun(
      host: host, pid: pid, lease: lease, at: time, setting: ", status = 'running', wake_at = NULL, parked_at = NULL",
      chosenBy: """
        SELECT r.id FROM run r WHERE r.status = 'parked' AND (r.wake_at <= ?3
          OR EXISTS (SELECT 1 FROM run_signal s WHERE s.run = r.id AND (s.sent_at >= r.parked_at
            OR EXISTS (SELECT 1 FROM run_await a WHERE a.run = r.id AND a.name = s.name))))
        ORDER BY r.id LIMIT 1
        """)
  }

  /// Gives the run `chosen` selects to `host`/`pid` in one statement: one
  /// more fencing token, held until `time + lease`, with `setting`'s other
  /// changes. Both may use ?1 (host), ?2 (pid), ?3 (time) and ?4 (the lease's end).
  private func takeRun(
    host: String, pid: Int32, lease: Duration, at time: StoreTimestamp, setting: String, chosenBy chosen: String
  ) throws(StoreError) -> SubmittedRun? {
    let expiry = time.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withDatabase { db in
      try db.transaction(.immediate) {
        var taken: SubmittedRun?
        try db.query(
          """
          UPDATE run SET owner = owner + 1, host = ?1, pid = ?2, owned_since = ?3, lease_expires_at = ?4\(setting)
          WHERE id = (\(chosen))
          RETURNING \(Self.submittedColumns)
          """, [.text(host), .integer(Int64(pid)), .integer(time.microseconds), .integer(expiry)]
        ) { row in taken = try self.readSubmitted(row, isNew: false) }
        return taken
      }
    }
  }

  /// Inserts `submission` as a queued run inside the caller's transaction.
  static func insertQueuedRun(_ db: SQLiteDatabase, _ submission: RunSubmission, arguments: [UInt8]) throws -> RunID {
    let force = try submission.forceColumn()
    try db.run(
      """
      INSERT INTO run (workflow, file, arguments, status, started_at, host, pid, submit_key, file_fingerprint, schedule,
        resumed_from, force)
      VALUES (?, ?, ?, 'queued', ?, '', 0, ?, ?, ?, ?, ?)
      """,
      [
        .blob(submission.provisionalWorkflow.bytes), .text(submission.file), .blob(arguments),
        .integer(submission.submittedAt.microseconds), submission.key.map { .blob($0.bytes) } ?? .null,
        .blob(submission.fileFingerprint.bytes), submission.schedule.map { .blob($0.bytes) } ?? .null,
        submission.resumes.map { .integer($0.rawValue) } ?? .null, force.map { .blob($0) } ?? .null,
      ])
    return RunID(db.lastInsertedRowID)
  }

  /// A submitted run from the columns `submittedColumns` names.
  func readSubmitted(_ row: SQLiteStatement, isNew: Bool) throws(StoreError) -> SubmittedRun {
    let first = Int32(RunColumns.firstSubmissionColumn)
    return SubmittedRun(
      run: try readRun(row), fileFingerprint: row.isNull(first) ? nil : Fingerprint(bytes: row.blob(first)),
      key: row.isNull(first + 1) ? nil : LuaString(bytes: row.blob(first + 1)),
      schedule: row.isNull(first + 2) ? nil : LuaString(bytes: row.blob(first + 2)), isNew: isNew,
      takeovers: Int(row.int64(first + 3)))
  }
}
