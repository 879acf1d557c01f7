import LuaKit

/// A command a machine issues: a name and a payload, a Sendable value. In
/// Lua a command is an array whose first element is the name:
/// `{ "load", 20 }`, `{ "after", 60, { "expire" } }`.
public struct Command: Sendable, Equatable, CustomStringConvertible {
  /// The command's name (`cmd[1]`), as Lua's bytes: interpreters are found
  /// by these, so `"\u{E9}"` and `"e\u{301}"` are different commands. Compare
  /// it with a literal (`command.name == "load"`) as with a `String`.
  public let name: LuaString
  /// The arguments after the name (`cmd[2]`, `cmd[3]`, ...).
  public let arguments: [LuaValue]
  /// Keyed fields, if any (`{ "load", page = 2 }`).
  public let fields: [LuaKey: LuaValue]

  /// The whole command as Lua sees it (`[1]` is the name).
  public var value: LuaValue {
    .table(LuaTable(array: [.string(name)] + arguments, fields: fields))
  }

  /// A command from its name (as UTF-8) and arguments. The name's bytes are
  /// copied: a Swift machine issuing the same command on every message can
  /// keep it in a `static let`.
  public init(_ name: String, _ arguments: LuaValue...) {
    self.init(name: LuaString(name), arguments: arguments)
  }

  /// A command from its parts.
  public init(name: LuaString, arguments: [LuaValue] = [], fields: [LuaKey: LuaValue] = [:]) {
    self.name = name
    self.arguments = arguments
    self.fields = fields
  }

  /// A command from its Lua form; nil unless `value[1]` is a string.
  public init?(value: LuaValue) {
    guard case .table(let table) = value, let name = value[1].luaStringValue else { return nil }
    self.init(name: name, arguments: Array(table.array.dropFirst()), fields: table.fields)
  }

  public var description: String { value.description }
}

/// A message to a machine: a name and a payload. In Lua a message is a
/// string (`"reload"`) or a table whose first element is its name
/// (`{ "loaded", items = {...} }`).
public struct MachineMessage: Sendable, Equatable, CustomStringConvertible {
  /// The message as Lua sees it.
  public let value: LuaValue
  /// What a message sent from Lua costs against the memory limit while it
  /// waits in a mailbox (nil for messages Swift makes, or with no limit).
  let charge: LuaMemoryCharge?

  /// The message's name, as Lua's bytes (compare it with a literal:
  /// `message.name == "coin"`).
  public var name: LuaString {
    switch value {
    case .string(let name): name
    // `init(value:)` let in only tables whose `[1]` is a string.
    default: value[1].luaStringValue ?? LuaString(bytes: [])
    }
  }

  /// A message from its Lua form; nil for values with no name.
  public init?(value: LuaValue) {
    self.init(ChargedValue(value))
  }

  /// A message from a charged copy of its Lua form.
  init?(_ charged: ChargedValue) {
    switch charged.value {
    case .string: break
    case .table where charged.value[1].luaStringValue != nil: break
    default: return nil
    }
    value = charged.value
    charge = charged.charge
  }

  /// A message with just a name, given as UTF-8.
  public init(_ name: String) {
    value = .string(LuaString(name))
    charge = nil
  }

  private init(value: LuaValue, charge: LuaMemoryCharge?) {
    self.value = value
    self.charge = charge
  }

  /// The same message with its own charge (a name shared through a cache
  /// still takes a mailbox slot per send).
  func charged(_ charge: LuaMemoryCharge?) -> MachineMessage {
    MachineMessage(value: value, charge: charge)
  }

  /// What a message whose value is shared (a cached name) takes in a
  /// mailbox: its slot and its charge.
  static var sharedSize: Int { MemoryLayout<MachineMessage>.stride + LuaValueSize.charge }

  public static func == (lhs: MachineMessage, rhs: MachineMessage) -> Bool { lhs.value == rhs.value }

  /// A message with just a name, given as bytes.
  public init(name: LuaString) {
    value = .string(name)
    charge = nil
  }

  public var description: String { value.description }
}

extension LuaCall {
  /// Argument `n` as a machine message, charged against the memory limit
  /// until it is handled; a function in it is refused with its path from
  /// `msg`.
  func message(_ n: Int32) throws -> MachineMessage {
    guard let message = MachineMessage(try chargedValue(n, name: "msg")) else {
      throw LuaArgumentError.invalid(n, "a message is a name or a table whose first element is its name")
    }
    return message
  }

  /// Argument `n` as a machine message, a name found in `names` if it was
  /// seen before (and added to it otherwise). With `budget`, a cached name
  /// is charged its mailbox slot.
  func message(_ n: Int32, names: LuaStringCache<MachineMessage>, budget: LuaMemoryBudget?) throws -> MachineMessage {
    if let message = names.value(at: n, on: L) {
      guard let budget else { return message }
      return message.charged(try budget.charge(MachineMessage.sharedSize))
    }
    let message = try message(n)
    if case .string = message.value { names.insert(message.charged(nil), forStringAt: n, on: L) }
    return message
  }
}

extension Command {
  /// Pushes the command as a Lua table, `{ name, arguments..., fields }`,
  /// with the name taken from `name` (a Lua string equal to `name`, kept
  /// by the interpreter registry, so it is not hashed again).
  func push(on lua: LuaState, name: LuaReference) throws(LuaConversionError) {
    lua.newTable(arrayCapacity: arguments.count + 1, fieldCapacity: fields.count)
    name.push(on: lua)
    lua.setField(1, of: -2)
    for (offset, argument) in arguments.enumerated() {
      try lua.push(argument)
      lua.setField(offset + 2, of: -2)
    }
    for (key, field) in fields {
      try lua.push(key.value)
      try lua.push(field)
      lua.setField(of: -3)
    }
  }
}
