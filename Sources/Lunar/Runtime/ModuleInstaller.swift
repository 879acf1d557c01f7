import CLua
import CLuaShim
import LuaKit

/// Builds plugins' Lua modules into a runtime's state: a `LuaModule`
/// becomes a table in `package.loaded`, built at once or, through
/// `package.preload`, on its first `require`. Loop thread only.
///
/// Raw C calls build the tables: LuaKit has no table field access yet.
public final class ModuleInstaller {
  /// The runtime the modules are built for (its plugins' `make` closures
  /// and `whenLoaded` hooks receive it).
  private unowned let core: RuntimeCore
  private let state: LuaState

  /// An installer for `core`'s state.
  init(core: RuntimeCore) {
    self.core = core
    state = core.state
  }

  /// Builds `module` as a table and makes it `require`-able; `lunar` is also
  /// a global, and `lunar.x` modules are also fields of it.
  public func install(_ module: LuaModule) throws {
    if module.name == "lunar" {
      try build(module)
      lua_settop(state.L, -2)
      return
    }
    install(moduleNamed: module.name) { _ in module }
  }

  /// Makes `name` `require`-able, with `make` describing the module on its
  /// first `require`: a plugin's closures, classes and Lua source cost
  /// nothing at start-up until a script uses them.
  public func install(moduleNamed name: String, _ make: @escaping (RuntimeCore) throws -> LuaModule) {
    // package.preload[name] = a loader that builds the module on demand.
    let L = state.L
    lua_getfield(L, lunar_registryindex(), LUA_PRELOAD_TABLE)
    state.push(function: { [unowned self] call in
      // Built on the main thread's stack, handed to whichever thread required it.
      try self.build(make(self.core))
      if call.L != self.state.L { lua_xmove(self.state.L, call.L, 1) }
      return .one
    })
    lua_setfield(L, -2, name)
    lua_settop(L, -2)
  }

  /// Builds `module`, registers it in `package.loaded` (and as a field of
  /// `lunar`), and leaves its table on the stack.
  private func build(_ module: LuaModule) throws {
    let L = state.L
    lua_createtable(L, 0, Int32(module.functions.count + module.asyncFunctions.count + module.values.count))
    let table = lua_gettop(L)
    for (name, function) in module.functions {
      state.push(function: function)
      lua_setfield(L, table, name)
    }
    for (name, function) in module.asyncFunctions {
      state.push(function: core.asyncFunction(function))
      lua_setfield(L, table, name)
    }
    for (name, value) in module.values {
      try state.push(value)
      lua_setfield(L, table, name)
    }
    // package.loaded[name] = table, first, so the sources may require it.
    lua_getfield(L, lunar_registryindex(), LUA_LOADED_TABLE)
    lua_pushvalue(L, table)
    lua_setfield(L, -2, module.name)
    lua_settop(L, table)
    if module.name == "lunar" {
      lua_pushvalue(L, table)
      state.setGlobal("lunar")
    } else if module.name.hasPrefix("lunar.") {
      state.getGlobal("lunar")
      if lua_type(L, -1) == LUA_TTABLE {
        state.push(String(module.name.dropFirst("lunar.".count)))
        lua_pushvalue(L, table)
        lua_rawset(L, -3)
      }
      lua_settop(L, table)
    }
    if !module.host.isEmpty {
      lua_createtable(L, 0, Int32(module.host.count))
      for (key, function) in module.host {
        state.push(function: function)
        lua_setfield(L, -2, key)
      }
      lua_setfield(L, table, "_host")
    }
    for (source, chunkName) in module.sources {
      try state.load(bytes: source, name: chunkName, mode: .text)
      lua_pushvalue(L, table)
      try state.call(arguments: 1, results: 0)
    }
    lua_settop(L, table)
    for hook in module.afterLoad { try hook(core) }
    lua_settop(L, table)
  }

  /// Installs a module written in Lua: `source` runs with the module table
  /// as `...`, the Swift `host` functions waiting in its `_host` field for
  /// the source to take.
  public func installLuaModule(_ name: String, source: [UInt8], host: [(String, LuaFunction)]) throws {
    var module = LuaModule(name)
    for (key, function) in host { module.hostFunction(key, function) }
    module.lua(bytes: source, chunkName: "=" + name)
    try install(module)
  }
}

extension RuntimeCore {
  /// Builds `module` and makes it `require`-able (see `ModuleInstaller`).
  public func install(_ module: LuaModule) throws {
    try modules.install(module)
  }

  /// Makes `name` `require`-able, described by `make` on its first
  /// `require` (see `ModuleInstaller`).
  public func install(moduleNamed name: String, _ make: @escaping (RuntimeCore) throws -> LuaModule) {
    modules.install(moduleNamed: name, make)
  }

  /// Installs a module written in Lua with Swift host functions (see
  /// `ModuleInstaller`).
  public func installLuaModule(_ name: String, source: [UInt8], host: [(String, LuaFunction)]) throws {
    try modules.installLuaModule(name, source: source, host: host)
  }
}
