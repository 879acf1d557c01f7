import LuaKit

/// A Lua script to run, with the command line it was given, as `lua.c`
/// describes one: where its source comes from, its own arguments (the
/// chunk's `...` and `arg[1...]`) and what came before it (`arg[-n...0]`).
public struct Script: Sendable {
  /// Where the source comes from.
  public enum Source: Sendable, Equatable {
    /// A file, read as `luaL_loadfile` reads it (a `#!` line is skipped).
    case file(String)
    /// Standard input, named `=stdin` in messages.
    case standardInput
    /// Source text with a chunk name (`=name` or `@file` as Lua expects).
    case text(String, chunkName: String)
  }

  /// Where the source comes from.
  public var source: Source
  /// The script's own arguments.
  public var arguments: [String]
  /// The command line before the script name (`lunar`, `run`, flags), which
  /// `arg` holds at negative indices; the script name itself is `arg[0]`.
  public var interpreterArguments: [String]

  /// A script with its arguments.
  public init(source: Source, arguments: [String] = [], interpreterArguments: [String] = ["lunar"]) {
    self.source = source
    self.arguments = arguments
    self.interpreterArguments = interpreterArguments
  }

  /// The name the script goes by in `arg[0]`.
  public var name: String {
    switch source {
    case .file(let path): path
    case .standardInput: "-"
    case .text(_, let chunkName): chunkName
    }
  }

  /// Sets the global `arg` table as `lua.c`'s createargtable does.
  public func installArgTable(in state: LuaState) {
    let all = interpreterArguments + [name] + arguments
    let scriptIndex = interpreterArguments.count
    state.newTable(arrayCapacity: arguments.count, fieldCapacity: scriptIndex + 1)
    for (i, text) in all.enumerated() {
      state.push(text)
      state.setField(i - scriptIndex, of: -2)
    }
    state.setGlobal("arg")
  }

  /// Compiles the script and pushes the main function followed by its
  /// arguments; returns how many arguments were pushed.
  public func load(into state: LuaState, mode: LuaState.LoadMode = .any) throws(LuaError) -> Int32 {
    switch source {
    case .file(let path): try state.load(file: path, mode: mode)
    case .standardInput: try state.load(file: nil, mode: mode)
    case .text(let text, let chunkName): try state.load(text, name: chunkName, mode: mode)
    }
    guard state.ensureStack(Int32(arguments.count) + 1) else {
      state.pop()
      throw LuaError(message: "too many arguments to script")
    }
    for argument in arguments { state.push(argument) }
    return Int32(arguments.count)
  }
}
