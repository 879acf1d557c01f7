extension LuaString {
  /// The bytes as text: valid UTF-8 as it is, and each byte that is not
  /// part of valid UTF-8 escaped as in a Lua literal (`b\255in`), so that
  /// names that are not text stay readable and distinct in messages and
  /// reports (JSON, XML) that must be valid text. Backslashes, newlines and
  /// other text are kept.
  public var textEscapingInvalidUTF8: String {
    if let text = string { return text }
    var out = ""
    var rest = bytes[...]
    while let first = rest.first {
      let size = Self.sequenceLength(rest)
      if size == 0 {
        out += "\\\(first)"
        rest = rest.dropFirst()
      } else {
        out += String(decoding: rest.prefix(size), as: UTF8.self)
        rest = rest.dropFirst(size)
      }
    }
    return out
  }

  /// The length of the valid UTF-8 sequence `bytes` starts with, or 0.
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
    guard bytes.count >= size, String(validating: bytes.prefix(size), as: UTF8.self) != nil else { return 0 }
    return size
  }
}
