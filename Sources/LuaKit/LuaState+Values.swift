import CLua
import CLuaShim

extension LuaState {
  /// How deep tables may nest when they cross; deeper is an error.
  public static let maximumDepth = 200
}

extension LuaStack {
  /// Copies the value at `index` into a `LuaValue`.
  /// - Parameter root: how the error message names the value (`payload`);
  ///   built only if there is an error.
  /// - Throws: `LuaConversionError` naming the path of a function, userdata,
  ///   thread, cycle or too-deep nesting.
  public func value(at index: Int32, root: @autoclosure () -> String = "value") throws(LuaConversionError) -> LuaValue {
    try LuaState.readValue(L, at: index, root: root())
  }

  /// Copies the value at `index` into a `ChargedValue`, counted against the
  /// memory limit while Swift holds it (see `LuaCall.chargedValue`).
  public func chargedValue(at index: Int32, root: @autoclosure () -> String = "value") throws(LuaConversionError)
    -> ChargedValue
  {
    try LuaState.readChargedValue(L, at: index, root: root())
  }

  /// Pushes a copy of `value`.
  /// - Throws: `LuaConversionError` if it nests deeper than `maximumDepth`,
  ///   or (`.notEnoughMemory`) if the copy would pass the memory limit: the
  ///   limit holds while Swift pushes, though the allocator is disarmed.
  public func push(_ value: LuaValue) throws(LuaConversionError) {
    try LuaState.pushValue(L, value, path: LuaPath("value"), depth: 0)
  }

  /// Pushes every value in order.
  public func push(_ values: [LuaValue]) throws(LuaConversionError) {
    for value in values { try push(value) }
  }

  /// Pushes a Lua string with these exact bytes.
  public func push(_ string: LuaString) {
    LuaState.pushBytes(L, string)
  }
}

extension LuaState {
  /// `root` names the value in error messages only, so it is built lazily.
  static func readValue(_ L: OpaquePointer, at index: Int32, root: @autoclosure () -> String)
    throws(LuaConversionError) -> LuaValue
  {
    var reader = ValueReader(L: L, allowance: Int.max)
    return try reader.read(lua_absindex(L, index), path: LuaPath(root()), depth: 0)
  }

  /// Reads with a meter: the reader counts the bytes of the copy as it makes
  /// it and stops as soon as they pass what the budget has left, so a copy
  /// that cannot be kept is never made whole.
  static func readChargedValue(_ L: OpaquePointer, at index: Int32, root: @autoclosure () -> String)
    throws(LuaConversionError) -> ChargedValue
  {
    guard lunar_memorylimit(L) != 0 else { return ChargedValue(try readValue(L, at: index, root: root())) }
    do {
      return try readMetered(L, at: index, root: root())
    } catch where error.reason == .notEnoughMemory {
      // As Lua does when an allocation fails: collect everything, then try
      // once more, so garbage never stands in the way of a copy.
      _ = lunar_gccollect(L)
      return try readMetered(L, at: index, root: root())
    }
  }

  private static func readMetered(_ L: OpaquePointer, at index: Int32, root: @autoclosure () -> String)
    throws(LuaConversionError) -> ChargedValue
  {
    let control = lunar_control(L)!
    var reader = ValueReader(L: L, allowance: Int(clamping: lunar_memoryavailable(control)) - LuaValueSize.slot)
    let value = try reader.read(lua_absindex(L, index), path: LuaPath(root()), depth: 0)
    guard let charge = LuaMemoryCharge(control: control, bytes: LuaValueSize.slot + reader.size, force: false) else {
      throw LuaConversionError(.notEnoughMemory, at: LuaPath(root()))
    }
    return ChargedValue(value, charge: charge)
  }

