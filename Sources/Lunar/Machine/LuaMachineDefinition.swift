import CLua
import CLuaShim
import LuaKit

/// A machine defined in Lua:
///
/// ```lua
/// machine.new {
///   name = "list", initial = "initial", context = { page = 20 }, strict = false,
///   states = {
///     initial = { on = { reload = function(ctx, msg) return "loading", { {"load", ctx.page} } end } },
///     presenting = { on = { reload = "refreshing" }, enter = function(ctx) return {...} end },
///     loading = { on = { loaded = { run = function(ctx, msg) ... end, targets = { "presenting" } } } },
///   },
/// }
/// ```
///
/// Handlers receive a read-only view of the context and the message, never
/// the machine: the only way to change state is to return the next one.
final class LuaMachineDefinition: MachineBehavior {
  let name: LuaString
  let states: [LuaString]
  let initial: Int
  let strict: Bool
  private(set) var edges: [(from: LuaString, message: LuaString, to: LuaString)] = []
  /// Which states (by position) have an `enter` or `exit` function: the
  /// others skip the lookup on every state change.
  private let hasEnter: [Bool]
  private let hasExit: [Bool]
  /// Each state's `on` table, `enter` and `exit` functions in one array,
  /// three entries per state in `states` order (see `Slot`), taken from the
  /// definition once: a step finds its handlers by the state's position,
  /// without hashing a name.
  private let handlers: LuaReference
  /// Each state's position in `states`, by the name's bytes.
  private let positions: [LuaString: Int]
  /// The same positions found by the address of the name's Lua string: a
  /// name a handler returns becomes the `states` entry without decoding.
  private let statePositions: LuaStringCache<Int>
  /// Command names seen so far (shared by the runtime's machines), reused
  /// rather than decoded again.
  private let commandNames: LuaStringCache<LuaString>
  private var commandBuffer: [Command] = []
  /// The name of the last message that was just a name, and its Lua
  /// string (see `pushName`).
  private var lastMessageName: LuaString?
  private let lastMessageNameString: LuaReference
  private let context: LuaReference

