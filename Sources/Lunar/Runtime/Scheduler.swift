import CLua
import CLuaShim
import LuaKit

/// Runs tasks (coroutines) and the event loop on the runtime's thread:
/// resumes ready tasks, fires timers, takes completions from the inbox,
/// and sleeps only when there is nothing to do (docs/architecture.md,
/// "Tasks, coroutines and waiting").
///
/// A host function that must wait calls `suspend`: where the Lua thread can
/// yield, it yields a private marker up to the scheduler; where it cannot
/// (the main chunk, a function called from C without a continuation, such
/// as a `string.gsub` replacement), the loop runs nested on the same thread
/// until the wait completes.
public final class Scheduler {
  /// Why the loop stopped before its condition held.
  public enum Stop: Error {
    /// Everything waits and nothing can wake it; the report says who waits where.
    case deadlock(String)
    /// Ctrl-C, a timeout or a request stopped the run.
    case interrupted(reason: Int32, message: String)
  }

  /// What the loop does when nothing is ready, due or in flight.
  public enum IdlePolicy {
    /// It is a deadlock if the condition still does not hold.
    case deadlock
    /// Sleep until something is posted (a REPL between prompts).
    case sleep
  }

  enum Resumption {
    case start
    case result(WaitResult)
    case plain
  }

  let state: LuaState
  let clock: RuntimeClock
  /// The loop's timers, on the runtime clock.
  public let timers = TimerQueue()
  let trace: Trace
  /// Runs what other threads posted to the loop (Swift work's results,
  /// requests); the loop calls it on every turn.
  var servePostedEvents: () -> Void = {}
  /// What an interrupt for a timeout says.
  let timeoutMessage: String

  private let ready = Deque<(task: LuaTask, resumption: Resumption)>()
  /// Tasks not finished yet.
  public private(set) var liveTasks = LiveTasks()
  /// The id the next task gets (a reused runtime starts each script's
  /// tasks where a new runtime would, see `RuntimeCore.restorePristine`).
  var nextTaskID = 1
  /// Tasks that failed, checked for unobserved errors at the end of a run.
  private(set) var failedTasks: [LuaTask] = []
  /// The wait a host function registered just before yielding the marker.
  var pendingWait: Wait?
  /// Keep where each failure was raised (`LuaTask.failureFrame`), for
  /// reports that name it; off unless asked for (a stack walk per failure).
  public var keepsFailureFrames = false
  /// Swift work started for Lua whose result the loop has not taken yet.
  public var inFlight: Int { offLoopWork.count }
  /// Where that work is counted.
  private let offLoopWork: OffLoopWork
  /// Swift work to run on the loop soon, in order (machines process their
  /// mailboxes this way, never inside the `send` that fed them).
  private let deferred = Deque<(OpaquePointer) -> Void>()

  /// Runs `work` on the loop after the current event, with the Lua thread
  /// the loop runs on.
  public func later(_ work: @escaping (OpaquePointer) -> Void) {
    deferred.append(work)
  }

  /// True while deferred work waits to run.
  var hasDeferredWork: Bool { !deferred.isEmpty }

  /// Tasks whose coroutine is running, innermost last.
  private(set) var running: [LuaTask] = []
  /// The task whose Lua code runs now, outside any loop (nil while a loop
  /// runs, nested or not): its deadline is the one the count hook checks.
  var computing: LuaTask?
  /// Nested loops in progress: who waits, on what, on which thread.
  private var nested: [(label: String, wait: Wait, thread: OpaquePointer)] = []
  /// The error value cancelled tasks fail with (`lunar.cancelled`).
  private(set) var cancelledValue: LuaReference!

  init(state: LuaState, clock: RuntimeClock, trace: Trace, offLoopWork: OffLoopWork, timeoutMessage: String) {
    self.state = state
    self.clock = clock
    self.trace = trace
    self.offLoopWork = offLoopWork
    self.timeoutMessage = timeoutMessage
    makeCancelledValue()
    // An untraced task (a spec's test body) has no track of its own: its
    // events belong to whatever runs it.
    trace.runningTask = { [weak self] in self?.computing.flatMap { $0.traced ? $0.id : nil } }
    // Not retained: the runtime core owns the scheduler and closes the
    // state (the last Lua code that can resume a coroutine) before it.
    lunar_settasklabel(state.L, Self.taskLabel, Unmanaged.passUnretained(self).toOpaque())
  }

