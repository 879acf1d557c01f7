import CLua
import CLuaShim

/// The stack of one Lua thread, where Swift reads and pushes Lua values: a
/// `LuaState` (its main thread), a `LuaCall` (the thread a host function
/// runs on) or a `LuaThread` (any thread Swift is handed).
///
/// Every operation is safe for Swift frames (docs/architecture.md,
/// "Never `longjmp` through Swift"): tables are read
/// and written raw, so no metamethod runs, and nothing raises. Indices
/// count as Lua counts them: 1 is the bottom, -1 the top.
public protocol LuaStack {
  /// The thread (`lua_State *`) whose stack this is.
  var L: OpaquePointer { get }
}

/// A Lua thread's stack seen through its bare pointer (a coroutine being
/// resumed, a thread a result is pushed on): it neither owns nor retains
/// anything, so making one costs nothing.
public struct LuaThread: LuaStack {
  public let L: OpaquePointer

  /// A view of the thread `L`.
  @inlinable public init(_ L: OpaquePointer) { self.L = L }
}

extension LuaStack {
  // MARK: Height

  /// The index of the top of the stack (the number of values on it).
  @inlinable @inline(__always) public var top: Int32 {
    get { lua_gettop(L) }
    nonmutating set { lua_settop(L, newValue) }
  }

  /// Removes `n` values from the top of the stack.
  @inlinable @inline(__always) public func pop(_ n: Int32 = 1) { lua_settop(L, -n - 1) }

  /// Makes room for `n` more values; false if the stack cannot grow.
  @inlinable public func ensureStack(_ n: Int32) -> Bool { lua_checkstack(L, n) != 0 }

  /// Runs `body`, then puts the stack back to the height it had before,
  /// whether `body` returns or throws: what it pushed is dropped.
  @inlinable @inline(__always) public func withStackScope<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    return try body()
  }

  /// `index` counted from the bottom, so it stays valid as values are pushed.
  @inlinable @inline(__always) public func absoluteIndex(_ index: Int32) -> Int32 { lua_absindex(L, index) }

  // MARK: Moving values

  /// Pushes the value at `index` again: the same value, so a table pushed
  /// this way is the same table, not a copy.
  @inlinable @inline(__always) public func pushValue(at index: Int32) { lua_pushvalue(L, index) }

  /// Moves the top value down to `index`, shifting up the values above it.
  @inlinable @inline(__always) public func insert(at index: Int32) { lua_rotate(L, index, 1) }

  /// Removes the value at `index`, shifting down the values above it.
  @inlinable @inline(__always) public func remove(at index: Int32) {
    lua_rotate(L, index, -1)
    lua_settop(L, -2)
  }

  /// Pops `count` values and pushes them, in the same order, on `thread`,
  /// another thread of the same state (a value built on one thread's stack
  /// and returned on another's).
  @inlinable public func move(_ count: Int32, to thread: some LuaStack) { lua_xmove(L, thread.L, count) }

  /// Pops the top value into `index`, replacing the value there.
  @inlinable @inline(__always) public func replace(at index: Int32) {
    lua_copy(L, -1, index)
    lua_settop(L, -2)
  }

  // MARK: Reading values in place

  /// The Lua type of the value at `index` (`.none` past the top).
  @inlinable @inline(__always) public func type(at index: Int32) -> LuaType { LuaType(rawValue: lua_type(L, index)) ?? .none }

  /// The type name Lua's messages use for the value at `index`: its
  /// metatable's `__name` if it has one (`Queue`), else its type's name.
  public func typeName(at index: Int32) -> String { String(cString: lunar_typename(L, index)) }

  /// The value at `index` with Lua's truthiness: false only for nil and false.
  @inlinable @inline(__always) public func boolean(at index: Int32) -> Bool { lua_toboolean(L, index) != 0 }

  /// The number at `index` as an integer, if it is one or a float with an
  /// exact integer value; nil for anything else (strings are not converted).
  @inlinable public func integer(at index: Int32) -> Int64? {
    guard lua_type(L, index) == LUA_TNUMBER else { return nil }
    var exact: Int32 = 0
    let value = lua_tointegerx(L, index, &exact)
    return exact != 0 ? value : nil
  }

  /// The number at `index` as a float; nil for anything else (strings are
  /// not converted).
  @inlinable public func number(at index: Int32) -> Double? {
    lua_type(L, index) == LUA_TNUMBER ? lua_tonumberx(L, index, nil) : nil
  }

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
    defer { lua_settop(L, -2) }
    guard let chars = lua_tolstring(L, -1, &length) else { return nil }
    return body(UnsafeRawBufferPointer(start: chars, count: length))
  }

  /// The stack of the coroutine at `index`; nil for any other value.
  public func thread(at index: Int32) -> LuaThread? {
    lua_tothread(L, index).map(LuaThread.init)
  }

  /// True if the values at `a` and `b` are the same value, compared raw
  /// (no `__eq` runs).
  @inlinable @inline(__always) public func rawEquals(_ a: Int32, _ b: Int32) -> Bool { lua_rawequal(L, a, b) != 0 }

  // MARK: Pushing plain values

  /// Pushes nil.
  @inlinable @inline(__always) public func pushNil() { lua_pushnil(L) }
  /// Pushes a boolean.
  @inlinable @inline(__always) public func push(_ value: Bool) { lua_pushboolean(L, value ? 1 : 0) }
  /// Pushes an integer.
  @inlinable @inline(__always) public func push(_ value: Int64) { lua_pushinteger(L, value) }
  /// Pushes an integer.
  @inlinable @inline(__always) public func push(_ value: Int) { lua_pushinteger(L, Int64(value)) }
  /// Pushes a float.
  @inlinable @inline(__always) public func push(_ value: Double) { lua_pushnumber(L, value) }

  /// Pushes a Swift string as a Lua string.
  @inlinable public func push(_ string: String) {
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
}
