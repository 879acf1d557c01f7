import LuaKit
import Synchronization

/// Durable ordered queues on a PostgreSQL server, for workers on any number
/// of hosts, in the same schema as the runs.
///
/// A claim is one statement: it picks each queue's head (the unfinished job
/// of lowest sequence) and locks the oldest claimable one with
/// `FOR UPDATE SKIP LOCKED`, then takes it. Two workers after the same head
/// never both get it: the second skips the locked row, or, once the first
/// has committed, finds on locking the row's newest version that it is no
/// longer claimable and drops it. A job later in a queue is only ever a
/// candidate when the statement's snapshot shows every earlier job finished,
/// which is final.
///
/// Every enqueue, completion, cancellation and resumption sends a
/// notification on the channel `lunar_queue` (`notificationChannel`) when
/// it commits, its payload the queue's name in hex, a space, and the
/// store's schema (stores in other schemas of one database share the
/// channel): an idle worker can `LISTEN lunar_queue` instead of polling
/// (`waitForWork`). A notification is a hint to claim, never a promise of
/// work.
public final class PostgresQueueStore: QueueStore {
  /// The channel notified when a queue may have work.
  public static let notificationChannel = "lunar_queue"

  /// The queue connection's planner setting. A claim reads a partial index
  /// whose live entries are few (one per queue) but which fills with dead
  /// ones, a finished job's each, until vacuum. Only a plain index scan
  /// marks them dead as it passes, so the next claim skips them; a bitmap
  /// scan, which the planner prefers for a table it has not analysed yet,
  /// reads every one on every claim, and a backlog drains in N² time.
  static let sessionSettings = "-c enable_bitmapscan=off"

  /// When claims last looked for a job whose lease expired.
  private let expiryChecks = ExpiryChecks()

  /// The server's URL, any password hidden.
  public let location: String
  private let connection: Mutex<PostgresConnection>
  /// A second connection, made on the first `waitForWork`, that listens on
  /// `notificationChannel` (the first is shared by every call and cannot
  /// wait).
  private let listener: PostgresListener

  /// Connects to the server `url` names as `PostgresRunStore` does (creating
  /// or migrating the store as needed; the runs and the queues share it).
  /// - Parameter location: `url` as messages show it (without its password).
  public init(url: String, location: String, createIfMissing: Bool = true) throws(StoreError) {
    self.location = location
    listener = PostgresListener(url: url, location: location, channels: [Self.notificationChannel])
    self.connection = Mutex(
      try PostgresStoreSchema.connect(
        url: url, location: location, createIfMissing: createIfMissing, serverOptions: Self.sessionSettings))
  }

  public func enqueue(
    queue: LuaString, action: LuaString, input: [UInt8], policy: QueuePolicy, firstAttempt: Int, at now: StoreTimestamp
  )
    throws(StoreError) -> EnqueuedJob
  {
    try QueueLimits.check(name: queue, "queue")
    try QueueLimits.check(name: action, "action")
    try QueueLimits.check(value: input, "input")
    return try withConnection { db in
      try db.transaction {
        // The upsert locks the queue's row until the job is committed, so
        // concurrent submitters get the next numbers in turn, and a job is
        // visible before any later one of its queue. A completion locks
        // the row too: the next statement, which reads afresh, sees
        // whether one finished the queue's last unfinished job.
        let sequence = try db.query(
          """
          INSERT INTO queue (name, last_sequence) VALUES ($1, 1)
          ON CONFLICT (name) DO UPDATE SET last_sequence = queue.last_sequence + 1 RETURNING last_sequence
          """, [.bytes(queue.bytes)], prepared: true
        ).int64(0, 0)
        // The job is its queue's head when no earlier one is unfinished.
        let rows = try db.query(
          """
          INSERT INTO job (queue, sequence, action, input, policy, status, attempts, enqueued_at, head, first_attempt)
          SELECT $1, $2, $3, $4, $5, 'waiting', 0, $6,
            NOT EXISTS (SELECT 1 FROM job h WHERE h.queue = $1 AND h.status IN ('waiting', 'running')), $7
          FROM (SELECT pg_notify('\(Self.notificationChannel)', encode($1, 'hex') || ' ' || current_schema())) AS notified
          RETURNING id
          """,
          [.bytes(queue.bytes), .integer(sequence), .bytes(action.bytes), .bytes(input), .text(policy.rawValue),
           .integer(now.microseconds), .integer(Int64(max(1, firstAttempt)))], prepared: true)
        return EnqueuedJob(id: JobID(rows.int64(0, 0)), queue: queue, sequence: sequence)
      }
    }
  }

