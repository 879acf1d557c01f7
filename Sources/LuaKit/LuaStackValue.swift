import CLua

/// A value where it sits on a Lua stack, read in place: the keys and values
/// `forEachEntry` hands out. Valid while the value stays at its index.
public struct LuaStackValue {
  /// The stack the value is on.
  public let thread: LuaThread
  /// Its index, counted from the bottom.
  public let index: Int32

  /// The value at the absolute `index` of `thread`.
  @inlinable init(_ thread: LuaThread, at index: Int32) {
    self.thread = thread
    self.index = index
  }

  /// The value's Lua type.
  @inlinable public var type: LuaType { thread.type(at: index) }

  /// The type name messages use (`__name` first; see `LuaStack.typeName`).
  public var typeName: String { thread.typeName(at: index) }

  /// The string's bytes, or a number's as Lua writes it (`1`, `0.5`); nil
  /// for other values. The value itself is never converted in place.
  public var bytes: LuaString? { thread.bytes(at: index) }

  /// The value as a table key that can cross into Swift: a boolean, a
  /// number or a string; nil for the others.
  public var key: LuaKey? {
    switch thread.type(at: index) {
    case .boolean: .boolean(thread.boolean(at: index))
    case .number:
      if let integer = thread.integer(at: index), lua_isinteger(thread.L, index) != 0 {
        .integer(integer)
      } else {
        .number(lua_tonumberx(thread.L, index, nil))
      }
    case .string: thread.bytes(at: index).map { .string($0) }
    default: nil
    }
  }

  /// A copy of the value (see `LuaStack.value(at:root:)`).
  public func value(root: @autoclosure () -> String = "value") throws(LuaConversionError) -> LuaValue {
    try thread.value(at: index, root: root())
  }

  /// A checked reader of the value if it is a table (see `LuaTableReader`).
  public func table(path: LuaPath) -> LuaTableReader? {
    thread.table(at: index, path: path)
  }
}
