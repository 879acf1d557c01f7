import LuaKit

extension PostgresRunStore: WaitStore {
  public func recordStepWait(_ wait: StepWait, of run: RunID) throws(StoreError) {
    try withConnection { db in
      _ = try db.query(
        """
        INSERT INTO step_wait (run, name, fingerprint, deadline_ms) VALUES ($1, $2, $3, $4)
        ON CONFLICT (run, name) DO UPDATE SET fingerprint = excluded.fingerprint, deadline_ms = excluded.deadline_ms
        """,
        [.integer(run.rawValue), .bytes(wait.name.bytes), wait.fingerprint.map { .bytes($0.bytes) } ?? .null,
         .integer(wait.deadlineMilliseconds)])
    } explaining: { error in
      error.state == PostgresError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func stepWaits(of run: RunID) throws(StoreError) -> [StepWait] {
    try withConnection { db in
      let rows = try db.query(
        "SELECT name, fingerprint, deadline_ms FROM step_wait WHERE run = $1 ORDER BY name", [.integer(run.rawValue)])
      var waits: [StepWait] = []
      for row in 0..<rows.count {
        waits.append(
          StepWait(
            name: LuaString(bytes: rows.bytes(row, 0)),
            fingerprint: rows.isNull(row, 1) ? nil : Fingerprint(bytes: rows.bytes(row, 1)),
            deadlineMilliseconds: rows.int64(row, 2)))
      }
      return waits
    }
  }

  public func sendSignal(_ name: LuaString, value: LuaValue, to run: RunID, at time: StoreTimestamp) throws(StoreError) {
    let encoded = try SignalValue.encode(value, name: name)
    try withConnection { db in
      _ = try db.query(
        """
        INSERT INTO run_signal (run, name, value, sent_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (run, name) DO UPDATE SET value = excluded.value, sent_at = excluded.sent_at
        """,
        [.integer(run.rawValue), .bytes(name.bytes), .bytes(encoded), .integer(time.microseconds)])
    } explaining: { error in
      error.state == PostgresError.foreignKeyViolation ? StoreError(.noSuchRun, "no run \(run) in \(location)") : nil
    }
  }

  public func signal(_ name: LuaString, of run: RunID) throws(StoreError) -> LuaValue?? {
    let stored: [UInt8]? = try withConnection { db in
      let rows = try db.query(
        "SELECT value FROM run_signal WHERE run = $1 AND name = $2", [.integer(run.rawValue), .bytes(name.bytes)])
      return rows.count == 0 ? nil : rows.bytes(0, 0)
    }
    guard let stored else { return nil }
    return .some(try SignalValue.decode(stored, name: name, run: run, store: location))
  }
}
