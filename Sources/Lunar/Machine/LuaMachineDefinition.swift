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
  let edges: [(from: LuaString, message: LuaString, to: LuaString)]
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

  /// Reads and checks the definition table at `index` on `thread`, a thread
  /// of `state`; `commandNames` caches command names.
  ///
  /// Every name is read as bytes and pushed back as those bytes: a name
  /// with a zero byte or invalid UTF-8 must find its own state again.
  init(at index: Int32, on thread: some LuaStack, state: LuaState, commandNames: LuaStringCache<LuaString>) throws {
    guard let definition = thread.table(at: index, path: LuaPath("")) else {
      throw MachineError("machine definition: 'name' must be a string")
    }
    let outline = try Outline(definition)
    name = outline.name
    states = outline.states
    initial = outline.initial
    strict = outline.strict
    edges = outline.edges
    hasEnter = outline.hasEnter
    hasExit = outline.hasExit
    positions = Dictionary(uniqueKeysWithValues: outline.states.enumerated().map { ($1, $0) })
    self.commandNames = commandNames
    context = try Self.readOnlyView(of: outline.context, on: thread, in: state)
    statePositions = LuaStringCache<Int>(capacity: outline.states.count, in: state)
    handlers = Self.handlers(of: definition, states: outline.states, in: state, positions: statePositions)
    thread.push(false)  // a placeholder: nil would get no slot
    lastMessageNameString = LuaReference(popping: thread, in: state)
  }

  /// What a definition table says, checked: every name, edge and hook.
  /// Its functions stay in Lua (see `handlers`).
  private struct Outline {
    var name: LuaString
    var states: [LuaString] = []
    var initial = 0
    var strict = false
    var edges: [(from: LuaString, message: LuaString, to: LuaString)] = []
    var hasEnter: [Bool] = []
    var hasExit: [Bool] = []
    /// A copy, so the caller cannot change it later.
    var context: LuaValue = .nil

    init(_ definition: LuaTableReader) throws {
      guard let name = try? definition.string("name") else {
        throw MachineError("machine definition: 'name' must be a string")
      }
      self.name = name
      if let key = definition.unknownKeys(known: ["name", "initial", "states", "context", "strict"]).first {
        throw refusal("unknown field \(key) (fields are name, initial, states, context, strict)")
      }
      guard let initialName = try? definition.string("initial") else { throw refusal("'initial' must be a state name") }
      let strictType = definition.type(of: "strict")
      guard strictType == .nil || strictType == .boolean else {
        throw refusal("'strict' must be true or false, got \(strictType.name)")
      }
      strict = try definition.boolean("strict") ?? false
      let contextType = definition.type(of: "context")
      guard contextType == .nil || contextType == .table else {
        throw refusal("'context' must be a table, got \(contextType.name)")
      }
      guard definition.type(of: "states") == .table else { throw refusal("'states' must be a table of states") }
      try definition.table("states") { states in try readStates(states, initial: initialName) }
      edges.sort { ($0.from, $0.message, $0.to) < ($1.from, $1.message, $1.to) }
      context = try definition.value("context")
    }

    /// The state names (sorted, as bytes), then each state.
    private mutating func readStates(_ table: LuaTableReader, initial initialName: LuaString) throws {
      try table.forEach { key, value in
        guard key.type == .string, let state = key.bytes else { throw refusal("state names must be strings") }
        guard value.type == .table else { throw refusal("state '\(state)' must be a table") }
        states.append(state)
      }
      states.sort()
      guard let initial = states.firstIndex(of: initialName) else {
        throw refusal("unknown initial state '\(initialName)'")
      }
      self.initial = initial
      for state in states {
        try table.table(.string(state)) { definition in try readState(state, definition) }
      }
    }

    /// A state: `on` handlers (string targets, functions, or
    /// `{ run, targets }`), `enter` and `exit` functions.
    private mutating func readState(_ state: LuaString, _ definition: LuaTableReader) throws {
      let machine = name
      let refusal = { (problem: String) in MachineError("machine '\(machine)': state '\(state)': \(problem)") }
      if let key = definition.unknownKeys(known: ["on", "enter", "exit"]).first {
        throw refusal("unknown field \(key) (fields are on, enter, exit)")
      }
      hasEnter.append(try Self.defines("enter", definition, refusal))
      hasExit.append(try Self.defines("exit", definition, refusal))
      switch definition.type(of: "on") {
      case .nil: break
      case .table:
        try definition.table("on") { handlers in
          try handlers.forEach { key, value in
            guard let message = key.bytes else {
              throw refusal("message names in 'on' must be strings, got \(key.typeName)")
            }
            let path = handlers.path.appending(key.key ?? .string(message))
            try readHandler(value, at: path, for: message, in: state, refusal)
          }
        }
      default: throw refusal("'on' must be a table of handlers")
      }
    }

    /// True if a state defines the hook `name` (`enter` or `exit`), which
    /// must be a function if it is there.
    private static func defines(_ name: String, _ state: LuaTableReader, _ refusal: (String) -> MachineError) throws -> Bool {
      switch state.type(of: .string(LuaString(name))) {
      case .nil: false
      case .function: true
      default: throw refusal("'\(name)' must be a function")
      }
    }

    /// One entry of a state's `on` table, at `path`: its edges, if it
    /// names them.
    private mutating func readHandler(
      _ handler: LuaStackValue, at path: LuaPath, for message: LuaString, in state: LuaString,
      _ refusal: (String) -> MachineError
    ) throws {
      if let table = handler.table(path: path) {
        return try readHandler(table, for: message, in: state, refusal)
      }
      switch handler.type {
      case .string:
        let target = handler.bytes ?? ""
        guard states.contains(target) else {
          throw refusal("transition '\(message)' goes to unknown state '\(target)'")
        }
        edges.append((state, message, target))
      case .function:
        break
      default:
        throw refusal("handler '\(message)' must be a function or a state name, got \(handler.typeName)")
      }
    }

    /// A handler given as `{ run = function, targets = { state, ... } }`.
    private mutating func readHandler(
      _ handler: LuaTableReader, for message: LuaString, in state: LuaString, _ refusal: (String) -> MachineError
    ) throws {
      if let key = handler.unknownKeys(known: ["run", "targets"]).first {
        throw refusal("handler '\(message)': unknown field \(key) (fields are run, targets)")
      }
      guard handler.type(of: "run") == .function else { throw refusal("handler '\(message)' needs a 'run' function") }
      let targetsType = handler.type(of: "targets")
      guard targetsType == .nil || targetsType == .table else {
        throw refusal("handler '\(message)': 'targets' must be a list of state names, got \(targetsType.name)")
      }
      try handler.table("targets") { targets in
        // Only the keys 1...n: as many entries as the border says.
        guard targets.count == targets.length else {
          throw refusal("handler '\(message)': 'targets' must be a list of state names, got a table with other keys")
        }
        for position in 1..<(targets.length + 1) {
          let key = LuaKey.integer(Int64(position))
          guard let target = try? targets.string(key) else {
            throw refusal("handler '\(message)': targets[\(position)] must be a state name, got \(targets.typeName(of: key))")
          }
          guard states.contains(target) else {
            throw refusal("handler '\(message)' targets unknown state '\(target)'")
          }
          edges.append((state, message, target))
        }
      }
    }

    /// An error about the machine, naming it.
    private func refusal(_ problem: String) -> MachineError { MachineError("machine '\(name)': \(problem)") }
  }

  /// The context behind a read-only proxy: handlers see it, never change it.
  private static func readOnlyView(of context: LuaValue, on thread: some LuaStack, in state: LuaState) throws -> LuaReference {
    try thread.withStackScope {
      try thread.push(context)
      thread.newTable()
      thread.newTable(fieldCapacity: 2)
      thread.pushValue(at: -3)
      thread.setField("__index", of: -2)
      thread.push(function: { call in
        call.push("the context is read-only")
        return .error
      })
      thread.setField("__newindex", of: -2)
      thread.setMetatable(of: -2)
      return LuaReference(popping: thread, in: state)
    }
  }

  /// The `handlers` array of the states named `states` in `definition`;
  /// each name's position goes into `positions` on the way.
  private static func handlers(
    of definition: LuaTableReader, states: [LuaString], in state: LuaState, positions: LuaStringCache<Int>
  ) -> LuaReference {
    let thread = definition.thread
    return thread.withStackScope {
      thread.pushField("states", of: definition.index)
      let table = thread.top
      thread.newTable(arrayCapacity: states.count * Slot.allCases.count)
      let handlers = thread.top
      for (position, name) in states.enumerated() {
        thread.push(name)
        positions.insert(position, forStringAt: -1, on: thread)
        thread.pushField(keyAt: -1, of: table)
        for slot in Slot.allCases {
          thread.pushField(slot.key, of: -1)
          thread.setField(slot.index(ofStateAt: position), of: handlers)
        }
        thread.pop(2)
      }
      return LuaReference(popping: thread, in: state)
    }
  }

  /// What a state defines, in the order of its `handlers` entries.
  private enum Slot: Int, CaseIterable {
    case on = 1, enter, exit

    /// The index in `handlers` of this slot of the state at `position`.
    func index(ofStateAt position: Int) -> Int {
      position * Self.allCases.count + rawValue
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
  /// `position` (nil if it has none); returns its type.
  private func push(_ slot: Slot, ofStateAt position: Int, on lua: LuaState) -> LuaType {
    handlers.push(on: lua)
    let type = lua.pushField(slot.index(ofStateAt: position), of: -1)
    lua.replace(at: -2)
    return type
  }

  func step(_ position: Int, _ message: MachineMessage, on lua: LuaState) throws -> (next: Int?, commands: [Command])? {
    try lua.withStackScope {
      let messageHandler = lua.pushMessageHandler()
      guard push(.on, ofStateAt: position, on: lua) == .table else { return nil }
      let isJustAName = pushName(of: message, on: lua)
      let messageName = lua.top
      switch lua.pushField(keyAt: messageName, of: -2) {
      case .nil:
        return nil
      case .string:
        return (knownState(at: -1, on: lua), [])
      case .table:
        lua.pushField("run", of: -1)
      default:
        break
      }
      context.push(on: lua)
      // A message that is just a name is the string pushed already.
      if isJustAName { lua.pushValue(at: messageName) } else { try lua.push(message.value) }
      try lua.call(arguments: 2, results: 2, messageHandler: messageHandler)
      var next: Int?
      switch lua.type(at: -2) {
      case .nil: next = nil
      case .string: next = knownState(at: -2, on: lua)
      default:
        throw MachineError("machine '\(name)': state '\(states[position])': handler '\(message.name)' must return a state name or nil, got \(lua.typeName(at: -2))")
      }
      if next == nil && lua.type(at: -2) == .string {
        let unknown = lua.bytes(at: -2) ?? "?"
        throw MachineError("machine '\(name)': state '\(states[position])': handler '\(message.name)' returned unknown state '\(unknown)'")
      }
      return (next, try commands(at: -1, on: lua, from: "state '\(states[position])': handler '\(message.name)'"))
    }
  }

  func enter(_ position: Int, on lua: LuaState) throws -> [Command] {
    hasEnter[position] ? try hook(.enter, position, on: lua) : []
  }

  func exit(_ position: Int, on lua: LuaState) throws -> [Command] {
    hasExit[position] ? try hook(.exit, position, on: lua) : []
  }

  private func hook(_ slot: Slot, _ position: Int, on lua: LuaState) throws -> [Command] {
    try lua.withStackScope {
      let messageHandler = lua.pushMessageHandler()
      guard push(slot, ofStateAt: position, on: lua) == .function else { return [] }
      context.push(on: lua)
      try lua.call(arguments: 1, results: 1, messageHandler: messageHandler)
      return try commands(at: -1, on: lua, from: "state '\(states[position])': \(slot.key)")
    }
  }

  /// The command list at `index`: nil or an array of command tables. Read
  /// field by field rather than as one `LuaValue`, and names seen before are
  /// reused, so a plain `{ "name", ... }` costs no table or string copies.
  private func commands(at index: Int32, on lua: LuaState, from origin: @autoclosure () -> String) throws -> [Command] {
    let list = lua.absoluteIndex(index)
    let type = lua.type(at: list)
    if type == .nil { return [] }
    guard type == .table, let count = Self.sequenceLength(list, on: lua) else {
      let value = try lua.value(at: list, root: "commands")
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
      let command = try lua.withStackScope { () throws -> Command in
        lua.pushField(position, of: list)
        let command = lua.top
        let issued = lua.type(at: command) == .table && lua.pushField(1, of: command) == .string
          ? commandName(at: -1, on: lua) : nil
        lua.top = command
        guard let issued else {
          throw MachineError("machine '\(name)': \(origin()): commands[\(position)] must be a table whose first element is the command's name")
        }
        if let length = Self.sequenceLength(command, on: lua),
          let arguments = try arguments(of: command, length: length, position: position, on: lua)
        {
          return Command(name: issued, arguments: arguments)
        }
        // Keyed fields too: read the whole table.
        return Command(value: try lua.value(at: command, root: "commands[\(position)]"))!
      }
      built.append(command)
    }
    commandBuffer = built
    return built
  }

  /// The arguments of the command at `command`, `t[2]` to `t[length]`;
  /// nil if one is nil. With `length` entries in all (`sequenceLength`),
  /// none of `t[1...length]` nil means those are the only keys.
  private func arguments(of command: Int32, length: Int, position: Int, on lua: LuaState) throws -> [LuaValue]? {
    guard length > 1 else { return [] }
    var arguments: [LuaValue] = []
    arguments.reserveCapacity(length - 1)
    for element in 2..<(length + 1) {
      defer { lua.pop() }
      guard lua.pushField(element, of: command) != .nil else { return nil }
      arguments.append(try lua.value(at: -1, root: "commands[\(position)][\(element)]"))
    }
    return arguments
  }

  /// `#t` if the table at `index` has `#t` entries; nil otherwise. Then its
  /// keys are 1...#t unless one of those is nil (a border can sit after a
  /// hole), which a caller reading them all finds.
  private static func sequenceLength(_ index: Int32, on lua: LuaState) -> Int? {
    let length = lua.rawLength(at: index)
    return lua.entryCount(of: index) == length ? length : nil
  }

  /// The position of the state named by the string at `index`; nil if no
  /// state has that name.
  private func knownState(at index: Int32, on lua: LuaState) -> Int? {
    // Only names longer than Lua's shared strings are copied and hashed.
    statePositions.value(at: index, on: lua) ?? lua.bytes(at: index).flatMap { positions[$0] }
  }

  /// Pushes a message's name as it came (bytes, not a decoded string);
  /// true if the message is just that name.
  private func pushName(of message: MachineMessage, on lua: LuaState) -> Bool {
    switch message.value {
    case .string(let name):
      // Messages mostly repeat: the last name is kept as a Lua string, and
      // comparing two names that share their bytes' storage is immediate.
      if name == lastMessageName {
        lastMessageNameString.push(on: lua)
      } else {
        lua.push(name)
        lua.pushValue(at: -1)
        lastMessageNameString.replace(popping: lua)
        lastMessageName = name
      }
      return true
    case .table(let table):
      if case .string(let name)? = table.array.first { lua.push(name) } else { lua.pushNil() }
    default: lua.pushNil()
    }
    return false
  }

  /// The string at `index` as a command name, its bytes as they are.
  private func commandName(at index: Int32, on lua: LuaState) -> LuaString? {
    if let known = commandNames.value(at: index, on: lua) { return known }
    guard let name = lua.bytes(at: index) else { return nil }
    commandNames.insert(name, forStringAt: index, on: lua)
    return name
  }
}
