import CLua
import CLuaShim
import LuaKit
import Lunar

/// Installs the spec DSL (`busted`) and the assertion library (`luassert`,
/// `luassert.spy`, `luassert.stub`, `luassert.mock`, `luassert.match`,
/// `say`) into a runtime, and exposes them as globals as busted does.
public struct SpecPlugin: LunarPlugin {
  public let name = "busted"

  /// The registry key of the runner table (`run_file`) the driver calls;
  /// `require "busted"` gives only busted's own API.
  static let runnerKey = "lunar.busted.runner"

  public init() {}

  /// The two libraries compiled once per process: every spec file's runtime
  /// loads the bytecode instead of parsing 2,000 lines of Lua again.
  private static let compiled: Result<(luassert: [UInt8], busted: [UInt8]), any Error> = {
    do {
      let state = try LuaState(openLibraries: false)
      try state.load(bytes: PackageResources.luassert_lua, name: "=luassert", mode: .text)
      let luassert = state.dump()
      state.pop()
      try state.load(bytes: PackageResources.busted_lua, name: "=busted", mode: .text)
      let busted = state.dump()
      return .success((luassert, busted))
    } catch {
      return .failure(error)
    }
  }()

  public func install(in runtime: RuntimeCore) throws {
    let state = runtime.state
    let L = state.L
    let base = state.top
    defer { state.top = base }

    let chunks = try Self.compiled.get()
    try state.load(bytes: chunks.luassert, name: "=luassert", mode: .binary)
    try state.call(arguments: 0, results: 1)
    let luassert = state.top
    lua_getfield(L, lunar_registryindex(), LUA_LOADED_TABLE)
    let loaded = state.top
    for (module, field) in [
      ("luassert", "assert"), ("luassert.spy", "spy"), ("luassert.stub", "stub"), ("luassert.mock", "mock"),
      ("luassert.match", "match"), ("say", "say"),
    ] {
      lua_getfield(L, luassert, field)
      lua_setfield(L, loaded, module)
    }

    try state.load(bytes: chunks.busted, name: "=busted", mode: .binary)
    lua_pushvalue(L, luassert)
    let scheduler = runtime.scheduler
    let taskClass = runtime.taskClass
    state.push(function: { [unowned scheduler] call in
      try call.check(1, is: .function)
      let task = scheduler.spawn(on: call.L, function: 1, arguments: call.argumentCount - 1, label: "spec", traced: false)
      LuaState(borrowing: call.L).push(task, as: taskClass)
      return .one
    })
    state.push(function: { [unowned scheduler] call in
      let messages = scheduler.takeUnobservedFailures().map { LuaValue.string(LuaString($0.description)) }
      try call.push(.table(LuaTable(array: messages)))
      return .one
    })
    try state.call(arguments: 3, results: 1)
    lua_getfield(L, -1, "module")
    lua_setfield(L, loaded, "busted")
    lua_pushvalue(L, -1)
    lua_setfield(L, lunar_registryindex(), Self.runnerKey)
    lua_getfield(L, -1, "export")
    try state.call(arguments: 0, results: 0)
  }
}
