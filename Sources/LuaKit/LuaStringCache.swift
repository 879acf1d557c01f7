import CLua
import CLuaShim

/// Swift values for Lua strings seen before, found by the address of the
/// string's bytes rather than by its contents. Lua keeps one copy of each
/// short string, and the cache anchors every string it holds, so while the
/// cache lives a known address always means the same string. Code that
/// meets the same few names again and again (message and command names)
/// skips decoding them.
public final class LuaStringCache<Value> {
  /// Lua interns strings up to this length (`LUAI_MAXSHORTLEN`); longer ones
  /// are separate objects each time, so caching them would only fill the
  /// cache.
  public static var longestCachedLength: Int { 40 }

  /// How many strings the cache keeps at most.
  public let capacity: Int
  /// The cached strings' addresses, oldest first, then nil in the slots
  /// still free; `values` holds each string's value in the same slot.
  /// Buffers of a fixed size held in `let`s rather than arrays in `var`s:
  /// a lookup, made for nearly every message, then needs no run-time
  /// exclusivity check.
  @usableFromInline let addresses: UnsafeMutablePointer<UnsafeRawPointer?>
  @usableFromInline let values: UnsafeMutablePointer<Value>
  @usableFromInline let state: LuaState
  /// `{ [string] = true }`: keeps the cached strings alive. Made by the
  /// first insert, on the thread that runs it: the cache may be made while
  /// a coroutine runs, when the main thread's stack is not for pushing.
  @usableFromInline var anchor: LuaReference?

  /// An empty cache for strings of `state` (and of its threads).
  public init(capacity: Int, in state: LuaState) {
    self.capacity = max(capacity, 0)
    self.state = state
    addresses = .allocate(capacity: max(capacity, 1))
    addresses.initialize(repeating: nil, count: self.capacity)
    values = .allocate(capacity: max(capacity, 1))
  }

  deinit {
    values.deinitialize(count: count)
    values.deallocate()
    addresses.deallocate()
  }

  /// Strings cached so far.
  @inlinable
  public var count: Int {
    var used = 0
    while used < capacity && addresses[used] != nil { used += 1 }
    return used
  }

  /// The value cached for the string at `index`, or nil if that string was
  /// not cached (or the value there is not a string).
  @inlinable
  public func value(at index: Int32, on L: OpaquePointer) -> Value? {
    guard lua_type(L, index) == LUA_TSTRING, let address = lua_tolstring(L, index, nil) else { return nil }
    let key = UnsafeRawPointer(address)
    var position = 0
    while position < capacity, let cached = addresses[position] {
      if cached == key { return values[position] }
      position += 1
    }
    return nil
  }

  /// The value cached for the string at `index` of `thread` (see
  /// `value(at:on:)`).
  @inlinable @inline(__always)
  public func value(at index: Int32, on thread: some LuaStack) -> Value? {
    value(at: index, on: thread.L)
  }

  /// Caches `value` for the string at `index` of `thread` (see
  /// `insert(_:forStringAt:on:)`).
  @inlinable @inline(__always)
  public func insert(_ value: Value, forStringAt index: Int32, on thread: some LuaStack) {
    insert(value, forStringAt: index, on: thread.L)
  }

  /// Caches `value` for the string at `index`, if it is a short string and
  /// the cache has room; does nothing otherwise.
  @inlinable
  public func insert(_ value: Value, forStringAt index: Int32, on L: OpaquePointer) {
    var length = 0
    let free = count
    guard free < capacity, lua_type(L, index) == LUA_TSTRING,
      let address = lua_tolstring(L, index, &length), length <= Self.longestCachedLength
    else { return }
    let key = UnsafeRawPointer(address)
    for position in 0..<free where addresses[position] == key { return }
    let string = lua_absindex(L, index)
    if anchor == nil {
      lua_createtable(L, 0, Int32(clamping: capacity))
      anchor = LuaReference(popping: L, in: state)
    }
    anchor?.push(on: L)
    lua_pushvalue(L, string)
    lua_pushboolean(L, 1)
    lua_rawset(L, -3)
    lua_settop(L, -2)
    (values + free).initialize(to: value)
    addresses[free] = key
  }
}
