import CLua
import CLuaShim

/// One Lua state, owned by Swift and closed when released.
///
/// A Lua state is not thread-safe: a `LuaState` must be created, used and
/// released on one thread (DESIGN.md, "the one thread rule"), which is why
/// it is not `Sendable`.
public final class LuaState {
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

  // MARK: Stack

  /// The index of the top of the stack (the number of values on it).
  public var top: Int32 {
    get { lua_gettop(L) }
    set { lua_settop(L, newValue) }
  }

  /// Removes `n` values from the top of the stack.
  public func pop(_ n: Int32 = 1) { lunar_pop(L, n) }

  /// Makes room for `n` more values; false if the stack cannot grow.
  public func ensureStack(_ n: Int32) -> Bool { lua_checkstack(L, n) != 0 }

  /// The Lua type of the value at `index`.
  public func type(at index: Int32) -> LuaType { LuaType(rawValue: lua_type(L, index)) ?? .none }

  // MARK: Loading and calling

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

  /// Calls the function below `arguments` values in protected mode, with a
  /// traceback handler. Leaves `results` values (or all, for `nil`).
  public func call(arguments: Int32, results: Int32? = nil) throws(LuaError) {
    let status = lunar_pcall(L, arguments, results ?? LUA_MULTRET)
    if status != LUA_OK { throw popError(status: status, traceback: true) }
  }

  /// Pushes the message handler `call` uses and returns its index: code that
  /// makes many calls pushes it once, below them, and passes the index to
  /// `call(arguments:results:messageHandler:)`, so no call moves the stack.
  @inlinable public func pushMessageHandler() -> Int32 {
    lunar_pushmessagehandler(L)
    return lua_gettop(L)
  }

  /// `call(arguments:results:)` with the message handler already at
  /// `messageHandler` (from `pushMessageHandler`), below the function.
  @inlinable public func call(arguments: Int32, results: Int32, messageHandler: Int32) throws(LuaError) {
    let status = lunar_pcallwith(L, arguments, results, messageHandler)
    if status != LUA_OK { throw popError(status: status, traceback: true) }
  }

  /// Pops the error value left by a failed load or call and describes it.
  public func popError(status: Int32, traceback: Bool = false) -> LuaError {
    let kind: LuaError.Kind =
      switch status {
      case LUA_ERRSYNTAX: .syntax
      case LUA_ERRMEM: .memory
      case LUA_ERRERR: .handler
      case lunar_errfile(): .file
      default: .runtime
      }
    var trace: String?
    if traceback {
      lunar_pushtraceback(L)
      trace = string(at: -1)
      pop()
    }
    let message = errorMessage(at: -1)
    let value = (try? value(at: -1, root: "error")) ?? .string(LuaString(message))
    pop()
    return LuaError(kind: kind, message: message, value: value, traceback: trace)
  }

  /// The message `lua.c` would print for the error value at `index`: the
  /// string itself, its `__tostring`, or `(error object is a X value)`.
  public func errorMessage(at index: Int32) -> String {
    switch lua_type(L, index) {
    case LUA_TSTRING, LUA_TNUMBER:
      return string(at: index) ?? ""
    default:
      if luaL_getmetafield(L, index, "__tostring") != LUA_TNIL {
        pop()
        var length = 0
        let text = lunar_tostring(L, index, &length)
        defer { pop() }
        if let text { return String(decoding: UnsafeRawBufferPointer(start: text, count: length), as: UTF8.self) }
      }
      return "(error object is a \(String(cString: lunar_typename(L, index))) value)"
    }
  }

  // MARK: Globals

  /// Pushes the global `name`, raw (no `__index` on `_G` runs).
  public func getGlobal(_ name: String) {
    lunar_pushglobaltable(L)
    push(name)
    lua_rawget(L, -2)
    lua_rotate(L, -2, 1)
    pop()
  }

  /// Pops the top value into the global `name`, raw.
  public func setGlobal(_ name: String) {
    lunar_pushglobaltable(L)
    push(name)
    lua_rotate(L, -3, -1)
    lua_rawset(L, -3)
    pop()
  }

  // MARK: Plain values

  /// The string (or number, as Lua converts it) at `index`, as UTF-8 text.
  public func string(at index: Int32) -> String? {
    withBytes(at: index) { String(decoding: $0, as: UTF8.self) }
  }

  /// The string (or number, as Lua converts it) at `index`, as its exact
  /// bytes: what a name from Lua is identified by.
  public func bytes(at index: Int32) -> LuaString? {
    withBytes(at: index) { LuaString(bytes: [UInt8]($0)) }
  }

  /// Calls `body` with the bytes of the string (or number, converted) at
  /// `index`, valid only during the call; nil for other values.
  private func withBytes<T>(at index: Int32, _ body: (UnsafeRawBufferPointer) -> T) -> T? {
    guard lua_type(L, index) == LUA_TSTRING || lua_type(L, index) == LUA_TNUMBER else { return nil }
    var length = 0
    // lua_tolstring converts a number in place, so convert a copy.
    lua_pushvalue(L, index)
    defer { pop() }
    guard let chars = lua_tolstring(L, -1, &length) else { return nil }
    return body(UnsafeRawBufferPointer(start: chars, count: length))
  }

  /// Pushes a Swift string as a Lua string.
  public func push(_ string: String) {
    // Native strings lend their bytes; only a bridged one is copied (a
    // mutable copy for `withUTF8` would cost a retain and a release).
    let pushed: Void? = string.utf8.withContiguousStorageIfAvailable { buffer in
      buffer.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
    }
    if pushed == nil {
      var copy = string
      copy.withUTF8 { buffer in
        buffer.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
      }
    }
  }

  // MARK: Memory

  /// Bytes Lua holds now.
  public var memoryInUse: Int { Int(lunar_memoryused(L)) }

  /// The most bytes Lua has held at once.
  public var peakMemory: Int { Int(lunar_memorypeak(L)) }

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
}
