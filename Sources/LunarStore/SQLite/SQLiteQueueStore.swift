import LuaKit
import Synchronization

/// Durable ordered queues in the store's SQLite file, for workers on one
/// host. Every change is one `BEGIN IMMEDIATE` transaction: it holds the
/// file's write lock from its first statement, so claims (reading a queue's
/// head and taking it) are serialized across every process using the file.
public final class SQLiteQueueStore: QueueStore {
  /// The database file.
  public let path: String
  public var location: String { "sqlite:" + path }
  private let connection: Mutex<SQLiteDatabase>
  /// When claims last looked for an expired lease.
  private let expiryChecks = ExpiryChecks()

  /// Opens the store at `path` as `SQLiteRunStore` does (creating or
  /// migrating it as needed; the runs and the queues share the file).
  public init(path: String, createIfMissing: Bool = true, options: SQLiteRunStore.Options = .init()) throws(StoreError) {
    self.path = path
    self.connection = Mutex(try SQLiteStoreFile.open(path: path, createIfMissing: createIfMissing, options: options))
  }

  public func enqueue(
    queue: LuaString, action: LuaString, input: [UInt8], policy: QueuePolicy, firstAttempt: Int, at now: StoreTimestamp
  )
    throws(StoreError) -> EnqueuedJob
  {
    try QueueLimits.check(name: queue, "queue")
    try QueueLimits.check(name: action, "action")
    try QueueLimits.check(value: input, "input")
    return try withDatabase { db in
      try db.transaction(.immediate) {
        // The queue's row is written first: inside the write lock, its
        // counter is the one source of sequence numbers.
        guard
          case .integer(let sequence) = try db.scalar(
            """
            INSERT INTO queue (name, last_sequence) VALUES (?, 1)
            ON CONFLICT (name) DO UPDATE SET last_sequence = last_sequence + 1 RETURNING last_sequence
            """, [.blob(queue.bytes)])
        else { throw StoreError(.database, "store \(self.path): no sequence number for queue \(queue.quoted)") }
        // The job is its queue's head when no earlier one is unfinished.
        try db.run(
          """
          INSERT INTO job (queue, sequence, action, input, policy, status, attempts, enqueued_at, head, first_attempt)
          VALUES (?1, ?2, ?3, ?4, ?5, 'waiting', 0, ?6,
            NOT EXISTS (SELECT 1 FROM job h WHERE h.queue = ?1 AND h.status IN ('waiting', 'running')), ?7)
          """,
          [.blob(queue.bytes), .integer(sequence), .blob(action.bytes), .blob(input), .text(policy.rawValue),
           .integer(now.microseconds), .integer(Int64(max(1, firstAttempt)))])
        return EnqueuedJob(id: JobID(db.lastInsertedRowID), queue: queue, sequence: sequence)
      }
    }
  }

  public func claim(worker: WorkerID, queues: [LuaString]?, lease: Duration, lostLeaseLimit: Int, at now: StoreTimestamp)
    throws(StoreError) -> ClaimedJob?
  {
    let request = try ClaimRequest(worker: worker, queues: queues, lease: lease, lostLeaseLimit: lostLeaseLimit)
    if request.isEmpty { return nil }
    return try withDatabase { db in
      try db.transaction(.immediate) { try self.claim(request, at: now, in: db) }
    }
  }

  public func complete(
    job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp, thenClaimFor worker: WorkerID,
    queues: [LuaString]?, lease: Duration, lostLeaseLimit: Int
  ) throws(StoreError) -> ClaimedJob? {
    let request = try ClaimRequest(worker: worker, queues: queues, lease: lease, lostLeaseLimit: lostLeaseLimit)
    try outcome.checkSize()
    return try withDatabase { db in
      try db.transaction(.immediate) { () throws -> ClaimedJob? in
        try self.finish(job: job, token: token, outcome: outcome, at: now, in: db)
        return request.isEmpty ? nil : try self.claim(request, at: now, in: db)
      }
    }
  }

  /// Claims the head `request` asks for, inside the caller's transaction:
  /// the oldest waiting head (`head` marks a queue's first unfinished job)
  /// of a queue that is not halted, or a running job whose lease expired
  /// (always its queue's head), looked for when no head waits and at least
  /// once a `expiryCheckInterval`, as on PostgreSQL. An expired job whose
  /// lost leases reach the request's limit is abandoned, and the claim
  /// looks again.
  private func claim(_ request: ClaimRequest, at now: StoreTimestamp, in db: SQLiteDatabase) throws -> ClaimedJob? {
    while true {
      guard let head = try findHead(request, at: now, in: db) else { return nil }
      if head.expired && head.lostLeases + 1 >= request.lostLeaseLimit {
        try abandon(head.id, token: head.claim, lostLeases: head.lostLeases + 1, at: now, in: db)
        continue
      }
      return try take(head, request, at: now, in: db)
    }
  }

