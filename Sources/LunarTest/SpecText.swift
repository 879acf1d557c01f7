import LuaKit

/// The text a report shows of bytes from a spec (test names, messages,
/// tracebacks): valid UTF-8 as it is, and each byte that is not part of
/// valid UTF-8 escaped as Lua writes it in a literal (`\255`), so a name
/// that is not text keeps its bytes readable in every report and every
/// report stays valid text (JSON, XML).
enum SpecText {
  /// `string`'s text, its invalid bytes escaped.
  static func of(_ string: LuaString) -> String {
    if let text = string.string { return text }
    var out = ""
    var rest = string.bytes[...]
    while !rest.isEmpty {
      let length = validPrefixLength(rest)
      if length > 0 {
        out += String(decoding: rest.prefix(length), as: UTF8.self)
        rest = rest.dropFirst(length)
      } else {
        out += "\\\(rest[rest.startIndex])"
        rest = rest.dropFirst()
      }
    }
    return out
  }

  /// `value` with every string in it (keys too) as `of` shows it, so a
  /// result the decoder reads as text never fails on bytes.
  static func value(_ value: LuaValue) -> LuaValue {
    switch value {
    case .string(let string) where string.string == nil:
      return .string(LuaString(of(string)))
    case .table(let table):
      var copy = LuaTable()
      for (key, field) in table.entries {
        let newKey: LuaKey
        if case .string(let name) = key { newKey = .string(LuaString(of(name))) } else { newKey = key }
        copy[newKey] = Self.value(field)
      }
      return .table(copy)
    default:
      return value
    }
  }

  /// How many bytes at the start of `bytes` are whole, valid UTF-8.
  private static func validPrefixLength(_ bytes: ArraySlice<UInt8>) -> Int {
    var length = 0
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let size = sequenceLength(bytes[index...])
      guard size > 0 else { break }
      length += size
      index += size
    }
    return length
  }

  /// The length of the one UTF-8 sequence `bytes` starts with, or 0 when it
  /// starts with no valid sequence.
  private static func sequenceLength(_ bytes: ArraySlice<UInt8>) -> Int {
    guard let lead = bytes.first else { return 0 }
    let size: Int
    switch lead {
    case 0x00...0x7F: return 1
    case 0xC2...0xDF: size = 2
    case 0xE0...0xEF: size = 3
    case 0xF0...0xF4: size = 4
    default: return 0
    }
    guard bytes.count >= size else { return 0 }
    return String(validating: bytes.prefix(size), as: UTF8.self) == nil ? 0 : size
  }
}
