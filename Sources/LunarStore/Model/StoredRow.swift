/// Checks the numbers of one row read from a store before they become
/// Swift values: a store is a file or a server anyone may have written to
/// (sqlite3, psql, another program), so a time of ±2^63 or a negative count
/// is refused in one line naming the row, never left to trap in arithmetic
/// or a conversion later.
struct StoredRow {
  /// The store as messages name it (`sqlite:PATH`'s path, a URL).
  let store: String
  /// The row as messages name it: `run 3`, `step "fetch" of run 3`, `job 7`.
  let row: String

  /// The moment `microseconds` holds, for column `column`.
  /// - Throws: `.badValue` unless it lies within `StoreTimestamp.storable`.
  func time(_ microseconds: Int64, _ column: String) throws(StoreError) -> StoreTimestamp {
    guard StoreTimestamp.storable.contains(microseconds) else {
      throw refusal(
        column, microseconds, "microseconds since 1970 UTC; Lunar reads times in the years 1 to 9999")
    }
    return StoreTimestamp(microseconds: microseconds)
  }

  /// `time(_:_:)` of a column that may be NULL.
  func time(_ microseconds: Int64?, _ column: String) throws(StoreError) -> StoreTimestamp? {
    guard let microseconds else { return nil }
    return try time(microseconds, column) as StoreTimestamp
  }

  /// A count or a position (attempts, lost leases, a step's place), for
  /// column `column`: as wide as a PostgreSQL `integer`, so that the count
  /// after it is one too.
  /// - Throws: `.badValue` when it is negative or past 2^31 - 1.
  func count(_ value: Int64, _ column: String) throws(StoreError) -> Int {
    guard value >= 0 && value <= Int64(Int32.max) else { throw refusal(column, value, "a count from 0 to 2147483647") }
    return Int(value)
  }

  /// A place in a queue, from 1.
  /// - Throws: `.badValue` when it is below 1.
  func sequence(_ value: Int64, _ column: String) throws(StoreError) -> Int64 {
    guard value >= 1 else { throw refusal(column, value, "a place in a queue, from 1") }
    return value
  }

  /// A process id.
  /// - Throws: `.badValue` when it is negative or wider than a `pid_t`.
  func processID(_ value: Int64, _ column: String) throws(StoreError) -> Int32 {
    guard let pid = Int32(exactly: value), pid >= 0 else { throw refusal(column, value, "a process id") }
    return pid
  }

  private func refusal(_ column: String, _ value: Int64, _ meaning: String) -> StoreError {
    StoreError(.badValue, "store \(store): \(row) has a bad \(column): \(value) (\(meaning))")
  }
}
