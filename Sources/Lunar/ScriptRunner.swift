import CLua
import CLuaShim
import LuaKit

/// Runs a script the way the stock `lua5.4` interpreter does: standard
/// libraries, generational GC, `LUA_INIT`, the `arg` table, `...`, and the
/// main chunk on the main Lua thread.
public final class ScriptRunner {
  /// The state scripts run in.
  public let state: LuaState

  /// Options that change how the state is prepared.
  public struct Options: Sendable {
    /// Bytes Lua may hold at once; 0 for no limit.
    public var memoryLimit = 0
    /// Run `LUA_INIT_5_4` / `LUA_INIT` first, as `lua.c` does.
    public var runsInitEnvironment = true
    /// The environment to read `LUA_INIT` from.
    public var environment: [String: String] = [:]
    /// Options with defaults.
    public init() {}
  }

  /// A runner with a fresh state prepared as `lua.c` prepares one.
  public init(options: Options = Options()) throws(LuaError) {
    state = try LuaState(memoryLimit: options.memoryLimit)
    _ = lunar_gcgenerational(state.L)
    if options.runsInitEnvironment { try runInit(environment: options.environment) }
  }

  /// Runs `script`'s main chunk and returns its results.
  @discardableResult
  public func run(_ script: Script) throws(LuaError) -> [LuaValue] {
    script.installArgTable(in: state)
    let base = state.top
    let count = try script.load(into: state)
    try state.call(arguments: count)
    defer { state.top = base }
    var results: [LuaValue] = []
    for index in (base + 1)..<(state.top + 1) {
      results.append((try? state.value(at: index, root: "result")) ?? .nil)
    }
    return results
  }

  /// Runs `LUA_INIT_5_4` (or `LUA_INIT`): `@file` runs a file, anything else
  /// is source named `=LUA_INIT`, exactly as `lua.c`'s handle_luainit.
  private func runInit(environment: [String: String]) throws(LuaError) {
    let (name, code): (String, String)
    if let value = environment["LUA_INIT_5_4"] {
      (name, code) = ("=LUA_INIT_5_4", value)
    } else if let value = environment["LUA_INIT"] {
      (name, code) = ("=LUA_INIT", value)
    } else {
      return
    }
    if code.hasPrefix("@") {
      try state.load(file: String(code.dropFirst()))
    } else {
      try state.load(code, name: name)
    }
    try state.call(arguments: 0, results: 0)
  }
}
