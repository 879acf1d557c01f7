import LuaKit
import Lunar

/// JSON written with its keys in a chosen order, an empty object or array
/// written `[]` as busted's JSON library (dkjson) writes an empty table.
indirect enum OrderedJSON {
  case object([(String, OrderedJSON)])
  case array([OrderedJSON])
  case string(String)
  case number(Double)
  case integer(Int)
  case boolean(Bool)

  /// The compact text.
  var text: String {
    var out = ""
    write(into: &out)
    return out
  }

  private func write(into out: inout String) {
    switch self {
    case .object(let fields) where fields.isEmpty:
      out += "[]"
    case .object(let fields):
      out += "{"
      for (index, (key, value)) in fields.enumerated() {
        if index > 0 { out += "," }
        out += JSON.encode(.string(LuaString(key))) + ":"
        value.write(into: &out)
      }
      out += "}"
    case .array(let items):
      out += "["
      for (index, item) in items.enumerated() {
        if index > 0 { out += "," }
        item.write(into: &out)
      }
      out += "]"
    case .string(let text): out += JSON.encode(.string(LuaString(text)))
    case .number(let value): out += JSON.encode(.number(value))
    case .integer(let value): out += String(value)
    case .boolean(let value): out += value ? "true" : "false"
    }
  }
}