  public func claim(worker: WorkerID, queues: [LuaString]?, lease: Duration, lostLeaseLimit: Int, at now: StoreTimestamp)
    throws(StoreError) -> ClaimedJob?
  {
    let request = try ClaimRequest(worker: worker, queues: queues, lease: lease, lostLeaseLimit: lostLeaseLimit)
    if request.isEmpty { return nil }
    return try withConnection { db in try self.claim(request, at: now, on: db) }
  }

  public func complete(
    job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp, thenClaimFor worker: WorkerID,
    queues: [LuaString]?, lease: Duration, lostLeaseLimit: Int
  ) throws(StoreError) -> ClaimedJob? {
    let request = try ClaimRequest(worker: worker, queues: queues, lease: lease, lostLeaseLimit: lostLeaseLimit)
    try outcome.checkSize()
    return try withConnection { db in
      // The claim's statement sees the completion made before it in the
      // transaction, so the job's successor may be the head it takes.
      try db.transaction { () throws -> ClaimedJob? in
        try self.finish(job: job, token: token, outcome: outcome, at: now, on: db)
        return request.isEmpty ? nil : try self.claim(request, at: now, on: db)
      }
    }
  }

  /// Claims the head `request` asks for: the oldest waiting head (`head`
  /// marks a queue's first unfinished job) whose queue is not halted, read
  /// from a partial index, so a claim costs the same whatever the number of
  /// queues and jobs. A running job whose lease expired (always its queue's
  /// head) is looked for when no head waits, and at least once a
  /// `ExpiryChecks.interval` (its index holds every finished job's lease
  /// until vacuum): a lost worker's job is claimed again within a second of
  /// its lease's end. Before taking an expired job, the claim abandons
  /// those whose lost leases reach the request's limit.
  private func claim(_ request: ClaimRequest, at now: StoreTimestamp, on db: PostgresConnection) throws -> ClaimedJob? {
    let names: [PostgresValue] = request.queues.map { $0.map { .bytes($0.bytes) } } ?? [.bytes(QueueLimits.privateQueuePrefix)]
    let expiry = now.microseconds + request.leaseMicroseconds
    // The limit is a number of ours, written into the statement.
    let expired = "j.status = 'running' AND j.lease_expires_at <= $1 AND j.lost_leases + 1 < \(request.lostLeaseLimit)"
    let due = expiryChecks.due()
    if due {
      try abandonPoisoned(request, names, at: now, on: db)
      if let job = try take(expired, request, names, now, expiry, on: db) { return job }
    }
    if let job = try take("j.head AND j.status = 'waiting'", request, names, now, expiry, on: db) { return job }
    if due { return nil }
    expiryChecks.checked()
    // An abandoned job's successor may be a waiting head now.
    if try abandonPoisoned(request, names, at: now, on: db),
      let job = try take("j.head AND j.status = 'waiting'", request, names, now, expiry, on: db)
    {
      return job
    }
    return try take(expired, request, names, now, expiry, on: db)
  }

  /// The condition that keeps a claim to the request's queues, whose names
  /// are the parameters from `$firstParameter`; with no queue named, to
  /// every queue but the private ones, whose prefix is that parameter.
  private static func queueFilter(_ request: ClaimRequest, firstParameter: Int) -> String {
    guard let queues = request.queues else {
      return "AND substring(j.queue FROM 1 FOR \(QueueLimits.privateQueuePrefix.count)) <> $\(firstParameter)"
    }
    return "AND j.queue IN (" + queues.indices.map { "$\($0 + firstParameter)" }.joined(separator: ", ") + ")"
  }