  /// Reads and checks the definition table at `index` on `L`, a thread of
  /// `state`; `commandNames` caches command names.
  ///
  /// Every name is read as bytes and pushed back as those bytes: a name
  /// with a zero byte or invalid UTF-8 must find its own state again.
  init(at index: Int32, on L: OpaquePointer, state: LuaState, commandNames: LuaStringCache<LuaString>) throws {
    self.commandNames = commandNames
    let thread = LuaState(borrowing: L)  // `state` is the main thread; this runs on L
    let table = lua_absindex(L, index)
    func field(_ key: String, of t: Int32) -> LuaType {
      lua_pushstring(L, key)
      return LuaType(rawValue: lua_rawget(L, t)) ?? .none
    }
    guard field("name", of: table) == .string, let name = thread.bytes(at: -1) else {
      lua_settop(L, -2)
      throw MachineError("machine definition: 'name' must be a string")
    }
    lua_settop(L, -2)
    self.name = name
    if let key = Self.unknownKey(of: table, known: ["name", "initial", "states", "context", "strict"], on: thread) {
      throw MachineError("machine '\(name)': unknown field \(key) (fields are name, initial, states, context, strict)")
    }
    guard field("initial", of: table) == .string, let initial = thread.bytes(at: -1) else {
      lua_settop(L, -2)
      throw MachineError("machine '\(name)': 'initial' must be a state name")
    }
    lua_settop(L, -2)
    let strictType = field("strict", of: table)
    strict = strictType == .boolean && lua_toboolean(L, -1) != 0
    lua_settop(L, -2)
    guard strictType == .nil || strictType == .boolean else {
      throw MachineError("machine '\(name)': 'strict' must be true or false, got \(String(cString: lua_typename(L, strictType.rawValue)))")
    }
    let contextType = field("context", of: table)
    lua_settop(L, -2)
    guard contextType == .nil || contextType == .table else {
      throw MachineError("machine '\(name)': 'context' must be a table, got \(String(cString: lua_typename(L, contextType.rawValue)))")
    }

    guard field("states", of: table) == .table else {
      lua_settop(L, -2)
      throw MachineError("machine '\(name)': 'states' must be a table of states")
    }
    let statesIndex = lua_gettop(L)
    var names: [LuaString] = []
    lua_pushnil(L)
    while lua_next(L, statesIndex) != 0 {
      guard lua_type(L, -2) == LUA_TSTRING, let stateName = thread.bytes(at: -2) else {
        lua_settop(L, -4)
        throw MachineError("machine '\(name)': state names must be strings")
      }
      guard lua_type(L, -1) == LUA_TTABLE else {
        lua_settop(L, -4)
        throw MachineError("machine '\(name)': state '\(stateName)' must be a table")
      }
      names.append(stateName)
      lua_settop(L, -2)
    }
    names.sort()
    states = names
    guard let initialPosition = names.firstIndex(of: initial) else {
      lua_settop(L, -2)
      throw MachineError("machine '\(name)': unknown initial state '\(initial)'")
    }
    self.initial = initialPosition
    // Each state: `on` handlers (string targets, functions, or { run, targets }),
    // `enter` and `exit` functions.
    var hasEnter = [Bool](repeating: false, count: names.count)
    var hasExit = [Bool](repeating: false, count: names.count)
    for (position, stateName) in names.enumerated() {
      thread.push(stateName)
      lua_rawget(L, statesIndex)
      let stateTable = lua_gettop(L)
      if let key = Self.unknownKey(of: stateTable, known: ["on", "enter", "exit"], on: thread) {
        lua_settop(L, stateTable - 1)
        throw MachineError("machine '\(name)': state '\(stateName)': unknown field \(key) (fields are on, enter, exit)")
      }
      for hook in ["enter", "exit"] {
        let type = field(hook, of: stateTable)
        lua_settop(L, -2)
        if type != .nil && type != .function {
          lua_settop(L, stateTable - 1)
          throw MachineError("machine '\(name)': state '\(stateName)': '\(hook)' must be a function")
        }
        if type == .function && hook == "enter" { hasEnter[position] = true }
        if type == .function && hook == "exit" { hasExit[position] = true }
      }
      let onType = field("on", of: stateTable)
      if onType == .table {
        let on = lua_gettop(L)
        lua_pushnil(L)
        while lua_next(L, on) != 0 {
          guard let message = thread.bytes(at: -2) else {
            let type = String(cString: lunar_typename(L, -2))
            lua_settop(L, stateTable - 1)
            throw MachineError("machine '\(name)': state '\(stateName)': message names in 'on' must be strings, got \(type)")
          }
          switch lua_type(L, -1) {
          case LUA_TSTRING:
            let target = thread.bytes(at: -1) ?? ""
            guard names.contains(target) else {
              lua_settop(L, stateTable - 1)
              throw MachineError("machine '\(name)': state '\(stateName)': transition '\(message)' goes to unknown state '\(target)'")
            }
            edges.append((stateName, message, target))
          case LUA_TFUNCTION:
            break
          case LUA_TTABLE:
            let handler = lua_gettop(L)
            if let key = Self.unknownKey(of: handler, known: ["run", "targets"], on: thread) {
              lua_settop(L, stateTable - 1)
              throw MachineError(
                "machine '\(name)': state '\(stateName)': handler '\(message)': unknown field \(key) (fields are run, targets)")
            }
            guard field("run", of: handler) == .function else {
              lua_settop(L, stateTable - 1)
              throw MachineError("machine '\(name)': state '\(stateName)': handler '\(message)' needs a 'run' function")
            }
            lua_settop(L, -2)
            let targetsType = field("targets", of: handler)
            guard targetsType == .nil || (targetsType == .table && Self.isList(lua_gettop(L), on: L)) else {
              let shown = targetsType == .table ? "a table with other keys" : String(cString: lua_typename(L, targetsType.rawValue))
              lua_settop(L, stateTable - 1)
              throw MachineError(
                "machine '\(name)': state '\(stateName)': handler '\(message)': 'targets' must be a list of state names, got \(shown)")
            }
            if targetsType == .table {
              let count = lua_rawlen(L, -1)
              for i in 0..<count {
                lua_rawgeti(L, -1, lua_Integer(i + 1))
                guard lua_type(L, -1) == LUA_TSTRING, let target = thread.bytes(at: -1) else {
                  let type = String(cString: lunar_typename(L, -1))
                  lua_settop(L, stateTable - 1)
                  throw MachineError(
                    "machine '\(name)': state '\(stateName)': handler '\(message)': targets[\(i + 1)] must be a state name, got \(type)")
                }
                lua_settop(L, -2)
                guard names.contains(target) else {
                  lua_settop(L, stateTable - 1)
                  throw MachineError("machine '\(name)': state '\(stateName)': handler '\(message)' targets unknown state '\(target)'")
                }
                edges.append((stateName, message, target))
              }
            }
            lua_settop(L, -2)
          default:
            let type = String(cString: lunar_typename(L, -1))
            lua_settop(L, stateTable - 1)
            throw MachineError("machine '\(name)': state '\(stateName)': handler '\(message)' must be a function or a state name, got \(type)")
          }
          lua_settop(L, -2)
        }
      } else if onType != .nil {
        lua_settop(L, stateTable - 1)
        throw MachineError("machine '\(name)': state '\(stateName)': 'on' must be a table of handlers")
      }
      lua_settop(L, stateTable - 1)
    }
    lua_settop(L, -2)  // states
    self.hasEnter = hasEnter
    self.hasExit = hasExit
    edges.sort { ($0.from, $0.message, $0.to) < ($1.from, $1.message, $1.to) }

    // The context: copied (so the caller cannot change it later) behind a
    // read-only proxy.
    let contextValue: LuaValue
    lua_pushstring(L, "context")
    lua_rawget(L, table)
    contextValue = try thread.value(at: -1, root: "context")
    lua_settop(L, -2)
    try thread.push(contextValue)
    lua_createtable(L, 0, 0)
    lua_createtable(L, 0, 2)
    lua_pushvalue(L, -3)
    lua_setfield(L, -2, "__index")
    thread.push(function: { call in
      call.push("the context is read-only")
      return .error
    })
    lua_setfield(L, -2, "__newindex")
    lua_setmetatable(L, -2)
    context = LuaReference(popping: L, in: state)
    lua_settop(L, -2)
    lua_pushstring(L, "states")
    lua_rawget(L, table)
    let statePositions = LuaStringCache<Int>(capacity: names.count, in: state)
    lua_createtable(L, Int32(names.count * Slot.allCases.count), 0)
    for (position, stateName) in names.enumerated() {
      thread.push(stateName)
      statePositions.insert(position, forStringAt: -1, on: L)
      lua_rawget(L, -3)
      for slot in Slot.allCases {
        lua_pushstring(L, slot.key)
        lua_rawget(L, -2)
        lua_rawseti(L, -3, slot.index(ofStateAt: position))
      }
      lua_settop(L, -2)
    }
    handlers = LuaReference(popping: L, in: state)
    lua_settop(L, -2)  // states
    self.statePositions = statePositions
    positions = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
    lua_pushboolean(L, 0)  // a placeholder: nil would get no slot
    lastMessageNameString = LuaReference(popping: L, in: state)
  }

