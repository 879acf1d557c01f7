import LuaKit

/// What a machine does, whoever wrote it (Lua or Swift): its states and the
/// pure step from (state, message) to the next state and commands. The
/// driver owns the mailbox, the current state and the effects.
public protocol MachineBehavior: AnyObject {
  /// The machine's name.
  var name: LuaString { get }
  /// Every state, in a stable order, each name exactly as Lua's bytes (no
  /// two equal). Elsewhere a state is its position in this array: the
  /// driver stores and compares numbers, never names.
  var states: [LuaString] { get }
  /// The position of the state it starts in; the driver enters it (runs
  /// its `enter`) before the first message.
  var initial: Int { get }
  /// Unhandled messages are errors instead of being dropped.
  var strict: Bool { get }
  /// The transitions known without running anything (for `lunar graph`):
  /// (from, message, to).
  var edges: [(from: LuaString, message: LuaString, to: LuaString)] { get }
  /// Handles `message` in `state`; nil if the state has no handler for it.
  /// `next` nil means stay; a state, the current one included, is a
  /// transition (exit, then enter). `lua` is the thread the driver runs on.
  func step(_ state: Int, _ message: MachineMessage, on lua: LuaState) throws -> (next: Int?, commands: [Command])?
  /// Commands issued when entering `state`.
  func enter(_ state: Int, on lua: LuaState) throws -> [Command]
  /// Commands issued when leaving `state`.
  func exit(_ state: Int, on lua: LuaState) throws -> [Command]
}

extension MachineBehavior {
  /// The name of the initial state.
  public var initialName: LuaString { states[initial] }
}

/// A bad machine definition or step, named by machine and state.
public struct MachineError: Error, Sendable, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
