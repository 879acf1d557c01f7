import LuaKit

/// Text made safe for HTML: whatever the store holds (names, outputs,
/// errors: arbitrary bytes) is shown as text, never read as markup.
enum HTML {
  /// `text` with `&`, `<`, `>`, `"` and `'` escaped.
  static func escape(_ text: String) -> String {
    var escaped = ""
    escaped.reserveCapacity(text.utf8.count)
    for character in text.unicodeScalars {
      switch character {
      case "&": escaped += "&amp;"
      case "<": escaped += "&lt;"
      case ">": escaped += "&gt;"
      case "\"": escaped += "&quot;"
      case "'": escaped += "&#39;"
      default: escaped.unicodeScalars.append(character)
      }
    }
    return escaped
  }

  /// Lua's bytes as escaped text: bytes that are not UTF-8 show as U+FFFD.
  static func escape(_ bytes: LuaString) -> String { escape(bytes.lossyString) }
}
