import LuaKit

/// A small JSON writer for `LuaValue`s (trace and analytics lines), so the
/// runtime needs no Foundation. Tables with only an array part are arrays;
/// others are objects with string keys.
public enum JSON {
  /// The value as compact JSON; `keyOrder` puts those keys first.
  public static func encode(_ value: LuaValue, keyOrder: [String] = []) -> String {
    var out = ""
    write(value, into: &out, keyOrder: keyOrder)
    return out
  }

  private static func write(_ value: LuaValue, into out: inout String, keyOrder: [String]) {
    switch value {
    case .nil: out += "null"
    case .boolean(let b): out += b ? "true" : "false"
    case .integer(let i): out += String(i)
    case .number(let d):
      if d.isFinite {
        out += d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) + ".0" : String(d)
      } else {
        out += "null"
      }
    case .string(let s): writeString(s.lossyString, into: &out)
    case .table(let t):
      if t.fields.isEmpty && !t.array.isEmpty {
        out += "["
        for (i, element) in t.array.enumerated() {
          if i > 0 { out += "," }
          write(element, into: &out, keyOrder: [])
        }
        out += "]"
        return
      }
      out += "{"
      var first = true
      let entries = t.entries.map { (key: jsonKey($0.key), value: $0.value) }
      let ordered =
        keyOrder.compactMap { name in entries.first { $0.key == name } }
        + entries.filter { !keyOrder.contains($0.key) }.sorted { $0.key < $1.key }
      for entry in ordered {
        if !first { out += "," }
        first = false
        writeString(entry.key, into: &out)
        out += ":"
        write(entry.value, into: &out, keyOrder: [])
      }
      out += "}"
    }
  }

  private static func jsonKey(_ key: LuaKey) -> String {
    switch key {
    case .string(let s): s.lossyString
    default: key.value.description
    }
  }

  private static func writeString(_ text: String, into out: inout String) {
    out += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if scalar.value < 0x20 {
          out += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4, with: "0")
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    out += "\""
  }
}