  static func pushBytes(_ L: OpaquePointer, _ string: LuaString) {
    string.bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
    }
  }

  /// Scalars and strings are pushed directly; a table goes through the
  /// checked walk, which also watches the memory limit.
  static func pushValue(_ L: OpaquePointer, _ value: LuaValue, path: @autoclosure () -> LuaPath, depth: Int)
    throws(LuaConversionError)
  {
    switch value {
    case .nil: lua_pushnil(L)
    case .boolean(let b): lua_pushboolean(L, b ? 1 : 0)
    case .integer(let i): lua_pushinteger(L, i)
    case .number(let d): lua_pushnumber(L, d)
    case .string(let s):
      pushBytes(L, s)
      if s.bytes.count >= LuaState.checkedStringLength, lunar_overlimit(L) != 0 {
        throw LuaConversionError(.notEnoughMemory, at: path())
      }
    case .table(let table):
      try pushTable(L, table, path: path(), depth: depth, limited: lunar_memorylimit(L) != 0)
    }
  }

  /// Strings at least this long are checked against the limit when pushed
  /// alone; shorter ones cost less than the check.
  static let checkedStringLength = 4096

  /// With `limited`, every string and table pushed is followed by a check
  /// of Lua's bytes and Swift's together against the limit: host functions
  /// run with the allocator disarmed, so nothing else would stop a big value.
  private static func pushTable(
    _ L: OpaquePointer, _ table: LuaTable, path: @autoclosure () -> LuaPath, depth: Int, limited: Bool
  ) throws(LuaConversionError) {
    guard depth < LuaState.maximumDepth, lua_checkstack(L, 4) != 0 else {
      throw LuaConversionError(.tooDeep(limit: LuaState.maximumDepth), at: path())
    }
    lua_createtable(L, Int32(clamping: table.array.count), Int32(clamping: table.fields.count))
    if limited && lunar_overlimit(L) != 0 { throw LuaConversionError(.notEnoughMemory, at: path()) }
    func push(_ element: LuaValue, _ path: @autoclosure () -> LuaPath) throws(LuaConversionError) {
      switch element {
      case .table(let nested):
        try pushTable(L, nested, path: path(), depth: depth + 1, limited: limited)
      case .string(let s):
        pushBytes(L, s)
        if limited && lunar_overlimit(L) != 0 { throw LuaConversionError(.notEnoughMemory, at: path()) }
      default:
        try pushValue(L, element, path: path(), depth: depth + 1)
      }
    }
    for (offset, element) in table.array.enumerated() {
      try push(element, path().appending(.integer(Int64(offset + 1))))
      lua_rawseti(L, -2, Int64(offset + 1))
    }
    for (key, element) in table.fields {
      try push(key.value, path())
      try push(element, path().appending(key))
      lua_rawset(L, -3)
    }
  }
}

/// Reads one value graph off the stack, remembering the tables on the
/// current path to refuse cycles (a table seen twice on different branches
/// is fine: it is copied twice).
private struct ValueReader {
  let L: OpaquePointer
  /// The most bytes the copy may take (`Int.max`: no limit).
  let allowance: Int
  /// The bytes of the heap buffers copied so far (see `LuaValueSize`).
  var size = 0
  /// What the elements of the tables being read cost until each table is
  /// finished and costed exactly.
  var pending = 0
  /// The tables from the root down to the one being read. Nesting is
  /// shallow in practice, so a linear search beats hashing, and a scalar or
  /// a flat table costs no allocation at all.
  var onPath: [UnsafeRawPointer] = []
  /// The outermost table, kept apart so a flat table allocates nothing.
  var root: UnsafeRawPointer?

  mutating func read(_ index: Int32, path: @autoclosure () -> LuaPath, depth: Int) throws(LuaConversionError)
    -> LuaValue
  {
    switch lua_type(L, index) {
    case LUA_TNIL, LUA_TNONE: return .nil
    case LUA_TBOOLEAN: return .boolean(lua_toboolean(L, index) != 0)
    case LUA_TNUMBER:
      if lua_isinteger(L, index) != 0 { return .integer(lua_tointegerx(L, index, nil)) }
      return .number(lua_tonumberx(L, index, nil))
    case LUA_TSTRING: return .string(try readString(index, path: path()))
    case LUA_TTABLE: return .table(try readTable(index, path: path(), depth: depth))  // path() stays lazy: an autoclosure
    default:
      throw LuaConversionError(.cannotCross(typeName: String(cString: lunar_typename(L, index))), at: path())
    }
  }

