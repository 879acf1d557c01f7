import LuaKit

/// The text a report shows of bytes from a spec (test names, messages,
/// tracebacks): valid UTF-8 as it is, and each byte that is not part of
/// valid UTF-8 escaped as Lua writes it in a literal (`\255`), so a name
/// that is not text keeps its bytes readable in every report and every
/// report stays valid text (JSON, XML).
enum SpecText {
  /// `string`'s text, its invalid bytes escaped.
  static func of(_ string: LuaString) -> String { string.textEscapingInvalidUTF8 }

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
}