  /// The label of the live task whose coroutine is `co`, for the error of a
  /// script that resumes or closes it; called on the loop thread, never
  /// into Lua.
  private static let taskLabel: lunar_TaskLabel = { context, co, buffer, size in
    guard let context, let co, let buffer, size > 0 else { return }
    let scheduler = Unmanaged<Scheduler>.fromOpaque(context).takeUnretainedValue()
    guard let task = scheduler.liveTasks.values.first(where: { $0.threadPointer == co }) else { return }
    var count = 0
    for byte in task.label.utf8.prefix(size - 1) {
      buffer[count] = CChar(bitPattern: byte)
      count += 1
    }
    buffer[count] = 0
  }

  private func makeCancelledValue() {
    let L = state.L
    lua_createtable(L, 0, 0)
    lua_createtable(L, 0, 2)
    state.push("lunar.cancelled")
    lua_setfield(L, -2, "__name")
    state.push(function: { call in
      call.push("cancelled")
      return .one
    })
    lua_setfield(L, -2, "__tostring")
    lua_setmetatable(L, -2)
    cancelledValue = LuaReference(popping: state)
  }

  /// The task whose coroutine is running now, if any.
  public var currentTask: LuaTask? { running.last }

  // MARK: Tasks

  /// Creates a task for the function at `functionIndex` on `L` and the
  /// `arguments` values after it, and makes it ready to start.
  /// A task with `traced` false leaves no trace events (the test runner's
  /// own tasks, so a spec's trace shows only the spec's work).
  public func spawn(
    on L: OpaquePointer, function functionIndex: Int32, arguments: Int32, label: LuaTask.Label? = nil, origin: String? = nil,
    traced: Bool = true
  ) -> LuaTask {
    let task = prepare(on: L, function: functionIndex, arguments: arguments, label: label, origin: origin, traced: traced)
    start(task)
    return task
  }

  /// `spawn`, on a done task's coroutine if `thread` is one; the task
  /// leaves its own for the caller (`LuaTask.leftThread`) when it is done.
  func spawn(
    on L: OpaquePointer, function functionIndex: Int32, arguments: Int32, label: LuaTask.Label?, origin: String?,
    reusing thread: ReusableThread?
  ) -> LuaTask {
    let task = prepare(
      on: L, function: functionIndex, arguments: arguments, label: label, origin: origin, traced: true, reusing: thread)
    task.keepsThread = true
    start(task)
    return task
  }

  /// Like `spawn`, but the task waits until someone calls `start` (a queue
  /// starts its jobs in turn). `origin` defaults to the user's line that
  /// called the running host function (`location(of:)`). The task runs on
  /// `thread` if given (a done task's, see `LuaTask.leftThread`).
  func prepare(
    on L: OpaquePointer, function functionIndex: Int32, arguments: Int32, label: LuaTask.Label? = nil,
    origin: String? = nil, traced: Bool = true, reusing thread: ReusableThread?
  ) -> LuaTask {
    guard let thread else {
      return prepare(on: L, function: functionIndex, arguments: arguments, label: label, origin: origin, traced: traced)
    }
    let task = makeTask(label: label, origin: origin ?? location(of: L), traced: traced)
    let co = thread.pointer
    // As lua_newthread would have it: the hooks of the thread creating it.
    lua_sethook(co, lua_gethook(L), lua_gethookmask(L), lua_gethookcount(L))
    lua_pushvalue(L, functionIndex)
    for i in 0..<arguments { lua_pushvalue(L, functionIndex + 1 + i) }
    lua_xmove(L, co, arguments + 1)
    lunar_marktaskthread(co)
    task.threadPointer = co
    task.thread = thread.reference
    task.startArguments = arguments
    return task
  }

  /// Like `spawn`, but the task waits until someone calls `start` (a queue
  /// starts its jobs in turn). `origin` defaults to the user's line that
  /// called the running host function (`location(of:)`).
  public func prepare(
    on L: OpaquePointer, function functionIndex: Int32, arguments: Int32, label: LuaTask.Label? = nil,
    origin: String? = nil, traced: Bool = true
  ) -> LuaTask {
    let task = makeTask(label: label, origin: origin ?? location(of: L), traced: traced)
    let co = lua_newthread(L)!
    lua_pushvalue(L, functionIndex)
    for i in 0..<arguments { lua_pushvalue(L, functionIndex + 1 + i) }
    lua_xmove(L, co, arguments + 1)
    lunar_settaskthread(L, -1, 1)
    task.threadPointer = co
    task.thread = LuaReference(popping: L, in: state)
    task.startArguments = arguments
    return task
  }

