import LuaKit

extension LuaValue {
  /// A number of seconds as a short text (`2`, `0.5`).
  var formattedSeconds: String {
    switch self {
    case .number(let d) where d == d.rounded() && abs(d) < 1e15: String(Int64(d))
    case .number(let d): String(d)
    default: description
    }
  }
}
