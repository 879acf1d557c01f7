import CLua
import LuaKit

/// A plugin adds a Lua module (Swift host functions, userdata types, Lua
/// source) to a runtime, and may contribute services. The built-in `lunar`
/// module is a plugin like any other.
public protocol LunarPlugin: Sendable {
  /// The plugin's name, usually its module's (`lunar.queue`).
  var name: String { get }
  /// Installs the plugin; called once, on the runtime's loop thread.
  func install(in runtime: RuntimeCore) throws
}

/// A plugin that is one Lua module, described on its first `require`, so a
/// script that never uses it pays nothing at start-up.
public protocol ModulePlugin: LunarPlugin {
  /// The module called `name`, made when a script first requires it.
  func makeModule(_ runtime: RuntimeCore) throws -> LuaModule
}

extension ModulePlugin {
  public func install(in runtime: RuntimeCore) throws {
    runtime.install(moduleNamed: name) { runtime in try makeModule(runtime) }
  }
}

/// A Lua module under construction: functions, async functions, values and
/// Lua source. Installed in `package.preload`, it is built on its first
/// `require` (or first use as `lunar.name`), so start-up only pays for the
/// modules a script uses.
public struct LuaModule {
  /// The module's name (`lunar.queue`).
  public let name: String
  var functions: [(String, LuaFunction)] = []
  var asyncFunctions: [(String, AsyncLuaFunction)] = []
  var values: [(String, LuaValue)] = []
  var sources: [(source: [UInt8], chunkName: String)] = []
  var host: [(String, LuaFunction)] = []
  var cHost: [(String, lua_CFunction)] = []
  var cFunctions: [(String, lua_CFunction)] = []
  var afterLoad: [(RuntimeCore) throws -> Void] = []

  /// An empty module called `name`.
  public init(_ name: String) { self.name = name }

  /// Adds a Swift host function.
  public mutating func function(_ name: String, _ body: @escaping LuaFunction) {
    functions.append((name, body))
  }

  /// Adds a C function, for one a script calls so often that the Swift
  /// trampoline's cost shows.
  public mutating func cFunction(_ name: String, _ function: @escaping lua_CFunction) {
    cFunctions.append((name, function))
  }

  /// Adds a Swift async function; Lua callers wait for it without blocking
  /// the runtime (see `RuntimeCore.asyncFunction`).
  public mutating func asyncFunction(_ name: String, _ body: @escaping AsyncLuaFunction) {
    asyncFunctions.append((name, body))
  }

  /// Adds a constant.
  public mutating func value(_ name: String, _ value: LuaValue) {
    values.append((name, value))
  }

  /// Adds Lua source run with the module table as its only argument (`...`),
  /// for the parts best written in Lua.
  public mutating func lua(_ source: String, chunkName: String) {
    sources.append((Array(source.utf8), chunkName))
  }

  /// Adds Lua source given as bytes (an embedded resource).
  public mutating func lua(bytes: [UInt8], chunkName: String) {
    sources.append((bytes, chunkName))
  }

  /// Adds Swift functions for the module's Lua source, reachable there as
  /// the module table's `_host` field while the source runs.
  public mutating func hostFunction(_ name: String, _ body: @escaping LuaFunction) {
    host.append((name, body))
  }

  /// Adds a C function for the module's Lua source, beside the Swift ones
  /// in `_host`: for a call made per step of a big workflow, where the
  /// Swift trampoline's cost shows.
  public mutating func hostCFunction(_ name: String, _ function: @escaping lua_CFunction) {
    cHost.append((name, function))
  }

  /// Runs `body` once the module has been built (on its first `require`).
  public mutating func whenLoaded(_ body: @escaping (RuntimeCore) throws -> Void) {
    afterLoad.append(body)
  }
}

/// A Swift async function callable from Lua: takes the arguments as
/// values, returns one value (or `.nil`).
public typealias AsyncLuaFunction = @Sendable ([LuaValue]) async throws -> LuaValue