  /// A task with no coroutine yet: Swift code drives it and finishes it
  /// with `finish(_:values:)` or `fail(_:message:)`.
  public func makeTask(label: LuaTask.Label?, origin: String, traced: Bool = true) -> LuaTask {
    let id = nextTaskID
    nextTaskID += 1
    let task = LuaTask(id: id, label: label ?? .text("task \(id)"), origin: origin)
    task.traced = traced
    task.journalScope = currentTask?.journalScope
    task.stepLog = currentTask?.stepLog
    // A task starts in its creator's action chain. Without memory for
    // it the task starts outside any chain: only a table slot is missing,
    // and the coroutine it needs next fails the same way.
    _ = lunar_inheritchain(state.L, lua_Integer(currentTask?.id ?? 0), lua_Integer(id))
    liveTasks.insert(task)
    if traced && trace.isEnabled {
      trace.emit("task.spawned", [.init("id", .integer(Int64(id))), .init("label", .string(LuaString(task.label))), .init("at", .string(LuaString(origin)))])
    }
    return task
  }

  /// Makes a task with a coroutine ready to run.
  public func start(_ task: LuaTask) {
    enqueue(task, .start)
  }

  /// Runs a prepared task at once, from the loop running on thread `L`
  /// (deferred work, not Lua code), until it finishes or first waits, as
  /// `Task.immediate` does: a callback that never waits costs no trip
  /// through the ready queue. True when it has finished.
  public func startNow(_ task: LuaTask, from L: OpaquePointer) -> Bool {
    resume(task, .start, from: L)
    return task.isFinished
  }

  private func enqueue(_ task: LuaTask, _ resumption: Resumption) {
    if case .plain = resumption { plainReady += 1 }
    ready.append((task, resumption))
  }

  /// Ready tasks that gave up their turn with a plain `coroutine.yield()`.
  private var plainReady = 0

  private func popReady() -> (task: LuaTask, resumption: Resumption)? {
    guard let entry = ready.popFirst() else { return nil }
    if case .plain = entry.resumption { plainReady -= 1 }
    return entry
  }

  /// Resumes `task` from the loop running on thread `L`.
  private func resume(_ task: LuaTask, _ resumption: Resumption, from L: OpaquePointer) {
    guard let co = task.threadPointer, !task.isFinished else { return }
    var arguments: Int32 = 0
    switch resumption {
    case .start:
      if task.cancelRequested {
        finishCancelledBeforeStart(task)
        return
      }
      arguments = task.startArguments
      task.status = .running
      if task.traced && trace.isEnabled { trace.emit("task.started", [.init("id", .integer(Int64(task.id)))]) }
    case .result(let result):
      let (count, failed) = result.pushOutcome(on: co)
      lua_pushboolean(co, failed ? 0 : 1)
      lunar_insert(co, -(count + 1))
      arguments = 1 + count
      if task.traced && trace.isEnabled { trace.emit("task.resumed", [.init("id", .integer(Int64(task.id)))]) }
    case .plain:
      arguments = 0
    }
    task.waitingOn = nil
    running.append(task)
    lunar_setcurrenttask(state.L, lua_Integer(task.id))
    var results: Int32 = 0
    let outer = computing
    compute(task)
    let status = lunar_resume(co, L, arguments, &results)
    compute(outer)
    running.removeLast()
    lunar_setcurrenttask(state.L, lua_Integer(running.last?.id ?? 0))
    switch status {
    case LUA_YIELD:
      if results == 1, lunar_ismarker(co, -1) != 0, let wait = pendingWait {
        lua_settop(co, -2)
        pendingWait = nil
        wait.waiter = .task(task)
        task.waitingOn = wait
        if task.traced && trace.isEnabled {
          trace.emit("task.waiting", [.init("id", .integer(Int64(task.id))), .init("on", .string(LuaString(wait.subject)))])
        }
        if let result = wait.result {
          wait.waiter = .none
          enqueue(task, .result(result))
        }
      } else {
        // A plain coroutine.yield() in a task gives other tasks a turn.
        lua_settop(co, -(results + 1))
        enqueue(task, .plain)
      }
    case LUA_OK:
      finish(task, coroutineResults: results)
    default:
      fail(task, coroutineStatus: status)
    }
  }

