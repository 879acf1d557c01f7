import LuaKit

/// One recorded call in a journal: where it was made (its step and its
/// position there), what was asked (`kind` and `key`: the fields a replay
/// must match) and what came back (`result`: an output, a response, an
/// error).
public struct JournalEntry: Sendable {
  /// The step and position of the call.
  public var call: Journal.Call
  /// What kind of call: `action`, `result`, `http`, `clock`, `launches`, ...
  public var kind: LuaString
  /// What the call asked for; a replayed call must ask for the same.
  public var key: LuaTable
  /// What it got, if anything was recorded.
  public var result: LuaTable?

  /// An entry for `call`.
  public init(call: Journal.Call, kind: LuaString, key: LuaTable, result: LuaTable?) {
    self.call = call
    self.kind = kind
    self.key = key
    self.result = result
  }

  /// The entry as `LuaValueCodec` bytes: the list `scope` (nil outside any
  /// step), `position`, `kind`, `key`, `result` (nil when none).
  func encoded() throws(LuaValueCodecError) -> [UInt8] {
    try LuaValueCodec.encode(
      [
        call.scope.map(LuaValue.string) ?? .nil, .integer(Int64(call.position)), .string(kind), .table(key),
        result.map(LuaValue.table) ?? .nil,
      ], root: "entry")
  }

  /// The entry `encoded()` wrote, or nil for bytes that are not one.
  init?(decoding bytes: [UInt8]) throws(LuaValueCodecError) {
    let values = try LuaValueCodec.decode(bytes)
    guard values.count == 5, case .integer(let position) = values[1], position >= 1, position <= Int64(Int.max),
      case .string(let kind) = values[2], case .table(let key) = values[3]
    else { return nil }
    let scope: LuaString?
    switch values[0] {
    case .nil: scope = nil
    case .string(let name): scope = name
    default: return nil
    }
    let result: LuaTable?
    switch values[4] {
    case .nil: result = nil
    case .table(let table): result = table
    default: return nil
    }
    self.init(call: Journal.Call(scope: scope, position: Int(position)), kind: kind, key: key, result: result)
  }
}