  /// The first (in byte order) key of the table at the absolute `index`
  /// that is not one of `known`, as a message shows it (`'stat'`, `[1]`);
  /// nil when every key is known. A misspelt field would otherwise be
  /// ignored without a word.
  private static func unknownKey(of index: Int32, known: Set<LuaString>, on thread: LuaState) -> String? {
    let L = thread.L
    var unknown: [String] = []
    lua_pushnil(L)
    while lua_next(L, index) != 0 {
      if lua_type(L, -2) == LUA_TSTRING, let key = thread.bytes(at: -2) {
        if !known.contains(key) { unknown.append("'\(key)'") }
      } else if lua_type(L, -2) == LUA_TNUMBER, let key = thread.bytes(at: -2) {
        unknown.append("[\(key)]")
      } else {
        unknown.append("[\(String(cString: lunar_typename(L, -2)))]")
      }
      lua_settop(L, -2)
    }
    return unknown.min()
  }

  /// True if the table at the absolute `index` has only the keys 1...n.
  private static func isList(_ index: Int32, on L: OpaquePointer) -> Bool {
    var count: lua_Unsigned = 0
    lua_pushnil(L)
    while lua_next(L, index) != 0 {
      count += 1
      lua_settop(L, -2)
    }
    return count == lua_rawlen(L, index)
  }

