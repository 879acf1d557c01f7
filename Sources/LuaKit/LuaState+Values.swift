import CLua
import CLuaShim

extension LuaState {
  /// How deep tables may nest when they cross; deeper is an error.
  public static let maximumDepth = 200

  /// Copies the value at `index` into a `LuaValue`.
  /// - Parameter root: how the error message names the value (`payload`);
  ///   built only if there is an error.
  /// - Throws: `LuaConversionError` naming the path of a function, userdata,
  ///   thread, cycle or too-deep nesting.
  public func value(at index: Int32, root: @autoclosure () -> String = "value") throws(LuaConversionError) -> LuaValue {
    try LuaState.readValue(L, at: index, root: root())
  }

  /// Pushes a copy of `value`.
  /// - Throws: `LuaConversionError` if it nests deeper than `maximumDepth`.
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

  /// `root` names the value in error messages only, so it is built lazily.
  static func readValue(_ L: OpaquePointer, at index: Int32, root: @autoclosure () -> String)
    throws(LuaConversionError) -> LuaValue
  {
    var reader = ValueReader(L: L)
    return try reader.read(lua_absindex(L, index), path: LuaPath(root()), depth: 0)
  }

  static func pushBytes(_ L: OpaquePointer, _ string: LuaString) {
    string.bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { _ = lua_pushlstring(L, $0.baseAddress, $0.count) }
    }
  }

  static func pushValue(_ L: OpaquePointer, _ value: LuaValue, path: @autoclosure () -> LuaPath, depth: Int)
    throws(LuaConversionError)
  {
    switch value {
    case .nil: lua_pushnil(L)
    case .boolean(let b): lua_pushboolean(L, b ? 1 : 0)
    case .integer(let i): lua_pushinteger(L, i)
    case .number(let d): lua_pushnumber(L, d)
    case .string(let s): pushBytes(L, s)
    case .table(let table):
      guard depth < LuaState.maximumDepth, lua_checkstack(L, 4) != 0 else {
        throw LuaConversionError(.tooDeep(limit: LuaState.maximumDepth), at: path())
      }
      lua_createtable(L, Int32(clamping: table.array.count), Int32(clamping: table.fields.count))
      for (offset, element) in table.array.enumerated() {
        try pushValue(L, element, path: path().appending(.integer(Int64(offset + 1))), depth: depth + 1)
        lua_rawseti(L, -2, Int64(offset + 1))
      }
      for (key, element) in table.fields {
        try pushValue(L, key.value, path: path(), depth: depth + 1)
        try pushValue(L, element, path: path().appending(key), depth: depth + 1)
        lua_rawset(L, -3)
      }
    }
  }
}

/// Reads one value graph off the stack, remembering the tables on the
/// current path to refuse cycles (a table seen twice on different branches
/// is fine: it is copied twice).
private struct ValueReader {
  let L: OpaquePointer
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
    case LUA_TSTRING: return .string(readString(index))
    case LUA_TTABLE: return .table(try readTable(index, path: path(), depth: depth))  // path() stays lazy: an autoclosure
    default:
      throw LuaConversionError(.cannotCross(typeName: String(cString: lunar_typename(L, index))), at: path())
    }
  }

  func readString(_ index: Int32) -> LuaString {
    var length = 0
    let chars = lua_tolstring(L, index, &length)
    let bytes = [UInt8](UnsafeRawBufferPointer(start: chars, count: length))
    return LuaString(bytes: bytes)
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
    if border > 0 { array.reserveCapacity(Int(border)) }
    var fields: [LuaKey: LuaValue] = [:]
    lua_pushnil(L)
    while lua_next(L, index) != 0 {
      // Stack: key at -2, value at -1. lua_next walks the array part first,
      // in order, so a run of keys 1, 2, 3... goes straight into `array`.
      if lua_type(L, -2) == LUA_TNUMBER, lua_isinteger(L, -2) != 0,
        lua_tointegerx(L, -2, nil) == Int64(array.count + 1)
      {
        let position = Int64(array.count + 1)
        array.append(try read(lua_gettop(L), path: path().appending(.integer(position)), depth: depth + 1))
      } else {
        let key = try readKey(path: path())
        fields[key] = try read(lua_gettop(L), path: path().appending(key), depth: depth + 1)
      }
      lua_settop(L, -2)
    }
    if fields.isEmpty { return LuaTable(normalArray: array, normalFields: fields) }
    while let next = fields.removeValue(forKey: .integer(Int64(array.count + 1))) { array.append(next) }
    return LuaTable(normalArray: array, normalFields: fields)
  }

  func readKey(path: LuaPath) throws(LuaConversionError) -> LuaKey {
    switch lua_type(L, -2) {
    case LUA_TBOOLEAN: return .boolean(lua_toboolean(L, -2) != 0)
    case LUA_TNUMBER:
      if lua_isinteger(L, -2) != 0 { return .integer(lua_tointegerx(L, -2, nil)) }
      return .number(lua_tonumberx(L, -2, nil))
    case LUA_TSTRING:
      // lua_tolstring on a key is safe: it is already a string.
      return .string(readString(-2))
    default:
      throw LuaConversionError(.unsupportedKey(typeName: String(cString: lunar_typename(L, -2))), at: path)
    }
  }
}
