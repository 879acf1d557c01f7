import LuaKit

extension JSON {
  /// Why a JSON text could not be read.
  public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let reason: String
    public var description: String { "\(reason) at byte \(offset)" }
  }

  /// Reads a JSON text into a value: objects become tables with string
  /// keys, arrays become array parts, `null` becomes nil (absent), integers
  /// without a fraction or exponent stay integers.
  public static func decode(_ bytes: [UInt8]) throws(ParseError) -> LuaValue {
    var parser = JSONParser(bytes: bytes)
    parser.skipSpace()
    let value = try parser.value(depth: 0)
    parser.skipSpace()
    guard parser.index == bytes.count else { throw parser.error("unexpected trailing characters") }
    return value
  }

  /// Reads JSON text.
  public static func decode(_ text: String) throws(ParseError) -> LuaValue {
    try decode(Array(text.utf8))
  }

  /// Reads a JSON text into a value that may take at most `allowance`
  /// bytes of Swift's memory (see `LuaValueSize`): reading stops as soon as
  /// it would take more.
  /// - Throws: `ParseError`, or `LuaError.notEnoughMemory` past the allowance.
  public static func decode(_ bytes: [UInt8], allowance: Int) throws -> LuaValue {
    var parser = JSONParser(bytes: bytes, allowance: allowance)
    do {
      parser.skipSpace()
      let value = try parser.value(depth: 0)
      parser.skipSpace()
      guard parser.index == bytes.count else { throw parser.error("unexpected trailing characters") }
      return value
    } catch {
      if parser.exceeded { throw LuaError.notEnoughMemory }
      throw error
    }
  }
}

private struct JSONParser {
  let bytes: [UInt8]
  var index = 0
  /// The most bytes the decoded value may take (`Int.max`: no limit).
  let allowance: Int
  /// About what the value decoded so far takes.
  var size = 0
  /// Set when decoding stopped at the allowance.
  var exceeded = false

  init(bytes: [UInt8], allowance: Int = .max) {
    self.bytes = bytes
    self.allowance = allowance
  }

  /// Adds `bytes` to the decoded value's size; past the allowance, stops.
  mutating func count(_ bytes: Int) throws(JSON.ParseError) {
    size += bytes
    guard size > allowance else { return }
    exceeded = true
    throw error("not enough memory")
  }

  func error(_ reason: String) -> JSON.ParseError { JSON.ParseError(offset: index, reason: reason) }

  mutating func skipSpace() {
    while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
  }

  mutating func value(depth: Int) throws(JSON.ParseError) -> LuaValue {
    guard depth < LuaState.maximumDepth else { throw error("nesting deeper than \(LuaState.maximumDepth)") }
    guard index < bytes.count else { throw error("unexpected end of input") }
    switch bytes[index] {
    case UInt8(ascii: "{"): return try object(depth: depth)
    case UInt8(ascii: "["): return try array(depth: depth)
    case UInt8(ascii: "\""):
      let string = try string()
      try count(LuaValueSize.string(byteCount: string.count))
      return .string(LuaString(bytes: string))
    case UInt8(ascii: "t"): try literal("true"); return .boolean(true)
    case UInt8(ascii: "f"): try literal("false"); return .boolean(false)
    case UInt8(ascii: "n"): try literal("null"); return .nil
    default: return try number()
    }
  }

  mutating func literal(_ word: String) throws(JSON.ParseError) {
    let expected = Array(word.utf8)
    guard index + expected.count <= bytes.count, Array(bytes[index..<(index + expected.count)]) == expected else {
      throw error("invalid literal")
    }
    index += expected.count
  }

  mutating func object(depth: Int) throws(JSON.ParseError) -> LuaValue {
    index += 1
    var table = LuaTable()
    skipSpace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return .table(table)
    }
    while true {
      skipSpace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
      let key = LuaString(bytes: try string())
      try count(MemoryLayout<LuaKey>.stride + LuaValueSize.slot + LuaValueSize.string(byteCount: key.bytes.count))
      skipSpace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
      index += 1
      skipSpace()
      let element = try value(depth: depth + 1)
      table[.string(key)] = element
      skipSpace()
      guard index < bytes.count else { throw error("unexpected end of input") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
      index += 1
      return .table(table)
    }
  }

  mutating func array(depth: Int) throws(JSON.ParseError) -> LuaValue {
    index += 1
    var table = LuaTable()
    var position: Int64 = 1
    skipSpace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return .table(table)
    }
    while true {
      skipSpace()
      try count(LuaValueSize.slot)
      let element = try value(depth: depth + 1)
      table[.integer(position)] = element
      position += 1
      skipSpace()
      guard index < bytes.count else { throw error("unexpected end of input") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      guard bytes[index] == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
      index += 1
      return .table(table)
    }
  }

  mutating func string() throws(JSON.ParseError) -> [UInt8] {
    index += 1
    var out: [UInt8] = []
    while index < bytes.count {
      let byte = bytes[index]
      index += 1
      switch byte {
      case UInt8(ascii: "\""):
        return out
      case UInt8(ascii: "\\"):
        guard index < bytes.count else { throw error("unterminated escape") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = try hex4()
          if (0xD800...0xDBFF).contains(scalar), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
            bytes[index + 1] == UInt8(ascii: "u")
          {
            index += 2
            let low = try hex4()
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          }
          out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8))
        default:
          throw error("invalid escape")
        }
      case 0..<0x20:
        throw error("control character in string")
      default:
        out.append(byte)
      }
    }
    throw error("unterminated string")
  }

  mutating func hex4() throws(JSON.ParseError) -> UInt32 {
    guard index + 4 <= bytes.count else { throw error("short \\u escape") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      index += 1
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw error("invalid \\u escape")
      }
      value = value * 16 + digit
    }
    return value
  }

  mutating func number() throws(JSON.ParseError) -> LuaValue {
    let start = index
    var isFloat = false
    if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
    while index < bytes.count {
      let byte = bytes[index]
      if (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
        index += 1
      } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
      {
        isFloat = true
        index += 1
      } else {
        break
      }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard !text.isEmpty, text != "-" else { throw error("unexpected character") }
    if !isFloat, let integer = Int64(text) { return .integer(integer) }
    guard let number = Double(text), number.isFinite else { throw error("invalid number '\(text)'") }
    return .number(number)
  }
}