  private func finish(_ task: LuaTask, coroutineResults count: Int32) {
    let co = task.threadPointer!
    task.resultCount = count
    if count == 1 {
      // The usual case keeps its value as it is, with no table around it,
      // and a boolean or a number with no reference either.
      if let scalar = LuaTask.Scalar(at: -1, on: co) {
        task.scalarOutcome = scalar
        lua_settop(co, -2)
      } else {
        task.outcome = LuaReference(popping: co, in: state)
      }
      settle(task, as: .done)
      return
    }
    lua_createtable(co, count, 0)
    lunar_insert(co, -(count + 1))
    var i = count
    while i >= 1 {
      lua_rawseti(co, -(i + 1), lua_Integer(i))
      i -= 1
    }
    task.outcome = LuaReference(popping: co, in: state)
    task.resultCount = count
    settle(task, as: .done)
  }

  private func fail(_ task: LuaTask, coroutineStatus: Int32) {
    let co = task.threadPointer!
    let frames = lunar_traceback(co, co, nil, 0)
    task.traceback = frames > 0 ? state.string(atThread: co, index: -1) : nil
    lua_settop(co, -2)
    if keepsFailureFrames { task.failureFrame = LuaFrame.user(in: co, from: 0) }
    // Close the coroutine's to-be-closed variables, as coroutine.close does;
    // an error while closing replaces the original.
    _ = lua_resetthread(co)
    let cancelled = isCancelledValue(on: co, at: -1)
    if !cancelled, let deadline = task.deadline, deadline.hasPassed(now: lunar_monotonic()) {
      // Whatever ended it once time was up (the hook's error, or that
      // error with a position added on its way out of a coroutine.wrap),
      // it failed because time was up.
      lua_settop(co, -2)
      deadline.message.push(on: co)
    }
    task.errorMessage = LuaState(borrowing: co).errorMessage(at: -1)
    task.outcome = LuaReference(popping: co, in: state)
    settle(task, as: cancelled ? .cancelled : .failed)
  }

  /// Ends a task that has not started as cancelled (queues call this when a
  /// cancelled job's turn comes).
  public func finishCancelledBeforeStart(_ task: LuaTask) {
    cancelledValue.push(on: state.L)
    task.outcome = LuaReference(popping: state)
    task.errorMessage = "cancelled"
    settle(task, as: .cancelled)
  }

  /// Finishes a task driven from Swift with these results; results that
  /// would pass the memory limit fail it with `not enough memory`.
  public func finish(_ task: LuaTask, values: [LuaValue]) {
    guard !task.isFinished else { return }
    let L = state.L
    let base = lua_gettop(L)
    lua_createtable(L, Int32(values.count), 0)
    for (i, value) in values.enumerated() {
      do {
        try state.push(value)
      } catch let error where error.reason == .notEnoughMemory {
        lua_settop(L, base)
        fail(task, message: LuaError.notEnoughMemory.message)
        return
      } catch {
        lua_pushnil(L)
      }
      lua_rawseti(L, -2, lua_Integer(i + 1))
    }
    task.resultCount = Int32(values.count)
    if values.count == 1 {
      // One result is kept as it is (see `finish(_:coroutineResults:)`).
      lua_rawgeti(L, -1, 1)
      lunar_remove(L, -2)
    }
    task.outcome = LuaReference(popping: state)
    settle(task, as: .done)
  }

  /// Fails a task driven from Swift with an error message.
  public func fail(_ task: LuaTask, message: String) {
    guard !task.isFinished else { return }
    state.push(message)
    task.errorMessage = message
    task.outcome = LuaReference(popping: state)
    settle(task, as: .failed)
  }

  private func settle(_ task: LuaTask, as status: LuaTask.Status) {
    task.status = status
    lunar_forgetchain(state.L, lua_Integer(task.id))
    task.cancelHook = nil
    clearDeadline(task)
    if let thread = task.thread {
      thread.push(on: state.L)
      lunar_settaskthread(state.L, -1, 0)
      lua_settop(state.L, -2)
      // Not under a memory limit: the collector never shrinks a live
      // thread's stack, so one a deep step grew would count against the
      // limit for the rest of the run.
      if task.keepsThread, status == .done, let co = task.threadPointer, lunar_threadreusable(co) != 0,
        lunar_memorylimit(state.L) == 0
      {
        task.leftThread = ReusableThread(pointer: co, reference: thread)
      }
    }
    task.thread = nil
    task.threadPointer = nil
    task.waitingOn = nil
    liveTasks.remove(task)
    if status == .failed { failedTasks.append(task) }
    if task.traced && trace.isEnabled {
      var fields: [TraceEvent.Field] = [.init("id", .integer(Int64(task.id)))]
      if let message = task.errorMessage, status != .done { fields.append(.init("error", .string(LuaString(message)))) }
      trace.emit("task.\(status == .done ? "done" : status.rawValue)", fields)
    }
    let waiters = task.waiters
    task.waiters = []
    for wait in waiters {
      complete(wait, wait.protected ? task.protectedResult() : task.waitResult(appendingTraceback: true))
    }
    let callbacks = task.onFinish
    task.onFinish = FinishCallbacks()
    callbacks.run(task)
  }

