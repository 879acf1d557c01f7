import CLua
import CLuaShim

/// A Swift function callable from Lua. It reads its arguments through the
/// `LuaCall`, pushes its results and says how many; a thrown error becomes a
/// Lua error raised by the C trampoline, never by Swift.
public typealias LuaFunction = (LuaCall) throws -> LuaReturn

/// What a Swift host function tells the trampoline to do when it returns.
public struct LuaReturn: Sendable, Equatable {
  /// The raw status handed to the C trampoline.
  public let status: Int32

  /// Return the top `count` values.
  public static func values(_ count: Int32) -> LuaReturn { LuaReturn(status: count) }
  /// Return nothing.
  public static let none = LuaReturn(status: 0)
  /// Return the one value on top.
  public static let one = LuaReturn(status: 1)
  /// Raise the value on top as a Lua error.
  public static let error = LuaReturn(status: LUNAR_STATUS_ERROR)
  /// Yield the value on top; on resume `true, ...` returns `...` and
  /// `false, err` raises `err` (see CLuaShim.h).
  public static let yield = LuaReturn(status: LUNAR_STATUS_YIELD)
  /// Yield the value on top; on resume return the resumed values as they are.
  public static let yieldRaw = LuaReturn(status: LUNAR_STATUS_YIELD_RAW)
}

/// A wrong argument, reported in Lua's own words:
/// `bad argument #2 to 'submit' (number expected, got string)`.
public struct LuaArgumentError: Error, Sendable, Equatable {
  /// The argument's position (1-based, `self` included for methods).
  public var position: Int32
  /// The expected type name, for a type error.
  public var expected: String?
  /// The text in parentheses, for any other complaint.
  public var message: String?

  /// A type error: `(expected expected, got <actual>)`.
  public static func type(_ position: Int32, expected: String) -> LuaArgumentError {
    LuaArgumentError(position: position, expected: expected, message: nil)
  }

  /// Any other complaint about the argument.
  public static func invalid(_ position: Int32, _ message: String) -> LuaArgumentError {
    LuaArgumentError(position: position, expected: nil, message: message)
  }
}

/// A plain error message for a host function to raise, prefixed with the
/// caller's position as `luaL_error` does.
public struct LuaScriptError: Error, Sendable, CustomStringConvertible {
  /// The message, without position.
  public var message: String
  /// An error with this message.
  public init(_ message: String) { self.message = message }
  public var description: String { message }
}

/// Keeps a Swift closure alive for as long as the Lua function wrapping it.
final class LuaFunctionBox {
  let body: LuaFunction

  init(_ body: @escaping LuaFunction) { self.body = body }

  /// Installs the Swift entry points in the C trampoline (idempotent).
  static func configureTrampoline() {
    _ = configured
  }

  private static let configured: Void = {
    lunar_configure(dispatch, release)
  }()

  private static let dispatch: lunar_Dispatch = { L, function in
    let call = LuaCall(L: L!)
    // The userdata holding the box keeps it alive for the whole call, so a
    // guaranteed reference is enough: no retain and release per call.
    return Unmanaged<LuaFunctionBox>.fromOpaque(function!)._withUnsafeGuaranteedRef { box in
      do {
        return try box.body(call).status
      } catch {
        if LuaError.isNotEnoughMemory(error) {
          lunar_pushmemoryerror(L)
        } else {
          call.pushError(error)
        }
        return LUNAR_STATUS_ERROR
      }
    }
  }

  private static let release: lunar_Release = { function in
    Unmanaged<LuaFunctionBox>.fromOpaque(function!).release()
  }
}

extension LuaStack {
  /// Pushes `function` as a Lua function. `upvalues` values taken from the
  /// top of the stack are kept with it (read them with `LuaCall.pushUpvalue`).
  public func push(function: @escaping LuaFunction, upvalues: Int32 = 0) {
    let box = Unmanaged.passRetained(LuaFunctionBox(function)).toOpaque()
    lunar_pushhostfunction(L, box, upvalues)
  }
}

extension LuaState {

  /// Sets the global `name` to `function`.
  public func register(_ name: String, _ function: @escaping LuaFunction) {
    push(function: function)
    setGlobal(name)
  }
}
