import CSQLite

/// A failure reported by SQLite: its message, its (extended) result code,
/// and the statement that failed, if any.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
  /// SQLite's extended result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT_UNIQUE`, ...).
  public var code: Int32
  /// SQLite's own words (`database is locked`, `no such table: run`).
  public var message: String
  /// The SQL that failed, when a statement did.
  public var statement: String?

  /// An error with SQLite's code and message.
  public init(code: Int32, message: String, statement: String? = nil) {
    self.code = code
    self.message = message
    self.statement = statement
  }

  /// The error the connection `db` holds for result `code`.
  init(_ db: OpaquePointer?, code: Int32, statement: String? = nil) {
    let text = db.map { String(cString: lunar_sqlite3_errmsg($0)) } ?? String(cString: lunar_sqlite3_errstr(code))
    self.init(code: code, message: text, statement: statement)
  }

  /// SQLite's library (Debian's libsqlite3-0, opened on first use: see
  /// `CSQLite.h`) cannot be loaded; the message says why.
  static var libraryMissing: SQLiteError {
    SQLiteError(code: SQLITE_CANTOPEN, message: "SQLite store needs libsqlite3-0 (\(String(cString: lunar_sqlite_load_error())))")
  }

  /// `SQLITE_CONSTRAINT_FOREIGNKEY`, a macro Swift cannot import.
  static let foreignKeyViolation = SQLITE_CONSTRAINT | 3 << 8

  /// True when another connection held a lock for longer than the busy timeout.
  /// True when the database could be opened only to read, and then not
  /// even that: SQLite had no shared-memory file (`-shm`) to read the
  /// write-ahead log by, and could not create one.
  var isReadOnlyFailure: Bool { code & 0xFF == SQLITE_READONLY || code & 0xFF == SQLITE_CANTOPEN }

  public var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }

  public var description: String {
    // One line, whatever the SQL's layout.
    let sql = statement.map { " in `\($0.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " "))`" } ?? ""
    return "\(message) (SQLite error \(code))\(sql)"
  }
}