  /// What a state defines, in the order of its `handlers` entries.
  private enum Slot: Int, CaseIterable {
    case on = 1, enter, exit

    /// The index in `handlers` of this slot of the state at `position`.
    func index(ofStateAt position: Int) -> lua_Integer {
      lua_Integer(position * Self.allCases.count + rawValue)
    }

    var key: String {
      switch self {
      case .on: "on"
      case .enter: "enter"
      case .exit: "exit"
      }
    }
  }

  /// Pushes the `on` table, `enter` or `exit` function of the state at
  /// `position` (nil if it has none).
  private func push(_ slot: Slot, ofStateAt position: Int, on L: OpaquePointer) {
    handlers.push(on: L)
    lua_rawgeti(L, -1, slot.index(ofStateAt: position))
    lunar_replace(L, -2)
  }

  func step(_ position: Int, _ message: MachineMessage, on state: LuaState) throws -> (next: Int?, commands: [Command])? {
    let L = state.L
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    let messageHandler = state.pushMessageHandler()
    push(.on, ofStateAt: position, on: L)
    guard lua_type(L, -1) == LUA_TTABLE else { return nil }
    let isJustAName = pushName(of: message, on: state)
    let messageName = lua_gettop(L)
    lua_pushvalue(L, messageName)
    lua_rawget(L, -3)
    switch lua_type(L, -1) {
    case LUA_TNIL:
      return nil
    case LUA_TSTRING:
      return (knownState(at: -1, on: state), [])
    case LUA_TTABLE:
      lua_pushstring(L, "run")
      lua_rawget(L, -2)
    default:
      break
    }
    context.push(on: L)
    // A message that is just a name is the string pushed already.
    if isJustAName { lua_pushvalue(L, messageName) } else { try state.push(message.value) }
    try state.call(arguments: 2, results: 2, messageHandler: messageHandler)
    var next: Int?
    switch lua_type(L, -2) {
    case LUA_TNIL: next = nil
    case LUA_TSTRING: next = knownState(at: -2, on: state)
    default:
      throw MachineError("machine '\(name)': state '\(states[position])': handler '\(message.name)' must return a state name or nil, got \(String(cString: lunar_typename(L, -2)))")
    }
    if next == nil && lua_type(L, -2) == LUA_TSTRING {
      let unknown = state.bytes(at: -2) ?? "?"
      throw MachineError("machine '\(name)': state '\(states[position])': handler '\(message.name)' returned unknown state '\(unknown)'")
    }
    return (next, try commands(at: -1, on: state, from: "state '\(states[position])': handler '\(message.name)'"))
  }

  func enter(_ position: Int, on state: LuaState) throws -> [Command] {
    hasEnter[position] ? try hook(.enter, position, on: state) : []
  }

  func exit(_ position: Int, on state: LuaState) throws -> [Command] {
    hasExit[position] ? try hook(.exit, position, on: state) : []
  }

  private func hook(_ slot: Slot, _ position: Int, on state: LuaState) throws -> [Command] {
    let L = state.L
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    let messageHandler = state.pushMessageHandler()
    push(slot, ofStateAt: position, on: L)
    guard lua_type(L, -1) == LUA_TFUNCTION else { return [] }
    context.push(on: L)
    try state.call(arguments: 1, results: 1, messageHandler: messageHandler)
    return try commands(at: -1, on: state, from: "state '\(states[position])': \(slot.key)")
  }

