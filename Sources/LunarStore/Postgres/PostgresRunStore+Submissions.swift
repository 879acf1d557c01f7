import LuaKit

extension PostgresRunStore: SubmittedRunStore {
  /// The columns `readSubmitted` reads, unqualified (for RETURNING).
  static let submittedColumns = RunColumns.submitted

  public func submit(_ submission: RunSubmission) throws(StoreError) -> SubmittedRun {
    try submission.check()
    let arguments = try Self.encode(submission.arguments.map { .string(LuaString($0)) }, root: "arguments")
    return try withConnection { db in
      if let resumed = submission.resumes, try db.query("SELECT 1 FROM run WHERE id = $1", [.integer(resumed.rawValue)]).count == 0 {
        throw StoreError(.noSuchRun, "no run \(resumed) in \(self.location) to resume")
      }
      // A lost connection may have committed the insert: with a key it is
      // found again; without one a retry may queue a second run.
      let rows = try db.query(
        """
        \(Self.insertQueuedRun)
        ON CONFLICT (submit_key) WHERE submit_key IS NOT NULL DO NOTHING
        RETURNING \(Self.submittedColumns)
        """, Self.insertParameters(submission, arguments: arguments))
      if rows.count == 1 { return try self.readSubmitted(rows, 0, isNew: true) }
      let existing = try db.query(
        "SELECT \(Self.submittedColumns) FROM run WHERE submit_key = $1", [submission.key.map { .bytes($0.bytes) } ?? .null])
      guard existing.count == 1 else {
        throw StoreError(.database, "store \(self.location): the run of key \(submission.key?.quoted ?? "") vanished")
      }
      return try self.readSubmitted(existing, 0, isNew: false)
    }
  }

  public func submittedRun(_ id: RunID) throws(StoreError) -> SubmittedRun? {
    try withConnection { db in
      let rows = try db.query(
        "SELECT \(Self.submittedColumns) FROM run WHERE id = $1 AND file_fingerprint IS NOT NULL", [.integer(id.rawValue)])
      return rows.count == 0 ? nil : try self.readSubmitted(rows, 0, isNew: false)
    }
  }

  public func claimQueuedRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError)
    -> SubmittedRun?
  {
    try takeRun(
      host: host, pid: pid, lease: lease, at: time, setting: ", status = 'running', started_at = $3",
      still: "status = 'queued'",
      chosenBy: """
        SELECT q.id FROM run q WHERE q.status = 'queued' AND NOT (
          q.schedule IS NOT NULL
          AND EXISTS (SELECT 1 FROM schedule s WHERE s.name = q.schedule AND s.overlap <> 'allow')
          AND EXISTS (SELECT 1 FROM run r WHERE r.schedule = q.schedule AND r.status = 'running'))
        ORDER BY q.id LIMIT 1 FOR UPDATE SKIP LOCKED
        """)
  }

  public func takeOverExpiredRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError)
    -> SubmittedRun?
  {
    // A heartbeat that renewed the lease meanwhile keeps the run its owner's.
    try takeRun(
      host: host, pid: pid, lease: lease, at: time, setting: ", takeovers = takeovers + 1",
      still: "status = 'running' AND lease_expires_at <= $3",
      chosenBy: """
        SELECT id FROM run WHERE status = 'running' AND lease_expires_at <= $3 AND file_fingerprint IS NOT NULL
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED
        """)
  }

  public func claimDueParkedRun(host: String, pid: Int32, lease: Duration, at time: StoreTimestamp) throws(StoreError)
    -> SubmittedRun?
  {
    try takeRun(
      host: host, pid: pid, lease: lease, at: time, setting: ", status = 'running', wake_at = NULL, parked_at = NULL",
      still: "status = 'parked'",
      chosenBy: """
        SELECT r.id FROM run r WHERE r.status = 'parked' AND (r.wake_at <= $3
          OR EXISTS (SELECT 1 FROM run_signal s WHERE s.run = r.id AND (s.sent_at >= r.parked_at
            OR EXISTS (SELECT 1 FROM run_await a WHERE a.run = r.id AND a.name = s.name))))
        ORDER BY r.id LIMIT 1 FOR UPDATE SKIP LOCKED
        """)
  }

  /// Gives the run `chosen` selects to `host`/`pid` in one statement: one
  /// more fencing token, held until `time + lease`, with `setting`'s other
  /// changes, if the locked row is `still` so. SKIP LOCKED in `chosen` lets
  /// concurrent workers take different runs. All three may use $1 (host),
  /// $2 (pid), $3 (time) and $4 (the lease's end).
  private func takeRun(
    host: String, pid: Int32, lease: Duration, at time: StoreTimestamp, setting: String, still: String,
    chosenBy chosen: String
  ) throws(StoreError) -> SubmittedRun? {
    let expiry = time.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withConnection { db in
      let rows = try db.query(
        """
        UPDATE run SET owner = owner + 1, host = $1, pid = $2, owned_since = $3, lease_expires_at = $4\(setting)
        WHERE \(still) AND id = (\(chosen))
        RETURNING \(Self.submittedColumns)
        """, [.text(host), .integer(Int64(pid)), .integer(time.microseconds), .integer(expiry)])
      return rows.count == 0 ? nil : try self.readSubmitted(rows, 0, isNew: false)
    }
  }

  /// The parameters $1...$7 of an insert of `submission` as a queued run.
  /// The statement that records a submission as a queued run, its
  /// parameters `insertParameters`.
  static let insertQueuedRun = """
    INSERT INTO run (workflow, file, arguments, status, started_at, host, pid, submit_key, file_fingerprint, schedule,
      resumed_from, force)
    VALUES ($1, $2, $3, 'queued', $4, '', 0, $5, $6, $7, $8, $9)
    """

  static func insertParameters(_ submission: RunSubmission, arguments: [UInt8]) throws(StoreError) -> [PostgresValue] {
    [
      .bytes(submission.provisionalWorkflow.bytes), .text(submission.file), .bytes(arguments),
      .integer(submission.submittedAt.microseconds), submission.key.map { .bytes($0.bytes) } ?? .null,
      .bytes(submission.fileFingerprint.bytes), submission.schedule.map { .bytes($0.bytes) } ?? .null,
      submission.resumes.map { .integer($0.rawValue) } ?? .null, try submission.forceColumn().map { .bytes($0) } ?? .null,
    ]
  }

  /// A submitted run from row `row`, from the columns `submittedColumns` names.
  func readSubmitted(_ rows: PostgresResult, _ row: Int, isNew: Bool) throws(StoreError) -> SubmittedRun {
    let first = RunColumns.firstSubmissionColumn
    return SubmittedRun(
      run: try readRun(rows, row), fileFingerprint: rows.isNull(row, first) ? nil : Fingerprint(bytes: rows.bytes(row, first)),
      key: rows.isNull(row, first + 1) ? nil : LuaString(bytes: rows.bytes(row, first + 1)),
      schedule: rows.isNull(row, first + 2) ? nil : LuaString(bytes: rows.bytes(row, first + 2)), isNew: isNew,
      takeovers: Int(rows.int64(row, first + 3)))
  }
}
