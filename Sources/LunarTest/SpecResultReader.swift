import LuaKit

/// Reads the result table busted.lua reports for a test field by field,
/// without building a `LuaValue` and decoding it: the common result (no
/// report details) costs a fraction of the `Decodable` path. Anything else
/// (details, a field of an unexpected type) gives nil, and the caller
/// decodes it as before, errors and all. Bytes that are not UTF-8 are
/// kept, escaped (`SpecText`).
enum SpecResultReader {
  /// The result in the table at `index` of `stack`, or nil when it is not
  /// the plain kind.
  static func read(at index: Int32, of stack: some LuaStack) -> SpecResult? {
    guard let table = stack.table(at: index, path: LuaPath("")) else { return nil }
    do {
      guard table.type(of: "element") == .nil, table.type(of: "frame") == .nil,
        let name = try text(table.string("name")), let statusName = try text(table.string("status")),
        let status = SpecResult.Status(rawValue: statusName), let duration = try table.number("duration")
      else { return nil }
      var result = SpecResult(name: name, status: status, duration: duration)
      for (key, field) in [("message", \SpecResult.message), ("position", \.position), ("traceback", \.traceback)] {
        guard let bytes = try table.string(LuaKey.string(LuaString(key))) else { continue }
        guard let value = text(bytes) else { return nil }
        result[keyPath: field] = value
      }
      guard table.type(of: "tags") == .table, let tags = try table.table("tags", strings) ?? nil else { return nil }
      result.tags = tags
      return result
    } catch {
      return nil
    }
  }

  /// The strings of a list (nil if it is anything else).
  private static func strings(_ list: LuaTableReader) throws -> [String]? {
    guard list.count == list.length else { return nil }
    var strings: [String] = []
    var position: Int64 = 1
    while position <= list.length {
      guard let string = try text(list.string(.integer(position))) else { return nil }
      strings.append(string)
      position += 1
    }
    return strings
  }

  /// `bytes` as a report shows them.
  private static func text(_ bytes: LuaString?) -> String? {
    bytes.map(SpecText.of)
  }
}
