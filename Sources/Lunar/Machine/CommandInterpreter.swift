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
  /// How a command is carried out.
  enum Entry {
    /// A Swift interpreter, by its position in `swiftInterpreters`.
    case swift(Int)
    /// A Lua interpreter.
    case lua(LuaInterpreter)
    case after, log, emit
  }

  /// By the name's bytes: `"\u{E9}"` and `"e\u{301}"` are two commands.
  private var entries: [LuaString: Entry] = ["after": .after, "log": .log, "emit": .emit]
  /// The Swift interpreters that `entries` name by position.
  private var swiftInterpreters: [any CommandInterpreter] = []
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
    forgetLastLookup()
  }

  /// Registers (or replaces) a Lua interpreter: `function`, and `name`
  /// as a Lua string.
  func register(_ name: LuaString, lua function: LuaReference, nameString: LuaReference) {
    entries[name] = .lua(LuaInterpreter(function: function, name: nameString))
    forgetLastLookup()
  }

  /// How a command named `name` is carried out; nil if none is registered.
  func entry(for name: LuaString) -> Entry? {
    if name == lastName { return lastEntry }
    let entry = entries[name]
    lastName = name
    lastEntry = entry
    return entry
  }

  /// A registration changes what the last lookup found (and its entry may
  /// hold a Lua interpreter that should now be let go).
  private func forgetLastLookup() {
    lastName = nil
    lastEntry = nil
  }

  /// The Swift interpreter an `Entry.swift` names.
  func swiftInterpreter(at position: Int) -> any CommandInterpreter { swiftInterpreters[position] }

  /// Every registered command name, in byte order.
  public var names: [LuaString] { entries.keys.sorted() }
}

/// A command interpreter written in Lua: `fn(cmd, send)`.
final class LuaInterpreter {
  /// The function.
  let function: LuaReference
  /// The command's name as a Lua string, pushed as `cmd[1]` without being
  /// hashed again.
  let name: LuaReference

  init(function: LuaReference, name: LuaReference) {
    self.function = function
    self.name = name
  }
}