  /// True if the value at `index` on `L` is `lunar.cancelled`.
  public func isCancelledValue(on L: OpaquePointer, at index: Int32) -> Bool {
    let absolute = lua_absindex(L, index)
    cancelledValue.push(on: L)
    defer { lua_settop(L, -2) }
    return lua_rawequal(L, absolute, -1) != 0
  }

  /// Pushes `lunar.cancelled` on `L`.
  public func pushCancelled(on L: OpaquePointer) {
    cancelledValue.push(on: L)
  }

  /// Asks a task to stop: one not started never runs; one waiting is woken
  /// with `lunar.cancelled` raised at its waiting point; one running sees it
  /// at its next wait. Returns false if it had already finished.
  @discardableResult
  public func cancel(_ task: LuaTask) -> Bool {
    task.observed = true
    guard !task.isFinished else { return false }
    task.cancelRequested = true
    if task.status == .pending && task.defersCancellation {
      return true
    }
    if task.status == .pending {
      // Never started: it never will; its ready entry is skipped.
      if let co = task.threadPointer { lua_settop(co, 0) }
      finishCancelledBeforeStart(task)
      return true
    }
    if task.waitingOn != nil {
      abandonWait(of: task, raising: cancelledFailure())
    } else if let hook = task.cancelHook {
      task.cancelHook = nil
      hook()
    }
    return true
  }

  /// Takes `task` off the wait it is suspended in, undoing that wait's
  /// work (its `onCancel`), and resumes it with `failure` raised there.
  func abandonWait(of task: LuaTask, raising failure: WaitResult) {
    guard let wait = task.waitingOn else { return }
    task.waitingOn = nil
    wait.waiter = .none
    let undo = wait.onCancel
    wait.onCancel = nil
    undo?()
    enqueue(task, .result(failure))
  }

  /// A failure that raises `lunar.cancelled`.
  public func cancelledFailure() -> WaitResult {
    .failure { L in self.cancelledValue.push(on: L) }
  }

  // MARK: Waiting

  /// Completes `wait` and wakes whoever waits on it.
  public func complete(_ wait: Wait, _ result: WaitResult) {
    guard !wait.isComplete else { return }
    wait.complete(result)
    if case .task(let task) = wait.waiter, task.waitingOn === wait {
      task.waitingOn = nil
      enqueue(task, .result(result))
    }
  }

  /// Suspends the Lua code calling the host function `call` until `wait`
  /// completes, then returns its values or raises its error there. Return
  /// what this returns from the host function.
  public func suspend(_ call: LuaCall, on wait: Wait) -> LuaReturn {
    let L = call.L
    if let task = running.last, task.cancelRequested {
      wait.onCancel?()
      pushCancelled(on: L)
      return .error
    }
    wait.location = location(of: L)
    if let result = wait.result { return deliver(result, on: L) }
    if lunar_yieldable(L) != 0 {
      pendingWait = wait
      lunar_pushmarker(L)
      return .yield
    }
    if let failure = waitNested(wait, on: L) {
      LuaState(borrowing: L).push(failure)
      return .error
    }
    return deliver(wait.result!, on: L)
  }

  /// The function coroutine wrappers call when the coroutine they resumed
  /// yielded the marker: waits for the pending wait (yielding further, or
  /// nested) and returns `true, values...` or `false, err` unchanged.
  func waitPendingFunction() -> LuaFunction {
    { [unowned self] call in
      let L = call.L
      guard let wait = self.pendingWait else {
        call.push("internal error: a coroutine yielded Lunar's marker with nothing to wait for")
        return .error
      }
      self.pendingWait = nil
      if lunar_yieldable(L) != 0 {
        self.pendingWait = wait
        lunar_pushmarker(L)
        return .yieldRaw
      }
      if let failure = self.waitNested(wait, on: L) {
        call.push(false)
        call.push(failure)
        return .values(2)
      }
      let (count, failed) = wait.result!.pushOutcome(on: L)
      lua_pushboolean(L, failed ? 0 : 1)
      lunar_insert(L, -(count + 1))
      return .values(count + 1)
    }
  }

