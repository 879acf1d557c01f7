/// A parameter sent to PostgreSQL, always in binary form: values travel as
/// bytes, never spliced into SQL.
public enum PostgresValue: Sendable, Hashable {
  case null
  /// A `bigint`.
  case integer(Int64)
  /// A `text`, as its UTF-8 bytes.
  case text(String)
  /// A `bytea`: names from Lua, encoded values, fingerprints, exactly.
  case bytes([UInt8])
}
