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

/// A Lua module under construction: functions, async functions, values and
/// Lua source, installed as `package.loaded[name]` so `require` finds it.
public struct LuaModule {
  /// The module's name (`lunar.queue`).
  public let name: String
  var functions: [(String, LuaFunction)] = []
  var asyncFunctions: [(String, AsyncLuaFunction)] = []
  var values: [(String, LuaValue)] = []
  var sources: [(source: String, chunkName: String)] = []

  /// An empty module called `name`.
  public init(_ name: String) { self.name = name }

  /// Adds a Swift host function.
  public mutating func function(_ name: String, _ body: @escaping LuaFunction) {
    functions.append((name, body))
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
    sources.append((source, chunkName))
  }
}

/// A Swift async function callable from Lua: takes the arguments as
/// values, returns one value (or `.nil`).
public typealias AsyncLuaFunction = @Sendable ([LuaValue]) async throws -> LuaValue
