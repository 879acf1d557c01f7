import CSQLite

/// One connection to a SQLite database: a thin, safe wrapper over the C API
/// (which reports every error by its result, never by unwinding).
///
/// Not Sendable: SQLite is opened without its own mutex, so a connection is
/// used from one thread at a time (`SQLiteRunStore` keeps it behind a lock).
public final class SQLiteDatabase {
  /// How to open the file.
  public struct OpenFlags: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    /// Reads only; writing is an error.
    public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
    /// Reads and writes.
    public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
    /// Creates the file if it is missing (with `readWrite`).
    public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
    /// The path is a `file:` URI, which may carry settings (`immutable=1`).
    public static let uri = OpenFlags(rawValue: SQLITE_OPEN_URI)
  }

  /// How a transaction takes its locks.
  public enum TransactionKind: Sendable {
    /// Locks on first use. For readers: a reader that later writes may
    /// fail with "database is locked" when another connection wrote first.
    case deferred
    /// Takes the write lock at once (waiting up to the busy timeout), so two
    /// writers never deadlock upgrading their locks.
    case immediate
  }

  /// The file, as given.
  public let path: String
  let handle: OpaquePointer
  private var cache: [String: SQLiteStatement] = [:]
  /// The log keeping `keepWriteAheadLogSmall` started, if it did; freed
  /// after its hook is removed.
  private var wal: UnsafeMutablePointer<lunar_sqlite_wal>?
  /// The wait `setBusyTimeout` set, which a checkpoint's shorter one gives back.
  private var busyTimeoutMilliseconds: Int32 = 0

  /// Opens the database at `path`.
  public init(path: String, flags: OpenFlags = [.readWrite, .create]) throws(SQLiteError) {
    guard lunar_sqlite_load() != 0 else { throw SQLiteError.libraryMissing }
    var db: OpaquePointer?
    let code = lunar_sqlite3_open_v2(path, &db, flags.rawValue | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, nil)
    guard code == SQLITE_OK, let db else {
      let error = SQLiteError(db, code: code)
      lunar_sqlite3_close_v2(db)
      throw error
    }
    self.path = path
    self.handle = db
  }

  deinit {
    if let wal {
      lunar_sqlite_wal_stop(handle)
      wal.deallocate()
    }
    cache.removeAll()
    // Statements a caller still holds keep the connection open until they go.
    lunar_sqlite3_close_v2(handle)
  }

  /// How long a statement waits for another connection's lock before it
  /// fails with "database is locked".
  public func setBusyTimeout(milliseconds: Int32) {
    busyTimeoutMilliseconds = milliseconds
    wal?.pointee.busy_timeout_ms = milliseconds
    lunar_sqlite_busy_timeout(handle, milliseconds)
  }

  /// Keeps the write-ahead log near SQLite's usual size while other
  /// processes write to the file too: a commit that leaves it past twice
  /// that size checkpoints it whole and empties it, waiting briefly for the
  /// others (see `lunar_sqlite_wal_hook`).
  public func keepWriteAheadLogSmall() {
    guard wal == nil else { return }
    let state = UnsafeMutablePointer<lunar_sqlite_wal>.allocate(capacity: 1)
    state.initialize(to: lunar_sqlite_wal(busy_timeout_ms: busyTimeoutMilliseconds, truncate_at: 0, truncated: 0, busy: 0))
    wal = state
    lunar_sqlite_wal_start(handle, state)
  }

  /// How many checkpoints after a commit emptied the log, and how many
  /// found the store too busy to (for tests and benchmarks).
  public var writeAheadLogTruncations: (emptied: Int, busy: Int) {
    guard let wal else { return (0, 0) }
    return (wal.pointee.truncated, wal.pointee.busy)
  }

  /// Runs `sql`, one or more statements without parameters or results.
  public func execute(_ sql: String) throws(SQLiteError) {
    let code = lunar_sqlite3_exec(handle, sql)
    guard code == SQLITE_OK else { throw SQLiteError(handle, code: code, statement: sql) }
  }

  /// A new prepared statement for `sql` (one statement).
  public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
    try SQLiteStatement(db: handle, sql: sql)
  }

  /// The connection's prepared statement for `sql`, prepared on first use,
  /// reset and bound to `bindings`.
  public func statement(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteStatement {
    let statement: SQLiteStatement
    if let cached = cache[sql] {
      cached.reset()
      statement = cached
    } else {
      statement = try prepare(sql)
      cache[sql] = statement
    }
    try statement.bind(bindings)
    return statement
  }

  /// Runs `sql` (one statement) with `bindings`, ignoring any rows.
  public func run(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) {
    let statement = try statement(sql, bindings)
    while try statement.step() {}
    statement.reset()
  }

  /// Runs `sql` with `bindings` and calls `row` with the statement at each
  /// result row, to read its columns.
  public func query(_ sql: String, _ bindings: [SQLiteValue] = [], row: (SQLiteStatement) throws -> Void) throws {
    let statement = try statement(sql, bindings)
    defer { statement.reset() }
    while try statement.step() { try row(statement) }
  }

  /// The first column of the first row of `sql`, or nil when there is no row.
  public func scalar(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteValue? {
    let statement = try statement(sql, bindings)
    defer { statement.reset() }
    return try statement.step() ? statement.value(0) : nil
  }

  /// Runs `body` in a transaction: committed if it returns, rolled back if
  /// it throws (or the commit fails).
  public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
    try execute(kind == .immediate ? "BEGIN IMMEDIATE" : "BEGIN")
    do {
      let result = try body()
      try execute("COMMIT")
      return result
    } catch {
      if !isAutocommit { try? execute("ROLLBACK") }
      throw error
    }
  }

  /// False inside a transaction.
  public var isAutocommit: Bool { lunar_sqlite3_get_autocommit(handle) != 0 }

  /// The rowid of the last row this connection inserted.
  public var lastInsertedRowID: Int64 { lunar_sqlite3_last_insert_rowid(handle) }

  /// The rows the last INSERT, UPDATE or DELETE changed.
  public var changes: Int { Int(lunar_sqlite3_changes64(handle)) }
}