  /// A job a claim may take: its columns, and whether its lease expired.
  private struct Head {
    let id: Int64
    let queue: [UInt8]
    let sequence: Int64
    let action: [UInt8]
    let input: [UInt8]
    let claim: ClaimToken
    let lostLeases: Int
    let expired: Bool
  }

  /// The job `claim` would take, inside the caller's transaction.
  private func findHead(_ request: ClaimRequest, at now: StoreTimestamp, in db: SQLiteDatabase) throws -> Head? {
    let names: [SQLiteValue] = (request.queues ?? []).map { .blob($0.bytes) }
    let filter =
      request.queues == nil
      ? "AND substr(j.queue, 1, \(QueueLimits.privateQueuePrefix.count)) <> ?"
      : "AND j.queue IN (" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
    let filtered: [SQLiteValue] = request.queues == nil ? [.blob(QueueLimits.privateQueuePrefix)] : names
    var head: Head?
    func find(_ condition: String, _ parameters: [SQLiteValue]) throws {
      try db.query(
        """
        SELECT j.id, j.queue, j.sequence, j.action, j.input, coalesce(j.claim, 0), j.lost_leases, j.status = 'running'
        FROM job j JOIN queue q ON q.name = j.queue
        WHERE \(condition) AND q.halted_by IS NULL \(filter) ORDER BY j.id LIMIT 1
        """, parameters + filtered
      ) { row in
        let checked = StoredRow(store: self.path, row: "job \(row.int64(0))")
        head = Head(
          id: row.int64(0), queue: row.blob(1), sequence: row.int64(2), action: row.blob(3), input: row.blob(4),
          claim: ClaimToken(row.int64(5)), lostLeases: try checked.count(row.int64(6), "lost_leases"),
          expired: row.int64(7) != 0)
      }
    }
    let expired = "j.status = 'running' AND j.lease_expires_at <= ?"
    let due = expiryChecks.due()
    if due { try find(expired, [.integer(now.microseconds)]) }
    if head == nil { try find("j.head = 1 AND j.status = 'waiting'", []) }
    if head == nil && !due {
      expiryChecks.checked()
      try find(expired, [.integer(now.microseconds)])
    }
    return head
  }

  /// Fails the running job `id`, whose `lostLeases`th lease expired, as
  /// abandoned, inside the caller's transaction.
  private func abandon(_ id: Int64, token: ClaimToken, lostLeases: Int, at now: StoreTimestamp, in db: SQLiteDatabase) throws {
    let error = Array(QueueLimits.abandonment(lostLeases: lostLeases).utf8)
    try finish(job: JobID(id), token: token, outcome: .failed(error: error), at: now, in: db)
    try db.run("UPDATE job SET lost_leases = ? WHERE id = ?", [.integer(Int64(lostLeases)), .integer(id)])
  }

  /// Claims `head` for the request's worker, inside the caller's transaction.
  private func take(_ head: Head, _ request: ClaimRequest, at now: StoreTimestamp, in db: SQLiteDatabase) throws -> ClaimedJob {
    let expiry = now.microseconds + request.leaseMicroseconds
    var claimed: (attempts: Int64, claim: Int64)?
    try db.query(
      """
      UPDATE job SET status = 'running', attempts = attempts + 1,
        claim = (SELECT coalesce(max(claim), 0) + 1 FROM job WHERE claim IS NOT NULL), worker = ?, started_at = ?,
        lease_expires_at = ?, lost_leases = lost_leases + (status = 'running')
      WHERE id = ? RETURNING first_attempt + attempts - 1, claim
      """, [.text(request.worker.name), .integer(now.microseconds), .integer(expiry), .integer(head.id)]
    ) { row in claimed = (row.int64(0), row.int64(1)) }
    guard let claimed else { throw StoreError(.database, "store \(self.path): job \(head.id) vanished while claimed") }
    return ClaimedJob(
      id: JobID(head.id), queue: LuaString(bytes: head.queue), sequence: head.sequence,
      action: LuaString(bytes: head.action), input: head.input, attempt: Int(claimed.attempts),
      token: ClaimToken(claimed.claim), leaseExpiresAt: StoreTimestamp(microseconds: expiry))
  }

