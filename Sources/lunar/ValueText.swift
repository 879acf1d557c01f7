import LuaKit

/// Lua values as `lunar runs show` prints them: in Lua constructor syntax,
/// as `LuaValue`'s description writes them (strings quoted, every byte that
/// is not printable ASCII escaped, so bytes that are not UTF-8 print as
/// `\255`); a table too wide for one line is broken over several.
enum ValueText {
  /// The column a one-line value should not pass.
  static let width = 100

  /// `value` written from column `column`, its inner lines indented by
  /// `indent` spaces more than the next (the console's layout too).
  static func render(_ value: LuaValue, indent: Int, column: Int) -> String {
    LuaDisplay(value).rendered(indent: indent, column: column, width: width)
  }

  /// A step's output: its values separated by commas, `(no value)` for
  /// none; written after `label` at `indent`, long values on lines of their own.
  static func output(_ values: [LuaValue], label: String, indent: Int) -> String {
    let margin = String(repeating: " ", count: indent)
    guard !values.isEmpty else { return margin + label + "(no value)" }
    if values.count == 1 {
      return margin + label + render(values[0], indent: indent, column: indent + label.count)
    }
    let flat = values.map(\.description).joined(separator: ", ")
    if indent + label.count + flat.count <= width { return margin + label + flat }
    let inner = String(repeating: " ", count: indent + 2)
    let lines = values.map { inner + render($0, indent: indent + 2, column: indent + 2) }
    return margin + label.trimmingTrailingSpaces + "\n" + lines.joined(separator: ",\n")
  }
}

extension String {
  /// The string without the spaces at its end.
  fileprivate var trimmingTrailingSpaces: String {
    var text = self
    while text.last == " " { text.removeLast() }
    return text
  }
}