  /// Runs the loop on `L` until `wait` completes; returns an error message
  /// if it stopped first (deadlock, interrupt, cancellation).
  private func waitNested(_ wait: Wait, on L: OpaquePointer) -> String? {
    let task = running.last
    wait.waiter = .nested
    // Outside any task and above another nested wait: Lua the loop itself
    // called (a machine's interpreter, a plugin's callback).
    let label = task?.label ?? (nested.isEmpty ? "main chunk" : "a callback")
    nested.append((label, wait, L))
    defer { nested.removeLast() }
    // The code beneath waits, and its deadline's timer (not the hook)
    // stops it; what the loop runs meanwhile is not under it.
    let outer = computing
    compute(nil)
    defer { compute(outer) }
    do {
      try runUntil(on: L) { wait.isComplete || (task.map { $0.cancelRequested || $0.deadline?.passed == true } ?? false) }
      // A finished wait beneath this one was held until now, and stays held
      // until the code above it returns too; this one's own frame goes on.
      noteHeldFrames()
      if let held, held.depth >= nested.count - 1 { self.held = nil }
    } catch {
      switch error {
      case .deadlock(let report):
        if let held, held.depth >= nested.count - 1 { self.held = nil }
        // The script is given the report (and may catch it): the end of
        // the run does not report the same waits again.
        for task in liveTasks.values { task.waitingOn?.deadlockReported = true }
        return report
      case .interrupted(_, let message):
        return message
      }
    }
    if !wait.isComplete {
      wait.onCancel?()
      wait.onCancel = nil
      let timeUp = task.flatMap { $0.cancelRequested ? nil : $0.deadline }.flatMap { $0.passed ? $0.failure : nil }
      complete(wait, timeUp ?? cancelledFailure())
    }
    return nil
  }

  /// Pushes a wait's values (or its error) on `L` for a host function.
  public func deliver(_ result: WaitResult, on L: OpaquePointer) -> LuaReturn {
    let (count, failed) = result.pushOutcome(on: L)
    return failed ? .error : .values(count)
  }

  /// `chunk:line` of the user's Lua code calling the running host
  /// function (the nearest line, past C functions and Lunar's own chunks),
  /// or empty if there is none.
  public func location(of L: OpaquePointer) -> String {
    lunar_pushlocation(L)
    defer { lua_settop(L, -2) }
    var text = state.string(atThread: L, index: -1) ?? ""
    if text.hasSuffix(": ") { text.removeLast(2) }
    return text
  }

  // MARK: The loop

  /// Runs ready tasks, due timers and posted events on thread `L` until
  /// `done` holds.
  ///
  /// When nothing is ready, due or posted, the loop sleeps until a timer or
  /// Swift work in flight can move something; if none can, it is a
  /// deadlock. A nested loop sits above every frame beneath it on the C
  /// stack (the main chunk, the tasks it resumed, outer nested loops), and
  /// those frames cannot run again until it returns. So for the innermost
  /// nested loop, a timer or Swift work that only completes the wait of a
  /// nested loop beneath it (a `lunar.sleep` timer, an async call) moves
  /// nothing: the rule is that the loop deadlocks as soon as nothing
  /// outside the blocked frames can progress, instead of sleeping until
  /// that wait ends (or forever). The report names the nested wait, the C
  /// call that kept it from yielding, and each wait beneath it. Timers are
  /// still fired on time while anything else can progress, so a frame
  /// beneath resumes as soon as the nested loop returns; a frame beneath
  /// that is ready stays held until then, which nesting cannot avoid (it is
  /// named in an interrupt's message).
  public func runUntil(on L: OpaquePointer, idle: IdlePolicy = .deadlock, _ done: () -> Bool) throws(Stop) {
    while true {
      let reason = lunar_interrupted(state.L)
      if reason != LUNAR_INTERRUPT_NONE {
        noteHeldFrames()
        throw .interrupted(reason: reason, message: interruptMessage(reason))
      }
      servePostedEvents()
      if done() { return }
      if let (task, resumption) = popReady() {
        resume(task, resumption, from: L)
        continue
      }
      if let work = deferred.popFirst() {
        work(L)
        continue
      }
      if let fire = timers.popDue(at: clock.now) {
        fire()
        continue
      }
      if idle == .deadlock && !canProgress(besides: blockedWaits) {
        throw .deadlock(deadlockReport(on: L))
      }
      if let deadline = timers.nextDeadline {
        if clock.isVirtual && inFlight == 0 && idle == .deadlock {
          clock.advance(to: deadline)
        } else if clock.isVirtual {
          // Between console entries virtual time stands still until moved.
          _ = lunar_sleep(state.L, -1)
        } else {
          // At most an hour at a time: a timer set a lifetime away must not
          // overflow the sleep's C time (and then spin instead of sleeping).
          _ = lunar_sleep(state.L, min(max(0, deadline - clock.now), 3600))
        }
        continue
      }
      // Swift work in flight, or a console between entries.
      _ = lunar_sleep(state.L, -1)
    }
  }

