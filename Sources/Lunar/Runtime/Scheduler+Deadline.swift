import CLua
import CLuaShim
import LuaKit

extension Scheduler {
  /// Fails `task` with the error `message` (a string, raised as it is,
  /// without a position) once `seconds` have passed, whether it waits then
  /// or computes; replaces any deadline it had. A waiting task is woken with
  /// the error where it waits, its wait undone as a cancellation undoes it;
  /// computing code is stopped by a count hook, and again at every step
  /// after, so no `pcall` keeps it going; a task not started yet fails when
  /// it starts. See `TaskDeadline` for what counts under virtual time. The
  /// deadline ends with the task, leaving no timer; no effect on a finished
  /// task.
  public func setDeadline(_ task: LuaTask, after seconds: Double, message: String) {
    guard !task.isFinished else { return }
    clearDeadline(task)
    state.push(message)
    let reference = LuaReference(popping: state)
    let timer = timers.schedule(at: clock.deadline(after: seconds)) { [unowned self, weak task] in
      if let task { self.deadlinePassed(task) }
    }
    task.deadline = TaskDeadline(
      message: reference, text: message, timer: timer, seconds: seconds, virtualClock: clock.isVirtual)
    if task === computing { compute(task) }
  }

  /// Removes `task`'s deadline, if it has one.
  public func clearDeadline(_ task: LuaTask) {
    guard let deadline = task.deadline else { return }
    timers.cancel(deadline.timer)
    task.deadline = nil
    if task === computing { lunar_setdeadline(state.L, .infinity, 0) }
  }

  /// Makes `task` the one whose Lua code runs from now on (nil: none, a
  /// loop runs), and puts that code under its deadline.
  func compute(_ task: LuaTask?) {
    let before = computing?.deadline
    let after = task?.deadline
    computing = task
    if before == nil && after == nil { return }
    let now = lunar_monotonic()
    before?.stopComputing(at: now)
    if let after {
      lunar_setdeadline(state.L, after.startComputing(at: now), after.message.slot)
    } else {
      lunar_setdeadline(state.L, .infinity, 0)
    }
  }

  /// The deadline's timer fired (the loop runs, so the task is not
  /// computing).
  func deadlinePassed(_ task: LuaTask) {
    guard !task.isFinished, let deadline = task.deadline else { return }
    deadline.passed = true
    if task.waitingOn != nil {
      abandonWait(of: task, raising: deadline.failure)
    } else if task.threadPointer == nil && task.status == .running {
      // Swift work: stopped, and the task fails now.
      let stop = task.cancelHook
      task.cancelHook = nil
      stop?()
      fail(task, message: deadline.text)
    }
    // Otherwise it has not started, or is ready to resume: its first step
    // stops it. Or it waits in a nested loop, which sees `passed` and
    // raises the error there.
  }
}
