/// The store's tables on PostgreSQL, versioned like `StoreSchema`: the
/// one-row table `lunar_store` holds the version, and each migration takes
/// the store one version further. The tables live in the connection's
/// current schema (the first of its `search_path`).
enum PostgresStoreSchema {
  /// Migration `i` takes a store from version `i` to `i + 1`. Only ever
  /// append: stores in use have run the earlier ones.
  static let migrations: [[String]] = [
    [
      "CREATE TABLE lunar_store (version integer NOT NULL)",
      """
      CREATE TABLE run (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- a sequence: ids are never reused
        workflow bytea NOT NULL,               -- the name's bytes
        file text NOT NULL,
        arguments bytea NOT NULL,              -- LuaValueCodec: a list of strings
        status text NOT NULL,                  -- RunStatus
        started_at bigint NOT NULL,            -- microseconds since 1970 UTC
        finished_at bigint,
        resumed_from bigint REFERENCES run(id) ON DELETE SET NULL,
        host text NOT NULL,
        pid integer NOT NULL
      )
      """,
      "CREATE INDEX run_by_workflow ON run(workflow, id)",
      """
      CREATE TABLE step (
        run bigint NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name bytea NOT NULL,                   -- the name's bytes
        position integer NOT NULL,             -- declaration order, from 0
        status text NOT NULL,                  -- StepStatus
        attempts integer NOT NULL,
        started_at bigint,
        finished_at bigint,
        fingerprint bytea,                     -- SHA-256 of the inputs' encoding
        output bytea,                          -- LuaValueCodec: the values returned
        error bytea,                           -- the error message's bytes
        PRIMARY KEY (run, name)
      )
      """,
      "INSERT INTO lunar_store (version) VALUES (0)",
    ],
    // Version 2: durable ordered queues (QueueStore).
    [
      """
      CREATE TABLE queue (
        name bytea PRIMARY KEY,                -- the name's bytes
        last_sequence bigint NOT NULL,         -- the sequence of its newest job
        halted_by bigint                       -- the failed job that halted it (policy stop), until resumed
      )
      """,
      """
      CREATE TABLE job (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        queue bytea NOT NULL REFERENCES queue(name),
        sequence bigint NOT NULL,              -- its place in its queue, from 1
        action bytea NOT NULL,                 -- the action's name's bytes
        input bytea NOT NULL,                  -- LuaValueCodec
        policy text NOT NULL,                  -- QueuePolicy
        status text NOT NULL,                  -- JobStatus
        attempts integer NOT NULL,             -- claims so far
        claim bigint,                          -- the latest claim's number (job_claim): the fencing token
        worker text,                           -- the latest claim's worker
        enqueued_at bigint NOT NULL,           -- microseconds since 1970 UTC
        started_at bigint,                     -- the latest claim's time
        lease_expires_at bigint,               -- while running
        finished_at bigint,
        output bytea,                          -- LuaValueCodec, once succeeded
        error bytea,                           -- the error's bytes, once failed
        UNIQUE (queue, sequence)
      )
      """,
      // A queue's head is its first unfinished job: found without reading
      // the finished ones.
      "CREATE INDEX job_unfinished ON job(queue, sequence) WHERE status IN ('waiting', 'running')",
      "CREATE UNIQUE INDEX job_by_claim ON job(claim)",
      // Claim numbers, store-wide: a sequence never hands one out twice.
      "CREATE SEQUENCE job_claim",
    ],
    // Version 3: each queue's head is marked, so a claim reads one index
    // entry, not one per queue.
    [
      // True for its queue's first unfinished job.
      "ALTER TABLE job ADD COLUMN head boolean NOT NULL DEFAULT false",
      """
      UPDATE job SET head = true WHERE id IN (
        SELECT (SELECT h.id FROM job h WHERE h.queue = q.name AND h.status IN ('waiting', 'running')
                ORDER BY h.sequence LIMIT 1)
        FROM queue q)
      """,
      // The heads that may start, oldest first; and the running jobs by
      // the end of their lease, for claims after a lost worker.
      "CREATE INDEX job_ready ON job(id) WHERE head AND status = 'waiting'",
      "CREATE INDEX job_leased ON job(lease_expires_at) WHERE status = 'running'",
    ],
    // Version 4: poison jobs are counted, and a workflow's durable steps
    // keep their jobs for a resume.
    [
      // How many of its claims' leases expired with no completion.
      "ALTER TABLE job ADD COLUMN lost_leases integer NOT NULL DEFAULT 0",
      """
      CREATE TABLE step_job (
        run bigint NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name bytea NOT NULL,                   -- the step's name's bytes
        attempt integer NOT NULL,              -- the step's attempt that submitted the job
        job bigint NOT NULL,                   -- the durable job (job.id)
        fingerprint bytea,                     -- the step's inputs then
        PRIMARY KEY (run, name)
      )
      """,
    ],
    // Version 5: a step's code is kept apart from its inputs, so a resume
    // says which of the two changed.
    [
      "ALTER TABLE step ADD COLUMN code bytea",
    ],
    // Version 6: step logs, what each attempt of a step printed (StepLogChunk).
    [
      """
      CREATE TABLE step_log (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- the order chunks were stored in, for runs logs --follow
        run bigint NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        step bytea NOT NULL,                   -- the step's name's bytes
        position integer NOT NULL,             -- the step's declaration order, from 0
        attempt integer NOT NULL,              -- from 1
        sequence integer NOT NULL,             -- the chunk's place in its attempt, from 1
        stream integer NOT NULL,               -- StepLogStream: 1 standard output, 2 standard error
        bytes bytea NOT NULL
      )
      """,
      "CREATE INDEX step_log_by_run ON step_log(run, id)",
    ],
    // Version 7: submitted runs and schedules, as in StoreSchema.
    [
      "ALTER TABLE run ADD COLUMN submit_key bytea",
      "ALTER TABLE run ADD COLUMN file_fingerprint bytea",
      "ALTER TABLE run ADD COLUMN schedule bytea",
      "CREATE UNIQUE INDEX run_by_submit_key ON run(submit_key) WHERE submit_key IS NOT NULL",
      "CREATE INDEX run_queued ON run(id) WHERE status = 'queued'",
      "CREATE INDEX run_by_schedule ON run(schedule, id) WHERE schedule IS NOT NULL",
      """
      CREATE TABLE schedule (
        name bytea PRIMARY KEY,
        cron text NOT NULL,
        timezone text NOT NULL,
        overlap text NOT NULL,
        catchup bigint,
        file text NOT NULL,
        arguments bytea NOT NULL,
        paused integer NOT NULL DEFAULT 0,
        created_at bigint NOT NULL,
        last_tick bigint
      )
      """,
      """
      CREATE TABLE schedule_tick (
        schedule bytea NOT NULL REFERENCES schedule(name) ON DELETE CASCADE,
        tick bigint NOT NULL,
        outcome text NOT NULL,
        run bigint REFERENCES run(id) ON DELETE SET NULL,
        PRIMARY KEY (schedule, tick)
      )
      """,
    ],
    // Version 8: run ownership: a running run is held by one process through a lease
    // with a fencing token (RunLease), and may be asked to cancel.
    [
      "ALTER TABLE run ADD COLUMN owner bigint NOT NULL DEFAULT 0",  // the owner's fencing token; 0: an older run
      "ALTER TABLE run ADD COLUMN owned_since bigint",  // when the owner took it
      "ALTER TABLE run ADD COLUMN lease_expires_at bigint",  // while running
      "ALTER TABLE run ADD COLUMN cancel_request text",  // who asked to cancel it, unanswered
      "ALTER TABLE run ADD COLUMN stopped_by text",  // a cancelled run's signal, or 'request'
      "ALTER TABLE run ADD COLUMN plan bytea",  // LuaValueCodec: the names of the steps it was to run
      "ALTER TABLE run ADD COLUMN running bytea",  // LuaValueCodec: the steps running at the last heartbeat
    ],
    // Version 9: durable waits: sleep steps' deadlines and the signals
    // sent to runs (WaitStore).
    [
      // The deadline of each workflow sleep step, recorded when its wait
      // starts: a resumed run waits only what is left.
      """
      CREATE TABLE step_wait (
        run bigint NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name bytea NOT NULL,                    -- the step's name's bytes
        fingerprint bytea,                      -- the step's inputs then
        deadline_ms bigint NOT NULL,           -- when the wait ends, ms since the epoch
        PRIMARY KEY (run, name)
      )
      """,
      // The signals sent to runs (`lunar runs signal`), kept until the run
      // is removed: a wait that starts after its signal came sees it.
      """
      CREATE TABLE run_signal (
        run bigint NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name bytea NOT NULL,                    -- the signal's name's bytes
        value bytea NOT NULL,                   -- its value (LuaValueCodec)
        sent_at bigint NOT NULL,               -- microseconds since the epoch
        PRIMARY KEY (run, name)
      )
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
      "ALTER TABLE run ADD COLUMN wake_at bigint",    // a parked run's earliest deadline, microseconds; NULL: a signal only
      "ALTER TABLE run ADD COLUMN parked_at bigint",  // when it was parked: a signal sent since wakes it
      "CREATE INDEX run_parked ON run(wake_at) WHERE status = 'parked'",
      "ALTER TABLE run ADD COLUMN takeovers bigint NOT NULL DEFAULT 0",  // how often a worker took it over from a lost owner
    ],
    // Version 12: a durable step's job counts its attempts on from the
    // step's (a retry submits a new job): the action's ctx.attempt.
    [
      "ALTER TABLE job ADD COLUMN first_attempt bigint NOT NULL DEFAULT 1",
    ],
    // Version 13: what each planned step needs, so a run's graph is drawn
    // from the store alone (RunPlan); a submitted run may resume another
    // (resumed_from), running some of its steps again anyway (force); the
    // workers alive (worker).
    [
      "ALTER TABLE run ADD COLUMN plan_needs bytea",  // LuaValueCodec: per plan entry, the positions it needs
      "ALTER TABLE run ADD COLUMN force bytea",  // LuaValueCodec: the steps a submitted resume runs again anyway
      // The workers alive, each as it last said (WorkerStore).
      """
      CREATE TABLE worker (
        name text PRIMARY KEY,                 -- host:pid, as the jobs it holds name it
        host text NOT NULL,
        pid bigint NOT NULL,
        serves text NOT NULL,                  -- what it serves, for people
        started_at bigint NOT NULL,            -- microseconds since 1970 UTC
        seen_at bigint NOT NULL,               -- its latest heartbeat
        expires_at bigint NOT NULL             -- lost unless it heartbeats by then
      )
      """,
      // Each statement that changes what `lunar serve` shows notifies
      // `lunar_changes` (once per transaction: PostgreSQL folds equal
      // notifications); jobs notify `lunar_queue` themselves.
      """
      CREATE FUNCTION lunar_changed() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('lunar_changes', current_schema());
        RETURN NULL;
      END $$
      """,
    ] + ["run", "step", "step_log", "step_wait", "run_signal", "queue", "schedule", "worker"].map { table in
      "CREATE TRIGGER \(table)_changed AFTER INSERT OR UPDATE OR DELETE ON \(table) FOR EACH STATEMENT EXECUTE FUNCTION lunar_changed()"
    },
    // Version 14: the signals a parked run's waits wait for: one of them
    // sent wakes it, one a wait already took does not (RunStore.park).
    [
      """
      CREATE TABLE run_await (
        run bigint NOT NULL REFERENCES run(id) ON DELETE CASCADE,
        name bytea NOT NULL,                    -- the signal's name's bytes
        PRIMARY KEY (run, name)
      )
      """,
    ],
  ]

  /// The version this Lunar writes.
  static var current: Int { migrations.count }

  /// The advisory lock every opening process takes while it reads or
  /// migrates the version, so two processes never migrate at once: "LUNR".
  static let lockKey: Int64 = 0x4C55_4E52

  /// A connection to the store on the server `url` names (shown as
  /// `location`), its schema brought to `current` by `migrate`.
  /// - Throws: `StoreError` for a server that cannot be reached or refuses
  ///   the login, and whatever `migrate` refuses.
  static func connect(url: String, location: String, createIfMissing: Bool, serverOptions: String? = nil) throws(StoreError)
    -> PostgresConnection
  {
    // Said as it is: no server was reached, so none is named.
    if let problem = PostgresLibrary.problem { throw StoreError(.database, problem) }
    let db: PostgresConnection
    do {
      db = try PostgresConnection(url: url, serverOptions: serverOptions)
    } catch {
      throw StoreError(.database, "cannot connect to store \(location): \(error)")
    }
    try migrate(db, location: location, createIfMissing: createIfMissing)
    return db
  }

  /// Brings the store on `db` (named `location` in messages) to `current`:
  /// initialises an empty schema (unless `createIfMissing` is false: then
  /// it is a `.missing` error), migrates an older store, refuses a newer one
  /// or a schema that holds another application's tables, touching nothing.
  static func migrate(_ db: PostgresConnection, location: String, createIfMissing: Bool) throws(StoreError) {
    do {
      try db.transaction {
        try db.query("SELECT pg_advisory_xact_lock($1)", [.integer(lockKey)])
        let version: Int
        if try relationCount(db, named: "lunar_store") == 1 {
          version = try StoredRow(store: location, row: "table lunar_store")
            .count(try db.query("SELECT version FROM lunar_store").int64(0, 0), "version")
        } else if try relationCount(db, named: nil) == 0 {
          guard createIfMissing else { throw StoreError(.missing, "no store at \(location)") }
          version = 0
        } else {
          throw StoreError(
            .notAStore,
            "\(location) is not a Lunar store (its schema holds tables of another application); Lunar leaves it untouched")
        }
        guard version <= current else {
          throw StoreError(
            .newerStore,
            "\(location) was written by a newer Lunar (store version \(version); this Lunar knows up to \(current)); use that Lunar or a newer one"
          )
        }
        guard version < current else { return }
        for sql in migrations[version...].joined() { try db.execute(sql) }
        try db.query("UPDATE lunar_store SET version = $1", [.integer(Int64(current))])
      }
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(.database, "store \(location): \(error)")
    }
  }

  /// How many tables, views, sequences and the like the current schema
  /// holds (named `name` only, if given).
  private static func relationCount(_ db: PostgresConnection, named name: String?) throws(PostgresError) -> Int64 {
    try db.query(
      """
      SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND ($1::text IS NULL OR c.relname = $1::text)
      """, [name.map { .text($0) } ?? .null]
    ).int64(0, 0)
  }
}
