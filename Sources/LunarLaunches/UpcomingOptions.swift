import LuaKit
import Lunar

/// The options table of `launches.upcoming{ source =, limit = }`, checked.
struct UpcomingOptions {
  /// The sources to ask, in order.
  let sources: [String]
  /// How many launches to return at most.
  let limit: Int

  /// `value` read against the schedule's `known` sources; nil means none.
  init(_ value: LuaValue, known: [String]) throws(LuaArgumentError) {
    let options: LuaTable
    switch value {
    case .nil: options = LuaTable()
    case .table(let table): options = table
    default: throw .type(1, expected: "table")
    }
    try OptionField.refuseUnknownFields(of: options, known: ["source", "limit"], argument: 1)
    switch options["source"] {
    case .nil: sources = known
    case .string(let name):
      guard let source = known.first(where: { LuaString($0) == name }) else {
        throw .invalid(1, "unknown source '\(name.lossyString)' (\(known.joined(separator: ", ")))")
      }
      sources = [source]
    case let other: throw .invalid(1, "field 'source' must be a string, got \(other.typeName)")
    }
    limit = Int(try OptionField("limit", argument: 1).integer(options["limit"], atLeast: 0) ?? 10)
  }
}