  /// Fails as abandoned each running job of the request's queues whose
  /// lease expired and was its `lostLeaseLimit`th lost one, each in a
  /// transaction of its own unless the caller's is open; true if any was.
  @discardableResult
  private func abandonPoisoned(_ request: ClaimRequest, _ names: [PostgresValue], at now: StoreTimestamp, on db: PostgresConnection)
    throws -> Bool
  {
    let filter = Self.queueFilter(request, firstParameter: 2)
    var abandoned = false
    // Each pass abandons a job for good or finds it gone: bounded anyway.
    for _ in 0..<1_000 {
      let rows = try db.query(
        """
        SELECT j.id, j.claim, j.lost_leases FROM job j
        WHERE j.status = 'running' AND j.lease_expires_at <= $1 AND j.lost_leases + 1 >= \(request.lostLeaseLimit) \(filter)
          AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.name = j.queue AND q.halted_by IS NOT NULL)
        ORDER BY j.id LIMIT 1
        """, [.integer(now.microseconds)] + names, prepared: true)
      guard rows.count == 1 else { return abandoned }
      let (job, token) = (JobID(rows.int64(0, 0)), ClaimToken(rows.int64(0, 1)))
      let lost = try StoredRow(store: location, row: "job \(job)").count(rows.int64(0, 2), "lost_leases") + 1
      let outcome = JobOutcome.failed(error: Array(QueueLimits.abandonment(lostLeases: lost).utf8))
      let abandon = {
        try self.finish(
          job: job, token: token, outcome: outcome, at: now, on: db,
          condition: "AND lease_expires_at <= $4", setting: ", lost_leases = lost_leases + 1")
      }
      do {
        if db.isInTransaction { try abandon() } else { try db.transaction(abandon) }
        abandoned = true
      } catch let error as StoreError where error.kind == .staleClaim {
        // Heartbeated, claimed or finished meanwhile: not abandoned (the
        // statement changed nothing, so a caller's transaction goes on).
      }
    }
    return abandoned
  }

  /// Claims the oldest job that `condition` selects, of a queue that is not
  /// halted, in one statement; nil when there is none (or every such job is
  /// being claimed by another worker at this moment).
  private func take(
    _ condition: String, _ request: ClaimRequest, _ names: [PostgresValue], _ now: StoreTimestamp, _ expiry: Int64,
    on db: PostgresConnection
  ) throws -> ClaimedJob? {
    // Parameters $1 to $3 are the time, worker and expiry; the names follow.
    let filter = Self.queueFilter(request, firstParameter: 4)
    let rows = try db.query(
      """
      WITH head AS (
        SELECT j.id FROM job j
        WHERE \(condition) \(filter)
          AND NOT EXISTS (SELECT 1 FROM queue q WHERE q.name = j.queue AND q.halted_by IS NOT NULL)
        ORDER BY j.id LIMIT 1
        FOR UPDATE OF j SKIP LOCKED)
      UPDATE job SET status = 'running', attempts = job.attempts + 1, claim = nextval('job_claim'), worker = $2,
        started_at = $1, lease_expires_at = $3,
        lost_leases = job.lost_leases + CASE WHEN job.status = 'running' THEN 1 ELSE 0 END
      FROM head WHERE job.id = head.id
      RETURNING job.id, job.queue, job.sequence, job.action, job.input, job.first_attempt + job.attempts - 1, job.claim
      """, [.integer(now.microseconds), .text(request.worker.name), .integer(expiry)] + names, prepared: true)
    guard rows.count == 1 else { return nil }
    return ClaimedJob(
      id: JobID(rows.int64(0, 0)), queue: LuaString(bytes: rows.bytes(0, 1)), sequence: rows.int64(0, 2),
      action: LuaString(bytes: rows.bytes(0, 3)), input: rows.bytes(0, 4), attempt: Int(rows.int64(0, 5)),
      token: ClaimToken(rows.int64(0, 6)), leaseExpiresAt: StoreTimestamp(microseconds: expiry))
  }

