import CLua
import LuaKit

/// A unit of waiting work with a handle: a Lua coroutine run by the
/// scheduler (`lunar.spawn`), or work driven from Swift (a queue job).
/// Results and errors stay Lua values, kept in the registry, so a task may
/// return anything Lua can hold. Lives on the loop thread.
public final class LuaTask {
  /// Where a task is in its life.
  public enum Status: String, Sendable {
    case pending, running, done, failed, cancelled
  }

  /// The task's number in this run, from 1.
  public let id: Int
  /// What the task is, for traces and reports (`task 3`, `job calc#2`).
  public var label: String { labelSource.text }
  private let labelSource: Label
  /// Where it was created (`x.lua:3:`).
  public let origin: String
  // Each public property that changes is kept in a private one: the
  // compiler proves every access to those exclusive, where a public stored
  // property would keep a run-time exclusivity check on each of the
  // loop's many reads of a task.

  /// Its status.
  public internal(set) var status: Status {
    get { storedStatus }
    set { storedStatus = newValue }
  }
  private var storedStatus = Status.pending
  /// Its place in the scheduler's `LiveTasks` while it is live, else -1.
  var liveIndex = -1
  /// The coroutine, while it has one to run.
  var thread: LuaReference?
  var threadPointer: OpaquePointer?
  /// Whether its owner takes its coroutine for another task once it is
  /// done (`leftThread`).
  var keepsThread = false
  /// Its coroutine, once done, when `keepsThread` and Lua code never saw
  /// it: its owner may give it to the next task it makes.
  var leftThread: ReusableThread?
  /// How many values (function and arguments) wait on the coroutine's
  /// stack for its first resume.
  var startArguments: Int32 = 0
  /// What the task waits for now, if anything.
  var waitingOn: Wait?
  var cancelRequested = false
  /// Its time limit, if it has one (`Scheduler.setDeadline`).
  var deadline: TaskDeadline?
  /// False for tasks that leave no trace events (and are not listed).
  public internal(set) var traced: Bool {
    get { storedTraced }
    set { storedTraced = newValue }
  }
  private var storedTraced = true
  /// True for tasks whose owner (a queue) resolves a cancellation before
  /// start in its own time, instead of at once.
  public var defersCancellation: Bool {
    get { storedDefersCancellation }
    set { storedDefersCancellation = newValue }
  }
  private var storedDefersCancellation = false
  /// The part of a `--record` journal the task's calls belong to (a
  /// workflow step's name), inherited by the tasks it creates; nil for
  /// calls outside any step.
  public internal(set) var journalScope: LuaString? {
    get { storedJournalScope }
    set { storedJournalScope = newValue }
  }
  private var storedJournalScope: LuaString?
  /// Where what the task prints is kept for the run store (the log of a
  /// workflow step's attempt), inherited by the tasks it creates; nil for
  /// output outside any recorded step.
  var stepLog: StepLog?
  /// Stops Swift work driving a running task (set by whoever runs it).
  public var cancelHook: (() -> Void)? {
    get { storedCancelHook }
    set { storedCancelHook = newValue }
  }
  private var storedCancelHook: (() -> Void)?
  /// Someone saw the outcome (await, result, cancel): a failure is then
  /// not reported as unobserved.
  public internal(set) var observed: Bool {
    get { storedObserved }
    set { storedObserved = newValue }
  }
  private var storedObserved = false
  /// Waits completed when the task finishes.
  var waiters: [Wait] = []
  /// Callbacks run when the task finishes (queues chain jobs this way).
  var onFinish = FinishCallbacks()
  /// Results (a Lua table) or the error value, in the registry.
  var outcome: LuaReference?
  /// The single result, when it is a boolean or a number: kept here, so
  /// no registry reference is made and freed for it (a workflow step's
  /// body returns how it went as one integer).
  var scalarOutcome: Scalar?

  /// A Lua value that Swift keeps as it is.
  enum Scalar {
    case boolean(Bool)
    case integer(lua_Integer)
    case number(lua_Number)

    /// The value at `index` of `L`, if it is a boolean or a number.
    init?(at index: Int32, on L: OpaquePointer) {
      switch lua_type(L, index) {
      case LUA_TBOOLEAN: self = .boolean(lua_toboolean(L, index) != 0)
      case LUA_TNUMBER where lua_isinteger(L, index) != 0: self = .integer(lua_tointegerx(L, index, nil))
      case LUA_TNUMBER: self = .number(lua_tonumberx(L, index, nil))
      default: return nil
      }
    }

