import CLua
import CLuaShim

/// Tables, always raw: no `__index`, `__newindex` or `__pairs` runs, so
/// nothing Lua code put in a metatable can raise through Swift frames.
/// Where a table's index is given, it counts the stack as it is when the
/// function is called (with the value to store on top, for the setters).
extension LuaStack {
  // MARK: Making tables

  /// Pushes a new empty table with room for `arrayCapacity` elements and
  /// `fieldCapacity` other fields.
  @inlinable @inline(__always) public func newTable(arrayCapacity: Int = 0, fieldCapacity: Int = 0) {
    lua_createtable(L, Int32(clamping: arrayCapacity), Int32(clamping: fieldCapacity))
  }

  /// Pops a table and makes it the metatable of the value at `index`.
  @inlinable @inline(__always) public func setMetatable(of index: Int32) { lua_setmetatable(L, index) }

  // MARK: Reading fields

  /// Pushes `t[key]` of the table `t` at `table`; returns its type.
  @inlinable @discardableResult public func pushField(_ key: String, of table: Int32) -> LuaType {
    let table = index(table, afterPushing: 1)
    push(key)
    return LuaType(rawValue: lua_rawget(L, table)) ?? .none
  }

  /// Pushes `t[key]` for a key given as bytes; returns its type.
  @inlinable @discardableResult public func pushField(_ key: LuaString, of table: Int32) -> LuaType {
    let table = index(table, afterPushing: 1)
    push(key)
    return LuaType(rawValue: lua_rawget(L, table)) ?? .none
  }

  /// Pushes `t[key]` for an integer key (`t[1]`); returns its type.
  @inlinable @inline(__always) @discardableResult public func pushField(_ key: Int, of table: Int32) -> LuaType {
    LuaType(rawValue: lua_rawgeti(L, table, lua_Integer(key))) ?? .none
  }

  /// Pushes `t[k]` where `k` is the value at `key`, which stays where it
  /// is; returns the field's type.
  @inlinable @inline(__always) @discardableResult public func pushField(keyAt key: Int32, of table: Int32) -> LuaType {
    let table = index(table, afterPushing: 1)
    lua_pushvalue(L, key)
    return LuaType(rawValue: lua_rawget(L, table)) ?? .none
  }

  // MARK: Writing fields

  /// Pops the top value into `t[key]`.
  @inlinable public func setField(_ key: String, of table: Int32) {
    let table = index(table, afterPushing: 1)
    push(key)
    lua_rotate(L, -2, 1)
    lua_rawset(L, table)
  }

  /// Pops the top value into `t[key]` for an integer key (`t[1]`).
  @inlinable @inline(__always) public func setField(_ key: Int, of table: Int32) {
    lua_rawseti(L, table, lua_Integer(key))
  }

  /// Pops a key and the value above it (pushed in that order) into `t[key]`.
  @inlinable @inline(__always) public func setField(of table: Int32) { lua_rawset(L, table) }

  // MARK: The registry

  /// Pushes the registry's field `key`; returns its type.
  @discardableResult public func pushRegistryField(_ key: String) -> LuaType {
    pushField(key, of: lunar_registryindex())
  }

  /// Pops the top value into the registry's field `key`.
  public func setRegistryField(_ key: String) {
    setField(key, of: lunar_registryindex())
  }

  /// Pushes the table of loaded modules (`package.loaded`, as the registry
  /// keeps it even if a script replaced `package`).
  public func pushLoadedModules() {
    pushRegistryField(LUA_LOADED_TABLE)
  }

  /// Pushes the table of module loaders `require` tries first
  /// (`package.preload`, as the registry keeps it).
  public func pushPreloadedModules() {
    pushRegistryField(LUA_PRELOAD_TABLE)
  }

  /// `index` as it counts once `count` more values are pushed: a relative
  /// index moves down, absolute and pseudo-indices (the registry) stay.
  /// Cheaper than `lua_absindex`, a call, on paths that run per message.
  @inlinable @inline(__always) func index(_ index: Int32, afterPushing count: Int32) -> Int32 {
    index < 0 && index > lunar_registryindex() ? index - count : index
  }

  // MARK: Walking tables

  /// The border `#t` of the table at `table`, as `rawlen` finds it.
  @inlinable @inline(__always) public func rawLength(at table: Int32) -> Int { Int(lua_rawlen(L, table)) }

  /// How many entries the table at `table` has, counted by walking it.
  @inlinable public func entryCount(of table: Int32) -> Int {
    let table = index(table, afterPushing: 1)
    var count = 0
    lua_pushnil(L)
    while lua_next(L, table) != 0 {
      count += 1
      lua_settop(L, -2)
    }
    return count
  }

  /// Calls `body` with each key and value of the table at `table`, in
  /// Lua's `next` order. Both sit on the stack while `body` runs; what it
  /// pushes is dropped after it, and the stack is as it was when this
  /// returns or throws. `body` must not change the table's keys.
  @inlinable public func forEachEntry<E: Error>(
    of table: Int32, _ body: (_ key: LuaStackValue, _ value: LuaStackValue) throws(E) -> Void
  ) throws(E) {
    let table = lua_absindex(L, table)
    let base = lua_gettop(L)
    defer { lua_settop(L, base) }
    let thread = LuaThread(L)
    lua_pushnil(L)
    while lua_next(L, table) != 0 {
      try body(LuaStackValue(thread, at: base + 1), LuaStackValue(thread, at: base + 2))
      lua_settop(L, base + 1)
    }
  }

  /// A checked reader of the table at `index`, whose errors name fields by
  /// their path from `path` (`states.idle.on`); nil if no table is there.
  public func table(at index: Int32, path: LuaPath) -> LuaTableReader? {
    guard lua_type(L, index) == LUA_TTABLE else { return nil }
    return LuaTableReader(LuaThread(L), at: lua_absindex(L, index), path: path)
  }
}
