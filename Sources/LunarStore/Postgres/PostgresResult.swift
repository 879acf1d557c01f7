import CPostgres

/// The rows of a query, in binary form: read a column of a row by number
/// (both from 0).
///
/// Not Sendable: it belongs to the connection's thread of use.
public final class PostgresResult {
  private let handle: OpaquePointer

  init(_ handle: OpaquePointer) { self.handle = handle }

  deinit { lunar_PQclear(handle) }

  /// How many rows there are.
  public var count: Int { Int(lunar_PQntuples(handle)) }

  /// True if column `column` of row `row` is NULL.
  public func isNull(_ row: Int, _ column: Int) -> Bool { lunar_PQgetisnull(handle, Int32(row), Int32(column)) != 0 }

  /// The column's bytes, exactly (empty for NULL).
  public func bytes(_ row: Int, _ column: Int) -> [UInt8] {
    let length = Int(lunar_PQgetlength(handle, Int32(row), Int32(column)))
    guard length > 0, let start = lunar_PQgetvalue(handle, Int32(row), Int32(column)) else { return [] }
    return [UInt8](UnsafeRawBufferPointer(start: start, count: length))
  }

  /// The column as text, invalid UTF-8 repaired (empty for NULL).
  public func text(_ row: Int, _ column: Int) -> String { String(decoding: bytes(row, column), as: UTF8.self) }

  /// The column as an integer, whether `smallint`, `integer` or `bigint`
  /// (0 for NULL).
  public func int64(_ row: Int, _ column: Int) -> Int64 {
    // Binary integers are big-endian, as wide as their type.
    bytes(row, column).reduce(Int64(0)) { $0 << 8 | Int64($1) }
      .signExtended(fromBytes: Int(lunar_PQgetlength(handle, Int32(row), Int32(column))))
  }
}

extension Int64 {
  /// The value of the low `count` bytes read as a signed integer of that width.
  fileprivate func signExtended(fromBytes count: Int) -> Int64 {
    guard count > 0 && count < 8 else { return self }
    let shift = Int64(64 - count * 8)
    return (self << shift) >> shift
  }
}
