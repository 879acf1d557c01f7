import CPostgres
import Glibc

/// One connection to a PostgreSQL server: a thin, safe wrapper over libpq.
/// Values always travel as binary parameters (`PQexecParams`), never spliced
/// into SQL, and results come back in binary form (bytes exactly).
///
/// Not Sendable: a libpq connection is used from one thread at a time
/// (`PostgresRunStore` keeps it behind a lock).
public final class PostgresConnection {
  private let handle: OpaquePointer
  /// The statements `query(_:_:prepared:)` has prepared on this session, by
  /// their SQL: their names on the server.
  private var preparedStatements: [String: String] = [:]
  /// Set when a call failed in libpq rather than on the server (no
  /// SQLSTATE): the first call after the server went away fails so while
  /// libpq still reports the connection as fine.
  private var maybeLost = false

  /// Connects to the server `url` names (a libpq URI or key=value string);
  /// gives up after `connectTimeoutSeconds` unless the URL says otherwise.
  /// - Throws: `PostgresError` with libpq's reason on one line (an
  ///   unreachable server, a refused password, a malformed URL).
  /// `serverOptions` are the session's settings (libpq's `options`, such as
  /// `-c name=value`): kept when the connection is made again.
  public init(url: String, connectTimeoutSeconds: Int = 10, serverOptions: String? = nil) throws(PostgresError) {
    if let problem = PostgresLibrary.problem { throw PostgresError(message: problem) }
    // Settings before `dbname` are defaults the URL's own settings override
    // (expand_dbname); `client_encoding` makes text columns UTF-8 whatever
    // the server's encoding.
    let settings: [(String, String)] =
      [("connect_timeout", String(connectTimeoutSeconds)), ("application_name", "lunar"), ("client_encoding", "UTF8")]
      + (serverOptions.map { [("options", $0)] } ?? []) + [("dbname", url)]
    let connection = Self.withCStrings(settings.map(\.0)) { keywords in
      Self.withCStrings(settings.map(\.1)) { values in lunar_PQconnectdbParams(keywords, values, 1) }
    }
    guard let connection else { throw PostgresError(message: "out of memory connecting to PostgreSQL") }
    // libpq prints the server's notices and warnings to standard error as
    // they come ("WARNING: terminating connection due to immediate
    // shutdown command"), amid the command's own lines; what matters of
    // them comes back as the failed call's error.
    lunar_PQsetNoticeProcessor(connection, { _, _ in }, nil)
    guard lunar_PQstatus(connection) == CONNECTION_OK else {
      let error = PostgresError(message: String(cString: lunar_PQerrorMessage(connection)))
      lunar_PQfinish(connection)
      throw error
    }
    handle = connection
  }

  deinit { lunar_PQfinish(handle) }

  /// Checks that `url` is a well-formed libpq URL or connection string,
  /// without connecting; returns libpq's complaint if it is not (nil
  /// without libpq: connecting then says that it is missing).
  public static func problem(with url: String) -> String? {
    guard PostgresLibrary.problem == nil else { return nil }
    var message: UnsafeMutablePointer<CChar>?
    guard let options = lunar_PQconninfoParse(url, &message) else {
      defer { lunar_PQfreemem(message) }
      return message.map { PostgresError.oneLine(String(cString: $0)) } ?? "out of memory"
    }
    lunar_PQconninfoFree(options)
    return nil
  }

  /// True when the connection was lost (the server restarted or went
  /// away): the last call failed in libpq, or libpq says so.
  public var isLost: Bool { maybeLost || lunar_PQstatus(handle) == CONNECTION_BAD }

  /// Connects again if the connection was lost (the server restarted, a
  /// network blip); a call that failed with it stays failed. Only between
  /// transactions: statements of one never span two connections.
  /// - Throws: `PostgresError` with libpq's reason when the server still
  ///   cannot be reached (rather than a later call's "no connection").
  public func reconnectIfLost() throws(PostgresError) {
    guard isLost else { return }
    maybeLost = false
    lunar_PQreset(handle)
    // A new session knows none of the old one's statements.
    preparedStatements = [:]
    guard lunar_PQstatus(handle) == CONNECTION_OK else { throw PostgresError(message: String(cString: lunar_PQerrorMessage(handle))) }
  }

  /// Runs `sql`, one or more statements without parameters, ignoring rows.
  public func execute(_ sql: String) throws(PostgresError) {
    _ = try check(lunar_PQexec(handle, sql))
  }

