/// The store's tables, versioned: `PRAGMA user_version` holds the version a
/// store is at, and each migration takes it one version further in one
/// transaction. A store at a version past `current` was written by a newer
/// Lunar and is refused.
enum StoreSchema {
  /// Migration `i` takes a store from version `i` to `i + 1`. Only ever
  /// append: stores in use have run the earlier ones.
  static let migrations: [[String]] = [
    [
      """
      CREATE TABLE run (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- AUTOINCREMENT: ids are never reused
        workflow BLOB NOT NULL,                -- the name's bytes
        file TEXT NOT NULL,
        arguments BLOB NOT NULL,               -- LuaValueCodec: a list of strings
        status TEXT NOT NULL,                  -- RunStatus
        started_at INTEGER NOT NULL,           -- microseconds since 1970 UTC
        finished_at INTEGER,
        resumed_from INTEGER REFERENCES run(id) ON DELETE SET NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL
      )
      """,
      "CREATE INDEX run_by_workflow ON run(workflow, id)",
      """
      CREATE TABLE step (
        run INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name BLOB NOT NULL,                    -- the name's bytes
        position INTEGER NOT NULL,             -- declaration order, from 0
        status TEXT NOT NULL,                  -- StepStatus
        attempts INTEGER NOT NULL,
        started_at INTEGER,
        finished_at INTEGER,
        fingerprint BLOB,                      -- SHA-256 of the inputs' encoding
        output BLOB,                           -- LuaValueCodec: the values returned
        error BLOB,                            -- the error message's bytes
        PRIMARY KEY (run, name)
      ) WITHOUT ROWID
      """,
    ],
    // Version 2: durable ordered queues (QueueStore).
    [
      """
      CREATE TABLE queue (
        name BLOB PRIMARY KEY,                 -- the name's bytes
        last_sequence INTEGER NOT NULL,        -- the sequence of its newest job
        halted_by INTEGER                      -- the failed job that halted it (policy stop), until resumed
      ) WITHOUT ROWID
      """,
      """
      CREATE TABLE job (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- AUTOINCREMENT: ids are never reused
        queue BLOB NOT NULL REFERENCES queue(name),
        sequence INTEGER NOT NULL,             -- its place in its queue, from 1
        action BLOB NOT NULL,                  -- the action's name's bytes
        input BLOB NOT NULL,                   -- LuaValueCodec
        policy TEXT NOT NULL,                  -- QueuePolicy
        status TEXT NOT NULL,                  -- JobStatus
        attempts INTEGER NOT NULL,             -- claims so far
        claim INTEGER,                         -- the latest claim's store-wide number: the fencing token
        worker TEXT,                           -- the latest claim's worker
        enqueued_at INTEGER NOT NULL,          -- microseconds since 1970 UTC
        started_at INTEGER,                    -- the latest claim's time
        lease_expires_at INTEGER,              -- while running
        finished_at INTEGER,
        output BLOB,                           -- LuaValueCodec, once succeeded
        error BLOB,                            -- the error's bytes, once failed
        UNIQUE (queue, sequence)
      )
      """,
      // A queue's head is its first unfinished job: found without reading
      // the finished ones.
      "CREATE INDEX job_unfinished ON job(queue, sequence) WHERE status IN ('waiting', 'running')",
      "CREATE UNIQUE INDEX job_by_claim ON job(claim) WHERE claim IS NOT NULL",
    ],
    // Version 3: each queue's head is marked, so a claim reads one index
    // entry, not one per queue.
    [
      // 1 for its queue's first unfinished job.
      "ALTER TABLE job ADD COLUMN head INTEGER NOT NULL DEFAULT 0",
      """
      UPDATE job SET head = 1 WHERE id IN (
        SELECT (SELECT h.id FROM job h WHERE h.queue = q.name AND h.status IN ('waiting', 'running')
                ORDER BY h.sequence LIMIT 1)
        FROM queue q)
      """,
      // The heads that may start, oldest first; and the running jobs by
      // the end of their lease, for claims after a lost worker.
      "CREATE INDEX job_ready ON job(id) WHERE head = 1 AND status = 'waiting'",
      "CREATE INDEX job_leased ON job(lease_expires_at) WHERE status = 'running'",
    ],
    // Version 4: poison jobs are counted, and a workflow's durable steps
    // keep their jobs for a resume.
    [
      // How many of its claims' leases expired with no completion: a job
      // that keeps ending its workers is abandoned.
      "ALTER TABLE job ADD COLUMN lost_leases INTEGER NOT NULL DEFAULT 0",
      """
      CREATE TABLE step_job (
        run INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name BLOB NOT NULL,                    -- the step's name's bytes
        attempt INTEGER NOT NULL,              -- the step's attempt that submitted the job
        job INTEGER NOT NULL,                  -- the durable job (job.id)
        fingerprint BLOB,                      -- the step's inputs then
        PRIMARY KEY (run, name)
      ) WITHOUT ROWID
      """,
    ],
    // Version 5: a step's code is kept apart from its inputs, so a resume
    // says which of the two changed.
    [
      "ALTER TABLE step ADD COLUMN code BLOB",
    ],
    // Version 6: step logs, what each attempt of a step printed (StepLogChunk).
    [
      """
      CREATE TABLE step_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order chunks were stored in, for runs logs --follow
        run INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        step BLOB NOT NULL,                    -- the step's name's bytes
        position INTEGER NOT NULL,             -- the step's declaration order, from 0
        attempt INTEGER NOT NULL,              -- from 1
        sequence INTEGER NOT NULL,             -- the chunk's place in its attempt, from 1
        stream INTEGER NOT NULL,               -- StepLogStream: 1 standard output, 2 standard error
        bytes BLOB NOT NULL
      )
      """,
      "CREATE INDEX step_log_by_run ON step_log(run, id)",
    ],
    // Version 7: submitted runs and schedules: a run may wait, queued, for
    // a worker; a schedule's ticks each start at most one run.
    [
      "ALTER TABLE run ADD COLUMN submit_key BLOB",               // --key's bytes: one run per key
      "ALTER TABLE run ADD COLUMN file_fingerprint BLOB",         // SHA-256 of the file's content when submitted
      "ALTER TABLE run ADD COLUMN schedule BLOB",                 // the schedule (its name's bytes) that started it
      "CREATE UNIQUE INDEX run_by_submit_key ON run(submit_key) WHERE submit_key IS NOT NULL",
      "CREATE INDEX run_queued ON run(id) WHERE status = 'queued'",
      "CREATE INDEX run_by_schedule ON run(schedule, id) WHERE schedule IS NOT NULL",
      """
      CREATE TABLE schedule (
        name BLOB PRIMARY KEY,                 -- the name's bytes
        cron TEXT NOT NULL,                    -- the cron expression as written
        timezone TEXT NOT NULL,                -- an IANA zone name
        overlap TEXT NOT NULL,                 -- ScheduleOverlap
        catchup INTEGER,                       -- microseconds; NULL: the last missed tick only
        file TEXT NOT NULL,
        arguments BLOB NOT NULL,               -- LuaValueCodec: a list of strings
        paused INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,           -- microseconds since 1970 UTC
        last_tick INTEGER                      -- the newest tick decided (started or skipped)
      ) WITHOUT ROWID
      """,
      """
      CREATE TABLE schedule_tick (
        schedule BLOB NOT NULL REFERENCES schedule(name) ON DELETE CASCADE,
        tick INTEGER NOT NULL,                 -- the tick's instant, microseconds since 1970 UTC
        outcome TEXT NOT NULL,                 -- 'started' or 'skipped'
        run INTEGER REFERENCES run(id) ON DELETE SET NULL,
        PRIMARY KEY (schedule, tick)
      ) WITHOUT ROWID
      """,
    ],
    // Version 8: run ownership: a running run is held by one process through a lease
    // with a fencing token (RunLease), and may be asked to cancel.
    [
      "ALTER TABLE run ADD COLUMN owner INTEGER NOT NULL DEFAULT 0",  // the owner's fencing token; 0: an older run
      "ALTER TABLE run ADD COLUMN owned_since INTEGER",  // when the owner took it
      "ALTER TABLE run ADD COLUMN lease_expires_at INTEGER",  // while running
      "ALTER TABLE run ADD COLUMN cancel_request TEXT",  // who asked to cancel it, unanswered
      "ALTER TABLE run ADD COLUMN stopped_by TEXT",  // a cancelled run's signal, or 'request'
      "ALTER TABLE run ADD COLUMN plan BLOB",  // LuaValueCodec: the names of the steps it was to run
      "ALTER TABLE run ADD COLUMN running BLOB",  // LuaValueCodec: the steps running at the last heartbeat
    ],
    // Version 9: durable waits: sleep steps' deadlines and the signals
    // sent to runs (WaitStore).
    [
      // The deadline of each workflow sleep step, recorded when its wait
      // starts: a resumed run waits only what is left.
      """
      CREATE TABLE step_wait (
        run INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name BLOB NOT NULL,                    -- the step's name's bytes
        fingerprint BLOB,                      -- the step's inputs then
        deadline_ms INTEGER NOT NULL,          -- when the wait ends, ms since the epoch
        PRIMARY KEY (run, name)
      ) WITHOUT ROWID
      """,
      // The signals sent to runs (`lunar runs signal`), kept until the run
      // is removed: a wait that starts after its signal came sees it.
      """
      CREATE TABLE run_signal (
        run INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name BLOB NOT NULL,                    -- the signal's name's bytes
        value BLOB NOT NULL,                   -- its value (LuaValueCodec)
        sent_at INTEGER NOT NULL,              -- microseconds since the epoch
        PRIMARY KEY (run, name)
      ) WITHOUT ROWID
      """,
    ],
    // Version 10: workers look for submitted runs whose owner's lease
    // expired (SubmittedRunStore.takeOverExpiredRun).
    [
      "CREATE INDEX run_running ON run(lease_expires_at) WHERE status = 'running'",
    ],
    // Version 11: parked runs: a run that only waits leaves its process and
    // is taken again when it is due (SubmittedRunStore.claimDueParkedRun).
    [
      "ALTER TABLE run ADD COLUMN wake_at INTEGER",    // a parked run's earliest deadline, microseconds; NULL: a signal only
      "ALTER TABLE run ADD COLUMN parked_at INTEGER",  // when it was parked: a signal sent since wakes it
      "CREATE INDEX run_parked ON run(wake_at) WHERE status = 'parked'",
      "ALTER TABLE run ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0",  // how often a worker took it over from a lost owner
    ],
    // Version 12: a durable step's job counts its attempts on from the
    // step's (a retry submits a new job): the action's ctx.attempt.
    [
      "ALTER TABLE job ADD COLUMN first_attempt INTEGER NOT NULL DEFAULT 1",
    ],
    // Version 13: what each planned step needs, so a run's graph is drawn
    // from the store alone (RunPlan); a submitted run may resume another
    // (resumed_from), running some of its steps again anyway (force); the
    // workers alive (worker).
    [
      "ALTER TABLE run ADD COLUMN plan_needs BLOB",  // LuaValueCodec: per plan entry, the positions it needs
      "ALTER TABLE run ADD COLUMN force BLOB",  // LuaValueCodec: the steps a submitted resume runs again anyway
      // The workers alive, each as it last said (WorkerStore).
      """
      CREATE TABLE worker (
        name TEXT PRIMARY KEY,                 -- host:pid, as the jobs it holds name it
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        serves TEXT NOT NULL,                  -- what it serves, for people
        started_at INTEGER NOT NULL,           -- microseconds since 1970 UTC
        seen_at INTEGER NOT NULL,              -- its latest heartbeat
        expires_at INTEGER NOT NULL            -- lost unless it heartbeats by then
      ) WITHOUT ROWID
      """,
    ],
    // Version 14: the signals a parked run's waits wait for: one of them
    // sent wakes it, one a wait already took does not (RunStore.park).
    [
      """
      CREATE TABLE run_await (
        run INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name BLOB NOT NULL,                    -- the signal's name's bytes
        PRIMARY KEY (run, name)
      ) WITHOUT ROWID
      """,
    ],
  ]