  public func heartbeat(job: JobID, token: ClaimToken, lease: Duration, at now: StoreTimestamp) throws(StoreError)
    -> StoreTimestamp
  {
    let expiry = now.microseconds + (try QueueLimits.microseconds(of: lease))
    return try withConnection { db in
      let rows = try db.query(
        "UPDATE job SET lease_expires_at = $1 WHERE id = $2 AND status = 'running' AND claim = $3 RETURNING id",
        [.integer(expiry), .integer(job.rawValue), .integer(token.rawValue)], prepared: true)
      guard rows.count == 1 else {
        throw QueueRefusal.staleClaim(try self.readJob(db, id: job), id: job, token: token, "heartbeat", in: self.location)
      }
      return StoreTimestamp(microseconds: expiry)
    }
  }

  public func complete(job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp) throws(StoreError) {
    try outcome.checkSize()
    try withConnection { db in
      try db.transaction { try self.finish(job: job, token: token, outcome: outcome, at: now, on: db) }
    }
  }

  /// Locks the row of the queue of `job` until the transaction ends: the
  /// statements after it read afresh, and see any job submitted to the
  /// queue before (a submit locks the row too).
  private func lockQueue(of job: JobID, on db: PostgresConnection) throws {
    try db.query(
      "SELECT 1 FROM queue WHERE name = (SELECT queue FROM job WHERE id = $1) FOR UPDATE", [.integer(job.rawValue)],
      prepared: true)
  }

  public func release(job: JobID, token: ClaimToken, at now: StoreTimestamp) throws(StoreError) {
    try withConnection { db in
      // A running job is its queue's head: it stays marked, and waits.
      let rows = try db.query(
        """
        WITH released AS (
          UPDATE job SET status = 'waiting', lease_expires_at = NULL WHERE id = $1 AND status = 'running' AND claim = $2
          RETURNING queue)
        SELECT 1 FROM released
        CROSS JOIN LATERAL (SELECT pg_notify('\(Self.notificationChannel)', encode(released.queue, 'hex') || ' ' || current_schema())) AS notified
        """, [.integer(job.rawValue), .integer(token.rawValue)], prepared: true)
      guard rows.count == 1 else {
        throw QueueRefusal.staleClaim(try self.readJob(db, id: job), id: job, token: token, "release", in: self.location)
      }
    }
  }

  /// Records how `job` ended, inside the caller's transaction; `condition`
  /// and `setting` add to the statement's WHERE and SET (the time is $4).
  private func finish(
    job: JobID, token: ClaimToken, outcome: JobOutcome, at now: StoreTimestamp, on db: PostgresConnection,
    condition: String = "", setting: String = ""
  ) throws {
    let (output, error) = outcome.columns
    try lockQueue(of: job, on: db)
    // One statement: the job finishes, the next one of its queue becomes
    // its head (the statement's snapshot still shows the job unfinished:
    // its successor is the first after it), a failure under policy stop
    // halts the queue, and waiting workers hear of it.
    let rows = try db.query(
      """
      WITH done AS (
        UPDATE job SET status = $3, finished_at = $4, lease_expires_at = NULL, output = $5, error = $6, head = false\(setting)
        WHERE id = $1 AND status = 'running' AND claim = $2 \(condition) RETURNING id, queue, policy, sequence),
      halted AS (
        UPDATE queue SET halted_by = done.id FROM done
        WHERE queue.name = done.queue AND done.policy = 'stop' AND $3 = 'failed' RETURNING queue.name),
      successor AS (
        UPDATE job SET head = true FROM done
        WHERE job.id = (
          SELECT h.id FROM job h WHERE h.queue = done.queue AND h.status IN ('waiting', 'running') AND h.sequence > done.sequence
          ORDER BY h.sequence LIMIT 1)
        RETURNING job.id)
      SELECT done.id FROM done
      CROSS JOIN LATERAL (SELECT pg_notify('\(Self.notificationChannel)', encode(done.queue, 'hex') || ' ' || current_schema())) AS notified
      """,
      [.integer(job.rawValue), .integer(token.rawValue), .text(outcome.status.rawValue), .integer(now.microseconds),
       output.map { .bytes($0) } ?? .null, error.map { .bytes($0) } ?? .null], prepared: true)
    guard rows.count == 1 else {
      throw QueueRefusal.staleClaim(try self.readJob(db, id: job), id: job, token: token, "completion", in: self.location)
    }
  }

