import CPostgres
import Foundation

/// A fresh, empty schema on the throwaway PostgreSQL server `scripts/test`
/// starts (`LUNAR_TEST_POSTGRES`), and a URL whose connections use it (their
/// `search_path`); dropped with everything in it when released. Tests
/// that need it are enabled with `.enabled(if: TestPostgresSchema.isAvailable)`.
public final class TestPostgresSchema {
  /// The server's URL, from `LUNAR_TEST_POSTGRES`; nil when the tests run
  /// without one (`swift test` alone).
  public static let serverURL: String? = ProcessInfo.processInfo.environment["LUNAR_TEST_POSTGRES"].flatMap { $0.isEmpty ? nil : $0 }
  /// The same server over 127.0.0.1, where logins need a password
  /// (`LUNAR_TEST_POSTGRES_TCP`, without one).
  public static let tcpURL: String? = ProcessInfo.processInfo.environment["LUNAR_TEST_POSTGRES_TCP"].flatMap { $0.isEmpty ? nil : $0 }
  /// True when there is a server to test against.
  public static var isAvailable: Bool { serverURL != nil }

  /// The schema's name.
  public let name: String
  /// A URL for the server whose connections create and find tables in this schema.
  public let url: String

  /// Creates an empty schema of its own.
  public init() throws {
    guard let server = Self.serverURL else { throw Failure(message: "LUNAR_TEST_POSTGRES is not set") }
    name = "lunar_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
    url = server + (server.contains("?") ? "&" : "?") + "options=-csearch_path%3D" + name
    try Self.execute("CREATE SCHEMA \(name)", on: server)
  }

  deinit { _ = try? Self.execute("DROP SCHEMA \(name) CASCADE", on: Self.serverURL ?? "") }

  /// Runs `sql` in this schema and returns the first column of its rows, as text.
  @discardableResult
  public func query(_ sql: String) throws -> [String?] {
    try Self.execute(sql, on: url)
  }

  /// A failure of the test server, with libpq's message.
  public struct Failure: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
  }

  @discardableResult
  private static func execute(_ sql: String, on url: String) throws -> [String?] {
    guard let connection = lunar_PQconnectdb(url) else { throw Failure(message: "out of memory") }
    defer { lunar_PQfinish(connection) }
    guard lunar_PQstatus(connection) == CONNECTION_OK else { throw Failure(message: String(cString: lunar_PQerrorMessage(connection))) }
    guard let result = lunar_PQexec(connection, sql) else { throw Failure(message: String(cString: lunar_PQerrorMessage(connection))) }
    defer { lunar_PQclear(result) }
    let status = lunar_PQresultStatus(result)
    guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
      throw Failure(message: "\(sql): \(String(cString: lunar_PQresultErrorMessage(result)))")
    }
    return (0..<lunar_PQntuples(result)).map { row in
      lunar_PQgetisnull(result, row, 0) != 0 ? nil : String(cString: lunar_PQgetvalue(result, row, 0))
    }
  }
}
