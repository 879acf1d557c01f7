/// A Lua string: a sequence of bytes that need not be valid UTF-8.
public struct LuaString: Sendable, Hashable, Comparable, ExpressibleByStringLiteral {
  /// The bytes, exactly as Lua holds them (embedded zeros included).
  public var bytes: [UInt8]

  /// A string from its bytes.
  public init(bytes: [UInt8]) { self.bytes = bytes }

  /// A string from Swift text, as UTF-8.
  public init(_ string: String) { self.bytes = Array(string.utf8) }

  public init(stringLiteral value: String) { self.init(value) }

  /// The text, if the bytes are valid UTF-8.
  public var string: String? {
    String(validating: bytes, as: UTF8.self)
  }

  /// The text, with invalid UTF-8 replaced by U+FFFD.
  public var lossyString: String {
    String(decoding: bytes, as: UTF8.self)
  }

  /// Byte-wise order, as Lua compares strings in the C locale.
  public static func < (lhs: LuaString, rhs: LuaString) -> Bool {
    lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
  }

  /// The string as a Lua literal: printable ASCII kept, the rest escaped,
  /// so that every string reads differently.
  public var quoted: String {
    var out = "\""
    for byte in bytes {
      switch byte {
      case UInt8(ascii: "\""): out += "\\\""
      case UInt8(ascii: "\\"): out += "\\\\"
      case UInt8(ascii: "\n"): out += "\\n"
      case UInt8(ascii: "\t"): out += "\\t"
      case UInt8(ascii: "\r"): out += "\\r"
      case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(byte))
      default: out += "\\\(byte)"
      }
    }
    return out + "\""
  }

  /// True for a string that can be written as `t.name` in Lua source.
  var isIdentifier: Bool {
    guard let first = bytes.first, first == UInt8(ascii: "_") || isLetter(first) else { return false }
    guard bytes.allSatisfy({ $0 == UInt8(ascii: "_") || isLetter($0) || (0x30...0x39).contains($0) })
    else { return false }
    return !LuaString.reserved.contains(lossyString)
  }

  private func isLetter(_ b: UInt8) -> Bool { (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) }

  private static let reserved: Set<String> = [
    "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
    "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
  ]
}

extension LuaString {
  /// True if the text's UTF-8 is exactly these bytes. Compares a name with
  /// Swift text (`message.name == "coin"`) without making a `LuaString`, and
  /// by bytes: `"e\u{301}"` is not `"\u{E9}"` here, as in Lua.
  public static func == (lhs: LuaString, rhs: String) -> Bool {
    lhs.bytes.count == rhs.utf8.count && lhs.bytes.elementsEqual(rhs.utf8)
  }

  /// True if the text's UTF-8 is exactly these bytes (see `==(LuaString, String)`).
  public static func == (lhs: String, rhs: LuaString) -> Bool { rhs == lhs }

  /// False if the text's UTF-8 is exactly these bytes.
  public static func != (lhs: LuaString, rhs: String) -> Bool { !(lhs == rhs) }

  /// False if the text's UTF-8 is exactly these bytes.
  public static func != (lhs: String, rhs: LuaString) -> Bool { !(rhs == lhs) }

  /// Matches a name against Swift text in a `switch` (`case "coin":`), by bytes.
  public static func ~= (pattern: String, value: LuaString) -> Bool { value == pattern }
}

extension LuaString: CustomStringConvertible {
  public var description: String { lossyString }
}
