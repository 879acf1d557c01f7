import Foundation
import LunarStore

/// The throwaway PostgreSQL cluster `scripts/bench` starts for the
/// benchmarks (`scripts/pg-cluster start DIR --fsync`) and removes when they
/// end, whatever happens; its URL is in `LUNAR_BENCH_PG_URL` (never
/// `LUNAR_PG_URL`, which may name a server someone uses). Each measurement
/// gets a database of its own on it, so Lunar's tables and procrastinate's
/// never meet and no run inherits another's dead rows.
struct BenchPostgresServer {
  /// The URL of the cluster's first database, where others are made.
  let url: String

  /// The cluster `scripts/bench` started, or nil.
  static func fromEnvironment() -> BenchPostgresServer? {
    guard let url = ProcessInfo.processInfo.environment["LUNAR_BENCH_PG_URL"], !url.isEmpty else { return nil }
    return BenchPostgresServer(url: url)
  }

  /// The URL of the database `name`, with libpq `options` (such as
  /// `-csynchronous_commit=off`) if given: a later `dbname` parameter
  /// overrides the one in the URL's path.
  func url(ofDatabase name: String, options: String? = nil) -> String {
    var url = self.url + (self.url.contains("?") ? "&" : "?") + "dbname=" + name
    if let options {
      url += "&options=" + (options.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? options)
    }
    return url
  }

  /// Makes the database `name` afresh (dropping any left by an earlier
  /// run) and returns its URL.
  func freshDatabase(_ name: String) throws -> String {
    let admin = try quietConnection()
    try admin.execute("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
    try admin.execute("CREATE DATABASE \"\(name)\"")
    return url(ofDatabase: name)
  }

  /// Drops the database `name`, and with it whatever a measurement left.
  func drop(_ name: String) {
    try? quietConnection().execute("DROP DATABASE IF EXISTS \"\(name)\" WITH (FORCE)")
  }

  /// A connection whose server notices (a database to drop that is not
  /// there) stay out of the benchmarks' output.
  private func quietConnection() throws -> PostgresConnection {
    let db = try PostgresConnection(url: url)
    try db.execute("SET client_min_messages = warning")
    return db
  }

  /// The median time in microseconds of a commit of one small row: with
  /// fsync on, the disk's flush, which bounds every figure that commits
  /// once per job and moves a lot on a shared machine.
  func commitMicroseconds() throws -> Double {
    let db = try PostgresConnection(url: url)
    try db.execute("CREATE TABLE IF NOT EXISTS bench_commit (n integer)")
    defer { try? db.execute("DROP TABLE bench_commit") }
    var times: [Double] = []
    for n in 0..<200 {
      let start = ContinuousClock.now
      try db.execute("INSERT INTO bench_commit VALUES (\(n))")
      times.append((ContinuousClock.now - start).nanoseconds / 1e3)
    }
    return times.sorted()[times.count / 2]
  }
}
