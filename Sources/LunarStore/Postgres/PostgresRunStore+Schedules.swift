import LuaKit

extension PostgresRunStore: ScheduleStore {
  private static let scheduleColumns =
    "name, cron, timezone, overlap, catchup, file, arguments, paused, created_at, last_tick"

  public func addSchedule(_ schedule: Schedule) throws(StoreError) {
    let arguments = try Self.encode(schedule.arguments.map { .string(LuaString($0)) }, root: "arguments")
    try withConnection { db in
      let rows = try db.query(
        """
        INSERT INTO schedule (name, cron, timezone, overlap, catchup, file, arguments, paused, created_at, last_tick)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (name) DO NOTHING RETURNING name
        """,
        [
          .bytes(schedule.name.bytes), .text(schedule.cron), .text(schedule.timeZone), .text(schedule.overlap.rawValue),
          schedule.catchupMicroseconds.map { .integer($0) } ?? .null, .text(schedule.file), .bytes(arguments),
          .integer(schedule.isPaused ? 1 : 0), .integer(schedule.createdAt.microseconds),
          schedule.lastTick.map { .integer($0.microseconds) } ?? .null,
        ])
      if rows.count == 0 {
        throw StoreError(.duplicateSchedule, "a schedule named \(schedule.name.quoted) exists already in \(self.location)")
      }
    }
  }

  public func schedules() throws(StoreError) -> [Schedule] {
    try withConnection { db in
      let rows = try db.query("SELECT \(Self.scheduleColumns) FROM schedule ORDER BY name")
      return try (0..<rows.count).map { (row) throws(StoreError) in try self.readSchedule(rows, row) }
    }
  }

  public func schedule(named name: LuaString) throws(StoreError) -> Schedule? {
    try withConnection { db in
      let rows = try db.query("SELECT \(Self.scheduleColumns) FROM schedule WHERE name = $1", [.bytes(name.bytes)])
      return rows.count == 0 ? nil : try self.readSchedule(rows, 0)
    }
  }

  public func setSchedule(_ name: LuaString, paused: Bool, at time: StoreTimestamp) throws(StoreError) {
    try changeSchedule(
      name,
      """
      UPDATE schedule SET paused = $2,
        last_tick = CASE WHEN $2 = 0 AND (last_tick IS NULL OR last_tick < $3) THEN $3 ELSE last_tick END
      WHERE name = $1 RETURNING name
      """, [.bytes(name.bytes), .integer(paused ? 1 : 0), .integer(time.microseconds)])
  }

  public func removeSchedule(_ name: LuaString) throws(StoreError) {
    try changeSchedule(name, "DELETE FROM schedule WHERE name = $1 RETURNING name", [.bytes(name.bytes)])
  }

  public func decideTick(_ tick: StoreTimestamp, of name: LuaString, submitting submission: RunSubmission) throws(StoreError)
    -> TickOutcome
  {
    let arguments = try Self.encode(submission.arguments.map { .string(LuaString($0)) }, root: "arguments")
    var scheduled = submission
    scheduled.schedule = name
    return try withConnection { db in
      try db.transaction {
        // The schedule's row lock orders the deciders of its ticks, so the
        // count of unfinished runs below is not raced.
        let found = try db.query("SELECT overlap FROM schedule WHERE name = $1 FOR UPDATE", [.bytes(name.bytes)])
        guard found.count == 1, let overlap = ScheduleOverlap(rawValue: found.text(0, 0)) else {
          throw StoreError(.noSuchSchedule, "no schedule \(name.quoted) in \(self.location)")
        }
        let outcome: TickOutcome
        let inserted = try db.query(
          """
          INSERT INTO schedule_tick (schedule, tick, outcome) VALUES ($1, $2, 'skipped')
          ON CONFLICT DO NOTHING RETURNING tick
          """, [.bytes(name.bytes), .integer(tick.microseconds)])
        if inserted.count == 0 {
          outcome = .taken
        } else {
          let counts = try db.query(
            """
            SELECT count(*), count(*) FILTER (WHERE status = 'queued') FROM run
            WHERE schedule = $1 AND status IN ('queued', 'running')
            """, [.bytes(name.bytes)])
          if overlap.startsRun(unfinished: Int(counts.int64(0, 0)), queued: Int(counts.int64(0, 1))) {
            let run = try db.query(
              """
              \(Self.insertQueuedRun) RETURNING id
              """, Self.insertParameters(scheduled, arguments: arguments))
            let id = RunID(run.int64(0, 0))
            try db.query(
              "UPDATE schedule_tick SET outcome = 'started', run = $3 WHERE schedule = $1 AND tick = $2",
              [.bytes(name.bytes), .integer(tick.microseconds), .integer(id.rawValue)])
            outcome = .started(id)
          } else {
            outcome = .skipped
          }
        }
        try Self.advance(db, name, to: tick)
        return outcome
      }
    }
  }

  public func advanceSchedule(_ name: LuaString, to tick: StoreTimestamp) throws(StoreError) {
    try withConnection { db in try Self.advance(db, name, to: tick) }
  }

  private static func advance(_ db: PostgresConnection, _ name: LuaString, to tick: StoreTimestamp) throws {
    try db.query(
      "UPDATE schedule SET last_tick = $2 WHERE name = $1 AND (last_tick IS NULL OR last_tick < $2)",
      [.bytes(name.bytes), .integer(tick.microseconds)])
  }

  private func changeSchedule(_ name: LuaString, _ sql: String, _ parameters: [PostgresValue]) throws(StoreError) {
    try withConnection { db in
      if try db.query(sql, parameters).count == 0 {
        throw StoreError(.noSuchSchedule, "no schedule \(name.quoted) in \(self.location)")
      }
    }
  }

  private func readSchedule(_ rows: PostgresResult, _ row: Int) throws(StoreError) -> Schedule {
    let name = LuaString(bytes: rows.bytes(row, 0))
    let checked = StoredRow(store: location, row: "schedule \(name.quoted)")
    guard let overlap = ScheduleOverlap(rawValue: rows.text(row, 3)) else {
      throw StoreError(.badValue, "store \(location): schedule \(name.quoted) has an unknown overlap '\(rows.text(row, 3))'")
    }
    let arguments: [String]
    do {
      arguments = try LuaValueCodec.decode(rows.bytes(row, 6)).map { $0.luaStringValue?.lossyString ?? "" }
    } catch {
      throw StoreError(.badValue, "store \(location): the arguments of schedule \(name.quoted): \(error)")
    }
    return Schedule(
      name: name, cron: rows.text(row, 1), timeZone: rows.text(row, 2), overlap: overlap,
      catchupMicroseconds: rows.isNull(row, 4) ? nil : rows.int64(row, 4), file: rows.text(row, 5), arguments: arguments,
      isPaused: rows.int64(row, 7) != 0, createdAt: try checked.time(rows.int64(row, 8), "created_at"),
      lastTick: try checked.time(rows.isNull(row, 9) ? nil : rows.int64(row, 9), "last_tick"))
  }
}