  public func cancel(job: JobID, at now: StoreTimestamp) throws(StoreError) {
    try withConnection { db in
      try db.transaction {
        try self.lockQueue(of: job, on: db)
        // A cancelled head hands the mark to the first unfinished job after
        // it; cancelling another job leaves the head as it is.
        let rows = try db.query(
          """
          WITH cancelled AS (
            UPDATE job SET status = 'cancelled', finished_at = $2, head = false WHERE id = $1 AND status = 'waiting'
            RETURNING id, queue),
          successor AS (
            UPDATE job SET head = true FROM cancelled
            WHERE job.id = (
              SELECT h.id FROM job h WHERE h.queue = cancelled.queue AND h.status IN ('waiting', 'running') AND h.id <> cancelled.id
              ORDER BY h.sequence LIMIT 1)
            AND NOT job.head
            RETURNING job.id)
          SELECT cancelled.id FROM cancelled
          CROSS JOIN LATERAL (SELECT pg_notify('\(Self.notificationChannel)', encode(cancelled.queue, 'hex') || ' ' || current_schema())) AS notified
          """, [.integer(job.rawValue), .integer(now.microseconds)])
        guard rows.count == 1 else { throw QueueRefusal.notWaiting(try self.readJob(db, id: job), id: job, in: self.location) }
      }
    }
  }

  public func resume(queue: LuaString) throws(StoreError) -> Bool {
    try withConnection { db in
      try db.transaction {
        let rows = try db.query("SELECT halted_by FROM queue WHERE name = $1 FOR UPDATE", [.bytes(queue.bytes)])
        guard rows.count == 1 else { throw QueueRefusal.noSuchQueue(queue, in: self.location) }
        try db.query("UPDATE queue SET halted_by = NULL WHERE name = $1", [.bytes(queue.bytes)])
        try db.query("SELECT pg_notify('\(Self.notificationChannel)', encode($1, 'hex') || ' ' || current_schema())", [.bytes(queue.bytes)])
        return !rows.isNull(0, 0)
      }
    }
  }

  /// Waits up to `timeout` for a notification that a queue may have work
  /// (a job submitted, finished or cancelled, a queue resumed); true if one
  /// came, false when the time is up. Claim after it returns either way.
  /// The first call starts listening: a notification sent before it is
  /// missed, so an idle worker should wait with a timeout of a few seconds
  /// at most. A lost connection is an error; the next call connects again.
  public func waitForWork(timeout: Duration) throws(StoreError) -> Bool {
    try listener.wait(timeout: timeout, waiting: "waiting for work")
  }

  public func job(_ id: JobID) throws(StoreError) -> JobRecord? {
    try withConnection { db in try self.readJob(db, id: id) }
  }

  public func job(queue: LuaString, sequence: Int64) throws(StoreError) -> JobRecord? {
    try withConnection { db in
      let rows = try db.query(
        "SELECT \(JobRecord.columns) FROM job WHERE queue = $1 AND sequence = $2", [.bytes(queue.bytes), .integer(sequence)])
      return rows.count == 0 ? nil : try self.readJob(rows, 0)
    }
  }