  /// Runs on thread `L` what is ready now and everything that wakes (ready
  /// tasks, deferred work such as machines' turns, timers already due, and
  /// Swift work that reports back meanwhile) until nothing is left but
  /// tasks that gave up their turn with a plain `coroutine.yield()`: the
  /// console runs this after each entry, so the effects of an entry (and
  /// of `.clock advance`) are there before the next one, while a task that
  /// yields forever still cannot keep it from its prompt.
  public func runWoken(on L: OpaquePointer) throws(Stop) {
    try runUntil(on: L, idle: .sleep) {
      ready.count == plainReady && !hasDeferredWork
        && (timers.nextDeadline.map { $0 > clock.now } ?? true)
    }
  }

  /// Moves virtual time to `target` as waiting would: to each timer due by
  /// then in turn, running what it wakes (`runWoken`) before going on, so a
  /// task that sleeps in a loop sees every step. (The console's `.clock
  /// advance`.)
  public func advanceVirtualTime(to target: Double, on L: OpaquePointer) throws(Stop) {
    try runWoken(on: L)
    while let deadline = timers.nextDeadline, deadline <= target {
      clock.advance(to: deadline)
      try runWoken(on: L)
    }
    clock.advance(to: target)
  }

  /// The waits of the nested loops beneath the innermost one: their frames
  /// cannot continue until it returns.
  private var blockedWaits: [Wait] {
    nested.count > 1 ? nested.dropLast().map(\.wait) : []
  }

  /// True if a timer or Swift work in flight may move something other than
  /// completing one of `blocked`.
  private func canProgress(besides blocked: [Wait]) -> Bool {
    let blockedWork = blocked.filter { $0.awaitsSwiftWork && !$0.isComplete }.count
    return inFlight > blockedWork || timers.hasTimer(besides: blocked)
  }

  /// Finished waits of nested loops that a nested wait above them keeps
  /// from continuing: the lowest one's depth in `nested`, and a note naming
  /// them for an interrupt's message (a hang there has no other report).
  private var held: (depth: Int, note: String)?

  /// The note on held waits at the last interrupt, if any, now forgotten.
  func takeHeldNote() -> String? {
    defer { held = nil }
    return held?.note
  }

  /// Records the finished waits beneath the innermost nested one, if any.
  private func noteHeldFrames() {
    guard nested.count > 1, let top = nested.last,
      let lowest = nested.dropLast().firstIndex(where: { $0.wait.isComplete })
    else { return }
    let above = "\(top.label)'s wait for \(top.wait.subject)\(top.wait.at)\(blockingCall(in: top.thread))"
    let note = nested[lowest..<(nested.count - 1)].filter { $0.wait.isComplete }.map { entry in
      "  \(entry.label)'s wait for \(entry.wait.subject)\(entry.wait.at) had ended, "
        + "but it could not continue beneath \(above)"
    }.joined(separator: "\n")
    held = (lowest, note)
  }

  /// `, nested inside function 'string.gsub', which cannot yield`: the C
  /// call between a nested wait on `thread` and its coroutine, which made
  /// the loop nest; empty on the main thread.
  private func blockingCall(in thread: OpaquePointer) -> String {
    guard thread != state.L, lunar_pushblockingcall(state.L, thread) != 0 else { return "" }
    defer { lua_settop(state.L, -2) }
    return ", nested inside \(state.string(atThread: state.L, index: -1) ?? "a C function"), which cannot yield"
  }