    /// Pushes the value on `L`.
    func push(on L: OpaquePointer) {
      switch self {
      case .boolean(let value): lua_pushboolean(L, value ? 1 : 0)
      case .integer(let value): lua_pushinteger(L, value)
      case .number(let value): lua_pushnumber(L, value)
      }
    }
  }
  /// How many results a finished task has: the table's length cannot say,
  /// since trailing nils count (`return 1, nil, nil` gives three).
  var resultCount: Int32 = 0
  /// The traceback of a failure, `stack traceback:` first.
  public internal(set) var traceback: String? {
    get { storedTraceback }
    set { storedTraceback = newValue }
  }
  private var storedTraceback: String?
  /// Where a failure was raised: the innermost frame of the user's code
  /// (kept when `Scheduler.keepsFailureFrames` asks for it).
  public internal(set) var failureFrame: LuaFrame? {
    get { storedFailureFrame }
    set { storedFailureFrame = newValue }
  }
  private var storedFailureFrame: LuaFrame?
  /// A failure's message, as `lua.c` would print it.
  public internal(set) var errorMessage: String? {
    get { storedErrorMessage }
    set { storedErrorMessage = newValue }
  }
  private var storedErrorMessage: String?

  init(id: Int, label: Label, origin: String) {
    self.id = id
    labelSource = label
    self.origin = origin
  }

  /// What a task is called, made into text only when it is shown: a run
  /// of 10,000 steps names 10,000 tasks, and nobody may ever read one.
  public enum Label: Sendable, ExpressibleByStringInterpolation {
    /// The label as it is.
    case text(String)
    /// A prefix and a Lua name (`step fetch`); a name that is not UTF-8
    /// shows with replacement characters.
    case named(String, LuaString)

    /// A label given as text.
    public init(stringLiteral value: String) { self = .text(value) }

    /// The label as text.
    public var text: String {
      switch self {
      case .text(let text): text
      case .named(let prefix, let name): prefix + name.lossyString
      }
    }
  }

  /// True once done, failed or cancelled.
  public var isFinished: Bool {
    status == .done || status == .failed || status == .cancelled
  }

  /// Pushes the results (success) or the error value (failure) on `L`;
  /// returns the count. Only for finished tasks.
  func pushOutcome(on L: OpaquePointer) -> Int32 {
    if let scalarOutcome {
      guard lua_checkstack(L, 1) != 0 else { return 0 }
      scalarOutcome.push(on: L)
      return 1
    }
    let thread = LuaThread(L)
    guard let outcome else {
      thread.pushNil()
      return 1
    }
    outcome.push(on: thread)
    // A failure's error, or a single result kept without a table.
    if status != .done || resultCount == 1 { return 1 }
    let table = thread.top
    let count = resultCount
    guard thread.ensureStack(count + 1) else {
      thread.pop()
      return 0
    }
    var i = 1
    while i <= count {
      thread.pushField(i, of: table)
      i += 1
    }
    thread.remove(at: table)
    return count
  }

  /// The result a waiter gets: the results, or the error raised again.
  /// With `appendingTraceback`, a string error carries the task's traceback.
  func waitResult(appendingTraceback: Bool) -> WaitResult {
    if status == .done { return .values { L in self.pushOutcome(on: L) } }
    let traceback = appendingTraceback ? self.traceback : nil
    return .failure { L in
      _ = self.pushOutcome(on: L)
      let thread = LuaThread(L)
      if let traceback, thread.type(at: -1) == .string, let message = thread.bytes(at: -1) {
        let shown = "\n" + traceback.replacingPrefix("stack traceback:", with: "\(self.label) traceback:")
        thread.pop()
        thread.push(LuaString(bytes: message.bytes + shown.utf8))
      }
    }
  }

  /// `true, results...` or `false, err`: the result of `handle:result()`.
  func protectedResult() -> WaitResult {
    .values { L in
      LuaThread(L).push(self.status == .done)
      return self.pushOutcome(on: L) + 1
    }
  }
}

extension String {
  func replacingPrefix(_ prefix: String, with replacement: String) -> String {
    hasPrefix(prefix) ? replacement + dropFirst(prefix.count) : self
  }
}

/// What runs when a task finishes, in the order added: the first callback
/// is kept inline, as nearly every task has exactly one and an array cost
/// an allocation per task.
struct FinishCallbacks {
  private var first: ((LuaTask) -> Void)?
  private var more: [(LuaTask) -> Void] = []

  /// Adds `callback` after the others.
  mutating func append(_ callback: @escaping (LuaTask) -> Void) {
    if first == nil { first = callback } else { more.append(callback) }
  }

  /// Calls each callback with `task`.
  func run(_ task: LuaTask) {
    first?(task)
    for callback in more { callback(task) }
  }
}

/// A done task's coroutine that no Lua code has had as a value
/// (`coroutine.running`): it may run another task, its stack and call
/// frames already grown, where a new coroutine allocates both again.
struct ReusableThread {
  let pointer: OpaquePointer
  let reference: LuaReference
}
