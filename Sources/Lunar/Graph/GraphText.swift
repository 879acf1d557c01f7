import LuaKit

/// How names (Lua's bytes) are written in a drawing: shown as text, then
/// escaped for the language, so that every name reads back as it was shown.
/// Public for the command line's other Mermaid output (a run's gantt chart).
public enum GraphText {
  /// How a name is shown: its text, or (if it is not valid UTF-8 or holds
  /// control characters) its bytes escaped as in a Lua literal; the empty
  /// name is shown as `""`.
  public static func display(_ name: LuaString) -> String {
    if name.bytes.isEmpty { return "\"\"" }
    if let text = name.string, !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
      return text
    }
    return String(name.quoted.dropFirst().dropLast())
  }

  // MARK: Mermaid

  /// Characters Mermaid's lexers treat specially in a label: quotes end it,
  /// `:` and `;` end a transition's text, `%%` starts a comment, `#...;`
  /// is an entity, `<`, `>` and `&` are HTML, a leading backtick makes
  /// Markdown, and `<<fork>>`, `[[join]]` or a brace in a state's
  /// declaration make another kind of state.
  private static let mermaidSpecial: Set<Unicode.Scalar> = [
    "\"", "#", "%", "&", ":", ";", "<", ">", "`", "[", "]", "{", "}",
  ]

  /// `text` for a Mermaid label (inside quotes or after a transition's
  /// `:`): special characters, spaces at either end, and characters that
  /// are not visible text become entity codes (`#quot;`, `#58;`), which
  /// Mermaid turns back into the characters when it renders the label.
  public static func mermaid(_ text: String) -> String {
    let scalars = Array(text.unicodeScalars)
    var out = ""
    for (index, scalar) in scalars.enumerated() {
      if scalar == "\"" {
        out += "#quot;"
      } else if isPlainInMermaid(scalar, at: index, in: scalars) {
        out.unicodeScalars.append(scalar)
      } else {
        out += "#\(scalar.value);"
      }
    }
    return out
  }

  private static func isPlainInMermaid(_ scalar: Unicode.Scalar, at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
    switch scalar.value {
    case 0x20:
      // A space at either end would be trimmed; one after `direction`
      // would be read as a `direction TB` statement, wherever it stands.
      return index > 0 && index < scalars.count - 1 && !follows("direction", at: index, in: scalars)
    case 0x21...0x7E:
      return !mermaidSpecial.contains(scalar)
    case 0..<0x80:
      return false
    // Mermaid's own stand-ins for entity codes while it parses.
    case 0xFB02, 0xB0, 0xB6, 0xDF:
      return false
    default:
      switch scalar.properties.generalCategory {
      case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator, .spaceSeparator:
        return false
      default:
        return true
      }
    }
  }

  /// True if `word` (ASCII, any case) ends just before `index`.
  private static func follows(_ word: String, at index: Int, in scalars: [Unicode.Scalar]) -> Bool {
    let letters = Array(word.unicodeScalars)
    guard index >= letters.count else { return false }
    return zip(scalars[(index - letters.count)..<index], letters).allSatisfy { pair in
      pair.0.properties.lowercaseMapping == String(pair.1)
    }
  }

  /// A Mermaid title (YAML front matter): bare when it is plain words,
  /// otherwise a YAML double-quoted string. `#` is escaped too, so that no
  /// Mermaid entity code appears in it.
  public static func mermaidTitle(_ text: String) -> String {
    let isBare = text.unicodeScalars.first.map(isASCIIAlphanumeric) == true && text.last != " "
      && text.unicodeScalars.allSatisfy { isASCIIAlphanumeric($0) || " _.-".unicodeScalars.contains($0) }
    if isBare { return text }
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "#": out += "\\x23"
      case " "..."~": out.unicodeScalars.append(scalar)
      default:
        switch scalar.properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .lineSeparator, .paragraphSeparator, .spaceSeparator:
          out += scalar.value <= 0xFFFF ? "\\u" + hex(scalar.value, digits: 4) : "\\U" + hex(scalar.value, digits: 8)
        default:
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out + "\""
  }

  // MARK: DOT

  /// Graphviz reads at most 16384 bytes in one quoted string; longer text
  /// is written as quoted pieces joined by `+`, each at most this long.
  static let dotPieceLength = 4096

  /// `text` as a DOT quoted string: `"` and `\` escaped, a newline as the
  /// `\n` escape (never a raw line break, which a backslash before it would
  /// make a line continuation), and `&` as `&amp;`, since Graphviz reads
  /// entities in labels. Long text is split into pieces joined by `+`,
  /// never inside an escape or a character.
  static func dot(_ text: String) -> String {
    var pieces: [String] = []
    var piece = ""
    for scalar in text.unicodeScalars {
      let escaped: String
      switch scalar {
      case "\"": escaped = "\\\""
      case "\\": escaped = "\\\\"
      case "\n": escaped = "\\n"
      case "&": escaped = "&amp;"
      default: escaped = String(scalar)
      }
      if piece.utf8.count + escaped.utf8.count > dotPieceLength {
        pieces.append(piece)
        piece = ""
      }
      piece += escaped
    }
    pieces.append(piece)
    return pieces.map { "\"" + $0 + "\"" }.joined(separator: " + ")
  }

  /// An id (ASCII from `GraphIdentifiers`) as a DOT quoted string.
  static func dotIdentifier(_ id: String) -> String { "\"" + id + "\"" }

  private static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
    ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
  }

  private static func hex(_ value: UInt32, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
  }
}