  func interruptMessage(_ reason: Int32) -> String {
    switch reason {
    case LUNAR_INTERRUPT_SIGNAL: "interrupted"
    case LUNAR_INTERRUPT_TIMEOUT: timeoutMessage
    default: "stopped"
    }
  }

  /// True if every task that waits was named in a deadlock report already
  /// raised in the script, waiting for the same thing: a deadlock now is
  /// that one, which the script has seen.
  var deadlockWasReported: Bool {
    let waits = liveTasks.values.compactMap(\.waitingOn)
    return !waits.isEmpty && waits.allSatisfy(\.deadlockReported)
  }

  /// Who waits for what, and where: the text of a deadlock error.
  func deadlockReport(on L: OpaquePointer) -> String {
    var lines: [String]
    if nested.count > 1, let top = nested.last {
      lines = [
        "deadlock: a nested wait cannot end, and the waits beneath it cannot continue until it does",
        "  \(top.label) waits for \(top.wait.subject)\(top.wait.at)\(blockingCall(in: top.thread))",
      ]
      for entry in nested.dropLast().reversed() {
        let state = entry.wait.isComplete ? " (done, but held until the wait above returns)" : ""
        lines.append("  beneath it, \(entry.label) waits for \(entry.wait.subject)\(entry.wait.at)\(state)")
      }
    } else {
      lines = ["deadlock: every task is waiting and nothing can wake them"]
      for entry in nested.reversed() {
        lines.append("  \(entry.label) waits for \(entry.wait.subject)\(entry.wait.at)")
      }
    }
    for task in liveTasks.sorted {
      guard let wait = task.waitingOn, let co = task.threadPointer else { continue }
      lines.append("  \(task.label) waits for \(wait.subject)\(wait.at)")
      let frames = lunar_traceback(L, co, nil, 0)
      let traceback = state.string(atThread: L, index: -1) ?? ""
      lua_settop(L, -2)
      if frames > 0 { lines.append(traceback.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n")) }
    }
    return lines.joined(separator: "\n")
  }

  // MARK: End of run

  /// Cancels every live task and lets them unwind (their `pcall`s and
  /// to-be-closed variables run) until none is left or nothing can move.
  func cancelAll(on L: OpaquePointer) {
    for task in liveTasks.sorted { cancel(task) }
    try? runUntil(on: L) { liveTasks.isEmpty && !hasDeferredWork }
  }

  /// Ends every live task as cancelled without running more of its Lua code
  /// (after an interrupt, when Lua must not run); to-be-closed variables
  /// are still closed.
  func abandonAll() {
    for task in liveTasks.sorted {
      task.cancelRequested = true
      task.observed = true
      if let co = task.threadPointer { _ = lua_resetthread(co) }
      finishCancelledBeforeStart(task)
    }
  }

  /// True when nothing is left of any script: no task, ready resumption,
  /// timer, nested loop, wait, failure or Swift work (a runtime may then be
  /// reused for another script).
  var isAtRest: Bool {
    liveTasks.isEmpty && ready.isEmpty && plainReady == 0 && timers.isEmpty && deferred.isEmpty && running.isEmpty
      && nested.isEmpty && computing == nil && pendingWait == nil && held == nil && failedTasks.isEmpty
      && offLoopWork.count == 0
  }

  /// Failed tasks whose errors nobody looked at.
  public var unobservedFailures: [LuaTask] {
    failedTasks.filter { !$0.observed }
  }

  /// Forgets failures already reported.
  func clearFailures() { failedTasks.removeAll() }

  /// Forgets `task`'s failure, which its owner reports itself (a durable
  /// job's goes to the store): a worker that runs for days keeps none.
  func forgetFailure(of task: LuaTask) {
    if task.status == .failed { failedTasks.removeAll { $0 === task } }
  }

  /// The unobserved failures so far, now marked observed (the test runner
  /// charges them to the test that was running).
  public func takeUnobservedFailures() -> [UnobservedError] {
    let unobserved = failedTasks.filter { !$0.observed }
    for task in unobserved { task.observed = true }
    failedTasks.removeAll { $0.observed }
    return unobserved.map(UnobservedError.init)
  }
}

extension LuaState {
  /// The string at `index` on thread `L` of this state.
  func string(atThread L: OpaquePointer, index: Int32) -> String? {
    guard lua_type(L, index) == LUA_TSTRING else { return nil }
    var length = 0
    let chars = lua_tolstring(L, index, &length)
    return String(decoding: UnsafeRawBufferPointer(start: chars, count: length), as: UTF8.self)
  }
}

