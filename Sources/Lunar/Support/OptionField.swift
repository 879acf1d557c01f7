import LuaKit

/// A numeric field of an options table passed to a host function
/// (`limit` in `launches.upcoming{ limit = 5 }`), checked the same way by
/// every Lunar API: a number of the right kind, neither NaN nor infinite,
/// in range, never a string. A bad value is `bad argument #N to 'fn'
/// (field 'limit' must be ..., got -1)`, never a trap further on.
public struct OptionField: Sendable {
  /// The field's name.
  public let name: String
  /// The position of the options table among the function's arguments.
  public let argument: Int32

  /// The field `name` of the options table at `argument`.
  public init(_ name: String, argument: Int32) {
    self.name = name
    self.argument = argument
  }

  /// The field as an integer of at least `least` (an integral float such
  /// as `5.0` counts), or nil when absent.
  public func integer(_ value: LuaValue, atLeast least: Int64) throws(LuaArgumentError) -> Int64? {
    if value == .nil { return nil }
    guard let integer = value.integerValue, integer >= least else {
      throw refusal(value, least == 0 ? "a non-negative integer" : least == 1 ? "a positive integer" : "an integer of at least \(least)")
    }
    return integer
  }

  /// The field as a finite number of seconds, positive or just
  /// non-negative, or nil when absent.
  public func seconds(_ value: LuaValue, positive: Bool = false) throws(LuaArgumentError) -> Double? {
    if value == .nil { return nil }
    guard let seconds = value.numberValue, seconds.isFinite, positive ? seconds > 0 : seconds >= 0 else {
      throw refusal(value, positive ? "a positive number of seconds" : "a non-negative number of seconds")
    }
    return seconds
  }

  /// Refuses a field of the options table `options` (at `argument`) that
  /// is not among `known`: a misspelt option would otherwise be ignored
  /// without a word. The message lists the known fields.
  public static func refuseUnknownFields(of options: LuaTable, known: [String], argument: Int32) throws(LuaArgumentError) {
    let list = known.joined(separator: ", ")
    if !options.array.isEmpty { throw .invalid(argument, "unknown field [1] (fields are \(list))") }
    for key in options.fields.keys.sorted(by: { $0.description < $1.description }) {
      guard case .string(let name) = key, known.contains(where: { LuaString($0) == name }) else {
        let shown = if case .string(let name) = key { "'\(name.lossyString)'" } else { key.description }
        throw .invalid(argument, "unknown field \(shown) (fields are \(list))")
      }
    }
  }

  private func refusal(_ value: LuaValue, _ expected: String) -> LuaArgumentError {
    .invalid(argument, "field '\(name)' must be \(expected), got \(Self.shown(value))")
  }

  /// A number as Lua prints it; anything else by its type.
  static func shown(_ value: LuaValue) -> String {
    switch value {
    case .integer, .number: value.description
    default: value.typeName
    }
  }
}