  /// The command list at `index`: nil or an array of command tables. Read
  /// field by field rather than as one `LuaValue`, and names seen before are
  /// reused, so a plain `{ "name", ... }` costs no table or string copies.
  private func commands(at index: Int32, on state: LuaState, from origin: @autoclosure () -> String) throws -> [Command] {
    let L = state.L
    if lua_type(L, index) == LUA_TNIL { return [] }
    let list = lua_absindex(L, index)
    guard lua_type(L, list) == LUA_TTABLE, let count = Self.sequenceLength(list, on: L) else {
      let value = try state.value(at: list, root: "commands")
      throw MachineError("machine '\(name)': \(origin()): commands must be an array of commands, got \(value.typeName)")
    }
    // Built in the storage of the previous list, which is free again once
    // the driver has carried that list out (otherwise this makes a new one).
    // (`removeAll(keepingCapacity:)` costs more than this for short lists.)
    // Taken out of the property while it is filled: no access to the
    // property then spans a call, so none needs a run-time exclusivity check.
    var built = commandBuffer
    commandBuffer = []
    while !built.isEmpty { built.removeLast() }
    for position in 1..<(count + 1) {
      lua_rawgeti(L, list, lua_Integer(position))
      defer { lua_settop(L, -2) }
      let command = lua_gettop(L)
      let nameType = lua_type(L, command) == LUA_TTABLE ? lua_rawgeti(L, command, 1) : LUA_TNIL
      let issued = nameType == LUA_TSTRING ? commandName(at: -1, on: L) : nil
      lua_settop(L, command)
      guard let issued else {
        throw MachineError("machine '\(name)': \(origin()): commands[\(position)] must be a table whose first element is the command's name")
      }
      if let length = Self.sequenceLength(command, on: L),
        let arguments = try arguments(of: command, length: length, position: position, on: state)
      {
        built.append(Command(name: issued, arguments: arguments))
      } else {
        // Keyed fields too: read the whole table.
        let value = try state.value(at: command, root: "commands[\(position)]")
        built.append(Command(value: value)!)
      }
    }
    commandBuffer = built
    return built
  }

  /// The arguments of the command at `command`, `t[2]` to `t[length]`;
  /// nil if one is nil. With `length` entries in all (`sequenceLength`),
  /// none of `t[1...length]` nil means those are the only keys.
  private func arguments(of command: Int32, length: Int, position: Int, on state: LuaState) throws -> [LuaValue]? {
    guard length > 1 else { return [] }
    let L = state.L
    var arguments: [LuaValue] = []
    arguments.reserveCapacity(length - 1)
    for element in 2..<(length + 1) {
      defer { lua_settop(L, -2) }
      guard lua_rawgeti(L, command, lua_Integer(element)) != LUA_TNIL else { return nil }
      arguments.append(try state.value(at: -1, root: "commands[\(position)][\(element)]"))
    }
    return arguments
  }

  /// `#t` if the table at `index` has `#t` entries; nil otherwise. Then its
  /// keys are 1...#t unless one of those is nil (a border can sit after a
  /// hole), which a caller reading them all finds.
  private static func sequenceLength(_ index: Int32, on L: OpaquePointer) -> Int? {
    let length = lua_rawlen(L, index)
    var entries: lua_Unsigned = 0
    lua_pushnil(L)
    while lua_next(L, index) != 0 {
      entries += 1
      lua_settop(L, -2)
    }
    return entries == length ? Int(length) : nil
  }

  /// The position of the state named by the string at `index`; nil if no
  /// state has that name.
  private func knownState(at index: Int32, on state: LuaState) -> Int? {
    // Only names longer than Lua's shared strings are copied and hashed.
    statePositions.value(at: index, on: state.L) ?? state.bytes(at: index).flatMap { positions[$0] }
  }

  /// Pushes a message's name as it came (bytes, not a decoded string);
  /// true if the message is just that name.
  private func pushName(of message: MachineMessage, on state: LuaState) -> Bool {
    let L = state.L
    switch message.value {
    case .string(let name):
      // Messages mostly repeat: the last name is kept as a Lua string, and
      // comparing two names that share their bytes' storage is immediate.
      if name == lastMessageName {
        lastMessageNameString.push(on: L)
      } else {
        state.push(name)
        lua_pushvalue(L, -1)
        lastMessageNameString.replace(popping: L)
        lastMessageName = name
      }
      return true
    case .table(let table):
      if case .string(let name)? = table.array.first { state.push(name) } else { lua_pushnil(L) }
    default: lua_pushnil(L)
    }
    return false
  }

  /// The string at `index` as a command name, its bytes as they are.
  private func commandName(at index: Int32, on L: OpaquePointer) -> LuaString? {
    if let known = commandNames.value(at: index, on: L) { return known }
    var length = 0
    guard let chars = lua_tolstring(L, index, &length) else { return nil }
    let name = LuaString(bytes: [UInt8](UnsafeRawBufferPointer(start: chars, count: length)))
    commandNames.insert(name, forStringAt: index, on: L)
    return name
  }
}