  /// The version this Lunar writes.
  static var current: Int { migrations.count }

  /// Brings the store `db` at `path` to `current`: initialises a new (empty)
  /// database, migrates an older store, refuses a newer one or a database
  /// that is not a store.
  static func migrate(_ db: SQLiteDatabase, path: String) throws(StoreError) {
    do {
      if try isCurrent(db) { return }
      // Each migration commits alone; the loop re-reads the version inside
      // the write lock, so a process migrating at the same time is harmless.
      while try db.transaction(.immediate, { try step(db, path: path) }) {}
    } catch {
      throw StoreError(error, path: path)
    }
  }

  /// True when `db` is a Lunar store of the current version.
  static func isCurrent(_ db: SQLiteDatabase) throws(SQLiteError) -> Bool {
    let application = try integer(db, "PRAGMA application_id")
    let version = try integer(db, "PRAGMA user_version")
    return application == Int64(StoreFileCheck.applicationID) && version == Int64(current)
  }

  /// Applies the next migration, if any, inside a write transaction; true
  /// if another one follows.
  private static func step(_ db: SQLiteDatabase, path: String) throws -> Bool {
    let application = try integer(db, "PRAGMA application_id")
    let version = Int(try integer(db, "PRAGMA user_version"))
    let ours = application == Int64(StoreFileCheck.applicationID)
    // A new store is an empty database at version 0: the first migration
    // sets the id and the version in one transaction.
    let isEmpty = try integer(db, "SELECT count(*) FROM sqlite_schema") == 0
    let isNew = version == 0 && (ours || application == 0) && isEmpty
    guard isNew || (ours && version > 0) else {
      throw StoreError(
        .notAStore, "\(path) is not a Lunar store (it is a SQLite database of another application); Lunar leaves it untouched")
    }
    guard version <= current else {
      throw StoreError(
        .newerStore,
        "\(path) was written by a newer Lunar (store version \(version); this Lunar knows up to \(current)); use that Lunar or a newer one")
    }
    guard version < current else { return false }
    for sql in migrations[version] { try db.execute(sql) }
    if version == 0 { try db.execute("PRAGMA application_id = \(StoreFileCheck.applicationID)") }
    try db.execute("PRAGMA user_version = \(version + 1)")
    return version + 1 < current
  }

  private static func integer(_ db: SQLiteDatabase, _ sql: String) throws(SQLiteError) -> Int64 {
    guard case .integer(let value) = try db.scalar(sql) else { return 0 }
    return value
  }
}
