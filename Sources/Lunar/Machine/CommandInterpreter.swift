import LuaKit

/// Carries out commands of one name, in Swift: async, may fail, may send
/// feedback messages to the machine that issued the command.
public protocol CommandInterpreter: Sendable {
  /// The command name it handles (`load`), matched by its UTF-8 bytes.
  var name: String { get }
  /// Carries out `command`; `context` gives the services and the feedback
  /// channel.
  func interpret(_ command: Command, in context: InterpreterContext) async throws
}

/// What an interpreter gets besides the command.
public struct InterpreterContext: Sendable {
  /// The name of the machine that issued the command.
  public let machine: LuaString
  /// Sends a message back to that machine's mailbox (never handled
  /// re-entrantly: it waits its turn like any other message).
  public let send: @Sendable (MachineMessage) -> Void
  /// The run's services (see `Services`).
  public let services: Services
}

/// The interpreters a runtime knows, by command name. Built-ins: `after`
/// (a timer that sends a message back), `log` and `emit` (to the trace).
public final class InterpreterRegistry {
  /// How a command is carried out. Every case is plain data, so a lookup
  /// copies no references.
  enum Entry {
    /// A Swift interpreter, by its position in `swiftInterpreters`.
    case swift(Int)
    /// A Lua function and its command name as a Lua string, by registry
    /// slot (see `LuaReference.slot`): the name is pushed without being
    /// hashed again.
    case lua(function: Int32, name: Int32)
    case after, log, emit
  }

  /// By the name's bytes: `"\u{E9}"` and `"e\u{301}"` are two commands.
  private var entries: [LuaString: Entry] = ["after": .after, "log": .log, "emit": .emit]
  /// The Swift interpreters that `entries` name by position.
  private var swiftInterpreters: [any CommandInterpreter] = []
  /// Owns the Lua interpreters' functions and names, which `entries`
  /// hold by slot.
  private var luaInterpreters: [LuaString: (function: LuaReference, name: LuaReference)] = [:]
  /// The last lookup: machines mostly issue the same few commands in a row
  /// (and, names coming from one cache, with the same storage, which makes
  /// the comparison immediate).
  private var lastName: LuaString?
  private var lastEntry: Entry?

  /// Registers (or replaces) a Swift interpreter.
  public func register(_ interpreter: any CommandInterpreter) {
    let name = LuaString(interpreter.name)
    if case .swift(let position)? = entries[name] {
      swiftInterpreters[position] = interpreter
    } else {
      entries[name] = .swift(swiftInterpreters.count)
      swiftInterpreters.append(interpreter)
    }
    luaInterpreters[name] = nil
    lastName = nil
  }

  /// Registers (or replaces) a Lua interpreter: `function`, and `name`
  /// as a Lua string.
  func register(_ name: LuaString, lua function: LuaReference, nameString: LuaReference) {
    entries[name] = .lua(function: function.slot, name: nameString.slot)
    luaInterpreters[name] = (function, nameString)
    lastName = nil
  }

  /// How a command named `name` is carried out; nil if none is registered.
  func entry(for name: LuaString) -> Entry? {
    if name == lastName { return lastEntry }
    let entry = entries[name]
    lastName = name
    lastEntry = entry
    return entry
  }

  /// The Swift interpreter an `Entry.swift` names.
  func swiftInterpreter(at position: Int) -> any CommandInterpreter { swiftInterpreters[position] }

  /// Every registered command name, in byte order.
  public var names: [LuaString] { entries.keys.sorted() }
}
