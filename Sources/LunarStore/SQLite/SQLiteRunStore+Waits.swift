import LuaKit

extension SQLiteRunStore: WaitStore {
  public func recordStepWait(_ wait: StepWait, of run: RunID) throws(StoreError) {
    try withDatabase { db in
      try db.transaction {
        try db.run(
          """
          INSERT INTO step_wait (run, name, fingerprint, deadline_ms) VALUES (?, ?, ?, ?)
          ON CONFLICT (run, name) DO UPDATE SET fingerprint = excluded.fingerprint, deadline_ms = excluded.deadline_ms
          """,
          [.integer(run.rawValue), .blob(wait.name.bytes), wait.fingerprint.map { .blob($0.bytes) } ?? .null,
           .integer(wait.deadlineMilliseconds)])
      }
    } explaining: { error in
      error.code == SQLiteError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func stepWaits(of run: RunID) throws(StoreError) -> [StepWait] {
    try withDatabase { db in
      var waits: [StepWait] = []
      try db.query(
        "SELECT name, fingerprint, deadline_ms FROM step_wait WHERE run = ? ORDER BY name", [.integer(run.rawValue)]
      ) { row in
        waits.append(
          StepWait(
            name: LuaString(bytes: row.blob(0)), fingerprint: row.isNull(1) ? nil : Fingerprint(bytes: row.blob(1)),
            deadlineMilliseconds: row.int64(2)))
      }
      return waits
    }
  }

  public func sendSignal(_ name: LuaString, value: LuaValue, to run: RunID, at time: StoreTimestamp) throws(StoreError) {
    let encoded = try SignalValue.encode(value, name: name)
    try withDatabase { db in
      try db.transaction {
        try db.run(
          """
          INSERT INTO run_signal (run, name, value, sent_at) VALUES (?, ?, ?, ?)
          ON CONFLICT (run, name) DO UPDATE SET value = excluded.value, sent_at = excluded.sent_at
          """,
          [.integer(run.rawValue), .blob(name.bytes), .blob(encoded), .integer(time.microseconds)])
      }
    } explaining: { error in
      error.code == SQLiteError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func signal(_ name: LuaString, of run: RunID) throws(StoreError) -> LuaValue?? {
    let stored: [UInt8]? = try withDatabase { db in
      var value: [UInt8]?
      try db.query("SELECT value FROM run_signal WHERE run = ? AND name = ?", [.integer(run.rawValue), .blob(name.bytes)]) {
        row in value = row.blob(0)
      }
      return value
    }
    guard let stored else { return nil }
    return .some(try SignalValue.decode(stored, name: name, run: run, store: location))
  }
}
