/// A key of a table's keyed part. Lua allows any non-nil key; the ones that
/// can cross into Swift are those that are values themselves.
public enum LuaKey: Sendable, Hashable {
  case boolean(Bool)
  case integer(Int64)
  /// A float key; never NaN, and never integral (Lua stores those as integers).
  case number(Double)
  case string(LuaString)

  /// The key as a value.
  public var value: LuaValue {
    switch self {
    case .boolean(let b): .boolean(b)
    case .integer(let i): .integer(i)
    case .number(let d): .number(d)
    case .string(let s): .string(s)
    }
  }

  /// The key Lua would use for `value`, or nil for values that cannot be
  /// keys (nil, NaN, tables). Integral floats become integers, as in Lua.
  public init?(_ value: LuaValue) {
    switch value {
    case .nil, .table: return nil
    case .boolean(let b): self = .boolean(b)
    case .integer(let i): self = .integer(i)
    case .string(let s): self = .string(s)
    case .number(let d):
      if d.isNaN { return nil }
      if let i = Int64(exactly: d) { self = .integer(i) } else { self = .number(d) }
    }
  }

  /// The step this key adds to a path: `.name`, `[3]` or `["odd key"]`.
  var pathComponent: String {
    switch self {
    case .string(let s) where s.isIdentifier: "." + s.lossyString
    case .string(let s): "[\(s.quoted)]"
    case .integer(let i): "[\(i)]"
    case .number(let d): "[\(LuaValue.format(d))]"
    case .boolean(let b): "[\(b)]"
    }
  }
}

extension LuaKey: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
  public init(stringLiteral value: String) { self = .string(LuaString(value)) }
  public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension LuaKey: CustomStringConvertible {
  public var description: String {
    switch self {
    case .string(let s) where s.isIdentifier: s.lossyString
    default: "[\(value.description)]"
    }
  }
}
