import CLua
import CLuaShim

/// The Lua call a Swift host function is serving: its arguments, checked
/// the way `luaL_check*` checks them (but reported by throwing), and, as a
/// `LuaStack`, the stack to push results on.
public struct LuaCall: LuaStack {
  /// The Lua thread making the call.
  public let L: OpaquePointer

  /// A view of the call on `L`.
  public init(L: OpaquePointer) { self.L = L }

  /// How many arguments the call received.
  public var argumentCount: Int32 { lua_gettop(L) }

  /// The Lua type of argument `n` (`.none` past the last).
  public func type(_ n: Int32) -> LuaType { LuaType(rawValue: lua_type(L, n)) ?? .none }

  /// True when argument `n` is absent or nil.
  public func isNil(_ n: Int32) -> Bool { lunar_isnoneornil(L, n) != 0 }

  // MARK: Checked arguments

  /// Argument `n` as an integer (`luaL_checkinteger`).
  public func integer(_ n: Int32) throws(LuaArgumentError) -> Int64 {
    var isNumber: Int32 = 0
    let value = lua_tointegerx(L, n, &isNumber)
    if isNumber != 0 { return value }
    if lua_isnumber(L, n) != 0 { throw .invalid(n, "number has no integer representation") }
    throw .type(n, expected: "number")
  }

  /// Argument `n` as a float (`luaL_checknumber`).
  public func number(_ n: Int32) throws(LuaArgumentError) -> Double {
    var isNumber: Int32 = 0
    let value = lua_tonumberx(L, n, &isNumber)
    if isNumber != 0 { return value }
    throw .type(n, expected: "number")
  }

  /// Argument `n` as text (`luaL_checkstring`: numbers are converted).
  public func string(_ n: Int32) throws(LuaArgumentError) -> String {
    String(decoding: try bytes(n).bytes, as: UTF8.self)
  }

  /// Argument `n` as bytes (`luaL_checklstring`).
  public func bytes(_ n: Int32) throws(LuaArgumentError) -> LuaString {
    let t = lua_type(L, n)
    guard t == LUA_TSTRING || t == LUA_TNUMBER else { throw .type(n, expected: "string") }
    var length = 0
    let chars = lua_tolstring(L, n, &length)
    return LuaString(bytes: [UInt8](UnsafeRawBufferPointer(start: chars, count: length)))
  }

  /// Argument `n` as a boolean, with Lua's truthiness.
  public func boolean(_ n: Int32) -> Bool { lua_toboolean(L, n) != 0 }

  /// Checks that argument `n` has type `type`, as `luaL_checktype` does.
  public func check(_ n: Int32, is type: LuaType) throws(LuaArgumentError) {
    guard lua_type(L, n) == type.rawValue else {
      throw .type(n, expected: String(cString: lua_typename(L, type.rawValue)))
    }
  }

  /// Argument `n` as an integer, or `defaultValue` when absent or nil.
  public func optionalInteger(_ n: Int32, default defaultValue: Int64) throws(LuaArgumentError) -> Int64 {
    isNil(n) ? defaultValue : try integer(n)
  }

  /// Argument `n` as a float, or `defaultValue` when absent or nil.
  public func optionalNumber(_ n: Int32, default defaultValue: Double) throws(LuaArgumentError) -> Double {
    isNil(n) ? defaultValue : try number(n)
  }

  /// Argument `n` as text, or nil when absent or nil.
  public func optionalString(_ n: Int32) throws(LuaArgumentError) -> String? {
    isNil(n) ? nil : try string(n)
  }

  /// Argument `n` as bytes, or nil when absent or nil.
  public func optionalBytes(_ n: Int32) throws(LuaArgumentError) -> LuaString? {
    isNil(n) ? nil : try bytes(n)
  }

  /// Argument `n` copied into a `LuaValue`; a value that cannot cross is an
  /// error naming its path from `name` (`payload.items[3]: ...`).
  public func value(_ n: Int32, name: String? = nil) throws(LuaConversionError) -> LuaValue {
    try LuaState.readValue(L, at: n, root: name ?? "argument #\(n)")
  }

  /// Argument `n` copied into a value charged against the state's memory
  /// limit while Swift holds it (see `LuaMemoryBudget`); a copy that would
  /// pass the limit is refused before it is made, with Lua's own
  /// `not enough memory` when the host function throws it on.
  public func chargedValue(_ n: Int32, name: String? = nil) throws(LuaConversionError) -> ChargedValue {
    try LuaState.readChargedValue(L, at: n, root: name ?? "argument #\(n)")
  }

  /// The `i`th extra upvalue given to `LuaStack.push(function:upvalues:)`,
  /// pushed on the stack.
  public func pushUpvalue(_ i: Int32) {
    lua_pushvalue(L, lunar_upvalueindex(i + 1))
  }

  /// Argument `n` anchored in the registry of `owner` (the state the
  /// call's thread belongs to), to keep past the call.
  public func reference(_ n: Int32, in owner: LuaState) -> LuaReference {
    lua_pushvalue(L, n)
    return LuaReference(popping: L, in: owner)
  }

  // MARK: Errors

  /// Pushes the message Lua would raise for `error` (see `LuaReturn`).
  func pushError(_ error: any Error) {
    switch error {
    case let argument as LuaArgumentError:
      if let expected = argument.expected {
        lunar_pushtypeerror(L, argument.position, expected)
      } else {
        lunar_pushargerror(L, argument.position, argument.message ?? "invalid value")
      }
    case let lua as LuaError:
      // Already a Lua error (for example from a callback): raise it as it was.
      if (try? push(lua.value)) == nil { push(lua.message) }
    default:
      lunar_pusherror(L, String(describing: error))
    }
  }
}
