extension SQLiteRunStore: WorkerStore {
  public func announce(_ presence: WorkerPresence) throws(StoreError) {
    let forgotten = presence.seenAt.microseconds - (try QueueLimits.microseconds(of: WorkerPresence.forgottenAfter))
    try withDatabase { db in
      try db.transaction(.immediate) {
        try db.run(
          """
          INSERT INTO worker (name, host, pid, serves, started_at, seen_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, serves = excluded.serves,
            started_at = excluded.started_at, seen_at = excluded.seen_at, expires_at = excluded.expires_at
          """,
          [
            .text(presence.worker.name), .text(presence.host), .integer(Int64(presence.pid)), .text(presence.serves),
            .integer(presence.startedAt.microseconds), .integer(presence.seenAt.microseconds),
            .integer(presence.expiresAt.microseconds),
          ])
        try db.run("DELETE FROM worker WHERE expires_at < ?", [.integer(forgotten)])
      }
    }
  }

  public func withdraw(_ worker: WorkerID) throws(StoreError) {
    try withDatabase { db in try db.run("DELETE FROM worker WHERE name = ?", [.text(worker.name)]) }
  }

  public func workers() throws(StoreError) -> [WorkerPresence] {
    let path = self.path
    return try withDatabase { db in
      var found: [WorkerPresence] = []
      try db.query("SELECT name, host, pid, serves, started_at, seen_at, expires_at FROM worker ORDER BY name") { row in
        let checked = StoredRow(store: path, row: "worker \(row.text(0))")
        found.append(
          WorkerPresence(
            worker: WorkerID(row.text(0)), host: row.text(1), pid: try checked.processID(row.int64(2), "pid"), serves: row.text(3),
            startedAt: try checked.time(row.int64(4), "started_at"), seenAt: try checked.time(row.int64(5), "seen_at"),
            expiresAt: try checked.time(row.int64(6), "expires_at")))
      }
      return found
    }
  }
}
