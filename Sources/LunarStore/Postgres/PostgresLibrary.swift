import CPostgres

/// PostgreSQL's client library, Debian's libpq5: opened when a PostgreSQL
/// store is first used, never at start-up (see `CPostgres.h`).
enum PostgresLibrary {
  /// Why a PostgreSQL store cannot be used on this machine, as a user reads
  /// it; nil once libpq is loaded (it is loaded by the first call).
  static var problem: String? {
    guard lunar_pq_load() == 0 else { return nil }
    return "PostgreSQL store needs libpq5 (\(String(cString: lunar_pq_load_error())))"
  }
}
