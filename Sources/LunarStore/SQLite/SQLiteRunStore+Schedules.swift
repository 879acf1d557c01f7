import LuaKit

extension SQLiteRunStore: ScheduleStore {
  private static let scheduleColumns =
    "name, cron, timezone, overlap, catchup, file, arguments, paused, created_at, last_tick"

  public func addSchedule(_ schedule: Schedule) throws(StoreError) {
    let arguments = try Self.encode(schedule.arguments.map { .string(LuaString($0)) }, root: "arguments")
    try withDatabase { db in
      try db.transaction {
        if case .integer(1)? = try db.scalar("SELECT 1 FROM schedule WHERE name = ?", [.blob(schedule.name.bytes)]) {
          throw StoreError(.duplicateSchedule, "a schedule named \(schedule.name.quoted) exists already in \(self.location)")
        }
        try db.run(
          """
          INSERT INTO schedule (name, cron, timezone, overlap, catchup, file, arguments, paused, created_at, last_tick)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          """,
          [
            .blob(schedule.name.bytes), .text(schedule.cron), .text(schedule.timeZone), .text(schedule.overlap.rawValue),
            schedule.catchupMicroseconds.map { .integer($0) } ?? .null, .text(schedule.file), .blob(arguments),
            .integer(schedule.isPaused ? 1 : 0), .integer(schedule.createdAt.microseconds),
            schedule.lastTick.map { .integer($0.microseconds) } ?? .null,
          ])
      }
    }
  }

  public func schedules() throws(StoreError) -> [Schedule] {
    try withDatabase { db in
      var found: [Schedule] = []
      try db.query("SELECT \(Self.scheduleColumns) FROM schedule ORDER BY name") { row in found.append(try self.readSchedule(row)) }
      return found
    }
  }

  public func schedule(named name: LuaString) throws(StoreError) -> Schedule? {
    try withDatabase { db in
      var found: Schedule?
      try db.query("SELECT \(Self.scheduleColumns) FROM schedule WHERE name = ?", [.blob(name.bytes)]) { row in
        found = try self.readSchedule(row)
      }
      return found
    }
  }

  public func setSchedule(_ name: LuaString, paused: Bool, at time: StoreTimestamp) throws(StoreError) {
    try changeSchedule(
      name,
      "UPDATE schedule SET paused = ?, last_tick = CASE WHEN ? = 0 AND (last_tick IS NULL OR last_tick < ?) THEN ? ELSE last_tick END WHERE name = ?",
      [.integer(paused ? 1 : 0), .integer(paused ? 1 : 0), .integer(time.microseconds), .integer(time.microseconds), .blob(name.bytes)])
  }

  public func removeSchedule(_ name: LuaString) throws(StoreError) {
    try changeSchedule(name, "DELETE FROM schedule WHERE name = ?", [.blob(name.bytes)])
  }

  public func decideTick(_ tick: StoreTimestamp, of name: LuaString, submitting submission: RunSubmission) throws(StoreError)
    -> TickOutcome
  {
    let arguments = try Self.encode(submission.arguments.map { .string(LuaString($0)) }, root: "arguments")
    return try withDatabase { db in
      try db.transaction {
        var overlap: ScheduleOverlap?
        try db.query("SELECT overlap FROM schedule WHERE name = ?", [.blob(name.bytes)]) { row in
          overlap = ScheduleOverlap(rawValue: row.text(0))
        }
        guard let overlap else { throw StoreError(.noSuchSchedule, "no schedule \(name.quoted) in \(self.location)") }
        let outcome: TickOutcome
        try db.run(
          "INSERT OR IGNORE INTO schedule_tick (schedule, tick, outcome) VALUES (?, ?, 'skipped')",
          [.blob(name.bytes), .integer(tick.microseconds)])
        if db.changes == 0 {
          outcome = .taken
        } else {
          var (unfinished, queued) = (0, 0)
          try db.query(
            """
            SELECT count(*), count(CASE status WHEN 'queued' THEN 1 END) FROM run
            WHERE schedule = ? AND status IN ('queued', 'running')
            """, [.blob(name.bytes)]
          ) { row in (unfinished, queued) = (Int(row.int64(0)), Int(row.int64(1))) }
          if overlap.startsRun(unfinished: unfinished, queued: queued) {
            var scheduled = submission
            scheduled.schedule = name
            let run = try Self.insertQueuedRun(db, scheduled, arguments: arguments)
            try db.run(
              "UPDATE schedule_tick SET outcome = 'started', run = ? WHERE schedule = ? AND tick = ?",
              [.integer(run.rawValue), .blob(name.bytes), .integer(tick.microseconds)])
            outcome = .started(run)
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
    try withDatabase { db in try db.transaction { try Self.advance(db, name, to: tick) } }
  }

  private static func advance(_ db: SQLiteDatabase, _ name: LuaString, to tick: StoreTimestamp) throws {
    try db.run(
      "UPDATE schedule SET last_tick = ? WHERE name = ? AND (last_tick IS NULL OR last_tick < ?)",
      [.integer(tick.microseconds), .blob(name.bytes), .integer(tick.microseconds)])
  }

  private func changeSchedule(_ name: LuaString, _ sql: String, _ bindings: [SQLiteValue]) throws(StoreError) {
    try withDatabase { db in
      let changed = try db.transaction {
        try db.run(sql, bindings)
        return db.changes
      }
      if changed == 0 { throw StoreError(.noSuchSchedule, "no schedule \(name.quoted) in \(self.location)") }
    }
  }

  private func readSchedule(_ row: SQLiteStatement) throws(StoreError) -> Schedule {
    let name = LuaString(bytes: row.blob(0))
    let checked = StoredRow(store: path, row: "schedule \(name.quoted)")
    guard let overlap = ScheduleOverlap(rawValue: row.text(3)) else {
      throw StoreError(.badValue, "store \(path): schedule \(name.quoted) has an unknown overlap '\(row.text(3))'")
    }
    let arguments: [String]
    do {
      arguments = try LuaValueCodec.decode(row.blob(6)).map { $0.luaStringValue?.lossyString ?? "" }
    } catch {
      throw StoreError(.badValue, "store \(path): the arguments of schedule \(name.quoted): \(error)")
    }
    return Schedule(
      name: name, cron: row.text(1), timeZone: row.text(2), overlap: overlap,
      catchupMicroseconds: row.isNull(4) ? nil : row.int64(4), file: row.text(5), arguments: arguments,
      isPaused: row.int64(7) != 0, createdAt: try checked.time(row.int64(8), "created_at"),
      lastTick: try checked.time(row.isNull(9) ? nil : row.int64(9), "last_tick"))
  }
}