  /// Runs `sql` (one statement) with `parameters` as `$1`, `$2`, ... and
  /// returns its rows. A `prepared` statement is parsed and planned once
  /// per session, when first run (the types of that run's parameters are
  /// its types; a null's is the server's guess): for statements run again
  /// and again.
  @discardableResult
  public func query(_ sql: String, _ parameters: [PostgresValue] = [], prepared: Bool = false) throws(PostgresError)
    -> PostgresResult
  {
    // Every parameter's bytes in one buffer (plus a byte, so an empty value
    // still has an address: a null pointer would mean SQL NULL).
    var storage: [UInt8] = []
    var spans: [(offset: Int, count: Int)?] = []
    var types: [Oid] = []
    for parameter in parameters {
      let bytes: [UInt8]?
      switch parameter {
      case .null: (bytes, _) = (nil, types.append(0))
      case .integer(let value): (bytes, _) = (withUnsafeBytes(of: value.bigEndian, Array.init), types.append(Self.int8))
      case .text(let text): (bytes, _) = (Array(text.utf8), types.append(Self.text))
      case .bytes(let value): (bytes, _) = (value, types.append(Self.bytea))
      }
      spans.append(bytes.map { (storage.count, $0.count) })
      storage += bytes ?? []
    }
    storage.append(0)
    let lengths = spans.map { Int32($0?.count ?? 0) }
    let formats = [Int32](repeating: 1, count: parameters.count)
    var statement: String?
    if prepared {
      statement = try preparedStatement(sql, types: types)
    }
    let result = storage.withUnsafeBufferPointer { buffer in
      let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
      let values: [UnsafePointer<CChar>?] = spans.map { $0.map { base + $0.offset } }
      if let statement {
        return lunar_PQexecPrepared(handle, statement, Int32(parameters.count), values, lengths, formats, 1)
      }
      return lunar_PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 1)
    }
    return try check(result)
  }

  /// The server's name for `sql`, prepared on this session with parameters
  /// of `types` if it was not yet.
  private func preparedStatement(_ sql: String, types: [Oid]) throws(PostgresError) -> String {
    if let name = preparedStatements[sql] { return name }
    let name = "lunar_\(preparedStatements.count + 1)"
    _ = try check(lunar_PQprepare(handle, name, sql, Int32(types.count), types))
    preparedStatements[sql] = name
    return name
  }

  /// Waits up to `timeout` for a notification on a channel this connection
  /// `LISTEN`s to whose payload `wanted` accepts; true if one came (every
  /// notification read is consumed), false when the time is up.
  /// - Throws: `PostgresError` when the connection is lost.
  public func waitForNotification(timeout: Duration, payload wanted: (String) -> Bool) throws(PostgresError) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var descriptor = pollfd(fd: lunar_PQsocket(handle), events: Int16(POLLIN), revents: 0)
    guard descriptor.fd >= 0 else { throw PostgresError(message: String(cString: lunar_PQerrorMessage(handle))) }
    while true {
      if consumeNotifications(wanted) { return true }
      let (seconds, attoseconds) = (deadline - clock.now).components
      let milliseconds = max(0, seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
      guard poll(&descriptor, 1, Int32(clamping: milliseconds)) > 0 else { return false }
      guard lunar_PQconsumeInput(handle) == 1 else { throw PostgresError(message: String(cString: lunar_PQerrorMessage(handle))) }
    }
  }

  /// Frees the notifications libpq has read; true if `wanted` accepted the
  /// payload of any.
  private func consumeNotifications(_ wanted: (String) -> Bool) -> Bool {
    var any = false
    while let notification = lunar_PQnotifies(handle) {
      any = any || wanted(String(cString: notification.pointee.extra))
      lunar_PQfreemem(notification)
    }
    return any
  }

  /// True while a transaction is open on the connection.
  var isInTransaction: Bool { lunar_PQtransactionStatus(handle) != PQTRANS_IDLE }

  /// Runs `body` in a transaction: committed if it returns, rolled back if
  /// it throws (or the commit fails).
  public func transaction<T>(_ body: () throws -> T) throws -> T {
    try execute("BEGIN")
    do {
      let result = try body()
      try execute("COMMIT")
      return result
    } catch {
      if lunar_PQtransactionStatus(handle) != PQTRANS_IDLE { try? execute("ROLLBACK") }
      throw error
    }
  }

  /// The result `result` if it succeeded, else its error (freed either way
  /// when it is not returned).
  private func check(_ result: OpaquePointer?) throws(PostgresError) -> PostgresResult {
    guard let result else {
      maybeLost = true
      throw PostgresError(message: String(cString: lunar_PQerrorMessage(handle)))
    }
    let status = lunar_PQresultStatus(result)
    guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
      let state = lunar_PQresultErrorField(result, Self.sqlState).map { String(cString: $0) } ?? ""
      let message =
        lunar_PQresultErrorField(result, Self.primaryMessage).map { String(cString: $0) }
        ?? String(cString: lunar_PQresultErrorMessage(result))
      lunar_PQclear(result)
      if state.isEmpty { maybeLost = true }
      // A lost connection's message is on the connection, not the result.
      throw PostgresError(state: state, message: message.isEmpty ? String(cString: lunar_PQerrorMessage(handle)) : message)
    }
    return PostgresResult(result)
  }

  private static func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) } + [nil])
  }

  // Type OIDs of the parameters (pg_type.oid, fixed in every server).
  private static let int8: Oid = 20
  private static let text: Oid = 25
  private static let bytea: Oid = 17
  // PG_DIAG_SQLSTATE and PG_DIAG_MESSAGE_PRIMARY, character macros Swift
  // cannot import.
  private static let sqlState = Int32(UInt8(ascii: "C"))
  private static let primaryMessage = Int32(UInt8(ascii: "M"))
}