  public func queues() throws(StoreError) -> [QueueSummary] {
    try withConnection { db in
      // At most one job of a queue runs, so the join adds no rows.
      let rows = try db.query(
        """
        SELECT q.name, q.last_sequence, q.halted_by,
          (SELECT count(*) FROM job w WHERE w.queue = q.name AND w.status = 'waiting'),
          (SELECT min(w.enqueued_at) FROM job w WHERE w.queue = q.name AND w.status = 'waiting'),
          r.id, r.worker, r.lease_expires_at
        FROM queue q LEFT JOIN job r ON r.queue = q.name AND r.status = 'running'
        ORDER BY q.name
        """)
      var summaries: [QueueSummary] = []
      for row in 0..<rows.count {
        let name = LuaString(bytes: rows.bytes(row, 0))
        let checked = StoredRow(store: self.location, row: "queue \(name.quoted)")
        summaries.append(
          QueueSummary(
            name: name, submitted: Int64(try checked.count(rows.int64(row, 1), "last_sequence")),
            waiting: Int(rows.int64(row, 3)), running: rows.isNull(row, 5) ? nil : JobID(rows.int64(row, 5)),
            runningWorker: rows.isNull(row, 6) ? nil : WorkerID(rows.text(row, 6)),
            haltedBy: rows.isNull(row, 2) ? nil : JobID(rows.int64(row, 2)),
            oldestWaitingSince: try checked.time(rows.isNull(row, 4) ? nil : rows.int64(row, 4), "enqueued_at"),
            runningLeaseExpiresAt: try checked.time(rows.isNull(row, 7) ? nil : rows.int64(row, 7), "lease_expires_at")))
      }
      return summaries
    }
  }

  public func jobs(queue: LuaString, limit: Int) throws(StoreError) -> [JobRecord] {
    try QueueLimits.check(limit: limit)
    return try withConnection { db in
      let rows = try db.query(
        "SELECT \(JobRecord.columns) FROM job WHERE queue = $1 ORDER BY sequence DESC LIMIT $2",
        [.bytes(queue.bytes), .integer(Int64(limit))])
      var jobs: [JobRecord] = []
      for row in 0..<rows.count { jobs.append(try self.readJob(rows, row)) }
      return jobs
    }
  }

  private func readJob(_ db: PostgresConnection, id: JobID) throws -> JobRecord? {
    let rows = try db.query("SELECT \(JobRecord.columns) FROM job WHERE id = $1", [.integer(id.rawValue)])
    return rows.count == 0 ? nil : try readJob(rows, 0)
  }

  /// The job in row `row` of `rows`, from the columns `JobRecord.columns` names.
  private func readJob(_ rows: PostgresResult, _ row: Int) throws(StoreError) -> JobRecord {
    let id = JobID(rows.int64(row, 0))
    let (policy, status) = try JobRecord.decode(policy: rows.text(row, 5), status: rows.text(row, 6), of: id, in: location)
    let checked = StoredRow(store: location, row: "job \(id)")
    func time(_ column: Int, _ name: String) throws(StoreError) -> StoreTimestamp? {
      try checked.time(rows.isNull(row, column) ? nil : rows.int64(row, column), name)
    }
    return JobRecord(
      id: id, queue: LuaString(bytes: rows.bytes(row, 1)), sequence: try checked.sequence(rows.int64(row, 2), "sequence"),
      action: LuaString(bytes: rows.bytes(row, 3)), input: rows.bytes(row, 4), policy: policy, status: status,
      attempts: try checked.count(rows.int64(row, 7), "attempts"),
      worker: rows.isNull(row, 8) ? nil : WorkerID(rows.text(row, 8)),
      claim: rows.isNull(row, 9) ? nil : ClaimToken(rows.int64(row, 9)),
      enqueuedAt: try checked.time(rows.int64(row, 10), "enqueued_at"), startedAt: try time(11, "started_at"),
      leaseExpiresAt: try time(12, "lease_expires_at"), finishedAt: try time(13, "finished_at"),
      output: rows.isNull(row, 14) ? nil : rows.bytes(row, 14),
      error: rows.isNull(row, 15) ? nil : rows.bytes(row, 15))
  }

  /// Runs `body` with the connection, alone (connecting again first if the
  /// connection was lost); any failure becomes a `StoreError`.
  private func withConnection<T: Sendable>(_ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
    let location = self.location
    return try connection.withLock { (db) throws(StoreError) -> T in
      do {
        try db.reconnectIfLost()
        return try body(db)
      } catch let error as StoreError {
        throw error
      } catch {
        throw StoreError(.database, "store \(location): \(error)")
      }
    }
  }
}
