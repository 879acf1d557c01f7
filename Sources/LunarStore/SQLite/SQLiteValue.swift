/// A value bound to a statement's parameter or read from a column, in
/// SQLite's five storage classes.
public enum SQLiteValue: Sendable, Hashable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  /// Bytes, stored exactly: names from Lua, encoded values, fingerprints.
  case blob([UInt8])
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral {
  public init(integerLiteral value: Int64) { self = .integer(value) }
  public init(stringLiteral value: String) { self = .text(value) }
}
