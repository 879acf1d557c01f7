extension PostgresRunStore: WorkerStore {
  public func announce(_ presence: WorkerPresence) throws(StoreError) {
    let forgotten = presence.seenAt.microseconds - (try QueueLimits.microseconds(of: WorkerPresence.forgottenAfter))
    // An upsert and a delete: made twice after a lost connection, the same.
    try withConnection { db in
      try db.transaction {
        try db.query(
          """
          INSERT INTO worker (name, host, pid, serves, started_at, seen_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
          ON CONFLICT (name) DO UPDATE SET host = excluded.host, pid = excluded.pid, serves = excluded.serves,
            started_at = excluded.started_at, seen_at = excluded.seen_at, expires_at = excluded.expires_at
          """,
          [
            .text(presence.worker.name), .text(presence.host), .integer(Int64(presence.pid)), .text(presence.serves),
            .integer(presence.startedAt.microseconds), .integer(presence.seenAt.microseconds),
            .integer(presence.expiresAt.microseconds),
          ])
        try db.query("DELETE FROM worker WHERE expires_at < $1", [.integer(forgotten)])
      }
    }
  }

  public func withdraw(_ worker: WorkerID) throws(StoreError) {
    try withConnection { db in _ = try db.query("DELETE FROM worker WHERE name = $1", [.text(worker.name)]) }
  }

  public func workers() throws(StoreError) -> [WorkerPresence] {
    let location = self.location
    return try withConnection { db in
      let rows = try db.query("SELECT name, host, pid, serves, started_at, seen_at, expires_at FROM worker ORDER BY name")
      return try (0..<rows.count).map { row in
        let checked = StoredRow(store: location, row: "worker \(rows.text(row, 0))")
        return WorkerPresence(
          worker: WorkerID(rows.text(row, 0)), host: rows.text(row, 1), pid: try checked.processID(rows.int64(row, 2), "pid"),
          serves: rows.text(row, 3), startedAt: try checked.time(rows.int64(row, 4), "started_at"),
          seenAt: try checked.time(rows.int64(row, 5), "seen_at"), expiresAt: try checked.time(rows.int64(row, 6), "expires_at"))
      }
    }
  }
}