  public func heartbeat(job: JobID, token: ClaimToken, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> StoreTimestamp
  {
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withDatabase { db in
      try db.transaction(.immediate) {
        try db.run(
          "UPDATE job SET lease_expires_at = ? WHERE id = ? AND status = 'running' AND claim = ?",
          [.integer(expiry), .integer(job.rawValue), .integer(token.rawValue)])
        guard db.changes == 1 else {
          throw QueueRefusal.staleClaim(try self.readJob(db, id: job), id: job, token: token, "heartbeat", in: self.location)
        }
        return StoreTimestamp(microseconds: expiry)
      }
    }
  }

  public func release(job: JobID, token: ClaimToken, at now: StoreTimestamp) throws(StoreError) {
    try withDatabase { db in
      try db.transaction(.immediate) {
        // A running job is its queue's head: it stays marked, and waits.
        try db.run(
          "UPDATE job SET status = 'waiting', lease_expires_at = NULL WHERE id = ? AND status = 'running' AND claim = ?",
          [.integer(job.rawValue), .integer(token.rawValue)])
        guard db.changes == 1 else {
          throw QueueRefusal.staleClaim(try self.readJob(db, id: job), id: job, token: token, "release", in: self.location)
        }
      }
    }
  }

  public func complete(job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp) throws(StoreError) {
    try outcome.checkSize()
    try withDatabase { db in
      try db.transaction(.immediate) { try self.finish(job: job, token: token, outcome: outcome, at: now, in: db) }
    }
  }

  /// Records how `job` ended, inside the caller's transaction.
  private func finish(job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp, in db: SQLiteDatabase)
    throws
  {
    let (output, error) = outcome.columns
    var finished: (queue: [UInt8], policy: String)?
    try db.query(
      """
      UPDATE job SET status = ?, finished_at = ?, lease_expires_at = NULL, output = ?, error = ?, head = 0
      WHERE id = ? AND status = 'running' AND claim = ? RETURNING queue, policy
      """,
      [.text(outcome.status.rawValue), .integer(now.microseconds), output.map { .blob($0) } ?? .null,
       error.map { .blob($0) } ?? .null, .integer(job.rawValue), .integer(token.rawValue)]
    ) { row in finished = (row.blob(0), row.text(1)) }
    guard let finished else {
      throw QueueRefusal.staleClaim(try readJob(db, id: job), id: job, token: token, "completion", in: location)
    }
    if outcome.status == .failed && finished.policy == QueuePolicy.stop.rawValue {
      try db.run("UPDATE queue SET halted_by = ? WHERE name = ?", [.integer(job.rawValue), .blob(finished.queue)])
    }
    try markHead(of: finished.queue, in: db)
  }

  /// Marks the first unfinished job of `queue`, if any, as its head, after
  /// its head finished or was cancelled.
  private func markHead(of queue: [UInt8], in db: SQLiteDatabase) throws {
    try db.run(
      """
      UPDATE job SET head = 1 WHERE id = (
        SELECT h.id FROM job h WHERE h.queue = ? AND h.status IN ('waiting', 'running') ORDER BY h.sequence LIMIT 1)
      """, [.blob(queue)])
  }

  public func cancel(job: JobID, at now: StoreTimestamp) throws(StoreError) {
    try withDatabase { db in
      try db.transaction(.immediate) {
        var queue: [UInt8]?
        try db.query(
          "UPDATE job SET status = 'cancelled', finished_at = ?, head = 0 WHERE id = ? AND status = 'waiting' RETURNING queue",
          [.integer(now.microseconds), .integer(job.rawValue)]
        ) { row in queue = row.blob(0) }
        guard let queue else { throw QueueRefusal.notWaiting(try self.readJob(db, id: job), id: job, in: self.location) }
        try self.markHead(of: queue, in: db)
      }
    }
  }

  public func resume(queue: LuaString) throws(StoreError) -> Bool {
    try withDatabase { db in
      try db.transaction(.immediate) {
        guard let halted = try db.scalar("SELECT halted_by FROM queue WHERE name = ?", [.blob(queue.bytes)]) else {
          throw QueueRefusal.noSuchQueue(queue, in: self.location)
        }
        try db.run("UPDATE queue SET halted_by = NULL WHERE name = ?", [.blob(queue.bytes)])
        return halted != .null
      }
    }
  }

  public func job(_ id: JobID) throws(StoreError) -> JobRecord? {
    try withDatabase { db in try self.readJob(db, id: id) }
  }

  public func job(queue: LuaString, sequence: Int64) throws(StoreError) -> JobRecord? {
    try withDatabase { db in
      var found: JobRecord?
      try db.query(
        "SELECT \(JobRecord.columns) FROM job WHERE queue = ? AND sequence = ?", [.blob(queue.bytes), .integer(sequence)]
      ) { row in found = try self.readJob(row) }
      return found
    }
  }

  public func queues() throws(StoreError) -> [QueueSummary] {
    try withDatabase { db in
      var summaries: [QueueSummary] = []
      // At most one job of a queue runs, so the join adds no rows.
      try db.query(
        """
        SELECT q.name, q.last_sequence, q.halted_by,
          (SELECT count(*) FROM job w WHERE w.queue = q.name AND w.status = 'waiting'),
          (SELECT min(w.enqueued_at) FROM job w WHERE w.queue = q.name AND w.status = 'waiting'),
          r.id, r.worker, r.lease_expires_at
        FROM queue q LEFT JOIN job r ON r.queue = q.name AND r.status = 'running'
        ORDER BY q.name
        """
      ) { row in
        let name = LuaString(bytes: row.blob(0))
        let checked = StoredRow(store: self.path, row: "queue \(name.quoted)")
        summaries.append(
          QueueSummary(
            name: name, submitted: Int64(try checked.count(row.int64(1), "last_sequence")), waiting: Int(row.int64(3)),
            running: row.isNull(5) ? nil : JobID(row.int64(5)), runningWorker: row.isNull(6) ? nil : WorkerID(row.text(6)),
            haltedBy: row.isNull(2) ? nil : JobID(row.int64(2)),
            oldestWaitingSince: try checked.time(row.isNull(4) ? nil : row.int64(4), "enqueued_at"),
            runningLeaseExpiresAt: try checked.time(row.isNull(7) ? nil : row.int64(7), "lease_expires_at")))
      }
      return summaries
    }
  }

  public func jobs(queue: LuaString, limit: Int) throws(StoreError) -> [JobRecord] {
    try QueueLimits.check(limit: limit)
    return try withDatabase { db in
      var jobs: [JobRecord] = []
      try db.query(
        "SELECT \(JobRecord.columns) FROM job WHERE queue = ? ORDER BY sequence DESC LIMIT ?",
        [.blob(queue.bytes), .integer(Int64(limit))]
      ) { row in jobs.append(try self.readJob(row)) }
      return jobs
    }
  }

  private func readJob(_ db: SQLiteDatabase, id: JobID) throws -> JobRecord? {
    var found: JobRecord?
    try db.query("SELECT \(JobRecord.columns) FROM job WHERE id = ?", [.integer(id.rawValue)]) { row in
      found = try self.readJob(row)
    }
    return found
  }

  /// A job from the columns `JobRecord.columns` names, in that order.
  private func readJob(_ row: SQLiteStatement) throws(StoreError) -> JobRecord {
    let id = JobID(row.int64(0))
    let (policy, status) = try JobRecord.decode(policy: row.text(5), status: row.text(6), of: id, in: path)
    let checked = StoredRow(store: path, row: "job \(id)")
    func time(_ column: Int32, _ name: String) throws(StoreError) -> StoreTimestamp? {
      try checked.time(row.isNull(column) ? nil : row.int64(column), name)
    }
    return JobRecord(
      id: id, queue: LuaString(bytes: row.blob(1)), sequence: try checked.sequence(row.int64(2), "sequence"),
      action: LuaString(bytes: row.blob(3)), input: row.blob(4), policy: policy, status: status,
      attempts: try checked.count(row.int64(7), "attempts"), worker: row.isNull(8) ? nil : WorkerID(row.text(8)),
      claim: row.isNull(9) ? nil : ClaimToken(row.int64(9)), enqueuedAt: try checked.time(row.int64(10), "enqueued_at"),
      startedAt: try time(11, "started_at"), leaseExpiresAt: try time(12, "lease_expires_at"),
      finishedAt: try time(13, "finished_at"), output: row.isNull(14) ? nil : row.blob(14),
      error: row.isNull(15) ? nil : row.blob(15))
  }

  /// Runs `body` with the connection, alone; any failure becomes a
  /// `StoreError`.
  private func withDatabase<T: Sendable>(_ body: (SQLiteDatabase) throws -> T) throws(StoreError) -> T {
    let path = self.path
    return try connection.withLock { (db) throws(StoreError) -> T in
      do {
        return try body(db)
      } catch {
        throw StoreError(error, path: path)
      }
    }
  }
}
