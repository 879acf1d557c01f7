import CLua
import LuaKit

/// Builds plugins' Lua modules into a runtime's state: a `LuaModule`
/// becomes a table in `package.loaded`, built at once or, through
/// `package.preload`, on its first `require`. Loop thread only.
public final class ModuleInstaller {
  /// The runtime the modules are built for (its plugins' `make` closures
  /// and `whenLoaded` hooks receive it).
  private unowned let core: RuntimeCore
  private let state: LuaState
  /// How many modules have been built (a module built while a script ran
  /// may have left Swift state behind, see `RuntimeCore.restorePristine`).
  private(set) var builtCount = 0

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
      state.pop()
      return
    }
    install(moduleNamed: module.name) { _ in module }
  }

  /// Makes `name` `require`-able, with `make` describing the module on its
  /// first `require`: a plugin's closures, classes and Lua source cost
  /// nothing at start-up until a script uses them.
  public func install(moduleNamed name: String, _ make: @escaping (RuntimeCore) throws -> LuaModule) {
    // package.preload[name] = a loader that builds the module on demand.
    state.pushPreloadedModules()
    state.push(function: { [unowned self] call in
      // Built on the main thread's stack, handed to whichever thread required it.
      try self.build(make(self.core))
      if call.L != self.state.L { self.state.move(1, to: call) }
      return .one
    })
    state.setField(name, of: -2)
    state.pop()
  }

  /// Builds `module`, registers it in `package.loaded` (and as a field of
  /// `lunar`), and leaves its table on the stack.
  private func build(_ module: LuaModule) throws {
    builtCount += 1
    state.newTable(
      fieldCapacity: module.functions.count + module.cFunctions.count + module.asyncFunctions.count + module.values.count)
    let table = state.top
    for (name, function) in module.functions {
      state.push(function: function)
      state.setField(name, of: table)
    }
    for (name, function) in module.cFunctions {
      lua_pushcclosure(state.L, function, 0)
      state.setField(name, of: table)
    }
    for (name, function) in module.asyncFunctions {
      state.push(function: core.asyncFunction(function))
      state.setField(name, of: table)
    }
    for (name, value) in module.values {
      try state.push(value)
      state.setField(name, of: table)
    }
    // package.loaded[name] = table, first, so the sources may require it.
    state.pushLoadedModules()
    state.pushValue(at: table)
    state.setField(module.name, of: -2)
    state.top = table
    if module.name == "lunar" {
      state.pushValue(at: table)
      state.setGlobal("lunar")
    } else if module.name.hasPrefix("lunar.") {
      state.getGlobal("lunar")
      if state.type(at: -1) == .table {
        state.pushValue(at: table)
        state.setField(String(module.name.dropFirst("lunar.".count)), of: -2)
      }
      state.top = table
    }
    if !module.host.isEmpty || !module.cHost.isEmpty {
      state.newTable(fieldCapacity: module.host.count + module.cHost.count)
      for (key, function) in module.host {
        state.push(function: function)
        state.setField(key, of: -2)
      }
      for (key, function) in module.cHost {
        lua_pushcclosure(state.L, function, 0)
        state.setField(key, of: -2)
      }
      state.setField("_host", of: table)
    }
    for (source, chunkName) in module.sources {
      try ModuleBytecode.load(source, chunkName: chunkName, on: state)
      state.pushValue(at: table)
      try state.call(arguments: 1, results: 0)
    }
    state.top = table
    for hook in module.afterLoad { try hook(core) }
    state.top = table
  }

  /// Installs a module written in Lua: `source` runs with the module table
  /// as `...`, the Swift `host` functions waiting in its `_host` field for
  /// the source to take.
  public func installLuaModule(
    _ name: String, source: [UInt8], host: [(String, LuaFunction)], cHost: [(String, lua_CFunction)] = []
  ) throws {
    var module = LuaModule(name)
    for (key, function) in host { module.hostFunction(key, function) }
    for (key, function) in cHost { module.hostCFunction(key, function) }
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
  public func installLuaModule(
    _ name: String, source: [UInt8], host: [(String, LuaFunction)], cHost: [(String, lua_CFunction)] = []
  ) throws {
    try modules.installLuaModule(name, source: source, host: host, cHost: cHost)
  }
}
