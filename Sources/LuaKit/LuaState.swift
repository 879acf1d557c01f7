import CLua
import CLuaShim

/// One Lua state, owned by Swift and closed when released; as a `LuaStack`,
/// the stack of its main thread.
///
/// A Lua state is not thread-safe: a `LuaState` must be created, used and
/// released on one thread (docs/architecture.md, "One thread per Lua state"), which is why
/// it is not `Sendable`.
public final class LuaState: LuaStack {
  /// The underlying `lua_State *` (the main thread).
  public let L: OpaquePointer
  private let owned: Bool

  /// Creates a state with Lunar's counting allocator.
  /// - Parameters:
  ///   - memoryLimit: bytes Lua may hold at once while running; 0 for none.
  ///   - openLibraries: load the standard libraries, as `lua.c` does.
  public init(memoryLimit: Int = 0, openLibraries: Bool = true) throws(LuaError) {
    LuaFunctionBox.configureTrampoline()
    guard let L = lunar_newstate(memoryLimit) else {
      throw LuaError(kind: .memory, message: "cannot create Lua state: not enough memory")
    }
    self.L = L
    self.owned = true
    if openLibraries {
      let status = lunar_openlibs(L)
      if status != LUA_OK { throw popError(status: status) }
    }
  }

  /// A view of a state (or one of its threads) that Swift does not own:
  /// for example the thread a host function was called on.
  public init(borrowing L: OpaquePointer) {
    self.L = L
    self.owned = false
  }

  deinit {
    close()
  }

  /// True once `close` has run; references then stop touching the state.
  public var isClosed: Bool { closed }
  // Private, so the compiler proves every access exclusive: a public stored
  // property would keep a run-time check in every reference's deinit.
  private var closed = false

  /// Closes the state now (its `__gc` metamethods run). Later calls, and
  /// `deinit`, do nothing. Objects that keep the state alive (references
  /// held by Lua-owned Swift objects) need this to break the cycle.
  public func close() {
    guard owned, !closed else { return }
    closed = true
    lunar_close(L)
  }

  // MARK: Loading

  /// How `load` treats binary (precompiled) chunks.
  public enum LoadMode: String, Sendable {
    case text = "t", binary = "b", any = "bt"
  }

  /// Compiles `source` and pushes it as a function.
  /// - Parameter name: the chunk name Lua shows in messages (`@file.lua`,
  ///   `=stdin`, or the source itself).
  public func load(_ source: String, name: String, mode: LoadMode = .any) throws(LuaError) {
    var source = source
    let status = source.withUTF8 { buffer in
      buffer.withMemoryRebound(to: CChar.self) { chars in
        lunar_loadbuffer(L, chars.baseAddress, chars.count, name, mode.rawValue)
      }
    }
    if status != LUA_OK { throw popError(status: status) }
  }

  /// Compiles bytes (text or a binary chunk) and pushes them as a function.
  public func load(bytes: [UInt8], name: String, mode: LoadMode = .any) throws(LuaError) {
    let status = bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { chars in
        lunar_loadbuffer(L, chars.baseAddress, chars.count, name, mode.rawValue)
      }
    }
    if status != LUA_OK { throw popError(status: status) }
  }

  /// The function on top of the stack as a binary chunk (`string.dump`),
  /// so a program can compile Lua source once and load it many times.
  public func dump(strip: Bool = false) -> [UInt8] {
    var bytes: [UInt8] = []
    withUnsafeMutablePointer(to: &bytes) { buffer in
      _ = lua_dump(L, { _, data, size, context in
        let buffer = context!.assumingMemoryBound(to: [UInt8].self)
        buffer.pointee.append(contentsOf: UnsafeRawBufferPointer(start: data, count: size))
        return 0
      }, buffer, strip ? 1 : 0)
    }
    return bytes
  }

  /// Compiles a file (nil: standard input) and pushes it as a function; the
  /// chunk is named `@path` (or `=stdin`) as `lua.c` names it.
  public func load(file path: String?, mode: LoadMode = .any) throws(LuaError) {
    let status = lunar_loadfile(L, path, mode.rawValue)
    if status != LUA_OK { throw popError(status: status) }
  }

  // MARK: Memory

  /// Bytes Lua holds now.
  public var memoryInUse: Int { Int(lunar_memoryused(L)) }

  /// The most bytes Lua has held at once.
  public var peakMemory: Int { Int(lunar_memorypeak(L)) }

  /// Turns Lua's warnings (`warn`) on or off, as `warn("@on")` and
  /// `warn("@off")` do; a new state has them off, as in `lua5.4`.
  public func setWarnings(_ on: Bool) {
    lunar_setwarnings(L, on ? 1 : 0)
  }

  /// Runs a full garbage collection cycle.
  public func collectGarbage() {
    _ = lunar_gccollect(L)
  }
}

/// The basic types of Lua values, as `lua_type` reports them.
public enum LuaType: Int32, Sendable {
  case none = -1
  case `nil` = 0
  case boolean, lightUserdata, number, string, table, function, userdata, thread

  /// The name Lua's `type()` gives the type (`no value` for `.none`); see
  /// `LuaStack.typeName(at:)` for the name messages show, which honours `__name`.
  public var name: String {
    switch self {
    case .none: "no value"
    case .nil: "nil"
    case .boolean: "boolean"
    case .lightUserdata, .userdata: "userdata"
    case .number: "number"
    case .string: "string"
    case .table: "table"
    case .function: "function"
    case .thread: "thread"
    }
  }
}