  mutating func readString(_ index: Int32, path: @autoclosure () -> LuaPath) throws(LuaConversionError) -> LuaString {
    var length = 0
    let chars = lua_tolstring(L, index, &length)
    try count(LuaValueSize.string(byteCount: length), path: path())
    let bytes = [UInt8](UnsafeRawBufferPointer(start: chars, count: length))
    return LuaString(bytes: bytes)
  }

  /// Adds `bytes` to the copy's size; past the allowance, the copy stops.
  @inline(__always)
  mutating func count(_ bytes: Int, path: @autoclosure () -> LuaPath) throws(LuaConversionError) {
    size += bytes
    if size + pending > allowance { throw LuaConversionError(.notEnoughMemory, at: path()) }
  }

  /// `path` is only built when an error needs it.
  mutating func readTable(_ index: Int32, path: @autoclosure () -> LuaPath, depth: Int) throws(LuaConversionError)
    -> LuaTable
  {
    guard depth < LuaState.maximumDepth, lua_checkstack(L, 4) != 0 else {
      throw LuaConversionError(.tooDeep(limit: LuaState.maximumDepth), at: path())
    }
    let identity = lua_topointer(L, index)!
    guard identity != root, !onPath.contains(identity) else { throw LuaConversionError(.cycle, at: path()) }
    if root == nil { root = identity } else { onPath.append(identity) }
    defer { if identity == root { root = nil } else { onPath.removeLast() } }

    var array: [LuaValue] = []
    let border = lua_rawlen(L, index)
    let pendingBefore = pending
    if border > 0 {
      pending += Int(border) * LuaValueSize.element
      if size + pending > allowance { throw LuaConversionError(.notEnoughMemory, at: path()) }
      array.reserveCapacity(Int(border))
    }
    var fields: [LuaKey: LuaValue] = [:]
    lua_pushnil(L)
    while lua_next(L, index) != 0 {
      // Stack: key at -2, value at -1. lua_next walks the array part first,
      // in order, so a run of keys 1, 2, 3... goes straight into `array`.
      if lua_type(L, -2) == LUA_TNUMBER, lua_isinteger(L, -2) != 0,
        lua_tointegerx(L, -2, nil) == Int64(array.count + 1)
      {
        let position = Int64(array.count + 1)
        if array.count >= border { pending += LuaValueSize.element }
        array.append(try read(lua_gettop(L), path: path().appending(.integer(position)), depth: depth + 1))
      } else {
        pending += LuaValueSize.entry
        let key = try readKey(path: path())
        fields[key] = try read(lua_gettop(L), path: path().appending(key), depth: depth + 1)
      }
      lua_settop(L, -2)
    }
    pending = pendingBefore
    if !fields.isEmpty {
      while let next = fields.removeValue(forKey: .integer(Int64(array.count + 1))) { array.append(next) }
    }
    try count(LuaValueSize.table(arrayCount: array.count, fieldCount: fields.count), path: path())
    return LuaTable(normalArray: array, normalFields: fields)
  }

  mutating func readKey(path: LuaPath) throws(LuaConversionError) -> LuaKey {
    switch lua_type(L, -2) {
    case LUA_TBOOLEAN: return .boolean(lua_toboolean(L, -2) != 0)
    case LUA_TNUMBER:
      if lua_isinteger(L, -2) != 0 { return .integer(lua_tointegerx(L, -2, nil)) }
      return .number(lua_tonumberx(L, -2, nil))
    case LUA_TSTRING:
      // lua_tolstring on a key is safe: it is already a string.
      return .string(try readString(-2, path: path))
    default:
      throw LuaConversionError(.unsupportedKey(typeName: String(cString: lunar_typename(L, -2))), at: path)
    }
  }
}
