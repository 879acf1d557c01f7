import LuaKit

/// Something a Lua coroutine (or a nested loop) waits for: a timer, a task,
/// Swift async work. Completed once with a `WaitResult`; lives on the loop
/// thread.
public final class Wait {
  /// Who is waiting.
  enum Waiter {
    /// Nobody yet (between the host yield and the scheduler taking it).
    case none
    /// A task, resumed by the scheduler with the result.
    case task(LuaTask)
    /// A nested loop on a thread that cannot yield; it polls `result`.
    case nested
  }

  /// What is awaited, for traces and the deadlock report (`task 3`).
  public let subject: String
  // The public properties that change are kept in private ones, whose
  // accesses the compiler proves exclusive (a public stored property keeps
  // a run-time exclusivity check on each access).
  /// Where in the script the wait happened (`x.lua:5`), or empty if no
  /// line of the user's code led to it.
  public internal(set) var location: String {
    get { storedLocation }
    set { storedLocation = newValue }
  }
  private var storedLocation = ""
  /// ` at x.lua:5`, or nothing: where the wait happened, for reports.
  var at: String { location.isEmpty ? "" : " at \(location)" }
  var waiter: Waiter = .none
  /// The result, once completed.
  public var result: WaitResult? { storedResult }
  private var storedResult: WaitResult?
  /// Undoes the work when the wait is abandoned (a cancelled task).
  var onCancel: (() -> Void)?
  /// Called with the result when it arrives.
  var onComplete: ((WaitResult) -> Void)?
  /// For task waits: deliver `true, ...` / `false, err` instead of raising.
  var protected = false
  /// Swift work in flight will complete this wait and do nothing else.
  var awaitsSwiftWork = false
  /// A deadlock report naming this wait has been raised in the script.
  var deadlockReported = false

  /// A wait for `subject`.
  public init(subject: String) { self.subject = subject }

  /// True once a result is in.
  public var isComplete: Bool { result != nil }

  /// Delivers the result (only the first one counts).
  func complete(_ result: WaitResult) {
    guard storedResult == nil else { return }
    storedResult = result
    onCancel = nil
    onComplete?(result)
  }
}

/// The outcome of a wait: values or an error, pushed onto whichever Lua
/// thread resumes.
public struct WaitResult {
  /// Pushes the values (or the one error value) and returns how many; or
  /// returns `refused`, having pushed nothing, when the values would pass
  /// the memory limit.
  public let push: (OpaquePointer) -> Int32
  /// True when `push` pushes an error.
  public let failed: Bool

  /// What `push` returns for values that do not fit in the memory limit.
  public static let refused: Int32 = -1

  /// Pushes the result on `L`: how many values, and whether the one value
  /// is an error. Values that did not fit become Lua's own memory error.
  func pushOutcome(on L: OpaquePointer) -> (count: Int32, failed: Bool) {
    let thread = LuaThread(L)
    let top = thread.top
    let count = push(L)
    guard count == WaitResult.refused else { return (count, failed) }
    thread.top = top
    thread.pushMemoryError()
    return (1, true)
  }

  /// Values pushed by `push`.
  public static func values(_ push: @escaping (OpaquePointer) -> Int32) -> WaitResult {
    WaitResult(push: push, failed: false)
  }

  /// No values.
  public static var nothing: WaitResult { WaitResult(push: { _ in 0 }, failed: false) }

  /// Copies of `values`; a value that cannot be pushed is nil, and values
  /// that would pass the memory limit are Lua's memory error.
  public static func values(_ values: [LuaValue]) -> WaitResult {
    .values { L in
      let thread = LuaThread(L)
      guard thread.ensureStack(Int32(values.count) + 1) else { return 0 }
      for value in values {
        do {
          try thread.push(value)
        } catch let error as LuaConversionError where error.reason == .notEnoughMemory {
          return refused
        } catch {
          thread.pushNil()
        }
      }
      return Int32(values.count)
    }
  }

  /// A copy of `value`, whose charge lasts until the wait's result is
  /// dropped: the copy in Swift counts until Lua has its own.
  public static func value(_ value: ChargedValue) -> WaitResult {
    let result = values([value.value])
    return .values { L in withExtendedLifetime(value) { result.push(L) } }
  }

  /// Lua's own memory error (`not enough memory`, status LUA_ERRMEM).
  public static var notEnoughMemory: WaitResult {
    .failure { L in LuaThread(L).pushMemoryError() }
  }

  /// An error whose value `push` pushes.
  public static func failure(_ push: @escaping (OpaquePointer) -> Void) -> WaitResult {
    WaitResult(push: { L in push(L); return 1 }, failed: true)
  }

  /// An error message (a string, as `error("...")` raises one).
  public static func failure(message: String) -> WaitResult {
    .failure { L in LuaThread(L).push(message) }
  }
}
