import CLuaShim

/// A Lua value that can cross between Lua and Swift: a Sendable copy, never
/// a reference into a Lua state.
///
/// Integers stay integers and floats stay floats; strings are bytes, so
/// invalid UTF-8 survives; tables keep their array part and their keyed part
/// apart, so `{1, 2, x = 3}` comes back as it went.
public enum LuaValue: Sendable, Hashable {
  case `nil`
  case boolean(Bool)
  case integer(Int64)
  case number(Double)
  case string(LuaString)
  case table(LuaTable)

  /// The name Lua's `type()` gives this value.
  public var typeName: String {
    switch self {
    case .nil: "nil"
    case .boolean: "boolean"
    case .integer, .number: "number"
    case .string: "string"
    case .table: "table"
    }
  }

  /// False only for `nil` and `false`, as in Lua.
  public var isTruthy: Bool {
    switch self {
    case .nil, .boolean(false): false
    default: true
    }
  }

  /// The value as a Swift string if it is a string of valid UTF-8.
  public var stringValue: String? {
    if case .string(let s) = self { return s.string }
    return nil
  }

  /// The value's bytes if it is a string, valid UTF-8 or not: how a name
  /// from Lua is compared.
  public var luaStringValue: LuaString? {
    if case .string(let s) = self { return s }
    return nil
  }

  /// The value as an integer if it is one, or a float with an exact integer
  /// value (Lua's `math.tointeger`).
  public var integerValue: Int64? {
    switch self {
    case .integer(let i): return i
    case .number(let d):
      guard let i = Int64(exactly: d) else { return nil }
      return i
    default: return nil
    }
  }

  /// The value as a float if it is a number of either kind.
  public var numberValue: Double? {
    switch self {
    case .integer(let i): Double(i)
    case .number(let d): d
    default: nil
    }
  }

  /// The table if the value is one.
  public var tableValue: LuaTable? {
    if case .table(let t) = self { return t }
    return nil
  }

  /// Field or element lookup; `nil` for anything that is not a table.
  public subscript(key: LuaKey) -> LuaValue {
    tableValue?[key] ?? .nil
  }
}

extension LuaValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral,
  ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
  ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
  public init(nilLiteral: ()) { self = .nil }
  public init(booleanLiteral value: Bool) { self = .boolean(value) }
  public init(integerLiteral value: Int64) { self = .integer(value) }
  public init(floatLiteral value: Double) { self = .number(value) }
  public init(stringLiteral value: String) { self = .string(LuaString(value)) }
  public init(arrayLiteral elements: LuaValue...) { self = .table(LuaTable(array: elements)) }
  public init(dictionaryLiteral elements: (LuaKey, LuaValue)...) {
    var table = LuaTable()
    for (key, value) in elements { table[key] = value }
    self = .table(table)
  }
}

extension LuaValue: CustomStringConvertible {
  /// A readable rendering in Lua syntax, for messages and debugging.
  public var description: String {
    switch self {
    case .nil: return "nil"
    case .boolean(let b): return b ? "true" : "false"
    case .integer(let i): return String(i)
    case .number(let d): return LuaValue.format(d)
    case .string(let s): return s.quoted
    case .table(let t): return t.description
    }
  }

  /// Formats a float as Lua's `%.14g` does, keeping a `.0` on integral values.
  static func format(_ d: Double) -> String {
    if d.isNaN { return d.sign == .minus ? "-nan" : "nan" }
    if d.isInfinite { return d < 0 ? "-inf" : "inf" }
    var buffer = [CChar](repeating: 0, count: 64)
    let length = Int(lunar_formatnumber(&buffer, buffer.count, d))
    var text = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "n" || $0 == "i" }) { text += ".0" }
    return text
  }
}
