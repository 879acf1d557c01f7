import CSQLite

/// A prepared statement of a `SQLiteDatabase`: bind its parameters, step
/// through its rows, read their columns.
///
/// Not Sendable: like its connection, it is used from one thread at a time.
public final class SQLiteStatement {
  /// The SQL it was prepared from, for error messages.
  public let sql: String
  let handle: OpaquePointer
  private let db: OpaquePointer

  init(db: OpaquePointer, sql: String) throws(SQLiteError) {
    var statement: OpaquePointer?
    let code = lunar_sqlite3_prepare_v3(db, sql, UInt32(SQLITE_PREPARE_PERSISTENT), &statement)
    guard code == SQLITE_OK, let statement else { throw SQLiteError(db, code: code, statement: sql) }
    self.db = db
    self.sql = sql
    self.handle = statement
  }

  deinit { lunar_sqlite3_finalize(handle) }

  /// Binds `values` to parameters 1, 2, ... after clearing earlier bindings.
  public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
    lunar_sqlite3_clear_bindings(handle)
    for (index, value) in values.enumerated() { try bind(value, at: Int32(index + 1)) }
  }

  /// Binds `value` to parameter `index` (counted from 1). SQLite copies
  /// texts and blobs: the Swift buffers live only during the call.
  public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
    let code: Int32
    switch value {
    case .null: code = lunar_sqlite3_bind_null(handle, index)
    case .integer(let i): code = lunar_sqlite3_bind_int64(handle, index, i)
    case .real(let d): code = lunar_sqlite3_bind_double(handle, index, d)
    case .text(let s):
      code = s.utf8CString.withUnsafeBufferPointer {
        lunar_sqlite3_bind_text(handle, index, $0.baseAddress, UInt64($0.count - 1))
      }
    case .blob(let bytes):
      // A zero-length blob, not NULL, even though an empty array has no storage.
      code = bytes.isEmpty
        ? lunar_sqlite3_bind_zeroblob(handle, index, 0)
        : bytes.withUnsafeBytes { lunar_sqlite3_bind_blob(handle, index, $0.baseAddress, UInt64($0.count)) }
    }
    guard code == SQLITE_OK else { throw SQLiteError(db, code: code, statement: sql) }
  }

  /// Runs the statement to its next row: true if there is one to read,
  /// false when it is done.
  public func step() throws(SQLiteError) -> Bool {
    switch lunar_sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    case let code:
      let error = SQLiteError(db, code: code, statement: sql)
      lunar_sqlite3_reset(handle)
      throw error
    }
  }

  /// Readies the statement to run again (bindings are kept).
  public func reset() { lunar_sqlite3_reset(handle) }

  /// True if column `column` (counted from 0) of the current row is NULL.
  public func isNull(_ column: Int32) -> Bool { lunar_sqlite3_column_type(handle, column) == SQLITE_NULL }

  /// Column `column` as an integer (0 for NULL).
  public func int64(_ column: Int32) -> Int64 { lunar_sqlite3_column_int64(handle, column) }

  /// Column `column` as a float (0 for NULL).
  public func double(_ column: Int32) -> Double { lunar_sqlite3_column_double(handle, column) }

  /// Column `column`'s bytes, exactly (empty for NULL).
  public func blob(_ column: Int32) -> [UInt8] {
    guard let start = lunar_sqlite3_column_blob(handle, column) else { return [] }
    return [UInt8](UnsafeRawBufferPointer(start: start, count: Int(lunar_sqlite3_column_bytes(handle, column))))
  }

  /// Column `column` as text, invalid UTF-8 repaired (empty for NULL).
  public func text(_ column: Int32) -> String {
    guard let start = lunar_sqlite3_column_text(handle, column) else { return "" }
    return String(decoding: UnsafeBufferPointer(start: start, count: Int(lunar_sqlite3_column_bytes(handle, column))), as: UTF8.self)
  }

  /// Column `column` in its own storage class.
  public func value(_ column: Int32) -> SQLiteValue {
    switch lunar_sqlite3_column_type(handle, column) {
    case SQLITE_INTEGER: .integer(int64(column))
    case SQLITE_FLOAT: .real(double(column))
    case SQLITE_TEXT: .text(text(column))
    case SQLITE_BLOB: .blob(blob(column))
    default: .null
    }
  }
}
