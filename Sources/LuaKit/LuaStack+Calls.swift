import CLua
import CLuaShim

extension LuaStack {
  /// Calls the function below `arguments` values in protected mode, with a
  /// traceback handler. Leaves `results` values (or all, for `nil`).
  public func call(arguments: Int32, results: Int32? = nil) throws(LuaError) {
    let status = lunar_pcall(L, arguments, results ?? LUA_MULTRET)
    if status != LUA_OK { throw popError(status: status, traceback: true) }
  }

  /// Pushes the message handler `call` uses and returns its index: code that
  /// makes many calls pushes it once, below them, and passes the index to
  /// `call(arguments:results:messageHandler:)`, so no call moves the stack.
  @inlinable @inline(__always) public func pushMessageHandler() -> Int32 {
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
      return "(error object is a \(typeName(at: index)) value)"
    }
  }

  /// Pushes the value that stands for Lua's own memory error: raised by a
  /// host function or resumed as a wait's error, it becomes
  /// `not enough memory` with Lua's memory-error status.
  @inlinable public func pushMemoryError() { lunar_pushmemoryerror(L) }
}
